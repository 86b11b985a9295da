//! Typed run results: what a run must end with ([`OutputType`]), how the model is asked for it
//! ([`OutputMode`]), and the checks of each answer, with the retries they earn. The typed answer's
//! wrapper (`finish/typed_answer.rs`) asks this module what to send and what an answer means; the progress
//! (failed answers, native mode's last turn) is part of the run's state.
//!
//! The modes, and what each sends, are described on [`OutputMode`].

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::runtime::finish::finish_checks;
use crate::runtime::finish::finish_reason::FinishReason;
use crate::runtime::step::run_state::OutputProgress;
use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;
use agent_core::schema::{ToolDefinition, schema_for_input};
use agent_core::skill::parse_args;
use agent_llm::message::{Message, ResponseSchema};

/// The name of the tool a run in [`OutputMode::Tool`] ends by calling.
pub const FINAL_ANSWER_TOOL: &str = "final_answer";

/// How a typed run asks the model for its result.
///
/// | mode | what the model is given | when the run ends |
/// |---|---|---|
/// | [`OutputMode::Tool`] | a tool, `final_answer`, whose input schema is the output's | it calls `final_answer` with input that passes the check |
/// | [`OutputMode::Native`] | on a turn that offers **no** tools, the schema as the provider's structured output (Anthropic `output_config.format`, OpenAI `response_format: json_schema`, strict) | its answer on that turn passes the check |
/// | [`OutputMode::Prompted`] | the schema in the system prompt | its text answer holds JSON that passes the check |
///
/// [`OutputMode::Auto`] picks **native** when the run offers no tools and the provider
/// [supports](agent_llm::LlmProvider::supports_response_schema) it (one model call, decoding
/// constrained to the schema), else **tool** when the provider can call tools, else **prompted**.
///
/// Native mode never sends a response schema on a turn where a tool can be chosen: models given
/// both tend to skip their tools and answer at once. With tools on offer, the run works as usual
/// until the model answers in text; then one more turn, with tool choice `none` (the tools stay
/// defined, as a transcript with tool calls requires), asks for the final answer under the schema.
///
/// A value whose schema is not an object (a number, a list, an enum) is asked for wrapped, as
/// `{"value": ...}`, since tool inputs and both providers' structured outputs must be objects;
/// the outcome holds the value itself.
///
/// An answer that fails the check goes back to the model with the check's error (the field's path
/// and what was expected), as the `final_answer` call's error result or as a user message, up to
/// [`AgentRuntime::output_retries`](crate::runtime::AgentRuntime::output_retries) times; the next failure
/// ends the run with [`Budget::OutputRetries`](crate::runtime::Budget::OutputRetries), which carries the
/// last error. In plan mode the run ends in a plan as always; the typed value is asked for once the
/// plan is approved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputMode {
    /// The best the provider supports: native without tools on offer, else tool, else prompted.
    #[default]
    Auto,
    /// A `final_answer` tool whose input schema is the output's.
    Tool,
    /// The provider's structured output, on a turn that offers no tools.
    Native,
    /// The schema in the instructions; JSON read from the answer's text.
    Prompted,
}

type Check = dyn Fn(&Value) -> Result<(), SkillError> + Send + Sync;

/// What a typed run must end with: a JSON Schema the model is shown and a check its answer must
/// pass. [`OutputType::of`] derives both from a Rust type; [`OutputType::from_schema`] takes a
/// schema and a check of your own (e.g. a JSON Schema validator).
#[derive(Clone)]
pub struct OutputType {
    /// The schema the model is shown: an object schema (wrapped if the value's is not).
    schema: Value,
    /// Whether the value is asked for as `{"value": ...}`.
    wrapped: bool,
    check: Arc<Check>,
}

impl OutputType {
    /// The output is a `T`: its schema is `T`'s (as for a skill's input), and an answer passes if
    /// it deserializes into a `T`; the error names the field that did not.
    pub fn of<T: DeserializeOwned + JsonSchema>() -> Self {
        let schema = schema_for_input::<T>();
        let wrapped = !agent_core::schema::is_object_schema(&schema);
        let check: Arc<Check> = if wrapped {
            Arc::new(|value: &Value| parse_args::<Wrapped<T>>(value).map(drop))
        } else {
            Arc::new(|value: &Value| parse_args::<T>(value).map(drop))
        };
        OutputType::new(schema, wrapped, check)
    }

    /// The output follows `schema` (a JSON Schema, as for a tool's input), and an answer passes
    /// if `check` accepts it; the text of its error is what the model reads, so say where and
    /// what: `"items[2].price: expected a number"`.
    pub fn from_schema(
        schema: Value,
        check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let wrapped = !agent_core::schema::is_object_schema(&schema);
        let check: Arc<Check> = Arc::new(move |value: &Value| {
            let inner = if wrapped {
                value.get("value").unwrap_or(&Value::Null)
            } else {
                value
            };
            check(inner).map_err(|message| SkillError::bad_args("(root)", message))
        });
        OutputType::new(schema, wrapped, check)
    }

    /// Whether the value is asked for as `{"value": ...}` (its schema is not an object's).
    pub(in crate::runtime) fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    fn new(schema: Value, wrapped: bool, check: Arc<Check>) -> Self {
        let schema = if wrapped { wrap(schema) } else { schema };
        OutputType {
            schema,
            wrapped,
            check,
        }
    }

    /// The schema the model is shown: the value's own, or `{"value": <its schema>}` when the
    /// value is not an object.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks an answer (as the model sent it: wrapped if the schema is) and returns the value
    /// itself.
    fn accept(&self, answer: &Value) -> Result<Value, SkillError> {
        // `null` and `""` would read as `{}` for an input; as an answer they are no answer.
        if !answer.is_object() {
            return Err(SkillError::bad_args(
                "(root)",
                format!(
                    "expected a JSON object, got {}",
                    agent_core::skill::kind_of(answer)
                ),
            ));
        }
        (self.check)(answer)?;
        Ok(if self.wrapped {
            answer.get("value").cloned().unwrap_or(Value::Null)
        } else {
            answer.clone()
        })
    }
}

impl fmt::Debug for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputType")
            .field("schema", &self.schema)
            .field("wrapped", &self.wrapped)
            .finish_non_exhaustive()
    }
}

/// A value asked for as `{"value": ...}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped<T> {
    #[allow(dead_code)] // Read by the check only: deserializing is the check.
    value: T,
}

/// `{"type": "object", "properties": {"value": schema}, "required": ["value"]}`, with the
/// schema's `$defs` moved to the new root so its `$ref`s still resolve.
fn wrap(mut schema: Value) -> Value {
    let defs = schema.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut root = json!({
        "type": "object",
        "properties": {"value": schema},
        "required": ["value"],
    });
    if let Some(defs) = defs {
        root["$defs"] = defs;
    }
    root
}

/// The mode a run uses, once `Auto` is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::runtime) enum Resolved {
    Tool,
    Native,
    Prompted,
}

/// What an answer means for a typed run.
pub(in crate::runtime) enum Verdict {
    /// The run ends with this value.
    Accept(Value),
    /// The model is asked again; the message, if any, tells it what was wrong (a `final_answer`
    /// call's error result already does).
    Retry(Option<Message>),
    /// Too many answers failed the check.
    Exhausted(FinishReason),
}

/// What a typed run asks for and how: the output, the resolved mode, the retries allowed. Its
/// progress is an [`OutputProgress`] in the run's state.
pub(in crate::runtime) struct Output {
    output: OutputType,
    pub(in crate::runtime) mode: Resolved,
    retries: usize,
    /// Whether the run offers tools: native mode then asks under the schema on a last turn.
    has_tools: bool,
    response_schema: ResponseSchema,
}

impl Output {
    pub(in crate::runtime) fn new(
        output: OutputType,
        mode: OutputMode,
        retries: usize,
        has_tools: bool,
        provider: &dyn agent_llm::llm::LlmProvider,
    ) -> Self {
        let mode = match mode {
            OutputMode::Tool => Resolved::Tool,
            OutputMode::Native => Resolved::Native,
            OutputMode::Prompted => Resolved::Prompted,
            OutputMode::Auto if !has_tools && provider.supports_response_schema() => {
                Resolved::Native
            }
            OutputMode::Auto if provider.supports_tools() => Resolved::Tool,
            OutputMode::Auto => Resolved::Prompted,
        };
        let strict = ToolDefinition::new(FINAL_ANSWER_TOOL, "", output.schema.clone())
            .openai_strict_schema();
        Output {
            response_schema: ResponseSchema {
                name: FINAL_ANSWER_TOOL.into(),
                schema: strict,
            },
            output,
            mode,
            retries,
            has_tools,
        }
    }

    /// The progress of a run that has not answered yet.
    pub(in crate::runtime) fn start(&self) -> OutputProgress {
        OutputProgress {
            failures: 0,
            native_turn: !self.has_tools,
        }
    }

    /// The `final_answer` tool, in tool mode.
    pub(in crate::runtime) fn tool(&self) -> Option<ToolDefinition> {
        (self.mode == Resolved::Tool).then(|| {
            ToolDefinition::new(
                FINAL_ANSWER_TOOL,
                "Give your final answer. Call this once you have everything you need; the run \
                 ends when the answer passes its schema.",
                self.output.schema.clone(),
            )
        })
    }

    /// The instructions added to the system prompt, in prompted mode.
    pub(in crate::runtime) fn instructions(&self) -> Option<String> {
        (self.mode == Resolved::Prompted).then(|| {
            format!(
                "When you have finished, answer with only a JSON object, no other text, that \
                 follows this JSON Schema:\n{}",
                self.output.schema
            )
        })
    }

    /// The schema to send this turn: native mode, on a turn without tools.
    pub(in crate::runtime) fn response_schema(
        &self,
        progress: &OutputProgress,
    ) -> Option<&ResponseSchema> {
        (self.mode == Resolved::Native && progress.native_turn).then_some(&self.response_schema)
    }

    /// A finished text answer (no tool calls).
    pub(in crate::runtime) fn on_text(&self, progress: &mut OutputProgress, text: &str) -> Verdict {
        match self.mode {
            Resolved::Tool => self.fail(
                progress,
                SkillError::tool(format!(
                    "no final answer: give it by calling `{FINAL_ANSWER_TOOL}`"
                )),
                |error| {
                    Some(Message::user(format!(
                        "{error}. Plain text does not end this task: call `{FINAL_ANSWER_TOOL}` \
                         with your answer."
                    )))
                },
            ),
            Resolved::Native if !progress.native_turn => {
                // The work is done; the next turn asks for the answer under the schema.
                progress.native_turn = true;
                Verdict::Retry(Some(Message::user(
                    "Now give your final answer as JSON that follows the required schema.",
                )))
            }
            Resolved::Native | Resolved::Prompted => {
                let native = self.mode == Resolved::Native;
                let parsed = extract_json(text)
                    .map(|mut answer| {
                        if native {
                            drop_strict_nulls(&mut answer, &self.output.schema);
                        }
                        answer
                    })
                    .ok_or_else(|| {
                        SkillError::bad_args("(root)", "the answer holds no JSON object")
                    });
                match parsed.and_then(|answer| self.output.accept(&answer)) {
                    Ok(value) => Verdict::Accept(value),
                    Err(error) => self.fail(progress, error, |error| {
                        Some(Message::user(format!(
                            "Your answer does not follow the required schema: {error}. Answer \
                             again with only the corrected JSON."
                        )))
                    }),
                }
            }
        }
    }

    /// The `final_answer` calls of a turn, in tool mode: the first that passes ends the run.
    /// Every call gets a result (errors for the ones that failed); `Accept` carries the value.
    pub(in crate::runtime) fn on_final_calls(
        &self,
        progress: &mut OutputProgress,
        calls: &[&ToolCall],
    ) -> (Vec<ToolResult>, Verdict) {
        let mut results = Vec::with_capacity(calls.len());
        let mut accepted = None;
        let mut last_error = None;
        for call in calls {
            let result = match (&accepted, self.output.accept(&call.arguments)) {
                (Some(_), _) => Err(SkillError::tool(
                    "not used: an earlier final answer was accepted",
                )),
                (None, Ok(value)) => {
                    accepted = Some(value);
                    Ok("Final answer accepted.".into())
                }
                (None, Err(error)) => {
                    last_error = Some(error.clone());
                    Err(error)
                }
            };
            results.push(ToolResult::new(call, result));
        }
        let verdict = match (accepted, last_error) {
            (Some(value), _) => Verdict::Accept(value),
            (None, Some(error)) => self.fail(progress, error, |_| None),
            (None, None) => unreachable!("called with at least one call"),
        };
        (results, verdict)
    }

    /// Counts a failed answer: `Retry` with the message `tell` writes, or `Exhausted`.
    fn fail(
        &self,
        progress: &mut OutputProgress,
        error: SkillError,
        tell: impl FnOnce(&str) -> Option<Message>,
    ) -> Verdict {
        progress.failures += 1;
        if progress.failures > self.retries {
            return Verdict::Exhausted(finish_checks::output_retries(
                self.retries,
                describe(&error),
            ));
        }
        Verdict::Retry(tell(&describe(&error)))
    }
}

/// What was wrong with an answer, in the model's terms: `` `sky`: missing field ``.
fn describe(error: &SkillError) -> String {
    match error {
        SkillError::BadArgs { path, message } if path == "(root)" => message.clone(),
        SkillError::BadArgs { path, message } => format!("`{path}`: {message}"),
        other => other.to_string(),
    }
}

/// Removes the `null`s the strict form of `schema` made the model write: native mode sends every
/// property as required, the optional ones nullable, so a property the model leaves out comes as
/// `null`. Checked against the schema as written, that `null` would fail where absence passes.
fn drop_strict_nulls(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = |name: &str| {
                schema
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == name))
            };
            map.retain(|name, v| {
                !(v.is_null() && properties.contains_key(name) && !required(name))
            });
            for (name, v) in map.iter_mut() {
                if let Some(sub) = properties.get(name) {
                    drop_strict_nulls(v, sub);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                items
                    .iter_mut()
                    .for_each(|item| drop_strict_nulls(item, sub));
            }
        }
        _ => {}
    }
}

/// The JSON object in a text answer: the whole text, the inside of a Markdown code fence, or the
/// span from the first `{` to the last `}`.
fn extract_json(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    if let Some(start) = text.find("```") {
        let after = &text[start + 3..];
        let body = after.split_once('\n').map_or(after, |(_, rest)| rest);
        if let Some(end) = body.find("```")
            && let Ok(value) = serde_json::from_str::<Value>(body[..end].trim())
        {
            return Some(value);
        }
    }
    let (start, end) = (text.find('{')?, text.rfind('}')?);
    serde_json::from_str(text.get(start..=end)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_bare_fenced_or_inside_prose() {
        assert_eq!(extract_json(" {\"a\": 1} "), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("Here:\n```json\n{\"a\": 2}\n```\nDone."),
            Some(json!({"a": 2}))
        );
        assert_eq!(
            extract_json("The answer is {\"a\": {\"b\": 3}} as asked."),
            Some(json!({"a": {"b": 3}}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("} backwards {"), None);
    }

    #[test]
    fn nulls_the_strict_form_added_are_dropped_and_others_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "note": {"type": "string"},
                "owner": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "color": {"type": "string"}},
                    "required": ["name"]
                }}
            },
            "required": ["title", "owner"]
        });
        let mut answer = json!({
            "title": "t", "note": null, "owner": null,
            "tags": [{"name": "a", "color": null}]
        });
        drop_strict_nulls(&mut answer, &schema);
        assert_eq!(
            answer,
            json!({"title": "t", "owner": null, "tags": [{"name": "a"}]})
        );
    }

    #[test]
    fn a_value_that_is_not_an_object_is_asked_for_wrapped() {
        let output = OutputType::of::<Vec<u32>>();
        assert_eq!(output.schema()["required"], json!(["value"]));
        assert_eq!(output.schema()["properties"]["value"]["type"], "array");
        assert_eq!(
            output.accept(&json!({"value": [1, 2]})).unwrap(),
            json!([1, 2])
        );
        let error = output.accept(&json!({"value": [1, "x"]})).unwrap_err();
        assert!(error.to_string().contains("value[1]"), "{error}");
    }
}
