//! Cassettes that are not cassettes: each is an error naming the file and the line (and column),
//! and nothing is served. Files past the limit are refused unread; aliases and nesting cannot
//! blow a small file up.

use agent_llm::cassette::{
    Cassette, CassetteError, MAX_CASSETTE_BYTES, MAX_INTERACTIONS, MODE_VAR,
};

use crate::dir;

const GOOD_REQUEST: &str =
    "- request:\n    method: POST\n    uri: https://api.anthropic.com/v1/messages\n";
const GOOD_RESPONSE: &str = "  response:\n    status: {code: 200, message: OK}\n";

/// The error `Cassette::replay` gives for a file holding `text`, and the file's path.
async fn refused(text: &[u8]) -> (CassetteError, String) {
    let folder = dir();
    let path = folder.path().join("bad.yaml");
    std::fs::write(&path, text).unwrap();
    let error = Cassette::replay(&path).await.unwrap_err();
    // Reading changes nothing.
    assert_eq!(std::fs::read(&path).unwrap(), text);
    (error, path.display().to_string())
}

#[tokio::test]
async fn each_problem_is_named_with_its_file_line_and_column() {
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("interactions:\n{GOOD_REQUEST}  response:\n    status: {{code: 200\n"),
            ":7:1: not a cassette: ",
            "did not find expected ',' or '}'",
        ),
        (
            format!(
                "interactions:\n- request:\n    uri: https://api.anthropic.com/v1/messages\n{GOOD_RESPONSE}"
            ),
            ":3:5: not a cassette: ",
            "interactions[0].request: missing field `method`",
        ),
        (
            format!("interactions:\n{GOOD_REQUEST}  response:\n    headers: {{}}\n"),
            ":6:5: not a cassette: ",
            "interactions[0].response: missing field `status`",
        ),
        (
            format!("interactions:\n{GOOD_REQUEST}  response:\n    status: {{code: 42}}\n"),
            ":6:20: not a cassette: ",
            "interactions[0].response.status.code: 42 is not an HTTP status (100 to 999)",
        ),
        (
            format!("interactions:\n{GOOD_REQUEST}    heders: {{}}\n{GOOD_RESPONSE}"),
            ":5:5: not a cassette: ",
            "interactions[0].request: unknown field `heders`",
        ),
        (
            format!(
                "interactions:\n- request:\n    method: POST\n    uri: /v1/messages\n{GOOD_RESPONSE}"
            ),
            ":4:10: not a cassette: ",
            "interactions[0].request.uri: `/v1/messages` is not an absolute http:// or https:// URL",
        ),
        (
            format!(
                "interactions:\n- request:\n    method: 'P O S T'\n    uri: https://a.example/\n{GOOD_RESPONSE}"
            ),
            ":3:13: not a cassette: ",
            "interactions[0].request.method: `P O S T` is not an HTTP method",
        ),
        (
            format!(
                "interactions:\n{GOOD_REQUEST}    headers:\n      'bad name': [x]\n{GOOD_RESPONSE}"
            ),
            ":6:7: not a cassette: ",
            "interactions[0].request.headers: `bad name` is not a valid header name",
        ),
        (
            format!(
                "interactions:\n{GOOD_REQUEST}    headers:\n      accept: [{{a: b}}]\n{GOOD_RESPONSE}"
            ),
            ":6:16: not a cassette: ",
            "interactions[0].request.headers.accept[0]: invalid type: map, expected a header value as text",
        ),
        (
            format!(
                "interactions:\n{GOOD_REQUEST}    body: x\n    parsed_body: {{a: 1}}\n{GOOD_RESPONSE}"
            ),
            ":2:3: not a cassette: ",
            "interactions[0]: the request has both `body` and `parsed_body`; keep one",
        ),
        (
            format!("interactions:\n{GOOD_REQUEST}{GOOD_RESPONSE}    body: {{text: x}}\n"),
            ":7:11: not a cassette: ",
            "interactions[0].response.body: a response body must be `{string: TEXT}`, not `text`",
        ),
        (
            format!(
                "interactions:\n{GOOD_REQUEST}{GOOD_RESPONSE}    headers: {{content-encoding: [gzip]}}\n    body: {{string: H4sIAAAAAAAA}}\n"
            ),
            ":2:3: not a cassette: ",
            "interactions[0]: the response body is recorded compressed (content-encoding: gzip)",
        ),
        (
            "- just a list\n".to_owned(),
            ":1:1: not a cassette: ",
            "invalid type: sequence, expected a mapping with `interactions`",
        ),
        (
            String::new(),
            ":1:1: not a cassette: ",
            "missing field `interactions`",
        ),
    ];
    for (text, location, message) in cases {
        let (error, path) = refused(text.as_bytes()).await;
        assert!(
            matches!(error, CassetteError::Malformed { .. }),
            "{error:?}"
        );
        let shown = error.to_string();
        assert!(
            shown.starts_with(&format!("{path}{location}")),
            "expected {path}{location}…\n   got {shown}\nfor\n{text}"
        );
        assert!(
            shown.contains(message),
            "expected {message}\n   got {shown}"
        );
    }
}

#[tokio::test]
async fn a_file_that_is_not_utf8_is_named_with_the_line_of_the_first_bad_byte() {
    let mut text = b"interactions:\n- request:\n    method: PO".to_vec();
    text.extend_from_slice(&[0xff, 0xfe]);
    text.extend_from_slice(b"ST\n");
    let (error, path) = refused(&text).await;
    assert_eq!(
        error.to_string(),
        format!("{path}:3:15: not a cassette: the file is not UTF-8 text")
    );
}

#[tokio::test]
async fn a_file_past_the_limit_is_refused_unread() {
    let folder = dir();
    let path = folder.path().join("huge.yaml");
    // Sparse: as large as the file system says, without writing 64 MiB.
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(MAX_CASSETTE_BYTES + 1).unwrap();
    let error = Cassette::replay(&path).await.unwrap_err();
    let CassetteError::TooLarge { size, limit, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (*size, *limit),
        (MAX_CASSETTE_BYTES + 1, MAX_CASSETTE_BYTES)
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}: {} bytes is more than the {} bytes a cassette may have; it was not read",
            path.display(),
            MAX_CASSETTE_BYTES + 1,
            MAX_CASSETTE_BYTES
        )
    );
}

#[tokio::test]
async fn an_alias_bomb_is_refused_not_expanded() {
    // Nine levels of nine aliases each: 387 million strings if expanded.
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for level in 1..9 {
        let previous = format!("*a{}", level - 1);
        let list = vec![previous; 9].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{list}]\n"));
    }
    text.push_str("interactions:\n- request:\n    method: POST\n    uri: https://a.example/\n    parsed_body: *a8\n");
    text.push_str(GOOD_RESPONSE);
    let (error, path) = refused(text.as_bytes()).await;
    let shown = error.to_string();
    assert!(shown.starts_with(&path), "{shown}");
    assert!(
        shown.contains("repetition limit exceeded") || shown.contains("unknown field `a0`"),
        "{shown}"
    );
}

#[tokio::test]
async fn an_alias_bomb_inside_a_body_is_refused_not_expanded() {
    // The anchors inside the body itself, where any YAML is allowed.
    let mut body = String::from("{a0: &a0 [x, x, x, x, x, x, x, x, x]");
    for level in 1..9 {
        let list = vec![format!("*a{}", level - 1); 9].join(", ");
        body.push_str(&format!(", a{level}: &a{level} [{list}]"));
    }
    body.push('}');
    let text = format!(
        "interactions:\n- request:\n    method: POST\n    uri: https://a.example/\n    parsed_body: {body}\n{GOOD_RESPONSE}"
    );
    let (error, path) = refused(text.as_bytes()).await;
    assert_eq!(
        error.to_string(),
        format!("{path}: not a cassette: repetition limit exceeded")
    );
}

#[tokio::test]
async fn a_nesting_too_deep_is_refused_with_its_line() {
    let depth = 10_000;
    let text = format!(
        "interactions:\n- request:\n    method: POST\n    uri: https://a.example/\n    parsed_body: {}{}\n{GOOD_RESPONSE}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let (error, path) = refused(text.as_bytes()).await;
    let shown = error.to_string();
    assert!(shown.starts_with(&format!("{path}:5:")), "{shown}");
    // Refused by the scan before the parser (which would say "recursion limit exceeded" after
    // work that grows with depth × size).
    assert!(shown.contains("levels deep"), "{shown}");
}

#[tokio::test]
async fn more_interactions_than_the_limit_are_refused() {
    let one = format!("{GOOD_REQUEST}{GOOD_RESPONSE}");
    let text = format!("interactions:\n{}", one.repeat(MAX_INTERACTIONS + 1));
    let (error, path) = refused(text.as_bytes()).await;
    let shown = error.to_string();
    assert!(shown.starts_with(&format!("{path}:")), "{shown}");
    assert!(
        shown.contains(&format!(
            "more than {MAX_INTERACTIONS} interactions, the most a cassette may hold"
        )),
        "{shown}"
    );
    // One fewer is read.
    let text = format!("interactions:\n{}", one.repeat(MAX_INTERACTIONS));
    let cassette = Cassette::parse("many.yaml", &text).unwrap();
    assert_eq!(cassette.interactions().len(), MAX_INTERACTIONS);
}

#[tokio::test]
async fn a_missing_cassette_says_how_to_record_it() {
    let folder = dir();
    let path = folder.path().join("never-recorded.yaml");
    let error = Cassette::replay(&path).await.unwrap_err();
    assert!(matches!(error, CassetteError::Missing { .. }), "{error:?}");
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("{}: no such cassette", path.display())),
        "{shown}"
    );
    assert!(shown.contains(&format!("{MODE_VAR}=record")), "{shown}");
    assert!(!path.exists());
}

#[test]
fn the_projects_own_recordings_all_read() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/recordings");
    let mut read = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let cassette = Cassette::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!cassette.interactions().is_empty(), "{}", path.display());
            read += 1;
        }
    }
    assert_eq!(read, 33);
}

#[tokio::test]
async fn a_wide_fan_of_aliases_is_refused_before_it_is_expanded() {
    // One anchor of 1,000 items named by 100,000 aliases: a 302 KB file that took 7.2 GB and
    // two minutes to read.
    let items = vec!["x"; 1_000].join(", ");
    let mut text = format!(
        "big: &big [{items}]\ninteractions:\n- request:\n    method: POST\n    uri: https://a.example/\n    parsed_body:\n"
    );
    for _ in 0..100_000 {
        text.push_str("    - *big\n");
    }
    text.push_str(GOOD_RESPONSE);
    assert!(text.len() > 300_000);
    let (error, path) = refused(text.as_bytes()).await;
    let shown = error.to_string();
    assert!(shown.starts_with(&path), "{shown}");
    assert!(shown.contains("aliases"), "{shown}");
}

#[tokio::test]
async fn nesting_fifty_thousand_deep_is_refused_in_one_pass() {
    // 97 KiB of `- ` and of `[`: the parser's recursion limit used to come after work that
    // grew with depth × size (34 s in release for the first).
    for body in [
        format!("{}x", "- ".repeat(50_000)),
        format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)),
    ] {
        let text =
            format!("interactions:\n- request:\n    parsed_body:\n      {body}\n{GOOD_RESPONSE}");
        let (error, _) = refused(text.as_bytes()).await;
        assert!(error.to_string().contains("levels deep"), "{error}");
    }
}
