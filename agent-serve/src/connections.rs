//! The connections of a server: binding the listener, accepting, moving each connection
//! through the pools of [`crate::admission`], and serving it with hyper. What this guarantees,
//! and its limits, are in the [crate docs](crate); here is how.
//!
//! - [`accept_forever`] accepts a connection, then enters it in the pending pool
//!   ([`Pools::enter`], which closes the oldest connection that waits on its client when the
//!   pool is full, and waits while none does), then serves it on a task of its own.
//! - A connection's socket is wrapped in [`Watched`]: a read that finds nothing more to read
//!   while the connection is pending marks it as waiting on its client
//!   ([`Admission::waits_on_client`]); until then it cannot be closed to make room.
//! - [`serve`] polls hyper's connection before the notice to close and the first-head timer
//!   (`biased`), so what the client sent is read, and a request with the token admitted,
//!   before the connection may be closed. A connection closed that way is reset (`SO_LINGER`
//!   0): it has nothing to deliver, and the server keeps no `TIME_WAIT` for it.
//! - [`accept_forever`] hands each request an [`Admitter`] (in its extensions), which the
//!   [`Guard`](crate::Guard) of a route uses after its checks ([`Admission::admit`]). An
//!   answer on a connection that is not admitted gets `Connection: close`, so hyper closes it
//!   after the answer.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::header::{CONNECTION, HeaderValue};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpSocket, TcpStream, ToSocketAddrs};
use tokio::sync::oneshot;

use crate::admission::{Admission, Pools};
use crate::admit::Admitter;

/// How many established connections the kernel queues for a listener of [`bind`] until the
/// server accepts them; Linux caps it at `net.core.somaxconn` (4096 by default since Linux 5.4).
pub const LISTEN_BACKLOG: u32 = 4096;

/// The first pause after a failed `accept()`; each further failure doubles it.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest pause after a failed `accept()`.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The bounds on a server's connections. Each must be at least 1 (and each timeout above zero):
/// the servers refuse a zero among their settings before serving.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Connections admitted at once.
    pub(crate) max_admitted: usize,
    /// Connections pending (not admitted yet) at once.
    pub(crate) max_pending: usize,
    /// How long a pending connection has to send its first head.
    pub(crate) first_head_timeout: Duration,
    /// How long any head may take, counted from when the server starts waiting for it (on a
    /// new connection, and after each response on a kept-alive one).
    pub(crate) header_read_timeout: Duration,
    /// The largest request head, in bytes (`431` past it).
    pub(crate) max_header_bytes: usize,
    /// How long a write may wait on a client that reads nothing before the connection is
    /// closed (reset): a client that never reads its stream cannot hold its slot forever.
    pub(crate) write_timeout: Duration,
}

/// A listener on `addr`: on the first address `addr` resolves to that can be bound, with
/// `SO_REUSEADDR` on Unix (as [`TcpListener::bind`] sets it) and a listen queue of
/// [`LISTEN_BACKLOG`]. `Err` is the last address's error (or the lookup's).
pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(addr).await? {
        let bound = (|| {
            let socket = if addr.is_ipv4() {
                TcpSocket::new_v4()?
            } else {
                TcpSocket::new_v6()?
            };
            #[cfg(unix)]
            socket.set_reuseaddr(true)?;
            socket.bind(addr)?;
            socket.listen(LISTEN_BACKLOG)
        })();
        match bound {
            Ok(listener) => return Ok(listener),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the address resolved to no socket address",
        )
    }))
}

/// Accepts connections on `listener` and serves each with the tower service `service`, within
/// `limits`, until the future is dropped. A request's connection is admitted when the request
/// passes a [`Guard`](crate::Guard) in `service`; a request answered without passing one
/// leaves its connection pending, so the answer carries `Connection: close`. `name` is what
/// the server is called in its log events. An error of `accept()` (out of file descriptors,
/// say) is logged and retried after a pause that doubles from 10 ms to 1 s; it never ends the
/// loop.
pub(crate) async fn accept_forever<S, B>(
    listener: TcpListener,
    name: Arc<str>,
    service: S,
    limits: Limits,
) where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let answer = move |mut request: Request<Incoming>, admission: Arc<Admission>| {
        let mut service = service.clone();
        request
            .extensions_mut()
            .insert(Admitter::new(admission.clone()));
        async move {
            let response = match std::future::poll_fn(|cx| service.poll_ready(cx)).await {
                Ok(()) => service.call(request).await,
                Err(never) => match never {},
            };
            let response = match response {
                Ok(response) => response,
                Err(never) => match never {},
            };
            close_unless_admitted(response, &admission)
        }
    };
    accept_with(listener, name, answer, limits).await;
}

/// The accept loop of [`accept_forever`]: `answer` answers one
/// request of a connection, given the connection's place in the pools.
async fn accept_with<A, F, B>(listener: TcpListener, name: Arc<str>, answer: A, limits: Limits)
where
    A: Fn(Request<Incoming>, Arc<Admission>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let pools = Pools::new(limits.max_pending, limits.max_admitted);
    let mut backoff = ACCEPT_BACKOFF_MIN;
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                backoff = ACCEPT_BACKOFF_MIN;
                // Answers go out as they are written (a streamed answer's last chunk too), not
                // held back by Nagle's algorithm until the client's delayed ACK (40 ms).
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!(%error, server = %name, "TCP_NODELAY could not be set");
                }
                let (admission, told) = Pools::enter(&pools).await;
                tokio::spawn(serve(
                    name.clone(),
                    answer.clone(),
                    stream,
                    admission,
                    told,
                    limits,
                ));
            }
            Err(error) if is_per_connection(&error) => {
                tracing::debug!(%error, server = %name, "a connection failed while being accepted");
            }
            Err(error) => {
                tracing::warn!(%error, ?backoff, server = %name, "accepting a connection failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
}

/// Errors of one connection that `accept()` reports; the listener itself is fine.
fn is_per_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted
    )
}

/// Serves one connection until it closes, or, while pending, is told to close or sends no
/// head in time.
async fn serve<A, F, B>(
    name: Arc<str>,
    answer: A,
    stream: TcpStream,
    admission: Admission,
    mut told: oneshot::Receiver<()>,
    limits: Limits,
) where
    A: Fn(Request<Incoming>, Arc<Admission>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let admission = Arc::new(admission);
    let handler = {
        let admission = admission.clone();
        hyper::service::service_fn(move |request| {
            let answered = answer(request, admission.clone());
            async move { Ok::<_, Infallible>(answered.await) }
        })
    };
    let reset = Arc::new(AtomicBool::new(false));
    let io = Watched {
        io: TokioIo::new(stream),
        admission: admission.clone(),
        reset: reset.clone(),
        write_timeout: limits.write_timeout,
        stalled: None,
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .serve_connection(io, handler);
    let mut connection = pin!(connection);
    let first_head = tokio::time::sleep(limits.first_head_timeout);
    let mut first_head = pin!(first_head);
    let (mut listening, mut timing) = (true, true);
    let result = loop {
        tokio::select! {
            // The connection first: what the client sent is read before it may be closed.
            biased;
            result = connection.as_mut() => break result,
            closing = &mut told, if listening => {
                listening = false;
                // `Err`: the sender was dropped, the connection is no longer closable.
                if closing.is_ok() && admission.is_pending() {
                    tracing::debug!(server = %name, "closed a pending connection to make room");
                    reset.store(true, Ordering::Relaxed);
                    return;
                }
            }
            () = first_head.as_mut(), if timing => {
                timing = false;
                if admission.is_pending() {
                    tracing::debug!(server = %name, "closed a connection that sent no request in time");
                    reset.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    };
    if let Err(error) = result {
        tracing::debug!(%error, server = %name, "a connection ended with an error");
    }
}

/// `response` with `Connection: close` unless its connection is admitted: any answer on a
/// connection that is not admitted closes it.
fn close_unless_admitted<B>(mut response: Response<B>, admission: &Admission) -> Response<B> {
    if !admission.is_admitted() {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A connection's socket that tells its [`Admission`] when a read finds nothing more to read,
/// gives up a write its client has not taken within `write_timeout`, and is reset when it
/// closes if `reset` says so.
struct Watched {
    io: TokioIo<TcpStream>,
    admission: Arc<Admission>,
    reset: Arc<AtomicBool>,
    write_timeout: Duration,
    /// Started when a write waits on the client; gone when one goes through.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Watched {
    /// `written` as it is, unless it has waited on the client past `write_timeout`: then an
    /// error, which ends the connection (reset, since what was not taken cannot be delivered).
    fn unless_stalled<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let timeout = self.write_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if stalled.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        tracing::debug!(
            ?timeout,
            "closed a connection whose client read nothing in time"
        );
        self.reset.store(true, Ordering::Relaxed);
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took nothing written to it within the write timeout",
        )))
    }
}

impl Drop for Watched {
    /// A connection closed without an answer has nothing left to deliver: a reset leaves no
    /// `TIME_WAIT` on the server's side, where thousands a second would pile up (and turn
    /// away a client's new connection that reuses the same ports).
    fn drop(&mut self) {
        if self.reset.load(Ordering::Relaxed) {
            let _ = self.io.inner().set_zero_linger();
        }
    }
}

impl Read for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if read.is_pending() {
            this.admission.waits_on_client();
        }
        read
    }
}

impl Write for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        this.unless_stalled(cx, written)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.io).poll_flush(cx);
        this.unless_stalled(cx, flushed)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.unless_stalled(cx, written)
    }
}
