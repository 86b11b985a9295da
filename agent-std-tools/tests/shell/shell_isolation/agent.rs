//! A real agent process for the attacks that target the agent itself: the outer test runs this
//! test binary again (copied where any user may run it, so it can run as `nobody` too), running
//! only the ignored [`agent_process`] test, which reads its [`Plan`] from the environment, runs
//! each command through `run_shell`, and prints a [`Report`] of what it saw of itself before and
//! after.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use agent_core::SkillContext;
use agent_std_tools::{Confinement, ShellConfig};
use serde_json::{Value, json};

use super::common;

const PLAN_VAR: &str = "EUGENE_TEST_AGENT_PLAN";
const INNER: &str = "shell_isolation::agent::agent_process";

/// What the agent process does.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub workspace: PathBuf,
    /// Commands run one after the other; `{agent}` becomes the agent's pid.
    pub commands: Vec<String>,
    pub timeout_ms: u64,
    pub max_processes: Option<usize>,
    pub required: bool,
    /// Forbid user namespaces first, as Docker's default seccomp profile does.
    pub no_user_namespaces: bool,
    /// Lower the open-file limit to this first.
    pub nofile: Option<u64>,
}

/// What the agent process saw.
#[derive(Debug)]
pub struct Report {
    pub pid: u32,
    pub answers: Vec<(bool, String)>,
    pub before: Value,
    pub after: Value,
    /// The agent's private temporary directories still there after the calls.
    pub tmpdirs_left: Vec<String>,
}

/// How the agent process is started.
#[derive(Default)]
pub struct Start {
    /// Run as this user and group (the outer test is root).
    pub user: Option<u32>,
    /// Give it this terminal (a pty slave) as its controlling terminal and standard input.
    pub terminal: Option<std::os::fd::RawFd>,
}

impl Start {
    /// Started as `user` (`None`: as this process's user), with no terminal.
    pub fn as_user(user: Option<u32>) -> Start {
        Start {
            user,
            ..Start::default()
        }
    }
}

/// This test binary, copied where every user may read and run it.
fn agent_binary() -> &'static Path {
    static COPY: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = COPY.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("eugene-agent-bin")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join("agent");
        std::fs::copy(std::env::current_exe().unwrap(), &path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, path)
    });
    path
}

/// A workspace the agent process can write, as `user`.
pub fn workspace_for(user: Option<u32>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(id) = user {
        std::os::unix::fs::chown(dir.path(), Some(id), Some(id)).unwrap();
    }
    dir
}

/// Runs the agent process and returns its report.
pub fn run(plan: &Plan, start: Start) -> Report {
    let plan_json = json!({
        "workspace": plan.workspace,
        "commands": plan.commands,
        "timeout_ms": plan.timeout_ms,
        "max_processes": plan.max_processes,
        "required": plan.required,
        "no_user_namespaces": plan.no_user_namespaces,
        "nofile": plan.nofile,
    });
    let mut command = Command::new(agent_binary());
    command
        .args([
            "--ignored",
            "--exact",
            INNER,
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PLAN_VAR, plan_json.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(id) = start.user {
        command.uid(id).gid(id).env("HOME", "/nonexistent");
        // A safety net for this machine should a fork bomb ever get out: every process of the
        // user counts (the sandbox's own limit is far lower).
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 4096,
                    rlim_max: 4096,
                };
                if libc::setrlimit(libc::RLIMIT_NPROC, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    if let Some(tty) = start.terminal {
        // SAFETY: dup of a descriptor the caller keeps open until `run` returns.
        let stdin = unsafe { std::os::fd::BorrowedFd::borrow_raw(tty) }
            .try_clone_to_owned()
            .unwrap();
        command.stdin(Stdio::from(stdin));
        // SAFETY: setsid and ioctl are async-signal-safe; fd 0 is the terminal.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        command.stdin(Stdio::null());
    }
    // A test thread that forked while the copy was being written holds it open for writing
    // until that child execs: `exec` of the copy answers ETXTBSY for that moment.
    let output = (0..100)
        .find_map(|_| match command.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                None
            }
            other => Some(other.unwrap()),
        })
        .expect("the agent binary stayed busy");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the agent process failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let report = stdout
        .split_once("=== report\n")
        .map(|(_, report)| report.lines().next().unwrap_or_default())
        .unwrap_or_else(|| panic!("the agent printed no report:\n{stdout}\n{stderr}"));
    let report: Value = serde_json::from_str(report).unwrap();
    Report {
        pid: report["pid"].as_u64().unwrap() as u32,
        answers: report["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a[0].as_bool().unwrap(), a[1].as_str().unwrap().to_owned()))
            .collect(),
        before: report["before"].clone(),
        after: report["after"].clone(),
        tmpdirs_left: serde_json::from_value(report["tmpdirs_left"].clone()).unwrap(),
    }
}

/// What the agent process can see of its own limits and scheduling.
fn own_state() -> Value {
    let limit = |resource| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into `limit`.
        unsafe { libc::getrlimit(resource, &mut limit) };
        json!([limit.rlim_cur, limit.rlim_max])
    };
    // SAFETY: getpriority reads; sched_getaffinity writes into a local set.
    let (nice, cpus) = unsafe {
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (nice, libc::CPU_COUNT(&set))
    };
    // SAFETY: these read the scheduling policy and I/O priority of this process.
    let (policy, ioprio) = unsafe {
        (
            libc::sched_getscheduler(0),
            libc::syscall(libc::SYS_ioprio_get, 1, 0),
        )
    };
    json!({
        "policy": policy,
        "ioprio": ioprio,
        "nofile": limit(libc::RLIMIT_NOFILE),
        "cpu": limit(libc::RLIMIT_CPU),
        "nproc": limit(libc::RLIMIT_NPROC),
        "nice": nice,
        "cpus": cpus,
    })
}

/// Makes creating a user namespace fail with `EPERM` in this process and everything it starts,
/// as Docker's default seccomp profile does (`clone3`, whose flags a filter cannot read, answers
/// `ENOSYS`, so callers fall back to `clone`).
fn forbid_user_namespaces() {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    let flag = || {
        SeccompRule::new(vec![
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
                libc::CLONE_NEWUSER as u64,
            )
            .unwrap(),
        ])
        .unwrap()
    };
    let rules = [
        (libc::SYS_clone, vec![flag()]),
        (libc::SYS_unshare, vec![flag()]),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap();
    let mut program: seccompiler::BpfProgram = filter.try_into().unwrap();
    // clone3 → ENOSYS, before everything else (after the architecture check).
    program.splice(
        3..3,
        [
            seccompiler::sock_filter {
                code: 0x20,
                jt: 0,
                jf: 0,
                k: 0,
            },
            seccompiler::sock_filter {
                code: 0x15,
                jt: 0,
                jf: 1,
                k: libc::SYS_clone3 as u32,
            },
            seccompiler::sock_filter {
                code: 0x06,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
            },
        ],
    );
    seccompiler::apply_filter_all_threads(&program).unwrap();
}

fn tmpdirs_of(pid: u32) -> Vec<String> {
    let prefix = format!("eugene-shell-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect()
}

/// The agent process: run by [`run`] in a process of its own.
#[test]
#[ignore = "run by the tests of this binary in a fresh process"]
fn agent_process() {
    let plan: Value = serde_json::from_str(&std::env::var(PLAN_VAR).unwrap()).unwrap();
    if let Some(nofile) = plan["nofile"].as_u64() {
        let limit = libc::rlimit {
            rlim_cur: nofile,
            rlim_max: nofile,
        };
        // SAFETY: setrlimit reads `limit`.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    }
    if plan["no_user_namespaces"].as_bool().unwrap() {
        forbid_user_namespaces();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pid = std::process::id();
    let mut config = ShellConfig::default();
    if let Some(max) = plan["max_processes"].as_u64() {
        config.max_processes = max as usize;
    }
    if plan["required"].as_bool().unwrap() {
        config.confinement = Confinement::Required;
    }

    let ctx = SkillContext::new(plan["workspace"].as_str().unwrap()).with_extension(config);
    let before = own_state();
    let mut answers = Vec::new();
    for command in plan["commands"].as_array().unwrap() {
        let command = command
            .as_str()
            .unwrap()
            .replace("{agent}", &pid.to_string());
        let args = json!({ "command": command, "timeout_ms": plan["timeout_ms"] });
        let answer = runtime.block_on(common::call(&ctx, "run_shell", args));
        answers.push(json!([answer.is_error, answer.text]));
    }
    let after = own_state();
    let report = json!({
        "pid": pid,
        "answers": answers,
        "before": before,
        "after": after,
        "tmpdirs_left": tmpdirs_of(pid),
    });
    println!("=== report\n{report}");
}
