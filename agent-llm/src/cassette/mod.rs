//! Recorded model traffic for your own tests ("cassettes", feature `cassette`): record real
//! exchanges with a model's API once, with your key, into a YAML file with the secrets
//! redacted; then run the same test offline, in CI, against the recording.
//!
//! It works for every provider, and for anything else that speaks HTTP, because it works at the
//! HTTP level on loopback: a [`RecordingProxy`] stands in front of the real API and a
//! [`ReplayServer`] stands in for it, and the provider is pointed at either with its base URL
//! ([`HttpProvider::with_base_url`](crate::HttpProvider::with_base_url)). Nothing in the
//! providers changes, so what is tested is the provider as it runs: its requests, its HTTP
//! client, its decoding of whole and streamed answers.
//!
//! # In a test
//!
//! [`Cassette::from_env`] reads the mode from `EUGENE_CASSETTE` ([`MODE_VAR`]): `replay` (the
//! default) or `record`.
//!
//! ```no_run
//! use agent_llm::cassette::Cassette;
//! use agent_llm::{AnthropicProvider, ChatRequest, LlmProvider, Message};
//!
//! // #[tokio::test]
//! async fn says_hello() -> Result<(), Box<dyn std::error::Error>> {
//!     let cassette =
//!         Cassette::from_env("tests/cassettes/says_hello.yaml", "https://api.anthropic.com").await?;
//!     let provider = AnthropicProvider::new(cassette.api_key("ANTHROPIC_API_KEY")?, "claude-sonnet-4-5")
//!         .with_base_url(cassette.base_url());
//!     let transcript = [Message::user("Say hello.")];
//!     let answer = provider.complete(&ChatRequest::new(&transcript)).await?;
//!     assert!(!answer.message.content.is_empty());
//!     cassette.finish().await?; // record: writes the file; replay: every recording used, all matched
//!     Ok(())
//! }
//! ```
//!
//! Record once: `EUGENE_CASSETTE=record ANTHROPIC_API_KEY=sk-ant-... cargo test says_hello`,
//! and commit `tests/cassettes/says_hello.yaml`. From then on `cargo test` replays it, needs no
//! key ([`Session::api_key`] gives [`REPLAY_KEY`]) and makes no request off the machine; a
//! missing cassette is an error that says how to record it, never a silent call to the API.
//!
//! # The file
//!
//! vcrpy's YAML layout, so cassettes recorded by vcrpy or pydantic-ai replay as they are (the
//! project's own recordings in `fixtures/recordings` do, in `agent-llm/tests/cassette`):
//! `interactions:` a list of `{request: {method, uri, headers, body}, response: {status: {code,
//! message}, headers, body: {string}}}`. Headers are lists of values by lower-case name. A JSON
//! body may be written as YAML under `parsed_body` instead (pydantic-ai's extension), and the
//! recorder writes JSON bodies that way, so that a review of a cassette shows the request and
//! the answer field by field; server-sent events are kept as text, byte for byte.
//!
//! A cassette that cannot be read is a [`CassetteError::Malformed`] naming the file, the line
//! and the column (`tests/cassettes/x.yaml:12:5: not a cassette: interactions[0].request:
//! missing field `method``), and nothing is served. Files past [`MAX_CASSETTE_BYTES`] are
//! refused unread, at most [`MAX_INTERACTIONS`] are read, and YAML aliases cannot expand a
//! small file into a huge one (the parser's repetition limit). Bodies recorded compressed
//! (vcrpy's `!!binary` with a `content-encoding`) are refused: the recorder asks for none.
//!
//! # Replaying
//!
//! [`Cassette::replay`] serves a cassette; [`Cassette::serve`] with a [`Matcher`] says what must
//! be equal: by default the method, the path, the query and the body, JSON bodies compared as
//! JSON (key order ignored), headers not at all. Each recorded interaction answers one request:
//! the first unused one that matches, so identical requests get the recorded answers in order,
//! and concurrent requests get their own answers whatever order they come in.
//!
//! A request that matches nothing fails: the server answers `409` with `error.type`
//! `cassette_mismatch` (a status no provider retries or reinterprets), and `error.message` is a
//! report of what differs from the closest recorded request, which the provider's
//! [`ProviderError`](crate::ProviderError) shows:
//!
//! ```text
//! no recorded interaction matches POST /v1/messages (cassette tests/cassettes/x.yaml: 1 interaction(s), 1 unused)
//! closest: interactions[0] (POST https://api.anthropic.com/v1/messages); 2 difference(s), request against recording:
//!   body /messages/0/content/0/text: request "Say hi.", recorded "Say hello."
//!   body /temperature: only in the request: 0.5
//! ```
//!
//! The mismatch is kept too: [`ReplayServer::verify`] (and [`Session::finish`]) fail with every
//! mismatch and every recorded interaction no request used, and
//! [`ReplayServer::assert_all_used`] panics with that report. Dropping a server never panics:
//! a test asks for the check where it wants it. Replayed answers keep their status, headers
//! and body (streamed bodies are sent event by event); the reason phrase is the standard one.
//!
//! ```
//! use agent_llm::cassette::{Cassette, Matcher};
//! use agent_llm::{AnthropicProvider, ChatRequest, LlmProvider, Message};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = r#"
//! interactions:
//! - request:
//!     method: POST
//!     uri: https://api.anthropic.com/v1/messages
//!     parsed_body:
//!       messages: [{role: user, content: [{type: text, text: Say hello., cache_control: {type: ephemeral}}]}]
//!   response:
//!     status: {code: 200, message: OK}
//!     headers: {content-type: [application/json]}
//!     parsed_body:
//!       id: msg_01
//!       type: message
//!       role: assistant
//!       model: claude-sonnet-4-5
//!       content: [{type: text, text: Hello!}]
//!       stop_reason: end_turn
//!       usage: {input_tokens: 10, output_tokens: 3}
//! "#;
//! // Only the conversation is compared; the model, the limits and the rest may change.
//! let matcher = Matcher::new().body_fields(["/messages"]);
//! let server = Cassette::parse("hello.yaml", yaml)?.serve(matcher).await?;
//! let provider = AnthropicProvider::new("any key", "claude-sonnet-4-5").with_base_url(server.base_url());
//!
//! let transcript = [Message::user("Say hello.")];
//! let answer = provider.complete(&ChatRequest::new(&transcript)).await?;
//! assert_eq!(answer.message.content, "Hello!");
//!
//! let other = [Message::user("Say goodbye.")];
//! let error = provider.complete(&ChatRequest::new(&other)).await.unwrap_err();
//! assert!(error.to_string().contains(r#"request "Say goodbye.", recorded "Say hello.""#), "{error}");
//! assert!(server.verify().is_err());
//! # Ok(()) }
//! ```
//!
//! # Recording
//!
//! [`Cassette::record`] starts a [`RecordingProxy`] in front of the real API. Requests reach it
//! unchanged, key included, and answers come back unchanged, streams as they arrive; a copy of
//! each exchange is kept with the secrets redacted (the headers and query parameters the
//! [`RecordingProxy`] docs list become `[redacted]`). [`RecordingProxy::finish`] writes the
//! cassette to a temporary file beside it and renames it into place, so the file is whole or
//! untouched — but first it searches everything it would write for each redacted value and
//! each secret it was given ([`RecordingProxy::secret`]; [`Session::api_key`] gives it the
//! key): a secret found anywhere (an API that echoes the key in an error message, say) refuses
//! the cassette with [`CassetteError::Secret`], which names the secret by where it came from
//! and never shows it. The upstream is reached with the providers' TLS settings
//! ([`tls_config`](crate::llm::tls_config)), without following redirects.
//!
//! Decisions the issue left open: interactions are written in the order their requests
//! arrived; a request the upstream never answered is left out (the provider's retry is what
//! gets recorded); an answer that breaks off, or is binary, compressed or past
//! [`MAX_BODY_BYTES`], fails the recording instead of being kept wrong; an answer the client
//! stopped reading early is read to its end for the cassette; and nothing is written unless
//! `finish` is called.

mod error;
mod format;
mod limits;
mod matching;
mod read;
mod record;
mod redact;
mod replay;
mod serve;
mod session;
mod write;

use std::path::Path;

pub use error::CassetteError;
pub use format::{Body, Cassette, Interaction, Request, Response};
pub use limits::{
    MAX_BODY_BYTES, MAX_CASSETTE_BYTES, MAX_INTERACTIONS, MIN_SECRET_CHARS, MODE_VAR, REDACTED,
};
pub use matching::Matcher;
pub use record::{Recorded, RecordingProxy};
pub use redact::SAFE_REQUEST_HEADERS;
pub use replay::{Mismatch, ReplayServer, ReplayedRequest};
pub use session::{Mode, REPLAY_KEY, Session};

impl Cassette {
    /// Serves the cassette at `path` on a loopback port, matching requests with
    /// [`Matcher::new`] (method, path, query and body). See [`ReplayServer`].
    pub async fn replay(path: impl AsRef<Path>) -> Result<ReplayServer, CassetteError> {
        Cassette::load(path)?.serve(Matcher::new()).await
    }

    /// Serves this cassette on a loopback port, matching requests as `matcher` says.
    pub async fn serve(self, matcher: Matcher) -> Result<ReplayServer, CassetteError> {
        ReplayServer::start(self, matcher).await
    }

    /// Starts a recording proxy on a loopback port in front of `upstream`, the API's real base
    /// URL (`https://api.anthropic.com`, `https://api.openai.com/v1`), that writes the cassette
    /// at `path` when finished. See [`RecordingProxy`].
    pub async fn record(
        path: impl AsRef<Path>,
        upstream: &str,
    ) -> Result<RecordingProxy, CassetteError> {
        RecordingProxy::start(path.as_ref(), upstream).await
    }

    /// Starts the cassette at `path` for an API whose real base URL is `base_url`, recording or
    /// replaying as [`MODE_VAR`] says ([`Mode::from_env`]), with [`Matcher::new`]. See
    /// [`Session`].
    pub async fn from_env(
        path: impl AsRef<Path>,
        base_url: &str,
    ) -> Result<Session, CassetteError> {
        Session::start(Mode::from_env()?, path, base_url, Matcher::new()).await
    }
}
