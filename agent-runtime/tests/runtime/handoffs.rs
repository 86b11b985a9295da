//! Handoffs: a `transfer_to_<name>` call hands the conversation to another agent, which carries
//! on with its own prompt, skills and model; what it sees can be filtered; a pause in it is
//! continued through the first runtime, exactly once.

use std::sync::{Arc, Mutex};

use agent_core::{Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply, Role};
use agent_runtime::{AgentEvent, AgentRuntime, Decision, FinishReason, RunState};
use serde_json::json;

static REFUNDS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn refunds(order: &str) -> usize {
    REFUNDS
        .lock()
        .unwrap()
        .iter()
        .filter(|o| *o == order)
        .count()
}

/// Refund an order.
///
/// # Arguments
/// * `order` - The order's number.
#[skill(destructive, register = false)]
async fn refund(order: String) -> Result<String, SkillError> {
    REFUNDS.lock().unwrap().push(order.clone());
    Ok(format!("refunded {order}"))
}

/// Triage hands to billing, which refunds (destructive: it waits for a person).
fn triage(billing_model: MockProvider, triage_model: MockProvider) -> AgentRuntime {
    let mut registry = Registry::new();
    registry.add(RefundSkill);
    let billing = AgentRuntime::new(billing_model, registry).system("You are billing.");
    AgentRuntime::new(triage_model, Registry::new())
        .system("You are triage.")
        .handoff("billing", "Refunds and invoices.", billing)
}

#[tokio::test]
async fn a_handoff_carries_the_conversation_on_with_the_other_agents_prompt_and_skills() {
    let triage_model = MockProvider::new([MockReply::tool_calls([
        ToolCall::new("t1", "transfer_to_billing", json!({})),
        ToolCall::new("t2", "transfer_to_billing", json!({})),
    ])]);
    let billing_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("b1", "refund", json!({"order": "A-1"}))]),
        MockReply::text("Refunded A-1."),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |event: &AgentEvent| seen.lock().unwrap().push(format!("{event:?}"))
    };
    let runtime = triage(billing_model.clone(), triage_model.clone()).event_sink(sink);
    // The triage model is offered the transfer; billing's skills are not its own.
    let paused = runtime.run("Refund order A-1, please.").await.unwrap();
    let tools = &triage_model.requests()[0].tools;
    assert!(
        tools.iter().any(|t| t.name == "transfer_to_billing"),
        "{tools:?}"
    );
    assert!(!tools.iter().any(|t| t.name == "refund"));
    // Billing asks for the refund: the run pauses in billing's turn.
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending[0].id(), "b1");
    assert_eq!(paused.handoffs, ["billing"]);
    let request = &billing_model.requests()[0];
    assert_eq!(request.system.as_deref(), Some("You are billing."));
    assert!(request.tools.iter().any(|t| t.name == "refund"));
    // Billing saw the conversation: the goal, the transfer and its answer; the second transfer
    // call was not run.
    let texts: Vec<(Role, String)> = request
        .messages
        .iter()
        .map(|m| (m.role, m.content.clone()))
        .collect();
    assert_eq!(texts[0], (Role::User, "Refund order A-1, please.".into()));
    assert!(
        texts.iter().any(|(_, t)| t == "Transferred to billing."),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|(_, t)| t.contains("not run: the conversation was handed to billing")),
        "{texts:?}"
    );

    // Kept as JSON, continued through the first runtime: billing's call runs once.
    let state: RunState =
        serde_json::from_str(&serde_json::to_string(&paused.state.unwrap()).unwrap()).unwrap();
    assert_eq!(refunds("A-1"), 0);
    let done = runtime
        .continue_paused(state, [("b1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.finish, FinishReason::NoMoreToolCalls);
    assert_eq!(done.final_text.as_deref(), Some("Refunded A-1."));
    assert_eq!(done.handoffs, ["billing"]);
    assert_eq!(refunds("A-1"), 1);
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|e| e.contains("HandedOff") && e.contains("billing"))
    );
}

#[tokio::test]
async fn a_filter_decides_what_the_agent_handed_to_sees() {
    let triage_model = MockProvider::new([MockReply::text_and_tool_calls(
        "Let me pass you on.",
        [ToolCall::new("t1", "transfer_to_billing", json!({}))],
    )]);
    let billing_model = MockProvider::new([MockReply::text("Billing here.")]);
    let billing = AgentRuntime::new(billing_model.clone(), Registry::new());
    let only_users: agent_runtime::TranscriptFilter = Arc::new(|transcript| {
        transcript
            .iter()
            .filter(|m| m.role == Role::User)
            .cloned()
            .collect()
    });
    let runtime = AgentRuntime::new(triage_model, Registry::new()).handoff_filtered(
        "billing",
        "Refunds.",
        billing,
        Some(only_users),
    );
    let done = runtime.run("Where is my invoice?").await.unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Billing here."));
    let messages = &billing_model.requests()[0].messages;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].content, "Where is my invoice?");
}

#[tokio::test]
async fn a_state_handed_to_an_agent_this_runtime_does_not_offer_is_refused() {
    let triage_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "t1",
        "transfer_to_billing",
        json!({}),
    )])]);
    let billing_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "b1",
        "refund",
        json!({"order": "Z-9"}),
    )])]);
    let paused = triage(billing_model, triage_model)
        .run("Refund Z-9.")
        .await
        .unwrap();
    let state = *paused.state.unwrap();
    let other = AgentRuntime::new(MockProvider::new([]), Registry::new());
    let error = other
        .continue_paused(state, [("b1", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(error.to_string().contains("handed to `billing`"), "{error}");
    assert_eq!(refunds("Z-9"), 0);
}

// Attacks a handoff's approval staying valid: after `b1` was approved in billing's turn, billing's
// next call reusing `b1` with another order must ask again, not run on the old approval.
#[tokio::test]
async fn in_a_handed_to_agent_an_approval_runs_one_call_and_a_reused_id_asks_again() {
    let triage_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "t1",
        "transfer_to_billing",
        json!({}),
    )])]);
    let billing_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("b1", "refund", json!({"order": "H-1"}))]),
        // The next turn reuses the id for another refund.
        MockReply::tool_calls([ToolCall::new("b1", "refund", json!({"order": "H-2"}))]),
        MockReply::text("Refunded."),
    ]);
    let runtime = triage(billing_model, triage_model);
    let paused = runtime.run("Refund H-1.").await.unwrap();
    let state: RunState =
        serde_json::from_str(&serde_json::to_string(&paused.state.unwrap()).unwrap()).unwrap();
    assert_eq!(state.pending()[0].id(), "b1");
    let again = runtime
        .continue_paused(state, [("b1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(refunds("H-1"), 1);
    let FinishReason::AwaitingApproval { pending } = &again.finish else {
        panic!("the second refund ran without asking: {:?}", again.finish)
    };
    assert_eq!(pending[0].id(), "b1");
    assert_eq!(pending[0].call.arguments, json!({"order": "H-2"}));
    assert_eq!(again.handoffs, ["billing"]);
    assert_eq!(refunds("H-2"), 0, "H-2 was never approved");
    // Denied, it never runs; the approved one ran once.
    let state: RunState =
        serde_json::from_str(&serde_json::to_string(&again.state.unwrap()).unwrap()).unwrap();
    let done = runtime
        .continue_paused(state, [("b1", Decision::Deny("not H-2".into()))])
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Refunded."));
    assert_eq!(refunds("H-2"), 0);
    assert_eq!(refunds("H-1"), 1);
}

/// A call waiting in an agent the conversation was handed to is listed under that agent, as a
/// call of an agent used as a skill is under it: `billing › refund`; the id a decision names
/// stays the call's own, and a decision made on the call as shown (its digest) runs it.
#[tokio::test]
async fn a_call_waiting_in_an_agent_handed_to_is_listed_under_that_agent() {
    let triage_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "t1",
        "transfer_to_billing",
        json!({}),
    )])]);
    let billing_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("b1", "refund", json!({"order": "L-1"}))]),
        MockReply::text("Refunded L-1."),
    ]);
    let runtime = triage(billing_model, triage_model);
    let paused = runtime.run("Refund L-1.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending[0].path(), "billing › refund");
    assert_eq!(pending[0].id(), "b1");
    let shown = agent_core::CallRef::from(&pending[0]);
    let done = runtime
        .continue_paused(*paused.state.unwrap(), [(shown, Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Refunded L-1."));
    assert_eq!(refunds("L-1"), 1);
}

/// An agent used as a skill that hands its conversation on: the call waiting is listed under
/// both (`support › billing › refund`), its id under the outer call only (`p1/b1`), and the
/// decision made on it as shown reaches the agent handed to and runs the call once.
#[tokio::test]
async fn a_call_waiting_in_a_handoff_inside_an_agent_used_as_a_skill_is_listed_under_both() {
    let triage_model = MockProvider::new([MockReply::tool_calls([ToolCall::new(
        "t1",
        "transfer_to_billing",
        json!({}),
    )])]);
    let billing_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new("b1", "refund", json!({"order": "M-1"}))]),
        MockReply::text("Refunded M-1."),
    ]);
    let support = triage(billing_model, triage_model).into_skill("support", "Customer support.");
    let mut registry = Registry::new();
    registry.add(support);
    let coordinator_model = MockProvider::new([
        MockReply::tool_calls([ToolCall::new(
            "p1",
            "support",
            json!({"goal": "Refund M-1."}),
        )]),
        MockReply::text("Done."),
    ]);
    let coordinator = AgentRuntime::new(coordinator_model, registry);
    let paused = coordinator.run("Refund M-1.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending[0].path(), "support › billing › refund");
    assert_eq!(pending[0].id(), "p1/b1");
    let shown = agent_core::CallRef::from(&pending[0]);
    let state: RunState =
        serde_json::from_str(&serde_json::to_string(&paused.state.unwrap()).unwrap()).unwrap();
    let done = coordinator
        .continue_paused(state, [(shown, Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Done."));
    assert_eq!(refunds("M-1"), 1);
}
