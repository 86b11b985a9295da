//! A remote agent that attacks the client with its event stream: one event that never ends (LF or
//! CR-only lines), or valid artifact-append events of 8 MiB sent without pause. The client's time
//! limit covers the stream "from its first byte to its last event", and its size bounds are
//! checked as the bytes arrive: each call ends with a clear error, never later than its limit
//! allows, however fast the bytes come.

use std::time::Duration;

use agent_a2a::{A2aError, RemoteAgent};
use serde_json::json;
use test_support::server::read_request;
use tokio::io::AsyncWriteExt;

/// How the fake agent's stream goes after its headers.
#[derive(Clone, Copy)]
enum Attack {
    /// `data: xxx…` with no line end, as fast as the socket takes it.
    EndlessLine,
    /// The same, with the data split by lone CRs into lines of one event that never ends.
    EndlessCrLines,
    /// The task, then artifact-append events of 8 MiB each, without pause.
    BigAppends,
}

/// A fake agent on raw TCP: a card pointing at itself, and every POST answered with `attack`.
async fn hostile_agent(attack: Attack) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "hostile", "description": "attacks its caller", "version": "1",
        "supportedInterfaces": [{"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "skills": []
    })
    .to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let card = card.clone();
            tokio::spawn(async move {
                let Some(request) = read_request(&mut stream, &mut Vec::new()).await else {
                    return;
                };
                if request.method == "GET" {
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{card}",
                        card.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                    return;
                }
                let headers = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if stream.write_all(headers.as_bytes()).await.is_err() {
                    return;
                }
                let _ = attack_with(attack, &mut stream).await;
            });
        }
    });
    url
}

/// Writes the attack until the client hangs up (or ten minutes pass).
async fn attack_with(attack: Attack, stream: &mut tokio::net::TcpStream) -> std::io::Result<()> {
    let until = tokio::time::Instant::now() + Duration::from_secs(600);
    match attack {
        Attack::EndlessLine | Attack::EndlessCrLines => {
            stream.write_all(b"data: ").await?;
            let chunk = match attack {
                Attack::EndlessLine => vec![b'x'; 64 * 1024],
                _ => {
                    let mut chunk = vec![b'x'; 64 * 1024];
                    for at in (0..chunk.len()).step_by(1024) {
                        chunk[at] = b'\r';
                        chunk[at + 1] = b'd';
                        chunk[at + 2] = b'a';
                        chunk[at + 3] = b't';
                        chunk[at + 4] = b'a';
                        chunk[at + 5] = b':';
                    }
                    chunk
                }
            };
            while tokio::time::Instant::now() < until {
                stream.write_all(&chunk).await?;
            }
        }
        Attack::BigAppends => {
            let task = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {
                "id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}});
            stream
                .write_all(format!("data: {task}\n\n").as_bytes())
                .await?;
            let text = "y".repeat(8 * 1024 * 1024);
            let append = json!({"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {
                "taskId": "t1", "contextId": "c1", "append": true,
                "artifact": {"artifactId": "a1", "parts": [{"text": text}]}}}});
            let event = format!("data: {append}\n\n");
            while tokio::time::Instant::now() < until {
                stream.write_all(event.as_bytes()).await?;
            }
        }
    }
    Ok(())
}

/// Asks the hostile agent with a 2 s limit; what the call ended with. The test's own bound (60 s)
/// only keeps a regression from hanging the suite: it fails the test when it fires.
async fn ask(attack: Attack) -> A2aError {
    let url = hostile_agent(attack).await;
    let agent = RemoteAgent::connect(&url, None)
        .await
        .unwrap()
        .timeout(Duration::from_secs(2));
    let asked = tokio::time::timeout(Duration::from_secs(60), agent.ask("hello")).await;
    let Ok(answer) = asked else {
        panic!("the call ran on past its 2 s limit: the stream kept it going");
    };
    answer.expect_err("a hostile stream never gives an answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_never_ends_is_refused_as_its_bytes_arrive() {
    let error = ask(Attack::EndlessLine).await;
    // 16 MiB arrive well within 2 s on loopback: the size bound ends it first.
    assert!(
        matches!(error, A2aError::Protocol { .. } | A2aError::Timeout { .. }),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_cr_only_lines_that_never_ends_is_refused() {
    let error = ask(Attack::EndlessCrLines).await;
    assert!(
        matches!(error, A2aError::Protocol { .. } | A2aError::Timeout { .. }),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_without_end_are_bounded_by_the_streams_size_and_time() {
    let error = ask(Attack::BigAppends).await;
    assert!(
        matches!(error, A2aError::Protocol { .. } | A2aError::Timeout { .. }),
        "{error}"
    );
}
