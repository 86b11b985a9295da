//! The console, in headless Chromium driven by Selenium (`tests/console_browser.py`): a person
//! starts a run whose sub-agent pauses on a destructive call, sees the call's path (`janitor ›
//! delete_branch`) and exact arguments, and approves, denies or edits it; an edit the skill's
//! schema refuses, at its first level or deeper down (an enum, a struct reached by `$ref`, a
//! list's item), is refused in the page naming where, and nothing is sent; of two tabs deciding the same
//! call, one wins and the other is told it was refused. The skill's counter says what ran.
//! Also: the page is public and holds nothing, the listing needs the token and a same-origin
//! caller. Screenshots are saved under the target directory (`console-screenshots/`).
//!
//! Chromium and chromedriver come from the system (Debian's `chromium`, `chromium-driver`);
//! Selenium is installed on first use (`test_support::provision::python_with_selenium`).

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use agent_agui::AguiServer;
use agent_core::{Registry, ToolCall};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A runtime whose model calls the agent `janitor`, whose own model calls `delete_branch`
/// (asked about: the run pauses), then answers `child_answer`.
fn nested(child_answer: &str) -> AguiServer {
    let child = AgentRuntime::new(
        MockProvider::new([
            call("c1", "delete_branch", "old"),
            MockReply::text(child_answer),
        ]),
        registry(),
    )
    .streaming(true);
    let mut parent = Registry::new();
    parent.add(child.into_skill("janitor", "Cleans up branches."));
    let runtime = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "janitor",
                json!({"goal": "delete the old branch"}),
            )]),
            MockReply::text("All clean."),
        ]),
        parent,
    )
    .streaming(true);
    AguiServer::new(runtime).skill_schemas(&registry())
}

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

/// One `GET` over a fresh connection: the status, the headers (lowercase), the body.
async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_lowercase(), body.to_owned())
}

/// The thread `id` in the server's listing; `None` while it is not listed.
async fn listed(addr: SocketAddr, id: &str) -> Option<Value> {
    let auth = format!("Bearer {TOKEN}");
    let (status, _, body) = get(addr, "/agui/threads", &[("Authorization", &auth)]).await;
    assert_eq!(status, 200, "{body}");
    let listing: Value = serde_json::from_str(&body).unwrap();
    listing["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
}

/// The thread `id` in the server's listing.
async fn thread(addr: SocketAddr, id: &str) -> Value {
    listed(addr, id)
        .await
        .unwrap_or_else(|| panic!("no thread {id} in the listing"))
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
    let agents: Vec<&str> = after["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
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
        report["after"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"]
                .as_str()
                .unwrap()
                .contains("denied in the console")),
        "{report}"
    );
    assert_eq!(deleted(), 1, "a denied call ran");

    // Edit: what the schema refuses is refused in the page and nothing is sent; a valid edit
    // runs with the edited arguments.
    let (addr, _task) = serve(nested("Deleted.")).await;
    let report = browser(addr, "edit", "t-edit", &[("CONSOLE_EDIT_VALID", "1")]).await;
    let refusals = report["refusals"].as_array().unwrap();
    let errors: Vec<&str> = refusals
        .iter()
        .map(|r| r["error"].as_str().unwrap())
        .collect();
    assert!(errors[0].starts_with("not JSON"), "{errors:?}");
    assert_eq!(errors[1], "`name` must be string");
    assert_eq!(errors[2], "`name` is required");
    assert_eq!(errors[3], "the arguments must be a JSON object");
    assert!(refusals.iter().all(|r| r["busy"] == false), "{refusals:?}");
    assert_eq!(report["still"]["pending"].as_array().unwrap().len(), 1);
    assert_eq!(report["after"]["finish"], "finished: success: All clean.");
    assert!(
        report["after"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"] == "→ deleted stale"),
        "{report}"
    );
    assert_eq!(
        deleted(),
        2,
        "the edited call ran once, the refused edits never"
    );

    // Two tabs decide the same call: one wins, the other is refused.
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
        report["after"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"] == ran),
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
    let errors: Vec<&str> = refusals
        .iter()
        .map(|r| r["error"].as_str().unwrap())
        .collect();
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
    let texts: Vec<&str> = other["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
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
    let trace: Vec<&str> = back["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
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

#[tokio::test(flavor = "multi_thread")]
async fn the_page_is_public_and_strict_the_listing_guarded() {
    let (addr, _task) = serve(nested("Deleted.")).await;
    let (status, head, body) = get(addr, "/console", &[]).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    let policy = head
        .lines()
        .find(|l| l.starts_with("content-security-policy:"))
        .expect("a CSP");
    assert!(policy.contains("script-src 'self';"), "{policy}");
    assert!(!policy.contains("unsafe"), "{policy}");
    assert!(body.contains("/console/console.js"));
    let (check, script) = (
        body.find(r#"<script src="/console/schema.js""#),
        body.find(r#"<script src="/console/console.js""#),
    );
    assert!(
        check.is_some() && check < script,
        "the check loads first: {body}"
    );
    assert!(!body.contains("<script>"), "no inline script");
    for script in ["/console/console.js", "/console/schema.js"] {
        let (status, head, _) = get(addr, script, &[]).await;
        assert_eq!(status, 200, "{script}");
        assert!(head.contains("content-type: text/javascript"), "{head}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        assert!(head.contains(policy), "{script}: {head}");
    }

    let auth = format!("Bearer {TOKEN}");
    let (status, _, _) = get(addr, "/agui/threads", &[]).await;
    assert_eq!(status, 401, "the listing without the token");
    let (status, _, _) = get(addr, "/agui/threads", &[("Authorization", "Bearer wrong")]).await;
    assert_eq!(status, 401, "the listing with a wrong token");
    let foreign = [
        ("Authorization", auth.as_str()),
        ("Origin", "https://evil.example"),
    ];
    let (status, _, body) = get(addr, "/agui/threads", &foreign).await;
    assert_eq!(status, 403, "a foreign origin, even with the token: {body}");
    let own = format!("http://{addr}");
    let same = [("Authorization", auth.as_str()), ("Origin", own.as_str())];
    let (status, _, body) = get(addr, "/agui/threads", &same).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"threads": []})
    );
    // A thread's trace is guarded the same way, and a thread the store does not hold is 404.
    assert_eq!(get(addr, "/agui/threads/t1", &[]).await.0, 401);
    assert_eq!(get(addr, "/agui/threads/t1", &foreign).await.0, 403);
    assert_eq!(get(addr, "/agui/threads/t1", &same).await.0, 404);

    // Off: nothing but the endpoint.
    let (addr, _task) = serve(nested("Deleted.").console(false)).await;
    assert_eq!(get(addr, "/console", &[]).await.0, 404);
    assert_eq!(
        get(addr, "/agui/threads", &[("Authorization", &auth)])
            .await
            .0,
        404
    );
}

static RELEASE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Waits until the test lets it finish, or the run is cancelled.
#[agent_core::skill(read_only, register = false)]
async fn hold(ctx: &agent_core::SkillContext) -> Result<String, agent_core::SkillError> {
    tokio::select! {
        () = RELEASE.notified() => Ok("released".into()),
        () = ctx.cancellation().cancelled() => Err(agent_core::SkillError::Cancelled),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_is_listed_as_running_while_its_run_goes_on() {
    let mut registry = Registry::new();
    registry.add(HoldSkill);
    let runtime = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("c1", "hold", json!({}))]),
            MockReply::text("Done."),
        ]),
        registry,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let mut stream = start_held_run(addr, "t-run").await;
    let started = std::time::Instant::now();
    RELEASE.notify_one();
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the run ends")
        .unwrap();
    assert!(String::from_utf8_lossy(&answer).contains("RUN_FINISHED"));
    while listed_state(addr, "t-run").await.as_deref() != Some("idle") {
        assert!(
            started.elapsed() < PATIENCE,
            "still listed as running after its end"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_going_on_is_cancelled_from_the_console_and_nothing_else_is() {
    let mut registry = Registry::new();
    registry.add(HoldSkill);
    let runtime = AgentRuntime::new(
        MockProvider::new([MockReply::tool_calls([ToolCall::new(
            "c1",
            "hold",
            json!({}),
        )])]),
        registry,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let auth = format!("Bearer {TOKEN}");
    let cancel = |id: &str| format!("/agui/threads/{id}/cancel");
    // Nothing going on: nothing to cancel; and never without the token.
    assert_eq!(
        post_to(addr, &cancel("t-c"), &[("Authorization", &auth)]).await,
        404
    );
    let mut stream = start_held_run(addr, "t-c").await;
    assert_eq!(post_to(addr, &cancel("t-c"), &[]).await, 401);
    assert_eq!(
        post_to(addr, &cancel("t-other"), &[("Authorization", &auth)]).await,
        404
    );
    assert_eq!(
        post_to(addr, &cancel("t-c"), &[("Authorization", &auth)]).await,
        202
    );
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the cancelled run ends")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let last = answer
        .lines()
        .rfind(|line| line.starts_with("data: "))
        .unwrap_or_default();
    eprintln!("{last}");
    assert!(
        last.contains("RUN_FINISHED") && last.contains("cancelled"),
        "the stream ends with the run cancelled: {last}"
    );
}

/// Thread `id`'s state in the server's listing; `None` while it is not listed yet.
async fn listed_state(addr: SocketAddr, id: &str) -> Option<String> {
    let thread = listed(addr, id).await?;
    Some(thread["state"].as_str().unwrap().to_owned())
}

/// Starts a run on thread `id` whose model calls `hold`, and waits until the thread is listed
/// as running; the run's open stream.
async fn start_held_run(addr: SocketAddr, id: &str) -> tokio::net::TcpStream {
    let body = json!({"threadId": id, "runId": "r1",
                      "messages": [{"id": "u1", "role": "user", "content": "Hold on."}]})
    .to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /agui HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let started = std::time::Instant::now();
    while listed_state(addr, id).await.as_deref() != Some("running") {
        assert!(started.elapsed() < PATIENCE, "never listed as running");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stream
}

/// A POST without a body to `path`; the status.
async fn post_to(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer)[9..12].parse().unwrap()
}
