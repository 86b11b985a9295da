//! Files both ways, against the official Python SDK (`a2a-sdk` 1.3.0): a PNG a Python client
//! sends as a file part reaches our model with the same bytes (and a URL part as a URL); a PNG a
//! Python agent answers with reaches our side as media; a chart our run's skill drew reaches a
//! Python client as a file part of the answer. Bad files (invalid base64, over the
//! limit, of another type than they say, a URL to a loopback address) are refused with an error
//! that says so, and nothing reaches the model.

mod common;

use agent_a2a::types::{Message, Part, Role};
use agent_a2a::{A2aError, A2aServer, RemoteAgent};
use agent_core::content::{Media, MediaLimits, MediaSource};
use agent_core::{DynSkill, Registry, SkillContext, SkillError, SkillOutput, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};

use common::{TOKEN, python_echo_agent, run_python, serve};

/// A server whose model (returned, to read its requests) answers `Seen.`.
fn server_with(limits: MediaLimits) -> (A2aServer, MockProvider) {
    let model = MockProvider::new([MockReply::text("Seen.")]);
    let runtime = AgentRuntime::new(model.clone(), Registry::new());
    let server = A2aServer::new(runtime)
        .name("viewer")
        .bearer_token(TOKEN)
        .media_limits(limits);
    (server, model)
}

fn bytes_of_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

async fn media_client(url: &str, scenario: &str) -> Value {
    run_python("a2a_media_client.py", &[url, TOKEN, scenario]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_clients_file_parts_reach_the_model_with_the_same_bytes() {
    let (server, model) = server_with(MediaLimits::default());
    let served = serve(server).await;
    let seen = media_client(&served.url, "send").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(seen["state"], "TASK_STATE_COMPLETED", "{seen}");
    assert_eq!(seen["text"], "Seen.");

    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let goal = requests[0].messages.last().unwrap();
    assert_eq!(goal.content, "What is in this picture?");
    let media: Vec<&Media> = goal.media().collect();
    assert_eq!(media.len(), 2, "{goal:?}");
    let png = bytes_of_hex(seen["hex"].as_str().unwrap());
    assert_eq!(&*media[0].media_type, "image/png");
    assert_eq!(media[0].name.as_deref(), Some("chart.png"));
    assert_eq!(media[0].bytes().unwrap().as_ref(), png.as_slice());
    assert_eq!(
        media[0].check(&MediaLimits::default()).unwrap().dimensions,
        Some((3, 2))
    );
    assert_eq!(&*media[1].media_type, "image/jpeg");
    assert_eq!(
        media[1].source,
        MediaSource::Url("https://example.com/photo.jpg".into())
    );
}

/// Sends a message with `file` after a text part; returns the error the server answered.
async fn refused(file: Part, limits: MediaLimits) -> (String, MockProvider) {
    let (server, model) = server_with(limits);
    let served = serve(server).await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let message = Message::new(Role::User, vec![Part::text("Look at this."), file]);
    match agent.ask_message(message).await {
        Err(A2aError::Rpc { message, .. }) => (message, model),
        other => panic!("the message was not refused: {other:?}"),
    }
}

fn file(raw: Option<&str>, url: Option<&str>, media_type: &str) -> Part {
    Part {
        raw: raw.map(str::to_owned),
        url: url.map(str::to_owned),
        media_type: media_type.to_owned(),
        filename: "x".to_owned(),
        ..Part::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_are_refused_saying_why_and_the_model_sees_nothing() {
    let png =
        agent_a2a::media::part_of_media(&Media::new("image/png", agent_core::content::tiny_png()));
    let cases = [
        (
            file(Some("not base64!!"), None, "image/png"),
            MediaLimits::default(),
            "base64 is not valid",
        ),
        (
            png.clone(),
            MediaLimits {
                max_part_bytes: 16,
                ..MediaLimits::default()
            },
            "is larger than the limit of 16 bytes",
        ),
        (
            Part {
                media_type: "image/jpeg".into(),
                ..png
            },
            MediaLimits::default(),
            "the bytes are image/png, not image/jpeg",
        ),
        (
            file(None, Some("http://127.0.0.1:8080/secret.png"), "image/png"),
            MediaLimits::default(),
            "loopback",
        ),
        (
            file(
                Some("iVBORw=="),
                Some("https://example.com/a.png"),
                "image/png",
            ),
            MediaLimits::default(),
            "both `raw` and `url`",
        ),
    ];
    for (part, limits, why) in cases {
        let (error, model) = refused(part, limits).await;
        assert!(
            error.contains("a file part of the message was refused"),
            "{error}"
        );
        assert!(error.contains(why), "{why}: {error}");
        assert!(model.requests().is_empty(), "{why}: the model was asked");
    }
}

/// A message that continues a task carries decisions: a file in it is refused, not dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_in_a_message_that_continues_a_task_is_refused_not_dropped() {
    let (server, model) = server_with(MediaLimits::default());
    let served = serve(server).await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let png =
        agent_a2a::media::part_of_media(&Media::new("image/png", agent_core::content::tiny_png()));
    let mut message = Message::new(Role::User, vec![Part::text("Approve, and see this."), png]);
    message.task_id = "task-1".to_owned();
    let Err(A2aError::Rpc { message, .. }) = agent.ask_message(message).await else {
        panic!("the message was not refused")
    };
    assert!(message.contains("carries its decisions only"), "{message}");
    assert!(model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_agents_file_part_reaches_our_side_as_media() {
    let (_child, url) = python_echo_agent().await;
    let skill = RemoteAgent::connect(&url, None).await.unwrap().into_skill();
    let ctx = SkillContext::new(".");
    let output = skill
        .start(&json!({"message": "picture"}), &ctx)
        .unwrap()
        .await
        .unwrap();
    let SkillOutput::Content(content) = output else {
        panic!("the answer has media: {output:?}")
    };
    let text = content.text_only().into_owned();
    let hex = text.split("hex=").nth(1).expect("the hex is in the text");
    let media: Vec<&Media> = content.media().collect();
    assert_eq!(media.len(), 1, "{content:?}");
    assert_eq!(&*media[0].media_type, "image/png");
    assert_eq!(media[0].name.as_deref(), Some("picture.png"));
    assert_eq!(
        media[0].bytes().unwrap().as_ref(),
        bytes_of_hex(hex).as_slice()
    );

    // With a limit under the picture's size, the answer is refused, saying why.
    let small = RemoteAgent::connect(&url, None)
        .await
        .unwrap()
        .into_skill()
        .media_limits(MediaLimits {
            max_part_bytes: 10,
            ..MediaLimits::default()
        });
    let error = small
        .start(&json!({"message": "picture"}), &ctx)
        .unwrap()
        .await
        .unwrap_err();
    let error = error.to_string();
    assert!(error.contains("was refused"), "{error}");
    assert!(
        error.contains("larger than the limit of 10 bytes"),
        "{error}"
    );
}

/// Draws the chart (the tiny PNG).
#[skill(read_only, register = false)]
async fn draw() -> Result<Media, SkillError> {
    Ok(Media::new("image/png", agent_core::content::tiny_png()).named("chart.png"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chart_the_run_drew_reaches_a_python_client_as_a_file_part() {
    let model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("d1", "draw", json!({}))]),
        MockReply::text("Here is the chart."),
    ]);
    let mut registry = Registry::new();
    registry.add(DrawSkill);
    let server = A2aServer::new(AgentRuntime::new(model, registry)).bearer_token(TOKEN);
    let served = serve(server).await;
    let seen = media_client(&served.url, "receive").await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(seen["state"], "TASK_STATE_COMPLETED", "{seen}");
    let png: String = agent_core::content::tiny_png()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        seen["parts"],
        json!([
            {"text": "Here is the chart."},
            {"raw": png, "media_type": "image/png", "filename": "chart.png"}
        ]),
        "{seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn between_two_eugene_agents_a_drawn_chart_arrives_as_media() {
    let model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("d1", "draw", json!({}))]),
        MockReply::text("Here is the chart."),
    ]);
    let mut registry = Registry::new();
    registry.add(DrawSkill);
    let server = A2aServer::new(AgentRuntime::new(model, registry))
        .name("painter")
        .bearer_token(TOKEN);
    let served = serve(server).await;
    let skill = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap()
        .into_skill();
    let output = skill
        .start(
            &json!({"message": "Draw the chart."}),
            &SkillContext::new("."),
        )
        .unwrap()
        .await
        .unwrap();
    let SkillOutput::Content(content) = output else {
        panic!("the answer has media: {output:?}")
    };
    assert_eq!(content.text_only(), "Here is the chart.");
    let media: Vec<&Media> = content.media().collect();
    assert_eq!(
        media,
        [&Media::new("image/png", agent_core::content::tiny_png()).named("chart.png")]
    );
}
