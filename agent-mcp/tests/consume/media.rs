//! Media from a server written by others (`media_server.py`, on the official Python SDK): an
//! image, audio or embedded PDF a tool returns reaches the run's model as a media part with the
//! bytes the server made; an image in a sampling request reaches the sampling model the same way;
//! a PNG resource the `read_resource` skill reads too, and an image in a prompt. Invalid base64, bytes that are not what
//! their type says, and a part over the limit are refused with an error the model reads, and no
//! media reaches it.

use std::sync::Arc;

use agent_core::content::{Media, MediaLimits, Part};
use agent_core::{Registry, ToolCall};
use agent_llm::{LlmProvider, Message, MockProvider, MockReply, Role};
use agent_mcp::McpSkills;
use agent_mcp::client::{Sampling, SamplingRequest, SamplingVerdict};
use agent_runtime::AgentRuntime;
use serde_json::json;

use super::{python, registry_of};

const MEDIA_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/media_server.py"
);

async fn media_server() -> McpSkills {
    McpSkills::connect_stdio(python(), [MEDIA_SERVER])
        .await
        .expect("media_server.py starts and lists its tools")
}

/// Runs a model that calls `tool` (with `arguments`) and then answers; returns the tool result
/// as the model's second request carried it.
async fn result_the_model_saw(
    skills: &McpSkills,
    tool: &str,
    arguments: serde_json::Value,
) -> Message {
    let model = Arc::new(MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", tool, arguments)]),
        MockReply::text("Done."),
    ]));
    let registry: Registry = registry_of(skills);
    let runtime =
        AgentRuntime::from_shared(model.clone() as Arc<dyn LlmProvider>, Arc::new(registry));
    runtime.run("Go.").await.expect("the run ends");
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one call, one answer");
    requests[1]
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("the second request carries the tool's result")
        .clone()
}

/// The bytes a `hex=…` text names.
fn hex_in(text: &str) -> Vec<u8> {
    let hex = text.split("hex=").nth(1).expect("a hex= text").trim();
    let hex = hex.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn only_media(message: &Message) -> &Media {
    let media: Vec<&Media> = message.media().collect();
    assert_eq!(media.len(), 1, "{message:?}");
    media[0]
}

#[tokio::test]
async fn a_tools_image_reaches_the_model_as_the_bytes_the_server_made() {
    let skills = media_server().await;
    let seen = result_the_model_saw(&skills, "chart", json!({})).await;
    assert!(!seen.is_error, "{seen:?}");
    // In order: the text before the image is the message's text, then the image, then the text after.
    assert_eq!(seen.content, "Sales by month:");
    assert_eq!(seen.parts.len(), 2, "{:?}", seen.parts);
    let Part::Media(image) = &seen.parts[0] else {
        panic!("the image comes second: {:?}", seen.parts)
    };
    let Part::Text(after) = &seen.parts[1] else {
        panic!("the hex comes last: {:?}", seen.parts)
    };
    assert_eq!(&*image.media_type, "image/png");
    assert_eq!(image.bytes().unwrap().as_ref(), hex_in(after).as_slice());
    let info = image.check(&MediaLimits::default()).unwrap();
    assert_eq!(info.dimensions, Some((3, 2)));
}

#[tokio::test]
async fn audio_and_an_embedded_pdf_reach_the_model_as_media() {
    let skills = media_server().await;
    let audio = result_the_model_saw(&skills, "recording", json!({})).await;
    let wav = only_media(&audio);
    assert_eq!(&*wav.media_type, "audio/wav");
    assert!(wav.bytes().unwrap().starts_with(b"RIFF"));
    assert_eq!(wav.len(), 844);

    let invoice = result_the_model_saw(&skills, "invoice", json!({})).await;
    assert_eq!(invoice.content, "The invoice:");
    let pdf = only_media(&invoice);
    assert_eq!(&*pdf.media_type, "application/pdf");
    assert_eq!(pdf.name.as_deref(), Some("file:///invoices/42.pdf"));
    assert!(pdf.bytes().unwrap().starts_with(b"%PDF-1.4"));
}

#[tokio::test]
async fn a_blob_no_model_takes_is_described_not_refused() {
    let skills = media_server().await;
    let seen = result_the_model_saw(&skills, "archive", json!({})).await;
    assert!(!seen.is_error, "{seen:?}");
    assert!(seen.parts.is_empty(), "{:?}", seen.parts);
    assert!(
        seen.content
            .starts_with("The archive:\n[resource file:///a.zip: application/zip, "),
        "{}",
        seen.content
    );
}

#[tokio::test]
async fn an_image_of_a_type_no_model_takes_is_described_beside_one_that_is_sent() {
    let skills = media_server().await;
    let seen = result_the_model_saw(&skills, "sketch", json!({})).await;
    assert!(!seen.is_error, "{seen:?}");
    assert!(
        seen.content.starts_with("[image: image/svg+xml, "),
        "{}",
        seen.content
    );
    assert_eq!(&*only_media(&seen).media_type, "image/png");
}

#[tokio::test]
async fn invalid_base64_is_refused_and_nothing_of_the_result_reaches_the_model() {
    let skills = media_server().await;
    let seen = result_the_model_saw(&skills, "broken", json!({})).await;
    assert!(seen.is_error, "{seen:?}");
    assert!(seen.parts.is_empty(), "{:?}", seen.parts);
    assert!(
        seen.content.contains("base64 is not valid"),
        "{}",
        seen.content
    );
    assert!(
        !seen.content.contains("before"),
        "nothing partial: {}",
        seen.content
    );
}

#[tokio::test]
async fn bytes_that_are_not_their_declared_type_are_refused() {
    let skills = media_server().await;
    let seen = result_the_model_saw(&skills, "lying", json!({})).await;
    assert!(seen.is_error, "{seen:?}");
    assert!(seen.parts.is_empty());
    assert!(
        seen.content
            .contains("the bytes are application/pdf, not image/png"),
        "{}",
        seen.content
    );
}

#[tokio::test]
async fn a_part_over_the_limit_is_refused_by_its_base64_length() {
    let limits = MediaLimits {
        max_part_bytes: 1000,
        ..MediaLimits::default()
    };
    let skills = media_server().await.with_media_limits(limits);
    let seen = result_the_model_saw(&skills, "poster", json!({})).await;
    assert!(seen.is_error, "{seen:?}");
    assert!(seen.parts.is_empty());
    assert!(
        seen.content
            .contains("characters of base64 is larger than the limit of 1000 bytes"),
        "{}",
        seen.content
    );
    // Under the limit, the same server's chart passes.
    let chart = result_the_model_saw(&skills, "chart", json!({})).await;
    assert!(!chart.is_error, "{chart:?}");
}

#[tokio::test]
async fn an_image_in_a_sampling_request_reaches_the_sampling_model() {
    let sampler = Arc::new(MockProvider::new([MockReply::text("a gradient")]));
    let hook = |_: &str, request: &SamplingRequest| {
        // The hook sees the image as a part too.
        assert_eq!(request.messages[0].media().count(), 1);
        SamplingVerdict::Allow
    };
    let skills = media_server()
        .await
        .with_sampling(Sampling::new(sampler.clone(), hook));
    let seen = result_the_model_saw(&skills, "describe", json!({})).await;
    assert!(!seen.is_error, "{seen:?}");
    assert!(
        seen.content.contains("the model says: a gradient"),
        "{}",
        seen.content
    );

    let asked = sampler.requests();
    assert_eq!(asked.len(), 1);
    let message = &asked[0].messages[0];
    assert_eq!(message.content, "What is in this picture?");
    let image = only_media(message);
    assert_eq!(&*image.media_type, "image/png");
    assert_eq!(
        image.bytes().unwrap().as_ref(),
        hex_in(&seen.content).as_slice()
    );
    assert_eq!(
        image.check(&MediaLimits::default()).unwrap().dimensions,
        Some((4, 4))
    );
}

#[tokio::test]
async fn a_png_resource_read_by_the_model_is_a_media_part() {
    let skills = media_server()
        .await
        .with_resource_skill()
        .await
        .expect("the server lists its resources");
    let hex = skills.read_resource("media://logo.hex").await.unwrap();
    let hex = match &hex.contents[0] {
        agent_mcp::rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("the hex is text: {other:?}"),
    };
    let seen =
        result_the_model_saw(&skills, "read_resource", json!({"uri": "media://logo.png"})).await;
    assert!(!seen.is_error, "{seen:?}");
    let logo = only_media(&seen);
    assert_eq!(&*logo.media_type, "image/png");
    assert_eq!(logo.name.as_deref(), Some("media://logo.png"));
    assert_eq!(
        logo.bytes().unwrap().as_ref(),
        hex_in(&format!("hex={hex}")).as_slice()
    );
}

#[tokio::test]
async fn a_prompts_image_is_a_media_part_and_a_broken_one_an_error() {
    let skills = media_server().await;
    let messages = skills
        .get_prompt("picture_question", serde_json::Map::new())
        .await
        .expect("the prompt is read");
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].parts.is_empty());
    let image = only_media(&messages[1]);
    assert_eq!(messages[1].content, "");
    assert_eq!(&*image.media_type, "image/png");
    assert_eq!(
        image.bytes().unwrap().as_ref(),
        hex_in(&messages[0].content).as_slice()
    );

    let error = skills
        .get_prompt("broken_picture", serde_json::Map::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("the prompt `broken_picture`"), "{error}");
    assert!(error.contains("base64 is not valid"), "{error}");
}
