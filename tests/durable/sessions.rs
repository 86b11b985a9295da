//! Sessions (one goal at a time, cancelling a waiting run) and a model down through the
//! provider's retries.

use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_one_goal_at_a_time_and_cancelling_a_waiting_run_lets_the_next_one_in() {
    let llm = Server::start([
        calls(&[("c1", "publish", json!({"name": "a"}))]),
        text("Hello from another session."),
        text("Second goal done."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port: _,
        service: _service,
    } = Stage::start(&llm.url, None).await;

    let waiting = restate.send_run("queue", "Publish a.").await;
    wait_pending(&restate, "queue").await;
    // The same session's next goal queues behind the waiting run...
    let queued = restate.send_run("queue", "Then this.").await;
    // ...while another session runs at once.
    let (status, other) = restate
        .ingress("/Agent/other/run", Some(json!("Say hello.")))
        .await;
    assert_eq!(status, 200, "{other}");
    assert_eq!(other["final_text"], "Hello from another session.");
    assert_eq!(llm.received().len(), 2, "the queued goal has not started");

    // Cancelled through Restate's admin API, the waiting run ends without running the call.
    let response = http()
        .build()
        .unwrap()
        .patch(format!("{}/invocations/{waiting}/cancel", restate.admin))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{response:?}");
    let (status, cancelled) = restate
        .ingress(&format!("/restate/invocation/{waiting}/attach"), None)
        .await;
    assert!(status >= 400, "{status} {cancelled}");
    assert!(logged(work.path()).is_empty());

    let next = restate.attach(&queued).await;
    assert_eq!(next["final_text"], "Second goal done.", "{next}");
    let requests = llm.received();
    assert_eq!(requests.len(), 3);
    // The cancelled goal left the conversation as it was.
    assert_eq!(requests_messages(&requests[2].json()), ["Then this."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_down_through_the_providers_retries_is_retried_by_restate_without_rerunning_tools()
{
    let overloaded = || {
        Reply::json(
            503,
            &json!({"error": {"message": "overloaded", "type": "overloaded_error"}}),
        )
    };
    let llm = Server::start([
        calls(&[("c1", "write_note", json!({"name": "a", "text": "x"}))]),
        // The provider tries three times, then the step fails and is not journaled; Restate
        // retries the invocation, which replays the first turn and the call, and asks again.
        overloaded(),
        overloaded(),
        overloaded(),
        text("Written, eventually."),
    ])
    .await;
    let Stage {
        restate,
        work,
        port: _,
        service: _service,
    } = Stage::start(&llm.url, None).await;

    let (status, outcome) = restate
        .ingress("/Agent/flaky/run", Some(json!("Write a.")))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["final_text"], "Written, eventually.");
    assert_eq!(outcome["steps"], 2);
    assert_eq!(logged(work.path()), ["wrote a"]);
    let requests = llm.received();
    assert_eq!(requests.len(), 5);
    for retry in &requests[2..] {
        assert_eq!(
            retry.json(),
            requests[1].json(),
            "the same turn, asked again"
        );
    }
}
