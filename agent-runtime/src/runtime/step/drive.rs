//! Driving a run from its state to its outcome: the run's effects and abilities are chosen here,
//! once (a journal's wrapper when the runtime has a journal, the typed answer when an output is
//! asked for, plan mode when the state is in it), the loop steps the state (`step/agent_loop.rs`), and what
//! it ends with becomes the [`RunOutcome`]: done, or paused with its state.

use tracing::Instrument;

use crate::event::AgentEvent;
use crate::runtime::AgentRuntime;
use crate::runtime::abilities::ability::Ability;
use crate::runtime::abilities::cost_budget::CostBudget;
use crate::runtime::abilities::plan_mode::PlanMode;
use crate::runtime::abilities::tree_budget::{TreeBudgets, TreeCounter};
use crate::runtime::agents::handoff::{self, Handoffs};
use crate::runtime::agents::nesting::{ChildUsage, Nesting};
use crate::runtime::finish::agent_error::{AgentError, ConfigError, ResumeError};
use crate::runtime::finish::finish_checks;
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::finish::output_type::OutputType;
use crate::runtime::finish::run_outcome::RunOutcome;
use crate::runtime::finish::typed_answer::TypedAnswer;
use crate::runtime::pause::admit;
use crate::runtime::step::agent_loop::Run;
use crate::runtime::step::effects::{Direct, Effects};
use crate::runtime::step::journal::{JournalStep, StepResult};
use crate::runtime::step::journaled::Journaled;
use crate::runtime::step::repair;
use crate::runtime::step::run_state::{Next, RunState};
use crate::runtime::step::spans;
use agent_core::context::RunScope;
use agent_core::registry::CurrentRegistry;
use agent_llm::message::{Message, Role};

/// A run on `transcript` from its start (repaired first: every call answered).
pub(in crate::runtime) async fn fresh(
    rt: &AgentRuntime,
    mut transcript: Vec<Message>,
    plan_mode: bool,
    output: Option<OutputType>,
) -> Result<RunOutcome, AgentError> {
    if transcript.is_empty() {
        return Err(ConfigError::NoGoal.into());
    }
    repair::answer_unanswered_calls(&mut transcript);
    drive(rt, RunState::new(transcript, plan_mode), output).await
}

/// Steps `state` until it is done or paused, handing the conversation on when an agent hands
/// it off (`agents/handoff.rs`). In plan mode the run ends in a plan; the typed value is asked for once
/// it is approved, so `output` is then left out.
pub(in crate::runtime) async fn drive(
    rt: &AgentRuntime,
    mut state: RunState,
    output: Option<OutputType>,
) -> Result<RunOutcome, AgentError> {
    let mut active = handoff::active(rt, &state.handoffs)?;
    if state.run_id.is_empty() {
        state.run_id = run_id(rt).await?;
    }
    loop {
        let (next, finish, answer) = run_agent(&active, state, output.clone()).await?;
        state = next;
        if let Some(to) = state.handing_to.take() {
            let step = state.steps;
            for sink in &active.settings.sinks {
                sink.send(&AgentEvent::HandedOff {
                    step,
                    to: to.clone(),
                });
            }
            handoff::hand_over(&active, &to, &mut state);
            active = handoff::active(rt, &state.handoffs)?;
            state.next = Next::Model;
            state.turn_closed = false;
            continue;
        }
        if state.is_paused() {
            // Sealed as it leaves: after the last change `outcome` makes to it.
            state.turn_closed = true;
            admit::leave(rt, &mut state)?;
        }
        return Ok(outcome(state, finish, answer));
    }
}

/// A new run's id: derived from the outer call's idempotency key for a run nested in a call
/// (the same on every attempt of that call); in a durable run, random and journaled (a replay
/// reads it back); otherwise random.
async fn run_id(rt: &AgentRuntime) -> Result<String, AgentError> {
    if let Some(key) = &rt.ancestry.parent_key {
        return Ok(agent_core::digest::idempotency_key(&[
            b"run",
            key.as_bytes(),
        ]));
    }
    let Some(journal) = rt.settings.journal.as_deref() else {
        return Ok(admit::random_id());
    };
    let made = Box::pin(async { StepResult::Done(admit::random_id().into()) });
    let value = journal
        .step(JournalStep::RunId, made)
        .await
        .map_err(|error| ResumeError::Journal {
            step: "the run id".into(),
            error,
        })?;
    match value {
        serde_json::Value::String(id) if !id.is_empty() => Ok(id),
        other => Err(ResumeError::JournalRunId {
            value: other.to_string(),
        }
        .into()),
    }
}

/// What a run that stopped, done or paused, hands back.
fn outcome(
    mut state: RunState,
    finish: FinishReason,
    answer: Option<serde_json::Value>,
) -> RunOutcome {
    state.turn_closed = true;
    let final_text = state
        .transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.content.is_empty())
        .map(|m| m.content.clone());
    let paused = state.is_paused();
    RunOutcome {
        finish,
        transcript: if paused {
            state.transcript.clone()
        } else {
            std::mem::take(&mut state.transcript)
        },
        final_text,
        usage: state.usage,
        cost: state.cost,
        agents: state.agents.clone(),
        handoffs: state.handoffs.clone(),
        steps: state.steps,
        agent_steps: state.agent_steps,
        output: answer,
        state: paused.then(|| Box::new(state)),
    }
}

/// One agent's part of a run: its effects and abilities chosen, its state stepped until it is
/// done, paused or handed on.
async fn run_agent(
    rt: &AgentRuntime,
    mut state: RunState,
    output: Option<OutputType>,
) -> Result<(RunState, FinishReason, Option<serde_json::Value>), AgentError> {
    let mut abilities: Vec<Box<dyn Ability + '_>> = Vec::new();
    if let Some(output) = output.filter(|_| !state.plan_mode) {
        let output = rt.output_state(output)?;
        state.output.get_or_insert_with(|| output.start());
        abilities.push(Box::new(TypedAnswer { output }));
    }
    if state.plan_mode {
        abilities.push(Box::new(PlanMode {
            registry: &rt.settings.registry,
        }));
    }
    if !rt.settings.handoffs.is_empty() {
        abilities.push(Box::new(Handoffs {
            offered: &rt.settings.handoffs,
        }));
    }
    let mut tree = rt.ancestry.tree.clone();
    tree.extend(TreeCounter::start(rt.settings.tree_budget, &state));
    if !tree.is_empty() {
        abilities.push(Box::new(TreeBudgets {
            counters: tree.clone(),
        }));
    }
    if let Some(limit) = rt.settings.max_cost {
        let provider = rt.settings.provider.name();
        let model =
            rt.settings
                .provider
                .model()
                .ok_or_else(|| ConfigError::CostBudgetWithoutModel {
                    limit,
                    provider: provider.to_owned(),
                })?;
        let price = rt.price_table().price(provider, model).ok_or_else(|| {
            ConfigError::CostBudgetWithoutPrice {
                limit,
                provider: provider.to_owned(),
                model: model.to_owned(),
            }
        })?;
        abilities.push(Box::new(CostBudget { limit, price }));
    }
    let nesting = Nesting {
        path: rt.ancestry.path.clone(),
        sinks: rt.settings.sinks.clone(),
        used: Default::default(),
        journal: rt.settings.journal.clone(),
        tree,
    };
    abilities.push(Box::new(ChildUsage {
        used: nesting.used.clone(),
    }));
    let model_use = nesting.model_use_reporter(rt.settings.prices.clone());
    let ctx = rt
        .settings
        .context
        .clone()
        .with_cancellation(rt.settings.cancellation.clone())
        .with_scope(RunScope::new())
        .with_extension(nesting)
        .with_extension(model_use)
        .with_extension(CurrentRegistry(rt.settings.registry.clone()));
    for name in &state.loaded_skills {
        ctx.scope().load(name.clone());
    }
    let direct = Direct { rt };
    match rt.settings.journal.as_deref() {
        Some(journal) => {
            let journaled = Journaled { direct, journal };
            step(Run::new(rt, journaled, abilities, ctx, state)).await
        }
        None => step(Run::new(rt, direct, abilities, ctx, state)).await,
    }
}

/// Steps `run` until it is done or paused, in the run's span, and ends its last step: the state
/// it stopped in, why, and a typed run's checked value.
async fn step<E: Effects>(
    mut run: Run<'_, E>,
) -> Result<(RunState, FinishReason, Option<serde_json::Value>), AgentError> {
    let rt = run.rt;
    let span = spans::invoke_agent(rt, &mut run.state);
    let result = run.go().instrument(span.clone()).await;
    spans::agent_done(&span, &run.state, result.as_ref().err());
    result?;
    let (finish, answer) = match &run.state.next {
        Next::Done { finish, answer } => (finish.clone(), answer.clone()),
        Next::Decisions { pending, .. } => {
            (finish_checks::awaiting_approval(pending.clone()), None)
        }
        Next::Model | Next::Calls { .. } => unreachable!("the loop stops only when done or paused"),
    };
    let step = run.state.steps;
    // An agent that handed the conversation on ends its turn, not the run.
    let handed_on = run.state.handing_to.is_some();
    run.emit(|| AgentEvent::TurnFinished {
        step,
        finish: (!handed_on).then(|| finish.clone()),
    });
    let mut state = run.state;
    state.loaded_skills = run.ctx.scope().loaded();
    Ok((state, finish, answer))
}
