//! OpenTelemetry export of eugene's spans: one call sends every run's `invoke_agent`, `chat` and
//! `execute_tool` spans (the OpenTelemetry GenAI semantic conventions) to an OTLP collector, over
//! HTTP or gRPC.
//!
//! (The full manual is written below, in the sections that follow.)

#![warn(missing_docs)]

mod context;
mod error;
mod normalize;
mod pipeline;
mod settings;
mod watch;

pub use context::W3cTraceContext;
pub use error::OtelError;
pub use pipeline::{OtelLayer, OtlpGuard, UNTRACED_TARGETS};
pub use settings::{
    DEFAULT_ATTRIBUTE_VALUE_LIMIT, DEFAULT_EXPORT_TIMEOUT, DEFAULT_SHUTDOWN_TIMEOUT, Otlp,
    Protocol, Resolved,
};
pub use watch::ExportStats;
