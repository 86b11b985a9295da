//! agent-eval end to end: evals run on real runtimes against scripted models (the model's
//! choices alone are scripted) and against OpenAI-compatible servers on loopback over real HTTP;
//! reports written to real files and read back; JUnit XML read back by an XML parser.
//!
//! Nothing here measures time: a time limit is proven by a model that never answers, and the
//! concurrency bound by counting the calls in flight.

mod attach;
mod dataset;
mod http;
mod judge;
mod reports;
mod runs;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{Registry, async_trait};
use agent_eval::{AttemptReport, Report};
use agent_llm::{
    ChatRequest, ChatResponse, EventStream, LlmProvider, MockProvider, MockReply, ProviderError,
    Usage,
};
use agent_runtime::AgentRuntime;

/// How long a wait may take before a test fails as hung (not a measurement).
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// A runtime over a shared scripted model, with no skills.
pub fn runtime(model: &MockProvider) -> AgentRuntime {
    AgentRuntime::new(model.clone(), Registry::new())
}

/// A reply with this many input and output tokens.
pub fn text_with_usage(text: &str, input: u64, output: u64) -> MockReply {
    MockReply::text(text).with_usage(Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    })
}

/// The attempts of the case named `name`.
pub fn attempts<'r>(report: &'r Report, name: &str) -> &'r [AttemptReport] {
    &report
        .case(name)
        .unwrap_or_else(|| panic!("no case {name} in {report:#?}"))
        .attempts
}

/// A model that counts the calls in flight and holds each until `gate` of them are in flight
/// together (or the hang guard passes), then a moment more, then answers from `inner`.
pub struct Counted {
    pub inner: MockProvider,
    pub in_flight: AtomicUsize,
    pub most: AtomicUsize,
    pub gate: tokio::sync::Barrier,
}

impl Counted {
    pub fn new(inner: MockProvider, gate: usize) -> Arc<Counted> {
        Arc::new(Counted {
            inner,
            in_flight: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            gate: tokio::sync::Barrier::new(gate),
        })
    }
}

#[async_trait]
impl LlmProvider for Counted {
    fn name(&self) -> &str {
        "counted"
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        // Under a bound of `gate`, the gate opens as each group fills; a looser bound lets more
        // in before it does (and `most` shows it), a tighter one never fills it (the guard).
        let _ = tokio::time::timeout(HANG_GUARD, self.gate.wait()).await;
        // Then stay in flight a moment (a point where the runner could start another attempt if
        // its bound let it), rather than finishing within the poll that opened the gate.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let answer = self.inner.complete(request).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        self.inner.stream(request)
    }
}

/// A model that never answers.
pub struct Silent;

#[async_trait]
impl LlmProvider for Silent {
    fn name(&self) -> &str {
        "silent"
    }

    async fn complete(&self, _: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        std::future::pending().await
    }

    fn stream(&self, _: &ChatRequest<'_>) -> EventStream {
        Box::pin(futures::stream::pending())
    }
}
