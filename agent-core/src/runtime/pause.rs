//! Pausing a run on calls that need a decision, and continuing it: the loop's side of
//! [`RunState`]. A turn whose calls include one a hook answered with
//! [`HookOutcome::Ask`](crate::HookOutcome::Ask) ends the run with
//! [`FinishReason::AwaitingApproval`]; the other calls of the turn have run, and their results are
//! kept, unrecorded, so that on resumption every result enters the transcript in call order.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::outcome::{AgentError, FinishReason, RunOutcome};
use super::output::OutputType;
use super::run::Run;
use super::state::{Decision, GuardCounts, PendingCall, RunState, StoredResult};
use super::typed::TypedOutcome;
use super::{AgentRuntime, Start};
use crate::call::{ToolCall, ToolResult};
use crate::error::SkillError;
use crate::event::AgentEvent;
use crate::message::Message;

/// The turn a run paused on, until the run hands it back as a [`RunState`].
pub(super) struct Paused {
    pending: Vec<PendingCall>,
    done: Vec<StoredResult>,
    notice: Option<Message>,
}

/// Whether a call of the turn waits for a decision.
pub(super) fn has_pending(results: &[ToolResult]) -> bool {
    results.iter().any(is_pending)
}

fn is_pending(result: &ToolResult) -> bool {
    matches!(result.output, Err(SkillError::ApprovalRequired(_)))
}

/// Answers the calls that wait for a decision as not run (the run ends without one).
pub(super) fn not_run(results: &mut [ToolResult]) {
    for result in results.iter_mut().filter(|r| is_pending(r)) {
        result.output = Err(SkillError::tool(
            "not run: it needed approval, and the run ended first",
        ));
    }
}

impl Run<'_> {
    /// Pauses on the turn's calls that wait for a decision: reports the others' results, keeps
    /// them for later, and says which calls wait.
    pub(super) fn pause(
        &mut self,
        calls: &[ToolCall],
        results: Vec<ToolResult>,
        notice: Option<Message>,
    ) -> FinishReason {
        let step = self.step;
        let mut pending = Vec::new();
        let mut done = Vec::new();
        for (call, result) in calls.iter().zip(results) {
            match &result.output {
                Err(SkillError::ApprovalRequired(reason)) => {
                    let metadata = self.rt.registry.metadata(&call.name);
                    pending.push(PendingCall {
                        call: call.clone(),
                        skill: metadata.map_or_else(|| call.name.clone(), |m| m.name.to_string()),
                        is_read_only: metadata.is_some_and(|m| m.is_read_only),
                        is_destructive: metadata.is_some_and(|m| m.is_destructive),
                        reason: reason.clone(),
                    });
                }
                _ => {
                    self.emit(|| AgentEvent::ToolResult {
                        step,
                        result: result.clone(),
                    });
                    done.push(StoredResult::keep(&result));
                }
            }
        }
        self.emit(|| AgentEvent::AwaitingApproval {
            step,
            pending: pending.clone(),
        });
        self.paused = Some(Paused {
            pending: pending.clone(),
            done,
            notice,
        });
        FinishReason::AwaitingApproval { pending }
    }

    /// The paused run as data, once the loop has stopped.
    pub(super) fn state_of(&mut self, paused: Paused) -> RunState {
        let mut guards = GuardCounts {
            denials: self.denials.denials(),
            ..GuardCounts::default()
        };
        self.stuck.counts(&mut guards);
        RunState::new(
            self.transcript.clone(),
            paused.pending,
            paused.done,
            paused.notice,
            self.usage,
            self.step,
            guards,
            self.ctx.session().loaded(),
            self.plan_mode,
            self.output.as_ref().map(|o| o.progress()),
        )
    }

    /// Takes a paused run's counters and loaded skills back.
    pub(super) fn restore(&mut self, state: &RunState) {
        self.step = state.steps;
        self.usage = state.usage;
        self.stuck.restore(&state.guards);
        self.denials.restore(state.guards.denials);
        for name in &state.loaded_skills {
            self.ctx.session().load(name.clone());
        }
        if let (Some(output), Some(progress)) = (self.output.as_mut(), state.output) {
            output.restore(progress);
        }
        self.resumed = true;
    }

    /// Finishes the paused turn with the decisions: approved and edited calls run (once, through
    /// the hooks, which let an approved call through where they asked), denied ones are answered
    /// with the reason; then every result of the turn is recorded in call order. `Some` ends the
    /// run (a denial limit, repetition, cancellation).
    pub(super) async fn finish_paused_turn(
        &mut self,
        done: Vec<StoredResult>,
        pending: Vec<PendingCall>,
        mut decisions: HashMap<String, Decision>,
        notice: Option<Message>,
    ) -> Option<FinishReason> {
        let calls = self
            .transcript
            .last()
            .map(|m| m.tool_calls.clone())
            .unwrap_or_default();
        let mut to_run = Vec::new();
        let mut answered: HashMap<String, ToolResult> = HashMap::new();
        for waiting in pending {
            let id = waiting.call.id.to_string();
            match decisions.remove(&id) {
                Some(Decision::Approve) => {
                    self.ctx.session().approve(&id);
                    to_run.push(waiting.call);
                }
                Some(Decision::Edit(arguments)) => {
                    self.ctx.session().approve(&id);
                    to_run.push(ToolCall {
                        arguments,
                        ..waiting.call
                    });
                }
                Some(Decision::Deny(reason)) => {
                    let result = ToolResult::new(&waiting.call, Err(SkillError::Denied(reason)));
                    answered.insert(id, result);
                }
                // Checked before the run was rebuilt.
                None => unreachable!("every pending call has a decision"),
            }
        }
        for result in self.run_calls(&to_run).await {
            answered.insert(result.call_id.to_string(), result);
        }
        for stored in done {
            answered.insert(stored.call_id().to_owned(), stored.restore());
        }
        // In call order; a call with no result (a transcript edited in between) is answered so
        // the transcript stays valid.
        let results: Vec<ToolResult> = calls
            .iter()
            .map(|call| {
                answered.remove(call.id.as_ref()).unwrap_or_else(|| {
                    ToolResult::new(call, Err(SkillError::tool("not run: no result was kept")))
                })
            })
            .collect();
        self.record(&results);
        self.after_results(&calls, &results, notice)
    }
}

/// Checks the decisions against the pending calls before anything runs: every pending call has
/// exactly one, and every decision names a pending call whose skill this registry has.
pub(super) fn check_decisions(
    state: &RunState,
    decisions: &HashMap<String, Decision>,
    registry: &crate::Registry,
) -> Result<(), AgentError> {
    let ids: Vec<&str> = state.pending.iter().map(|p| p.call.id.as_ref()).collect();
    if ids.is_empty() {
        return Err(AgentError::Resume(
            "the state has no call waiting for a decision".into(),
        ));
    }
    let missing: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !decisions.contains_key(*id))
        .collect();
    if !missing.is_empty() {
        return Err(AgentError::Resume(format!(
            "no decision for the pending call{} {}: approve, deny or edit each of {}",
            if missing.len() == 1 { "" } else { "s" },
            quoted(&missing),
            quoted(&ids)
        )));
    }
    let mut unknown: Vec<&str> = decisions
        .keys()
        .map(String::as_str)
        .filter(|id| !ids.contains(id))
        .collect();
    unknown.sort_unstable();
    if !unknown.is_empty() {
        return Err(AgentError::Resume(format!(
            "the decision{} for {} name{} no pending call; the pending calls are {}",
            if unknown.len() == 1 { "" } else { "s" },
            quoted(&unknown),
            if unknown.len() == 1 { "s" } else { "" },
            quoted(&ids)
        )));
    }
    if let Some(absent) = state
        .pending
        .iter()
        .find(|p| !registry.contains(&p.call.name))
    {
        return Err(AgentError::Resume(format!(
            "the pending call `{}` is to `{}`, which this runtime's registry does not have",
            absent.call.id, absent.call.name
        )));
    }
    match state.transcript.last() {
        Some(last) if last.tool_calls.iter().any(|c| ids.contains(&c.id.as_ref())) => Ok(()),
        _ => Err(AgentError::Resume(
            "the state's transcript does not end with the calls it says are pending".into(),
        )),
    }
}

fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl AgentRuntime {
    /// Continues a run that paused ([`FinishReason::AwaitingApproval`]) with a decision for each
    /// pending call (by call id): approved calls run exactly once, edited ones with their new
    /// arguments, denied ones are answered with the reason (a denial, counted as any other). The
    /// run then goes on where it stopped: budgets, guards, loaded skills and plan mode continue.
    ///
    /// This runtime may be another than the one that paused, in another process: it needs a
    /// registry with the pending calls' skills (by name). A pending call without a decision, or a
    /// decision for no pending call, is [`AgentError::Resume`], and nothing runs.
    ///
    /// ```
    /// use agent_core::{AgentRuntime, Decision, FinishReason, MockProvider, MockReply};
    /// use agent_core::{PermissionGate, Permission, Registry, RunState, ToolCall, skill};
    /// use serde_json::json;
    ///
    /// /// Delete a file.
    /// #[skill(destructive, register = false)]
    /// async fn delete(path: String) -> Result<String, agent_core::SkillError> {
    ///     Ok(format!("deleted {path}"))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let mut registry = Registry::new();
    /// registry.add(DeleteSkill);
    /// registry.with_hook(PermissionGate::with(|_, m| {
    ///     if m.is_destructive { Permission::Ask("deletes a file".into()) } else { Permission::Allow }
    /// }));
    /// let provider = MockProvider::new([
    ///     MockReply::tool_calls([ToolCall::new("c1", "delete", json!({"path": "old.log"}))]),
    ///     MockReply::text("Deleted."),
    /// ]);
    /// let runtime = AgentRuntime::new(provider, registry);
    /// let paused = runtime.run("Clean up.").await.unwrap();
    /// assert!(matches!(paused.finish, FinishReason::AwaitingApproval { .. }));
    /// // Keep the state anywhere, for as long as it takes...
    /// let saved = serde_json::to_string(&paused.state.unwrap()).unwrap();
    /// // ...and continue, here or in another process.
    /// let state: RunState = serde_json::from_str(&saved).unwrap();
    /// let done = runtime.resume_state(state, [("c1", Decision::Approve)]).await.unwrap();
    /// assert_eq!(done.final_text.as_deref(), Some("Deleted."));
    /// # }
    /// ```
    pub async fn resume_state<I: Into<String>>(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> Result<RunOutcome, AgentError> {
        self.resume_paused(state, decisions, None).await
    }

    /// [`AgentRuntime::resume_state`] for a typed run that paused: continues it until the model
    /// answers with a `T`.
    pub async fn resume_state_typed<T: DeserializeOwned + JsonSchema, I: Into<String>>(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> Result<TypedOutcome<T>, AgentError> {
        let outcome = self
            .resume_paused(state, decisions, Some(OutputType::of::<T>()))
            .await?;
        TypedOutcome::new(outcome)
    }

    /// [`AgentRuntime::resume_state`] for a paused run whose output type is known only at run
    /// time ([`AgentRuntime::resume_with_output`]).
    pub async fn resume_state_with_output<I: Into<String>>(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
        output: OutputType,
    ) -> Result<RunOutcome, AgentError> {
        self.resume_paused(state, decisions, Some(output)).await
    }

    async fn resume_paused<I: Into<String>>(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        let decisions = self.checked_decisions(&state, decisions)?;
        self.resume_checked(state, decisions, output).await
    }

    /// The decisions as a map, checked against the state (see [`check_decisions`]); nothing runs.
    pub(crate) fn checked_decisions<I: Into<String>>(
        &self,
        state: &RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> Result<Decisions, AgentError> {
        let mut map = HashMap::new();
        for (id, decision) in decisions {
            let id = id.into();
            if map.insert(id.clone(), decision).is_some() {
                return Err(AgentError::Resume(format!(
                    "two decisions for the call `{id}`: give one"
                )));
            }
        }
        check_decisions(state, &map, &self.registry)?;
        Ok(Decisions(map))
    }

    /// Continues a paused run with decisions already checked against it.
    pub(crate) async fn resume_checked(
        &self,
        state: RunState,
        decisions: Decisions,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        check_output(&state, output.is_some())?;
        let plan_mode = state.plan_mode;
        self.drive_from(
            Start::Paused(Box::new(state), decisions.0),
            plan_mode,
            output,
        )
        .await
    }
}

/// A typed run that paused must be continued as one.
pub(crate) fn check_output(state: &RunState, typed: bool) -> Result<(), AgentError> {
    if state.output.is_some() && !typed {
        return Err(AgentError::Resume(
            "the paused run is typed: continue it with resume_state_typed or \
             resume_state_with_output"
                .into(),
        ));
    }
    Ok(())
}

/// Decisions checked against a paused run's pending calls: one for each, none for anything else.
pub(crate) struct Decisions(HashMap<String, Decision>);
