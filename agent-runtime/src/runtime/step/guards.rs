//! The guards that notice a run going round in circles: the same call, or the same error, too
//! many times in a row ([`StuckGuard`]), and calls denied by hooks ([`DenialGuard`]). Their
//! counters are part of the run's state (they serialize with it); the limits are the runtime's
//! settings, handed in. What a count means for the run is decided in `finish/finish_checks.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::call::{ToolCall, ToolResult};
use agent_core::error::SkillError;

/// Something repeated `repeated` times in a row: a call (`error` is `None`), or the same error
/// result of the same call.
#[derive(Debug)]
pub(crate) struct Repeated {
    pub(crate) name: String,
    pub(crate) arguments: Value,
    pub(crate) repeated: usize,
    pub(crate) error: Option<String>,
}

/// Counts identical calls (name and arguments, compared canonically) and identical error results
/// in a row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StuckGuard {
    /// The canonical key of the call made last, and how many times in a row.
    last_call: Option<(String, usize)>,
    /// The name and error of the error result seen last, and how many times in a row.
    last_error: Option<(String, String, usize)>,
}

impl StuckGuard {
    /// Sees a turn's calls before they run; `Some` when one of them was made `limit` times in a
    /// row.
    pub(crate) fn on_calls<'c>(
        &mut self,
        limit: usize,
        calls: impl IntoIterator<Item = &'c ToolCall>,
    ) -> Option<Repeated> {
        for call in calls {
            let key = format!("{}:{}", call.name, canonical(&call.arguments));
            let count = match &self.last_call {
                Some((last, count)) if *last == key => count + 1,
                _ => 1,
            };
            self.last_call = Some((key, count));
            if count >= limit {
                return Some(Repeated {
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
    pub(crate) fn on_results<'c>(
        &mut self,
        limit: usize,
        answered: impl IntoIterator<Item = (&'c ToolResult, &'c ToolCall)>,
    ) -> Option<Repeated> {
        for (result, call) in answered {
            match &result.output {
                Err(error) if !matches!(error, SkillError::Cancelled) => {
                    let error = error.to_string();
                    let count = match &self.last_error {
                        Some((name, last, count)) if *name == call.name && *last == error => {
                            count + 1
                        }
                        _ => 1,
                    };
                    if count >= limit {
                        return Some(Repeated {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            repeated: count,
                            error: Some(error),
                        });
                    }
                    self.last_error = Some((call.name.clone(), error, count));
                }
                _ => self.last_error = None,
            }
        }
        None
    }
}

/// How denials are counted against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DenialCount {
    /// Only denials in a row; any other result starts the count again.
    Consecutive,
    /// Every denial of the run.
    Total,
}

/// Counts calls denied by hooks (`SkillError::Denied` results).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct DenialGuard {
    denials: usize,
}

impl DenialGuard {
    /// Sees a turn's results; the denials counted after them.
    pub(crate) fn on_results(&mut self, count: DenialCount, results: &[ToolResult]) -> usize {
        for result in results {
            match (&result.output, count) {
                (Err(SkillError::Denied(_)), _) => self.denials += 1,
                (_, DenialCount::Consecutive) => self.denials = 0,
                (_, DenialCount::Total) => {}
            }
        }
        self.denials
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
        let mut guard = StuckGuard::default();
        let a = ToolCall::new("1", "read", json!({"path": "a", "limit": 5}));
        let b = ToolCall::new("2", "read", json!({"limit": 5, "path": "a"}));
        assert!(guard.on_calls(2, std::slice::from_ref(&a)).is_none());
        assert!(matches!(
            guard.on_calls(2, std::slice::from_ref(&b)),
            Some(Repeated { repeated: 2, .. })
        ));
    }

    #[test]
    fn consecutive_denials_reset_on_any_other_result() {
        let call = ToolCall::new("1", "x", json!({}));
        let denied = ToolResult::new(&call, Err(SkillError::Denied("no".into())));
        let ok = ToolResult::new(&call, Ok("fine".into()));
        let consecutive = DenialCount::Consecutive;
        let mut guard = DenialGuard::default();
        assert_eq!(
            guard.on_results(consecutive, std::slice::from_ref(&denied)),
            1
        );
        assert_eq!(guard.on_results(consecutive, std::slice::from_ref(&ok)), 0);
        assert_eq!(
            guard.on_results(consecutive, std::slice::from_ref(&denied)),
            1
        );
        let mut total = DenialGuard::default();
        assert_eq!(
            total.on_results(DenialCount::Total, &[denied.clone(), ok]),
            1
        );
        assert_eq!(total.on_results(DenialCount::Total, &[denied]), 2);
    }
}
