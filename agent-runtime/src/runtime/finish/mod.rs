//! How a run ends: where each [`FinishReason`](super::FinishReason) is decided
//! (`finish_checks.rs`), the reasons (`finish_reason.rs`), the [`RunOutcome`](super::RunOutcome)
//! (`run_outcome.rs`), the [`AgentError`](super::AgentError) that ends a run abnormally
//! (`agent_error.rs`), and a typed run's end: the output asked for (`output_type.rs`), the
//! ability that asks and checks (`typed_answer.rs`), and the [`TypedOutcome`](super::TypedOutcome)
//! (`typed_outcome.rs`); a typed run as a stream of partial answers (`typed_stream.rs`), read by
//! the incremental JSON parser (`partial_json.rs`).

pub(super) mod agent_error;
pub(super) mod finish_checks;
pub(super) mod finish_reason;
pub(super) mod output_type;
pub(super) mod partial_json;
pub(super) mod run_outcome;
pub(super) mod typed_answer;
pub(super) mod typed_outcome;
pub(super) mod typed_stream;
