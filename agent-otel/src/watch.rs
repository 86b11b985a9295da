//! The exporter as the batch processor sees it: OpenTelemetry's OTLP exporter, counted, with one
//! warning the first time a batch cannot be sent (never one per batch), and over gRPC run on the
//! crate's own I/O thread so that it needs no async runtime of the application's.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// What was sent and what was not, since the export was set up ([`OtlpGuard::stats`]).
///
/// [`OtlpGuard::stats`]: crate::OtlpGuard::stats
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportStats {
    /// Spans the collector accepted.
    pub exported_spans: u64,
    /// Spans in batches that could not be sent (dropped: a batch is not kept for later).
    pub failed_spans: u64,
    /// Batches that could not be sent.
    pub failed_batches: u64,
}

/// The counters and the once-only warning, shared by the exporter and the guard.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    warned: AtomicBool,
    exported_spans: AtomicU64,
    failed_spans: AtomicU64,
    failed_batches: AtomicU64,
}

impl Watch {
    pub(crate) fn stats(&self) -> ExportStats {
        ExportStats {
            exported_spans: self.exported_spans.load(Ordering::Relaxed),
            failed_spans: self.failed_spans.load(Ordering::Relaxed),
            failed_batches: self.failed_batches.load(Ordering::Relaxed),
        }
    }

    fn count(&self, spans: usize, result: &OTelSdkResult, endpoint: &str) {
        let spans = spans as u64;
        match result {
            Ok(()) => {
                self.exported_spans.fetch_add(spans, Ordering::Relaxed);
            }
            Err(error) => {
                self.failed_spans.fetch_add(spans, Ordering::Relaxed);
                self.failed_batches.fetch_add(1, Ordering::Relaxed);
                self.warn_once(&format!(
                    "cannot export spans to {endpoint} ({}); runs go on unaffected, and spans \
                     that cannot be sent are dropped",
                    describe(error)
                ));
            }
        }
    }

    /// Warns with `message` unless this export has warned already: a collector that is gone
    /// costs one warning, not one per batch.
    pub(crate) fn warn_once(&self, message: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(target: "agent_otel", "{message} (agent-otel warns once)");
        }
    }
}

fn describe(error: &OTelSdkError) -> String {
    match error {
        OTelSdkError::Timeout(after) => format!("no answer within {after:?}"),
        other => other.to_string(),
    }
}

/// The OTLP exporter `E`, counted by a [`Watch`]; with `io`, each export runs as a task there.
pub(crate) struct Watched<E> {
    inner: Arc<E>,
    io: Option<tokio::runtime::Handle>,
    watch: Arc<Watch>,
    endpoint: Arc<str>,
}

impl<E> Watched<E> {
    pub(crate) fn new(
        inner: E,
        io: Option<tokio::runtime::Handle>,
        watch: Arc<Watch>,
        endpoint: &str,
    ) -> Self {
        Watched {
            inner: Arc::new(inner),
            io,
            watch,
            endpoint: endpoint.into(),
        }
    }
}

impl<E> fmt::Debug for Watched<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watched")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl<E: SpanExporter + 'static> SpanExporter for Watched<E> {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let inner = self.inner.clone();
        let io = self.io.clone();
        let watch = self.watch.clone();
        let endpoint = self.endpoint.clone();
        let spans = batch.len();
        async move {
            let result = match io {
                // The batch processor's thread polls this with a plain executor; the gRPC
                // channel's I/O needs a Tokio reactor, which the crate's I/O thread has.
                Some(io) => match io.spawn(async move { inner.export(batch).await }).await {
                    Ok(result) => result,
                    Err(stopped) => Err(OTelSdkError::InternalFailure(format!(
                        "the export task stopped: {stopped}"
                    ))),
                },
                None => inner.export(batch).await,
            };
            watch.count(spans, &result, &endpoint);
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        // Called once, when the provider is built, before any export holds a reference.
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.set_resource(resource);
        }
    }
}
