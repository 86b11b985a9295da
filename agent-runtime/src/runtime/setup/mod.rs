//! The runtime and what it is built with: [`AgentRuntime`](super::AgentRuntime) and its builder
//! methods (`agent_runtime.rs`), its settings (`settings.rs`), and its place among agents when
//! another runs it as a skill (`ancestry.rs`).

pub(super) mod agent_runtime;
pub(super) mod ancestry;
pub(super) mod settings;
