//! `apply_patch`'s context search on the inputs that were quadratic before its index, each next
//! to its floor measured in the same run: the same patch with context that matches exactly.
//!
//! - `hunks`: a 200,000-line file and 50,000 hunks whose context differs from the file only in
//!   its dashes (`-` for `–`), so only the last, most forgiving pass finds it (the audit's
//!   50,000-hunk patch took 71 s).
//! - `long_context`: 60,000 identical lines and one 30,000-line context over them that matches
//!   only at the end, again only in the last pass (a 90 KB patch of this shape took 180 s).
//!
//! ```sh
//! cargo bench -p agent-std-tools --bench patch
//! ```

use agent_std_tools::patch::{Hunk, apply_chunks, parse};
use criterion::{Criterion, criterion_group, criterion_main};

/// The file, and the patch text, for the many-hunks case; `dash` is what the context writes.
fn hunks(dash: &str) -> (String, String) {
    let lines = 200_000;
    let file: String = (0..lines)
        .map(|i| format!("item {i} \u{2013} x\n"))
        .collect();
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    for i in (0..lines).step_by(4) {
        patch.push_str(&format!(
            "@@\n item {i} {dash} x\n-item {} \u{2013} x\n+changed {}\n",
            i + 1,
            i + 1
        ));
    }
    patch.push_str("*** End Patch\n");
    (file, patch)
}

/// The file, and the patch text, for the long-context case; `dash` is what the context writes.
fn long_context(dash: &str) -> (String, String) {
    let mut file = "same\n".repeat(60_000);
    file.push_str("end \u{2013}\ntail\n");
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    patch.push_str(&" same\n".repeat(30_000));
    patch.push_str(&format!(" end {dash}\n-tail\n+TAIL\n*** End Patch\n"));
    (file, patch)
}

fn apply(file: &str, patch: &str) -> usize {
    let parsed = parse(patch).unwrap();
    let Hunk::Update { chunks, .. } = &parsed.hunks[0] else {
        unreachable!()
    };
    apply_chunks(file, "f.txt", chunks).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("apply_patch");
    group.sample_size(10);
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(2));
    }
    for (name, make) in [
        ("hunks", hunks as fn(&str) -> (String, String)),
        ("long_context", long_context),
    ] {
        let (floor_file, floor_patch) = make("\u{2013}");
        let (file, patch) = make("-");
        group.bench_function(format!("{name}/exact (floor)"), |b| {
            b.iter(|| apply(&floor_file, &floor_patch))
        });
        group.bench_function(format!("{name}/last pass only"), |b| {
            b.iter(|| apply(&file, &patch))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
