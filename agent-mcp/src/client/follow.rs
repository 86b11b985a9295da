//! Following the server's lists ([`Follow`]): the [`LiveSkills`](agent_core::LiveSkills) sets
//! made of a connection's tools (and its resources, for a `read_resource` skill, whose
//! description lists them), and their update once the server said a list changed.
//!
//! The server's `notifications/tools/list_changed` and `notifications/resources/list_changed`
//! are counted as the transport reads them (`Watched`), in the order the server sent its
//! messages. The sets are brought up to date (the list read again, each set's skills replaced)
//! by whichever comes first: a call of the server's tools that finished after a count grew,
//! which waits for it (at most [`FOLLOW_WAIT`]) before its result goes back, or the
//! connection's background reader (`changes.rs`), which the notification's handler wakes and
//! which reads [`SETTLE`] after. So a change the server announces before it answers a call is in
//! place before the model reads that answer, and one it makes on its own is in place a moment
//! later.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::{DynSkill, LiveSkills, WeakLiveSkills};
use rmcp::model::Tool;
use rmcp::{Peer, RoleClient};
use tokio::sync::mpsc;

use super::pages::{bounded, resource_uris};
use crate::error::McpError;

/// How long a call that saw the server announce a change waits for the list to be read before
/// its result goes back without it (at most the call's own time limit).
pub(super) const FOLLOW_WAIT: Duration = Duration::from_secs(5);

/// How long the background reader waits after an announcement before it reads the list: a
/// burst of announcements (a server adding tools one by one, or flooding) is read once, and the
/// reader reads at most once per this time whatever the server sends.
pub(super) const SETTLE: Duration = Duration::from_millis(100);

/// How one set's skills are made from the server's tools and resource URIs as they are now.
pub(super) type MakeSkills =
    Box<dyn Fn(&[Tool], &[String]) -> Vec<Arc<dyn DynSkill>> + Send + Sync>;

/// The announcements of one list the transport counted, and how far the sets follow them.
#[derive(Default)]
struct Counted {
    announced: Arc<AtomicU64>,
    applied: AtomicU64,
}

impl Counted {
    /// The count to bring the sets up to, if they are behind it.
    fn behind(&self) -> Option<u64> {
        let target = self.announced.load(Ordering::SeqCst);
        (target > self.applied.load(Ordering::SeqCst)).then_some(target)
    }
}

/// One set that follows the server.
struct Follower {
    set: WeakLiveSkills,
    make: MakeSkills,
    /// Whether its skills list the server's resources (a `read_resource` skill).
    resources: bool,
}

/// The sets, and the lists they were last made of.
#[derive(Default)]
struct Followed {
    sets: Vec<Follower>,
    /// `None` until a set was made.
    tools: Option<Vec<Tool>>,
    uris: Option<Vec<String>>,
}

/// The live sets of one connection, and how far they follow the server's changes.
pub(super) struct Follow {
    tools: Counted,
    resources: Counted,
    followed: Mutex<Followed>,
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
            tools: Counted::default(),
            resources: Counted::default(),
            followed: Mutex::default(),
            flight: tokio::sync::Mutex::new(()),
            wake,
            wakes: Mutex::new(Some(wakes)),
        }
    }
}

impl Follow {
    /// The counts the transport adds the server's announcements to: of the tool list, and of
    /// the resource list.
    pub(super) fn counters(&self) -> (Arc<AtomicU64>, Arc<AtomicU64>) {
        (
            self.tools.announced.clone(),
            self.resources.announced.clone(),
        )
    }

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

    /// The lists as read last: `tools` and `uris` were read by the application (when
    /// connecting, or asked for); the sets' reads since then are newer.
    fn latest(&self, tools: &[Tool], uris: &[String]) -> (Vec<Tool>, Vec<String>) {
        let followed = self.lock();
        (
            followed.tools.clone().unwrap_or_else(|| tools.to_vec()),
            followed.uris.clone().unwrap_or_else(|| uris.to_vec()),
        )
    }

    /// Makes a set of `make`'s skills of the lists as they are now ([`Follow::latest`]), and
    /// follows it.
    pub(super) fn follow(
        &self,
        tools: &[Tool],
        uris: &[String],
        resources: bool,
        make: MakeSkills,
    ) -> Result<LiveSkills, agent_core::RegistryError> {
        let (tools, uris) = self.latest(tools, uris);
        let set = LiveSkills::try_new(make(&tools, &uris))?;
        let mut followed = self.lock();
        followed.tools = Some(tools);
        followed.uris = Some(uris);
        followed.sets.push(Follower {
            set: set.downgrade(),
            make,
            resources,
        });
        Ok(set)
    }

    /// Whether the server announced a change the sets do not have yet.
    pub(super) fn is_behind(&self) -> bool {
        let followed = self.lock();
        !followed.sets.is_empty()
            && (self.tools.behind().is_some()
                || (self.resources.behind().is_some() && followed.sets.iter().any(|f| f.resources)))
    }

    /// Brings the sets up to the changes announced so far, if they are behind: reads what
    /// changed from `peer` (each request within `CONNECT_TIMEOUT`) and replaces each set's
    /// skills. A failed read leaves the sets as they were and is not tried again before the next
    /// change.
    pub(super) async fn catch_up(
        &self,
        label: &str,
        peer: &Peer<RoleClient>,
    ) -> Result<(), McpError> {
        let _one = self.flight.lock().await;
        if !self.is_behind() {
            return Ok(());
        }
        let tools = match self.tools.behind() {
            Some(target) => Some(
                self.read(&self.tools, target, list_tools(label, peer))
                    .await?,
            ),
            None => None,
        };
        let uris = match self.resources.behind() {
            Some(target) if self.lock().sets.iter().any(|f| f.resources) => Some(
                self.read(&self.resources, target, resource_uris(label, peer))
                    .await?,
            ),
            _ => None,
        };
        self.apply(label, tools, uris);
        Ok(())
    }

    /// Reads the tool list now, whatever was announced (an explicit refresh, a reconnection),
    /// brings the sets up to it and returns it.
    pub(super) async fn refresh(
        &self,
        label: &str,
        peer: &Peer<RoleClient>,
    ) -> Result<Vec<Tool>, McpError> {
        let _one = self.flight.lock().await;
        let target = self.tools.announced.load(Ordering::SeqCst);
        let tools = self
            .read(&self.tools, target, list_tools(label, peer))
            .await?;
        self.apply(label, Some(tools.clone()), None);
        Ok(tools)
    }

    /// Reads one list: the sets are then up to `target` of its announcements, read or not.
    async fn read<T>(
        &self,
        counted: &Counted,
        target: u64,
        read: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        let listed = read.await;
        counted.applied.fetch_max(target, Ordering::SeqCst);
        listed
    }

    /// Puts the lists read in place, and each set's skills of them.
    fn apply(&self, label: &str, tools: Option<Vec<Tool>>, uris: Option<Vec<String>>) {
        let mut followed = self.lock();
        if tools.is_some() {
            followed.tools = tools;
        }
        if uris.is_some() {
            followed.uris = uris;
        }
        let Followed { sets, tools, uris } = &mut *followed;
        let tools = tools.as_deref().unwrap_or_default();
        let uris = uris.as_deref().unwrap_or_default();
        sets.retain(|follower| {
            let Some(set) = follower.set.upgrade() else {
                return false;
            };
            for refused in set.replace((follower.make)(tools, uris)) {
                tracing::warn!(server = label, %refused, "a tool of the server's new list was left out");
            }
            true
        });
        tracing::debug!(
            server = label,
            tools = tools.len(),
            sets = sets.len(),
            "the server's lists were read again"
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Followed> {
        self.followed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The server's tools, within `CONNECT_TIMEOUT`.
pub(super) async fn list_tools(
    label: &str,
    peer: &Peer<RoleClient>,
) -> Result<Vec<Tool>, McpError> {
    bounded(label, "list its tools", peer.list_all_tools()).await
}
