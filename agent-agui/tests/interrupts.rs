//! A pause seen and answered through the official client: the run stops on a destructive call a
//! permission gate asks about, the client gets it as an AG-UI interrupt (the call's path,
//! arguments, reason and digest), and the thread's next run carries the person's decision. The
//! approved call runs exactly once; a denial never runs it; a decision naming a call that is not
//! pending, or the call with other arguments than those shown, is refused and nothing runs. The
//! same approval sent again gets the first one's outcome, and runs nothing; but it answers a new
//! pause on the same call (same id, same arguments) as the new pause it is.
//! (One test: the skill's counter is the process's.)

mod support;

use std::sync::atomic::Ordering;

use agent_agui::AguiServer;
use agent_llm::MockReply;
use serde_json::{Value, json};
use support::*;

fn last(turn: &Value) -> Value {
    turn["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap_or_else(|| panic!("no events: {turn}"))
        .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_is_an_interrupt_answered_by_a_decision_bound_to_the_call() {
    // Approve, after two refused answers.
    let first = runtime([
        call("c1", "delete_branch", "old"),
        MockReply::text("Deleted."),
    ]);
    let (addr, _task) = serve(AguiServer::new(first)).await;
    let report = client(
        addr,
        "t-approve",
        json!([
            {"message": "Clean up the old branch."},
            {"resume": "extra"},
            {"resume": "tampered"},
            {"resume": "approve"},
            {"resume": "again"},
            {"resume": "deny-again"},
            {"resume": "again"},
        ]),
    )
    .await;
    all_valid(&report);
    let turns = report["turns"].as_array().unwrap();

    let paused = last(&turns[0]);
    assert_eq!(paused["type"], "RUN_FINISHED");
    assert_eq!(paused["outcome"]["type"], "interrupt");
    let interrupt = &paused["outcome"]["interrupts"][0];
    let id = interrupt["id"].as_str().unwrap();
    let (call_id, shown) = id.split_once('#').unwrap();
    let (digest, pause) = shown.split_once('@').unwrap();
    assert_eq!(call_id, "c1");
    assert_eq!(digest.len(), 64);
    assert!(!pause.is_empty());
    assert_eq!(interrupt["reason"], "tool_call");
    assert_eq!(interrupt["toolCallId"], "c1");
    let eugene = &interrupt["metadata"]["eugene"];
    assert_eq!(eugene["path"], "delete_branch");
    assert_eq!(eugene["arguments"], json!({"name": "old"}));
    assert_eq!(eugene["reason"], "deletes a branch for good");
    assert_eq!(eugene["digest"], digest);
    assert_eq!(turns[0]["pending"].as_array().unwrap().len(), 1);
    assert!(types(&turns[0]).contains(&"TOOL_CALL_END".to_owned()));
    // The client ran every turn before this reads its report: that nothing ran before the
    // approval is in the turns (no result before it), that the approved call ran once in the
    // counter.
    assert!(!types(&turns[0]).contains(&"TOOL_CALL_RESULT".to_owned()));

    for refused in &turns[1..3] {
        let error = last(refused);
        assert_eq!(error["type"], "RUN_ERROR", "{refused}");
        assert_eq!(error["code"], "eugene.resume", "{error}");
        assert!(
            !types(refused).contains(&"TOOL_CALL_RESULT".to_owned()),
            "{refused}"
        );
    }

    let done = last(&turns[3]);
    assert_eq!(done["outcome"], json!({"type": "success"}), "{done}");
    assert_eq!(done["result"], "Deleted.");
    let result = turns[3]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_RESULT")
        .expect("the call's result")
        .clone();
    assert_eq!(result["toolCallId"], "c1");
    assert_eq!(result["content"], "deleted old");
    // The approval sent again (a client that lost its connection): the first one's outcome,
    // nothing run again; a different answer to the call answered is refused and does not take
    // the approval's place, which is answered again after it.
    for again in [&turns[4], &turns[6]] {
        assert_eq!(
            types(again),
            ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"],
            "{again}"
        );
        let events = again["events"].as_array().unwrap();
        assert_eq!(events[1]["name"], "eugene.replayed");
        assert_eq!(events[1]["value"]["runId"], turns[3]["events"][0]["runId"]);
        assert_eq!(events[2]["result"], "Deleted.");
        assert_eq!(events[2]["runId"], events[0]["runId"]);
        assert_ne!(events[2]["runId"], turns[3]["events"][0]["runId"]);
    }
    let other = last(&turns[5]);
    assert_eq!(other["type"], "RUN_ERROR", "{other}");
    assert_eq!(other["code"], "eugene.resume");
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        1,
        "the approved call ran once, and only it"
    );

    // Deny: the call never runs, the model reads the person's reason.
    let second = runtime([
        call("c2", "delete_branch", "feature"),
        MockReply::text("Kept it."),
    ]);
    let (addr, _task) = serve(AguiServer::new(second)).await;
    let report = client(
        addr,
        "t-deny",
        json!([{"message": "Remove feature."}, {"resume": "deny"}]),
    )
    .await;
    all_valid(&report);
    let denied = &report["turns"][1];
    assert_eq!(last(denied)["result"], "Kept it.");
    let result = denied["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_RESULT")
        .expect("the denial as the call's result")
        .clone();
    assert!(
        result["content"].as_str().unwrap().contains("not today"),
        "{result}"
    );
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "a denied call ran");

    // The model makes the same call, with the same id and arguments, after a new message: a new
    // pause, with interrupts of its own. The approval of the first pause sent again is answered
    // with its outcome and decides nothing here; an answer to the first pause that was not
    // taken before is refused; the new pause's own approval runs the call.
    let third = runtime([
        call("c3", "delete_branch", "tmp"),
        MockReply::text("Deleted."),
        call("c3", "delete_branch", "tmp"),
        MockReply::text("Deleted again."),
    ]);
    let (addr, _task) = serve(AguiServer::new(third)).await;
    let report = client(
        addr,
        "t-same-call",
        json!([
            {"message": "Delete tmp."},
            {"resume": "approve"},
            {"message": "Once more."},
            {"resume": "again"},
            {"resume": "deny-again"},
            {"resume": "approve"},
        ]),
    )
    .await;
    all_valid(&report);
    let turns = report["turns"].as_array().unwrap();
    let (first, second) = (&turns[0]["pending"][0]["id"], &turns[2]["pending"][0]["id"]);
    assert_ne!(first, second, "two pauses, two interrupts");
    assert_eq!(
        first.as_str().unwrap().split('@').next(),
        second.as_str().unwrap().split('@').next(),
        "the same call, digest and all"
    );
    assert_eq!(types(&turns[3]), ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]);
    assert_eq!(last(&turns[3])["result"], "Deleted.");
    let earlier = last(&turns[4]);
    assert_eq!(earlier["code"], "eugene.resume", "{earlier}");
    assert!(
        earlier["message"]
            .as_str()
            .unwrap()
            .contains("earlier pause"),
        "{earlier}"
    );
    assert_eq!(last(&turns[5])["result"], "Deleted again.", "{}", turns[5]);
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        3,
        "each pause's approval ran its call once"
    );

    // Two different answers to one pause at once (two tabs, one approving, one denying): one is
    // applied, the other runs nothing and says why; each sent again gets what it got.
    let fourth = runtime([
        call("c4", "delete_branch", "race"),
        MockReply::text("Deleted race."),
        MockReply::text("Kept race."),
    ]);
    let (addr, _task) = serve(AguiServer::new(fourth)).await;
    let report = client(addr, "t-race", json!([{"message": "Delete race."}])).await;
    let id = report["turns"][0]["pending"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = |run: &str, approved: bool| {
        json!({"threadId": "t-race", "runId": run, "messages": [], "resume": [
            {"interruptId": id, "status": "resolved", "payload": {"approved": approved}}]})
    };
    let (approve, deny) = (answer("r-approve", true), answer("r-deny", false));
    let (a, d) = tokio::join!(post_events(addr, &approve), post_events(addr, &deny));
    let ends = |events: &[Value]| events.last().unwrap().clone();
    let (a_end, d_end) = (ends(&a), ends(&d));
    let won: Vec<&Value> = [&a_end, &d_end]
        .into_iter()
        .filter(|e| e["type"] == "RUN_FINISHED")
        .collect();
    assert_eq!(won.len(), 1, "{a_end} {d_end}");
    let lost = if a_end["type"] == "RUN_FINISHED" {
        &d_end
    } else {
        &a_end
    };
    assert!(
        ["eugene.conflict", "eugene.resume"].contains(&lost["code"].as_str().unwrap()),
        "{lost}"
    );
    let ran = usize::from(a_end["type"] == "RUN_FINISHED");
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        3 + ran,
        "approved once at most"
    );
    // Sent again: the one applied gets its outcome; the other is refused (the pause is gone).
    let (winner, loser) = if ran == 1 {
        (&approve, &deny)
    } else {
        (&deny, &approve)
    };
    let again = post_events(addr, winner).await;
    assert_eq!(again[1]["name"], "eugene.replayed", "{again:?}");
    assert_eq!(again[2]["result"], won[0]["result"]);
    let refused = post_events(addr, loser).await;
    assert_eq!(
        refused.last().unwrap()["code"],
        "eugene.resume",
        "{refused:?}"
    );
    assert_eq!(DELETED.load(Ordering::SeqCst), 3 + ran);
}
