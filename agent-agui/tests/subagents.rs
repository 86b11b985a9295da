//! Agents a run called, and thinking, as the official client sees them: every agent called is
//! an AG-UI sub-agent (`SUBAGENT_STARTED` with the call that ran it, its events carrying its
//! `subagentRunId`, `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`), nested agents name their parent,
//! an agent that pauses is `suspended` and comes back as a new invocation when resumed, and a
//! recorded Anthropic stream's thinking arrives as `REASONING_*` events; code mode's program is
//! a sub-agent too, its calls inside it. The client's own
//! verifier runs on every stream (it refuses, for example, an event attributed to a sub-agent
//! that is not running, or a run finished with one still open), and every event is checked
//! with `@ag-ui/core`'s schemas.

mod support;

use agent_agui::AguiServer;
use agent_core::{Registry, ToolCall};
use agent_llm::cassette::{Cassette, Matcher};
use agent_llm::{AnthropicProvider, CacheControl, MockProvider, MockReply, ThinkingConfig};
use agent_runtime::AgentRuntime;
use serde_json::{Value, json};
use support::*;

/// Adds to `to` a streaming agent named `name`, as a skill, on these replies, over `skills`.
fn agent(to: &mut Registry, name: &str, replies: Vec<MockReply>, skills: Registry) {
    to.add(
        AgentRuntime::new(MockProvider::new(replies), skills)
            .streaming(true)
            .into_skill(name, "An agent of the test."),
    );
}

/// A streaming runtime over `skills` on these replies.
fn parent(replies: Vec<MockReply>, skills: Registry) -> AgentRuntime {
    AgentRuntime::new(MockProvider::new(replies), skills).streaming(true)
}

/// Held by the tests that count `delete_branch`'s runs (the counter is the process's).
static COUNTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn run_call(id: &str, agent: &str) -> MockReply {
    MockReply::tool_calls([ToolCall::new(id, agent, json!({"goal": "tidy up"}))])
}

fn events(turn: &Value) -> &Vec<Value> {
    turn["events"].as_array().unwrap()
}

/// The first event of `kind` at or after `from`, and where it is.
fn find<'a>(turn: &'a Value, kind: &str, from: usize) -> (usize, &'a Value) {
    events(turn)
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} after event {from}: {turn}"))
}

/// Every event valid, every stream taken by the client's verifier, and no tool call id started
/// twice in the thread.
fn ok(report: &Value) {
    all_valid(report);
    let mut started = std::collections::HashSet::new();
    for (n, turn) in report["turns"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            turn["error"],
            json!(null),
            "turn {n}: the client refused the stream"
        );
        for event in events(turn)
            .iter()
            .filter(|e| e["type"] == "TOOL_CALL_START")
        {
            let id = event["toolCallId"].as_str().unwrap();
            assert!(
                started.insert(id.to_owned()),
                "the call id {id} started twice"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_called_is_a_sub_agent_its_events_attributed_to_it() {
    let mut skills = Registry::new();
    agent(
        &mut skills,
        "janitor",
        vec![
            call("c1", "lookup", "main"),
            MockReply::text("main is fine."),
        ],
        registry(),
    );
    let runtime = parent(
        vec![run_call("p1", "janitor"), MockReply::text("All clean.")],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(addr, "t-sub", json!([{"message": "Tidy up."}])).await;
    ok(&report);
    let turn = &report["turns"][0];

    let (start, started) = find(turn, "SUBAGENT_STARTED", 0);
    assert_eq!(started["name"], "janitor");
    assert_eq!(started["parentToolCallId"], "p1");
    assert!(started.get("parentSubagentRunId").is_none());
    let id = started["subagentRunId"].as_str().unwrap().to_owned();
    let (end, finished) = find(turn, "SUBAGENT_FINISHED", start);
    assert_eq!(finished["subagentRunId"], id.as_str());
    assert_eq!(finished["outcome"], json!({"type": "success"}));
    // Between them, the janitor's own events, each attributed to it: its steps, its call of
    // `lookup` and the result, its answer.
    let inside = &events(turn)[start + 1..end];
    let kinds: Vec<&str> = inside
        .iter()
        .filter(|e| e["type"] != "STATE_SNAPSHOT")
        .map(|e| {
            assert_eq!(e["subagentRunId"], id.as_str(), "not attributed: {e}");
            e["type"].as_str().unwrap()
        })
        .collect();
    for kind in [
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing inside: {kinds:?}");
    }
    assert!(inside.iter().any(|e| e["toolCallId"] == "p1/c1"));
    // The parent's own events carry no attribution, and its result for `p1` comes after the
    // sub-agent ended.
    let (result_at, result) = find(turn, "TOOL_CALL_RESULT", end);
    assert_eq!(result["toolCallId"], "p1");
    assert!(result.get("subagentRunId").is_none());
    assert!(result_at > end);
    for event in &events(turn)[..start] {
        assert!(event.get("subagentRunId").is_none(), "{event}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn nested_agents_name_their_parent_and_a_failed_one_is_an_error() {
    // run → outer → inner (answers); then run → broken (its model fails after a first call).
    let mut inner = Registry::new();
    agent(
        &mut inner,
        "inner",
        vec![MockReply::text("done inside.")],
        registry(),
    );
    let mut skills = Registry::new();
    agent(
        &mut skills,
        "outer",
        vec![run_call("o1", "inner"), MockReply::text("done outside.")],
        inner,
    );
    agent(
        &mut skills,
        "broken",
        vec![
            call("b1", "lookup", "main"),
            MockReply::error(agent_llm::ProviderError::Config("no key".into())),
        ],
        registry(),
    );
    let runtime = parent(
        vec![
            run_call("p1", "outer"),
            run_call("p2", "broken"),
            MockReply::text("Tried."),
        ],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(addr, "t-nested", json!([{"message": "Go."}])).await;
    ok(&report);
    let turn = &report["turns"][0];

    let (at, outer) = find(turn, "SUBAGENT_STARTED", 0);
    assert_eq!(outer["name"], "outer");
    let (inner_at, inner) = find(turn, "SUBAGENT_STARTED", at + 1);
    assert_eq!(inner["name"], "inner");
    assert_eq!(inner["parentSubagentRunId"], outer["subagentRunId"]);
    assert_eq!(inner["parentToolCallId"], "p1/o1");
    assert_ne!(inner["subagentRunId"], outer["subagentRunId"]);
    // The inner one ends first.
    let finished: Vec<&Value> = events(turn)
        .iter()
        .filter(|e| e["type"] == "SUBAGENT_FINISHED")
        .collect();
    assert_eq!(finished[0]["subagentRunId"], inner["subagentRunId"]);
    assert_eq!(finished[1]["subagentRunId"], outer["subagentRunId"]);

    let (at, broken) = find(turn, "SUBAGENT_STARTED", inner_at + 1);
    assert_eq!(broken["name"], "broken");
    assert_eq!(broken["parentToolCallId"], "p2");
    let (error_at, error) = find(turn, "SUBAGENT_ERROR", at);
    assert_eq!(error["subagentRunId"], broken["subagentRunId"]);
    assert!(
        error["message"].as_str().unwrap().contains("no key"),
        "{error}"
    );
    let (result_at, result) = find(turn, "TOOL_CALL_RESULT", error_at);
    assert_eq!(result["toolCallId"], "p2");
    assert!(result_at > error_at);
    assert_eq!(events(turn).last().unwrap()["outcome"]["type"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_that_pauses_is_suspended_and_resumed_as_a_new_invocation() {
    let _counting = COUNTING.lock().await;
    let before = DELETED.load(std::sync::atomic::Ordering::SeqCst);
    let mut skills = Registry::new();
    agent(
        &mut skills,
        "janitor",
        vec![
            call("c1", "delete_branch", "old"),
            MockReply::text("Deleted it."),
        ],
        registry(),
    );
    let runtime = parent(
        vec![run_call("p1", "janitor"), MockReply::text("All clean.")],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(
        addr,
        "t-suspended",
        json!([{"message": "Delete the old branch."}, {"resume": "approve"}]),
    )
    .await;
    ok(&report);
    let (paused, resumed) = (&report["turns"][0], &report["turns"][1]);

    let (at, started) = find(paused, "SUBAGENT_STARTED", 0);
    let (_, suspended) = find(paused, "SUBAGENT_FINISHED", at);
    assert_eq!(suspended["subagentRunId"], started["subagentRunId"]);
    assert_eq!(suspended["outcome"]["type"], "suspended");
    let last = events(paused).last().unwrap();
    assert_eq!(last["outcome"]["type"], "interrupt");
    let interrupt = &last["outcome"]["interrupts"][0];
    assert!(interrupt["id"].as_str().unwrap().starts_with("p1/c1#"));
    assert_eq!(interrupt["subagentRunId"], started["subagentRunId"]);
    assert_eq!(
        interrupt["metadata"]["eugene"]["agents"],
        json!(["janitor"])
    );

    let (at, again) = find(resumed, "SUBAGENT_STARTED", 0);
    assert_eq!(again["name"], "janitor");
    assert_ne!(again["subagentRunId"], started["subagentRunId"]);
    let (_, done) = find(resumed, "SUBAGENT_FINISHED", at);
    assert_eq!(done["subagentRunId"], again["subagentRunId"]);
    assert_eq!(done["outcome"]["type"], "success");
    assert_eq!(events(resumed).last().unwrap()["result"], "All clean.");
    assert_eq!(
        DELETED.load(std::sync::atomic::Ordering::SeqCst),
        before + 1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_thinking_streams_as_reasoning_before_the_answer() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recordings/anthropic_vcr_thinking_stream_budget_1024_roundtrip.yaml");
    // The recording's first answer, whatever eugene's request (its own prompt is not the one
    // recorded): thinking, then the answer's text.
    let cassette = Cassette::load(path).unwrap();
    let first = cassette.interactions()[0].clone();
    let server = Cassette::new(cassette.path(), vec![first])
        .serve(Matcher::new().ignore_query().ignore_body())
        .await
        .unwrap();
    let provider = AnthropicProvider::new("sk-test", "claude-sonnet-4-0")
        .with_base_url(server.base_url())
        .with_cache_control(CacheControl::none());
    let runtime = AgentRuntime::new(provider, Registry::new())
        .streaming(true)
        .thinking(ThinkingConfig::Budget(1024));
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(
        addr,
        "t-thinking",
        json!([{"message": "How do I cross the street?"}]),
    )
    .await;
    ok(&report);
    let turn = &report["turns"][0];
    let kinds = types(turn);
    let order: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("REASONING") || k.starts_with("TEXT_MESSAGE_START"))
        .collect();
    assert_eq!(
        order[..3],
        [
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT"
        ]
    );
    let end = order.iter().position(|k| *k == "REASONING_END").unwrap();
    assert_eq!(order[end - 1], "REASONING_MESSAGE_END");
    assert_eq!(
        order[end + 1],
        "TEXT_MESSAGE_START",
        "the answer after the thinking"
    );
    let thought: String = events(turn)
        .iter()
        .filter(|e| e["type"] == "REASONING_MESSAGE_CONTENT")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert!(thought.starts_with("This is a straightforward question about pedestrian safety"));
    let answer = events(turn).last().unwrap()["result"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        answer.starts_with("Here are the basic steps for safely crossing the street"),
        "{answer}"
    );
    assert!(!answer.contains("pedestrian safety. I should"));
    // The client kept the thinking as a reasoning message, apart from the answer.
    let messages = report["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["role"] == "reasoning"),
        "{messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn code_modes_program_is_a_sub_agent_its_calls_inside_it() {
    use agent_code::CodeMode;
    let mut skills = registry();
    skills.with_code_mode();
    let program = "const a = await lookup({name: 'main'});\n\
                   const b = await lookup({name: 'dev'});\n\
                   return a + '; ' + b;";
    // Two programs in one run: each numbers its calls from c1, the stream tells them apart.
    let runtime = parent(
        vec![
            MockReply::tool_calls([ToolCall::new("p1", "run_code", json!({"code": program}))]),
            MockReply::tool_calls([ToolCall::new("p2", "run_code", json!({"code": program}))]),
            MockReply::text("Both are ahead."),
        ],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(addr, "t-code", json!([{"message": "Check both."}])).await;
    ok(&report);
    let turn = &report["turns"][0];
    let (start, started) = find(turn, "SUBAGENT_STARTED", 0);
    assert_eq!(started["name"], "run_code");
    assert_eq!(started["parentToolCallId"], "p1");
    let (end, finished) = find(turn, "SUBAGENT_FINISHED", start);
    assert_eq!(finished["subagentRunId"], started["subagentRunId"]);
    assert_eq!(finished["outcome"]["type"], "success");
    let results: Vec<&Value> = events(turn)[start..end]
        .iter()
        .filter(|e| e["type"] == "TOOL_CALL_RESULT")
        .collect();
    assert_eq!(results.len(), 2, "{turn}");
    for (result, name) in results.iter().zip(["main", "dev"]) {
        assert_eq!(result["subagentRunId"], started["subagentRunId"]);
        assert!(result["toolCallId"].as_str().unwrap().starts_with("p1/"));
        assert_eq!(result["content"], format!("{name}: 3 commits ahead"));
    }
    let (_, outer) = find(turn, "TOOL_CALL_RESULT", end);
    assert_eq!(outer["toolCallId"], "p1");
    assert!(
        outer["content"]
            .as_str()
            .unwrap()
            .contains("main: 3 commits ahead; dev")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn code_mode_paused_on_a_call_inside_is_suspended_and_its_interrupt_attributed() {
    use agent_code::CodeMode;
    let _counting = COUNTING.lock().await;
    let before = DELETED.load(std::sync::atomic::Ordering::SeqCst);
    let mut skills = registry();
    skills.with_code_mode();
    let program = "const a = await lookup({name: 'old'});\n\
                   return await delete_branch({name: 'old'});";
    let runtime = parent(
        vec![
            MockReply::tool_calls([ToolCall::new("p1", "run_code", json!({"code": program}))]),
            MockReply::text("Deleted it."),
        ],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(
        addr,
        "t-code-pause",
        json!([{"message": "Delete old."}, {"resume": "approve"}]),
    )
    .await;
    ok(&report);
    let (paused, resumed) = (&report["turns"][0], &report["turns"][1]);
    let (at, started) = find(paused, "SUBAGENT_STARTED", 0);
    assert_eq!(started["name"], "run_code");
    let (_, suspended) = find(paused, "SUBAGENT_FINISHED", at);
    assert_eq!(suspended["subagentRunId"], started["subagentRunId"]);
    assert_eq!(suspended["outcome"]["type"], "suspended");
    let interrupt = &events(paused).last().unwrap()["outcome"]["interrupts"][0];
    assert_eq!(interrupt["subagentRunId"], started["subagentRunId"]);
    assert_eq!(
        interrupt["metadata"]["eugene"]["path"],
        "run_code › delete_branch"
    );

    assert_eq!(interrupt["toolCallId"], "p1/c2");
    assert_eq!(events(resumed).last().unwrap()["result"], "Deleted it.");
    // The decided call is not shown again: its result, against the id it was shown with.
    let shown: Vec<&Value> = events(resumed)
        .iter()
        .filter(|e| e["toolCallId"] == "p1/c2")
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["type"], "TOOL_CALL_RESULT");
    assert_eq!(shown[0]["content"], "deleted old");
    assert_eq!(
        DELETED.load(std::sync::atomic::Ordering::SeqCst),
        before + 1,
        "the call approved inside the program ran once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_invocations_of_one_agent_at_once_are_two_sub_agents() {
    // The janitor only reads, so the parent's two calls of it in one turn run at the same time;
    // each answers in words streamed one by one, interleaved with the other's.
    let mut skills = Registry::new();
    agent(
        &mut skills,
        "janitor",
        vec![
            MockReply::text("first of two answers here"),
            MockReply::text("second of two answers here"),
        ],
        readers(),
    );
    let runtime = parent(
        vec![
            MockReply::tool_calls([
                ToolCall::new("p1", "janitor", json!({"goal": "look left"})),
                ToolCall::new("p2", "janitor", json!({"goal": "look right"})),
            ]),
            MockReply::text("Both looked."),
        ],
        skills,
    );
    let (addr, _task) = serve(AguiServer::new(runtime)).await;
    let report = client(addr, "t-twice", json!([{"message": "Look both ways."}])).await;
    ok(&report);
    let turn = &report["turns"][0];
    let started: Vec<&Value> = events(turn)
        .iter()
        .filter(|e| e["type"] == "SUBAGENT_STARTED")
        .collect();
    assert_eq!(started.len(), 2, "{turn}");
    let mut calls: Vec<&str> = started
        .iter()
        .map(|s| s["parentToolCallId"].as_str().unwrap())
        .collect();
    calls.sort_unstable();
    assert_eq!(calls, ["p1", "p2"]);
    assert_ne!(started[0]["subagentRunId"], started[1]["subagentRunId"]);
    // Each one's text is its own message, its whole answer.
    for sub in &started {
        let id = &sub["subagentRunId"];
        let text: String = events(turn)
            .iter()
            .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT" && e["subagentRunId"] == *id)
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert!(
            text == "first of two answers here" || text == "second of two answers here",
            "{text:?}"
        );
        let finished = events(turn)
            .iter()
            .find(|e| e["type"] == "SUBAGENT_FINISHED" && e["subagentRunId"] == *id)
            .expect("each ends");
        assert_eq!(finished["outcome"]["type"], "success");
    }
}
