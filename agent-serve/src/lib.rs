//! The connection handling of eugene's HTTP servers (agent-mcp's and agent-a2a's), written once:
//! a listener with a deep queue ([`bind`]), an accept loop that keeps going ([`accept_forever`]),
//! the pools that keep clients without the token from starving one with it, and the `Origin`
//! check against web pages ([`Origins`]). A server says which requests admit their connection
//! and answers them (a [`Service`]); what it answers, and its errors, stay its own.
//!
//! Both servers are reached over plain HTTP/1 by clients that must send a bearer token
//! (agent-bearer's checks), and both were open to the same
//! attack: a connection that never sends its request holds its place until the header timeout,
//! so a few hundred silent connections kept every real client waiting. The defence is the same
//! for both, and subtle enough to be written, documented and attacked in one place.
//!
//! # What a connection goes through
//!
//! - A connection is **pending** until one of its requests passes [`Service::admit`] (in both
//!   servers: the path, the `Origin`, the bearer token), which **admits** it. At most
//!   [`Limits::max_pending`] connections are pending and at most [`Limits::max_admitted`]
//!   admitted, so connections without the token never take an admitted slot. Any answer on a
//!   pending connection (a refusal, or a public answer such as A2A's agent card) carries
//!   `Connection: close` and ends it: keep-alive is offered to admitted connections only.
//! - New connections are accepted and read as they come, however many pending ones sit silent
//!   or send half a head. When the pending pool is full, the oldest pending connection that
//!   **waits on its client** (the server read everything it sent and found no whole request
//!   head) is closed, without an answer, to make room. One whose bytes have not been read yet
//!   is never chosen; and one told to close reads what it was sent first, so a request with the
//!   token that had arrived is still served. When no pending connection can be chosen (all are
//!   still to be read, or wait for an admitted slot), accepting pauses until one can, and new
//!   connections wait in the kernel's listen queue ([`LISTEN_BACKLOG`] with [`bind`]).
//! - A pending connection has [`Limits::first_head_timeout`] to send its first request head;
//!   clients send it as soon as they connect.
//! - An admitted connection keeps its slot until it closes. A request that passes the checks
//!   while every slot is taken waits for one; its connection stays counted as pending but is
//!   never closed to make room.
//! - A request's head may have at most [`Limits::max_header_bytes`] (`431` past it) and must
//!   arrive within [`Limits::header_read_timeout`], counted from when the server starts
//!   waiting for it: on a new connection and after each response on a kept-alive one, so the
//!   same limit closes idle keep-alive connections. A response being streamed is not limited.
//! - An error from `accept()` (out of file descriptors, say) is logged and retried after a
//!   pause that doubles from 10 ms to 1 s; it never ends [`accept_forever`].
//! - Connections closed without an answer are reset (`SO_LINGER` 0), so the server keeps no
//!   `TIME_WAIT` for them.
//! - Every accepted connection has `TCP_NODELAY`: an answer streamed in pieces (an event
//!   stream's last chunk) goes out as it is written instead of waiting for the client's delayed
//!   ACK, which cost every streamed MCP answer about 40 ms on loopback (agent-mcp's
//!   `benches/http_round_trip.rs`).
//!
//! Its limits (floods larger than the pending pool and the listen queue together, heads sent
//! in pieces, nothing counted per address) are written down with each server (agent-mcp's
//! `http` module, agent-a2a's `http` module), and attacked by their tests: agent-mcp's
//! `tests/http_churn.rs` and `tests/http/http_pools.rs`, agent-a2a's `tests/connections.rs`.
//!
//! # Using it
//!
//! ```no_run
//! use std::convert::Infallible;
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use agent_serve::{Limits, Origins, Service};
//! use bytes::Bytes;
//! use http_body_util::combinators::BoxBody;
//! use hyper::body::Incoming;
//! use hyper::{Request, Response};
//!
//! type Body = BoxBody<Bytes, Infallible>;
//!
//! struct Hello {
//!     origins: Origins,
//! }
//!
//! impl Service for Hello {
//!     type Body = Body;
//!     const NAME: &'static str = "hello";
//!
//!     fn admit(&self, request: &Request<Incoming>) -> Result<(), Box<Response<Body>>> {
//!         self.origins.check(request.headers()) // and the token, in a real server
//!     }
//!
//!     async fn serve(&self, _request: Request<Incoming>) -> Response<Body> {
//!         Response::new(agent_serve::ResponseBody::full(Bytes::from_static(b"hello")))
//!     }
//! }
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! let listener = agent_serve::bind("127.0.0.1:8080").await?;
//! let origins = Origins::new(&[], listener.local_addr()?).expect("no origins to check");
//! let limits = Limits {
//!     max_admitted: 256,
//!     max_pending: 256,
//!     first_head_timeout: Duration::from_secs(5),
//!     header_read_timeout: Duration::from_secs(10),
//!     max_header_bytes: 64 * 1024,
//! };
//! agent_serve::accept_forever(listener, Arc::new(Hello { origins }), limits).await;
//! # Ok(()) }
//! ```
//!
//! A server whose requests go through a tower service (agent-mcp's axum `Router` with
//! tower-http layers) hands it to [`accept_forever_tower`] instead, and puts an [`AdmitLayer`]
//! after the layers whose passing admits the connection: the pools and the rules above are the
//! same, the checks are layers.
//!
//! # Dependencies, and why
//!
//! `hyper` (HTTP/1 connections with a header-read timeout and a bound on the head; the request,
//! response and body types), `hyper-util` (hyper on tokio's sockets and timers),
//! `http-body-util` and `bytes` (the two boxed bodies a [`ResponseBody`] can be, and the `403`
//! this crate answers), `tokio` (the listener, a task per connection, timers, the pools'
//! semaphore and notices; 1.50 for `TcpStream::set_zero_linger`), `tracing` (accept errors and
//! closed connections, at `debug` and `warn`), `tower-service` and `tower-layer` (the traits of
//! [`accept_forever_tower`]'s service and of [`AdmitLayer`]). All of them were in both servers' builds
//! already; none is new to the workspace.

#![warn(missing_docs)]

mod admission;
mod admit;
mod connections;
mod loopback;
pub mod origin;
mod service;

pub use admit::{Admit, AdmitLayer, Admitter};
pub use connections::{LISTEN_BACKLOG, Limits, accept_forever, accept_forever_tower, bind};
pub use loopback::is_loopback;
pub use origin::Origins;
pub use service::{ResponseBody, Service};
