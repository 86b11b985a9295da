//! What can go wrong while setting export up. Nothing goes wrong *after* it is set up: a collector
//! that cannot be reached costs one warning, never an error in a run.

/// Why [`Otlp::install`](crate::Otlp::install) or [`Otlp::layer`](crate::Otlp::layer) set
/// nothing up. Each names the setting at fault: the environment variable, or the builder method.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The collector's address is not an `http://` or `https://` URL with a host.
    #[error("the OTLP endpoint `{value}` (from {from}) is not usable: {reason}")]
    Endpoint {
        /// Where the address came from: an environment variable or `Otlp::endpoint`.
        from: String,
        /// The address as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The protocol is not one of `http/protobuf` and `grpc`.
    #[error(
        "the OTLP protocol `{value}` (from {from}) is not supported: use `http/protobuf` or `grpc`"
    )]
    Protocol {
        /// The environment variable it came from.
        from: String,
        /// The value as given.
        value: String,
    },
    /// A timeout is not a whole number of milliseconds.
    #[error("the OTLP timeout `{value}` (from {from}) is not a whole number of milliseconds")]
    Timeout {
        /// The environment variable it came from.
        from: String,
        /// The value as given.
        value: String,
    },
    /// A limit is not a whole number.
    #[error("`{value}` (from {from}) is not a whole number")]
    Limit {
        /// The environment variable it came from.
        from: String,
        /// The value as given.
        value: String,
    },
    /// gRPC over TLS is not built in.
    #[error(
        "the OTLP endpoint `{0}` is https with the grpc protocol, which agent-otel does not build \
         in: use http/protobuf for a TLS collector (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)"
    )]
    GrpcTls(String),
    /// The HTTP client (its TLS settings) or the gRPC channel's thread could not be made.
    #[error("cannot set up the OTLP client: {0}")]
    Client(String),
    /// The OpenTelemetry exporter refused its settings (for example a compression it was not
    /// built with, from `OTEL_EXPORTER_OTLP_COMPRESSION`).
    #[error("the OTLP exporter refused its settings: {0}")]
    Exporter(String),
    /// [`Otlp::install`](crate::Otlp::install) found a global `tracing` subscriber already set:
    /// compose [`Otlp::layer`](crate::Otlp::layer) into that one instead.
    #[error(
        "a global tracing subscriber is already set: add agent_otel's layer (Otlp::layer) to it \
         instead of calling Otlp::install"
    )]
    AlreadyInstalled,
}
