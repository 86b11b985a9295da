//! What local OpenAI-compatible servers need (llama-cpp-python, llama.cpp, Ollama, vLLM), each
//! against a loopback server that answers the way they do: the assistant message that made tool
//! calls is sent with `""` content, a server that cannot stream answers with tools is asked for
//! whole answers, broken argument JSON is explained to the model, and a base URL that cannot work
//! fails at once and says how to fix it.

use agent_core::{Registry, SkillContext, SkillError, ToolCall, ToolDefinition};
use agent_llm::{ChatRequest, LlmProvider, Message, OpenAiProvider, ProviderError, StreamEvent};
use agent_runtime::{AgentEvent, AgentRuntime, FinishReason};
use serde_json::{Value, json};

use crate::server::{End, Reply, Server};
use crate::{done, drain};

fn provider(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new("", "local").with_base_url(format!("{}/v1", server.url))
}

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "echo".into(),
        description: "Echo.".into(),
        input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        output_schema: None,
    }]
}

fn whole(message: Value, finish: &str) -> Value {
    json!({"id": "c", "model": "local", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 5, "completion_tokens": 3}})
}

fn tool_call_answer() -> Value {
    whole(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": \"hi\"}"}}]}),
        "tool_calls",
    )
}

#[tokio::test]
async fn the_assistant_turn_with_tool_calls_goes_back_with_empty_string_content() {
    // llama-cpp-python answers a `null` (or missing) content with a 500.
    let server = Server::start([
        Reply::json(200, &tool_call_answer()),
        Reply::json(
            200,
            &whole(json!({"role": "assistant", "content": "done"}), "stop"),
        ),
    ])
    .await;
    let provider = provider(&server);
    let tools = tools();
    let mut transcript = vec![Message::user("go")];
    let first = provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    transcript.push(first.message.clone());
    let call = &first.message.tool_calls[0];
    transcript.push(Message::tool_result(&agent_core::ToolResult::new(
        call,
        Ok("hi".into()),
    )));
    provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    let sent = server.received()[1].json();
    let assistant = &sent["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], json!(""), "{assistant}");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
}

#[tokio::test]
async fn a_stream_that_ends_before_any_data_falls_back_to_whole_answers_for_good() {
    let server = Server::start([
        // What llama-cpp-python's `chatml-function-calling` does with `stream: true` and tools.
        Reply::sse_chunks(Vec::new(), End::Finish),
        Reply::json(200, &tool_call_answer()),
        Reply::json(
            200,
            &whole(json!({"role": "assistant", "content": "done"}), "stop"),
        ),
    ])
    .await;
    let provider = provider(&server);
    let tools = tools();
    let transcript = [Message::user("go")];
    let (events, error) =
        drain(provider.stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    let retry = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Retry { error, .. } => Some(error.clone()),
            _ => None,
        })
        .expect("the fallback is announced");
    assert!(retry.contains("whole answers"), "{retry}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallFinished(c) if c.name == "echo"))
    );
    assert_eq!(
        done(&events).message.tool_calls[0].arguments,
        json!({"text": "hi"})
    );

    // The next request asks for a whole answer at once, announcing nothing.
    let (events, error) =
        drain(provider.stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Retry { .. }))
    );
    assert_eq!(done(&events).message.content, "done");
    let streamed: Vec<bool> = server
        .received()
        .iter()
        .map(|r| r.json()["stream"].as_bool().unwrap())
        .collect();
    assert_eq!(streamed, [true, false, false]);
}

#[tokio::test]
async fn an_error_saying_streaming_is_unsupported_is_not_retried_but_answered_whole() {
    let server = Server::start([
        Reply::json(
            500,
            &json!({"error": {"message": "Automatic streaming tool choice is not supported", "type": "internal_server_error"}}),
        ),
        Reply::json(200, &tool_call_answer()),
    ])
    .await;
    let provider = provider(&server);
    let tools = tools();
    let transcript = [Message::user("go")];
    let (events, error) =
        drain(provider.stream(&ChatRequest::new(&transcript).tools(&tools))).await;
    assert!(error.is_none(), "{error:?}");
    let retries: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retry { .. }))
        .collect();
    assert_eq!(
        retries.len(),
        1,
        "one announcement, no blind retries: {retries:?}"
    );
    assert_eq!(server.received().len(), 2, "the 500 was not sent again");
    assert_eq!(done(&events).message.tool_calls.len(), 1);
}

#[tokio::test]
async fn a_stream_without_tools_that_ends_early_is_still_an_error() {
    let server = Server::start([Reply::sse_chunks(Vec::new(), End::Finish)]).await;
    let transcript = [Message::user("go")];
    let (_, error) = drain(provider(&server).stream(&ChatRequest::new(&transcript))).await;
    assert!(
        matches!(&error, Some(ProviderError::Stream { message, .. }) if message.contains("before any data")),
        "{error:?}"
    );
}

#[tokio::test]
async fn arguments_with_a_raw_newline_are_explained_to_the_model() {
    let broken = "{\"path\": \"notes.txt\", \"content\": \"Hello\nworld\"}";
    let server = Server::start([Reply::json(
        200,
        &whole(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "write", "arguments": broken}}]}),
            "tool_calls",
        ),
    )])
    .await;
    let transcript = [Message::user("go")];
    let response = provider(&server)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();

    #[agent_core::skill(register = false)]
    /// Write.
    ///
    /// # Arguments
    /// * `path` - Path.
    /// * `content` - Content.
    async fn write(path: String, content: String) -> Result<String, SkillError> {
        Ok(format!("{path}{content}"))
    }
    let mut registry = Registry::new();
    registry.add(WriteSkill);
    let call: &ToolCall = &response.message.tool_calls[0];
    let result = registry.run_one(call, &SkillContext::default()).await;
    let text = result.content();
    assert!(result.is_error());
    assert!(text.contains("not valid JSON"), "{text}");
    assert!(
        text.contains("control character"),
        "the parser's own words: {text}"
    );
    assert!(
        text.contains("at line 2 column 0"),
        "where it broke: {text}"
    );
    assert!(!text.contains("got a string"), "{text}");
}

#[tokio::test]
async fn a_base_url_without_a_scheme_is_a_configuration_error_at_once() {
    for bad in ["127.0.0.1:18080/v1", "localhost:8080/v1", "http://"] {
        let provider = OpenAiProvider::new("", "m").with_base_url(bad);
        let transcript = [Message::user("go")];
        let error = provider
            .complete(&ChatRequest::new(&transcript))
            .await
            .unwrap_err();
        let ProviderError::Config(message) = &error else {
            panic!("{bad}: {error:?}")
        };
        assert!(message.contains(bad.trim_end_matches('/')), "{message}");
        assert!(message.contains("http://"), "names the fix: {message}");
        // And through the runtime: a configuration error ends the run at once, with no retry.
        let runtime = AgentRuntime::new(provider, Registry::new());
        let error = runtime.run("go").await.unwrap_err();
        assert!(error.to_string().contains("http://"), "{error}");
    }
}

#[tokio::test]
async fn a_404_says_the_base_url_is_probably_missing_v1_or_has_the_path_twice() {
    let not_found = || {
        Reply::json(
            404,
            &json!({"error": {"message": "Not Found", "type": "not_found"}}),
        )
    };
    let server = Server::start([not_found(), not_found()]).await;
    let transcript = [Message::user("go")];
    let without_v1 = OpenAiProvider::new("", "m").with_base_url(&server.url);
    let error = without_v1
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains(&format!("{}/v1", server.url)), "{error}");
    let doubled =
        OpenAiProvider::new("", "m").with_base_url(format!("{}/v1/chat/completions", server.url));
    let error = doubled
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("already ends in `/chat/completions`"),
        "{error}"
    );
}

#[tokio::test]
async fn a_runtime_that_streams_survives_a_server_that_cannot() {
    let server = Server::start([
        Reply::sse_chunks(Vec::new(), End::Finish),
        Reply::json(200, &tool_call_answer()),
        Reply::json(
            200,
            &whole(json!({"role": "assistant", "content": "done"}), "stop"),
        ),
    ])
    .await;
    #[agent_core::skill(read_only, register = false)]
    /// Echo.
    ///
    /// # Arguments
    /// * `text` - Text.
    async fn echo(text: String) -> Result<String, SkillError> {
        Ok(text)
    }
    let mut registry = Registry::new();
    registry.add(EchoSkill);
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |event: &AgentEvent| events.lock().unwrap().push(format!("{event:?}"))
    };
    let outcome = AgentRuntime::new(provider(&server), registry)
        .streaming(true)
        .event_sink(sink)
        .run("go")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(outcome.final_text.as_deref(), Some("done"));
    let events = events.lock().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.contains("Retry") && e.contains("whole answers")),
        "{events:?}"
    );
}

/// Retries of whole answers reach the run's sinks as `AgentEvent::Retry`, one per failed attempt,
/// whether the runtime streams (and fell back to whole answers) or not; an error with an empty
/// message says what the server sent.
#[tokio::test]
async fn every_retry_of_a_whole_answer_is_an_event_streamed_or_not() {
    // What llama-cpp-python does with `tool_choice: required`: a 500 for the stream, then 500s
    // with an empty message for the whole answer, until it gives up or answers.
    let empty_500 = || {
        Reply::json(
            500,
            &json!({"error": {"message": "", "type": "internal_server_error"}}),
        )
    };
    let unsupported = Reply::json(
        500,
        &json!({"error": {"message": "Automatic streaming tool choice is not supported", "type": "internal_server_error"}}),
    );
    let done = || {
        Reply::json(
            200,
            &whole(json!({"role": "assistant", "content": "done"}), "stop"),
        )
    };
    let quick = agent_core::RetryPolicy {
        max_attempts: 3,
        initial_delay: std::time::Duration::from_millis(5),
        backoff: 1.0,
        max_delay: std::time::Duration::from_millis(5),
    };
    #[agent_core::skill(read_only, register = false)]
    /// Echo.
    ///
    /// # Arguments
    /// * `text` - Text.
    async fn echo(text: String) -> Result<String, SkillError> {
        Ok(text)
    }
    for streaming in [true, false] {
        let mut replies = Vec::new();
        if streaming {
            replies.push(unsupported.clone());
        }
        replies.extend([empty_500(), empty_500(), done()]);
        let server = Server::start(replies).await;
        let mut registry = Registry::new();
        registry.add(EchoSkill);
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = {
            let events = events.clone();
            move |event: &AgentEvent| {
                if let AgentEvent::Retry { attempt, error, .. } = event {
                    events.lock().unwrap().push((*attempt, error.clone()));
                }
            }
        };
        let outcome = AgentRuntime::new(provider(&server).with_retry(quick), registry)
            .streaming(streaming)
            .event_sink(sink)
            .run("go")
            .await
            .unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("done"));
        let retries = events.lock().unwrap().clone();
        let attempts: Vec<u32> = retries.iter().map(|(attempt, _)| *attempt).collect();
        let expected: &[u32] = if streaming { &[1, 1, 2] } else { &[1, 2] };
        assert_eq!(attempts, expected, "streaming {streaming}: {retries:?}");
        let last = &retries.last().unwrap().1;
        assert!(
            last.contains("500 (internal_server_error): the server sent no message; its body was:"),
            "{last}"
        );
    }
}
