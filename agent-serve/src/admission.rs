//! The two pools a server counts its connections in: **pending** (no request that passed the
//! checks yet; bounded, the oldest that waits on its client closed to make room) and
//! **admitted** (a request passed the checks; bounded, a slot held until the connection
//! closes). [`crate::connections`] moves connections through them; the rules are in the
//! [crate docs](crate).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot};

/// The pending pool and the admitted slots of one server.
pub(crate) struct Pools {
    max_pending: usize,
    pending: Mutex<Pending>,
    /// Told whenever a pending place may have become free or closable.
    changed: Notify,
    admitted: Arc<Semaphore>,
}

/// The pending connections, each with the sender that tells it to close, by id (the order of
/// arrival): those whose bytes the server has not all read yet, those that wait on their
/// client (everything sent was read, no whole head), and how many passed the checks and wait
/// for an admitted slot.
#[derive(Default)]
struct Pending {
    next_id: u64,
    unread: BTreeMap<u64, oneshot::Sender<()>>,
    idle: BTreeMap<u64, oneshot::Sender<()>>,
    waiting: usize,
}

impl Pending {
    fn len(&self) -> usize {
        self.unread.len() + self.idle.len() + self.waiting
    }

    /// Takes connection `id` out of the closable ones; `false` when it was told to close.
    fn take(&mut self, id: u64) -> bool {
        self.unread.remove(&id).is_some() || self.idle.remove(&id).is_some()
    }
}

impl Pools {
    /// Pools of `max_pending` pending places and `max_admitted` admitted slots.
    pub(crate) fn new(max_pending: usize, max_admitted: usize) -> Arc<Self> {
        Arc::new(Pools {
            max_pending,
            pending: Mutex::default(),
            changed: Notify::new(),
            admitted: Arc::new(Semaphore::new(max_admitted)),
        })
    }

    /// Counts a new connection as pending; when the pool is full, first tells the oldest
    /// connection that waits on its client to close, and waits while there is none (every
    /// pending connection is still to be read or waits for an admitted slot). The receiver is
    /// told when the connection is to close and sees its sender dropped when the connection
    /// leaves the closable ones.
    pub(crate) async fn enter(pools: &Arc<Pools>) -> (Admission, oneshot::Receiver<()>) {
        loop {
            if let Some(entered) = Pools::try_enter(pools) {
                return entered;
            }
            pools.changed.notified().await;
        }
    }

    fn try_enter(pools: &Arc<Pools>) -> Option<(Admission, oneshot::Receiver<()>)> {
        let mut pending = pools.lock();
        if pending.len() >= pools.max_pending {
            let (_, oldest) = pending.idle.pop_first()?;
            // It may have closed already; its place is free either way.
            let _ = oldest.send(());
        }
        let id = pending.next_id;
        pending.next_id += 1;
        let (tell, told) = oneshot::channel();
        pending.unread.insert(id, tell);
        let admission = Admission {
            pools: pools.clone(),
            id,
            idle: AtomicBool::new(false),
            stage: Mutex::new(Stage::Pending),
        };
        Some((admission, told))
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where one connection stands.
enum Stage {
    /// Counted as pending, closable (unless it was told to close already).
    Pending,
    /// Passed the checks and waits for an admitted slot; `counted` as pending unless it had
    /// been told to close before.
    Waiting { counted: bool },
    /// Holds an admitted slot.
    Admitted {
        /// Given back when the connection closes.
        _slot: OwnedSemaphorePermit,
    },
}

/// One connection's place in the [`Pools`], given back when dropped.
pub(crate) struct Admission {
    pools: Arc<Pools>,
    id: u64,
    /// Whether it was moved to the connections that wait on their client.
    idle: AtomicBool,
    stage: Mutex<Stage>,
}

impl Admission {
    /// Records that the server read everything the client sent without finding a whole head;
    /// from now on the connection may be closed to make room.
    pub(crate) fn waits_on_client(&self) {
        if self.idle.swap(true, Ordering::Relaxed) || !self.is_pending() {
            return;
        }
        let mut pending = self.pools.lock();
        if let Some(tell) = pending.unread.remove(&self.id) {
            pending.idle.insert(self.id, tell);
            drop(pending);
            self.pools.changed.notify_one();
        }
    }

    /// Moves the connection, whose request passed the checks, to an admitted slot, waiting for
    /// one. A connection told to close meanwhile is admitted too: its request has the token.
    pub(crate) async fn admit(&self) {
        {
            let mut stage = self.stage();
            match *stage {
                Stage::Admitted { .. } | Stage::Waiting { .. } => {}
                Stage::Pending => {
                    let mut pending = self.pools.lock();
                    let counted = pending.take(self.id);
                    if counted {
                        pending.waiting += 1;
                    }
                    *stage = Stage::Waiting { counted };
                }
            }
            if let Stage::Admitted { .. } = *stage {
                return;
            }
        }
        // The semaphore is never closed.
        let Ok(slot) = self.pools.admitted.clone().acquire_owned().await else {
            return;
        };
        let mut stage = self.stage();
        if let Stage::Waiting { counted: true } = *stage {
            self.pools.lock().waiting -= 1;
            self.pools.changed.notify_one();
        }
        *stage = Stage::Admitted { _slot: slot };
    }

    /// Whether no request of the connection has passed the checks.
    pub(crate) fn is_pending(&self) -> bool {
        matches!(*self.stage(), Stage::Pending)
    }

    /// Whether the connection holds an admitted slot.
    pub(crate) fn is_admitted(&self) -> bool {
        matches!(*self.stage(), Stage::Admitted { .. })
    }

    fn stage(&self) -> MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let freed = match *self.stage() {
            Stage::Pending => self.pools.lock().take(self.id),
            Stage::Waiting { counted: true } => {
                self.pools.lock().waiting -= 1;
                true
            }
            Stage::Waiting { counted: false } | Stage::Admitted { .. } => false,
        };
        if freed {
            self.pools.changed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// (unread, idle, waiting, free admitted slots)
    fn counts(pools: &Pools) -> (usize, usize, usize, usize) {
        let pending = pools.lock();
        (
            pending.unread.len(),
            pending.idle.len(),
            pending.waiting,
            pools.admitted.available_permits(),
        )
    }

    /// Whether `enter` would wait.
    async fn enter_waits(pools: &Arc<Pools>) -> bool {
        tokio::time::timeout(Duration::from_millis(50), Pools::enter(pools))
            .await
            .is_err()
    }

    #[tokio::test]
    async fn a_full_pool_closes_its_oldest_connection_that_waits_on_its_client() {
        let pools = Pools::new(3, 1);
        let (unread, mut unread_told) = Pools::enter(&pools).await;
        let (first, mut first_told) = Pools::enter(&pools).await;
        let (second, mut second_told) = Pools::enter(&pools).await;
        second.waits_on_client();
        first.waits_on_client();
        let (_new, _) = Pools::enter(&pools).await;
        assert!(first_told.try_recv().is_ok(), "the oldest idle one is told");
        assert!(second_told.try_recv().is_err(), "the younger one stays");
        assert!(unread_told.try_recv().is_err(), "one not read yet stays");
        assert_eq!(counts(&pools), (2, 1, 0, 1));
        drop((unread, first));
    }

    #[tokio::test]
    async fn a_full_pool_of_connections_not_read_yet_makes_the_next_one_wait() {
        let pools = Pools::new(2, 1);
        let (first, _) = Pools::enter(&pools).await;
        let (_second, _) = Pools::enter(&pools).await;
        assert!(enter_waits(&pools).await);
        // Read and found waiting on its client: now it can make room.
        first.waits_on_client();
        let (_third, _) = Pools::enter(&pools).await;
        assert_eq!(counts(&pools), (2, 0, 0, 1));
    }

    #[tokio::test]
    async fn an_admitted_connection_leaves_the_pending_pool_and_frees_its_slot_when_dropped() {
        let pools = Pools::new(2, 1);
        let (admission, mut told) = Pools::enter(&pools).await;
        admission.admit().await;
        assert!(admission.is_admitted());
        assert!(matches!(
            told.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert_eq!(counts(&pools), (0, 0, 0, 0));
        let mut others = Vec::new();
        for _ in 0..5 {
            let (other, _) = Pools::enter(&pools).await;
            other.waits_on_client();
            others.push(other);
        }
        assert!(admission.is_admitted(), "never closed to make room");
        drop(admission);
        assert_eq!(counts(&pools), (0, 2, 0, 1));
    }

    #[tokio::test]
    async fn a_connection_told_to_close_is_still_admitted_and_uncounted() {
        let pools = Pools::new(1, 1);
        let (old, _) = Pools::enter(&pools).await;
        old.waits_on_client();
        let (_new, _) = Pools::enter(&pools).await;
        old.admit().await;
        assert!(old.is_admitted());
        assert_eq!(counts(&pools), (1, 0, 0, 0));
        drop(old);
        assert_eq!(counts(&pools), (1, 0, 0, 1));
    }

    #[tokio::test]
    async fn connections_waiting_for_a_slot_are_not_closed_to_make_room() {
        let pools = Pools::new(1, 1);
        let (holder, _) = Pools::enter(&pools).await;
        holder.admit().await;
        let (waiter, _) = Pools::enter(&pools).await;
        let waiter = Arc::new(waiter);
        let waiting = tokio::spawn({
            let waiter = waiter.clone();
            async move { waiter.admit().await }
        });
        while counts(&pools).2 == 0 {
            tokio::task::yield_now().await;
        }
        assert!(enter_waits(&pools).await, "no room can be made");
        drop(holder);
        waiting.await.unwrap();
        assert!(waiter.is_admitted(), "admitted once the slot is free");
        assert_eq!(counts(&pools), (0, 0, 0, 0));
        let (_next, _) = Pools::enter(&pools).await;
    }
}
