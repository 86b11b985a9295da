//! A service killed in the middle of a run (a batch, a child agent's batch, a program), and a
//! second instance taking over: nothing that completed runs again.

use std::time::Instant;

use serde_json::{Value, json};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_in_the_middle_of_a_batch_finishes_after_a_restart_and_nothing_runs_twice() {
    let started = Instant::now();
    let batch = Batch::start("Both notes are written.").await;
    let invocation = batch
        .stage
        .restate
        .send_run("crash", "Write notes a and b.")
        .await;
    // `a` is written and journaled; `b` has started and waits: the process dies here.
    let (_second, batch) = batch.crash_at_b().await;
    let (llm, restate, work) = (&batch.llm, &batch.stage.restate, &batch.stage.work);

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes are written.",
        "{outcome}"
    );
    assert_eq!(outcome["finish"]["reason"], "no_more_tool_calls");
    assert_eq!(outcome["steps"], 2);
    assert_eq!(outcome["usage"]["input_tokens"], 20);

    // `a` ran once, before the crash, and was replayed; `b` was in flight at the crash: it
    // started again and wrote once.
    let log = logged(work.path());
    assert_eq!(count(&log, "wrote a"), 1, "{log:?}");
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes/b.md")).unwrap(),
        "second"
    );

    // The model was asked twice in all: the first turn, answered before the crash, was not
    // asked again; the second got both results.
    let requests = llm.received();
    assert_eq!(
        requests.len(),
        2,
        "the model was asked again for a journaled turn"
    );
    assert!(tool_results(&requests[0].json()).is_empty());
    let results = tool_results(&requests[1].json());
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, "c1");
    assert!(results[0].1.contains("wrote notes/a.md"), "{results:?}");
    assert!(results[1].1.contains("wrote notes/b.md"), "{results:?}");

    // Events: each once, from the process that got there first; the second incarnation held
    // back what it replayed.
    let events = events(work.path());
    let mut lines: Vec<&str> = events.iter().map(|(_, line)| line.as_str()).collect();
    let total = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(
        lines.len(),
        total,
        "an event was reported twice: {events:?}"
    );
    let pids: std::collections::BTreeSet<&str> = events.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(pids.len(), 2, "{events:?}");
    for line in [
        "usage 1",
        "tool_call 1 c1",
        "tool_call 1 c2",
        "tool_result 1 c1",
        "usage 2",
    ] {
        assert!(lines.contains(&line), "{line} missing: {events:?}");
    }
    eprintln!("crash test took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_agent_killed_in_the_middle_of_its_batch_finishes_after_a_restart_and_nothing_runs_twice()
 {
    let llm = Server::start([
        // The coordinator hands the work to `scribe`, an agent used as a skill.
        calls(&[("p1", "scribe", json!({"goal": "Write notes a and b."}))]),
        // The scribe's own turns.
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "first"})),
            ("c2", "write_note", json!({"name": "b", "text": "second"})),
        ]),
        text("Both notes are written."),
        text("The scribe wrote both notes."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port,
        service: mut first,
    } = Stage::start(&llm.url, Some("b")).await;

    let invocation = restate
        .send_run("nested", "Get notes a and b written.")
        .await;
    // Inside the scribe: `a` is written and journaled; `b` has started: the process dies here.
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    assert_eq!(logged(work.path()), ["wrote a", "started b"]);
    first.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("b")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The scribe wrote both notes.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(
        count(&log, "wrote a"),
        1,
        "the scribe's journaled call ran again: {log:?}"
    );
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    // Four model calls in all: neither the coordinator's first turn nor the scribe's, both
    // answered before the crash, was asked again.
    let requests = llm.received();
    assert_eq!(requests.len(), 4, "a journaled turn was asked again");
    let results = tool_results(&requests[2].json());
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1.contains("wrote notes/a.md"), "{results:?}");
    assert!(results[1].1.contains("wrote notes/b.md"), "{results:?}");
    let results = tool_results(&requests[3].json());
    assert_eq!(
        results,
        [("p1".to_owned(), "Both notes are written.".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_killed_between_its_calls_finishes_after_a_restart_and_no_completed_call_runs_again()
 {
    let program = r#"
        const a = await write_note({ name: "a", text: "first" });
        const b = await write_note({ name: "b", text: "second" });
        return [a, b];
    "#;
    let llm = Server::start([
        calls(&[("p1", "run_code", json!({ "code": program }))]),
        text("The program wrote both notes."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port,
        service: mut first,
    } = Stage::start(&llm.url, Some("b")).await;

    let invocation = restate.send_run("program", "Write notes a and b.").await;
    // Inside the program: `a` is written and journaled; `b` has started: the process dies here.
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    assert_eq!(logged(work.path()), ["wrote a", "started b"]);
    first.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("b")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The program wrote both notes.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(
        count(&log, "wrote a"),
        1,
        "a journaled call ran again: {log:?}"
    );
    assert_eq!(count(&log, "started b"), 2, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    let requests = llm.received();
    assert_eq!(requests.len(), 2, "the first turn was asked again");
    let results = tool_results(&requests[1].json());
    assert_eq!(results.len(), 1, "{results:?}");
    let answer: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(
        answer["value"],
        json!(["wrote notes/a.md (5 bytes)", "wrote notes/b.md (6 bytes)"]),
        "{answer}"
    );
}

/// What a load balancer in front of several instances does, on loopback: each connection is
/// forwarded to the port `to` holds when it arrives.
struct Proxy {
    port: u16,
    to: std::sync::Arc<std::sync::atomic::AtomicU16>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(to: u16) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let to = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(to));
        let target = to.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let port = target.load(std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Proxy { port, to, task }
    }

    fn switch(&self, to: u16) {
        self.to.store(to, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_behind_the_same_address_takes_over_a_run_whose_instance_died() {
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
    // Two instances of the service (one workspace, as on shared storage), one address for Restate.
    let (port_a, port_b) = (free_port(), free_port());
    let mut a = service(port_a, work.path(), &llm.url, Some("b")).await;
    let _b = service(port_b, work.path(), &llm.url, Some("b")).await;
    let balancer = Proxy::start(port_a).await;
    restate.register(balancer.port).await;

    let invocation = restate.send_run("failover", "Write notes a and b.").await;
    wait_for("b to start", || {
        count(&logged(work.path()), "started b") == 1
    })
    .await;
    // Instance a dies; the balancer sends new connections to b, which was up all along.
    balancer.switch(port_b);
    a.kill();
    std::fs::write(work.path().join("notes/b.go"), "").unwrap();

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes are written.",
        "{outcome}"
    );
    let log = logged(work.path());
    assert_eq!(count(&log, "wrote a"), 1, "{log:?}");
    assert_eq!(count(&log, "wrote b"), 1, "{log:?}");
    assert_eq!(llm.received().len(), 2);
    let events = events(work.path());
    let finished: Vec<&str> = events
        .iter()
        .filter(|(_, line)| line.starts_with("turn_finished 2"))
        .map(|(pid, _)| pid.as_str())
        .collect();
    assert_eq!(
        finished,
        [b_pid(&events, &a)],
        "instance b finished the run: {events:?}"
    );
}

/// The process id in the events that is not `a`'s.
fn b_pid<'e>(events: &'e [(String, String)], a: &Process) -> &'e str {
    let a = a.0.id().to_string();
    events
        .iter()
        .map(|(pid, _)| pid.as_str())
        .find(|pid| *pid != a)
        .expect("the second instance reported events")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_is_not_idempotent_killed_while_it_ran_is_not_run_again() {
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        text("Publishing was interrupted; I will check first."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port,
        service: mut first,
    } = Stage::start(&llm.url, Some("a")).await;
    std::fs::create_dir_all(work.path().join("notes")).unwrap();
    std::fs::write(work.path().join("notes/a.go"), "").unwrap();

    let invocation = restate.send_run("once", "Write and publish a.").await;
    let pending = wait_pending(&restate, "once").await;
    std::fs::remove_file(work.path().join("notes/a.go")).unwrap();
    let digest = pending[0]["digest"].as_str().unwrap().to_owned();
    let (status, _) = restate
        .ingress(
            "/Agent/once/decide",
            Some(json!({"c2": {"decision": "approve", "digest": digest}})),
        )
        .await;
    assert_eq!(status, 200);
    // `publish` (destructive, not idempotent) has started and waits: the process dies here.
    wait_for("publish to start", || {
        count(&logged(work.path()), "started publishing a") == 1
    })
    .await;
    first.kill();
    std::fs::write(work.path().join("notes/a.go"), "").unwrap();
    let _second = service(port, work.path(), &llm.url, Some("a")).await;

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Publishing was interrupted; I will check first.",
        "{outcome}"
    );
    // It was not started again: the model was told it was interrupted and may have happened.
    let log = logged(work.path());
    assert_eq!(count(&log, "started publishing a"), 1, "{log:?}");
    assert_eq!(count(&log, "published a"), 0, "{log:?}");
    let requests = llm.received();
    let results = tool_results(&requests.last().unwrap().json());
    assert_eq!(results[1].0, "c2", "{results:?}");
    assert!(results[1].1.contains("was interrupted"), "{results:?}");
}

/// A run whose goal carries an image, killed in the middle of its batch: after the restart the
/// model is sent the very image again, from the journal and the session's state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_an_image_killed_mid_batch_sends_the_same_image_after_a_restart() {
    let batch = Batch::start("Both notes describe the picture.").await;
    let png = eugene::media::tiny_png();
    let message = serde_json::to_value(
        eugene::Message::user("Describe this picture in notes a and b.")
            .attach(eugene::Media::new("image/png", png.clone()).named("picture.png")),
    )
    .unwrap();
    let invocation = batch
        .stage
        .restate
        .send_run_message("picture", message)
        .await;
    let (_second, batch) = batch.crash_at_b().await;
    let (llm, restate) = (&batch.llm, &batch.stage.restate);

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Both notes describe the picture.",
        "{outcome}"
    );
    let requests = llm.received();
    assert_eq!(requests.len(), 2, "a journaled turn was asked again");
    use base64::Engine as _;
    let expected = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    for request in &requests {
        let goal = &request.json()["messages"][1];
        assert_eq!(
            goal["content"][1]["image_url"]["url"],
            expected.as_str(),
            "{goal}"
        );
    }
    // The session keeps the image in its transcript.
    let (_, transcript) = restate.ingress("/Agent/picture/transcript", None).await;
    assert_eq!(
        transcript[0]["parts"][0]["media_type"], "image/png",
        "{transcript}"
    );
}

/// A service whose model writes notes `a` and `b` in one batch and then answers `answer`, with
/// `b` held once it starts (`--hold b`): the stage of a crash in the middle of a batch.
struct Batch {
    llm: Server,
    stage: Stage,
}

impl Batch {
    async fn start(answer: &str) -> Batch {
        let llm = Server::start([
            calls(&[
                ("c1", "write_note", json!({"name": "a", "text": "first"})),
                ("c2", "write_note", json!({"name": "b", "text": "second"})),
            ]),
            text(answer),
        ])
        .await;
        let stage = Stage::start(&llm.url, Some("b")).await;
        Batch { llm, stage }
    }

    /// Once `a` is written and journaled and `b` has started: kills the first process, lets `b`
    /// go, and starts a second one behind the same address.
    async fn crash_at_b(mut self) -> (Process, Batch) {
        let work = self.stage.work.path().to_owned();
        wait_for("b to start", || count(&logged(&work), "started b") == 1).await;
        assert_eq!(logged(&work), ["wrote a", "started b"]);
        self.stage.service.kill();
        std::fs::write(work.join("notes/b.go"), "").unwrap();
        let second = service(self.stage.port, &work, &self.llm.url, Some("b")).await;
        (second, self)
    }
}
