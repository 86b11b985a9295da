//! The mode a test runs its cassette in ([`Mode`], from [`MODE_VAR`]) and the [`Session`] that
//! is a replay server or a recording proxy accordingly, behind one base URL.

use std::path::Path;

use super::error::CassetteError;
use super::format::Cassette;
use super::limits::MODE_VAR;
use super::matching::Matcher;
use super::record::RecordingProxy;
use super::replay::ReplayServer;

/// The key [`Session::api_key`] gives in replay mode: the replay server ignores keys.
pub const REPLAY_KEY: &str = "cassette-replay-key";

/// Whether a test records its cassette against the real API or replays it offline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Requests go to the real API through a [`RecordingProxy`]; the cassette is (re)written.
    Record,
    /// Requests are answered from the cassette by a [`ReplayServer`]; nothing leaves the
    /// machine. The default.
    Replay,
}

impl Mode {
    /// The mode [`MODE_VAR`] (`EUGENE_CASSETTE`) names: `record`, or `replay` (also when it is
    /// unset or empty); anything else is [`CassetteError::Mode`].
    pub fn from_env() -> Result<Mode, CassetteError> {
        Mode::parse(std::env::var(MODE_VAR).ok().as_deref())
    }

    /// The mode `value` names, as [`Mode::from_env`] reads it (any case, spaces around ignored).
    pub fn parse(value: Option<&str>) -> Result<Mode, CassetteError> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("replay") => Ok(Mode::Replay),
            Some("record") => Ok(Mode::Record),
            Some(_) => Err(CassetteError::Mode {
                value: value.unwrap_or_default().to_owned(),
            }),
        }
    }
}

/// A cassette in use by a test: in [`Mode::Replay`] a [`ReplayServer`], in [`Mode::Record`] a
/// [`RecordingProxy`] to the real API. Either way the provider goes to [`Session::base_url`],
/// and the test ends with [`Session::finish`].
#[derive(Debug)]
pub struct Session {
    base_url: String,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Replay(ReplayServer),
    Record(RecordingProxy),
}

impl Session {
    /// Starts the cassette at `path` in `mode`, for an API whose real base URL is `base_url`
    /// (`https://api.anthropic.com`, `https://api.openai.com/v1`): recording goes there, and
    /// [`Session::base_url`] keeps its path in both modes. Replaying a missing cassette is
    /// [`CassetteError::Missing`], which says how to record it.
    pub async fn start(
        mode: Mode,
        path: impl AsRef<Path>,
        base_url: &str,
        matcher: Matcher,
    ) -> Result<Session, CassetteError> {
        let path = path.as_ref();
        match mode {
            Mode::Record => {
                let proxy = RecordingProxy::start(path, base_url).await?;
                Ok(Session {
                    base_url: proxy.base_url().to_owned(),
                    inner: Inner::Record(proxy),
                })
            }
            Mode::Replay => {
                let api_path = reqwest::Url::parse(base_url)
                    .map_err(|_| {
                        CassetteError::Start(format!(
                            "the base URL `{base_url}` is not a URL; give the API's real one, \
                             e.g. `https://api.anthropic.com`"
                        ))
                    })?
                    .path()
                    .trim_end_matches('/')
                    .to_owned();
                let server = Cassette::load(path)?.serve(matcher).await?;
                Ok(Session {
                    base_url: format!("{}{api_path}", server.base_url()),
                    inner: Inner::Replay(server),
                })
            }
        }
    }

    /// The mode it runs in.
    pub fn mode(&self) -> Mode {
        match self.inner {
            Inner::Replay(_) => Mode::Replay,
            Inner::Record(_) => Mode::Record,
        }
    }

    /// Where the provider sends requests: the loopback server's URL with the API's path.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The API key for the provider. Recording: the value of the environment variable `var`
    /// ([`CassetteError::ApiKey`] if it is unset or empty), which is also added to the secrets
    /// the cassette is searched for before it is written. Replaying: [`REPLAY_KEY`], whatever
    /// `var` holds, so the test needs no key and sends none of yours anywhere.
    pub fn api_key(&self, var: &str) -> Result<String, CassetteError> {
        match &self.inner {
            Inner::Replay(_) => Ok(REPLAY_KEY.to_owned()),
            Inner::Record(proxy) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => {
                    proxy.secret(&key);
                    Ok(key)
                }
                _ => Err(CassetteError::ApiKey {
                    var: var.to_owned(),
                }),
            },
        }
    }

    /// The replay server, when replaying.
    pub fn replay_server(&self) -> Option<&ReplayServer> {
        match &self.inner {
            Inner::Replay(server) => Some(server),
            Inner::Record(_) => None,
        }
    }

    /// The recording proxy, when recording.
    pub fn recording_proxy(&self) -> Option<&RecordingProxy> {
        match &self.inner {
            Inner::Record(proxy) => Some(proxy),
            Inner::Replay(_) => None,
        }
    }

    /// Ends the test's use of the cassette. Recording: writes it
    /// ([`RecordingProxy::finish`]). Replaying: [`ReplayServer::verify`], so a request that
    /// matched nothing, or a recorded interaction no request used, fails the test.
    pub async fn finish(self) -> Result<(), CassetteError> {
        match self.inner {
            Inner::Replay(server) => server.verify(),
            Inner::Record(proxy) => proxy.finish().await.map(|_| ()),
        }
    }
}
