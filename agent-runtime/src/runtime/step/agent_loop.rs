//! The loop: [`Run`] steps a [`RunState`] until it is done or waits for decisions. Each step does
//! what the state says comes next:
//!
//! - **model**: the checks before a call (`finish/finish_checks.rs`), compaction if the transcript is over its
//!   limit, the model call, and what its answer means: calls to run, or the end of the run;
//! - **calls**: the calls of the last answer, through the abilities (which may answer some
//!   themselves) and the run's effects (the registry, or the journal); a call that waits for a
//!   decision holds the turn (`pause/decisions.rs`); otherwise the results enter the transcript in call
//!   order and the checks after a turn run.
//!
//! The I/O goes through an [`Effects`] and the abilities are [`Ability`]s, both chosen once when
//! the run starts (`step/drive.rs`); nothing here asks which ones they are.

use tracing::Instrument;

use crate::event::AgentEvent;
use crate::runtime::AgentRuntime;
use crate::runtime::abilities::ability::{Ability, Answered, Ending};
use crate::runtime::finish::finish_checks;
use crate::runtime::pause::decisions;
use crate::runtime::step::compaction;
use crate::runtime::step::effects::Effects;
use crate::runtime::step::repair;
use crate::runtime::step::run_state::{Next, RunState};
use crate::runtime::step::spans;
use agent_core::TurnKeys;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::context::SkillContext;
use agent_core::error::SkillError;
use agent_llm::message::{ChatRequest, ChatResponse, Message, Usage};
use agent_llm::price::Cost;

/// A run being stepped: its state, and what it was started with. It is built for its effects
/// (`E`: the registry and provider directly, or through a journal), so their calls are static.
pub(in crate::runtime) struct Run<'a, E> {
    pub(in crate::runtime) rt: &'a AgentRuntime,
    pub(in crate::runtime) effects: E,
    pub(in crate::runtime) abilities: Vec<Box<dyn Ability + 'a>>,
    pub(in crate::runtime) ctx: SkillContext,
    /// The system prompt, with the abilities' instructions.
    pub(in crate::runtime) system: Option<String>,
    /// Size of the transcript in characters, kept up to date as messages are added.
    pub(in crate::runtime) chars: usize,
    /// The span of the step under way, which its calls run in.
    turn: tracing::Span,
    /// The conversation's key for the provider's prompt cache, made once (a digest).
    cache_key: String,
    pub(in crate::runtime) state: RunState,
}

impl<'a, E: Effects> Run<'a, E> {
    pub(in crate::runtime) fn new(
        rt: &'a AgentRuntime,
        effects: E,
        abilities: Vec<Box<dyn Ability + 'a>>,
        ctx: SkillContext,
        state: RunState,
    ) -> Self {
        let extra: Vec<String> = abilities.iter().filter_map(|a| a.instructions()).collect();
        let system = match (&rt.settings.system, extra.is_empty()) {
            (system, true) => system.clone(),
            (Some(system), false) => Some(format!("{system}\n\n{}", extra.join("\n\n"))),
            (None, false) => Some(extra.join("\n\n")),
        };
        let chars = state.transcript.iter().map(compaction::message_chars).sum();
        Run {
            rt,
            effects,
            abilities,
            ctx,
            system,
            chars,
            turn: tracing::Span::none(),
            cache_key: state.prompt_cache_key(rt.ancestry.path.is_empty()),
            state,
        }
    }

    /// The transcript's size in characters counted again, after it was cut or summarised.
    fn recount(&mut self) {
        self.chars = self
            .state
            .transcript
            .iter()
            .map(compaction::message_chars)
            .sum();
    }

    /// Sends an event to every sink. The event is built only when there is a sink to see it: an
    /// event copies the call or result it reports.
    pub(in crate::runtime) fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if !self.rt.settings.sinks.is_empty() {
            self.effects.emit(&event());
        }
    }

    fn push(&mut self, message: Message) {
        self.chars += compaction::message_chars(&message);
        self.state.transcript.push(message);
    }

    fn end(&mut self, ending: Ending) {
        self.state.next = Next::Done {
            finish: ending.finish,
            answer: ending.answer,
        };
    }

    fn end_with(&mut self, finish: crate::runtime::FinishReason) {
        self.end(Ending {
            finish,
            answer: None,
        });
    }

    /// Steps until the run is done or waits for decisions.
    pub(in crate::runtime) async fn go(&mut self) -> Result<(), crate::runtime::AgentError> {
        loop {
            match &self.state.next {
                Next::Done { .. } | Next::Decisions { .. } => return Ok(()),
                Next::Model => self.model_step().await?,
                Next::Calls { .. } => {
                    let turn = self.turn.clone();
                    self.calls_step().instrument(turn).await;
                }
            }
        }
    }

    /// The checks before a model call, compaction, the call, and what its answer means.
    async fn model_step(&mut self) -> Result<(), crate::runtime::AgentError> {
        if let Some(finish) = finish_checks::before_model(self.rt, &self.state) {
            self.end_with(finish);
            return Ok(());
        }
        if let Some(finish) = self.keep_within_limit().await {
            self.end_with(finish);
            return Ok(());
        }
        if let Some(finish) = self
            .abilities
            .iter()
            .find_map(|a| a.before_model(&self.state))
        {
            self.end_with(finish);
            return Ok(());
        }
        // The previous step ends here, once it is known the run goes on: each step gets exactly
        // one `TurnFinished`, and only the last one carries a reason.
        if self.state.steps > 0 && !std::mem::take(&mut self.state.turn_closed) {
            let step = self.state.steps;
            self.emit(|| AgentEvent::TurnFinished { step, finish: None });
        }
        self.state.steps += 1;
        let step = self.state.steps;
        self.turn = tracing::info_span!("turn", "agent.step" = step);
        let turn = self.turn.clone();
        let Some((response, span)) = self.call_model().instrument(turn).await? else {
            self.end_with(finish_checks::cancelled());
            return Ok(());
        };
        let cost = self.count(
            response.usage,
            response.provider.as_deref(),
            response.model.as_deref(),
            false,
        );
        spans::chat_done(self.rt, &span, &response, &cost);
        self.emit(|| AgentEvent::Usage {
            step,
            usage: response.usage,
            total: self.state.usage,
            cost,
            total_cost: self.state.cost,
            provider: (response.provider.as_deref())
                .unwrap_or(self.rt.settings.provider.name())
                .to_owned(),
            model: response.model.clone(),
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
        let has_calls = !message.tool_calls.is_empty();
        self.push(message);
        // Calls the token limit cut off are never run, but the model must hear of them: after the
        // results of the calls it finished, if any.
        let cut_off = repair::cut_off_notice(&truncated_tool_calls);
        if has_calls {
            self.on_calls(cut_off);
            return Ok(());
        }
        if let Some(notice) = cut_off {
            self.push(notice);
            return Ok(());
        }
        match finish_checks::cut_short(stop_reason) {
            Some(stopped) => self.end_with(stopped),
            None => self.on_finished_answer(),
        }
        Ok(())
    }

    /// Counts a model call's tokens and what they cost ([`AgentRuntime::price`]) into the run's,
    /// and tells the abilities. A summary written by compaction leaves nothing known of the next
    /// request's size.
    fn count(
        &mut self,
        usage: Usage,
        provider: Option<&str>,
        model: Option<&str>,
        compaction: bool,
    ) -> Cost {
        let cost = self.rt.price(provider, model, &usage);
        self.state.usage += usage;
        self.state.cost += cost;
        self.state.last_input = match compaction {
            true => 0,
            false => usage.prompt_tokens(),
        };
        for ability in &self.abilities {
            ability.after_model(usage);
        }
        cost
    }

    /// A finished answer without calls: the first ability that has a say decides; otherwise the
    /// run is over.
    fn on_finished_answer(&mut self) {
        let text = self
            .state
            .transcript
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let answered = self
            .abilities
            .iter()
            .find_map(|a| a.on_answer(&mut self.state, &text));
        match answered {
            Some(Answered::End(ending)) => self.end(ending),
            Some(Answered::Retry(message)) => {
                if let Some(message) = message {
                    self.push(message);
                }
            }
            None => self.end_with(finish_checks::no_more_tool_calls()),
        }
    }

    /// An answer with calls: the repetition guard sees them, then they are the next step.
    fn on_calls(&mut self, cut_off: Option<Message>) {
        let state = &mut self.state;
        let calls = state
            .transcript
            .last()
            .map_or(&[][..], |m| &m.tool_calls[..]);
        let counted = calls
            .iter()
            .filter(|c| self.abilities.iter().all(|a| a.counts(c)));
        if let Some(stuck) = finish_checks::repeated_call(self.rt, &mut state.stuck, counted) {
            let calls = self.last_calls();
            self.refuse_repeated(&calls);
            self.end_with(stuck);
            return;
        }
        self.state.next = Next::Calls {
            cut_off,
            done: Vec::new(),
            approved: None,
            resume: Vec::new(),
        };
    }

    fn last_calls(&self) -> Vec<ToolCall> {
        self.state
            .transcript
            .last()
            .map(|m| m.tool_calls.clone())
            .unwrap_or_default()
    }

    /// Runs the calls of the last answer (or, after a pause, the approved ones), records every
    /// result in call order, and decides whether the run goes on.
    async fn calls_step(&mut self) {
        let Next::Calls {
            cut_off,
            done,
            approved,
            resume,
        } = std::mem::replace(&mut self.state.next, Next::Model)
        else {
            return;
        };
        for (call_id, resumption) in resume {
            self.ctx.scope().resume(&call_id, resumption);
        }
        let calls = self.last_calls();
        let step = self.state.steps;
        let resumed = approved.is_some();
        let mut answers: Vec<Option<ToolResult>> = vec![None; calls.len()];
        for record in done {
            if let Some(at) = calls.iter().position(|c| *c.id == *record.call_id()) {
                answers[at] = Some(record.restore(&self.ctx));
            }
        }
        // The calls this step runs: all of a new turn's; after a pause, the approved ones (with
        // an edit's arguments), and every other call without a result is answered as not run
        // (a transcript edited in between).
        let mut edited = None;
        if let Some(approved) = approved {
            let mut to_run = calls.clone();
            for (call, answer) in to_run.iter_mut().zip(&mut answers) {
                match approved.iter().find(|(id, _)| *id == *call.id) {
                    Some((id, edit)) => {
                        if let Some(arguments) = edit {
                            call.arguments = arguments.clone();
                        }
                        // The grant is for this call: its id, its skill, the arguments that
                        // run; used once, by it.
                        let skill = self
                            .rt
                            .settings
                            .registry
                            .metadata(&call.name)
                            .map_or_else(|| call.name.clone(), |m| m.name.to_string());
                        self.ctx.scope().approve(id, &skill, &call.arguments);
                    }
                    None if answer.is_none() => {
                        let not_run = "not run: no result was kept";
                        *answer = Some(ToolResult::new(call, Err(SkillError::tool(not_run))));
                    }
                    None => {}
                }
            }
            edited = Some(to_run);
        } else {
            for call in &calls {
                self.emit(|| AgentEvent::ToolCall {
                    step,
                    call: call.clone(),
                });
            }
        }
        let (mut results, ending) = self
            .answer(edited.as_deref().unwrap_or(&calls), answers)
            .await;
        // Decisions answer this turn's calls: whatever no call took is gone before the next.
        self.ctx.scope().clear_decisions();
        for ability in &self.abilities {
            ability.after_calls(&mut self.state);
        }
        if results.iter().any(decisions::is_pending) {
            // A turn decided already does not ask again; a call that suspended (a nested agent
            // that paused again further on) still pauses it.
            if resumed {
                decisions::not_run(&mut results, true);
            }
            if ending.is_none() && results.iter().any(decisions::is_pending) {
                return self.hold(&calls, results, cut_off);
            }
            // The run ends anyway: the calls waiting for a decision are answered, not run.
            decisions::not_run(&mut results, false);
        }
        self.record(&results);
        if let Some(ending) = ending {
            return self.end(ending);
        }
        if let Some(notice) = cut_off {
            self.push(notice);
        }
        let abilities = &self.abilities;
        let counted = results
            .iter()
            .zip(&calls)
            .filter(|(_, c)| abilities.iter().all(|a| a.counts(c)));
        if let Some(finish) =
            finish_checks::after_results(self.rt, &mut self.state, &results, counted)
        {
            self.end_with(finish);
        }
    }

    /// The results of `calls`, in call order: those in `answers` already, those the abilities
    /// take, and the rest from the effects (all of a turn's calls at once when none was taken).
    async fn answer(
        &mut self,
        calls: &[ToolCall],
        mut answers: Vec<Option<ToolResult>>,
    ) -> (Vec<ToolResult>, Option<Ending>) {
        let mut ending = None;
        for ability in &self.abilities {
            let ended = ability.take_calls(&mut self.state, calls, &mut answers);
            ending = ending.or(ended);
        }
        let step = self.state.steps;
        // Each call's idempotency key is made of the run's id, the step and the call's place
        // in the turn (a resumed turn's calls keep their places): the same for every attempt
        // of it, and no other call's, whatever id the model gave.
        let turn = TurnKeys::new(self.state.run_id.as_str(), step);
        if answers.iter().all(Option::is_none) {
            let ctx = self.ctx.for_turn(turn);
            return (self.effects.calls(step, calls, &ctx).await, ending);
        }
        let runnable: Vec<ToolCall> = calls
            .iter()
            .zip(&answers)
            .filter(|(_, answer)| answer.is_none())
            .map(|(call, _)| call.clone())
            .collect();
        if !runnable.is_empty() {
            let places = answers
                .iter()
                .enumerate()
                .filter(|(_, answer)| answer.is_none())
                .map(|(place, _)| place);
            let ctx = self.ctx.for_turn(turn.at_places(places));
            let mut ran = self.effects.calls(step, &runnable, &ctx).await.into_iter();
            for answer in answers.iter_mut().filter(|a| a.is_none()) {
                *answer = ran.next();
            }
        }
        (answers.into_iter().flatten().collect(), ending)
    }

    /// Holds the turn on its calls that wait for a decision: reports the others' results and
    /// which calls wait; the run stops with its state.
    fn hold(&mut self, calls: &[ToolCall], results: Vec<ToolResult>, cut_off: Option<Message>) {
        let step = self.state.steps;
        self.state.pause_id = Some(crate::runtime::pause::admit::random_id());
        let (next, done) = decisions::hold(
            &self.rt.settings.registry,
            &self.state.handoffs,
            calls,
            results,
            cut_off,
        );
        self.state.next = next;
        for result in &done {
            self.emit(|| AgentEvent::ToolResult {
                step,
                result: result.clone(),
            });
        }
        self.emit(|| AgentEvent::AwaitingApproval {
            step,
            pending: self.state.pending().to_vec(),
        });
    }

    /// Reports the results of a turn's calls and adds them to the transcript, in call order.
    fn record(&mut self, results: &[ToolResult]) {
        let step = self.state.steps;
        for result in results {
            self.emit(|| AgentEvent::ToolResult {
                step,
                result: result.clone(),
            });
            self.push(Message::tool_result(result));
        }
    }

    /// Answers repeated calls without running them again, so the transcript stays valid.
    fn refuse_repeated(&mut self, calls: &[ToolCall]) {
        let step = self.state.steps;
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

    /// Calls the model: its answer and the call's span, or `None` when the run was cancelled
    /// meanwhile.
    async fn call_model(
        &mut self,
    ) -> Result<Option<(ChatResponse, tracing::Span)>, crate::runtime::AgentError> {
        let rt = self.rt;
        let step = self.state.steps;
        let mut definitions = rt.settings.registry.definitions_for(self.ctx.scope());
        for ability in &self.abilities {
            ability.tools(&mut definitions);
        }
        let mut request = ChatRequest::new(&self.state.transcript)
            .tools(&definitions)
            .cache_key(&self.cache_key)
            .max_tokens(rt.settings.max_tokens_per_call);
        request.thinking = rt.settings.thinking;
        if step == 1 {
            request.tool_choice = rt.settings.first_tool_choice.clone();
        }
        if let Some(system) = &self.system {
            request = request.system(system);
        }
        for ability in &self.abilities {
            ability.shape(&self.state, &mut request);
        }
        let span = spans::chat(rt, &request);
        let call = self.effects.model(step, &request).instrument(span.clone());
        let response = tokio::select! {
            biased;
            _ = rt.settings.cancellation.cancelled() => {
                spans::chat_unanswered(rt, &span, None);
                return Ok(None);
            }
            response = call => match response {
                Err(_) if rt.settings.cancellation.is_cancelled() => {
                    spans::chat_unanswered(rt, &span, None);
                    return Ok(None);
                }
                Err(error) => {
                    spans::chat_unanswered(rt, &span, Some(&error));
                    return Err(error);
                }
                Ok(response) => response,
            },
        };
        Ok(Some((response, span)))
    }

    /// Compacts the transcript when it is over its limit; `Some` when it cannot be kept under, or
    /// when the run is cancelled while the summary is written (the transcript is then unchanged).
    async fn keep_within_limit(&mut self) -> Option<crate::runtime::FinishReason> {
        let rt = self.rt;
        loop {
            let (size, limit) = finish_checks::transcript_size(rt, self.chars)?;
            if size <= limit {
                return None;
            }
            if self.state.compaction_failures >= 2 {
                return Some(finish_checks::transcript_limit(size, limit));
            }
            // Old media goes first: it is the bulk of a transcript that holds any, and the
            // model keeps the words around it.
            if let Some(dropped) =
                compaction::drop_old_media(&mut self.state.transcript, rt.settings.keep_recent)
            {
                self.recount();
                self.emit(|| AgentEvent::MediaDropped {
                    step: self.state.steps,
                    parts: dropped.parts,
                    bytes: dropped.bytes,
                });
                continue;
            }
            // The summary is a model call like any other: the run's token cancels it, and a
            // durable run journals it.
            let step = self.state.steps + 1;
            let transcript = &mut self.state.transcript;
            let attempt = tokio::select! {
                biased;
                _ = rt.settings.cancellation.cancelled() => return Some(finish_checks::cancelled()),
                attempt = self.effects.summarize(step, transcript, rt.settings.keep_recent) => attempt,
            };
            let Some(attempt) = attempt else {
                return Some(finish_checks::transcript_limit(size, limit));
            };
            // The summary's tokens are the run's like any others, and count against its budget.
            self.count(attempt.usage, None, None, true);
            let Some(compacted) = attempt.compacted else {
                self.state.compaction_failures += 1;
                continue;
            };
            self.recount();
            self.emit(|| AgentEvent::Compacted {
                step: self.state.steps,
                removed: compacted.removed,
                kept: compacted.kept,
                summary_chars: compacted.summary_chars,
            });
            let (size, _) = finish_checks::transcript_size(rt, self.chars)?;
            if size > limit
                && compaction::cut(&self.state.transcript, rt.settings.keep_recent).is_none()
            {
                return Some(finish_checks::transcript_limit(size, limit));
            }
        }
    }
}
