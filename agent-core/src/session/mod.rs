//! Sessions: a conversation kept in a [`SessionStore`] under an id, so that it continues across
//! processes, and a run paused for approval there can be resumed by id.
//!
//! ```
//! use agent_core::{AgentRuntime, MemorySessionStore, MockProvider, MockReply, Registry};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let store = MemorySessionStore::default();
//! let provider = MockProvider::new([MockReply::text("Hi!"), MockReply::text("You said hello.")]);
//! let runtime = AgentRuntime::new(provider, Registry::new());
//! runtime.session(&store, "chat-1").run("Hello.").await.unwrap();
//! // Later, maybe in another process with a store on disk:
//! let outcome = runtime.session(&store, "chat-1").run("What did I say?").await.unwrap();
//! assert_eq!(outcome.transcript.len(), 4);
//! # }
//! ```
//!
//! **Concurrency.** Every save names the version it read ([`SessionStore::save`]); a save over a
//! newer version is refused with [`StoreError::Conflict`], so of two runs of one session that
//! race, one is kept and the other is told, never silently lost.

pub(crate) mod error;
#[cfg(feature = "redb")]
mod redb;

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::runtime::{
    AgentError, AgentRuntime, Decision, FinishReason, OutputType, RunOutcome, RunState,
};

pub use self::error::StoreError;
#[cfg(feature = "redb")]
pub use self::redb::RedbSessionStore;

/// What a session keeps: the conversation, and the paused run when it waits for a decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionData {
    /// The conversation so far.
    pub transcript: Vec<Message>,
    /// The run paused for approval, if the session's last run did.
    pub paused: Option<RunState>,
}

/// A session as loaded: its data and the version to name when saving it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The data.
    pub data: SessionData,
    /// The version read; [`SessionStore::save`] refuses to write over any other.
    pub version: u64,
}

/// Where sessions are kept. Implementations must make [`SessionStore::save`] atomic with its
/// version check: of two saves naming the same version, exactly one succeeds.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// The session `id`, or `None` when there is none.
    async fn load(&self, id: &str) -> Result<Option<Loaded>, StoreError>;

    /// Saves `data` as session `id` if the stored version is still `expected` (`None`: the
    /// session must not exist yet), and returns the new version; otherwise
    /// [`StoreError::Conflict`] and nothing is written.
    async fn save(
        &self,
        id: &str,
        data: &SessionData,
        expected: Option<u64>,
    ) -> Result<u64, StoreError>;
}

/// A [`SessionStore`] in memory, for tests and for processes that keep their sessions to
/// themselves. [`RedbSessionStore`] keeps them on disk.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, (u64, SessionData)>>,
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    async fn load(&self, id: &str) -> Result<Option<Loaded>, StoreError> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        Ok(sessions.get(id).map(|(version, data)| Loaded {
            data: data.clone(),
            version: *version,
        }))
    }

    async fn save(
        &self,
        id: &str,
        data: &SessionData,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let found = sessions.get(id).map(|(version, _)| *version);
        next_version(id, expected, found).inspect(|&version| {
            sessions.insert(id.to_owned(), (version, data.clone()));
        })
    }
}

/// The version a save writes, if the stored one (`found`) is the `expected` one.
pub(crate) fn next_version(
    id: &str,
    expected: Option<u64>,
    found: Option<u64>,
) -> Result<u64, StoreError> {
    if found != expected {
        return Err(StoreError::Conflict {
            id: id.to_owned(),
            expected,
            found: found.unwrap_or(0),
        });
    }
    Ok(found.map_or(1, |v| v + 1))
}

/// A runtime working on one session of a store: see [`AgentRuntime::session`].
pub struct Session<'a> {
    runtime: &'a AgentRuntime,
    store: &'a dyn SessionStore,
    id: String,
}

impl AgentRuntime {
    /// This runtime on session `id` of `store`: [`Session::run`] continues the conversation,
    /// [`Session::resume`] a run paused for approval.
    pub fn session<'a>(
        &'a self,
        store: &'a dyn SessionStore,
        id: impl Into<String>,
    ) -> Session<'a> {
        Session {
            runtime: self,
            store,
            id: id.into(),
        }
    }
}

impl Session<'_> {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the session holds now, if it exists.
    pub async fn load(&self) -> Result<Option<SessionData>, AgentError> {
        Ok(self.store.load(&self.id).await?.map(|l| l.data))
    }

    /// Runs `goal` as the session's next message and saves the conversation (and, if the run
    /// pauses, its state). A session that waits for a decision must be resumed first.
    pub async fn run(&self, goal: impl Into<String>) -> Result<RunOutcome, AgentError> {
        self.run_inner(goal.into(), None).await
    }

    /// [`Session::run`] for a typed run ([`AgentRuntime::resume_with_output`]): the outcome's
    /// `output` holds the checked value.
    pub async fn run_with_output(
        &self,
        goal: impl Into<String>,
        output: OutputType,
    ) -> Result<RunOutcome, AgentError> {
        self.run_inner(goal.into(), Some(output)).await
    }

    async fn run_inner(
        &self,
        goal: String,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        let loaded = self.store.load(&self.id).await?;
        let version = loaded.as_ref().map(|l| l.version);
        let mut transcript = match loaded {
            Some(Loaded {
                data:
                    SessionData {
                        paused: Some(state),
                        ..
                    },
                ..
            }) => return Err(self.waiting(&state)),
            Some(loaded) => loaded.data.transcript,
            None => Vec::new(),
        };
        transcript.push(Message::user(goal));
        let outcome = match output {
            Some(output) => self.runtime.resume_with_output(transcript, output).await?,
            None => self.runtime.resume(transcript).await?,
        };
        self.save(&outcome, version).await?;
        Ok(outcome)
    }

    /// Continues the session's paused run with a decision for each pending call (see
    /// [`AgentRuntime::resume_state`]) and saves the result.
    ///
    /// The decisions are checked first, then the pause is **claimed**: the session is saved
    /// without it, under the version read, before any call runs. Of two processes resuming the
    /// same pause, one claims it and the other gets [`StoreError::Conflict`] having run nothing,
    /// so an approved call runs once. A process that stops between the claim and the end of the
    /// run leaves the session without the pause (a call it approved ran at most once).
    pub async fn resume<I: Into<String>>(
        &self,
        decisions: impl IntoIterator<Item = (I, Decision)>,
    ) -> Result<RunOutcome, AgentError> {
        self.resume_inner(decisions, None).await
    }

    /// [`Session::resume`] for a typed run that paused.
    pub async fn resume_with_output<I: Into<String>>(
        &self,
        decisions: impl IntoIterator<Item = (I, Decision)>,
        output: OutputType,
    ) -> Result<RunOutcome, AgentError> {
        self.resume_inner(decisions, Some(output)).await
    }

    async fn resume_inner<I: Into<String>>(
        &self,
        decisions: impl IntoIterator<Item = (I, Decision)>,
        output: Option<OutputType>,
    ) -> Result<RunOutcome, AgentError> {
        let loaded = self.store.load(&self.id).await?;
        let Some(Loaded {
            data:
                SessionData {
                    paused: Some(state),
                    ..
                },
            version,
        }) = loaded
        else {
            return Err(AgentError::Resume(format!(
                "session `{}` has no run waiting for a decision",
                self.id
            )));
        };
        let decisions = self.runtime.checked_decisions(&state, decisions)?;
        crate::runtime::pause::check_output(&state, output.is_some())?;
        let claim = SessionData {
            transcript: state.transcript.clone(),
            paused: None,
        };
        let claimed = self.store.save(&self.id, &claim, Some(version)).await?;
        let outcome = self
            .runtime
            .resume_checked(state, decisions, output)
            .await?;
        self.save(&outcome, Some(claimed)).await?;
        Ok(outcome)
    }

    async fn save(&self, outcome: &RunOutcome, version: Option<u64>) -> Result<u64, AgentError> {
        let data = SessionData {
            transcript: outcome.transcript.clone(),
            paused: match outcome.finish {
                FinishReason::AwaitingApproval { .. } => outcome.state.as_deref().cloned(),
                _ => None,
            },
        };
        Ok(self.store.save(&self.id, &data, version).await?)
    }

    fn waiting(&self, state: &RunState) -> AgentError {
        let ids: Vec<String> = state
            .pending
            .iter()
            .map(|p| format!("`{}` ({})", p.call.id, p.skill))
            .collect();
        AgentError::Resume(format!(
            "session `{}` is waiting for a decision on {}: approve or deny before asking more",
            self.id,
            ids.join(", ")
        ))
    }
}
