//! A remote server's resources, resource templates and prompts, read by the application and (the
//! resources, when asked for) by the model; the lists the server says changed are read again.

use agent_core::{Registry, SkillContext, ToolCall};
use agent_llm::Role;
use agent_mcp::client::{ListChanges, MAX_LISTED, MAX_RESOURCE_BYTES};
use agent_mcp::{McpError, McpSkills};
use rmcp::model::ResourceContents;
use serde_json::{Map, Value, json};

use super::{only_result, registry_of, runtime_calling, server};

fn text_of(contents: &[ResourceContents]) -> Vec<&str> {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.as_str(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn the_application_reads_resources_templates_and_prompts() {
    let skills = server().await;
    let mut uris: Vec<String> = skills
        .resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    uris.sort();
    assert_eq!(uris, ["notes://big", "notes://index"]);
    let templates = skills.resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].uri_template, "notes://note/{name}");

    let index = skills.read_resource("notes://index").await.unwrap();
    assert_eq!(text_of(&index.contents), ["welcome"]);
    let note = skills.read_resource("notes://note/welcome").await.unwrap();
    assert_eq!(text_of(&note.contents), ["Welcome to the notes."]);
    let missing = skills
        .read_resource("notes://nothing/here")
        .await
        .unwrap_err();
    assert!(
        matches!(
            missing,
            McpError::Service {
                action: "read the resource",
                ..
            }
        ),
        "{missing}"
    );

    let prompts = skills.prompts().await.unwrap();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert_eq!(prompts[0].name, "review");
    let arguments = prompts[0].arguments.clone().unwrap();
    let required: Vec<_> = arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required == Some(true)))
        .collect();
    assert_eq!(required, [("code", true), ("language", false)]);

    let messages = skills
        .get_prompt(
            "review",
            args(json!({"code": "print(1)", "language": "rust"})),
        )
        .await
        .unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].role, Role::User);
    assert_eq!(
        messages[0].content,
        "Please review this rust code:\nprint(1)"
    );
    let refused = skills.get_prompt("review", Map::new()).await.unwrap_err();
    assert!(
        matches!(
            refused,
            McpError::Service {
                action: "get the prompt",
                ..
            }
        ),
        "{refused}"
    );
}

#[tokio::test]
async fn the_model_reads_resources_only_through_the_opt_in_skill_and_never_more_than_the_cap() {
    let plain = server().await;
    assert!(!plain.names().iter().any(|n| n.contains("read_resource")));

    let skills = server().await.with_resource_skill().await.unwrap();
    let skills = skills.with_prefix("notes_");
    assert!(skills.names().contains(&"notes_read_resource".to_owned()));
    let mut registry = Registry::new();
    skills.add_to(&mut registry).unwrap();
    let definition = registry
        .definitions()
        .into_iter()
        .find(|d| d.name == "notes_read_resource")
        .unwrap();
    for listed in ["notes://index", "notes://big", "notes://note/{name}"] {
        assert!(
            definition.description.contains(listed),
            "{}",
            definition.description
        );
    }
    let metadata = registry.metadata("notes_read_resource").unwrap();
    assert!(metadata.is_read_only && !metadata.is_destructive);

    let read = |uri: &str| ToolCall::new("r1", "notes_read_resource", json!({ "uri": uri }));
    let done = runtime_calling(&skills, vec![read("notes://note/welcome")])
        .run("What does the welcome note say?")
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        ("Welcome to the notes.".to_owned(), false)
    );

    // 50,000 two-byte characters and "THE END": over the cap, cut at a character's boundary
    // (by the skill itself, whatever a runtime cuts later).
    let big = registry
        .run_one(&read("notes://big"), &SkillContext::default())
        .await;
    assert!(!big.is_error());
    let text = big.content();
    assert!(!text.contains("THE END"));
    let (shown, note) = text.split_once("\n[cut: ").expect("says it was cut");
    assert!(shown.len() <= MAX_RESOURCE_BYTES);
    assert!(shown.len() > MAX_RESOURCE_BYTES - 2);
    assert!(shown.chars().all(|c| c == 'é'));
    assert_eq!(
        note,
        format!(
            "the resource has 100007 bytes; the first {} are shown]",
            shown.len()
        )
    );

    // What the model reads in a run (the registry's own cut of 16,000 applies there): the
    // skill's note, whole.
    let done = runtime_calling(&skills, vec![read("notes://big")])
        .run("Read the big note.")
        .await
        .unwrap();
    let (text, _) = only_result(&done);
    assert!(
        text.ends_with("[cut: the resource has 100007 bytes; the first 15000 are shown]"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );

    let done = runtime_calling(&skills, vec![read("notes://nothing/here")])
        .run("Read a note that does not exist.")
        .await
        .unwrap();
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(text.contains("refused the call"), "{text}");
}

/// Waits until the server's notifications have been handled (they come before the call's result
/// and are handled on their own tasks).
async fn changes_once_seen(skills: &McpSkills, want: ListChanges) -> ListChanges {
    for _ in 0..500 {
        if skills.changes() == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    skills.changes()
}

#[tokio::test]
async fn lists_the_server_says_changed_are_read_again_and_new_tools_offered_from_then_on() {
    let mut skills = server().await;
    assert_eq!(skills.changes(), ListChanges::default());
    let registry_before = registry_of(&skills);
    let before = runtime_calling(
        &skills,
        vec![ToolCall::new(
            "a1",
            "add_note",
            json!({"name": "groceries", "text": "milk"}),
        )],
    );
    let done = before.run("Note that we need milk.").await.unwrap();
    assert_eq!(
        only_result(&done),
        (json!({"result": "added groceries"}).to_string(), false)
    );
    let all = ListChanges {
        tools: true,
        resources: true,
        prompts: true,
    };
    assert_eq!(changes_once_seen(&skills, all).await, all);

    let uris: Vec<String> = skills
        .resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert!(
        uris.contains(&"notes://fixed/groceries".to_owned()),
        "{uris:?}"
    );
    let prompts: Vec<String> = skills
        .prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(
        prompts.contains(&"about_groceries".to_owned()),
        "{prompts:?}"
    );
    let messages = skills
        .get_prompt("about_groceries", Map::new())
        .await
        .unwrap();
    assert_eq!(
        messages[0].content,
        "Tell me about the note groceries: milk"
    );
    assert_eq!(
        skills.changes(),
        ListChanges {
            tools: true,
            ..ListChanges::default()
        }
    );

    // The names read when connecting do not have the new tool; read again, they do.
    assert!(!skills.names().contains(&"read_groceries".to_owned()));
    assert_eq!(skills.refresh_tools().await.unwrap(), ["read_groceries"]);
    assert_eq!(skills.changes(), ListChanges::default());
    let after = runtime_calling(
        &skills,
        vec![ToolCall::new("g1", "read_groceries", json!({}))],
    );
    let done = after.run("What is on the grocery note?").await.unwrap();
    assert_eq!(
        only_result(&done),
        (
            json!({"result": "the note groceries says: milk"}).to_string(),
            false
        )
    );
    // A registry built before has it too: its set follows the server (see `live.rs`).
    let definitions: Vec<String> = registry_before
        .definitions()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert!(
        definitions.contains(&"read_groceries".to_owned()),
        "{definitions:?}"
    );
}

#[tokio::test]
async fn a_list_longer_than_the_limit_is_read_to_the_limit() {
    let skills = server().await;
    let registry = registry_of(&skills);
    let added = registry
        .run_one(
            &ToolCall::new("m1", "add_many", json!({"count": MAX_LISTED + 100})),
            &SkillContext::default(),
        )
        .await;
    assert!(!added.is_error(), "{}", added.content());
    let resources = skills.resources().await.unwrap();
    assert_eq!(resources.len(), MAX_LISTED);
}
