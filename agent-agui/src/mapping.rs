//! A run's [`AgentEvent`]s turned into AG-UI events, as they happen: which event opens, carries
//! and closes what (the table is in the [crate docs](crate)). One [`Mapper`] per run keeps what
//! is open (the step, a text message, streamed tool calls) for each agent on the way, so that
//! everything it opened is closed before the run's last event.

use serde_json::{Value, json};

use agent_runtime::AgentEvent;

/// What is open in one agent's part of the run: the run's own agent, or one it called.
#[derive(Default)]
struct Scope {
    /// The step open, and its name.
    step: Option<(usize, String)>,
    /// The id of the text message open.
    text: Option<String>,
    /// The tool calls started from streamed pieces and not yet ended.
    calls: Vec<String>,
}

/// Turns one run's events into AG-UI events.
pub(crate) struct Mapper {
    run_id: String,
    /// The agent the conversation was handed to last, if it was.
    handed_to: Option<String>,
    /// The scopes, by the path of agents (empty: the run's own).
    scopes: Vec<(Vec<String>, Scope)>,
    /// How many events with a message id were made, for unique ids.
    messages: u64,
    /// The run's own totals, as its last `Usage` said (steps, tokens, cost).
    totals: Value,
    /// Each agent's part, by its path (`janitor`; the run's own agent is `""`): its steps,
    /// tokens, cost, and the provider and model that answered it last.
    agents: std::collections::BTreeMap<String, AgentUse>,
}

/// One agent's part of a run.
#[derive(Default)]
struct AgentUse {
    steps: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost: agent_llm::Cost,
    provider: String,
    model: Option<String>,
}

impl Mapper {
    /// A mapper for the run `run_id` (message ids are made unique with it).
    pub(crate) fn new(run_id: &str) -> Self {
        Mapper {
            run_id: run_id.to_owned(),
            handed_to: None,
            scopes: Vec::new(),
            messages: 0,
            totals: json!({}),
            agents: std::collections::BTreeMap::new(),
        }
    }

    /// The AG-UI events of one event of the run, appended to `out`.
    pub(crate) fn map(&mut self, event: &AgentEvent, out: &mut Vec<Value>) {
        self.map_in(&[], event, out);
    }

    /// Closes everything still open (text, tool calls, steps), innermost agents first.
    pub(crate) fn close_all(&mut self, out: &mut Vec<Value>) {
        let mut scopes = std::mem::take(&mut self.scopes);
        scopes.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        for (_, scope) in &mut scopes {
            close_step(scope, out);
        }
    }

    fn map_in(&mut self, path: &[String], event: &AgentEvent, out: &mut Vec<Value>) {
        match event {
            AgentEvent::Nested { path: inner, event } => {
                let mut full = path.to_vec();
                full.extend(inner.iter().cloned());
                self.map_in(&full, event, out);
            }
            AgentEvent::TextDelta { step, text } if !text.is_empty() => {
                let id = self.open_text(path, *step, out);
                out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text}));
            }
            AgentEvent::AssistantText { step, text } => {
                let scope = self.enter(path, *step, out);
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
                let id = call_id_in(path, call_id);
                let scope = self.enter(path, *step, out);
                end_text(scope, out);
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
                let id = call_id_in(path, &call.id);
                let scope = self.enter(path, *step, out);
                end_text(scope, out);
                if let Some(at) = scope.calls.iter().position(|c| *c == id) {
                    scope.calls.remove(at);
                } else {
                    out.push(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": call.name}));
                    out.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": call.arguments.to_string()}));
                }
                out.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
            }
            AgentEvent::ToolResult { step, result } => {
                let id = call_id_in(path, &result.call_id);
                let message = self.message_id();
                let scope = self.enter(path, *step, out);
                end_text(scope, out);
                out.push(json!({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": message,
                    "toolCallId": id,
                    "content": result.content(),
                    "role": "tool",
                }));
            }
            AgentEvent::Usage {
                step,
                usage,
                total,
                cost,
                total_cost,
                provider,
                model,
            } => {
                if path.is_empty() {
                    self.totals = json!({
                        "steps": step,
                        "inputTokens": total.input_tokens + total.cache_read_tokens + total.cache_write_tokens,
                        "outputTokens": total.output_tokens,
                        "cost": total_cost.total().to_string(),
                        "unpricedCalls": total_cost.unpriced_calls,
                    });
                }
                let agent = self.agents.entry(path.join(" › ")).or_default();
                agent.steps += 1;
                agent.input_tokens +=
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
                agent.output_tokens += usage.output_tokens;
                agent.cost += *cost;
                agent.provider.clone_from(provider);
                agent.model.clone_from(model);
                let mut snapshot = self.totals.clone();
                snapshot["agents"] = self
                    .agents
                    .iter()
                    .map(|(path, agent)| {
                        let part = json!({
                            "steps": agent.steps,
                            "inputTokens": agent.input_tokens,
                            "outputTokens": agent.output_tokens,
                            "cost": agent.cost.total().to_string(),
                            "provider": agent.provider,
                            "model": agent.model,
                        });
                        (path.clone(), part)
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into();
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
                "value": {"path": path, "step": step, "attempt": attempt,
                          "delayMs": delay.as_millis() as u64, "error": error},
            })),
            AgentEvent::HandedOff { to, .. } if path.is_empty() => {
                let mut out_scope = Vec::new();
                self.close_all(&mut out_scope);
                out.extend(out_scope);
                self.handed_to = Some(to.clone());
                out.push(json!({"type": "CUSTOM", "name": "eugene.handoff", "value": {"to": to}}));
            }
            AgentEvent::TurnFinished { .. } => close_step(self.scope(path), out),
            _ => {}
        }
    }

    /// The scope of `path`, its step `step` open (the one before closed).
    fn enter(&mut self, path: &[String], step: usize, out: &mut Vec<Value>) -> &mut Scope {
        let name = self.step_name(path, step);
        let scope = self.scope(path);
        if scope.step.as_ref().map(|(n, _)| *n) != Some(step) {
            close_step(scope, out);
            out.push(json!({"type": "STEP_STARTED", "stepName": name}));
            scope.step = Some((step, name));
        }
        scope
    }

    /// The id of the text message open in `path`'s step, opened if none is.
    fn open_text(&mut self, path: &[String], step: usize, out: &mut Vec<Value>) -> String {
        let fresh = self.message_id();
        let scope = self.enter(path, step, out);
        if let Some(id) = &scope.text {
            return id.clone();
        }
        out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": fresh, "role": "assistant"}));
        scope.text = Some(fresh.clone());
        fresh
    }

    fn scope(&mut self, path: &[String]) -> &mut Scope {
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
    fn step_name(&self, path: &[String], step: usize) -> String {
        let mut name = String::new();
        for agent in self.handed_to.iter().chain(path) {
            name.push_str(agent);
            name.push_str(" › ");
        }
        name.push_str(&format!("step {step}"));
        name
    }

    fn message_id(&mut self) -> String {
        self.messages += 1;
        format!("{}-m{}", self.run_id, self.messages)
    }
}

/// A call's id in the stream: its own for the run's agent, after the agents' names for a call
/// of an agent it called (`researcher/c1`), so that ids stay unique in the thread.
fn call_id_in(path: &[String], id: &str) -> String {
    if path.is_empty() {
        return id.to_owned();
    }
    let mut full = path.join("/");
    full.push('/');
    full.push_str(id);
    full
}

fn end_text(scope: &mut Scope, out: &mut Vec<Value>) {
    if let Some(id) = scope.text.take() {
        out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
    }
}

/// Ends the scope's text and streamed calls, then its step.
fn close_step(scope: &mut Scope, out: &mut Vec<Value>) {
    end_text(scope, out);
    for id in scope.calls.drain(..) {
        out.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
    }
    if let Some((_, name)) = scope.step.take() {
        out.push(json!({"type": "STEP_FINISHED", "stepName": name}));
    }
}
