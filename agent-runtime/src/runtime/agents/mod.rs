//! Agents with agents: an agent used as a skill ([`SubAgent`](super::SubAgent), `sub_agent.rs`),
//! a run's place among them (`nesting.rs`), a skill's calls inside its own call
//! ([`InnerCalls`](super::InnerCalls), `inner_calls.rs`), and handoffs (`handoff.rs`).

pub(super) mod handoff;
pub(super) mod inner_calls;
pub(super) mod nesting;
pub(super) mod sub_agent;
