//! The agent loop with a scripted model and real skills: every finish reason (`finish`), runs
//! paused for a decision (`pause`), sessions in memory and on disk (`sessions`), typed results
//! (`typed_runs`), model calls skills report (`model_use`), and hostile inputs from the network
//! and from skills (`adversarial`). Tracing
//! spans are a binary of their own (`tracing_spans.rs`: it sets a subscriber, and tracing caches
//! each callsite's interest process-wide), and the loop against real HTTP on loopback is
//! `providers/`.

mod adversarial;
mod agents;
mod cost;
mod finish;
mod handoffs;
mod media;
mod model_use;
mod partial_json;
mod pause;
mod sessions;
mod tree_budgets;
mod trust;
mod typed_runs;

use agent_llm::Usage;

/// A model call's usage of `input` and `output` tokens.
fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}
