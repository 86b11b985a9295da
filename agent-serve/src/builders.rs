//! [`edge_builders!`](crate::edge_builders): the builder methods a server that holds an
//! [`Edge`](crate::Edge) offers for it, written once. Each forwards to the edge's method of the
//! same name, so `McpServer::new(..).bearer_token(..)` and `A2aServer::new(..).bearer_token(..)`
//! mean the same thing and are documented in one place.

/// Inside an `impl` block of a type with a field `edge: agent_serve::Edge`, defines the
/// methods `edge`, `bearer_token`, `without_auth`, `allowed_origins`, `max_connections`,
/// `max_pending_connections`, `header_read_timeout` and `body_read_timeout`, each setting the
/// edge's setting of that name.
///
/// ```
/// pub struct Server {
///     edge: agent_serve::Edge,
/// }
///
/// impl Server {
///     agent_serve::edge_builders!();
/// }
///
/// let server = Server { edge: agent_serve::Edge::new() }.max_connections(8).without_auth();
/// # let _ = server;
/// ```
#[macro_export]
macro_rules! edge_builders {
    () => {
        /// Replaces the server's network settings with `edge`'s, whole (the methods below set
        /// one each). See [`agent_serve::Edge`].
        pub fn edge(mut self, edge: $crate::Edge) -> Self {
            self.edge = edge;
            self
        }

        /// Requires `Authorization: Bearer <token>` on every request (`401` otherwise); see
        /// [`agent_serve::Edge::bearer_token`]. Without it or `without_auth`, a token is
        /// generated when serving starts and printed on standard error.
        pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
            self.edge = self.edge.bearer_token(token);
            self
        }

        /// Serves without a token, on a loopback address only; see
        /// [`agent_serve::Edge::without_auth`].
        pub fn without_auth(mut self) -> Self {
            self.edge = self.edge.without_auth();
            self
        }

        /// Web origins whose pages may call the server from a browser; see
        /// [`agent_serve::Edge::allowed_origins`].
        pub fn allowed_origins(
            mut self,
            origins: impl IntoIterator<Item = impl Into<String>>,
        ) -> Self {
            self.edge = self.edge.allowed_origins(origins);
            self
        }

        /// At most `max` admitted connections (that sent a request with the token) at once;
        /// see [`agent_serve::Edge::max_connections`].
        pub fn max_connections(mut self, max: usize) -> Self {
            self.edge = self.edge.max_connections(max);
            self
        }

        /// At most `max` connections at once that have not sent a request with the token yet;
        /// see [`agent_serve::Edge::max_pending_connections`].
        pub fn max_pending_connections(mut self, max: usize) -> Self {
            self.edge = self.edge.max_pending_connections(max);
            self
        }

        /// How long a client has to send a request's head; see
        /// [`agent_serve::Edge::header_read_timeout`].
        pub fn header_read_timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.edge = self.edge.header_read_timeout(timeout);
            self
        }

        /// How long a client has to send a request's whole body; see
        /// [`agent_serve::Edge::body_read_timeout`].
        pub fn body_read_timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.edge = self.edge.body_read_timeout(timeout);
            self
        }
    };
}
