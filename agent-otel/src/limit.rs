//! The bound on string attribute values: a span processor that cuts each one longer than the
//! limit before the span joins the export queue, so a queue of recorded transcripts stays small.

use std::time::Duration;

use opentelemetry::{Array, KeyValue, StringValue, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};

/// `P` with every string attribute value (of the span, its events and links) cut to `limit`
/// characters.
#[derive(Debug)]
pub(crate) struct Bounded<P> {
    inner: P,
    limit: usize,
}

impl<P> Bounded<P> {
    pub(crate) fn new(inner: P, limit: usize) -> Self {
        Bounded { inner, limit }
    }
}

impl<P: SpanProcessor> SpanProcessor for Bounded<P> {
    fn on_start(&self, span: &mut Span, cx: &opentelemetry::Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        cut_all(&mut span.attributes, self.limit);
        for event in span.events.events.iter_mut() {
            cut_all(&mut event.attributes, self.limit);
        }
        for link in span.links.links.iter_mut() {
            cut_all(&mut link.attributes, self.limit);
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}

fn cut_all(attributes: &mut [KeyValue], limit: usize) {
    for attribute in attributes {
        match &mut attribute.value {
            Value::String(value) => cut(value, limit),
            Value::Array(Array::String(values)) => {
                for value in values {
                    cut(value, limit);
                }
            }
            _ => {}
        }
    }
}

/// `value` cut to its first `limit` characters, when it is longer.
fn cut(value: &mut StringValue, limit: usize) {
    if let Some((end, _)) = value.as_str().char_indices().nth(limit) {
        let kept = value.as_str()[..end].to_owned();
        *value = kept.into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_at_a_character_boundary_and_short_ones_kept() {
        let mut attributes = vec![
            KeyValue::new("long", "é".repeat(10)),
            KeyValue::new("short", "abc"),
            KeyValue::new("number", 7_i64),
            KeyValue::new(
                "list",
                Value::Array(Array::String(vec!["x".repeat(9).into(), "y".into()])),
            ),
        ];
        cut_all(&mut attributes, 4);
        assert_eq!(attributes[0].value.as_str(), "éééé");
        assert_eq!(attributes[1].value.as_str(), "abc");
        assert_eq!(attributes[2].value, Value::I64(7));
        assert_eq!(
            attributes[3].value,
            Value::Array(Array::String(vec!["xxxx".into(), "y".into()]))
        );
    }
}
