//! What ends a run abnormally, [`AgentError`], and the two kinds of it a caller most often
//! branches on, each an enum with a variant per case: a runtime or request that cannot work
//! ([`ConfigError`]), and a paused run that cannot continue as asked ([`ResumeError`]).

use crate::runtime::step::journal::JournalError;
use crate::session::error::StoreError;
use agent_llm::llm::ProviderError;
use agent_llm::price::Usd;

/// What ends a run abnormally. Skill failures never do: they go back to the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model could not be reached or answered with an error, after retries.
    #[error("the model call failed: {0}")]
    Provider(#[from] ProviderError),
    /// The runtime or the request is configured in a way that cannot work; nothing ran.
    #[error("invalid runtime configuration: {0}")]
    Config(#[from] ConfigError),
    /// A paused run cannot continue as asked: a pending call has no decision, a decision names
    /// no pending call, or the state does not fit this runtime. Nothing ran.
    #[error("cannot resume the run: {0}")]
    Resume(#[from] ResumeError),
    /// A session could not be loaded or saved ([`RunRequest::in_session`](
    /// crate::runtime::RunRequest::in_session)); a [`StoreError::Conflict`] means another run saved it
    /// first.
    #[error(transparent)]
    Session(#[from] StoreError),
    /// A state or session record that came back to a runtime that seals them
    /// ([`AgentRuntime::seal_states`](crate::runtime::AgentRuntime::seal_states)) is not sealed, is sealed
    /// with a key the runtime does not accept, or was changed. Nothing ran, nothing was saved.
    #[error("refused a state that does not pass its seal check: {0}")]
    Sealed(#[from] crate::runtime::pause::seal::SealError),
}

/// A runtime or a request that cannot work ([`AgentError::Config`]): found before the first
/// model call, so nothing ran.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The run was given no message at all (a run needs its goal).
    #[error("a run needs at least one message (the goal)")]
    NoGoal,
    /// A money budget ([`AgentRuntime::max_cost`](crate::runtime::AgentRuntime::max_cost)) on a
    /// provider that names no model, so no call can be priced.
    #[error(
        "a money budget (max_cost {limit}) needs a provider that names its model; `{provider}` \
         names none"
    )]
    CostBudgetWithoutModel {
        /// The budget.
        limit: Usd,
        /// The provider's name.
        provider: String,
    },
    /// A money budget on a model the runtime's price table has no price for.
    #[error(
        "a money budget (max_cost {limit}) needs a price for the model: the price table has none \
         for `{model}` from `{provider}` (give one with AgentRuntime::prices)"
    )]
    CostBudgetWithoutPrice {
        /// The budget.
        limit: Usd,
        /// The provider's name.
        provider: String,
        /// The model the provider names.
        model: String,
    },
    /// A typed run ends with a call to `final_answer`, and the registry has a skill of that
    /// name already.
    #[error(
        "a typed run ends with a call to `{name}`, and the registry already has a skill by that \
         name: rename it"
    )]
    FinalAnswerTaken {
        /// The tool's name ([`FINAL_ANSWER_TOOL`](crate::runtime::FINAL_ANSWER_TOOL)).
        name: String,
    },
    /// A typed run's value passed its check but did not deserialize into the type asked for
    /// (the check is the same deserialization, so this means a bug, said rather than hidden).
    #[error("the checked output did not deserialize: {error}")]
    OutputType {
        /// What deserialization said.
        error: String,
    },
    /// [`RunRequest::attach`](crate::runtime::RunRequest::attach) on a run that is resumed or
    /// continued: it adds to the goal of `run(goal)` only.
    #[error(
        "attach(..) adds to the goal of run(goal); a resumed or continued run carries its own \
         messages: attach to a Message with Message::attach"
    )]
    AttachWithoutGoal,
    /// A request that brings its own conversation (a transcript, a plan to approve, a paused
    /// state) made in a session, which keeps its own.
    #[error(
        "session `{session}` keeps its own conversation: in a session, run(goal) continues it and \
         decide(decisions) continues its paused run"
    )]
    SessionKeepsItsConversation {
        /// The session's id.
        session: String,
    },
    /// [`AgentRuntime::decide`](crate::runtime::AgentRuntime::decide) without a session to find the
    /// paused run in.
    #[error(
        "decide(..) continues a session's paused run: add .in_session(&store, id), or continue a \
         state in hand with continue_paused(state, decisions)"
    )]
    DecideWithoutSession,
}

/// Why a paused run cannot continue as asked ([`AgentError::Resume`]): the state, the decisions
/// or the journal do not fit. Checked before anything runs: nothing ran.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The state's format label names an older version than its content has: it is malformed
    /// or was edited. (A version this build does not read at all is refused as it is
    /// deserialized.)
    #[error(
        "the state is labelled format version {version} but holds {holds}, which version {since} \
         added: it is malformed or was edited; refused"
    )]
    FormatLabel {
        /// The version the label names.
        version: u32,
        /// What the state holds that the version does not have.
        holds: &'static str,
        /// The version that added it.
        since: u32,
    },
    /// The state has no pause id (an older build made it), and the runtime continues each
    /// pause once ([`AgentRuntime::pause_claims`](crate::runtime::AgentRuntime::pause_claims)).
    #[error(
        "the state has no pause id (it was made by an older build), and this runtime continues \
         each pause once: continue it with a runtime without pause claims"
    )]
    NoPauseId,
    /// The pause was continued before: a paused state continues once.
    #[error(
        "the pause `{pause_id}` was continued already: a paused state continues once, and nothing ran"
    )]
    AlreadyContinued {
        /// The pause's id.
        pause_id: String,
    },
    /// The run is not waiting for a decision.
    #[error("the run is not waiting for a decision: there is nothing to approve or deny")]
    NotPaused,
    /// Two decisions name the same call.
    #[error("two decisions for the call `{id}`: give one")]
    TwoDecisions {
        /// The call's id.
        id: String,
    },
    /// Decisions that name no pending call, pending calls without a decision, or both (named
    /// together: a misspelled id is both).
    #[error(
        "{}: approve, deny or edit each of {}",
        unmatched(unknown, missing),
        quoted(pending)
    )]
    UnmatchedDecisions {
        /// The ids decisions were given for that no pending call has, sorted.
        unknown: Vec<String>,
        /// The pending calls that have no decision, in the pending list's order.
        missing: Vec<String>,
        /// Every pending call's id.
        pending: Vec<String>,
    },
    /// A decision made on a call a person was shown ([`CallRef::seen`](crate::CallRef::seen))
    /// answers a call whose digest differs: it changed since.
    #[error(
        "the decision for `{id}` was made on another version of the call than the one waiting \
         (its digest differs): show the person the call again; nothing ran"
    )]
    NotTheCallShown {
        /// The call's id.
        id: String,
    },
    /// The state lists a pending call twice.
    #[error(
        "the state lists the pending call `{id}` twice: it is malformed (edited?), and nothing ran"
    )]
    PendingTwice {
        /// The call's id.
        id: String,
    },
    /// The state's last message has two calls with one id.
    #[error(
        "the state's last message has two calls with the id `{id}`: it is malformed (edited?), \
         and nothing ran"
    )]
    CallIdTwice {
        /// The id.
        id: String,
    },
    /// A pending call is not among the calls the state's transcript ends with.
    #[error(
        "the state's transcript does not end with the call `{id}` it says is pending: refused \
         (edited?), nothing ran"
    )]
    PendingNotInTranscript {
        /// The id of the run's own call (the outer one, for a call inside another).
        id: String,
    },
    /// A pending call differs between the pending list (what a person is shown) and the
    /// transcript (what would run): in its skill or its arguments.
    #[error(
        "the pending call `{id}` differs between the state's pending list and its transcript \
         (skill or arguments): the state was edited; refused, nothing ran"
    )]
    PendingDiffers {
        /// The call's id.
        id: String,
    },
    /// A pending call is to a skill this runtime's registry does not have.
    #[error("the pending call `{id}` is to `{skill}`, which this runtime's registry does not have")]
    UnknownSkill {
        /// The id of the run's own call.
        id: String,
        /// The skill's name, as the call names it.
        skill: String,
    },
    /// The state says the run was handed to an agent this runtime does not offer
    /// ([`AgentRuntime::handoff`](crate::runtime::AgentRuntime::handoff)).
    #[error("the run was handed to `{agent}`, which this runtime does not offer")]
    UnknownHandoff {
        /// The agent's name, as the state records it.
        agent: String,
    },
    /// A typed run's pause continued as an untyped run.
    #[error("the paused run is typed: continue it with `.typed::<T>()` or `.output(..)`")]
    TypedRun,
    /// [`AgentRuntime::decide`](crate::runtime::AgentRuntime::decide) on a session with no paused run.
    #[error("session `{session}` has no run waiting for a decision")]
    NothingWaiting {
        /// The session's id.
        session: String,
    },
    /// A new goal for a session whose run waits for decisions.
    #[error(
        "session `{session}` is waiting for a decision on {}: approve or deny before asking more",
        waiting.iter().map(|(id, skill)| format!("`{id}` ({skill})")).collect::<Vec<_>>().join(", ")
    )]
    SessionWaiting {
        /// The session's id.
        session: String,
        /// The calls that wait: (id, skill).
        waiting: Vec<(String, String)>,
    },
    /// A durable run's journal could not give a step's result.
    #[error("the journal failed at {step}: {error}")]
    Journal {
        /// The step, as [`JournalStep`](crate::runtime::JournalStep) names it.
        step: String,
        /// What the journal said.
        #[source]
        error: JournalError,
    },
    /// A step's journaled result does not read back: another version wrote it, or it was
    /// changed.
    #[error(
        "the journal's entry for {step} does not read back ({error}): it was written by another \
         version of agent-core, or changed; finish the run with the version that started it"
    )]
    JournalEntry {
        /// The step.
        step: String,
        /// What reading it said.
        error: String,
    },
    /// A step's result could not be turned into JSON to be journaled.
    #[error("the result of {step} could not be journaled: {error}")]
    NotJournaled {
        /// The step.
        step: String,
        /// What serializing it said.
        error: String,
    },
    /// The journal's run id is not an id.
    #[error("the journal's run id does not read back as an id: {value}")]
    JournalRunId {
        /// What the journal holds instead, as JSON.
        value: String,
    },
}

/// The decisions' mistakes, both named.
fn unmatched(unknown: &[String], missing: &[String]) -> String {
    let mut problems = Vec::new();
    if !unknown.is_empty() {
        let one = unknown.len() == 1;
        problems.push(format!(
            "the decision{} for {} name{} no pending call",
            if one { "" } else { "s" },
            quoted(unknown),
            if one { "s" } else { "" },
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "no decision for the pending call{} {}",
            if missing.len() == 1 { "" } else { "s" },
            quoted(missing),
        ));
    }
    problems.join(", and ")
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
