//! A connection's place in the pools, travelling with each of its requests as an [`Admitter`]
//! (a request extension put there by [`crate::connections`]), so that the
//! [`Guard`](crate::Guard) of a route can admit the connection once the request passed its
//! checks. A request refused before that never admits its connection: it stays pending, and is
//! closed after the answer.

use std::sync::Arc;

use crate::admission::Admission;

/// A connection's place in the pools, in the extensions of each of its requests.
#[derive(Clone)]
pub(crate) struct Admitter(Arc<Admission>);

impl Admitter {
    pub(crate) fn new(admission: Arc<Admission>) -> Self {
        Admitter(admission)
    }

    /// Admits the connection (it takes an admitted slot, waiting for one); at once if it is
    /// admitted already.
    pub(crate) async fn admit(&self) {
        self.0.admit().await;
    }
}
