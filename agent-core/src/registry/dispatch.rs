//! Running calls: resolution, validation, hooks, batches, retries, timeouts, cancellation and
//! truncation.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{FutureExt, StreamExt, stream};
use serde_json::Value;
use tracing::Span;

use super::{Entry, Registry};
use crate::call::{SharedStr, ToolCall, ToolResult};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::hook::HookOutcome;
use crate::retry::with_retry;
use crate::skill::{ParsedInput, SkillFuture, SkillOutput};

/// A call after resolution, validation and the before-hooks.
struct Prepared<'a> {
    /// The registry's copy of the name the model used (an unknown name is copied).
    called_as: SharedStr,
    /// The skill, when the name resolved.
    entry: Option<&'a Entry>,
    /// The arguments the model sent.
    args: &'a Value,
    /// The arguments a hook put in their place (boxed: rare, and it keeps this small).
    modified: Option<Box<Value>>,
    /// What happens next.
    step: Step,
}

enum Step {
    /// Run the skill. The input is already parsed when hooks had to see valid arguments first;
    /// otherwise the skill parses and starts in one step.
    Run(Option<ParsedInput>),
    /// The call is answered without running the skill.
    Answered(Box<Result<SkillOutput, SkillError>>),
}

impl Prepared<'_> {
    /// The arguments the skill runs with: a hook's replacement, or the model's.
    fn args(&self) -> &Value {
        self.modified.as_deref().unwrap_or(self.args)
    }

    fn answer(&mut self, output: Result<SkillOutput, SkillError>) {
        self.step = Step::Answered(Box::new(output));
    }
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
    ///   finished gets a [`SkillError::Cancelled`] result, so each call is still answered. A skill
    ///   never starts once the token has fired.
    pub async fn run_many(&self, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        match calls {
            [] => Vec::new(),
            [call] => vec![self.run_one(call, ctx).await],
            // Boxed: the batches' state (a bounded, ordered stream of calls) would otherwise
            // grow, and be moved with, the future of every single call.
            calls => Box::pin(self.run_batches(calls, ctx)).await,
        }
    }

    /// [`Registry::run_many`] for two calls or more: cuts them into batches and runs each.
    async fn run_batches(&self, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
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
                    let call_ctx = ctx.clone().with_call_id(call.id.clone());
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
        let ctx = ctx.clone().with_call_id(call.id.clone());
        if !self.hooks.is_empty() {
            // Boxed once: a registry without hooks does not carry the hooks' state in its future.
            return Box::pin(async {
                let prepared = self.before_hooks(self.resolve(call), &ctx).await;
                self.finish(call, prepared, ctx).await
            })
            .await;
        }
        // The common case, kept flat: one state machine from here to the skill's own future
        // (the same steps through `resolve` and `finish` measured ~30 ns slower per call).
        let (called_as, output) = match self.lookup(&call.name) {
            Some((name, entry)) => (
                name.clone(),
                self.execute(entry, None, &call.arguments, &ctx).await,
            ),
            None => (
                SharedStr::from(call.name.as_str()),
                Err(self.unknown_skill(&call.name)),
            ),
        };
        self.result(call, called_as, output, ctx)
    }

    /// Resolves the call, validates its arguments and runs the before-hooks.
    async fn prepare<'a>(&'a self, call: &'a ToolCall, ctx: &SkillContext) -> Prepared<'a> {
        let prepared = self.resolve(call);
        if self.hooks.is_empty() {
            return prepared;
        }
        // Boxed: a registry without hooks does not carry the hooks' state in every call's future.
        Box::pin(self.before_hooks(prepared, ctx)).await
    }

    /// Looks the skill up. Without hooks, that is all the preparing a call needs: the skill
    /// validates its arguments as it starts.
    fn resolve<'a>(&'a self, call: &'a ToolCall) -> Prepared<'a> {
        let args = &call.arguments;
        match self.lookup(&call.name) {
            Some((called_as, entry)) => Prepared {
                called_as: called_as.clone(),
                entry: Some(entry),
                args,
                modified: None,
                step: Step::Run(None),
            },
            None => Prepared {
                called_as: SharedStr::from(call.name.as_str()),
                entry: None,
                args,
                modified: None,
                step: Step::Answered(Box::new(Err(self.unknown_skill(&call.name)))),
            },
        }
    }

    /// Validates the arguments, then runs each hook's `before` in order.
    async fn before_hooks<'a>(
        &'a self,
        mut prepared: Prepared<'a>,
        ctx: &SkillContext,
    ) -> Prepared<'a> {
        let Some(entry) = prepared.entry else {
            return prepared;
        };
        // Hooks may ask a person; nobody is asked about a call of a cancelled run.
        if ctx.is_cancelled() {
            prepared.answer(Err(SkillError::Cancelled));
            return prepared;
        }
        let mut input = match parse(entry, prepared.args) {
            Ok(input) => input,
            Err(error) => {
                prepared.answer(Err(error));
                return prepared;
            }
        };
        // One panic guard around the whole chain (one per hook cost ~13 ns each): a hook that
        // panics, as it is called (a `PermissionGate`'s rule) or polled, answers the call.
        let chain = self.before_chain(entry, &mut prepared, &mut input, ctx);
        match AssertUnwindSafe(chain).catch_unwind().await {
            Ok(None) => prepared.step = Step::Run(Some(input)),
            Ok(Some(answer)) => prepared.answer(answer),
            Err(panic) => prepared.answer(Err(hook_panic_error(&*panic))),
        }
        prepared
    }

    /// Runs each hook's `before` in order on the validated `input`; `Some` is the call's answer
    /// when a hook ends it (a denial, a replacement, an error, or new arguments that are invalid).
    async fn before_chain(
        &self,
        entry: &Entry,
        prepared: &mut Prepared<'_>,
        input: &mut ParsedInput,
        ctx: &SkillContext,
    ) -> Option<Result<SkillOutput, SkillError>> {
        for hook in &self.hooks {
            let before = hook.before(&entry.definition.name, &entry.metadata, prepared.args());
            match until_cancelled(ctx, before).await {
                Ok(HookOutcome::Proceed) => {}
                Ok(HookOutcome::Modify(new_args)) => {
                    *input = match parse(entry, &new_args) {
                        Ok(new_input) => new_input,
                        Err(error) => return Some(Err(error)),
                    };
                    prepared.modified = Some(Box::new(new_args));
                }
                Ok(HookOutcome::Deny(reason)) => return Some(Err(SkillError::Denied(reason))),
                Ok(HookOutcome::Replace(text)) => return Some(Ok(SkillOutput::Text(text))),
                Err(error) => return Some(Err(error)),
            }
        }
        None
    }

    /// Runs a prepared call, then the after-hooks and truncation.
    async fn finish(
        &self,
        call: &ToolCall,
        mut prepared: Prepared<'_>,
        ctx: SkillContext,
    ) -> ToolResult {
        let step = std::mem::replace(&mut prepared.step, Step::Run(None));
        let mut output = match (step, prepared.entry) {
            (Step::Run(input), Some(entry)) => {
                self.execute(entry, input, prepared.args(), &ctx).await
            }
            (Step::Answered(output), _) => *output,
            (Step::Run(_), None) => Err(self.unknown_skill(&call.name)),
        };
        if !self.hooks.is_empty() {
            // Hooks see the skill's own name, whatever alias the model used (a rule about
            // `delete_file` must not be dodged by calling `rm`); an unknown name stays as called.
            let name = prepared
                .entry
                .map_or(call.name.as_str(), |e| &e.definition.name);
            output = self.after_hooks(name, prepared.args(), output).await;
        }
        self.result(call, prepared.called_as, output, ctx)
    }

    /// The call's result, cut to the output budget.
    fn result(
        &self,
        call: &ToolCall,
        called_as: SharedStr,
        output: Result<SkillOutput, SkillError>,
        ctx: SkillContext,
    ) -> ToolResult {
        ToolResult {
            call_id: ctx.into_call_id().unwrap_or_else(|| call.id.clone()),
            name: called_as,
            output: truncate_output(output, self.output_budget),
        }
    }

    /// Runs each hook's `after` in order on the result.
    async fn after_hooks(
        &self,
        name: &str,
        args: &Value,
        mut output: Result<SkillOutput, SkillError>,
    ) -> Result<SkillOutput, SkillError> {
        // One panic guard around the rest of the chain, as in `before_hooks`. After a panic, what
        // the hook left half changed is not trusted: the later hooks see the failure instead.
        let mut from = 0;
        while from < self.hooks.len() {
            let mut at = from;
            let rest = AssertUnwindSafe(async {
                for (i, hook) in self.hooks.iter().enumerate().skip(from) {
                    at = i;
                    hook.after(name, args, &mut output).await;
                }
            });
            match rest.catch_unwind().await {
                Ok(()) => break,
                Err(panic) => {
                    output = Err(hook_panic_error(&*panic));
                    from = at + 1;
                }
            }
        }
        output
    }

    /// Runs the skill with its timeout, retries and panic guard, until done or cancelled.
    async fn execute(
        &self,
        entry: &Entry,
        input: Option<ParsedInput>,
        args: &Value,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        if ctx.is_cancelled() {
            return Err(SkillError::Cancelled);
        }
        let span = tracing::info_span!(
            "execute_tool",
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = entry.definition.name.as_str(),
            "gen_ai.tool.call.id" = ctx.call_id().unwrap_or_default(),
        );
        let output = match start(entry, input, args, ctx, &span) {
            Ok(running) => running.await,
            Err(error) => Err(error),
        };
        match output {
            Err(error) if error.is_transient() => {
                // Boxed: the retry loop's state (a backoff timer) is rare, and would otherwise
                // grow every call's future.
                Box::pin(self.retry(entry, args, ctx, &span, error)).await
            }
            output => output,
        }
    }

    /// Retries a skill whose first attempt failed with `error`, a transient error, by the skill's
    /// retry policy or the registry's: [`with_retry`] sees the first attempt's error, then runs the
    /// others. Waiting out a backoff ends when the context is cancelled.
    async fn retry(
        &self,
        entry: &Entry,
        args: &Value,
        ctx: &SkillContext,
        span: &Span,
        error: SkillError,
    ) -> Result<SkillOutput, SkillError> {
        let policy = entry.retry_policy.as_ref().unwrap_or(&self.retry_policy);
        let mut first = Some(error);
        let attempts = with_retry(policy, |_| {
            let first = first.take();
            async move {
                if let Some(error) = first {
                    return Err(error);
                }
                if ctx.is_cancelled() {
                    return Err(SkillError::Cancelled);
                }
                // A retry parses the arguments again: the first attempt consumed them.
                start(entry, None, args, ctx, span)?.await
            }
        });
        until_cancelled(ctx, attempts).await
    }

    fn unknown_skill(&self, name: &str) -> SkillError {
        let suggestions = super::suggest::close_names(name, self.by_name.keys().map(|k| &**k));
        let close = !suggestions.is_empty();
        let suggestions = if close {
            suggestions
        } else {
            self.entries
                .iter()
                .filter(|e| !e.metadata.should_defer)
                .map(|e| e.definition.name.clone())
                .collect()
        };
        SkillError::UnknownSkill {
            name: super::suggest::quoted(name),
            suggestions,
            close,
        }
    }
}

/// Runs `work` unless or until the context is cancelled. The work is polled first, so work that
/// finishes at once never touches the cancellation token (which takes a lock).
async fn until_cancelled<T>(
    ctx: &SkillContext,
    work: impl Future<Output = Result<T, SkillError>>,
) -> Result<T, SkillError> {
    let mut work = std::pin::pin!(work);
    if let Poll::Ready(result) =
        std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await
    {
        return result;
    }
    tokio::select! {
        biased;
        result = work => result,
        _ = ctx.cancellation().cancelled() => Err(SkillError::Cancelled),
    }
}

/// Starts one attempt of a skill: with the arguments the hooks saw parsed, or parsing them now.
/// A panic on the way (in the arguments' `Deserialize`, say) is the call's error, as one while the
/// skill runs is.
fn start<'a>(
    entry: &'a Entry,
    input: Option<ParsedInput>,
    args: &Value,
    ctx: &'a SkillContext,
    span: &'a Span,
) -> Result<Running<'a>, SkillError> {
    let _entered = span.enter();
    let skill = guard_skill(|| match input {
        Some(input) => Ok(entry.skill.run_parsed(input, ctx)),
        None => entry.skill.start(args, ctx),
    })?;
    Ok(Running::new(skill, entry.timeout, ctx, span))
}

/// Validates `args` for the skill; a panic while doing so is the call's error.
fn parse(entry: &Entry, args: &Value) -> Result<ParsedInput, SkillError> {
    guard_skill(|| entry.skill.parse(args))
}

/// Runs the skill's own synchronous code (parsing, starting); a panic in it is the call's error.
fn guard_skill<T>(work: impl FnOnce() -> Result<T, SkillError>) -> Result<T, SkillError> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|panic| Err(panic_error(&*panic)))
}

/// One attempt of a running skill: polls the skill's future inside its `tracing` span and a panic
/// guard, and only when it does not finish at once arms its timeout and the cancellation watch, so a
/// call that completes in its first poll pays for neither.
struct Running<'a> {
    skill: SkillFuture<'a>,
    ctx: &'a SkillContext,
    span: &'a Span,
    timeout: Option<(Duration, tokio::time::Instant)>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    cancelled: Option<Pin<Box<tokio_util::sync::WaitForCancellationFuture<'a>>>>,
}

impl<'a> Running<'a> {
    fn new(
        skill: SkillFuture<'a>,
        timeout: Option<Duration>,
        ctx: &'a SkillContext,
        span: &'a Span,
    ) -> Self {
        Running {
            skill,
            ctx,
            span,
            // The deadline counts from the start, including the first poll.
            timeout: timeout.map(|limit| (limit, tokio::time::Instant::now() + limit)),
            timer: None,
            cancelled: None,
        }
    }
}

impl Future for Running<'_> {
    type Output = Result<SkillOutput, SkillError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let polled = {
            let _entered = this.span.enter();
            std::panic::catch_unwind(AssertUnwindSafe(|| this.skill.as_mut().poll(cx)))
        };
        match polled {
            Ok(Poll::Ready(output)) => return Poll::Ready(output),
            Err(panic) => return Poll::Ready(Err(panic_error(&*panic))),
            Ok(Poll::Pending) => {}
        }
        if let Some((limit, deadline)) = this.timeout {
            let timer = this
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            if timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(SkillError::Timeout(limit)));
            }
        }
        let ctx = this.ctx;
        let cancelled = this
            .cancelled
            .get_or_insert_with(|| Box::pin(ctx.cancellation().cancelled()));
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(SkillError::Cancelled));
        }
        Poll::Pending
    }
}

fn panic_error(panic: &(dyn std::any::Any + Send)) -> SkillError {
    SkillError::tool(format!("the skill panicked: {}", panic_message(panic)))
}

/// The error a call gets when a hook panics on it: the call is answered, the batch goes on.
fn hook_panic_error(panic: &(dyn std::any::Any + Send)) -> SkillError {
    SkillError::tool(format!(
        "a hook panicked while handling this call: {}",
        panic_message(panic)
    ))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
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
        Err(error) => Err(truncate_error(error, budget)),
    }
}

/// Cuts the texts of an error to the budget, keeping its kind (denials and safety refusals are
/// counted by kind). Error texts can be as long as anything a skill or the model sent: serde quotes
/// a wrongly typed value, an unknown name is repeated, a refusal names the path it refused.
fn truncate_error(error: SkillError, budget: usize) -> SkillError {
    let cut = |text: String| truncate_text(text, budget);
    match error {
        SkillError::Tool { message, source } => SkillError::Tool {
            message: cut(message),
            source,
        },
        SkillError::BadArgs { path, message } => SkillError::BadArgs {
            path: cut(path),
            message: cut(message),
        },
        SkillError::UnknownSkill {
            name,
            suggestions,
            close,
        } => SkillError::UnknownSkill {
            name: cut(name),
            suggestions,
            close,
        },
        SkillError::Denied(reason) => SkillError::Denied(cut(reason)),
        SkillError::Safety(reason) => SkillError::Safety(cut(reason)),
        SkillError::Transient(reason) => SkillError::Transient(cut(reason)),
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
