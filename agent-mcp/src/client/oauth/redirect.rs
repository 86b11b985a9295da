//! The login's redirect listener: one callback request on `127.0.0.1`, within a deadline.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use super::error::OAuthError;

/// The path the authorization server sends the browser back to.
const CALLBACK_PATH: &str = "/callback";
/// The most a request head may be; a longer one is answered 431 and does not count.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How many requests for other paths (a browser's `/favicon.ico`, say) are answered 404 before
/// the listener gives up.
const MAX_STRAY_REQUESTS: usize = 32;

/// What the authorization server's redirect carried, once its `state` was checked.
pub(super) struct Callback {
    pub(super) code: String,
    pub(super) state: String,
    pub(super) issuer: Option<String>,
}

/// A listener on `127.0.0.1` at a port the system picked.
pub(super) struct RedirectListener {
    listener: TcpListener,
    port: u16,
}

impl RedirectListener {
    pub(super) async fn bind() -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| OAuthError::Redirect(format!("cannot listen on 127.0.0.1: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Redirect(e.to_string()))?
            .port();
        Ok(RedirectListener { listener, port })
    }

    /// The redirect URI to register and send.
    pub(super) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits up to `timeout` for the one callback request, answers it and returns what it
    /// carried if its `state` is `expected_state`. The listener is closed when this returns.
    pub(super) async fn wait(
        self,
        expected_state: &str,
        timeout: Duration,
    ) -> Result<Callback, OAuthError> {
        let deadline = Instant::now() + timeout;
        let mut strays = 0;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept())
                .await
                .map_err(|_| OAuthError::Timeout(timeout))?;
            let Ok((mut stream, _)) = accepted else {
                continue;
            };
            let target = match read_target(&mut stream, deadline).await {
                Ok(target) => target,
                Err(status) => {
                    respond(
                        &mut stream,
                        status,
                        "That was not an authorization redirect.",
                    )
                    .await;
                    continue;
                }
            };
            let (path, query) = target.split_once('?').unwrap_or((&target, ""));
            if path != CALLBACK_PATH {
                respond(&mut stream, "404 Not Found", "Not found.").await;
                strays += 1;
                if strays >= MAX_STRAY_REQUESTS {
                    return Err(OAuthError::Redirect(format!(
                        "{MAX_STRAY_REQUESTS} requests to other paths than {CALLBACK_PATH} and no callback"
                    )));
                }
                continue;
            }
            let outcome = check(query, expected_state);
            match &outcome {
                Ok(_) => {
                    respond(
                        &mut stream,
                        "200 OK",
                        "Signed in. You can close this tab and go back to the terminal.",
                    )
                    .await
                }
                Err(e) => {
                    respond(
                        &mut stream,
                        "400 Bad Request",
                        &format!("Login failed: {e}"),
                    )
                    .await
                }
            }
            return outcome;
        }
    }
}

/// Reads the request head and returns the target of a `GET`, or the status to refuse it with.
async fn read_target(stream: &mut TcpStream, deadline: Instant) -> Result<String, &'static str> {
    let deadline = deadline.min(Instant::now() + HEAD_TIMEOUT);
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD_BYTES {
            return Err("431 Request Header Fields Too Large");
        }
        let read = tokio::time::timeout_at(deadline, stream.read(&mut chunk))
            .await
            .map_err(|_| "408 Request Timeout")?
            .map_err(|_| "400 Bad Request")?;
        if read == 0 {
            return Err("400 Bad Request");
        }
        head.extend_from_slice(&chunk[..read]);
    }
    let head = std::str::from_utf8(&head).map_err(|_| "400 Bad Request")?;
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) => Ok(target.to_owned()),
        _ => Err("405 Method Not Allowed"),
    }
}

/// The callback's parameters, once its `state` matched.
fn check(query: &str, expected_state: &str) -> Result<Callback, OAuthError> {
    let (mut code, mut state, mut issuer, mut error, mut description) =
        (None, None, None, None, None);
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let slot = match key.as_ref() {
            "code" => &mut code,
            "state" => &mut state,
            "iss" => &mut issuer,
            "error" => &mut error,
            "error_description" => &mut description,
            _ => continue,
        };
        if slot.is_some() {
            // A parameter given twice is not a redirect any server sends.
            return Err(OAuthError::Redirect(format!("`{key}` was given twice")));
        }
        *slot = Some(value.into_owned());
    }
    let Some(state) = state else {
        return Err(OAuthError::StateMismatch("is missing"));
    };
    if !same(&state, expected_state) {
        return Err(OAuthError::StateMismatch("is not the one this login sent"));
    }
    if let Some(error) = error {
        return Err(OAuthError::Denied { error, description });
    }
    let code = code.ok_or_else(|| OAuthError::Redirect("it carried no `code`".into()))?;
    Ok(Callback {
        code,
        state,
        issuer,
    })
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>MCP login</title><p>{}</p>\n",
        text.replace('&', "&amp;").replace('<', "&lt;")
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(HEAD_TIMEOUT, async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sent_state_passes_and_an_error_is_reported() {
        assert!(check("code=c&state=s1", "s1").is_ok());
        assert!(matches!(
            check("code=c&state=s2", "s1"),
            Err(OAuthError::StateMismatch(_))
        ));
        assert!(matches!(
            check("code=c", "s1"),
            Err(OAuthError::StateMismatch(_))
        ));
        assert!(matches!(
            check("code=c&state=s1&state=s2", "s1"),
            Err(OAuthError::Redirect(_))
        ));
        assert!(matches!(
            check("error=access_denied&state=s1", "s1"),
            Err(OAuthError::Denied { .. })
        ));
    }
}
