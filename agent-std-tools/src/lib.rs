//! Standard skills for the eugene agent framework (to come).
//!
//! It will hold files, patches, shell, search, web and memory skills, each written with
//! `#[skill]`, sharing one capability-based workspace sandbox reached from the
//! `agent_core::SkillContext`.

#![warn(missing_docs)]
