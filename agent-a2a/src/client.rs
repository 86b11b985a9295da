//! [`RemoteAgent`]: a client of one A2A agent over its JSON-RPC interface — the card, the
//! methods, and [`RemoteAgent::ask`], which sends a message and waits for the task to end.
//!
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), agent_a2a::A2aError> {
//! let agent = agent_a2a::RemoteAgent::connect("http://127.0.0.1:8080", Some("<token>")).await?;
//! let reply = agent.ask("What changed since yesterday?").await?;
//! println!("{:?}: {}", reply.state(), reply.text());
//! # Ok(()) }
//! ```
//!
//! Every call is bounded: connecting by [`DEFAULT_CONNECT_TIMEOUT`] (10 s; see
//! [`RemoteAgent::connect_with`]), a whole call —
//! an answer, or a stream from its first byte to its last event — by [`RemoteAgent::timeout`]
//! (5 minutes), and an answer's size by 16 MiB. A hang, a stream that never ends, an answer
//! that is not JSON-RPC or not A2A are errors ([`A2aError`]) that say which, never a panic.

use std::time::Duration;

use agent_llm::sse::{SseError, SseLimits};
use futures::{Stream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::card::AgentCard;
use crate::error::A2aError;
use crate::jsonrpc;
pub use crate::reply::Reply;
use crate::types::{
    AGENT_CARD_PATH, Message, PROTOCOL_VERSION, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskIdParams, TaskState, TaskStatus,
};

/// How long a whole call may take unless [`RemoteAgent::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// How long connecting may take unless [`RemoteAgent::connect_with`] says otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer (or stream event) read.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The most a whole stream of events may bring (its events together), counted as it arrives.
pub const MAX_STREAM_BYTES: u64 = 64 * 1024 * 1024;

/// A remote A2A agent. Cheap to clone (the HTTP client is shared).
#[derive(Clone)]
pub struct RemoteAgent {
    http: reqwest::Client,
    card: AgentCard,
    endpoint: String,
    token: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("name", &self.card.name)
            .field("endpoint", &self.endpoint)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl RemoteAgent {
    /// Reads the agent card at `url` (the agent's base URL, or the card's own URL) and picks its
    /// JSON-RPC 1.x interface; `token`, when given, is sent as `Authorization: Bearer` on every
    /// call (and the card request).
    pub async fn connect(url: &str, token: Option<&str>) -> Result<Self, A2aError> {
        Self::connect_with(url, token, DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT).await
    }

    /// [`RemoteAgent::connect`] with these timeouts: `connect` for the TCP (and TLS) connection,
    /// `timeout` for reading the card and for every call after.
    pub async fn connect_with(
        url: &str,
        token: Option<&str>,
        connect: Duration,
        timeout: Duration,
    ) -> Result<Self, A2aError> {
        Self::connect_allowing(url, token, connect, timeout, &[]).await
    }

    /// [`RemoteAgent::connect_with`], also sending `token` to the agent's endpoint when its card
    /// names one at another origin than `url`'s, if that origin is among `also` (each
    /// `scheme://host:port`, or `scheme://host` for the scheme's port).
    ///
    /// Credentials go only to the origin the application configured: with a token, a card that
    /// names an endpoint at any other origin is [`A2aError::Config`] unless allowed here, and a
    /// redirect to another origin is never followed (its body and token are not sent on).
    pub async fn connect_allowing(
        url: &str,
        token: Option<&str>,
        connect: Duration,
        timeout: Duration,
        also: &[&str],
    ) -> Result<Self, A2aError> {
        let tls = agent_tls::tls_config().map_err(A2aError::Config)?;
        let http = reqwest::Client::builder()
            .connect_timeout(connect)
            .tls_backend_preconfigured(tls)
            // A redirect is followed only within the origin it started from: never a body or a
            // token carried to another.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| origin(first) == origin(attempt.url()));
                if same && attempt.previous().len() < 5 {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
            .build()
            .map_err(|e| A2aError::Config(format!("cannot build the HTTP client: {e}")))?;
        let card_url = if url.ends_with(".json") {
            url.to_owned()
        } else {
            format!("{}{AGENT_CARD_PATH}", url.trim_end_matches('/'))
        };
        let configured = reqwest::Url::parse(&card_url)
            .map(|u| origin(&u))
            .map_err(|e| A2aError::Config(format!("`{url}` is not a URL: {e}")))?;
        let mut request = http.get(&card_url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let method = "agent card";
        let body = within(method, timeout, async {
            let response = request
                .send()
                .await
                .map_err(|e| connect_error(&card_url, &e))?;
            read_body(&card_url, response).await
        })
        .await?;
        let card: AgentCard = serde_json::from_slice(&body)
            .map_err(|e| A2aError::protocol(method, format!("not an agent card: {e}")))?;
        let endpoint = card
            .jsonrpc_url()
            .map_err(|e| A2aError::protocol(method, e))?
            .to_owned();
        if token.is_some() {
            let named = reqwest::Url::parse(&endpoint)
                .map(|u| origin(&u))
                .map_err(|e| {
                    A2aError::protocol(method, format!("the card's endpoint is not a URL: {e}"))
                })?;
            let allowed = also
                .iter()
                .any(|o| reqwest::Url::parse(o).is_ok_and(|u| origin(&u) == named));
            if named != configured && !allowed {
                return Err(A2aError::Config(format!(
                    "the agent card at {card_url} names its endpoint at {}, another origin than \
                     {}: the token is sent only to the origin configured; allow that origin with \
                     RemoteAgent::connect_allowing if it is the agent's",
                    named.display(),
                    configured.display()
                )));
            }
        }
        Ok(RemoteAgent {
            http,
            card,
            endpoint,
            token: token.map(str::to_owned),
            timeout,
        })
    }

    /// The same agent with this limit on every call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The agent's card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The JSON-RPC endpoint in use.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends `text` as a new task and waits until the task ends or waits for input: streamed
    /// when the card says the agent streams, else `SendMessage` (and `GetTask` polls, should the
    /// agent answer before the task ends). The whole wait is bounded by the timeout.
    pub async fn ask(&self, text: &str) -> Result<Reply, A2aError> {
        self.ask_message(Message::user_text(text)).await
    }

    /// [`RemoteAgent::ask`] with a whole message (a decision on an input-required task, say: set
    /// its `task_id`).
    pub async fn ask_message(&self, message: Message) -> Result<Reply, A2aError> {
        let request = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
        };
        let method = "SendStreamingMessage";
        let continues = !request.message.task_id.is_empty();
        within(method, self.timeout, async {
            if self.card.capabilities.streaming == Some(true) {
                return self
                    .follow(self.stream(method, to_value(&request)).await?, continues)
                    .await;
            }
            match self.send_message(&request).await? {
                SendMessageResponse::Message(message) => Ok(Reply::Message(message)),
                SendMessageResponse::Task(mut task) => {
                    let mut pause = Duration::from_millis(100);
                    while !task.status.state.ends_stream() {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(2));
                        task = self.get_task(&task.id).await?;
                    }
                    Ok(Reply::Task(task))
                }
            }
        })
        .await
    }

    /// Aggregates a stream into the reply it ends with. A stream that `continues` a task waiting
    /// for input may start with the task as it was (still waiting, as the Python SDK sends it),
    /// which does not end it, or with a change of the task (a status or artifact update).
    async fn follow(
        &self,
        events: impl Stream<Item = Result<StreamResponse, A2aError>>,
        continues: bool,
    ) -> Result<Reply, A2aError> {
        let mut events = std::pin::pin!(events);
        let mut task: Option<Task> = None;
        while let Some(event) = events.next().await {
            let event = event?;
            match (&mut task, &event) {
                (None, StreamResponse::Message(message)) => {
                    return Ok(Reply::Message(message.clone()));
                }
                (None, StreamResponse::Task(first)) => {
                    task = Some(first.clone());
                    if continues && !first.status.state.is_terminal() {
                        continue;
                    }
                }
                (Some(task), event) => crate::tasks::apply(task, event),
                // A continued task is known: its stream may start with what changes.
                (None, StreamResponse::StatusUpdate(update)) if continues => {
                    task = Some(known(&update.task_id, &update.context_id, &event));
                }
                (None, StreamResponse::ArtifactUpdate(update)) if continues => {
                    task = Some(known(&update.task_id, &update.context_id, &event));
                }
                (None, _) => {
                    return Err(A2aError::protocol(
                        "SendStreamingMessage",
                        "the stream's first event is not the task",
                    ));
                }
            }
            if let Some(task) = &task
                && task.status.state.ends_stream()
            {
                return Ok(Reply::Task(task.clone()));
            }
        }
        Err(A2aError::protocol(
            "SendStreamingMessage",
            match task {
                Some(task) => format!(
                    "the stream ended while the task was {:?}, before it completed",
                    task.status.state
                ),
                None => "the stream ended without an event".into(),
            },
        ))
    }

    /// `SendMessage`.
    pub async fn send_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        self.call("SendMessage", request).await
    }

    /// `GetTask`.
    pub async fn get_task(&self, id: &str) -> Result<Task, A2aError> {
        let params = TaskIdParams {
            id: id.to_owned(),
            history_length: None,
        };
        self.call("GetTask", &params).await
    }

    /// `CancelTask`.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, A2aError> {
        let params = TaskIdParams {
            id: id.to_owned(),
            history_length: None,
        };
        self.call("CancelTask", &params).await
    }

    /// `SendStreamingMessage`: the stream of events (bounded by the timeout as a whole).
    pub async fn send_streaming(
        &self,
        request: &SendMessageRequest,
    ) -> Result<impl Stream<Item = Result<StreamResponse, A2aError>> + Send + use<>, A2aError> {
        let method = "SendStreamingMessage";
        within(method, self.timeout, self.stream(method, to_value(request))).await
    }

    /// `SubscribeToTask`: the task's live stream.
    pub async fn subscribe(
        &self,
        id: &str,
    ) -> Result<impl Stream<Item = Result<StreamResponse, A2aError>> + Send + use<>, A2aError> {
        let params = TaskIdParams {
            id: id.to_owned(),
            history_length: None,
        };
        let method = "SubscribeToTask";
        within(method, self.timeout, self.stream(method, to_value(&params))).await
    }

    /// Calls `method` and reads its result as `T`.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: &impl Serialize,
    ) -> Result<T, A2aError> {
        let url = &self.endpoint;
        let body = within(method, self.timeout, async {
            let response = self
                .post(method, params, "application/json")
                .send()
                .await
                .map_err(|e| connect_error(url, &e))?;
            read_body(url, response).await
        })
        .await?;
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| A2aError::protocol(method, format!("the answer is not JSON: {e}")))?;
        let result = rpc_result(method, value)?;
        serde_json::from_value(result)
            .map_err(|e| A2aError::protocol(method, format!("unexpected result: {e}")))
    }

    fn post(&self, method: &str, params: &impl Serialize, accept: &str) -> reqwest::RequestBuilder {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": crate::ids::new_id(),
            "method": method,
            "params": params,
        });
        let mut request = self
            .http
            .post(&self.endpoint)
            .header("A2A-Version", PROTOCOL_VERSION)
            .header(reqwest::header::ACCEPT, accept)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// Opens a stream; an agent that answers with plain JSON (an error) gives that error.
    async fn stream(
        &self,
        method: &str,
        params: Value,
    ) -> Result<impl Stream<Item = Result<StreamResponse, A2aError>> + Send + use<>, A2aError> {
        let started = tokio::time::Instant::now();
        let url = self.endpoint.clone();
        let response = self
            .post(method, &params, "text/event-stream")
            .send()
            .await
            .map_err(|e| connect_error(&url, &e))?;
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream || !response.status().is_success() {
            let body = read_body(&url, response).await?;
            let value: Value = serde_json::from_slice(&body).map_err(|e| {
                A2aError::protocol(method, format!("neither an event stream nor JSON: {e}"))
            })?;
            rpc_result(method, value)?;
            return Err(A2aError::protocol(
                method,
                "the agent answered a stream request with a single result",
            ));
        }
        let method = method.to_owned();
        // Bounded as the bytes arrive: each event's size, the stream's, and its deadline,
        // checked on every chunk (a peer that always has bytes ready still meets them).
        let limits = SseLimits {
            max_event_bytes: MAX_RESPONSE_BYTES,
            idle: None,
            deadline: Some(started + self.timeout),
            max_stream_bytes: Some(MAX_STREAM_BYTES),
        };
        let timeout = self.timeout;
        let events = agent_llm::sse::events(response.bytes_stream(), limits);
        let events = events.map(move |event| {
            let event = event.map_err(|error| match error {
                SseError::Deadline => A2aError::Timeout {
                    method: method.clone(),
                    after: timeout,
                },
                SseError::Broken(message) => A2aError::Connect {
                    url: url.clone(),
                    message: format!("the event stream broke: {message}"),
                },
                other => A2aError::protocol(&method, other.to_string()),
            })?;
            let value: Value = serde_json::from_str(&event.data)
                .map_err(|e| A2aError::protocol(&method, format!("an event is not JSON: {e}")))?;
            let result = rpc_result(&method, value)?;
            serde_json::from_value(result)
                .map_err(|e| A2aError::protocol(&method, format!("unexpected event: {e}")))
        });
        Ok(events)
    }
}

fn to_value(params: &impl Serialize) -> Value {
    serde_json::to_value(params).expect("protocol types serialize")
}

/// The result of a JSON-RPC answer, or its error.
fn rpc_result(method: &str, value: Value) -> Result<Value, A2aError> {
    match jsonrpc::read_response(value) {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(error)) => Err(A2aError::Rpc {
            method: method.to_owned(),
            code: error.code,
            message: error.message,
        }),
        Err(why) => Err(A2aError::protocol(method, why)),
    }
}

async fn within<T>(
    method: &str,
    timeout: Duration,
    work: impl Future<Output = Result<T, A2aError>>,
) -> Result<T, A2aError> {
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(A2aError::Timeout {
                method: method.to_owned(),
                after: timeout,
            })
        })
}

fn connect_error(url: &str, error: &reqwest::Error) -> A2aError {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    A2aError::Connect {
        url: url.to_owned(),
        message,
    }
}

/// The body of a success response, at most [`MAX_RESPONSE_BYTES`]; an error status is
/// [`A2aError::Status`] with the start of the body.
async fn read_body(url: &str, response: reqwest::Response) -> Result<Vec<u8>, A2aError> {
    let status = response.status();
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| connect_error(url, &e))?;
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(A2aError::Protocol {
                method: url.to_owned(),
                message: "the answer is over 16 MiB".into(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        return Err(A2aError::Status {
            url: url.to_owned(),
            status: status.as_u16(),
            body: text.chars().take(300).collect(),
        });
    }
    Ok(body)
}

/// The task a continued stream changes, from its first change: working, then `event`.
fn known(id: &str, context_id: &str, event: &StreamResponse) -> Task {
    let mut task = Task {
        id: id.to_owned(),
        context_id: context_id.to_owned(),
        status: TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: None,
        },
        artifacts: Vec::new(),
        history: Vec::new(),
        metadata: None,
    };
    crate::tasks::apply(&mut task, event);
    task
}

/// A URL's origin: its scheme, host and port (the scheme's own when none is written).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin(String, String, Option<u16>);

impl Origin {
    fn display(&self) -> String {
        match self.2 {
            Some(port) => format!("{}://{}:{port}", self.0, self.1),
            None => format!("{}://{}", self.0, self.1),
        }
    }
}

fn origin(url: &reqwest::Url) -> Origin {
    Origin(
        url.scheme().to_owned(),
        url.host_str().unwrap_or_default().to_ascii_lowercase(),
        url.port_or_known_default(),
    )
}
