//! Prompt caching: the cache reads and writes each wire format reports, from recorded traffic
//! where a recording has them, and the `prompt_cache_key` the OpenAI formats send.

use agent_core::ToolDefinition;
use agent_llm::cassette::{Cassette, Matcher};
use agent_llm::{
    AnthropicProvider, ChatRequest, LlmProvider, Message, OpenAiProvider, OpenAiResponsesProvider,
    Usage,
};
use serde_json::json;

use crate::server::{Reply, Server, fixture};
use crate::{done, drain};

/// A recording served over loopback (bodies not compared: pydantic-ai's are not eugene's), and
/// the first request's body.
async fn serve(name: &str) -> (agent_llm::cassette::ReplayServer, serde_json::Value) {
    let cassette = Cassette::parse(name, &fixture(name)).unwrap_or_else(|e| panic!("{e}"));
    let first = cassette.interactions()[0].request.body.json().unwrap();
    let server = cassette
        .serve(Matcher::new().ignore_body().ignore_query())
        .await
        .unwrap();
    (server, first)
}

#[tokio::test]
async fn anthropic_cache_reads_and_writes_of_a_recorded_conversation_are_reported() {
    let (server, first) =
        serve("anthropic_vcr_nonstream_cache_read_and_write_two_turns.yaml").await;
    let provider = AnthropicProvider::new("k", first["model"].as_str().unwrap())
        .with_base_url(server.base_url());
    let question = first["messages"][0]["content"][0]["text"].as_str().unwrap();
    let mut transcript = vec![Message::user(question)];
    let request = ChatRequest::new(&transcript).system("You are a helpful assistant.");
    let answer = provider.complete(&request).await.unwrap();
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 3,
            output_tokens: 406,
            cache_read_tokens: 1111,
            cache_write_tokens: 0,
            ..Usage::default()
        }
    );
    transcript.push(answer.message);
    transcript.push(Message::user("Can you summarize that in one sentence?"));
    let request = ChatRequest::new(&transcript).system("You are a helpful assistant.");
    let answer = provider.complete(&request).await.unwrap();
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 3,
            output_tokens: 33,
            cache_read_tokens: 1111,
            cache_write_tokens: 418,
            ..Usage::default()
        },
        "the turn reads the prefix cached before and writes what it added"
    );
    server.assert_all_used();
}

#[tokio::test]
async fn a_compatible_servers_cached_prompt_tokens_are_cache_reads_not_input() {
    let (server, first) =
        serve("openai_chat_vcr_nonstream_compatible_cached_tokens_roundtrip.yaml").await;
    let provider = OpenAiProvider::new("k", first["model"].as_str().unwrap())
        .with_base_url(format!("{}/v1", server.base_url()));
    let tools = vec![ToolDefinition {
        name: "get_weather".into(),
        description: "Get the weather in a city.".into(),
        input_schema: first["tools"][0]["function"]["parameters"].clone(),
        output_schema: None,
    }];
    let mut transcript = vec![Message::user("What is the weather in Paris?")];
    let call = provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    assert_eq!(call.usage.cache_read_tokens, 0);
    let result = agent_core::ToolResult::new(
        &call.message.tool_calls[0],
        Ok(agent_core::SkillOutput::from("Sunny, 22 degrees")),
    );
    transcript.push(call.message);
    transcript.push(Message::tool_result(&result));
    let answer = provider
        .complete(&ChatRequest::new(&transcript).tools(&tools))
        .await
        .unwrap();
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 214 - 64,
            output_tokens: 54,
            cache_read_tokens: 64,
            reasoning_tokens: 20,
            ..Usage::default()
        }
    );
    server.assert_all_used();
}

#[tokio::test]
async fn a_streamed_responses_answer_reports_its_cached_input() {
    let completed = json!({"type": "response.completed", "response": {
        "id": "resp_1", "status": "completed", "model": "gpt-test", "output": [],
        "usage": {"input_tokens": 3000, "output_tokens": 7,
                  "input_tokens_details": {"cached_tokens": 2816},
                  "output_tokens_details": {"reasoning_tokens": 0}}}});
    let sse = format!("event: response.completed\ndata: {completed}\n\n");
    let server = Server::start([Reply::sse(&sse)]).await;
    let transcript = [Message::user("again")];
    let provider = OpenAiResponsesProvider::new("k", "gpt-test").with_base_url(&server.url);
    let (events, error) = drain(provider.stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none(), "{error:?}");
    let usage = done(&events).usage;
    assert_eq!(
        (usage.input_tokens, usage.cache_read_tokens),
        (3000 - 2816, 2816)
    );
}

#[test]
fn both_openai_formats_send_the_cache_key_only_when_there_is_one() {
    let transcript = [Message::user("hi")];
    let keyed = ChatRequest::new(&transcript).cache_key("eugene-run-1");
    let plain = ChatRequest::new(&transcript);
    let chat = OpenAiProvider::new("k", "m");
    let responses = OpenAiResponsesProvider::new("k", "m");
    for body in [
        chat.request_body(&keyed, true),
        responses.request_body(&keyed, false),
    ] {
        assert_eq!(body["prompt_cache_key"], "eugene-run-1", "{body}");
    }
    for body in [
        chat.request_body(&plain, true),
        responses.request_body(&plain, false),
    ] {
        assert!(body.get("prompt_cache_key").is_none(), "{body}");
    }
    let refused = chat
        .with_prompt_cache_key(false)
        .request_body(&keyed, false);
    assert!(refused.get("prompt_cache_key").is_none(), "{refused}");
    let anthropic = AnthropicProvider::new("k", "m").request_body(&keyed, false);
    assert!(anthropic.get("prompt_cache_key").is_none(), "{anthropic}");
}
