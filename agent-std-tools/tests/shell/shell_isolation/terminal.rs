//! The terminal, the kernel log, devices and Unix sockets: ways out of the sandbox that go
//! through a file the command makes or names.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_core::SkillContext;
use agent_std_tools::ShellConfig;
use serde_json::json;

use super::agent::{self, Plan, Start};
use super::common::call;
use super::require_root;

/// A pseudo-terminal: the master (the terminal emulator's side) and the slave (the shell's).
struct Pty {
    master: OwnedFd,
    slave: OwnedFd,
}

fn open_pty() -> Pty {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors, which we then own.
    unsafe {
        assert_eq!(
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            ),
            0,
            "openpty: {}",
            std::io::Error::last_os_error()
        );
        Pty {
            master: OwnedFd::from_raw_fd(master),
            slave: OwnedFd::from_raw_fd(slave),
        }
    }
}

/// A command that types `line` into the terminal at `path`, one `TIOCSTI` per byte.
fn inject(path: &str, line: &str) -> String {
    format!(
        "perl -e 'open(my $t, \"+<\", $ARGV[0]) or die \"open: $!\\n\"; \
         for my $c (split //, \"$ARGV[1]\\n\") {{ ioctl($t, {tiocsti}, $c) or die \"ioctl: $!\\n\" }} \
         print \"INJECTED\\n\"' {path} '{line}'",
        tiocsti = libc::TIOCSTI
    )
}

/// What the user's own shell does with the terminal once the agent has exited: a real `sh`
/// reads the terminal's input (anything typed into it, then `exit`).
fn users_shell_runs(pty: &Pty) {
    let stdin = pty.slave.try_clone().unwrap();
    let mut shell = Command::new("sh")
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // SAFETY: writes a constant to the master we own.
    unsafe {
        libc::write(pty.master.as_raw_fd(), b"exit\n".as_ptr().cast(), 5);
    }
    for _ in 0..200 {
        if shell.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    shell.kill().unwrap();
    panic!("the shell on the terminal did not exit");
}

/// Runs `commands` in an agent process whose controlling terminal is a real pty, then the
/// user's shell on that terminal; returns the agent's answers and whether the line typed by the
/// command ran (it creates `pwned` outside the workspace).
fn attack_the_terminal(commands: impl Fn(&str, &str) -> Vec<String>) -> (Vec<String>, bool) {
    let pty = open_pty();
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let pwned = outside.path().join("pwned");
    let line = format!("touch {}", pwned.display());
    let rdev = std::fs::metadata(format!("/proc/self/fd/{}", pty.slave.as_raw_fd()))
        .unwrap()
        .rdev();
    let pts = format!("{} {}", libc::major(rdev), libc::minor(rdev));
    let plan = Plan {
        workspace: workspace.path().to_owned(),
        commands: commands(&line, &pts),
        timeout_ms: 20_000,
        ..Plan::default()
    };
    let report = agent::run(
        &plan,
        Start {
            terminal: Some(pty.slave.as_raw_fd()),
            ..Start::default()
        },
    );
    users_shell_runs(&pty);
    let answers = report.answers.into_iter().map(|(_, text)| text).collect();
    (answers, pwned.exists())
}

#[test]
fn a_command_cannot_type_into_the_users_terminal() {
    require_root();
    let (answers, pwned) = attack_the_terminal(|line, pts| {
        vec![
            // The audit's attack: a device file for "the controlling terminal" in the
            // workspace, then one TIOCSTI per byte.
            format!("mknod t c 5 0; ls -l t; {}", inject("t", line)),
            // The terminal itself, by its own device numbers.
            format!("mknod p c {pts}; {}", inject("p", line)),
            // And by name.
            inject("/dev/tty", line),
        ]
    });
    assert!(
        !pwned,
        "a line typed by the command ran in the user's shell: {answers:#?}"
    );
    for answer in &answers {
        assert!(!answer.contains("INJECTED"), "{answer}");
    }
    assert!(
        answers[0].contains("mknod: t: Operation not permitted"),
        "{}",
        answers[0]
    );
    assert!(answers[2].contains("open: "), "{}", answers[2]);
}

#[test]
fn the_same_injection_outside_the_sandbox_reaches_the_users_shell() {
    // The control: the audit's command run directly by a process holding the terminal (as the
    // agent's commands did before they got a session of their own) types a line that the user's
    // shell then runs, so the test above would see an injection.
    let pty = open_pty();
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let pwned = outside.path().join("pwned");
    let stdin = pty.slave.try_clone().unwrap();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(inject("/dev/tty", &format!("touch {}", pwned.display())))
        .current_dir(workspace.path())
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid and ioctl are async-signal-safe; fd 0 is the terminal.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("INJECTED"),
        "{output:?}"
    );
    users_shell_runs(&pty);
    assert!(pwned.exists(), "the typed line should have run");
}

#[tokio::test]
async fn the_kernel_log_cannot_be_read() {
    require_root();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    let command = "mknod k c 1 11; head -c 300 k; echo kmsg=$?; dmesg | head -3; echo dmesg=$?; \
                   head -c 300 /proc/kmsg; echo proc=$?";
    let answer = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = answer.expect_ok();
    assert!(text.contains("mknod: k: Operation not permitted"), "{text}");
    assert!(text.contains("kmsg=1"), "{text}");
    assert!(
        text.contains("dmesg: read kernel buffer failed: Operation not permitted"),
        "{text}"
    );
    assert!(text.contains("proc=1"), "{text}");
    assert!(!tmp.path().join("k").exists());
}

#[tokio::test]
async fn unix_sockets_by_path_are_refused_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    // Outside every folder the sandbox lets the command read.
    let secret = tempfile::tempdir().unwrap();
    let path = secret.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let command = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); \
         s.sendall(b'hello'); print('CONNECTED')\"",
        path.display()
    );
    let ctx = SkillContext::new(tmp.path());
    let refused = call(&ctx, "run_shell", json!({ "command": command })).await;
    let text = refused.expect_ok().to_owned();
    assert!(!text.contains("CONNECTED"), "{text}");
    assert!(text.contains("PermissionError"), "{text}");
    assert!(listener.accept().is_err(), "a connection arrived: {text}");

    let allowed = ctx.with_extension(ShellConfig {
        unix_sockets: true,
        ..ShellConfig::default()
    });
    let answer = call(&allowed, "run_shell", json!({ "command": command })).await;
    assert!(answer.expect_ok().contains("CONNECTED"), "{}", answer.text);
    assert!(
        listener.accept().is_ok(),
        "the control connection did not arrive"
    );
}

#[tokio::test]
async fn a_file_larger_than_the_quota_is_cut_with_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path()).with_extension(ShellConfig {
        max_file_size: Some(1 << 20),
        ..ShellConfig::default()
    });
    let answer = call(
        &ctx,
        "run_shell",
        json!({ "command": "head -c 3000000 /dev/zero > big; echo written=$?" }),
    )
    .await;
    let text = answer.expect_ok();
    assert!(!text.contains("written=0"), "{text}");
    assert_eq!(
        std::fs::metadata(tmp.path().join("big")).unwrap().len(),
        1 << 20
    );
}
