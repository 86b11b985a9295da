//! Following the server's tool list ([`Follow`]): the [`LiveSkills`](agent_core::LiveSkills)
//! sets made of a connection's tools, and their update once the server said its list changed.
//!
//! The server's `notifications/tools/list_changed` are counted as the transport reads them
//! (`Watched`), in the order the server sent its messages. The sets are brought up to date
//! (the list read again, each set's skills replaced) by whichever comes first: a call of the
//! server's tools that finished after the count grew, which waits for it (at most
//! [`FOLLOW_WAIT`]) before its result goes back, or the connection's background reader
//! (`changes.rs`), which the notification's handler wakes and which reads [`SETTLE`] after.
//! So a change the server announces before it answers a call is in place before the model
//! reads that answer, and one it makes on its own is in place a moment later.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::{DynSkill, WeakLiveSkills};
use rmcp::model::Tool;
use rmcp::{Peer, RoleClient};
use tokio::sync::mpsc;

use super::limits::CONNECT_TIMEOUT;
use crate::error::McpError;

/// How long a call that saw the server announce a change waits for the list to be read before
/// its result goes back without it (at most the call's own time limit).
pub(super) const FOLLOW_WAIT: Duration = Duration::from_secs(5);

/// How one set's skills are made from the tools the server lists now.
pub(super) type MakeSkills = Box<dyn Fn(&[Tool]) -> Vec<Arc<dyn DynSkill>> + Send + Sync>;

/// How long the background reader waits after an announcement before it reads the list: a
/// burst of announcements (a server adding tools one by one, or flooding) is read once, and the
/// reader reads at most once per this time whatever the server sends.
pub(super) const SETTLE: Duration = Duration::from_millis(100);

/// The live sets of one connection, and how far they follow the server's changes.
pub(super) struct Follow {
    /// The changes the server announced, counted by the transport.
    announced: Arc<AtomicU64>,
    /// The count the sets were last brought up to.
    applied: AtomicU64,
    /// The sets, each with how its skills are made; a set no registry holds any more is dropped.
    sets: Mutex<Vec<(WeakLiveSkills, MakeSkills)>>,
    /// One update at a time.
    flight: tokio::sync::Mutex<()>,
    /// Wakes the background reader (`changes.rs`); a wake already waiting stands for any
    /// number more. Dropped with the connection, which ends the reader.
    wake: mpsc::Sender<()>,
    /// The reader's end, until the reader takes it.
    wakes: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Default for Follow {
    fn default() -> Self {
        let (wake, wakes) = mpsc::channel(1);
        Follow {
            announced: Arc::default(),
            applied: AtomicU64::new(0),
            sets: Mutex::default(),
            flight: tokio::sync::Mutex::new(()),
            wake,
            wakes: Mutex::new(Some(wakes)),
        }
    }
}

impl Follow {
    /// Asks the background reader to bring the sets up to date.
    pub(super) fn wake(&self) {
        // Full means a wake is already waiting, which covers this one.
        let _ = self.wake.try_send(());
    }

    /// The background reader's end of the wakes; `None` once taken.
    pub(super) fn take_wakes(&self) -> Option<mpsc::Receiver<()>> {
        self.wakes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The count the transport adds the server's announcements to.
    pub(super) fn counter(&self) -> Arc<AtomicU64> {
        self.announced.clone()
    }

    /// Follows one more set.
    pub(super) fn add(&self, set: WeakLiveSkills, make: MakeSkills) {
        self.lock().push((set, make));
    }

    /// Whether the server announced a change the sets do not have yet.
    pub(super) fn is_behind(&self) -> bool {
        self.announced.load(Ordering::SeqCst) > self.applied.load(Ordering::SeqCst)
            && !self.lock().is_empty()
    }

    /// Brings the sets up to the changes announced so far, if they are behind (and there are
    /// any): reads the tool list from `peer` (within [`CONNECT_TIMEOUT`]) and replaces each set's
    /// skills. A failed read leaves the sets as they were and is not tried again before the next
    /// change.
    pub(super) async fn catch_up(
        &self,
        label: &str,
        peer: &Peer<RoleClient>,
    ) -> Result<(), McpError> {
        let _one = self.flight.lock().await;
        let target = self.announced.load(Ordering::SeqCst);
        if target <= self.applied.load(Ordering::SeqCst) || self.lock().is_empty() {
            return Ok(());
        }
        self.read(label, peer, target).await.map(drop)
    }

    /// Reads the tool list now, whatever was announced (an explicit refresh, a reconnection),
    /// brings the sets up to it and returns it.
    pub(super) async fn refresh(
        &self,
        label: &str,
        peer: &Peer<RoleClient>,
    ) -> Result<Vec<Tool>, McpError> {
        let _one = self.flight.lock().await;
        let target = self.announced.load(Ordering::SeqCst);
        self.read(label, peer, target).await
    }

    /// Reads the list and puts it in place in every set: the sets are then up to `target`.
    async fn read(
        &self,
        label: &str,
        peer: &Peer<RoleClient>,
        target: u64,
    ) -> Result<Vec<Tool>, McpError> {
        let listed = list_tools(label, peer).await;
        self.applied.fetch_max(target, Ordering::SeqCst);
        let tools = listed?;
        let mut sets = self.lock();
        sets.retain(|(set, make)| {
            let Some(set) = set.upgrade() else {
                return false;
            };
            for refused in set.replace(make(&tools)) {
                tracing::warn!(server = label, %refused, "a tool of the server's new list was left out");
            }
            true
        });
        tracing::debug!(
            server = label,
            tools = tools.len(),
            sets = sets.len(),
            "the server's tool list was read again"
        );
        Ok(tools)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(WeakLiveSkills, MakeSkills)>> {
        self.sets.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The server's tools, within [`CONNECT_TIMEOUT`].
pub(super) async fn list_tools(
    label: &str,
    peer: &Peer<RoleClient>,
) -> Result<Vec<Tool>, McpError> {
    tokio::time::timeout(CONNECT_TIMEOUT, peer.list_all_tools())
        .await
        .map_err(|_| McpError::Timeout {
            server: label.to_owned(),
            timeout: CONNECT_TIMEOUT,
        })?
        .map_err(|source| McpError::Service {
            server: label.to_owned(),
            action: "list its tools",
            source: Box::new(source),
        })
}
