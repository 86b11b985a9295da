//! Sealed states: a [`RunState`] that leaves the runtime carries an HMAC-SHA-256 of its canonical
//! bytes under the application's key ([`StateKeys`], set with [`AgentRuntime::seal_states`](
//! crate::runtime::AgentRuntime::seal_states)), and one that comes back is checked before anything runs.
//! A state that was changed, sealed with a key the runtime does not accept, or not sealed at all
//! is refused with a [`SealError`]: nothing runs, nothing is saved.
//!
//! The bytes sealed are the state as this build writes it, as canonical JSON (keys sorted, no
//! white space: [`agent_core::digest::canonical_json`]), after a fixed label, so a seal does not
//! depend on the serde format the application keeps the state in. Keys rotate: the current key
//! seals, older keys are accepted for reading ([`StateKeys::accept`]).
//!
//! ```
//! use agent_runtime::StateKeys;
//!
//! let keys = StateKeys::new("2026-12", [7u8; 32])
//!     .unwrap()
//!     .accept("2026-11", [3u8; 32])
//!     .unwrap();
//! assert_eq!(keys.current_id(), "2026-12");
//! assert!(StateKeys::new("short", [1u8; 8]).is_err(), "a key has at least 32 bytes");
//! ```

use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

use crate::runtime::step::run_state::{RunState, Seal};
use crate::session::SessionRecord;

/// The label every sealed state starts with: a seal of something else never checks here.
const LABEL: &[u8] = b"eugene run state\0";

/// The label every sealed session record starts with.
const RECORD_LABEL: &[u8] = b"eugene session record\0";

/// The shortest key accepted, in bytes: HMAC-SHA-256's own block of security.
pub const MIN_KEY_LEN: usize = 32;

/// The keys a runtime seals states with and accepts them under: one current key, which seals,
/// and older ones, accepted for reading while states sealed with them are still about. Each has
/// an id, written in the seal, so the right key is found without trying each.
#[derive(Clone)]
pub struct StateKeys {
    current: (String, Vec<u8>),
    accepted: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for StateKeys {
    /// Shows the keys' ids, never their bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateKeys")
            .field("current", &self.current.0)
            .field(
                "accepted",
                &self.accepted.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl StateKeys {
    /// Keys whose current key is `key`, named `id` (any text: a date, a version). A key is
    /// secret bytes of at least [`MIN_KEY_LEN`]: from a secret store, not from a password.
    pub fn new(id: impl Into<String>, key: impl AsRef<[u8]>) -> Result<Self, SealError> {
        let (id, key) = checked(id.into(), key.as_ref())?;
        Ok(StateKeys {
            current: (id, key),
            accepted: Vec::new(),
        })
    }

    /// Also accepts states sealed with `key`, named `id` (a key rotated out). It never seals.
    pub fn accept(
        mut self,
        id: impl Into<String>,
        key: impl AsRef<[u8]>,
    ) -> Result<Self, SealError> {
        let (id, key) = checked(id.into(), key.as_ref())?;
        if id == self.current.0 || self.accepted.iter().any(|(other, _)| *other == id) {
            return Err(SealError::DuplicateKeyId(id));
        }
        self.accepted.push((id, key));
        Ok(self)
    }

    /// The id of the key that seals.
    pub fn current_id(&self) -> &str {
        &self.current.0
    }

    fn key(&self, id: &str) -> Option<&[u8]> {
        std::iter::once(&self.current)
            .chain(&self.accepted)
            .find(|(key_id, _)| key_id == id)
            .map(|(_, key)| key.as_slice())
    }
}

fn checked(id: String, key: &[u8]) -> Result<(String, Vec<u8>), SealError> {
    if key.len() < MIN_KEY_LEN {
        return Err(SealError::ShortKey { id, len: key.len() });
    }
    Ok((id, key.to_vec()))
}

/// Why a state was not sealed or not accepted. Nothing ran and nothing was saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The runtime seals its states, and this one carries no seal: made by a runtime without
    /// keys, by an older build, or stripped.
    #[error(
        "the state is not sealed, and this runtime accepts sealed states only: it was made \
         without a key, by an older build, or its seal was removed"
    )]
    NotSealed,
    /// The state was sealed with a key this runtime does not have.
    #[error(
        "the state is sealed with the key `{0}`, which this runtime does not accept (add it \
         with StateKeys::accept if it was rotated out)"
    )]
    UnknownKey(String),
    /// The state differs from what was sealed: it was edited, or sealed with another key under
    /// the same id.
    #[error(
        "the state was changed after it was sealed (or sealed with another key under the id \
         `{0}`): refused, nothing ran"
    )]
    Changed(String),
    /// A key shorter than [`MIN_KEY_LEN`] bytes.
    #[error("the key `{id}` has {len} bytes; a key has at least {MIN_KEY_LEN}")]
    ShortKey {
        /// The key's id.
        id: String,
        /// Its length.
        len: usize,
    },
    /// Two keys with one id.
    #[error("two keys are named `{0}`: each key needs an id of its own")]
    DuplicateKeyId(String),
    /// The state could not be written as JSON to be sealed or checked.
    #[error("the state could not be written to be sealed: {0}")]
    Encode(String),
}

/// The MAC of `label` and `value`'s canonical bytes under `key`.
fn mac_of(label: &[u8], value: &serde_json::Value, key: &[u8]) -> Hmac<Sha256> {
    let mut bytes = Vec::with_capacity(1024);
    agent_core::digest::canonical_json(value, &mut bytes);
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(label);
    mac.update(&(bytes.len() as u64).to_be_bytes());
    mac.update(&bytes);
    mac
}

/// `value` as JSON, for a MAC.
fn json(value: &impl Serialize) -> Result<serde_json::Value, SealError> {
    serde_json::to_value(value).map_err(|e| SealError::Encode(e.to_string()))
}

/// The MAC of `state` (its seal left out) under `key`.
fn state_mac(state: &mut RunState, key: &[u8]) -> Result<Hmac<Sha256>, SealError> {
    let seal = state.seal.take();
    let value = json(&*state);
    state.seal = seal;
    Ok(mac_of(LABEL, &value?, key))
}

/// The MAC of session `id`'s record (its seal left out) under `key`: the id is sealed with it,
/// so a record copied into another session does not check.
fn record_mac(id: &str, record: &mut SessionRecord, key: &[u8]) -> Result<Hmac<Sha256>, SealError> {
    let seal = record.seal.take();
    let value = json(&*record);
    record.seal = seal;
    let value = serde_json::json!({"session": id, "record": value?});
    Ok(mac_of(RECORD_LABEL, &value, key))
}

fn make(keys: &StateKeys, mac: Hmac<Sha256>) -> Seal {
    Seal {
        key: keys.current.0.clone(),
        mac: agent_core::digest::hex(&mac.finalize().into_bytes()),
    }
}

/// Checks `seal` against the MAC `mac` computes with the key it names, in constant time.
fn verify(
    seal: Option<&Seal>,
    keys: &StateKeys,
    mac: impl FnOnce(&[u8]) -> Result<Hmac<Sha256>, SealError>,
) -> Result<(), SealError> {
    let Some(seal) = seal else {
        return Err(SealError::NotSealed);
    };
    let Some(key) = keys.key(&seal.key) else {
        return Err(SealError::UnknownKey(seal.key.clone()));
    };
    let Some(expected) = unhex(&seal.mac) else {
        return Err(SealError::Changed(seal.key.clone()));
    };
    mac(key)?
        .verify_slice(&expected)
        .map_err(|_| SealError::Changed(seal.key.clone()))
}

/// Seals `state` with the current key (replacing any seal it had).
pub(crate) fn seal(state: &mut RunState, keys: &StateKeys) -> Result<(), SealError> {
    let mac = state_mac(state, &keys.current.1)?;
    state.seal = Some(make(keys, mac));
    Ok(())
}

/// Checks `state`'s seal against `keys`, before anything runs.
pub(crate) fn check(state: &mut RunState, keys: &StateKeys) -> Result<(), SealError> {
    let seal = state.seal.clone();
    verify(seal.as_ref(), keys, |key| state_mac(state, key))
}

/// Seals session `id`'s record with the current key.
pub(crate) fn seal_record(
    id: &str,
    record: &mut SessionRecord,
    keys: &StateKeys,
) -> Result<(), SealError> {
    let mac = record_mac(id, record, &keys.current.1)?;
    record.seal = Some(make(keys, mac));
    Ok(())
}

/// Checks session `id`'s record's seal against `keys`.
pub(crate) fn check_record(
    id: &str,
    record: &mut SessionRecord,
    keys: &StateKeys,
) -> Result<(), SealError> {
    let seal = record.seal.clone();
    verify(seal.as_ref(), keys, |key| record_mac(id, record, key))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Sealing and checking as a runtime does, for the benches (`benches/runtime.rs`): not an API.
#[doc(hidden)]
pub mod bench_support {
    use crate::runtime::AgentRuntime;
    use crate::runtime::step::run_state::RunState;

    /// `state` sealed with `runtime`'s keys.
    pub fn seal(runtime: &AgentRuntime, state: &RunState) -> RunState {
        let mut state = state.clone();
        let keys = runtime
            .settings
            .state_keys
            .as_deref()
            .expect("a runtime with keys");
        super::seal(&mut state, keys).expect("a state seals");
        state
    }

    /// Whether `state`'s seal checks with `runtime`'s keys.
    pub fn check(runtime: &AgentRuntime, state: &RunState) -> bool {
        let mut state = state.clone();
        let keys = runtime
            .settings
            .state_keys
            .as_deref()
            .expect("a runtime with keys");
        super::check(&mut state, keys).is_ok()
    }
}
