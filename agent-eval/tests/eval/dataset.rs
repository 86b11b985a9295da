//! Datasets read from real files: the errors name the file, line and column; bounds hold.

use agent_eval::{Dataset, DatasetError};

#[test]
fn a_malformed_dataset_file_is_an_error_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.yaml");
    std::fs::write(
        &path,
        "cases:\n  - name: capital\n    goal: The capital of France?\n    checks:\n      - contains: Paris\n      - rubrik: Names Paris.\n",
    )
    .unwrap();
    let error = Dataset::load(&path).unwrap_err().to_string();
    let place = format!("{}:6:9: ", path.display());
    assert!(error.starts_with(&place), "{error}");
    assert!(
        error.contains("cases[0].checks[1]") && error.contains("unknown variant `rubrik`"),
        "{error}"
    );
    assert!(
        error.contains("equals, contains, json_schema") || error.contains("`equals`"),
        "{error}"
    );
}

#[test]
fn a_dataset_file_takes_its_name_from_the_file_unless_it_names_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smoke.yaml");
    std::fs::write(&path, "cases:\n  - name: a\n    goal: Go.\n").unwrap();
    assert_eq!(Dataset::load(&path).unwrap().name(), "smoke");
    std::fs::write(&path, "name: nightly\ncases:\n  - name: a\n    goal: Go.\n").unwrap();
    assert_eq!(Dataset::load(&path).unwrap().name(), "nightly");
}

#[test]
fn a_file_over_the_bound_is_refused_and_a_missing_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.yaml");
    let file = std::fs::File::create(&path).unwrap();
    // Sparse: the size is there without writing it.
    file.set_len(agent_eval::dataset::MAX_FILE_BYTES + 1)
        .unwrap();
    let error = Dataset::load(&path).unwrap_err();
    assert!(matches!(error, DatasetError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("huge.yaml"), "{error}");

    let error = Dataset::load(dir.path().join("none.yaml"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("none.yaml: cannot be read"), "{error}");

    std::fs::write(&path, "").unwrap();
    let error = Dataset::load(&path).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}:", path.display())),
        "{error}"
    );
}
