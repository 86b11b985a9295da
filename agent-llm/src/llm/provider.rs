//! [`HttpProvider`]: one HTTP provider for every wire format. It owns what the formats share —
//! the model, the base URL, the key, time limits and retries, the fallback to whole answers — and
//! asks a [`WireCodec`] for what differs: where requests go, their headers and bodies, and how
//! answers are decoded. [`AnthropicProvider`](super::AnthropicProvider) and
//! [`OpenAiProvider`](super::OpenAiProvider) are this type with their codecs; a third wire format
//! is one new codec and nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

use super::http::{Http, HttpOptions, Sent};
use super::stream::{SseDecoder, sse_stream};
use super::{ErrorClass, EventStream, LlmProvider, ProviderError, StreamEvent};
use crate::message::{ChatRequest, ChatResponse};
use agent_core::retry::RetryPolicy;

use super::media::{self, MediaRules};

/// What differs between wire formats: where a request goes, its headers and body, and how the
/// answer is read, whole or streamed. Implemented by [`AnthropicWire`](super::AnthropicWire) and
/// [`OpenAiWire`](super::OpenAiWire); the codec value carries the format's own settings.
pub trait WireCodec: Clone + Send + Sync + 'static {
    /// The provider's name in errors, logs and spans (`anthropic`, `openai`).
    const NAME: &'static str;
    /// Where requests go when no base URL is given.
    const DEFAULT_BASE_URL: &'static str;
    /// The decoder of one streamed answer.
    type Decoder: SseDecoder + Default;

    /// The URL answers from `model` are asked for at, streamed or not, under `base_url` (which
    /// has no trailing `/`). Formats that name the model in the body, and stream at the same URL,
    /// ignore the last two.
    fn endpoint(&self, base_url: &str, model: &str, stream: bool) -> String;

    /// The headers that carry the key (and the API version), before the user's own.
    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)>;

    /// The JSON body for `request`, streamed or not.
    fn encode(&self, model: &str, request: &ChatRequest<'_>, stream: bool) -> Value;

    /// A whole answer.
    fn decode(&self, body: &Value) -> Result<ChatResponse, ProviderError>;

    /// Whether a streaming request with (or without) tools may be asked again for the whole
    /// answer when the server cannot stream it: only then is the whole request's body prepared
    /// beside the streamed one. Default: never.
    fn may_fall_back_to_whole(&self, has_tools: bool) -> bool {
        let _ = has_tools;
        false
    }

    /// Whether `error`, on a streaming request, means the server cannot stream this request (so
    /// the whole answer is asked for instead, from then on). Asked only where
    /// [`WireCodec::may_fall_back_to_whole`] said yes. Default: never.
    fn streaming_unsupported(&self, error: &ProviderError, has_tools: bool) -> bool {
        let _ = (error, has_tools);
        false
    }

    /// What media this format takes ([`MediaRules`]); every request is checked against it
    /// before anything is sent. Default: none (a media part is a clear error).
    fn media_rules(&self) -> MediaRules {
        MediaRules::NONE
    }

    /// Whether this format's servers follow [`ChatRequest::response_schema`]. Default: no.
    fn supports_response_schema(&self) -> bool {
        false
    }

    /// The error with what it likely means for this format's URLs added. Default: unchanged.
    fn explain(&self, error: ProviderError, base_url: &str) -> ProviderError {
        let _ = base_url;
        error
    }
}

/// A model behind an HTTP API in the wire format `W`. Cloning is cheap: clones share one HTTP
/// client (and whether the server streams answers with tools).
#[derive(Clone)]
pub struct HttpProvider<W: WireCodec> {
    wire: W,
    config: Config,
    http: Result<Arc<Http>, ProviderError>,
    /// Set once the server showed it cannot stream answers with tools: from then on, `stream`
    /// asks for whole answers. Shared by clones.
    whole_answers: Arc<AtomicBool>,
}

/// What every wire format is configured with.
#[derive(Clone)]
struct Config {
    api_key: Option<String>,
    model: String,
    base_url: String,
    options: HttpOptions,
}

impl<W: WireCodec> HttpProvider<W> {
    /// A provider for `model` with `wire`'s settings; an empty key sends none.
    pub(crate) fn with_wire(wire: W, api_key: String, model: String) -> Self {
        HttpProvider::build(
            wire,
            Config {
                api_key: Some(api_key).filter(|k| !k.is_empty()),
                model,
                base_url: W::DEFAULT_BASE_URL.to_owned(),
                options: HttpOptions::default(),
            },
        )
    }

    fn build(wire: W, config: Config) -> Self {
        let headers = wire.headers(config.api_key.as_deref());
        let http = check_base_url(&config.base_url)
            .and_then(|()| Http::new(W::NAME, headers, config.options.clone()).map(Arc::new));
        HttpProvider {
            wire,
            config,
            http,
            whole_answers: Arc::new(AtomicBool::new(false)),
        }
    }

    fn with(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.config;
        change(&mut config);
        HttpProvider::build(self.wire, config)
    }

    /// Changes the wire format's own settings.
    pub(crate) fn with_codec(self, change: impl FnOnce(&mut W)) -> Self {
        let mut wire = self.wire;
        change(&mut wire);
        HttpProvider::build(wire, self.config)
    }

    /// Sends requests under `base_url` (the format's endpoint path is added). A URL without
    /// `http://` or `https://` makes every call fail at once with a [`ProviderError::Config`]
    /// that names the fix.
    pub fn with_base_url(self, base_url: impl Into<String>) -> Self {
        let base_url = base_url.into().trim_end_matches('/').to_owned();
        self.with(|c| c.base_url = base_url)
    }

    /// Replaces the time limits, extra headers and retry policy.
    pub fn with_http_options(self, options: HttpOptions) -> Self {
        self.with(|c| c.options = options)
    }

    /// Adds a header to every request (after the provider's own, so it may replace them).
    pub fn with_header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let header = (name.into(), value.into());
        self.with(|c| c.options.headers.push(header))
    }

    /// How long to wait for an answer to begin.
    pub fn with_timeout(self, timeout: std::time::Duration) -> Self {
        self.with(|c| c.options.timeout = timeout)
    }

    /// How transient failures are retried.
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        self.with(|c| c.options.retry = retry)
    }

    /// The JSON body this provider sends for `request` (with `stream` set as given).
    pub fn request_body(&self, request: &ChatRequest<'_>, stream: bool) -> Value {
        self.wire.encode(&self.config.model, request, stream)
    }

    /// The bytes this provider sends for `request`: [`HttpProvider::request_body`] serialized,
    /// each media part base64-encoded once, straight into the body.
    pub fn request_bytes(&self, request: &ChatRequest<'_>, stream: bool) -> Bytes {
        Bytes::from(media::encode_spliced(|| self.request_body(request, stream)))
    }

    fn url(&self, stream: bool) -> String {
        self.wire
            .endpoint(&self.config.base_url, &self.config.model, stream)
    }

    /// Checks the request's media against the wire format's rules ([`media::prepare`]: nothing
    /// is sent if a caller's part fails; a tool's part that fails is replaced by a note), then,
    /// for a request with URL parts, `send` runs after their hosts resolve to public addresses.
    fn checked(
        &self,
        request: &ChatRequest<'_>,
        send: impl FnOnce(&ChatRequest<'_>) -> EventStream,
    ) -> EventStream {
        let rules = self.wire.media_rules();
        let prepared = match media::prepare(W::NAME, &rules, request.messages) {
            Ok(prepared) => prepared,
            Err(error) => return Box::pin(futures::stream::once(async move { Err(error) })),
        };
        let replaced;
        let request = match &prepared {
            Some(messages) => {
                replaced = ChatRequest {
                    messages,
                    ..request.clone()
                };
                &replaced
            }
            None => request,
        };
        let urls = media::url_parts(request);
        let stream = send(request);
        if urls.is_empty() {
            return stream;
        }
        Box::pin(async_stream::try_stream! {
            media::check_urls_resolved(W::NAME, rules.limits.allow_private_urls, &urls).await?;
            let mut stream = stream;
            while let Some(event) = stream.next().await {
                yield event?;
            }
        })
    }

    /// The whole answer to `request` as events (see [`whole_answer`]).
    fn whole(&self, request: &ChatRequest<'_>, deltas: bool) -> EventStream {
        self.checked(request, |request| self.whole_unchecked(request, deltas))
    }

    fn whole_unchecked(&self, request: &ChatRequest<'_>, deltas: bool) -> EventStream {
        let body = self.request_bytes(request, false);
        whole_answer(
            self.wire.clone(),
            self.http.clone(),
            self.url(false),
            body,
            self.config.base_url.clone(),
            deltas,
            request.wait_when_busy,
        )
    }
}

impl<W: WireCodec> std::fmt::Debug for HttpProvider<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("wire", &W::NAME)
            .field("model", &self.config.model)
            .field("base_url", &self.config.base_url)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<W: WireCodec> LlmProvider for HttpProvider<W> {
    fn name(&self) -> &str {
        W::NAME
    }

    fn model(&self) -> Option<&str> {
        Some(&self.config.model)
    }

    fn supports_response_schema(&self) -> bool {
        self.wire.supports_response_schema()
    }

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        super::final_response(self.whole(request, false)).await
    }

    fn complete_events<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
    ) -> futures::stream::BoxStream<'a, Result<StreamEvent, ProviderError>> {
        self.whole(request, false)
    }

    /// Streams the answer. A server that cannot stream this request (as the codec judges: for
    /// OpenAI-compatible servers, one that cannot stream answers with tools) is asked again for the
    /// whole answer, announced with a [`StreamEvent::Retry`] that says so, and every later request
    /// of this provider (and its clones) asks for whole answers at once.
    fn stream(&self, request: &ChatRequest<'_>) -> EventStream {
        self.checked(request, |request| self.stream_unchecked(request))
    }
}

impl<W: WireCodec> HttpProvider<W> {
    fn stream_unchecked(&self, request: &ChatRequest<'_>) -> EventStream {
        let (wire, http, url) = (self.wire.clone(), self.http.clone(), self.url(true));
        let whole_url = self.url(false);
        let base_url = self.config.base_url.clone();
        let whole = || self.request_bytes(request, false);
        if self.whole_answers.load(Ordering::Relaxed) {
            return self.whole_unchecked(request, true);
        }
        let body = self.request_bytes(request, true);
        let has_tools = !request.tools.is_empty();
        // The transcript is encoded a second time only where falling back is possible.
        let whole_body = wire.may_fall_back_to_whole(has_tools).then(whole);
        let can_fall_back = whole_body.is_some();
        let judge = wire.clone();
        let wait_when_busy = request.wait_when_busy;
        let streamed = sse_stream(
            http.clone(),
            url.clone(),
            body,
            W::Decoder::default(),
            move |error| {
                gives_up_when_busy(wait_when_busy, error)
                    || (can_fall_back && judge.streaming_unsupported(error, has_tools))
            },
        );
        let whole_answers = self.whole_answers.clone();
        Box::pin(async_stream::try_stream! {
            let mut streamed = streamed;
            let mut delivered = false;
            while let Some(item) = streamed.next().await {
                match item {
                    Ok(event) => {
                        delivered |= !matches!(event, StreamEvent::Retry { .. });
                        yield event;
                    }
                    Err(error) if !delivered && can_fall_back && wire.streaming_unsupported(&error, has_tools) => {
                        whole_answers.store(true, Ordering::Relaxed);
                        yield StreamEvent::Retry {
                            attempt: 1,
                            delay: std::time::Duration::ZERO,
                            error: format!(
                                "{error}; this server cannot stream answers that may call tools, \
                                 so whole answers are asked for from now on"
                            ),
                        };
                        let whole_body = whole_body.expect("prepared where falling back is possible");
                        let mut whole = whole_answer(wire.clone(), http.clone(), whole_url.clone(), whole_body, base_url.clone(), true, wait_when_busy);
                        while let Some(event) = whole.next().await {
                            yield event?;
                        }
                        return;
                    }
                    Err(error) => Err(wire.explain(error, &base_url))?,
                }
            }
        })
    }
}

/// Asks for the whole answer and decodes it, as events: a [`StreamEvent::Retry`] for each failed
/// attempt that another follows, then (with `deltas`) the text and calls as a stream of them
/// would have given them, and [`StreamEvent::Done`]. Without `wait_when_busy`, a busy API's
/// error is returned at once rather than retried.
fn whole_answer<W: WireCodec>(
    wire: W,
    http: Result<Arc<Http>, ProviderError>,
    url: String,
    body: Bytes,
    base_url: String,
    deltas: bool,
    wait_when_busy: bool,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let http = http?;
        let final_error = move |error: &ProviderError| gives_up_when_busy(wait_when_busy, error);
        let mut sent = Box::pin(http.clone().send(url, body, final_error));
        let mut answer = None;
        while let Some(step) = sent.next().await {
            match step.map_err(|e| wire.explain(e, &base_url))? {
                Sent::Retry(event) => yield event,
                Sent::Answer(response) => answer = Some(response),
            }
        }
        let Some(answer) = answer else {
            Err(ProviderError::Stream {
                provider: W::NAME.into(),
                error_type: None,
                message: "the request ended without an answer".into(),
            })?;
            return;
        };
        let value = http.read_json(answer).await.map_err(|e| wire.explain(e, &base_url))?;
        let response = wire.decode(&value)?;
        if deltas {
            if !response.message.content.is_empty() {
                yield StreamEvent::TextDelta(response.message.content.clone());
            }
            for (index, call) in response.message.tool_calls.iter().enumerate() {
                yield StreamEvent::ToolCallStarted {
                    index,
                    id: call.id.to_string(),
                    name: call.name.clone(),
                };
                yield StreamEvent::ToolCallFinished(call.clone());
            }
            yield StreamEvent::Usage(response.usage);
        }
        yield StreamEvent::Done(response);
    })
}

/// Whether `error` is returned at once rather than retried: a busy API's, when the request
/// asked not to wait ([`ChatRequest::wait_when_busy`]).
fn gives_up_when_busy(wait_when_busy: bool, error: &ProviderError) -> bool {
    !wait_when_busy && ErrorClass::of(error).is_busy()
}

/// A base URL that cannot work is a configuration error at once, naming the fix, rather than a
/// network error retried four times.
fn check_base_url(base_url: &str) -> Result<(), ProviderError> {
    let fix = |problem: &str| {
        let example = if base_url.contains("://") {
            "http://127.0.0.1:8080/v1".to_owned()
        } else {
            format!("http://{base_url}")
        };
        Err(ProviderError::Config(format!(
            "the base URL `{base_url}` {problem}; write it in full, e.g. `{example}`"
        )))
    };
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(()),
        Ok(url) if !matches!(url.scheme(), "http" | "https") => {
            fix("has no `http://` or `https://` scheme")
        }
        Ok(_) => fix("names no host"),
        Err(_) => fix("has no `http://` or `https://` scheme"),
    }
}
