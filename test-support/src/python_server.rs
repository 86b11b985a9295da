//! A Python test program that serves on loopback ([`PythonServer`]): started with the log file
//! it writes each request to, ready once it prints `READY URL`, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A running Python server program (`python SCRIPT LOG`), killed when dropped.
pub struct PythonServer {
    child: Child,
    /// The URL it printed on its first line (`READY URL`).
    pub url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl PythonServer {
    /// Starts `script` with a Python that has the `mcp` package ([`crate::provision::python_with_mcp`],
    /// under `target_tmpdir`), giving it a fresh log file, and waits for its `READY URL` line.
    /// Panics (failing the test) saying what it printed when it does not start.
    pub fn start(script: &Path, target_tmpdir: &str) -> PythonServer {
        let python = crate::provision::python_with_mcp(target_tmpdir);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let log = dir.path().join("requests.jsonl");
        let mut child = Command::new(python)
            .arg(script)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python starts");
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let url = match line.strip_prefix("READY ") {
            Some(url) => url.trim().to_owned(),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} did not start: it printed {line:?}", script.display())
            }
        };
        PythonServer {
            child,
            url,
            log,
            _dir: dir,
        }
    }

    /// Every line the program logged, as JSON.
    pub fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line in the server's log"))
            .collect()
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
