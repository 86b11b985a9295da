//! Cassettes (feature `cassette`): recording through the loopback proxy against a fake upstream
//! (a real HTTP server on loopback playing the real API), replaying offline through real
//! providers, the mismatch reports, malformed files, secrets, concurrency, the project's own
//! recordings, and the `EUGENE_CASSETTE` mode in child processes.

mod concurrent;
mod env_mode;
mod malformed;
mod media;
mod mismatch;
mod record_replay;
mod recordings;
mod secrets;

use std::path::Path;

use agent_llm::{AnthropicProvider, CacheControl, StreamEvent};
use serde_json::{Value, json};

pub use test_support::server::{End, Reply, Server, fixture};

/// A key long enough for the secret scan to look for.
pub const KEY: &str = "sk-ant-test-key-0123456789abcdef";

/// A folder for one test's cassettes.
pub fn dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// The names of the files in `dir`.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder reads")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A plain HTTP client with the providers' TLS settings.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(agent_llm::llm::tls_config().expect("TLS settings"))
        .build()
        .expect("a client")
}

/// An Anthropic provider at `base_url` that sends `key`, without retries' waits mattering
/// (no test here answers with a status that is retried unless it says so).
pub fn anthropic(base_url: &str, key: &str) -> AnthropicProvider {
    AnthropicProvider::new(key, "claude-sonnet-4-5")
        .with_base_url(base_url)
        .with_cache_control(CacheControl::none())
}

/// A whole Anthropic answer saying `text`.
pub fn anthropic_answer(text: &str) -> Value {
    json!({
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 4}
    })
}

/// Every event of a stream, and the error that ended it, if any.
pub use agent_llm::all_events as drain;

/// The final response of a drained stream.
pub fn done(events: &[StreamEvent]) -> &agent_llm::ChatResponse {
    agent_llm::answer_of(events).expect("the stream ends with Done")
}

/// The body [`anthropic`]'s provider sends for one user message `question`, whole.
pub fn anthropic_request(question: &str) -> Value {
    let transcript = [agent_llm::Message::user(question)];
    anthropic("http://unused.invalid", KEY)
        .request_body(&agent_llm::ChatRequest::new(&transcript), false)
}

/// A cassette, as YAML, of whole Anthropic exchanges: each question, as [`anthropic`]'s
/// provider asks it, answered with its answer.
pub fn anthropic_cassette(exchanges: &[(&str, &str)]) -> String {
    let interactions: Vec<Value> = exchanges
        .iter()
        .map(|(question, answer)| {
            json!({
                "request": {
                    "method": "POST",
                    "uri": "https://api.anthropic.com/v1/messages",
                    "headers": {"anthropic-version": ["2023-06-01"], "x-api-key": ["[redacted]"]},
                    "parsed_body": anthropic_request(question),
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"]},
                    "parsed_body": anthropic_answer(answer),
                },
            })
        })
        .collect();
    serde_yaml_ng::to_string(&json!({"interactions": interactions, "version": 1})).unwrap()
}
