//! Whole files: a good one with every field, line endings, a byte order mark, and a file that
//! breaks several rules at once.

use agent_skills_spec::{Manifest, Rule, parse};

const GOOD: &str = "---
name: pdf-tools
description: >-
  Fill in PDF forms and extract their text.
  Use when the user has a PDF.
license: Apache-2.0
compatibility: Needs Python 3 and poppler-utils.
allowed-tools: Bash(python3:*)  Read
  Write
metadata:
  author: example-org
  version: \"1.0\"
  zeta: last
model: claude-opus-4
x-anything: [1, {deep: true}]
---
# PDF tools

Run `scripts/fill.py`.
";

fn expected(body_offset: usize) -> Manifest {
    Manifest {
        name: "pdf-tools".into(),
        description: "Fill in PDF forms and extract their text. Use when the user has a PDF."
            .into(),
        license: Some("Apache-2.0".into()),
        compatibility: Some("Needs Python 3 and poppler-utils.".into()),
        allowed_tools: vec!["Bash(python3:*)".into(), "Read".into(), "Write".into()],
        metadata: vec![
            ("author".into(), "example-org".into()),
            ("version".into(), "1.0".into()),
            ("zeta".into(), "last".into()),
        ],
        body_offset,
    }
}

#[test]
fn a_good_file_with_every_field() {
    let m = parse(GOOD, "pdf-tools").unwrap();
    let offset = GOOD.find("# PDF tools").unwrap();
    assert_eq!(m, expected(offset));
    assert_eq!(m.body(GOOD), "# PDF tools\n\nRun `scripts/fill.py`.\n");
}

#[test]
fn only_the_required_fields() {
    let text = "---\nname: a\ndescription: b\n---\n";
    let m = parse(text, "a").unwrap();
    assert_eq!(
        m,
        Manifest {
            name: "a".into(),
            description: "b".into(),
            license: None,
            compatibility: None,
            allowed_tools: vec![],
            metadata: vec![],
            body_offset: text.len(),
        }
    );
    assert_eq!(m.body(text), "");
}

#[test]
fn no_line_break_after_the_closing_fence() {
    let text = "---\nname: a\ndescription: b\n---";
    let m = parse(text, "a").unwrap();
    assert_eq!(m.body_offset, text.len());
    assert_eq!(m.body(text), "");
}

#[test]
fn null_optional_fields_are_absent() {
    let text = "---\nname: a\ndescription: b\nlicense:\ncompatibility: ~\nmetadata:\nallowed-tools: null\n---\n";
    let m = parse(text, "a").unwrap();
    assert_eq!((m.license, m.compatibility), (None, None));
    assert!(m.metadata.is_empty() && m.allowed_tools.is_empty());
}

#[test]
fn crlf_line_endings() {
    let text = GOOD.replace('\n', "\r\n");
    let m = parse(&text, "pdf-tools").unwrap();
    let offset = text.find("# PDF tools").unwrap();
    assert_eq!(m, expected(offset));
    assert_eq!(
        m.body(&text),
        "# PDF tools\r\n\r\nRun `scripts/fill.py`.\r\n"
    );
    // lines are still counted right
    let bad = "---\r\nname: a\r\ndescription: b\r\nlicense: 3\r\n---\r\n";
    let v = parse(bad, "a").unwrap_err();
    assert_eq!((v[0].rule, v[0].line), (Rule::FieldType, 4));
}

#[test]
fn byte_order_mark() {
    let text = format!("\u{feff}{GOOD}");
    let m = parse(&text, "pdf-tools").unwrap();
    assert_eq!(m, expected(text.find("# PDF tools").unwrap()));
    assert_eq!(m.body(&text), "# PDF tools\n\nRun `scripts/fill.py`.\n");
    let text = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
    assert!(parse(&text, "pdf-tools").is_ok());
}

#[test]
fn trailing_spaces_on_the_fences() {
    let text = "--- \nname: a\ndescription: b\n---\t\nbody\n";
    assert_eq!(parse(text, "a").unwrap().body(text), "body\n");
}

#[test]
fn several_violations_are_all_reported_sorted_by_line() {
    let text = "---
compatibility: \"\"
name: -Bad--Name
license: [MIT]
metadata:
  version: 2
  author: someone
  year: 2025
---
";
    let v = parse(text, "bad-name").unwrap_err();
    let got: Vec<(usize, Rule)> = v.iter().map(|v| (v.line, v.rule)).collect();
    assert_eq!(
        got,
        vec![
            (1, Rule::DescriptionRequired),
            (2, Rule::CompatibilityLength),
            (3, Rule::NameCharacters),
            (3, Rule::NameHyphenEdge),
            (3, Rule::NameDoubleHyphen),
            (3, Rule::NameMatchesFolder),
            (4, Rule::FieldType),
            (6, Rule::MetadataStrings),
            (8, Rule::MetadataStrings),
        ]
    );
    assert!(
        v[7].message.contains("`version: \"2\"`"),
        "{}",
        v[7].message
    );
    assert!(
        v[8].message.contains("`year: \"2025\"`"),
        "{}",
        v[8].message
    );
}

#[test]
fn unknown_keys_of_any_shape_are_ignored() {
    let text = "---\nname: a\ndescription: b\nmodel: opus\nhooks: {pre: [x, y]}\n7: seven\n? [complex, key]\n: value\n---\n";
    assert!(parse(text, "a").is_ok());
}
