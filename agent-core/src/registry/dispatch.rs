//! Running calls: resolution, validation, hooks, batches, retries, timeouts, cancellation and
//! truncation.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt, stream};
use serde_json::Value;
use tracing::Instrument;

use super::{Entry, Registry};
use crate::call::{ToolCall, ToolResult};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::hook::HookOutcome;
use crate::retry::with_retry;
use crate::skill::{ParsedInput, SkillOutput};

/// A call that passed resolution, validation and the before-hooks, or its early answer.
enum Prepared<'a> {
    Ready {
        entry: &'a Entry,
        args: Cow<'a, Value>,
        input: ParsedInput,
    },
    Answered(Result<SkillOutput, SkillError>),
}

impl Registry {
    /// Runs the calls of one model turn and returns exactly one result per call, in call order.
    ///
    /// - **Batches.** The calls are cut into consecutive batches. A run of calls to
    ///   concurrency-safe skills (and to unknown names, which only produce errors) forms one batch whose
    ///   calls run concurrently, at most [`Registry::with_max_concurrency`] at a time. Any other call
    ///   is a batch of its own: it starts after every call before it has finished, and every call
    ///   after it waits for it.
    /// - **Per call**: the name or alias is resolved (an unknown name gets an error result that
    ///   suggests close names); the arguments are validated ([`SkillError::BadArgs`]); the hooks'
    ///   `before` run in order, for all calls of a batch before any of them starts; the skill runs,
    ///   with its timeout, and transient failures are retried by its policy or the registry's; a
    ///   panic becomes an error result; the hooks' `after` see the result; a result longer than the
    ///   output budget is cut with a notice.
    /// - **Cancellation.** When `ctx`'s token fires, running calls are dropped and every call not
    ///   finished gets a [`SkillError::Cancelled`] result, so each call is still answered.
    pub async fn run_many(&self, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        if let [call] = calls {
            return vec![self.run_one(call, ctx).await];
        }
        let mut results = Vec::with_capacity(calls.len());
        let mut start = 0;
        while start < calls.len() {
            let safe = |call: &ToolCall| {
                self.entry(&call.name)
                    .is_none_or(|e| e.metadata.is_concurrency_safe)
            };
            let len = if safe(&calls[start]) {
                calls[start..].iter().take_while(|c| safe(c)).count()
            } else {
                1
            };
            let batch = &calls[start..start + len];
            if let [call] = batch {
                results.push(self.run_one(call, ctx).await);
            } else {
                // Before-hooks run one call at a time, in call order, before any call of the batch
                // starts; then the batch runs, at most `max_concurrency` at once, results in order.
                let mut running = Vec::with_capacity(batch.len());
                for call in batch {
                    let call_ctx = ctx.clone().with_call_id(call.id.as_str());
                    let prepared = self.prepare(call, &call_ctx).await;
                    running.push(self.finish(call, prepared, call_ctx));
                }
                let finished = stream::iter(running).buffered(self.max_concurrency);
                results.extend(finished.collect::<Vec<_>>().await);
            }
            start += len;
        }
        results
    }

    /// Runs one call through the same steps as [`Registry::run_many`].
    pub async fn run_one(&self, call: &ToolCall, ctx: &SkillContext) -> ToolResult {
        let ctx = ctx.clone().with_call_id(call.id.as_str());
        let prepared = self.prepare(call, &ctx).await;
        self.finish(call, prepared, ctx).await
    }

    /// Resolves the call, validates its arguments and runs the before-hooks.
    async fn prepare<'a>(&'a self, call: &'a ToolCall, ctx: &SkillContext) -> Prepared<'a> {
        let Some(entry) = self.entry(&call.name) else {
            return Prepared::Answered(Err(self.unknown_skill(&call.name)));
        };
        let mut args = Cow::Borrowed(&call.arguments);
        let mut input = match entry.skill.parse(&args) {
            Ok(input) => input,
            Err(error) => return Prepared::Answered(Err(error)),
        };
        for hook in &self.hooks {
            let before = hook.before(&entry.definition.name, entry.metadata.clone(), &args);
            let outcome = until_cancelled(ctx, before).await;
            match outcome {
                Ok(HookOutcome::Proceed) => {}
                Ok(HookOutcome::Modify(new_args)) => {
                    input = match entry.skill.parse(&new_args) {
                        Ok(input) => input,
                        Err(error) => return Prepared::Answered(Err(error)),
                    };
                    args = Cow::Owned(new_args);
                }
                Ok(HookOutcome::Deny(reason)) => {
                    return Prepared::Answered(Err(SkillError::Denied(reason)));
                }
                Ok(HookOutcome::Replace(text)) => {
                    return Prepared::Answered(Ok(SkillOutput::Text(text)));
                }
                Err(error) => return Prepared::Answered(Err(error)),
            }
        }
        Prepared::Ready { entry, args, input }
    }

    /// Runs a prepared call, then the after-hooks and truncation.
    async fn finish(
        &self,
        call: &ToolCall,
        prepared: Prepared<'_>,
        ctx: SkillContext,
    ) -> ToolResult {
        let (output, args) = match prepared {
            Prepared::Answered(output) => (output, Cow::Borrowed(&call.arguments)),
            Prepared::Ready { entry, args, input } => {
                let span = tracing::info_span!(
                    "execute_tool",
                    "gen_ai.operation.name" = "execute_tool",
                    "gen_ai.tool.name" = entry.definition.name.as_str(),
                    "gen_ai.tool.call.id" = call.id.as_str(),
                );
                let output = self
                    .execute(entry, input, &args, &ctx)
                    .instrument(span)
                    .await;
                (output, args)
            }
        };
        let mut output = output;
        if !self.hooks.is_empty() {
            // Hooks see the skill's own name, whatever alias the model used (a rule about
            // `delete_file` must not be dodged by calling `rm`); an unknown name stays as called.
            let name = self
                .entry(&call.name)
                .map_or(call.name.as_str(), |e| &e.definition.name);
            for hook in &self.hooks {
                output = hook.after(name, &args, output).await;
            }
        }
        ToolResult::new(call, truncate_output(output, self.output_budget))
    }

    /// Runs the skill with its timeout, retries and panic guard, until done or cancelled.
    async fn execute(
        &self,
        entry: &Entry,
        input: ParsedInput,
        args: &Value,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let policy = entry.retry_policy.unwrap_or(self.retry_policy);
        let mut first = Some(input);
        let attempts = with_retry(&policy, |_| {
            // The first attempt uses the arguments parsed already; a retry parses them again.
            let input = first.take().map_or_else(|| entry.skill.parse(args), Ok);
            async move {
                let run = AssertUnwindSafe(entry.skill.run_parsed(input?, ctx))
                    .catch_unwind()
                    .map(|caught| caught.unwrap_or_else(|panic| Err(panic_error(&*panic))));
                match entry.timeout {
                    Some(limit) => tokio::time::timeout(limit, run)
                        .await
                        .unwrap_or(Err(SkillError::Timeout(limit))),
                    None => run.await,
                }
            }
        });
        until_cancelled(ctx, attempts).await
    }

    fn unknown_skill(&self, name: &str) -> SkillError {
        let mut close: Vec<(f64, &str)> = self
            .by_name
            .keys()
            .map(|candidate| (similarity(name, candidate), &**candidate))
            .filter(|(score, _)| *score >= 0.7)
            .collect();
        close.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        if close.is_empty() {
            let suggestions = self
                .entries
                .iter()
                .filter(|e| !e.metadata.should_defer)
                .map(|e| e.definition.name.clone())
                .collect();
            return SkillError::UnknownSkill {
                name: name.to_owned(),
                suggestions,
                close: false,
            };
        }
        let suggestions = close
            .into_iter()
            .take(3)
            .map(|(_, n)| n.to_owned())
            .collect();
        SkillError::UnknownSkill {
            name: name.to_owned(),
            suggestions,
            close: true,
        }
    }
}

/// Runs `work` unless or until the context is cancelled. The work is polled first, so work that
/// finishes at once never registers with the cancellation token (which takes a lock).
async fn until_cancelled<T>(
    ctx: &SkillContext,
    work: impl Future<Output = Result<T, SkillError>>,
) -> Result<T, SkillError> {
    if ctx.is_cancelled() {
        return Err(SkillError::Cancelled);
    }
    tokio::select! {
        biased;
        result = work => result,
        _ = ctx.cancellation().cancelled() => Err(SkillError::Cancelled),
    }
}

/// How alike two skill names are, from 0 to 1, ignoring case; a name that contains the other
/// (`read` in `read_file`) counts as close.
fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a.len() >= 3 && b.len() >= 3 && (a.contains(&b) || b.contains(&a)) {
        return 0.9;
    }
    strsim::jaro_winkler(&a, &b).max(strsim::normalized_damerau_levenshtein(&a, &b))
}

fn panic_error(panic: &(dyn std::any::Any + Send)) -> SkillError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    SkillError::tool(format!("the skill panicked: {message}"))
}

fn truncate_output(
    output: Result<SkillOutput, SkillError>,
    budget: usize,
) -> Result<SkillOutput, SkillError> {
    match output {
        Ok(SkillOutput::Text(text)) => Ok(SkillOutput::Text(truncate_text(text, budget))),
        Ok(SkillOutput::Json(value)) => {
            let text = value.to_string();
            if text.len() <= budget {
                Ok(SkillOutput::Json(value))
            } else {
                Ok(SkillOutput::Text(truncate_text(text, budget)))
            }
        }
        Err(SkillError::Tool { message, source }) => Err(SkillError::Tool {
            message: truncate_text(message, budget),
            source,
        }),
        other => other,
    }
}

/// Cuts `text` to at most `budget` characters (never inside a character) and, when it cut
/// anything, appends a notice that says how many characters were kept and how many were cut.
///
/// ```
/// let cut = agent_core::registry::truncate_text("héllo wörld".to_owned(), 5);
/// assert_eq!(cut, "héllo\n\n[output truncated: showing 5 of 11 characters; 6 cut]");
/// ```
pub fn truncate_text(text: String, budget: usize) -> String {
    if text.len() <= budget {
        return text;
    }
    let Some((cut_at, _)) = text.char_indices().nth(budget) else {
        return text;
    };
    let total = budget + text[cut_at..].chars().count();
    let mut kept = text;
    kept.truncate(cut_at);
    kept.push_str(&format!(
        "\n\n[output truncated: showing {budget} of {total} characters; {} cut]",
        total - budget
    ));
    kept
}
