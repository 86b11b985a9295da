//! eugene's network edge, written once: one crate owns listening, admission, bearer tokens,
//! the `Origin` and `Host` checks, body limits and deadlines, for every HTTP server eugene has
//! (MCP's and A2A's; an application's own routes too). A server is an axum `Router`; an
//! [`Edge`] (one options value) serves it; a route that needs the token wears a [`Guard`].
//! So MCP and A2A can share a port, and either can be mounted in an application's own app:
//!
//! ```no_run
//! # async fn routes() -> (axum::Router, axum::Router) { unimplemented!() }
//! # #[tokio::main] async fn main() -> Result<(), agent_serve::EdgeError> {
//! # let (mcp, a2a) = routes().await;
//! // mcp = McpServer::new(registry).into_router()?, a2a = A2aServer::new(runtime).into_router()?
//! let app = axum::Router::new().merge(mcp).merge(a2a);
//! agent_serve::Edge::new()
//!     .bearer_token(agent_serve::generate_token()?)
//!     .serve("127.0.0.1:8080", app)
//!     .await
//! # }
//! ```
//!
//! Both servers are reached over plain HTTP/1 by clients that must send a bearer token, and both
//! were open to the same attacks (a connection that never sends its request holds its place
//! until the header timeout, so a few hundred silent connections kept every real client
//! waiting; a page in a browser calling a local server). The defences are the same for both,
//! and subtle enough to be written, documented and attacked in one place.
//!
//! # What a request goes through
//!
//! Every request, whatever its path (`Edge`'s front, `src/edge.rs`):
//!
//! 1. **`Host`** (`src/host.rs`): two `Host` headers → `400`; a target in absolute form is
//!    taken under the target's host.
//! 2. **`Origin`** (`src/origin.rs`): present and not allowed → `403`. The rule: no `Origin`
//!    (every client that is not a browser) passes; an origin listed with
//!    [`Edge::allowed_origins`] passes; on a loopback bind the server's own
//!    `http://localhost:PORT`, `http://127.0.0.1:PORT`, `http://[::1]:PORT` pass; anything
//!    else (`null`, malformed, repeated) is refused. Compared as RFC 6454 tuples.
//!
//! Then routing; on a route with a [`Guard`] (`src/guard.rs`):
//!
//! 3. **CORS preflights** answered (tower-http's `CorsLayer`, for origins that passed step 2).
//! 4. **Bearer token** (`src/bearer.rs`): missing or wrong → `401` with
//!    `WWW-Authenticate: Bearer realm="…"`, compared in constant time. Passing it **admits**
//!    the connection (below).
//! 5. **Body** (`src/body.rs`): at most [`Edge::max_body_bytes`] (`413`), whole within
//!    [`Edge::body_read_timeout`] (`408` and `Connection: close`).
//!
//! A route without a guard (A2A's public agent card, a `404`) is answered on a connection that
//! stays pending, so the answer carries `Connection: close`. A guarded route served outside an
//! `Edge` is answered `500`: it is never open by mistake.
//!
//! # What a connection goes through
//!
//! - A connection is **pending** until one of its requests passes a route's [`Guard`] (the
//!   `Origin`, the bearer token), which **admits** it. At most
//!   [`Edge::max_pending_connections`] connections are pending and at most
//!   [`Edge::max_connections`] admitted, so connections without the token never take an admitted slot. Any answer on a
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
//! - A pending connection has half of [`Edge::header_read_timeout`] to send its first head;
//!   clients send it as soon as they connect.
//! - An admitted connection keeps its slot until it closes. A request that passes the checks
//!   while every slot is taken waits for one; its connection stays counted as pending but is
//!   never closed to make room.
//! - A request's head may have at most [`MAX_HEADER_BYTES`] (`431` past it) and must
//!   arrive within [`Edge::header_read_timeout`], counted from when the server starts
//!   waiting for it: on a new connection and after each response on a kept-alive one, so the
//!   same limit closes idle keep-alive connections. A response being streamed is not limited.
//! - An error from `accept()` (out of file descriptors, say) is logged and retried after a
//!   pause that doubles from 10 ms to 1 s; it never ends [`Edge::serve`].
//! - A write that waits on a client that takes nothing (its receive window full: it never reads
//!   the stream it asked for) for [`Edge::write_timeout`] ends the connection (reset), so such a
//!   client cannot hold an admitted slot for ever; the timer runs only while a write waits.
//! - Connections closed without an answer are reset (`SO_LINGER` 0), so the server keeps no
//!   `TIME_WAIT` for them.
//! - Every accepted connection has `TCP_NODELAY`: an answer streamed in pieces (an event
//!   stream's last chunk) goes out as it is written instead of waiting for the client's delayed
//!   ACK, which cost every streamed MCP answer about 40 ms on loopback (agent-mcp's
//!   `benches/http_round_trip.rs`).
//!
//! Limits:
//!
//! - More token-less connection attempts at once than the pending pool plus the listen queue
//!   fill the queue, and the kernel drops new attempts, a client's with them (clients retry
//!   after 1, 3, 7 s). Floods that large need a firewall (connections per address).
//! - A head sent in pieces may be closed between two of them while the pending pool is full of
//!   connections waiting on their clients. Clients send a head at once, on connecting.
//! - Nothing is counted per address: an attacker on the same host or behind the same proxy has
//!   the client's address, and one with many addresses would not be slowed by it.
//! - Clients with the token compete with each other for the admitted slots.
//! - Without a token ([`Edge::without_auth`], loopback only), every request that reaches a
//!   guarded route admits its connection.
//!
//! The attacks on all this run through each server's one-line `serve` and through one edge
//! serving both: agent-mcp's `tests/http_churn.rs`, `tests/http/*.rs`, agent-a2a's
//! `tests/connections.rs`, and the workspace's `tests/one_edge.rs`.
//!
//! # Dependencies, and why
//!
//! `hyper` (HTTP/1 connections with a header-read timeout and a bound on the head; the request
//! and response types), `hyper-util` (hyper on tokio's sockets and timers), `axum` (the
//! `Router` servers are written as; no default features: the router only, since `axum::serve`
//! accepts without bound), `tower-http` (the CORS preflights), `http-body-util` (the body's
//! size limit, `Limited`), `tokio` (the listener, a task per connection, timers, the pools'
//! semaphore and notices; 1.50 for `TcpStream::set_zero_linger`), `tracing` (accept errors and
//! closed connections), `tower-service` and `tower-layer` (the traits of the front service and
//! of [`Guard`]), `getrandom` (a token's 32 random bytes), `subtle` (comparing tokens in
//! constant time), `thiserror` ([`EdgeError`]). All of them were in the servers' builds already.

#![warn(missing_docs)]

mod admission;
mod admit;
mod answers;
mod bearer;
mod body;
mod builders;
mod connections;
mod edge;
mod error;
mod guard;
mod host;
mod loopback;
mod origin;
mod rules;

pub use answers::plain;
pub use bearer::{MIN_TOKEN_LEN, TOKEN_BYTES, generate_token, validate_token};
pub use connections::{LISTEN_BACKLOG, bind};
pub use edge::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PENDING_CONNECTIONS, DEFAULT_WRITE_TIMEOUT, Edge,
    MAX_HEADER_BYTES,
};
pub use error::EdgeError;
pub use guard::{Guard, Guarded};
pub use loopback::is_loopback;
pub use rules::Bound;
