//! [`Failover`]: several providers in order, asked as one. When one fails, the next is asked,
//! as the failure's [`ErrorClass`](super::ErrorClass) says:

mod attempts;
mod owned;

use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::BoxStream;

use self::attempts::{Asked, Entry, NAME, Source, attempts};
use self::owned::OwnedRequest;
use super::{
    BreakerPolicy, BreakerState, CircuitBreaker, EventStream, LlmProvider, ProviderError,
    StreamEvent, final_response,
};
use crate::message::{ChatRequest, ChatResponse};

/// Providers asked in order, as one provider.
///
/// | the failure | what happens |
/// |---|---|
/// | rate limited (429, 402) or overloaded (503, 529, `overloaded_error`) | the next provider is asked at once; the last one left waits as `retry-after` says (at most its retry policy's `max_delay`) and tries again itself |
/// | a server error (another 5xx, an answer that could not be read) or the network (no connection, a timeout) | the provider's own retries first, then the next provider |
/// | the context is too long for the model | the next provider that declares a larger [`context_window`](Failover::context_window); none: the error is returned |
/// | the key is refused (401, 403), or the request is wrong (another 4xx, the configuration, media the format cannot take) | the error is returned as it is |
///
/// Each move to another provider is announced as a [`StreamEvent::Retry`] (its `delay` zero, its
/// error saying which provider is asked instead), so a run shows it as a retry. When every
/// provider failed, the last failure is returned.
///
/// **Streaming.** A provider's stream is abandoned for the next one only before its answer
/// began. Once any text, thinking or tool call was yielded, an error ends the answer: it is
/// never asked again elsewhere (the caller has shown part of it).
///
/// **Circuit breakers.** Each provider has a [`CircuitBreaker`](super::CircuitBreaker)
/// ([`Failover::breaker`] sets their policy): after consecutive failures (busy, server errors,
/// the network) it is skipped for a cool-down, then one probe request goes to it. When every
/// provider is skipped, the answer is a 503 of the failover's own (`circuit_open`) whose
/// `retry_after` is when the first cool-down ends.
///
/// **Which provider answered.** The answer's [`ChatResponse::provider`](crate::ChatResponse)
/// names the provider that gave it, and its `model` is that provider's model when the answer
/// did not name one: a runtime prices and traces the turn with them, not with the failover's
/// name. Before an answer, the failover's [`name`](LlmProvider::name) is `failover` and its
/// [`model`](LlmProvider::model) the first provider's.
///
/// **Conversations across wire formats.** An answer's items that only its wire format reads
/// (Anthropic's signed thinking, the Responses API's reasoning items, Gemini's thought
/// signatures) stay in the transcript marked as that format's, and every other format leaves
/// them out of its requests: a conversation that began with one provider goes on with another.
///
/// ```
/// use std::time::Duration;
/// use agent_llm::{AnthropicProvider, BreakerPolicy, Failover, LlmProvider, OpenAiProvider};
///
/// let model = Failover::new(AnthropicProvider::new("sk-ant-…", "claude-sonnet-4-5"))
///     .context_window(200_000)
///     .then(OpenAiProvider::new("sk-…", "gpt-4.1"))
///     .context_window(1_047_576)
///     .breaker(BreakerPolicy { failures: 3, cool_down: Duration::from_secs(60) });
/// assert_eq!((model.name(), model.model()), ("failover", Some("claude-sonnet-4-5")));
/// ```
#[derive(Clone)]
pub struct Failover {
    entries: Arc<Vec<Entry>>,
    policy: BreakerPolicy,
}

impl Failover {
    /// A failover whose first provider is `primary`, with the default [`BreakerPolicy`].
    pub fn new(primary: impl LlmProvider + 'static) -> Self {
        Failover::new_shared(Arc::new(primary))
    }

    /// [`Failover::new`] for a provider already shared.
    pub fn new_shared(primary: Arc<dyn LlmProvider>) -> Self {
        let policy = BreakerPolicy::default();
        Failover {
            entries: Arc::new(vec![entry(primary, policy)]),
            policy,
        }
    }

    /// Adds `provider` after the others: asked when they failed.
    pub fn then(self, provider: impl LlmProvider + 'static) -> Self {
        self.then_shared(Arc::new(provider))
    }

    /// [`Failover::then`] for a provider already shared.
    pub fn then_shared(mut self, provider: Arc<dyn LlmProvider>) -> Self {
        let policy = self.policy;
        Arc::make_mut(&mut self.entries).push(entry(provider, policy));
        self
    }

    /// Declares the context window, in tokens, of the provider added last: when a provider's
    /// answer is that the conversation is too long, only a provider that declares a larger
    /// window is asked next (a provider that declares none counts as the smallest).
    pub fn context_window(mut self, tokens: u64) -> Self {
        if let Some(last) = Arc::make_mut(&mut self.entries).last_mut() {
            last.context_window = Some(tokens);
        }
        self
    }

    /// Sets every provider's circuit breaker to `policy` (closed again).
    pub fn breaker(mut self, policy: BreakerPolicy) -> Self {
        self.policy = policy;
        for entry in Arc::make_mut(&mut self.entries) {
            entry.breaker = CircuitBreaker::new(policy);
        }
        self
    }

    /// Each provider's name and model, and where its circuit breaker stands, in order.
    pub fn states(&self) -> Vec<(String, Option<String>, BreakerState)> {
        self.entries
            .iter()
            .map(|e| {
                (
                    e.provider.name().to_owned(),
                    e.provider.model().map(str::to_owned),
                    e.breaker.state(),
                )
            })
            .collect()
    }
}

fn entry(provider: Arc<dyn LlmProvider>, policy: BreakerPolicy) -> Entry {
    Entry {
        provider,
        context_window: None,
        breaker: CircuitBreaker::new(policy),
    }
}

impl std::fmt::Debug for Failover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let providers: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("{} {:?}", e.provider.name(), e.provider.model()))
            .collect();
        f.debug_struct("Failover")
            .field("providers", &providers)
            .field("breaker", &self.policy)
            .finish()
    }
}

#[async_trait]
impl LlmProvider for Failover {
    /// `failover`.
    fn name(&self) -> &str {
        NAME
    }

    /// The first provider's model.
    fn model(&self) -> Option<&str> {
        self.entries[0].provider.model()
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        final_response(attempts(
            self.entries.clone(),
            Source::Borrowed(request),
            Asked::Whole,
        ))
        .await
    }

    fn complete_events<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ProviderError>> {
        attempts(
            self.entries.clone(),
            Source::Borrowed(request),
            Asked::Whole,
        )
    }

    /// The answer as it is generated, from the first provider that can give it (see the
    /// [type docs](Self) for when another is asked: only before the answer began).
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        let source = Source::Owned(Box::new(OwnedRequest::of(request)));
        attempts(self.entries.clone(), source, Asked::Streamed)
    }

    /// Whether every provider can call tools.
    fn supports_tools(&self) -> bool {
        self.entries.iter().all(|e| e.provider.supports_tools())
    }

    /// Whether every provider sends the response schema.
    fn supports_response_schema(&self) -> bool {
        self.entries
            .iter()
            .all(|e| e.provider.supports_response_schema())
    }
}
