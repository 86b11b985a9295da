//! Running a skill: its timeout, retries and panic guard, until it is done or the run is
//! cancelled; a skill never starts once the run is cancelled.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tracing::Span;

use super::Registry;
use super::entry::Entry;
use super::guard::{guard_skill, panic_error, until_cancelled};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::retry::with_retry;
use crate::skill::{ParsedInput, SkillFuture, SkillOutput};

impl Registry {
    /// Runs the skill with its timeout, retries and panic guard, until done or cancelled: on
    /// `input` when the hooks saw it parsed, else parsing `args` as it starts.
    pub(super) async fn execute(
        &self,
        entry: &Entry,
        input: Option<ParsedInput>,
        args: &Value,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        if ctx.is_cancelled() {
            return Err(SkillError::Cancelled);
        }
        // Named after the OpenTelemetry GenAI conventions; `otel.*` are what an OpenTelemetry
        // exporter shows as the span's name, kind and status.
        let span = tracing::info_span!(
            "execute_tool",
            "otel.name" = tracing::field::Empty,
            "otel.kind" = "internal",
            "otel.status_code" = tracing::field::Empty,
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = entry.definition.name.as_str(),
            "gen_ai.tool.call.id" = ctx.call_id().unwrap_or_default(),
            "gen_ai.tool.type" = "function",
            "error.type" = tracing::field::Empty,
            "eugene.tool.paused" = tracing::field::Empty,
        );
        if !span.is_disabled() {
            span.record(
                "otel.name",
                format!("execute_tool {}", entry.definition.name),
            );
        }
        let output = match start(entry, input, args, ctx, &span) {
            Ok(running) => running.await,
            Err(error) => Err(error),
        };
        let output = match output {
            Err(error) if error.is_transient() => {
                // Boxed: the retry loop's state (a backoff timer) is rare, and would otherwise
                // grow every call's future.
                Box::pin(self.retry(entry, args, ctx, &span, error)).await
            }
            output => output,
        };
        if let Err(error) = &output
            && !span.is_disabled()
        {
            // A pause is not a failure: the span says it paused, and its status stays unset.
            match error.is_pause() {
                true => span.record("eugene.tool.paused", error_type(error)),
                false => {
                    span.record("error.type", error_type(error));
                    span.record("otel.status_code", "ERROR")
                }
            };
        }
        output
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
        let policy = entry
            .retry_policy
            .as_ref()
            .unwrap_or(&self.settings.retry_policy);
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
}

/// Validates `args` for the skill; a panic while doing so is the call's error.
pub(super) fn parse(entry: &Entry, args: &Value) -> Result<ParsedInput, SkillError> {
    guard_skill(|| entry.skill.parse(args))
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

/// `error.type` of a failed skill call on its `execute_tool` span.
fn error_type(error: &SkillError) -> &'static str {
    match error {
        SkillError::BadArgs { .. } => "bad_args",
        SkillError::UnknownSkill { .. } => "unknown_skill",
        SkillError::Denied(_) => "denied",
        SkillError::ApprovalRequired(_) => "approval_required",
        SkillError::Suspended(_) => "suspended",
        SkillError::Safety(_) => "safety",
        SkillError::Transient(_) => "transient",
        SkillError::Timeout(_) => "timeout",
        SkillError::Cancelled => "cancelled",
        SkillError::Tool { .. } => "tool",
    }
}
