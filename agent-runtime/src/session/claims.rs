//! Single use of a paused state: [`PauseClaims`] records each pause as it is continued, so the
//! same state continued twice — by two processes, or again from a copy — runs its approved calls
//! once. A runtime given one ([`AgentRuntime::pause_claims`](crate::AgentRuntime::pause_claims))
//! claims a state's [`pause_id`](crate::RunState::pause_id) after its checks pass and before
//! anything runs; a pause claimed before is refused with [`AgentError::Resume`](
//! crate::AgentError::Resume).
//!
//! A session's paused run needs none: its version check claims it already. What a claim cannot
//! see is a rollback of the claims themselves: keep them where the states are not (a state in a
//! queue, its claims in a [`RedbSessionStore`](super::RedbSessionStore) file; a session file,
//! its claims in another), so restoring an old copy of one leaves the other's record.

use async_trait::async_trait;

use super::error::StoreError;

/// Records which pauses were continued. Implementations make [`PauseClaims::claim`] atomic: of
/// two claims of one pause, exactly one gets `true`.
#[async_trait]
pub trait PauseClaims: Send + Sync {
    /// Claims the pause `pause_id`: `true` the first time, `false` ever after.
    async fn claim(&self, pause_id: &str) -> Result<bool, StoreError>;
}
