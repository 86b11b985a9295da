//! A run, as data: the [`RunState`] the loop steps, and hands back when it stops for a decision.
//! Plain data only: the loop (`step/agent_loop.rs`) advances it.
//!
//! A state is `Serialize + Deserialize` and carries a format version, written first. Reading a
//! state of another version is an error that says which versions are involved, before any other
//! field is read: never a misread.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::runtime::finish::agent_error::ResumeError;
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::step::guards::{DenialGuard, StuckGuard};
use crate::runtime::step::tool_record::ToolRecord;
use agent_core::pending::{PendingCall, Resumption};
use agent_llm::message::{Message, Usage};

/// The format version of [`RunState`] this build writes. Version 5 adds media: messages with
/// parts (images, documents, audio, their bytes in base64) and tool results with them; version 4
/// added the run's id, the pause's id and the seal; version 3 added calls that suspended (nested agents' pauses) and children's
/// usage; this build reads versions 2 to 5, and refuses a state whose label claims an older
/// version than its content has (a version 2 state has none of version 3's fields). Version 2 is
/// the whole run (version 1 was a snapshot taken at a pause).
pub const RUN_STATE_VERSION: u32 = 5;

/// The oldest format version this build reads.
const OLDEST_READ: u32 = 2;

/// A run, as one value: everything it is and what it does next. The loop advances it one step at
/// a time (`step/agent_loop.rs`): the state's next step says whether the model is asked, the calls of its
/// last answer are run, decisions are awaited, or the run is over. A pause is the loop stopping
/// with the value in hand; a resume is the loop stepping it again, in this process or another.
///
/// It holds the transcript, the usage and step counters (budgets continue, they do not restart),
/// the guards' counters, the deferred skills `tool_search` loaded, plan mode, a typed run's
/// progress, and, while paused, the calls waiting for a decision with the results the turn's other
/// calls already have.
///
/// Serialize it with any serde format; `serde_json` is the usual one:
///
/// ```
/// # use agent_runtime::RunState;
/// # fn keep(state: &RunState) -> Result<(), Box<dyn std::error::Error>> {
/// std::fs::write("paused.json", serde_json::to_vec(state)?)?;
/// let back: RunState = serde_json::from_slice(&std::fs::read("paused.json")?)?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Written first, read first: a state of another version is refused before anything else.
    version: Version,
    /// This run's id: 128 random bits, made when the run starts (or, for a run nested in a
    /// call, derived from that call's idempotency key). Calls' idempotency keys derive from it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) run_id: String,
    /// While paused: this pause's id, new at every pause, which a [`PauseClaims`](
    /// crate::PauseClaims) records when the state is continued, so it continues once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pause_id: Option<String>,
    /// The seal of a state that left a runtime with [`StateKeys`](crate::StateKeys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seal: Option<Seal>,
    /// The conversation so far. While paused, it ends with the assistant message whose calls
    /// wait (their results not yet in).
    pub transcript: Vec<Message>,
    /// Tokens used so far.
    pub usage: Usage,
    /// What the model calls so far cost, the agents this run called as skills included
    /// (priced by the runtime's [price table](crate::runtime::AgentRuntime::prices)).
    #[serde(default, skip_serializing_if = "is_free")]
    pub cost: agent_llm::Cost,
    /// Model calls made so far.
    pub steps: usize,
    /// Deferred skills `tool_search` loaded in this run.
    pub loaded_skills: Vec<String>,
    /// Whether the run is in plan mode.
    pub plan_mode: bool,
    /// Tokens the agents this run called as skills used, by their path (`researcher`,
    /// `researcher › checker`); already counted in [`RunState::usage`].
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub agents: std::collections::BTreeMap<String, Usage>,
    /// Model calls the agents this run called as skills made, their children's included.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_steps: usize,
    /// The agents the conversation was handed to, in order ([`AgentRuntime::handoff`](
    /// crate::runtime::AgentRuntime::handoff)); the last one has the turn. Empty: the first runtime's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<String>,
    /// Set by a handoff's call: who takes over when this agent's part ends.
    #[serde(skip)]
    pub(crate) handing_to: Option<String>,
    pub(crate) stuck: StuckGuard,
    pub(crate) denials: DenialGuard,
    #[serde(default)]
    pub(crate) compaction_failures: usize,
    /// The input tokens of the last model call (cache reads and writes included), which the
    /// next request repeats: what a money budget knows of a call before it is made. Zero after
    /// a compaction.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub(crate) last_input: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<OutputProgress>,
    /// The last step already had its `TurnFinished` (the run paused after it).
    #[serde(default)]
    pub(crate) turn_closed: bool,
    /// The W3C `traceparent` of the run's first `invoke_agent` span, when a
    /// [`TraceContext`](crate::trace::TraceContext) is installed: a run resumed elsewhere makes
    /// its span a child of it, so the whole run is one trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace_parent: Option<String>,
    pub(crate) next: Next,
}

/// What a run does next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub(crate) enum Next {
    /// The checks before a model call, then the call.
    Model,
    /// Run the calls of the transcript's last message; then the cut-off notice, if any.
    Calls {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cut_off: Option<Message>,
        /// Results the turn has already (a paused turn's other calls, denied decisions).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        done: Vec<ToolRecord>,
        /// A turn finished after a pause: only these calls run (by id, with the arguments of an
        /// edit), approved; every other call has its result in `done`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approved: Option<Vec<(String, Option<Value>)>>,
        /// Approved calls that had suspended: what each gets back when it runs again (by id).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        resume: Vec<(String, Resumption)>,
    },
    /// Paused: these calls wait for a decision; the turn's other calls have these results.
    Decisions {
        pending: Vec<PendingCall>,
        done: Vec<ToolRecord>,
        /// The turn's calls that suspended (their inner calls are among `pending`): each one's
        /// state, by call id.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        suspended: Vec<(String, Value)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cut_off: Option<Message>,
    },
    /// The run is over: why, and a typed run's checked value.
    Done {
        finish: FinishReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<Value>,
    },
}

impl RunState {
    /// The key naming this run's conversation for the provider's prompt cache (OpenAI's
    /// `prompt_cache_key`): for an outermost run kept in a session, derived from the session's
    /// id, so the session's runs share it; otherwise from the run's id. A digest, so neither id
    /// is sent.
    pub(crate) fn prompt_cache_key(&self, outermost: bool) -> String {
        let session = crate::trace::conversation().filter(|_| outermost);
        let (kind, id): (&[u8], &str) = match &session {
            Some(session) => (b"session", session),
            None => (b"run", &self.run_id),
        };
        let digest = agent_core::digest::sha256_hex(&[b"prompt-cache", kind, id.as_bytes()]);
        format!("eugene-{}", &digest[..32])
    }

    /// A run about to ask the model about `transcript`.
    pub(crate) fn new(transcript: Vec<Message>, plan_mode: bool) -> Self {
        RunState {
            version: Version(RUN_STATE_VERSION),
            run_id: String::new(),
            pause_id: None,
            seal: None,
            transcript,
            usage: Usage::default(),
            cost: agent_llm::Cost::default(),
            steps: 0,
            loaded_skills: Vec::new(),
            plan_mode,
            agents: std::collections::BTreeMap::new(),
            agent_steps: 0,
            handoffs: Vec::new(),
            handing_to: None,
            stuck: StuckGuard::default(),
            denials: DenialGuard::default(),
            compaction_failures: 0,
            last_input: 0,
            output: None,
            turn_closed: false,
            trace_parent: None,
            next: Next::Model,
        }
    }

    /// The calls waiting for a decision, in call order; empty unless the run is paused.
    pub fn pending(&self) -> &[PendingCall] {
        match &self.next {
            Next::Decisions { pending, .. } => pending,
            _ => &[],
        }
    }

    /// Why the run ended, once it has.
    pub fn finish(&self) -> Option<&FinishReason> {
        match &self.next {
            Next::Done { finish, .. } => Some(finish),
            _ => None,
        }
    }

    /// Whether the run waits for decisions ([`FinishReason::AwaitingApproval`]).
    pub fn is_paused(&self) -> bool {
        matches!(self.next, Next::Decisions { .. })
    }

    /// This pause's id (new at every pause; `None` unless paused): what a
    /// [`PauseClaims`](crate::PauseClaims) records so the state continues once.
    pub fn pause_id(&self) -> Option<&str> {
        self.pause_id.as_deref()
    }

    /// Whether the state carries a seal ([`StateKeys`](crate::StateKeys)). Whether the seal is
    /// good is checked by the runtime that continues it.
    pub fn is_sealed(&self) -> bool {
        self.seal.is_some()
    }

    /// The format version this state was read as (or [`RUN_STATE_VERSION`] for one made here).
    pub fn format_version(&self) -> u32 {
        self.version.0
    }

    /// Checks that the state's content fits the version its label names: a state labelled
    /// older than the fields it holds (a downgrade, or an edit) is refused.
    pub(crate) fn check_format(&self) -> Result<(), ResumeError> {
        let version = self.version.0;
        let newer = |holds: &'static str, since: u32| {
            Err(ResumeError::FormatLabel {
                version,
                holds,
                since,
            })
        };
        if version < 5 {
            let done: &[ToolRecord] = match &self.next {
                Next::Decisions { done, .. } => done,
                _ => &[],
            };
            if self.transcript.iter().any(|m| !m.parts.is_empty())
                || done.iter().any(ToolRecord::has_media)
            {
                return newer("media parts", 5);
            }
        }
        if version < 4 {
            if !self.run_id.is_empty() {
                return newer("a run id", 4);
            }
            if self.pause_id.is_some() {
                return newer("a pause id", 4);
            }
            if self.seal.is_some() {
                return newer("a seal", 4);
            }
        }
        if version < 3 {
            if !self.agents.is_empty() || self.agent_steps > 0 {
                return newer("the usage of nested agents", 3);
            }
            if let Next::Decisions { suspended, .. } = &self.next
                && !suspended.is_empty()
            {
                return newer("suspended calls", 3);
            }
        }
        Ok(())
    }
}

/// The format version, checked as it is read: the version read, written as this build's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version(u32);

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(RUN_STATE_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let version = u32::deserialize(deserializer)?;
        if (OLDEST_READ..=RUN_STATE_VERSION).contains(&version) {
            Ok(Version(version))
        } else {
            Err(de::Error::custom(format!(
                "this run state has format version {version}, and this build of agent-runtime \
                 reads versions {OLDEST_READ} to {RUN_STATE_VERSION}: resume it with the version \
                 that paused it"
            )))
        }
    }
}

/// A seal: the id of the key and the HMAC-SHA-256 of the sealed value's canonical bytes, in hex.
/// Made and checked by a runtime with [`StateKeys`](crate::StateKeys) (`pause/seal.rs`); opaque
/// otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    pub(in crate::runtime) key: String,
    pub(in crate::runtime) mac: String,
}

/// A typed run's progress: answers that failed the check, and whether native mode's last turn
/// (the one under the schema) was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutputProgress {
    pub(crate) failures: usize,
    pub(crate) native_turn: bool,
}

/// Whether a counter is zero (left out of a written state).
fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_free(cost: &agent_llm::Cost) -> bool {
    *cost == agent_llm::Cost::default()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
