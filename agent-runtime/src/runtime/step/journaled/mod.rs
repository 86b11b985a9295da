//! A run's effects through a [`Journal`] ([`Journaled`]): a model call, a compaction summary, a
//! tool call, each a journaled step; events through [`Journal::emit`]. A run with a journal is
//! given this wrapper when it starts, and the loop knows nothing else of journals.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::AgentEvent;
use crate::runtime::finish::agent_error::{AgentError, ResumeError};
use crate::runtime::step::compaction::{self, Attempt};
use crate::runtime::step::effects::{Direct, Effects};
use crate::runtime::step::journal::{Journal, JournalStep, StepResult};
use crate::runtime::step::tool_record::{ModelUse, ToolRecord};
use agent_core::call::{ToolCall, ToolResult};
use agent_core::context::SkillContext;
use agent_core::error::SkillError;
use agent_core::registry::Registry;
use agent_core::retry::RetryableError;
use agent_llm::ModelUseReporter;
use agent_llm::llm::{EventStream, LlmProvider, ProviderError};
use agent_llm::message::{ChatRequest, ChatResponse, Message};

/// A model call through the journal: its answer, or its error, recorded; a transient error that
/// outlived the provider's retries is not recorded ([`StepResult::Retry`]).
async fn model_call(
    journal: &dyn Journal,
    step: JournalStep,
    call: impl Future<Output = Result<ChatResponse, ProviderError>> + Send,
) -> Result<ChatResponse, AgentError> {
    let name = step.to_string();
    let run = Box::pin(async move {
        match call.await {
            Err(error) if error.is_transient() => StepResult::Retry(error.to_string()),
            answer => record(&ModelRecord::from(answer)),
        }
    });
    let value = journal
        .step(step, run)
        .await
        .map_err(|error| ResumeError::Journal {
            step: name.clone(),
            error,
        })?;
    let record: ModelRecord = read_back(&name, value)?;
    Ok(record.into_answer()?)
}

/// A run's effects through a journal: every model call, summary and tool call is a step, answered
/// from the journal when it was recorded before; tool calls go one at a time, in call order, each
/// its own step; events go through [`Journal::emit`].
pub(in crate::runtime) struct Journaled<'a> {
    pub(in crate::runtime) direct: Direct<'a>,
    pub(in crate::runtime) journal: &'a dyn Journal,
}

impl Effects for Journaled<'_> {
    async fn model(
        &self,
        step: usize,
        request: &ChatRequest<'_>,
    ) -> Result<ChatResponse, AgentError> {
        let call = self.direct.ask(step, request);
        model_call(self.journal, JournalStep::Model { step }, call).await
    }

    async fn summarize(
        &self,
        step: usize,
        transcript: &mut Vec<Message>,
        keep_recent: usize,
    ) -> Option<Attempt> {
        let provider = JournaledProvider {
            provider: self.direct.provider(),
            journal: self.journal,
            step,
        };
        compaction::compact(transcript, &provider, keep_recent).await
    }

    /// A call already recorded is answered from the journal (and the deferred skills it loaded
    /// are loaded again) without running.
    async fn calls(&self, step: usize, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        for (position, call) in calls.iter().enumerate() {
            // One at a time: each call's context keeps its place among the calls for its key.
            let ctx = &ctx.at_position(position);
            let id = JournalStep::Tool {
                step,
                call_id: call.id.to_string(),
                name: call.name.clone(),
            };
            let registry = &self.direct.rt.settings.registry;
            // A skill that journals its own steps (a child agent) runs outside a step: its
            // steps go into this journal in order, and a step inside a step is not allowed.
            if registry
                .get(&call.name)
                .is_some_and(|s| s.journals_its_steps())
            {
                results.push(registry.run_one(call, ctx).await);
                continue;
            }
            results.push(tool_step(self.journal, id, registry, call, ctx).await);
        }
        results
    }

    /// A journal replaying recorded steps holds back what was reported before.
    fn emit(&self, event: &AgentEvent) {
        self.journal.emit(event, &self.direct.rt.settings.sinks);
    }
}

/// A provider whose whole answers go through the journal: compaction's summaries, which are model
/// calls like any other. Only [`LlmProvider::complete`] is journaled (compaction uses nothing
/// else); `stream` goes straight to the provider.
struct JournaledProvider<'a> {
    provider: &'a dyn LlmProvider,
    journal: &'a dyn Journal,
    step: usize,
}

#[async_trait::async_trait]
impl LlmProvider for JournaledProvider<'_> {
    fn name(&self) -> &str {
        self.provider.name()
    }

    fn model(&self) -> Option<&str> {
        self.provider.model()
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let step = JournalStep::Compaction { step: self.step };
        match model_call(self.journal, step, self.provider.complete(request)).await {
            Ok(answer) => Ok(answer),
            Err(AgentError::Provider(error)) => Err(error),
            // Compaction treats any failure as "no summary"; the journal's own failure included.
            Err(other) => Err(ProviderError::Config(other.to_string())),
        }
    }

    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        self.provider.stream(request)
    }

    fn supports_tools(&self) -> bool {
        self.provider.supports_tools()
    }

    fn supports_response_schema(&self) -> bool {
        self.provider.supports_response_schema()
    }
}

/// `call` through `registry` as the journal's step `step`: run and recorded, or answered from
/// the record (the deferred skills it loaded loaded again) without running. The model calls the
/// skill reports are recorded with its result and reported from the record, run or replayed
/// alike: so a replay counts them once, as the first attempt did.
///
/// A call of a skill that is neither read-only nor idempotent runs at most once: a
/// [`JournalStep::Started`] mark is journaled first, and a replay that finds the mark but no
/// result (the process died while the call ran) records the call as interrupted instead of
/// running it again. Read-only and idempotent skills' calls run again (at least once), with the
/// same idempotency key.
pub(in crate::runtime) async fn tool_step(
    journal: &dyn Journal,
    step: JournalStep,
    registry: &Registry,
    call: &ToolCall,
    ctx: &SkillContext,
) -> ToolResult {
    let name = step.to_string();
    let interrupted = match started(journal, &step, registry, call).await {
        Ok(interrupted) => interrupted,
        Err(error) => return journal_failed(call, ctx, error),
    };
    let run = Box::pin(async move {
        if interrupted {
            let result = ToolResult::new(call, Err(interrupted_error(&call.name)));
            return record(&ToolRecord::keep(&result, ctx.scope().loaded()));
        }
        let used = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = {
            let used = used.clone();
            move |source: &str, usage, cost| {
                let mut used = used.lock().unwrap_or_else(|p| p.into_inner());
                used.push(ModelUse {
                    source: source.to_owned(),
                    usage,
                    cost,
                });
            }
        };
        let reporter = match ctx.extension::<ModelUseReporter>() {
            Some(run) => run.reporting_to(keep),
            None => ModelUseReporter::new(keep),
        };
        let recording = ctx.clone().with_extension(reporter);
        let result = registry.run_one(call, &recording).await;
        let used = std::mem::take(&mut *used.lock().unwrap_or_else(|p| p.into_inner()));
        record(&ToolRecord::keep(&result, ctx.scope().loaded()).with_model_use(used))
    });
    match journal.step(step, run).await {
        Ok(value) => match read_back::<ToolRecord>(&name, value) {
            Ok(record) => record.restore(ctx),
            Err(error) => ToolResult::new(call, Err(SkillError::tool(error.to_string()))),
        },
        Err(error) => journal_failed(call, ctx, error),
    }
}

/// Journals the [`JournalStep::Started`] mark of a call that must not run twice: whether this
/// is a replay that found the mark already (the call was under way when the process died). A
/// call of a read-only or idempotent skill (or of a name the registry does not know, which runs
/// nothing) has no mark.
async fn started(
    journal: &dyn Journal,
    step: &JournalStep,
    registry: &Registry,
    call: &ToolCall,
) -> Result<bool, crate::runtime::step::journal::JournalError> {
    let at_most_once = registry
        .metadata(&call.name)
        .is_some_and(|m| !m.is_read_only && !m.is_idempotent);
    let JournalStep::Tool {
        step,
        call_id,
        name,
    } = step
    else {
        return Ok(false);
    };
    if !at_most_once {
        return Ok(false);
    }
    let mark = JournalStep::Started {
        step: *step,
        call_id: call_id.clone(),
        name: name.clone(),
    };
    let first = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let marking = first.clone();
    let made = Box::pin(async move {
        marking.store(true, std::sync::atomic::Ordering::SeqCst);
        StepResult::Done(Value::Bool(true))
    });
    journal.step(mark, made).await?;
    Ok(!first.load(std::sync::atomic::Ordering::SeqCst))
}

/// The result of a call that was under way when the process died, and is not run again.
fn interrupted_error(name: &str) -> SkillError {
    SkillError::tool(format!(
        "`{name}` was interrupted: the process running it stopped before its result was \
         recorded, and it is not idempotent, so it was not run again. It may or may not have \
         taken effect: check before calling it again"
    ))
}

fn journal_failed(
    call: &ToolCall,
    ctx: &SkillContext,
    error: crate::runtime::step::journal::JournalError,
) -> ToolResult {
    if ctx.is_cancelled() {
        return ToolResult::new(call, Err(SkillError::Cancelled));
    }
    ToolResult::new(
        call,
        Err(SkillError::tool(format!("the journal failed: {error}"))),
    )
}

/// A step's result as JSON. The journaled types serialize to JSON without fail (string keys only);
/// should one ever not, the step records the failure, which reads back as an error.
fn record<T: Serialize>(value: &T) -> StepResult {
    match serde_json::to_value(value) {
        Ok(value) => StepResult::Done(value),
        Err(error) => StepResult::Done(serde_json::json!({ "unserializable": error.to_string() })),
    }
}

fn read_back<T: for<'de> Deserialize<'de>>(name: &str, value: Value) -> Result<T, AgentError> {
    if let Some(error) = value.get("unserializable") {
        return Err(ResumeError::NotJournaled {
            step: name.to_owned(),
            error: error.to_string(),
        }
        .into());
    }
    serde_json::from_value(value).map_err(|error| {
        ResumeError::JournalEntry {
            step: name.to_owned(),
            error: error.to_string(),
        }
        .into()
    })
}

/// A model call's answer or error, as journaled.
// Made once per model call and moved once into the journal: boxing would add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ModelRecord {
    Answer(ChatResponse),
    Error(ProviderError),
}

impl From<Result<ChatResponse, ProviderError>> for ModelRecord {
    fn from(answer: Result<ChatResponse, ProviderError>) -> Self {
        match answer {
            Ok(answer) => ModelRecord::Answer(answer),
            Err(error) => ModelRecord::Error(error),
        }
    }
}

impl ModelRecord {
    fn into_answer(self) -> Result<ChatResponse, ProviderError> {
        match self {
            ModelRecord::Answer(answer) => Ok(answer),
            ModelRecord::Error(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests;
