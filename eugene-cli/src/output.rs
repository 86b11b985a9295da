//! What eugene prints: the answer on stdout and everything else, dimmed, on stderr; or JSON lines.
//! With `--json-schema` the answer on stdout is the JSON value alone, and the model's text goes to
//! stderr with the rest. Also the words for how a run ended, and the exit status each ending has.

use std::io::Write;
use std::sync::{Arc, Mutex};

use eugene::{
    AgentEvent, FinishReason, Message, Usage,
    llm::{Cost, Role, StopReason, Usd},
    run::{Budget, EventSink},
    skills::PendingCall,
};
use serde_json::{Value, json};

use crate::cli::Exit;

/// ANSI styles for stderr, or none.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Whether escapes are written at all.
    pub colour: bool,
}

impl Style {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Faint: tool calls, results, progress, thinking.
    pub fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }

    /// Bold: the prompt.
    pub fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }

    /// Yellow: permission questions.
    pub fn yellow(self, text: &str) -> String {
        self.wrap("33", text)
    }

    /// Red: errors.
    pub fn red(self, text: &str) -> String {
        self.wrap("31", text)
    }
}

/// What the renderer saw of the current run, for the summary after it.
#[derive(Debug, Default, Clone)]
pub struct RunStats {
    /// The last step seen.
    pub steps: usize,
    /// The run's tokens so far.
    pub usage: Usage,
    /// What the run cost so far.
    pub cost: Cost,
}

#[derive(Default)]
struct State {
    stats: RunStats,
    /// The step whose text was streamed (so its whole text is not printed again).
    streamed_step: Option<usize>,
    /// Thinking is being shown on stderr and its line is open.
    thinking: bool,
    /// The answer's line is open (no newline yet): on stdout, or on stderr for a typed run.
    answer_open: bool,
}

/// The event sink: renders each event as it arrives and keeps [`RunStats`].
#[derive(Clone)]
pub struct Renderer {
    json: bool,
    style: Style,
    /// The model's text goes to stderr, dimmed (`--json-schema`: stdout is for the value).
    text_to_stderr: bool,
    state: Arc<Mutex<State>>,
}

impl Renderer {
    /// A renderer of JSON lines (`json`) or of text for people; `text_to_stderr` sends the
    /// model's text to stderr, dimmed, instead of stdout.
    pub fn new(json: bool, style: Style, text_to_stderr: bool) -> Self {
        Renderer {
            json,
            style,
            text_to_stderr,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Forgets the previous run.
    pub fn start_run(&self) {
        *self.state.lock().unwrap() = State::default();
    }

    /// What was seen of this run.
    pub fn stats(&self) -> RunStats {
        self.state.lock().unwrap().stats.clone()
    }

    /// Ends open lines (an answer streamed without a final newline, thinking) before something
    /// else is printed; says whether there was one.
    pub fn end_lines(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        let open = state.thinking || state.answer_open;
        self.end_lines_of(&mut state);
        open
    }

    /// Prints a piece of the model's text: the answer on stdout, or dimmed on stderr.
    fn print_text(&self, state: &mut State, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.text_to_stderr {
            eprint!("{}", self.style.dim(text));
            let _ = std::io::stderr().flush();
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        state.answer_open = !text.ends_with('\n');
    }

    /// Ends the answer's open line, where it is.
    fn end_answer(&self, state: &mut State) {
        if state.answer_open {
            if self.text_to_stderr {
                eprintln!();
            } else {
                println!();
            }
            state.answer_open = false;
        }
    }

    fn end_lines_of(&self, state: &mut State) {
        end_thinking(state);
        self.end_answer(state);
    }

    fn human(&self, event: &AgentEvent, state: &mut State) {
        let style = self.style;
        match event {
            AgentEvent::TextDelta { step, text } => {
                if state.thinking {
                    eprintln!();
                    state.thinking = false;
                }
                state.streamed_step = Some(*step);
                self.print_text(state, text);
            }
            // Whole answers (--no-stream, or a server that cannot stream) had no deltas.
            AgentEvent::AssistantText { step, text } if state.streamed_step != Some(*step) => {
                end_thinking(state);
                self.print_text(state, text);
            }
            AgentEvent::ThinkingDelta { text, .. } => {
                self.end_answer(state);
                if !state.thinking {
                    eprint!("{}", style.dim("thinking: "));
                    state.thinking = true;
                }
                eprint!("{}", style.dim(text));
                let _ = std::io::stderr().flush();
            }
            AgentEvent::ToolCall { call, .. } => {
                self.end_lines_of(state);
                let line = format!("→ {}({})", call.name, summarise_args(&call.arguments));
                eprintln!("{}", style.dim(&line));
            }
            AgentEvent::ToolResult { result, .. } => {
                let mark = if result.is_error() { "✗" } else { "✓" };
                let line = format!("  {mark} {}", short(&result.content(), 100));
                eprintln!("{}", style.dim(&line));
            }
            AgentEvent::Retry {
                attempt,
                delay,
                error,
                ..
            } => {
                self.end_lines_of(state);
                // A zero delay is the provider changing course (e.g. to whole answers), not a wait.
                let line = if delay.is_zero() {
                    format!("  note: {error}")
                } else {
                    format!(
                        "  attempt {attempt} failed: {error}; trying again in {:.1} s",
                        delay.as_secs_f64()
                    )
                };
                eprintln!("{}", style.dim(&line));
            }
            AgentEvent::Compacted { removed, .. } => {
                self.end_lines_of(state);
                let line = format!("  (the oldest {removed} messages were summarised)");
                eprintln!("{}", style.dim(&line));
            }
            _ => {}
        }
    }
}

impl EventSink for Renderer {
    fn send(&self, event: &AgentEvent) {
        let mut state = self.state.lock().unwrap();
        match event {
            AgentEvent::Usage {
                step,
                total,
                total_cost,
                ..
            } => {
                state.stats.usage = *total;
                state.stats.cost = *total_cost;
                state.stats.steps = state.stats.steps.max(*step);
            }
            AgentEvent::TurnFinished { step, .. } => {
                state.stats.steps = state.stats.steps.max(*step);
            }
            _ => {}
        }
        if self.json {
            if let Some(line) = event_json(event) {
                println!("{line}");
            }
        } else {
            self.human(event, &mut state);
        }
    }
}

fn end_thinking(state: &mut State) {
    if state.thinking {
        eprintln!();
        state.thinking = false;
    }
}

/// `path=src/main.rs, content=…`: each argument, cut short.
pub fn summarise_args(args: &Value) -> String {
    let Some(map) = args.as_object() else {
        return short(&args.to_string(), 60);
    };
    map.iter()
        .map(|(k, v)| {
            let text = v
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string());
            format!("{k}={}", short(&text, 40))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first line of `text`, at most `max` characters, with `…` when anything was left out.
fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max || line.len() < text.trim_end().len() {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// One event as a JSON line (`None` for events eugene does not know).
fn event_json(event: &AgentEvent) -> Option<Value> {
    Some(match event {
        AgentEvent::TextDelta { step, text } => {
            json!({"event": "text_delta", "step": step, "text": text})
        }
        AgentEvent::ThinkingDelta { step, text } => {
            json!({"event": "thinking_delta", "step": step, "text": text})
        }
        AgentEvent::AssistantText { step, text } => {
            json!({"event": "assistant_text", "step": step, "text": text})
        }
        AgentEvent::ToolCall { step, call } => json!({
            "event": "tool_call", "step": step, "id": call.id, "name": call.name,
            "arguments": call.arguments,
        }),
        AgentEvent::ToolResult { step, result } => json!({
            "event": "tool_result", "step": step, "id": result.call_id, "name": result.name,
            "is_error": result.is_error(), "content": result.content(),
        }),
        AgentEvent::Usage {
            step,
            usage,
            total,
            cost,
            total_cost,
            provider,
            model,
        } => json!({
            "event": "usage", "step": step, "usage": usage, "total": total,
            "cost": cost_json(cost), "total_cost": cost_json(total_cost),
            "provider": provider, "model": model,
        }),
        AgentEvent::Compacted {
            step,
            removed,
            kept,
            summary_chars,
        } => json!({
            "event": "compacted", "step": step, "removed": removed, "kept": kept,
            "summary_chars": summary_chars,
        }),
        AgentEvent::Retry {
            step,
            attempt,
            delay,
            error,
        } => json!({
            "event": "retry", "step": step, "attempt": attempt,
            "delay_ms": delay.as_millis() as u64, "error": error,
        }),
        AgentEvent::AwaitingApproval { step, pending } => awaiting_json(*step, pending),
        AgentEvent::TurnFinished { step, finish } => {
            let mut line = json!({"event": "turn_finished", "step": step});
            if let Some(finish) = finish {
                line["finish"] = finish_code(finish, false).into();
            }
            line
        }
        _ => return None,
    })
}

/// The `awaiting_approval` line: the calls a paused run waits on.
pub fn awaiting_json(step: usize, pending: &[PendingCall]) -> Value {
    json!({"event": "awaiting_approval", "step": step, "pending": pending_json(pending)})
}

/// The calls a paused run waits on, for scripts: each one's id (which `--approve` and `--deny`
/// take), its skill, the name and arguments the model used, and why it needs a decision.
pub fn pending_json(pending: &[PendingCall]) -> Value {
    pending
        .iter()
        .map(|p| {
            json!({
                "id": p.call.id, "skill": p.skill, "name": p.call.name,
                "arguments": p.call.arguments, "reason": p.reason,
                "is_destructive": p.is_destructive,
            })
        })
        .collect()
}

/// Whether the model's last message says nothing (so the run, though finished, has no answer).
pub fn answer_is_blank(transcript: &[Message]) -> bool {
    transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .is_none_or(|m| m.content.trim().is_empty())
}

/// Settings the finish words mention.
pub struct Limits {
    /// `--max-answer-tokens`.
    pub answer_tokens: u32,
}

/// How a run ended, in words: `done`, `stopped: the step budget (25) ran out`, …
pub fn finish_words(finish: &FinishReason, blank: bool, limits: &Limits) -> String {
    match finish {
        FinishReason::NoMoreToolCalls if blank => "stopped: the model gave no answer".into(),
        FinishReason::NoMoreToolCalls => "done".into(),
        FinishReason::PlanPending { .. } => {
            "plan ready (rerun without --plan to carry it out)".into()
        }
        FinishReason::ProviderStop {
            stop: StopReason::MaxTokens,
        } => format!(
            "stopped: the answer reached its token limit ({}; --max-answer-tokens raises it)",
            limits.answer_tokens
        ),
        FinishReason::ProviderStop {
            stop: StopReason::Refusal,
        } => "stopped: the model refused".into(),
        FinishReason::ProviderStop {
            stop: StopReason::Other(why),
        } => {
            format!("stopped: the model stopped ({why})")
        }
        FinishReason::ProviderStop { stop: other } => {
            format!("stopped: the model stopped ({})", stop_words(other))
        }
        FinishReason::BudgetExceeded(Budget::Steps { limit }) => {
            format!("stopped: the step budget ({limit}) ran out (--max-steps raises it)")
        }
        FinishReason::BudgetExceeded(Budget::Tokens { limit, used }) => format!(
            "stopped: the token budget ({limit}) ran out after {used} tokens (--max-tokens raises it)"
        ),
        FinishReason::BudgetExceeded(Budget::Cost {
            limit,
            spent,
            next_at_least,
        }) if *next_at_least > Usd::ZERO => format!(
            "stopped: the money budget ({limit}) would not cover the next call (spent {spent}, \
             the next costs at least {next_at_least}; --max-cost raises it)"
        ),
        FinishReason::BudgetExceeded(Budget::Cost { limit, spent, .. }) => format!(
            "stopped: the money budget ({limit}) ran out after {spent} (--max-cost raises it)"
        ),
        FinishReason::BudgetExceeded(Budget::OutputRetries { limit, last_error }) => format!(
            "stopped: the answer did not follow the schema after {limit} {} (last error: \
             {last_error})",
            if *limit == 1 { "retry" } else { "retries" }
        ),
        FinishReason::Stuck {
            name,
            repeated,
            error: Some(_),
            ..
        } => format!(
            "stopped: the call to {name} failed {repeated} times in a row with the same error"
        ),
        FinishReason::Stuck { name, repeated, .. } => {
            format!("stopped: the model made the same call to {name} {repeated} times in a row")
        }
        FinishReason::TranscriptLimit { size, limit } => format!(
            "stopped: the conversation outgrew its limit ({size} > {limit}) even after summarising"
        ),
        FinishReason::Cancelled => "cancelled".into(),
        FinishReason::PermissionDenialLimit { denials } => {
            format!("stopped: {denials} calls were denied permission (--yes allows them)")
        }
        FinishReason::AwaitingApproval { pending } => match pending.len() {
            1 => "waiting for approval of 1 call".into(),
            n => format!("waiting for approval of {n} calls"),
        },
        other => format!("stopped: {other:?}"),
    }
}

fn stop_words(reason: &StopReason) -> String {
    match reason {
        StopReason::EndTurn => "end of turn".into(),
        StopReason::ToolUse => "tool use".into(),
        StopReason::MaxTokens => "token limit".into(),
        StopReason::StopSequence(Some(s)) => format!("stop sequence {s:?}"),
        StopReason::StopSequence(None) => "stop sequence".into(),
        StopReason::Refusal => "refusal".into(),
        StopReason::Other(s) => s.clone(),
    }
}

/// How a run ended, as a stable code for scripts.
pub fn finish_code(finish: &FinishReason, blank: bool) -> &'static str {
    match finish {
        FinishReason::NoMoreToolCalls if blank => "no_answer",
        FinishReason::NoMoreToolCalls => "no_more_tool_calls",
        FinishReason::PlanPending { .. } => "plan_pending",
        FinishReason::ProviderStop { .. } => "provider_stop",
        FinishReason::BudgetExceeded(Budget::Steps { .. }) => "step_budget",
        FinishReason::BudgetExceeded(Budget::Tokens { .. }) => "token_budget",
        FinishReason::BudgetExceeded(Budget::OutputRetries { .. }) => "output_retries",
        FinishReason::BudgetExceeded(Budget::Cost { .. }) => "cost_budget",
        FinishReason::Stuck { .. } => "stuck",
        FinishReason::TranscriptLimit { .. } => "transcript_limit",
        FinishReason::Cancelled => "cancelled",
        FinishReason::PermissionDenialLimit { .. } => "permission_denial_limit",
        FinishReason::AwaitingApproval { .. } => "awaiting_approval",
        _ => "other",
    }
}

/// The exit status a run's ending has.
pub fn finish_exit(finish: &FinishReason, blank: bool) -> Exit {
    match finish {
        FinishReason::NoMoreToolCalls if blank => Exit::ProviderStop,
        FinishReason::NoMoreToolCalls | FinishReason::PlanPending { .. } => Exit::Answered,
        FinishReason::ProviderStop { .. } => Exit::ProviderStop,
        FinishReason::BudgetExceeded(_) | FinishReason::TranscriptLimit { .. } => Exit::Budget,
        FinishReason::Stuck { .. } => Exit::Stuck,
        FinishReason::Cancelled => Exit::Cancelled,
        FinishReason::PermissionDenialLimit { .. } => Exit::Denied,
        FinishReason::AwaitingApproval { .. } => Exit::AwaitingApproval,
        _ => Exit::Internal,
    }
}

/// A cost for scripts: `{"usd": 0.0045, "unpriced_calls": 0, "parts": {..}}`; `usd` is `null`
/// when no call could be priced (never a made-up 0).
pub fn cost_json(cost: &Cost) -> Value {
    let priced = cost.unpriced_calls == 0 || cost.total() > Usd::ZERO;
    json!({
        "usd": priced.then(|| cost.total().as_dollars()),
        "unpriced_calls": cost.unpriced_calls,
        "parts": cost,
    })
}

/// `$0.0045`, `unpriced (2 calls)` when no call could be priced, `$0.0045 + 2 unpriced calls`
/// when some could not; `None` when the server reported no tokens (then nothing can be priced,
/// and the line already says so).
pub fn cost_words(cost: &Cost, usage: &Usage) -> Option<String> {
    (usage.input_tokens + usage.output_tokens > 0).then(|| cost.to_string())
}

/// `12 in / 5 out tokens`, or `tokens not reported` (llama-cpp-python's server reports none when
/// streaming).
pub fn token_words(u: &Usage) -> String {
    if u.input_tokens + u.output_tokens == 0 {
        "tokens not reported".to_owned()
    } else if u.cache_read_tokens > 0 {
        format!(
            "{} in / {} out tokens · {} cached",
            u.input_tokens, u.output_tokens, u.cache_read_tokens
        )
    } else {
        format!("{} in / {} out tokens", u.input_tokens, u.output_tokens)
    }
}

/// The last JSON line of a run: how it ended, in words and as a code, with its exit status.
pub struct Summary<'a> {
    /// In words.
    pub words: &'a str,
    /// As a code.
    pub code: &'a str,
    /// The exit status this ending has.
    pub exit: Exit,
    /// What the renderer counted.
    pub stats: &'a RunStats,
    /// The answer, when there is one.
    pub answer: Option<&'a str>,
    /// The `--json-schema` value, when the run ended with one.
    pub output: Option<&'a Value>,
    /// The calls a paused run waits on (the line then has a `pending` list).
    pub pending: Option<&'a [PendingCall]>,
}

impl Summary<'_> {
    /// Prints it as one JSON line on stdout.
    pub fn print_json(&self) {
        let mut line = json!({
            "event": "finished",
            "finish": self.words,
            "code": self.code,
            "exit_status": self.exit.code(),
            "steps": self.stats.steps,
            "usage": self.stats.usage,
            "cost": cost_json(&self.stats.cost),
            "answer": self.answer,
            "output": self.output,
        });
        if let Some(pending) = self.pending {
            line["pending"] = pending_json(pending);
        }
        println!("{line}");
    }
}

/// An error as a JSON line on stdout: `kind` is `config_error`, `provider_error`,
/// `session_conflict`, `session_error` or `internal_error`.
pub fn print_error_json(kind: &str, message: &str, hint: Option<&str>) {
    println!(
        "{}",
        json!({"event": "error", "kind": kind, "message": message, "hint": hint})
    );
}
