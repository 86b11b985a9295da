//! Media in a run, measured.
//!
//! - `encode`: the body of an Anthropic request whose transcript holds a 5 MB image, made as it
//!   is sent (JSON, the image in base64), against the floor: base64-encoding the 5 MB once.
//! - `memory`: the bytes a run holds at its end, with a 5 MB image attached to its goal, after 10
//!   and after 50 turns (one tool call each): counted by this bench's allocator. Flat in the
//!   number of turns means the image is held once, not copied per turn (a copy per turn would be
//!   200 MB more at 50 turns than at 10).
//!
//! `cargo bench -p agent-runtime --bench media` (`BENCH_QUICK=1` for a short run)

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::IntoFuture;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::content::Media;
use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{AnthropicProvider, ChatRequest, Message, MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use base64::Engine as _;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Counts the bytes live on the heap.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Look something up.
///
/// # Arguments
/// * `key` - What.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(format!("{key}: 42"))
}

/// A PNG of 5 MB: a valid header, then padding (only the header is read).
fn image() -> Media {
    let mut png = agent_core::content::tiny_png().to_vec();
    png.resize(5 * 1024 * 1024, 7);
    Media::new("image/png", png)
}

fn quick(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(2));
    }
    group.sample_size(20);
}

fn encode(c: &mut Criterion) {
    let media = image();
    let bytes = media.bytes().unwrap().clone();
    let transcript = [Message::user("What is in this picture?").attach(media)];
    let provider = AnthropicProvider::new("k", "claude-sonnet-4-5");
    let mut group = c.benchmark_group("media_encode");
    quick(&mut group);
    group.bench_function("floor_base64_once", |b| {
        b.iter(|| black_box(base64::engine::general_purpose::STANDARD.encode(black_box(&bytes))))
    });
    group.bench_function("request_body", |b| {
        b.iter(|| {
            black_box(provider.request_bytes(black_box(&ChatRequest::new(&transcript)), false))
        })
    });
    group.finish();
}

/// The bytes live at the end of a run of `turns` turns on a goal with the 5 MB image, minus
/// those live before it (the transcript is still held, in the outcome).
fn live_after(rt: &tokio::runtime::Runtime, turns: usize) -> usize {
    let mut registry = Registry::new();
    registry.add(LookupSkill);
    let replies = (0..turns)
        .map(|i| {
            MockReply::tool_calls([ToolCall::new(format!("c{i}"), "lookup", json!({"key": i}))])
        })
        .chain([MockReply::text("Done.")]);
    let runtime = AgentRuntime::new(MockProvider::new(replies).without_recording(), registry)
        .max_steps(turns + 2);
    let before = LIVE.load(Ordering::Relaxed);
    let outcome = rt
        .block_on(runtime.run("Look at this.").attach(image()).into_future())
        .unwrap();
    let live = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    assert_eq!(outcome.steps, turns + 1);
    drop(outcome);
    live
}

fn memory(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (ten, fifty) = (live_after(&rt, 10), live_after(&rt, 50));
    println!(
        "media_memory: live bytes at the end of a run holding a 5 MB image: {ten} after 10 turns, \
         {fifty} after 50 ({:.3}× )",
        fifty as f64 / ten as f64
    );
    let mut group = c.benchmark_group("media_memory");
    quick(&mut group);
    group.bench_function("run_50_turns_with_5mb_image", |b| {
        b.iter(|| black_box(live_after(&rt, 50)))
    });
    group.finish();
}

criterion_group!(benches, encode, memory);
criterion_main!(benches);
