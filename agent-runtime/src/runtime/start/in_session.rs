//! A run kept in a session ([`RunRequest::in_session`](crate::runtime::RunRequest::in_session)): the
//! conversation is read from the [`SessionStore`] first and the outcome saved after, each save
//! naming the version it read.
//!
//! A session's paused run is **claimed** before anything runs: the decisions are checked, then
//! the session is saved without the pause, under the version read. Of two processes resuming the
//! same pause, one claims it and the other gets [`StoreError::Conflict`](crate::StoreError) having
//! run nothing, so an approved call runs once. A process that stops between the claim and the end
//! of the run leaves the session without the pause (a call it approved ran at most once).
//!
//! The session's id is the run's `gen_ai.conversation.id` on its spans.

use crate::runtime::AgentRuntime;
use crate::runtime::finish::agent_error::{AgentError, ResumeError};
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::finish::output_type::OutputType;
use crate::runtime::finish::run_outcome::RunOutcome;
use crate::runtime::pause::admit;
use crate::runtime::pause::decisions;
use crate::runtime::step::drive;
use crate::runtime::step::run_state::RunState;
use crate::session::{LoadedSession, SessionRecord, SessionStore};
use crate::trace::CONVERSATION;
use agent_core::pending::{CallRef, Decision};
use agent_llm::message::Message;

/// What a session can start with.
pub(in crate::runtime) enum SessionStart {
    /// The session's next message.
    Goal(Message),
    /// Decisions for its paused run.
    Decide(Vec<(CallRef, Decision)>),
}

/// Runs `start` in session `id` of `store`.
pub(in crate::runtime) async fn send(
    rt: &AgentRuntime,
    store: &dyn SessionStore,
    id: &str,
    start: SessionStart,
    output: Option<OutputType>,
) -> Result<RunOutcome, AgentError> {
    let mut loaded = store.load(id).await?;
    if let Some(loaded) = &mut loaded {
        admit::check_record(rt, id, &mut loaded.data)?;
    }
    match start {
        SessionStart::Goal(goal) => {
            let version = loaded.as_ref().map(|l| l.version);
            let mut transcript = match loaded {
                Some(LoadedSession {
                    data:
                        SessionRecord {
                            paused: Some(state),
                            ..
                        },
                    ..
                }) => return Err(waiting(id, &state)),
                Some(loaded) => loaded.data.transcript,
                None => Vec::new(),
            };
            transcript.push(goal);
            let run = drive::fresh(rt, transcript, rt.settings.plan_mode, output);
            let outcome = CONVERSATION.scope(id.to_owned(), run).await?;
            save(rt, store, id, &outcome, version).await?;
            Ok(outcome)
        }
        SessionStart::Decide(decisions) => {
            let Some(LoadedSession {
                data:
                    SessionRecord {
                        paused: Some(mut state),
                        ..
                    },
                version,
            }) = loaded
            else {
                return Err(ResumeError::NothingWaiting {
                    session: id.to_owned(),
                }
                .into());
            };
            admit::check(rt, &mut state)?;
            decisions::check_output(&state, output.is_some())?;
            let mut claim = SessionRecord {
                transcript: state.transcript.clone(),
                paused: None,
                seal: None,
            };
            admit::seal_record(rt, id, &mut claim)?;
            let active = crate::runtime::agents::handoff::active(rt, &state.handoffs)?;
            decisions::decide(&mut state, decisions, &active.settings.registry)?;
            let claimed = store.save(id, &claim, Some(version)).await?;
            // The session's save claimed it; the runtime's claims record it too, after that
            // save, so a save that failed leaves the pause to be continued again.
            admit::claim(rt, &state).await?;
            let outcome = CONVERSATION
                .scope(id.to_owned(), drive::drive(rt, state, output))
                .await?;
            save(rt, store, id, &outcome, Some(claimed)).await?;
            Ok(outcome)
        }
    }
}

async fn save(
    rt: &AgentRuntime,
    store: &dyn SessionStore,
    id: &str,
    outcome: &RunOutcome,
    version: Option<u64>,
) -> Result<u64, AgentError> {
    let mut data = SessionRecord {
        transcript: outcome.transcript.clone(),
        paused: match outcome.finish {
            FinishReason::AwaitingApproval { .. } => outcome.state.as_deref().cloned(),
            _ => None,
        },
        seal: None,
    };
    admit::seal_record(rt, id, &mut data)?;
    Ok(store.save(id, &data, version).await?)
}

fn waiting(id: &str, state: &RunState) -> AgentError {
    ResumeError::SessionWaiting {
        session: id.to_owned(),
        waiting: state
            .pending()
            .iter()
            .map(|p| (p.call.id.to_string(), p.skill.clone()))
            .collect(),
    }
    .into()
}
