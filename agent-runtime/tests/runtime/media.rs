//! Media through a run: an image attached to the goal and one a skill returns reach every model
//! call as the same shared bytes (held once, never copied per turn), survive a pause as JSON,
//! are refused in a state that claims a format older than media, and are the first thing
//! compaction drops when the transcript is over its limit, saying so.

use std::sync::{Arc, Mutex};

use agent_core::content::{Media, Part, tiny_png};
use agent_core::{PermissionGate, Registry, SkillContext, SkillError, ToolCall, skill};
use agent_llm::{Message, MockProvider, MockReply};
use agent_runtime::{AgentEvent, AgentRuntime, Decision, FinishReason, RunState, TranscriptLimit};
use bytes::Bytes;
use serde_json::json;

/// Takes a screenshot (the test's PNG).
///
/// # Arguments
/// * `n` - Which screen.
#[skill(read_only, register = false)]
async fn screenshot(_ctx: &SkillContext, n: u32) -> Result<Media, SkillError> {
    let _ = n;
    Ok(Media::new("image/png", tiny_png()).named("screen.png"))
}

/// Deletes a file.
///
/// # Arguments
/// * `path` - The file.
#[skill(destructive, register = false)]
async fn delete(path: String) -> Result<String, SkillError> {
    Ok(format!("deleted {path}"))
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add(ScreenshotSkill).add(DeleteSkill);
    registry.with_hook(PermissionGate::with(|_, m| {
        if m.is_destructive {
            agent_core::Permission::Ask("deletes".into())
        } else {
            agent_core::Permission::Allow
        }
    }));
    registry
}

/// The pointers of the media bytes a message holds.
fn pointers(message: &Message) -> Vec<*const u8> {
    message
        .media()
        .map(|m| m.bytes().unwrap().as_ptr())
        .collect()
}

#[tokio::test]
async fn the_goals_image_is_held_once_across_turns_and_a_skills_image_reaches_the_model() {
    let photo = Bytes::from(tiny_png().to_vec()); // its own buffer, to follow by address
    let replies = (0..5)
        .map(|i| {
            MockReply::tool_calls([ToolCall::new(
                format!("s{i}"),
                "screenshot",
                json!({"n": i}),
            )])
        })
        .chain([MockReply::text("Five screenshots, all red dots.")]);
    let mock = MockProvider::new(replies);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .run("Compare the screen with this photo.")
        .attach(Media::new("image/png", photo.clone()).named("photo.png"))
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    for request in &requests {
        // Every turn sends the goal's image: the very buffer attached, not a copy.
        assert_eq!(pointers(&request.messages[0]), vec![photo.as_ptr()]);
    }
    // Each screenshot is a tool result with its image as a part, the skill's own bytes.
    let last = requests.last().unwrap();
    let results: Vec<&Message> = last
        .messages
        .iter()
        .filter(|m| m.tool_call_id.is_some())
        .collect();
    assert_eq!(results.len(), 5);
    for result in results {
        assert_eq!(pointers(result), vec![tiny_png().as_ptr()]);
        assert_eq!(
            result.media().next().unwrap().name.as_deref(),
            Some("screen.png")
        );
    }
}

#[tokio::test]
async fn a_paused_run_keeps_its_media_as_json_and_continues_with_the_same_bytes() {
    let mock = MockProvider::new([
        MockReply::tool_calls([
            ToolCall::new("s1", "screenshot", json!({"n": 1})),
            ToolCall::new("d1", "delete", json!({"path": "old.png"})),
        ]),
        MockReply::text("Deleted, and here is what the screen showed."),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry());
    let paused = runtime
        .run("Clean up.")
        .attach(Media::new("image/png", tiny_png()))
        .await
        .unwrap();
    assert!(matches!(
        paused.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    let saved = serde_json::to_string(&paused.state.unwrap()).unwrap();
    assert!(saved.contains("\"version\":5"), "{saved:.200}");
    // The screenshot ran before the pause: its image is kept with its result.
    assert!(saved.contains("\"kind\":\"content\""), "{saved:.2000}");
    let state: RunState = serde_json::from_str(&saved).unwrap();
    let done = runtime
        .continue_paused(state, [("d1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let after = mock.requests().pop().unwrap();
    let media: Vec<&[u8]> = after
        .messages
        .iter()
        .flat_map(|m| m.media())
        .map(|m| &m.bytes().unwrap()[..])
        .collect();
    assert_eq!(
        media,
        vec![&tiny_png()[..], &tiny_png()[..]],
        "goal and screenshot"
    );

    // A state that says it is version 4 cannot hold media: refused, not misread.
    let mut value: serde_json::Value = serde_json::from_str(&saved).unwrap();
    value["version"] = json!(4);
    value.as_object_mut().unwrap().remove("seal");
    let old: RunState = serde_json::from_value(value).unwrap();
    let refused = runtime
        .continue_paused(old, [("d1", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("media parts"), "{refused}");
}

#[tokio::test]
async fn compaction_drops_old_media_first_and_says_so() {
    let replies = (0..4)
        .map(|i| {
            MockReply::tool_calls([ToolCall::new(
                format!("s{i}"),
                "screenshot",
                json!({"n": i}),
            )])
        })
        .chain([MockReply::text("Done.")]);
    let mock = MockProvider::new(replies);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |event: &AgentEvent| events.lock().unwrap().push(event.clone())
    };
    // Four images of 6,400 characters each are over 20,000; two are not.
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .transcript_limit(TranscriptLimit::Chars(20_000))
        .keep_recent(2)
        .event_sink(sink)
        .run("Watch the screen.")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let dropped: Vec<(usize, usize)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MediaDropped { parts, bytes, .. } => Some((*parts, *bytes)),
            _ => None,
        })
        .collect();
    assert!(!dropped.is_empty(), "media was dropped");
    assert_eq!(dropped[0].1, dropped[0].0 * tiny_png().len());
    assert!(
        !events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacted { .. })),
        "dropping media was enough: no summary was written"
    );
    // The older results say what they held; the newest keeps its image.
    let replaced = outcome
        .transcript
        .iter()
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p, Part::Text(t) if t.contains("removed to keep the conversation")))
        .count();
    assert!(replaced >= 1);
    assert_eq!(
        outcome
            .transcript
            .iter()
            .rev()
            .find_map(|m| m.media().next())
            .map(|m| m.len()),
        Some(tiny_png().len())
    );
}

/// A handoff carries the goal's image to the agent handed to; an agent used as a skill answers
/// with the image its model made, and its parent's model sees it.
#[tokio::test]
async fn media_crosses_handoffs_and_comes_back_from_agents_used_as_skills() {
    // A handoff: billing's model is sent the image the user attached for triage.
    let triage_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "t1",
        "transfer_to_billing",
        json!({}),
    )])]);
    let billing_model = MockProvider::new([MockReply::text("That receipt is paid.")]);
    let billing = AgentRuntime::new(billing_model.clone(), Registry::new());
    let runtime =
        AgentRuntime::new(triage_model, Registry::new()).handoff("billing", "Receipts.", billing);
    let receipt = Bytes::from(tiny_png().to_vec());
    let done = runtime
        .run("Is this receipt paid?")
        .attach(Media::new("image/png", receipt.clone()))
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("That receipt is paid."));
    let seen = &billing_model.requests()[0].messages[0];
    assert_eq!(pointers(seen), vec![receipt.as_ptr()]);

    // An agent used as a skill: its model's image comes back as part of the call's result.
    let mut drawn = Message::assistant("Here is the chart.");
    drawn
        .parts
        .push(Part::Media(Media::new("image/png", tiny_png())));
    let artist_model = MockProvider::new([MockReply::Response(agent_llm::ChatResponse {
        message: drawn,
        stop_reason: agent_llm::StopReason::EndTurn,
        provider_stop_reason: None,
        usage: agent_llm::Usage::default(),
        truncated_tool_calls: Vec::new(),
        model: None,
        id: None,
        provider: None,
    })]);
    let artist = AgentRuntime::new(artist_model, Registry::new());
    let mut registry = Registry::new();
    registry.add(artist.into_skill("artist", "Draws charts."));
    let parent_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("a1", "artist", json!({"goal": "draw"}))]),
        MockReply::text("Done."),
    ]);
    AgentRuntime::new(parent_model.clone(), registry)
        .run("Get me a chart.")
        .await
        .unwrap();
    let result = parent_model.requests()[1]
        .messages
        .iter()
        .find(|m| m.tool_call_id.is_some())
        .cloned()
        .unwrap();
    assert_eq!(result.content, "Here is the chart.");
    assert_eq!(pointers(&result), vec![tiny_png().as_ptr()]);
}
