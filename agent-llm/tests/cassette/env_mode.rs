//! `EUGENE_CASSETTE` end to end, as a user's test runs: this test runs itself as a child
//! process, once with `EUGENE_CASSETTE=record` and the key against a fake upstream, then with
//! neither, offline, replaying what was recorded; and with the mistakes a user makes.

use std::path::Path;
use std::process::{Command, Output};

use agent_llm::cassette::{Cassette, CassetteError, MODE_VAR, Mode};
use agent_llm::{ChatRequest, LlmProvider, Message};

use crate::{KEY, Reply, Server, anthropic, anthropic_answer, dir};

const TEST: &str = "env_mode::the_mode_from_the_environment_records_once_then_replays_offline";
/// Set in the child: the cassette it uses.
const CHILD_FILE: &str = "CASSETTE_TEST_CHILD_FILE";
/// Set in the child: the API's "real" base URL (the fake upstream's).
const CHILD_UPSTREAM: &str = "CASSETTE_TEST_CHILD_UPSTREAM";

/// What a user's test does.
async fn users_test(path: &str, upstream: &str) -> Result<(), Box<dyn std::error::Error>> {
    let cassette = Cassette::from_env(path, upstream).await?;
    let provider = anthropic(cassette.base_url(), &cassette.api_key("ANTHROPIC_API_KEY")?);
    let transcript = [Message::user("Say hello.")];
    let answer = provider.complete(&ChatRequest::new(&transcript)).await?;
    println!("ANSWER: {} ({:?})", answer.message.content, cassette.mode());
    cassette.finish().await?;
    Ok(())
}

/// This test binary running this test alone, as the child, with `env` set and the rest of
/// the variables it reads removed.
/// Run on a blocking thread, so the fake upstream, on this test's runtime, can answer it.
async fn run_child(path: &Path, upstream: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_FILE, path)
        .env(CHILD_UPSTREAM, upstream)
        .env_remove(MODE_VAR)
        .env_remove("ANTHROPIC_API_KEY");
    for (name, value) in env {
        command.env(name, value);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test]
async fn the_mode_from_the_environment_records_once_then_replays_offline() {
    if let (Ok(path), Ok(upstream)) = (std::env::var(CHILD_FILE), std::env::var(CHILD_UPSTREAM)) {
        // The child: the user's test, in whatever mode the parent set.
        if let Err(error) = users_test(&path, &upstream).await {
            panic!("CHILD FAILED: {error}");
        }
        return;
    }
    let upstream = Server::start([Reply::json(200, &anthropic_answer("Recorded hello."))]).await;
    let folder = dir();
    let path = folder.path().join("tests/cassettes/says_hello.yaml");

    // Replaying before anything was recorded says how to record.
    let missing = run_child(&path, &upstream.url, &[]).await;
    assert!(!missing.status.success());
    assert!(
        said(&missing).contains("no such cassette"),
        "{}",
        said(&missing)
    );
    assert!(
        said(&missing).contains("EUGENE_CASSETTE=record"),
        "{}",
        said(&missing)
    );
    // Recording without the key says which variable it needs.
    let keyless = run_child(&path, &upstream.url, &[(MODE_VAR, "record")]).await;
    assert!(!keyless.status.success());
    assert!(
        said(&keyless)
            .contains("EUGENE_CASSETTE=record needs the real API key in ANTHROPIC_API_KEY"),
        "{}",
        said(&keyless)
    );
    // A mode that is not one.
    let typo = run_child(&path, &upstream.url, &[(MODE_VAR, "recrod")]).await;
    assert!(!typo.status.success());
    assert!(
        said(&typo).contains(r#"EUGENE_CASSETTE="recrod" is not a cassette mode"#),
        "{}",
        said(&typo)
    );
    assert!(upstream.received().is_empty(), "no mistake reached the API");
    assert!(!path.exists());

    // Record once, with the key.
    let recorded = run_child(
        &path,
        &upstream.url,
        &[(MODE_VAR, "record"), ("ANTHROPIC_API_KEY", KEY)],
    )
    .await;
    assert!(recorded.status.success(), "{}", said(&recorded));
    assert!(
        said(&recorded).contains("ANSWER: Recorded hello. (Record)"),
        "{}",
        said(&recorded)
    );
    assert_eq!(upstream.received().len(), 1);
    assert_eq!(upstream.received()[0].header("x-api-key"), Some(KEY));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(KEY));

    // Then offline, without the key and without the mode (replay is the default).
    drop(upstream);
    let replayed = run_child(&path, "https://api.anthropic.com", &[]).await;
    assert!(replayed.status.success(), "{}", said(&replayed));
    assert!(
        said(&replayed).contains("ANSWER: Recorded hello. (Replay)"),
        "{}",
        said(&replayed)
    );
    let explicit = run_child(&path, "https://api.anthropic.com", &[(MODE_VAR, "replay")]).await;
    assert!(explicit.status.success(), "{}", said(&explicit));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "replay writes nothing"
    );
}

#[test]
fn modes_are_read_from_their_names() {
    for (value, mode) in [
        (None, Mode::Replay),
        (Some(""), Mode::Replay),
        (Some("replay"), Mode::Replay),
        (Some(" Record "), Mode::Record),
        (Some("record"), Mode::Record),
    ] {
        assert_eq!(Mode::parse(value).unwrap(), mode, "{value:?}");
    }
    let error = Mode::parse(Some("once")).unwrap_err();
    assert!(matches!(error, CassetteError::Mode { .. }));
    assert_eq!(
        error.to_string(),
        r#"EUGENE_CASSETTE="once" is not a cassette mode: use `record` or `replay` (the default)"#
    );
}
