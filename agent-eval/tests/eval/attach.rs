//! A case's `attach:` files: read with the dataset (relative to its file), bounded and checked,
//! and sent with the goal of every attempt; a file that is missing, too large, of no known type
//! or a decompression bomb is an error naming the case and the file, and nothing runs.

use agent_core::content::file::{DEFAULT_MAX_MEDIA_BYTES, MediaFileError};
use agent_core::content::{Part, tiny_png};
use agent_eval::dataset::MAX_ATTACHMENTS;
use agent_eval::{Dataset, DatasetError, Eval};
use agent_llm::{MockProvider, MockReply};

use crate::runtime;

/// A folder holding `cases.yaml` with `yaml` in it, and `files` (path, bytes) beside it.
fn dataset_dir(yaml: &str, files: &[(&str, &[u8])]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let path = dir.path().join("cases.yaml");
    std::fs::write(&path, yaml).unwrap();
    (dir, path)
}

/// The 1×1 PNG with a header claiming 100,000 × 100,000 pixels.
fn bomb_png() -> Vec<u8> {
    let mut png = tiny_png().to_vec();
    png[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    png[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    png
}

/// What loading the dataset at `path` fails with.
fn load_error(path: &std::path::Path) -> DatasetError {
    Dataset::load(path).expect_err("the dataset should be refused")
}

#[tokio::test]
async fn an_attached_png_reaches_the_model_with_the_goal_of_every_attempt() {
    let png = tiny_png();
    let (_dir, path) = dataset_dir(
        "cases:\n  - name: receipt\n    goal: What is the total?\n    attach: [scans/receipt.png]\n    repeat: 2\n    checks:\n      - equals: 42\n  - name: plain\n    goal: Say hi.\n",
        &[("scans/receipt.png", &png)],
    );
    let dataset = Dataset::load(&path).unwrap();
    let attached = dataset.cases()[0].attachments();
    assert_eq!(attached.len(), 1);
    assert_eq!(attached[0].name.as_deref(), Some("receipt.png"));
    assert!(dataset.cases()[1].attachments().is_empty());

    let model = MockProvider::new([
        MockReply::text("42"),
        MockReply::text("42"),
        MockReply::text("hi"),
    ]);
    let report = Eval::new(dataset)
        .concurrency(1)
        .run(|_| runtime(&model))
        .await
        .unwrap();
    assert!(report.passed(), "{report:#?}");

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let mut with_png = 0;
    for request in &requests {
        let goal = &request.messages[0];
        match goal.content.as_str() {
            "What is the total?" => {
                let [Part::Media(media)] = goal.parts.as_slice() else {
                    panic!("one media part: {:?}", goal.parts);
                };
                assert_eq!(&*media.media_type, "image/png");
                assert_eq!(media.bytes().unwrap().as_ref(), png.as_ref());
                with_png += 1;
            }
            "Say hi." => assert!(goal.parts.is_empty(), "{:?}", goal.parts),
            other => panic!("unexpected goal {other:?}"),
        }
    }
    assert_eq!(with_png, 2, "both attempts carry the image");
}

#[test]
fn a_file_attached_by_two_cases_is_read_once_and_shared() {
    let png = tiny_png();
    let (_dir, path) = dataset_dir(
        "cases:\n  - name: a\n    goal: One.\n    attach: [p.png]\n  - name: b\n    goal: Two.\n    attach: [p.png, p.png]\n",
        &[("p.png", &png)],
    );
    let dataset = Dataset::load(&path).unwrap();
    let first = dataset.cases()[0].attachments()[0]
        .bytes()
        .unwrap()
        .as_ptr();
    let b = dataset.cases()[1].attachments();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].bytes().unwrap().as_ptr(), first);
    assert_eq!(b[1].bytes().unwrap().as_ptr(), first);
}

#[test]
fn a_missing_attachment_names_the_case_and_the_file() {
    let (dir, path) = dataset_dir(
        "cases:\n  - name: receipt\n    goal: Total?\n    attach: [nowhere.png]\n",
        &[],
    );
    let error = load_error(&path);
    assert!(
        matches!(&error, DatasetError::Attachment { case, source, .. } if case == "receipt" && matches!(**source, MediaFileError::Io { .. })),
        "{error:?}"
    );
    let text = error.to_string();
    let missing = dir.path().join("nowhere.png");
    assert!(
        text.starts_with(&format!(
            "{}: case `receipt`: {}: cannot be read:",
            path.display(),
            missing.display()
        )),
        "{text}"
    );
}

#[test]
fn an_attachment_that_is_not_the_image_it_claims_is_refused() {
    // Named as a PNG; the bytes are a DOS executable's header (not UTF-8 text either).
    let exe: &[u8] = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00";
    let (_dir, path) = dataset_dir(
        "cases:\n  - name: photo\n    goal: What is this?\n    attach: [photo.png]\n",
        &[("photo.png", exe)],
    );
    let text = load_error(&path).to_string();
    assert!(
        text.contains("case `photo`")
            && text.contains("photo.png")
            && text.contains("cannot be recognized"),
        "{text}"
    );

    let bomb = bomb_png();
    let (_dir, path) = dataset_dir(
        "cases:\n  - name: bomb\n    goal: Describe it.\n    attach: [bomb.png]\n",
        &[("bomb.png", &bomb)],
    );
    let text = load_error(&path).to_string();
    assert!(
        text.contains("case `bomb`") && text.contains("100000×100000 pixels, over the limit"),
        "{text}"
    );
}

#[test]
fn a_huge_attachment_is_refused_from_its_size() {
    let (dir, path) = dataset_dir(
        "cases:\n  - name: huge\n    goal: Look.\n    attach: [huge.png]\n",
        &[("huge.png", &tiny_png())],
    );
    // 200 MB, sparse: no disk, and no memory unless it were read.
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("huge.png"))
        .unwrap()
        .set_len(200 * 1024 * 1024)
        .unwrap();
    let error = load_error(&path);
    assert!(
        matches!(
            &error,
            DatasetError::Attachment { source, .. } if matches!(
                **source,
                MediaFileError::TooLarge { size: 209_715_200, limit, .. } if limit == DEFAULT_MAX_MEDIA_BYTES
            )
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("nothing was read"), "{error}");
}

#[test]
fn too_many_attachments_are_refused_at_the_case() {
    let list = vec!["a.png"; MAX_ATTACHMENTS + 1].join(", ");
    let (_dir, path) = dataset_dir(
        &format!("cases:\n  - name: many\n    goal: Look.\n    attach: [{list}]\n"),
        &[],
    );
    let text = load_error(&path).to_string();
    assert!(
        text.contains(":2:") && text.contains("at most 16 files may be attached"),
        "{text}"
    );
}
