//! The HTTP side shared by the real providers: the client, its time limits and headers, sending
//! one attempt, reading an API error, and how long to wait before retrying.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::ProviderError;
use agent_core::retry::{RetryPolicy, RetryableError};

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
    /// How transient failures are retried (jitter is added to the backoff; `retry-after` wins).
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

    /// Sends one attempt and returns the response if its status is a success.
    pub(crate) async fn attempt(
        &self,
        url: &str,
        body: Bytes,
    ) -> Result<reqwest::Response, ProviderError> {
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
        if response.status().is_success() {
            return Ok(response);
        }
        Err(self.api_error(response).await)
    }

    /// Sends with retries and returns the JSON of a successful answer.
    pub(crate) async fn send_json(
        &self,
        url: &str,
        body: Bytes,
    ) -> Result<serde_json::Value, ProviderError> {
        let mut attempt = 1;
        let response = loop {
            match self.attempt(url, body.clone()).await {
                Ok(response) => break response,
                Err(error) if self.may_retry(attempt, &error) => {
                    tokio::time::sleep(self.retry_delay(attempt, &error)).await;
                    attempt += 1;
                }
                Err(error) => return Err(error),
            }
        };
        // Read with the stream's limit on silence: a body that stalls is an error, not a hang.
        let mut response = response;
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
        serde_json::from_slice(&bytes).map_err(|e| ProviderError::Decode {
            provider: self.provider.into(),
            message: format!("the answer is not JSON: {e}"),
        })
    }

    /// How long to wait after failed attempt `attempt`: the server's `retry-after`, else the
    /// backoff with jitter (between half and all of it).
    pub(crate) fn retry_delay(&self, attempt: u32, error: &ProviderError) -> Duration {
        error.retry_after().unwrap_or_else(|| {
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
        let (error_type, message) = parse_error_body(&body);
        ProviderError::Api {
            provider: self.provider.into(),
            status,
            error_type,
            message,
            retry_after,
        }
    }
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

/// The error type and message of an error body in either provider's shape:
/// `{"type":"error","error":{"type":"overloaded_error","message":"..."}}` or
/// `{"error":{"message":"...","type":"...","code":"..."}}`; anything else is kept as text.
pub(crate) fn parse_error_body(body: &[u8]) -> (Option<String>, String) {
    let text = String::from_utf8_lossy(body);
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        let text = text.trim();
        return (
            None,
            if text.is_empty() {
                "no error message".to_owned()
            } else {
                text.chars().take(2000).collect()
            },
        );
    };
    let error = value.get("error").unwrap_or(&value);
    let message = match error.get("message").and_then(|m| m.as_str()) {
        Some(message) => message.to_owned(),
        None => error
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| text.chars().take(2000).collect()),
    };
    let code = error.get("code").and_then(|c| c.as_str());
    let kind = error.get("type").and_then(|t| t.as_str());
    // OpenAI puts the specific reason in `code` (`insufficient_quota`) and a broad one in `type`.
    let error_type = code.or(kind).map(str::to_owned);
    (error_type, message)
}

/// The error and its sources, joined: reqwest's own message alone is often just "error sending
/// request".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
