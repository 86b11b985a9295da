//! The pause and what comes back from it: a turn held with its calls waiting and the decisions
//! that continue it (`decisions.rs`), and a state that comes back checked before anything runs
//! (`admit.rs`: its format, its seal from `seal.rs`, its claim).

pub(super) mod admit;
pub(super) mod decisions;
pub(super) mod seal;
