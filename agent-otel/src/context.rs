//! The W3C trace context of `tracing` spans, read and set through the OpenTelemetry layer: what
//! keeps a run that pauses in one process and goes on in another in one trace
//! ([`agent_runtime::trace::TraceContext`]).

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `traceparent` header's name in a W3C trace context carrier.
const TRACEPARENT: &str = "traceparent";

/// [`agent_runtime::trace::TraceContext`] over the OpenTelemetry layer, in the W3C Trace Context
/// format (`00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`), parsed and written by
/// OpenTelemetry's own [`TraceContextPropagator`]. Installed by [`Otlp::install`] and
/// [`Otlp::layer`].
///
/// [`Otlp::install`]: crate::Otlp::install
/// [`Otlp::layer`]: crate::Otlp::layer
#[derive(Debug, Default, Clone, Copy)]
pub struct W3cTraceContext;

impl agent_runtime::trace::TraceContext for W3cTraceContext {
    fn traceparent(&self, span: &tracing::Span) -> Option<String> {
        let context = span.context();
        if !context.span().span_context().is_valid() {
            return None;
        }
        let mut carrier = HashMap::new();
        TraceContextPropagator::new().inject_context(&context, &mut carrier);
        carrier.remove(TRACEPARENT)
    }

    fn set_parent(&self, span: &tracing::Span, traceparent: &str) {
        let carrier = HashMap::from([(TRACEPARENT.to_owned(), traceparent.trim().to_owned())]);
        let parent = TraceContextPropagator::new().extract(&carrier);
        if parent.span().span_context().is_valid() {
            // A span already started keeps its parent: the runtime sets it before entering.
            let _ = span.set_parent(parent);
        }
    }
}
