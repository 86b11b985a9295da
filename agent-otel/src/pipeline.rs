//! Setting export up: the OTLP exporter (HTTP or gRPC), the batch processor, the OpenTelemetry
//! `tracing` layer with the exporter's own crates filtered out, the W3C trace context hook, and
//! the guard that sends the last spans when it is dropped.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{Filtered, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

use crate::context::W3cTraceContext;
use crate::normalize::Normalized;
use crate::watch::{ExportStats, Watch, Watched};
use crate::{OtelError, Otlp, Protocol, Resolved};

/// The crates whose own spans and events never reach the OpenTelemetry layer: the exporter's
/// (exporting would trace itself), the HTTP stack's, and the model wire's (`agent_llm::wire`,
/// whose `-vv` events hold request bodies: content that is recorded only when turned on).
pub const UNTRACED_TARGETS: &[&str] = &[
    "agent_otel",
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry_otlp",
    "opentelemetry_http",
    "tracing_opentelemetry",
    "hyper",
    "hyper_util",
    "h2",
    "tonic",
    "tower",
    "reqwest",
    "rustls",
    "agent_llm::wire",
];

/// The `tracing` layer that turns spans into OpenTelemetry spans for the exporter: level `INFO`
/// and above (the GenAI spans are `INFO`), none from [`UNTRACED_TARGETS`].
pub type OtelLayer<S> = Filtered<
    tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>,
    Targets,
    S,
>;

/// Keeps the export running; dropping it sends the spans still queued, waiting at most the
/// [shutdown timeout](Otlp::shutdown_timeout) (5 s unless set): it never hangs on a collector
/// that is gone or does not answer. Hold it for as long as the program runs, and drop it before
/// `std::process::exit` (which runs no destructors). The drop blocks its thread for up to that
/// bound: in async code, drop it outside the runtime or in `spawn_blocking`.
#[must_use = "dropping the guard stops the export"]
pub struct OtlpGuard {
    provider: Option<SdkTracerProvider>,
    io: Option<IoThread>,
    watch: Arc<Watch>,
    resolved: Resolved,
}

impl std::fmt::Debug for OtlpGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpGuard")
            .field("endpoint", &self.resolved.endpoint)
            .field("protocol", &self.resolved.protocol)
            .field("stats", &self.watch.stats())
            .finish()
    }
}

impl OtlpGuard {
    /// Where spans go, how, and the bounds.
    pub fn settings(&self) -> &Resolved {
        &self.resolved
    }

    /// What was sent and what was not so far.
    pub fn stats(&self) -> ExportStats {
        self.watch.stats()
    }

    /// Sends the spans still queued and stops the export, waiting at most the shutdown timeout;
    /// what was sent and what was not, in all. Dropping the guard does the same.
    pub fn shutdown(mut self) -> ExportStats {
        self.stop();
        self.watch.stats()
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let bound = self.resolved.shutdown_timeout;
            if let Err(error) = provider.shutdown_with_timeout(bound) {
                self.watch.warn_once(&format!(
                    "the last spans were not all sent to {} within {bound:?} ({error}); they are \
                     dropped",
                    self.resolved.endpoint
                ));
            }
        }
        // After the provider: its last export may still use the gRPC channel's thread.
        self.io.take();
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Otlp {
    /// Sets export up and installs it: a global `tracing` subscriber with the OpenTelemetry
    /// layer (and a stderr layer for this crate's own warnings), the W3C trace context that
    /// carries paused runs across processes, OpenTelemetry's global tracer provider and
    /// propagator. Fails when the settings are bad (naming the one at fault), or when a global
    /// subscriber is already set ([`OtelError::AlreadyInstalled`]: use [`Otlp::layer`]). A
    /// collector that cannot be reached is no error: see the crate docs.
    pub fn install(self) -> Result<OtlpGuard, OtelError> {
        if tracing::dispatcher::has_been_set() {
            return Err(OtelError::AlreadyInstalled);
        }
        let (layer, guard) = self.layer()?;
        let warnings = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(Targets::new().with_target("agent_otel", LevelFilter::WARN));
        let subscriber = tracing_subscriber::registry().with(layer).with(warnings);
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|_| OtelError::AlreadyInstalled)?;
        Ok(guard)
    }

    /// Sets export up and returns its `tracing` layer, for a subscriber of your own (with a
    /// formatter, say); also installs the W3C trace context and OpenTelemetry's global tracer
    /// provider and propagator, as [`install`](Otlp::install) does. The crate's one warning (a
    /// collector that cannot be reached) is a `WARN` event of target `agent_otel`: your
    /// subscriber shows it if it shows that target.
    pub fn layer<S>(self) -> Result<(OtelLayer<S>, OtlpGuard), OtelError>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let resolved = self.resolve()?;
        let watch = Arc::new(Watch::default());
        let io = match resolved.protocol {
            Protocol::Grpc => Some(IoThread::start()?),
            Protocol::HttpProtobuf => None,
        };
        let exporter = exporter(&resolved, io.as_ref())?;
        let exporter = Watched::new(
            exporter,
            io.as_ref().map(|io| io.handle.clone()),
            watch.clone(),
            &resolved.endpoint,
        );
        let batches = BatchSpanProcessor::builder(exporter)
            .with_batch_config(BatchConfigBuilder::default().build())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(Normalized::new(batches, resolved.value_limit))
            .with_resource(self.resource())
            .build();
        let tracer = provider.tracer_with_scope(
            InstrumentationScope::builder("eugene")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        );
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(traced_targets());
        if let Some(on) = self.record_content {
            agent_runtime::trace::record_content(on);
        }
        // The first one stays: it is stateless, and reads whichever subscriber a span is in.
        agent_runtime::trace::set_trace_context(W3cTraceContext);
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        opentelemetry::global::set_tracer_provider(provider.clone());
        let guard = OtlpGuard {
            provider: Some(provider),
            io,
            watch,
            resolved,
        };
        Ok((layer, guard))
    }

    /// The spans' resource: the SDK's (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the SDK's
    /// own attributes), this builder's service name when the environment names none, and its
    /// attributes.
    fn resource(&self) -> Resource {
        let mut resource = Resource::builder();
        if let Some(name) = &self.service_name
            && !service_named_by_env()
        {
            resource = resource.with_service_name(name.clone());
        }
        resource
            .with_attributes(
                self.attributes
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .build()
    }
}

/// Whether `OTEL_SERVICE_NAME`, or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, names the service.
fn service_named_by_env() -> bool {
    let named = |v: &String| !v.trim().is_empty();
    std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| named(&v))
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| {
            v.split(',').any(|pair| {
                pair.split_once('=')
                    .is_some_and(|(key, value)| key.trim() == "service.name" && !value.is_empty())
            })
        })
}

fn traced_targets() -> Targets {
    UNTRACED_TARGETS.iter().fold(
        Targets::new().with_default(LevelFilter::INFO),
        |targets, target| targets.with_target(*target, LevelFilter::OFF),
    )
}

/// OpenTelemetry's OTLP span exporter for `resolved`; over gRPC made on `io`'s runtime, where its
/// channel lives.
fn exporter(
    resolved: &Resolved,
    io: Option<&IoThread>,
) -> Result<opentelemetry_otlp::SpanExporter, OtelError> {
    let built = match (resolved.protocol, io) {
        (Protocol::Grpc, Some(io)) => {
            let _runtime = io.handle.enter();
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(resolved.endpoint.clone())
                .with_timeout(resolved.timeout)
                .build()
        }
        _ => opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(http_client(resolved.timeout)?)
            .with_endpoint(resolved.endpoint.clone())
            .with_timeout(resolved.timeout)
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .build(),
    };
    built.map_err(|e| OtelError::Exporter(e.to_string()))
}

/// The HTTP exporter's client: reqwest's blocking one (the batch processor's thread waits on it;
/// it runs its own I/O thread), TLS with eugene's settings ([`agent_tls::tls_config`]), each
/// request bounded by `timeout` and its connection by the smaller of it and 5 s.
fn http_client(timeout: Duration) -> Result<reqwest::blocking::Client, OtelError> {
    let tls = agent_tls::tls_config().map_err(OtelError::Client)?;
    // Made on a thread of its own: reqwest's blocking client may not be made inside an async
    // runtime, and `install` may be called from one.
    std::thread::Builder::new()
        .name("agent-otel-client".into())
        .spawn(move || {
            reqwest::blocking::Client::builder()
                .use_preconfigured_tls(tls)
                .timeout(timeout)
                .connect_timeout(timeout.min(Duration::from_secs(5)))
                .build()
        })
        .map_err(|e| OtelError::Client(format!("cannot start a thread: {e}")))?
        .join()
        .map_err(|_| OtelError::Client("the thread making the HTTP client panicked".into()))?
        .map_err(|e| OtelError::Client(e.to_string()))
}

/// A thread running a single-threaded Tokio runtime for the gRPC channel's I/O, so export needs
/// no runtime of the application's (and works from a program without one). Stopped when dropped.
struct IoThread {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl IoThread {
    fn start() -> Result<IoThread, OtelError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| OtelError::Client(format!("cannot start the gRPC runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("agent-otel-grpc".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                // The runtime is dropped here, on its own thread, outside any async context.
            })
            .map_err(|e| OtelError::Client(format!("cannot start the gRPC thread: {e}")))?;
        Ok(IoThread {
            handle,
            stop: Some(stop),
        })
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn the_exporter_the_http_stack_and_the_wire_are_never_traced() {
        let targets = traced_targets();
        for target in [
            "agent_otel",
            "opentelemetry_sdk::trace",
            "opentelemetry_otlp",
            "hyper_util::client",
            "h2::codec",
            "tonic::transport",
            "tower::buffer",
            "reqwest::connect",
            "agent_llm::wire",
        ] {
            assert!(!targets.would_enable(target, &Level::ERROR), "{target}");
        }
        // The GenAI spans are: INFO and above, from the runtime, the registry and programs.
        for target in [
            "agent_runtime::runtime::spans",
            "agent_core::registry::execute",
            "agent_llm::llm",
            "my_app",
        ] {
            assert!(targets.would_enable(target, &Level::INFO), "{target}");
            assert!(!targets.would_enable(target, &Level::DEBUG), "{target}");
        }
    }
}
