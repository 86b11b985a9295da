//! [`CircuitBreaker`]: a provider that keeps failing is left alone for a while.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// When a [`CircuitBreaker`] opens, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Consecutive failures that open it (0 is taken as 1).
    pub failures: u32,
    /// How long it stays open before a probe may go through.
    pub cool_down: Duration,
}

impl Default for BreakerPolicy {
    /// Open after 5 consecutive failures, for 30 s.
    fn default() -> Self {
        BreakerPolicy {
            failures: 5,
            cool_down: Duration::from_secs(30),
        }
    }
}

/// Where a [`CircuitBreaker`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Requests go through.
    Closed,
    /// Requests skip the provider for this long still.
    Open {
        /// Until the cool-down ends.
        remaining: Duration,
    },
    /// The cool-down is over: one probe may go through (or is under way).
    HalfOpen {
        /// Whether a probe is under way.
        probing: bool,
    },
}

#[derive(Debug)]
enum State {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

/// A circuit breaker for one provider. Cloning shares it.
///
/// Closed, it lets every request through and counts consecutive failures
/// ([`ErrorClass::is_failure`](super::ErrorClass::is_failure)); after
/// [`BreakerPolicy::failures`] of them it opens for [`BreakerPolicy::cool_down`], and every
/// request skips it. Then it is half-open: exactly one request, the probe, goes through while
/// the others keep skipping it; the probe's success closes it, its failure opens it again for
/// another cool-down. A probe that is abandoned (its request dropped) lets the next request
/// probe instead. Times are tokio's clock, so a paused clock drives it in tests.
///
/// ```
/// use std::time::Duration;
/// use agent_llm::{BreakerPolicy, BreakerState, CircuitBreaker};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let breaker = CircuitBreaker::new(BreakerPolicy { failures: 2, cool_down: Duration::from_secs(30) });
/// breaker.admit().unwrap().failed();
/// breaker.admit().unwrap().failed();
/// assert!(breaker.admit().is_none(), "open: skipped");
/// tokio::time::advance(Duration::from_secs(30)).await;
/// let probe = breaker.admit().unwrap();
/// assert!(breaker.admit().is_none(), "one probe at a time");
/// probe.succeeded();
/// assert_eq!(breaker.state(), BreakerState::Closed);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct CircuitBreaker {
    policy: BreakerPolicy,
    state: Arc<Mutex<State>>,
}

/// A request let through by a [`CircuitBreaker`]: say how it went with
/// [`Permit::succeeded`] or [`Permit::failed`]. Dropped without either (its request was
/// abandoned), it counts as neither; a probe's place goes to the next request.
#[derive(Debug)]
#[must_use = "a permit says how its request went"]
pub struct Permit {
    breaker: CircuitBreaker,
    probe: bool,
    done: bool,
}

impl CircuitBreaker {
    /// A closed breaker with `policy`.
    pub fn new(policy: BreakerPolicy) -> Self {
        CircuitBreaker {
            policy,
            state: Arc::new(Mutex::new(State::Closed { failures: 0 })),
        }
    }

    /// The breaker's policy.
    pub fn policy(&self) -> BreakerPolicy {
        self.policy
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where it stands now.
    pub fn state(&self) -> BreakerState {
        let mut state = self.lock();
        Self::cool(&mut state);
        match *state {
            State::Closed { .. } => BreakerState::Closed,
            State::Open { until } => BreakerState::Open {
                remaining: until.saturating_duration_since(Instant::now()),
            },
            State::HalfOpen { probing } => BreakerState::HalfOpen { probing },
        }
    }

    /// An open breaker whose cool-down is over becomes half-open.
    fn cool(state: &mut State) {
        if let State::Open { until } = *state
            && Instant::now() >= until
        {
            *state = State::HalfOpen { probing: false };
        }
    }

    /// Lets a request through, or `None` when it must skip the provider (open, or half-open
    /// with a probe under way).
    pub fn admit(&self) -> Option<Permit> {
        let mut state = self.lock();
        Self::cool(&mut state);
        let probe = match *state {
            State::Closed { .. } => false,
            State::Open { .. } | State::HalfOpen { probing: true } => return None,
            State::HalfOpen { probing: false } => {
                *state = State::HalfOpen { probing: true };
                true
            }
        };
        Some(Permit {
            breaker: self.clone(),
            probe,
            done: false,
        })
    }

    fn open(&self, state: &mut State) {
        *state = State::Open {
            until: Instant::now() + self.policy.cool_down,
        };
    }
}

impl Permit {
    /// Whether this request is the probe of a half-open breaker.
    pub fn is_probe(&self) -> bool {
        self.probe
    }

    /// The request got an answer (or an error that is not the provider's failure): a closed
    /// breaker's count starts again, a probe closes it.
    pub fn succeeded(mut self) {
        self.done = true;
        let mut state = self.breaker.lock();
        match *state {
            State::Closed { .. } => *state = State::Closed { failures: 0 },
            State::HalfOpen { probing: true } if self.probe => {
                *state = State::Closed { failures: 0 }
            }
            // A request let through before the breaker opened says nothing of now.
            _ => {}
        }
    }

    /// The provider failed this request: counted while closed (opening it at the policy's
    /// count); a probe's failure opens it again.
    pub fn failed(mut self) {
        self.done = true;
        let mut state = self.breaker.lock();
        match *state {
            State::Closed { failures } => {
                let failures = failures + 1;
                if failures >= self.breaker.policy.failures.max(1) {
                    self.breaker.open(&mut state);
                } else {
                    *state = State::Closed { failures };
                }
            }
            State::HalfOpen { probing: true } if self.probe => self.breaker.open(&mut state),
            _ => {}
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.done || !self.probe {
            return;
        }
        let mut state = self.breaker.lock();
        if let State::HalfOpen { probing: true } = *state {
            *state = State::HalfOpen { probing: false };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(failures: u32, cool_down_secs: u64) -> CircuitBreaker {
        CircuitBreaker::new(BreakerPolicy {
            failures,
            cool_down: Duration::from_secs(cool_down_secs),
        })
    }

    #[tokio::test(start_paused = true)]
    async fn it_opens_after_consecutive_failures_only() {
        let breaker = breaker(3, 10);
        breaker.admit().unwrap().failed();
        breaker.admit().unwrap().failed();
        breaker.admit().unwrap().succeeded();
        breaker.admit().unwrap().failed();
        breaker.admit().unwrap().failed();
        assert_eq!(
            breaker.state(),
            BreakerState::Closed,
            "the success reset it"
        );
        breaker.admit().unwrap().failed();
        assert_eq!(
            breaker.state(),
            BreakerState::Open {
                remaining: Duration::from_secs(10)
            }
        );
        assert!(breaker.admit().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn the_cool_down_ends_in_one_probe_whose_outcome_decides() {
        let breaker = breaker(1, 10);
        breaker.admit().unwrap().failed();
        tokio::time::advance(Duration::from_millis(9_999)).await;
        assert!(breaker.admit().is_none(), "still cooling down");
        tokio::time::advance(Duration::from_millis(1)).await;
        let probe = breaker.admit().expect("half-open");
        assert!(probe.is_probe());
        assert!(breaker.admit().is_none(), "only one probe");
        probe.failed();
        assert_eq!(
            breaker.state(),
            BreakerState::Open {
                remaining: Duration::from_secs(10)
            },
            "a failed probe opens it for a whole cool-down again"
        );
        tokio::time::advance(Duration::from_secs(10)).await;
        breaker.admit().unwrap().succeeded();
        assert_eq!(breaker.state(), BreakerState::Closed);
        assert!(!breaker.admit().unwrap().is_probe());
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_probe_leaves_its_place_to_the_next_request() {
        let breaker = breaker(1, 5);
        breaker.admit().unwrap().failed();
        tokio::time::advance(Duration::from_secs(5)).await;
        let probe = breaker.admit().unwrap();
        assert_eq!(breaker.state(), BreakerState::HalfOpen { probing: true });
        drop(probe);
        assert_eq!(breaker.state(), BreakerState::HalfOpen { probing: false });
        assert!(breaker.admit().unwrap().is_probe());
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_from_before_it_opened_changes_nothing() {
        let breaker = breaker(1, 5);
        let early = breaker.admit().unwrap();
        breaker.admit().unwrap().failed();
        early.succeeded();
        assert!(matches!(breaker.state(), BreakerState::Open { .. }));
    }
}
