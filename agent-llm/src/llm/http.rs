//! The HTTP side shared by the real providers: the client, its time limits and headers, sending
//! one attempt, reading an API error, and how long to wait before retrying.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{ProviderError, StreamEvent};
use agent_core::retry::{RetryPolicy, RetryableError};

/// How many characters of a body a `tracing` event of the wire shows.
const WIRE_BODY_CHARS: usize = 4000;

/// One step of [`Http::send`].
// A few steps per request, each moved once: boxing the event would cost more than it saves.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Sent {
    /// An attempt failed and another follows: the [`StreamEvent::Retry`] that says so.
    Retry(StreamEvent),
    /// The answer began with a success status.
    Answer(reqwest::Response),
}

/// Time limits, extra headers and retries of a provider's HTTP client.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long to wait for the answer to begin (its status and headers).
    pub timeout: Duration,
    /// How long an answer that began (streamed or whole) may stay silent before it is abandoned
    /// with an error.
    pub idle_timeout: Duration,
    /// Headers sent with every request, after the provider's own.
    pub headers: Vec<(String, String)>,
    /// How transient failures are retried (jitter is added to the backoff; `retry-after` wins,
    /// up to the policy's `max_delay`).
    pub retry: RetryPolicy,
}

impl Default for HttpOptions {
    /// Connect within 10 s, answer within 120 s, at most 120 s of silence in a stream; four
    /// attempts waiting about 1 s, 2 s, 4 s (never more than 30 s).
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(120),
            headers: Vec::new(),
            retry: RetryPolicy {
                max_attempts: 4,
                initial_delay: Duration::from_secs(1),
                backoff: 2.0,
                max_delay: Duration::from_secs(30),
            },
        }
    }
}

/// A client for one provider.
pub(crate) struct Http {
    pub(crate) provider: &'static str,
    client: reqwest::Client,
    pub(crate) options: HttpOptions,
    headers: HeaderMap,
}

impl Http {
    pub(crate) fn new(
        provider: &'static str,
        own_headers: Vec<(&'static str, String)>,
        options: HttpOptions,
    ) -> Result<Http, ProviderError> {
        let tls = agent_tls::tls_config().map_err(ProviderError::Config)?;
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))?;
        let mut headers = HeaderMap::new();
        let own = own_headers.into_iter().map(|(k, v)| (k.to_owned(), v));
        for (name, value) in own.chain(options.headers.iter().cloned()) {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ProviderError::Config(format!("`{name}` is not a valid header name"))
            })?;
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                ProviderError::Config(format!("the value of header `{name}` is not valid"))
            })?;
            if name.as_str().contains("key") || name == reqwest::header::AUTHORIZATION {
                value.set_sensitive(true);
            }
            headers.insert(name, value);
        }
        Ok(Http {
            provider,
            client,
            options,
            headers,
        })
    }

    /// Sends one attempt and returns the response if its status is a success. The request and
    /// what came back are `tracing` events of target [`WIRE`](super::WIRE): at `debug`, the URL
    /// (keys in its query redacted), sizes, status and time; at `trace`, the headers (secrets
    /// redacted) and the bodies, clipped.
    pub(crate) async fn attempt(
        &self,
        url: &str,
        body: Bytes,
    ) -> Result<reqwest::Response, ProviderError> {
        let provider = self.provider;
        tracing::debug!(target: super::WIRE, provider, url = %redact_url(url), bytes = body.len(), "request");
        if tracing::enabled!(target: super::WIRE, tracing::Level::TRACE) {
            tracing::trace!(
                target: super::WIRE,
                provider,
                headers = %shown_headers(&self.headers),
                body = %clip(&String::from_utf8_lossy(&body), WIRE_BODY_CHARS),
                "request body"
            );
        }
        let started = std::time::Instant::now();
        let request = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let response = match tokio::time::timeout(self.options.timeout, request.send()).await {
            Err(_) => {
                return Err(ProviderError::Timeout {
                    provider: self.provider.into(),
                    after: self.options.timeout,
                });
            }
            Ok(Err(error)) => return Err(self.transport_error(&error)),
            Ok(Ok(response)) => response,
        };
        tracing::debug!(
            target: super::WIRE,
            provider,
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "response"
        );
        if response.status().is_success() {
            return Ok(response);
        }
        Err(self.api_error(response).await)
    }

    /// Sends `body` to `url`, retrying transient failures: a stream of one [`Sent::Retry`] per
    /// failed attempt that another follows (each also a `tracing` warning), then the
    /// [`Sent::Answer`], or the error that ended it. `final_error` names failures that must not
    /// be retried although they look transient.
    pub(crate) fn send(
        self: std::sync::Arc<Self>,
        url: String,
        body: Bytes,
        final_error: impl Fn(&ProviderError) -> bool + Send + 'static,
    ) -> impl futures::Stream<Item = Result<Sent, ProviderError>> + Send + 'static {
        async_stream::try_stream! {
            let mut attempt = 1;
            loop {
                match self.attempt(&url, body.clone()).await {
                    Ok(response) => {
                        yield Sent::Answer(response);
                        break;
                    }
                    Err(error) if self.may_retry(attempt, &error) && !final_error(&error) => {
                        let delay = self.retry_delay(attempt, &error);
                        tracing::warn!(
                            provider = self.provider,
                            attempt,
                            delay_ms = delay.as_millis() as u64,
                            %error,
                            "model request failed; retrying"
                        );
                        yield Sent::Retry(StreamEvent::Retry { attempt, delay, error: error.to_string() });
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                    }
                    Err(error) => Err(error)?,
                }
            }
        }
    }

    /// Reads a whole answer's JSON, with the stream's limit on silence: a body that stalls is an
    /// error, not a hang.
    pub(crate) async fn read_json(
        &self,
        mut response: reqwest::Response,
    ) -> Result<serde_json::Value, ProviderError> {
        let mut bytes = Vec::new();
        loop {
            match tokio::time::timeout(self.options.idle_timeout, response.chunk()).await {
                Err(_) => {
                    return Err(ProviderError::Stream {
                        provider: self.provider.into(),
                        error_type: None,
                        message: format!(
                            "no data for {:?}; the connection stalled",
                            self.options.idle_timeout
                        ),
                    });
                }
                Ok(Err(error)) => return Err(self.transport_error(&error)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => bytes.extend_from_slice(&chunk),
            }
        }
        tracing::trace!(
            target: super::WIRE,
            provider = self.provider,
            body = %clip(&String::from_utf8_lossy(&bytes), WIRE_BODY_CHARS),
            "response body"
        );
        serde_json::from_slice(&bytes).map_err(|e| ProviderError::Decode {
            provider: self.provider.into(),
            message: format!("the answer is not JSON: {e}"),
        })
    }

    /// How long to wait after failed attempt `attempt`: the server's `retry-after` (at most the
    /// policy's `max_delay`), else the backoff with jitter (between half and all of it).
    pub(crate) fn retry_delay(&self, attempt: u32, error: &ProviderError) -> Duration {
        let max_delay = self.options.retry.max_delay;
        error
            .retry_after()
            .map(|d| d.min(max_delay))
            .unwrap_or_else(|| {
                self.options
                    .retry
                    .delay_after(attempt)
                    .mul_f64(0.5 + fastrand::f64() / 2.0)
            })
    }

    /// Whether another attempt may follow failed attempt `attempt`.
    pub(crate) fn may_retry(&self, attempt: u32, error: &ProviderError) -> bool {
        attempt < self.options.retry.max_attempts.max(1) && error.is_transient()
    }

    pub(crate) fn transport_error(&self, error: &reqwest::Error) -> ProviderError {
        if error.is_timeout() {
            return ProviderError::Timeout {
                provider: self.provider.into(),
                after: self.options.timeout,
            };
        }
        ProviderError::Connect {
            provider: self.provider.into(),
            message: error_chain(error),
        }
    }

    async fn api_error(&self, response: reqwest::Response) -> ProviderError {
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = match tokio::time::timeout(self.options.timeout, response.bytes()).await {
            Ok(Ok(bytes)) => bytes,
            _ => Bytes::new(),
        };
        tracing::debug!(
            target: super::WIRE,
            provider = self.provider,
            status,
            body = %clip(&String::from_utf8_lossy(&body), WIRE_BODY_CHARS),
            "error body"
        );
        let (error_type, message) = parse_error_body(&body);
        let retry_after = retry_after.or_else(|| retry_info(&body));
        ProviderError::Api {
            provider: self.provider.into(),
            status,
            error_type,
            message,
            retry_after,
        }
    }
}

/// The headers as `name: value` lines for the wire's `trace` events, with the values the client
/// marks sensitive (API keys, `authorization`) shown as `[redacted]`.
fn shown_headers(headers: &HeaderMap) -> String {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if value.is_sensitive() {
                "[redacted]"
            } else {
                value.to_str().unwrap_or("[not text]")
            };
            format!("{name}: {value}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `url` with the value of every query parameter whose name holds `key`, `token` or `secret`
/// replaced by `[redacted]` (some APIs take the key in the query).
pub(crate) fn redact_url(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _))
                if ["key", "token", "secret"]
                    .iter()
                    .any(|word| name.to_ascii_lowercase().contains(word)) =>
            {
                format!("{name}=[redacted]")
            }
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

/// `retry-after` in seconds, or OpenAI's `retry-after-ms`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 3600.0)))
}

/// The error type and message of an error body in any of the providers' shapes:
/// `{"type":"error","error":{"type":"overloaded_error","message":"..."}}`,
/// `{"error":{"message":"...","type":"...","code":"..."}}` or Google's
/// `{"error":{"code":429,"message":"...","status":"RESOURCE_EXHAUSTED"}}` (the `status` is the
/// type); anything else is kept as text. A
/// message that is missing or empty says what the body was instead, so an error never ends in a
/// bare colon.
pub(crate) fn parse_error_body(body: &[u8]) -> (Option<String>, String) {
    let text = String::from_utf8_lossy(body);
    let shown = || -> String {
        let text = text.trim();
        if text.is_empty() {
            "the server sent an empty body".to_owned()
        } else {
            format!(
                "the server sent no message; its body was: {}",
                clip(text, 2000)
            )
        }
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        let trimmed = text.trim();
        return (
            None,
            if trimmed.is_empty() {
                shown()
            } else {
                clip(trimmed, 2000)
            },
        );
    };
    let error = value.get("error").unwrap_or(&value);
    let message = error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map_or_else(shown, str::to_owned);
    let code = error.get("code").and_then(|c| c.as_str());
    let kind = error.get("type").and_then(|t| t.as_str());
    // Google's `code` is the HTTP status again, a number; its `status` names the error.
    let google_status = error.get("status").and_then(|s| s.as_str());
    // OpenAI puts the specific reason in `code` (`insufficient_quota`) and a broad one in `type`.
    let error_type = code.or(kind).or(google_status).map(str::to_owned);
    (error_type, message)
}

/// The wait a Google API error body asks for, where no `retry-after` header does: the
/// `retryDelay` (`"7s"`, `"0.5s"`) of its `google.rpc.RetryInfo` detail, at most an hour.
fn retry_info(body: &[u8]) -> Option<Duration> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let details = value.get("error")?.get("details")?.as_array()?;
    details
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            d.get("retryDelay")?
                .as_str()?
                .strip_suffix('s')?
                .parse::<f64>()
                .ok()
        })
        .filter(|s| s.is_finite())
        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 3600.0)))
}

/// At most `max` characters of `text`, saying how many more there were.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}… ({rest} more characters)", &text[..cut])
        }
    }
}

/// The error and its sources, joined: reqwest's own message alone is often just "error sending
/// request".
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
