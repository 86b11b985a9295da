//! A decision sent over A2A answers the one call it was given for, once: a eugene agent served on
//! loopback whose next turn reuses a call's id asks again through the run that called it, and a
//! decision made on another version of the call (its digest) is refused with nothing run.

mod common;

use std::sync::Mutex;

use agent_a2a::types::{Message, Part, Role, TaskState};
use agent_a2a::{A2aServer, RemoteAgent, Reply};
use agent_core::{
    Permission, PermissionGate, Registry, Skill, SkillContext, SkillError, SkillOutput, ToolCall,
    async_trait, schemars, serde,
};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::{AgentRuntime, Decision, FinishReason, RunState};
use serde_json::json;

use common::{TOKEN, serve};

/// Every file the remote's `purge` removed. Tests run in parallel: each uses paths of its own.
static PURGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn purged(path: &str) -> usize {
    PURGED.lock().unwrap().iter().filter(|p| *p == path).count()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct PurgeInput {
    /// The file.
    path: String,
}

/// A destructive skill that counts its effects: the gate asks before it runs.
struct Purge;

#[async_trait]
impl Skill for Purge {
    type Input = PurgeInput;
    fn name(&self) -> &str {
        "purge"
    }
    fn description(&self) -> &str {
        "Remove a file for good."
    }
    fn is_destructive(&self) -> bool {
        true
    }
    async fn run(&self, input: PurgeInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        PURGED.lock().unwrap().push(input.path.clone());
        Ok(format!("purged {}", input.path).into())
    }
}

/// A eugene agent on these scripted replies with `purge`, which a gate asks about, served over
/// A2A as `tester`.
fn server(replies: Vec<MockReply>) -> A2aServer {
    let mut registry = Registry::new();
    registry.add(Purge);
    registry.with_hook(PermissionGate::with(|_, m| {
        if m.is_destructive {
            Permission::Ask("removes a file".into())
        } else {
            Permission::Allow
        }
    }));
    let runtime = AgentRuntime::new(MockProvider::new(replies), registry).streaming(true);
    A2aServer::new(runtime)
        .name("tester")
        .description("A scripted agent for tests.")
        .bearer_token(TOKEN)
}

fn purge(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "purge", json!({ "path": path }))
}

fn through_json(state: &RunState) -> RunState {
    serde_json::from_str(&serde_json::to_string(state).unwrap()).unwrap()
}

// Attacks an approval sent to a remote task staying valid there: the remote's next turn reuses
// `c1` for another purge, which must pause the calling run again instead of running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_approval_runs_one_call_and_a_reused_id_pauses_the_caller_again() {
    let served = serve(server(vec![
        MockReply::tool_calls([purge("c1", "a2a-old.log")]),
        // The next turn reuses the id for another file.
        MockReply::tool_calls([purge("c1", "a2a-everything")]),
        MockReply::text("Purged what you allowed."),
    ]))
    .await;
    let skill = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap()
        .into_skill();
    let mut registry = Registry::new();
    registry.add(skill);
    let parent = AgentRuntime::new(
        MockProvider::new([
            MockReply::tool_calls([ToolCall::new(
                "p1",
                "tester",
                json!({"message": "clean up"}),
            )]),
            MockReply::text("The remote agent is done."),
        ]),
        registry,
    );
    let paused = parent.run("Clean up.").await.unwrap();
    let FinishReason::AwaitingApproval { pending } = &paused.finish else {
        panic!("{:?}", paused.finish)
    };
    assert_eq!(pending[0].id(), "p1/c1");
    assert_eq!(pending[0].call.arguments, json!({"path": "a2a-old.log"}));
    let again = parent
        .continue_paused(
            through_json(paused.state.as_deref().unwrap()),
            [("p1/c1", Decision::Approve)],
        )
        .await
        .unwrap();
    assert_eq!(purged("a2a-old.log"), 1, "the approved call ran once");
    let FinishReason::AwaitingApproval { pending } = &again.finish else {
        panic!(
            "the remote's second call ran without asking: {:?}",
            again.finish
        )
    };
    assert_eq!(pending[0].id(), "p1/c1");
    assert_eq!(pending[0].path(), "tester › purge");
    assert_eq!(pending[0].call.arguments, json!({"path": "a2a-everything"}));
    assert_eq!(purged("a2a-everything"), 0, "never approved");
    // Denied, it never runs, and the remote finishes.
    let done = parent
        .continue_paused(
            through_json(again.state.as_deref().unwrap()),
            [("p1/c1", Decision::Deny("not everything".into()))],
        )
        .await
        .unwrap();
    assert_eq!(
        done.final_text.as_deref(),
        Some("The remote agent is done."),
        "{:?}",
        done.finish
    );
    assert_eq!(purged("a2a-everything"), 0);
    assert_eq!(purged("a2a-old.log"), 1);
}

// Attacks a decision whose digest is ignored: one sent over A2A on another version of the call
// (a wrong digest) must be refused, and the waiting call not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_sent_with_a_wrong_digest_is_refused_and_nothing_runs() {
    let served = serve(server(vec![
        MockReply::tool_calls([purge("c1", "a2a-digest.log")]),
        MockReply::text("Purged."),
    ]))
    .await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let Reply::Task(paused) = agent.ask("clean up").await.unwrap() else {
        panic!("a task");
    };
    assert_eq!(paused.status.state, TaskState::InputRequired);
    let listed = paused
        .status
        .message
        .as_ref()
        .and_then(|m| m.parts.iter().find_map(|p| p.data.clone()))
        .expect("the status lists the pending calls");
    let digest = listed["pendingCalls"][0]["digest"].as_str().unwrap();
    let wrong = "0".repeat(64);
    assert_ne!(digest, wrong);
    let mut decision = Message::new(
        Role::User,
        vec![Part::data(json!({
            "decisions": {"c1": "approve"},
            "digests": {"c1": wrong},
        }))],
    );
    decision.task_id = paused.id.clone();
    decision.context_id = paused.context_id.clone();
    let answer = agent.ask_message(decision).await;
    // Refused before anything runs (InvalidParams, saying why), and the task keeps waiting: a
    // stale page is asked again, it does not end the task.
    let said = match &answer {
        Ok(reply) => panic!("accepted: {}", reply.text()),
        Err(error) => error.to_string(),
    };
    assert!(said.contains("digest differs"), "{said}");
    let task = agent.get_task(&paused.id).await.unwrap();
    assert_eq!(task.status.state, TaskState::InputRequired, "{answer:?}");
    assert_eq!(purged("a2a-digest.log"), 0);
    // The decision made on the call as listed goes through.
    let mut decision = Message::new(
        Role::User,
        vec![Part::data(json!({
            "decisions": {"c1": "approve"},
            "digests": {"c1": digest},
        }))],
    );
    decision.task_id = paused.id.clone();
    decision.context_id = paused.context_id.clone();
    let done = agent.ask_message(decision).await.unwrap();
    assert_eq!(done.text(), "Purged.");
    assert_eq!(purged("a2a-digest.log"), 1);
}
