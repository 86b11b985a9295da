//! What prompt caching saves over a 20-turn tool-calling session (docs/PERFORMANCE.md, section
//! "Prompt caching").
//!
//! A scripted session runs through the real Anthropic codec against a loopback server that
//! keeps every request body. What Anthropic would bill for those bodies is then computed from
//! its documented caching rules, as a model (no real API is called): the blocks of a request are
//! tools, then system, then messages; a prefix ending at a marked block is written to the cache
//! (at least 1,024 tokens, the minimum of most models) at 1.25 times the input price; a later
//! request reads the longest prefix it shares with a written one, ending at one of its own marked
//! blocks or up to 20 blocks before one, at 0.1 times; the rest is full price. Tokens are
//! estimated as a block's JSON length over four. The cost comes from the built-in price table.

use std::hash::{DefaultHasher, Hasher};

use agent_core::{SkillOutput, ToolCall, ToolDefinition, ToolResult};
use agent_llm::{
    AnthropicProvider, CacheControl, ChatRequest, LlmProvider, Message, PriceTable, Usage,
};
use serde_json::{Value, json};

use crate::server::{Reply, Server};

const TURNS: usize = 20;
/// The smallest prefix the API caches (Claude Sonnet 4.5).
const MIN_CACHED: u64 = 1024;
/// How far before a breakpoint the API looks for an earlier cached prefix.
const LOOKBACK: usize = 20;
const OUTPUT_TOKENS: u64 = 60;

fn tools() -> Vec<ToolDefinition> {
    ["read_file", "list_dir", "search", "write_file"]
        .iter()
        .map(|name| ToolDefinition {
            name: (*name).into(),
            description: format!("{name}: works on the project's files. ").repeat(6),
            input_schema: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "A path relative to the project root."},
                "pattern": {"type": "string", "description": "What to look for, as a regex."}
            }, "required": ["path"]}),
            output_schema: None,
        })
        .collect()
}

fn system() -> String {
    (1..=80)
        .map(|i| format!("Rule {i}: read before you write, and say which file you changed. "))
        .collect()
}

/// The model's answer at `turn`: a call until the last turn, then text.
fn answer(turn: usize) -> Value {
    let content = if turn < TURNS {
        json!([{"type": "text", "text": format!("Step {turn}: reading the next file.")},
               {"type": "tool_use", "id": format!("toolu_{turn}"), "name": "read_file",
                "input": {"path": format!("src/module_{turn}.rs")}}])
    } else {
        json!([{"type": "text", "text": "Done: every module read."}])
    };
    let stop = if turn < TURNS { "tool_use" } else { "end_turn" };
    json!({"id": format!("msg_{turn}"), "type": "message", "role": "assistant",
           "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop,
           "usage": {"input_tokens": 1, "output_tokens": OUTPUT_TOKENS}})
}

/// Runs the session with `cache`; the request bodies the server received.
async fn session(cache: CacheControl) -> Vec<Value> {
    let server = Server::start((1..=TURNS).map(|t| Reply::json(200, &answer(t)))).await;
    let provider = AnthropicProvider::new("k", "claude-sonnet-4-5")
        .with_base_url(&server.url)
        .with_cache_control(cache);
    let (tools, system) = (tools(), system());
    let mut transcript = vec![Message::user(
        "Read every module and summarise the project.",
    )];
    for turn in 1..=TURNS {
        let request = ChatRequest::new(&transcript).system(&system).tools(&tools);
        let reply = provider.complete(&request).await.unwrap();
        let calls: Vec<ToolCall> = reply.message.tool_calls.clone();
        transcript.push(reply.message);
        for call in &calls {
            let text = format!("// module {turn}\npub fn item() -> u32 {{ {turn} }}\n").repeat(40);
            let result = ToolResult::new(call, Ok(SkillOutput::from(text)));
            transcript.push(Message::tool_result(&result));
        }
    }
    server.received().iter().map(|r| r.json()).collect()
}

/// One request's input tokens as the caching rules bill them.
#[derive(Debug, Default, Clone, Copy)]
struct Billed {
    full: u64,
    read: u64,
    written: u64,
}

/// Bills each request in order, the cache filled by the ones before it.
fn bill(bodies: &[Value]) -> Vec<Billed> {
    let mut cached = std::collections::HashSet::new();
    bodies
        .iter()
        .map(|body| {
            let (prefixes, tokens, marks) = blocks(body);
            let total = *tokens.last().unwrap();
            let read_end = (0..prefixes.len())
                .filter(|&p| cached.contains(&prefixes[p]))
                .filter(|&p| marks.iter().any(|&b| b >= p && b - p <= LOOKBACK))
                .max();
            let read = read_end.map_or(0, |p| tokens[p]);
            let last = marks
                .iter()
                .copied()
                .filter(|&b| tokens[b] >= MIN_CACHED)
                .max();
            let written = last.map_or(0, |b| tokens[b].saturating_sub(read));
            for &b in marks.iter().filter(|&&b| tokens[b] >= MIN_CACHED) {
                cached.insert(prefixes[b]);
            }
            Billed {
                full: total - read - written,
                read,
                written,
            }
        })
        .collect()
}

/// A request's blocks in the cache's order (tools, system, messages): the hash of the prefix
/// ending at each, the tokens up to and including each, and which ones are marked.
fn blocks(body: &Value) -> (Vec<u64>, Vec<u64>, Vec<usize>) {
    let mut all: Vec<(String, Value)> = Vec::new();
    for (kind, list) in [("tool", &body["tools"]), ("system", &body["system"])] {
        for block in list.as_array().into_iter().flatten() {
            all.push((kind.to_owned(), block.clone()));
        }
    }
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().unwrap() {
            all.push((message["role"].as_str().unwrap().to_owned(), block.clone()));
        }
    }
    let (mut hasher, mut sum) = (DefaultHasher::new(), 0);
    let (mut prefixes, mut tokens, mut marks) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (kind, mut block)) in all.into_iter().enumerate() {
        if block
            .as_object_mut()
            .unwrap()
            .remove("cache_control")
            .is_some()
        {
            marks.push(i);
        }
        let text = format!("{kind}:{block}");
        hasher.write(text.as_bytes());
        prefixes.push(hasher.finish());
        sum += (text.len() as u64).div_ceil(4);
        tokens.push(sum);
    }
    (prefixes, tokens, marks)
}

fn usage(billed: &[Billed]) -> Usage {
    Usage {
        input_tokens: billed.iter().map(|b| b.full).sum(),
        cache_read_tokens: billed.iter().map(|b| b.read).sum(),
        cache_write_tokens: billed.iter().map(|b| b.written).sum(),
        output_tokens: OUTPUT_TOKENS * billed.len() as u64,
        ..Usage::default()
    }
}

/// Dollars for `usage` at Claude Sonnet 4.5's prices in the built-in table.
fn dollars(usage: &Usage) -> f64 {
    let table = PriceTable::builtin();
    let cost = table.cost("anthropic", "claude-sonnet-4-5", usage);
    assert!(cost.is_complete(), "every count is priced");
    cost.total().as_dollars()
}

#[tokio::test]
async fn conversation_breakpoints_bill_a_long_run_its_history_at_the_cache_read_price() {
    let before_cache = CacheControl {
        conversation: false,
        ..CacheControl::default()
    };
    let runs = [
        ("no breakpoints", CacheControl::none()),
        ("tools and system (before)", before_cache),
        ("with the conversation (after)", CacheControl::default()),
    ];
    let mut results = Vec::new();
    for (name, cache) in runs {
        let bodies = session(cache).await;
        assert_eq!(bodies.len(), TURNS);
        let billed = bill(&bodies);
        let usage = usage(&billed);
        // Each request priced on its own (prices may depend on a prompt's size).
        let cost: f64 = billed
            .iter()
            .map(|b| dollars(&self::usage(std::slice::from_ref(b))))
            .sum();
        eprintln!(
            "{name}: {} full, {} read, {} written, {} output tokens: ${cost:.4}",
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.output_tokens
        );
        results.push((bodies, billed, usage, cost));
    }
    let (_, _, none, none_cost) = &results[0];
    let (before_bodies, before_billed, before, before_cost) = &results[1];
    let (_, after_billed, after, after_cost) = &results[2];
    assert_eq!(none.input_tokens, before.total() - before.output_tokens);
    assert!(before_cost < none_cost);

    // After: every request from the second on reads all of the one before it, and the last
    // breakpoint is the request's end, so nothing is billed at the full price.
    let sizes: Vec<u64> = before_bodies
        .iter()
        .map(|b| *blocks(b).1.last().unwrap())
        .collect();
    for turn in 1..TURNS {
        assert!(
            after_billed[turn].read >= sizes[turn - 1],
            "turn {}",
            turn + 1
        );
    }
    assert_eq!(after.input_tokens, 0);

    let first = blocks(&before_bodies[0]).1;
    eprintln!(
        "tools {} tokens, system {}, first request {}, a turn adds {} on average",
        first[3],
        first[4] - first[3],
        sizes[0],
        (sizes[TURNS - 1] - sizes[0]) / (TURNS as u64 - 1)
    );
    // The history that before re-sent at the full price, from the second request on.
    let resent: u64 = (1..TURNS)
        .map(|t| before_billed[t].full.min(sizes[t - 1]))
        .sum();
    // Per-token prices, from a thousand tokens (a million would be priced at the long-prompt tier).
    let per_token = |usage: Usage| dollars(&usage) / 1e3;
    let input = per_token(Usage {
        input_tokens: 1_000,
        ..Usage::default()
    });
    let read = per_token(Usage {
        cache_read_tokens: 1_000,
        ..Usage::default()
    });
    let write = per_token(Usage {
        cache_write_tokens: 1_000,
        ..Usage::default()
    });
    eprintln!(
        "per million tokens: input ${:.2}, cache read ${:.2}, cache write ${:.2}",
        input * 1e6,
        read * 1e6,
        write * 1e6
    );
    // At least half of what reading that history instead saves, less the write premium on
    // every token the run adds.
    let added = sizes[TURNS - 1] - sizes[0];
    let margin = 0.5 * resent as f64 * (input - read) - added as f64 * (write - input);
    assert!(margin > 0.0);
    eprintln!(
        "re-sent history {resent} tokens; after saves ${:.4} ({:.0}%), margin ${margin:.4}",
        before_cost - after_cost,
        100.0 * (before_cost - after_cost) / before_cost
    );
    assert!(
        after_cost + margin <= *before_cost,
        "after ${after_cost:.4}, before ${before_cost:.4}, margin ${margin:.4}"
    );
}
