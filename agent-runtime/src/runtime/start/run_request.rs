//! One way to start a run: [`RunRequest`], made by one of the runtime's five starts and awaited.
//! Settings for this run go on the request, all optional:
//!
//! | start | what it continues |
//! |---|---|
//! | [`AgentRuntime::run`]`(goal)` | nothing: a new conversation on the goal (in a session, the session's conversation) |
//! | [`AgentRuntime::resume`]`(transcript)` | a conversation, with the user's next message appended |
//! | [`AgentRuntime::continue_paused`]`(state, decisions)` | a run paused for approval, with a decision for each pending call |
//! | [`AgentRuntime::decide`]`(decisions)` | a session's paused run (needs [`RunRequest::in_session`]) |
//! | [`AgentRuntime::approve_plan`]`(transcript)` | a run that ended with its plan, which is carried out |
//!
//! | setting | what it does |
//! |---|---|
//! | [`RunRequest::typed`]`::<T>()` | the run ends in a checked `T` ([`TypedOutcome`]) |
//! | [`RunRequest::output`]`(output)` | the same for an output type known at run time; the value as JSON |
//! | [`RunRequest::in_session`]`(&store, id)` | the conversation is read from and saved to a [`SessionStore`] |
//!
//! ```
//! use agent_core::{Registry, ToolCall};
//! use agent_llm::{MockProvider, MockReply};
//! use agent_runtime::AgentRuntime;
//! use agent_core::{schemars, serde};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
//! #[serde(crate = "agent_core::serde")]
//! #[schemars(crate = "agent_core::schemars")]
//! struct Verdict { approve: bool, reason: String }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! // With tools on offer, the model answers by calling `final_answer`.
//! let provider = MockProvider::new([MockReply::tool_calls([ToolCall::new(
//!     "c1",
//!     "final_answer",
//!     json!({"approve": true, "reason": "tests pass"}),
//! )])]);
//! let runtime = AgentRuntime::new(provider, Registry::new());
//! let outcome = runtime.run("Review the change.").typed::<Verdict>().await.unwrap();
//! assert_eq!(
//!     outcome.output,
//!     Some(Verdict { approve: true, reason: "tests pass".into() })
//! );
//! # }
//! ```

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::runtime::AgentRuntime;
use crate::runtime::finish::agent_error::{AgentError, ConfigError};
use crate::runtime::finish::output_type::OutputType;
use crate::runtime::finish::run_outcome::RunOutcome;
use crate::runtime::finish::typed_outcome::TypedOutcome;
use crate::runtime::pause::admit;
use crate::runtime::pause::decisions;
use crate::runtime::start::in_session::{self, SessionStart};
use crate::runtime::step::drive;
use crate::runtime::step::run_state::RunState;
use crate::session::SessionStore;
use agent_core::pending::{CallRef, Decision};
use agent_llm::message::Message;

/// Where a run starts.
enum Start {
    /// A goal (with any attachments): a new conversation, or the session's next message.
    Goal(Message),
    /// A conversation to continue.
    Transcript(Vec<Message>),
    /// A plan to carry out: the conversation that ended with it.
    ApprovePlan(Vec<Message>),
    /// A paused run and the decisions that continue it.
    Paused(Box<RunState>, Vec<(CallRef, Decision)>),
    /// Decisions for the session's paused run.
    Decide(Vec<(CallRef, Decision)>),
}

/// A run about to start: awaited, it runs to its [`RunOutcome`]. See the [module
/// docs](crate::runtime).
#[must_use = "a run request does nothing until it is awaited"]
pub struct RunRequest<'r> {
    runtime: &'r AgentRuntime,
    start: Start,
    output: Option<OutputType>,
    session: Option<(&'r dyn SessionStore, String)>,
    /// Set by [`RunRequest::attach`] on a start that has no goal to attach to.
    attach_refused: bool,
}

/// A typed run about to start: awaited, it runs to its [`TypedOutcome`]. Made by
/// [`RunRequest::typed`].
#[must_use = "a run request does nothing until it is awaited"]
pub struct TypedRunRequest<'r, T> {
    request: RunRequest<'r>,
    output: PhantomData<fn() -> T>,
}

fn decisions<I: Into<CallRef>>(
    decisions: impl IntoIterator<Item = (I, Decision)>,
) -> Vec<(CallRef, Decision)> {
    decisions
        .into_iter()
        .map(|(id, decision)| (id.into(), decision))
        .collect()
}

impl AgentRuntime {
    fn request(&self, start: Start) -> RunRequest<'_> {
        RunRequest {
            runtime: self,
            start,
            output: None,
            session: None,
            attach_refused: false,
        }
    }

    /// A run on a goal.
    ///
    /// ```
    /// use agent_core::Registry;
    /// use agent_llm::{MockProvider, MockReply};
    /// use agent_runtime::{AgentRuntime, FinishReason};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let runtime = AgentRuntime::new(MockProvider::new([MockReply::text("Hi!")]), Registry::new());
    /// let outcome = runtime.run("Say hi.").await.unwrap();
    /// assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    /// # }
    /// ```
    pub fn run(&self, goal: impl Into<String>) -> RunRequest<'_> {
        self.request(Start::Goal(Message::user(goal)))
    }

    /// A run that continues a conversation (multi-turn chat): append the user's next message to
    /// the previous outcome's transcript and resume.
    ///
    /// A tool call the transcript leaves unanswered (one saved before its results were) is
    /// answered with an error result saying it was not run, so the model is never sent a call
    /// without its result; the model may make it again.
    pub fn resume(&self, transcript: Vec<Message>) -> RunRequest<'_> {
        self.request(Start::Transcript(transcript))
    }

    /// A run that continues one paused for approval ([`FinishReason::AwaitingApproval`](
    /// crate::runtime::FinishReason::AwaitingApproval)), with a decision for each pending call (by call
    /// id): approved calls run exactly once, edited ones with their new arguments, denied ones are
    /// answered with the reason (a denial, counted as any other). The run then goes on where it
    /// stopped: budgets, guards, loaded skills and plan mode continue. A typed run that paused is
    /// continued typed (`.typed::<T>()` or `.output(..)`).
    ///
    /// This runtime may be another than the one that paused, in another process: it needs a
    /// registry with the pending calls' skills (by name). A pending call without a decision, or a
    /// decision for no pending call, is [`AgentError::Resume`], and nothing runs.
    ///
    /// ```
    /// use agent_llm::{MockProvider, MockReply};
    /// use agent_runtime::{AgentRuntime, Decision, FinishReason};
    /// use agent_core::{PermissionGate, Permission, Registry, ToolCall, skill};
    /// use agent_runtime::RunState;
    /// use serde_json::json;
    ///
    /// /// Delete a file.
    /// ///
    /// /// # Arguments
    /// /// * `path` - The file to delete.
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
    /// let done = runtime.continue_paused(state, [("c1", Decision::Approve)]).await.unwrap();
    /// assert_eq!(done.final_text.as_deref(), Some("Deleted."));
    /// # }
    /// ```
    pub fn continue_paused<I: Into<CallRef>>(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> RunRequest<'_> {
        self.request(Start::Paused(Box::new(state), self::decisions(decisions)))
    }

    /// A run that continues a session's paused run with a decision for each pending call, as
    /// [`AgentRuntime::continue_paused`] does with a state in hand. Give the session with
    /// [`RunRequest::in_session`]; without one the request fails with [`AgentError::Config`].
    pub fn decide<I: Into<CallRef>>(
        &self,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> RunRequest<'_> {
        self.request(Start::Decide(self::decisions(decisions)))
    }

    /// A run that carries out the plan of a run that ended with [`FinishReason::PlanPending`](
    /// crate::runtime::FinishReason::PlanPending): the same transcript continues, with plan mode off.
    /// Approving the plan is not approving each call in it: a destructive call still waits for
    /// its own decision (the run pauses with `AwaitingApproval`) unless the registry's
    /// [`DestructiveCalls`](agent_core::DestructiveCalls) policy or a hook says otherwise, since
    /// the calls the model makes need not be the ones the plan described.
    pub fn approve_plan(&self, transcript: Vec<Message>) -> RunRequest<'_> {
        self.request(Start::ApprovePlan(transcript))
    }
}

impl<'r> RunRequest<'r> {
    /// The run ends in a value checked against `output` (a JSON Schema and a check, known at run
    /// time); the outcome's `output` holds it as JSON. See [`OutputMode`](crate::runtime::OutputMode) for
    /// how the model is asked.
    pub fn output(mut self, output: OutputType) -> Self {
        self.output = Some(output);
        self
    }

    /// The run ends in a checked `T`: the outcome's `output` holds it, or is `None` with a finish
    /// reason that says why (for example [`Budget::OutputRetries`](crate::runtime::Budget::OutputRetries)
    /// with the last error). Comes last, after the other settings.
    pub fn typed<T: DeserializeOwned + JsonSchema>(self) -> TypedRunRequest<'r, T> {
        TypedRunRequest {
            request: self.output(OutputType::of::<T>()),
            output: PhantomData,
        }
    }

    /// Keeps the conversation in session `id` of `store`: [`AgentRuntime::run`] continues the
    /// session's conversation with the goal, [`AgentRuntime::decide`] its paused run; the outcome
    /// (and, if the run pauses, its state) is saved. See [`crate::session`] for how two processes
    /// on one session are kept apart. The other starts carry their conversation themselves and
    /// fail with [`AgentError::Config`] in a session.
    pub fn in_session(mut self, store: &'r dyn SessionStore, id: impl Into<String>) -> Self {
        self.session = Some((store, id.into()));
        self
    }

    /// Attaches an image, a document, a sound (or more text) to the goal of
    /// [`AgentRuntime::run`]; call it once per part. The bytes are shared, not copied, for the
    /// whole run. Other starts carry their own messages (attach to those with
    /// [`Message::attach`]): for them this is [`AgentError::Config`] when the run is awaited.
    ///
    /// ```
    /// use agent_core::{Registry, content::Media};
    /// use agent_llm::{MockProvider, MockReply};
    /// use agent_runtime::AgentRuntime;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let runtime = AgentRuntime::new(MockProvider::new([MockReply::text("A red dot.")]), Registry::new());
    /// let photo = Media::sniff(agent_core::content::tiny_png()).unwrap().named("photo.png");
    /// let outcome = runtime.run("What is in this photo?").attach(photo).await.unwrap();
    /// assert_eq!(outcome.transcript[0].media().count(), 1);
    /// # }
    /// ```
    pub fn attach(mut self, part: impl Into<agent_core::content::Part>) -> Self {
        match &mut self.start {
            Start::Goal(goal) => goal.parts.push(part.into()),
            _ => self.attach_refused = true,
        }
        self
    }

    /// The runtime the request runs on.
    pub(in crate::runtime) fn runtime(&self) -> &'r AgentRuntime {
        self.runtime
    }

    /// Whether a typed request's value is asked for wrapped, as `{"value": ...}`.
    pub(in crate::runtime) fn is_wrapped(&self) -> bool {
        self.output.as_ref().is_some_and(OutputType::is_wrapped)
    }

    /// The same request, run on `runtime` (a clone of its own with another sink, say).
    pub(in crate::runtime) fn on<'a>(self, runtime: &'a AgentRuntime) -> RunRequest<'a>
    where
        'r: 'a,
    {
        RunRequest { runtime, ..self }
    }

    pub(in crate::runtime) async fn send(self) -> Result<RunOutcome, AgentError> {
        if self.attach_refused {
            return Err(ConfigError::AttachWithoutGoal.into());
        }
        let RunRequest {
            runtime: rt,
            start,
            output,
            session,
            attach_refused: _,
        } = self;
        if let Some((store, id)) = session {
            let start = match start {
                Start::Goal(goal) => SessionStart::Goal(goal),
                Start::Decide(decisions) => SessionStart::Decide(decisions),
                Start::Transcript(_) | Start::ApprovePlan(_) | Start::Paused(..) => {
                    return Err(ConfigError::SessionKeepsItsConversation { session: id }.into());
                }
            };
            return in_session::send(rt, store, &id, start, output).await;
        }
        match start {
            Start::Goal(goal) => drive::fresh(rt, vec![goal], rt.settings.plan_mode, output).await,
            Start::Transcript(transcript) => {
                drive::fresh(rt, transcript, rt.settings.plan_mode, output).await
            }
            Start::ApprovePlan(transcript) => {
                drive::fresh(rt, approved(transcript), false, output).await
            }
            Start::Paused(mut state, decisions) => {
                admit::check(rt, &mut state)?;
                let active = crate::runtime::agents::handoff::active(rt, &state.handoffs)?;
                decisions::decide(&mut state, decisions, &active.settings.registry)?;
                decisions::check_output(&state, output.is_some())?;
                admit::claim(rt, &state).await?;
                drive::drive(rt, *state, output).await
            }
            Start::Decide(_) => Err(ConfigError::DecideWithoutSession.into()),
        }
    }
}

/// The transcript with the user's approval of the plan added.
pub(in crate::runtime) fn approved(mut transcript: Vec<Message>) -> Vec<Message> {
    transcript.push(Message::user("The plan is approved. Carry it out now."));
    transcript
}

impl<'r> IntoFuture for RunRequest<'r> {
    type Output = Result<RunOutcome, AgentError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<'r, T> TypedRunRequest<'r, T> {
    /// The untyped request inside.
    pub(in crate::runtime) fn into_request(self) -> RunRequest<'r> {
        self.request
    }
}

impl<'r, T: DeserializeOwned + 'r> IntoFuture for TypedRunRequest<'r, T> {
    type Output = Result<TypedOutcome<T>, AgentError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        let run = self.request.send();
        Box::pin(async move { TypedOutcome::new(run.await?) })
    }
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("typed", &self.output.is_some())
            .field("session", &self.session.as_ref().map(|(_, id)| id))
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for TypedRunRequest<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TypedRunRequest")
            .field(&self.request)
            .finish()
    }
}
