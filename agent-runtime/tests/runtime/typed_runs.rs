//! Typed run results with a scripted model: each output mode, what it sends, checks and retries,
//! the retry budget, plan mode, resume and streaming. The same modes against real HTTP on
//! loopback, in both wire formats, are in `providers/typed.rs`.

use agent_core::{Registry, SkillContext, SkillError, ToolCall, skill};
use agent_core::{schemars, serde};
use agent_llm::{MockProvider, MockReply, Role, ToolChoice};
use agent_runtime::{AgentRuntime, Budget, FinishReason, OutputMode, OutputType};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
struct Forecast {
    city: String,
    high_c: i32,
    sky: Sky,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(crate = "agent_core::serde", rename_all = "lowercase")]
#[schemars(crate = "agent_core::schemars")]
enum Sky {
    Sunny,
    Cloudy,
}

fn good() -> serde_json::Value {
    json!({"city": "Oslo", "high_c": 4, "sky": "cloudy"})
}

fn oslo() -> Forecast {
    Forecast {
        city: "Oslo".into(),
        high_c: 4,
        sky: Sky::Cloudy,
    }
}

fn final_call(id: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new(id, "final_answer", args)
}

/// Look up the weather station's raw reading.
#[skill(read_only, register = false)]
async fn station(ctx: &SkillContext) -> Result<String, SkillError> {
    let marker = ctx.workspace_root().join("station_calls");
    let before = std::fs::read_to_string(&marker).unwrap_or_default();
    std::fs::write(&marker, format!("{before}x")).map_err(SkillError::from)?;
    Ok("4C, overcast".into())
}

/// Clashes with the typed run's own tool.
#[skill(read_only, register = false)]
async fn final_answer() -> Result<String, SkillError> {
    Ok("x".into())
}

/// A registry with one read-only skill that counts its calls in a file, so a test can see
/// whether it ran.
fn registry_with_tool() -> Registry {
    let mut registry = Registry::new();
    registry.try_add(StationSkill).unwrap();
    registry
}

fn station_calls(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("station_calls"))
        .unwrap_or_default()
        .len()
}

#[tokio::test]
async fn tool_mode_ends_when_final_answer_passes_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "station", json!({}))]),
        MockReply::tool_calls([final_call("c2", good())]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), registry_with_tool()).workspace(dir.path());
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    assert_eq!(typed.outcome.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(typed.outcome.output, Some(good()));
    assert_eq!(station_calls(dir.path()), 1);
    // Auto with tools on offer: tool mode. The tool is offered with the output's schema, and no
    // response schema is ever sent beside tools.
    let requests = mock.requests();
    for request in &requests {
        assert_eq!(request.tool_names(), ["station", "final_answer"]);
        assert!(request.response_schema.is_none());
    }
    let tool = &requests[0].tools[1];
    assert_eq!(
        tool.input_schema["required"],
        json!(["city", "high_c", "sky"])
    );
    assert_eq!(
        tool.input_schema["properties"]["sky"]["enum"],
        json!(["sunny", "cloudy"])
    );
    // Every call has its result: the transcript can be resumed.
    let last = typed.outcome.transcript.last().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert!(!last.is_error);
}

#[tokio::test]
async fn an_invalid_answer_goes_back_with_the_field_path_and_the_next_one_is_taken() {
    let mock = MockProvider::new([
        MockReply::tool_calls([final_call(
            "c1",
            json!({"city": "Oslo", "high_c": "four", "sky": "cloudy"}),
        )]),
        MockReply::tool_calls([final_call("c2", good())]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).output_mode(OutputMode::Tool);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let second = &mock.requests()[1];
    let error = second.messages.last().unwrap();
    assert_eq!(error.role, Role::Tool);
    assert!(error.is_error);
    assert!(
        error.content.contains("high_c") && error.content.contains("expected i32"),
        "{}",
        error.content
    );
}

#[tokio::test]
async fn the_retry_budget_ends_the_run_with_the_last_error() {
    let bad =
        |id: &str, sky: &str| final_call(id, json!({"city": "Oslo", "high_c": 4, "sky": sky}));
    let mock = MockProvider::new([
        MockReply::tool_calls([bad("c1", "foggy")]),
        MockReply::tool_calls([bad("c2", "misty")]),
        MockReply::tool_calls([bad("c3", "hazy")]),
        MockReply::text("never asked for"),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new())
        .output_mode(OutputMode::Tool)
        .output_retries(2);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, None);
    assert_eq!(typed.outcome.output, None);
    match &typed.outcome.finish {
        FinishReason::BudgetExceeded(Budget::OutputRetries { limit, last_error }) => {
            assert_eq!(*limit, 2);
            assert!(
                last_error.contains("sky") && last_error.contains("hazy"),
                "{last_error}"
            );
        }
        other => panic!("expected the output budget to run out, got {other:?}"),
    }
    assert_eq!(mock.remaining(), 1, "three answers, then the run stopped");
    // The last call is answered too, so the transcript stays valid.
    assert_eq!(typed.outcome.transcript.last().unwrap().role, Role::Tool);
}

#[tokio::test]
async fn plain_text_in_tool_mode_is_answered_with_a_request_to_call_final_answer() {
    let mock = MockProvider::new([
        MockReply::text("It will be cloudy in Oslo, 4 degrees."),
        MockReply::tool_calls([final_call("c1", good())]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).output_mode(OutputMode::Tool);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let nudge = mock.requests()[1].messages.last().unwrap().clone();
    assert_eq!(nudge.role, Role::User);
    assert!(nudge.content.contains("final_answer"), "{}", nudge.content);
}

#[tokio::test]
async fn other_calls_beside_an_accepted_final_answer_are_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockProvider::new([MockReply::tool_calls([
        ToolCall::new("c1", "station", json!({})),
        final_call("c2", good()),
        ToolCall::new("c3", "station", json!({})),
    ])]);
    let runtime = AgentRuntime::new(mock, registry_with_tool()).workspace(dir.path());
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    assert_eq!(station_calls(dir.path()), 0);
    let results: Vec<_> = typed
        .outcome
        .transcript
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.tool_call_id.as_deref().unwrap().to_owned(), m.is_error))
        .collect();
    assert_eq!(
        results,
        [
            ("c1".into(), true),
            ("c2".into(), false),
            ("c3".into(), true)
        ]
    );
}

#[tokio::test]
async fn calls_beside_a_failed_final_answer_run_as_usual() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockProvider::new([
        MockReply::tool_calls([
            final_call("c1", json!({"city": "Oslo"})),
            ToolCall::new("c2", "station", json!({})),
        ]),
        MockReply::tool_calls([final_call("c3", good())]),
    ]);
    let runtime = AgentRuntime::new(mock, registry_with_tool()).workspace(dir.path());
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    assert_eq!(station_calls(dir.path()), 1);
}

#[tokio::test]
async fn native_mode_without_tools_sends_the_strict_schema_on_the_first_turn() {
    let mock = MockProvider::new([MockReply::text(good().to_string())]).with_response_schema(true);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new());
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let request = &mock.requests()[0];
    assert!(request.tools.is_empty());
    let schema = request
        .response_schema
        .as_ref()
        .expect("Auto picked native");
    assert_eq!(schema.name, "final_answer");
    assert_eq!(schema.schema["additionalProperties"], json!(false));
    assert_eq!(schema.schema["required"], json!(["city", "high_c", "sky"]));
}

#[tokio::test]
async fn native_mode_with_tools_asks_under_the_schema_only_on_a_turn_without_tools() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("c1", "station", json!({}))]),
        MockReply::text("It is 4C and overcast in Oslo."),
        MockReply::text(format!("```json\n{}\n```", good())),
    ])
    .with_response_schema(true);
    let runtime = AgentRuntime::new(mock.clone(), registry_with_tool())
        .workspace(dir.path())
        .output_mode(OutputMode::Native);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests[..2] {
        assert!(request.response_schema.is_none());
        assert_eq!(request.tool_choice, ToolChoice::Auto);
    }
    assert!(requests[2].response_schema.is_some());
    assert_eq!(requests[2].tool_choice, ToolChoice::None);
    // The final answer is not offered as a tool in native mode.
    assert_eq!(requests[0].tool_names(), ["station"]);
}

#[tokio::test]
async fn native_answers_that_fail_the_check_are_sent_back_with_the_error() {
    let mock = MockProvider::new([
        MockReply::text(r#"{"city": "Oslo", "high_c": 4}"#),
        MockReply::text(good().to_string()),
    ])
    .with_response_schema(true);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new());
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let retry = mock.requests()[1].messages.last().unwrap().clone();
    assert_eq!(retry.role, Role::User);
    assert!(
        retry.content.contains("`sky`: missing field"),
        "{}",
        retry.content
    );
    assert!(mock.requests()[1].response_schema.is_some());
}

#[tokio::test]
async fn prompted_mode_puts_the_schema_in_the_instructions_and_reads_json_from_prose() {
    let mock = MockProvider::new([
        MockReply::text("No JSON, sorry."),
        MockReply::text(format!("Here it is: {} — hope that helps.", good())),
    ])
    .without_tools();
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).system("You forecast.");
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
    let first = &mock.requests()[0];
    let system = first.system.as_deref().unwrap();
    assert!(system.starts_with("You forecast.\n\n"), "{system}");
    assert!(system.contains("\"high_c\""), "{system}");
    assert!(first.tools.is_empty() && first.response_schema.is_none());
    let retry = mock.requests()[1].messages.last().unwrap().clone();
    assert!(
        retry.content.contains("holds no JSON object"),
        "{}",
        retry.content
    );
}

#[tokio::test]
async fn a_value_that_is_not_an_object_is_asked_for_wrapped_and_returned_bare() {
    let mock = MockProvider::new([MockReply::tool_calls([final_call(
        "c1",
        json!({"value": ["Oslo", "Bergen"]}),
    )])]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).output_mode(OutputMode::Tool);
    let typed = runtime
        .run("Two cities?")
        .typed::<Vec<String>>()
        .await
        .unwrap();
    assert_eq!(
        typed.output,
        Some(vec!["Oslo".to_owned(), "Bergen".to_owned()])
    );
    let schema = &mock.requests()[0].tools[0].input_schema;
    assert_eq!(schema["properties"]["value"]["type"], "array");
}

#[tokio::test]
async fn plan_mode_ends_in_a_plan_and_the_value_comes_after_approval() {
    let mock = MockProvider::new([
        MockReply::text("Plan: read the station, then answer."),
        MockReply::tool_calls([final_call("c1", good())]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new())
        .plan_mode(true)
        .output_mode(OutputMode::Tool);
    let planned = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert!(matches!(
        planned.outcome.finish,
        FinishReason::PlanPending { .. }
    ));
    assert_eq!(planned.output, None);
    // No final answer is offered while planning.
    assert!(mock.requests()[0].tools.is_empty());
    let done = runtime
        .approve_plan(planned.outcome.transcript)
        .typed::<Forecast>()
        .await
        .unwrap();
    assert_eq!(done.output, Some(oslo()));
}

#[tokio::test]
async fn resume_typed_continues_a_conversation_to_a_typed_answer() {
    let mock = MockProvider::new([
        MockReply::text("Which city?"),
        MockReply::tool_calls([final_call("c1", good())]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).output_mode(OutputMode::Tool);
    let first = runtime.run("Forecast, please.").await.unwrap();
    assert_eq!(first.output, None);
    let mut transcript = first.transcript;
    transcript.push(agent_llm::Message::user("Oslo."));
    let typed = runtime
        .resume(transcript)
        .typed::<Forecast>()
        .await
        .unwrap();
    assert_eq!(typed.output, Some(oslo()));
}

#[tokio::test]
async fn streaming_runs_parse_only_the_complete_answer() {
    let mock = MockProvider::new([MockReply::text(good().to_string())]).with_response_schema(true);
    let runtime = AgentRuntime::new(mock, Registry::new()).streaming(true);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert_eq!(typed.output, Some(oslo()));
}

#[tokio::test]
async fn a_schema_known_only_at_run_time_is_checked_by_the_given_check() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let check = |value: &serde_json::Value| match value.get("n").and_then(|n| n.as_i64()) {
        Some(n) if n > 0 => Ok(()),
        _ => Err("n: expected a positive integer".to_owned()),
    };
    let mock = MockProvider::new([
        MockReply::tool_calls([final_call("c1", json!({"n": -1}))]),
        MockReply::tool_calls([final_call("c2", json!({"n": 3}))]),
    ]);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new()).output_mode(OutputMode::Tool);
    let outcome = runtime
        .resume(vec![agent_llm::Message::user("n?")])
        .output(OutputType::from_schema(schema, check))
        .await
        .unwrap();
    assert_eq!(outcome.output, Some(json!({"n": 3})));
    let error = mock.requests()[1].messages.last().unwrap().clone();
    assert!(
        error.content.contains("expected a positive integer"),
        "{}",
        error.content
    );
}

#[tokio::test]
async fn a_skill_named_final_answer_is_a_configuration_error_not_a_silent_clash() {
    let mut registry = Registry::new();
    registry.try_add(FinalAnswerSkill).unwrap();
    let runtime = AgentRuntime::new(MockProvider::new([]), registry);
    let error = runtime.run("x").typed::<Forecast>().await.unwrap_err();
    assert!(error.to_string().contains("final_answer"), "{error}");
}

#[tokio::test]
async fn the_same_invalid_answer_again_and_again_ends_on_the_output_budget_not_as_stuck() {
    let same = || MockReply::tool_calls([final_call("c", json!({"city": "Oslo"}))]);
    let mock = MockProvider::new([same(), same(), same(), same()]);
    let runtime = AgentRuntime::new(mock, Registry::new())
        .output_mode(OutputMode::Tool)
        .output_retries(2)
        .stuck_after(2);
    let typed = runtime.run("Oslo?").typed::<Forecast>().await.unwrap();
    assert!(
        matches!(
            typed.outcome.finish,
            FinishReason::BudgetExceeded(Budget::OutputRetries { limit: 2, .. })
        ),
        "{:?}",
        typed.outcome.finish
    );
}

#[tokio::test]
async fn in_native_mode_a_null_for_an_optional_property_means_left_out() {
    // The strict form sent to the provider makes `note` required and nullable; the schema as
    // written (and its check) wants it absent or a string.
    let schema = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "note": {"type": "string"}},
        "required": ["title"]
    });
    let check = |value: &serde_json::Value| match value.get("note") {
        None | Some(serde_json::Value::String(_)) => Ok(()),
        Some(other) => Err(format!("`note`: expected a string, got {other}")),
    };
    let mock = MockProvider::new([MockReply::text(r#"{"title": "t", "note": null}"#)])
        .with_response_schema(true);
    let runtime = AgentRuntime::new(mock.clone(), Registry::new());
    let outcome = runtime
        .resume(vec![agent_llm::Message::user("t?")])
        .output(OutputType::from_schema(schema, check))
        .await
        .unwrap();
    assert_eq!(outcome.output, Some(json!({"title": "t"})));
    let sent = mock.requests()[0].response_schema.clone().unwrap().schema;
    assert_eq!(sent["required"], json!(["title", "note"]));
}

static PUBLISHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Publish the forecast (hard to take back).
#[skill(destructive, register = false)]
async fn publish() -> Result<String, SkillError> {
    PUBLISHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok("published".into())
}

#[tokio::test]
async fn a_typed_run_paused_in_a_session_continues_typed_and_an_untyped_decision_says_how() {
    let store = agent_runtime::MemorySessionStore::default();
    let mut registry = Registry::new();
    registry.add(PublishSkill);
    let runtime = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new("p1", "publish", json!({}))]),
            MockReply::tool_calls([final_call("f1", good())]),
        ]),
        registry,
    );
    let paused = runtime
        .run("Publish Oslo's forecast.")
        .in_session(&store, "forecasts")
        .typed::<Forecast>()
        .await
        .unwrap();
    assert!(
        matches!(paused.outcome.finish, FinishReason::AwaitingApproval { .. }),
        "{:?}",
        paused.outcome.finish
    );
    assert_eq!(paused.output, None);

    // Forgetting the type: an error that names the builder's way, and the session is untouched.
    let untyped = runtime
        .decide([("p1", agent_runtime::Decision::Approve)])
        .in_session(&store, "forecasts")
        .await
        .unwrap_err();
    let message = untyped.to_string();
    assert!(message.contains("`.typed::<T>()`"), "{message}");
    assert_eq!(PUBLISHED.load(std::sync::atomic::Ordering::SeqCst), 0);

    let done = runtime
        .decide([("p1", agent_runtime::Decision::Approve)])
        .in_session(&store, "forecasts")
        .typed::<Forecast>()
        .await
        .unwrap();
    assert_eq!(done.output, Some(oslo()));
    assert_eq!(PUBLISHED.load(std::sync::atomic::Ordering::SeqCst), 1);
}
