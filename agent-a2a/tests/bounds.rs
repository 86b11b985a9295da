//! What a client with the token can make the server keep is bounded: one context's conversation
//! (messages and bytes; the next message is refused, saying to start a new context), and the
//! messages of all kept tasks together (the oldest forgotten past the bound), so messages of the
//! largest accepted size, sent again and again, cannot grow the server without limit.

mod common;

use agent_a2a::types::Message;
use agent_a2a::{A2aError, MAX_CONTEXT_BYTES, MAX_TASK_BYTES, RemoteAgent, Reply};
use agent_llm::MockReply;
use common::{TOKEN, serve, server};

/// A message of about 900 KB, under the default body limit of 1 MiB.
fn big(n: usize) -> String {
    format!("{n}: {}", "w".repeat(900 * 1024))
}

fn replies(n: usize) -> Vec<MockReply> {
    (0..n).map(|_| MockReply::text("noted")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_contexts_conversation_is_refused_past_its_bound_and_a_new_context_goes_on() {
    let served = serve(server(replies(40))).await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let Reply::Task(first) = agent.ask(&big(0)).await.unwrap() else {
        panic!("a task")
    };
    let context = first.context_id.clone();
    let mut accepted = 1;
    let refused = loop {
        let mut message = Message::user_text(big(accepted));
        message.context_id = context.clone();
        match agent.ask_message(message).await {
            Ok(_) => accepted += 1,
            Err(error) => break error,
        }
        assert!(accepted < 40, "the context grew past every bound");
    };
    let bound = MAX_CONTEXT_BYTES / (900 * 1024);
    assert!(
        accepted <= bound + 1,
        "{accepted} messages of 900 KB accepted"
    );
    assert!(
        matches!(&refused, A2aError::Rpc { message, .. } if message.contains("start a new context")),
        "{refused}"
    );
    // Another context is not affected.
    assert!(agent.ask("a new conversation").await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_messages_of_kept_tasks_are_bounded_together_and_the_oldest_forgotten() {
    let count = MAX_TASK_BYTES / (900 * 1024) + 10;
    let served = serve(server(replies(count + 1)).max_tasks(10_000)).await;
    let agent = RemoteAgent::connect(&served.url, Some(TOKEN))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..count {
        let Reply::Task(task) = agent.ask(&big(n)).await.unwrap() else {
            panic!("a task")
        };
        ids.push(task.id);
    }
    // The first tasks were forgotten to keep the bound; the last is kept.
    assert!(agent.get_task(&ids[0]).await.is_err());
    assert!(agent.get_task(ids.last().unwrap()).await.is_ok());
}
