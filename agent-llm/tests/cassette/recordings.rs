//! The project's own recordings (`fixtures/recordings/*.yaml`, real traffic from pydantic-ai's
//! cassettes) keep working through the cassette replay: every one is served by a
//! [`ReplayServer`], each model call in it is made by the provider of its API, and the answer
//! (or error) the provider gets over HTTP is the one its decoder reads from the recording
//! directly. Calls that are not model calls (Gemini's cache) are made as plain requests and
//! answered as recorded. Requests are matched by method and path, in order: pydantic-ai's
//! request bodies are not eugene's.

use std::path::Path;

use agent_core::retry::RetryPolicy;
use agent_llm::cassette::{Body, Cassette, Interaction, Matcher, ReplayServer};
use agent_llm::{
    AnthropicProvider, AnthropicWire, ChatRequest, ChatResponse, GeminiProvider, GeminiWire,
    HttpProvider, LlmProvider, Message, OpenAiProvider, OpenAiResponsesProvider,
    OpenAiResponsesWire, OpenAiWire, ProviderError, WireCodec, answer_of, replay_recorded_stream,
};

use crate::{client, drain};

/// What a call ended with, in a form both sides can be compared in.
#[derive(Debug, PartialEq)]
enum Outcome {
    Answer(Box<ChatResponse>),
    /// An error status, as the provider reports it.
    Status(u16),
    /// Another error, as shown.
    Error(String),
}

fn outcome(result: Result<ChatResponse, ProviderError>) -> Outcome {
    match result {
        Ok(response) => Outcome::Answer(Box::new(response)),
        Err(ProviderError::Api { status, .. }) => Outcome::Status(status),
        Err(error) => Outcome::Error(error.to_string()),
    }
}

/// The outcome the wire format's decoder gives for the recorded answer, read directly.
fn expected<W: WireCodec + Default>(interaction: &Interaction, streamed: bool) -> Outcome {
    let response = &interaction.response;
    if !(200..300).contains(&response.status) {
        return Outcome::Status(response.status);
    }
    if streamed {
        let bytes = response.body.to_bytes();
        let (events, error) = replay_recorded_stream::<W>(&[&bytes]);
        return match (answer_of(&events), error) {
            (Some(answer), None) => Outcome::Answer(Box::new(answer.clone())),
            (_, Some(error)) => outcome(Err(error)),
            (None, None) => Outcome::Error("the stream ended without an answer".into()),
        };
    }
    let json = response.body.json().expect("a whole answer is JSON");
    outcome(W::default().decode(&json))
}

/// Makes `interaction`'s call with `provider` (streamed if it was) and checks it against the
/// recording; whether the answer had something in it.
async fn check<W: WireCodec + Default>(
    name: &str,
    index: usize,
    provider: HttpProvider<W>,
    interaction: &Interaction,
    streamed: bool,
) -> bool {
    let provider = provider.with_retry(RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    });
    let transcript = [Message::user("replayed")];
    let request = ChatRequest::new(&transcript);
    let got = if streamed {
        let (events, error) = drain(provider.stream(&request)).await;
        match error {
            Some(error) => outcome(Err(error)),
            None => outcome(Ok(answer_of(&events).expect("Done").clone())),
        }
    } else {
        outcome(provider.complete(&request).await)
    };
    let want = expected::<W>(interaction, streamed);
    assert_eq!(got, want, "{name} interactions[{index}]");
    match got {
        Outcome::Answer(answer) => {
            !answer.message.content.is_empty() || !answer.message.tool_calls.is_empty()
        }
        _ => false,
    }
}

/// What the recorded request's path says about the call: the part before the endpoint (the
/// provider's base URL path) and the model, for a model call.
fn model_call(interaction: &Interaction) -> Option<(String, String)> {
    let url = reqwest::Url::parse(&interaction.request.uri).unwrap();
    let path = url.path();
    let model = || {
        interaction
            .request
            .body
            .json()
            .and_then(|b| b["model"].as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    if let Some(base) = path.strip_suffix("/v1/messages") {
        return Some((base.to_owned(), model()));
    }
    if let Some(base) = path.strip_suffix("/responses") {
        return Some((base.to_owned(), model()));
    }
    if let Some(base) = path.strip_suffix("/chat/completions") {
        return Some((base.to_owned(), model()));
    }
    let (base, call) = path.split_once("/models/")?;
    let (model, method) = call.split_once(':')?;
    matches!(method, "generateContent" | "streamGenerateContent")
        .then(|| (base.to_owned(), model.to_owned()))
}

fn is_streamed(interaction: &Interaction) -> bool {
    interaction.request.uri.contains(":streamGenerateContent")
        || interaction
            .request
            .body
            .json()
            .is_some_and(|b| b["stream"] == true)
}

/// A call that is not a model's, made as a plain request: answered as recorded.
async fn check_plain(name: &str, index: usize, server: &ReplayServer, interaction: &Interaction) {
    let url = reqwest::Url::parse(&interaction.request.uri).unwrap();
    let method = reqwest::Method::from_bytes(interaction.request.method.as_bytes()).unwrap();
    let answer = client()
        .request(method, server.url(url.path()))
        .body(interaction.request.body.to_bytes())
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.status().as_u16(),
        interaction.response.status,
        "{name} interactions[{index}]"
    );
    let bytes = answer.bytes().await.unwrap();
    match interaction.response.body.json() {
        Some(json) => {
            let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(body, json, "{name} interactions[{index}]");
        }
        // A download (a PDF the SDK fetched before asking the model): byte for byte.
        None => assert_eq!(
            &bytes[..],
            &interaction.response.body.to_bytes()[..],
            "{name} interactions[{index}]"
        ),
    }
}

#[tokio::test]
async fn every_recorded_cassette_of_the_project_replays_through_its_provider() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/recordings");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    let (mut calls, mut plain, mut answered, mut streamed_calls) = (0, 0, 0, 0);
    for name in &names {
        let cassette = Cassette::load(folder.join(name)).unwrap();
        let server = cassette
            .clone()
            .serve(Matcher::new().ignore_body().ignore_query())
            .await
            .unwrap();
        for (index, interaction) in cassette.interactions().iter().enumerate() {
            let Some((base, model)) = model_call(interaction) else {
                check_plain(name, index, &server, interaction).await;
                plain += 1;
                continue;
            };
            let base_url = server.url(&base);
            let streamed = is_streamed(interaction);
            let had_content = if name.starts_with("anthropic_") {
                check::<AnthropicWire>(
                    name,
                    index,
                    AnthropicProvider::new("k", model).with_base_url(base_url),
                    interaction,
                    streamed,
                )
                .await
            } else if name.starts_with("openai_responses_") {
                check::<OpenAiResponsesWire>(
                    name,
                    index,
                    OpenAiResponsesProvider::new("k", model).with_base_url(base_url),
                    interaction,
                    streamed,
                )
                .await
            } else if name.starts_with("openai_chat_") {
                check::<OpenAiWire>(
                    name,
                    index,
                    OpenAiProvider::new("k", model).with_base_url(base_url),
                    interaction,
                    streamed,
                )
                .await
            } else if name.starts_with("gemini_") {
                check::<GeminiWire>(
                    name,
                    index,
                    GeminiProvider::new("k", model).with_base_url(base_url),
                    interaction,
                    streamed,
                )
                .await
            } else {
                panic!("{name}: which provider?")
            };
            calls += 1;
            answered += usize::from(had_content);
            streamed_calls += usize::from(streamed);
        }
        server.assert_all_used();
        assert!(
            !matches!(cassette.interactions()[0].response.body, Body::Empty),
            "{name}"
        );
    }
    assert_eq!(names.len(), 33);
    assert_eq!((calls, plain), (59, 3));
    assert_eq!(streamed_calls, 15);
    // The three without: a safety block (no content) and two recorded 400s.
    assert_eq!(
        answered, 56,
        "{answered} of {calls} answers had text or calls"
    );
}
