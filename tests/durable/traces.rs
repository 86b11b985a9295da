//! A durable run's spans, exported to a real OTLP receiver (Arize Phoenix, started by the test):
//! the service is killed in the middle of a run and a second instance replays it, and both
//! attempts are one trace. The first attempt's `durable_run` and `invoke_agent` spans never end
//! (the process dies inside them), so what shows it is the trace id: the spans the first attempt
//! finished before it died and every span of the second share it, and the second attempt's
//! `durable_run` is not a root but a child of the span the first attempt ran in, named by the
//! journaled `traceparent`.

use std::time::{Duration, Instant};

use serde_json::json;
use test_support::phoenix::{Phoenix, Span, phoenix};

use crate::support::*;

/// The spans of `project` once `done` holds for them (Phoenix ingests through a queue).
async fn spans_when(
    phoenix: &'static Phoenix,
    project: &'static str,
    what: &str,
    done: impl Fn(&[Span]) -> bool,
) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let spans = tokio::task::spawn_blocking(move || phoenix.spans(project, 1))
            .await
            .unwrap();
        if done(&spans) {
            return spans;
        }
        assert!(
            Instant::now() < deadline,
            "Phoenix never had {what}; it has: {:?}",
            spans.iter().map(Span::name).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_replayed_by_another_instance_after_a_crash_is_one_trace() {
    const PROJECT: &str = "durable-crash";
    let phoenix = tokio::task::spawn_blocking(|| phoenix(env!("CARGO_TARGET_TMPDIR")))
        .await
        .unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.http_endpoint()),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("openinference.project.name={PROJECT}"),
        ),
        // Finished spans leave at once, so that those of the attempt that is killed get out.
        ("OTEL_BSP_SCHEDULE_DELAY", "50".to_owned()),
    ];
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "first"})),
            ("c2", "write_note", json!({"name": "b", "text": "second"})),
        ]),
        text("Both notes are written."),
    ])
    .await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = service_in(port, work.path(), &llm.url, Some("b"), &[], &env).await;
    restate.register(port).await;

    let invocation = restate.send_run("traced", "Write notes a and b.").await;
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    // Before the kill: the first model call and `a`'s call ended, and reached Phoenix.
    let before = spans_when(phoenix, PROJECT, "the first attempt's spans", |spans| {
        spans.iter().any(|s| s.name().starts_with("chat"))
            && spans.iter().any(|s| s.name() == "execute_tool write_note")
    })
    .await;
    let trace = before[0].trace_id().to_owned();
    assert!(before.iter().all(|s| s.trace_id() == trace), "{before:?}");
    assert!(
        !before.iter().any(|s| s.name().starts_with("durable_run")),
        "{before:?}"
    );
    first.kill();

    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service_in(port, work.path(), &llm.url, Some("b"), &[], &env).await;
    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes are written.",
        "{outcome}"
    );

    let after = spans_when(
        phoenix,
        PROJECT,
        "the second attempt's durable_run",
        |spans| spans.iter().any(|s| s.name().starts_with("durable_run")),
    )
    .await;
    // One trace: the spans from before the crash and all of the second attempt's, but for the
    // span the Restate SDK opens around each attempt before the journal is read (the second
    // attempt's is a root of its own, with nothing in it but the handler's `durable_run`).
    let names: Vec<(&str, &str)> = after.iter().map(|s| (s.name(), s.trace_id())).collect();
    let (sdk, ours): (Vec<&Span>, Vec<&Span>) = after
        .iter()
        .partition(|s| s.name().starts_with("restate_sdk"));
    assert!(sdk.len() <= 1, "{names:?}");
    assert!(ours.iter().all(|s| s.trace_id() == trace), "{names:?}");
    assert!(ours.len() >= 8, "{names:?}");
    let durable: Vec<&Span> = after
        .iter()
        .filter(|s| s.name().starts_with("durable_run"))
        .collect();
    assert_eq!(durable.len(), 1, "{names:?}");
    // The second attempt's durable_run is the child of a span Phoenix never got: the one the
    // first attempt ran in, which died unfinished.
    let parent = durable[0].parent_id().expect("a child, not a root");
    assert!(!after.iter().any(|s| s.span_id() == parent), "{names:?}");
    // The second attempt did the rest: the second model call and b's call, in the same trace.
    assert!(
        after
            .iter()
            .filter(|s| s.name().starts_with("chat"))
            .count()
            >= 2,
        "{names:?}"
    );
    assert_eq!(
        after
            .iter()
            .filter(|s| s.name() == "execute_tool write_note")
            .count(),
        2,
        "{names:?}"
    );
}
