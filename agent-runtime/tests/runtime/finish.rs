//! The agent loop end to end: every finish reason reached through the real loop, with real skills
//! (`#[skill]`), a real registry and the scripted `MockProvider` standing in for the model.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    CancellationToken, PermissionGate, Registry, SkillContext, SkillError, ToolCall, async_trait,
    skill,
};
use agent_llm::{
    ChatRequest, ChatResponse, EventStream, LlmProvider, Message, MockProvider, MockReply,
    ProviderError, Role, StopReason, TruncatedToolCall, Usage,
};
use agent_runtime::{AgentEvent, AgentRuntime, Budget, FinishReason, TranscriptLimit};
use serde_json::json;

static WRITES: AtomicUsize = AtomicUsize::new(0);

/// Look something up.
///
/// # Arguments
/// * `key` - What to look up.
#[skill(read_only, register = false)]
async fn lookup(key: String) -> Result<String, SkillError> {
    Ok(format!("{key}=42"))
}

/// Write something down.
///
/// # Arguments
/// * `text` - What to write.
#[skill(destructive, register = false)]
async fn write_note(text: String) -> Result<String, SkillError> {
    WRITES.fetch_add(1, Ordering::SeqCst);
    Ok(format!("wrote {text}"))
}

/// Fail every time.
#[skill(register = false)]
async fn broken() -> Result<String, SkillError> {
    Err(SkillError::tool("the disk is on fire"))
}

/// Send a secret, rarely needed.
///
/// # Arguments
/// * `to` - Whom to send it to.
#[skill(read_only, defer, search_hint = "mail letter", register = false)]
async fn send_secret(to: String) -> Result<String, SkillError> {
    Ok(format!("sent to {to}"))
}

/// The skills these tests use. The destructive `write_note` runs its calls: how runs end is the
/// subject here; the default that pauses on destructive calls is tested in `pause.rs`.
fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .add(LookupSkill)
        .add(WriteNoteSkill)
        .add(BrokenSkill)
        .add(SendSecretSkill)
        .destructive_calls(agent_core::DestructiveCalls::Allow);
    registry
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

fn recorder() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |event: &AgentEvent| events.lock().unwrap().push(event.clone())
    };
    (events, sink)
}

fn describe(event: &AgentEvent) -> String {
    match event {
        AgentEvent::TextDelta { step, text } => format!("{step} delta {text}"),
        AgentEvent::AssistantText { step, text } => format!("{step} text {text}"),
        AgentEvent::ToolCall { step, call } => format!("{step} call {} {}", call.id, call.name),
        AgentEvent::ToolResult { step, result } => {
            format!("{step} result {} {}", result.call_id, result.content())
        }
        AgentEvent::Usage {
            step, usage, total, ..
        } => {
            format!("{step} usage {} {}", usage.total(), total.total())
        }
        AgentEvent::Compacted { step, removed, .. } => format!("{step} compacted {removed}"),
        AgentEvent::Retry { step, attempt, .. } => format!("{step} retry {attempt}"),
        AgentEvent::TurnFinished { step, finish } => format!("{step} finished {finish:?}"),
        other => format!("{other:?}"),
    }
}

/// Every tool call in the transcript is answered, in order, right after its assistant message.
fn assert_valid(transcript: &[Message]) {
    let mut i = 0;
    while i < transcript.len() {
        let calls = &transcript[i].tool_calls;
        for (k, call) in calls.iter().enumerate() {
            let answer = transcript
                .get(i + 1 + k)
                .unwrap_or_else(|| panic!("call {} unanswered", call.id));
            assert_eq!(
                (answer.role, answer.tool_call_id.as_deref()),
                (Role::Tool, Some(call.id.as_str()))
            );
        }
        i += 1 + calls.len();
    }
}

#[tokio::test]
async fn a_two_turn_run_with_parallel_tools_emits_exactly_these_events() {
    let mock = MockProvider::new([
        MockReply::text_and_tool_calls(
            "Let me look.",
            [
                call("a", "lookup", json!({"key": "x"})),
                call("b", "lookup", json!({"key": "y"})),
            ],
        ),
        MockReply::text("x and y are 42."),
    ]);
    let (events, sink) = recorder();
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .event_sink(sink)
        .run("What are x and y?")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(outcome.final_text.as_deref(), Some("x and y are 42."));
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.usage.total(), 30);
    let described: Vec<String> = events.lock().unwrap().iter().map(describe).collect();
    assert_eq!(
        described,
        [
            "1 usage 15 15",
            "1 text Let me look.",
            "1 call a lookup",
            "1 call b lookup",
            "1 result a x=42",
            "1 result b y=42",
            "1 finished None",
            "2 usage 15 30",
            "2 text x and y are 42.",
            "2 finished Some(NoMoreToolCalls)",
        ]
    );
    // The second request carried both results, in call order, after the assistant turn.
    let second = &mock.requests()[1];
    let roles: Vec<Role> = second.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Tool]);
    assert_eq!(second.messages[2].tool_call_id.as_deref(), Some("a"));
    assert_eq!(
        second.tool_names(),
        ["lookup", "write_note", "broken", "tool_search"]
    );
    assert_valid(&outcome.transcript);
}

#[tokio::test]
async fn errors_are_answered_in_order_and_never_end_the_run() {
    let mock = MockProvider::new([
        MockReply::tool_calls([
            call("1", "broken", json!({})),
            call("2", "nope", json!({})),
            call("3", "lookup", json!({"k": 1})),
        ]),
        MockReply::text("I could not do it."),
    ]);
    let outcome = AgentRuntime::new(mock, registry())
        .run("try")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let results: Vec<(&str, bool)> = outcome.transcript[2..5]
        .iter()
        .map(|m| (m.content.as_str(), m.is_error))
        .collect();
    assert_eq!(results[0], ("the disk is on fire", true));
    assert!(results[1].0.starts_with("unknown skill `nope`") && results[1].1);
    assert!(results[2].0.starts_with("invalid arguments: `k`") && results[2].1);
    assert_valid(&outcome.transcript);
}

#[tokio::test]
async fn a_stop_other_than_end_turn_without_tool_calls_is_a_provider_stop() {
    let mut reply = match MockReply::text("The answer is") {
        MockReply::Response(r) => r,
        _ => unreachable!(),
    };
    reply.stop_reason = StopReason::MaxTokens;
    let outcome = AgentRuntime::new(MockProvider::new([MockReply::Response(reply)]), registry())
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::ProviderStop {
            stop: StopReason::MaxTokens
        }
    );
}

#[tokio::test]
async fn a_tool_call_cut_off_by_max_tokens_is_not_run_and_the_model_is_told() {
    let cut = ChatResponse {
        message: Message::assistant("Writing it."),
        stop_reason: StopReason::MaxTokens,
        provider_stop_reason: None,
        usage: Usage::default(),
        truncated_tool_calls: vec![TruncatedToolCall {
            id: "t1".into(),
            name: "write_note".into(),
            partial_arguments: "{\"text\": \"lo".into(),
        }],
        model: None,
        id: None,
        provider: None,
    };
    let before = WRITES.load(Ordering::SeqCst);
    let mock = MockProvider::new([
        MockReply::Response(cut),
        MockReply::text("Sorry, done differently."),
    ]);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .run("write")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(
        WRITES.load(Ordering::SeqCst),
        before,
        "the cut-off call never ran"
    );
    let notice = &mock.requests()[1].messages[2];
    assert_eq!(notice.role, Role::User);
    assert!(
        notice.content.contains("cut off by the token limit")
            && notice.content.contains("`write_note`")
    );
}

#[tokio::test]
async fn calls_finished_before_the_cut_run_and_the_cut_one_is_reported_after_their_results() {
    let cut = ChatResponse {
        message: Message::assistant_with_tool_calls(
            "",
            vec![call("a", "lookup", json!({"key": "x"}))],
        ),
        stop_reason: StopReason::MaxTokens,
        provider_stop_reason: None,
        usage: Usage::default(),
        truncated_tool_calls: vec![TruncatedToolCall {
            id: "b".into(),
            name: "write_note".into(),
            partial_arguments: "{\"text\": \"lo".into(),
        }],
        model: None,
        id: None,
        provider: None,
    };
    let mock = MockProvider::new([MockReply::Response(cut), MockReply::text("Done.")]);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .run("go")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let sent = &mock.requests()[1].messages;
    assert_eq!(
        sent.len(),
        4,
        "goal, calls, one result, the notice: {sent:?}"
    );
    assert_eq!(
        (
            sent[2].role,
            sent[2].tool_call_id.as_deref(),
            sent[2].content.as_str()
        ),
        (Role::Tool, Some("a"), "x=42"),
        "the finished call ran"
    );
    assert_eq!(sent[3].role, Role::User);
    assert!(
        sent[3].content.contains("cut off by the token limit")
            && sent[3].content.contains("`write_note`"),
        "{}",
        sent[3].content
    );
}

#[tokio::test]
async fn a_run_ended_by_a_budget_between_steps_finishes_each_step_once() {
    let mock = MockProvider::new((0..5).map(|i| {
        MockReply::tool_calls([call(
            &i.to_string(),
            "lookup",
            json!({"key": i.to_string()}),
        )])
    }));
    let (events, sink) = recorder();
    let outcome = AgentRuntime::new(mock, registry())
        .max_steps(2)
        .event_sink(sink)
        .run("look")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::Steps { limit: 2 })
    );
    let finished: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, AgentEvent::TurnFinished { .. }))
        .map(describe)
        .collect();
    assert_eq!(
        finished,
        [
            "1 finished None",
            "2 finished Some(BudgetExceeded(Steps { limit: 2 }))"
        ]
    );
}

#[tokio::test]
async fn the_step_budget_ends_an_endless_run() {
    let mock = MockProvider::new((0..10).map(|i| {
        MockReply::tool_calls([call(
            &i.to_string(),
            "lookup",
            json!({"key": i.to_string()}),
        )])
    }));
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .max_steps(3)
        .run("loop")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::Steps { limit: 3 })
    );
    assert_eq!((outcome.steps, mock.requests().len()), (3, 3));
    assert_valid(&outcome.transcript);
}

#[tokio::test]
async fn the_token_budget_ends_a_run() {
    let usage = Usage {
        input_tokens: 800,
        output_tokens: 200,
        ..Usage::default()
    };
    let mock = MockProvider::new((0..10).map(|i| {
        MockReply::tool_calls([call(
            &i.to_string(),
            "lookup",
            json!({"key": i.to_string()}),
        )])
        .with_usage(usage)
    }));
    let outcome = AgentRuntime::new(mock, registry())
        .max_tokens_total(1500)
        .run("loop")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::BudgetExceeded(Budget::Tokens {
            limit: 1500,
            used: 2000
        })
    );
    assert_eq!(outcome.steps, 2);
}

#[tokio::test]
async fn the_same_call_again_and_again_is_stuck() {
    let before = WRITES.load(Ordering::SeqCst);
    let same = || MockReply::tool_calls([call("w", "write_note", json!({"text": "hi"}))]);
    let mock = MockProvider::new([same(), same(), same(), same()]);
    let outcome = AgentRuntime::new(mock, registry())
        .stuck_after(3)
        .run("write")
        .await
        .unwrap();
    match &outcome.finish {
        FinishReason::Stuck {
            name,
            repeated,
            error,
            arguments,
        } => {
            assert_eq!(
                (name.as_str(), *repeated, error, arguments),
                ("write_note", 3, &None, &json!({"text": "hi"}))
            );
        }
        other => panic!("expected Stuck, got {other:?}"),
    }
    assert_eq!(
        WRITES.load(Ordering::SeqCst) - before,
        2,
        "the third identical call is not run"
    );
    assert_valid(&outcome.transcript);
}

#[tokio::test]
async fn the_same_error_again_and_again_is_stuck() {
    // Different calls (the arguments differ), the same error each time.
    let mock = MockProvider::new((0..5).map(|i| {
        MockReply::tool_calls([call(
            &i.to_string(),
            "lookup",
            json!({"key": format!("k{i}"), "nope": true}),
        )])
    }));
    let outcome = AgentRuntime::new(mock, registry())
        .stuck_after(3)
        .run("look")
        .await
        .unwrap();
    match outcome.finish {
        FinishReason::Stuck {
            name,
            error: Some(error),
            repeated,
            arguments,
        } => {
            assert_eq!((name.as_str(), repeated), ("lookup", 3));
            assert_eq!(arguments, json!({"key": "k2", "nope": true}));
            assert_eq!(
                error,
                "invalid arguments: `nope`: unknown field; expected `key`"
            );
        }
        other => panic!("expected Stuck on a repeated error, got {other:?}"),
    }
    assert_eq!(outcome.steps, 3);
}

#[tokio::test]
async fn denied_calls_end_the_run_at_the_limit() {
    let mut registry = registry();
    registry.with_hook(PermissionGate::new(|_, md| !md.is_destructive));
    let mock = MockProvider::new((0..5).map(|i| {
        MockReply::tool_calls([call(
            &i.to_string(),
            "write_note",
            json!({"text": i.to_string()}),
        )])
    }));
    let outcome = AgentRuntime::new(mock, registry)
        .permission_denial_limit(2)
        .run("write")
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::PermissionDenialLimit { denials: 2 }
    );
    assert_eq!(outcome.steps, 2);
    assert!(
        outcome
            .transcript
            .last()
            .unwrap()
            .content
            .contains("not granted")
    );
}

#[tokio::test]
async fn consecutive_denials_reset_after_an_allowed_call_unless_counted_in_total() {
    let script = || {
        MockProvider::new([
            MockReply::tool_calls([call("1", "write_note", json!({"text": "a"}))]),
            MockReply::tool_calls([call("2", "lookup", json!({"key": "k"}))]),
            MockReply::tool_calls([call("3", "write_note", json!({"text": "b"}))]),
            MockReply::text("gave up"),
        ])
    };
    let gated = || {
        let mut registry = registry();
        registry.with_hook(PermissionGate::new(|_, md| !md.is_destructive));
        registry
    };
    let consecutive = AgentRuntime::new(script(), gated())
        .permission_denial_limit(2)
        .run("w")
        .await
        .unwrap();
    assert_eq!(consecutive.finish, FinishReason::NoMoreToolCalls);
    let total = AgentRuntime::new(script(), gated())
        .permission_denial_limit(2)
        .count_denials_in_total()
        .run("w")
        .await
        .unwrap();
    assert_eq!(
        total.finish,
        FinishReason::PermissionDenialLimit { denials: 2 }
    );
}

#[tokio::test]
async fn plan_mode_runs_only_read_only_skills_then_pends_and_approval_carries_it_out() {
    let before = WRITES.load(Ordering::SeqCst);
    let mock = MockProvider::new([
        MockReply::tool_calls([
            call("1", "lookup", json!({"key": "x"})),
            call("2", "write_note", json!({"text": "early"})),
        ]),
        MockReply::text("Plan: 1. write x=42 down."),
        MockReply::tool_calls([call("3", "write_note", json!({"text": "x=42"}))]),
        MockReply::text("Written."),
    ]);
    let runtime = AgentRuntime::new(mock, registry()).plan_mode(true);
    let planned = runtime.run("note x").await.unwrap();
    assert_eq!(
        planned.finish,
        FinishReason::PlanPending {
            plan: "Plan: 1. write x=42 down.".into()
        }
    );
    assert_eq!(
        WRITES.load(Ordering::SeqCst),
        before,
        "nothing was written in plan mode"
    );
    assert_eq!(planned.transcript[2].content, "x=42");
    assert!(
        planned.transcript[3].is_error && planned.transcript[3].content.contains("plan mode"),
        "{}",
        planned.transcript[3].content
    );
    let done = runtime.approve_plan(planned.transcript).await.unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(WRITES.load(Ordering::SeqCst) - before, 1);
    assert!(
        done.transcript
            .iter()
            .any(|m| m.content == "The plan is approved. Carry it out now.")
    );
}

#[tokio::test]
async fn in_plan_mode_an_answer_cut_off_or_refused_is_a_provider_stop_not_a_plan() {
    for stop in [StopReason::MaxTokens, StopReason::Refusal] {
        let cut = ChatResponse {
            message: Message::assistant("Plan: 1. delete every"),
            stop_reason: stop.clone(),
            provider_stop_reason: None,
            usage: Usage::default(),
            truncated_tool_calls: Vec::new(),
            model: None,
            id: None,
            provider: None,
        };
        let mock = MockProvider::new([MockReply::Response(cut)]);
        let outcome = AgentRuntime::new(mock, registry())
            .plan_mode(true)
            .run("tidy up")
            .await
            .unwrap();
        assert_eq!(outcome.finish, FinishReason::ProviderStop { stop });
    }
}

#[tokio::test]
async fn resuming_a_transcript_with_unanswered_calls_answers_them_before_the_model_sees_it() {
    let calls = vec![
        call("a", "lookup", json!({"key": "x"})),
        call("b", "write_note", json!({"text": "y"})),
        call("c", "lookup", json!({"key": "z"})),
    ];
    let answered_b = agent_core::ToolResult::new(&calls[1], Ok("wrote y".into()));
    let cases = [
        // Saved right after the model asked, before any call was answered.
        vec![
            Message::user("go"),
            Message::assistant_with_tool_calls("", calls.clone()),
        ],
        // Only the second call was answered, and the user then wrote again.
        vec![
            Message::user("go"),
            Message::assistant_with_tool_calls("", calls.clone()),
            Message::tool_result(&answered_b),
            Message::user("and then?"),
        ],
    ];
    for transcript in cases {
        let mock = MockProvider::new([MockReply::text("Done.")]);
        let outcome = AgentRuntime::new(mock.clone(), registry())
            .resume(transcript)
            .await
            .unwrap();
        assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
        let sent = &mock.requests()[0].messages;
        assert_valid(sent);
        assert_valid(&outcome.transcript);
        let answers: Vec<&Message> = sent.iter().filter(|m| m.role == Role::Tool).collect();
        assert_eq!(answers.len(), 3, "{sent:#?}");
        for answer in answers {
            if answer.tool_call_id.as_deref() == Some("b") && !answer.is_error {
                assert_eq!(answer.content, "wrote y", "an existing answer is kept");
            } else {
                assert!(
                    answer.is_error && answer.content.contains("not run"),
                    "{answer:?}"
                );
            }
        }
    }
}

/// Waits until told, and counts how often its future is dropped unfinished.
struct Gate {
    started: Arc<tokio::sync::Notify>,
    dropped: Arc<AtomicUsize>,
}

struct DropCount(Arc<AtomicUsize>);
impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl agent_core::Skill for Gate {
    type Input = serde_json::Value;
    fn name(&self) -> &str {
        "wait_forever"
    }
    fn description(&self) -> &str {
        "Waits."
    }
    async fn run(
        &self,
        _: serde_json::Value,
        _: &SkillContext,
    ) -> Result<agent_core::SkillOutput, SkillError> {
        let _guard = DropCount(self.dropped.clone());
        self.started.notify_one();
        std::future::pending::<()>().await;
        unreachable!()
    }
}

#[tokio::test]
async fn cancelling_mid_tool_drops_the_call_and_leaves_a_valid_transcript() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut registry = registry();
    registry.add(Gate {
        started: started.clone(),
        dropped: dropped.clone(),
    });
    let mock = MockProvider::new([MockReply::tool_calls([
        call("1", "lookup", json!({"key": "a"})),
        call("2", "wait_forever", json!({})),
    ])]);
    let token = CancellationToken::new();
    let runtime = AgentRuntime::new(mock, registry).cancellation(token.clone());
    let run = tokio::spawn(async move { runtime.run("wait").await });
    started.notified().await;
    token.cancel();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.finish, FinishReason::Cancelled);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_valid(&outcome.transcript);
    let last = outcome.transcript.last().unwrap();
    assert!(
        last.is_error && last.content.contains("cancelled"),
        "{}",
        last.content
    );
}

/// A model that never answers.
struct Silent;

#[async_trait]
impl LlmProvider for Silent {
    fn name(&self) -> &str {
        "silent"
    }
    async fn complete(&self, _: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        std::future::pending().await
    }
    fn stream(&self, _: &ChatRequest<'_>) -> EventStream {
        Box::pin(futures::stream::pending())
    }
}

#[tokio::test]
async fn cancelling_mid_request_ends_the_run_promptly() {
    let token = CancellationToken::new();
    for streaming in [false, true] {
        let token = CancellationToken::new();
        let runtime = AgentRuntime::new(Silent, registry())
            .streaming(streaming)
            .cancellation(token.clone());
        let run = tokio::spawn(async move { runtime.run("hello?").await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
        let outcome = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("cancel is prompt")
            .unwrap()
            .unwrap();
        assert_eq!(outcome.finish, FinishReason::Cancelled);
        assert_eq!(
            outcome.transcript.len(),
            1,
            "nothing half-done is left in the transcript"
        );
    }
    token.cancel();
    let outcome = AgentRuntime::new(Silent, registry())
        .cancellation(token)
        .run("x")
        .await
        .unwrap();
    assert_eq!(
        (outcome.finish, outcome.steps),
        (FinishReason::Cancelled, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_while_the_transcript_is_being_summarised_ends_the_run_promptly() {
    let mut transcript = vec![Message::user("look things up")];
    for i in 0..4 {
        let call = call(&i.to_string(), "lookup", json!({"key": "k".repeat(300)}));
        let result = agent_core::ToolResult::new(&call, Ok("42".into()));
        transcript.push(Message::assistant_with_tool_calls("", vec![call]));
        transcript.push(Message::tool_result(&result));
    }
    let token = CancellationToken::new();
    // Over its limit from the start, so the first thing the run does is ask for a summary.
    let runtime = AgentRuntime::new(Silent, registry())
        .transcript_limit(TranscriptLimit::Chars(500))
        .keep_recent(2)
        .cancellation(token.clone());
    let saved = transcript.clone();
    let run = tokio::spawn(async move { runtime.resume(transcript).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    token.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("cancel is prompt")
        .unwrap()
        .unwrap();
    assert_eq!(
        (outcome.finish, outcome.steps),
        (FinishReason::Cancelled, 0)
    );
    assert_eq!(outcome.transcript, saved, "nothing was summarised away");
}

#[tokio::test]
async fn deferred_skills_join_the_definitions_once_tool_search_loads_them() {
    let mock = MockProvider::new([
        MockReply::tool_calls([call("1", "tool_search", json!({"query": "send mail"}))]),
        MockReply::tool_calls([call("2", "send_secret", json!({"to": "bob"}))]),
        MockReply::text("Sent."),
    ]);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .run("mail bob")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let requests = mock.requests();
    assert!(!requests[0].tool_names().contains(&"send_secret"));
    assert!(requests[1].tool_names().contains(&"send_secret"));
    assert_eq!(outcome.transcript[4].content, "sent to bob");
    // A new run starts with a new session.
    let mock = MockProvider::new([MockReply::text("hi")]);
    AgentRuntime::new(mock.clone(), registry())
        .run("again")
        .await
        .unwrap();
    assert!(!mock.requests()[0].tool_names().contains(&"send_secret"));
}

#[tokio::test]
async fn streaming_delivers_text_deltas_and_the_same_outcome() {
    let mock = MockProvider::new([MockReply::text("one two three")]);
    let (events, sink) = recorder();
    let outcome = AgentRuntime::new(mock, registry())
        .streaming(true)
        .event_sink(sink)
        .run("count")
        .await
        .unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("one two three"));
    let deltas: String = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "one two three");
}

#[tokio::test]
async fn a_conversation_continues_across_runs() {
    let mock = MockProvider::new([
        MockReply::text("Hi, Ann."),
        MockReply::text("Your name is Ann."),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry()).system("Be kind.");
    let first = runtime.run("I am Ann.").await.unwrap();
    let mut transcript = first.transcript;
    transcript.push(Message::user("What is my name?"));
    let second = runtime.resume(transcript).await.unwrap();
    assert_eq!(second.final_text.as_deref(), Some("Your name is Ann."));
    let sent = &mock.requests()[1];
    assert_eq!(sent.messages.len(), 3);
    assert_eq!(sent.system.as_deref(), Some("Be kind."));
}

#[tokio::test]
async fn a_provider_failure_is_an_agent_error() {
    let mock = MockProvider::new([MockReply::error(ProviderError::Config("bad key".into()))]);
    let error = AgentRuntime::new(mock, registry())
        .run("x")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model call failed: invalid provider configuration: bad key"
    );
}

fn long_turns(n: usize) -> Vec<MockReply> {
    (0..n)
        .map(|i| {
            MockReply::tool_calls([call(
                &i.to_string(),
                "lookup",
                json!({"key": "k".repeat(300) + &i.to_string()}),
            )])
        })
        .collect()
}

#[tokio::test]
async fn compaction_summarises_old_turns_and_keeps_the_goal_and_recent_turns() {
    let mut replies = long_turns(4);
    replies.push(MockReply::text("Summary: looked up k four times, all 42."));
    replies.push(MockReply::text("All done."));
    let mock = MockProvider::new(replies);
    let (events, sink) = recorder();
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .transcript_limit(TranscriptLimit::Chars(2000))
        .keep_recent(2)
        .event_sink(sink)
        .run("look things up")
        .await
        .unwrap();
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let compacted: Vec<(usize, usize)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Compacted {
                removed,
                kept,
                summary_chars,
                ..
            } => {
                assert!(*summary_chars > 0);
                Some((*removed, *kept))
            }
            _ => None,
        })
        .collect();
    assert_eq!(compacted.len(), 1, "{compacted:?}");
    assert_eq!(outcome.transcript[0].content, "look things up");
    assert!(
        outcome.transcript[1]
            .content
            .starts_with("[Summary of the earlier part of this conversation]\nSummary: looked up")
    );
    assert_valid(&outcome.transcript);
    // Five steps and the summary, 15 tokens each: the summary's count too.
    assert_eq!((outcome.steps, outcome.usage.total()), (5, 6 * 15));
    let summary_request = &mock.requests()[4];
    assert!(
        summary_request.tools.is_empty()
            && summary_request.messages[0].content.contains("Summarise")
    );
}

#[tokio::test]
async fn a_transcript_that_cannot_be_compacted_under_its_limit_ends_the_run() {
    // The summariser fails twice: the run gives up instead of looping.
    let mut replies = long_turns(4);
    replies.push(MockReply::error(ProviderError::Config(
        "summary failed".into(),
    )));
    replies.push(MockReply::error(ProviderError::Config(
        "summary failed".into(),
    )));
    let mock = MockProvider::new(replies);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .transcript_limit(TranscriptLimit::Chars(2000))
        .keep_recent(2)
        .run("look things up")
        .await
        .unwrap();
    match outcome.finish {
        FinishReason::TranscriptLimit { size, limit } => assert!(size > limit && limit == 2000),
        other => panic!("expected TranscriptLimit, got {other:?}"),
    }
    assert_eq!(mock.remaining(), 0);
    assert_valid(&outcome.transcript);
    // A goal alone over the limit cannot be compacted at all.
    let mock = MockProvider::new([MockReply::text("never asked")]);
    let outcome = AgentRuntime::new(mock.clone(), registry())
        .transcript_limit(TranscriptLimit::Tokens(10))
        .run("x".repeat(100))
        .await
        .unwrap();
    assert_eq!(
        outcome.finish,
        FinishReason::TranscriptLimit {
            size: 25,
            limit: 10
        }
    );
    assert_eq!(mock.requests().len(), 0);
}
