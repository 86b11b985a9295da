//! Measuring a call's peak memory in a process of its own: the test runs its own binary again,
//! running only an ignored child test, which makes one call and reports the answer with the
//! process's peak resident memory (`VmHWM` of `/proc/self/status`).

use std::process::Command;

use serde_json::{Value, json};

use super::Answer;

/// The variable that carries the child's arguments (JSON); absent, a child test does nothing.
const ARGS: &str = "EUGENE_TEST_CHILD_ARGS";

/// What a child reports before its line.
const MARK: &str = "EUGENE-CHILD-RESULT ";

/// What the child answered, and the peak memory of its whole process.
#[derive(Debug)]
pub struct Measured {
    pub answer: Answer,
    pub peak_bytes: u64,
}

/// Runs the ignored test `test` of this binary in a child process with `args`, and returns what
/// it reported with [`report`].
pub fn in_child(test: &str, args: Value) -> Measured {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ARGS, args.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The test harness may have begun the line (`test name ... `).
    let Some(line) = stdout
        .lines()
        .find_map(|l| l.find(MARK).map(|at| &l[at + MARK.len()..]))
    else {
        panic!(
            "the child `{test}` reported nothing ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let report: Value = serde_json::from_str(line).unwrap();
    Measured {
        answer: Answer {
            text: report["text"].as_str().unwrap().to_owned(),
            is_error: report["is_error"].as_bool().unwrap(),
        },
        peak_bytes: report["peak_bytes"].as_u64().unwrap(),
    }
}

/// The arguments of this child; `None` when the test runs as an ordinary (ignored) test.
pub fn child_args() -> Option<Value> {
    let args = std::env::var(ARGS).ok()?;
    Some(serde_json::from_str(&args).unwrap())
}

/// Reports `answer` and this process's peak memory to the parent.
pub fn report(answer: &Answer) {
    let line = json!({
        "text": answer.text,
        "is_error": answer.is_error,
        "peak_bytes": peak_memory(),
    });
    println!("\n{MARK}{line}");
}

/// The peak resident memory of this process so far, in bytes.
pub fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}
