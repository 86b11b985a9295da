//! `run_shell`: `sh -c` in the workspace root, in a process group of its own.
//!
//! - **Time limit**: `timeout_ms` (default 120 s, at most 600 s; see [`ShellConfig`]). When it
//!   passes, the whole process group is killed with `SIGKILL` (not just `sh`: a build's compiler
//!   processes too), and the result says so, with the exit status. Cancelling the run, or the
//!   registry dropping the call, kills the group as well.
//! - **Output**: stdout and stderr are read concurrently while the command runs. Each is kept
//!   within [`ShellConfig::max_output_chars`]: its head and tail, with the middle cut and
//!   counted (`[... 12345 characters cut ...]`); memory stays bounded whatever the command prints.
//! - **Secrets**: the child's environment is the agent's without variables named `*_API_KEY`,
//!   `*_TOKEN`, `*_SECRET` (and `*_SECRET_KEY`, `*_ACCESS_KEY`, `*_PASSWORD`), so a command the
//!   model writes cannot print the keys the agent runs with. See [`is_secret_env_name`].
//! - Standard input is empty (`/dev/null`): a command that waits for input ends instead of hanging.
//! - A command that exits while a background process it started still holds stdout or stderr is
//!   reported once it exits (after a short grace period); the background process is left running.

use std::collections::VecDeque;
use std::process::Stdio;
use std::time::Duration;

use agent_core::{SkillContext, SkillError, skill};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::sandbox::Workspace;

/// Limits of `run_shell`. Put one in the context with [`SkillContext::with_extension`]; without
/// one, [`ShellConfig::default`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The time limit when the call gives no `timeout_ms`. Default 120 s.
    pub default_timeout: Duration,
    /// The largest `timeout_ms` a call may ask for. Default 600 s.
    pub max_timeout: Duration,
    /// How many characters of stdout, and as many of stderr, the result keeps (half from the
    /// start, half from the end). Default 7,500, so both fit the registry's default budget.
    pub max_output_chars: usize,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            max_output_chars: 7_500,
        }
    }
}

/// How long output is still read after the command exited (a background process may hold the
/// pipes) or after its group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Whether an environment variable is withheld from commands: names that are, or end in,
/// `API_KEY`, `TOKEN`, `SECRET`, `SECRET_KEY`, `ACCESS_KEY` or `PASSWORD` (any case).
///
/// ```
/// use agent_std_tools::shell::is_secret_env_name;
/// assert!(is_secret_env_name("OPENAI_API_KEY"));
/// assert!(is_secret_env_name("GITHUB_TOKEN"));
/// assert!(is_secret_env_name("client_secret"));
/// assert!(!is_secret_env_name("PATH"));
/// assert!(!is_secret_env_name("TOKENIZERS_PARALLELISM"));
/// ```
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "API_KEY",
        "TOKEN",
        "SECRET",
        "SECRET_KEY",
        "ACCESS_KEY",
        "PASSWORD",
    ]
    .iter()
    .any(|s| upper == *s || upper.ends_with(&format!("_{s}")))
}

/// Run a shell command (`sh -c`) in the workspace root and return its exit code, stdout and
/// stderr. Long outputs keep their beginning and end. The command is killed, with every process
/// it started, when the time limit passes. Standard input is empty; API keys and tokens are not in
/// its environment.
///
/// # Arguments
/// * `command` - The command line, e.g. `cargo test 2>&1 | tail -50`.
/// * `timeout_ms` - Time limit in milliseconds. Default 120000 (2 minutes), at most 600000.
#[skill(
    destructive,
    search_hint = "sh bash terminal command execute program build test"
)]
pub async fn run_shell(
    ctx: &SkillContext,
    command: String,
    timeout_ms: Option<u64>,
) -> Result<String, SkillError> {
    let config = ctx.extension::<ShellConfig>().cloned().unwrap_or_default();
    let timeout = match timeout_ms {
        None => config.default_timeout,
        Some(0) => return Err(SkillError::bad_args("timeout_ms", "must be at least 1")),
        Some(ms) if Duration::from_millis(ms) > config.max_timeout => {
            return Err(SkillError::bad_args(
                "timeout_ms",
                format!("must be at most {}", config.max_timeout.as_millis()),
            ));
        }
        Some(ms) => Duration::from_millis(ms),
    };
    let root = Workspace::from_context(ctx)?.root().to_path_buf();

    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&command)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (name, _) in std::env::vars_os() {
        if is_secret_env_name(&name.to_string_lossy()) {
            cmd.env_remove(name);
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| SkillError::tool(format!("could not start `sh`: {e}")))?;
    let mut group = GroupGuard(child.id().map(|pid| pid as libc::pid_t));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let mut out = Capture::new(config.max_output_chars);
    let mut err = Capture::new(config.max_output_chars);

    let run = async {
        let status = child.wait();
        let readers =
            async { tokio::join!(out.read_from(&mut stdout), err.read_from(&mut stderr)) };
        tokio::pin!(status, readers);
        let mut drained = false;
        let status = tokio::select! {
            status = &mut status => status,
            _ = &mut readers => {
                drained = true;
                status.await
            }
        };
        if !drained {
            drained = tokio::time::timeout(DRAIN_GRACE, &mut readers)
                .await
                .is_ok();
        }
        (status, drained)
    };
    let finished = tokio::time::timeout(timeout, run).await;

    let mut report = String::new();
    match finished {
        Ok((status, drained)) => {
            // Background processes the command left running are its own business.
            group.disarm();
            let status = status.map_err(|e| SkillError::tool(format!("waiting for `sh`: {e}")))?;
            report.push_str(&format!("exit code: {}\n", describe(status)));
            if !drained {
                report.push_str("[the command exited but a background process it started still holds its output; output after the exit is not shown]\n");
            }
        }
        Err(_) => {
            group.kill();
            let status = tokio::time::timeout(DRAIN_GRACE * 2, child.wait()).await;
            let _ = tokio::time::timeout(DRAIN_GRACE, async {
                tokio::join!(out.read_from(&mut stdout), err.read_from(&mut stderr))
            })
            .await;
            report.push_str(&format!(
                "timed out after {}: the command and every process in its group were killed\n",
                humanize(timeout)
            ));
            let status = match status {
                Ok(Ok(status)) => describe(status),
                _ => "unknown (the process did not exit after SIGKILL)".to_owned(),
            };
            report.push_str(&format!("exit code: {status}\n"));
        }
    }
    let (out, err) = (out.render(), err.render());
    if out.is_empty() && err.is_empty() {
        report.push_str("(no output)");
    }
    if !out.is_empty() {
        report.push_str(&format!("[stdout]\n{out}\n"));
    }
    if !err.is_empty() {
        report.push_str(&format!("[stderr]\n{err}\n"));
    }
    Ok(report.trim_end().to_owned())
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("none (killed by signal {signal})"),
        (None, None) => "none".to_owned(),
    }
}

fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Kills the command's process group when dropped, unless disarmed: a timeout, a cancelled run
/// and a dropped call all end every process the command started.
struct GroupGuard(Option<libc::pid_t>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: `killpg` has no memory-safety preconditions; the group id is the child's pid,
            // which leads its own group (`process_group(0)`).
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The head and tail of a stream, with everything in between counted but not kept.
struct Capture {
    max_chars: usize,
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total_bytes: usize,
    total_chars: usize,
}

impl Capture {
    fn new(max_chars: usize) -> Self {
        let head_chars = max_chars / 2;
        let tail_chars = max_chars - head_chars;
        Capture {
            max_chars,
            head: Vec::new(),
            // Up to 4 bytes a character, so the kept bytes always hold enough characters.
            head_cap: head_chars * 4,
            tail: VecDeque::new(),
            tail_cap: tail_chars * 4,
            total_bytes: 0,
            total_chars: 0,
        }
    }

    async fn read_from<R: AsyncRead + Unpin>(&mut self, reader: &mut R) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => self.push(&buf[..n]),
            }
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total_bytes += bytes.len();
        // Characters are the bytes that do not continue a UTF-8 sequence.
        self.total_chars += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let room = self.head_cap.saturating_sub(self.head.len());
        let (to_head, to_tail) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(to_tail);
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
        }
    }

    fn render(&self) -> String {
        let head_chars = self.max_chars / 2;
        let tail_chars = self.max_chars - head_chars;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.total_bytes == self.head.len() + tail.len() {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let text = String::from_utf8_lossy(&all);
            let text = text.trim_end_matches('\n');
            let count = text.chars().count();
            if count <= self.max_chars {
                return text.to_owned();
            }
            let head: String = text.chars().take(head_chars).collect();
            let tail: String = text.chars().skip(count - tail_chars).collect();
            return cut(&head, &tail, count - head_chars - tail_chars);
        }
        let head: String = String::from_utf8_lossy(&self.head)
            .chars()
            .take(head_chars)
            .collect();
        let tail_text = String::from_utf8_lossy(&tail);
        let tail_text = tail_text.trim_end_matches('\n');
        let tail_count = tail_text.chars().count();
        let tail: String = tail_text
            .chars()
            .skip(tail_count.saturating_sub(tail_chars))
            .collect();
        let kept = head.chars().count() + tail.chars().count();
        cut(&head, &tail, self.total_chars.saturating_sub(kept))
    }
}

fn cut(head: &str, tail: &str, cut: usize) -> String {
    format!("{head}\n[... {cut} characters cut ...]\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Capture::new(100);
        c.push(b"hello\n");
        assert_eq!(c.render(), "hello");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_cut() {
        let mut c = Capture::new(10);
        for _ in 0..1000 {
            c.push(b"abcdefghij");
        }
        let text = c.render();
        assert!(
            text.starts_with("abcde\n[... 9990 characters cut ...]\n"),
            "{text}"
        );
        assert!(text.ends_with("fghij"), "{text}");
    }

    #[test]
    fn multibyte_characters_are_counted_as_characters() {
        let mut c = Capture::new(4);
        c.push("ééééé".repeat(100).as_bytes());
        let text = c.render();
        assert!(text.contains("[... 496 characters cut ...]"), "{text}");
    }
}
