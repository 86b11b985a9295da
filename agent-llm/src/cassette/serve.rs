//! What the replay server and the recording proxy share: an HTTP/1 server on a loopback port
//! (hyper), whose connections end with it, the bodies they answer with, and reading a request's
//! body within [`MAX_BODY_BYTES`].

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::error::CassetteError;
use super::limits::MAX_BODY_BYTES;

/// An error that ends a response body (the connection is closed mid-answer).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body of every answer.
pub(crate) type ServerBody = UnsyncBoxBody<Bytes, BoxError>;

/// How long a request head may take to arrive.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// A listener on a free loopback port, and its URL (`http://127.0.0.1:PORT`).
pub(crate) async fn bind() -> Result<(TcpListener, String), CassetteError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| CassetteError::Start(format!("cannot listen on loopback: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CassetteError::Start(format!("cannot read the loopback address: {e}")))?;
    Ok((listener, format!("http://{addr}")))
}

/// Serves each request on `listener` with `answer`, until the returned task is aborted, which
/// ends every connection too.
pub(crate) fn spawn<F, Fut>(listener: TcpListener, answer: F) -> tokio::task::JoinHandle<()>
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ServerBody>> + Send + 'static,
{
    tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let answer = answer.clone();
                        connections.spawn(async move {
                            let service = hyper::service::service_fn(move |request| {
                                let answer = answer.clone();
                                async move { Ok::<_, Infallible>(answer(request).await) }
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .timer(TokioTimer::new())
                                .header_read_timeout(HEAD_TIMEOUT)
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                    // Out of file descriptors, say: wait a little rather than spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                },
                Some(_) = connections.join_next() => {}
            }
        }
    })
}

/// A request's body, whole; `Err` is the answer to give instead (`413` past the limit).
pub(crate) async fn read_body(body: Incoming) -> Result<Bytes, Response<ServerBody>> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "cassette_request_too_large",
            &format!("the request body is larger than the {MAX_BODY_BYTES} bytes a cassette takes"),
        )),
        Err(error) => Err(error_response(
            StatusCode::BAD_REQUEST,
            "cassette_bad_request",
            &format!("the request body could not be read: {error}"),
        )),
    }
}

/// A whole body.
pub(crate) fn full(bytes: impl Into<Bytes>) -> ServerBody {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// An error answer in the shape the providers read (`error.type`, `error.message`).
pub(crate) fn error_response(
    status: StatusCode,
    error_type: &str,
    message: &str,
) -> Response<ServerBody> {
    let body = serde_json::json!({
        "type": "error",
        "error": {"type": error_type, "message": message},
    });
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Headers that belong to one connection, or that the server sets itself for the body it sends:
/// never copied from a recording or between the proxy's two sides.
pub(crate) fn is_per_hop(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}
