//! Effects that a crash repeats, made harmless by the call's idempotency key: a payments API on
//! loopback (`tests/fixtures/payments/server.py`, Python's standard library) records every charge
//! and deduplicates by the `Idempotency-Key` header; the `durable_agent` example's `charge` skill
//! posts through reqwest with `ctx.idempotency_key()`. The service is killed with SIGKILL after
//! the API recorded the charge and before the step's result could be journaled, again and again;
//! Restate retries each run on a new incarnation, which charges again. With the key: no
//! duplicate. Without it (`--no-key`): one duplicate per crash.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::*;

/// How many runs are crashed, with the key and without it.
const CRASHES: usize = 5;

/// The payments API, started in `data`; its base URL.
async fn payments(data: &Path) -> (Process, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/payments/server.py");
    let process = Command::new("python3")
        .arg(&script)
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|error| {
            panic!("cannot start python3 for the payments API ({error}): install Python 3")
        });
    let port = data.join("port");
    wait_for("the payments API to listen", || port.exists()).await;
    let port = std::fs::read_to_string(port).unwrap();
    (
        Process(process),
        format!("http://127.0.0.1:{}", port.trim()),
    )
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Where the charge is made: the run's own call, a call of an agent used as a skill, a call of
/// a program.
#[derive(Clone, Copy)]
enum From {
    Run,
    SubAgent,
    Program,
}

/// What the model answers for one run that charges `to` from `from`.
fn script(from: From, to: &str) -> Vec<Reply> {
    let charge = json!({"to": to, "cents": 100});
    match from {
        From::Run => vec![calls(&[("c1", "charge", charge)]), text("Charged.")],
        From::SubAgent => vec![
            calls(&[("p1", "scribe", json!({"goal": "Charge the customer."}))]),
            calls(&[("c1", "charge", charge)]),
            text("The scribe charged."),
            text("Charged."),
        ],
        From::Program => {
            let program = format!("return await charge({charge});");
            vec![
                calls(&[("p1", "run_code", json!({ "code": program }))]),
                text("Charged."),
            ]
        }
    }
}

/// Runs `CRASHES` charges from `from`, each killed once after the API recorded it; the charges
/// recorded and the requests the API received.
async fn crash_every_charge(from: From, flags: &[&str]) -> (Vec<String>, Vec<String>) {
    let api_data = tempfile::tempdir().unwrap();
    let (_api, url) = payments(api_data.path()).await;
    let mut script = Vec::new();
    for run in 0..CRASHES {
        script.extend(self::script(from, &format!("customer-{run}")));
    }
    let llm = Server::start(script).await;
    let restate = Restate::start().await;
    let work = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut flags: Vec<&str> = flags.to_vec();
    flags.extend(["--payments", &url]);
    let mut service = service_with(port, work.path(), &llm.url, None, &flags).await;
    restate.register(port).await;
    let received = api_data.path().join("received");
    let hold = api_data.path().join("hold");
    for run in 0..CRASHES {
        std::fs::write(&hold, "").unwrap();
        let invocation = restate
            .send_run(&format!("pay-{run}"), "Charge the customer.")
            .await;
        // The API has the charge; its answer is held, so the step's result is not journaled.
        wait_for("the API to receive the charge", || {
            lines(&received).len() > 2 * run
        })
        .await;
        service.kill();
        std::fs::remove_file(&hold).unwrap();
        service = service_with(port, work.path(), &llm.url, None, &flags).await;
        let outcome = restate.attach(&invocation).await;
        assert_eq!(outcome["final_text"], "Charged.", "{outcome}");
        // The new incarnation asked again: the run's second request to the API.
        assert_eq!(lines(&received).len(), 2 * (run + 1));
    }
    (lines(&api_data.path().join("charges")), lines(&received))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_repeated_by_a_crash_is_recorded_once_with_the_calls_key() {
    let (charges, received) = crash_every_charge(From::Run, &[]).await;
    assert_keyed(&charges, &received);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_made_by_an_agent_used_as_a_skill_is_recorded_once_with_its_key() {
    let (charges, received) = crash_every_charge(From::SubAgent, &[]).await;
    assert_keyed(&charges, &received);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_made_by_a_program_is_recorded_once_with_its_key() {
    let (charges, received) = crash_every_charge(From::Program, &[]).await;
    assert_keyed(&charges, &received);
}

/// Each run charged twice (a crash, then the retry), with the same key both times and a key of
/// its own; the API recorded each charge once.
fn assert_keyed(charges: &[String], received: &[String]) {
    assert_eq!(
        received.len(),
        2 * CRASHES,
        "each run charged twice: {received:?}"
    );
    // Each run sent the same key both times; runs sent different keys.
    let mut keys = received.to_vec();
    keys.dedup();
    assert_eq!(keys.len(), CRASHES, "{received:?}");
    assert!(keys.iter().all(|k| k.starts_with("ik-")), "{keys:?}");
    assert_eq!(charges.len(), CRASHES, "no duplicate charge: {charges:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_key_every_crash_charges_twice() {
    let (charges, received) = crash_every_charge(From::Run, &["--no-key"]).await;
    assert!(received.iter().all(|k| k == "-"), "{received:?}");
    assert_eq!(
        charges.len(),
        2 * CRASHES,
        "one duplicate per crash: {charges:?}"
    );
}
