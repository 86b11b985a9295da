//! Agent Skills: folders of instructions (a `SKILL.md` with a name, a description and Markdown,
//! beside optional `scripts/`, `references/` and `assets/`) that a model loads when a task calls for
//! them — the format Claude's tools, Codex and others read.
//!
//! A skill here is a [`Skill`](crate::Skill) the model *calls*; an [`AgentSkill`] is a procedure it
//! *reads*. The registry offers them a level at a time, through one built-in tool, `load_skill`:
//!
//! | level | what the model gets | when |
//! |---|---|---|
//! | 1 | each skill's name and description | always: listed in `load_skill`'s description |
//! | 2 | the instructions (the body of `SKILL.md`), the folder and its file list | `load_skill { name }` |
//! | 3 | one file of the folder | `load_skill { name, file }`, or `run_shell` for a script, if permitted |
//!
//! Instructions or a file longer than the registry's output budget come in pieces of whole lines,
//! each within the budget, ending with which lines it holds and the `offset` to continue from;
//! `load_skill { name, file?, offset, limit }` (lines, from 1) chooses one. The pieces, put
//! together, are the text byte for byte; only a single line longer than the budget is cut (its
//! beginning shown, and the line after it named).
//!
//! Level 1 sits in the tool's description rather than in the system prompt, so a registry carries
//! its skills into any runtime, MCP server or model client without touching their prompts, and
//! one tool's schema is paid once rather than once per skill (docs/PERFORMANCE.md §8 counts the
//! tokens of each choice).
//!
//! Where the skills come from:
//! - compiled into the program by `agent_skills!("folder")` (feature `agent-skills`): checked
//!   against the format's specification at compile time and found by
//!   [`Registry::discover`](crate::Registry::discover), like `#[skill]` functions;
//! - loaded from a folder at run time by `agent_std_tools::AgentSkills::load`, whose files are read
//!   through the workspace sandbox, confined to the skill's folder;
//! - made by hand with [`AgentSkill::new`], and added with
//!   [`Registry::add_agent_skills`](crate::Registry::add_agent_skills).
//!
//! `allowed-tools` is kept but not enforced: what a skill's instructions may make the model do is
//! decided by the registry's hooks and permission rules, as for any other call.

mod agent_skill;
mod embedded;

pub use agent_skill::{AgentSkill, AgentSkillFiles};
pub use embedded::{EmbeddedAgentSkill, EmbeddedFile};
