//! A typed answer streamed as partial values, measured.
//!
//! - `partial/2,000 pieces`: a 20 KB answer (a list of 120 records) read by `PartialJson` in
//!   2,000 pieces of about 10 bytes, with the value so far taken after every piece that added
//!   something and dropped before the next, as a typed run's stream hands it out.
//! - `partial/parse once`: the floor, serde_json reading the same text whole into a `Value`.
//! - `partial/re-parse per piece`: what a reader that parses the text so far at every piece
//!   would cost (serde_json on each prefix, closed with the brackets it lacks), for scale; a
//!   prefix that does not close cleanly (a string cut mid-way) is skipped, so it is a lower bound.
//!
//! `cargo bench -p agent-runtime --bench partial` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;
use std::time::Duration;

use agent_runtime::runtime::PartialJson;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// About 20 KB of JSON: records with strings, numbers, a flag and a list.
fn answer() -> String {
    let items: Vec<Value> = (0..120)
        .map(|i| {
            json!({
                "id": i,
                "title": format!("Item number {i} of the inventory"),
                "price": 10.5 + f64::from(i),
                "tags": ["stock", "shelf", format!("row-{}", i % 7)],
                "available": i % 3 != 0,
                "note": "Checked by the morning shift; no damage found.",
            })
        })
        .collect();
    json!({"summary": "Inventory of the north warehouse", "items": items}).to_string()
}

/// `text` in `n` pieces (the last ones a character shorter when it does not divide evenly).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let (size, longer) = (chars.len() / n, chars.len() % n);
    let mut rest = &chars[..];
    (0..n)
        .map(|i| {
            let (piece, after) = rest.split_at(size + usize::from(i < longer));
            rest = after;
            piece.iter().collect()
        })
        .collect()
}

/// The text so far closed with the brackets it lacks, if it ends between values.
fn closed(prefix: &str) -> Option<String> {
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in prefix.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (false, _, '"') => in_string = true,
            (false, _, '{') => stack.push('}'),
            (false, _, '[') => stack.push(']'),
            (false, _, '}' | ']') => {
                stack.pop();
            }
            _ => {}
        }
    }
    if in_string {
        return None;
    }
    let trimmed = prefix.trim_end().trim_end_matches(',');
    Some(trimmed.chars().chain(stack.into_iter().rev()).collect())
}

fn bench(c: &mut Criterion) {
    let text = answer();
    assert!(
        (19_000..22_000).contains(&text.len()),
        "{} bytes",
        text.len()
    );
    let parts = pieces(&text, 2_000);
    assert_eq!(parts.len(), 2_000);
    let whole: Value = serde_json::from_str(&text).unwrap();
    // The bench reads what it claims to: all of it, to the same value.
    let mut check = PartialJson::new();
    parts.iter().for_each(|p| check.push(p));
    assert_eq!(check.value(), Some(&whole));

    let mut group = c.benchmark_group("partial");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .sample_size(10);
    }
    group.bench_function("parse once", |b| {
        b.iter(|| black_box(serde_json::from_str::<Value>(black_box(&text)).unwrap()))
    });
    group.bench_function("2,000 pieces", |b| {
        b.iter(|| {
            let mut json = PartialJson::new();
            let mut sent = 0usize;
            for piece in &parts {
                json.push(black_box(piece));
                if json.take_changed() {
                    let snapshot = json.snapshot();
                    sent += usize::from(black_box(snapshot).is_some());
                }
            }
            black_box(sent)
        })
    });
    group.bench_function("re-parse per piece", |b| {
        b.iter(|| {
            let mut so_far = String::new();
            let mut parsed = 0usize;
            for piece in &parts {
                so_far.push_str(piece);
                if let Some(closed) = closed(&so_far) {
                    parsed += usize::from(serde_json::from_str::<Value>(&closed).is_ok());
                }
            }
            black_box(parsed)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
