//! OpenTelemetry export of eugene's spans: one call sends every run's `invoke_agent`, `chat` and
//! `execute_tool` spans (named and filled in after the OpenTelemetry GenAI semantic conventions
//! by `agent-runtime` and `agent-core`) to an OTLP collector, over HTTP or gRPC. Any collector
//! works: the OpenTelemetry Collector, Jaeger, Grafana Tempo, Langfuse, Arize Phoenix (the one
//! this crate's tests run against).
//!
//! ```no_run
//! # fn main() -> Result<(), agent_otel::OtelError> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 and friends, or explicit settings:
//! let guard = agent_otel::Otlp::from_env().service_name("my-agent").install()?;
//! // ... run agents ...
//! drop(guard); // the last spans go out, waiting at most 5 s
//! # Ok(())
//! # }
//! ```
//!
//! From the facade: cargo feature `otel`, then `eugene::otel::Otlp`. On the command line:
//! `eugene --otlp` (or `--otlp=http://collector:4318`, and `--otlp-content`).
//!
//! # What is exported
//!
//! - `invoke_agent [name]` (kind internal), one per drive of a run: `gen_ai.operation.name`,
//!   `gen_ai.provider.name`, `gen_ai.agent.name` (a sub-agent's skill name), `gen_ai.request.model`,
//!   `gen_ai.conversation.id` (the session), the run's `gen_ai.usage.input_tokens` /
//!   `output_tokens` and `gen_ai.usage.cost` (US dollars, when every call was priced),
//!   `error.type`.
//! - `turn`, one per step of the loop, between an `invoke_agent` and its calls.
//! - `chat <model>` (kind client), one per model call: the provider, the requested and answering
//!   models, `gen_ai.response.id`, `gen_ai.response.finish_reasons` (a string array), the token
//!   counts (cache reads and writes apart), `gen_ai.usage.cost`, `error.type`.
//! - `execute_tool <tool>`, one per skill call: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   `gen_ai.tool.type`, `error.type`. A sub-agent's `invoke_agent` is inside its
//!   `execute_tool`, in the same trace.
//!
//! `tracing` hands a `u64` field to the OpenTelemetry layer as text; this crate gives the
//! `gen_ai.*_tokens` counts their integer type back, and turns the finish reasons (recorded as a
//! JSON array) into the string array the conventions define, before the span is queued.
//!
//! Only spans at `INFO` and above are exported (the GenAI spans are `INFO`), and none of the
//! crates in [`UNTRACED_TARGETS`]: the exporter's own and the HTTP stack's (export does not trace
//! itself), and `agent_llm::wire` (its `-vv` events hold request bodies).
//!
//! # Content
//!
//! Prompts, answers and tool calls (`gen_ai.system_instructions`, `gen_ai.input.messages`,
//! `gen_ai.output.messages`, JSON in the conventions' message form) are sensitive and **off by
//! default**. [`Otlp::record_content`] turns them on, and so does
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. Every string value is cut at
//! [`DEFAULT_ATTRIBUTE_VALUE_LIMIT`] characters (32 768) unless [`Otlp::attribute_value_limit`],
//! `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT` or `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` says
//! otherwise, before it joins the export queue: a long transcript costs at most that.
//!
//! # One trace across processes: a propagated context, not a link
//!
//! A run that pauses (a call waiting for approval) keeps the W3C `traceparent` of its first
//! `invoke_agent` span in its `RunState`. Whichever process continues it, after the state went
//! through a file, a database or a session store, makes its own `invoke_agent` a **child** of
//! that span, so the backend shows one trace with one root, the second drive under the first.
//! Durable runs (`agent-restate`) journal the same `traceparent`, so an invocation replayed on
//! another instance is one trace too. Sub-agents need nothing carried: their spans are inside
//! their parent's `execute_tool`. A parent rather than a span link, because a resumed run is the
//! same operation going on, not a new one that was caused by the old; backends draw a parent in
//! the tree, while links are shown apart, if at all. The context is read and written by
//! OpenTelemetry's [`TraceContextPropagator`](opentelemetry_sdk::propagation::TraceContextPropagator)
//! ([`W3cTraceContext`]), installed by [`Otlp::install`] and [`Otlp::layer`] as
//! `agent_runtime::trace`'s hook; they also make it OpenTelemetry's global propagator, for
//! headers of your own.
//!
//! # The environment
//!
//! An explicit setting wins over its variable, except the service name (`OTEL_SERVICE_NAME`
//! wins over [`Otlp::service_name`], so a deployment renames a program without rebuilding it).
//!
//! | variable | what it does | read by |
//! | --- | --- | --- |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; over HTTP spans go to its `/v1/traces` (default `http://localhost:4318`, gRPC `http://localhost:4317`) | this crate |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | the full URL for spans, used as it is; wins over the one above | this crate |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL`, `…_TRACES_PROTOCOL` | `http/protobuf` (default) or `grpc` | this crate |
//! | `OTEL_EXPORTER_OTLP_TIMEOUT`, `…_TRACES_TIMEOUT` | milliseconds one export may take, its retries included (default 10 000) | this crate |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `…_TRACES_HEADERS` | `key=value,…` sent with every export (an API key) | the SDK |
//! | `OTEL_EXPORTER_OTLP_COMPRESSION` | `gzip` and `zstd` are not built in: asking for one is an error at install | the SDK |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource: `service.name` and other attributes (Phoenix files spans under `openinference.project.name`) | the SDK |
//! | `OTEL_BSP_MAX_QUEUE_SIZE`, `…_SCHEDULE_DELAY`, `…_MAX_EXPORT_BATCH_SIZE` | the batch processor (defaults 2048 spans, 5000 ms, 512 spans) | the SDK |
//! | `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` | the longest string value, in characters (default 32 768) | this crate |
//! | `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` | `true`: content on the spans | `agent-runtime` |
//!
//! An endpoint must be an `http://` or `https://` URL with a host and without a user name or
//! password (give credentials in the headers); gRPC is plain text only (`http://`): for a TLS
//! collector, use `http/protobuf` over `https://`, which checks the certificate against the
//! system's roots with eugene's TLS settings (`agent-tls`).
//!
//! # A collector that is slow or gone
//!
//! Export never slows or fails a run. Ended spans go into a queue of 2048 (more are dropped,
//! counted by the SDK); a thread of the SDK sends them in batches of up to 512, every 5 s and
//! when a batch is full; each export gives up after the timeout (10 s), with up to 3 retries
//! inside that time for errors worth retrying. A batch that cannot be sent is dropped, not kept.
//! The first failure writes **one** warning (a `WARN` event of target `agent_otel`; `install`
//! shows it on stderr), never one per batch; [`OtlpGuard::stats`] counts what was sent and what
//! was not. Dropping the [`OtlpGuard`] sends what is queued and waits at most
//! [`DEFAULT_SHUTDOWN_TIMEOUT`] (5 s, [`Otlp::shutdown_timeout`]) for it: a collector that
//! accepts connections and never answers costs the program that long at exit, no more. Bad
//! settings are errors at install ([`OtelError`], naming the variable or method at fault), and
//! install then sets nothing up.
//!
//! # Dependencies
//!
//! - `opentelemetry`, `opentelemetry_sdk`: the OpenTelemetry API and SDK (spans, the batch
//!   processor, resources, the W3C propagator), without their default metrics and logs and
//!   without their internal logs (so nothing of theirs floods a program's output).
//! - `opentelemetry-otlp`: the OTLP exporter, with `http-proto` over reqwest's blocking client and
//!   `grpc-tonic`; `tracing-opentelemetry`: the `tracing` layer that turns the runtime's spans
//!   into OpenTelemetry spans (it reads `otel.name`, `otel.kind`, `otel.status_code`).
//! - `reqwest` (the workspace's 0.13, with `blocking`): the HTTP exporter's client, the one HTTP
//!   stack the providers use (no second hyper or TLS stack); `agent-tls`: its TLS settings.
//! - `tokio`: the single-threaded runtime on this crate's own thread that the gRPC channel needs,
//!   so export needs no runtime of the application's.
//! - `tracing`, `tracing-subscriber`: the subscriber [`Otlp::install`] sets (registry, per-layer
//!   target filters, the stderr formatter for the one warning); `thiserror`: [`OtelError`];
//!   `serde_json`: reading the finish reasons' JSON array; `agent-runtime`: the trace context
//!   hook and the content switch.

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
