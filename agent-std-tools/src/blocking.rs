//! Work on blocking threads that still honours the call's time limit and cancellation: a
//! [`Stop`] flag set when the call's future is dropped or its run is cancelled, a reader that
//! fails once it is set, and the one way the skills move work off the async threads.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_core::{CancellationToken, SkillContext, SkillError};

/// Runs `work` on a blocking thread, for work that is bounded by itself (one file, one database
/// transaction). A panic in it is the call's error, in words.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SkillError> + Send + 'static,
) -> Result<T, SkillError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        if e.is_panic() {
            SkillError::tool(format!(
                "failed unexpectedly: {}",
                panic_text(e.into_panic().as_ref())
            ))
        } else {
            SkillError::from_error(e)
        }
    })?
}

/// The message of a panic's payload.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// Tells work on a blocking thread to stop: set when the future waiting for it is dropped (the
/// call's time limit passed, or its run was cancelled and the registry dropped the call) and when
/// the context's cancellation token fires. Shared by the skills that work on blocking threads.
#[derive(Clone)]
pub(crate) struct Stop {
    dropped: Arc<AtomicBool>,
    token: CancellationToken,
}

impl Stop {
    /// A flag no one sets: for callers without a context.
    pub(crate) fn never() -> Stop {
        Stop {
            dropped: Arc::default(),
            token: CancellationToken::new(),
        }
    }

    /// Whether the work should stop. Cheap enough to ask between reads, not per byte: the token
    /// takes a lock.
    pub(crate) fn is_set(&self) -> bool {
        self.dropped.load(Ordering::Relaxed) || self.token.is_cancelled()
    }

    /// Only the flag set by dropping the future: an atomic load, for hot loops.
    pub(crate) fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on a blocking thread with a [`Stop`] that is set when this future is dropped or
/// `ctx` is cancelled; the work should check it and return early.
pub(crate) async fn blocking_until_stopped<T: Send + 'static>(
    ctx: &SkillContext,
    work: impl FnOnce(&Stop) -> Result<T, SkillError> + Send + 'static,
) -> Result<T, SkillError> {
    let stop = Stop {
        dropped: Arc::default(),
        token: ctx.cancellation().clone(),
    };
    let _set_on_drop = SetOnDrop(stop.dropped.clone());
    tokio::task::spawn_blocking(move || work(&stop))
        .await
        .map_err(SkillError::from_error)?
}

/// A reader that fails once `stop` is set, so that the work reading from it ends at its next
/// read.
pub(crate) struct StopReader<'a, R> {
    /// What is read.
    pub(crate) inner: R,
    /// When to stop.
    pub(crate) stop: &'a Stop,
}

impl<R: Read> Read for StopReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_set() {
            return Err(std::io::Error::other(
                "stopped: the call was cancelled or timed out",
            ));
        }
        self.inner.read(buf)
    }
}
