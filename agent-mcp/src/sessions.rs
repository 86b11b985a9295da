//! The HTTP server's sessions, bounded: rmcp's [`LocalSessionManager`] wrapped so that at most
//! `max` sessions live at once and a session nobody uses is closed.
//!
//! - **Cap.** Creating a session past the cap fails with [`SessionError::Full`]. The HTTP layer
//!   checks [`BoundedSessions::is_full`] before handing an `initialize` to rmcp and answers a
//!   clear `503` itself; the check here stops the few that race past it (rmcp answers those
//!   `500` with this error's message).
//! - **Idle expiry.** A session is idle when no request of its is open (a `tools/call` still
//!   running, a `GET` event stream a client listens on) and none arrived for `idle`. A reaper
//!   closes idle sessions; rmcp's own keep-alive is switched off because it counts only
//!   messages, and would close a session in the middle of a long call. A client whose session
//!   expired gets `404` and, as the MCP specification asks, initializes again (rmcp's client
//!   does so by itself).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId,
};

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    /// The cap is reached.
    #[error(
        "the MCP server is at its session limit ({max} live sessions); end a session (HTTP DELETE) or try again later"
    )]
    Full {
        /// The cap.
        max: usize,
    },
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// What is known of one live session.
#[derive(Debug)]
struct Activity {
    last_seen: Instant,
    open_requests: usize,
}

#[derive(Debug, Default)]
struct Book {
    live: HashMap<SessionId, Activity>,
    /// Sessions being created: counted against the cap before they have an id.
    creating: usize,
}

/// rmcp's [`LocalSessionManager`] with a cap on live sessions and idle expiry. See the
/// [module docs](self).
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    book: Arc<Mutex<Book>>,
    max: usize,
    idle: Duration,
}

impl BoundedSessions {
    /// At most `max` sessions; one idle for `idle` is closed by [`BoundedSessions::reap`].
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // Expiry is ours: rmcp's keep-alive would end a session during a long call.
        inner.session_config.keep_alive = None;
        BoundedSessions {
            inner,
            book: Arc::default(),
            max,
            idle,
        }
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        // The book holds counters only; a panic elsewhere leaves them usable.
        self.book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many sessions live now.
    pub(crate) fn len(&self) -> usize {
        self.book().live.len()
    }

    /// The cap.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Whether a new session would be refused now, after closing the idle ones.
    pub(crate) async fn is_full(&self) -> bool {
        self.reap().await;
        let book = self.book();
        book.live.len() + book.creating >= self.max
    }

    /// Closes every session idle for longer than the idle timeout; returns how many.
    pub(crate) async fn reap(&self) -> usize {
        let now = Instant::now();
        let expired: Vec<SessionId> = self
            .book()
            .live
            .iter()
            .filter(|(_, a)| a.open_requests == 0 && now.duration_since(a.last_seen) >= self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            tracing::debug!(session = %id, "closing an idle MCP session");
            if let Err(error) = self.close_session(id).await {
                tracing::debug!(session = %id, %error, "closing an idle MCP session failed");
            }
        }
        expired.len()
    }

    /// Marks the session as used now; `false` when it is not live.
    fn touch(&self, id: &SessionId) -> bool {
        match self.book().live.get_mut(id) {
            Some(activity) => {
                activity.last_seen = Instant::now();
                true
            }
            None => false,
        }
    }

    /// Counts an open request of `id` until the returned guard is dropped.
    fn open_request(&self, id: &SessionId) -> OpenRequest {
        if let Some(activity) = self.book().live.get_mut(id) {
            activity.open_requests += 1;
            activity.last_seen = Instant::now();
        }
        OpenRequest {
            book: self.book.clone(),
            id: id.clone(),
        }
    }

    fn tracked<S>(&self, id: &SessionId, stream: S) -> Tracked<S> {
        Tracked {
            inner: Box::pin(stream),
            _open: self.open_request(id),
        }
    }
}

/// Gives back a creation slot when dropped, also when the creating future is dropped.
struct Creating<'a>(&'a BoundedSessions);

impl Drop for Creating<'_> {
    fn drop(&mut self) {
        let mut book = self.0.book();
        book.creating = book.creating.saturating_sub(1);
    }
}

/// One open request of a session; the session counts as used until it is dropped.
#[derive(Debug)]
struct OpenRequest {
    book: Arc<Mutex<Book>>,
    id: SessionId,
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(activity) = book.live.get_mut(&self.id) {
            activity.open_requests = activity.open_requests.saturating_sub(1);
            activity.last_seen = Instant::now();
        }
    }
}

/// A session's event stream that keeps the session from expiring while it is open.
struct Tracked<S> {
    inner: Pin<Box<S>>,
    _open: OpenRequest,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), SessionError> {
        self.reap().await;
        {
            let mut book = self.book();
            if book.live.len() + book.creating >= self.max {
                return Err(SessionError::Full { max: self.max });
            }
            book.creating += 1;
        }
        let slot = Creating(self);
        let (id, transport) = self.inner.create_session().await?;
        self.book().live.insert(
            id.clone(),
            Activity {
                last_seen: Instant::now(),
                open_requests: 0,
            },
        );
        drop(slot);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        let _open = self.open_request(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        self.touch(id);
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        self.book().live.remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let open = self.open_request(id);
        let stream = self.inner.create_stream(id, message).await?;
        drop(open);
        Ok(self.tracked(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionError> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, SessionError> {
        // No session store is configured; a restore would also bypass the cap.
        Ok(RestoreOutcome::NotSupported)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
