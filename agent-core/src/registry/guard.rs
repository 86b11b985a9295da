//! What keeps one call from harming the others: a panic in a skill's or a hook's code becomes that
//! call's error, and a wait ends when the run is cancelled.

use std::panic::AssertUnwindSafe;
use std::task::Poll;

use crate::context::SkillContext;
use crate::error::SkillError;

/// Runs the skill's own synchronous code (parsing, starting); a panic in it is the call's error.
pub(super) fn guard_skill<T>(
    work: impl FnOnce() -> Result<T, SkillError>,
) -> Result<T, SkillError> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|panic| Err(panic_error(&*panic)))
}

/// The error a call gets when its skill panics.
pub(super) fn panic_error(panic: &(dyn std::any::Any + Send)) -> SkillError {
    SkillError::tool(format!("the skill panicked: {}", panic_message(panic)))
}

/// The error a call gets when a hook panics on it: the call is answered, the batch goes on.
pub(super) fn hook_panic_error(panic: &(dyn std::any::Any + Send)) -> SkillError {
    SkillError::tool(format!(
        "a hook panicked while handling this call: {}",
        panic_message(panic)
    ))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// Runs `work` unless or until the context is cancelled. The work is polled first, so work that
/// finishes at once never touches the cancellation token (which takes a lock).
pub(super) async fn until_cancelled<T>(
    ctx: &SkillContext,
    work: impl Future<Output = Result<T, SkillError>>,
) -> Result<T, SkillError> {
    let mut work = std::pin::pin!(work);
    if let Poll::Ready(result) =
        std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await
    {
        return result;
    }
    tokio::select! {
        biased;
        result = work => result,
        _ = ctx.cancellation().cancelled() => Err(SkillError::Cancelled),
    }
}
