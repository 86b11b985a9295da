//! `is_valid_name` lives twice: in `agent-core`, where the registry checks names at run time, and
//! in `agent-macros`, where `#[skill]` checks them at compile time. The crate boundary forces the
//! copy: a proc-macro crate exports nothing but macros, and `agent-macros` must not depend on
//! `agent-core`. This test compiles the macro crate's own `names.rs` (plain string functions, no
//! syn) and pins the two copies to the same answer on every case that matters.

#[path = "../agent-macros/src/names.rs"]
#[allow(dead_code)]
mod macro_names;

use agent_core::registry::is_valid_name as core_is_valid_name;
use macro_names::is_valid_name as macro_is_valid_name;

/// Names that probe each part of the rule: the allowed bytes, the length bounds counted in bytes,
/// and characters that look allowed but are not ASCII.
fn cases() -> Vec<String> {
    let mut cases: Vec<String> = [
        "",
        "a",
        "A",
        "0",
        "_",
        "-",
        "read_file",
        "search-files",
        "Tool_2",
        "a b",
        " a",
        "a\n",
        "a.b",
        "a/b",
        "a:b",
        "a@b",
        "a+b",
        "é",
        "ａ",
        "٣",
        "ß",
        "日本",
        "a\u{0}",
        "tool\u{200b}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every single character up to U+07FF (one and two UTF-8 bytes), and a few wider ones.
    cases.extend(
        (0..0x800u32)
            .chain([0xFF10, 0x1F600, 0x10FFFF])
            .filter_map(char::from_u32)
            .map(String::from),
    );
    // The length bound: 0 to 70 bytes, all ASCII, and the same in two-byte characters.
    for len in 0..=70 {
        cases.push("a".repeat(len));
        cases.push(format!("{}-", "Z9_".repeat(len / 3)));
        cases.push("é".repeat(len / 2));
    }
    cases
}

#[test]
fn core_and_macro_agree_on_every_name() {
    let cases = cases();
    let disagreements: Vec<&String> = cases
        .iter()
        .filter(|name| core_is_valid_name(name) != macro_is_valid_name(name))
        .collect();
    assert!(
        disagreements.is_empty(),
        "the two is_valid_name disagree on {disagreements:?}"
    );
    // The table is not vacuous: it holds both answers, at both length bounds.
    assert!(macro_is_valid_name(&"a".repeat(64)) && !macro_is_valid_name(&"a".repeat(65)));
    assert!(!macro_is_valid_name("") && !macro_is_valid_name("é"));
    assert!(cases.iter().filter(|n| macro_is_valid_name(n)).count() > 60);
}
