//! The agents a run called, as AG-UI 1.0 sub-agents: each invocation a `SUBAGENT_STARTED` when
//! its first event arrives, its events attributed to it by `subagentRunId`, and a
//! `SUBAGENT_FINISHED` (success, or suspended when it paused for a person) or `SUBAGENT_ERROR`
//! when it ends.
//!
//! An agent ends when its run says so (its last `TurnFinished`), or else with the call that ran
//! it (an agent that failed, code mode's program): a result that is an error is its
//! `SUBAGENT_ERROR`. One still running when the run pauses for a person (code mode's program,
//! paused on a call inside it) is `suspended`; when the run ends otherwise (cancelled, timed
//! out), `SUBAGENT_ERROR` `eugene.unfinished`.
//!
//! A sub-agent is an agent and the call that ran it, so two invocations of the same agent (two
//! calls of it in one turn, running at once) are two sub-agents. Code mode's inner calls have no
//! model steps: they show as the program's step 0.
//!
//! An interrupt a sub-agent raised carries its `subagentRunId` (the one that ended suspended).
//!
//! An invocation's id is the run's id, `/s`, and a count (`run-7/s2`): a new one each time an
//! agent starts in a request, so an agent that paused and is resumed by the next request is a
//! new invocation there. `parentToolCallId` is the call that ran it, as the stream names that
//! call.

use serde_json::{Value, json};

use agent_core::ToolResult;
use agent_runtime::FinishReason;

/// One agent on the way to an event: the agent (its skill's name, as the run above it calls it)
/// and the id of the call that ran it there. Two invocations of one agent are two hops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hop {
    pub(crate) agent: String,
    pub(crate) call: String,
}

impl Hop {
    /// The agent `agent`, run by the call `call`.
    pub(crate) fn new(agent: &str, call: String) -> Self {
        Hop {
            agent: agent.to_owned(),
            call,
        }
    }
}

/// How a sub-agent ended.
pub(crate) enum Ending<'a> {
    /// Its run ended, this way.
    Finished(&'a FinishReason),
    /// The call that ran it returned this.
    Returned(&'a ToolResult),
    /// The run ended first.
    RunEnded,
    /// The run paused for a person while it ran (code mode's program, whose call is pending).
    RunPaused,
}

/// One sub-agent running.
struct Running {
    path: Vec<Hop>,
    id: String,
    /// The id, in the stream, of the call that ran it, when known.
    call: Option<String>,
}

/// The sub-agents running in one run.
pub(crate) struct Subagents {
    run_id: String,
    started: u64,
    running: Vec<Running>,
    /// Those that ended suspended (paused for a person), by path, for their interrupts.
    suspended: Vec<(Vec<Hop>, String)>,
}

impl Subagents {
    /// None running, for the run `run_id`.
    pub(crate) fn new(run_id: &str) -> Self {
        Subagents {
            run_id: run_id.to_owned(),
            started: 0,
            running: Vec::new(),
            suspended: Vec::new(),
        }
    }

    /// The id of the sub-agent running at `path`.
    pub(crate) fn running(&self, path: &[Hop]) -> Option<&str> {
        self.running
            .iter()
            .find(|r| r.path == path)
            .map(|r| r.id.as_str())
    }

    /// Starts the agent at `path` (the one above it running, unless it is the run's own), run by
    /// the call `call`: its `SUBAGENT_STARTED`.
    pub(crate) fn start(&mut self, path: &[Hop], call: Option<String>, out: &mut Vec<Value>) {
        self.started += 1;
        let id = format!("{}/s{}", self.run_id, self.started);
        let mut started = json!({
            "type": "SUBAGENT_STARTED",
            "subagentRunId": id,
            "name": path.last().map(|hop| hop.agent.as_str()).unwrap_or_default(),
        });
        if let Some(parent) = self.running(&path[..path.len() - 1]) {
            started["parentSubagentRunId"] = json!(parent);
        }
        if let Some(call) = &call {
            started["parentToolCallId"] = json!(call);
        }
        out.push(started);
        self.running.push(Running {
            path: path.to_vec(),
            id,
            call,
        });
    }

    /// The id of the sub-agent at `path` that ended suspended, last.
    pub(crate) fn suspended(&self, path: &[Hop]) -> Option<&str> {
        self.suspended
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, id)| id.as_str())
    }

    /// What the ids of the calls of the sub-agent running at `path` are written after: the id,
    /// in the stream, of the call that ran it, or its invocation id when that is not known.
    pub(crate) fn prefix(&self, path: &[Hop]) -> Option<&str> {
        let running = self.running.iter().find(|r| r.path == path)?;
        Some(running.call.as_deref().unwrap_or(&running.id))
    }

    /// The path of the sub-agent running that the call `call` (its id in the stream) ran.
    pub(crate) fn spawned_by(&self, call: &str) -> Option<Vec<Hop>> {
        self.running
            .iter()
            .find(|r| r.call.as_deref() == Some(call))
            .map(|r| r.path.clone())
    }

    /// The sub-agents running at `path` and under it, innermost first, with their ids.
    pub(crate) fn under(&self, path: &[Hop]) -> Vec<(Vec<Hop>, String)> {
        let mut under: Vec<_> = self
            .running
            .iter()
            .filter(|r| r.path.starts_with(path))
            .map(|r| (r.path.clone(), r.id.clone()))
            .collect();
        under.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        under
    }

    /// Ends the sub-agent at `path`: its `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`.
    pub(crate) fn end(&mut self, path: &[Hop], ending: &Ending<'_>, out: &mut Vec<Value>) {
        let Some(at) = self.running.iter().position(|r| r.path == path) else {
            return;
        };
        let id = self.running.remove(at).id;
        if let Ending::Finished(FinishReason::AwaitingApproval { .. }) | Ending::RunPaused = ending
        {
            self.suspended.push((path.to_vec(), id.clone()));
        }
        let finished = |outcome: &str| json!({"type": "SUBAGENT_FINISHED", "subagentRunId": id, "outcome": {"type": outcome}});
        let error = |message: String, code: &str| json!({"type": "SUBAGENT_ERROR", "subagentRunId": id, "message": message, "code": code});
        out.push(match ending {
            Ending::Finished(FinishReason::NoMoreToolCalls | FinishReason::PlanPending { .. }) => {
                finished("success")
            }
            Ending::Finished(FinishReason::AwaitingApproval { .. }) | Ending::RunPaused => {
                finished("suspended")
            }
            Ending::Finished(FinishReason::Cancelled) => {
                error("the agent was cancelled".into(), "eugene.cancelled")
            }
            Ending::Finished(other) => error(
                format!("the agent ended without an answer: {other:?}"),
                "eugene.unfinished",
            ),
            Ending::Returned(result) if result.is_error() => {
                error(result.content().into_owned(), "eugene.error")
            }
            Ending::Returned(_) => finished("success"),
            Ending::RunEnded => error(
                "the run ended before the agent did".into(),
                "eugene.unfinished",
            ),
        });
    }
}
