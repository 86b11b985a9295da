//! How a run is traced beyond the `tracing` spans it makes: the W3C trace context that keeps a
//! run that pauses in one process and goes on in another in **one trace**, and whether prompts and
//! answers are recorded on the spans.
//!
//! A run's spans follow the OpenTelemetry GenAI conventions (`invoke_agent` › `chat`,
//! `execute_tool`); an exporter such as `agent-otel` sends them on. A run that pauses keeps its
//! `invoke_agent` span's `traceparent` in its [`RunState`](crate::RunState); the process that
//! continues it makes its own `invoke_agent` span a child of that one, so the backend shows both
//! halves in one trace (a propagated context, not a link). Sub-agents are spans inside their
//! parent's `execute_tool`, in the same trace. This module holds the hook the exporter fills in
//! ([`set_trace_context`]): without one, nothing is carried and nothing costs anything.
//!
//! Prompt and completion content is sensitive and off by default: [`record_content`] turns it on
//! (so does `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment, the
//! variable OpenTelemetry's GenAI instrumentations read).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// What reads and sets the trace context of `tracing` spans; `agent-otel` provides one.
pub trait TraceContext: Send + Sync + 'static {
    /// The W3C `traceparent` (`00-<trace id>-<span id>-<flags>`) of `span`, when it is traced.
    fn traceparent(&self, span: &tracing::Span) -> Option<String>;

    /// Makes `span`, not yet entered, a child of the span `traceparent` names. A malformed
    /// `traceparent` leaves `span` as it is.
    fn set_parent(&self, span: &tracing::Span, traceparent: &str);
}

static CONTEXT: OnceLock<Box<dyn TraceContext>> = OnceLock::new();

/// Installs the process's [`TraceContext`]; the first one stays. `false` when one was installed
/// already.
pub fn set_trace_context(context: impl TraceContext) -> bool {
    CONTEXT.set(Box::new(context)).is_ok()
}

/// The `traceparent` of `span`, when a [`TraceContext`] is installed and the span is traced.
pub fn traceparent(span: &tracing::Span) -> Option<String> {
    CONTEXT.get()?.traceparent(span)
}

/// Makes `span` a child of the span `traceparent` names, when a [`TraceContext`] is installed.
pub fn set_parent(span: &tracing::Span, traceparent: &str) {
    if let Some(context) = CONTEXT.get() {
        context.set_parent(span, traceparent);
    }
}

/// Unset (0), off (1), on (2).
static CONTENT: AtomicU8 = AtomicU8::new(0);

/// Records prompts, answers and tool calls on the spans (`gen_ai.system_instructions`,
/// `gen_ai.input.messages`, `gen_ai.output.messages`), or stops. Off unless turned on here or
/// by `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
pub fn record_content(on: bool) {
    CONTENT.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether content is recorded on the spans ([`record_content`]).
pub fn records_content() -> bool {
    match CONTENT.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
                .is_ok_and(|v| v.eq_ignore_ascii_case("true"));
            // Another thread may have decided meanwhile; theirs stands.
            let _ = CONTENT.compare_exchange(
                0,
                if on { 2 } else { 1 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            CONTENT.load(Ordering::Relaxed) == 2
        }
        state => state == 2,
    }
}

tokio::task_local! {
    /// The session a run belongs to (`gen_ai.conversation.id`), while it runs in one.
    pub(crate) static CONVERSATION: String;
}

/// The session the current run belongs to.
pub(crate) fn conversation() -> Option<String> {
    CONVERSATION.try_with(Clone::clone).ok()
}
