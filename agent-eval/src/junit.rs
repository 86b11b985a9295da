//! A report as JUnit XML, the form CI servers read test results in: one `<testsuite>` named
//! after the dataset, one `<testcase>` per case, failed (`<failure>`) when the case's pass rate
//! is below the report's `min_pass_rate`, with each failed attempt's reasons in the failure's
//! text. A case's `time` is the sum of its attempts' wall times, in seconds.
//!
//! Every name and message is escaped: `&`, `<`, `>`, `"` and `'` as entities, and in attributes
//! also tab, line feed and carriage return (which attribute normalisation would otherwise turn
//! into spaces). Characters XML 1.0 cannot hold at all (control characters other than tab, line
//! feed and carriage return; U+FFFE, U+FFFF) become U+FFFD. No CDATA sections are written, so a
//! `]]>` in a name is text like any other. The writer is these few rules rather than an XML
//! crate: the document is small and fixed, and the escaping is tested against a parser.

use std::fmt::Write;

use crate::check::clip;
use crate::report::{AttemptReport, CaseReport, Report};

/// The most characters of reasons one failure's text holds.
const FAILURE_TEXT: usize = 16_000;

impl Report {
    /// The report as JUnit XML (see the [module docs](crate::junit)).
    pub fn to_junit(&self) -> String {
        let tests = self.cases.len();
        let failures = self.failing().count();
        let seconds = seconds(self.cases.iter().flat_map(|c| &c.attempts));
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            xml,
            "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
             time=\"{seconds:.3}\">",
            attr(&format!("eval {}", self.dataset)),
        );
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
             skipped=\"0\" time=\"{seconds:.3}\">",
            attr(&self.dataset),
        );
        xml.push_str("    <properties>\n");
        let overall = &self.overall;
        for (name, value) in [
            ("min_pass_rate", self.min_pass_rate.to_string()),
            ("pass_rate", format!("{:.4}", overall.pass_rate)),
            ("attempts", overall.attempts.to_string()),
            ("tokens", overall.usage.total().to_string()),
            ("cost", overall.cost.to_string()),
            ("judge_tokens", overall.judge_usage.total().to_string()),
            ("judge_cost", overall.judge_cost.to_string()),
        ] {
            let _ = writeln!(
                xml,
                "      <property name=\"{name}\" value=\"{}\"/>",
                attr(&value)
            );
        }
        xml.push_str("    </properties>\n");
        for case in &self.cases {
            self.testcase(&mut xml, case);
        }
        xml.push_str("  </testsuite>\n</testsuites>\n");
        xml
    }

    fn testcase(&self, xml: &mut String, case: &CaseReport) {
        let summary = &case.summary;
        let _ = writeln!(
            xml,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">",
            attr(&case.name),
            attr(&self.dataset),
            seconds(&case.attempts),
        );
        if !summary.meets(self.min_pass_rate) {
            let message = format!(
                "{} of {} attempts passed ({:.0}%), below the {:.0}% required",
                summary.passed,
                summary.attempts,
                summary.pass_rate * 100.0,
                self.min_pass_rate * 100.0
            );
            let mut reasons = String::new();
            for attempt in case.attempts.iter().filter(|a| !a.passed) {
                reasons.push_str(&why_failed(attempt));
            }
            let _ = writeln!(
                xml,
                "      <failure message=\"{}\" type=\"pass_rate\">{}</failure>",
                attr(&message),
                text(&clip(&reasons, FAILURE_TEXT)),
            );
        }
        let _ = writeln!(
            xml,
            "      <system-out>{}</system-out>",
            text(&format!(
                "{}/{} passed; {:.1} steps per attempt; {} tokens; cost {}; judge {} tokens, {}; \
                 p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms",
                summary.passed,
                summary.attempts,
                summary.mean_steps(),
                summary.usage.total(),
                summary.cost,
                summary.judge_usage.total(),
                summary.judge_cost,
                summary.latency.p50_ms,
                summary.latency.p90_ms,
                summary.latency.p99_ms,
            ))
        );
        xml.push_str("    </testcase>\n");
    }
}

/// A failed attempt's reasons, one per line.
pub(crate) fn why_failed(attempt: &AttemptReport) -> String {
    let mut lines = String::new();
    if let Some(error) = &attempt.error {
        let _ = writeln!(lines, "attempt {}: {error}", attempt.attempt);
    }
    for check in attempt.checks.iter().filter(|c| !c.passed) {
        let _ = writeln!(
            lines,
            "attempt {}: {} failed: {}",
            attempt.attempt,
            check.check,
            check.reason.as_deref().unwrap_or("no reason given")
        );
    }
    lines
}

fn seconds<'a>(attempts: impl IntoIterator<Item = &'a AttemptReport>) -> f64 {
    attempts.into_iter().map(|a| a.latency_ms).sum::<f64>() / 1000.0
}

/// Whether XML 1.0 can hold `c` at all.
fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `value` escaped for a double-quoted attribute.
pub(crate) fn attr(value: &str) -> String {
    escape(value, true)
}

/// `value` escaped for element text.
pub(crate) fn text(value: &str) -> String {
    escape(value, false)
}

fn escape(value: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if allowed(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup_and_no_forbidden_character() {
        assert_eq!(attr("<&\"]]>'"), "&lt;&amp;&quot;]]&gt;&apos;");
        assert_eq!(attr("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
        assert_eq!(text("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            text("nul\u{0}bell\u{7}\u{FFFF}"),
            "nul\u{FFFD}bell\u{FFFD}\u{FFFD}"
        );
        assert_eq!(text("ünïcødé 🦀"), "ünïcødé 🦀");
    }
}
