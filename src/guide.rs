//! The guide: eugene chapter by chapter, beyond the README's getting started. Each chapter is a
//! file in `docs/guide/` (readable on its own, as Markdown), shown here as a module's page; its
//! examples are compiled and run as doctests with the crate's.
//!
//! | chapter | what it covers |
//! |---|---|
//! | [`skills`] | `#[skill]` and its keys, typed outputs, images and documents, what the registry guarantees |
//! | [`agent_loop`] | runs, typed results, pauses for a person and sessions, agents that compose, code mode, durable runs, cost, tracing |
//! | [`standard_skills`] | files, patches, shell, search, web, memory in their sandbox; `SKILL.md` folders |
//! | [`mcp`] | serving skills, using servers' tools, resources, prompts, sampling, elicitation, OAuth |
//! | [`models`] | Anthropic, OpenAI (Chat and Responses), Gemini, local servers, cassettes, prices |
//! | [`command_line`] | the `eugene` command: asking, sessions, approvals, `--attach`, output schemas, exit statuses |
//! | [`evals`] | datasets, checks, runs, reports and comparisons |
//! | [`agui`] | AG-UI for user interfaces: threads, the events, pauses as interrupts, bounds |
// The chapters are Markdown written to be read on their own (on a forge, in an editor): names in
// backticks and brackets there are prose, not links into this crate's items.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::bare_urls)]

#[doc = include_str!("../docs/guide/01-skills.md")]
pub mod skills {}

#[doc = include_str!("../docs/guide/02-agent-loop.md")]
pub mod agent_loop {}

#[doc = include_str!("../docs/guide/03-standard-skills.md")]
pub mod standard_skills {}

#[doc = include_str!("../docs/guide/04-mcp.md")]
pub mod mcp {}

#[doc = include_str!("../docs/guide/05-models.md")]
pub mod models {}

#[doc = include_str!("../docs/guide/06-command-line.md")]
pub mod command_line {}

#[doc = include_str!("../docs/guide/07-evals.md")]
pub mod evals {}

#[doc = include_str!("../docs/guide/08-agui.md")]
pub mod agui {}
