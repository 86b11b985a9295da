//! Reading `tracing` events and spans in tests: [`TextFields`], a visitor that keeps every field
//! of an event or a span as `(name, text)`.

use tracing::field::{Field, Visit};

/// Records every field it visits into the vector as `(name, text)`: strings as they are, other
/// values as `Debug` shows them (a `%value` field shows its `Display`).
pub struct TextFields<'a>(pub &'a mut Vec<(String, String)>);

impl Visit for TextFields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}
