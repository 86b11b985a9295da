//! The loop of one run: checks before each step, the model call, the tool calls it makes, and the
//! decision of how the run ends. The settings come from [`AgentRuntime`]; the guards against
//! repetition and denials are in `guards.rs`, compaction in `compaction.rs`.

use futures::StreamExt;
use tracing::Instrument;

use super::AgentRuntime;
use super::compaction;
use super::guards::{DenialGuard, StuckGuard};
use super::journal::{self, JournalStep, JournaledProvider};
use super::outcome::{AgentError, Budget, FinishReason, TranscriptLimit};
use super::output::{FINAL_ANSWER_TOOL, Output, Verdict};
use super::pause::{Paused, has_pending, not_run};
use crate::call::{ToolCall, ToolResult};
use crate::context::{SkillContext, SkillSession};
use crate::error::SkillError;
use crate::event::AgentEvent;
use crate::llm::{LlmProvider, ProviderError, StreamEvent};
use crate::message::{ChatRequest, ChatResponse, Message, StopReason, TruncatedToolCall, Usage};

/// The state of one run.
pub(super) struct Run<'a> {
    pub(super) rt: &'a AgentRuntime,
    pub(super) transcript: Vec<Message>,
    /// Size of the transcript in characters, kept up to date as messages are added.
    chars: usize,
    pub(super) plan_mode: bool,
    pub(super) step: usize,
    pub(super) usage: Usage,
    pub(super) ctx: SkillContext,
    pub(super) stuck: StuckGuard,
    pub(super) denials: DenialGuard,
    compaction_failures: usize,
    /// In a typed run (outside plan mode): the output asked for, and how.
    pub(super) output: Option<Output>,
    /// The system prompt, with a typed run's instructions when it has them.
    system: Option<String>,
    /// The checked value a typed run ended with.
    pub(super) answer: Option<serde_json::Value>,
    /// The turn the run paused on, once it has.
    pub(super) paused: Option<Paused>,
    /// The run continues a paused one: the paused step already had its `TurnFinished`.
    pub(super) resumed: bool,
}

fn message_chars(message: &Message) -> usize {
    message.content.chars().count()
        + message
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>()
}

impl<'a> Run<'a> {
    pub(super) fn new(
        rt: &'a AgentRuntime,
        transcript: Vec<Message>,
        plan_mode: bool,
        output: Option<Output>,
    ) -> Self {
        let system = match (&rt.system, output.as_ref().and_then(Output::instructions)) {
            (Some(system), Some(extra)) => Some(format!("{system}\n\n{extra}")),
            (system, extra) => extra.or_else(|| system.clone()),
        };
        let ctx = rt
            .context
            .clone()
            .with_cancellation(rt.cancellation.clone())
            .with_session(SkillSession::new());
        let chars = transcript.iter().map(message_chars).sum();
        Run {
            rt,
            transcript,
            chars,
            plan_mode,
            step: 0,
            usage: Usage::default(),
            ctx,
            stuck: StuckGuard::new(rt.stuck_after),
            denials: DenialGuard::new(rt.denial_limit, rt.denial_count),
            compaction_failures: 0,
            output,
            system,
            answer: None,
            paused: None,
            resumed: false,
        }
    }

    /// Sends an event to every sink. The event is built only when there is a sink to see it: an
    /// event copies the call or result it reports.
    pub(super) fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if self.rt.sinks.is_empty() {
            return;
        }
        let event = event();
        if let Some(journal) = &self.rt.journal {
            // A journal replaying recorded steps holds back what was reported before.
            return journal.emit(&event, &self.rt.sinks);
        }
        for sink in &self.rt.sinks {
            sink.send(&event);
        }
    }

    fn push(&mut self, message: Message) {
        self.chars += message_chars(&message);
        self.transcript.push(message);
    }

    fn size(&self) -> Option<(usize, usize)> {
        self.rt.transcript_limit.map(|limit| match limit {
            TranscriptLimit::Chars(n) => (self.chars, n),
            TranscriptLimit::Tokens(n) => (self.chars.div_ceil(4), n),
        })
    }

    pub(super) async fn go(&mut self) -> Result<FinishReason, AgentError> {
        loop {
            if let Some(finish) = self.before_step().await {
                // The caller's `TurnFinished` with this reason ends the last step.
                return Ok(finish);
            }
            // The previous step ends here, once it is known the run goes on: each step gets
            // exactly one `TurnFinished`, and only the last one carries a reason.
            if self.step > 0 && !std::mem::take(&mut self.resumed) {
                let step = self.step;
                self.emit(|| AgentEvent::TurnFinished { step, finish: None });
            }
            self.step += 1;
            let turn = tracing::info_span!("turn", "agent.step" = self.step);
            if let Some(finish) = self.turn().instrument(turn).await? {
                return Ok(finish);
            }
        }
    }

    /// The checks before each model call (cancellation, budgets, the transcript's size, compacting
    /// it if need be); `Some` ends the run.
    async fn before_step(&mut self) -> Option<FinishReason> {
        if self.rt.cancellation.is_cancelled() {
            return Some(FinishReason::Cancelled);
        }
        if self.step >= self.rt.max_steps {
            return Some(FinishReason::BudgetExceeded(Budget::Steps {
                limit: self.rt.max_steps,
            }));
        }
        if let Some(limit) = self.rt.max_tokens_total
            && self.usage.total() >= limit
        {
            return Some(FinishReason::BudgetExceeded(Budget::Tokens {
                limit,
                used: self.usage.total(),
            }));
        }
        self.keep_within_limit().await
    }

    /// One model call and the tool calls it makes. `Some` ends the run.
    async fn turn(&mut self) -> Result<Option<FinishReason>, AgentError> {
        let step = self.step;
        let Some(response) = self.call_model().await? else {
            return Ok(Some(FinishReason::Cancelled));
        };
        self.usage += response.usage;
        self.emit(|| AgentEvent::Usage {
            step,
            usage: response.usage,
            total: self.usage,
        });
        if !response.message.content.is_empty() {
            self.emit(|| AgentEvent::AssistantText {
                step,
                text: response.message.content.clone(),
            });
        }
        let ChatResponse {
            message,
            stop_reason,
            truncated_tool_calls,
            ..
        } = response;
        let calls = message.tool_calls.clone();
        self.push(message);
        // Calls the token limit cut off are never run, but the model must hear of them: after the
        // results of the calls it finished, if any.
        let cut_off = cut_off_notice(&truncated_tool_calls);
        if calls.is_empty() {
            if let Some(notice) = cut_off {
                self.push(notice);
                return Ok(None);
            }
            let finish = self.finish_without_calls(stop_reason);
            return Ok(match (finish, &mut self.output) {
                (FinishReason::NoMoreToolCalls, Some(output)) => {
                    let text = self.transcript.last().map_or("", |m| m.content.as_str());
                    let verdict = output.on_text(text);
                    self.on_verdict(verdict)
                }
                (finish, _) => Some(finish),
            });
        }
        // `final_answer` calls are counted by the output's retry budget, not as repetition.
        let typed = self.output.is_some();
        let counted = calls
            .iter()
            .filter(|c| !typed || c.name != FINAL_ANSWER_TOOL);
        if let Some(stuck) = self.stuck.on_calls(counted) {
            self.refuse_repeated(&calls);
            return Ok(Some(stuck));
        }
        let (mut results, verdict) = self.answer_calls(&calls).await;
        let ends = matches!(verdict, Some(Verdict::Exhausted(_)));
        if has_pending(&results) {
            if !ends {
                return Ok(Some(self.pause(&calls, results, cut_off)));
            }
            // The run ends anyway: the calls waiting for a decision are answered, not run.
            not_run(&mut results);
        }
        self.record(&results);
        if let Some(verdict) = verdict
            && let Some(finish) = self.on_verdict(verdict)
        {
            return Ok(Some(finish));
        }
        Ok(self.after_results(&calls, &results, cut_off))
    }

    /// Reports the results of a turn's calls and adds them to the transcript, in call order.
    pub(super) fn record(&mut self, results: &[ToolResult]) {
        let step = self.step;
        for result in results {
            self.emit(|| AgentEvent::ToolResult {
                step,
                result: result.clone(),
            });
            self.push(Message::tool_result(result));
        }
    }

    /// The checks after a turn's results are in the transcript: the cut-off notice goes after
    /// them, then cancellation, denials and repetition may end the run.
    pub(super) fn after_results(
        &mut self,
        calls: &[ToolCall],
        results: &[ToolResult],
        cut_off: Option<Message>,
    ) -> Option<FinishReason> {
        if let Some(notice) = cut_off {
            self.push(notice);
        }
        if self.rt.cancellation.is_cancelled() {
            return Some(FinishReason::Cancelled);
        }
        if let Some(finish) = self.denials.on_results(results) {
            return Some(finish);
        }
        if self.output.is_none() {
            return self.stuck.on_results(results, calls);
        }
        // In a typed run, failed final answers are counted by the output's retry budget.
        let (results, calls): (Vec<ToolResult>, Vec<ToolCall>) = results
            .iter()
            .zip(calls)
            .filter(|(_, call)| call.name != FINAL_ANSWER_TOOL)
            .map(|(result, call)| (result.clone(), call.clone()))
            .unzip();
        self.stuck.on_results(&results, &calls)
    }

    /// How a run ends on an answer without tool calls. Only an answer the model finished is a
    /// plan: one cut off by the token limit or refused is not something to approve.
    fn finish_without_calls(&self, stop_reason: StopReason) -> FinishReason {
        match stop_reason {
            StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence(_)
                if self.plan_mode =>
            {
                let plan = self
                    .transcript
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default();
                FinishReason::PlanPending { plan }
            }
            StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence(_) => {
                FinishReason::NoMoreToolCalls
            }
            other => FinishReason::ProviderStop(other),
        }
    }

    /// Answers repeated calls without running them again, so the transcript stays valid.
    fn refuse_repeated(&mut self, calls: &[ToolCall]) {
        let step = self.step;
        for call in calls {
            let result = ToolResult::new(
                call,
                Err(SkillError::Denied(
                    "the same call was repeated; the run stops here".into(),
                )),
            );
            self.emit(|| AgentEvent::ToolCall {
                step,
                call: call.clone(),
            });
            self.emit(|| AgentEvent::ToolResult {
                step,
                result: result.clone(),
            });
            self.push(Message::tool_result(&result));
        }
    }

    /// What a typed run's verdict on an answer means for the loop: `Some` ends the run.
    fn on_verdict(&mut self, verdict: Verdict) -> Option<FinishReason> {
        match verdict {
            Verdict::Accept(value) => {
                self.answer = Some(value);
                Some(FinishReason::NoMoreToolCalls)
            }
            Verdict::Retry(message) => {
                if let Some(message) = message {
                    self.push(message);
                }
                None
            }
            Verdict::Exhausted(finish) => Some(finish),
        }
    }

    /// Reports the calls and runs them; the caller records the results (or pauses on them). In
    /// a typed run's tool mode, the verdict on the turn's `final_answer` calls comes back too.
    async fn answer_calls(&mut self, calls: &[ToolCall]) -> (Vec<ToolResult>, Option<Verdict>) {
        let step = self.step;
        for call in calls {
            self.emit(|| AgentEvent::ToolCall {
                step,
                call: call.clone(),
            });
        }
        self.run_or_answer(calls).await
    }

    /// Runs the calls; in a typed run's tool mode, `final_answer` calls are checked instead of
    /// run. When one passes, the turn's other calls are not run (the model has finished); they
    /// are answered saying so, and every result stays in call order.
    async fn run_or_answer(&mut self, calls: &[ToolCall]) -> (Vec<ToolResult>, Option<Verdict>) {
        let is_final = |call: &ToolCall| call.name == FINAL_ANSWER_TOOL;
        let Some(output) = self
            .output
            .as_mut()
            .filter(|o| o.tool().is_some() && calls.iter().any(is_final))
        else {
            return (self.run_calls(calls).await, None);
        };
        let finals: Vec<&ToolCall> = calls.iter().filter(|c| is_final(c)).collect();
        let (final_results, verdict) = output.on_final_calls(&finals);
        let others: Vec<ToolCall> = calls.iter().filter(|c| !is_final(c)).cloned().collect();
        let other_results = match verdict {
            Verdict::Accept(_) => others
                .iter()
                .map(|call| {
                    let not_run = "not run: the run ended with your final answer";
                    ToolResult::new(call, Err(SkillError::tool(not_run)))
                })
                .collect(),
            _ => self.run_calls(&others).await,
        };
        let (mut finals, mut others) = (final_results.into_iter(), other_results.into_iter());
        let results = calls
            .iter()
            .filter_map(|c| {
                if is_final(c) {
                    finals.next()
                } else {
                    others.next()
                }
            })
            .collect();
        (results, Some(verdict))
    }

    /// Calls the model; `None` when the run was cancelled meanwhile.
    async fn call_model(&mut self) -> Result<Option<ChatResponse>, AgentError> {
        let step = self.step;
        let mut definitions = self.rt.registry.definitions_for(self.ctx.session());
        definitions.extend(self.output.as_ref().and_then(Output::tool));
        let mut request = ChatRequest::new(&self.transcript)
            .tools(&definitions)
            .max_tokens(self.rt.max_tokens_per_call);
        request.thinking = self.rt.thinking;
        if step == 1 {
            request.tool_choice = self.rt.first_tool_choice.clone();
        }
        if let Some(system) = &self.system {
            request = request.system(system);
        }
        // Native structured output, only on a turn that offers no tool: the tools stay defined
        // (a transcript with tool calls needs them) but none may be called.
        if let Some(schema) = self.output.as_ref().and_then(Output::response_schema) {
            request = request.response_schema(schema);
            request.tool_choice = crate::message::ToolChoice::None;
        }
        let span = tracing::info_span!(
            "chat",
            "gen_ai.operation.name" = "chat",
            "gen_ai.system" = self.rt.provider.name(),
            "gen_ai.usage.input_tokens" = tracing::field::Empty,
            "gen_ai.usage.output_tokens" = tracing::field::Empty,
        );
        let sinks = &self.rt.sinks;
        let emit = |event: AgentEvent| sinks.iter().for_each(|s| s.send(&event));
        let call = async {
            if !self.rt.streaming {
                return self.rt.provider.complete(&request).await;
            }
            let mut stream = self.rt.provider.stream(&request);
            while let Some(event) = stream.next().await {
                match event? {
                    StreamEvent::TextDelta(text) => emit(AgentEvent::TextDelta { step, text }),
                    StreamEvent::ThinkingDelta(text) => {
                        emit(AgentEvent::ThinkingDelta { step, text })
                    }
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
                provider: self.rt.provider.name().to_owned(),
                error_type: None,
                message: "the stream ended without a complete answer".into(),
            })
        }
        .instrument(span.clone());
        let response = match self.rt.journal.as_deref() {
            None => tokio::select! {
                biased;
                _ = self.rt.cancellation.cancelled() => return Ok(None),
                response = call => response?,
            },
            // A durable run: the answer of a step already answered comes from the journal.
            Some(journal) => tokio::select! {
                biased;
                _ = self.rt.cancellation.cancelled() => return Ok(None),
                response = journal::model_call(journal, JournalStep::Model { step }, call) => match response {
                    Err(_) if self.rt.cancellation.is_cancelled() => return Ok(None),
                    response => response?,
                },
            },
        };
        span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
        Ok(Some(response))
    }

    /// Runs the calls through the registry; in plan mode, calls that are not read-only are denied
    /// with an explanation instead.
    pub(super) async fn run_calls(&mut self, calls: &[ToolCall]) -> Vec<ToolResult> {
        if !self.plan_mode {
            return self.dispatch(calls).await;
        }
        let registry = &self.rt.registry;
        let allowed: Vec<bool> = calls
            .iter()
            .map(|c| registry.metadata(&c.name).is_none_or(|m| m.is_read_only))
            .collect();
        let runnable: Vec<ToolCall> = calls
            .iter()
            .zip(&allowed)
            .filter(|(_, allowed)| **allowed)
            .map(|(call, _)| call.clone())
            .collect();
        let mut ran = self.dispatch(&runnable).await.into_iter();
        calls
            .iter()
            .zip(allowed)
            .map(|(call, allowed)| match allowed.then(|| ran.next()).flatten() {
                Some(result) => result,
                None => ToolResult::new(
                    call,
                    Err(SkillError::Denied(format!(
                        "plan mode: `{}` changes things and cannot run yet. Use read-only tools to \
                         investigate, then present your plan as your answer, without tool calls",
                        call.name
                    ))),
                ),
            })
            .collect()
    }

    /// Runs the calls through the registry, or, in a durable run, through the journal (one at a
    /// time; a call already recorded is answered from it).
    async fn dispatch(&self, calls: &[ToolCall]) -> Vec<ToolResult> {
        match self.rt.journal.as_deref() {
            None => self.rt.registry.run_many(calls, &self.ctx).await,
            Some(journal) => {
                journal::tool_calls(journal, &self.rt.registry, calls, &self.ctx, self.step).await
            }
        }
    }

    /// Compacts the transcript when it is over its limit; `Some` when it cannot be kept under, or
    /// when the run is cancelled while the summary is written (the transcript is then unchanged).
    async fn keep_within_limit(&mut self) -> Option<FinishReason> {
        let rt = self.rt;
        loop {
            let (size, limit) = self.size()?;
            if size <= limit {
                return None;
            }
            if self.compaction_failures >= 2 {
                return Some(FinishReason::TranscriptLimit { size, limit });
            }
            // The summary is a model call like any other: the run's token cancels it, and a
            // durable run journals it.
            let journaled = rt.journal.as_deref().map(|journal| JournaledProvider {
                provider: &*rt.provider,
                journal,
                step: self.step + 1,
            });
            let provider: &dyn LlmProvider = match &journaled {
                Some(journaled) => journaled,
                None => &*rt.provider,
            };
            let attempt = tokio::select! {
                biased;
                _ = rt.cancellation.cancelled() => return Some(FinishReason::Cancelled),
                attempt = compaction::compact(&mut self.transcript, provider, rt.keep_recent) => attempt,
            };
            let Some(attempt) = attempt else {
                return Some(FinishReason::TranscriptLimit { size, limit });
            };
            // The summary's tokens are the run's like any others, and count against its budget.
            self.usage += attempt.usage;
            let Some(compacted) = attempt.compacted else {
                self.compaction_failures += 1;
                continue;
            };
            self.chars = self.transcript.iter().map(message_chars).sum();
            self.emit(|| AgentEvent::Compacted {
                step: self.step,
                removed: compacted.removed,
                kept: compacted.kept,
                summary_chars: compacted.summary_chars,
            });
            let (size, _) = self.size()?;
            if size > limit && compaction::cut(&self.transcript, rt.keep_recent).is_none() {
                return Some(FinishReason::TranscriptLimit { size, limit });
            }
        }
    }
}

/// The message that tells the model its calls were cut off by the token limit and not run.
fn cut_off_notice(truncated: &[TruncatedToolCall]) -> Option<Message> {
    if truncated.is_empty() {
        return None;
    }
    let names: Vec<String> = truncated.iter().map(|c| format!("`{}`", c.name)).collect();
    Some(Message::user(format!(
        "Your answer was cut off by the token limit while you were writing a call to {}; \
         it was not run. Make the call again with shorter arguments (for example, split the work).",
        names.join(", ")
    )))
}
