//! The `#[skill]` attribute of the eugene agent framework: an ordinary `async fn` becomes a skill
//! the model can call; and, with the feature `agent-skills`, `agent_skills!`, which compiles a
//! folder of Agent Skills into the program.
//!
//! Use them through `agent_core` (or the `eugene` facade); the attribute's keys, what it
//! generates and its rules are documented there, the macro's below. All runtime logic lives in `agent-core`, which
//! this crate does not depend on. The stages, each in its own (private) module, all report to one
//! error collector, `ctxt::Ctxt`:
//!
//! 1. `attr` parses `#[skill(...)]` and `ast` reads the function into a `SkillFn`;
//! 2. `validate` judges the model, so one build reports every mistake;
//! 3. `expand` emits the code of a valid model.
//!
//! `names` holds what things are called. `agent_skills` is the macro, in one module with its own
//! stages (reading the call, checking the folder, emitting the registrations), reporting to the
//! same `Ctxt`.

#![warn(missing_docs, clippy::missing_docs_in_private_items)]

#[cfg(feature = "agent-skills")]
mod agent_skills;
mod ast;
mod attr;
mod ctxt;
mod expand;
mod names;
mod validate;

use proc_macro::TokenStream;

/// Turns an ordinary `async fn` into a skill the model can call. The manual (the table of keys,
/// the parameters, the return types, what is generated and the errors reported) is on
/// [agent-core's page of this attribute](../agent_core/attr.skill.html), which `cargo doc` writes
/// beside this one; use the attribute through `agent_core` or `eugene`.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => return expand::errors_and(validate::not_a_function(&item), item).into(),
    };
    let cx = ctxt::Ctxt::new();
    let skill = ast::SkillFn::from_syn(&cx, attr.into(), &function);
    validate::check(&cx, &skill);
    match cx.check() {
        Ok(()) => expand::expand(&skill),
        Err(errors) => expand::errors_and(errors, expand::strip_arg_attrs(&function)),
    }
    .into()
}

/// Compiles a folder of [Agent Skills](https://agentskills.io/specification) into the program:
/// each skill's `SKILL.md` is checked against the format's specification while the macro expands,
/// and `Registry::discover` offers the skills through the built-in `load_skill` tool.
///
/// ```text
/// agent_skills!("skills");
/// ```
///
/// One string literal: the folder that holds the skill folders (`skills/pdf/SKILL.md`,
/// `skills/pdf/scripts/fill.py`, `skills/review/SKILL.md`, ...). Every folder directly inside it
/// that holds a `SKILL.md` is a skill; other files and folders there are ignored.
///
/// # The path
///
/// A relative path starts at the folder of the file that holds the call, as `include_str!`'s
/// does: in `src/agents/coder.rs`, `agent_skills!("skills")` is `src/agents/skills`, and
/// `agent_skills!("../../skills")` is the crate's `skills` folder. An absolute path is taken as
/// it is. When the calling file is not known to the compiler (its path remapped with
/// `--remap-path-prefix`, or code that no file on disk holds), a relative path starts at the
/// crate's folder (`CARGO_MANIFEST_DIR`) instead, and errors say so. A call written by a
/// `macro_rules!` macro resolves from the file that defines that macro.
///
/// # Checked at compile time
///
/// Every `SKILL.md` must pass `agent_skills_spec::parse`: front matter between `---` lines,
/// valid YAML, a `name` of at most 64 lowercase letters, digits and single hyphens that is the
/// folder's name, a `description` of at most 1024 characters, and so on. Each broken rule is its
/// own error at the string literal, naming the file (relative to the crate when inside it), the
/// line and the rule, and a build reports every one at once:
///
/// ```text
/// error: skills/pdf_tools/SKILL.md:2: name "pdf_tools" may only have lowercase ASCII letters, digits and hyphens, not '_' (rule `name-characters`)
///  --> src/main.rs:3:15
///   |
/// 3 | agent_skills!("skills");
///   |               ^^^^^^^^
/// ```
///
/// A missing folder, one that cannot be read or holds no skill, a skill whose files cannot be
/// listed, and more than 64 MiB of files in one call (the error names the largest) are errors
/// too.
///
/// # What it generates
///
/// Items only (a `const _` block), so the call goes wherever an item may: a module, a function
/// body. For each skill, one link-time registration of an `EmbeddedAgentSkill` holding the
/// checked front matter, `include_str!` of its `SKILL.md` and `include_bytes!` of every other
/// file in its folder (symbolic links are skipped). `Registry::discover` and
/// `AgentSkill::embedded()` find them in every binary the crate is linked into; the program reads
/// nothing from disk at run time, and `load_skill` serves the files from memory.
///
/// # Rebuilds
///
/// Because every file is read through `include_str!`/`include_bytes!`, cargo rebuilds the crate
/// when one of them changes, and the macro checks the skills again. A file or skill folder *added*
/// later is picked up at the crate's next rebuild; to have it picked up at once, give the crate a
/// `build.rs` that says `println!("cargo:rerun-if-changed=skills");` (the folder, relative to the
/// crate), which cargo watches for new entries.
///
/// # Example
///
/// The public skills of Anthropic's `anthropics/skills` repository, kept in this workspace:
///
/// ```
/// agent_core::agent_skills!("../../fixtures/agent-skills/anthropics");
///
/// # fn main() {
/// let registry = agent_core::Registry::discover().unwrap();
/// let names: Vec<&str> = registry.agent_skills().iter().map(|s| s.name.as_str()).collect();
/// assert!(names.contains(&"mcp-builder"));
/// assert!(registry.contains("load_skill"));
/// # }
/// ```
///
/// (In a doctest, as for `include_str!`, the calling file is the one that holds the doc comment:
/// here `agent-macros/src/lib.rs`.)
#[cfg(feature = "agent-skills")]
#[proc_macro]
pub fn agent_skills(input: TokenStream) -> TokenStream {
    let base = agent_skills::Base::of_call(proc_macro::Span::call_site().local_file());
    agent_skills::agent_skills(input.into(), &base).into()
}
