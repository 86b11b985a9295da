//! What a server gives [`accept_forever`](crate::accept_forever): a [`Service`] that decides
//! which requests admit their connection and answers them, with responses of a
//! [`ResponseBody`] type of its choosing.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http_body_util::combinators::{BoxBody, UnsyncBoxBody};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::{Request, Response};

/// The body of a server's responses: one of the two boxed bodies of `http-body-util`, chosen by
/// the server. [`BoxBody`] is `Send + Sync` (agent-mcp, whose bodies come from rmcp as such);
/// [`UnsyncBoxBody`] is `Send` only, so that a stream which is not `Sync` can be a body
/// (agent-a2a's server-sent events). What this crate answers itself (the `Origin` check's
/// `403`) is made with [`ResponseBody::full`].
pub trait ResponseBody: Body<Data = Bytes, Error = Infallible> + Send + Sized + 'static {
    /// A body of these bytes, whole.
    fn full(bytes: Bytes) -> Self;
}

impl ResponseBody for BoxBody<Bytes, Infallible> {
    fn full(bytes: Bytes) -> Self {
        Full::new(bytes).boxed()
    }
}

impl ResponseBody for UnsyncBoxBody<Bytes, Infallible> {
    fn full(bytes: Bytes) -> Self {
        Full::new(bytes).boxed_unsync()
    }
}

/// What answers the requests of a connection: the checks that admit it, then the answer.
///
/// [`accept_forever`](crate::accept_forever) calls [`Service::admit`] on each request's head;
/// `Ok` admits the connection (it takes an admitted slot, waiting for one, before
/// [`Service::serve`] runs), `Err` is answered as it is and leaves the connection pending, so
/// the answer carries `Connection: close` and the connection ends after it.
pub trait Service: Send + Sync + 'static {
    /// The body of the responses.
    type Body: ResponseBody;

    /// What the server is called in its log events (`MCP`, `A2A`).
    const NAME: &'static str;

    /// The checks whose passing admits the connection (the path, the `Origin`, the token), or
    /// the answer to give without admitting it: a refusal (`401`, `403`, `404`), or something
    /// anyone may read (A2A's agent card). Only the head has been read; nothing of the body.
    fn admit(&self, request: &Request<Incoming>) -> Result<(), Box<Response<Self::Body>>>;

    /// Answers a request that passed [`Service::admit`], on an admitted connection.
    fn serve(
        &self,
        request: Request<Incoming>,
    ) -> impl Future<Output = Response<Self::Body>> + Send;
}
