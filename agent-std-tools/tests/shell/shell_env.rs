//! `run_shell` never hands the agent's secrets to the commands it runs: not through their
//! environment (an allowlist, not a denylist of names) and not through `/proc/<agent>/environ`.
//!
//! The agent here is a real process started with the secrets in its initial environment (which
//! is what `/proc/<pid>/environ` shows): the outer test runs this test binary again, running only
//! the ignored inner test, and reads what it printed.

use crate::common;

use agent_core::SkillContext;
use agent_std_tools::ShellConfig;
use serde_json::json;

/// Secrets as real deployments name them; none matches a `*_API_KEY`/`*_TOKEN`-style pattern.
const SECRETS: &[(&str, &str)] = &[
    ("DATABASE_URL", "postgres://app:pw-db-1@db/app"),
    ("PGPASSWORD", "pw-pg-2"),
    ("MYSQL_PWD", "pw-mysql-3"),
    ("SECRET_KEY_BASE", "skb-4"),
    ("PRIVATE_KEY", "pk-5"),
    ("GH_PAT", "ghp-6"),
    ("APIKEY", "apikey-7"),
    ("OPENAI_APIKEY", "sk-8"),
    ("AZURE_OPENAI_KEY", "az-9"),
    ("AWS_ACCESS_KEY_ID", "AKIA-10"),
    ("AWS_SECRET_ACCESS_KEY", "aws-11"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-agent-12.sock"),
    ("SLACK_WEBHOOK_URL", "https://hooks.example/13"),
    ("SENTRY_DSN", "https://key-14@sentry.example/1"),
    ("ANTHROPIC_API_KEY", "sk-ant-15"),
];

const INNER: &str = "shell_env::agent_process_runs_a_hostile_command";

#[test]
fn no_secret_of_the_agent_reaches_a_command() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            INNER,
            "--nocapture",
            "--test-threads=1",
        ])
        .envs(SECRETS.iter().copied())
        .env("EUGENE_TEST_PLAIN", "visible-plain")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let report = stdout
        .split_once("=== report\n")
        .map(|(_, report)| report)
        .unwrap_or_else(|| panic!("the inner test printed no report:\n{stdout}\n{stderr}"));
    for (name, value) in SECRETS {
        assert!(
            !report.contains(value),
            "{name}'s value reached the command:\n{report}"
        );
    }
    assert!(
        report.contains("PATH="),
        "ordinary variables are kept:\n{report}"
    );
    assert!(
        !report.contains("EUGENE_TEST_PLAIN="),
        "a variable not on the allowlist is not passed:\n{report}"
    );
    assert!(
        report.contains("PASSED=visible-plain"),
        "a variable the user passes through arrives:\n{report}"
    );
}

/// Run by [`no_secret_of_the_agent_reaches_a_command`] in a process of its own.
#[test]
#[ignore = "run by no_secret_of_the_agent_reaches_a_command in a fresh process"]
fn agent_process_runs_a_hostile_command() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let agent = std::process::id();
    let command = format!(
        "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; \
         tr '\\0' '\\n' < /proc/{agent}/environ; echo ---; \
         grep -a -o 'pw-[a-z]*-[0-9]*' /proc/{agent}/mem /proc/$PPID/mem 2>&1 | head -3"
    );
    let ctx = SkillContext::new(tmp.path());
    let answer = runtime.block_on(common::call(
        &ctx,
        "run_shell",
        json!({ "command": command }),
    ));
    let passthrough = SkillContext::new(tmp.path()).with_extension(ShellConfig {
        env_passthrough: vec!["EUGENE_TEST_PLAIN".into()],
        ..ShellConfig::default()
    });
    let passed = runtime.block_on(common::call(
        &passthrough,
        "run_shell",
        json!({"command": "echo PASSED=$EUGENE_TEST_PLAIN"}),
    ));
    println!("=== report\n{}\n{}", answer.text, passed.text);
}
