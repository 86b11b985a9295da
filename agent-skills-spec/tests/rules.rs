//! One failing case per rule, with the line and a message that names the value or the limit,
//! and the boundaries of every length.

use agent_skills_spec::{Rule, Violation, parse};

/// A SKILL.md with `front` as its front matter (line 2 onwards) and a short body.
fn skill(front: &str) -> String {
    format!("---\n{front}---\n# Body\n")
}

/// The violations of `text` in folder `folder`; panics if it parses.
fn violations(text: &str, folder: &str) -> Vec<Violation> {
    match parse(text, folder) {
        Ok(m) => panic!("expected violations, parsed {m:?}"),
        Err(v) => v,
    }
}

/// The only violation of `text` in folder `demo`, checked for rule and line.
fn only(text: &str, rule: Rule, line: usize) -> Violation {
    let v = violations(text, "demo");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].line), (rule, line), "{v:#?}");
    v.into_iter().next().unwrap()
}

const OK: &str = "name: demo\ndescription: Does a thing.\n";

#[test]
fn file_unreadable_when_the_text_is_too_large() {
    let text = skill(OK) + &"x".repeat(1024 * 1024);
    let v = only(&text, Rule::FileUnreadable, 1);
    assert!(v.message.contains("1048576"), "{}", v.message);
}

#[test]
fn front_matter_missing_and_unclosed() {
    let v = only("# Just Markdown\n", Rule::FrontMatter, 1);
    assert!(v.message.contains("# Just Markdown"), "{}", v.message);
    assert!(v.message.contains("---"), "{}", v.message);
    let v = only(
        "---\nname: demo\ndescription: x\n# no end\n",
        Rule::FrontMatter,
        1,
    );
    assert!(v.message.contains("never closed"), "{}", v.message);
    only("", Rule::FrontMatter, 1);
    only("---", Rule::FrontMatter, 1);
    only("----\nname: demo\n---\n", Rule::FrontMatter, 1);
}

#[test]
fn front_matter_larger_than_the_cap() {
    let front = format!(
        "{OK}x: \"{}\"\n",
        "a".repeat(agent_skills_spec::MAX_FRONT_MATTER_BYTES)
    );
    let v = only(&skill(&front), Rule::FrontMatter, 1);
    assert!(v.message.contains("65536"), "{}", v.message);
}

#[test]
fn yaml_syntax_error_at_the_parsers_line() {
    // line 1 `---`, 2 name, 3 description, 4 the bad line
    let v = only(
        &skill(&format!("{OK}tags: [a, b\nother: x\n")),
        Rule::Yaml,
        5,
    );
    assert!(v.message.contains("not valid YAML"), "{}", v.message);
    let v = only(
        &skill("name: demo\n  description: x\n bad: : :\n"),
        Rule::Yaml,
        3,
    );
    assert!(
        v.message.contains("line 3"),
        "the parser's own location is renumbered: {}",
        v.message
    );
}

#[test]
fn yaml_not_a_mapping() {
    let v = only(&skill("- name\n- description\n"), Rule::Yaml, 2);
    assert!(v.message.contains("a list"), "{}", v.message);
    let v = only(&skill("just words\n"), Rule::Yaml, 2);
    assert!(v.message.contains("\"just words\""), "{}", v.message);
}

#[test]
fn yaml_duplicate_key() {
    let v = only(&skill(&format!("{OK}name: demo\n")), Rule::Yaml, 4);
    assert!(
        v.message.contains("`name`") && v.message.contains("line 2"),
        "{}",
        v.message
    );
}

#[test]
fn field_type_for_each_string_field_and_metadata() {
    for (key, line) in [
        ("name: 7\ndescription: x\n", 2),
        ("name: demo\ndescription: [a, b]\n", 3),
        ("name: demo\ndescription: x\nlicense: true\n", 4),
        ("name: demo\ndescription: x\ncompatibility: {a: b}\n", 4),
        (
            "name: demo\ndescription: x\nallowed-tools: [Read, Grep]\n",
            4,
        ),
        ("name: demo\ndescription: x\nmetadata: just text\n", 4),
    ] {
        let v = only(&skill(key), Rule::FieldType, line);
        let field = key
            .lines()
            .nth(line - 2)
            .unwrap()
            .split(':')
            .next()
            .unwrap();
        assert!(v.message.contains(&format!("`{field}`")), "{}", v.message);
    }
    let v = only(&skill("name: 7\ndescription: x\n"), Rule::FieldType, 2);
    assert!(v.message.contains("the number 7"), "{}", v.message);
    let v = only(
        &skill("name: demo\ndescription: x\nmetadata: just text\n"),
        Rule::FieldType,
        4,
    );
    assert!(v.message.contains("\"just text\""), "{}", v.message);
}

#[test]
fn name_required_missing_empty_and_null() {
    let v = only(&skill("description: x\n"), Rule::NameRequired, 1);
    assert!(v.message.contains("`name`"), "{}", v.message);
    only(
        &skill("description: x\nname: \"\"\n"),
        Rule::NameRequired,
        3,
    );
    only(&skill("description: x\nname:\n"), Rule::NameRequired, 3);
}

#[test]
fn name_length_boundary() {
    let ok = "a".repeat(64);
    assert!(parse(&skill(&format!("name: {ok}\ndescription: x\n")), &ok).is_ok());
    let long = "a".repeat(65);
    let v = violations(&skill(&format!("name: {long}\ndescription: x\n")), &long);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].line), (Rule::NameLength, 2));
    assert!(
        v[0].message.contains("65") && v[0].message.contains("64"),
        "{}",
        v[0].message
    );
}

#[test]
fn name_characters_names_the_bad_ones() {
    let v = violations(&skill("name: My_skill\ndescription: x\n"), "My_skill");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].line), (Rule::NameCharacters, 2));
    assert!(
        v[0].message.contains("'M'") && v[0].message.contains("'_'"),
        "{}",
        v[0].message
    );
    assert!(v[0].message.contains("\"My_skill\""), "{}", v[0].message);
    // not ASCII: a lowercase letter, but not an ASCII one
    let v = violations(&skill("name: café\ndescription: x\n"), "café");
    assert_eq!(v[0].rule, Rule::NameCharacters);
    assert!(v[0].message.contains("'é'"), "{}", v[0].message);
}

#[test]
fn name_hyphen_edge() {
    for name in ["-demo", "demo-"] {
        let v = violations(&skill(&format!("name: {name}\ndescription: x\n")), name);
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!((v[0].rule, v[0].line), (Rule::NameHyphenEdge, 2));
        assert!(v[0].message.contains(name), "{}", v[0].message);
    }
}

#[test]
fn name_double_hyphen() {
    let v = violations(&skill("name: my--skill\ndescription: x\n"), "my--skill");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].line), (Rule::NameDoubleHyphen, 2));
    assert!(v[0].message.contains("my--skill"), "{}", v[0].message);
}

#[test]
fn name_matches_folder() {
    let v = only(
        &skill("description: x\nname: other\n"),
        Rule::NameMatchesFolder,
        3,
    );
    assert!(
        v.message.contains("\"other\"") && v.message.contains("\"demo\""),
        "{}",
        v.message
    );
}

#[test]
fn description_required_missing_and_blank() {
    let v = only(&skill("name: demo\n"), Rule::DescriptionRequired, 1);
    assert!(v.message.contains("`description`"), "{}", v.message);
    only(
        &skill("name: demo\ndescription: \"   \"\n"),
        Rule::DescriptionRequired,
        3,
    );
    only(
        &skill("name: demo\ndescription:\n"),
        Rule::DescriptionRequired,
        3,
    );
}

#[test]
fn description_length_boundary_in_chars() {
    // 1024 multi-byte characters (2048 bytes) are fine: characters are counted, not bytes
    let ok = "é".repeat(1024);
    let m = parse(&skill(&format!("name: demo\ndescription: {ok}\n")), "demo").unwrap();
    assert_eq!(m.description, ok);
    let long = format!("{}a", "é".repeat(1024));
    let v = only(
        &skill(&format!("name: demo\ndescription: {long}\n")),
        Rule::DescriptionLength,
        3,
    );
    assert!(
        v.message.contains("1025") && v.message.contains("1024"),
        "{}",
        v.message
    );
}

#[test]
fn compatibility_length_boundaries() {
    let ok = "ü".repeat(500);
    let m = parse(&skill(&format!("{OK}compatibility: {ok}\n")), "demo").unwrap();
    assert_eq!(m.compatibility.as_deref(), Some(ok.as_str()));
    let v = only(
        &skill(&format!("{OK}compatibility: {}\n", "ü".repeat(501))),
        Rule::CompatibilityLength,
        4,
    );
    assert!(
        v.message.contains("501") && v.message.contains("500"),
        "{}",
        v.message
    );
    let v = only(
        &skill(&format!("{OK}compatibility: \"\"\n")),
        Rule::CompatibilityLength,
        4,
    );
    assert!(
        v.message.contains("empty") && v.message.contains("500"),
        "{}",
        v.message
    );
    // one character is enough
    assert!(parse(&skill(&format!("{OK}compatibility: x\n")), "demo").is_ok());
}

#[test]
fn metadata_strings_says_to_quote_a_number() {
    let text = skill(&format!(
        "{OK}metadata:\n  author: someone\n  version: 1.0\n"
    ));
    let v = only(&text, Rule::MetadataStrings, 6);
    assert!(v.message.contains("`version`"), "{}", v.message);
    assert!(v.message.contains("the number 1.0"), "{}", v.message);
    assert!(
        v.message.contains("\"1.0\""),
        "says to quote it: {}",
        v.message
    );
    let v = only(
        &skill(&format!("{OK}metadata:\n  beta: true\n")),
        Rule::MetadataStrings,
        5,
    );
    assert!(
        v.message.contains("`beta`") && v.message.contains("true"),
        "{}",
        v.message
    );
    let v = only(
        &skill(&format!("{OK}metadata:\n  tags: [a, b]\n")),
        Rule::MetadataStrings,
        5,
    );
    assert!(
        v.message.contains("`tags`") && v.message.contains("a list"),
        "{}",
        v.message
    );
    // a flow mapping has no line per entry: the `metadata:` line
    let v = only(
        &skill(&format!("{OK}metadata: {{1: x}}\n")),
        Rule::MetadataStrings,
        4,
    );
    assert!(v.message.contains("the number 1"), "{}", v.message);
}

#[test]
fn every_rule_has_a_distinct_id_and_a_summary() {
    let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
    assert_eq!(Rule::NameMatchesFolder.id(), "name-matches-folder");
    assert_eq!(
        Rule::NameMatchesFolder.summary(),
        "name: equal to the folder's name"
    );
    for rule in Rule::ALL {
        assert!(
            rule.id()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-')
        );
        assert!(!rule.summary().is_empty());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 14);
}

#[test]
fn violation_display() {
    let v = only(
        &skill("description: x\nname: other\n"),
        Rule::NameMatchesFolder,
        3,
    );
    assert_eq!(
        v.to_string(),
        format!("line 3: {} (rule `name-matches-folder`)", v.message)
    );
}
