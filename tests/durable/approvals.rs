//! Runs that wait for a person across restarts: decisions through ingress, by path id for a call
//! inside a child agent, an awakeable resolved by hand, a typed agent.

use std::time::Instant;

use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_inside_a_child_agent_is_decided_by_its_path_id_after_a_restart() {
    let llm = Server::start([
        calls(&[("p1", "scribe", json!({"goal": "Write and publish a."}))]),
        // The scribe's turns: its `publish` waits for a person.
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        text("Written and published."),
        text("The scribe wrote and published a."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port,
        service: mut first,
    } = Stage::start(&llm.url, None).await;

    let invocation = restate.send_run("nested-approve", "Get a published.").await;
    let pending = wait_pending(&restate, "nested-approve").await;
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["id"], "p1/c2", "{pending:?}");
    assert_eq!(pending[0]["pending"]["call"]["id"], "c2");
    assert_eq!(
        pending[0]["pending"]["via"],
        json!([{"call_id": "p1", "skill": "scribe"}])
    );
    assert_eq!(logged(work.path()), ["wrote a"]);

    first.kill();
    let _second = service(port, work.path(), &llm.url, None).await;

    // The inner call's own id is not a decision's address: its path id is.
    let (status, refused) = restate
        .ingress(
            "/Agent/nested-approve/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert!(status >= 400, "{status} {refused}");
    assert!(
        refused.to_string().contains("waiting: `p1/c2`"),
        "{refused}"
    );
    assert_eq!(
        logged(work.path()),
        ["wrote a"],
        "a refused decision ran nothing"
    );
    let (status, decided) = restate
        .ingress(
            "/Agent/nested-approve/decide",
            Some(json!({"p1/c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!((status, decided), (200, json!(["p1/c2"])));

    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "The scribe wrote and published a.",
        "{outcome}"
    );
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    // Neither agent's first turn was asked again after the restart.
    let requests = llm.received();
    assert_eq!(requests.len(), 4, "a journaled turn was asked again");
    assert_eq!(
        tool_results(&requests[2].json()),
        [
            ("c1".to_owned(), "wrote notes/a.md (4 bytes)".to_owned()),
            ("c2".to_owned(), "published a".to_owned())
        ]
    );
    assert_eq!(
        tool_results(&requests[3].json()),
        [("p1".to_owned(), "Written and published.".to_owned())]
    );
    let (_, pending) = restate.ingress("/Agent/nested-approve/pending", None).await;
    assert_eq!(pending, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_waits_across_a_restart_and_a_decision_sent_through_ingress_finishes_it() {
    let started = Instant::now();
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        text("Written and published."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port,
        service: mut first,
    } = Stage::start(&llm.url, None).await;

    let invocation = restate.send_run("approve", "Write and publish a.").await;
    let pending = wait_pending(&restate, "approve").await;
    assert_eq!(pending[0]["pending"]["call"]["id"], "c2");
    assert_eq!(
        pending[0]["pending"]["reason"],
        "`publish` cannot be undone"
    );
    assert!(
        pending[0]["awakeable"]
            .as_str()
            .unwrap()
            .starts_with("sign_")
    );
    assert_eq!(logged(work.path()), ["wrote a"]);

    // The service goes away while the run waits, and a new one takes its place.
    first.kill();
    let _second = service(port, work.path(), &llm.url, None).await;

    // A decision for a call nobody waits on is refused, and sends nothing.
    let (status, refused) = restate
        .ingress(
            "/Agent/approve/decide",
            Some(json!({"c9": {"decision": "approve"}})),
        )
        .await;
    assert!(status >= 400, "{status} {refused}");
    assert!(
        refused
            .to_string()
            .contains("no call waits for a decision under `c9`; waiting: `c2`"),
        "{refused}"
    );
    // A decision made on another version of the call (a stale page, a later call under the
    // same id) is refused by its digest, and sends nothing.
    let digest = pending[0]["digest"].as_str().unwrap().to_owned();
    assert_eq!(digest.len(), 64, "{digest}");
    let (status, refused) = restate
        .ingress(
            "/Agent/approve/decide",
            Some(json!({"c2": {"decision": "approve", "digest": "0".repeat(64)}})),
        )
        .await;
    assert!(status >= 400, "{status} {refused}");
    assert!(refused.to_string().contains("digest differs"), "{refused}");
    assert_eq!(logged(work.path()), ["wrote a"], "nothing ran on it");
    let (status, decided) = restate
        .ingress(
            "/Agent/approve/decide",
            Some(json!({"c2": {"decision": "approve", "digest": digest}})),
        )
        .await;
    assert_eq!((status, decided), (200, json!(["c2"])));

    let outcome = restate.attach(&invocation).await;
    assert_eq!(outcome["final_text"], "Written and published.", "{outcome}");
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    let requests = llm.received();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].json());
    assert_eq!(
        results,
        [
            ("c1".to_owned(), "wrote notes/a.md (4 bytes)".to_owned()),
            ("c2".to_owned(), "published a".to_owned())
        ]
    );
    let (_, pending) = restate.ingress("/Agent/approve/pending", None).await;
    assert_eq!(pending, json!([]));
    let (_, stored) = restate.ingress("/Agent/approve/outcome", None).await;
    assert_eq!(stored, outcome);

    let events = events(work.path());
    let awaiting: Vec<_> = events
        .iter()
        .filter(|(_, line)| line == "awaiting_approval 1 c2")
        .collect();
    assert_eq!(awaiting.len(), 1, "{events:?}");
    assert!(
        events
            .iter()
            .any(|(pid, line)| line == "turn_finished 2 NoMoreToolCalls" && pid != &awaiting[0].0),
        "the second incarnation finished the run: {events:?}"
    );
    eprintln!("approval test took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awakeable_resolved_by_hand_denies_and_the_session_keeps_its_conversation() {
    let llm = Server::start([
        calls(&[("c1", "write_note", json!({"name": "a", "text": "x"}))]),
        calls(&[("c2", "publish", json!({"name": "a"}))]),
        text("Not published: it was refused."),
        text("You asked me to write and publish a."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port: _,
        service: _service,
    } = Stage::start(&llm.url, None).await;

    let invocation = restate.send_run("deny", "Write and publish a.").await;
    let pending = wait_pending(&restate, "deny").await;
    let awakeable = pending[0]["awakeable"].as_str().unwrap();
    // Restate's own route for awakeables: no handler of ours involved.
    let (status, _) = restate
        .ingress(
            &format!("/restate/awakeables/{awakeable}/resolve"),
            Some(json!({"decision": "deny", "with": "not today"})),
        )
        .await;
    assert!(status < 300, "{status}");
    let outcome = restate.attach(&invocation).await;
    assert_eq!(outcome["final_text"], "Not published: it was refused.");
    assert_eq!(outcome["steps"], 3);
    assert_eq!(logged(work.path()), ["wrote a"]);
    let requests = llm.received();
    let results = tool_results(&requests[2].json());
    assert_eq!(results.last().unwrap().1, "denied: not today");

    // The next goal of the session continues its conversation.
    let (status, next) = restate
        .ingress("/Agent/deny/run", Some(json!("What did I ask?")))
        .await;
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["final_text"], "You asked me to write and publish a.");
    assert_eq!(next["steps"], 1);
    let messages = requests_messages(&llm.received()[3].json());
    assert_eq!(messages.first().unwrap(), "Write and publish a.");
    assert_eq!(messages.last().unwrap(), "What did I ask?");
}

/// The user messages of a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_agent_pauses_goes_on_after_the_decision_and_ends_with_a_checked_value() {
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "x"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        // The first answer does not pass the check: it goes back to the model with the error.
        calls(&[("c3", "final_answer", json!({"written": "a"}))]),
        calls(&[(
            "c4",
            "final_answer",
            json!({"written": ["a"], "summary": "Wrote and published a."}),
        )]),
    ])
    .await;
    let Stage {
        restate,
        work,
        port: _,
        service: _service,
    } = Stage::start_with(&llm.url, None, &["--typed"]).await;

    let invocation = restate.send_run("typed", "Write and publish a.").await;
    wait_pending(&restate, "typed").await;
    let (status, _) = restate
        .ingress(
            "/Agent/typed/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!(status, 200);
    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["output"],
        json!({"written": ["a"], "summary": "Wrote and published a."}),
        "{outcome}"
    );
    assert_eq!(outcome["steps"], 3);
    assert_eq!(logged(work.path()), ["wrote a", "published a"]);
    let requests = llm.received();
    let offered: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"final_answer".to_owned()), "{offered:?}");
    let told = tool_results(&requests[2].json());
    assert!(told.last().unwrap().1.contains("`written`"), "{told:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_sent_through_decide_answers_one_call_and_a_reused_id_waits_again() {
    let llm = Server::start([
        calls(&[
            ("c1", "write_note", json!({"name": "a", "text": "news"})),
            ("c2", "publish", json!({"name": "a"})),
        ]),
        // The next turn reuses `c2` for another call: it must wait for its own decision.
        calls(&[
            ("c1", "write_note", json!({"name": "b", "text": "more"})),
            ("c2", "publish", json!({"name": "b"})),
        ]),
        text("Published a; b was not."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port: _,
        service: _service,
    } = Stage::start(&llm.url, None).await;

    let invocation = restate.send_run("reused", "Publish a and b.").await;
    let pending = wait_pending(&restate, "reused").await;
    assert_eq!(
        pending[0]["pending"]["call"]["arguments"],
        json!({"name": "a"})
    );
    let (status, _) = restate
        .ingress(
            "/Agent/reused/decide",
            Some(json!({"c2": {"decision": "approve"}})),
        )
        .await;
    assert_eq!(status, 200);
    // The second pause: `c2` again, now for `b`, waiting; the approval of `a` did not run it.
    let started = Instant::now();
    let pending = loop {
        let pending = wait_pending(&restate, "reused").await;
        if pending[0]["pending"]["call"]["arguments"] == json!({"name": "b"}) {
            break pending;
        }
        assert!(started.elapsed().as_secs() < 60, "{pending:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(pending[0]["id"], "c2");
    assert_eq!(logged(work.path()), ["wrote a", "published a", "wrote b"]);
    let (status, _) = restate
        .ingress(
            "/Agent/reused/decide",
            Some(json!({"c2": {"decision": "deny", "with": "not b"}})),
        )
        .await;
    assert_eq!(status, 200);
    let outcome = restate.attach(&invocation).await;
    assert_eq!(
        outcome["final_text"], "Published a; b was not.",
        "{outcome}"
    );
    assert_eq!(count(&logged(work.path()), "published b"), 0);
    assert_eq!(count(&logged(work.path()), "published a"), 1);
}
