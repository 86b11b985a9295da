//! `find`, `load` and `files` on temporary folders.

use agent_skills_spec::{MAX_DEPTH, MAX_FILES, Rule, SKILL_FILE, files, find, load};
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

fn write(path: &Path, text: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn skill_text(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n")
}

#[test]
fn find_loads_good_skills_and_reports_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("good-skill/SKILL.md"), skill_text("good-skill"));
    write(&root.join("good-skill/scripts/run.py"), "print(1)\n");
    write(&root.join("bad-skill/SKILL.md"), skill_text("other-name"));
    write(&root.join("no-skill/README.md"), "not a skill\n");
    write(&root.join(".hidden/SKILL.md"), skill_text(".hidden"));
    write(&root.join("loose-file.md"), skill_text("loose-file"));

    let (found, invalid) = find(root).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].folder, root.join("good-skill"));
    assert_eq!(found[0].manifest.name, "good-skill");
    assert_eq!(found[0].text, skill_text("good-skill"));
    assert_eq!(found[0].body(), "# good-skill\n");

    assert_eq!(invalid.len(), 1, "{invalid:#?}");
    let file = root.join("bad-skill").join(SKILL_FILE);
    assert_eq!(invalid[0].file, file);
    assert_eq!(invalid[0].violations.len(), 1);
    assert_eq!(invalid[0].violations[0].rule, Rule::NameMatchesFolder);
    let shown = invalid[0].to_string();
    assert_eq!(
        shown,
        format!(
            "{}:2: {} (rule `name-matches-folder`)",
            file.display(),
            invalid[0].violations[0].message
        )
    );
    let _: &dyn std::error::Error = &invalid[0];
}

#[test]
fn find_sorts_by_folder_name_and_keeps_going_after_failures() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["zeta", "alpha", "mid"] {
        write(&root.join(name).join(SKILL_FILE), skill_text(name));
    }
    write(
        &root.join("broken/SKILL.md"),
        b"---\nname: broken\ndescription: \xff\n---\n",
    );
    write(&root.join("two-wrongs/SKILL.md"), "---\nname: Two\n---\n");
    let (found, invalid) = find(root).unwrap();
    let names: Vec<&str> = found.iter().map(|f| f.manifest.name.as_str()).collect();
    assert_eq!(names, ["alpha", "mid", "zeta"]);
    assert_eq!(invalid.len(), 2);
    assert_eq!(invalid[0].file, root.join("broken/SKILL.md"));
    assert_eq!(
        (invalid[0].violations[0].rule, invalid[0].violations[0].line),
        (Rule::FileUnreadable, 3)
    );
    assert!(invalid[0].violations[0].message.contains("UTF-8"));
    assert_eq!(invalid[1].violations.len(), 3, "{:#?}", invalid[1]);
    assert_eq!(invalid[1].to_string().lines().count(), 3);
}

#[test]
fn find_fails_only_when_the_directory_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let err = find(&dir.path().join("missing")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(find(dir.path()).unwrap().0.len(), 0);
}

#[test]
fn a_two_mib_skill_file_is_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("huge");
    let text = skill_text("huge") + &"x".repeat(2 * 1024 * 1024);
    write(&folder.join(SKILL_FILE), text);
    let bad = load(&folder).unwrap_err();
    assert_eq!(bad.violations.len(), 1);
    let v = &bad.violations[0];
    assert_eq!((v.rule, v.line), (Rule::FileUnreadable, 1));
    assert!(v.message.contains("1048576"), "{}", v.message);
    let (found, invalid) = find(dir.path()).unwrap();
    assert_eq!((found.len(), invalid.len()), (0, 1));
}

#[test]
fn a_skill_file_that_is_a_folder_is_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("odd/SKILL.md")).unwrap();
    let (found, invalid) = find(dir.path()).unwrap();
    assert_eq!((found.len(), invalid.len()), (0, 1));
    assert_eq!(invalid[0].violations[0].rule, Rule::FileUnreadable);
}

#[test]
fn files_lists_everything_but_the_top_skill_file_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    write(&s.join(SKILL_FILE), skill_text("s"));
    write(&s.join("scripts/b.py"), "");
    write(&s.join("scripts/a.py"), "");
    write(&s.join("references/deep/er/doc.md"), "");
    write(
        &s.join("references/SKILL.md"),
        "nested skill files are listed",
    );
    write(&s.join(".hidden"), "");
    fs::create_dir_all(s.join("empty")).unwrap();
    assert_eq!(
        files(s).unwrap(),
        [
            ".hidden",
            "references/SKILL.md",
            "references/deep/er/doc.md",
            "scripts/a.py",
            "scripts/b.py"
        ]
    );
}

#[cfg(unix)]
#[test]
fn files_does_not_follow_or_list_symbolic_links() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.txt"), "secret");
    let s = dir.path();
    write(&s.join("real.txt"), "");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), s.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.join("linked-dir")).unwrap();
    std::os::unix::fs::symlink(s, s.join("loop")).unwrap();
    assert_eq!(files(s).unwrap(), ["real.txt"]);
}

#[test]
fn files_refuses_more_than_max_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    write(&s.join(SKILL_FILE), "");
    for i in 0..MAX_FILES {
        write(&s.join(format!("d{}/f{i}", i % 7)), "");
    }
    assert_eq!(files(s).unwrap().len(), MAX_FILES);
    write(&s.join("one-more"), "");
    let err = files(s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(err.to_string().contains(&MAX_FILES.to_string()), "{err}");
}

#[test]
fn files_refuses_nesting_deeper_than_max_depth() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let deepest = (0..MAX_DEPTH).fold(s.to_path_buf(), |p, i| p.join(format!("l{i}")));
    write(&deepest.join("f"), "");
    assert_eq!(files(s).unwrap().len(), 1);
    fs::create_dir(deepest.join("too-deep")).unwrap();
    let err = files(s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(err.to_string().contains(&MAX_DEPTH.to_string()), "{err}");
}
