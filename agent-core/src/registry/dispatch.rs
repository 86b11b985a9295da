//! Running a model turn's calls: batches of calls that may run together, and the steps every
//! call takes, alone or in a batch: looked up once ([`PreparedCall`]), decided on by the
//! before-hooks (`decide`), run and shown to the after-hooks (`finish`), cut to the output budget
//! (`result`).

use futures::{StreamExt, stream};

use super::Registry;
#[cfg(doc)]
use super::destructive::DestructiveCalls;
use super::live::LiveView;
use super::prepared::{Decided, Decision, Next, PreparedCall};
use super::suggest;
use super::truncate::truncate_output;
use crate::call::{SharedStr, ToolCall, ToolResult};
use crate::context::SkillContext;
use crate::error::SkillError;
use crate::skill::SkillOutput;

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
    ///   `before` run in order, for all calls of a batch before any of them starts; a destructive
    ///   skill's call that they let through meets the registry's [`DestructiveCalls`] (by default
    ///   it is answered with [`SkillError::ApprovalRequired`] unless a person approved it, or a hook
    ///   decides permissions); the skill runs,
    ///   with its timeout, and transient failures are retried by its policy or the registry's; a
    ///   panic becomes an error result; the hooks' `after` see the result; a result longer than the
    ///   output budget is cut with a notice.
    /// - **Live sets.** The skills of the registry's [`LiveSkills`](super::LiveSkills) sets are
    ///   the ones they have when the batch's calls are looked up, whatever happens to the sets
    ///   while the calls run.
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

    /// Runs one call through the same steps as [`Registry::run_many`].
    pub async fn run_one(&self, call: &ToolCall, ctx: &SkillContext) -> ToolResult {
        let live = self.live();
        let prepared = self.prepare(call, &live);
        if !self.hooks.is_empty() {
            // Boxed once: a registry without hooks does not carry the hooks' state in its future.
            return Box::pin(async {
                self.finish(self.decide(prepared, &live, ctx, 0).await)
                    .await
            })
            .await;
        }
        // Without hooks the decision is known (run the skill, or answer an unknown name) and the
        // steps are composed in one flat future: through `decide` and `finish`, one more layer of
        // future, this call took 20-35 % longer (docs/PERFORMANCE.md).
        let ctx = prepared.context(ctx, 0);
        let called_as = prepared.called_as();
        let output = match prepared {
            PreparedCall::Known { entry, .. } => {
                match self.destructive_answer(entry, &call.arguments, &ctx) {
                    Some(error) => Err(error),
                    None => self.execute(entry, None, &call.arguments, &ctx).await,
                }
            }
            PreparedCall::Unknown(_) => Err(self.unknown_skill(&call.name, &live)),
        };
        self.result(call, called_as, output, ctx)
    }

    /// [`Registry::run_many`] for two calls or more: cuts them into batches and runs each.
    async fn run_batches(&self, calls: &[ToolCall], ctx: &SkillContext) -> Vec<ToolResult> {
        let live = self.live();
        let prepared: Vec<PreparedCall<'_>> =
            calls.iter().map(|call| self.prepare(call, &live)).collect();
        let mut results = Vec::with_capacity(calls.len());
        let together =
            |a: &PreparedCall, b: &PreparedCall| a.is_concurrency_safe() && b.is_concurrency_safe();
        let mut position = 0;
        for batch in prepared.chunk_by(together) {
            // Before-hooks run one call at a time, in call order, before any call of the batch
            // starts; then the batch runs, at most `max_concurrency` at once, results in order.
            let mut running = Vec::with_capacity(batch.len());
            for &call in batch {
                running.push(self.finish(self.decide(call, &live, ctx, position).await));
                position += 1;
            }
            let finished = stream::iter(running).buffered(self.settings.max_concurrency);
            results.extend(finished.collect::<Vec<_>>().await);
        }
        results
    }
    /// Decides what happens to the call, in a context of its own: an unknown name is answered;
    /// without hooks the skill runs, and validates its arguments as it starts; with hooks, they
    /// decide.
    async fn decide<'a>(
        &'a self,
        call: PreparedCall<'a>,
        live: &LiveView,
        ctx: &SkillContext,
        position: usize,
    ) -> Decided<'a> {
        let ctx = call.context(ctx, position);
        let decision = match call {
            PreparedCall::Unknown(call) => {
                Decision::answer(Err(self.unknown_skill(&call.name, live)))
            }
            PreparedCall::Known { call, entry, .. } if self.hooks.is_empty() => {
                match self.destructive_answer(entry, &call.arguments, &ctx) {
                    Some(error) => Decision::answer(Err(error)),
                    None => Decision::run(entry),
                }
            }
            PreparedCall::Known { call, entry, .. } => {
                let mut decision = self.hooks.before(entry, &call.arguments, &ctx).await;
                // What every hook let through still meets the default for destructive calls.
                let args = decision.modified.as_deref().unwrap_or(&call.arguments);
                if matches!(decision.next, Next::Run(..))
                    && let Some(error) = self.destructive_answer(entry, args, &ctx)
                {
                    decision.next = Next::Answer(Box::new(Err(error)));
                }
                decision
            }
        };
        Decided {
            call,
            decision,
            ctx,
        }
    }

    /// Runs the skill (unless the call is already answered), then the after-hooks, and makes
    /// the call's result.
    async fn finish(&self, decided: Decided<'_>) -> ToolResult {
        let Decided {
            call,
            decision,
            ctx,
        } = decided;
        let args = decision
            .modified
            .as_deref()
            .unwrap_or(&call.call().arguments);
        let mut output = match decision.next {
            Next::Run(entry, input) => self.execute(entry, input, args, &ctx).await,
            Next::Answer(output) => *output,
        };
        // A call that waits for a decision has not finished: its after-hooks run when it has
        // run, once decided. So a hook never takes a pause for a failure (or turns one into
        // one).
        if !self.hooks.is_empty() && !output.as_ref().is_err_and(SkillError::is_pause) {
            output = self.hooks.after(call.skill_name(), args, output).await;
        }
        self.result(call.call(), call.called_as(), output, ctx)
    }

    /// The call's result, named as the model called it, cut to the output budget.
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
            output: truncate_output(output, self.settings.output_budget),
        }
    }

    fn unknown_skill(&self, name: &str, live: &LiveView) -> SkillError {
        suggest::unknown_skill(
            name,
            self.skills
                .names_and_aliases()
                .chain(live.names_and_aliases()),
            self.skills.visible_names().chain(
                live.entries(&self.skills)
                    .filter(|e| !e.metadata.should_defer)
                    .map(|e| e.definition.name.as_str()),
            ),
        )
    }
}
