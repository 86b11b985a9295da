//! Opt-in: a real OpenAI-compatible server. Set `AGENT_E2E_OPENAI_URL` (e.g.
//! `http://127.0.0.1:8080/v1`) and optionally `AGENT_E2E_OPENAI_MODEL` and `OPENAI_API_KEY`; see the
//! README for running llama-cpp-python's server with a small model. Without the variable the test
//! says so and passes.

use agent_llm::{ChatRequest, LlmProvider, Message, OpenAiProvider, StreamEvent};
use futures::StreamExt;

#[tokio::test]
async fn a_real_server_answers_whole_and_streamed() {
    let Ok(url) = std::env::var("AGENT_E2E_OPENAI_URL") else {
        eprintln!("AGENT_E2E_OPENAI_URL is not set: skipping the real-server test");
        return;
    };
    let model = std::env::var("AGENT_E2E_OPENAI_MODEL").unwrap_or_else(|_| "local".into());
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_default();
    let provider = OpenAiProvider::new(key, model).with_base_url(url);
    let transcript = [Message::user("Say hello in one word.")];
    let request = ChatRequest::new(&transcript).max_tokens(32);

    let whole = provider
        .complete(&request)
        .await
        .expect("the server answers");
    assert!(
        !whole.message.content.trim().is_empty(),
        "empty answer: {whole:?}"
    );
    assert!(whole.usage.output_tokens > 0, "{whole:?}");

    let mut stream = provider.stream(&request);
    let mut text = String::new();
    let mut done = None;
    while let Some(event) = stream.next().await {
        match event.expect("the stream does not fail") {
            StreamEvent::TextDelta(piece) => text.push_str(&piece),
            StreamEvent::Done(response) => done = Some(response),
            _ => {}
        }
    }
    let done = done.expect("the stream ends with Done");
    assert_eq!(done.message.content, text);
    assert!(!text.trim().is_empty());
}
