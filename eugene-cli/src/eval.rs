//! `eugene eval FILE`: a dataset of cases (agent-eval's YAML) run against the configured model,
//! N times each, a few at once; the table on stdout, a progress bar on a terminal's stderr, the
//! report as JSON and JUnit XML for CI, a comparison with an earlier report.
//!
//! `eval` is a subcommand only as the very first argument (`eugene eval cases.yaml`); anywhere
//! else it is a word like any other, and a question that is just the word is asked with
//! `eugene -- eval`. Every case runs the agent a question would: the standard skills, the
//! workspace's Agent Skills, the same system prompt. Nobody is asked for permission during an
//! eval: calls that change things are denied (the model is told so) unless `--yes`. Rubric checks
//! are graded by the same provider, or another model of it with `--judge-model`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_eval::{Comparison, Dataset, Eval, Judge, Report};
use clap::Parser;
use eugene::{AgentRuntime, Permission, SkillContext, llm::PriceTable};

use crate::cli::{Args, Exit};
use crate::output::Style;
use crate::provider;

/// What `eugene eval --help` says after the flags.
const AFTER_HELP: &str = "\
The dataset (YAML):
  name: smoke                   optional; the file's name otherwise
  repeat: 3                     optional: attempts per case that names none (default 1)
  cases:
    - name: capital             unique
      goal: What is the capital of France? Answer with the city alone.
      repeat: 5                 optional
      attach: [map.png]         optional: files sent with the goal (images, PDFs, sounds; at
                                most 16, 20 MiB each), relative to the dataset file
      output_schema: {...}      optional: a typed run ending in a value under this JSON Schema
      checks:                   all must pass, and the run must end with an answer
        - equals: Paris         the trimmed text (or the typed value) equals this
        - contains: Par         the text (or the typed value's JSON) holds this
        - json_schema: {...}    the answer's JSON follows this schema
        - rubric: Names Paris.  the judge model finds the answer meets this
A mistake in it is reported as FILE:LINE:COLUMN: what is wrong (exit status 2); nothing runs.
So is an attached file that is missing, over 20 MiB, of no known type, a corrupt image or one of
too many pixels (FILE: case `NAME`: the attached file and what is wrong).

The model is chosen as for a question (see eugene --help: --provider, the environment). The
judge of rubrics is the same provider and model, or --judge-model. Calls that change things are
denied unless --yes: nobody is asked during an eval.

Exit statuses:
  0    every case's pass rate reached --min-pass-rate
  1    internal error
  2    usage or configuration error (bad flag, no provider, a dataset or --compare report that
       cannot be read or is not valid, naming file and line; an output file that cannot be written)
  10   some case's pass rate is below --min-pass-rate (the table names them and why)

To ask eugene the question \"eval\", write: eugene -- eval";

/// Run a dataset of cases against the model and report pass rates, tokens, cost and latency.
#[derive(Parser, Debug)]
#[command(
    name = "eugene eval",
    bin_name = "eugene eval",
    version,
    about = "Run a dataset of cases against the model, N times each; report pass rates, steps, \
             tokens, cost and latency percentiles.",
    after_help = AFTER_HELP
)]
pub struct EvalArgs {
    /// The dataset: a YAML file of cases.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Attempts per case, for the cases that name no `repeat` of their own [default: the
    /// dataset's `repeat`, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// The most attempts at once.
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
    /// The pass rate every case must reach for exit status 0, from 0 to 1.
    #[arg(long, value_name = "RATE", default_value_t = 1.0, value_parser = parse_rate)]
    pub min_pass_rate: f64,
    /// Write the report as JSON to OUT (read back by --compare).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write the report as JUnit XML to OUT, for CI: a test case per case.
    #[arg(long, value_name = "OUT")]
    pub junit: Option<PathBuf>,
    /// Compare with an earlier --json report: each case's pass rate, cost and latency before and
    /// after, and the cases that regressed.
    #[arg(long, value_name = "BEFORE")]
    pub compare: Option<PathBuf>,
    /// The judge's model for rubric checks, on the same provider [default: --model's].
    #[arg(long, value_name = "NAME")]
    pub judge_model: Option<String>,
    /// Which provider: anthropic, openai, openai-responses, gemini or ollama [default: the first
    /// configured, as for a question].
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// The model [default: AGENT_MODEL, else the provider's usual one].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The most model calls of one attempt.
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub max_steps: usize,
    /// The most tokens of one attempt (in and out, all its model calls together).
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub max_tokens: u64,
    /// The most tokens of one answer.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_answer_tokens: u32,
    /// The most seconds one attempt may take; one that takes longer fails.
    #[arg(long, value_name = "SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub max_time: u64,
    /// Seconds to wait for a model's answer.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// How many times a failed model call is tried again.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=10))]
    pub retries: u32,
    /// A JSON price table (genai-prices' format) whose prices go before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// The directory the agent works in [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Allow every skill (writes, patches, shell) without asking; otherwise such calls are denied.
    #[arg(long)]
    pub yes: bool,
}

/// `0.9` or `90%`, from 0 to 1.
fn parse_rate(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(number) => (number, 100.0),
        None => (text, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&(rate / scale)) => Ok(rate / scale),
        _ => Err(format!(
            "`{text}` is not a pass rate from 0 to 1 (e.g. 0.9, or 90%)"
        )),
    }
}

/// Whether the command line asks for `eugene eval`: its first argument is exactly `eval`.
pub fn requested() -> bool {
    std::env::args_os()
        .nth(1)
        .is_some_and(|first| first == "eval")
}

/// `eugene eval ...`: parses its own flags (clap exits on a usage error, with status 2), runs,
/// and returns the exit status.
pub async fn main() -> Exit {
    // The arguments after `eugene`: clap takes `eval` for the program's name.
    let args = EvalArgs::parse_from(std::env::args_os().skip(1));
    let style = Style {
        colour: crate::cli::ColorWhen::Auto.colours(std::io::stderr().is_terminal()),
    };
    match run(args, style).await {
        Ok(exit) => exit,
        Err((exit, message)) => {
            if message.starts_with("eugene") {
                eprintln!("{message}");
            } else {
                eprintln!("{} {message}", style.red("eugene:"));
            }
            exit
        }
    }
}

type Failed = (Exit, String);

fn config(message: impl std::fmt::Display) -> Failed {
    (Exit::Config, message.to_string())
}

/// The flags a question would have, for choosing the provider the same way.
fn question_args(args: &EvalArgs, model: Option<String>) -> Result<Args, Failed> {
    let mut question = Args::try_parse_from(["eugene"]).map_err(|error| {
        (
            Exit::Internal,
            format!("the default flags do not parse: {error}"),
        )
    })?;
    question.provider = args.provider.clone();
    question.model = model;
    question.timeout = args.timeout;
    question.retries = args.retries;
    // An eval reads whole answers: nothing is shown as it is written.
    question.no_stream = true;
    Ok(question)
}

async fn run(args: EvalArgs, style: Style) -> Result<Exit, Failed> {
    // Everything that can be wrong with the files is found before any model is asked.
    let dataset = Dataset::load(&args.file).map_err(config)?;
    let before = match &args.compare {
        Some(path) => Some(Report::load(path).map_err(config)?),
        None => None,
    };
    let prices = match &args.prices {
        Some(file) => Some(Arc::new(
            PriceTable::from_file(file)
                .map_err(config)?
                .before(PriceTable::builtin()),
        )),
        None => None,
    };
    let chosen = provider::choose(&question_args(&args, args.model.clone())?)
        .await
        .map_err(config)?
        .ok_or_else(|| config(provider::NO_PROVIDER))?;
    let judge_provider = match &args.judge_model {
        Some(model) => {
            provider::choose(&question_args(&args, Some(model.clone()))?)
                .await
                .map_err(config)?
                .ok_or_else(|| config(provider::NO_PROVIDER))?
                .provider
        }
        None => chosen.provider.clone(),
    };
    let workspace = crate::workspace(args.workspace.as_deref()).map_err(config)?;

    let (registry, shell) = crate::skills::gated(&workspace, style, args.yes, |name| {
        Permission::Deny(format!(
            "`{name}` changes things, and nobody can be asked during an eval (eugene eval \
             --yes allows it): do without it"
        ))
    })
    .await?;
    let mut base = AgentRuntime::from_shared(chosen.provider.clone(), Arc::new(registry))
        .system(crate::system_prompt(&workspace))
        .context(SkillContext::new(workspace).with_extension(shell))
        .max_steps(args.max_steps)
        .max_tokens_total(args.max_tokens)
        .max_tokens_per_call(args.max_answer_tokens)
        .permission_denial_limit(crate::DENIALS_IN_A_ROW);
    let mut judge = Judge::from_shared(judge_provider);
    if let Some(prices) = &prices {
        base = base.prices(prices.clone());
        judge = judge.prices(prices.clone());
    }

    let mut eval = Eval::new(dataset)
        .concurrency(args.concurrency as usize)
        .timeout(Duration::from_secs(args.max_time))
        .min_pass_rate(args.min_pass_rate)
        .judge(judge);
    if let Some(repeat) = args.repeat {
        eval = eval.repeat(repeat as usize);
    }
    let bar = progress_bar(&eval);
    if let Some(bar) = &bar {
        let bar = bar.clone();
        eval = eval.on_progress(move |p| {
            bar.set_position(p.done as u64);
            bar.set_message(format!("{} passed", p.passed));
        });
    }
    let report = eval.run(|_case| base.clone()).await.map_err(config)?;
    if let Some(bar) = bar {
        bar.finish();
    }

    print!("{}", report.table());
    if let Some(before) = &before {
        println!();
        print!("{}", Comparison::new(before, &report).table());
    }
    if let Some(path) = &args.json {
        report.save(path).map_err(config)?;
        eprintln!(
            "{}",
            style.dim(&format!("eugene: report written to {}", path.display()))
        );
    }
    if let Some(path) = &args.junit {
        report.save_junit(path).map_err(config)?;
        eprintln!(
            "{}",
            style.dim(&format!("eugene: JUnit XML written to {}", path.display()))
        );
    }
    let below = report.failing().count();
    Ok(if below == 0 {
        Exit::Answered
    } else {
        eprintln!(
            "{} {below} of {} cases below the pass rate of {:.0}%",
            style.red("eugene:"),
            report.cases.len(),
            args.min_pass_rate * 100.0
        );
        Exit::EvalBelowPassRate
    })
}

/// A bar of attempts on stderr, when stderr is a terminal; none otherwise.
fn progress_bar(eval: &Eval) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let total: usize = eval
        .dataset()
        .cases()
        .iter()
        .map(|case| eval.attempts_for(case))
        .sum();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let style = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} attempts · {msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message("0 passed");
    Some(bar)
}
