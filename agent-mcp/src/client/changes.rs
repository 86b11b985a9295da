//! The background reader of a connection's changed tool list: woken by the handler of the
//! server's `notifications/tools/list_changed`, it waits [`SETTLE`], then brings the live sets up
//! to date (see `follow.rs`). It holds the connection only while it reads, and ends with it.

use std::sync::Arc;

use super::connection::Connection;
use super::follow::SETTLE;

/// Starts the reader of `connection`, once (a second call finds the wakes taken).
pub(super) fn spawn_reader(connection: &Arc<Connection>) {
    let Some(mut wakes) = connection.shared.follow.take_wakes() else {
        return;
    };
    let connection = Arc::downgrade(connection);
    tokio::spawn(async move {
        // `None` once the connection (and with it the sending end) is gone.
        while wakes.recv().await.is_some() {
            tokio::time::sleep(SETTLE).await;
            let Some(connection) = connection.upgrade() else {
                break;
            };
            let Ok((peer, _)) = connection.peer() else {
                continue;
            };
            let follow = &connection.shared.follow;
            if let Err(error) = follow.catch_up(&connection.label, &peer).await {
                tracing::warn!(server = connection.label, %error, "could not read the server's changed tool list");
            }
        }
    });
}
