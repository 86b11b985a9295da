//! FIFOs, sockets and devices where a file was expected. Opening a FIFO for reading waits for a
//! writer, forever if none comes, and opening a terminal can make it the process's controlling
//! terminal; every file is therefore opened non-blocking (and `O_NOCTTY`) first, and checked to be
//! a regular file after.
//!
//! The race: a thread exchanges a regular file and a FIFO (`renameat2(RENAME_EXCHANGE)`, atomic,
//! so the name always exists) in a loop while the skills read the file, as another process on the
//! machine could. Every call must return, with the file's content or an error that says what the
//! path is. The calls run on a runtime of their own under a timeout, so a call stuck in `open`
//! fails the test instead of hanging it (the runtime is then shut down without waiting for its
//! threads).
//!
//! Device nodes can only be made with `CAP_MKNOD`; without it, that test says so and passes. The
//! terminal case (`O_NOCTTY`) is not attacked: the node of a pseudo-terminal made outside
//! `/dev/pts` cannot be opened at all (`EIO`), and a real terminal belongs to the machine.

use crate::common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use agent_core::SkillContext;
use agent_std_tools::sandbox::Workspace;
use common::{Answer, call, put};
use serde_json::{Value, json};

/// How long one call may take before it counts as stuck: far more than a read of a small file
/// needs on a loaded machine.
const STUCK_AFTER: Duration = Duration::from_secs(20);

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

fn mkfifo(path: &Path) {
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path(path).as_ptr(), 0o644) }, 0);
}

/// Exchanges the two names of each pair, over and over, until stopped.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(pairs: &[(PathBuf, PathBuf)]) -> Swapper {
        let pairs: Vec<(CString, CString)> =
            pairs.iter().map(|(a, b)| (c_path(a), c_path(b))).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let thread = std::thread::spawn({
            let (stop, swaps) = (stop.clone(), swaps.clone());
            move || {
                while !stop.load(Ordering::Relaxed) {
                    for (a, b) in &pairs {
                        // SAFETY: valid NUL-terminated paths; AT_FDCWD with absolute paths.
                        let done = unsafe {
                            libc::syscall(
                                libc::SYS_renameat2,
                                libc::AT_FDCWD,
                                a.as_ptr(),
                                libc::AT_FDCWD,
                                b.as_ptr(),
                                libc::RENAME_EXCHANGE,
                            )
                        };
                        assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    /// Stops exchanging; returns how many exchanges were made.
    fn stop(&mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.swaps.load(Ordering::Relaxed)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A reader stuck in `open` on one of `names` (a FIFO by now) is let go: opening it for reading
/// and writing (which never waits on Linux) gives it the writer it waits for, and closing it
/// again an end of file.
fn release(names: &[PathBuf]) {
    use std::os::unix::fs::OpenOptionsExt;
    for name in names {
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(name);
    }
}

/// The answers of `rounds` rounds of `calls`, each call under [`STUCK_AFTER`]; panics, naming
/// the call, at the first that does not return.
fn run_rounds(
    ctx: &SkillContext,
    pairs: &[(PathBuf, PathBuf)],
    calls: &[(&str, Value)],
    rounds: usize,
) -> Vec<(String, Answer)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut swapper = Swapper::start(pairs);
    let mut answers = Vec::new();
    let mut stuck = None;
    'rounds: for round in 0..rounds {
        for (name, args) in calls {
            let answer = runtime.block_on(async {
                tokio::time::timeout(STUCK_AFTER, call(ctx, name, args.clone())).await
            });
            match answer {
                Ok(answer) => answers.push((name.to_string(), answer)),
                Err(_) => {
                    stuck = Some(format!("{name} {args} (round {round})"));
                    break 'rounds;
                }
            }
        }
    }
    let swaps = swapper.stop();
    let names: Vec<PathBuf> = pairs
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    release(&names);
    runtime.shutdown_background();
    if let Some(stuck) = stuck {
        panic!(
            "a call did not return within {STUCK_AFTER:?}: {stuck}, after {} calls that did and \
             {swaps} exchanges",
            answers.len()
        );
    }
    assert!(swaps > 0, "the names were never exchanged");
    answers
}

#[test]
fn read_file_and_search_files_return_while_a_fifo_is_swapped_in_and_out() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "target.txt", "needle\n");
    let (file, fifo) = (tmp.path().join("target.txt"), tmp.path().join("pipe"));
    mkfifo(&fifo);
    let ctx = SkillContext::new(tmp.path());
    let answers = run_rounds(
        &ctx,
        &[(file, fifo)],
        &[
            ("read_file", json!({"path": "target.txt"})),
            // The walk sees a file, then opens it.
            ("search_files", json!({"pattern": "needle"})),
            // One file named: checked, then opened.
            (
                "search_files",
                json!({"pattern": "needle", "path": "target.txt"}),
            ),
        ],
        120,
    );
    assert_eq!(answers.len(), 360);
    let mut read = 0;
    for (name, answer) in &answers {
        let text = &answer.text;
        match name.as_str() {
            "read_file" if !answer.is_error => {
                assert_eq!(text, "needle");
                read += 1;
            }
            "read_file" => assert_eq!(
                text,
                "`target.txt` is not a regular file but a FIFO (a named pipe); read_file reads \
                 files only"
            ),
            // Named, a FIFO is refused.
            _ if answer.is_error => assert_eq!(
                text,
                "`target.txt` is not a regular file but a FIFO (a named pipe); search_files \
                 searches files and directories"
            ),
            // Met by the walk, it is skipped: the file is found under either name, or not at all
            // if the walk saw each name while it was the FIFO.
            _ => assert!(
                ["target.txt:1:needle", "pipe:1:needle", "No matches"]
                    .iter()
                    .any(|t| text.starts_with(t)),
                "{text}"
            ),
        }
    }
    // Both outcomes happen (each name is a FIFO about half of the time).
    assert!(read > 0, "{answers:?}");
}

#[test]
fn list_dir_and_search_files_return_while_a_fifo_is_swapped_in_for_an_ignore_file() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "logs/.gitignore", "hidden.txt\n");
    put(tmp.path(), "logs/hidden.txt", "needle\n");
    put(tmp.path(), "logs/kept.txt", "needle\n");
    let (file, fifo) = (
        tmp.path().join("logs/.gitignore"),
        tmp.path().join("logs/.pipe"),
    );
    mkfifo(&fifo);
    let ctx = SkillContext::new(tmp.path());
    let answers = run_rounds(
        &ctx,
        &[(file, fifo)],
        &[
            ("list_dir", json!({"path": "logs"})),
            ("search_files", json!({"pattern": "needle", "path": "logs"})),
        ],
        200,
    );
    assert_eq!(answers.len(), 400);
    for (name, answer) in &answers {
        let text = answer.expect_ok();
        // The rules apply when the file was read, and not when a FIFO was met instead.
        let allowed: &[&str] = match name.as_str() {
            "list_dir" => &["kept.txt", "hidden.txt\nkept.txt"],
            _ => &[
                "logs/kept.txt:1:needle",
                "logs/hidden.txt:1:needle\nlogs/kept.txt:1:needle",
            ],
        };
        assert!(allowed.contains(&text), "{name}: {text}");
    }
}

#[test]
fn apply_patch_returns_while_a_fifo_is_swapped_in_for_the_file_it_updates() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "target.txt", "needle\n");
    let (file, fifo) = (tmp.path().join("target.txt"), tmp.path().join("pipe"));
    mkfifo(&fifo);
    let ctx = SkillContext::new(tmp.path());
    // The context does not match, so the file is read and nothing is written.
    let patch = "*** Begin Patch\n*** Update File: target.txt\n-absent\n+x\n*** End Patch";
    let answers = run_rounds(
        &ctx,
        &[(file, fifo)],
        &[("apply_patch", json!({ "patch": patch }))],
        200,
    );
    assert_eq!(answers.len(), 200);
    for (_, answer) in &answers {
        let text = answer.err();
        assert!(
            text.contains("absent")
                || text.contains("`target.txt` is not a regular file but a FIFO (a named pipe)"),
            "{text}"
        );
    }
}

#[test]
fn remember_and_recall_return_while_a_fifo_is_swapped_in_for_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = SkillContext::new(tmp.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = runtime.block_on(call(&ctx, "remember", json!({"key": "k", "value": "v"})));
    first.expect_ok();
    drop(runtime);
    let (file, fifo) = (
        tmp.path().join(".agent/memory.redb"),
        tmp.path().join(".agent/pipe"),
    );
    mkfifo(&fifo);
    let answers = run_rounds(
        &ctx,
        &[(file, fifo)],
        &[
            ("recall", json!({"key": "k"})),
            ("remember", json!({"key": "k", "value": "v"})),
        ],
        100,
    );
    // Every call returned; each answer is the value, or says what the path is (how many of each
    // depends on the scheduling: the store is written to disk on every `remember`).
    assert_eq!(answers.len(), 200);
    for (name, answer) in &answers {
        let text = &answer.text;
        match (name.as_str(), answer.is_error) {
            ("recall", false) => assert_eq!(text, "v"),
            ("remember", false) => assert!(text.starts_with("Remembered `k`"), "{text}"),
            // Seen before opening, or once opened: either way, said so, and redb never gets it.
            _ => assert!(
                text.starts_with(
                    "`.agent/memory.redb` is not a regular file but a FIFO (a named pipe), so the \
                     memory store cannot be kept there"
                ),
                "{name}: {text}"
            ),
        }
    }
}

// ---------------------------------------------------------------- in place from the start

/// Runs `work` on a thread of its own and waits up to [`STUCK_AFTER`] for it; panics if it does
/// not return by then (the thread is left behind, stuck).
fn returns<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(STUCK_AFTER)
        .unwrap_or_else(|_| panic!("{what} did not return within {STUCK_AFTER:?}"))
}

#[test]
fn the_workspace_reads_and_opens_refuse_a_fifo_without_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    mkfifo(&tmp.path().join("pipe"));
    let ws = Arc::new(Workspace::open(tmp.path()).unwrap());
    let read = returns("Workspace::read", {
        let ws = ws.clone();
        move || ws.read("pipe").map(|_| ()).map_err(|e| e.to_string())
    });
    assert_eq!(
        read.unwrap_err(),
        "`pipe` is not a regular file but a FIFO (a named pipe); only regular files are read or \
         written"
    );
    let opened = returns("Workspace::open_file", move || {
        ws.open_file("pipe").map(|_| ()).map_err(|e| e.to_string())
    });
    assert!(opened.unwrap_err().contains("but a FIFO"));
}

#[tokio::test]
async fn a_unix_socket_is_named_as_one_and_not_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(tmp.path().join("sock")).unwrap();
    let ctx = SkillContext::new(tmp.path());
    // Opening a socket fails with ENXIO, which says nothing of what it is.
    let answer = call(&ctx, "read_file", json!({"path": "sock"})).await;
    assert_eq!(
        answer.err(),
        "`sock` is not a regular file but a Unix socket; read_file reads files only"
    );
    let ws = Workspace::open(tmp.path()).unwrap();
    assert_eq!(
        ws.read("sock").unwrap_err().to_string(),
        "`sock` is not a regular file but a Unix socket; only regular files are read or written"
    );
    let answer = call(
        &ctx,
        "search_files",
        json!({"pattern": "x", "path": "sock"}),
    )
    .await;
    assert!(
        answer.err().contains("but a Unix socket"),
        "{}",
        answer.text
    );
}

/// Makes a character device node `name` in `dir` for device `rdev`; `false` where this process
/// may not (creating device nodes takes `CAP_MKNOD`).
fn mknod_char(dir: &Path, name: &str, rdev: libc::dev_t) -> bool {
    let path = c_path(&dir.join(name));
    // SAFETY: a valid NUL-terminated path.
    let made = unsafe { libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, rdev) };
    if made != 0 {
        eprintln!(
            "skipped: cannot create a device node ({})",
            std::io::Error::last_os_error()
        );
    }
    made == 0
}

#[tokio::test]
async fn a_device_node_is_refused_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    // /dev/null's numbers: read, it would look like an empty file.
    if !mknod_char(tmp.path(), "null", libc::makedev(1, 3)) {
        return;
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    assert_eq!(
        ws.read("null").unwrap_err().to_string(),
        "`null` is not a regular file but a character device; only regular files are read or \
         written"
    );
    let ctx = SkillContext::new(tmp.path());
    let answer = call(&ctx, "read_file", json!({"path": "null"})).await;
    assert!(
        answer.err().contains("but a character device"),
        "{}",
        answer.text
    );
}
