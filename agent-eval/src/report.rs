//! What an eval found: a [`Report`] with a [`CaseReport`] per case and an [`AttemptReport`] per
//! attempt, each summed up in a [`Summary`]; saved as JSON and read back
//! ([`Report::save`], [`Report::load`]) to be [compared](crate::Comparison) with a later run.
//!
//! Money stays honest: a [`Cost`] keeps the calls no price was known for
//! ([`Cost::unpriced_calls`]), so a run of an unpriced model reads `unpriced (3 calls)` in the
//! table and `"unpriced_calls": 3` in the JSON, never `$0`. The judge's tokens and cost are kept
//! apart from the agent's (`judge_usage`, `judge_cost`).

use std::io::{Read, Write};
use std::path::Path;

use agent_llm::{Cost, Usage};
use agent_runtime::FinishReason;
use serde::{Deserialize, Serialize};

use crate::stats::Latency;

/// The version of the JSON form; [`Report::from_json`] reads only this one.
pub const REPORT_FORMAT: u32 = 1;
/// The largest report file read, in bytes.
pub const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

/// A whole eval's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`REPORT_FORMAT`].
    pub format: u32,
    /// The dataset's name.
    pub dataset: String,
    /// The pass rate each case must reach for the eval to pass ([`Report::passed`]).
    pub min_pass_rate: f64,
    /// Every attempt of every case together.
    pub overall: Summary,
    /// Each case, in the dataset's order.
    pub cases: Vec<CaseReport>,
}

/// One case's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseReport {
    /// The case's name.
    pub name: String,
    /// Its goal.
    pub goal: String,
    /// Its attempts summed up.
    pub summary: Summary,
    /// Each attempt, in order.
    pub attempts: Vec<AttemptReport>,
}

/// One attempt: one run of the agent on a case's goal, and its checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptReport {
    /// Which attempt of the case, from 1.
    pub attempt: usize,
    /// Whether the run finished ([`FinishReason::NoMoreToolCalls`]) and every check passed.
    pub passed: bool,
    /// Why the run ended; `None` when it failed (see `error`).
    pub finish: Option<FinishReason>,
    /// Why the attempt failed without being checked: the run's error (a provider error, the
    /// time limit), or the way it ended when that was not an answer.
    pub error: Option<String>,
    /// Each check's outcome, in the case's order (empty when the run gave no answer).
    pub checks: Vec<CheckOutcome>,
    /// Model calls the run made.
    pub steps: usize,
    /// Tokens the run used.
    pub usage: Usage,
    /// What the run's calls cost.
    pub cost: Cost,
    /// Tokens the judge used on this attempt's rubrics.
    pub judge_usage: Usage,
    /// What the judge's calls cost.
    pub judge_cost: Cost,
    /// The run's wall time, from its start to its end (the checks and the judge not included),
    /// in milliseconds.
    pub latency_ms: f64,
    /// The answer as checks read it (clipped to 2,000 characters).
    pub answer: Option<String>,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// The check's name (`contains "Paris"`).
    pub check: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why it failed, or the judge's reason for a rubric either way.
    pub reason: Option<String>,
}

/// A set of attempts summed up.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Attempts made.
    pub attempts: usize,
    /// Attempts that passed.
    pub passed: usize,
    /// Attempts whose run failed or ended without an answer.
    pub errors: usize,
    /// `passed / attempts` (0 when there were none).
    pub pass_rate: f64,
    /// Model calls, all attempts together.
    pub steps: usize,
    /// The agent's tokens.
    pub usage: Usage,
    /// The agent's cost.
    pub cost: Cost,
    /// The judge's tokens.
    pub judge_usage: Usage,
    /// The judge's cost.
    pub judge_cost: Cost,
    /// The attempts' wall-time percentiles ([`Latency`]: nearest rank).
    pub latency: Latency,
}

impl Summary {
    /// The sum of `attempts`.
    pub fn of<'a>(attempts: impl IntoIterator<Item = &'a AttemptReport>) -> Summary {
        let mut summary = Summary::default();
        let mut millis = Vec::new();
        for attempt in attempts {
            summary.attempts += 1;
            summary.passed += usize::from(attempt.passed);
            summary.errors += usize::from(attempt.error.is_some());
            summary.steps += attempt.steps;
            summary.usage += attempt.usage;
            summary.cost += attempt.cost;
            summary.judge_usage += attempt.judge_usage;
            summary.judge_cost += attempt.judge_cost;
            millis.push(attempt.latency_ms);
        }
        summary.pass_rate = rate(summary.passed, summary.attempts);
        summary.latency = Latency::of(&millis);
        summary
    }

    /// Whether the pass rate reaches `min` (a case of no attempts never does).
    pub fn meets(&self, min: f64) -> bool {
        // In integers where possible: 2 of 3 reaches 2/3 however the rate was rounded.
        self.attempts > 0 && self.passed as f64 >= min * self.attempts as f64 - 1e-9
    }

    /// Model calls per attempt.
    pub fn mean_steps(&self) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            self.steps as f64 / self.attempts as f64
        }
    }
}

fn rate(passed: usize, attempts: usize) -> f64 {
    if attempts == 0 {
        0.0
    } else {
        passed as f64 / attempts as f64
    }
}

/// A report that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The file cannot be read.
    #[error("{file}: cannot be read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_REPORT_BYTES`].
    #[error("{file}: the file is over {max} bytes, more than a report may have")]
    TooLarge {
        /// The file.
        file: String,
        /// The limit.
        max: u64,
    },
    /// The file is not a report.
    #[error("{file}:{line}:{column}: not an eval report: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A report of another format version.
    #[error("{file}: an eval report of format {found}; this version reads format {REPORT_FORMAT}")]
    Format {
        /// The file.
        file: String,
        /// The version it has.
        found: u32,
    },
    /// The report cannot be written.
    #[error("{file}: cannot be written: {source}")]
    Write {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
}

impl Report {
    /// A report of these cases, summed up.
    pub fn new(dataset: impl Into<String>, min_pass_rate: f64, cases: Vec<CaseReport>) -> Report {
        let overall = Summary::of(cases.iter().flat_map(|case| &case.attempts));
        Report {
            format: REPORT_FORMAT,
            dataset: dataset.into(),
            min_pass_rate,
            overall,
            cases,
        }
    }

    /// Whether every case's pass rate reaches [`Report::min_pass_rate`].
    pub fn passed(&self) -> bool {
        self.cases
            .iter()
            .all(|case| case.summary.meets(self.min_pass_rate))
    }

    /// The cases whose pass rate falls short of [`Report::min_pass_rate`].
    pub fn failing(&self) -> impl Iterator<Item = &CaseReport> {
        self.cases
            .iter()
            .filter(|case| !case.summary.meets(self.min_pass_rate))
    }

    /// The case named `name`.
    pub fn case(&self, name: &str) -> Option<&CaseReport> {
        self.cases.iter().find(|case| case.name == name)
    }

    /// The report as pretty JSON, to save and [read back](Report::from_json).
    pub fn to_json(&self) -> String {
        // A report is plain data (strings, numbers, maps with string keys): nothing in it can fail
        // to serialize.
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|error| format!("{{\"error\": {:?}}}", error.to_string()))
    }

    /// Reads a report from its JSON; `file` is the name errors give.
    pub fn from_json(file: &str, text: &str) -> Result<Report, ReportError> {
        let invalid = |error: serde_json::Error| ReportError::Invalid {
            file: file.to_owned(),
            line: error.line().max(1),
            column: error.column().max(1),
            message: strip_place(&error.to_string()),
        };
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let version: Version = serde_json::from_str(text).map_err(invalid)?;
        if version.format != REPORT_FORMAT {
            return Err(ReportError::Format {
                file: file.to_owned(),
                found: version.format,
            });
        }
        serde_json::from_str(text).map_err(invalid)
    }

    /// Reads a report from a JSON file (at most [`MAX_REPORT_BYTES`]).
    pub fn load(path: impl AsRef<Path>) -> Result<Report, ReportError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let read = |source| ReportError::Read {
            file: file.clone(),
            source,
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(read)?
            .take(MAX_REPORT_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        if text.len() as u64 > MAX_REPORT_BYTES {
            return Err(ReportError::TooLarge {
                file,
                max: MAX_REPORT_BYTES,
            });
        }
        Report::from_json(&file, &text)
    }

    /// Writes the report's JSON to `path`: to a temporary file beside it, then renamed over it,
    /// so the file is never left half written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        write_atomically(path.as_ref(), self.to_json().as_bytes())
    }

    /// Writes the report's [JUnit XML](Report::to_junit) to `path`, as [`Report::save`] does.
    pub fn save_junit(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        write_atomically(path.as_ref(), self.to_junit().as_bytes())
    }
}

/// serde_json's message without its ` at line L column C` (the error's prefix gives the place).
fn strip_place(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// `bytes` into `path` by way of a temporary file in the same directory, renamed over it.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let file = path.display().to_string();
    let failed = |source| ReportError::Write {
        file: file.clone(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| failed(std::io::Error::other("the path names no file")))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    // One name per write, so two writes at once (in this process or another) never share one.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp_name = format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id());
    let temp = match dir {
        Some(dir) => dir.join(temp_name),
        None => temp_name.into(),
    };
    let written = (|| {
        let mut out = std::fs::File::create(&temp)?;
        out.write_all(bytes)?;
        out.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(failed(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(passed: bool, millis: f64, cost: Cost) -> AttemptReport {
        AttemptReport {
            attempt: 1,
            passed,
            finish: Some(FinishReason::NoMoreToolCalls),
            error: None,
            checks: Vec::new(),
            steps: 2,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            },
            cost,
            judge_usage: Usage::default(),
            judge_cost: Cost::default(),
            latency_ms: millis,
            answer: None,
        }
    }

    #[test]
    fn a_summary_adds_up_and_keeps_unpriced_calls_unpriced() {
        let attempts = [
            attempt(true, 10.0, Cost::UNPRICED),
            attempt(false, 30.0, Cost::UNPRICED),
            attempt(true, 20.0, Cost::UNPRICED),
        ];
        let summary = Summary::of(&attempts);
        assert_eq!((summary.attempts, summary.passed, summary.steps), (3, 2, 6));
        assert!((summary.pass_rate - 2.0 / 3.0).abs() < 1e-12);
        assert!(summary.meets(2.0 / 3.0));
        assert!(!summary.meets(1.0));
        assert_eq!(summary.usage.total(), 45);
        assert_eq!(summary.cost.unpriced_calls, 3);
        assert_eq!(summary.cost.to_string(), "unpriced (3 calls)");
        assert_eq!(summary.latency.p50_ms, 20.0);
        assert_eq!(summary.latency.max_ms, 30.0);
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["cost"]["unpriced_calls"], 3);
        assert!(!Summary::default().meets(0.0));
    }

    #[test]
    fn a_report_reads_back_as_itself_and_a_bad_one_is_placed() {
        let case = CaseReport {
            name: "a".into(),
            goal: "g".into(),
            summary: Summary::of(&[attempt(true, 1.0, Cost::default())]),
            attempts: vec![attempt(true, 1.0, Cost::default())],
        };
        let report = Report::new("set", 1.0, vec![case]);
        let back = Report::from_json("r.json", &report.to_json()).unwrap();
        assert_eq!(back, report);

        let broken = report
            .to_json()
            .replacen("\"passed\": true", "\"passed\": 7", 1);
        let error = Report::from_json("r.json", &broken)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("r.json:"), "{error}");
        assert!(error.contains("expected a boolean"), "{error}");
        assert!(!error.contains(" at line "), "{error}");

        let other = report
            .to_json()
            .replacen("\"format\": 1", "\"format\": 9", 1);
        let error = Report::from_json("r.json", &other).unwrap_err().to_string();
        assert!(error.contains("format 9"), "{error}");
    }
}
