//! Retrying transient failures with exponential backoff and a cap.
//!
//! The registry retries a skill that fails with [`SkillError::Transient`]
//! by its [`RetryPolicy`]; providers use [`with_retry`] for their own transient errors.
//!
//! ```
//! use std::time::Duration;
//! use agent_core::{with_retry, RetryPolicy, SkillError};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let policy = RetryPolicy { max_attempts: 3, initial_delay: Duration::from_millis(1), ..Default::default() };
//! let result: Result<&str, SkillError> = with_retry(&policy, |attempt| async move {
//!     if attempt < 3 { Err(SkillError::Transient("busy".into())) } else { Ok("done") }
//! }).await;
//! assert_eq!(result.unwrap(), "done");
//! # }
//! ```

use std::future::Future;
use std::time::Duration;

use crate::error::SkillError;

/// How often and how patiently to repeat an operation that failed transiently.
///
/// The delay before attempt `n + 1` is `initial_delay * backoff^(n - 1)`, at most `max_delay`.
/// A `max_attempts` of 0 or 1 means a single attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// Delay before the second attempt.
    pub initial_delay: Duration,
    /// Factor by which each further delay grows (values below 1.0 are treated as 1.0).
    pub backoff: f64,
    /// Upper bound of any one delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, waiting 200 ms and then 400 ms, never more than 5 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_delay: Duration::from_millis(200),
            backoff: 2.0,
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The delay after failed attempt `attempt` (1-based), before the next one.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        let factor = self
            .backoff
            .max(1.0)
            .powi(attempt.saturating_sub(1).min(64) as i32);
        let secs = self.initial_delay.as_secs_f64() * factor;
        if !secs.is_finite() || secs >= self.max_delay.as_secs_f64() {
            self.max_delay
        } else {
            Duration::from_secs_f64(secs)
        }
    }
}

/// An error that knows whether trying again may help.
pub trait RetryableError {
    /// Whether the same operation may succeed if repeated.
    fn is_transient(&self) -> bool;

    /// A delay the other side asked for (an HTTP `retry-after`), used instead of the backoff,
    /// at most the policy's `max_delay`.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

impl RetryableError for SkillError {
    fn is_transient(&self) -> bool {
        SkillError::is_transient(self)
    }
}

/// Runs `op` (given the 1-based attempt number) until it succeeds, fails for good, or the policy's
/// attempts are used up; the last error is returned.
pub async fn with_retry<T, E, F, Fut>(policy: &RetryPolicy, op: F) -> Result<T, E>
where
    E: RetryableError,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    with_retry_notify(policy, op, |_, _, _| {}).await
}

/// Like [`with_retry`], calling `on_retry(failed_attempt, &error, delay)` before each wait, so the
/// caller can log or emit an event.
pub async fn with_retry_notify<T, E, F, Fut, N>(
    policy: &RetryPolicy,
    mut op: F,
    mut on_retry: N,
) -> Result<T, E>
where
    E: RetryableError,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    N: FnMut(u32, &E, Duration),
{
    let attempts = policy.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        match op(attempt).await {
            Err(error) if attempt < attempts && error.is_transient() => {
                let delay = error
                    .retry_after()
                    .map(|asked| asked.min(policy.max_delay))
                    .unwrap_or_else(|| policy.delay_after(attempt));
                on_retry(attempt, &error, delay);
                tokio::time::sleep(delay).await;
                attempt += 1;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fast(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            initial_delay: Duration::from_millis(1),
            ..Default::default()
        }
    }

    async fn count_attempts(
        policy: RetryPolicy,
        error: SkillError,
    ) -> (u32, Result<(), SkillError>) {
        let calls = AtomicU32::new(0);
        let result = with_retry(&policy, |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            let error = error.clone();
            async move { Err::<(), _>(error) }
        })
        .await;
        (calls.load(Ordering::SeqCst), result)
    }

    #[tokio::test]
    async fn zero_or_one_attempt_runs_once_and_returns_the_error() {
        for max in [0, 1] {
            let (calls, result) =
                count_attempts(fast(max), SkillError::Transient("busy".into())).await;
            assert_eq!(calls, 1);
            assert!(matches!(result, Err(SkillError::Transient(_))));
        }
    }

    #[tokio::test]
    async fn transient_errors_are_retried_up_to_the_limit() {
        let (calls, _) = count_attempts(fast(4), SkillError::Transient("busy".into())).await;
        assert_eq!(calls, 4);
    }

    #[tokio::test]
    async fn other_errors_are_not_retried() {
        let (calls, _) = count_attempts(fast(4), SkillError::tool("broken")).await;
        assert_eq!(calls, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn delays_grow_exponentially_and_are_reported() {
        let policy = RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(100),
            backoff: 2.0,
            max_delay: Duration::from_millis(250),
        };
        let mut seen = Vec::new();
        let _ = with_retry_notify(
            &policy,
            |_| async { Err::<(), _>(SkillError::Transient("busy".into())) },
            |attempt, _, delay| seen.push((attempt, delay.as_millis())),
        )
        .await;
        assert_eq!(seen, vec![(1, 100), (2, 200), (3, 250)]);
    }

    /// An error that asks for a wait of its own.
    struct AsksToWait(Duration);

    impl RetryableError for AsksToWait {
        fn is_transient(&self) -> bool {
            true
        }

        fn retry_after(&self) -> Option<Duration> {
            Some(self.0)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_requested_wait_is_honoured_up_to_the_policys_maximum() {
        let policy = RetryPolicy {
            max_attempts: 3,
            initial_delay: Duration::from_millis(100),
            backoff: 2.0,
            max_delay: Duration::from_secs(30),
        };
        let mut asked = [Duration::from_secs(3), Duration::from_secs_f64(34.4)].into_iter();
        let mut seen = Vec::new();
        let started = tokio::time::Instant::now();
        let _ = with_retry_notify(
            &policy,
            |_| {
                let wait = asked.next().unwrap_or_default();
                async move { Err::<(), _>(AsksToWait(wait)) }
            },
            |attempt, _, delay| seen.push((attempt, delay)),
        )
        .await;
        assert_eq!(
            seen,
            [(1, Duration::from_secs(3)), (2, Duration::from_secs(30))]
        );
        assert_eq!(started.elapsed(), Duration::from_secs(33));
    }

    #[test]
    fn huge_attempt_numbers_are_capped_not_overflowed() {
        let policy = RetryPolicy {
            backoff: 10.0,
            ..Default::default()
        };
        assert_eq!(policy.delay_after(u32::MAX), policy.max_delay);
        let policy = RetryPolicy {
            backoff: f64::NAN,
            ..Default::default()
        };
        assert!(policy.delay_after(3) <= policy.max_delay);
    }
}
