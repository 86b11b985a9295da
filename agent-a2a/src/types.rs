//! The A2A 1.0 data model, as its JSON (ProtoJSON) form puts it on the wire: field names in
//! camelCase, enums as their protocol names (`TASK_STATE_WORKING`, `ROLE_USER`), a `oneof` as an
//! object with one key (`{"task": {..}}`), empty fields left out.
//!
//! Only what the JSON-RPC binding of this crate sends or reads is here; unknown fields in what
//! a peer sends are ignored, so a newer peer's additions do not break parsing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version this crate speaks (`Major.Minor`), sent as the `A2A-Version` header and
/// in the agent card's interface.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The `protocolBinding` of the JSON-RPC interface in an agent card.
pub const JSONRPC_BINDING: &str = "JSONRPC";

/// Where an agent card is served, relative to the agent's base URL.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Finished with an answer (terminal).
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Ended in an error (terminal).
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Cancelled (terminal).
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client's next message (interrupted, not terminal).
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// The agent refused the task (terminal).
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for authentication (interrupted, not terminal).
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Not set (or a state this crate does not know).
    #[serde(rename = "TASK_STATE_UNSPECIFIED", other)]
    Unspecified,
}

impl TaskState {
    /// Whether the task can change no more: completed, failed, canceled or rejected.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// Whether a stream of the task ends here: a terminal state, or one that waits for the
    /// client (input or auth required).
    pub fn ends_stream(self) -> bool {
        self.is_terminal() || matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
    /// Not set (or a role this crate does not know).
    #[serde(rename = "ROLE_UNSPECIFIED", other)]
    Unspecified,
}

/// One piece of content: text, raw bytes (base64), a URL or JSON data (exactly one of them),
/// with optional metadata, file name and media type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64 as ProtoJSON writes them (kept as the string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A URL to the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured JSON content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Extra information about the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A file name, for file content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub filename: String,
    /// The media type (`text/plain`, `application/json`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub media_type: String,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// A JSON data part.
    pub fn data(data: Value) -> Self {
        Part {
            data: Some(data),
            media_type: "application/json".into(),
            ..Part::default()
        }
    }
}

/// One message of a conversation between client and agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The message's id, chosen by its sender.
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// The task it belongs to (a client's message continues that task).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Who sent it.
    pub role: Role,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs the message uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Other tasks the message refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with these parts and a new id.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            message_id: crate::ids::new_id(),
            context_id: String::new(),
            task_id: String::new(),
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Message::new(Role::Agent, vec![Part::text(text)])
    }

    /// The text parts joined with newlines.
    pub fn text(&self) -> String {
        parts_text(&self.parts)
    }
}

/// The text parts of `parts`, joined with newlines.
pub fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A task's state, with an optional message and the time it was set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message about it (an error, the question an input-required task asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it was set, ISO 8601 in UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// This state now, with this message.
    pub fn now(state: TaskState, message: Option<Message>) -> Self {
        TaskStatus {
            state,
            message,
            timestamp: Some(crate::ids::now_rfc3339()),
        }
    }
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id, unique within the task.
    pub artifact_id: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// A description for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A unit of work the agent does for a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its id, chosen by the server.
    pub id: String,
    /// The conversation it belongs to.
    #[serde(default)]
    pub context_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What it produced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A change of a task's status, in a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    #[serde(default)]
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A new or growing artifact, in a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    #[serde(default)]
    pub context_id: String,
    /// The artifact, or the piece of it that arrived.
    pub artifact: Artifact,
    /// Whether the parts are added to the artifact of the same id (else they replace it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub append: bool,
    /// Whether this is the artifact's last piece.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_chunk: bool,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Options of a `SendMessage` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// How many history messages to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Answer at once with the task as it is, without waiting for the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub return_immediately: bool,
}

/// The params of `SendMessage` and `SendStreamingMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The result of `SendMessage`: a task, or a message (an agent that answers at once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task the message started or continued.
    Task(Task),
    /// A direct answer, without a task.
    Message(Message),
}

/// One event of a stream (`SendStreamingMessage`, `SubscribeToTask`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The task as it is (the first event of a stream).
    Task(Task),
    /// A direct answer, without a task (it ends the stream).
    Message(Message),
    /// The task's status changed.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact arrived or grew.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// The params of `GetTask`, `CancelTask` and `SubscribeToTask`: the task's id (and, for
/// `GetTask`, how much history to return).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub id: String,
    /// At most this many history messages (the newest); `GetTask` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
}

/// The params of `ListTasks` this server reads (others are ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Only tasks of this conversation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// At most this many tasks (default and maximum 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub page_token: String,
}

/// The result of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The tasks of this page, newest first.
    pub tasks: Vec<Task>,
    /// The token of the next page; empty on the last.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}
