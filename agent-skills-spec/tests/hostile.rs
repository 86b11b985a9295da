//! Pathological front matter returns promptly with a violation (or parses), never hangs, never
//! exhausts memory. Times are generous for unoptimised builds; each case takes milliseconds.

use agent_skills_spec::{MAX_FRONT_MATTER_BYTES, Rule, Violation, parse};
use std::time::{Duration, Instant};

/// Parses `text` in folder `demo`, failing the test if it takes longer than two seconds.
fn timed(text: &str) -> Result<agent_skills_spec::Manifest, Vec<Violation>> {
    let start = Instant::now();
    let result = parse(text, "demo");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    result
}

fn rules(result: Result<agent_skills_spec::Manifest, Vec<Violation>>) -> Vec<Rule> {
    result.unwrap_err().iter().map(|v| v.rule).collect()
}

#[test]
fn a_hundred_thousand_open_brackets() {
    // Larger than the front matter cap: refused before parsing.
    let text = format!(
        "---\nname: demo\ndescription: x\nk: {}\n---\n",
        "[".repeat(100_000)
    );
    assert_eq!(rules(timed(&text)), [Rule::FrontMatter]);
}

#[test]
fn deep_nesting_under_the_cap_is_refused_before_parsing() {
    // 60,000 `[` fit in the cap; libyaml's work on them grows with size x depth (seconds).
    let n = MAX_FRONT_MATTER_BYTES - 1000;
    let text = format!(
        "---\nname: demo\ndescription: x\nk: {}\n---\n",
        "[".repeat(n)
    );
    let v = timed(&text).unwrap_err();
    assert_eq!((v.len(), v[0].rule, v[0].line), (1, Rule::Yaml, 4));
    assert!(v[0].message.contains("128"), "{}", v[0].message);
    let text = format!("---\n{}\n---\n", "{a: ".repeat(n / 4));
    assert_eq!(rules(timed(&text)), [Rule::Yaml]);
    // one bracket per line, with plain scalars between, is counted just the same
    let text = format!("---\n{}\n---\n", "[\na,\n".repeat(n / 5));
    assert_eq!(rules(timed(&text)), [Rule::Yaml]);
}

#[test]
fn nesting_up_to_the_limit_goes_through_the_parser() {
    let nested = format!("{}{}", "[".repeat(128), "]".repeat(128));
    // under a key that is ignored: skipped without recursion
    let mut yaml = String::from("name: demo\ndescription: x\n");
    while yaml.len() < MAX_FRONT_MATTER_BYTES - 300 {
        yaml.push_str(&format!("k{}: {nested}\n", yaml.len()));
    }
    assert!(timed(&format!("---\n{yaml}---\n")).is_ok());
    // 127 open and many tokens inside: the parser's worst case under the limit
    let mut wide = format!("k: {}", "[".repeat(127));
    while wide.len() < MAX_FRONT_MATTER_BYTES - 300 {
        wide.push_str("a,");
    }
    wide.push_str(&"]".repeat(127));
    assert!(timed(&format!("---\nname: demo\ndescription: x\n{wide}\n---\n")).is_ok());
    // in a field's place: a field of the wrong type
    let text = format!("---\nname: demo\ndescription: {nested}\n---\n");
    assert_eq!(rules(timed(&text)), [Rule::FieldType]);
    let text = format!("---\nname: demo\ndescription: x\nmetadata:\n  k: {nested}\n---\n");
    assert_eq!(rules(timed(&text)), [Rule::MetadataStrings]);
    // the whole front matter
    assert_eq!(rules(timed(&format!("---\n{nested}\n---\n"))), [Rule::Yaml]);
}

/// A list of nine strings, then `levels` lists of nine aliases each of the list before, the last
/// one anchored as `top`: 9^(levels + 1) strings if expanded, 9 × levels aliases.
fn laughs(levels: usize) -> String {
    let mut yaml = format!("l0: &l0 [{}]\n", ["\"lol\""; 9].join(","));
    for level in 1..levels {
        let refs = vec![format!("*l{}", level - 1); 9].join(",");
        yaml.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
    }
    yaml.push_str(&format!(
        "top: &top [{}]\n",
        vec![format!("*l{}", levels - 1); 9].join(",")
    ));
    yaml
}

#[test]
fn billion_laughs_is_refused_by_its_alias_count() {
    // The classic: 9^9 (387,420,489) strings if expanded, from 72 aliases.
    let text = format!("---\nname: demo\ndescription: x\n{}---\n", laughs(8));
    let v = timed(&text).unwrap_err();
    assert_eq!((v.len(), v[0].rule), (1, Rule::Yaml));
    assert!(v[0].message.contains("aliases"), "{}", v[0].message);
}

#[test]
fn an_alias_bomb_under_the_count_is_not_expanded() {
    // 9^7 (4,782,969) strings if expanded, from 54 aliases: under the count, so the parser reads
    // it.
    let l = laughs(6);
    // defined under ignored keys only
    assert!(timed(&format!("---\nname: demo\ndescription: x\n{l}---\n")).is_ok());
    // used in every place a value is read
    for used in [
        "name: *top\ndescription: x\n",
        "name: demo\ndescription: *top\n",
        "name: demo\ndescription: x\nallowed-tools: *top\n",
        "name: demo\ndescription: x\nmetadata: *top\n",
        "name: demo\ndescription: x\nmetadata: {k: *top}\n",
        "name: demo\ndescription: x\nmetadata: {*top : v}\n",
    ] {
        let text = format!("---\n{l}{used}---\n");
        let result = timed(&text);
        let rules = rules(result);
        assert!(
            !rules.is_empty()
                && rules
                    .iter()
                    .all(|r| matches!(r, Rule::FieldType | Rule::MetadataStrings)),
            "{used}: {rules:?}"
        );
    }
    // the whole front matter as an alias of a list
    let text = format!("---\n- &x [{}]\n- [*x, *x, *x]\n---\n", ["1"; 9].join(","));
    assert_eq!(rules(timed(&text)), [Rule::Yaml]);
}

#[test]
fn many_aliases_are_refused_before_parsing() {
    // One anchored list as large as half the cap, and many references to it, each in a place
    // whose value is read: every reference makes the parser walk the list.
    let big = format!(
        "big: &b [{}]\nname: demo\ndescription: x\n",
        "1,".repeat(MAX_FRONT_MATTER_BYTES / 4)
    );
    let refs = |n: usize| {
        (0..n)
            .map(|i| format!("k{i}: *b"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!("---\n{big}metadata: {{{}}}\n---\n", refs(65));
    let v = timed(&text).unwrap_err();
    assert_eq!((v.len(), v[0].rule, v[0].line), (1, Rule::Yaml, 5));
    assert!(v[0].message.contains("64 aliases"), "{}", v[0].message);
    // 64 are read (each a list, so a violation each)
    let text = format!("---\n{big}metadata: {{{}}}\n---\n", refs(64));
    let v = timed(&text).unwrap_err();
    assert_eq!(v.len(), 64);
    assert!(v.iter().all(|v| v.rule == Rule::MetadataStrings));
    // without an anchor, stars are not counted: no alias can be followed
    let stars = vec!["Bash(git *)"; 200].join(" ");
    let text = format!("---\nname: demo\ndescription: x\nallowed-tools: {stars}\n---\n");
    assert_eq!(timed(&text).unwrap().allowed_tools.len(), 400);
}

#[test]
fn very_many_keys_and_lines() {
    let mut yaml = String::from("name: demo\ndescription: x\nmetadata:\n");
    let mut n = 0;
    while yaml.len() < MAX_FRONT_MATTER_BYTES - 20 {
        yaml.push_str(&format!("  k{n}: {n}\n"));
        n += 1;
    }
    let result = timed(&format!("---\n{yaml}---\n"));
    let v = result.unwrap_err();
    assert_eq!(v.len(), n);
    assert_eq!(v[n - 1].line, n + 4);
    // the same key, many times
    let mut yaml = String::from("name: demo\ndescription: x\n");
    while yaml.len() < MAX_FRONT_MATTER_BYTES - 20 {
        yaml.push_str("name: demo\n");
    }
    let v = timed(&format!("---\n{yaml}---\n")).unwrap_err();
    assert!(v.iter().all(|v| v.rule == Rule::Yaml));
}

#[test]
fn a_huge_body_and_many_dashes() {
    let text = format!(
        "---\nname: demo\ndescription: x\n---\n{}",
        "---\n".repeat(200_000)
    );
    assert!(timed(&text).is_ok());
    let text = format!("---\n{}", "-- \n".repeat(200_000));
    assert_eq!(rules(timed(&text)), [Rule::FrontMatter]);
}
