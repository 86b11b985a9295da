//! `eugene --attach FILE` as a user meets it: the real example binary as a child process, its
//! model an OpenAI-compatible loopback server that records each request. A file that can be sent
//! goes with the question; one that cannot (missing, 200 MB, a decompression bomb, of no known
//! type) is refused with its name and exit status 2 before the server hears anything.
//!
//! Waits are bounded by a hang guard that fails the test; nothing here measures time.

mod support;

use std::path::Path;

use eugene::media::tiny_png;
use support::{Finished, Server, eugene, run, text_answer};

/// `tiny_png()` in base64, as a run's state keeps a part's bytes.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

/// `eugene --attach FILE... QUESTION` against `server`, in `workspace`.
fn ask_with(server: &Server, workspace: &Path, files: &[&Path], extra: &[&str]) -> Finished {
    let mut cmd = eugene();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .arg("--workspace")
        .arg(workspace);
    for file in files {
        cmd.arg("--attach").arg(file);
    }
    run(cmd.args(extra).arg("What is in the picture?"))
}

/// Asserts eugene refused before asking the model: status 2, `message` on stderr, no request.
fn assert_refused(done: &Finished, server: &Server, message: &str) {
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains(message), "{}", done.stderr);
    assert!(
        server.received().is_empty(),
        "nothing is sent when an attachment is refused"
    );
}

#[test]
fn an_attached_image_goes_with_the_question() {
    let server = Server::start([text_answer("One transparent pixel.")]);
    let workspace = tempfile::tempdir().unwrap();
    // Named as data; the bytes say PNG.
    let file = workspace.path().join("pixel.dat");
    std::fs::write(&file, tiny_png()).unwrap();
    let done = ask_with(&server, workspace.path(), &[&file], &["--session", "pics"]);
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(done.stdout.contains("One transparent pixel."), "{done:?}");
    assert!(
        done.stderr.contains(&format!(
            "attached {}: image/png, 1×1 pixels, 67 bytes",
            file.display()
        )),
        "{}",
        done.stderr
    );
    let requests = server.received();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].json().to_string();
    assert!(sent.contains("What is in the picture?"));
    // On the wire: the very bytes of the file, as the format carries an image.
    assert!(
        sent.contains(PNG_BASE64),
        "the request has no image: {sent:.600}"
    );
    // The goal the model was given carries the image: the session keeps the run's transcript,
    // the goal's parts with it (bytes in base64, the type read from them, the file's name).
    let store = support::session_files(workspace.path()).pop().unwrap();
    let kept = String::from_utf8_lossy(&std::fs::read(store).unwrap()).into_owned();
    assert!(
        kept.contains(&format!(
            r#"{{"role":"user","content":"What is in the picture?","parts":[{{"type":"media","media_type":"image/png","data":"{PNG_BASE64}","name":"pixel.dat"}}]}}"#
        )),
        "the session's goal has no image part"
    );
}

#[test]
fn a_200_mb_file_is_refused_from_its_size_before_anything_is_sent() {
    let server = Server::start([text_answer("never")]);
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("huge.png");
    std::fs::write(&file, tiny_png()).unwrap();
    // Sparse: no disk, and no memory unless eugene read it.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(200 * 1024 * 1024)
        .unwrap();
    let done = ask_with(&server, workspace.path(), &[&file], &[]);
    assert_refused(
        &done,
        &server,
        &format!(
            "--attach {}: 209715200 bytes, over the limit of 20971520 bytes for media; nothing was read",
            file.display()
        ),
    );
}

#[test]
fn a_decompression_bomb_is_refused() {
    let server = Server::start([text_answer("never")]);
    let workspace = tempfile::tempdir().unwrap();
    // A PNG whose header claims 100,000 × 100,000 pixels: tens of gigabytes decoded.
    let mut bomb = tiny_png().to_vec();
    bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let file = workspace.path().join("bomb.png");
    std::fs::write(&file, bomb).unwrap();
    let done = ask_with(&server, workspace.path(), &[&file], &[]);
    assert_refused(&done, &server, "100000×100000 pixels, over the limit");
    assert!(done.stderr.contains("bomb.png"), "{}", done.stderr);
}

#[test]
fn a_missing_file_or_one_of_no_known_type_is_refused_by_name() {
    let server = Server::start([text_answer("never")]);
    let workspace = tempfile::tempdir().unwrap();
    let good = workspace.path().join("pixel.png");
    std::fs::write(&good, tiny_png()).unwrap();
    let missing = workspace.path().join("missing.png");
    // The first file is fine; the second does not exist: nothing is sent.
    let done = ask_with(&server, workspace.path(), &[&good, &missing], &[]);
    assert_refused(
        &done,
        &server,
        &format!("--attach {}: cannot be read: ", missing.display()),
    );

    let exe = workspace.path().join("photo.jpg");
    std::fs::write(
        &exe,
        b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00",
    )
    .unwrap();
    let done = ask_with(&server, workspace.path(), &[&exe], &[]);
    assert_refused(&done, &server, "cannot be recognized");
    assert!(done.stderr.contains("photo.jpg"), "{}", done.stderr);
}

#[test]
fn attach_needs_a_question() {
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("pixel.png");
    std::fs::write(&file, tiny_png()).unwrap();
    let done = run(eugene().arg("--attach").arg(&file));
    assert_eq!(done.code(), Some(2), "{done:?}");
    assert!(done.stderr.contains("<QUESTION>"), "{}", done.stderr);
}

#[test]
fn help_describes_attach_for_questions_and_eval_datasets() {
    let done = run(eugene().arg("--help"));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(done.stdout.contains("--attach <FILE>"), "{}", done.stdout);
    assert!(
        done.stdout
            .contains("an --attach\n       file that is missing"),
        "exit status 2 names --attach:\n{}",
        done.stdout
    );
    let done = run(eugene().args(["eval", "--help"]));
    assert_eq!(done.code(), Some(0), "{done:?}");
    assert!(
        done.stdout.contains("attach: [map.png]")
            && done.stdout.contains("relative to the dataset file"),
        "{}",
        done.stdout
    );
}
