//! The [`Otlp`] builder and how its settings are resolved against the environment's standard
//! OpenTelemetry variables: explicit settings first, then the per-signal variable
//! (`OTEL_EXPORTER_OTLP_TRACES_*`), then the general one (`OTEL_EXPORTER_OTLP_*`), then the
//! specification's default.

use std::time::Duration;

use crate::OtelError;

/// How spans travel to the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP over HTTP, protobuf bodies (`http/protobuf`, port 4318, `POST /v1/traces`).
    HttpProtobuf,
    /// OTLP over gRPC (`grpc`, port 4317), plain text (`http://`) only.
    Grpc,
}

impl Protocol {
    /// The collector this protocol talks to when no endpoint is given.
    pub fn default_endpoint(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http://localhost:4318",
            Protocol::Grpc => "http://localhost:4317",
        }
    }

    /// The name the `OTEL_EXPORTER_OTLP_PROTOCOL` variable gives it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::Grpc => "grpc",
        }
    }
}

/// How long one export (one batch, its retries included) may take when neither
/// [`Otlp::timeout`] nor `OTEL_EXPORTER_OTLP_TIMEOUT` says: the specification's 10 s.
pub const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long dropping the [`OtlpGuard`](crate::OtlpGuard) waits for the last spans to be sent
/// when [`Otlp::shutdown_timeout`] does not say.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest string attribute value kept, in characters, unless [`Otlp::attribute_value_limit`]
/// or `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT` / `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` says
/// otherwise; longer ones are cut there. It bounds what recorded content (whole transcripts) costs
/// in the export queue and on the wire.
pub const DEFAULT_ATTRIBUTE_VALUE_LIMIT: usize = 32 * 1024;

/// OTLP export of a program's spans, set up in one call: [`Otlp::from_env`] then
/// [`install`](Otlp::install) (or [`layer`](Otlp::layer) to compose your own subscriber).
///
/// Every setting has an environment variable; an explicit setting here wins over it, except
/// [`service_name`](Otlp::service_name), which `OTEL_SERVICE_NAME` overrides.
///
/// ```no_run
/// # fn main() -> Result<(), agent_otel::OtelError> {
/// let _guard = agent_otel::Otlp::from_env()
///     .endpoint("http://127.0.0.1:4318")
///     .service_name("my-agent")
///     .install()?;
/// // ... run agents: their spans are exported in batches; dropping the guard sends the rest.
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Otlp {
    pub(crate) endpoint: Option<String>,
    pub(crate) protocol: Option<Protocol>,
    pub(crate) service_name: Option<String>,
    pub(crate) attributes: Vec<(String, String)>,
    pub(crate) record_content: Option<bool>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) value_limit: Option<usize>,
}

impl Default for Otlp {
    fn default() -> Self {
        Otlp::from_env()
    }
}

impl Otlp {
    /// Export configured by the environment: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_EXPORTER_OTLP_PROTOCOL`, `…_HEADERS`,
    /// `…_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`, and
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (see the crate docs for each). The
    /// variables are read when the export is set up, not here.
    pub fn from_env() -> Otlp {
        Otlp {
            endpoint: None,
            protocol: None,
            service_name: None,
            attributes: Vec::new(),
            record_content: None,
            timeout: None,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            value_limit: None,
        }
    }

    /// The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` would give it: over HTTP,
    /// spans go to its `/v1/traces` (added unless the path already ends so); over gRPC, to the
    /// URL as it is.
    pub fn endpoint(mut self, url: impl Into<String>) -> Otlp {
        self.endpoint = Some(url.into());
        self
    }

    /// The protocol, over `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/protobuf`).
    pub fn protocol(mut self, protocol: Protocol) -> Otlp {
        self.protocol = Some(protocol);
        self
    }

    /// The `service.name` of the spans, when neither `OTEL_SERVICE_NAME` nor `service.name` in
    /// `OTEL_RESOURCE_ATTRIBUTES` gives one (a deployment renames a program without rebuilding
    /// it).
    pub fn service_name(mut self, name: impl Into<String>) -> Otlp {
        self.service_name = Some(name.into());
        self
    }

    /// One more resource attribute on every span (for example Phoenix's
    /// `openinference.project.name`), over the same key in `OTEL_RESOURCE_ATTRIBUTES`.
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Otlp {
        self.attributes.push((key.into(), value.into()));
        self
    }

    /// Records prompts, answers and tool calls on the spans (sensitive; off by default), over
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`. Applied process-wide
    /// ([`agent_runtime::trace::record_content`]) when the export is set up.
    pub fn record_content(mut self, on: bool) -> Otlp {
        self.record_content = Some(on);
        self
    }

    /// How long one export (one batch, retries included) may take, over
    /// `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `OTEL_EXPORTER_OTLP_TIMEOUT` (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Otlp {
        self.timeout = Some(timeout);
        self
    }

    /// How long dropping the [`OtlpGuard`](crate::OtlpGuard) waits for the spans still queued to
    /// be sent before it gives them up (default 5 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Otlp {
        self.shutdown_timeout = timeout;
        self
    }

    /// The longest string attribute value kept, in characters (default 32 768); longer ones are
    /// cut at that length. Over `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT` and
    /// `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`.
    pub fn attribute_value_limit(mut self, chars: usize) -> Otlp {
        self.value_limit = Some(chars);
        self
    }

    /// The settings this builder comes to in the process's environment: where spans go, how,
    /// and the bounds. What [`install`](Otlp::install) checks first.
    pub fn resolve(&self) -> Result<Resolved, OtelError> {
        self.resolve_with(&|name| std::env::var(name).ok())
    }

    /// [`resolve`](Otlp::resolve) against `env` (a variable's value by name; an empty value
    /// counts as unset).
    pub(crate) fn resolve_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Resolved, OtelError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let protocol = match self.protocol {
            Some(protocol) => protocol,
            None => protocol_from_env(&env)?,
        };
        let (raw, from, base) = if let Some(url) = &self.endpoint {
            (url.clone(), "Otlp::endpoint".to_owned(), true)
        } else if let Some(url) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            (url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".to_owned(), false)
        } else if let Some(url) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
            (url, "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), true)
        } else {
            let url = protocol.default_endpoint().to_owned();
            (url, format!("the {} default", protocol.name()), true)
        };
        let endpoint = endpoint_url(&raw, &from, protocol, base)?;
        let timeout = match self.timeout {
            Some(timeout) => timeout,
            None => duration_from_env(
                &env,
                &[
                    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                    "OTEL_EXPORTER_OTLP_TIMEOUT",
                ],
            )?
            .unwrap_or(DEFAULT_EXPORT_TIMEOUT),
        };
        let value_limit = match self.value_limit {
            Some(limit) => limit,
            None => count_from_env(
                &env,
                &[
                    "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
                    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
                ],
            )?
            .unwrap_or(DEFAULT_ATTRIBUTE_VALUE_LIMIT),
        };
        Ok(Resolved {
            protocol,
            endpoint,
            from,
            timeout,
            shutdown_timeout: self.shutdown_timeout,
            value_limit,
        })
    }
}

/// What an [`Otlp`] comes to in an environment ([`Otlp::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// How spans travel.
    pub protocol: Protocol,
    /// The URL they are sent to (over HTTP, the full `…/v1/traces`).
    pub endpoint: String,
    /// Where that URL came from: `Otlp::endpoint`, an environment variable, or the default.
    pub from: String,
    /// How long one export may take.
    pub timeout: Duration,
    /// How long the guard's drop waits for the last spans.
    pub shutdown_timeout: Duration,
    /// The longest string attribute value kept, in characters.
    pub value_limit: usize,
}

fn protocol_from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Protocol, OtelError> {
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(value) = env(name) {
            return match value.trim() {
                "http/protobuf" => Ok(Protocol::HttpProtobuf),
                "grpc" => Ok(Protocol::Grpc),
                _ => Err(OtelError::Protocol {
                    from: name.to_owned(),
                    value,
                }),
            };
        }
    }
    Ok(Protocol::HttpProtobuf)
}

/// The URL spans go to: `raw` checked (http or https, a host, no user or fragment), and over HTTP
/// a `base` URL's `/v1/traces` added.
fn endpoint_url(
    raw: &str,
    from: &str,
    protocol: Protocol,
    base: bool,
) -> Result<String, OtelError> {
    let bad = |reason: String| OtelError::Endpoint {
        from: from.to_owned(),
        value: raw.to_owned(),
        reason,
    };
    let url = reqwest::Url::parse(raw.trim()).map_err(|e| {
        bad(format!(
            "{e} (give a URL with its scheme, like {})",
            protocol.default_endpoint()
        ))
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(bad(format!(
                "the scheme is `{other}`, not http or https (give one, like {})",
                protocol.default_endpoint()
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host".to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "it holds a user name or password: give credentials in OTEL_EXPORTER_OTLP_HEADERS"
                .to_owned(),
        ));
    }
    if url.fragment().is_some() {
        return Err(bad("it has a #fragment".to_owned()));
    }
    if protocol == Protocol::Grpc {
        if url.scheme() == "https" {
            return Err(OtelError::GrpcTls(raw.to_owned()));
        }
        return Ok(url.to_string());
    }
    if !base || url.path().ends_with("/v1/traces") {
        return Ok(url.to_string());
    }
    let mut url = url;
    let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url.to_string())
}

fn duration_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    names: &[&str],
) -> Result<Option<Duration>, OtelError> {
    for name in names {
        if let Some(value) = env(name) {
            return value
                .trim()
                .parse::<u64>()
                .map(|ms| Some(Duration::from_millis(ms)))
                .map_err(|_| OtelError::Timeout {
                    from: (*name).to_owned(),
                    value,
                });
        }
    }
    Ok(None)
}

fn count_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    names: &[&str],
) -> Result<Option<usize>, OtelError> {
    for name in names {
        if let Some(value) = env(name) {
            return value
                .trim()
                .parse::<usize>()
                .map(Some)
                .map_err(|_| OtelError::Limit {
                    from: (*name).to_owned(),
                    value,
                });
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(otlp: Otlp, vars: &[(&str, &str)]) -> Result<Resolved, OtelError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        otlp.resolve_with(&move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_follow_the_specification() {
        let http = resolve(Otlp::from_env(), &[]).unwrap();
        assert_eq!(http.protocol, Protocol::HttpProtobuf);
        assert_eq!(http.endpoint, "http://localhost:4318/v1/traces");
        assert_eq!(http.timeout, DEFAULT_EXPORT_TIMEOUT);
        assert_eq!(http.value_limit, DEFAULT_ATTRIBUTE_VALUE_LIMIT);
        let grpc = resolve(Otlp::from_env(), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap();
        assert_eq!(grpc.protocol, Protocol::Grpc);
        assert_eq!(grpc.endpoint, "http://localhost:4317/");
    }

    #[test]
    fn a_base_endpoint_gets_the_traces_path_and_a_signal_endpoint_is_kept() {
        let base = resolve(
            Otlp::from_env(),
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/otel/")],
        )
        .unwrap();
        assert_eq!(base.endpoint, "http://collector:4318/otel/v1/traces");
        assert_eq!(base.from, "OTEL_EXPORTER_OTLP_ENDPOINT");
        let signal = resolve(
            Otlp::from_env(),
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:1"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "https://c.example/ingest",
                ),
            ],
        )
        .unwrap();
        assert_eq!(signal.endpoint, "https://c.example/ingest");
        let explicit = resolve(
            Otlp::from_env().endpoint("http://127.0.0.1:6006/v1/traces"),
            &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://ignored:1")],
        )
        .unwrap();
        assert_eq!(explicit.endpoint, "http://127.0.0.1:6006/v1/traces");
        assert_eq!(explicit.from, "Otlp::endpoint");
    }

    #[test]
    fn explicit_settings_win_over_the_environment() {
        let resolved = resolve(
            Otlp::from_env()
                .protocol(Protocol::Grpc)
                .timeout(Duration::from_millis(1500))
                .attribute_value_limit(10),
            &[
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "99"),
                ("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "99"),
            ],
        )
        .unwrap();
        assert_eq!(resolved.protocol, Protocol::Grpc);
        assert_eq!(resolved.timeout, Duration::from_millis(1500));
        assert_eq!(resolved.value_limit, 10);
        let from_env = resolve(
            Otlp::from_env(),
            &[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700"),
                ("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "64"),
            ],
        )
        .unwrap();
        assert_eq!(from_env.timeout, Duration::from_millis(700));
        assert_eq!(from_env.value_limit, 64);
    }

    #[test]
    fn bad_settings_name_where_they_came_from() {
        type Case = (Otlp, &'static [(&'static str, &'static str)], &'static str);
        let cases: &[Case] = &[
            (
                Otlp::from_env(),
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ),
            (
                Otlp::from_env().endpoint("ftp://collector"),
                &[],
                "Otlp::endpoint",
            ),
            (
                Otlp::from_env().endpoint("not a url"),
                &[],
                "Otlp::endpoint",
            ),
            (
                Otlp::from_env(),
                &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://u:p@host:1")],
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            ),
            (
                Otlp::from_env(),
                &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ),
            (
                Otlp::from_env(),
                &[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "carrier-pigeon")],
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            ),
            (
                Otlp::from_env(),
                &[("OTEL_EXPORTER_OTLP_TIMEOUT", "10s")],
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ),
            (
                Otlp::from_env(),
                &[("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "-1")],
                "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
            ),
        ];
        for (otlp, vars, named) in cases {
            let error = resolve(otlp.clone(), vars).expect_err(named);
            assert!(
                error.to_string().contains(named),
                "{error} should name {named}"
            );
        }
        let tls = resolve(
            Otlp::from_env()
                .protocol(Protocol::Grpc)
                .endpoint("https://collector:4317"),
            &[],
        )
        .unwrap_err();
        assert!(matches!(tls, OtelError::GrpcTls(_)), "{tls}");
    }

    #[test]
    fn empty_variables_count_as_unset() {
        let resolved = resolve(
            Otlp::from_env(),
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", ""),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", " "),
            ],
        )
        .unwrap();
        assert_eq!(resolved.endpoint, "http://localhost:4318/v1/traces");
    }
}
