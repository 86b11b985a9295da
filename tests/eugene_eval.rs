//! `eugene eval FILE` as a user meets it: the real example binary as a child process, its model
//! an OpenAI-compatible loopback server replaying whole answers, its dataset and reports real
//! files. A terminal is a real pseudo-terminal.
//!
//! Waits are bounded by a hang guard that fails the test; nothing here measures time.

mod support;

use std::path::{Path, PathBuf};

use eugene::media::tiny_png;
use serde_json::{Value, json};
use support::{Reply, Server, Terminal, eugene, run};

/// A whole (not streamed) answer with 20 tokens in and 5 out.
fn whole(text: &str) -> Reply {
    Reply::Json(
        200,
        json!({"id": "w", "object": "chat.completion", "model": "scripted",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
    )
}

/// A whole answer that calls one tool.
fn whole_tool(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::Json(
        200,
        json!({"id": "w", "object": "chat.completion", "model": "scripted",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                   "tool_calls": [{"id": id, "type": "function",
                       "function": {"name": name, "arguments": arguments.to_string()}}]},
                   "finish_reason": "tool_calls"}],
               "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
    )
}

/// The judge's verdict, as its structured output.
fn verdict(pass: bool, reason: &str) -> Reply {
    whole(&json!({"pass": pass, "reason": reason}).to_string())
}

/// A folder holding `cases.yaml` with `yaml` in it (and serving as the workspace).
fn dataset(yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.yaml");
    std::fs::write(&path, yaml).unwrap();
    (dir, path)
}

const CAPITAL: &str = "\
cases:
  - name: capital
    goal: What is the capital of France? Answer with the city alone.
    repeat: 2
    checks:
      - equals: Paris
";

/// `eugene eval FILE` against `server`, one attempt at a time, in `dir`.
fn eval(server: &Server, dir: &Path, file: &Path) -> std::process::Command {
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("eval")
        .arg(file)
        .arg("--workspace")
        .arg(dir)
        .arg("--concurrency")
        .arg("1");
    cmd
}

/// The table's row for `name`.
fn row<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no row {name} in:\n{stdout}"))
}

#[test]
fn an_eval_prints_its_table_and_writes_json_and_junit_for_ci() {
    let (dir, file) = dataset(
        "\
cases:
  - name: capital
    goal: What is the capital of France? Answer with the city alone.
    repeat: 2
    checks:
      - equals: Paris
      - rubric: The answer is one city's name.
",
    );
    // One at a time: the agent's answer, then the judge's verdict on it.
    let server = Server::start([
        whole("Paris"),
        verdict(true, "One city."),
        whole("Paris"),
        verdict(true, "One city."),
    ]);
    let json_out = dir.path().join("report.json");
    let junit_out = dir.path().join("junit.xml");
    let done = run(eval(&server, dir.path(), &file)
        .arg("--json")
        .arg(&json_out)
        .arg("--junit")
        .arg(&junit_out));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        done.stdout
            .starts_with("eval cases: 2/2 attempts passed (100%); each case must reach 100%\n"),
        "{}",
        done.stdout
    );
    let capital = row(&done.stdout, "capital");
    assert!(
        capital.contains("2/2") && capital.contains("100%"),
        "{capital}"
    );
    // 2 attempts × 25 tokens; the judge's 50 apart.
    assert!(capital.contains(" 50 "), "{capital}");
    assert!(done.stdout.contains("judge: 50 tokens"), "{}", done.stdout);
    // The scripted model has no price: unpriced, never $0.
    assert!(capital.contains("unpriced (2 calls)"), "{capital}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(report["cases"][0]["summary"]["passed"], 2);
    assert_eq!(report["overall"]["judge_usage"]["input_tokens"], 40);
    assert_eq!(
        report["cases"][0]["attempts"][1]["checks"][1]["reason"],
        "One city."
    );
    let junit = std::fs::read_to_string(&junit_out).unwrap();
    assert!(
        junit.contains("<testcase name=\"capital\" classname=\"cases\""),
        "{junit}"
    );
    assert!(junit.contains("failures=\"0\""), "{junit}");

    // The judge was asked by the same provider, for its verdict as structured output.
    let received = server.received();
    assert_eq!(received.len(), 4);
    assert!(received[0].json().get("response_format").is_none());
    assert_eq!(received[1].json()["response_format"]["type"], "json_schema");
    let asked = received[1].json().to_string();
    assert!(asked.contains("<answer>\\nParis\\n</answer>"), "{asked}");
    // Whole answers: an eval streams nothing.
    assert!(received[0].json().get("stream").is_none_or(|s| s == false));
}

#[test]
fn a_case_below_the_pass_rate_exits_10_and_says_why() {
    let (dir, file) = dataset(CAPITAL);
    let server = Server::start([whole("Paris"), whole("Lyon")]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(10), "{done:?}");
    assert!(
        row(&done.stdout, "capital").contains("1/2"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("FAILED capital: 1/2 passed, below 100%"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("attempt 2: equals \"Paris\" failed: expected \"Paris\", got \"Lyon\""),
        "{}",
        done.stdout
    );
    assert!(
        done.stderr
            .contains("1 of 1 cases below the pass rate of 100%"),
        "{}",
        done.stderr
    );

    // Half is enough with --min-pass-rate 0.5 (or 50%).
    for rate in ["0.5", "50%"] {
        let server = Server::start([whole("Paris"), whole("Lyon")]);
        let done = run(eval(&server, dir.path(), &file).args(["--min-pass-rate", rate]));
        assert_eq!(done.code(), Some(0), "{rate}: {done:?}");
    }
    let done = run(eval(&server, dir.path(), &file).args(["--min-pass-rate", "1.5"]));
    assert_eq!(done.code(), Some(2), "{done:?}");
}

#[test]
fn a_failed_model_call_is_a_failed_attempt_and_the_eval_goes_on() {
    let (dir, file) = dataset(CAPITAL);
    let server = Server::start([
        Reply::Json(
            400,
            json!({"error": {"message": "this model is not allowed", "type": "invalid_request_error"}}),
        ),
        whole("Paris"),
    ]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(10), "{done:?}");
    assert!(
        row(&done.stdout, "capital").contains("1/2"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout.contains("attempt 1: the run failed") && done.stdout.contains("not allowed"),
        "{}",
        done.stdout
    );
}

#[test]
fn a_malformed_dataset_exits_2_naming_file_line_and_column_and_asks_no_model() {
    let (dir, file) =
        dataset("cases:\n  - name: capital\n    goall: What is the capital of France?\n");
    let server = Server::start([]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(2), "{done:?}");
    let expected = format!(
        "eugene: {}:3:5: cases[0]: unknown field `goall`",
        file.display()
    );
    assert!(done.stderr.starts_with(&expected), "{}", done.stderr);
    assert!(done.stdout.is_empty(), "{}", done.stdout);
    assert!(server.received().is_empty());

    // A file that is not there is named too.
    let done = run(&mut eval(
        &server,
        dir.path(),
        &dir.path().join("missing.yaml"),
    ));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains("missing.yaml: cannot be read"),
        "{}",
        done.stderr
    );
}

#[test]
fn compare_shows_a_regression_beside_the_earlier_run() {
    let (dir, file) = dataset(CAPITAL);
    let before = dir.path().join("before.json");
    let server = Server::start([whole("Paris"), whole("Paris")]);
    let done = run(eval(&server, dir.path(), &file).arg("--json").arg(&before));
    assert_eq!(done.code(), Some(0), "{done:?}");

    let server = Server::start([whole("Paris"), whole("Lyon")]);
    let done = run(eval(&server, dir.path(), &file)
        .arg("--compare")
        .arg(&before)
        .args(["--min-pass-rate", "0.5"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    let comparison = &done.stdout[done.stdout.find("eval cases: before → after").unwrap()..];
    let capital = row(comparison, "capital");
    assert!(
        capital.contains("100% → 50%")
            && capital.contains("-50 pp")
            && capital.ends_with("REGRESSION"),
        "{comparison}"
    );
    assert!(
        comparison.ends_with("regressions: capital (100% → 50%)\n"),
        "{comparison}"
    );

    // A --compare report that is not one is found before any model is asked.
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\n  \"format\": 1,\n  \"dataset\": 7\n}\n").unwrap();
    let server = Server::start([]);
    let done = run(eval(&server, dir.path(), &file)
        .arg("--compare")
        .arg(&broken));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr
            .starts_with(&format!("eugene: {}:3:", broken.display())),
        "{}",
        done.stderr
    );
    assert!(server.received().is_empty());
}

#[test]
fn calls_that_change_things_are_denied_during_an_eval_unless_yes() {
    let (dir, file) = dataset(
        "cases:\n  - name: write\n    goal: Write notes.txt.\n    checks:\n      - contains: done\n",
    );
    let write = || {
        whole_tool(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "hello"}),
        )
    };
    let server = Server::start([write(), whole("I could not write it; done.")]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        !dir.path().join("notes.txt").exists(),
        "nothing was written"
    );
    let second = server.received()[1].json().to_string();
    assert!(
        second.contains("nobody can be asked during an eval"),
        "{second}"
    );

    let server = Server::start([write(), whole("Written; done.")]);
    let done = run(eval(&server, dir.path(), &file).arg("--yes"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "hello"
    );
}

#[test]
fn eval_is_a_command_only_as_the_first_argument() {
    // `eugene -- eval` asks the question "eval".
    let server = Server::start([support::text_answer("A question about eval.")]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["--", "eval"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        done.stdout.contains("A question about eval."),
        "{}",
        done.stdout
    );
    let asked = server.received()[0].json();
    let user = asked["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone();
    assert_eq!(user, "eval");

    // A question that starts with the word is a question.
    let server = Server::start([support::text_answer("Yes.")]);
    let done = run(eugene()
        .env("OPENAI_BASE_URL", server.base_url())
        .arg("eval this expression"));
    assert_eq!(done.code(), Some(0), "{done:?}");

    // `eugene eval --help` documents the dataset and its exit statuses; `eugene --help` points
    // to it.
    let done = run(eugene().args(["eval", "--help"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    for words in [
        "Usage: eugene eval [OPTIONS] <FILE>",
        "--repeat <N>",
        "--concurrency <K>",
        "--json <OUT>",
        "--junit <OUT>",
        "--compare <BEFORE>",
        "--min-pass-rate <RATE>",
        "--judge-model <NAME>",
        "- rubric: Names Paris.",
        "eugene -- eval",
    ] {
        assert!(
            done.stdout.contains(words),
            "{words} missing from:\n{}",
            done.stdout
        );
    }
    for status in ["0 ", "1 ", "2 ", "10 "] {
        assert!(
            done.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(status)),
            "exit status {status}missing from:\n{}",
            done.stdout
        );
    }
    let done = run(eugene().arg("--help"));
    assert!(done.stdout.contains("eugene eval FILE"), "{}", done.stdout);

    // Without a file, clap's usage error.
    let done = run(eugene().arg("eval"));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("<FILE>"), "{}", done.stderr);
}

#[test]
fn a_progress_bar_is_drawn_on_a_terminal_and_never_into_a_pipe() {
    let (dir, file) = dataset(CAPITAL);
    let server = Server::start([whole("Paris"), whole("Paris")]);
    let cmd = eval(&server, dir.path(), &file);
    let terminal = Terminal::start(cmd, false);
    let (status, screen) = terminal.finish();
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(screen.contains("2/2 attempts · 2 passed"), "{screen:?}");

    let server = Server::start([whole("Paris"), whole("Paris")]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(!done.stderr.contains("attempts ·"), "{}", done.stderr);
    assert!(!done.stderr.contains('\u{1b}'), "{:?}", done.stderr);
}

#[test]
fn a_typed_case_ends_in_a_value_that_the_checks_read() {
    let (dir, file) = dataset(
        "\
cases:
  - name: ticket
    goal: File a ticket for the failing login test.
    output_schema:
      type: object
      properties:
        title: {type: string}
        priority: {enum: [low, high]}
      required: [title, priority]
    checks:
      - contains: login
      - json_schema: {properties: {priority: {const: high}}}
",
    );
    // The agent has tools, so the value comes as a call to final_answer.
    let server = Server::start([whole_tool(
        "f1",
        "final_answer",
        json!({"title": "login test fails", "priority": "low"}),
    )]);
    let json_out = dir.path().join("report.json");
    let done = run(eval(&server, dir.path(), &file)
        .arg("--json")
        .arg(&json_out));
    assert_eq!(done.code(), Some(10), "{done:?}");
    assert!(
        done.stdout
            .contains("attempt 1: json_schema failed: `/priority`"),
        "{}",
        done.stdout
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    let attempt = &report["cases"][0]["attempts"][0];
    assert_eq!(
        attempt["checks"][0]["passed"], true,
        "contains read the value: {attempt}"
    );
    assert_eq!(
        attempt["answer"],
        r#"{"title":"login test fails","priority":"low"}"#
    );
    let tools: Vec<String> = server.received()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.iter().any(|t| t == "final_answer"), "{tools:?}");
}

// ---------------------------------------------------------------- attachments

const RECEIPT: &str = "\
cases:
  - name: receipt
    goal: What is the total on the receipt?
    attach: [scans/receipt.png]
    checks:
      - equals: 42
";

#[test]
fn a_case_runs_with_its_attached_image() {
    let (dir, file) = dataset(RECEIPT);
    std::fs::create_dir(dir.path().join("scans")).unwrap();
    std::fs::write(dir.path().join("scans/receipt.png"), tiny_png()).unwrap();
    let server = Server::start([whole("42")]);
    // Run from another directory: the path is the dataset's, not the current one's.
    let done = run(eval(&server, dir.path(), &file).current_dir(std::env::temp_dir()));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        row(&done.stdout, "receipt").contains("1/1"),
        "{}",
        done.stdout
    );
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_case_whose_attachment_cannot_be_sent_stops_the_eval_before_it_runs() {
    let (dir, file) = dataset(RECEIPT);
    let server = Server::start([whole("never")]);
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(2), "{done:?}");
    let missing = dir.path().join("scans/receipt.png");
    assert!(
        done.stderr.contains(&format!(
            "{}: case `receipt`: {}: cannot be read: ",
            file.display(),
            missing.display()
        )),
        "{}",
        done.stderr
    );

    // There, but not an image: a DOS executable's header.
    std::fs::create_dir(dir.path().join("scans")).unwrap();
    std::fs::write(
        &missing,
        b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00",
    )
    .unwrap();
    let done = run(&mut eval(&server, dir.path(), &file));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(
        done.stderr.contains("case `receipt`") && done.stderr.contains("cannot be recognized"),
        "{}",
        done.stderr
    );
    assert!(
        server.received().is_empty(),
        "nothing was asked of the model"
    );
}
