//! The virtual object `Agent`, keyed by session id: its handlers.

use std::collections::BTreeMap;
use std::future::IntoFuture;
use std::sync::Arc;

use agent_core::CancellationToken;
use agent_llm::Message;
use agent_runtime::{
    AgentError, AgentRuntime, CallRef, Decision, FinishReason, OutputType, RunOutcome, RunRequest,
};
use restate_sdk::prelude::*;
use serde_json::Value;
use tracing::Instrument;

use crate::journal::{EventGate, StepChannel, mark, with_steps};
use crate::outcome::{Approval, RunSummary};

/// The conversation so far (`Vec<Message>`).
const TRANSCRIPT: &str = "transcript";
/// The calls the running invocation waits on (`Vec<Approval>`); absent when none.
const PENDING: &str = "pending";
/// The last run's [`RunSummary`].
const OUTCOME: &str = "outcome";

/// The Restate virtual object behind [`DurableAgent`](crate::DurableAgent): one per session id.
pub struct AgentObject {
    pub(crate) runtime: AgentRuntime,
    /// What every run must end with, for a typed agent.
    pub(crate) output: Option<OutputType>,
}

#[restate_sdk::object(name = "Agent")]
impl AgentObject {
    /// The `run` and `run_message` handlers' work, inside their span.
    async fn run_goal(
        &self,
        ctx: ObjectContext<'_>,
        goal: Message,
    ) -> HandlerResult<Json<RunSummary>> {
        let mut transcript = ctx
            .get::<Json<Vec<Message>>>(TRANSCRIPT)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        transcript.push(goal);

        let gate = Arc::new(EventGate::new());
        let (journal, mut steps) = StepChannel::new(Arc::clone(&gate));
        let cancel = CancellationToken::new();
        let runtime = self
            .runtime
            .clone()
            .journal(Arc::new(journal))
            .cancellation(cancel.clone());

        let run = self.typed(runtime.resume(transcript)).into_future();
        let mut outcome = ended(with_steps(&ctx, &mut steps, &cancel, run).await, &gate)?;
        while matches!(outcome.finish, FinishReason::AwaitingApproval { .. }) {
            let decisions = wait_for_decisions(&ctx, &gate, &mut outcome).await?;
            let state = outcome.state.take().map(|state| *state).ok_or_else(|| {
                TerminalError::new("the run paused without a state to resume from")
            })?;
            let resumed = self
                .typed(runtime.continue_paused(state, decisions))
                .into_future();
            outcome = ended(with_steps(&ctx, &mut steps, &cancel, resumed).await, &gate)?;
        }
        // No journal entry marks the end: the events held since the last step are sent (an attempt
        // that died between that step and its answer may have sent them too; events are delivered
        // at least once). A text-only run is one step.
        gate.flush();

        ctx.set(TRANSCRIPT, Json(outcome.transcript.clone()));
        let answer = RunSummary::from(&outcome);
        ctx.set(OUTCOME, Json(answer.clone()));
        Ok(Json(answer))
    }

    /// Runs the agent on `goal`, continuing the session's conversation. Exclusive: a session runs
    /// one goal at a time, and later ones queue. A run that pauses for approval waits here, inside
    /// this invocation, for as long as it takes; the answer is the run's [`RunSummary`].
    #[handler]
    async fn run(&self, ctx: ObjectContext<'_>, goal: String) -> HandlerResult<Json<RunSummary>> {
        self.run_traced(ctx, Message::user(goal)).await
    }

    /// Runs the agent on a user message that may carry images, documents and audio, as eugene
    /// writes a [`Message`]: `{"role": "user", "content": "What is this?", "parts": [{"type":
    /// "media", "media_type": "image/png", "data": "<base64>"}]}`. Otherwise as `run`: the
    /// message (its bytes included) is kept in the session's transcript and the journal, so a
    /// replay after a crash sends the model the same bytes. A message from anyone but the user is
    /// refused (400).
    #[handler]
    async fn run_message(
        &self,
        ctx: ObjectContext<'_>,
        message: Json<Message>,
    ) -> HandlerResult<Json<RunSummary>> {
        let message = message.into_inner();
        if message.role != agent_llm::Role::User || !message.tool_calls.is_empty() {
            return Err(TerminalError::new_with_code(
                400,
                "run_message takes a user message (role \"user\", no tool calls)",
            )
            .into());
        }
        self.run_traced(ctx, message).await
    }

    /// A run on `goal`, in a `durable_run` span continuing the trace of its first attempt.
    async fn run_traced(
        &self,
        ctx: ObjectContext<'_>,
        goal: Message,
    ) -> HandlerResult<Json<RunSummary>> {
        let first = first_attempt(&ctx).await?;
        let span = tracing::info_span!(
            "durable_run",
            "otel.name" = "durable_run Agent",
            "restate.object.key" = ctx.key(),
        );
        if let Some(first) = first {
            agent_runtime::trace::set_parent(&span, &first);
        }
        self.run_goal(ctx, goal).instrument(span).await
    }

    /// Sends decisions for calls the running invocation waits on, by call id:
    /// `{"c1": {"decision": "approve"}, "c2": {"decision": "deny", "with": "not today"}}`
    /// (`edit` takes the new arguments). Answers with the ids decided. A call id nobody waits
    /// on is an error, and then nothing is sent.
    #[handler]
    async fn decide(
        &self,
        ctx: SharedObjectContext<'_>,
        decisions: Json<BTreeMap<String, Value>>,
    ) -> HandlerResult<Json<Vec<String>>> {
        let waiting = pending_of(&ctx).await?;
        let decisions = decisions.into_inner();
        let unknown: Vec<&str> = decisions
            .keys()
            .map(String::as_str)
            .filter(|id| !waiting.iter().any(|a| a.pending.id() == *id))
            .collect();
        if !unknown.is_empty() {
            let ids: Vec<String> = waiting.iter().map(|a| a.pending.id()).collect();
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            return Err(TerminalError::new_with_code(
                400,
                format!(
                    "no call waits for a decision under {}; waiting: {}",
                    quoted(&unknown),
                    if ids.is_empty() {
                        "none".to_string()
                    } else {
                        quoted(&ids)
                    }
                ),
            )
            .into());
        }
        // Every decision is read, and every digest sent checked, before any is sent on: a
        // decision made on another call than the one waiting under its id (a later call that
        // reused the id, an edited one) answers nothing.
        let mut sending = Vec::new();
        for approval in &waiting {
            let id = approval.pending.id();
            let Some(sent) = decisions.get(&id) else {
                continue;
            };
            let (decision, digest) = split_decision(sent).map_err(|error| {
                TerminalError::new_with_code(400, format!("the decision for `{id}`: {error}"))
            })?;
            if let Some(digest) = &digest
                && *digest != approval.pending.digest()
            {
                return Err(TerminalError::new_with_code(
                    409,
                    format!(
                        "the call waiting under `{id}` is not the one the decision was made on \
                         (its digest differs): read `pending` again; nothing was sent"
                    ),
                )
                .into());
            }
            sending.push((approval, id, decision, digest));
        }
        let mut decided = Vec::new();
        for (approval, id, decision, digest) in sending {
            let mut value = serde_json::to_value(&decision).unwrap_or(Value::Null);
            if let (Some(digest), Some(object)) = (digest, value.as_object_mut()) {
                object.insert("digest".into(), Value::String(digest));
            }
            ctx.resolve_awakeable(&approval.awakeable, Json(value));
            decided.push(id);
        }
        Ok(Json(decided))
    }

    /// The calls the running invocation waits on, with their awakeable ids; `[]` when none.
    #[handler]
    async fn pending(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<Approval>>> {
        Ok(Json(pending_of(&ctx).await?))
    }

    /// The last finished run's [`RunSummary`], or nothing (an empty answer) before the first.
    #[handler]
    async fn outcome(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> HandlerResult<Option<Json<RunSummary>>> {
        Ok(ctx.get::<Json<RunSummary>>(OUTCOME).await?)
    }

    /// The session's conversation so far.
    #[handler]
    async fn transcript(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<Message>>> {
        let transcript = ctx.get::<Json<Vec<Message>>>(TRANSCRIPT).await?;
        Ok(Json(transcript.map(Json::into_inner).unwrap_or_default()))
    }

    /// Forgets the session: its conversation and last outcome. Queues behind a running goal.
    #[handler]
    async fn reset(&self, ctx: ObjectContext<'_>) -> HandlerResult<()> {
        ctx.clear_all();
        Ok(())
    }
}

impl AgentObject {
    /// The run, typed if the agent is.
    fn typed<'r>(&self, request: RunRequest<'r>) -> RunRequest<'r> {
        match &self.output {
            Some(output) => request.output(output.clone()),
            None => request,
        }
    }
}

/// The trace context every attempt at an invocation runs its `durable_run` span under, so that
/// all attempts are one trace: the first attempt journals the `traceparent` of the span it
/// was called in (the Restate SDK's), and an attempt that replays (after a crash, on another
/// instance) reads it back. The step is journaled whether or not anything traces, so that
/// attempts with and without an exporter replay alike.
///
/// The context is read from the span the handler runs in, not from `durable_run` itself: a
/// span whose context was read cannot be given another parent afterwards.
async fn first_attempt(ctx: &ObjectContext<'_>) -> Result<Option<String>, TerminalError> {
    let mine = agent_runtime::trace::traceparent(&tracing::Span::current());
    let Json(first) = ctx
        .run(move || async move { Ok(Json(mine)) })
        .name("trace")
        .await?;
    Ok(first)
}

async fn pending_of(ctx: &SharedObjectContext<'_>) -> Result<Vec<Approval>, TerminalError> {
    Ok(ctx
        .get::<Json<Vec<Approval>>>(PENDING)
        .await?
        .map(Json::into_inner)
        .unwrap_or_default())
}

/// A run's end as the handler sees it: an [`AgentError`] fails the invocation for good
/// (retrying cannot help: the configuration, or a model that refuses the request).
fn ended(
    outcome: Result<RunOutcome, AgentError>,
    gate: &EventGate,
) -> Result<RunOutcome, TerminalError> {
    outcome.map_err(|error| {
        gate.flush();
        TerminalError::new(error.to_string())
    })
}

/// The run paused: one awakeable per pending call, listed in the object's state for the `decide`
/// and `pending` handlers; then the decisions, in call order.
async fn wait_for_decisions(
    ctx: &ObjectContext<'_>,
    gate: &EventGate,
    outcome: &mut RunOutcome,
) -> Result<Vec<(CallRef, Decision)>, TerminalError> {
    mark(ctx, gate, "run paused").await?;
    let FinishReason::AwaitingApproval { pending } = &outcome.finish else {
        return Ok(Vec::new());
    };
    let mut waiting = Vec::new();
    let mut answers = Vec::new();
    for call in pending {
        let (awakeable, answer) = ctx.awakeable::<Json<Value>>();
        waiting.push(Approval {
            id: call.id(),
            digest: call.digest(),
            pending: call.clone(),
            awakeable,
        });
        answers.push(answer);
    }
    ctx.set(PENDING, Json(waiting.clone()));
    let mut decisions = Vec::new();
    for (approval, answer) in waiting.iter().zip(answers) {
        let Json(value) = answer.await?;
        let (decision, digest) = read_decision(value);
        let id = approval.pending.id();
        let call = match digest {
            Some(digest) => CallRef::seen(id, digest),
            None => CallRef::from(id),
        };
        decisions.push((call, decision));
    }
    ctx.clear(PENDING);
    Ok(decisions)
}

/// A decision as sent, and the digest sent with it (`"digest"` beside `"decision"`), if any.
fn split_decision(sent: &Value) -> Result<(Decision, Option<String>), String> {
    let mut value = sent.clone();
    let digest = match value.as_object_mut().and_then(|o| o.remove("digest")) {
        None => None,
        Some(Value::String(digest)) => Some(digest),
        Some(other) => return Err(format!("`digest` is a string, not {other}")),
    };
    let decision = serde_json::from_value(value).map_err(|error| error.to_string())?;
    Ok((decision, digest))
}

/// A decision as an awakeable carried it; one that does not read as a [`Decision`] (an
/// awakeable resolved by hand with something else) denies the call: nothing runs on a decision
/// nobody can read. A digest sent with it binds it to the call it was made on.
fn read_decision(value: Value) -> (Decision, Option<String>) {
    split_decision(&value).unwrap_or_else(|error| {
        let deny = Decision::Deny(format!(
            "the decision sent ({value}) could not be read ({error}), so the call was not run"
        ));
        (deny, None)
    })
}

fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
