//! A state that comes back to the runtime, checked before anything runs: its format (a label
//! that claims an older version than its content is refused), its seal when the runtime seals
//! ([`pause/seal.rs`](crate::runtime::pause::seal)), and, once the decisions are checked too, its claim when the
//! runtime keeps [`PauseClaims`](crate::PauseClaims). States leave through [`leave`]: a new
//! pause id, and the seal.

use crate::runtime::AgentRuntime;
use crate::runtime::finish::agent_error::{AgentError, ResumeError};
use crate::runtime::pause::seal;
use crate::runtime::step::run_state::RunState;
use crate::session::SessionRecord;

/// Checks a state that came back: its format, then its seal.
pub(in crate::runtime) fn check(rt: &AgentRuntime, state: &mut RunState) -> Result<(), AgentError> {
    state.check_format()?;
    if let Some(keys) = &rt.settings.state_keys {
        seal::check(state, keys)?;
    }
    Ok(())
}

/// Claims the state's pause, when the runtime keeps claims: the last check before anything runs.
pub(in crate::runtime) async fn claim(
    rt: &AgentRuntime,
    state: &RunState,
) -> Result<(), AgentError> {
    let Some(claims) = &rt.settings.claims else {
        return Ok(());
    };
    let Some(pause_id) = state.pause_id() else {
        return Err(ResumeError::NoPauseId.into());
    };
    if claims.claim(pause_id).await? {
        Ok(())
    } else {
        Err(ResumeError::AlreadyContinued {
            pause_id: pause_id.to_owned(),
        }
        .into())
    }
}

/// A paused state about to leave: sealed, when the runtime seals. (Its pause id was given when
/// it paused.)
pub(in crate::runtime) fn leave(rt: &AgentRuntime, state: &mut RunState) -> Result<(), AgentError> {
    if let Some(keys) = &rt.settings.state_keys {
        seal::seal(state, keys)?;
    }
    Ok(())
}

/// Checks a session's record as it is loaded, when the runtime seals.
pub(in crate::runtime) fn check_record(
    rt: &AgentRuntime,
    id: &str,
    record: &mut SessionRecord,
) -> Result<(), AgentError> {
    if let Some(keys) = &rt.settings.state_keys {
        seal::check_record(id, record, keys)?;
    }
    Ok(())
}

/// Seals a session's record as it is saved, when the runtime seals.
pub(in crate::runtime) fn seal_record(
    rt: &AgentRuntime,
    id: &str,
    record: &mut SessionRecord,
) -> Result<(), AgentError> {
    if let Some(keys) = &rt.settings.state_keys {
        seal::seal_record(id, record, keys)?;
    }
    Ok(())
}

/// 128 random bits from the operating system, as 32 hex digits: a run's or a pause's id.
pub(in crate::runtime) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS's random source does not fail on the platforms Rust supports; should it, the
    // time and an address still make an id no other run has.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes.copy_from_slice(&now.to_le_bytes());
        bytes[0] ^= (&bytes as *const _ as usize) as u8;
    }
    agent_core::digest::hex(&bytes)
}
