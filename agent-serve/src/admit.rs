//! Admission as a tower layer, for a server whose requests go through a tower service (an axum
//! `Router` with tower-http layers) served by
//! [`accept_forever_tower`](crate::accept_forever_tower): the connection's place in the pools
//! travels with each request as an [`Admitter`] (a request extension), and an [`AdmitLayer`],
//! put after the layers that check a request (the `Origin`, the token), admits the connection
//! before the request goes further. A request refused by a check never reaches it, so its
//! connection stays pending and is closed after the answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Request;
use tower_layer::Layer;
use tower_service::Service;

use crate::admission::Admission;

/// A connection's place in the pools, in the extensions of each of its requests.
#[derive(Clone)]
pub struct Admitter(Arc<Admission>);

impl Admitter {
    pub(crate) fn new(admission: Arc<Admission>) -> Self {
        Admitter(admission)
    }

    /// Admits the connection (it takes an admitted slot, waiting for one); at once if it is
    /// admitted already.
    pub async fn admit(&self) {
        self.0.admit().await;
    }

    /// Whether the connection holds an admitted slot.
    pub fn is_admitted(&self) -> bool {
        self.0.is_admitted()
    }
}

impl std::fmt::Debug for Admitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitter")
            .field("admitted", &self.is_admitted())
            .finish()
    }
}

/// Admits a request's connection before the request reaches the service it wraps: put it after
/// the layers whose passing should admit (a request they refuse never reaches it). A request
/// without an [`Admitter`] (a service not served by
/// [`accept_forever_tower`](crate::accept_forever_tower), in a unit test say) goes through as it
/// is.
///
/// ```
/// use agent_serve::AdmitLayer;
/// use tower_layer::Layer;
///
/// # #[derive(Clone)] struct Inner;
/// let admitted = AdmitLayer.layer(Inner);
/// # let _ = admitted;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AdmitLayer;

impl<S> Layer<S> for AdmitLayer {
    type Service = Admit<S>;

    fn layer(&self, inner: S) -> Admit<S> {
        Admit { inner }
    }
}

/// The service of an [`AdmitLayer`].
#[derive(Debug, Clone)]
pub struct Admit<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for Admit<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service polled ready is the one called; a fresh clone stays for the next call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let admitter = request.extensions().get::<Admitter>().cloned();
        Box::pin(async move {
            if let Some(admitter) = admitter {
                admitter.admit().await;
            }
            inner.call(request).await
        })
    }
}
