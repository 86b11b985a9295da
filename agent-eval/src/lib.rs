//! Evals for the eugene agent framework: run a [`Dataset`] of cases against an agent N times
//! each, check every answer, and get a [`Report`] of pass rates, steps, tokens, cost and latency
//! percentiles, as a table, JSON ([`Report::to_json`], read back with [`Report::load`]) and
//! JUnit XML ([`Report::to_junit`]) for CI, and compared run against run ([`Comparison`]).
//!
//! ```
//! use agent_core::Registry;
//! use agent_eval::{Case, Check, Comparison, Dataset, Eval, Judge};
//! use agent_llm::{MockProvider, MockReply};
//! use agent_runtime::AgentRuntime;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let dataset = Dataset::from_yaml("cases.yaml", "
//! cases:
//!   - name: capital
//!     goal: What is the capital of France? Answer with the city alone.
//!     checks:
//!       - equals: Paris
//!       - rubric: The answer is the name of a city, with no explanation.
//! ").unwrap();
//!
//! // The agent under test (any provider: live, recorded, or scripted as here), and the judge.
//! let agent = MockProvider::new([MockReply::text("Paris")]);
//! let judge = MockProvider::new([MockReply::text(r#"{"pass": true, "reason": "A city."}"#)])
//!     .with_response_schema(true);
//!
//! let report = Eval::new(dataset)
//!     .concurrency(4)
//!     .judge(Judge::new(judge))
//!     .run(|_case| AgentRuntime::new(agent.clone(), Registry::new()))
//!     .await
//!     .unwrap();
//! assert!(report.passed());
//! assert_eq!(report.overall.pass_rate, 1.0);
//! println!("{}", report.table());
//!
//! // Saved as JSON, a report is the "before" of the next run's comparison.
//! let before = agent_eval::Report::from_json("before.json", &report.to_json()).unwrap();
//! assert!(!Comparison::new(&before, &report).has_regressions());
//! # }
//! ```
//!
//! # What is where
//!
//! | module | central type | what it is for |
//! |---|---|---|
//! | [`dataset`] | [`Dataset`], [`Case`] | the cases: goal and attached files, optional typed output, checks, attempts; YAML with `file:line:column` errors |
//! | [`check`] | [`Check`], [`Answer`] | equals, contains, JSON Schema, a rubric, a closure of yours |
//! | [`judge`] | [`Judge`] | the model that grades rubrics, with a JSON verdict |
//! | [`eval`] | [`Eval`] | the runner: N attempts a case, bounded concurrency, a time limit, progress |
//! | [`report`] | [`Report`] | per case and overall: pass rate, steps, tokens, cost, latency; JSON |
//! | [`stats`] | [`Latency`] | p50/p90/p99 by nearest rank |
//! | [`junit`] | | JUnit XML |
//! | [`compare`] | [`Comparison`] | two reports side by side, regressions listed |
//!
//! # Decisions
//!
//! - An attempt passes when its run finished with an answer and **every** check passed; a case's
//!   pass rate is its passing attempts over its attempts, and a report passes when every case
//!   reaches [`Eval::min_pass_rate`] (default 1: every attempt).
//! - A case's own `repeat` wins over [`Eval::repeat`], which wins over the dataset's `repeat`.
//! - `equals` on an untyped answer compares the trimmed text with a string, and the text parsed
//!   as JSON with anything else (`equals: 42`); on a typed answer, the value. `contains` searches
//!   the text, or a typed value's JSON.
//! - A provider error, a timeout or a run that ends without an answer fails its attempt, with
//!   the reason and what the run spent; it never aborts the eval. So does a judge that answers
//!   badly: its rubric check fails with the reason.
//! - Cost is never made up: calls without a price are counted as unpriced, and a report of only
//!   such calls says `unpriced`, not `$0`.
//! - Reports keep no transcripts (answers are clipped to 2,000 characters), so a long eval's
//!   report stays small.
//!
//! # Dependencies, and why
//!
//! `agent-core`, `agent-llm`, `agent-runtime` (the registry, providers and runs under test),
//! `futures` (`buffer_unordered`: bounded concurrency without spawning), `tokio` (time limits),
//! `serde`/`serde_json` (reports), `serde_yaml_ng` (datasets, with lines and columns in its
//! errors), `jsonschema` (the `json_schema` check and typed cases; without its HTTP and file
//! resolvers, so a schema reaches nothing outside itself), `thiserror` (error enums). The JUnit
//! writer is a few escaping rules of its own rather than an XML crate. It compiles no HTTP or TLS crate
//! of its own: the providers under test bring theirs. A case's `attach:` files are read with
//! agent-core's bounded loader (`agent_core::content::file`), the one `read_file` and
//! `eugene --attach` use.

#![warn(missing_docs)]

mod attach;
mod case;
pub mod check;
pub mod compare;
pub mod dataset;
mod dataset_error;
pub mod eval;
pub mod judge;
pub mod junit;
mod not_json;
pub mod report;
pub mod schema;
mod schema_error;
pub mod stats;
mod table;
mod tally;
mod yaml;

pub use check::{Answer, Check};
pub use compare::{CaseDelta, Comparison};
pub use dataset::{Case, Dataset, DatasetError};
pub use eval::{Eval, EvalError, MAX_ATTEMPTS, Progress};
pub use judge::Judge;
pub use not_json::NotJson;
pub use report::{
    AttemptReport, CaseReport, CheckOutcome, REPORT_FORMAT, Report, ReportError, Summary,
};
pub use schema::Schema;
pub use schema_error::SchemaError;
pub use stats::Latency;
