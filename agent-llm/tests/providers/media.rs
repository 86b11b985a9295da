//! Images, documents and audio on the four wire formats, against recorded real traffic
//! (pydantic-ai's cassettes, see `fixtures/recordings/README.md`) replayed on loopback: the bytes
//! attached are the bytes on the wire, in the shape each API was sent; and the parts a format
//! cannot take are refused before anything is sent.

use agent_core::content::{Content, Media};
use agent_core::{SkillOutput, ToolCall, ToolDefinition, ToolResult};
use agent_llm::{
    AnthropicProvider, CacheControl, ChatRequest, GeminiProvider, LlmProvider, Message,
    OpenAiProvider, OpenAiResponsesProvider, ProviderError,
};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use serde_json::Value;

use crate::gemini::{cassette, recorded_request};
use crate::server::{Reply, Server};

const GOAL: &str = "Call the get_mixed_content tool and describe what you received.";
const MARKER: &str = r#"{"pydantic_ai_marker":"test_42"}"#;

/// Interaction `i`'s answer, as recorded.
fn recorded_answer(cassette: &Value, i: usize) -> Reply {
    Reply::json(200, &cassette["interactions"][i]["response"]["parsed_body"])
}

/// Base64 in either alphabet (Google's SDK writes the URL-safe one).
fn unbase64(text: &str) -> Vec<u8> {
    STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE.decode(text))
        .expect("recorded base64")
}

fn at<'v>(value: &'v Value, pointer: &str) -> &'v Value {
    value
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in {value:.300}"))
}

fn tool(recorded_schema: &Value) -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "get_mixed_content".into(),
        description: String::new(),
        input_schema: recorded_schema.clone(),
        output_schema: None,
    }]
}

/// The recorded tool's answer: text, the JPEG, text, as a skill returns it.
fn mixed_result(call: &ToolCall, jpeg: Vec<u8>) -> Message {
    let content = Content::text("Here is the image:")
        .with(Media::new("image/jpeg", jpeg))
        .with(MARKER);
    Message::tool_result(&ToolResult::new(call, Ok(SkillOutput::Content(content))))
}

/// Runs the recorded two turns: the goal, the tool call the model made, the tool's mixed answer
/// (with the JPEG found at `jpeg_at` in the recorded second request); returns what was sent.
async fn two_turns(
    provider: &dyn LlmProvider,
    server: &Server,
    tools: &[ToolDefinition],
    jpeg: Vec<u8>,
) -> (Vec<Value>, String) {
    let mut transcript = vec![Message::user(GOAL)];
    let first = provider
        .complete(&ChatRequest::new(&transcript).tools(tools).max_tokens(4096))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let call = first.message.tool_calls[0].clone();
    transcript.push(first.message);
    transcript.push(mixed_result(&call, jpeg));
    let second = provider
        .complete(&ChatRequest::new(&transcript).tools(tools).max_tokens(4096))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let sent = server.received().iter().map(|r| r.json()).collect();
    (sent, second.message.content)
}

#[tokio::test]
async fn anthropic_sends_a_tool_results_text_image_text_exactly_as_recorded() {
    let c = cassette("anthropic_vcr_nonstream_tool_result_text_image_text.yaml");
    let recorded = recorded_request(&c, 1);
    let jpeg = unbase64(
        at(recorded, "/messages/2/content/0/content/1/source/data")
            .as_str()
            .unwrap(),
    );
    let server = Server::start([recorded_answer(&c, 0), recorded_answer(&c, 1)]).await;
    let provider = AnthropicProvider::new("sk-test", "claude-sonnet-4-5")
        .with_base_url(&server.url)
        .with_cache_control(CacheControl::none());
    let tools = tool(at(recorded_request(&c, 0), "/tools/0/input_schema"));
    let (sent, answer) = two_turns(&provider, &server, &tools, jpeg).await;
    // The whole second request, as the real API was sent it: the tool_result's content is the
    // three blocks in order, the image as base64 of the very bytes the skill returned.
    assert_eq!(&sent[1], recorded);
    assert!(answer.contains("kiwi"), "{answer}");
}

#[tokio::test]
async fn openai_chat_sends_a_tool_results_image_in_a_user_message_after_the_results() {
    let c = cassette("openai_chat_vcr_nonstream_tool_result_image_in_user_message.yaml");
    let recorded = recorded_request(&c, 1);
    let image = at(recorded, "/messages/3/content/1");
    let url = at(image, "/image_url/url").as_str().unwrap();
    let jpeg = unbase64(url.strip_prefix("data:image/jpeg;base64,").unwrap());
    let server = Server::start([recorded_answer(&c, 0), recorded_answer(&c, 1)]).await;
    let provider =
        OpenAiProvider::new("sk-test", "gpt-5-mini").with_base_url(format!("{}/v1", server.url));
    let tools = tool(at(recorded_request(&c, 0), "/tools/0/function/parameters"));
    let (sent, answer) = two_turns(&provider, &server, &tools, jpeg).await;
    let messages = at(&sent[1], "/messages").as_array().unwrap();
    // The documented conversion: the tool message names the image, a user message after the
    // results carries it, introduced by the same label; the image part is the recorded one.
    assert_eq!(messages.len(), 4, "{messages:#?}");
    let tool_text = at(&messages[2], "/content").as_str().unwrap();
    assert_eq!(
        tool_text,
        format!(
            "Here is the image:\n[image 1 of call_VrtIe6Ngj9pFHcIGCiIp5O0R: image.jpg, below]\n{MARKER}"
        )
    );
    assert_eq!(messages[3]["role"], "user");
    assert_eq!(
        at(&messages[3], "/content/0/text"),
        "[image 1 of call_VrtIe6Ngj9pFHcIGCiIp5O0R: image.jpg, below]"
    );
    assert_eq!(at(&messages[3], "/content/1"), image);
    assert!(answer.contains("kiwi"), "{answer}");
}

#[tokio::test]
async fn responses_sends_a_function_call_outputs_content_list_exactly_as_recorded() {
    let c = cassette("openai_responses_vcr_nonstream_function_call_output_text_image_text.yaml");
    let recorded = recorded_request(&c, 1);
    let output = at(recorded, "/input/3");
    let url = at(output, "/output/1/image_url").as_str().unwrap();
    let jpeg = unbase64(url.strip_prefix("data:image/jpeg;base64,").unwrap());
    let server = Server::start([recorded_answer(&c, 0), recorded_answer(&c, 1)]).await;
    let provider = OpenAiResponsesProvider::new("sk-test", "gpt-5-mini")
        .with_base_url(format!("{}/v1", server.url));
    let tools = tool(at(recorded_request(&c, 0), "/tools/0/parameters"));
    let (sent, answer) = two_turns(&provider, &server, &tools, jpeg).await;
    let ours = at(&sent[1], "/input")
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .expect("the result was sent");
    assert_eq!(ours, output);
    assert!(!answer.is_empty());
}

#[tokio::test]
async fn gemini_sends_a_tool_results_image_inline_after_the_function_response() {
    let c = cassette("gemini_vcr_nonstream_function_response_then_inline_image.yaml");
    let recorded = recorded_request(&c, 1);
    let inline = at(recorded, "/contents/3/parts/1/inlineData");
    let jpeg = unbase64(at(inline, "/data").as_str().unwrap());
    let server = Server::start([recorded_answer(&c, 0), recorded_answer(&c, 1)]).await;
    let provider = GeminiProvider::new("gm-test", "gemini-2.5-flash")
        .with_base_url(format!("{}/v1beta", server.url));
    let tools = tool(at(
        recorded_request(&c, 0),
        "/tools/0/functionDeclarations/0/parameters_json_schema",
    ));
    let (sent, answer) = two_turns(&provider, &server, &tools, jpeg.clone()).await;
    let contents = at(&sent[1], "/contents").as_array().unwrap();
    let results = contents.last().unwrap();
    assert_eq!(results["role"], "user");
    let parts = results["parts"].as_array().unwrap();
    let response = at(&parts[0], "/functionResponse/response/output");
    assert_eq!(response, &format!("Here is the image:\n{MARKER}"));
    assert!(
        at(&parts[1], "/text")
            .as_str()
            .unwrap()
            .starts_with("image 1 of ")
    );
    assert_eq!(at(&parts[2], "/inlineData/mimeType"), "image/jpeg");
    let on_the_wire = unbase64(at(&parts[2], "/inlineData/data").as_str().unwrap());
    assert_eq!(on_the_wire, jpeg, "the bytes attached are the bytes sent");
    assert!(answer.contains("kiwi"), "{answer}");
}

/// A user message with a PDF, as each format's recording sent it.
#[tokio::test]
async fn a_pdf_attached_by_the_user_is_sent_as_each_format_was_recorded() {
    // Anthropic: a `document` block with a base64 source; the whole request as recorded.
    let c = cassette("anthropic_vcr_nonstream_user_pdf_document_base64.yaml");
    let recorded = recorded_request(&c, 0);
    let pdf = unbase64(
        at(recorded, "/messages/0/content/1/source/data")
            .as_str()
            .unwrap(),
    );
    let question = at(recorded, "/messages/0/content/0/text").as_str().unwrap();
    let server = Server::start([recorded_answer(&c, 0)]).await;
    let provider = AnthropicProvider::new("sk-test", "claude-sonnet-4-5")
        .with_base_url(&server.url)
        .with_cache_control(CacheControl::none());
    let transcript = [Message::user(question).attach(Media::new("application/pdf", pdf.clone()))];
    let answer = provider
        .complete(&ChatRequest::new(&transcript).max_tokens(4096))
        .await
        .unwrap();
    let mut sent = server.received()[0].json();
    sent.as_object_mut().unwrap().remove("tool_choice");
    assert_eq!(&sent, recorded);
    assert!(answer.message.content.contains("Dummy PDF file"));

    // OpenAI Chat Completions: a `file` part with a data URL and its file name; Responses: an
    // `input_file` with the same. The list sent is the list recorded.
    for (name, list) in [
        (
            "openai_chat_vcr_nonstream_user_pdf_file_part.yaml",
            "/messages",
        ),
        (
            "openai_responses_vcr_nonstream_user_pdf_input_file.yaml",
            "/input",
        ),
    ] {
        let c = cassette(name);
        let recorded = recorded_request(&c, 0);
        let server = Server::start([recorded_answer(&c, 0)]).await;
        let base = format!("{}/v1", server.url);
        let provider: Box<dyn LlmProvider> = if list == "/messages" {
            Box::new(OpenAiProvider::new("sk-test", "gpt-4o").with_base_url(base))
        } else {
            Box::new(OpenAiResponsesProvider::new("sk-test", "gpt-4o").with_base_url(base))
        };
        let question = at(recorded, &format!("{list}/0/content/0/text"));
        let transcript = [Message::user(question.as_str().unwrap())
            .attach(Media::new("application/pdf", pdf.clone()).named("filename.pdf"))];
        provider
            .complete(&ChatRequest::new(&transcript))
            .await
            .unwrap();
        assert_eq!(
            at(&server.received()[0].json(), list),
            at(recorded, list),
            "{name}"
        );
    }

    // Gemini: `inlineData` (the recording's SDK wrote base64's URL-safe alphabet; the bytes
    // match). The cassette's first interaction is the SDK downloading the PDF: the second is
    // the model's.
    let c = cassette("gemini_vcr_nonstream_user_pdf_inline_data.yaml");
    let recorded = recorded_request(&c, 1);
    let recorded_pdf = unbase64(
        at(recorded, "/contents/0/parts/1/inlineData/data")
            .as_str()
            .unwrap(),
    );
    let server = Server::start([recorded_answer(&c, 1)]).await;
    let provider = GeminiProvider::new("gm-test", "gemini-2.0-flash")
        .with_base_url(format!("{}/v1beta", server.url));
    let question = at(recorded, "/contents/0/parts/0/text").as_str().unwrap();
    let transcript =
        [Message::user(question).attach(Media::new("application/pdf", recorded_pdf.clone()))];
    let answer = provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    let sent = server.received()[0].json();
    assert_eq!(at(&sent, "/contents/0/parts/0/text"), question);
    assert_eq!(
        at(&sent, "/contents/0/parts/1/inlineData/mimeType"),
        "application/pdf"
    );
    let on_the_wire = unbase64(
        at(&sent, "/contents/0/parts/1/inlineData/data")
            .as_str()
            .unwrap(),
    );
    assert_eq!(on_the_wire, recorded_pdf);
    assert!(answer.message.content.contains("dummy PDF"));
    // Gemini reports tokens by modality: the PDF's 1,290 of the 1,305.
    assert_eq!(answer.usage.image_input_tokens, 1290);
}

#[tokio::test]
async fn audio_attached_by_the_user_is_input_audio_on_chat_completions() {
    let c = cassette("openai_chat_vcr_nonstream_user_input_audio.yaml");
    let recorded = recorded_request(&c, 0);
    let mp3 = unbase64(
        at(recorded, "/messages/0/content/1/input_audio/data")
            .as_str()
            .unwrap(),
    );
    let question = at(recorded, "/messages/0/content/0/text").as_str().unwrap();
    let server = Server::start([recorded_answer(&c, 0)]).await;
    let provider = OpenAiProvider::new("sk-test", "gpt-4o-audio-preview")
        .with_base_url(format!("{}/v1", server.url));
    let audio = Media::sniff(mp3).unwrap();
    assert_eq!(&*audio.media_type, "audio/mpeg");
    let transcript = [Message::user(question).attach(audio)];
    let answer = provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(
        at(&server.received()[0].json(), "/messages"),
        at(recorded, "/messages")
    );
    assert!(answer.message.content.contains("Marcelo"));
    // The recorded usage says which input tokens were audio.
    assert_eq!(answer.usage.audio_input_tokens, 44);
}

/// Each refusal happens before anything is sent: the server never hears of the request.
#[tokio::test]
async fn parts_a_format_cannot_take_are_refused_before_anything_is_sent() {
    let server = Server::start([]).await;
    let anthropic = AnthropicProvider::new("sk-test", "claude").with_base_url(&server.url);
    let responses =
        OpenAiResponsesProvider::new("sk-test", "gpt").with_base_url(format!("{}/v1", server.url));
    let gemini =
        GeminiProvider::new("gm-test", "gemini").with_base_url(format!("{}/v1beta", server.url));
    let png = agent_core::content::tiny_png();
    let wav =
        b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00".to_vec();
    let mut bomb = png.to_vec();
    bomb[16..24].copy_from_slice(&[0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0]); // 100,000 × 100,000
    let cases: Vec<(&dyn LlmProvider, Message, &str)> = vec![
        (
            &anthropic,
            Message::user("hear").attach(Media::new("audio/wav", wav.clone())),
            "takes no audio",
        ),
        (
            &responses,
            Message::user("hear").attach(Media::new("audio/wav", wav)),
            "takes no audio",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::new("image/jpeg", png.clone())),
            "not image/jpeg",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::new("image/png", bomb)),
            "pixels",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::new("image/bmp", &b"BM"[..])),
            "of the types",
        ),
        (
            &gemini,
            Message::user("see").attach(Media::new("image/gif", &b"GIF89a"[..])),
            "of the types",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::url("http://127.0.0.1:9/x.png", "image/png")),
            "loopback",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::url("http://169.254.169.254/x.png", "image/png")),
            "link-local",
        ),
        (
            &anthropic,
            Message::user("see").attach(Media::url(
                format!("http://{}/x.png", local_name().await),
                "image/png",
            )),
            "resolves to",
        ),
        (
            &anthropic,
            Message::system("rules").attach(Media::new("image/png", png.clone())),
            "only in user messages",
        ),
        (
            &anthropic,
            Message::user("read").attach(Media::new("application/pdf", &b"%PDF-1.4 cut"[..])),
            "%%EOF",
        ),
        (
            &gemini,
            Message::user("too much")
                .attach(Media::new("application/pdf", big_pdf(11)))
                .attach(Media::new("application/pdf", big_pdf(11))),
            "limit of",
        ),
        (
            &anthropic,
            Message::user("too big").attach(Media::new("image/png", big_png(6))),
            "at most",
        ),
    ];
    for (provider, message, expected) in cases {
        let transcript = [message];
        let error = provider
            .complete(&ChatRequest::new(&transcript))
            .await
            .expect_err(expected);
        assert!(matches!(error, ProviderError::Media { .. }), "{error}");
        assert!(error.to_string().contains(expected), "{expected}: {error}");
        // Streamed, the same.
        let events = crate::drain(provider.stream(&ChatRequest::new(&transcript))).await;
        assert!(
            matches!(events.1, Some(ProviderError::Media { .. })),
            "{expected}"
        );
    }
    assert!(server.received().is_empty(), "nothing was sent");
}

/// This machine's host name, which resolves (through `/etc/hosts`) to one of its own addresses:
/// a name, not an address, that leads to this machine or its private network.
async fn local_name() -> String {
    let name = std::fs::read_to_string("/etc/hostname")
        .expect("/etc/hostname names this machine")
        .trim()
        .to_owned();
    let addresses: Vec<_> = tokio::net::lookup_host((name.as_str(), 443))
        .await
        .unwrap_or_else(|e| panic!("this machine's name `{name}` must resolve for this test: {e}"))
        .collect();
    assert!(
        addresses
            .iter()
            .all(|a| agent_core::content::check::address_kind(a.ip()).is_some()),
        "`{name}` resolves to a public address ({addresses:?}); this test needs a local one"
    );
    name
}

/// A PDF of about `mb` megabytes.
fn big_pdf(mb: usize) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    pdf.resize(mb * 1024 * 1024, b' ');
    pdf.extend_from_slice(b"\n%%EOF\n");
    pdf
}

/// A PNG of about `mb` megabytes (a 1×1 image with padding after its end).
fn big_png(mb: usize) -> Vec<u8> {
    let mut png = agent_core::content::tiny_png().to_vec();
    png.resize(mb * 1024 * 1024, 0);
    png
}

/// What is sent is the body serialized, byte for byte, on every format: the media written once
/// into it, never a marker left behind, and text that looks like a marker left alone.
#[test]
fn the_bytes_sent_are_the_body_serialized_whatever_the_text_says() {
    let png = agent_core::content::tiny_png();
    let transcript = [
        Message::user("look-alike: \u{1}0000000000000000:0\u{1} and \\u0001")
            .attach(Media::new("image/png", png.clone()))
            .attach("between")
            .attach(Media::new("application/pdf", big_pdf(0)).named("a.pdf")),
        Message::assistant("Seen."),
        Message::user("again").attach(Media::new("image/png", png)),
    ];
    let request = ChatRequest::new(&transcript);
    let bodies: [(Value, bytes::Bytes); 4] = [
        {
            let p = AnthropicProvider::new("k", "m");
            (
                p.request_body(&request, false),
                p.request_bytes(&request, false),
            )
        },
        {
            let p = OpenAiProvider::new("k", "m");
            (
                p.request_body(&request, true),
                p.request_bytes(&request, true),
            )
        },
        {
            let p = OpenAiResponsesProvider::new("k", "m");
            (
                p.request_body(&request, false),
                p.request_bytes(&request, false),
            )
        },
        {
            let p = GeminiProvider::new("k", "m");
            (
                p.request_body(&request, false),
                p.request_bytes(&request, false),
            )
        },
    ];
    for (body, sent) in bodies {
        assert_eq!(sent, serde_json::to_vec(&body).unwrap());
        assert!(String::from_utf8_lossy(&sent).contains("iVBORw0KGgo"));
    }
}

/// A tool's media that the format cannot take does not end the run: in the request it becomes a
/// line that says what it was and why it was not sent (the transcript keeps it); over the
/// request's total, the oldest tool media goes first. The caller's own parts are never changed.
#[tokio::test]
async fn a_tools_media_the_format_cannot_take_is_named_in_its_place_oldest_first() {
    let answer = serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}
    });
    let server = Server::start([Reply::json(200, &answer), Reply::json(200, &answer)]).await;
    let provider = AnthropicProvider::new("sk-test", "claude").with_base_url(&server.url);
    let wav = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00";
    let call = ToolCall::new("c1", "record", serde_json::json!({}));
    let sound = Content::text("Recorded:").with(Media::new("audio/wav", &wav[..]).named("a.wav"));
    let transcript = vec![
        Message::user("Record it."),
        Message::assistant_with_tool_calls("", vec![call.clone()]),
        Message::tool_result(&ToolResult::new(&call, Ok(SkillOutput::Content(sound)))),
    ];
    provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    let sent = server.received()[0].json();
    let result = at(&sent, "/messages/2/content/0/content");
    assert_eq!(at(result, "/0/text"), "Recorded:");
    let note = at(result, "/1/text").as_str().unwrap();
    assert!(
        note.starts_with(
            r#"[audio/wav, 28 bytes, "a.wav": not sent: the anthropic format takes no audio"#
        ),
        "{note}"
    );
    assert_eq!(
        transcript[2].media().count(),
        1,
        "the transcript keeps the part"
    );

    // Two 14 MB PDFs from tools and the 32 MB total: the newer is sent, the older named.
    let calls: Vec<ToolCall> = (1..=2)
        .map(|i| ToolCall::new(format!("p{i}"), "fetch", serde_json::json!({})))
        .collect();
    let mut transcript = vec![
        Message::user("Fetch both."),
        Message::assistant_with_tool_calls("", calls.clone()),
    ];
    for call in &calls {
        let pdf = Media::new("application/pdf", big_pdf(14)).named(format!("{}.pdf", call.id));
        let output = SkillOutput::Content(Content::from(pdf));
        transcript.push(Message::tool_result(&ToolResult::new(call, Ok(output))));
    }
    provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    let sent = server.received()[1].json();
    let results = at(&sent, "/messages/2/content").as_array().unwrap();
    let first = results[0]["content"].to_string();
    let second = results[1]["content"].to_string();
    assert!(
        first.contains("p1.pdf") && first.contains("not sent") && first.contains("limit"),
        "{first:.300}"
    );
    assert!(second.contains("\"type\":\"document\""), "{second:.300}");
}

/// An image Gemini draws comes back as a part of its answer, and goes back in the next request
/// with the signature it came with.
#[tokio::test]
async fn an_image_gemini_draws_is_a_part_and_goes_back_signed() {
    let png = agent_core::content::tiny_png();
    let drawn = serde_json::json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "Here it is."},
            {"inlineData": {"mimeType": "image/png", "data": STANDARD.encode(&png)}, "thoughtSignature": "c2lnbmVk"}
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 5}
    });
    let next = serde_json::json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Bluer."}]}, "finishReason": "STOP"}]
    });
    let server = Server::start([Reply::json(200, &drawn), Reply::json(200, &next)]).await;
    let provider = GeminiProvider::new("gm-test", "gemini-3-pro-image")
        .with_base_url(format!("{}/v1beta", server.url));
    let mut transcript = vec![Message::user("Draw a dot.")];
    let answer = provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(answer.message.content, "Here it is.");
    let media: Vec<&Media> = answer.message.media().collect();
    assert_eq!(media.len(), 1);
    assert_eq!(media[0].bytes().unwrap(), &png);
    transcript.push(answer.message);
    transcript.push(Message::user("Make it bluer."));
    provider
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    let sent = server.received()[1].json();
    let model = at(&sent, "/contents/1/parts");
    assert_eq!(at(model, "/0/text"), "Here it is.");
    assert_eq!(
        at(model, "/1/inlineData/data"),
        STANDARD.encode(&png).as_str()
    );
    assert_eq!(at(model, "/1/thoughtSignature"), "c2lnbmVk");
}
