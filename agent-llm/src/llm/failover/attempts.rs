//! The attempts of one request to a [`Failover`](super::Failover): which provider is asked next,
//! what each failure means ([`ErrorClass`]), and the events the caller sees.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::owned::OwnedRequest;
use crate::llm::{
    BreakerState, CircuitBreaker, ErrorClass, LlmProvider, Permit, ProviderError, StreamEvent,
};
use crate::message::{ChatRequest, ChatResponse};

/// The failover's own name, as [`LlmProvider::name`] says it.
pub(super) const NAME: &str = "failover";

/// One provider of a failover, with what is known of it.
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) provider: Arc<dyn LlmProvider>,
    /// The context window it declared, in tokens.
    pub(super) context_window: Option<u64>,
    pub(super) breaker: CircuitBreaker,
}

/// The request, borrowed (a whole answer, asked while the caller waits) or copied (a stream,
/// which outlives the caller's borrow).
pub(super) enum Source<'a> {
    Borrowed(&'a ChatRequest<'a>),
    Owned(Box<OwnedRequest>),
}

/// How a provider's answer is asked for.
#[derive(Clone, Copy)]
pub(super) enum Asked {
    /// [`LlmProvider::stream`].
    Streamed,
    /// [`LlmProvider::complete_events`].
    Whole,
}

/// What the providers that may still be asked must offer.
#[derive(Clone, Copy)]
struct Needs {
    /// After a context-length error: a declared window larger than this.
    window_above: Option<u64>,
}

impl Needs {
    fn met_by(self, entry: &Entry) -> bool {
        match self.window_above {
            None => true,
            Some(above) => entry.context_window.is_some_and(|w| w > above),
        }
    }
}

/// Asks the entries in order for the answer to `source`, moving on as each error's class says,
/// as one stream of events (see the [module docs](super) for the rules).
pub(super) fn attempts<'a>(
    entries: Arc<Vec<Entry>>,
    source: Source<'a>,
    asked: Asked,
) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
    Box::pin(async_stream::try_stream! {
        let base = match &source {
            Source::Borrowed(request) => (*request).clone(),
            Source::Owned(owned) => owned.request(),
        };
        let mut tried = vec![false; entries.len()];
        let mut needs = Needs { window_above: None };
        let mut last: Option<ProviderError> = None;
        let mut moves = 0;
        loop {
            let Some((index, permit)) = next(&entries, &tried, needs) else {
                Err(last.take().unwrap_or_else(|| all_resting(&entries)))?;
                return;
            };
            tried[index] = true;
            let entry = &entries[index];
            if let Some(error) = last.take() {
                moves += 1;
                yield StreamEvent::Retry {
                    attempt: moves,
                    delay: Duration::ZERO,
                    error: format!("{error}; asking {} instead", described(entry)),
                };
            }
            // Where another provider could take the request, a busy one returns at once.
            let others = (0..entries.len())
                .any(|j| j != index && !tried[j] && needs.met_by(&entries[j]) && !resting(&entries[j]));
            let request = ChatRequest {
                wait_when_busy: base.wait_when_busy && !others,
                ..base.clone()
            };
            let mut answer = match asked {
                Asked::Streamed => entry.provider.stream(&request),
                Asked::Whole => entry.provider.complete_events(&request),
            };
            let mut started = false;
            let mut failure = None;
            while let Some(item) = answer.next().await {
                match item {
                    Ok(StreamEvent::Done(response)) => {
                        permit.succeeded();
                        yield StreamEvent::Done(answered_by(response, entry));
                        return;
                    }
                    Ok(event) => {
                        started |= !matches!(event, StreamEvent::Retry { .. } | StreamEvent::Usage(_));
                        yield event;
                    }
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            let error = failure.unwrap_or_else(|| ProviderError::Stream {
                provider: entry.provider.name().to_owned(),
                error_type: None,
                message: "the stream ended without a complete answer".into(),
            });
            let class = ErrorClass::of(&error);
            if class.is_failure() {
                permit.failed();
            } else {
                permit.succeeded();
            }
            // An answer that began is not asked again elsewhere: its error ends it.
            if started {
                Err(error)?;
                return;
            }
            match class {
                ErrorClass::ContextTooLong => {
                    let window = entry.context_window.unwrap_or(0);
                    needs.window_above = Some(needs.window_above.map_or(window, |w| w.max(window)));
                }
                class if class.is_failure() => {}
                _ => {
                    Err(error)?;
                    return;
                }
            }
            last = Some(error);
        }
    })
}

/// The first entry, in order, not asked yet, that meets `needs` and whose breaker lets a
/// request through.
fn next(entries: &[Entry], tried: &[bool], needs: Needs) -> Option<(usize, Permit)> {
    entries
        .iter()
        .enumerate()
        .filter(|(i, entry)| !tried[*i] && needs.met_by(entry))
        .find_map(|(i, entry)| entry.breaker.admit().map(|permit| (i, permit)))
}

/// Whether the entry's breaker would skip it now.
fn resting(entry: &Entry) -> bool {
    matches!(
        entry.breaker.state(),
        BreakerState::Open { .. } | BreakerState::HalfOpen { probing: true }
    )
}

/// The answer, saying which provider gave it and (when it did not say) which model.
fn answered_by(mut response: ChatResponse, entry: &Entry) -> ChatResponse {
    if response.provider.is_none() {
        response.provider = Some(entry.provider.name().to_owned());
    }
    if response.model.is_none() {
        response.model = entry.provider.model().map(str::to_owned);
    }
    response
}

/// `anthropic (claude-sonnet-4-5)`, or the name alone.
fn described(entry: &Entry) -> String {
    let name = entry.provider.name();
    match entry.provider.model() {
        Some(model) => format!("{name} ({model})"),
        None => name.to_owned(),
    }
}

/// The error when every provider is skipped by its breaker: a 503 of the failover's own,
/// `circuit_open`, whose `retry_after` is when the first cool-down ends.
fn all_resting(entries: &[Entry]) -> ProviderError {
    let states: Vec<(String, Option<Duration>)> = entries
        .iter()
        .map(|e| {
            let remaining = match e.breaker.state() {
                BreakerState::Open { remaining } => Some(remaining),
                _ => None,
            };
            (described(e), remaining)
        })
        .collect();
    let listed: Vec<String> = states
        .iter()
        .map(|(name, remaining)| match remaining {
            Some(r) => format!("{name} for {:.1}s more", r.as_secs_f64()),
            None => format!("{name} while its probe is under way"),
        })
        .collect();
    ProviderError::Api {
        provider: NAME.into(),
        status: 503,
        error_type: Some("circuit_open".into()),
        message: format!(
            "every provider is skipped after failing: {}",
            listed.join(", ")
        ),
        retry_after: states.iter().filter_map(|(_, r)| *r).min(),
    }
}
