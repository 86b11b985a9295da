//! Long-running skills as MCP tasks (the Tasks extension, `io.modelcontextprotocol/tasks`,
//! SEP-2663): a `tools/call` answered at once with a task the client polls (`tasks/get`),
//! answers questions of (`tasks/update`) and cancels (`tasks/cancel`).
//!
//! ```
//! use std::time::Duration;
//! use agent_core::Registry;
//! use agent_mcp::McpServer;
//! use agent_mcp::server::TaskSettings;
//!
//! let server = McpServer::new(Registry::new()).tasks(
//!     TaskSettings::for_skills(["build_site", "crawl"])
//!         .ttl(Duration::from_secs(600))
//!         .max_open(4),
//! );
//! assert!(server.task_settings().is_some_and(|t| t.serves("crawl")));
//! ```
//!
//! Decisions (the extension leaves them to the server):
//!
//! - **Opt-in by name**: only the skills named in [`TaskSettings::for_skills`] are served as
//!   tasks, and only to a client that declared the extension (in `initialize`, or in the
//!   request's `_meta`). Any other call, and every call of any other client, is answered
//!   synchronously, exactly as without tasks. The server advertises the extension only when
//!   some skill is named.
//! - **Bounded**: a task runs at most [`TaskSettings::ttl`] ([`DEFAULT_TASK_TTL`]); past it the
//!   skill's [`SkillContext::cancellation`](agent_core::SkillContext::cancellation) fires, the
//!   skill is dropped and the task is `failed` with an error naming the TTL. A session holds at
//!   most [`TaskSettings::max_open`] ([`DEFAULT_MAX_OPEN_TASKS`]) unfinished tasks and
//!   [`TaskSettings::max_kept`] ([`DEFAULT_MAX_KEPT_TASKS`]) tasks in all (a finished task is
//!   kept for one more TTL so that its result can be read, then forgotten); a call beyond
//!   either is answered at once with a tool error (`isError: true`) saying so, and nothing
//!   runs.
//! - **Cancel**: `tasks/cancel` fires the skill's cancellation token; the registry drops the
//!   call and the task settles as `cancelled` once the skill has stopped. A skill that finished
//!   before the cancel arrived stays `completed`, as the extension allows.
//! - **Results**: `tasks/get` answers `working`, `input_required`, then `completed` with the
//!   `CallToolResult` a synchronous call would have returned (a skill's failure included, with
//!   `isError: true`), `failed` (TTL) or `cancelled`. An unknown or forgotten task id is the
//!   JSON-RPC error `-32602` (invalid params) naming it.
//! - **Asking the client from a task**: [`client_of`](super::client_of)`(ctx).elicit`,
//!   `elicit_url` and `sample` inside a task do not send a request to the client; they make
//!   the task `input_required` with the request in `inputRequests`, and wait for the client's
//!   `tasks/update` (bounded by the client request timeout and cancelled with the task).
//! - **Negotiation** is the extension's: the client's declaration decides, tools carry no
//!   per-tool `execution.taskSupport`, and the older form of protocol `2025-11-25` (a `task`
//!   field in `tools/call`) is ignored, so such a client gets a synchronous call.
//! - **Sessions**: tasks belong to the connection (a stdio pipe, an HTTP session) that made
//!   them; another session's ids are unknown to it. When the connection ends its tasks are
//!   stopped (their tokens fire) and forgotten.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, ToolCall, ToolResult};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};

use super::ask_client::ConnectedClient;
use super::output::to_call_tool_result_for;

/// How long a task may run unless [`TaskSettings::ttl`] says otherwise: five minutes.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How many unfinished tasks a session may hold unless [`TaskSettings::max_open`] says otherwise.
pub const DEFAULT_MAX_OPEN_TASKS: usize = 8;

/// How many tasks, finished or not, a session may hold unless [`TaskSettings::max_kept`] says
/// otherwise.
pub const DEFAULT_MAX_KEPT_TASKS: usize = 64;

/// The poll interval suggested to clients unless [`TaskSettings::poll_interval`] says otherwise.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long a cancelled or expired task waits for its call to wind down after the skill's
/// token fired, before dropping it.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Which skills an [`McpServer`](super::McpServer) serves as MCP tasks, and the bounds of those
/// tasks: see the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSettings {
    skills: BTreeSet<String>,
    ttl: Duration,
    max_open: usize,
    max_kept: usize,
    poll_interval: Duration,
}

impl TaskSettings {
    /// Serves the skills named `names` as tasks, with the default bounds.
    pub fn for_skills(names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        TaskSettings {
            skills: names.into_iter().map(Into::into).collect(),
            ttl: DEFAULT_TASK_TTL,
            max_open: DEFAULT_MAX_OPEN_TASKS,
            max_kept: DEFAULT_MAX_KEPT_TASKS,
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }

    /// The longest a task may run (rounded down to milliseconds, at least one); also how long
    /// a finished task is kept for its result to be read.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The most unfinished tasks one session may hold (at least one).
    pub fn max_open(mut self, max_open: usize) -> Self {
        self.max_open = max_open.max(1);
        self
    }

    /// The most tasks, finished ones included, one session may hold (at least `max_open`).
    pub fn max_kept(mut self, max_kept: usize) -> Self {
        self.max_kept = max_kept.max(1);
        self
    }

    /// The poll interval the server suggests to clients.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Whether the skill `name` is served as a task (to clients that support tasks).
    pub fn serves(&self, name: &str) -> bool {
        self.skills.contains(name)
    }

    /// Whether any skill is served as a task: the server advertises the extension only then.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn max_kept_effective(&self) -> usize {
        self.max_kept.max(self.max_open)
    }
}

/// The tasks of one session: rmcp's [`TaskManager`] (state, `tasks/get`, `tasks/update`,
/// `tasks/cancel`, TTL sweep) and the ids this session made, to bound how many it keeps.
/// Dropped with the session's last server value: its tasks are stopped.
#[derive(Default)]
pub(crate) struct SessionTasks {
    manager: TaskManager,
    /// Ids made by this session, oldest first; pruned of those the manager forgot.
    ids: Mutex<VecDeque<String>>,
}

/// Why a task stopped before its skill answered.
enum Stop {
    Cancelled,
    Expired,
}

impl SessionTasks {
    /// rmcp's store of this session's tasks, for `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(crate) fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Starts `call` as a task, or refuses it (a tool error, at once) past the session's bounds.
    /// `ctx` is the context the call would have run with; `client` the client that made it.
    pub(crate) fn start(
        &self,
        settings: &TaskSettings,
        registry: Arc<Registry>,
        ctx: &SkillContext,
        call: ToolCall,
        client: ConnectedClient,
    ) -> CallToolResponse {
        // One lock across the checks and the spawn, so concurrent calls cannot both pass.
        let mut ids = match self.ids.lock() {
            Ok(ids) => ids,
            Err(poisoned) => poisoned.into_inner(),
        };
        let open = self.manager.running_task_count();
        if open >= settings.max_open {
            return refusal(format!(
                "the server is running {open} tasks for this session, the most it allows; \
                 wait for one to finish or cancel one (tasks/cancel), then call `{}` again",
                call.name
            ));
        }
        // Pruned only when full: each look-up sweeps the store.
        if ids.len() >= settings.max_kept_effective() {
            ids.retain(|id| self.manager.get_task(id).is_ok());
        }
        if ids.len() >= settings.max_kept_effective() {
            return refusal(format!(
                "the server holds {} tasks for this session, the most it allows (a finished \
                 task is kept for {} ms so that its result can be read); try `{}` again later",
                ids.len(),
                settings.ttl_ms(),
                call.name
            ));
        }
        let ttl = settings.ttl;
        let token = ctx.cancellation().child_token();
        let base = ctx.clone().with_cancellation(token.clone());
        let options = TaskOptions::new()
            .with_ttl_ms(settings.ttl_ms())
            .with_poll_interval_ms(
                u64::try_from(settings.poll_interval.as_millis()).unwrap_or(u64::MAX),
            )
            .with_status_message(format!("running `{}`", call.name));
        let task = self.manager.spawn(options, move |task| {
            let ctx = base.with_extension(client.in_task(task.clone(), token.clone()));
            Box::pin(async move {
                // Dropped unfinished (TTL sweep, session end), the skill's token still fires.
                let guard = token.clone().drop_guard();
                let running = registry.run_one(&call, &ctx);
                tokio::pin!(running);
                let stop = tokio::select! {
                    result = &mut running => {
                        guard.disarm();
                        // A skill that stopped because of the cancel (a question to the client
                        // withdrawn by it, say) ends the task as cancelled, not completed.
                        if matches!(result.output, Err(SkillError::Cancelled))
                            && task.is_cancel_requested()
                        {
                            return Err(TaskExit::Cancelled);
                        }
                        return Ok(answer(&registry, &result));
                    }
                    () = task.cancelled() => Stop::Cancelled,
                    () = tokio::time::sleep(ttl) => Stop::Expired,
                };
                token.cancel();
                // The registry drops the skill once its token fires, so this returns at once;
                // bounded all the same, then the call is dropped.
                let _ = tokio::time::timeout(CANCEL_GRACE, running).await;
                drop(guard);
                Err(match stop {
                    Stop::Cancelled => TaskExit::Cancelled,
                    Stop::Expired => TaskExit::Error(ErrorData::internal_error(
                        format!(
                            "the task ran past its TTL of {} ms and was cancelled",
                            ttl.as_millis()
                        ),
                        None,
                    )),
                })
            })
        });
        ids.push_back(task.task_id.clone());
        CallToolResponse::Task(CreateTaskResult::new(task))
    }
}

impl Drop for SessionTasks {
    fn drop(&mut self) {
        // Aborting a task drops its future, whose guard fires the skill's token.
        self.manager.shutdown();
    }
}

/// The MCP form of `result`, by the output schema of the skill it came from.
fn answer(registry: &Registry, result: &ToolResult) -> CallToolResult {
    let output_schema = registry
        .metadata(&result.name)
        .and_then(|m| m.output_schema);
    to_call_tool_result_for(result, output_schema.as_deref())
}

fn refusal(text: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(text)]))
}
