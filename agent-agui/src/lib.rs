//! AG-UI (the Agent User Interaction Protocol, 1.0) for eugene: an [`AgentRuntime`] served to a
//! user interface — a console, a chat page, anything built on the AG-UI client libraries — as a
//! stream of AG-UI events, its pauses for a person as AG-UI interrupts.
//!
//! ```no_run
//! # use agent_core::Registry;
//! # use agent_llm::MockProvider;
//! # use agent_runtime::AgentRuntime;
//! # #[tokio::main] async fn main() -> Result<(), agent_agui::AguiError> {
//! # let runtime = AgentRuntime::new(MockProvider::new([]), Registry::new());
//! let listener = agent_serve::bind("127.0.0.1:8080").await.expect("the port is free");
//! agent_agui::AguiServer::new(runtime.streaming(true)).serve(listener).await
//! # }
//! ```
//!
//! A client `POST`s a `RunAgentInput` to [`AGUI_PATH`] and reads the answer, `text/event-stream`.
//! The `threadId` is a session the server keeps ([`Threads`], or any
//! [`SessionStore`](agent_runtime::SessionStore)): its conversation, and, when its run paused,
//! the paused run, which never leaves the server. The next message of a thread continues its
//! conversation; a pause is answered by a request whose `resume` entries carry the person's
//! decisions ([`interrupt`]), and the same decisions sent again get the first ones' outcome
//! ([`answered`]). What a request goes through is in [`http`], what is read of it in [`input`],
//! the buffer between a run and a slow client in [`outbox`], how the agents a run calls appear
//! in [`subagents`].
//!
//! # The events
//!
//! | the run | AG-UI events |
//! |---|---|
//! | starts | `RUN_STARTED` (`threadId`, `runId` as the client sent them) |
//! | a step (one model call) begins, ends | `STEP_STARTED` / `STEP_FINISHED`, named `step 1`, `step 2`, … |
//! | streams text ([`AgentEvent::TextDelta`]) | `TEXT_MESSAGE_START` (role `assistant`) once, then `TEXT_MESSAGE_CONTENT` per piece |
//! | the step's whole text ([`AgentEvent::AssistantText`]) | `TEXT_MESSAGE_END`; when nothing streamed, `START`, one `CONTENT`, `END` |
//! | streams a call's arguments ([`AgentEvent::ToolCallDelta`]) | `TOOL_CALL_START` (`toolCallId` the call's id, `toolCallName`) once, then `TOOL_CALL_ARGS` per piece |
//! | makes the call ([`AgentEvent::ToolCall`]) | `TOOL_CALL_END`; when nothing streamed, `START`, `ARGS` (the whole JSON), `END` |
//! | a call's result ([`AgentEvent::ToolResult`]) | `TOOL_CALL_RESULT` (`content` the text the model reads, `role` `tool`) |
//! | tokens and cost so far ([`AgentEvent::Usage`], the run's own or a nested agent's) | `STATE_SNAPSHOT` `{steps, inputTokens, outputTokens, cost, unpricedCalls, agents}`, `agents` each agent's part by its path (`""` the run's own): `{steps, inputTokens, outputTokens, cost, provider, model}` |
//! | streams thinking ([`AgentEvent::ThinkingDelta`]) | `REASONING_START` and `REASONING_MESSAGE_START` (role `reasoning`) once, then `REASONING_MESSAGE_CONTENT` per piece; `REASONING_MESSAGE_END`, `REASONING_END` when text, a call or the step's end follows |
//! | an agent it called, or code mode's program, starts ([`AgentEvent::Nested`], its first event) | `SUBAGENT_STARTED` (`subagentRunId` `run/s1`, `name` the skill's, `parentSubagentRunId` the agent above it when that is one too, `parentToolCallId` the call that ran it) |
//! | that agent's events | the same events, each with its `subagentRunId` (but `STATE_SNAPSHOT`, the whole run's); steps named with the path (`researcher › step 1`), call ids after the id of the call that ran the agent (`p1/c1`, as a pending call's id is written) |
//! | that agent ends | `SUBAGENT_FINISHED` `outcome` `success`, or `suspended` when it paused for a person; `SUBAGENT_ERROR` (`message`, `code` `eugene.error`, `eugene.cancelled`, `eugene.unfinished`) when its call failed or it ended without an answer ([`subagents`]) |
//! | hands the conversation over ([`AgentEvent::HandedOff`]) | `CUSTOM` `eugene.handoff` `{to}`; the steps after it are named `billing › step 3` |
//! | retries a model call ([`AgentEvent::Retry`]) | `CUSTOM` `eugene.retry` `{path, step, attempt, delayMs, error}` |
//! | ends with an answer | `RUN_FINISHED`, `outcome` `{type: "success"}`, `result` the answer's text, `usage` the run's tokens |
//! | pauses for a person | `RUN_FINISHED`, `outcome` `{type: "interrupt", interrupts}`, one per pending call ([`interrupt`]) |
//! | goes on after the person's decisions | a decided call's `TOOL_CALL_RESULT` against the id it was shown with; its `TOOL_CALL_START`/`ARGS`/`END` are not sent again |
//! | is cancelled | `RUN_FINISHED`, `outcome` `{type: "cancelled"}` |
//! | fails, runs past the timeout, ends without an answer (a budget, stuck) | `RUN_ERROR` (`message`, `code` `eugene.error`, `eugene.resume`, `eugene.thread`, `eugene.model`, `eugene.timeout`, `eugene.unfinished`; `eugene.input` for a request that cannot start a run) |
//!
//! Everything opened (a step, a message, reasoning, a streamed call, a sub-agent) is closed before
//! the run's last event. Compaction, dropped media and a provider's encrypted reasoning are not
//! sent (the conversation stays on the server: a client has nothing to send back).
//!
//! The endpoint is one more event sink on the runtime: nothing in the loop changes for it.
//!
//! # The console
//!
//! [`AguiServer::into_router`] also mounts, unless [`AguiServer::console`] turns it off, a page
//! for people at [`CONSOLE_PATH`] (open `/console#token=…`) and the guarded listing it reads at
//! [`THREADS_PATH`]: start runs on a thread, watch their events, approve, deny or edit the calls a
//! run paused on. See [`console`].
//!
//! [`AgentRuntime`]: agent_runtime::AgentRuntime
//! [`AgentEvent::TextDelta`]: agent_runtime::AgentEvent::TextDelta
//! [`AgentEvent::AssistantText`]: agent_runtime::AgentEvent::AssistantText
//! [`AgentEvent::ToolCallDelta`]: agent_runtime::AgentEvent::ToolCallDelta
//! [`AgentEvent::ToolCall`]: agent_runtime::AgentEvent::ToolCall
//! [`AgentEvent::ToolResult`]: agent_runtime::AgentEvent::ToolResult
//! [`AgentEvent::Usage`]: agent_runtime::AgentEvent::Usage
//! [`AgentEvent::Nested`]: agent_runtime::AgentEvent::Nested
//! [`AgentEvent::HandedOff`]: agent_runtime::AgentEvent::HandedOff
//! [`AgentEvent::Retry`]: agent_runtime::AgentEvent::Retry
//! [`AgentEvent::ThinkingDelta`]: agent_runtime::AgentEvent::ThinkingDelta
//!
//! # Dependencies
//!
//! agent-core, agent-runtime (the loop, sessions, pauses), agent-llm (the `Cost` of each turn,
//! summed per agent for the state snapshots), agent-serve (the network edge), axum (the router,
//! and the event stream as its `Sse` response: a well-kept SSE implementation, so the framing is
//! not ours), http-body-util (reading a request's body), tokio and tokio-util (the run's
//! task, its buffer, its cancellation), futures, async-trait (the thread store), serde and
//! serde_json (the protocol's JSON), thiserror, tracing. The console's page is plain HTML, CSS
//! and JavaScript written for this crate and embedded with `include_str!`: no npm build, nothing
//! fetched at run time. The tests install npm's `@ag-ui/client` and `@ag-ui/core` and run them
//! with node; the console's tests drive the page in headless Chromium (Debian's `chromium` and
//! `chromium-driver`) with Python's Selenium, installed on first use.

pub mod answered;
pub mod console;
pub mod http;
pub mod input;
pub mod interrupt;
mod mapping;
pub mod outbox;
mod run;
pub mod server;
mod state;
pub mod subagents;
pub mod threads;

pub use console::{CANCEL_PATH, CONSOLE_PATH, THREADS_PATH, TRACE_PATH};
pub use http::AGUI_PATH;
pub use input::MAX_ID_BYTES;
pub use interrupt::MAX_RESUME_ENTRIES;
pub use outbox::{BufferLimits, StreamCut};
pub use server::{
    AguiError, AguiServer, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_THREADS, DEFAULT_RUN_TIMEOUT,
};
pub use threads::Threads;
