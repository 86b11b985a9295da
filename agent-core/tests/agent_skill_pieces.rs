//! `load_skill` hands over instructions and files longer than the registry's output budget in
//! pieces of whole lines: each within the budget, saying where to continue, and put together the
//! text byte for byte. Bad windows (offset 0 or past the end, limit 0) are errors that say what
//! to give; the budget set after the skills were added is the one the pieces fit in.

use std::path::Path;
use std::sync::Arc;

use agent_core::{AgentSkill, AgentSkillFiles, Registry, SkillContext, SkillError, ToolCall};
use serde_json::{Value, json};

/// One file kept in memory.
struct OneFile(&'static str, String, Vec<String>);

impl AgentSkillFiles for OneFile {
    fn folder(&self) -> Option<&Path> {
        None
    }
    fn list(&self) -> &[String] {
        &self.2
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, SkillError> {
        if path == self.0 {
            Ok(self.1.clone().into_bytes())
        } else {
            Err(SkillError::bad_args(
                "file",
                format!("`{path}` is not a file of it"),
            ))
        }
    }
}

/// 600 numbered lines, with CRLF endings in places, non-ASCII text, and no final newline.
fn long_text() -> String {
    let mut text = String::new();
    for i in 1..=600 {
        let ending = if i % 7 == 0 { "\r\n" } else { "\n" };
        text.push_str(&format!(
            "line {i}: déjà vu, {}{ending}",
            "x".repeat(i % 40)
        ));
    }
    text.push_str("the last line, without a newline");
    text
}

fn skill() -> AgentSkill {
    let text = long_text();
    AgentSkill::new(
        "long",
        "A skill with long texts.",
        format!("\n\n# Long\n\n{text}"),
    )
    .with_files(Arc::new(OneFile(
        "references/long.md",
        text,
        vec!["references/long.md".into()],
    )))
}

async fn call(registry: &Registry, args: Value) -> (bool, String) {
    let result = registry
        .run_one(
            &ToolCall::new("1", "load_skill", args),
            &SkillContext::default(),
        )
        .await;
    (result.is_error(), result.content().to_string())
}

/// The text of a piece without its notice, and the offset the notice says to continue from.
fn split(piece: &str) -> (&str, Option<usize>) {
    let Some(at) = piece.rfind("\n\n[line") else {
        return (piece, None);
    };
    let next = piece[at..]
        .split("offset=")
        .nth(1)
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap());
    (&piece[..at], next)
}

/// Every piece of `args` (with `offset` set on each call), each checked against `budget`.
async fn read_whole(registry: &Registry, args: Value, budget: usize) -> (String, usize) {
    let mut whole = String::new();
    let mut offset = 1;
    let mut pieces = 0;
    loop {
        let mut args = args.clone();
        args["offset"] = json!(offset);
        let (error, piece) = call(registry, args).await;
        assert!(!error, "{piece}");
        assert!(
            piece.chars().count() <= budget,
            "a piece over the budget: {piece}"
        );
        assert!(!piece.contains("[output truncated"), "{piece}");
        pieces += 1;
        let (text, next) = split(&piece);
        whole.push_str(text);
        match next {
            Some(next) => offset = next,
            None => return (whole, pieces),
        }
    }
}

#[tokio::test]
async fn a_file_and_instructions_over_the_budget_read_whole_in_pieces() {
    let text = long_text();
    let budget = 2_000;
    for budget_first in [true, false] {
        let mut registry = Registry::new();
        if budget_first {
            registry.with_output_budget(budget);
        }
        registry.add_agent_skills([skill()]).unwrap();
        if !budget_first {
            registry.with_output_budget(budget);
        }

        let args = json!({"name": "long", "file": "references/long.md"});
        let (whole, pieces) = read_whole(&registry, args, budget).await;
        assert_eq!(whole, text);
        assert!(pieces >= text.chars().count() / budget, "{pieces} pieces");

        let (whole, _) = read_whole(&registry, json!({"name": "long"}), budget).await;
        let header = "Skill `long` (compiled into this program: its files can be read, not run)";
        assert!(whole.starts_with(header), "{whole}");
        assert!(whole.ends_with(&format!("\n\n# Long\n\n{text}")));
    }
}

#[tokio::test]
async fn a_piece_says_which_lines_it_holds_and_the_last_says_it_is_the_end() {
    let mut registry = Registry::new();
    registry.add_agent_skills([skill()]).unwrap();
    let file = |offset: usize, limit: usize| json!({"name": "long", "file": "references/long.md", "offset": offset, "limit": limit});
    let (error, piece) = call(&registry, file(1, 2)).await;
    assert!(!error);
    assert_eq!(
        piece,
        "line 1: déjà vu, x\nline 2: déjà vu, xx\n\n\n[lines 1-2 of 601; call again with offset=3 for more]"
    );
    let (_, piece) = call(&registry, file(7, 1)).await;
    assert!(
        piece.starts_with("line 7: déjà vu, xxxxxxx\r\n\n\n[lines 7-7 of 601;"),
        "{piece}"
    );
    let (_, piece) = call(&registry, file(600, 10)).await;
    assert!(
        piece.ends_with("the last line, without a newline\n\n[lines 600-601 of 601: the end]"),
        "{piece}"
    );
    // Cut by the budget rather than by `limit`: the notice says so.
    let (_, piece) = call(
        &registry,
        json!({"name": "long", "file": "references/long.md"}),
    )
    .await;
    let notice = &piece[piece.rfind("\n\n[").unwrap() + 2..];
    assert!(
        notice.contains(
            "of 601, as many as fit in the output budget of 16000 characters; call again with offset="
        ),
        "{notice}"
    );
}

#[tokio::test]
async fn bad_windows_are_errors_that_say_what_to_give_and_short_texts_are_unchanged() {
    let mut registry = Registry::new();
    registry.add_agent_skills([skill()]).unwrap();
    let cases = [
        (json!({"offset": 0}), "numbered from 1"),
        (
            json!({"offset": 602}),
            "offset 602 is past the end: `references/long.md` has 601 lines; give an offset from 1 to 601",
        ),
        (json!({"limit": 0}), "must be at least 1"),
        (json!({"offset": -1}), "offset"),
    ];
    for (window, expected) in cases {
        let mut args = json!({"name": "long", "file": "references/long.md"});
        args.as_object_mut()
            .unwrap()
            .extend(window.as_object().unwrap().clone());
        let (error, text) = call(&registry, args).await;
        assert!(error, "{window}: {text}");
        assert!(text.contains(expected), "{window}: {text}");
    }
    let (error, text) = call(&registry, json!({"name": "long", "offset": 700})).await;
    assert!(error);
    assert!(
        text.contains("past the end: the instructions of `long` has 603 lines"),
        "{text}"
    );

    // A text that fits comes back as it always did, without a notice, whatever the window.
    let short = AgentSkill::new("short", "Short.", "One line.\nTwo lines.\n");
    registry.add_agent_skills([short]).unwrap();
    let (_, text) = call(&registry, json!({"name": "short"})).await;
    assert_eq!(text, "Skill `short`\n\nOne line.\nTwo lines.\n");
    let (_, text) = call(&registry, json!({"name": "short", "offset": 1, "limit": 5})).await;
    assert_eq!(text, "Skill `short`\n\nOne line.\nTwo lines.\n");
}

/// Say hello.
#[agent_core::skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

#[test]
fn a_new_budget_keeps_the_order_of_the_definitions() {
    let mut registry = Registry::new();
    registry.add_agent_skills([skill()]).unwrap();
    registry.add(HelloSkill);
    let before: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    registry.with_output_budget(500);
    let after: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
    assert_eq!(before, ["load_skill", "hello"]);
    assert_eq!(before, after);
    let schema = &registry.definitions()[0].input_schema;
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    for window in ["offset", "limit"] {
        assert_eq!(schema["properties"][window]["minimum"], 1, "{schema}");
    }
}
