//! What a run asks of the world, as one trait, [`Effects`]: a model's answer, a compaction
//! summary, the results of a batch of calls, and the delivery of an event. The loop (`step/agent_loop.rs`)
//! decides what to ask; an `Effects` does it. [`Direct`] asks the provider and the registry
//! itself; the journal's wrapper (`step/journal.rs`) records each answer so a replay gets it back
//! instead. Which one a run uses is chosen once, when it starts, and the loop is built for it
//! (`Run<E: Effects>`): its calls are static, and their futures are not boxed.

use std::future::Future;

use futures::StreamExt;

use crate::event::AgentEvent;
use crate::runtime::AgentRuntime;
use crate::runtime::step::compaction::{self, Attempt};
use agent_core::call::{ToolCall, ToolResult};
use agent_core::context::SkillContext;
use agent_llm::llm::{LlmProvider, ProviderError, StreamEvent};
use agent_llm::message::{ChatRequest, ChatResponse, Message};

/// The I/O of a run's steps.
pub(in crate::runtime) trait Effects: Send + Sync {
    /// The model's answer to `request`, the call of step `step`.
    fn model(
        &self,
        step: usize,
        request: &ChatRequest<'_>,
    ) -> impl Future<Output = Result<ChatResponse, crate::runtime::AgentError>> + Send;

    /// One attempt at summarising the oldest turns of `transcript`, before step `step`'s call.
    fn summarize(
        &self,
        step: usize,
        transcript: &mut Vec<Message>,
        keep_recent: usize,
    ) -> impl Future<Output = Option<Attempt>> + Send;

    /// The results of `calls`, made at step `step`, in call order.
    fn calls(
        &self,
        step: usize,
        calls: &[ToolCall],
        ctx: &SkillContext,
    ) -> impl Future<Output = Vec<ToolResult>> + Send;

    /// Delivers an event to the runtime's sinks.
    fn emit(&self, event: &AgentEvent);
}

/// The provider and the registry, asked directly.
pub(in crate::runtime) struct Direct<'a> {
    pub(in crate::runtime) rt: &'a AgentRuntime,
}

impl Direct<'_> {
    /// The provider's answer, streamed (deltas to the sinks as they come) or whole.
    pub(in crate::runtime) async fn ask(
        &self,
        step: usize,
        request: &ChatRequest<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let rt = self.rt;
        let emit = |event: AgentEvent| rt.settings.sinks.iter().for_each(|s| s.send(&event));
        // Not streaming, the answer comes whole, but each retry is still announced as it happens.
        let mut stream = if rt.settings.streaming {
            rt.settings.provider.stream(request)
        } else {
            rt.settings.provider.complete_events(request)
        };
        // The index, id and name of each call announced, for its argument pieces (a list, not a
        // vector indexed by the server's number: an index of 10⁹ must not allocate).
        let mut calls: Vec<(usize, String, String)> = Vec::new();
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => emit(AgentEvent::TextDelta { step, text }),
                // Nobody watching, nothing to keep: a run without sinks pays nothing for this.
                StreamEvent::ToolCallStarted { index, id, name }
                    if !rt.settings.sinks.is_empty() =>
                {
                    calls.retain(|(at, ..)| *at != index);
                    calls.push((index, id, name));
                }
                StreamEvent::ToolCallDelta { index, arguments } if !arguments.is_empty() => {
                    if let Some((_, id, name)) = calls.iter().find(|(at, ..)| *at == index) {
                        emit(AgentEvent::ToolCallDelta {
                            step,
                            call_id: id.clone(),
                            name: name.clone(),
                            arguments,
                        });
                    }
                }
                StreamEvent::ThinkingDelta(text) => emit(AgentEvent::ThinkingDelta { step, text }),
                StreamEvent::Retry {
                    attempt,
                    delay,
                    error,
                } => emit(AgentEvent::Retry {
                    step,
                    attempt,
                    delay,
                    error,
                }),
                StreamEvent::Done(response) => return Ok(response),
                _ => {}
            }
        }
        Err(ProviderError::Stream {
            provider: rt.settings.provider.name().to_owned(),
            error_type: None,
            message: "the stream ended without a complete answer".into(),
        })
    }

    /// The provider summaries are asked of.
    pub(in crate::runtime) fn provider(&self) -> &dyn LlmProvider {
        &*self.rt.settings.provider
    }
}

impl Effects for Direct<'_> {
    async fn model(
        &self,
        step: usize,
        request: &ChatRequest<'_>,
    ) -> Result<ChatResponse, crate::runtime::AgentError> {
        Ok(self.ask(step, request).await?)
    }

    async fn summarize(
        &self,
        _step: usize,
        transcript: &mut Vec<Message>,
        keep_recent: usize,
    ) -> Option<Attempt> {
        compaction::compact(transcript, self.provider(), keep_recent).await
    }

    async fn calls(&self, _step: usize, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        self.rt.settings.registry.run_many(calls, ctx).await
    }

    fn emit(&self, event: &AgentEvent) {
        for sink in &self.rt.settings.sinks {
            sink.send(event);
        }
    }
}
