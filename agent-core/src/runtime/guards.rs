//! The guards that end a run going round in circles: the same call, or the same error, too many
//! times in a row ([`StuckGuard`]), and too many calls denied by hooks ([`DenialGuard`]).

use std::collections::BTreeMap;

use serde_json::Value;

use super::outcome::FinishReason;
use super::state::GuardCounts;
use crate::call::{ToolCall, ToolResult};
use crate::error::SkillError;

/// Counts identical calls (name and arguments, compared canonically) and identical error
/// results in a row; at `limit` the run is [`FinishReason::Stuck`].
pub(super) struct StuckGuard {
    limit: usize,
    last_call: Option<RepeatedCall>,
    last_error: Option<RepeatedError>,
}

/// The call made last, and how many times in a row.
struct RepeatedCall {
    /// The name and the canonical arguments.
    key: String,
    count: usize,
}

/// The error result seen last, and how many times in a row.
struct RepeatedError {
    name: String,
    error: String,
    count: usize,
}

impl StuckGuard {
    pub(super) fn new(limit: usize) -> Self {
        StuckGuard {
            limit,
            last_call: None,
            last_error: None,
        }
    }

    /// The counters, to keep in a paused run's state.
    pub(super) fn counts(&self, counts: &mut GuardCounts) {
        counts.last_call = self.last_call.as_ref().map(|c| (c.key.clone(), c.count));
        counts.last_error = self
            .last_error
            .as_ref()
            .map(|e| (e.name.clone(), e.error.clone(), e.count));
    }

    /// Takes the counters back from a paused run's state.
    pub(super) fn restore(&mut self, counts: &GuardCounts) {
        self.last_call = counts
            .last_call
            .clone()
            .map(|(key, count)| RepeatedCall { key, count });
        self.last_error = counts
            .last_error
            .clone()
            .map(|(name, error, count)| RepeatedError { name, error, count });
    }

    /// Sees a turn's calls before they run; `Some` when one of them was made `limit` times in a
    /// row.
    pub(super) fn on_calls<'c>(
        &mut self,
        calls: impl IntoIterator<Item = &'c ToolCall>,
    ) -> Option<FinishReason> {
        for call in calls {
            let key = format!("{}:{}", call.name, canonical(&call.arguments));
            let count = match &self.last_call {
                Some(last) if last.key == key => last.count + 1,
                _ => 1,
            };
            self.last_call = Some(RepeatedCall { key, count });
            if count >= self.limit {
                return Some(FinishReason::Stuck {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    repeated: count,
                    error: None,
                });
            }
        }
        None
    }

    /// Sees a turn's results (in call order); `Some` when the same call failed with the same
    /// error `limit` times in a row. A cancelled call resets nothing and counts nothing.
    pub(super) fn on_results(
        &mut self,
        results: &[ToolResult],
        calls: &[ToolCall],
    ) -> Option<FinishReason> {
        for (result, call) in results.iter().zip(calls) {
            match &result.output {
                Err(error) if !matches!(error, SkillError::Cancelled) => {
                    let error = error.to_string();
                    let count = match &self.last_error {
                        Some(last) if last.name == call.name && last.error == error => {
                            last.count + 1
                        }
                        _ => 1,
                    };
                    if count >= self.limit {
                        return Some(FinishReason::Stuck {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            repeated: count,
                            error: Some(error),
                        });
                    }
                    self.last_error = Some(RepeatedError {
                        name: call.name.clone(),
                        error,
                        count,
                    });
                }
                _ => self.last_error = None,
            }
        }
        None
    }
}

/// How denials are counted against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DenialCount {
    /// Only denials in a row; any other result starts the count again.
    Consecutive,
    /// Every denial of the run.
    Total,
}

/// Counts calls denied by hooks (`SkillError::Denied` results); at `limit` the run is
/// [`FinishReason::PermissionDenialLimit`].
pub(super) struct DenialGuard {
    limit: Option<usize>,
    count: DenialCount,
    denials: usize,
}

impl DenialGuard {
    pub(super) fn new(limit: Option<usize>, count: DenialCount) -> Self {
        DenialGuard {
            limit,
            count,
            denials: 0,
        }
    }

    /// The denials counted so far.
    pub(super) fn denials(&self) -> usize {
        self.denials
    }

    /// Takes the count back from a paused run's state.
    pub(super) fn restore(&mut self, denials: usize) {
        self.denials = denials;
    }

    /// Sees a turn's results; `Some` when the limit is reached.
    pub(super) fn on_results(&mut self, results: &[ToolResult]) -> Option<FinishReason> {
        let limit = self.limit?;
        for result in results {
            match (&result.output, self.count) {
                (Err(SkillError::Denied(_)), _) => self.denials += 1,
                (_, DenialCount::Consecutive) => self.denials = 0,
                (_, DenialCount::Total) => {}
            }
        }
        (self.denials >= limit).then_some(FinishReason::PermissionDenialLimit {
            denials: self.denials,
        })
    }
}

/// Arguments in a canonical form: object keys sorted at every level.
fn canonical(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let sorted: BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_call_with_keys_in_another_order_counts_as_repeated() {
        let mut guard = StuckGuard::new(2);
        let a = ToolCall::new("1", "read", json!({"path": "a", "limit": 5}));
        let b = ToolCall::new("2", "read", json!({"limit": 5, "path": "a"}));
        assert!(guard.on_calls(std::slice::from_ref(&a)).is_none());
        assert!(matches!(
            guard.on_calls(std::slice::from_ref(&b)),
            Some(FinishReason::Stuck { repeated: 2, .. })
        ));
    }

    #[test]
    fn consecutive_denials_reset_on_any_other_result() {
        let call = ToolCall::new("1", "x", json!({}));
        let denied = ToolResult::new(&call, Err(SkillError::Denied("no".into())));
        let ok = ToolResult::new(&call, Ok("fine".into()));
        let mut guard = DenialGuard::new(Some(2), DenialCount::Consecutive);
        assert!(guard.on_results(std::slice::from_ref(&denied)).is_none());
        assert!(guard.on_results(std::slice::from_ref(&ok)).is_none());
        assert!(guard.on_results(std::slice::from_ref(&denied)).is_none());
        let mut total = DenialGuard::new(Some(2), DenialCount::Total);
        assert!(total.on_results(&[denied.clone(), ok]).is_none());
        assert!(total.on_results(&[denied]).is_some());
    }
}
