//! A remote tool that asks the user (`elicitation/create`): the run pauses on the question, and a
//! decision answers it; the server's result shows what it got.

use agent_core::{Decision, ToolCall};
use agent_mcp::McpSkills;
use agent_mcp::client::MAX_ANSWER_BYTES;
use agent_mcp::client::{ELICITATION_CALL, MAX_OPEN_ELICITATIONS};
use agent_mcp::client::{Elicitation, ElicitationAnswer};
use agent_runtime::{FinishReason, RunState};
use serde_json::json;

use super::{http_server, modern_server, only_result, pending, runtime_calling, server};

/// A tool result as the Python SDK sends a `str` return: structured, `{"result": text}`.
fn said(text: &str) -> String {
    json!({ "result": text }).to_string()
}

fn book_table(id: &str, date: &str) -> ToolCall {
    ToolCall::new(id, "book_table", json!({ "date": date }))
}

#[tokio::test]
async fn a_remote_question_pauses_the_run_and_an_accepted_answer_completes_it() {
    let skills = server().await;
    let runtime = runtime_calling(&skills, vec![book_table("c1", "Friday")]);
    let paused = runtime.run("Book a table for Friday.").await.unwrap();

    let waiting = pending(&paused).to_vec();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    let call = &waiting[0];
    assert_eq!(call.id(), "c1/elicitation");
    assert_eq!(call.call.name, ELICITATION_CALL);
    assert_eq!(call.path(), "book_table › book_table");
    assert!(
        call.reason.contains("Who is the table on Friday for?"),
        "{}",
        call.reason
    );
    let Some(Elicitation::Form { message, schema }) = Elicitation::of(call) else {
        panic!("not a form question: {call:?}");
    };
    assert_eq!(message, "Who is the table on Friday for?");
    assert_eq!(schema["properties"]["guests"]["type"], "integer");
    assert_eq!(schema["properties"]["guests"]["maximum"], 12);
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(skills.open_elicitations(), 1);

    let state = *paused.state.expect("a paused run keeps its state");
    let done = runtime
        .continue_paused(
            state,
            [(
                call.id(),
                Decision::Edit(json!({"name": "Ada", "guests": 3})),
            )],
        )
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(
        only_result(&done),
        (said("booked a table on Friday for Ada, 3 guests"), false)
    );
    assert_eq!(done.final_text.as_deref(), Some("Done."));
    assert_eq!(skills.open_elicitations(), 0);
}

/// Runs `book_table` to its question and answers it with `decision`; the tool's result.
async fn answered(skills: &McpSkills, decision: Decision) -> (String, bool) {
    let runtime = runtime_calling(skills, vec![book_table("c1", "Sunday")]);
    let paused = runtime.run("Book a table for Sunday.").await.unwrap();
    let id = pending(&paused)[0].id();
    let done = runtime
        .continue_paused(*paused.state.unwrap(), [(id, decision)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    only_result(&done)
}

#[tokio::test]
async fn decline_and_cancel_reach_the_server_as_such() {
    let skills = server().await;
    assert_eq!(
        answered(&skills, Decision::Deny("not now".into())).await,
        (said("the user declined: no table on Sunday"), false)
    );
    assert_eq!(
        answered(&skills, ElicitationAnswer::Decline.into()).await,
        (said("the user declined: no table on Sunday"), false)
    );
    assert_eq!(
        answered(&skills, ElicitationAnswer::Cancel.into()).await,
        (said("the user cancelled: no table on Sunday"), false)
    );
    assert_eq!(skills.open_elicitations(), 0);
}

#[tokio::test]
async fn an_answer_that_breaks_the_schema_is_refused_before_anything_is_sent() {
    let skills = server().await;
    let runtime = runtime_calling(&skills, vec![book_table("c1", "Monday")]);
    let mut paused = runtime.run("Book a table for Monday.").await.unwrap();
    let wrong = [
        (json!({"name": "Ada", "guests": 40}), "guests"),
        (json!({"name": "Ada"}), "guests"),
        (json!({"name": 7, "guests": 2}), "name"),
        (json!("Ada, two people"), "must be an object"),
        (json!({"$action": "maybe"}), "`$action` is `maybe`"),
        (
            json!({"name": "A".repeat(MAX_ANSWER_BYTES), "guests": 2}),
            "bytes, over the limit of 65536",
        ),
    ];
    for (answer, named) in wrong {
        let id = pending(&paused)[0].id();
        paused = runtime
            .continue_paused(
                *paused.state.unwrap(),
                [(id, Decision::Edit(answer.clone()))],
            )
            .await
            .unwrap();
        // The run pauses again on the same question, saying why the answer was not sent.
        let again = &pending(&paused)[0];
        assert!(
            again.reason.starts_with("your answer was not sent ("),
            "{answer}: {}",
            again.reason
        );
        assert!(again.reason.contains(named), "{answer}: {}", again.reason);
        assert!(again.reason.contains("Who is the table on Monday for?"));
        assert_eq!(skills.open_elicitations(), 1);
    }
    // The server got none of them: the question it asked is still open, and the one answer it
    // gets is the right one (a wrong one would have failed its own validation).
    let id = pending(&paused)[0].id();
    let done = runtime
        .continue_paused(
            *paused.state.unwrap(),
            [(id, Decision::Edit(json!({"name": "Bo", "guests": 12})))],
        )
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        (said("booked a table on Monday for Bo, 12 guests"), false)
    );
}

/// A paused run, as it would be kept across a restart: its state through JSON text.
fn through_json(state: RunState) -> RunState {
    let text = serde_json::to_string(&state).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_question_asked_during_an_open_request_expires_with_its_connection() {
    let first = server().await;
    let runtime = runtime_calling(&first, vec![book_table("c1", "Tuesday")]);
    let paused = runtime.run("Book a table for Tuesday.").await.unwrap();
    let id = pending(&paused)[0].id();
    let kept = through_json(*paused.state.unwrap());
    // The process that asked is gone: a new connection, a new registry, a new runtime.
    drop(runtime);
    first.close().await;
    drop(first);

    let second = server().await;
    let runtime = runtime_calling(&second, vec![]);
    let done = runtime
        .continue_paused(
            kept,
            [(id, Decision::Edit(json!({"name": "Ada", "guests": 2})))],
        )
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let (text, is_error) = only_result(&done);
    assert!(is_error, "{text}");
    assert!(
        text.contains("(\"Who is the table on Tuesday for?\") expired")
            && text.contains("Nothing was sent; call the tool again"),
        "{text}"
    );
}

#[tokio::test]
async fn a_question_of_a_closed_connection_expires_in_the_same_process_too() {
    let skills = server().await;
    let runtime = runtime_calling(&skills, vec![book_table("c1", "Tuesday")]);
    let paused = runtime.run("Book a table for Tuesday.").await.unwrap();
    let id = pending(&paused)[0].id();
    skills.reconnect().await.unwrap();
    assert_eq!(skills.open_elicitations(), 0);
    let done = runtime
        .continue_paused(
            *paused.state.unwrap(),
            [(id, Decision::Edit(json!({"name": "Ada", "guests": 2})))],
        )
        .await
        .unwrap();
    let (text, is_error) = only_result(&done);
    assert!(is_error && text.contains("expired"), "{text}");
}

#[tokio::test]
async fn a_multi_round_trip_question_is_answered_after_a_restart() {
    let first = modern_server().await;
    let runtime = runtime_calling(
        &first,
        vec![ToolCall::new("c1", "book_room", json!({"city": "Oslo"}))],
    );
    let paused = runtime.run("Book a room in Oslo.").await.unwrap();
    let waiting = pending(&paused).to_vec();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    let Some(Elicitation::Form { message, schema }) = Elicitation::of(&waiting[0]) else {
        panic!("not a form question: {waiting:?}");
    };
    assert_eq!(message, "How many beds in Oslo?");
    assert_eq!(schema["properties"]["beds"]["maximum"], 4);
    // Nothing stays open: the question is in the paused run's state.
    assert_eq!(first.open_elicitations(), 0);
    let id = waiting[0].id();
    let kept = through_json(*paused.state.unwrap());
    drop(runtime);
    first.close().await;
    drop(first);

    let second = modern_server().await;
    let runtime = runtime_calling(&second, vec![]);
    // A wrong answer is refused here too, and the run pauses again on the same question.
    let again = runtime
        .continue_paused(kept, [(id.clone(), Decision::Edit(json!({"beds": 9})))])
        .await
        .unwrap();
    assert!(
        pending(&again)[0]
            .reason
            .contains("does not match the requested schema"),
        "{:?}",
        pending(&again)
    );
    let kept = through_json(*again.state.unwrap());
    let done = runtime
        .continue_paused(kept, [(id, Decision::Edit(json!({"beds": 2})))])
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        (said("booked a room in Oslo with 2 beds"), false)
    );
}

#[tokio::test]
async fn a_multi_round_trip_decline_reaches_the_server() {
    let skills = modern_server().await;
    let runtime = runtime_calling(
        &skills,
        vec![ToolCall::new("c1", "book_room", json!({"city": "Rome"}))],
    );
    let paused = runtime.run("Book a room in Rome.").await.unwrap();
    let id = pending(&paused)[0].id();
    let done = runtime
        .continue_paused(*paused.state.unwrap(), [(id, Decision::Deny("no".into()))])
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        (said("the user declined: no room in Rome"), false)
    );
}

/// Two runs on one connection call `book_table` at once; each pauses on its own question and
/// each answer reaches its own call.
async fn two_runs_at_once_get_their_own_answers(skills: &McpSkills) {
    let monday = runtime_calling(skills, vec![book_table("m1", "Monday")]);
    let tuesday = runtime_calling(skills, vec![book_table("t1", "Tuesday")]);
    let (a, b) = tokio::join!(
        monday.run("Book a table for Monday."),
        tuesday.run("Book a table for Tuesday.")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let asked = |outcome: &agent_runtime::RunOutcome| {
        let waiting = pending(outcome);
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        (
            waiting[0].id(),
            Elicitation::of(&waiting[0]).unwrap().message().to_owned(),
        )
    };
    let (a_id, a_question) = asked(&a);
    let (b_id, b_question) = asked(&b);
    assert_eq!(a_question, "Who is the table on Monday for?");
    assert_eq!(b_question, "Who is the table on Tuesday for?");
    assert_eq!(skills.open_elicitations(), 2);
    let (a, b) = tokio::join!(
        monday.continue_paused(
            *a.state.unwrap(),
            [(a_id, Decision::Edit(json!({"name": "Ada", "guests": 1})))]
        ),
        tuesday.continue_paused(
            *b.state.unwrap(),
            [(b_id, Decision::Edit(json!({"name": "Bo", "guests": 2})))]
        )
    );
    assert_eq!(
        only_result(&a.unwrap()),
        (said("booked a table on Monday for Ada, 1 guests"), false)
    );
    assert_eq!(
        only_result(&b.unwrap()),
        (said("booked a table on Tuesday for Bo, 2 guests"), false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_questions_over_stdio_each_reach_their_own_call() {
    let skills = server().await;
    two_runs_at_once_get_their_own_answers(&skills).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_questions_over_http_each_reach_their_own_call() {
    let server = http_server().await;
    two_runs_at_once_get_their_own_answers(&server.skills).await;
}

#[tokio::test]
async fn one_question_over_the_limit_of_open_ones_closes_the_oldest() {
    let skills = server().await;
    let mut paused = Vec::new();
    for day in 0..=MAX_OPEN_ELICITATIONS {
        let runtime = runtime_calling(&skills, vec![book_table("c1", &format!("day {day}"))]);
        let outcome = runtime.run("Book a table.").await.unwrap();
        assert_eq!(pending(&outcome).len(), 1);
        paused.push((runtime, outcome));
        assert_eq!(
            skills.open_elicitations(),
            (day + 1).min(MAX_OPEN_ELICITATIONS)
        );
    }
    let answer = || Decision::Edit(json!({"name": "Ada", "guests": 2}));
    let (newest, outcome) = paused.pop().unwrap();
    let done = newest
        .continue_paused(*outcome.state.unwrap(), [("c1/elicitation", answer())])
        .await
        .unwrap();
    let last = MAX_OPEN_ELICITATIONS;
    assert_eq!(
        only_result(&done),
        (
            said(&format!("booked a table on day {last} for Ada, 2 guests")),
            false
        )
    );
    let (oldest, outcome) = paused.swap_remove(0);
    let done = oldest
        .continue_paused(*outcome.state.unwrap(), [("c1/elicitation", answer())])
        .await
        .unwrap();
    let (text, is_error) = only_result(&done);
    assert!(
        is_error && text.contains("(\"Who is the table on day 0 for?\") expired"),
        "{text}"
    );
}

#[tokio::test]
async fn a_url_question_shows_the_page_and_is_accepted_without_content() {
    let skills = server().await;
    let runtime = runtime_calling(
        &skills,
        vec![ToolCall::new(
            "s1",
            "sign_in",
            json!({"service": "calendar"}),
        )],
    );
    let mut paused = runtime.run("Sign me in to the calendar.").await.unwrap();
    let call = pending(&paused)[0].clone();
    assert_eq!(
        Elicitation::of(&call),
        Some(Elicitation::Url {
            message: "Sign in to calendar to go on.".into(),
            url: "https://calendar.example/sign-in".into(),
        })
    );
    assert!(
        call.reason
            .contains("asks you to open https://calendar.example/sign-in"),
        "{}",
        call.reason
    );
    // Content is no answer to a page: refused, nothing sent.
    paused = runtime
        .continue_paused(
            *paused.state.unwrap(),
            [(call.id(), Decision::Edit(json!({"password": "hunter2"})))],
        )
        .await
        .unwrap();
    assert!(
        pending(&paused)[0]
            .reason
            .contains("a URL elicitation is accepted without content"),
        "{:?}",
        pending(&paused)
    );
    let done = runtime
        .continue_paused(*paused.state.unwrap(), [(call.id(), Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(
        only_result(&done),
        (said("the user agreed to sign in to calendar"), false)
    );
}

// Attacks an answer outliving its question: after `c1/elicitation` was answered and the tool
// completed, the model's next call of the same tool under the same id `c1` must ask again.
#[tokio::test]
async fn an_answered_question_is_not_reused_by_a_later_call_under_the_same_id() {
    let skills = server().await;
    let model = agent_llm::MockProvider::new([
        agent_llm::MockReply::tool_calls([book_table("c1", "Wednesday")]),
        // The next turn reuses the id for another booking.
        agent_llm::MockReply::tool_calls([book_table("c1", "Thursday")]),
        agent_llm::MockReply::text("Done."),
    ]);
    let runtime = agent_runtime::AgentRuntime::new(model, super::registry_of(&skills));
    let paused = runtime.run("Book two tables.").await.unwrap();
    let id = pending(&paused)[0].id();
    assert_eq!(id, "c1/elicitation");
    let again = runtime
        .continue_paused(
            through_json(*paused.state.unwrap()),
            [(id, Decision::Edit(json!({"name": "Ada", "guests": 2})))],
        )
        .await
        .unwrap();
    // The first booking was made, once, with the answer given.
    let booked: Vec<_> = super::tool_results(&again)
        .into_iter()
        .filter(|(_, text, _)| text.contains("booked a table"))
        .collect();
    assert_eq!(
        booked,
        [(
            "c1".to_owned(),
            said("booked a table on Wednesday for Ada, 2 guests"),
            false
        )]
    );
    // The second call asks its own question; the earlier answer was not sent for it.
    let waiting = pending(&again);
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0].id(), "c1/elicitation");
    assert_eq!(
        Elicitation::of(&waiting[0]).unwrap().message(),
        "Who is the table on Thursday for?"
    );
    assert_eq!(skills.open_elicitations(), 1);
    let done = runtime
        .continue_paused(
            through_json(*again.state.unwrap()),
            [("c1/elicitation", Decision::Deny("not Thursday".into()))],
        )
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    let results = super::tool_results(&done);
    assert_eq!(
        results
            .iter()
            .filter(|(_, t, _)| t.contains("booked"))
            .count(),
        1,
        "only Wednesday was booked: {results:?}"
    );
    assert!(
        results
            .iter()
            .any(|(_, t, _)| *t == said("the user declined: no table on Thursday")),
        "{results:?}"
    );
}

// The same attack on a multi-round-trip question (MCP 2026-07-28, `input_required`), whose
// answer travels in the paused state: a later `c1` asks again rather than resending it.
#[tokio::test]
async fn a_multi_round_trip_answer_is_not_reused_by_a_later_call_under_the_same_id() {
    let skills = modern_server().await;
    let room = |city: &str| ToolCall::new("c1", "book_room", json!({ "city": city }));
    let model = agent_llm::MockProvider::new([
        agent_llm::MockReply::tool_calls([room("Lima")]),
        agent_llm::MockReply::tool_calls([room("Quito")]),
        agent_llm::MockReply::text("Done."),
    ]);
    let runtime = agent_runtime::AgentRuntime::new(model, super::registry_of(&skills));
    let paused = runtime.run("Book two rooms.").await.unwrap();
    let id = pending(&paused)[0].id();
    let again = runtime
        .continue_paused(
            through_json(*paused.state.unwrap()),
            [(id, Decision::Edit(json!({"beds": 3})))],
        )
        .await
        .unwrap();
    let booked: Vec<_> = super::tool_results(&again)
        .into_iter()
        .filter(|(_, text, _)| text.contains("booked a room"))
        .map(|(_, text, _)| text)
        .collect();
    assert_eq!(booked, [said("booked a room in Lima with 3 beds")]);
    let waiting = pending(&again);
    assert_eq!(
        waiting.len(),
        1,
        "the second call ran without asking: {waiting:?}"
    );
    assert_eq!(
        Elicitation::of(&waiting[0]).unwrap().message(),
        "How many beds in Quito?"
    );
    let id = waiting[0].id();
    let done = runtime
        .continue_paused(
            through_json(*again.state.unwrap()),
            [(id, Decision::Deny("not Quito".into()))],
        )
        .await
        .unwrap();
    let results = super::tool_results(&done);
    assert_eq!(
        results
            .iter()
            .filter(|(_, t, _)| t.contains("booked"))
            .count(),
        1,
        "only Lima was booked: {results:?}"
    );
}
