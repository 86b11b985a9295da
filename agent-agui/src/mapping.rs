//! A run's [`AgentEvent`]s turned into AG-UI events, as they happen: which event opens, carries
//! and closes what (the table is in the [crate docs](crate)). One [`Mapper`] per run keeps what
//! is open (the step, a text or reasoning message, streamed tool calls) for each agent on the
//! way, and which agents it called are running ([`crate::subagents`]), so that everything it
//! opened is closed before the run's last event; what the run used, for its state snapshots, is
//! counted in `crate::state`.

use serde_json::{Value, json};

use agent_runtime::AgentEvent;

use crate::state::Used;
use crate::subagents::{Ending, Hop, Subagents};

/// What is open in one agent's part of the run: the run's own agent, or one it called.
#[derive(Default)]
struct Scope {
    /// The step open, and its name.
    step: Option<(usize, String)>,
    /// The id of the text message open.
    text: Option<String>,
    /// The reasoning open: its span's id and its message's.
    reasoning: Option<(String, String)>,
    /// The tool calls started from streamed pieces and not yet ended.
    calls: Vec<String>,
}

/// Turns one run's events into AG-UI events.
pub(crate) struct Mapper {
    run_id: String,
    /// The agent the conversation was handed to last, if it was.
    handed_to: Option<String>,
    /// The scopes, by the path of agents (empty: the run's own).
    scopes: Vec<(Vec<Hop>, Scope)>,
    /// The agents it called that are running, as AG-UI sub-agents.
    subagents: Subagents,
    /// The ids of the calls this run continues with a person's decision, as the stream names
    /// them (`c1`, `p1/c2`): shown already, by the run that paused, so the run that goes on
    /// shows only their results, against the same ids.
    decided: Vec<String>,
    /// How many events with a message id were made, for unique ids.
    messages: u64,
    /// What the run used so far, its own and each agent's: the state snapshots.
    used: Used,
}

impl Mapper {
    /// A mapper for the run `run_id` (message ids are made unique with it), which continues
    /// the calls `decided` (pending calls' ids) with a person's decisions.
    pub(crate) fn new(run_id: &str, decided: Vec<String>) -> Self {
        Mapper {
            run_id: run_id.to_owned(),
            handed_to: None,
            scopes: Vec::new(),
            subagents: Subagents::new(run_id),
            decided,
            messages: 0,
            used: Used::default(),
        }
    }

    /// The AG-UI events of one event of the run, appended to `out`.
    pub(crate) fn map(&mut self, event: &AgentEvent, out: &mut Vec<Value>) {
        self.map_in(&[], event, out);
    }

    /// Closes everything still open (text, reasoning, tool calls, steps, the agents it called:
    /// suspended when the run `paused`, else ended with it), innermost agents first.
    pub(crate) fn close_all(&mut self, paused: bool, out: &mut Vec<Value>) {
        let ending = if paused {
            Ending::RunPaused
        } else {
            Ending::RunEnded
        };
        self.close_subagents(&[], ending, out);
        let mut scopes = std::mem::take(&mut self.scopes);
        scopes.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        for (_, scope) in &mut scopes {
            close_step(scope, out);
        }
    }

    fn map_in(&mut self, path: &[Hop], event: &AgentEvent, out: &mut Vec<Value>) {
        if let AgentEvent::Nested {
            path: agents,
            calls,
            event,
            ..
        } = event
        {
            let mut full = path.to_vec();
            for (at, agent) in agents.iter().enumerate() {
                let call = calls.get(at).cloned().unwrap_or_default();
                full.push(Hop::new(agent, call));
            }
            return self.map_in(&full, event, out);
        }
        if path.is_empty() {
            return self.map_event(path, event, out);
        }
        // An event of an agent it called: that agent (and those on the way) started, if they had
        // not, and the event attributed to it.
        let id = self.open_subagent(path, out);
        let mark = out.len();
        self.map_event(path, event, out);
        attribute(&mut out[mark..], &id);
        if let AgentEvent::TurnFinished {
            finish: Some(finish),
            ..
        } = event
        {
            self.close_subagents(path, Ending::Finished(finish), out);
        }
    }

    /// The id of the sub-agent at `path` (the agents on the way, and the calls that ran them)
    /// that paused for a person in this run.
    pub(crate) fn suspended(&self, path: &[Hop]) -> Option<String> {
        self.subagents.suspended(path).map(str::to_owned)
    }

    /// The id of the sub-agent running at `path`, started (and the agents on the way) if not.
    fn open_subagent(&mut self, path: &[Hop], out: &mut Vec<Value>) -> String {
        for depth in 1..=path.len() {
            let (outer, hop) = (&path[..depth - 1], &path[depth - 1]);
            if self.subagents.running(&path[..depth]).is_none() {
                let call = (!hop.call.is_empty()).then(|| self.call_id_in(outer, &hop.call));
                self.subagents.start(&path[..depth], call, out);
            }
        }
        self.subagents
            .running(path)
            .expect("started above")
            .to_owned()
    }

    /// Ends the sub-agents at `path` and under it, innermost first: what they had open closed,
    /// then `SUBAGENT_FINISHED` or `SUBAGENT_ERROR` as `ending` says.
    fn close_subagents(&mut self, path: &[Hop], ending: Ending<'_>, out: &mut Vec<Value>) {
        for (inner, id) in self.subagents.under(path) {
            if let Some(at) = self.scopes.iter().position(|(p, _)| *p == inner) {
                let mut scope = self.scopes.remove(at).1;
                let mark = out.len();
                close_step(&mut scope, out);
                attribute(&mut out[mark..], &id);
            }
            self.subagents.end(&inner, &ending, out);
        }
    }

    fn map_event(&mut self, path: &[Hop], event: &AgentEvent, out: &mut Vec<Value>) {
        match event {
            AgentEvent::ThinkingDelta { step, text } if !text.is_empty() => {
                let id = self.open_reasoning(path, *step, out);
                out.push(
                    json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": text}),
                );
            }
            AgentEvent::TextDelta { step, text } if !text.is_empty() => {
                let id = self.open_text(path, *step, out);
                out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text}));
            }
            AgentEvent::AssistantText { step, text } => {
                let scope = self.enter(path, *step, out);
                end_reasoning(scope, out);
                if let Some(id) = scope.text.take() {
                    out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
                } else if !text.is_empty() {
                    let id = self.open_text(path, *step, out);
                    out.push(
                        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text}),
                    );
                    self.scope(path).text = None;
                    out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
                }
            }
            AgentEvent::ToolCallDelta {
                step,
                call_id,
                name,
                arguments,
            } => {
                let id = self.call_id_in(path, call_id);
                if self.decided.contains(&id) {
                    return;
                }
                let scope = self.enter(path, *step, out);
                end_streams(scope, out);
                if !scope.calls.contains(&id) {
                    out.push(
                        json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name}),
                    );
                    scope.calls.push(id.clone());
                }
                if !arguments.is_empty() {
                    out.push(
                        json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": arguments}),
                    );
                }
            }
            AgentEvent::ToolCall { step, call } => {
                let id = self.call_id_in(path, &call.id);
                if self.decided.contains(&id) {
                    return;
                }
                let scope = self.enter(path, *step, out);
                end_streams(scope, out);
                if let Some(at) = scope.calls.iter().position(|c| *c == id) {
                    scope.calls.remove(at);
                } else {
                    out.push(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": call.name}));
                    out.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": call.arguments.to_string()}));
                }
                out.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
            }
            AgentEvent::ToolResult { step, result } => {
                let id = self.call_id_in(path, &result.call_id);
                // An agent this call ran that has not said it ended (it failed, or it is code
                // mode's program) ends with the call.
                let spawned = self.subagents.spawned_by(&id);
                if let Some(inner) = spawned {
                    self.close_subagents(&inner, Ending::Returned(result), out);
                }
                let message = self.message_id();
                let scope = self.enter(path, *step, out);
                end_streams(scope, out);
                out.push(json!({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": message,
                    "toolCallId": id,
                    "content": result.content(),
                    "role": "tool",
                }));
            }
            AgentEvent::Usage { .. } => {
                let snapshot = self.used.add(&names(path).join(" › "), event);
                out.push(json!({"type": "STATE_SNAPSHOT", "snapshot": snapshot}));
            }
            AgentEvent::Retry {
                step,
                attempt,
                delay,
                error,
            } => out.push(json!({
                "type": "CUSTOM",
                "name": "eugene.retry",
                "value": {"path": names(path), "step": step, "attempt": attempt,
                          "delayMs": delay.as_millis() as u64, "error": error},
            })),
            AgentEvent::HandedOff { to, .. } if path.is_empty() => {
                let mut out_scope = Vec::new();
                self.close_all(false, &mut out_scope);
                out.extend(out_scope);
                self.handed_to = Some(to.clone());
                out.push(json!({"type": "CUSTOM", "name": "eugene.handoff", "value": {"to": to}}));
            }
            AgentEvent::TurnFinished { .. } => close_step(self.scope(path), out),
            _ => {}
        }
    }

    /// The scope of `path`, its step `step` open (the one before closed).
    fn enter(&mut self, path: &[Hop], step: usize, out: &mut Vec<Value>) -> &mut Scope {
        let name = self.step_name(path, step);
        let scope = self.scope(path);
        if scope.step.as_ref().map(|(n, _)| *n) != Some(step) {
            close_step(scope, out);
            out.push(json!({"type": "STEP_STARTED", "stepName": name}));
            scope.step = Some((step, name));
        }
        scope
    }

    /// The id of the reasoning message open in `path`'s step, opened (with its span) if none is.
    fn open_reasoning(&mut self, path: &[Hop], step: usize, out: &mut Vec<Value>) -> String {
        let (span, fresh) = (self.message_id(), self.message_id());
        let scope = self.enter(path, step, out);
        end_text(scope, out);
        if let Some((_, id)) = &scope.reasoning {
            return id.clone();
        }
        out.push(json!({"type": "REASONING_START", "messageId": span}));
        out.push(
            json!({"type": "REASONING_MESSAGE_START", "messageId": fresh, "role": "reasoning"}),
        );
        scope.reasoning = Some((span, fresh.clone()));
        fresh
    }

    /// The id of the text message open in `path`'s step, opened if none is.
    fn open_text(&mut self, path: &[Hop], step: usize, out: &mut Vec<Value>) -> String {
        let fresh = self.message_id();
        let scope = self.enter(path, step, out);
        end_reasoning(scope, out);
        if let Some(id) = &scope.text {
            return id.clone();
        }
        out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": fresh, "role": "assistant"}));
        scope.text = Some(fresh.clone());
        fresh
    }

    fn scope(&mut self, path: &[Hop]) -> &mut Scope {
        let at = match self.scopes.iter().position(|(p, _)| p == path) {
            Some(at) => at,
            None => {
                self.scopes.push((path.to_vec(), Scope::default()));
                self.scopes.len() - 1
            }
        };
        &mut self.scopes[at].1
    }

    /// `step 2`; `researcher › step 1` for an agent called as a skill; `billing › step 3` after a
    /// handoff to `billing`.
    fn step_name(&self, path: &[Hop], step: usize) -> String {
        let mut name = String::new();
        for agent in self.handed_to.iter().map(String::as_str).chain(names(path)) {
            name.push_str(agent);
            name.push_str(" › ");
        }
        name.push_str(&format!("step {step}"));
        name
    }

    /// A call's id in the stream: its own for the run's agent; for a call of an agent it called,
    /// after the id of the call that ran that agent (`p1/c1`, as the pending call's id is
    /// written), or, when that call had no id, after the agent's invocation id: unique in the
    /// thread when the model's own ids are, though an agent's ids start again at every
    /// invocation (code mode's `c1`, `c2`, …).
    fn call_id_in(&self, path: &[Hop], id: &str) -> String {
        if path.is_empty() {
            return id.to_owned();
        }
        let mut full = self.subagents.prefix(path).unwrap_or_default().to_owned();
        full.push('/');
        full.push_str(id);
        full
    }

    fn message_id(&mut self) -> String {
        self.messages += 1;
        format!("{}-m{}", self.run_id, self.messages)
    }
}

/// Attributes `events` to the sub-agent `id`, those that are not already (a deeper agent's, or
/// the `SUBAGENT_*` events themselves) and but the state snapshots (the whole run's state).
fn attribute(events: &mut [Value], id: &str) {
    for event in events {
        let kind = event["type"].as_str().unwrap_or_default();
        if event.get("subagentRunId").is_none() && kind != "STATE_SNAPSHOT" {
            event["subagentRunId"] = json!(id);
        }
    }
}

/// The names of the agents on `path`.
fn names(path: &[Hop]) -> Vec<&str> {
    path.iter().map(|hop| hop.agent.as_str()).collect()
}

fn end_text(scope: &mut Scope, out: &mut Vec<Value>) {
    if let Some(id) = scope.text.take() {
        out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
    }
}

fn end_reasoning(scope: &mut Scope, out: &mut Vec<Value>) {
    if let Some((span, id)) = scope.reasoning.take() {
        out.push(json!({"type": "REASONING_MESSAGE_END", "messageId": id}));
        out.push(json!({"type": "REASONING_END", "messageId": span}));
    }
}

/// Ends the scope's reasoning and text.
fn end_streams(scope: &mut Scope, out: &mut Vec<Value>) {
    end_reasoning(scope, out);
    end_text(scope, out);
}

/// Ends the scope's reasoning, text and streamed calls, then its step.
fn close_step(scope: &mut Scope, out: &mut Vec<Value>) {
    end_streams(scope, out);
    for id in scope.calls.drain(..) {
        out.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
    }
    if let Some((_, name)) = scope.step.take() {
        out.push(json!({"type": "STEP_FINISHED", "stepName": name}));
    }
}
