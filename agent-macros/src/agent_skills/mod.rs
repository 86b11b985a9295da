//! `agent_skills!("folder")`: a folder of Agent Skills compiled into the program, each checked
//! against the format's specification while the macro expands.
//!
//! The stages report to one [`Ctxt`], as `#[skill]`'s do, so one build shows every mistake:
//!
//! 1. [`Call`] reads the one string literal;
//! 2. [`Base`] and [`resolve`] turn it into a folder, relative to the calling file;
//! 3. [`gather`] checks every `SKILL.md` with [`agent_skills_spec::find`], lists each skill's
//!    files and bounds their size;
//! 4. [`expand`] submits one `EmbeddedAgentSkill` per skill to `inventory`, its text and files
//!    read by `include_str!`/`include_bytes!` so that cargo rebuilds when one of them changes.
//!
//! Every error is spanned on the string literal: it is the token to change, or the folder it
//! names holds the file to fix.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use agent_skills_spec::Found;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;
use syn::parse::{Parse, ParseStream};

mod base;

pub use base::{Base, resolve};

use crate::ctxt::Ctxt;
use crate::expand::runtime_crate;

/// The most bytes one call embeds, `SKILL.md`s included: a bound against compiling a folder of
/// data into the program by mistake.
pub const MAX_EMBEDDED_BYTES: u64 = 64 * 1024 * 1024;

/// How many of the largest files the size error names.
const LARGEST_SHOWN: usize = 5;

/// What the macro takes, shown when it is given something else.
const USAGE: &str = "agent_skills! takes one string literal, the folder that holds the skill \
                     folders (each with a SKILL.md), relative to this file: \
                     `agent_skills!(\"skills\")`";

/// The whole expansion: the registrations of every skill in the folder, or every error found.
pub fn agent_skills(input: TokenStream, base: &Base) -> TokenStream {
    let call: Call = match syn::parse2(input) {
        Ok(call) => call,
        Err(error) => return error.into_compile_error(),
    };
    let cx = Ctxt::new();
    let skills = gather(&cx, &call.path, base);
    match cx.check() {
        Ok(()) => expand(&runtime_crate(), &call.path.value(), &skills),
        Err(errors) => errors.into_compile_error(),
    }
}

/// The macro's input: one string literal, and at most a trailing comma.
pub struct Call {
    /// The folder, as written.
    pub path: LitStr,
}

impl Parse for Call {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(USAGE));
        }
        let path: LitStr = input
            .parse()
            .map_err(|_| syn::Error::new(input.span(), USAGE))?;
        let _: Option<syn::Token![,]> = input.parse()?;
        if !input.is_empty() {
            return Err(input.error(
                "agent_skills! takes one folder: remove what follows it, or write one call per folder",
            ));
        }
        Ok(Call { path })
    }
}

/// A skill that passed every check, ready to be embedded.
pub struct Skill {
    /// Its folder, front matter and text, as [`agent_skills_spec::find`] read them.
    pub found: Found,
    /// Its `SKILL.md`, as an absolute path in UTF-8 (what `include_str!` is given).
    skill_md: String,
    /// Its other files.
    pub files: Vec<File>,
}

/// One file of a skill's folder other than `SKILL.md`.
pub struct File {
    /// Its `/`-separated path, relative to the skill's folder.
    pub path: String,
    /// Its absolute path in UTF-8 (what `include_bytes!` is given).
    absolute: String,
    /// Its size in bytes, when listed.
    size: u64,
}

/// Finds the folder and every skill in it; reports every violation of the specification, and
/// every folder or file that cannot be read, at the literal. The skills are those that passed.
pub fn gather(cx: &Ctxt, literal: &LitStr, base: &Base) -> Vec<Skill> {
    let span = literal.span();
    let written = literal.value();
    let dir = resolve(&written, base);
    match std::fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            cx.error_at(
                span,
                format!(
                    "`{}` is a file, not a folder: give the folder that holds the skill folders \
                     (each with a SKILL.md)",
                    dir.display()
                ),
            );
            return Vec::new();
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            cx.error_at(
                span,
                format!(
                    "no folder `{}`: looked for `{}`, relative to {}, as `include_str!` resolves \
                     paths; give the folder that holds the skill folders (each with a SKILL.md), \
                     relative to this file or absolute",
                    written,
                    dir.display(),
                    base.described()
                ),
            );
            return Vec::new();
        }
        Err(error) => {
            cx.error_at(
                span,
                format!("cannot read the folder `{}`: {error}", dir.display()),
            );
            return Vec::new();
        }
    }
    let (found, invalid) = match agent_skills_spec::find(&dir) {
        Ok(both) => both,
        Err(error) => {
            cx.error_at(
                span,
                format!(
                    "cannot read the skill folders in `{}`: {error}",
                    dir.display()
                ),
            );
            return Vec::new();
        }
    };
    for skill in &invalid {
        for violation in &skill.violations {
            cx.error_at(
                span,
                format!(
                    "{}:{}: {} (rule `{}`)",
                    base.show(&skill.file),
                    violation.line,
                    violation.message,
                    violation.rule.id()
                ),
            );
        }
    }
    if found.is_empty() && invalid.is_empty() {
        cx.error_at(span, no_skill(&dir, &written));
        return Vec::new();
    }
    let skills: Vec<Skill> = found
        .into_iter()
        .filter_map(|found| with_files(cx, span, base, found))
        .collect();
    within_size(cx, span, &skills);
    skills
}

/// Why a folder with no skill in it is refused, and what to write instead.
fn no_skill(dir: &Path, written: &str) -> String {
    let looked_for = format!(
        "no skill in `{}`: agent_skills! embeds the folders directly inside it that hold a \
         {} (`{}`)",
        dir.display(),
        agent_skills_spec::SKILL_FILE,
        dir.join("<name>")
            .join(agent_skills_spec::SKILL_FILE)
            .display()
    );
    if !dir.join(agent_skills_spec::SKILL_FILE).is_file() {
        return format!("{looked_for}; add a skill folder, or name the folder that holds them");
    }
    let parent = match Path::new(written).parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.display().to_string(),
        _ if Path::new(written).is_absolute() => written.to_owned(),
        _ => format!("{written}/.."),
    };
    format!(
        "{looked_for}; `{written}` is a skill itself: name the folder that holds it, \
         `agent_skills!(\"{parent}\")`"
    )
}

/// `found` with its files listed and measured, or `None` (reported) when they cannot be, or a
/// path is not UTF-8 (which `include_bytes!` could not name).
fn with_files(cx: &Ctxt, span: Span, base: &Base, found: Found) -> Option<Skill> {
    let skill_md_path = found.folder.join(agent_skills_spec::SKILL_FILE);
    let skill_md = utf8(cx, span, base, &skill_md_path)?;
    let listed = match agent_skills_spec::files(&found.folder) {
        Ok(listed) => listed,
        Err(error) => {
            cx.error_at(
                span,
                format!(
                    "cannot list the files of the skill `{}` in `{}`: {error}",
                    found.manifest.name,
                    base.show(&found.folder)
                ),
            );
            return None;
        }
    };
    let mut files = Vec::with_capacity(listed.len());
    let mut complete = true;
    for path in listed {
        let on_disk = found.folder.join(&path);
        let size = match std::fs::metadata(&on_disk) {
            Ok(meta) => meta.len(),
            Err(error) => {
                cx.error_at(
                    span,
                    format!("cannot read `{}`: {error}", base.show(&on_disk)),
                );
                complete = false;
                continue;
            }
        };
        match utf8(cx, span, base, &on_disk) {
            Some(absolute) => files.push(File {
                path,
                absolute,
                size,
            }),
            None => complete = false,
        }
    }
    complete.then_some(Skill {
        found,
        skill_md,
        files,
    })
}

/// `path` as UTF-8 text, or `None` (reported).
fn utf8(cx: &Ctxt, span: Span, base: &Base, path: &Path) -> Option<String> {
    let text = path.to_str().map(str::to_owned);
    if text.is_none() {
        cx.error_at(
            span,
            format!(
                "`{}`: a path that is not UTF-8 cannot be embedded; rename it",
                base.show(path)
            ),
        );
    }
    text
}

/// Refuses more than [`MAX_EMBEDDED_BYTES`] in one call, naming the largest files.
fn within_size(cx: &Ctxt, span: Span, skills: &[Skill]) {
    let mut sizes: Vec<(u64, String)> = Vec::new();
    for skill in skills {
        let folder = folder_name(skill);
        sizes.push((
            skill.found.text.len() as u64,
            format!("{folder}/{}", agent_skills_spec::SKILL_FILE),
        ));
        for file in &skill.files {
            sizes.push((file.size, format!("{folder}/{}", file.path)));
        }
    }
    let total: u64 = sizes.iter().map(|(size, _)| size).sum();
    if total <= MAX_EMBEDDED_BYTES {
        return;
    }
    sizes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut largest = String::new();
    for (i, (size, path)) in sizes.iter().take(LARGEST_SHOWN).enumerate() {
        let separator = if i == 0 { "" } else { ", " };
        let _ = write!(largest, "{separator}`{path}` ({})", mib(*size));
    }
    cx.error_at(
        span,
        format!(
            "these skills hold {} of files, more than the {} one agent_skills! call embeds; the \
             largest: {largest}. Keep large data out of the skill folders (read it at run time)",
            mib(total),
            mib(MAX_EMBEDDED_BYTES)
        ),
    );
}

/// The name of the skill's folder (its last path component).
fn folder_name(skill: &Skill) -> String {
    skill
        .found
        .folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `bytes` in mebibytes, to one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// One `inventory` submission per skill, in a `const _` block so the call is an item anywhere.
pub fn expand(krate: &TokenStream, written: &str, skills: &[Skill]) -> TokenStream {
    let written = written.trim_end_matches(['/', '\\']);
    let submissions = skills.iter().map(|skill| {
        let manifest = &skill.found.manifest;
        let name = &manifest.name;
        let description = &manifest.description;
        let license = optional(manifest.license.as_deref());
        let compatibility = optional(manifest.compatibility.as_deref());
        let allowed_tools = &manifest.allowed_tools;
        let keys = manifest.metadata.iter().map(|(key, _)| key);
        let values = manifest.metadata.iter().map(|(_, value)| value);
        let skill_md = &skill.skill_md;
        let body_offset = manifest.body_offset;
        let paths = skill.files.iter().map(|file| &file.path);
        let absolutes = skill.files.iter().map(|file| &file.absolute);
        let folder = folder_name(skill);
        let source = if written.is_empty() {
            folder
        } else {
            format!("{written}/{folder}")
        };
        quote! {
            #krate::__private::inventory::submit! {
                #krate::EmbeddedAgentSkill {
                    name: #name,
                    description: #description,
                    license: #license,
                    compatibility: #compatibility,
                    allowed_tools: &[#(#allowed_tools),*],
                    metadata: &[#((#keys, #values)),*],
                    skill_md: ::core::include_str!(#skill_md),
                    body_offset: #body_offset,
                    files: &[#(
                        #krate::EmbeddedFile {
                            path: #paths,
                            bytes: ::core::include_bytes!(#absolutes),
                        }
                    ),*],
                    source: #source,
                }
            }
        }
    });
    quote! {
        const _: () = {
            #(#submissions)*
        };
    }
}

/// `Some("text")` or `None`, as tokens.
fn optional(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

#[cfg(test)]
mod tests;
