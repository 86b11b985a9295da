//! The agent as the target: its limits, priority and CPUs changed by a command that names it,
//! processes without end, and what is left behind.

use super::agent::{self, Plan, Report, Start, workspace_for};
use super::{NOBODY, require_root};

/// The audit's attacks on the agent's process, by its real pid (as a command could find it in a
/// `/proc` that shows it) and through `$PPID` (the supervisor, then its parent).
fn attacks() -> Vec<String> {
    vec![
        "prlimit --pid {agent} --nofile=16:16; echo nofile=$?".into(),
        "prlimit --pid {agent} --cpu=1:1; echo cpu=$?".into(),
        "renice -n 19 -p {agent}; echo renice=$?".into(),
        "taskset -p 1 {agent}; echo taskset=$?".into(),
        "ionice -c 3 -p {agent}; echo ionice=$?".into(),
        "chrt -b -p 0 {agent}; echo chrt=$?".into(),
        "A=$(awk '{print $4}' /proc/$PPID/stat); echo agent-by-ppid=$A; \
         [ -n \"$A\" ] && prlimit --pid $A --nofile=16:16; \
         [ -n \"$PPID\" ] && [ \"$PPID\" != 0 ] && prlimit --pid $PPID --nofile=16:16; \
         renice -n 19 -u $(id -u); echo renice-user=$?"
            .into(),
        // The agent must still be able to run a command afterwards.
        "echo still-works".into(),
    ]
}

fn attack_the_agent(user: Option<u32>, no_user_namespaces: bool) -> Report {
    let workspace = workspace_for(user);
    let plan = Plan {
        workspace: workspace.path().to_owned(),
        commands: attacks(),
        timeout_ms: 20_000,
        no_user_namespaces,
        ..Plan::default()
    };
    agent::run(&plan, Start::as_user(user))
}

fn assert_agent_untouched(report: &Report, who: &str) {
    assert_eq!(
        report.before, report.after,
        "{who}: the command changed the agent's limits or scheduling: {:#?}",
        report.answers
    );
    let last = &report.answers.last().unwrap().1;
    assert!(last.contains("still-works"), "{who}: {last}");
    for (is_error, text) in &report.answers {
        assert!(!is_error, "{who}: {text}");
    }
}

#[test]
fn a_root_command_cannot_limit_slow_or_kill_the_agent() {
    require_root();
    let report = attack_the_agent(None, false);
    assert_agent_untouched(&report, "root");
    // In its own PID namespace the agent's pid names nothing.
    assert!(
        report.answers[0].1.contains("No such process"),
        "{}",
        report.answers[0].1
    );
}

#[test]
fn an_unprivileged_command_cannot_limit_slow_or_kill_the_agent() {
    require_root();
    let report = attack_the_agent(Some(NOBODY), false);
    assert_agent_untouched(&report, "nobody");
}

#[test]
fn without_user_namespaces_the_filter_still_keeps_the_agent_untouched() {
    // As in a Docker container's default profile: the command is started with a plain fork and
    // sees the agent in /proc; the seccomp filter refuses every call naming it.
    require_root();
    for user in [None, Some(NOBODY)] {
        let report = attack_the_agent(user, true);
        let who = format!("{user:?} without user namespaces");
        assert_agent_untouched(&report, &who);
        let first = &report.answers[0].1;
        assert!(
            first.contains("user namespaces"),
            "{who}: the gap is said: {first}"
        );
        assert!(first.contains("Operation not permitted"), "{who}: {first}");
        // Here the supervisor's pid is real, and through it the command finds the agent's.
        let by_ppid = &report.answers[6].1;
        assert!(
            by_ppid.contains(&format!("agent-by-ppid={}", report.pid)),
            "{who}: {by_ppid}"
        );
    }
}

/// A command that forks 200 sleeping children (going on when a fork fails, and saying why), then
/// counts the live processes in its `/proc` (its own, in its PID namespace).
const TWO_HUNDRED: &str = "perl -e 'my ($ok, $err) = (0, \"\"); for (1..200) { my $p = fork; \
     unless (defined $p) { $err = \"$!\"; next } if ($p == 0) { sleep 30; exit } $ok++ } \
     opendir(my $d, \"/proc\"); my $live = grep { /^[0-9]+$/ } readdir $d; \
     print \"started=$ok live=$live\\n\"; print STDERR \"fork: $err\\n\" if $err'";

fn live_count(text: &str) -> usize {
    text.split("live=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in: {text}"))
}

#[test]
fn a_call_cannot_have_more_processes_than_its_limit() {
    require_root();
    for user in [None, Some(NOBODY)] {
        let workspace = workspace_for(user);
        let plan = Plan {
            workspace: workspace.path().to_owned(),
            commands: vec![TWO_HUNDRED.into()],
            timeout_ms: 20_000,
            max_processes: Some(32),
            ..Plan::default()
        };
        let report = agent::run(&plan, Start::as_user(user));
        let text = &report.answers[0].1;
        let live = live_count(text);
        assert!(live <= 32, "{user:?}: {live} processes ran at once: {text}");
        assert!(
            live >= 8,
            "{user:?}: the command could not start anything: {text}"
        );
        assert!(
            text.contains("reached its limit of 32 processes"),
            "{user:?}: the result says why forks failed: {text}"
        );
    }
}

#[test]
fn a_fork_bomb_ends_at_the_time_limit_and_leaves_nothing() {
    require_root();
    for user in [None, Some(NOBODY)] {
        let workspace = workspace_for(user);
        let marker = format!("77.{}{}", std::process::id(), user.unwrap_or(0));
        let plan = Plan {
            workspace: workspace.path().to_owned(),
            commands: vec![
                format!("f() {{ sleep {marker} & f | f & }}; f; wait"),
                "echo after".into(),
            ],
            timeout_ms: 3_000,
            max_processes: Some(64),
            ..Plan::default()
        };
        let report = agent::run(&plan, Start::as_user(user));
        let bomb = &report.answers[0].1;
        assert!(bomb.contains("timed out after 3s"), "{user:?}: {bomb}");
        assert!(
            bomb.contains("reached its limit of 64 processes"),
            "{user:?}: {bomb}"
        );
        assert!(
            report.answers[1].1.contains("after"),
            "{user:?}: {:?}",
            report.answers[1]
        );
        let left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
            })
            .count();
        assert_eq!(left, 0, "{user:?}: processes of the bomb outlived the call");
    }
}

#[test]
fn required_confinement_refuses_without_user_namespaces_and_runs_nothing() {
    require_root();
    let workspace = workspace_for(None);
    let marker = workspace.path().join("ran");
    let plan = Plan {
        workspace: workspace.path().to_owned(),
        commands: vec![format!("touch {}", marker.display())],
        timeout_ms: 20_000,
        required: true,
        no_user_namespaces: true,
        ..Plan::default()
    };
    let report = agent::run(&plan, Start::default());
    let (is_error, text) = &report.answers[0];
    assert!(is_error, "{text}");
    assert!(text.contains("requires a full sandbox"), "{text}");
    assert!(text.contains("user namespaces"), "{text}");
    assert!(text.contains("nothing was run"), "{text}");
    assert!(!marker.exists(), "the command ran");

    // With them, the same configuration runs.
    let plan = Plan {
        no_user_namespaces: false,
        ..plan
    };
    let report = agent::run(&plan, Start::default());
    assert!(!report.answers[0].0, "{}", report.answers[0].1);
    assert!(marker.exists());
}

#[test]
fn a_tmpdir_nested_past_the_open_file_limit_is_removed() {
    let workspace = workspace_for(None);
    let plan = Plan {
        workspace: workspace.path().to_owned(),
        commands: vec![
            "cd \"$TMPDIR\" && for i in $(seq 1100); do mkdir d && cd d || exit 1; done; echo deep"
                .into(),
        ],
        timeout_ms: 60_000,
        nofile: Some(1024),
        ..Plan::default()
    };
    let report = agent::run(&plan, Start::default());
    assert!(
        report.answers[0].1.contains("deep"),
        "{}",
        report.answers[0].1
    );
    assert!(
        report.tmpdirs_left.is_empty(),
        "the private TMPDIR was left behind: {:?}",
        report.tmpdirs_left
    );
}
