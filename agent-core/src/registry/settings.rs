//! How a registry runs calls: the settings its builder methods set and dispatch reads.

use super::destructive::DestructiveCalls;
use crate::retry::RetryPolicy;

/// How many concurrency-safe calls run at once, unless [`Registry::with_max_concurrency`] says otherwise.
///
/// [`Registry::with_max_concurrency`]: super::Registry::with_max_concurrency
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// How many characters of a result the model gets, unless [`Registry::with_output_budget`] says otherwise.
///
/// [`Registry::with_output_budget`]: super::Registry::with_output_budget
pub const DEFAULT_OUTPUT_BUDGET: usize = 16_000;

/// The registry's call settings: plain values, read where calls run.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// How transient failures are retried, for skills without a policy of their own.
    pub(super) retry_policy: RetryPolicy,
    /// How many calls of one batch run at once (at least 1).
    pub(super) max_concurrency: usize,
    /// How many characters of a result the model gets.
    pub(super) output_budget: usize,
    /// What happens to destructive calls when no hook decides permissions.
    pub(super) destructive: DestructiveCalls,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            retry_policy: RetryPolicy::default(),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            output_budget: DEFAULT_OUTPUT_BUDGET,
            destructive: DestructiveCalls::Ask,
        }
    }
}
