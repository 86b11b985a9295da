//! A person's message with media, as the official client sends it: AG-UI 1.0's `image`,
//! `audio` and `document` parts reach the model with the text, their bytes checked to be of the
//! type they say; a part eugene cannot send (a video, a provider's file handle, bytes of another
//! type than stated, no type for a URL, a URL to the server's own
//! loopback) refuses the request with `RUN_ERROR` `eugene.input`, and
//! the model is never asked.

mod support;

use agent_agui::AguiServer;
use agent_core::content::{MediaKind, MediaSource};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use base64::Engine as _;
use serde_json::{Value, json};
use support::*;

fn png() -> String {
    base64::engine::general_purpose::STANDARD.encode(agent_core::content::tiny_png())
}

fn last(turn: &Value) -> &Value {
    turn["events"].as_array().unwrap().last().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_and_a_url_go_to_the_model_with_the_text() {
    let model = MockProvider::new([MockReply::text("A red dot and a chart.")]);
    let runtime = AgentRuntime::new(model.clone(), registry()).streaming(true);
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let content = json!([
        {"type": "text", "text": "What are these?"},
        {"type": "image", "source": {"type": "data", "value": png(), "mimeType": "image/png"}},
        {"type": "document", "source": {"type": "url", "value": "https://example.com/chart.pdf",
                                        "mimeType": "application/pdf"}},
    ]);
    let report = client(addr, "t-media", json!([{"content": content}])).await;
    all_valid(&report);
    let turn = &report["turns"][0];
    assert_eq!(turn["error"], json!(null));
    assert_eq!(last(turn)["result"], "A red dot and a chart.");
    let asked = model.requests();
    let user = asked[0].messages.last().unwrap();
    assert_eq!(user.content, "What are these?");
    let media: Vec<_> = user.media().collect();
    assert_eq!(media.len(), 2, "{user:?}");
    assert_eq!(media[0].kind(), MediaKind::Image);
    assert_eq!(media[0].bytes().unwrap(), &agent_core::content::tiny_png());
    assert_eq!(
        media[1].source,
        MediaSource::Url("https://example.com/chart.pdf".into())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_part_eugene_cannot_send_refuses_the_request_and_asks_nothing() {
    let refused = [
        (
            json!({"type": "video", "source": {"type": "url", "value": "https://e.com/v.mp4", "mimeType": "video/mp4"}}),
            "`video` part",
        ),
        (
            json!({"type": "image", "source": {"type": "file", "value": "file-abc", "provider": "openai"}}),
            "file handle",
        ),
        (
            json!({"type": "image", "source": {"type": "data", "value": png(), "mimeType": "image/jpeg"}}),
            "image/jpeg",
        ),
        (
            json!({"type": "image", "source": {"type": "data", "value": "not base64!", "mimeType": "image/png"}}),
            "base64",
        ),
        (
            json!({"type": "image", "source": {"type": "url", "value": "https://e.com/a"}}),
            "mimeType",
        ),
        (
            json!({"type": "image", "source": {"type": "url", "value": "https://e.com/a.mp3", "mimeType": "audio/mpeg"}}),
            "is not image",
        ),
        (
            json!({"type": "image", "source": {"type": "url", "value": "http://127.0.0.1/secret.png", "mimeType": "image/png"}}),
            "loopback",
        ),
    ];
    for (part, why) in refused {
        let model = MockProvider::new([MockReply::text("should not be asked")]);
        let runtime = AgentRuntime::new(model.clone(), registry()).streaming(true);
        let (addr, _task) = serve(AguiServer::new(runtime)).await;
        let content = json!([{"type": "text", "text": "Look."}, part]);
        let report = client(addr, "t-refused", json!([{"content": content}])).await;
        all_valid(&report);
        let error = last(&report["turns"][0]);
        assert_eq!(error["type"], "RUN_ERROR", "{report}");
        assert_eq!(error["code"], "eugene.input");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(why), "{why}: {message}");
        assert!(model.requests().is_empty(), "the model was asked");
    }
}
