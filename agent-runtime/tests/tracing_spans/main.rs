//! A run's `tracing` spans, named and filled in after the OpenTelemetry GenAI conventions:
//! the tree they make (`tree.rs`), what each carries (`attributes.rs`), and the trace context a
//! paused run keeps so that it stays one trace when it goes on elsewhere (`context.rs`).

mod attributes;
mod context;
mod failover;
mod tree;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use test_support::traced::TextFields;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span as it ended up: its name, its parent's name, and every field it was given, at its
/// start or later.
#[derive(Debug, Clone)]
pub struct SpanRecord {
    pub id: u64,
    pub name: String,
    pub parent: Option<String>,
    pub fields: Vec<(String, String)>,
}

impl SpanRecord {
    /// The last value field `name` was given.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The spans in the order they were made, and where each is by its id.
type Kept = (Vec<SpanRecord>, HashMap<u64, usize>);

/// Keeps every span made while it is the default subscriber, in the order they were made.
#[derive(Default, Clone)]
pub struct Spans(Arc<Mutex<Kept>>);

impl Spans {
    /// Makes a collector the default subscriber of this thread, until the guard is dropped.
    pub fn install() -> (Spans, tracing::subscriber::DefaultGuard) {
        let spans = Spans::default();
        let guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
        (spans, guard)
    }

    /// The spans so far.
    pub fn all(&self) -> Vec<SpanRecord> {
        self.0.lock().unwrap().0.clone()
    }

    /// The spans named `name`, in order.
    pub fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    /// Forgets the spans so far.
    pub fn clear(&self) {
        let mut spans = self.0.lock().unwrap();
        spans.0.clear();
        spans.1.clear();
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("the span exists");
        let parent = span.parent().map(|p| p.name().to_owned());
        let mut fields = Vec::new();
        attrs.record(&mut TextFields(&mut fields));
        let mut spans = self.0.lock().unwrap();
        let index = spans.0.len();
        spans.0.push(SpanRecord {
            id: id.into_u64(),
            name: attrs.metadata().name().to_owned(),
            parent,
            fields,
        });
        spans.1.insert(id.into_u64(), index);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(&index) = spans.1.get(&id.into_u64()) {
            values.record(&mut TextFields(&mut spans.0[index].fields));
        }
    }
}
