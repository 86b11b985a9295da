//! Concurrent requests: replayed, each gets the answer recorded for it whatever order they
//! arrive in; recorded, each exchange is kept with its own answer.

use std::collections::BTreeMap;

use agent_llm::cassette::{Cassette, Matcher};
use agent_llm::{ChatRequest, LlmProvider, Message};

use crate::{KEY, Reply, Server, anthropic, anthropic_answer, anthropic_cassette, dir};

/// Asks every question at once through `base_url`; each question's answer.
async fn ask_all(base_url: &str, questions: &[String]) -> BTreeMap<String, String> {
    let provider = anthropic(base_url, KEY);
    let asked = questions.iter().map(|question| {
        let provider = provider.clone();
        let question = question.clone();
        tokio::spawn(async move {
            let transcript = [Message::user(question.clone())];
            let answer = provider.complete(&ChatRequest::new(&transcript)).await;
            (question, answer.map(|a| a.message.content))
        })
    });
    let mut answers = BTreeMap::new();
    for task in futures::future::join_all(asked).await {
        let (question, answer) = task.unwrap();
        answers.insert(question, answer.unwrap());
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_get_their_own_recorded_answers() {
    let exchanges: Vec<(String, String)> = (0..8)
        .map(|i| (format!("Question {i}?"), format!("Answer {i}.")))
        .collect();
    let pairs: Vec<(&str, &str)> = exchanges
        .iter()
        .map(|(q, a)| (q.as_str(), a.as_str()))
        .collect();
    let server = Cassette::parse("concurrent.yaml", &anthropic_cassette(&pairs))
        .unwrap()
        .serve(Matcher::new())
        .await
        .unwrap();
    let questions: Vec<String> = exchanges.iter().rev().map(|(q, _)| q.clone()).collect();
    let answers = ask_all(server.base_url(), &questions).await;
    for (question, answer) in &exchanges {
        assert_eq!(&answers[question], answer);
    }
    server.assert_all_used();
    assert_eq!(server.requests().len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_exchanges_are_recorded_each_with_its_own_answer() {
    // The fake upstream answers in the order requests reach it, which no one controls here.
    let upstream =
        Server::start((0..6).map(|i| Reply::json(200, &anthropic_answer(&format!("Reply {i}.")))))
            .await;
    let folder = dir();
    let path = folder.path().join("concurrent.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let questions: Vec<String> = (0..6).map(|i| format!("Question {i}?")).collect();
    let live = ask_all(proxy.base_url(), &questions).await;
    let recorded = proxy.finish().await.unwrap();
    assert_eq!(recorded.interactions, 6);
    let mut replies: Vec<&String> = live.values().collect();
    replies.sort();
    assert_eq!(replies.len(), 6);
    replies.dedup();
    assert_eq!(
        replies.len(),
        6,
        "every reply went to one question: {live:?}"
    );

    drop(upstream);
    let server = Cassette::replay(&path).await.unwrap();
    let replayed = ask_all(server.base_url(), &questions).await;
    assert_eq!(replayed, live);
    server.assert_all_used();
}
