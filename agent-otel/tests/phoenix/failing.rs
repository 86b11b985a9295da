//! A collector that is gone, or that accepts connections and never answers: the run ends as it
//! would without export, the guard's drop comes back within its bound (checked as a hang: the
//! child gives it 30 s, far above the bound), and the exporter warns once, not once a batch.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::agent::ANSWER;
use crate::child::{Ran, Scenario};
use test_support::phoenix::free_port;

/// A loopback port that accepts connections and never answers them, until dropped.
struct Silent {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Silent {
    fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => held.push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Silent { port, stop }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The run ended as usual, the guard came back, nothing was exported, one warning.
fn unaffected(ran: &Ran) {
    assert_eq!(ran.report["final_text"], ANSWER, "{:?}", ran.report);
    let shutdown = &ran.report["shutdown"];
    assert!(shutdown.is_object(), "the guard came back: {shutdown}");
    assert_eq!(shutdown["exported_spans"], 0, "{shutdown}");
    assert_eq!(ran.warnings(), 1, "one warning:\n{}", ran.stderr);
}

#[test]
fn a_collector_that_is_gone_costs_one_warning_however_many_batches_fail() {
    // Nothing listens there (a stopped receiver). One span a batch, so that every span is a
    // failed export of its own; the shutdown bound leaves time for all of them.
    let ran = Scenario::new("tree")
        .endpoint(format!("http://127.0.0.1:{}", free_port()))
        .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
        .shutdown_secs(20)
        .run();
    unaffected(&ran);
    let failed = ran.report["shutdown"]["failed_batches"].as_u64().unwrap();
    assert!(failed >= 2, "several batches failed: {:?}", ran.report);
    assert!(
        ran.stderr
            .contains("cannot export spans to http://127.0.0.1:"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_collector_that_never_answers_holds_the_guard_no_longer_than_its_bound() {
    // The default settings: a 10 s export timeout, a 5 s shutdown bound.
    for grpc in [false, true] {
        let silent = Silent::start();
        let mut scenario =
            Scenario::new("tree").endpoint(format!("http://127.0.0.1:{}", silent.port));
        if grpc {
            scenario = scenario.grpc();
        }
        let ran = scenario.run();
        unaffected(&ran);
        assert!(
            ran.stderr.contains("were not all sent") || ran.stderr.contains("cannot export"),
            "grpc: {grpc}\n{}",
            ran.stderr
        );
    }
}
