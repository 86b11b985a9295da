//! The runner: [`Eval`] runs each case of a dataset as many times as asked, a bounded number of
//! attempts at once, each on a fresh runtime from your factory, and hands back a [`Report`].
//!
//! - **Attempts.** A case named `repeat` gets that many; the others get [`Eval::repeat`], else
//!   the dataset's `repeat`, else 1. At most [`MAX_ATTEMPTS`] in all.
//! - **Concurrency.** At most [`Eval::concurrency`] attempts run at once (default 4), their
//!   judge calls included; they are polled in the caller's task (no task is spawned, so neither
//!   the factory nor the runtimes need to be `'static`).
//! - **A fresh runtime per attempt.** The factory is called when the attempt starts; a runtime
//!   holds state (denial counts, budgets, sessions) that must not leak from one attempt into the
//!   next. The eval adds an event sink of its own to count steps, tokens and cost.
//! - **Failures are results.** A provider error, a run that ends without an answer (a budget, a
//!   refusal, a pause for approval) or one that takes longer than [`Eval::timeout`] (default
//!   300 s) is a failed attempt, with its error and what it spent; the eval goes on.
//! - **Passing.** An attempt passes when its run finished ([`FinishReason::NoMoreToolCalls`]; a
//!   typed case's with a value that follows its schema) and every check passed. All of an
//!   attempt's checks run, in order, so a report shows each one's outcome.
//! - **Latency** is the run's wall time, without the checks and the judge; a timed-out attempt
//!   counts its limit. Percentiles are by nearest rank ([`Latency`](crate::Latency)).
//!
//! The eval runs on the caller's Tokio runtime, which needs its time driver (for the limits).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_runtime::{AgentRuntime, FinishReason};
use futures::StreamExt;

use crate::check::{Answer, clip};
use crate::dataset::{Case, Dataset, MAX_REPEAT};
use crate::judge::Judge;
use crate::report::{AttemptReport, CaseReport, CheckOutcome, Report, Summary};
use crate::tally::{Spent, Tally};

/// The most attempts one eval may make, all cases together.
pub const MAX_ATTEMPTS: usize = 100_000;
/// The most characters of an answer a report keeps.
const ANSWER_KEPT: usize = 2_000;

/// What a progress callback is told after each attempt.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Attempts finished so far.
    pub done: usize,
    /// Attempts in all.
    pub total: usize,
    /// Of those finished, how many passed.
    pub passed: usize,
    /// The case whose attempt just finished.
    pub case: String,
    /// Whether that attempt passed.
    pub attempt_passed: bool,
}

type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// An eval that cannot start. Nothing has run when one is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The dataset has no cases.
    #[error("the dataset `{0}` has no cases")]
    Empty(String),
    /// Two cases share a name.
    #[error("two cases are named `{0}`: names must be unique")]
    DuplicateCase(String),
    /// A case asks for no attempts, or too many.
    #[error("case `{case}`: repeat must be 1 to {MAX_REPEAT}, not {repeat}")]
    Repeat {
        /// The case.
        case: String,
        /// What it asked for.
        repeat: usize,
    },
    /// More than [`MAX_ATTEMPTS`] attempts in all.
    #[error("the eval would make {0} attempts, more than {MAX_ATTEMPTS}")]
    TooManyAttempts(usize),
    /// A case has a rubric check and the eval has no judge.
    #[error("case `{0}` has a rubric check, and the eval has no judge (Eval::judge)")]
    NoJudge(String),
    /// The minimum pass rate is not between 0 and 1.
    #[error("the minimum pass rate must be between 0 and 1, not {0}")]
    MinPassRate(f64),
}

/// A dataset to run, and how. See the [module docs](self).
#[derive(Clone)]
pub struct Eval {
    dataset: Dataset,
    repeat: Option<usize>,
    concurrency: usize,
    timeout: Duration,
    judge: Option<Judge>,
    min_pass_rate: f64,
    progress: Option<Arc<ProgressFn>>,
}

impl std::fmt::Debug for Eval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eval")
            .field("dataset", &self.dataset.name())
            .field("repeat", &self.repeat)
            .field("concurrency", &self.concurrency)
            .field("timeout", &self.timeout)
            .field("judge", &self.judge)
            .field("min_pass_rate", &self.min_pass_rate)
            .finish_non_exhaustive()
    }
}

impl Eval {
    /// An eval of `dataset`: 4 attempts at once, 300 s for each run, every case must pass every
    /// attempt (a minimum pass rate of 1), no judge.
    pub fn new(dataset: Dataset) -> Eval {
        Eval {
            dataset,
            repeat: None,
            concurrency: 4,
            timeout: Duration::from_secs(300),
            judge: None,
            min_pass_rate: 1.0,
            progress: None,
        }
    }

    /// Attempts for each case that names none, instead of the dataset's default.
    pub fn repeat(mut self, attempts: usize) -> Eval {
        self.repeat = Some(attempts);
        self
    }

    /// The most attempts at once (0 is taken as 1).
    pub fn concurrency(mut self, attempts: usize) -> Eval {
        self.concurrency = attempts.max(1);
        self
    }

    /// The longest one run may take (and one judge's verdict).
    pub fn timeout(mut self, limit: Duration) -> Eval {
        self.timeout = limit;
        self
    }

    /// The judge for rubric checks.
    pub fn judge(mut self, judge: Judge) -> Eval {
        self.judge = Some(judge);
        self
    }

    /// The pass rate each case must reach for the report to pass ([`Report::passed`]), 0 to 1.
    pub fn min_pass_rate(mut self, rate: f64) -> Eval {
        self.min_pass_rate = rate;
        self
    }

    /// Called after each attempt, with the progress so far (e.g. to draw a progress bar).
    pub fn on_progress(mut self, progress: impl Fn(&Progress) + Send + Sync + 'static) -> Eval {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The dataset.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// How many attempts `case` gets.
    pub fn attempts_for(&self, case: &Case) -> usize {
        case.attempts()
            .or(self.repeat)
            .or(self.dataset.default_repeat())
            .unwrap_or(1)
    }

    /// The attempts to make, as (case, attempt from 1), or why the eval cannot start.
    fn plan(&self) -> Result<Vec<(usize, usize)>, EvalError> {
        let cases = self.dataset.cases();
        if cases.is_empty() {
            return Err(EvalError::Empty(self.dataset.name().to_owned()));
        }
        if !(0.0..=1.0).contains(&self.min_pass_rate) {
            return Err(EvalError::MinPassRate(self.min_pass_rate));
        }
        let mut plan = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            if cases[..i].iter().any(|c| c.name() == case.name()) {
                return Err(EvalError::DuplicateCase(case.name().to_owned()));
            }
            if self.judge.is_none() && case.checks().iter().any(|c| c.is_rubric()) {
                return Err(EvalError::NoJudge(case.name().to_owned()));
            }
            let repeat = self.attempts_for(case);
            if !(1..=MAX_REPEAT).contains(&repeat) {
                return Err(EvalError::Repeat {
                    case: case.name().to_owned(),
                    repeat,
                });
            }
            if plan.len() + repeat > MAX_ATTEMPTS {
                let total: usize = cases.iter().map(|c| self.attempts_for(c)).sum();
                return Err(EvalError::TooManyAttempts(total));
            }
            plan.extend((1..=repeat).map(|attempt| (i, attempt)));
        }
        Ok(plan)
    }

    /// Runs every attempt, each on a runtime `factory` makes for its case, and reports.
    ///
    /// ```
    /// use agent_core::Registry;
    /// use agent_eval::{Case, Check, Dataset, Eval};
    /// use agent_llm::{MockProvider, MockReply};
    /// use agent_runtime::AgentRuntime;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let dataset = Dataset::new("greetings")
    ///     .case(Case::new("hello", "Say hello.").check(Check::contains("ello")));
    /// let model = MockProvider::new([MockReply::text("Hello!"), MockReply::text("Bye.")]);
    /// let report = Eval::new(dataset)
    ///     .repeat(2)
    ///     .concurrency(1)
    ///     .run(|_case| AgentRuntime::new(model.clone(), Registry::new()))
    ///     .await
    ///     .unwrap();
    /// assert_eq!((report.overall.passed, report.overall.attempts), (1, 2));
    /// assert!(!report.passed());
    /// # }
    /// ```
    pub async fn run<F>(&self, factory: F) -> Result<Report, EvalError>
    where
        F: Fn(&Case) -> AgentRuntime,
    {
        let plan = self.plan()?;
        let total = plan.len();
        let cases = self.dataset.cases();
        let factory = &factory;
        let mut attempts = futures::stream::iter(plan)
            .map(|(index, number)| {
                let case = &cases[index];
                async move { (index, self.attempt(case, number, factory).await) }
            })
            .buffer_unordered(self.concurrency);
        let mut found: Vec<Vec<AttemptReport>> = vec![Vec::new(); cases.len()];
        let (mut done, mut passed) = (0, 0);
        while let Some((index, attempt)) = attempts.next().await {
            done += 1;
            passed += usize::from(attempt.passed);
            if let Some(progress) = &self.progress {
                progress(&Progress {
                    done,
                    total,
                    passed,
                    case: cases[index].name().to_owned(),
                    attempt_passed: attempt.passed,
                });
            }
            found[index].push(attempt);
        }
        let reports = cases
            .iter()
            .zip(found)
            .map(|(case, mut attempts)| {
                attempts.sort_by_key(|a| a.attempt);
                CaseReport {
                    name: case.name().to_owned(),
                    goal: case.goal().to_owned(),
                    summary: Summary::of(&attempts),
                    attempts,
                }
            })
            .collect();
        Ok(Report::new(
            self.dataset.name(),
            self.min_pass_rate,
            reports,
        ))
    }

    /// One attempt at `case`: a run on a fresh runtime, then the checks.
    async fn attempt<F>(&self, case: &Case, number: usize, factory: &F) -> AttemptReport
    where
        F: Fn(&Case) -> AgentRuntime,
    {
        let tally = Arc::new(Tally::default());
        let runtime = factory(case).event_sink(tally.sink());
        let started = Instant::now();
        let run = async {
            let request = case
                .attachments()
                .iter()
                .fold(runtime.run(case.goal()), |request, media| {
                    request.attach(media.clone())
                });
            match case.output_type() {
                Some(output) => request.output(output.clone()).await,
                None => request.await,
            }
        };
        let result = tokio::time::timeout(self.timeout, run).await;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut report = AttemptReport {
            attempt: number,
            passed: false,
            finish: None,
            error: None,
            checks: Vec::new(),
            steps: 0,
            usage: Default::default(),
            cost: Default::default(),
            judge_usage: Default::default(),
            judge_cost: Default::default(),
            latency_ms,
            answer: None,
        };
        let outcome = match result {
            Err(_) => {
                spent_into(&mut report, tally.spent());
                report.error = Some(format!(
                    "the run did not finish within {} s",
                    self.timeout.as_secs_f64()
                ));
                return report;
            }
            Ok(Err(error)) => {
                spent_into(&mut report, tally.spent());
                report.error = Some(format!("the run failed: {error}"));
                return report;
            }
            Ok(Ok(outcome)) => outcome,
        };
        report.steps = outcome.steps;
        report.usage = outcome.usage;
        report.cost = outcome.cost;
        report.finish = Some(outcome.finish.clone());
        let answer = Answer {
            text: outcome.final_text,
            output: outcome.output,
            finish: outcome.finish,
            steps: outcome.steps,
            usage: outcome.usage,
            transcript: outcome.transcript,
        };
        let shown = answer.text_for_checks();
        report.answer = (!shown.is_empty()).then(|| clip(&shown, ANSWER_KEPT));
        if answer.finish != FinishReason::NoMoreToolCalls {
            report.error = Some(format!(
                "the run ended without an answer: {}",
                clip(&finish_words(&answer.finish), 300)
            ));
            return report;
        }
        let mut all_passed = true;
        for check in case.checks() {
            let outcome = match (check.run_local(&answer), &check.kind, &self.judge) {
                (Some(result), _, _) => CheckOutcome {
                    check: check.name().to_owned(),
                    passed: result.is_ok(),
                    reason: result.err(),
                },
                (None, crate::check::Kind::Rubric(rubric), Some(judge)) => {
                    let graded = judge
                        .grade(case.goal(), &answer, rubric, self.timeout)
                        .await;
                    report.judge_usage += graded.spent.usage;
                    report.judge_cost += graded.spent.cost;
                    CheckOutcome {
                        check: check.name().to_owned(),
                        passed: graded.passed,
                        reason: Some(graded.reason),
                    }
                }
                // `plan` refuses a rubric without a judge; were one to get here, it fails.
                (None, _, _) => CheckOutcome {
                    check: check.name().to_owned(),
                    passed: false,
                    reason: Some("no judge to ask".to_owned()),
                },
            };
            all_passed &= outcome.passed;
            report.checks.push(outcome);
        }
        report.passed = all_passed;
        report
    }
}

fn spent_into(report: &mut AttemptReport, spent: Spent) {
    report.steps = spent.steps;
    report.usage = spent.usage;
    report.cost = spent.cost;
}

/// A finish reason in words: its JSON form, `{"reason":"budget_exceeded","budget":"steps",...}`.
fn finish_words(finish: &FinishReason) -> String {
    serde_json::to_string(finish).unwrap_or_else(|_| format!("{finish:?}"))
}
