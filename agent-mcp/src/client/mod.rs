//! The client half: using an MCP server's tools as skills, and its questions, sampling requests,
//! resources and prompts: [`McpSkills`]. (Serving skills is the other half, [`crate::server`].)
//!
//! ```no_run
//! use agent_core::Registry;
//! use agent_mcp::McpSkills;
//!
//! # #[tokio::main] async fn main() -> Result<(), agent_mcp::McpError> {
//! let github = McpSkills::connect_stdio("npx", ["-y", "@modelcontextprotocol/server-github"])
//!     .await?
//!     .with_prefix("github_");
//! let mut registry = Registry::new();
//! let added = github.add_to(&mut registry)?; // ["github_create_issue", ...]
//! # Ok(()) }
//! ```
//!
//! - **Names.** A skill is named after the remote tool, with the prefix given to
//!   [`McpSkills::with_prefix`] in front; characters a model API refuses in a tool name
//!   (anything but `a-z A-Z 0-9 _ -`) become `_` and the name is cut at 64 bytes. Calls go to
//!   the server under the tool's own name.
//! - **Schemas and descriptions** are the server's (an input schema without `"type"` is read as
//!   an object schema). Arguments must be a JSON object (`null` and `""` mean `{}`); the
//!   server validates the rest.
//! - **Flags** come from the tool's annotations and fail closed: read-only only with
//!   `readOnlyHint: true`; otherwise destructive unless `destructiveHint: false` (the spec's
//!   default is `true`). Read-only tools may run concurrently. Idempotent with
//!   `idempotentHint: true` (or read-only): a durable run runs such a call again after a crash,
//!   and no other.
//! - **Output schemas** are the server's: a tool's `outputSchema` is the skill's
//!   [`DynSkill::output_schema`], so it reaches the registry's `ToolDefinition` and
//!   `SkillMetadata` as the server wrote it (a `{"result": ...}` wrapper included, see
//!   [`crate::server`]).
//! - **Results.** A result with `structuredContent` is [`SkillOutput::Json`](agent_core::SkillOutput::Json) of it, as the server
//!   sent it: the model reads it as compact JSON, hooks see the structured value. A
//!   `{"result": VALUE}` wrapper is kept, not unwrapped: it is what the tool's output schema
//!   describes, and a wrapper the server meant as data is indistinguishable from one added for
//!   the protocol. A result with images, audio or resources with a `blob` is
//!   [`SkillOutput::Content`](agent_core::SkillOutput::Content), with or without
//!   `structuredContent` (whose JSON the spec has the text blocks carry): its blocks as parts, in order,
//!   the media decoded and checked against [`McpSkills::with_media_limits`] (one part refused,
//!   by its base64's length before decoding, as invalid base64 or as bytes of another type than
//!   it says, refuses the result with an error); so the model sees the image the tool returned
//!   ([`crate::media`] has the mapping). Otherwise, text content is joined with newlines. A
//!   server's sampling request carries its images and audio to the model the same way
//!   ([`Sampling::media_limits`]), and `read_resource` a blob of an image, audio or PDF type. A
//!   result with `isError: true` is a
//!   [`SkillError::Tool`](agent_core::SkillError::Tool) with its text (or its `structuredContent`).
//! - **Failures never hang.** Every call has a time limit ([`McpSkills::with_call_timeout`],
//!   default [`DEFAULT_CALL_TIMEOUT`]). A server process that has exited gives a
//!   [`SkillError::Tool`](agent_core::SkillError::Tool) that says so, with its exit status; a connection lost otherwise gives
//!   a [`SkillError::Transient`](agent_core::SkillError::Transient) (retried by the registry; a broken HTTP event stream is
//!   reconnected three times first, not until the time limit); a JSON-RPC error from the server is
//!   a [`SkillError::Tool`](agent_core::SkillError::Tool) with its message. [`McpSkills::reconnect`] starts the server again
//!   (or opens a new HTTP session); the skills already in a registry use the new connection.
//!
//! # Questions from the server (elicitation)
//!
//! A tool may ask the user for input while it runs (`elicitation/create`). The call then
//! suspends ([`SkillError::Suspended`](agent_core::SkillError::Suspended)) and the run pauses as
//! for an approval: its pending call is named [`ELICITATION_CALL`], its id is the tool call's
//! followed by `/elicitation` (`c1/elicitation`; a server on the 2026 protocol asks through
//! input requests, which may hold several questions, and those are numbered, `c1/elicitation-1`,
//! `c1/elicitation-2`, even when there is one), its arguments are the [`Elicitation`] (form:
//! message and requested schema; URL: message and page), its reason the server's words. A
//! [`Decision`](agent_core::Decision) answers it, as the table of [`ElicitationAnswer`] says:
//! `Edit(content)` accepts with that content, `Approve` accepts without content (a URL, an
//! empty form), `Deny` declines, `Edit({"$action": "cancel"})` cancels.
//!
//! - **Checked before sending.** Accepted content must be an object the requested schema
//!   accepts, at most [`MAX_ANSWER_BYTES`] as JSON; otherwise nothing is sent, and the run
//!   pauses again on the same question with the reason ([`AnswerError`]'s text) in front of it
//!   (`your answer was not sent (...)`).
//! - **Each question to its own call.** A question belongs to the `tools/call` request it was
//!   asked during. Over streamable HTTP the server sends it on that request's response stream,
//!   and rmcp says which; so calls on one connection run at once and each gets its own
//!   questions. Over stdio (and any transport given to [`McpSkills::connect_transport`])
//!   JSON-RPC has nothing that ties a server's request to one of ours, so calls on one
//!   connection take turns while they wait on the server: one call waits at a time, and a call
//!   paused on a question does not hold the turn (one that hangs holds it until its time limit;
//!   the wait for the turn counts in the next call's). A question that belongs to no waiting
//!   call is cancelled, with a warning.
//! - **Open requests end with their process.** A question asked during an open request is
//!   answered on that request, which lives in this process and this connection: the pause is
//!   answered in-process (the paused state names the open call by a key only this process
//!   made). Continued after a restart, or after [`McpSkills::reconnect`] or
//!   [`McpSkills::close`], the call fails with an error saying the question expired, that
//!   nothing was sent, and to call the tool again. At most [`MAX_OPEN_ELICITATIONS`] calls of a
//!   connection stay open on questions; one more closes the oldest.
//! - **`input_required` survives a restart.** With [`Handshake::Discover`]
//!   ([`McpSkills::connect_command_with`]), a server that speaks MCP 2026-07-28 asks with an
//!   `input_required` result instead: the call ends, the questions and the server's
//!   `requestState` are kept in the paused run's state, and continuing (in any process, on a new
//!   connection) sends the call again with the answers. Sampling requests in such a result are
//!   answered by the hook at once (one it would ask a person about is refused); roots are
//!   answered with none. At most 16 requests per result and rmcp's limit of rounds.
//!   [`Handshake::Initialize`] stays the default: every server speaks it, and on it a server
//!   asks during the request.
//!
//! # The server's model requests (sampling)
//!
//! A server's `sampling/createMessage` is refused (the server gets an error that says why)
//! unless [`McpSkills::with_sampling`] gave a [`Sampling`]: its model and its hook.
//! [`Sampling::asking`] asks a person about every request: the call suspends like a question,
//! with a pending call named [`SAMPLING_CALL`] (id `CALL/sampling`) whose arguments are the
//! request (`system`, `messages`, `max_tokens`); `Approve` lets the model answer, `Deny`
//! refuses, nothing reaches the model before. [`Sampling::new`] takes a [`SamplingHook`]
//! instead, which allows, denies, edits or asks ([`SamplingVerdict`]) per request. A request
//! that comes when no call waits on the server is answered if the hook allows it, and refused if
//! it would ask a person (there is no run to pause). A request
//! over [`MAX_SAMPLING_MESSAGES`] messages or [`MAX_SAMPLING_BYTES`] of text is refused, the
//! answer is at most [`Sampling::max_tokens`] long, and images or audio in a request reach the
//! model as a bracketed description. The tokens are counted per connection
//! ([`McpSkills::sampling_usage`]), in a `tracing` event per answer (`input_tokens`,
//! `output_tokens`), and in the run of the call the request came with
//! ([`agent_llm::report_model_use`]): its usage, its cost, its `agent_steps` (one model call
//! each) and its per-agent record (`RunOutcome::agents`) under [`sampling_source`]
//! (`mcp sampling › LABEL`), so its token and money budgets count them too. A request a person
//! approved counts in the run that continued with the approval; one answered in a nested agent's
//! call counts in that agent's run, which passes it up. The cost is the run's prices for the
//! sampling provider's model (the answer's model, else the provider's); a model the run's table
//! has no price for is an unpriced call (`Cost::unpriced_calls`), never $0. A request that comes
//! when no call waits on the server (or on a connection used outside a run) belongs to no run:
//! it is counted only per connection and in the `tracing` event. In a durable run the use is
//! journaled with the call's result and counted from that record, so a replay, which answers the
//! call from the journal without asking the server again, counts it once, as the first attempt
//! did.
//!
//! # Resources, prompts and changing lists
//!
//! [`McpSkills::resources`], [`McpSkills::resource_templates`] and [`McpSkills::prompts`] read
//! the server's lists (at most [`MAX_LISTED`] each), [`McpSkills::read_resource`] a resource,
//! and [`McpSkills::get_prompt`] a prompt's messages, ready for a conversation. The model reads
//! resources only through the skill [`McpSkills::with_resource_skill`] adds, named
//! `read_resource` (with the prefix), which lists the server's resources and templates in its
//! description and gives at most [`MAX_RESOURCE_BYTES`] of text.
//!
//! The server's `notifications/{tools,resources,prompts}/list_changed` set
//! [`McpSkills::changes`]; reading a list clears its flag.
//!
//! # A tool list that changes while a run uses it
//!
//! [`McpSkills::add_to`] adds the tools as a [`LiveSkills`] set, which the registry reads anew
//! at each model turn and each batch of calls, so a runtime that holds the registry follows the
//! server: when the server announces `notifications/tools/list_changed`, the list is read again
//! and the set's skills are replaced. The model is offered the new tools from its next turn,
//! can call them, and is no longer offered the ones the server removed (a call of one gets the
//! registry's unknown-skill error, naming the tools it has).
//!
//! - **In place before the answer.** The announcements are counted as the transport reads them,
//!   in the order the server sent its messages. A call of the server's tools that ends after the
//!   count grew (a tool that changed the list, then answered) waits for the list to be read
//!   before its result goes back, so the model's very next turn has the change: at most 5
//!   seconds (or the call's time limit, if shorter); past that the result goes back and the change
//!   follows. Over streamable HTTP this holds for announcements sent on the call's own response
//!   stream, which is where the Python SDK sends those made during a call.
//! - **Made on the server's own.** An announcement no call waits on wakes the connection's
//!   reader, which reads the list 100 ms later: a burst of announcements is read once (a
//!   thousand sent during one call were read once in the test), and at most one read runs at a
//!   time, each within [`CONNECT_TIMEOUT`]. A failed read leaves the set as it was until the next
//!   announcement.
//! - **Names.** A new tool whose name the registry already has (a skill of its own, or of an
//!   earlier set) is not offered; the registry's keeps the name. A tool no registry can take (a
//!   name given twice, an input schema that is not an object's) is left out with a warning, and
//!   the rest are put in place.
//! - **Resources.** The `read_resource` skill of [`McpSkills::with_resource_skill`] lists the
//!   server's resources in its description; a `notifications/resources/list_changed` reads them
//!   again the same way (counted in the transport, in place before the answer of the call that
//!   announced it), so the model's next turn is shown the new list.
//! - **Reconnecting** ([`McpSkills::reconnect`]) reads the list on the new connection, and
//!   [`McpSkills::refresh_tools`] reads it when the application asks; both update the sets too.
//! - **Nothing kept alive.** The connection follows its sets through weak handles: dropping the
//!   registries (and this value) still stops a child process.
//!
//! [`McpSkills::skills`] gives plain skills of the list as read last, which do not change; a
//! registry made of them keeps them (a tool the server removed answers with the server's error).

use std::ffi::OsStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::content::MediaLimits;
use agent_core::registry::is_valid_name;
use agent_core::{DynSkill, LiveSkills, Registry};
use rmcp::RoleClient;
use rmcp::model::{Implementation, Tool};
use rmcp::transport::IntoTransport;
use serde_json::Value;

use crate::error::McpError;

mod answer_error;
mod call;
mod changes;
mod connection;
mod elicitation;
mod follow;
mod handler;
mod limits;
mod lists;
mod make;
#[cfg(feature = "oauth")]
pub mod oauth;
mod open;
mod pages;
mod resource_skill;
mod sampling;
mod skill;
mod watched;

use connection::{CommandSpec, Connection, Live, Source, connect_http, handshake};
use handler::{Handler, Shared};
pub use handler::{Handshake, ListChanges};
pub use limits::{CONNECT_TIMEOUT, MAX_LISTED};
use make::Make;
pub use make::skill_name;
use open::OpenCalls;

pub use answer_error::AnswerError;
pub use elicitation::{
    ACTION_KEY, ELICITATION_CALL, Elicitation, ElicitationAnswer, MAX_ANSWER_BYTES,
};
pub use open::MAX_OPEN_ELICITATIONS;
pub use resource_skill::MAX_RESOURCE_BYTES;
pub use sampling::{
    MAX_SAMPLING_BYTES, MAX_SAMPLING_MESSAGES, SAMPLING_CALL, Sampling, SamplingHook,
    SamplingRequest, SamplingVerdict, sampling_source,
};

fn handler(shared: &Arc<Shared>) -> Handler {
    Handler {
        shared: shared.clone(),
    }
}
pub use skill::{from_call_tool_result, from_call_tool_result_with};

/// How long one call to a remote tool may take unless [`McpSkills::with_call_timeout`] says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The tools of one MCP server, ready to be added to a [`Registry`] as skills. See the
/// [module docs](self).
///
/// The connection is shared by every skill made from it and lives as long as the longest-lived of
/// them (or this value); a child process is killed when the last one is dropped.
pub struct McpSkills {
    connection: Arc<Connection>,
    tools: Vec<Tool>,
    make: Make,
}

impl McpSkills {
    /// Starts `command` with `args` as a child process, speaks MCP over its stdin and stdout
    /// (its stderr is inherited), and lists its tools.
    pub async fn connect_stdio<I, S>(command: impl AsRef<OsStr>, args: I) -> Result<Self, McpError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = std::process::Command::new(command);
        cmd.args(args);
        McpSkills::connect_command(cmd).await
    }

    /// Like [`McpSkills::connect_stdio`] with a prepared command: its program, arguments,
    /// environment and working directory are used (its stdio settings are not), and used again
    /// by [`McpSkills::reconnect`].
    pub async fn connect_command(command: std::process::Command) -> Result<Self, McpError> {
        McpSkills::connect_command_with(command, Handshake::Initialize).await
    }

    /// Like [`McpSkills::connect_command`], starting the session (and every reconnection) with
    /// `handshake`: [`Handshake::Discover`] speaks MCP 2026-07-28 with a server that does, whose
    /// questions then survive a restart of the application (see the [module docs](self)).
    pub async fn connect_command_with(
        command: std::process::Command,
        handshake: Handshake,
    ) -> Result<Self, McpError> {
        let spec = CommandSpec::from(&command);
        let label = spec.label();
        let shared = Shared::with_handshake(label.clone(), handshake);
        let live = spec.connect(&label, handler(&shared)).await?;
        McpSkills::start(label, Source::Command(spec), live, shared).await
    }

    /// Connects to an MCP server over streamable HTTP at `url` (`http://` or `https://`) and
    /// lists its tools.
    pub async fn connect_http(url: impl Into<String>) -> Result<Self, McpError> {
        McpSkills::connect_http_with(url.into(), None).await
    }

    /// Like [`McpSkills::connect_http`], for a server that requires a bearer token (as
    /// [`McpServer::serve_http`](crate::McpServer::serve_http) does): every request carries
    /// `Authorization: Bearer <token>`, reconnections included.
    pub async fn connect_http_with_token(
        url: impl Into<String>,
        token: impl Into<String>,
    ) -> Result<Self, McpError> {
        McpSkills::connect_http_with(url.into(), Some(token.into())).await
    }

    async fn connect_http_with(url: String, token: Option<String>) -> Result<Self, McpError> {
        let label = format!("at {url}");
        let shared = Shared::new(label.clone());
        let live = connect_http(&url, token.as_deref(), &label, handler(&shared)).await?;
        McpSkills::start(label, Source::Http { url, token }, live, shared).await
    }

    /// Speaks MCP over a transport that is already open (a `tokio::io::duplex`, a socket, any of
    /// rmcp's transports) and lists the server's tools. `name` names the server in messages.
    /// Such a connection cannot be [reconnected](McpSkills::reconnect).
    pub async fn connect_transport<T, E, A>(
        name: impl Into<String>,
        transport: T,
    ) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let label = format!("`{}`", name.into());
        let shared = Shared::new(label.clone());
        let live = handshake(&label, transport, None, handler(&shared)).await?;
        McpSkills::start(label, Source::Fixed, live, shared).await
    }

    async fn start(
        label: String,
        source: Source,
        live: Live,
        shared: Arc<Shared>,
    ) -> Result<Self, McpError> {
        // Only the streamable-HTTP client tells which call a server's question belongs to.
        shared.set_streams_tell(match &source {
            Source::Http { .. } => true,
            Source::Custom(again) => again.streams_tell(),
            Source::Command(_) | Source::Fixed => false,
        });
        let connection = Arc::new(Connection {
            label,
            source,
            live: Mutex::new(None),
            shared,
            open: Mutex::new(OpenCalls::default()),
        });
        let tools = follow::list_tools(&connection.label, live.service.peer()).await?;
        *connection.lock() = Some(live);
        changes::spawn_reader(&connection);
        Ok(McpSkills {
            connection,
            tools,
            make: Make {
                prefix: String::new(),
                call_timeout: DEFAULT_CALL_TIMEOUT,
                defer: false,
                resource_skill: None,
                media_limits: MediaLimits::default(),
            },
        })
    }

    /// Puts `prefix` in front of every skill's name (`github_` makes `create_issue`
    /// `github_create_issue`), so two servers' tools cannot collide.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.make.prefix = prefix.into();
        self
    }

    /// The time limit of one call; over it, the call fails with [`SkillError::Timeout`](agent_core::SkillError::Timeout) and the
    /// server is told to cancel it.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.make.call_timeout = timeout;
        self
    }

    /// What the media in the server's results (images, audio, resources with a `blob`) and in
    /// the resources the `read_resource` skill reads is checked against before it reaches the
    /// model ([`MediaLimits::default`] unless set): a part over
    /// [`MediaLimits::max_part_bytes`] is refused by its base64's length, before it is decoded.
    /// See [`crate::media`].
    pub fn with_media_limits(mut self, limits: MediaLimits) -> Self {
        self.make.media_limits = limits;
        self
    }

    /// Makes every skill deferred: hidden from the model until `tool_search` loads it (useful for
    /// servers with many tools). `tool_search` also matches the server's name.
    pub fn deferred(mut self, defer: bool) -> Self {
        self.make.defer = defer;
        self
    }

    /// Adds a skill `read_resource` (with the prefix, like the tools) that reads one of the
    /// server's resources by URI; its description lists the resources and templates the server
    /// has now. The model gets at most [`MAX_RESOURCE_BYTES`] of a resource's text (the rest is
    /// cut, saying so), an image, audio or PDF blob as a media part (checked against
    /// [`McpSkills::with_media_limits`]), and a description of other binary contents. Off by
    /// default: a server's
    /// resources are the application's to offer.
    pub async fn with_resource_skill(mut self) -> Result<Self, McpError> {
        self.connection
            .shared
            .resources_changed
            .store(false, std::sync::atomic::Ordering::SeqCst);
        let peer = self.live_peer()?;
        let uris = pages::resource_uris(&self.connection.label, &peer).await?;
        self.make.resource_skill = Some(uris);
        Ok(self)
    }

    /// Answers the server's sampling requests (`sampling/createMessage`) with `sampling`'s
    /// model, after its hook allowed each. Without it every request is refused with a message
    /// that says so.
    pub fn with_sampling(self, sampling: Sampling) -> Self {
        self.connection.shared.sampling.set(Some(sampling));
        self
    }

    /// The tokens the model used answering this server's sampling requests, and how many it
    /// answered.
    pub fn sampling_usage(&self) -> (agent_llm::Usage, u64) {
        self.connection.shared.sampling.usage()
    }

    /// How many calls are open on a server's question (or a sampling request a person is asked
    /// about), waiting for a person's answer.
    pub fn open_elicitations(&self) -> usize {
        self.connection
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// The tools the server listed when connecting, as it described them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The names the skills get: each tool's name with the prefix, made valid (and
    /// `read_resource`'s, with [`McpSkills::with_resource_skill`]).
    pub fn names(&self) -> Vec<String> {
        self.make.names(&self.tools)
    }

    /// What the server said about itself in the handshake, if anything.
    pub fn server_info(&self) -> Option<Implementation> {
        self.connection.server_info()
    }

    /// One skill for each tool (and `read_resource`, with [`McpSkills::with_resource_skill`]),
    /// of the tools listed when connecting (or by [`McpSkills::refresh_tools`]); they do not
    /// change when the server changes its list. [`McpSkills::add_to`] and
    /// [`McpSkills::live_skills`] give skills that do.
    pub fn skills(&self) -> Vec<Arc<dyn DynSkill>> {
        self.make
            .skills(&self.connection, &self.tools, self.resource_uris())
    }

    /// The skills of [`McpSkills::skills`] as a [`LiveSkills`] set that follows the server's
    /// tool list: when the server says the list changed (`notifications/tools/list_changed`),
    /// it is read again and the set's skills replaced (see the [module docs](self)). For a
    /// registry, [`McpSkills::add_to`] does this and checks the names first.
    pub fn live_skills(&self) -> Result<LiveSkills, McpError> {
        let connection = Arc::downgrade(&self.connection);
        let make = self.make.clone();
        // Weak both ways: the connection does not keep the set alive, nor the set's maker the
        // connection (the set's skills do, as long as a registry holds them).
        let skills = move |tools: &[Tool], uris: &[String]| match connection.upgrade() {
            Some(connection) => make.skills(&connection, tools, uris),
            None => Vec::new(),
        };
        let follow = &self.connection.shared.follow;
        let resources = self.make.resource_skill.is_some();
        Ok(follow.follow(
            &self.tools,
            self.resource_uris(),
            resources,
            Box::new(skills),
        )?)
    }

    /// The resource URIs `read_resource` lists, as read by [`McpSkills::with_resource_skill`]
    /// (none without it).
    fn resource_uris(&self) -> &[String] {
        self.make.resource_skill.as_deref().unwrap_or_default()
    }

    /// Adds the server's tools to `registry` as a [`LiveSkills`] set that follows the server's
    /// tool list ([`McpSkills::live_skills`]), and returns the names added; or adds none and
    /// says which name cannot be added (taken, invalid even after cleaning, or with an input
    /// schema that is not an object's). Names are checked against the tools listed now; a tool
    /// the server adds later under a name the registry already has is not offered (the
    /// registry's skill keeps the name), and one with a name or schema no registry takes is
    /// left out with a warning.
    pub fn add_to(&self, registry: &mut Registry) -> Result<Vec<String>, McpError> {
        let skills = self.skills();
        let mut seen = std::collections::HashSet::new();
        for skill in &skills {
            let name = skill.name();
            if !is_valid_name(name) {
                return Err(agent_core::RegistryError::InvalidName {
                    name: name.to_owned(),
                }
                .into());
            }
            // The registry refuses a schema that is not an object's only once some are added.
            let schema = skill.input_schema();
            if schema.get("type") != Some(&Value::from("object")) {
                return Err(agent_core::RegistryError::InputNotObject {
                    name: name.to_owned(),
                    schema: schema.to_string(),
                }
                .into());
            }
            // The registry's own skills, built-ins included, come before a live set's.
            if registry.contains(name) || !seen.insert(name.to_owned()) {
                return Err(agent_core::RegistryError::Duplicate {
                    name: name.to_owned(),
                    first: registry.location(name),
                    second: None,
                }
                .into());
            }
        }
        let names = skills.iter().map(|skill| skill.name().to_owned()).collect();
        registry.add_live(self.live_skills()?);
        Ok(names)
    }

    /// Whether the connection is open (the server may still have exited a moment ago).
    pub fn is_connected(&self) -> bool {
        self.connection.lock().as_ref().is_some_and(|live| {
            !live.service.peer().is_transport_closed() && !live.service.is_closed()
        })
    }

    /// Connects again the way the first connection was made (a new child process, or a new HTTP
    /// session) and closes the old connection. The skills made before use the new one. The tool
    /// list is read again for the live sets ([`McpSkills::add_to`]), which then offer what the
    /// new connection has (a failed read leaves them as they were, with a warning); plain skills
    /// ([`McpSkills::skills`]) stay as they are, and one the server no longer has answers with its
    /// error.
    pub async fn reconnect(&self) -> Result<(), McpError> {
        let live = match &self.connection.source {
            Source::Command(spec) => {
                spec.connect(&self.connection.label, self.connection.handler())
                    .await?
            }
            Source::Http { url, token } => {
                connect_http(
                    url,
                    token.as_deref(),
                    &self.connection.label,
                    self.connection.handler(),
                )
                .await?
            }
            Source::Custom(again) => {
                again
                    .connect(&self.connection.label, self.connection.handler())
                    .await?
            }
            Source::Fixed => {
                return Err(McpError::NotReconnectable {
                    server: self.connection.label.clone(),
                });
            }
        };
        let peer = live.service.peer().clone();
        let old = self.connection.lock().replace(live);
        // Questions asked on the old connection cannot be answered on the new one.
        self.connection.close_open_calls();
        if let Some(old) = old {
            old.shut_down().await;
        }
        // The server may have other tools now; the live sets follow it.
        let follow = &self.connection.shared.follow;
        if let Err(error) = follow.refresh(&self.connection.label, &peer).await {
            tracing::warn!(server = self.connection.label, %error, "could not read the tool list after reconnecting");
        }
        Ok(())
    }

    /// Closes the connection (a child process is stopped). Calls fail from then on, until
    /// [`McpSkills::reconnect`].
    pub async fn close(&self) {
        let old = self.connection.lock().take();
        self.connection.close_open_calls();
        if let Some(old) = old {
            old.shut_down().await;
        }
    }
}

impl std::fmt::Debug for McpSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSkills")
            .field("server", &self.connection.label)
            .field("tools", &self.names())
            .field("call_timeout", &self.make.call_timeout)
            .finish_non_exhaustive()
    }
}
