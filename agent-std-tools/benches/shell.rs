//! What the sandbox costs one `run_shell` call: `true` run through the registry, confined (every
//! layer: Landlock, namespaces with their own `/proc`, capabilities, seccomp, a process limit)
//! and with `Confinement::Off` (the supervisor only), against the floor of spawning `sh -c true`
//! straight from tokio and waiting for it, in the same run.
//!
//! ```sh
//! cargo bench -p agent-std-tools --bench shell
//! ```

use agent_core::{Registry, SkillContext, ToolCall};
use agent_std_tools::{Confinement, ShellConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::discover().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let call = [ToolCall::new(
        "1",
        "run_shell",
        json!({ "command": "true" }),
    )];
    let confined = SkillContext::new(workspace.path());
    let off = SkillContext::new(workspace.path()).with_extension(ShellConfig {
        confinement: Confinement::Off,
        ..ShellConfig::default()
    });
    // Checked before timing: every layer is in place, so the number below is the full sandbox's.
    let first = runtime.block_on(registry.run_many(&call, &confined));
    assert_eq!(
        first[0].content(),
        "exit code: 0\n(no output)",
        "a layer is missing here"
    );

    let mut group = c.benchmark_group("run_shell_true");
    group.sample_size(30);
    group.bench_function("floor: tokio spawn sh -c true", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let status = tokio::process::Command::new("sh")
                    .args(["-c", "true"])
                    .status()
                    .await
                    .unwrap();
                assert!(status.success());
            })
        })
    });
    group.bench_function("run_shell, confinement off", |b| {
        b.iter(|| runtime.block_on(registry.run_many(&call, &off)))
    });
    group.bench_function("run_shell, confined", |b| {
        b.iter(|| runtime.block_on(registry.run_many(&call, &confined)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
