//! The console's edit check (`src/console/schema.js`), run by node over a table of cases
//! (`tests/schema_check.cjs`): schemars' shapes (`$defs` and `$ref`, `enum`, `oneOf`, nullable
//! types, `uint32` with `minimum: 0`, nested structs and lists of them), `$ref` chains and
//! cycles, an unresolved reference, a bad pattern, `oneOf` matching twice, string lengths in code
//! points. Node is required: without it this test fails and says to install it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// How many cases the table has at least: a table emptied by mistake, or a harness that ran
/// nothing, fails.
const AT_LEAST: u64 = 80;

#[tokio::test]
async fn the_console_checks_edits_against_the_whole_schema() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema_check.cjs");
    let run = tokio::process::Command::new("node")
        .arg(&script)
        .kill_on_drop(true)
        .output();
    // A check that loops on a cyclic schema never ends: a bound on liveness, not a timing.
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the table ran to its end (a check that never ends is a failure)")
        .unwrap_or_else(|e| {
            panic!(
                "node could not start ({e}): install Node.js 18 or later \
                 (apt-get install nodejs, or https://nodejs.org)"
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("the table's summary is JSON ({e}): {stdout}\n{stderr}"));
    eprintln!("{summary}");
    assert!(
        output.status.success(),
        "cases the check got wrong: {:#}\n{stderr}",
        summary["failed"]
    );
    assert_eq!(summary["failed"], serde_json::json!([]), "{summary}");
    let table = summary["table"].as_u64().expect("the table's size");
    assert_eq!(summary["ran"].as_u64(), Some(table), "every case ran");
    assert!(table >= AT_LEAST, "{table} cases, fewer than {AT_LEAST}");
}
