//! The console, in headless Chromium driven by Selenium (`tests/console_browser.py`): a person
//! starts a run whose sub-agent pauses on a destructive call, sees the call's path (`janitor ›
//! delete_branch`) and exact arguments, and approves, denies or edits it; an edit the skill's
//! schema refuses, at its first level or deeper down (an enum, a struct reached by `$ref`, a
//! list's item), is refused in the page naming where, and nothing is sent; of two tabs deciding
//! the same call, one wins and the other is told it was refused. The skill's counter says what
//! ran.
//! Screenshots are saved under the target directory (`console-screenshots/`). The console's HTTP
//! side without a browser is `tests/console_http.rs`.
//!
//! Chromium and chromedriver come from the system (Debian's `chromium`, `chromium-driver`);
//! Selenium is installed on first use (`test_support::provision::python_with_selenium`).

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use support::*;

fn screenshots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("console-screenshots")
}

/// Runs `scenario` of the browser script against `addr` on `thread`; the page's report.
async fn browser(addr: SocketAddr, scenario: &str, thread: &str, env: &[(&str, &str)]) -> Value {
    let python = test_support::provision::python_with_selenium(env!("CARGO_TARGET_TMPDIR"));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/console_browser.py");
    let run = tokio::process::Command::new(python)
        .arg(script)
        .arg(format!("http://{addr}"))
        .arg(TOKEN)
        .arg(screenshots())
        .arg(scenario)
        .arg(thread)
        .envs(env.iter().copied())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the browser script finished")
        .expect("python starts");
    assert!(
        output.status.success(),
        "the browser script failed ({scenario}): {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    serde_json::from_slice(&output.stdout).expect("the script's report is JSON")
}

/// The thread `id` in the server's listing.
async fn thread(addr: SocketAddr, id: &str) -> Value {
    listed(addr, id)
        .await
        .unwrap_or_else(|| panic!("no thread {id} in the listing"))
}

/// The strings of the list `list`: its items, or each item's `key`.
fn strings<'a>(list: &'a Value, key: Option<&str>) -> Vec<&'a str> {
    let items = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"));
    items
        .iter()
        .map(|item| key.map_or(item, |key| &item[key]).as_str().unwrap())
        .collect()
}

fn deleted() -> usize {
    DELETED.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_approves_denies_and_edits_in_the_browser() {
    // Approve: the nested call shown with its path and arguments, run once.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "approve", "t-approve", &[]).await;
    let shown = &report["paused"]["pending"][0];
    assert_eq!(shown["path"], "janitor › delete_branch", "{report}");
    assert_eq!(shown["arguments"], json!({"name": "old"}));
    assert_eq!(shown["reason"], "reason: deletes a branch for good");
    assert!(
        shown["interruptId"].as_str().unwrap().starts_with("p1/c1#"),
        "{shown}"
    );
    assert_eq!(report["paused"]["url"], format!("http://{addr}/console"));
    let after = &report["after"];
    assert_eq!(after["finish"], "finished: success: All clean.", "{after}");
    assert_eq!(after["pending"], json!([]));
    assert!(
        after["usage"].as_str().unwrap().starts_with("steps "),
        "{after}"
    );
    // Each agent's part, the nested one's apart from the run's own, with who answered.
    let agents = strings(&after["agents"], None);
    for (who, seen) in [
        ("janitor: steps ", "janitor"),
        ("this agent: steps ", "the run's own"),
    ] {
        assert!(
            agents
                .iter()
                .any(|a| a.starts_with(who) && a.contains("mock")),
            "{seen} agent's part in {agents:?}"
        );
    }
    let events = after["events"].as_array().unwrap();
    let result = events
        .iter()
        .find(|e| e["text"] == "→ deleted old")
        .unwrap_or_else(|| panic!("the nested result in {events:?}"));
    assert_eq!(result["depth"], 1, "a nested call is indented");
    assert_eq!(deleted(), 1, "the approved call ran once");
    assert_eq!(thread(addr, "t-approve").await["state"], "idle");
    // The sub-agent as a tree: where it starts and where it ends, at its caller's depth; paused
    // first, done after the decision.
    let lines = |state: &Value| -> Vec<(String, u64)> {
        state["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "subagent")
            .map(|e| {
                (
                    e["text"].as_str().unwrap().to_owned(),
                    e["depth"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let paused = lines(&report["paused"]);
    assert!(paused.contains(&("⤷ janitor".into(), 0)), "{paused:?}");
    assert!(
        paused.contains(&("⤶ janitor waits for a decision".into(), 0)),
        "{paused:?}"
    );
    let done = lines(after);
    assert!(done.contains(&("⤶ janitor done".into(), 0)), "{done:?}");

    // Deny: never runs.
    let (addr, _task) = serve(nested("Kept it.")).await;
    let report = browser(addr, "deny", "t-deny", &[]).await;
    assert_eq!(report["after"]["finish"], "finished: success: All clean.");
    assert!(
        strings(&report["after"]["events"], Some("text"))
            .iter()
            .any(|t| t.contains("denied in the console")),
        "{report}"
    );
    assert_eq!(deleted(), 1, "a denied call ran");

    // Edit: what the schema refuses is refused in the page and nothing is sent; a valid edit
    // runs with the edited arguments.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "edit", "t-edit", &[("CONSOLE_EDIT_VALID", "1")]).await;
    let refusals = report["refusals"].as_array().unwrap();
    let errors = strings(&report["refusals"], Some("error"));
    assert!(errors[0].starts_with("not JSON"), "{errors:?}");
    assert_eq!(errors[1], "`name` must be string");
    assert_eq!(errors[2], "`name` is required");
    assert_eq!(errors[3], "the arguments must be a JSON object");
    assert!(refusals.iter().all(|r| r["busy"] == false), "{refusals:?}");
    assert_eq!(report["still"]["pending"].as_array().unwrap().len(), 1);
    assert_eq!(report["after"]["finish"], "finished: success: All clean.");
    assert!(
        strings(&report["after"]["events"], Some("text")).contains(&"→ deleted stale"),
        "{report}"
    );
    assert_eq!(
        deleted(),
        2,
        "the edited call ran once, the refused edits never"
    );

    // Two tabs decide the same call, the second otherwise: one wins, the other is refused.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "two-tabs", "t-race", &[]).await;
    assert_eq!(report["second_saw"][0]["path"], "janitor › delete_branch");
    assert_eq!(report["first"], "finished: success: All clean.");
    let second = report["second"].as_str().unwrap();
    assert!(second.starts_with("refused: "), "{second}");
    assert_eq!(report["second_after"]["pending"], json!([]));
    assert_eq!(deleted(), 3, "the call decided twice ran once");

    // An edit of every part of the skill's input, nested and listed ones too, goes through
    // after the page refused the wrong ones, and the skill runs once on what was edited.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(
        addr,
        "edit-schema",
        "t-edit-schema",
        &[("CONSOLE_EDIT_VALID", "1")],
    )
    .await;
    assert_eq!(report["refusals"].as_array().unwrap().len(), 4, "{report}");
    assert_eq!(report["after"]["finish"], "finished: success: All clean.");
    let ran = "→ deleted stale (hard; signed off by ann after bob; keeping main 7 days)";
    assert!(
        strings(&report["after"]["events"], Some("text")).contains(&ran),
        "{report}"
    );
    assert_eq!(
        deleted(),
        4,
        "the edited call ran once, the refused edits never"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_the_page_refuses_sends_nothing() {
    // Without the valid edit at the end: the thread is still paused on the server, its call
    // as it was (had anything been sent, the call would have run or been refused, and the
    // thread would be idle). The counter is checked in the test above, which alone runs it.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "edit", "t-refused", &[]).await;
    assert_eq!(report["refusals"].as_array().unwrap().len(), 4);
    let listed = thread(addr, "t-refused").await;
    assert_eq!(listed["state"], "paused", "{listed}");
    let pending = &listed["pending"][0];
    assert_eq!(pending["path"], "janitor › delete_branch");
    assert_eq!(pending["arguments"], json!({"name": "old"}));
    assert_eq!(pending["inputSchema"]["required"], json!(["name"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_wrong_deeper_down_is_refused_in_the_page_naming_where() {
    // The paused call's schema has an enum, a struct reached by `$ref` (a type that refers to
    // itself stays under `$defs`), an `Option` and a `Vec` of structs with a `u32`: each edit
    // wrong in one of them is refused in the page, its error naming the place, and nothing is
    // sent (the counter is checked in the first test, which alone runs the skill).
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "edit-schema", "t-schema", &[]).await;
    let refusals = report["refusals"].as_array().unwrap();
    let errors = strings(&report["refusals"], Some("error"));
    assert_eq!(
        errors,
        [
            r#"`mode` must be one of "soft", "hard", null"#,
            "`sign_off.after.by` is required",
            "`keep[1].days` must be integer",
            "`keep[0].days` must be at least 0",
        ]
    );
    assert!(refusals.iter().all(|r| r["busy"] == false), "{refusals:?}");
    let still = &report["still"]["pending"];
    assert_eq!(still.as_array().unwrap().len(), 1, "{report}");
    assert_eq!(still[0]["arguments"], json!({"name": "old"}));
    let listed = thread(addr, "t-schema").await;
    assert_eq!(listed["state"], "paused", "{listed}");
    let pending = &listed["pending"][0];
    assert_eq!(pending["arguments"], json!({"name": "old"}));
    let schema = &pending["inputSchema"];
    assert_eq!(
        schema["properties"]["sign_off"]["properties"]["after"]["anyOf"][0]["$ref"],
        "#/$defs/SignOff",
        "{schema}"
    );
    assert_eq!(schema["$defs"]["SignOff"]["required"], json!(["by"]));
    assert_eq!(
        schema["properties"]["keep"]["items"]["properties"]["days"]["format"],
        "uint32"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_threads_view_shows_nothing_of_another() {
    // `t-a` pauses on the nested call; `t-b`'s run (the parent model's next reply) just answers.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "isolation", "t-a", &[]).await;
    assert_eq!(report["first"]["pending"].as_array().unwrap().len(), 1);
    let other = &report["other"];
    assert_eq!(other["pending"], json!([]), "{other}");
    assert_eq!(other["finish"], "finished: success: All clean.");
    let texts = strings(&other["events"], Some("text"));
    assert!(
        texts
            .iter()
            .all(|t| !t.contains("janitor") && !t.contains("old")),
        "t-a's events in t-b's view: {texts:?}"
    );
    let back = &report["back"];
    assert_eq!(
        back["pending"][0]["path"], "janitor › delete_branch",
        "{back}"
    );
    assert_eq!(back["events"], json!([]), "t-b's events in t-a's view");
    // Selecting `t-a` shows its trace: its own conversation, nothing of `t-b`'s.
    let trace = strings(&back["trace"], None);
    assert!(
        trace.iter().any(|t| t.contains("Clean up the old branch.")),
        "{trace:?}"
    );
    assert!(trace.iter().any(|t| t.contains("janitor")), "{trace:?}");
    assert!(
        trace
            .iter()
            .all(|t| !t.contains("Say hello") && !t.contains("All clean")),
        "t-b's conversation in t-a's trace: {trace:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_token_the_page_shows_401_and_no_data() {
    let (addr, _task) = serve(nested("Deleted.")).await;
    // A thread with a pending call exists; the page without the token must not show it.
    let report = browser(addr, "no-token", "unused", &[]).await;
    assert!(
        report["status"].as_str().unwrap().starts_with("401"),
        "{report}"
    );
    assert_eq!(report["threads"], 0);
    assert_eq!(report["stored"], json!([]), "no token was kept");
}
