//! Two runs of an eval side by side: before and after a prompt change, a model change, a new
//! skill. [`Comparison::new`] pairs the cases by name; each row has both pass rates, the change in
//! pass rate, cost and median latency. A **regression** is a case in both runs whose pass rate
//! went down. Cases in one run only are listed as `new` or `removed`, never as regressions.
//!
//! A cost is compared only when both sides were fully priced: a change from or to `unpriced`
//! is shown as such, not as a difference of dollars.

use std::fmt::{self, Write};

use agent_llm::Cost;

use crate::report::{Report, Summary};
use crate::table::{columns, millis, percent, shown_name};

/// One case in two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDelta {
    /// The case's name.
    pub name: String,
    /// Its results before; `None` when the case is new.
    pub before: Option<Summary>,
    /// Its results after; `None` when the case was removed.
    pub after: Option<Summary>,
}

impl CaseDelta {
    /// `after`'s pass rate minus `before`'s, when the case is in both.
    pub fn pass_rate_delta(&self) -> Option<f64> {
        Some(self.after.as_ref()?.pass_rate - self.before.as_ref()?.pass_rate)
    }

    /// Whether the case is in both runs and passed less often after.
    pub fn is_regression(&self) -> bool {
        self.pass_rate_delta().is_some_and(|delta| delta < -1e-9)
    }

    /// Whether the case is in both runs and passed more often after.
    pub fn is_improvement(&self) -> bool {
        self.pass_rate_delta().is_some_and(|delta| delta > 1e-9)
    }

    /// The change in median latency, in milliseconds, when the case is in both.
    pub fn p50_delta_ms(&self) -> Option<f64> {
        Some(self.after.as_ref()?.latency.p50_ms - self.before.as_ref()?.latency.p50_ms)
    }
}

/// Two reports side by side. See the [module docs](self).
///
/// ```
/// use agent_eval::{AttemptReport, CaseReport, Comparison, Report, Summary};
///
/// fn run(passed: &[bool]) -> Report {
///     let attempts: Vec<AttemptReport> = passed.iter().enumerate().map(|(i, &passed)| {
///         AttemptReport {
///             attempt: i + 1, passed, finish: None, error: None, checks: vec![], steps: 1,
///             usage: Default::default(), cost: Default::default(),
///             judge_usage: Default::default(), judge_cost: Default::default(),
///             latency_ms: 10.0, answer: None,
///         }
///     }).collect();
///     let case = CaseReport {
///         name: "capital".into(), goal: "…".into(),
///         summary: Summary::of(&attempts), attempts,
///     };
///     Report::new("geo", 1.0, vec![case])
/// }
/// let comparison = Comparison::new(&run(&[true, true]), &run(&[true, false]));
/// let regressed: Vec<_> = comparison.regressions().map(|c| c.name.as_str()).collect();
/// assert_eq!(regressed, ["capital"]);
/// assert!(comparison.table().contains("100% → 50%"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The datasets' names, before and after.
    pub datasets: (String, String),
    /// Every attempt together, before.
    pub before: Summary,
    /// Every attempt together, after.
    pub after: Summary,
    /// One row per case: the after run's cases in its order, then those only the before run had.
    pub cases: Vec<CaseDelta>,
}

impl Comparison {
    /// `before` and `after` side by side, cases paired by name.
    pub fn new(before: &Report, after: &Report) -> Comparison {
        let mut cases: Vec<CaseDelta> = after
            .cases
            .iter()
            .map(|case| CaseDelta {
                name: case.name.clone(),
                before: before.case(&case.name).map(|c| c.summary.clone()),
                after: Some(case.summary.clone()),
            })
            .collect();
        for case in &before.cases {
            if after.case(&case.name).is_none() {
                cases.push(CaseDelta {
                    name: case.name.clone(),
                    before: Some(case.summary.clone()),
                    after: None,
                });
            }
        }
        Comparison {
            datasets: (before.dataset.clone(), after.dataset.clone()),
            before: before.overall.clone(),
            after: after.overall.clone(),
            cases,
        }
    }

    /// The cases that passed less often after.
    pub fn regressions(&self) -> impl Iterator<Item = &CaseDelta> {
        self.cases.iter().filter(|case| case.is_regression())
    }

    /// Whether any case passed less often after.
    pub fn has_regressions(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// The comparison as a plain-text table, then the regressions by name.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let (before, after) = &self.datasets;
        if before == after {
            let _ = writeln!(out, "eval {}: before → after", shown_name(before));
        } else {
            let _ = writeln!(out, "eval {} → {}", shown_name(before), shown_name(after));
        }
        let mut rows = vec![
            [
                "case",
                "pass rate",
                "change",
                "cost",
                "change",
                "p50",
                "change",
                "",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for case in &self.cases {
            rows.push(row(
                shown_name(&case.name),
                case.before.as_ref(),
                case.after.as_ref(),
            ));
        }
        rows.push(row(
            "(all)".to_owned(),
            Some(&self.before),
            Some(&self.after),
        ));
        out.push_str(&columns(&rows));
        let regressions: Vec<String> = self
            .regressions()
            .map(|case| {
                let (b, a) = (case.before.as_ref(), case.after.as_ref());
                format!(
                    "{} ({} → {})",
                    shown_name(&case.name),
                    b.map_or_else(String::new, |s| percent(s.pass_rate)),
                    a.map_or_else(String::new, |s| percent(s.pass_rate)),
                )
            })
            .collect();
        if regressions.is_empty() {
            out.push_str("no regressions\n");
        } else {
            let _ = writeln!(out, "regressions: {}", regressions.join(", "));
        }
        out
    }
}

impl fmt::Display for Comparison {
    /// [`Comparison::table`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

fn row(name: String, before: Option<&Summary>, after: Option<&Summary>) -> Vec<String> {
    let side = |s: Option<&Summary>, show: &dyn Fn(&Summary) -> String| {
        s.map_or_else(|| "—".to_owned(), show)
    };
    let rates = format!(
        "{} → {}",
        side(before, &|s| percent(s.pass_rate)),
        side(after, &|s| percent(s.pass_rate))
    );
    let costs = format!(
        "{} → {}",
        side(before, &|s| s.cost.to_string()),
        side(after, &|s| s.cost.to_string())
    );
    let p50 = format!(
        "{} → {}",
        side(before, &|s| millis(s.latency.p50_ms)),
        side(after, &|s| millis(s.latency.p50_ms))
    );
    let (rate_change, cost_change, p50_change, note) = match (before, after) {
        (Some(b), Some(a)) => {
            let points = (a.pass_rate - b.pass_rate) * 100.0;
            let note = if points < -1e-7 {
                "REGRESSION"
            } else if points > 1e-7 {
                "better"
            } else {
                ""
            };
            (
                format!("{points:+.0} pp"),
                cost_change(&b.cost, &a.cost),
                format!("{:+.0} ms", a.latency.p50_ms - b.latency.p50_ms),
                note,
            )
        }
        (None, _) => (String::new(), String::new(), String::new(), "new"),
        (_, None) => (String::new(), String::new(), String::new(), "removed"),
    };
    vec![
        name,
        rates,
        rate_change,
        costs,
        cost_change,
        p50,
        p50_change,
        note.to_owned(),
    ]
}

/// `+$0.0012`, `-$0.0003`, or nothing when either side has unpriced calls.
fn cost_change(before: &Cost, after: &Cost) -> String {
    if !before.is_complete() || !after.is_complete() {
        return String::new();
    }
    let (b, a) = (before.total(), after.total());
    if a >= b {
        format!("+{}", a.saturating_sub(b))
    } else {
        format!("-{}", b.saturating_sub(a))
    }
}
