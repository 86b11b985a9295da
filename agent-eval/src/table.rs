//! Plain-text tables: columns padded with spaces, for a terminal or a CI log. Names are shown on
//! one line (control characters as spaces) and clipped, so a hostile name cannot break the
//! layout or write escape sequences to a terminal.

use std::fmt::{self, Write};

use crate::check::clip;
use crate::junit::why_failed;
use crate::report::{Report, Summary};

/// The widest a name column gets, in characters.
const NAME_CHARS: usize = 40;

/// `name` on one line, without control characters, clipped to the name column.
pub(crate) fn shown_name(name: &str) -> String {
    let one_line: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clip(&one_line, NAME_CHARS)
}

/// Rows of cells as aligned columns (the first row is the header), each line ending in `\n`.
pub(crate) fn columns(rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            let width = cell.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(width),
                None => widths.push(width),
            }
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            let pad = widths[i] - cell.chars().count();
            line.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `0.8333` as `83%`.
pub(crate) fn percent(rate: f64) -> String {
    format!("{:.0}%", rate * 100.0)
}

/// `1234.5` ms as `1235 ms`, or `1.2 s` from ten seconds on.
pub(crate) fn millis(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

fn summary_row(name: String, summary: &Summary) -> Vec<String> {
    vec![
        name,
        format!("{}/{}", summary.passed, summary.attempts),
        percent(summary.pass_rate),
        format!("{:.1}", summary.mean_steps()),
        summary.usage.total().to_string(),
        summary.cost.to_string(),
        millis(summary.latency.p50_ms),
        millis(summary.latency.p90_ms),
        millis(summary.latency.p99_ms),
    ]
}

impl Report {
    /// The report as a plain-text table: a row per case and one for all of them (attempts
    /// passed, pass rate, steps per attempt, tokens, cost, latency p50/p90/p99), the judge's
    /// tokens and cost, then each failing case with its failed attempts' reasons.
    pub fn table(&self) -> String {
        let overall = &self.overall;
        let mut out = format!(
            "eval {}: {}/{} attempts passed ({}); each case must reach {}\n",
            shown_name(&self.dataset),
            overall.passed,
            overall.attempts,
            percent(overall.pass_rate),
            percent(self.min_pass_rate),
        );
        let mut rows = vec![
            [
                "case", "passed", "rate", "steps", "tokens", "cost", "p50", "p90", "p99",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for case in &self.cases {
            rows.push(summary_row(shown_name(&case.name), &case.summary));
        }
        rows.push(summary_row("(all)".to_owned(), overall));
        out.push_str(&columns(&rows));
        if overall.judge_usage.total() > 0 || overall.judge_cost != Default::default() {
            let _ = writeln!(
                out,
                "judge: {} tokens, {}",
                overall.judge_usage.total(),
                overall.judge_cost
            );
        }
        for case in self.failing() {
            let _ = writeln!(
                out,
                "FAILED {}: {}/{} passed, below {}",
                shown_name(&case.name),
                case.summary.passed,
                case.summary.attempts,
                percent(self.min_pass_rate)
            );
            for attempt in case.attempts.iter().filter(|a| !a.passed) {
                for line in why_failed(attempt).lines() {
                    let line: String = line
                        .chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect();
                    let _ = writeln!(out, "  {}", clip(&line, 300));
                }
            }
        }
        out
    }
}

impl fmt::Display for Report {
    /// [`Report::table`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_names_stay_on_one_line() {
        let rows = vec![
            vec!["a".to_owned(), "bb".to_owned()],
            vec!["ccc".to_owned(), "d".to_owned()],
        ];
        assert_eq!(columns(&rows), "a    bb\nccc  d\n");
        assert_eq!(shown_name("two\nlines\u{1b}[31m"), "two lines [31m");
        assert_eq!(shown_name(&"x".repeat(50)).chars().count(), NAME_CHARS + 1);
        assert_eq!(millis(12.4), "12 ms");
        assert_eq!(millis(12_345.0), "12.3 s");
    }
}
