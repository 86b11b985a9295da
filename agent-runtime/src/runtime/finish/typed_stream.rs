//! A typed run consumed as a stream ([`TypedRunRequest::stream`]): the answer's partial values
//! as its JSON arrives, each a [`TypedEvent::Partial`], then the run's result as awaiting the
//! request gives it, a [`TypedEvent::Done`].
//!
//! What the stream reads and when it sends a partial is on [`TypedRunRequest::stream`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::stream::{self, BoxStream};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use super::output_type::FINAL_ANSWER_TOOL;
use super::partial_json::PartialJson;
use super::typed_outcome::TypedOutcome;
use crate::event::AgentEvent;
use crate::runtime::{AgentError, TypedRunRequest};

/// What a typed run's stream yields ([`TypedRunRequest::stream`]).
// `Done` is the one large event, sent once at the end: boxing it would make every user unbox it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum TypedEvent<T> {
    /// The answer so far: the JSON received, with the fields that are complete.
    Partial(PartialAnswer),
    /// The run ended: what awaiting the request gives. Always the last event.
    Done(Result<TypedOutcome<T>, AgentError>),
}

/// A typed answer so far: the values of the JSON received that are complete, open objects and
/// arrays with their complete members; a value asked for wrapped (`{"value": ...}`) is given
/// unwrapped.
///
/// Read it as JSON ([`PartialAnswer::value`]) or as a partial form of your type
/// ([`PartialAnswer::to`]): the same fields, each `Option` or `#[serde(default)]`, since any may
/// be missing yet.
#[derive(Debug, Clone)]
pub struct PartialAnswer {
    root: Arc<Value>,
    wrapped: bool,
    step: usize,
}

impl PartialAnswer {
    /// The answer so far as JSON.
    pub fn value(&self) -> &Value {
        if self.wrapped {
            self.root.get("value").unwrap_or(&Value::Null)
        } else {
            &self.root
        }
    }

    /// The answer so far as `P`, a partial form of the run's type (every field optional).
    pub fn to<P: DeserializeOwned>(&self) -> Result<P, serde_json::Error> {
        P::deserialize(self.value())
    }

    /// The step whose answer this is.
    pub fn step(&self) -> usize {
        self.step
    }
}

type Run<'r, T> = Pin<Box<dyn Future<Output = Result<TypedOutcome<T>, AgentError>> + Send + 'r>>;

impl<'r, T: DeserializeOwned + Send + 'r> TypedRunRequest<'r, T> {
    /// The run as a stream: partial answers ([`TypedEvent::Partial`]) as the JSON arrives, then
    /// the result ([`TypedEvent::Done`]).
    ///
    /// Where the JSON comes from depends on how the model is asked
    /// ([`OutputMode`](crate::runtime::OutputMode)): the `final_answer` call's arguments as they
    /// stream ([`AgentEvent::ToolCallDelta`]), or the answer's text ([`AgentEvent::TextDelta`]:
    /// native structured output, or prompted, where prose or a fence before the JSON is skipped).
    /// Each step starts a new reading: a step's partials describe that step's answer, and an answer
    /// that fails the check and is asked again starts over. The pieces are read once each by a
    /// [`PartialJson`]; a partial is sent after a piece that completed a value (a string, a number, an
    /// item, or opened an object or array), at most one per piece. A run that does not stream (or a
    /// model that answers whole) gives one partial, the whole value, then the result.
    ///
    /// The run does not wait on the stream's reader: its events go into an unbounded channel read
    /// as the stream is polled, so memory grows with what was not read yet (at most the run's own
    /// answer text), never blocking the run's progress past that of the stream being polled.
    ///
    /// ```
    /// use agent_core::{Registry, ToolCall};
    /// use agent_llm::{MockProvider, MockReply};
    /// use agent_runtime::{AgentRuntime, TypedEvent};
    /// use futures::StreamExt;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct City { name: String, population: u64 }
    ///
    /// /// City's partial form: any field may be missing yet.
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct PartialCity { name: Option<String>, population: Option<u64> }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let answer = json!({"name": "Lyon", "population": 522969});
    /// let call = ToolCall::new("c1", "final_answer", answer);
    /// let provider = MockProvider::new([MockReply::tool_calls([call])]);
    /// let runtime = AgentRuntime::new(provider, Registry::new()).streaming(true);
    /// let mut events = runtime.run("The third city of France?").typed::<City>().stream();
    /// let mut partials = Vec::new();
    /// while let Some(event) = events.next().await {
    ///     match event {
    ///         TypedEvent::Partial(partial) => partials.push(partial.to::<PartialCity>().unwrap()),
    ///         TypedEvent::Done(outcome) => assert_eq!(outcome.unwrap().output.unwrap().name, "Lyon"),
    ///     }
    /// }
    /// assert_eq!(partials.last(), Some(&PartialCity { name: Some("Lyon".into()), population: Some(522969) }));
    /// # }
    /// ```
    pub fn stream(self) -> BoxStream<'r, TypedEvent<T>> {
        let request = self.into_request();
        let wrapped = request.is_wrapped();
        let (sender, events) = mpsc::unbounded_channel();
        let runtime = request.runtime().clone().event_sink(sender);
        let run: Run<'r, T> = Box::pin(async move {
            let outcome = request.on(&runtime).send().await?;
            TypedOutcome::new(outcome)
        });
        let state = State {
            run: Some(run),
            result: None,
            events,
            reader: Reader::new(wrapped),
        };
        Box::pin(stream::unfold(state, next))
    }
}

/// The stream's state: the run while it goes, its result once it ended, its events not read yet.
struct State<'r, T> {
    run: Option<Run<'r, T>>,
    result: Option<Result<TypedOutcome<T>, AgentError>>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    reader: Reader,
}

async fn next<T>(mut state: State<'_, T>) -> Option<(TypedEvent<T>, State<'_, T>)> {
    loop {
        if let Some(run) = state.run.as_mut() {
            tokio::select! {
                // What the run said first, then whether it ended.
                biased;
                Some(event) = state.events.recv() => {
                    if let Some(partial) = state.reader.read(&event) {
                        return Some((TypedEvent::Partial(partial), state));
                    }
                }
                result = run => {
                    state.run = None;
                    state.result = Some(result);
                }
            }
            continue;
        }
        // Ended: what it sent before ending is in the channel still.
        while let Ok(event) = state.events.try_recv() {
            if let Some(partial) = state.reader.read(&event) {
                return Some((TypedEvent::Partial(partial), state));
            }
        }
        let result = state.result.take()?;
        if !state.reader.sent_any {
            // A whole answer: one partial, the whole value, then the result.
            if let Ok(TypedOutcome { outcome, .. }) = &result
                && let Some(value) = &outcome.output
            {
                state.reader.sent_any = true;
                let partial = PartialAnswer {
                    root: Arc::new(value.clone()),
                    wrapped: false,
                    step: outcome.steps,
                };
                state.result = Some(result);
                return Some((TypedEvent::Partial(partial), state));
            }
        }
        return Some((TypedEvent::Done(result), state));
    }
}

/// Where the step's JSON is read from.
#[derive(Debug, PartialEq)]
enum Source {
    /// The answer's text.
    Text,
    /// The `final_answer` call with this id.
    Call(String),
}

/// Reads the run's events into the answer so far.
struct Reader {
    step: usize,
    source: Source,
    json: PartialJson,
    wrapped: bool,
    sent_any: bool,
}

impl Reader {
    fn new(wrapped: bool) -> Self {
        Reader {
            step: 0,
            source: Source::Text,
            json: PartialJson::new(),
            wrapped,
            sent_any: false,
        }
    }

    /// The partial answer after `event`, when it completed a value.
    fn read(&mut self, event: &AgentEvent) -> Option<PartialAnswer> {
        match event {
            AgentEvent::TextDelta { step, text } => {
                self.at(*step);
                if self.source != Source::Text {
                    return None;
                }
                self.json.push(text);
            }
            AgentEvent::ToolCallDelta {
                step,
                call_id,
                name,
                arguments,
            } if name == FINAL_ANSWER_TOOL => {
                self.at(*step);
                if !matches!(&self.source, Source::Call(id) if id == call_id) {
                    self.source = Source::Call(call_id.clone());
                    self.json = PartialJson::new();
                }
                self.json.push(arguments);
            }
            _ => return None,
        }
        if !self.json.take_changed() {
            return None;
        }
        let root = self.json.snapshot()?;
        if self.wrapped && root.get("value").is_none() {
            return None;
        }
        self.sent_any = true;
        Some(PartialAnswer {
            root,
            wrapped: self.wrapped,
            step: self.step,
        })
    }

    /// A new step starts a new reading.
    fn at(&mut self, step: usize) {
        if step != self.step {
            self.step = step;
            self.source = Source::Text;
            self.json = PartialJson::new();
        }
    }
}
