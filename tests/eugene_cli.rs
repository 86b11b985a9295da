//! The `eugene` command line as a user meets it: the real example binary as a child process,
//! talking real HTTP to a loopback server that replays canned OpenAI-compatible answers and
//! records each request. Ctrl-C is a real SIGINT; a terminal is a real pseudo-terminal.
//!
//! Waits are bounded by a hang guard that fails the test; nothing here measures time.
//! `EUGENE_CLI_BIN=/path/to/eugene` runs these tests against another build of it.

mod support;

use std::process::Stdio;

use serde_json::{Value, json};
use support::{
    Reply, Running, Server, Terminal, chunk, eugene, run, sse, text_answer, tool_answer,
};

/// A workspace with a Cargo.toml in it.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nedition = \"2024\"\n",
    )
    .unwrap();
    dir
}

/// The last line of stderr that starts with `[`: the finish line.
fn finish_line(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find(|line| line.starts_with('['))
        .unwrap_or_else(|| panic!("no finish line in:\n{stderr}"))
}

fn whole(message: Value) -> Reply {
    Reply::Json(
        200,
        json!({"id": "w", "object": "chat.completion", "model": "scripted",
               "choices": [{"index": 0, "message": message, "finish_reason":
                   if message.get("tool_calls").is_some() { "tool_calls" } else { "stop" }}],
               "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
    )
}

// ---------------------------------------------------------------- Ctrl-C

#[test]
fn ctrl_c_cancels_every_run_and_at_the_prompt_says_how_to_quit() {
    let server = Server::start([Reply::Silent, text_answer("Second answer."), Reply::Silent]);
    let workspace = project();
    let mut eugene = Running::start(
        eugene()
            .env("OPENAI_BASE_URL", server.base_url())
            .arg("--workspace")
            .arg(workspace.path())
            .stdin(Stdio::piped()),
    );

    // A run waiting for the model is cancelled by the first Ctrl-C.
    eugene.say("first question");
    server.wait_for_requests(1);
    eugene.ctrl_c();
    eugene.wait_for_stderr("(cancelling; press Ctrl-C again to quit)", 1);
    eugene.wait_for_stderr("[cancelled", 1);

    // At the prompt, Ctrl-C says how to quit, and does not linger to cancel the next run.
    eugene.ctrl_c();
    eugene.wait_for_stderr("(press Ctrl-C again to quit, or Ctrl-D)", 1);
    eugene.say("second question");
    eugene.wait_for_stdout("Second answer.", 1);
    eugene.wait_for_stderr("[done", 1);

    // A later run is cancelled just the same.
    eugene.say("third question");
    server.wait_for_requests(3);
    eugene.ctrl_c();
    eugene.wait_for_stderr("(cancelling; press Ctrl-C again to quit)", 2);
    eugene.wait_for_stderr("[cancelled", 2);

    // Twice at the prompt quits.
    eugene.ctrl_c();
    eugene.wait_for_stderr("(press Ctrl-C again to quit, or Ctrl-D)", 2);
    eugene.ctrl_c();
    let done = eugene.finish();
    assert_eq!(done.code(), Some(130), "{done:?}");
    assert_eq!(server.received().len(), 3);
    // The cancelled first question left nothing unanswered behind: the second run's transcript
    // holds both questions.
    let second = server.received()[1].json().to_string();
    assert!(
        second.contains("first question") && second.contains("second question"),
        "{second}"
    );
}

#[test]
fn ctrl_c_ends_a_one_shot_run_with_status_130() {
    let server = Server::start([Reply::Silent]);
    let eugene = Running::start(
        eugene()
            .env("OPENAI_BASE_URL", server.base_url())
            .arg("a question the model never answers"),
    );
    server.wait_for_requests(1);
    eugene.ctrl_c();
    let done = eugene.finish();
    assert_eq!(done.code(), Some(130), "{done:?}");
    assert!(done.stderr.contains("[cancelled"), "{}", done.stderr);
}

// ---------------------------------------------------------------- time limits

#[test]
fn a_silent_server_ends_the_run_after_timeout_with_the_provider_error_status() {
    let server = Server::start([Reply::Silent, Reply::Silent, Reply::Silent]);
    let done =
        run(eugene()
            .env("OPENAI_BASE_URL", server.base_url())
            .args(["--timeout", "1", "hello?"]));
    assert_eq!(done.code(), Some(3), "{done:?}");
    assert!(
        done.stderr.contains("did not begin an answer within 1 s")
            && done.stderr.contains("--timeout SECS"),
        "the message says what to do: {}",
        done.stderr
    );
    assert!(
        done.stderr.contains(&server.base_url()),
        "names the server: {}",
        done.stderr
    );
    // One retry by default, then the answer is given up.
    assert_eq!(server.received().len(), 2);
}

#[test]
fn max_time_stops_a_question_that_takes_too_long_as_a_budget() {
    let server = Server::start([Reply::Silent]);
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).args([
        "--max-time",
        "1",
        "--timeout",
        "600",
        "hello?",
    ]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the time limit (1 s) ran out (--max-time raises it) · 1 step · tokens not \
         reported]"
    );
}

#[test]
fn max_tokens_is_the_token_budget_of_a_question() {
    let server = Server::start([
        sse(&[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "r1", "type": "function",
                    "function": {"name": "list_dir", "arguments": "{}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            json!({"id": "c", "choices": [],
                   "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}}),
        ]),
        text_answer("never asked for"),
    ]);
    let workspace = project();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--max-tokens", "500", "What is here?"]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert!(
        finish_line(&done.stderr)
            .contains("stopped: the token budget (500) ran out after 920 tokens"),
        "{}",
        done.stderr
    );
    assert_eq!(server.received().len(), 1);
    // And --max-answer-tokens is what each answer may have.
    let server = Server::start([text_answer("Short.")]);
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).args([
        "--max-answer-tokens",
        "77",
        "hi",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(server.received()[0].json()["max_tokens"], 77);
}

// ---------------------------------------------------------------- --no-stream and --think

#[test]
fn no_stream_asks_for_whole_answers_and_prints_each_once() {
    let workspace = project();
    let server = Server::start([
        whole(json!({"role": "assistant", "content": "Let me look.",
            "tool_calls": [{"id": "w1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\": \"Cargo.toml\"}"}}]})),
        whole(json!({"role": "assistant", "content": "Edition 2024."})),
    ]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--no-stream", "Which edition?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Let me look.\nEdition 2024.\n");
    let requests = server.received();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.json()["stream"], false, "{}", request.json());
    }
    assert!(
        finish_line(&done.stderr)
            .contains("[done · 2 steps · 40 in / 10 out tokens · unpriced (2 calls)]"),
        "{}",
        done.stderr
    );
}

#[test]
fn a_server_that_cannot_stream_tool_calls_is_answered_whole_and_says_so() {
    let server = Server::start([
        Reply::Json(
            500,
            json!({"error": {"message": "Streaming is not supported with tools", "type": "server_error"}}),
        ),
        whole(json!({"role": "assistant", "content": "Whole after all."})),
    ]);
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).arg("hi"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Whole after all.\n", "printed once");
    assert!(
        done.stderr.contains("note: ") && done.stderr.contains("whole answers"),
        "{}",
        done.stderr
    );
    let requests = server.received();
    assert_eq!(requests[0].json()["stream"], true);
    assert_eq!(requests[1].json()["stream"], false);
}

#[test]
fn verbose_shows_the_wire_and_each_retry_on_stderr_and_never_the_key() {
    let key = "sk-cli-secret-93a7";
    let server = Server::start([
        Reply::Json(
            503,
            json!({"error": {"message": "overloaded, try again", "type": "server_error"}}),
        ),
        whole(json!({"role": "assistant", "content": "Hello."})),
    ]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", key)
        .args(["-vv", "--no-stream", "hi"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Hello.\n", "the wire goes to stderr only");
    let stderr = &done.stderr;
    let wire: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("agent_llm::wire"))
        .collect();
    assert!(
        wire.iter()
            .filter(|l| l.contains("DEBUG") && l.contains("request"))
            .count()
            >= 2,
        "{stderr}"
    );
    assert!(wire.iter().any(|l| l.contains("status=503")), "{stderr}");
    assert!(
        wire.iter()
            .any(|l| l.contains("TRACE") && l.contains("\"hi\"")),
        "the body at -vv: {stderr}"
    );
    assert!(
        stderr.lines().any(|l| l.contains("WARN")
            && l.contains("retrying")
            && l.contains("overloaded, try again")),
        "{stderr}"
    );
    assert!(stderr.contains("authorization: [redacted]"), "{stderr}");
    assert!(!stderr.contains(key), "the key is never shown: {stderr}");
    assert_eq!(server.received().len(), 2);

    // Without -v, none of it.
    let server = Server::start([whole(json!({"role": "assistant", "content": "Hello."}))]);
    let quiet = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["--no-stream", "hi"]));
    assert_eq!(quiet.code(), Some(0), "{quiet:?}");
    assert!(
        !quiet.stderr.contains("agent_llm::wire"),
        "{}",
        quiet.stderr
    );
}

fn thinking_answer() -> Reply {
    sse(&[
        chunk(
            json!({"role": "assistant", "reasoning_content": "The user wants the edition."}),
            None,
        ),
        chunk(json!({"content": "Edition 2024."}), None),
        chunk(json!({}), Some("stop")),
    ])
}

#[test]
fn think_shows_the_thinking_on_stderr_and_never_as_the_answer() {
    let server = Server::start([thinking_answer()]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["--think", "Which edition?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Edition 2024.\n");
    assert!(
        done.stderr
            .contains("thinking: The user wants the edition."),
        "{}",
        done.stderr
    );
    // --think alone is a budget of 4,096 tokens: OpenAI-compatible servers get `medium`.
    assert_eq!(server.received()[0].json()["reasoning_effort"], "medium");

    let server = Server::start([thinking_answer()]);
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).args([
        "--think=high",
        "--json",
        "Which edition?",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(server.received()[0].json()["reasoning_effort"], "high");
    let events = done.json_lines();
    let thinking: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "thinking_delta")
        .collect();
    assert_eq!(thinking.len(), 1, "{events:?}");
    assert_eq!(thinking[0]["text"], "The user wants the edition.");
    for event in &events {
        if event["event"] == "text_delta" || event["event"] == "assistant_text" {
            assert!(
                !event["text"].as_str().unwrap().contains("wants"),
                "{event}"
            );
        }
    }
    assert_eq!(events.last().unwrap()["answer"], "Edition 2024.");

    let refused = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["--think=lots", "hi"]));
    assert_eq!(refused.code(), Some(2), "{refused:?}");
    assert!(
        refused.stderr.contains("low, medium or high"),
        "{}",
        refused.stderr
    );
}

// ---------------------------------------------------------------- --help and colour

#[test]
fn help_lists_every_flag_the_environment_the_provider_order_and_the_exit_statuses() {
    let done = run(eugene().arg("--help"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let help = &done.stdout;
    for flag in [
        "--provider",
        "--model",
        "--max-steps",
        "--max-tokens",
        "--max-answer-tokens",
        "--max-time",
        "--timeout",
        "--retries",
        "--no-stream",
        "--think[=<BUDGET>]",
        "--workspace",
        "--plan",
        "--yes",
        "--json",
        "--verbose",
        "--color",
        "--require-tool[=<NAME>]",
        "--otlp[=<ENDPOINT>]",
        "--otlp-content",
        "--help",
        "--version",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    for variable in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_BASE_URL",
        "OLLAMA_HOST",
        "AGENT_MODEL",
        "NO_COLOR",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    ] {
        assert!(help.contains(variable), "{variable} missing from:\n{help}");
    }
    let order = |needle: &str| {
        help.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing"))
    };
    assert!(
        order("1. Anthropic") < order("2. OpenAI-compatible")
            && order("2. OpenAI") < order("3. Gemini")
            && order("3. Gemini") < order("4. Ollama"),
        "{help}"
    );
    for status in ["0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "7 ", "130 "] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(status)),
            "exit status {status}missing from:\n{help}"
        );
    }
    assert!(!help.contains("\x1b["), "no colour when piped");
}

/// A question that makes eugene print dimmed lines on stderr: a tool call, its result, the finish.
fn tool_turn(server: &Server, workspace: &tempfile::TempDir) -> std::process::Command {
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("Which edition?");
    cmd
}

fn tool_turn_server() -> Server {
    Server::start([
        tool_answer("r1", "read_file", json!({"path": "Cargo.toml"})),
        text_answer("Edition 2024."),
    ])
}

#[test]
fn piped_output_has_no_colour_codes() {
    let workspace = project();
    let server = tool_turn_server();
    let done = run(&mut tool_turn(&server, &workspace));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        done.stderr.contains("→ read_file(path=Cargo.toml)"),
        "{}",
        done.stderr
    );
    assert!(!done.stdout.contains("\x1b["), "{:?}", done.stdout);
    assert!(!done.stderr.contains("\x1b["), "{:?}", done.stderr);
}

/// Runs `cmd` with stdout and stderr on a new pseudo-terminal; returns the exit status and what
/// the terminal showed.
fn on_a_terminal(cmd: std::process::Command) -> (Option<i32>, String) {
    let terminal = Terminal::start(cmd, false);
    let (status, screen) = terminal.finish();
    (status.code(), screen)
}

#[test]
fn a_terminal_gets_colours_unless_no_color_is_set() {
    let workspace = project();
    let server = tool_turn_server();
    let (code, screen) = on_a_terminal(tool_turn(&server, &workspace));
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("\x1b[2m→ read_file(path=Cargo.toml)\x1b[0m"),
        "dimmed on a terminal: {screen:?}"
    );

    let server = tool_turn_server();
    let mut cmd = tool_turn(&server, &workspace);
    cmd.env("NO_COLOR", "1");
    let (code, screen) = on_a_terminal(cmd);
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("→ read_file(path=Cargo.toml)"),
        "{screen:?}"
    );
    assert!(!screen.contains("\x1b["), "NO_COLOR: {screen:?}");
}

#[test]
fn on_a_terminal_a_write_is_asked_about_and_ctrl_c_cancels_the_question() {
    let workspace = project();
    let write = || {
        tool_answer(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "edition 2024"}),
        )
    };
    // Allowed with "y": the file is written.
    let server = Server::start([write(), text_answer("Written.")]);
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("Write notes.txt");
    let mut terminal = Terminal::start(cmd, true);
    terminal.wait_for("Allow write_file(path=notes.txt, content=edition 2024)? [y/N/a(lways)]");
    terminal.type_line("y");
    let (status, screen) = terminal.finish();
    assert_eq!(status.code(), Some(0), "{screen}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(),
        "edition 2024"
    );

    // Ctrl-C at the same question cancels the run; nothing is written.
    std::fs::remove_file(workspace.path().join("notes.txt")).unwrap();
    let server = Server::start([write(), text_answer("never asked for")]);
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("Write notes.txt");
    let terminal = Terminal::start(cmd, true);
    terminal.wait_for("[y/N/a(lways)]");
    terminal.ctrl_c();
    let (status, screen) = terminal.finish();
    assert_eq!(status.code(), Some(130), "{screen}");
    assert!(screen.contains("[cancelled"), "{screen}");
    assert!(!workspace.path().join("notes.txt").exists());
    assert_eq!(server.received().len(), 1);
}

// ---------------------------------------------------------------- finish lines and exit statuses

#[test]
fn an_answered_run_says_done_and_exits_0() {
    let workspace = project();
    let server = tool_turn_server();
    let done = run(&mut tool_turn(&server, &workspace));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Edition 2024.\n");
    assert_eq!(
        finish_line(&done.stderr),
        "[done · 2 steps · tokens not reported]"
    );
}

/// A whole answer that says it came from `model`.
fn whole_from(model: &str, message: Value) -> Reply {
    let Reply::Json(status, mut body) = whole(message) else {
        unreachable!()
    };
    body["model"] = model.into();
    Reply::Json(status, body)
}

fn lookups_then(answer: &str, model: &str) -> Vec<Reply> {
    let call = |id: &str| {
        whole_from(
            model,
            json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\": \"Cargo.toml\"}"}}]}),
        )
    };
    vec![
        call("m1"),
        call("m2"),
        whole_from(model, json!({"role": "assistant", "content": answer})),
    ]
}

#[test]
fn the_finished_line_says_what_the_question_cost_at_the_models_price() {
    let workspace = project();
    // gpt-4.1 in the built-in table: $2 per million tokens in, $8 out. Each call is 20 in and
    // 5 out: $0.00008; three calls: $0.00024.
    let server = Server::start(lookups_then("Edition 2024.", "gpt-4.1"));
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--no-stream",
            "--model",
            "gpt-4.1",
            "--json",
            "Which edition?",
        ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let finished: Value = serde_json::from_str(done.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(finished["cost"]["usd"], 0.00024, "{finished}");
    assert_eq!(finished["cost"]["unpriced_calls"], 0, "{finished}");

    // A price file in front of the built-in table changes the price.
    let prices = workspace.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"[{"id": "openai", "name": "OpenAI", "api_pattern": "x", "models": [
            {"id": "gpt-4.1", "match": {"equals": "gpt-4.1"},
             "prices": {"input_mtok": 1, "output_mtok": 4}}]}]"#,
    )
    .unwrap();
    let server = Server::start(lookups_then("Edition 2024.", "gpt-4.1"));
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--prices")
        .arg(&prices)
        .args(["--no-stream", "--model", "gpt-4.1", "Which edition?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[done · 3 steps · 60 in / 15 out tokens · $0.00012]"
    );
}

#[test]
fn max_cost_ends_the_question_when_the_money_runs_out_with_status_5() {
    let workspace = project();
    // $0.0001: the first call costs $0.00008, the second at least 20 cached tokens more
    // ($0.00001), so it is made; it passes the limit and its call is not run.
    let server = Server::start(lookups_then("never asked", "gpt-4.1"));
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--no-stream",
            "--model",
            "gpt-4.1",
            "--max-cost",
            "0.0001",
            "Which?",
        ]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert_eq!(server.received().len(), 2);
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the money budget ($0.0001) ran out after $0.00016 (--max-cost raises it) · \
         2 steps · 40 in / 10 out tokens · $0.00016]"
    );
    // $0.00008: the second call cannot be paid for, so it is never made.
    let server = Server::start(lookups_then("never asked", "gpt-4.1"));
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--no-stream",
            "--model",
            "gpt-4.1",
            "--max-cost",
            "0.00008",
            "Which?",
        ]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert_eq!(server.received().len(), 1);
    assert!(
        finish_line(&done.stderr).contains("would not cover the next call"),
        "{}",
        done.stderr
    );
}

#[test]
fn max_cost_for_a_model_without_a_price_or_a_bad_price_file_is_a_configuration_error() {
    let workspace = project();
    let server = Server::start(lookups_then("never asked", "scripted"));
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--model", "scripted-9", "--max-cost", "1", "Which?"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("scripted-9"), "{}", done.stderr);
    assert!(server.received().is_empty());

    let prices = workspace.path().join("prices.json");
    std::fs::write(&prices, "[\n  {\"id\": 7}\n]\n").unwrap();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--prices")
        .arg(&prices)
        .arg("Which?"));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("prices.json:2"), "{}", done.stderr);
    for bad in ["-1", "lots", "NaN"] {
        let done = run(eugene().args(["--max-cost", bad, "Which?"]));
        assert_eq!(done.code(), Some(2), "{bad}: {done:?}");
    }
}

/// A Gemini stream of one text answer.
fn gemini_answer(text: &str) -> Reply {
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 4},
        "modelVersion": "gemini-2.5-flash", "responseId": "r1",
    });
    Reply::Sse(format!("data: {chunk}\r\n\r\n"))
}

#[test]
fn gemini_is_chosen_by_its_key_under_either_name_and_asked_at_its_url() {
    let server = Server::start([gemini_answer("Hello from Gemini."), gemini_answer("Again.")]);
    let gemini_url = format!("{}/v1beta", server.url);
    let done = run(eugene()
        .env("GEMINI_API_KEY", "gm-key")
        .env("GEMINI_BASE_URL", &gemini_url)
        .arg("hi"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Hello from Gemini.\n");
    let done = run(eugene()
        .env("GOOGLE_API_KEY", "gm-key")
        .env("GEMINI_BASE_URL", &gemini_url)
        .args(["--provider", "gemini", "--model", "gemini-2.5-pro", "hi"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Again.\n");
    let lines: Vec<String> = server.received().iter().map(|r| r.line.clone()).collect();
    assert_eq!(
        lines,
        [
            "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse HTTP/1.1",
            "POST /v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse HTTP/1.1",
        ]
    );
    assert_eq!(
        server.received()[0].json()["contents"][0]["parts"][0]["text"],
        "hi"
    );
    // Asked for by name without a key: the variables to set.
    let done = run(eugene().args(["--provider", "gemini", "hi"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr
            .contains("--provider gemini needs GEMINI_API_KEY or GOOGLE_API_KEY"),
        "{}",
        done.stderr
    );
}

#[test]
fn a_blank_answer_says_the_model_gave_none_and_exits_4() {
    let server = Server::start([text_answer("  ")]);
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).arg("hi"));
    assert_eq!(done.code(), Some(4), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the model gave no answer · 1 step · tokens not reported]"
    );
}

#[test]
fn the_same_error_three_times_is_stuck_in_words_and_exits_6() {
    // Without a terminal or --yes, apply_patch is denied: the same error each time.
    let server = Server::start((1..=3).map(|n| {
        tool_answer(
            &format!("p{n}"),
            "apply_patch",
            json!({"patch": format!("*** Begin Patch\n*** Add File: f{n}.txt\n+x\n*** End Patch")}),
        )
    }));
    let workspace = project();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("patch it"));
    assert_eq!(done.code(), Some(6), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the call to apply_patch failed 3 times in a row with the same error · 3 steps · \
         tokens not reported]"
    );
    assert!(!done.stderr.contains("Stuck {"), "no Debug output");
}

#[test]
fn four_denials_in_a_row_end_the_question_with_status_7() {
    // Without a terminal or --yes, writes are denied; two skills in turn, so no error repeats
    // three times in a row.
    let server = Server::start((1..=4).map(|n| {
        if n % 2 == 1 {
            tool_answer(
                &format!("w{n}"),
                "write_file",
                json!({"path": "a.txt", "content": "a"}),
            )
        } else {
            tool_answer(
                &format!("p{n}"),
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch"}),
            )
        }
    }));
    let workspace = project();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("change things"));
    assert_eq!(done.code(), Some(7), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: 4 calls were denied permission (--yes allows them) · 4 steps · tokens not \
         reported]"
    );
    assert!(!workspace.path().join("a.txt").exists());
}

#[test]
fn the_same_call_three_times_is_stuck_and_the_step_budget_is_words() {
    let workspace = project();
    let server = Server::start(
        (1..=3).map(|n| tool_answer(&format!("r{n}"), "list_dir", json!({"path": "."}))),
    );
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("look around"));
    assert_eq!(done.code(), Some(6), "{done:?}");
    assert!(
        finish_line(&done.stderr)
            .starts_with("[stopped: the model made the same call to list_dir 3 times in a row"),
        "{}",
        done.stderr
    );

    let server = Server::start([tool_answer("r1", "list_dir", json!({}))]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--max-steps", "1", "look around"]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the step budget (1) ran out (--max-steps raises it) · 1 step · tokens not \
         reported]"
    );
}

#[test]
fn a_refused_key_is_a_provider_error_with_status_3_naming_the_variable() {
    let server = Server::start([Reply::Json(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-wrong")
        .arg("hi"));
    assert_eq!(done.code(), Some(3), "{done:?}");
    assert!(
        done.stderr.contains("Incorrect API key provided"),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr.contains("check OPENAI_API_KEY"),
        "{}",
        done.stderr
    );
    assert_eq!(server.received().len(), 1, "a 401 is not retried");
}

#[test]
fn a_base_url_without_a_scheme_is_a_configuration_error_naming_the_fix() {
    let done = run(eugene().env("OPENAI_BASE_URL", "127.0.0.1:1/v1").arg("hi"));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr
            .contains("OPENAI_BASE_URL is `127.0.0.1:1/v1`, which has no scheme")
            && done
                .stderr
                .contains("OPENAI_BASE_URL=http://127.0.0.1:1/v1"),
        "{}",
        done.stderr
    );
    assert!(
        !done.stderr.contains("attempt"),
        "nothing was tried: {}",
        done.stderr
    );

    let done = run(eugene()
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .args(["--workspace", "/nonexistent/eugene/workspace", "hi"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains("/nonexistent/eugene/workspace"),
        "{}",
        done.stderr
    );
}

// ---------------------------------------------------------------- the Responses API

/// A Responses API stream that says `text`.
fn responses_stream(text: &str) -> Reply {
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "model": "scripted", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "model": "scripted", "status": "completed",
            "usage": {"input_tokens": 20, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}}),
    ];
    Reply::Sse(
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect(),
    )
}

#[test]
fn openai_api_responses_or_the_provider_flag_speaks_the_responses_api() {
    let whole = json!({"id": "resp_2", "object": "response", "model": "scripted", "status": "completed",
        "output": [{"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Hello.", "annotations": []}]}],
        "usage": {"input_tokens": 20, "output_tokens": 2}});
    let server = Server::start([responses_stream("Edition 2024."), Reply::Json(200, whole)]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API", "responses")
        .arg("Which edition?"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Edition 2024.\n");
    let done = run(eugene().env("OPENAI_BASE_URL", server.base_url()).args([
        "--provider",
        "openai-responses",
        "--no-stream",
        "hi",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Hello.\n");
    let received = server.received();
    for (request, streamed) in received.iter().zip([true, false]) {
        assert!(
            request.line.starts_with("POST /v1/responses"),
            "{}",
            request.line
        );
        let body = request.json();
        assert_eq!(body["stream"], json!(streamed));
        assert!(
            body["instructions"].is_string(),
            "the system prompt: {body}"
        );
        assert_eq!(body["input"][0]["role"], "user");
    }
    assert_eq!(received[0].json()["input"][0]["content"], "Which edition?");

    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API", "response")
        .arg("hi"));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains("OPENAI_API is `response`"),
        "{}",
        done.stderr
    );
    assert_eq!(server.received().len(), 2, "nothing was asked");
}

// ---------------------------------------------------------------- --json

#[test]
fn json_prints_events_then_a_summary_with_words_code_steps_and_usage() {
    let workspace = project();
    let server = Server::start([
        sse(&[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "r1", "type": "function",
                    "function": {"name": "read_file", "arguments": "{\"path\": \"Cargo.toml\"}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            json!({"id": "c", "choices": [],
                   "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}),
        ]),
        sse(&[
            chunk(json!({"content": "Edition 2024."}), Some("stop")),
            json!({"id": "c", "choices": [],
                   "usage": {"prompt_tokens": 150, "completion_tokens": 5, "total_tokens": 155}}),
        ]),
    ]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--json", "Which edition?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let events = done.json_lines();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "usage",
            "tool_call",
            "tool_result",
            "turn_finished",
            "text_delta",
            "usage",
            "assistant_text",
            "turn_finished",
            "finished"
        ],
        "{events:#?}"
    );
    assert_eq!(events[1]["name"], "read_file");
    assert_eq!(
        events[0]["provider"], "openai",
        "who answered: {:#?}",
        events[0]
    );
    assert_eq!(events[2]["is_error"], false);
    assert_eq!(events[7]["finish"], "no_more_tool_calls");
    let summary = &events[8];
    assert_eq!(summary["finish"], "done");
    assert_eq!(summary["code"], "no_more_tool_calls");
    assert_eq!(summary["exit_status"], 0);
    assert_eq!(summary["steps"], 2);
    assert_eq!(summary["usage"]["input_tokens"], 250);
    assert_eq!(summary["usage"]["output_tokens"], 15);
    assert_eq!(summary["answer"], "Edition 2024.");
    assert!(
        !done.stderr.contains("→ read_file"),
        "no human lines: {}",
        done.stderr
    );
}

#[test]
fn json_reports_a_failure_as_an_error_event_and_a_summary() {
    let server = Server::start([Reply::Json(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["--json", "hi"]));
    assert_eq!(done.code(), Some(3), "{done:?}");
    let events = done.json_lines();
    let error = events
        .iter()
        .find(|e| e["event"] == "error")
        .unwrap_or_else(|| panic!("no error event: {events:?}"));
    assert_eq!(error["kind"], "provider_error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Incorrect API key"),
        "{error}"
    );
    assert!(
        error["hint"].as_str().unwrap().contains("OPENAI_API_KEY"),
        "{error}"
    );
    let summary = events.last().unwrap();
    assert_eq!(summary["event"], "finished");
    assert_eq!(summary["code"], "provider_error");
    assert_eq!(summary["exit_status"], 3);

    let done = run(eugene()
        .env("OPENAI_BASE_URL", "localhost:8080/v1")
        .args(["--json", "hi"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    let events = done.json_lines();
    assert_eq!(events[0]["event"], "error");
    assert_eq!(events[0]["kind"], "config_error");
    assert_eq!(events.last().unwrap()["exit_status"], 2);
}

// ---------------------------------------------------------------- the system prompt

#[test]
fn the_system_prompt_names_the_workspace_by_its_absolute_path() {
    let workspace = project();
    let server = Server::start([text_answer("Hi."), text_answer("Hi.")]);
    // Started inside the workspace, without --workspace: "." is resolved.
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .current_dir(workspace.path())
        .arg("hi"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let absolute = workspace.path().canonicalize().unwrap();
    let system = |n: usize| {
        let body = server.received()[n].json();
        let system = body["messages"][0].clone();
        assert_eq!(system["role"], "system", "{body}");
        system["content"].as_str().unwrap().to_owned()
    };
    assert!(
        system(0).contains(&format!("the software project in {}.", absolute.display())),
        "{}",
        system(0)
    );
    // A relative --workspace is made absolute too.
    let parent = absolute.parent().unwrap();
    let name = absolute.file_name().unwrap();
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .current_dir(parent)
        .arg("--workspace")
        .arg(name)
        .arg("hi"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        system(1).contains(&format!("the software project in {}.", absolute.display())),
        "{}",
        system(1)
    );
}

#[test]
fn require_tool_forces_only_the_first_call_to_use_a_tool() {
    let workspace = project();
    let server = tool_turn_server();
    let mut cmd = tool_turn(&server, &workspace);
    cmd.arg("--require-tool");
    let done = run(&mut cmd);
    assert_eq!(done.code(), Some(0), "{done:?}");
    let requests = server.received();
    assert_eq!(requests[0].json()["tool_choice"], "required");
    assert_ne!(requests[1].json()["tool_choice"], "required");

    // Naming the tool sends OpenAI's named form, the only one some local servers accept.
    let server = tool_turn_server();
    let mut cmd = tool_turn(&server, &workspace);
    cmd.arg("--require-tool=read_file");
    let done = run(&mut cmd);
    assert_eq!(done.code(), Some(0), "{done:?}");
    let requests = server.received();
    assert_eq!(
        requests[0].json()["tool_choice"],
        json!({"type": "function", "function": {"name": "read_file"}})
    );
    assert_eq!(requests[1].json()["tool_choice"], "auto");
}

// ---------------------------------------------------------------- --json-schema

/// A ticket: a title and a priority from 1 to 3 required, labels optional, nothing else.
fn ticket_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 3},
            "labels": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["title", "priority"],
        "additionalProperties": false
    })
}

/// `ticket.json` (the ticket schema) in a new workspace.
fn ticket_project() -> (tempfile::TempDir, std::path::PathBuf) {
    let workspace = project();
    let path = workspace.path().join("ticket.json");
    std::fs::write(&path, ticket_schema().to_string()).unwrap();
    (workspace, path)
}

/// eugene asked to file a ticket that follows `schema`.
fn typed(
    server: &Server,
    workspace: &tempfile::TempDir,
    schema: &std::path::Path,
) -> std::process::Command {
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--json-schema")
        .arg(schema);
    cmd
}

/// A streamed answer that says `text`, then calls one tool.
fn saying_then_calling(text: &str, id: &str, name: &str, arguments: Value) -> Reply {
    sse(&[
        chunk(json!({"role": "assistant", "content": text}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ])
}

/// The value as eugene prints it on stdout: pretty JSON and a newline.
fn printed(value: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(value).unwrap())
}

#[test]
fn json_schema_sends_a_failed_answer_back_with_the_error_and_prints_only_the_value() {
    let (workspace, schema) = ticket_project();
    let ticket = json!({"title": "Login fails", "priority": 1, "labels": ["auth"]});
    let server = Server::start([
        saying_then_calling(
            "Filing it.",
            "f1",
            "final_answer",
            json!({"title": "Login fails", "priority": "high"}),
        ),
        tool_answer("f2", "final_answer", ticket.clone()),
    ]);
    let done = run(typed(&server, &workspace, &schema).arg("File a ticket for the login bug."));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, printed(&ticket), "the value alone on stdout");
    assert!(
        done.stderr.contains("Filing it."),
        "the model's text goes to stderr: {}",
        done.stderr
    );
    assert_eq!(
        finish_line(&done.stderr),
        "[done · 2 steps · tokens not reported]"
    );

    let requests = server.received();
    assert_eq!(requests.len(), 2);
    // With tools on offer, auto asks through a final_answer tool whose schema is the file's.
    let first = requests[0].json();
    let final_answer = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "final_answer")
        .unwrap_or_else(|| panic!("no final_answer tool: {first}"));
    assert_eq!(
        final_answer["function"]["parameters"]["required"],
        json!(["title", "priority"])
    );
    assert!(first.get("response_format").is_none(), "{first}");
    // The failed answer went back as the call's result: where, and what was wrong.
    let second = requests[1].json();
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "f1")
        .unwrap_or_else(|| panic!("no result for f1: {second}"));
    let content = result["content"].as_str().unwrap();
    assert!(
        content.contains(r#"`/priority`: "high" is not of type "integer""#),
        "{content}"
    );
}

#[test]
fn json_schema_dims_the_models_text_on_stderr_and_keeps_stdout_plain() {
    let (workspace, schema) = ticket_project();
    let ticket = json!({"title": "Login fails", "priority": 1});
    let server = Server::start([saying_then_calling(
        "Filing it.",
        "f1",
        "final_answer",
        ticket.clone(),
    )]);
    let done = run(typed(&server, &workspace, &schema).args(["--color", "always", "File it."]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, printed(&ticket));
    assert!(
        done.stderr.contains("\x1b[2mFiling it.\x1b[0m"),
        "{:?}",
        done.stderr
    );
}

#[test]
fn json_schema_answers_that_never_follow_it_end_as_a_budget_with_status_5() {
    let (workspace, schema) = ticket_project();
    let server = Server::start([
        tool_answer(
            "f1",
            "final_answer",
            json!({"title": "x", "priority": "high"}),
        ),
        tool_answer("f2", "final_answer", json!({"title": "x", "priority": 7})),
        tool_answer("f3", "final_answer", json!({"title": "x", "priority": 1})),
    ]);
    let done = run(typed(&server, &workspace, &schema).args([
        "--output-mode",
        "tool",
        "--output-retries",
        "1",
        "File a ticket.",
    ]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    assert_eq!(done.stdout, "", "no value, nothing on stdout");
    assert_eq!(
        finish_line(&done.stderr),
        "[stopped: the answer did not follow the schema after 1 retry (last error: `/priority`: 7 \
         is greater than the maximum of 3) · 2 steps · tokens not reported]"
    );
    assert_eq!(server.received().len(), 2, "one retry, then the end");
}

#[test]
fn json_schema_with_json_puts_the_value_in_the_finished_line() {
    let (workspace, schema) = ticket_project();
    let ticket = json!({"title": "Login fails", "priority": 2});
    let server = Server::start([tool_answer("f1", "final_answer", ticket.clone())]);
    let done = run(typed(&server, &workspace, &schema).args(["--json", "File a ticket."]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let events = done.json_lines();
    let summary = events.last().unwrap();
    assert_eq!(summary["event"], "finished", "{events:#?}");
    assert_eq!(summary["code"], "no_more_tool_calls");
    assert_eq!(summary["exit_status"], 0);
    assert_eq!(summary["output"], ticket);

    // A value that never passed: no output, and the code says why.
    let server = Server::start([
        tool_answer("f1", "final_answer", json!({"title": 1, "priority": 1})),
        tool_answer("f2", "final_answer", json!({"priority": 1})),
    ]);
    let done = run(typed(&server, &workspace, &schema).args([
        "--json",
        "--output-retries",
        "1",
        "File a ticket.",
    ]));
    assert_eq!(done.code(), Some(5), "{done:?}");
    let summary = done.json_lines().pop().unwrap();
    assert_eq!(summary["code"], "output_retries");
    assert_eq!(summary["exit_status"], 5);
    assert_eq!(summary["output"], Value::Null);
    assert!(
        summary["finish"]
            .as_str()
            .unwrap()
            .contains(r#"(root): "title" is a required property"#),
        "{summary}"
    );
}

#[test]
fn a_bad_schema_file_is_a_configuration_error_naming_it() {
    let workspace = project();
    let server = Server::start([]);
    let write = |name: &str, text: &str| {
        let path = workspace.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cases = [
        (workspace.path().join("missing.json"), "cannot be read"),
        (write("prose.json", "a ticket, please"), "is not JSON"),
        (
            write("wrong.json", r#"{"type": "strin"}"#),
            "is not a valid JSON Schema",
        ),
    ];
    for (path, what) in cases {
        let done = run(typed(&server, &workspace, &path).arg("File a ticket."));
        assert_eq!(done.code(), Some(2), "{done:?}");
        let named = format!("the schema file {} {what}", path.display());
        assert!(done.stderr.contains(&named), "{named}: {}", done.stderr);
    }
    assert!(server.received().is_empty(), "nothing was asked");

    // --output-mode and --output-retries belong to --json-schema.
    let done = run(eugene().args(["--output-mode", "native", "hi"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("--json-schema"), "{}", done.stderr);
}

#[test]
fn json_schema_in_native_mode_sends_the_strict_schema_on_a_turn_without_tools() {
    let (workspace, schema) = ticket_project();
    // Strict form makes the model send `null` for the labels it leaves out; the value printed
    // follows the file's schema, where labels may be absent but not null.
    let answer = json!({"title": "Login fails", "priority": 2, "labels": null});
    let server = Server::start([
        text_answer("The login form rejects every password."),
        text_answer(&answer.to_string()),
    ]);
    let done = run(typed(&server, &workspace, &schema).args([
        "--output-mode",
        "native",
        "File a ticket.",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(
        done.stdout,
        printed(&json!({"title": "Login fails", "priority": 2}))
    );
    assert!(
        done.stderr
            .contains("The login form rejects every password."),
        "{}",
        done.stderr
    );

    let requests = server.received();
    assert_eq!(requests.len(), 2);
    // The tools are on offer first: no response schema with them.
    assert!(requests[0].json().get("response_format").is_none());
    let second = requests[1].json();
    assert_eq!(second["tool_choice"], "none", "{second}");
    let format = &second["response_format"];
    assert_eq!(format["type"], "json_schema", "{second}");
    assert_eq!(format["json_schema"]["name"], "final_answer");
    assert_eq!(format["json_schema"]["strict"], true);
    let sent = &format["json_schema"]["schema"];
    assert_eq!(sent["required"], json!(["title", "priority", "labels"]));
    assert_eq!(sent["additionalProperties"], false);
    assert_eq!(
        sent["properties"]["labels"]["type"],
        json!(["array", "null"])
    );
    assert_eq!(sent["properties"]["priority"]["maximum"], 3);
    assert!(sent.get("$schema").is_none(), "{sent}");
}

#[test]
fn json_schema_in_interactive_mode_prints_one_value_per_question() {
    let (workspace, schema) = ticket_project();
    let first = json!({"title": "Login fails", "priority": 1});
    let second = json!({"title": "Logout fails", "priority": 3});
    let server = Server::start([
        tool_answer("f1", "final_answer", first.clone()),
        tool_answer("f2", "final_answer", second.clone()),
    ]);
    let mut eugene = Running::start(typed(&server, &workspace, &schema).stdin(Stdio::piped()));
    eugene.say("File a ticket for the login bug.");
    eugene.say("And one for the logout bug.");
    eugene.close_stdin();
    let done = eugene.finish();
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, printed(&first) + &printed(&second));
    // The second question is asked in the same conversation.
    let asked = server.received()[1].json().to_string();
    assert!(
        asked.contains("login bug") && asked.contains("logout bug"),
        "{asked}"
    );
}

#[test]
fn help_lists_the_json_schema_flags() {
    let done = run(eugene().arg("--help"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    for flag in [
        "--json-schema <FILE>",
        "--output-mode <MODE>",
        "--output-retries <N>",
    ] {
        assert!(
            done.stdout.contains(flag),
            "{flag} missing from:\n{}",
            done.stdout
        );
    }
    assert!(
        done.stdout
            .contains("--output-retries: the answer did not follow the --json-schema"),
        "exit status 5 names it: {}",
        done.stdout
    );
}

// ---------------------------------------------------------------- --session, --approve, --deny

/// eugene in `workspace`, talking to `server`, without a terminal (stdin empty) and without --yes.
fn in_workspace(server: &Server, workspace: &tempfile::TempDir) -> std::process::Command {
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace.path());
    cmd
}

/// The command eugene prints to go on: `eugene --workspace DIR --session NAME FLAG ID`.
fn go_on(workspace: &tempfile::TempDir, session: &str, rest: &str) -> String {
    let dir = workspace.path().canonicalize().unwrap();
    format!(
        "eugene --workspace {} --session {session} {rest}",
        dir.display()
    )
}

/// A streamed answer that calls several tools in one turn.
fn calls_answer(calls: &[(&str, &str, Value)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, (id, name, arguments))| {
            json!({"index": index, "id": id, "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    sse(&[
        chunk(json!({"tool_calls": calls}), None),
        chunk(json!({}), Some("tool_calls")),
    ])
}

/// The content of the result of call `id` in a request to the model.
fn result_of(request: &Value, id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {request}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A shell command that adds an `x` to `runs.txt` each time it runs.
fn count_a_run() -> (&'static str, &'static str, Value) {
    (
        "x1",
        "run_shell",
        json!({"command": "printf x >> runs.txt"}),
    )
}

fn write_notes() -> (&'static str, &'static str, Value) {
    (
        "w1",
        "write_file",
        json!({"path": "notes.txt", "content": "edition 2024"}),
    )
}

#[test]
fn without_a_terminal_a_session_pauses_on_a_shell_command_and_approve_runs_it_once() {
    let workspace = project();
    let runs = workspace.path().join("runs.txt");
    let server = Server::start([calls_answer(&[count_a_run()])]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "Count a run."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    assert_eq!(done.stdout, "", "no answer yet");
    let stderr = &done.stderr;
    for expected in [
        "the run is waiting for a decision on 1 call; session `s1` is saved.",
        "x1  run_shell(command=printf x >> runs.txt)",
        "`run_shell` can do what cannot be undone (it is marked destructive)",
        &go_on(&workspace, "s1", "--approve x1"),
        &go_on(&workspace, "s1", "--deny x1"),
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} missing from:\n{stderr}"
        );
    }
    assert!(
        stderr.contains("[waiting for approval of 1 call · 1 step · tokens not reported]"),
        "{stderr}"
    );
    assert!(!runs.exists(), "nothing ran before the decision");
    assert_eq!(support::session_files(workspace.path()).len(), 1);
    assert!(
        !workspace.path().join(".agent/sessions.redb").exists(),
        "sessions are kept outside the workspace"
    );
    assert_eq!(server.received().len(), 1);

    // Until it is decided, the session takes no question, and says how to go on.
    let server = Server::start([text_answer("never asked for")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "Anything else?"]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    assert!(
        done.stderr.contains("the question was not asked")
            && done
                .stderr
                .contains(&go_on(&workspace, "s1", "--approve x1")),
        "{}",
        done.stderr
    );
    assert!(server.received().is_empty());

    // Approved: the command runs exactly once, the model reads its result, and answers.
    let server = Server::start([text_answer("Counted.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "--approve", "x1"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Counted.\n");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "x", "ran once");
    let requests = server.received();
    assert_eq!(requests.len(), 1);
    let first = requests[0].json();
    let result = result_of(&first, "x1");
    assert!(!result.contains("denied"), "{result}");
    assert!(
        first.to_string().contains("Count a run."),
        "the conversation goes on: {first}"
    );

    // The session is free again: a question continues the conversation.
    let server = Server::start([text_answer("Once.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "How many?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let asked = server.received()[0].json();
    assert_eq!(result_of(&asked, "x1"), result);
    assert!(asked.to_string().contains("Counted."), "{asked}");
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "x",
        "not run again"
    );
}

#[test]
fn deny_with_a_reason_tells_the_model_and_nothing_is_written() {
    let workspace = project();
    let notes = workspace.path().join("notes.txt");
    let server = Server::start([calls_answer(&[write_notes()])]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "Write notes."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    assert!(
        done.stderr
            .contains("w1  write_file(path=notes.txt, content=edition 2024)")
            && done
                .stderr
                .contains("`write_file` changes things (it is not read-only)"),
        "{}",
        done.stderr
    );

    let server = Server::start([text_answer("Left it alone.")]);
    let done = run(in_workspace(&server, &workspace).args([
        "--session",
        "s1",
        "--deny",
        "w1",
        "--reason",
        "not now",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Left it alone.\n");
    assert!(!notes.exists(), "nothing written");
    let asked = server.received()[0].json();
    assert_eq!(result_of(&asked, "w1"), "denied: not now");
}

#[test]
fn every_pending_call_needs_one_decision_and_only_pending_calls_take_one() {
    let workspace = project();
    let server = Server::start([calls_answer(&[write_notes(), count_a_run()])]);
    let done =
        run(in_workspace(&server, &workspace).args(["--session", "two", "Write notes and count."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    assert!(
        done.stderr.contains("waiting for a decision on 2 calls")
            && done
                .stderr
                .contains(&go_on(&workspace, "two", "--approve w1 --approve x1")),
        "{}",
        done.stderr
    );

    let server = Server::start([text_answer("never asked for")]);
    let refused = |args: &[&str], says: &[&str]| {
        let done = run(in_workspace(&server, &workspace)
            .args(["--session", "two"])
            .args(args));
        assert_eq!(done.code(), Some(2), "{args:?}: {done:?}");
        for words in says {
            assert!(
                done.stderr.contains(words),
                "{args:?}: {words:?} in {}",
                done.stderr
            );
        }
    };
    // A missing decision: named, with the commands.
    refused(
        &["--approve", "w1"],
        &[
            "no decision for `x1` (run_shell)",
            &go_on(&workspace, "two", "--deny w1 --deny x1"),
        ],
    );
    // An id that is not pending.
    refused(
        &["--approve", "w1", "--deny", "x1", "--approve", "nope"],
        &["the call `nope` is not waiting for a decision in session `two`"],
    );
    // Two decisions for one call.
    refused(
        &["--approve", "w1", "--deny", "w1", "--deny", "x1"],
        &["the call `w1` is both approved and denied"],
    );
    // A session with no pause.
    let done =
        run(in_workspace(&server, &workspace).args(["--session", "none", "--approve", "w1"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr
            .contains("session `none` is not waiting for a decision"),
        "{}",
        done.stderr
    );
    assert!(server.received().is_empty(), "nothing was asked");
    assert!(!workspace.path().join("notes.txt").exists());
    assert!(!workspace.path().join("runs.txt").exists());

    // One approved, one denied: the write happens, the command does not.
    let server = Server::start([text_answer("Wrote the notes.")]);
    let done = run(in_workspace(&server, &workspace).args([
        "--session",
        "two",
        "--approve",
        "w1",
        "--deny",
        "x1",
    ]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(),
        "edition 2024"
    );
    assert!(!workspace.path().join("runs.txt").exists());
    let asked = server.received()[0].json();
    assert_eq!(
        result_of(&asked, "x1"),
        "denied: the user did not allow `run_shell`"
    );
}

#[test]
fn a_session_continues_the_conversation_across_processes() {
    let workspace = project();
    let server = Server::start([text_answer("Hello, Ada.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s2", "I am Ada."]));
    assert_eq!(done.code(), Some(0), "{done:?}");

    let server = Server::start([text_answer("You are Ada.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s2", "Who am I?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "You are Ada.\n");
    let messages = server.received()[0].json()["messages"].clone();
    let said: Vec<(&str, &str)> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "I am Ada."),
            ("assistant", "Hello, Ada."),
            ("user", "Who am I?")
        ]
    );

    // Another session of the same workspace is another conversation.
    let server = Server::start([text_answer("I do not know.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "other", "Who am I?"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(!server.received()[0].json().to_string().contains("Ada"));
}

#[test]
fn json_shows_the_pause_as_an_event_and_the_finished_line_says_awaiting_approval() {
    let workspace = project();
    let server = Server::start([calls_answer(&[write_notes()])]);
    let done =
        run(in_workspace(&server, &workspace).args(["--json", "--session", "s1", "Write notes."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    let events = done.json_lines();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds[kinds.len() - 3..],
        ["awaiting_approval", "turn_finished", "finished"],
        "{events:#?}"
    );
    let paused = &events[kinds.len() - 3];
    assert_eq!(paused["pending"][0]["id"], "w1");
    assert_eq!(paused["pending"][0]["skill"], "write_file");
    assert_eq!(paused["pending"][0]["arguments"]["path"], "notes.txt");
    assert!(
        paused["pending"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("`write_file` changes things"),
        "{paused}"
    );
    assert_eq!(events[kinds.len() - 2]["finish"], "awaiting_approval");
    let summary = events.last().unwrap();
    assert_eq!(summary["code"], "awaiting_approval");
    assert_eq!(summary["exit_status"], 8);
    assert_eq!(summary["finish"], "waiting for approval of 1 call");
    assert_eq!(summary["pending"][0]["id"], "w1");
    // The commands go to stderr all the same.
    assert!(
        done.stderr
            .contains(&go_on(&workspace, "s1", "--approve w1")),
        "{}",
        done.stderr
    );
}

#[test]
fn without_session_a_write_is_still_denied_and_the_model_is_told_why() {
    let workspace = project();
    let server = Server::start([calls_answer(&[write_notes()]), text_answer("Could not.")]);
    let done = run(in_workspace(&server, &workspace).arg("Write notes."));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let result = result_of(&server.received()[1].json(), "w1");
    assert!(
        result.contains("needs the user's permission") && result.contains("--session NAME"),
        "{result}"
    );
    assert!(!workspace.path().join("notes.txt").exists());
}

#[test]
fn a_session_saved_by_another_eugene_meanwhile_is_a_conflict_with_status_9() {
    let workspace = project();
    let server = Server::start([Reply::Silent, text_answer("Second answer.")]);
    // The first one waits for the model...
    let first = Running::start(in_workspace(&server, &workspace).args([
        "--session",
        "c1",
        "first question",
    ]));
    server.wait_for_requests(1);
    // ...while another saves the session.
    let second =
        run(in_workspace(&server, &workspace).args(["--session", "c1", "second question"]));
    assert_eq!(second.code(), Some(0), "{second:?}");
    // The first one ends (cancelled) and cannot save over it.
    first.ctrl_c();
    let first = first.finish();
    assert_eq!(first.code(), Some(9), "{first:?}");
    assert!(
        first
            .stderr
            .contains("another eugene saved session `c1` while this one ran"),
        "{}",
        first.stderr
    );
    // The other's conversation is the one kept.
    let server = Server::start([text_answer("Third answer.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "c1", "third question"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let asked = server.received()[0].json().to_string();
    assert!(
        asked.contains("second question") && asked.contains("Second answer."),
        "{asked}"
    );
    assert!(!asked.contains("first question"), "{asked}");
}

#[test]
fn session_flags_are_checked_before_anything_is_asked() {
    let server = Server::start([]);
    let workspace = project();
    let cases: [(&[&str], &str); 5] = [
        (&["--session", "a b", "hi"], "ASCII letters, digits"),
        (&["--session", "-x", "hi"], ""),
        (&["--approve", "w1"], "--session"),
        (
            &["--session", "s1", "--approve", "w1", "hi"],
            "cannot be used with",
        ),
        (&["--session", "s1", "--reason", "no", "hi"], "--deny"),
    ];
    for (args, says) in cases {
        let done = run(in_workspace(&server, &workspace).args(args));
        assert_eq!(done.code(), Some(2), "{args:?}: {done:?}");
        assert!(done.stderr.contains(says), "{args:?}: {}", done.stderr);
    }
    assert!(server.received().is_empty());
    assert!(
        support::session_files(workspace.path()).is_empty(),
        "no session was made"
    );
}

#[test]
fn help_describes_sessions_and_the_statuses_8_and_9() {
    let done = run(eugene().arg("--help"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let help = &done.stdout;
    for words in [
        "--session <NAME>",
        "--approve <ID>",
        "--deny <ID>",
        "--reason <TEXT>",
        "$EUGENE_STATE_DIR/sessions/",
        "~/.local/state/eugene/sessions/",
        "eugene --session NAME --approve ID",
        "eugene --session NAME --deny ID",
    ] {
        assert!(help.contains(words), "{words} missing from:\n{help}");
    }
    for status in ["8 ", "9 "] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(status)),
            "exit status {status}missing from:\n{help}"
        );
    }
}

#[test]
fn on_a_terminal_a_session_still_asks_and_an_approved_call_is_not_asked_about_again() {
    let workspace = project();
    let server = Server::start([calls_answer(&[write_notes()])]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "t1", "Write notes."]));
    assert_eq!(done.code(), Some(8), "{done:?}");

    // Approved on a terminal: w1 runs without a prompt; the model's next write is asked about.
    let server = Server::start([
        tool_answer(
            "w2",
            "write_file",
            json!({"path": "other.txt", "content": "more"}),
        ),
        text_answer("Done."),
    ]);
    let mut cmd = in_workspace(&server, &workspace);
    cmd.args(["--session", "t1", "--approve", "w1"]);
    let mut terminal = Terminal::start(cmd, true);
    terminal.wait_for("Allow write_file(path=other.txt, content=more)? [y/N/a(lways)]");
    terminal.type_line("n");
    let (status, screen) = terminal.finish();
    assert_eq!(status.code(), Some(0), "{screen}");
    assert_eq!(screen.matches("[y/N/a(lways)]").count(), 1, "{screen}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(),
        "edition 2024"
    );
    assert!(!workspace.path().join("other.txt").exists());
    assert_eq!(
        result_of(&server.received()[1].json(), "w2"),
        "denied: the user did not allow `write_file`"
    );
}

#[test]
fn in_interactive_mode_each_question_continues_the_session_and_a_pause_ends_eugene() {
    let workspace = project();
    let server = Server::start([
        text_answer("Hello, Ada."),
        calls_answer(&[write_notes()]),
        text_answer("never asked for"),
    ]);
    let mut eugene = Running::start(
        in_workspace(&server, &workspace)
            .args(["--session", "chat"])
            .stdin(Stdio::piped()),
    );
    eugene.say("I am Ada.");
    eugene.say("Write notes.");
    eugene.say("A third question.");
    eugene.close_stdin();
    let done = eugene.finish();
    assert_eq!(done.code(), Some(8), "{done:?}");
    assert_eq!(done.stdout, "Hello, Ada.\n");
    assert!(
        done.stderr
            .contains(&go_on(&workspace, "chat", "--approve w1")),
        "{}",
        done.stderr
    );
    assert_eq!(
        server.received().len(),
        2,
        "the third question was not asked"
    );
    assert!(!workspace.path().join("notes.txt").exists());

    // The next eugene goes on from both questions.
    let server = Server::start([text_answer("Noted, Ada.")]);
    let done =
        run(in_workspace(&server, &workspace).args(["--session", "chat", "--approve", "w1"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let asked = server.received()[0].json().to_string();
    assert!(
        asked.contains("I am Ada.")
            && asked.contains("Hello, Ada.")
            && asked.contains("Write notes."),
        "{asked}"
    );
}

#[test]
fn a_session_with_json_schema_keeps_the_conversation_and_prints_the_value() {
    let (workspace, schema) = ticket_project();
    let ticket = json!({"title": "Login fails", "priority": 1});
    let server = Server::start([
        tool_answer("f1", "final_answer", ticket.clone()),
        tool_answer(
            "f2",
            "final_answer",
            json!({"title": "Logout fails", "priority": 2}),
        ),
    ]);
    let first = run(typed(&server, &workspace, &schema)
        .args(["--session", "typed"])
        .arg("File a ticket for the login bug."));
    assert_eq!(first.code(), Some(0), "{first:?}");
    assert_eq!(first.stdout, printed(&ticket));
    let second = run(typed(&server, &workspace, &schema)
        .args(["--session", "typed"])
        .arg("And one for logout."));
    assert_eq!(second.code(), Some(0), "{second:?}");
    assert_eq!(
        second.stdout,
        printed(&json!({"title": "Logout fails", "priority": 2}))
    );
    // The second process continued the first one's conversation.
    let asked = server.received()[1].json()["messages"].to_string();
    assert!(
        asked.contains("File a ticket for the login bug."),
        "{asked}"
    );
}

// ---------------------------------------------------------------- Agent Skills (--skills)

/// Copies `from` into `to`, folders included.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A folder of skills outside the workspace: `shout` (tests/fixtures/agent-skills-run), and
/// `broken`, whose SKILL.md names another skill on its line 3.
fn skills_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-skills-run");
    copy_dir(&fixture, dir.path());
    std::fs::create_dir(dir.path().join("broken")).unwrap();
    std::fs::write(
        dir.path().join("broken/SKILL.md"),
        "---\ndescription: Never loaded.\nname: fixed\n---\nBody.\n",
    )
    .unwrap();
    dir
}

/// A workspace with a skill of its own in `.agents/skills/house-rules`.
fn project_with_skill() -> tempfile::TempDir {
    let workspace = project();
    let skill = workspace.path().join(".agents/skills/house-rules");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: house-rules\ndescription: The project's house rules. Use before any change.\n\
         ---\nNo tabs.\n",
    )
    .unwrap();
    workspace
}

/// The description of `load_skill` in a request to the model.
fn load_skill_description(request: &Value) -> String {
    request["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {request}"))
        .iter()
        .find(|t| t["function"]["name"] == "load_skill")
        .unwrap_or_else(|| panic!("load_skill is not offered: {request}"))["function"]["description"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn skills_from_the_workspace_and_from_skills_reach_the_model_and_an_invalid_one_is_reported() {
    let workspace = project_with_skill();
    let skills = skills_folder();
    let folder = skills.path().join("shout").canonicalize().unwrap();
    let server = Server::start([
        tool_answer("l1", "load_skill", json!({"name": "shout"})),
        tool_answer(
            "l2",
            "load_skill",
            json!({"name": "shout", "file": "references/style.md"}),
        ),
        tool_answer(
            "l3",
            "load_skill",
            json!({"name": "shout", "file": "../broken/SKILL.md"}),
        ),
        text_answer("Loaded."),
    ]);
    let done = run(in_workspace(&server, &workspace)
        .arg("--skills")
        .arg(skills.path())
        .arg("Shout hello."));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(done.stdout, "Loaded.\n");

    // The invalid skill: one stderr line per broken rule, with its file, line and rule; the
    // others loaded.
    let broken = skills.path().join("broken/SKILL.md");
    let expected = format!("eugene: skill not loaded: {}:3: ", broken.display());
    let reported: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.starts_with(&expected))
        .collect();
    assert!(
        reported
            .iter()
            .any(|l| l.ends_with("(rule `name-matches-folder`)")),
        "{}",
        done.stderr
    );

    // Level 1: both skills, the workspace's and the flag's, in load_skill's description.
    let requests = server.received();
    assert_eq!(requests.len(), 4);
    let description = load_skill_description(&requests[0].json());
    assert!(
        description.contains("- house-rules: The project's house rules.")
            && description.contains("- shout: Shout a word in capitals")
            && !description.contains("fixed"),
        "{description}"
    );
    // Level 2 and 3 came back to the model.
    let instructions = result_of(&requests[1].json(), "l1");
    assert!(
        instructions.contains(&format!("folder: {}", folder.display()))
            && instructions.contains("# Shouting"),
        "{instructions}"
    );
    assert_eq!(
        result_of(&requests[2].json(), "l2"),
        std::fs::read_to_string(folder.join("references/style.md")).unwrap()
    );
    // Another skill's folder is out of reach.
    let refused = result_of(&requests[3].json(), "l3");
    assert!(refused.contains("contains `..`"), "{refused}");
    assert!(
        done.stderr.contains("→ load_skill(name=shout"),
        "{}",
        done.stderr
    );
}

#[test]
fn a_command_cannot_rewrite_a_paused_session_so_the_approval_runs_what_was_shown() {
    // Session s1 waits on `x1` (add an `x` to runs.txt). In session s2 of the same workspace a
    // command allowed with --yes tries to replace s1's store, knowing its path, so that the
    // person's `--approve x1` would run something else: the store is out of its reach.
    let workspace = project();
    let server = Server::start([calls_answer(&[count_a_run()])]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "Count a run."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    let store = support::session_files(workspace.path()).pop().unwrap();
    let before = std::fs::read(&store).unwrap();
    let attack = format!(
        "ls -l {store}; cp /dev/null {store}; echo truncate=$?; echo forged > {store}.new; \
         mv {store}.new {store}; echo replace=$?",
        store = store.display()
    );
    let server = Server::start([
        tool_answer("a1", "run_shell", json!({ "command": attack })),
        text_answer("done"),
    ]);
    let done = run(in_workspace(&server, &workspace).args(["--yes", "Tidy up."]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let output = result_of(&server.received()[1].json(), "a1");
    assert!(output.contains("truncate=1"), "{output}");
    assert!(output.contains("replace=1"), "{output}");
    assert_eq!(
        std::fs::read(&store).unwrap(),
        before,
        "the store was changed"
    );

    let server = Server::start([text_answer("Counted.")]);
    let done = run(in_workspace(&server, &workspace).args(["--session", "s1", "--approve", "x1"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("runs.txt")).unwrap(),
        "x",
        "the approved call ran once, as shown"
    );
}

#[test]
fn a_skills_script_runs_from_its_folder_outside_the_workspace_when_run_shell_is_allowed() {
    let workspace = project();
    let skills = skills_folder();
    let folder = skills.path().join("shout").canonicalize().unwrap();
    let command = format!("sh {}/scripts/shout.sh hello", folder.display());
    let server = Server::start([
        tool_answer("s1", "run_shell", json!({"command": command})),
        text_answer("*** HELLO! (5 letters) ***"),
    ]);
    let done = run(in_workspace(&server, &workspace)
        .args(["--yes", "--skills"])
        .arg(skills.path())
        .arg("Shout hello."));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let output = result_of(&server.received()[1].json(), "s1");
    assert!(output.contains("*** HELLO! (5 letters) ***"), "{output}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("shout.marker")).unwrap(),
        "hello\n"
    );

    // Without --yes (and no terminal to ask on) the script does not run.
    std::fs::remove_file(workspace.path().join("shout.marker")).unwrap();
    let server = Server::start([
        tool_answer(
            "s1",
            "run_shell",
            json!({"command": format!("sh {}/scripts/shout.sh hello", folder.display())}),
        ),
        text_answer("Not allowed."),
    ]);
    let done = run(in_workspace(&server, &workspace)
        .arg("--skills")
        .arg(skills.path())
        .arg("Shout hello."));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let output = result_of(&server.received()[1].json(), "s1");
    assert!(output.contains("denied"), "{output}");
    assert!(!workspace.path().join("shout.marker").exists());
}

#[test]
fn a_skills_folder_that_cannot_be_read_is_a_configuration_error_naming_it() {
    let workspace = project();
    let server = Server::start([text_answer("never asked for")]);
    let missing = workspace.path().join("no-such-skills");
    let done = run(in_workspace(&server, &workspace)
        .arg("--skills")
        .arg(&missing)
        .arg("hello"));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains(&missing.display().to_string())
            && done
                .stderr
                .contains("give --skills a folder of skill folders"),
        "{}",
        done.stderr
    );
    assert!(server.received().is_empty());
}

#[test]
fn help_describes_skills() {
    let done = run(eugene().arg("--help"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    for words in [
        "--skills <DIR>",
        "<workspace>/.agents/skills/",
        "load_skill",
        "eugene: skill not loaded: <dir>/<name>/SKILL.md:<line>: <what is wrong> (rule `<rule>`)",
        "the first skill of a name wins",
    ] {
        assert!(
            done.stdout.contains(words),
            "{words} missing from:\n{}",
            done.stdout
        );
    }
}

#[test]
fn a_session_paused_on_a_skills_script_prints_commands_that_repeat_skills_and_approve_runs_it() {
    let workspace = project();
    let skills = skills_folder();
    let folder = skills.path().join("shout").canonicalize().unwrap();
    let command = format!("sh {}/scripts/shout.sh hello", folder.display());
    let server = Server::start([calls_answer(&[(
        "s1",
        "run_shell",
        json!({"command": command}),
    )])]);
    let done = run(in_workspace(&server, &workspace)
        .arg("--skills")
        .arg(skills.path())
        .args(["--session", "k1", "Shout hello."]));
    assert_eq!(done.code(), Some(8), "{done:?}");
    let dir = workspace.path().canonicalize().unwrap();
    let approve = format!(
        "eugene --workspace {} --skills {} --session k1 --approve s1",
        dir.display(),
        skills.path().display()
    );
    assert!(done.stderr.contains(&approve), "{}", done.stderr);
    assert!(!workspace.path().join("shout.marker").exists());

    // The printed command, as given: the script runs from its folder, once.
    let server = Server::start([text_answer("*** HELLO! (5 letters) ***")]);
    let done = run(in_workspace(&server, &workspace)
        .arg("--skills")
        .arg(skills.path())
        .args(["--session", "k1", "--approve", "s1"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let output = result_of(&server.received()[0].json(), "s1");
    assert!(output.contains("*** HELLO! (5 letters) ***"), "{output}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("shout.marker")).unwrap(),
        "hello\n"
    );
}
