//! Idempotency keys: what a call's key is made of, kept as parts and turned into the key only
//! when a skill asks for it ([`SkillContext::idempotency_key`](crate::SkillContext::idempotency_key)),
//! so a turn whose skills never ask pays no hashing.
//!
//! A runtime hands the registry the turn's parts once ([`TurnKeys`]: the run's id, the step,
//! and where the calls it runs stand in the turn); the registry gives each call its place. A call
//! made inside another (a program's) derives its key from the outer call's key and its own id.

use std::sync::Arc;

use crate::shared_str::SharedStr;

/// The parts of the keys of one turn's calls: the run's id, the step, and, when the calls run
/// are not the whole turn (a turn finished after a pause), the place in the turn of each.
/// Plumbing between the runtime and the registry, not an API.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct TurnKeys {
    run: SharedStr,
    step: u64,
    places: Option<Arc<[u32]>>,
}

impl TurnKeys {
    /// The keys of step `step` of run `run`, its calls run in their places.
    pub fn new(run: impl Into<SharedStr>, step: usize) -> Self {
        TurnKeys {
            run: run.into(),
            step: step as u64,
            places: None,
        }
    }

    /// The same, for calls standing at `places` in the turn (the n-th call run is the one at
    /// `places[n]`).
    pub fn at_places(mut self, places: impl IntoIterator<Item = usize>) -> Self {
        self.places = Some(places.into_iter().map(|p| p as u32).collect());
        self
    }

    /// The same, for the one call run at `position` of these (a journaled run runs a turn's
    /// calls one at a time).
    pub(crate) fn only(self, position: usize) -> Self {
        let place = match &self.places {
            Some(places) => places.get(position).copied().unwrap_or(u32::MAX),
            None => position as u32,
        };
        TurnKeys {
            places: Some(Arc::from([place])),
            ..self
        }
    }

    /// The key parts of the call run `position`-th.
    pub(crate) fn call(&self, position: usize) -> CallKey {
        let place = match &self.places {
            Some(places) => places.get(position).copied().unwrap_or(u32::MAX),
            None => position as u32,
        };
        CallKey::Turn {
            run: self.run.clone(),
            step: self.step,
            place,
        }
    }
}

/// What one call's key is made of.
#[derive(Debug, Clone)]
pub(crate) enum CallKey {
    /// A call of a run's turn: the run, the step, its place in the turn.
    Turn {
        run: SharedStr,
        step: u64,
        place: u32,
    },
    /// A call made inside another: the outer call's key and this call's id.
    Inner {
        outer: SharedStr,
        call_id: SharedStr,
    },
}

impl CallKey {
    /// The key: `ik-` and 32 hex digits.
    pub(crate) fn key(&self) -> String {
        match self {
            CallKey::Turn { run, step, place } => crate::digest::idempotency_key(&[
                b"call",
                run.as_bytes(),
                &step.to_be_bytes(),
                &place.to_be_bytes(),
            ]),
            CallKey::Inner { outer, call_id } => {
                crate::digest::idempotency_key(&[b"inner", outer.as_bytes(), call_id.as_bytes()])
            }
        }
    }
}
