//! The console's HTTP side, without a browser: the page is public and holds nothing, strict in
//! what it lets a browser do; the listing needs the token and a same-origin caller; a thread is
//! listed as running while its run goes on; a run going on is cancelled from the console, and
//! nothing else is.

mod support;

use std::net::SocketAddr;

use agent_agui::AguiServer;
use agent_core::{Registry, ToolCall};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
    send(addr, "POST", path, headers).await.0
}
