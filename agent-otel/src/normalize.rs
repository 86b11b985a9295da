//! The spans as they join the export queue: every string attribute value cut to the limit (so a
//! queue of recorded transcripts stays small), and the GenAI attributes the conventions type
//! given their type back. `tracing` hands the OpenTelemetry layer a `u64` field as text, so
//! `gen_ai.usage.input_tokens` and the other `gen_ai.*_tokens` counts become integers again when
//! they are one; `gen_ai.response.finish_reasons`, recorded as a JSON array of strings, becomes a
//! string array, as the conventions define it.

use std::time::Duration;

use opentelemetry::{Array, KeyValue, StringValue, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};

/// `P` with every string attribute value (of the span, its events and links) cut to `limit`
/// characters, and the span's GenAI counts and finish reasons typed.
#[derive(Debug)]
pub(crate) struct Normalized<P> {
    inner: P,
    limit: usize,
}

impl<P> Normalized<P> {
    pub(crate) fn new(inner: P, limit: usize) -> Self {
        Normalized { inner, limit }
    }
}

impl<P: SpanProcessor> SpanProcessor for Normalized<P> {
    fn on_start(&self, span: &mut Span, cx: &opentelemetry::Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        typed(&mut span.attributes);
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

/// The GenAI token counts as integers and the finish reasons as a string array, when their
/// text is one; anything else stays as it is.
fn typed(attributes: &mut [KeyValue]) {
    for attribute in attributes {
        let key = attribute.key.as_str();
        let Value::String(text) = &attribute.value else {
            continue;
        };
        if key.starts_with("gen_ai.") && key.ends_with("_tokens") {
            if let Ok(count) = text.as_str().parse::<i64>() {
                attribute.value = Value::I64(count);
            }
        } else if key == "gen_ai.response.finish_reasons"
            && let Ok(reasons) = serde_json::from_str::<Vec<String>>(text.as_str())
        {
            attribute.value = Value::Array(Array::String(
                reasons.into_iter().map(StringValue::from).collect(),
            ));
        }
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
    fn token_counts_and_finish_reasons_get_their_convention_types_back() {
        let mut attributes = vec![
            KeyValue::new("gen_ai.usage.input_tokens", "380"),
            KeyValue::new("gen_ai.usage.cache_read.input_tokens", "30"),
            KeyValue::new("gen_ai.request.max_tokens", "4096"),
            KeyValue::new("gen_ai.usage.output_tokens", "many"),
            KeyValue::new("gen_ai.conversation.id", "42"),
            KeyValue::new("agent.tokens", "7"),
            KeyValue::new("gen_ai.response.finish_reasons", r#"["stop","length"]"#),
        ];
        typed(&mut attributes);
        assert_eq!(attributes[0].value, Value::I64(380));
        assert_eq!(attributes[1].value, Value::I64(30));
        assert_eq!(attributes[2].value, Value::I64(4096));
        // Not a number, not a count, not GenAI's: left as they are.
        assert_eq!(attributes[3].value.as_str(), "many");
        assert_eq!(attributes[4].value.as_str(), "42");
        assert_eq!(attributes[5].value.as_str(), "7");
        assert_eq!(
            attributes[6].value,
            Value::Array(Array::String(vec!["stop".into(), "length".into()]))
        );
    }

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
