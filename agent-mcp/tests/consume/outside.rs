//! What a server asks when none of eugene's calls waits on it: sent by a server written with rmcp
//! alone (`examples/echo_server.rs`) over a duplex, from the test, between calls.

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

#[path = "../../examples/echo_server.rs"]
mod echo_server;

use std::sync::Arc;

use agent_llm::{MockProvider, MockReply};
use agent_mcp::McpSkills;
use agent_mcp::client::{Sampling, SamplingRequest, SamplingVerdict};
use echo_server::EchoServer;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema, Role,
    SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::{Peer, RoleServer, ServiceExt};

/// The echo server over a duplex, and its side of the connection, to send requests from.
async fn echo(sampling: Sampling) -> (McpSkills, Peer<RoleServer>) {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (peer_tx, peer_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let running = EchoServer::default()
            .serve(server_end)
            .await
            .expect("the server starts");
        let _ = peer_tx.send(running.peer().clone());
        let _ = running.waiting().await;
    });
    let skills = McpSkills::connect_transport("echo", client_end)
        .await
        .expect("connects")
        .with_sampling(sampling);
    (skills, peer_rx.await.unwrap())
}

fn question() -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Who are you?".into(),
        requested_schema: ElicitationSchema::builder()
            .required_email("email")
            .build()
            .unwrap(),
    }
}

fn sample() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(
        vec![SamplingMessage::new(
            Role::User,
            SamplingMessageContentBlock::text("Say hi."),
        )],
        20,
    )
}

#[tokio::test]
async fn a_question_no_call_waits_for_is_cancelled_and_no_pause_is_left_open() {
    let model = Arc::new(MockProvider::new([]));
    let (skills, server) = echo(Sampling::asking(model.clone())).await;
    let answer = server.create_elicitation(question()).await.unwrap();
    assert_eq!(answer.action, ElicitationAction::Cancel);
    assert_eq!(skills.open_elicitations(), 0);

    // A sampling request a person is to approve cannot be asked about outside a call.
    let refused = server.create_message(sample()).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("it came with no tool call to ask in"),
        "{refused}"
    );
    assert!(model.requests().is_empty());
    assert_eq!(skills.open_elicitations(), 0);
}

#[tokio::test]
async fn an_allowed_sampling_request_is_answered_outside_a_call_too() {
    let model = Arc::new(MockProvider::new([MockReply::text("Hi.")]).with_model("mock"));
    let allow = |_: &str, _: &SamplingRequest| SamplingVerdict::Allow;
    let (skills, server) = echo(Sampling::new(model.clone(), allow)).await;
    let answer = server.create_message(sample()).await.unwrap();
    assert_eq!(answer.model, "mock");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(skills.sampling_usage().1, 1);
}
