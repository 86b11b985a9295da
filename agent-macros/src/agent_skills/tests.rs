//! The stages on real folders: the public skills of `fixtures/agent-skills/anthropics`, the
//! bad skills of the facade's compile-fail cases, and temporary folders. The compile errors
//! themselves, as a user sees them, are pinned by `ui-tests/tests/ui/agent_skills/`.

use std::path::{Path, PathBuf};

use super::base::{normalize, resolve};
use super::{Base, Call, MAX_EMBEDDED_BYTES, gather};
use crate::ctxt::Ctxt;

/// The workspace's root folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A base as if the call were in `file`, in a crate at the workspace's root.
fn base_in(file: &str) -> Base {
    Base {
        dir: workspace().join(file).parent().unwrap().to_owned(),
        from_manifest: false,
        crate_dir: Some(workspace()),
    }
}

/// A string literal.
fn literal(text: &str) -> syn::LitStr {
    syn::LitStr::new(text, proc_macro2::Span::call_site())
}

/// Every message `gather` reports for `folder`, called from `file`.
fn messages(file: &str, folder: &str) -> Vec<String> {
    let cx = Ctxt::new();
    gather(&cx, &literal(folder), &base_in(file));
    match cx.check() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// A temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "agent-macros-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A skill folder `name` in `dir`, with a valid `SKILL.md`.
fn write_skill(dir: &Path, name: &str) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Does {name}.\n---\nDo it.\n"),
    )
    .unwrap();
    folder
}

/// A relative path starts at the calling file's folder; `..` is resolved; an absolute path
/// is kept.
#[test]
fn paths_resolve_from_the_calling_file() {
    let base = base_in("tests/skills.rs");
    assert_eq!(
        resolve("../fixtures/agent-skills/anthropics", &base),
        workspace().join("fixtures/agent-skills/anthropics")
    );
    assert_eq!(resolve("/opt/skills", &base), PathBuf::from("/opt/skills"));
    assert_eq!(resolve("", &base), workspace().join("tests"));
    assert_eq!(normalize(Path::new("/a/./b/../c/..")), PathBuf::from("/a"));
}

/// The call takes one string literal and a trailing comma, and nothing else.
#[test]
fn the_call_is_one_string_literal() {
    assert!(syn::parse_str::<Call>(r#""skills""#).is_ok());
    assert!(syn::parse_str::<Call>(r#""skills","#).is_ok());
    for bad in ["", "skills", r#""a", "b""#, "42"] {
        let error = syn::parse_str::<Call>(bad).err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("agent_skills!")),
            "{bad}: {error:?}"
        );
    }
}

/// The public skills pass, every file listed with its size, `SKILL.md` left out.
#[test]
fn the_public_skills_pass() {
    let cx = Ctxt::new();
    let skills = gather(
        &cx,
        &literal("fixtures/agent-skills/anthropics"),
        &base_in("Cargo.toml"),
    );
    cx.check().unwrap();
    assert!(skills.len() >= 6, "{} skills", skills.len());
    for skill in &skills {
        assert!(skill.files.iter().all(|f| f.path != "SKILL.md"));
        for file in &skill.files {
            let on_disk = skill.found.folder.join(&file.path);
            assert_eq!(std::fs::metadata(&on_disk).unwrap().len(), file.size);
            assert_eq!(Path::new(&file.absolute), on_disk);
        }
    }
}

/// Each violation is its own error, `{file}:{line}: {message} (rule `{id}`)`, the file
/// relative to the crate; every bad skill of the folder is reported, not only the first.
#[test]
fn violations_name_the_file_line_and_rule() {
    let messages = messages(
        "ui-tests/tests/ui/agent_skills/two_bad_skills.rs",
        "two_bad_skills",
    );
    let expected = [
        "ui-tests/tests/ui/agent_skills/two_bad_skills/misnamed/SKILL.md:2: name \"Misnamed\" may only have lowercase ASCII letters, digits and hyphens, not 'M' (rule `name-characters`)",
        "ui-tests/tests/ui/agent_skills/two_bad_skills/misnamed/SKILL.md:2: name \"Misnamed\" must equal the name of the folder that holds SKILL.md, \"misnamed\" (rule `name-matches-folder`)",
        "ui-tests/tests/ui/agent_skills/two_bad_skills/misnamed/SKILL.md:3: `description` is blank: it must say what the skill does and when to use it (rule `description-required`)",
        "ui-tests/tests/ui/agent_skills/two_bad_skills/unversioned/SKILL.md:5: metadata `version` must be a string, but it is the number 2; quote it: `version: \"2\"` (rule `metadata-strings`)",
    ];
    assert_eq!(messages, expected);
}

/// A missing folder says where it was looked for, and from where.
#[test]
fn a_missing_folder_says_where_it_looked() {
    let messages = messages("tests/skills.rs", "no-such-skills");
    assert_eq!(messages.len(), 1);
    let expected = workspace().join("tests/no-such-skills");
    assert!(
        messages[0].contains(&format!("looked for `{}`", expected.display())),
        "{}",
        messages[0]
    );
    assert!(messages[0].contains("include_str!"), "{}", messages[0]);
}

/// A folder without skills is refused; a skill folder named instead of its parent gets the
/// call to write.
#[test]
fn a_folder_without_skills_is_refused() {
    let dir = TempDir::new("empty");
    let cx = Ctxt::new();
    let base = base_in("Cargo.toml");
    gather(&cx, &literal(dir.0.to_str().unwrap()), &base);
    let error = cx.check().unwrap_err().to_string();
    assert!(error.starts_with("no skill in"), "{error}");

    let folder = write_skill(&dir.0, "tidy");
    let cx = Ctxt::new();
    gather(&cx, &literal(folder.to_str().unwrap()), &base);
    let error = cx.check().unwrap_err().to_string();
    assert!(
        error.contains(&format!("agent_skills!(\"{}\")", dir.0.display())),
        "{error}"
    );
}

/// More than 64 MiB is refused, naming the largest files (sparse, so nothing is written).
#[test]
fn more_than_the_bound_is_refused() {
    let dir = TempDir::new("large");
    let folder = write_skill(&dir.0, "heavy");
    std::fs::create_dir_all(folder.join("assets")).unwrap();
    let big = std::fs::File::create(folder.join("assets/big.bin")).unwrap();
    big.set_len(MAX_EMBEDDED_BYTES).unwrap();
    std::fs::write(folder.join("assets/small.txt"), "x").unwrap();
    let cx = Ctxt::new();
    let skills = gather(
        &cx,
        &literal(dir.0.to_str().unwrap()),
        &base_in("Cargo.toml"),
    );
    let error = cx.check().unwrap_err().to_string();
    assert_eq!(skills.len(), 1);
    assert!(
        error.contains("`heavy/assets/big.bin` (64.0 MiB)"),
        "{error}"
    );
    assert!(error.contains("`heavy/SKILL.md`"), "{error}");
}
