//! `read_file` on an image in a whole agent run: the model's choices are scripted
//! (`MockProvider`), the rest is real (the runtime, the registry, the file on disk). What the skill
//! read reaches the model's next request as a media part of the tool's result, beside a line
//! saying what it is; a decompression bomb reaches it as an error, with no media.

use agent_std_tools::ReadFileSkill;
use eugene::media::{Part, tiny_png};
use eugene::{AgentRuntime, MockProvider, MockReply, Registry, SkillContext, ToolCall};
use serde_json::json;

#[tokio::test]
async fn the_model_sees_the_image_read_file_read_and_not_a_bomb() {
    let workspace = tempfile::tempdir().unwrap();
    // Named as data: the type comes from the bytes.
    std::fs::write(workspace.path().join("chart.bin"), tiny_png()).unwrap();
    let mut bomb = tiny_png().to_vec();
    bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    std::fs::write(workspace.path().join("bomb.png"), bomb).unwrap();

    let model = MockProvider::new([
        MockReply::tool_calls([
            ToolCall::new("c1", "read_file", json!({"path": "chart.bin"})),
            ToolCall::new("c2", "read_file", json!({"path": "bomb.png"})),
        ]),
        MockReply::text("One pixel; the other file is refused."),
    ]);
    let mut registry = Registry::new();
    registry.add(ReadFileSkill);
    let runtime =
        AgentRuntime::new(model.clone(), registry).context(SkillContext::new(workspace.path()));
    runtime
        .run("What is in chart.bin and bomb.png?")
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let result = |id: &str| {
        requests[1]
            .messages
            .iter()
            .find(|m| m.tool_call_id.as_deref() == Some(id))
            .unwrap_or_else(|| panic!("no result for {id}"))
            .clone()
    };

    let chart = result("c1");
    assert!(!chart.is_error);
    assert_eq!(
        chart.content,
        "`chart.bin`: image/png, 1×1 pixels, 67 bytes"
    );
    let [Part::Media(media)] = chart.parts.as_slice() else {
        panic!("one media part: {:?}", chart.parts);
    };
    assert_eq!(&*media.media_type, "image/png");
    assert_eq!(media.bytes().unwrap().as_ref(), tiny_png().as_ref());

    let refused = result("c2");
    assert!(refused.is_error);
    assert!(refused.parts.is_empty(), "{:?}", refused.parts);
    assert!(
        refused
            .content
            .contains("100000×100000 pixels, over the limit"),
        "{}",
        refused.content
    );
}
