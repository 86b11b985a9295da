//! Long-running skills as MCP tasks, against rmcp's client (a peer written by others) in process
//! over a duplex pipe: handed out at once and polled to the skill's result, cancelled mid-run
//! (the skill sees its token fire), asking the client through `input_required`, unknown ids,
//! and unchanged for clients without tasks. The bounds are in `task_bounds.rs`.

use std::sync::atomic::Ordering;

use agent_mcp::McpServer;
use agent_mcp::rmcp::ServerHandler;
use agent_mcp::rmcp::model::{
    CallToolResponse, CancelTaskParams, ErrorCode, GetTaskParams, InputRequest, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use serde_json::json;

use crate::fixtures;
use crate::task_support::{
    SumLaterSkill, TasksClient, call, code_of, completed_result, connect, file_appears, poll_until,
    server, settings, start, text_of, until_terminal,
};

#[tokio::test]
async fn a_task_is_handed_out_at_once_and_polled_to_the_skills_result() {
    let (server, _served) = server(settings());
    assert!(
        server.get_info().capabilities.supports_tasks(),
        "the server advertises the extension"
    );
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "sum_later", json!({"a": 40, "b": 2})).await;
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Completed, "{task:?}");
    let result = completed_result(&task);
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text_of(&result), "42");
    // The typed output is served as a synchronous call would serve it.
    assert_eq!(result.structured_content, Some(json!({"result": 42})));
    // A skill not named in the settings is answered synchronously, even to this client.
    let skills = client.list_tools(None).await.unwrap();
    assert!(skills.tools.iter().any(|t| t.name == "ask_model"));
}

#[tokio::test]
async fn cancelling_a_task_fires_the_skills_token_and_the_task_settles_cancelled() {
    let (server, served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "run_until_cancelled", json!({"name": "job"})).await;
    file_appears(&served.path("job.started")).await;
    assert_eq!(
        client
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap()
            .task
            .status(),
        TaskStatus::Working
    );
    assert!(!served.path("job.cancelled").exists());
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert_eq!(
        file_appears(&served.path("job.cancelled")).await,
        "cancelled"
    );
}

#[tokio::test]
async fn an_unknown_task_id_is_invalid_params_naming_it() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let error = client
        .get_task(GetTaskParams::new("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    assert!(error.to_string().contains("no-such-task"), "{error}");
    let error = client
        .cancel_task(CancelTaskParams::new("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
    let error = client
        .update_task(UpdateTaskParams::new("no-such-task", Default::default()))
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), Some(ErrorCode::INVALID_PARAMS), "{error}");
}

#[tokio::test]
async fn a_client_without_tasks_gets_the_plain_result_and_cannot_use_tasks_methods() {
    let (server, _served) = server(settings());
    let client = connect(server, ()).await;
    let result = client
        .call_tool(call("sum_later", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text_of(&result), "5");
    let error = client
        .get_task(GetTaskParams::new("anything"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&error),
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "{error}"
    );
}

#[tokio::test]
async fn without_task_settings_nothing_changes_for_a_client_with_tasks() {
    let skills = tempfile::tempdir().unwrap();
    fixtures::write_agent_skills(skills.path());
    let mut registry = fixtures::registry(skills.path());
    registry.add(SumLaterSkill);
    let server = McpServer::new(registry);
    assert!(!server.get_info().capabilities.supports_tasks());
    let client = connect(server, TasksClient::default()).await;
    match client
        .call_tool_once(call("sum_later", json!({"a": 2, "b": 3})))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(result) => assert_eq!(text_of(&result), "5"),
        other => panic!("expected the plain result, got {other:?}"),
    }
    let error = client
        .get_task(GetTaskParams::new("anything"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&error),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "{error}"
    );
}

#[tokio::test]
async fn a_skill_that_elicits_in_a_task_makes_it_input_required_and_tasks_update_answers() {
    let (server, _served) = server(settings());
    let handler = TasksClient::default();
    let client = connect(server, handler.clone()).await;
    let id = start(&client, "ask_name", json!({})).await;
    let waiting = poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = &waiting.payload else {
        panic!("{waiting:?}")
    };
    assert_eq!(input_requests.len(), 1, "{input_requests:?}");
    let (key, request) = input_requests.iter().next().unwrap();
    let InputRequest::Elicitation(request) = request else {
        panic!("expected an elicitation, got {request:?}")
    };
    let asked = serde_json::to_value(&request.params).unwrap();
    assert_eq!(asked["message"], "Who are you?", "{asked}");
    assert_eq!(asked["mode"], "form", "{asked}");
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(
        key.clone(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    let result = completed_result(&task);
    assert_eq!(text_of(&result), "hello, Ada", "{result:?}");
    assert_eq!(
        handler.direct_elicitations.load(Ordering::SeqCst),
        0,
        "the task asked through tasks/get, not elicitation/create"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_an_elicitation_result_fails_the_skill_clearly() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "ask_name", json!({})).await;
    let waiting = poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = &waiting.payload else {
        panic!("{waiting:?}")
    };
    let key = input_requests.keys().next().unwrap().clone();
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(key, json!({"action": "shrug", "content": 7}));
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let result = completed_result(&until_terminal(&client, &id).await);
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text_of(&result).contains("something else"), "{result:?}");
}

#[tokio::test]
async fn cancelling_a_task_waiting_for_input_withdraws_the_request_and_stops_the_skill() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "ask_name", json!({})).await;
    poll_until(&client, &id, |task| {
        task.status() == TaskStatus::InputRequired
    })
    .await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    // An answer that comes too late changes nothing.
    let answers = [(
        "elicitation-1".to_owned(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )]
    .into();
    client
        .update_task(UpdateTaskParams::new(id.clone(), answers))
        .await
        .unwrap();
    let again = client.get_task(GetTaskParams::new(id)).await.unwrap().task;
    assert_eq!(again.status(), TaskStatus::Cancelled, "{again:?}");
}

#[tokio::test]
async fn a_task_that_finished_stays_completed_when_cancelled_late() {
    let (server, _served) = server(settings());
    let client = connect(server, TasksClient::default()).await;
    let id = start(&client, "sum_later", json!({"a": 1, "b": 2})).await;
    until_terminal(&client, &id).await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let task = client.get_task(GetTaskParams::new(id)).await.unwrap().task;
    assert_eq!(text_of(&completed_result(&task)), "3");
}
