use agent_core::ToolCall;
use agent_llm::{
    ChatRequest, LlmProvider, Message, MockProvider, MockReply, ProviderError, StreamEvent,
};
use serde_json::json;

use crate::{done, drain};

#[tokio::test]
async fn the_mock_answers_in_order_records_requests_and_scripts_errors() {
    let mock = MockProvider::new([
        MockReply::error(ProviderError::Config("scripted failure".into())),
        MockReply::text_and_tool_calls("Looking.", [ToolCall::new("c1", "list_dir", json!({}))]),
    ]);
    let transcript = [Message::user("hi")];
    let error = mock
        .complete(&ChatRequest::new(&transcript).system("sys"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid provider configuration: scripted failure"
    );
    let (events, error) = drain(mock.stream(&ChatRequest::new(&transcript))).await;
    assert!(error.is_none());
    assert_eq!(events[0], StreamEvent::TextDelta("Looking.".into()));
    assert!(
        events.contains(&StreamEvent::ToolCallFinished(ToolCall::new(
            "c1",
            "list_dir",
            json!({})
        )))
    );
    assert_eq!(done(&events).message.content, "Looking.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].system.as_deref(), Some("sys"));
    let used_up = mock
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap_err();
    assert!(
        used_up.to_string().contains("script is used up"),
        "{used_up}"
    );
}
