//! What `eugene` shows of a run beyond its answer: `-v`'s wire events on stderr and `--otlp`'s
//! spans exported to an OpenTelemetry collector.

use crate::cli::{Args, Exit};

/// `-v`/`-vv`: the wire's `tracing` events (and every warning, retries among them) on stderr,
/// at `debug` or `trace`; `--otlp`: the run's spans exported to an OpenTelemetry collector, and
/// the exporter's one warning on stderr. Without either, no subscriber: nothing is formatted.
/// A bad `--otlp` setting is a usage error (exit status 2).
pub fn observe(args: &Args) -> Result<Option<agent_otel::OtlpGuard>, Exit> {
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    let shown = match args.verbose {
        0 if args.otlp.is_none() => return Ok(None),
        // The exporter's warning (a collector that cannot be reached), nothing else.
        0 => Targets::new().with_target("agent_otel", LevelFilter::WARN),
        verbose => Targets::new().with_default(LevelFilter::WARN).with_target(
            eugene::llm::WIRE,
            match verbose {
                1 => LevelFilter::DEBUG,
                _ => LevelFilter::TRACE,
            },
        ),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(shown);
    let (otel, guard) = match &args.otlp {
        None => (None, None),
        Some(endpoint) => {
            let mut otlp = agent_otel::Otlp::from_env().service_name("eugene");
            if !endpoint.is_empty() {
                otlp = otlp.endpoint(endpoint);
            }
            if args.otlp_content {
                otlp = otlp.record_content(true);
            }
            match otlp.layer() {
                Ok((layer, guard)) => (Some(layer), Some(guard)),
                Err(error) => {
                    eprintln!("eugene: --otlp: {error}");
                    return Err(Exit::Config);
                }
            }
        }
    };
    let _ = tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(otel).with(stderr),
    );
    Ok(guard)
}
