//! A remote A2A agent as a skill: [`RemoteAgentSkill`], a [`DynSkill`] whose name and
//! description come from the agent card and whose one argument is the message to send.
//!
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), agent_a2a::A2aError> {
//! let mut registry = agent_core::Registry::new();
//! let agent = agent_a2a::RemoteAgent::connect("http://127.0.0.1:8080", Some("<token>")).await?;
//! registry.add(agent.into_skill());
//! # Ok(()) }
//! ```
//!
//! A call sends `{"message": ...}` as a new task ([`RemoteAgent::ask`]) and answers with the
//! task's final text; when the answer has file parts ([`Reply::file_parts`]), with
//! [`SkillOutput::Content`]: the text, then each file as [`Media`](agent_core::content::Media),
//! decoded and checked against [`RemoteAgentSkill::media_limits`] as [`crate::media`] says (one
//! file refused refuses the answer, with an error result saying why). Every other end is an error result ([`SkillError::Tool`]) that says what
//! happened: the task failed, was rejected or canceled (with the agent's message), the agent
//! could not be reached, answered something malformed, or took longer than the client's
//! timeout. A call cancelled by the run asks the agent to cancel the task.
//!
//! **A remote task that waits for input** (`TASK_STATE_INPUT_REQUIRED`, for example a remote
//! eugene agent that paused for approval) suspends the call ([`SkillError::Suspended`]): in an
//! agent run, the run pauses as on any call that needs a decision. A remote eugene agent lists
//! its pending calls (the status message's `pendingCalls` data part), and each becomes a pending
//! call of the run, inside this one (`remote › delete`, id `p1/c1`); any other agent's question
//! is one pending call named `input`, whose reason is the question. The decisions continue the
//! remote task: sent as a `decisions` data part to a eugene agent, as the text `approve` or
//! `deny: <reason>` to another, where an edit is the answer to its question
//! (`Decision::Edit(json!({"answer": "the blue one"}))`, or a JSON string, is sent as that text;
//! other arguments as JSON text). Outside a run, the
//! suspension is an error result naming what waits.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use agent_core::skill::parse_args;
use agent_core::{
    Decision, DynSkill, ParsedInput, PendingCall, Resumption, RetryPolicy, SkillContext,
    SkillError, SkillMetadata, SkillOutput, Suspension, ToolCall,
};

use agent_core::content::{Content, MediaLimits};

use crate::client::RemoteAgent;
use crate::error::A2aError;
use crate::media::media_of_parts;
use crate::reply::Reply;
use crate::types::{Message, Part, Role, TaskState};

/// A remote agent as a skill. Made by [`RemoteAgent::into_skill`].
#[derive(Debug, Clone)]
pub struct RemoteAgentSkill {
    agent: RemoteAgent,
    name: String,
    description: String,
    media_limits: MediaLimits,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    message: String,
}

impl RemoteAgent {
    /// This agent as a skill named after its card (see [`skill_name`]).
    pub fn into_skill(self) -> RemoteAgentSkill {
        let card = self.card();
        let name = skill_name(&card.name);
        let mut description = if card.description.trim().is_empty() {
            format!("The remote A2A agent `{}`.", card.name)
        } else {
            format!(
                "{} (the remote A2A agent `{}`)",
                card.description.trim(),
                card.name
            )
        };
        if !card.skills.is_empty() {
            let skills: Vec<String> = card
                .skills
                .iter()
                .take(20)
                .map(|s| {
                    if s.description.is_empty() {
                        s.name.clone()
                    } else {
                        format!("{}: {}", s.name, s.description)
                    }
                })
                .collect();
            description.push_str(&format!(". Its skills: {}", skills.join("; ")));
        }
        description.push_str(". Send it a message; it answers in text (and files).");
        RemoteAgentSkill {
            agent: self,
            name,
            description,
            media_limits: MediaLimits::default(),
        }
    }
}

/// A skill name for an agent named `name`: letters, digits, `_` and `-` kept, anything else
/// made `_`, at most 64 characters; `remote_agent` for a name with none of them.
///
/// ```
/// assert_eq!(agent_a2a::skill_name("Route Planner 2.0"), "route_planner_2_0");
/// ```
pub fn skill_name(name: &str) -> String {
    let mut out: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out = out.trim_matches('_');
    if out.is_empty() {
        "remote_agent".into()
    } else {
        out.to_owned()
    }
}

impl RemoteAgentSkill {
    /// The same skill under another name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// What the files of the agent's answers are checked against before the model sees them
    /// ([`MediaLimits::default`] unless set).
    pub fn media_limits(mut self, limits: MediaLimits) -> Self {
        self.media_limits = limits;
        self
    }

    /// The agent behind the skill.
    pub fn agent(&self) -> &RemoteAgent {
        &self.agent
    }

    async fn call(&self, message: &str, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        let cancelled = ctx.cancellation().cancelled();
        // A call that suspended on a remote task continues it with the run's decisions.
        let message = match ctx.take_resumption() {
            Some(resumption) => Self::continuation(&resumption)?,
            None => Message::user_text(message),
        };
        let reply = tokio::select! {
            reply = self.agent.ask_message(message) => reply,
            () = cancelled => return Err(SkillError::Cancelled),
        };
        let reply = reply.map_err(|e| failed(&self.agent, e))?;
        let text = reply.text();
        let Reply::Task(task) = &reply else {
            return self.answer(text, &reply);
        };
        let agent = &self.agent.card().name;
        match task.status.state {
            TaskState::Completed => self.answer(text, &reply),
            TaskState::InputRequired => Err(suspended(&self.name, task, &text)),
            TaskState::AuthRequired => Err(SkillError::tool(format!(
                "the remote agent `{agent}` needs authentication before it can go on (task `{}`): \
                 {text}",
                task.id
            ))),
            state => Err(SkillError::tool(format!(
                "the remote agent `{agent}` ended the task `{}` as {}{}",
                task.id,
                match state {
                    TaskState::Failed => "failed",
                    TaskState::Canceled => "canceled",
                    TaskState::Rejected => "rejected",
                    _ => "unknown",
                },
                if text.is_empty() {
                    String::new()
                } else {
                    format!(": {text}")
                }
            ))),
        }
    }

    /// The answer of a completed call: its text, and its files as media.
    fn answer(&self, text: String, reply: &Reply) -> Result<SkillOutput, SkillError> {
        let media = media_of_parts(reply.file_parts(), &self.media_limits).map_err(|e| {
            SkillError::tool(format!(
                "the answer of the remote agent `{}` was refused: {e}",
                self.agent.card().name
            ))
        })?;
        if media.is_empty() {
            return Ok(text.into());
        }
        let content = if text.is_empty() {
            Content::default()
        } else {
            Content::text(text)
        };
        Ok(SkillOutput::Content(
            media.into_iter().fold(content, Content::with),
        ))
    }

    /// The message that continues a task the call suspended on, with the decisions of the run.
    fn continuation(resumption: &Resumption) -> Result<Message, SkillError> {
        let state: Kept = serde_json::from_value(resumption.state.clone()).map_err(|e| {
            SkillError::tool(format!(
                "the remote task's kept state does not read back: {e}"
            ))
        })?;
        // What the person decided on must be what the remote listed when the task paused.
        for (id, local, _) in &state.digests {
            if let Some((_, seen)) = resumption.seen.iter().find(|(seen_id, _)| seen_id == id)
                && seen != local
            {
                return Err(SkillError::tool(format!(
                    "the decision for `{id}` was made on another version of the call than the \
                     remote task waits on (its digest differs): refused, nothing was sent"
                )));
            }
        }
        let mut message = if state.eugene {
            let decisions: serde_json::Map<String, Value> = resumption
                .decisions
                .iter()
                .map(|(id, decision)| {
                    let value = match decision {
                        Decision::Approve => json!("approve"),
                        Decision::Deny(reason) => json!({"deny": reason}),
                        Decision::Edit(arguments) => json!({"edit": arguments}),
                    };
                    (id.clone(), value)
                })
                .collect();
            let digests: serde_json::Map<String, Value> = state
                .digests
                .iter()
                .filter_map(|(id, _, remote)| Some((id.clone(), Value::String(remote.clone()?))))
                .collect();
            Message::new(
                Role::User,
                vec![Part::data(
                    json!({"decisions": decisions, "digests": digests}),
                )],
            )
        } else {
            let text = match resumption.decisions.first().map(|(_, d)| d) {
                Some(Decision::Approve) | None => "approve".to_owned(),
                Some(Decision::Deny(reason)) => format!("deny: {reason}"),
                // An answer to the agent's question: `"text"` or `{"answer": "text"}`.
                Some(Decision::Edit(Value::String(answer))) => answer.clone(),
                Some(Decision::Edit(arguments)) => match arguments.get("answer") {
                    Some(Value::String(answer)) => answer.clone(),
                    _ => arguments.to_string(),
                },
            };
            Message::user_text(text)
        };
        message.task_id = state.task_id;
        message.context_id = state.context_id;
        Ok(message)
    }
}

/// What a call suspended on a remote task keeps for when it continues.
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    task_id: String,
    context_id: String,
    /// The remote listed its pending calls as a eugene agent does (`pendingCalls`).
    eugene: bool,
    /// For each pending call: its id, the digest of the call as this run shows it, and the
    /// digest the remote listed for it (sent back with the decision, so the remote checks its
    /// own copy).
    #[serde(default)]
    digests: Vec<(String, String, Option<String>)>,
}

/// The suspension of a call whose remote task waits for input: its pending calls, or one
/// `input` call asking the remote's question.
fn suspended(skill: &str, task: &crate::types::Task, text: &str) -> SkillError {
    let listed = task
        .status
        .message
        .as_ref()
        .and_then(|m| {
            m.parts
                .iter()
                .find_map(|p| p.data.as_ref()?.get("pendingCalls"))
        })
        .and_then(Value::as_array);
    let mut remote_digests = Vec::new();
    let pending: Vec<PendingCall> = match listed {
        Some(calls) => calls
            .iter()
            .map(|c| {
                remote_digests.push(c.get("digest").and_then(Value::as_str).map(str::to_owned));
                let field = |name: &str| c.get(name).and_then(Value::as_str).unwrap_or_default();
                let flag = |name: &str| c.get(name).and_then(Value::as_bool).unwrap_or(false);
                PendingCall {
                    call: ToolCall::new(
                        field("id"),
                        field("skill"),
                        c.get("arguments").cloned().unwrap_or(json!({})),
                    ),
                    skill: field("skill").to_owned(),
                    is_read_only: flag("readOnly"),
                    is_destructive: flag("destructive"),
                    reason: field("reason").to_owned(),
                    via: Vec::new(),
                }
            })
            .collect(),
        None => vec![PendingCall {
            call: ToolCall::new("input", "input", json!({})),
            skill: "input".into(),
            is_read_only: false,
            is_destructive: false,
            reason: format!("the remote agent behind `{skill}` asks: {text}"),
            via: Vec::new(),
        }],
    };
    let digests = pending
        .iter()
        .enumerate()
        .map(|(at, p)| {
            (
                p.id(),
                p.digest(),
                remote_digests.get(at).cloned().flatten(),
            )
        })
        .collect();
    let state = json!(Kept {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        eugene: listed.is_some(),
        digests,
    });
    SkillError::Suspended(Box::new(Suspension { pending, state }))
}

fn failed(agent: &RemoteAgent, error: A2aError) -> SkillError {
    SkillError::Tool {
        message: format!(
            "calling the remote agent `{}` failed: {error}",
            agent.card().name
        ),
        source: Some(std::sync::Arc::new(error)),
    }
}

#[async_trait]
impl DynSkill for RemoteAgentSkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn metadata(&self) -> SkillMetadata {
        SkillMetadata {
            name: self.name.as_str().into(),
            is_read_only: false,
            is_destructive: false,
            is_concurrency_safe: true,
            // A remote task asked again is another task: never taken as harmless to repeat.
            is_idempotent: false,
            should_defer: false,
            aliases: Vec::new().into(),
            search_hint: Some("remote agent a2a delegate".into()),
            output_schema: None,
        }
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": "What to ask or tell the remote agent, in full: it does not see this conversation."
                }
            },
            "required": ["message"],
            "additionalProperties": false
        })
    }

    fn timeout(&self) -> Option<Duration> {
        None
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    fn parse(&self, args: &Value) -> Result<ParsedInput, SkillError> {
        parse_args::<Input>(args).map(|input| ParsedInput::new(input.message))
    }

    async fn run_parsed(
        &self,
        input: ParsedInput,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let message: String = input.downcast()?;
        self.call(&message, ctx).await
    }
}
