//! The loop and what it steps: the run as a value ([`RunState`](super::RunState), `run_state.rs`),
//! driven from start to outcome (`drive.rs`) by the loop (`agent_loop.rs`), its I/O direct or
//! journaled (`effects.rs`, `journal.rs`, `journaled/`), and what a step checks and keeps:
//! guards, repair of unanswered calls, compaction, spans, tool results as kept.

pub(super) mod agent_loop;
pub(super) mod compaction;
pub(super) mod drive;
pub(super) mod effects;
pub(super) mod guards;
pub(super) mod journal;
pub(super) mod journaled;
pub(super) mod repair;
pub(super) mod run_state;
pub(super) mod spans;
pub(super) mod tool_record;
