//! The scripted model for tests: [`MockProvider`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::{EventStream, LlmProvider, ProviderError, StreamEvent};
use crate::message::{
    ChatRequest, ChatResponse, Message, ResponseSchema, StopReason, ToolChoice, Usage,
};
use agent_core::call::ToolCall;
use agent_core::schema::ToolDefinition;

/// One scripted answer: a response, or an error.
// A reply is made once per scripted turn and moved once: boxing the response would cost an
// allocation for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum MockReply {
    /// Answer with this.
    Response(ChatResponse),
    /// Fail with this.
    Error(ProviderError),
}

impl MockReply {
    /// A text answer that ends the turn.
    pub fn text(text: impl Into<String>) -> Self {
        MockReply::Response(response(Message::assistant(text), StopReason::EndTurn))
    }

    /// An answer that calls tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        MockReply::text_and_tool_calls("", calls)
    }

    /// An answer with text and tool calls.
    pub fn text_and_tool_calls(
        text: impl Into<String>,
        calls: impl IntoIterator<Item = ToolCall>,
    ) -> Self {
        let message = Message::assistant_with_tool_calls(text, calls.into_iter().collect());
        MockReply::Response(response(message, StopReason::ToolUse))
    }

    /// A failure.
    pub fn error(error: ProviderError) -> Self {
        MockReply::Error(error)
    }

    /// The same reply with this usage.
    pub fn with_usage(self, usage: Usage) -> Self {
        match self {
            MockReply::Response(mut r) => {
                r.usage = usage;
                MockReply::Response(r)
            }
            other => other,
        }
    }
}

fn response(message: Message, stop_reason: StopReason) -> ChatResponse {
    ChatResponse {
        message,
        stop_reason,
        provider_stop_reason: None,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        },
        truncated_tool_calls: Vec::new(),
        model: None,
        id: None,
        provider: None,
    }
}

/// A request as the mock received it (copied, since requests borrow the transcript).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The system prompt.
    pub system: Option<String>,
    /// The messages sent.
    pub messages: Vec<Message>,
    /// The tool definitions sent.
    pub tools: Vec<ToolDefinition>,
    /// The tool choice.
    pub tool_choice: ToolChoice,
    /// The token limit.
    pub max_tokens: u32,
    /// The response schema asked for (native structured output), if any.
    pub response_schema: Option<ResponseSchema>,
}

impl RecordedRequest {
    /// The names of the tools sent.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }
}

/// A scripted model for tests: it answers with the replies it was given, in order, and records
/// every request it received so a test can assert what the runtime sent.
///
/// ```
/// use agent_core::ToolCall;
/// use agent_llm::{ChatRequest, LlmProvider, Message, MockProvider, MockReply};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mock = MockProvider::new([
///     MockReply::tool_calls([ToolCall::new("call_1", "read_file", json!({"path": "a.txt"}))]),
///     MockReply::text("The file says hello."),
/// ]);
/// let transcript = [Message::user("What does a.txt say?")];
/// let first = mock.complete(&ChatRequest::new(&transcript)).await.unwrap();
/// assert_eq!(first.message.tool_calls[0].name, "read_file");
/// assert_eq!(mock.requests()[0].messages[0].content, "What does a.txt say?");
/// # }
/// ```
///
/// Cloning shares the script and the record.
#[derive(Debug, Clone, Default)]
pub struct MockProvider {
    state: Arc<Mutex<State>>,
    /// Reported by [`LlmProvider::model`].
    model: Option<Arc<str>>,
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<MockReply>,
    requests: Vec<RecordedRequest>,
    /// When set, requests are counted but not copied (benchmarks of long runs).
    forget: bool,
    /// Reported by [`LlmProvider::supports_tools`] (inverted, so the default is `true`).
    no_tools: bool,
    /// Reported by [`LlmProvider::supports_response_schema`].
    response_schema: bool,
    answered: usize,
}

impl MockProvider {
    /// A mock that gives these replies, in order.
    pub fn new(replies: impl IntoIterator<Item = MockReply>) -> Self {
        let state = State {
            replies: replies.into_iter().collect(),
            ..State::default()
        };
        MockProvider {
            state: Arc::new(Mutex::new(state)),
            model: None,
        }
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: MockReply) {
        self.lock().replies.push_back(reply);
    }

    /// Stops copying requests (they are still counted): recording copies the whole transcript
    /// each time, which would dominate a benchmark of a long run.
    pub fn without_recording(self) -> Self {
        self.lock().forget = true;
        self
    }

    /// Makes the mock say it supports native structured output
    /// ([`LlmProvider::supports_response_schema`]); by default it says it does not.
    pub fn with_response_schema(self, supported: bool) -> Self {
        self.lock().response_schema = supported;
        self
    }

    /// Makes the mock say it is `model` ([`LlmProvider::model`]), and answer as that model
    /// ([`ChatResponse::model`]): what spans and price tables read. By default it names none.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(Arc::from(model.into()));
        self
    }

    /// Makes the mock say it cannot call tools ([`LlmProvider::supports_tools`]).
    pub fn without_tools(self) -> Self {
        self.lock().no_tools = true;
        self
    }

    /// Every request received so far, in order (empty when recording is off).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn next(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let mut state = self.lock();
        if !state.forget {
            state.requests.push(RecordedRequest {
                system: request.system.map(str::to_owned),
                messages: request.messages.to_vec(),
                tools: request.tools.to_vec(),
                tool_choice: request.tool_choice.clone(),
                max_tokens: request.max_tokens,
                response_schema: request.response_schema.cloned(),
            });
        }
        let answered = state.answered;
        state.answered += 1;
        match state.replies.pop_front() {
            Some(MockReply::Response(mut response)) => {
                if response.model.is_none() {
                    response.model = self.model.as_deref().map(str::to_owned);
                }
                Ok(response)
            }
            Some(MockReply::Error(error)) => Err(error),
            None => Err(ProviderError::Config(format!(
                "the mock provider's script is used up: it had {answered} replies, and request {} asked for another",
                answered + 1
            ))),
        }
    }
}

#[async_trait]
impl LlmProvider for MockProvider {
    fn name(&self) -> &str {
        "mock"
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn supports_tools(&self) -> bool {
        !self.lock().no_tools
    }

    fn supports_response_schema(&self) -> bool {
        self.lock().response_schema
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        self.next(request)
    }

    /// Streams the scripted response as a real provider would: the text word by word, each tool
    /// call started, its arguments, finished; usage; done.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        let result = self.next(request);
        let events: Vec<Result<StreamEvent, ProviderError>> = match result {
            Err(error) => vec![Err(error)],
            Ok(response) => {
                let mut events = Vec::new();
                for word in response.message.content.split_inclusive(' ') {
                    events.push(Ok(StreamEvent::TextDelta(word.to_owned())));
                }
                for (index, call) in response.message.tool_calls.iter().enumerate() {
                    events.push(Ok(StreamEvent::ToolCallStarted {
                        index,
                        id: call.id.to_string(),
                        name: call.name.clone(),
                    }));
                    events.push(Ok(StreamEvent::ToolCallDelta {
                        index,
                        arguments: call.arguments.to_string(),
                    }));
                    events.push(Ok(StreamEvent::ToolCallFinished(call.clone())));
                }
                events.push(Ok(StreamEvent::Usage(response.usage)));
                events.push(Ok(StreamEvent::Done(response)));
                events
            }
        };
        Box::pin(futures::stream::iter(events))
    }
}
