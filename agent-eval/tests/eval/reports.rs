//! Reports: JUnit XML read back by a real XML parser (hostile names and answers included), JSON
//! saved to and loaded from real files, and two runs compared.

use agent_eval::{Case, Check, Comparison, Dataset, Eval, Report};
use agent_llm::{MockProvider, MockReply};
use quick_xml::Reader;
use quick_xml::events::Event;

use crate::runtime;

const HOSTILE: &str = "<&\"]]>'\u{1}\n";

async fn run(dataset: Dataset, replies: &[&str]) -> Report {
    let model = MockProvider::new(replies.iter().map(|r| MockReply::text(*r)));
    Eval::new(dataset)
        .concurrency(1)
        .run(|_| runtime(&model))
        .await
        .unwrap()
}

/// An element's name and its attributes (name, unescaped value).
type Element = (String, Vec<(String, String)>);

/// Every element of `xml`, by name, with its attributes unescaped; and the text of each
/// `<failure>`. Fails the test if the document is not well-formed.
fn read_junit(xml: &str) -> (Vec<Element>, Vec<String>) {
    let mut reader = Reader::from_str(xml);
    let mut elements = Vec::new();
    let mut failures = Vec::new();
    let mut in_failure = false;
    let mut raw = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                let name = e.name().as_ref().to_owned();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.expect("a well-formed attribute");
                        let value = a
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .expect("an attribute that unescapes")
                            .into_owned();
                        (a.key.as_ref().to_owned(), value)
                    })
                    .collect();
                in_failure = name == "failure";
                elements.push((name, attrs));
            }
            Ok(Event::End(_)) => {
                if in_failure {
                    let text = quick_xml::escape::unescape(&raw).expect("text that unescapes");
                    failures.push(text.into_owned());
                    raw.clear();
                }
                in_failure = false;
            }
            // Text arrives in pieces split at each entity reference; put them back together.
            Ok(Event::Text(t)) if in_failure => raw.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if in_failure => {
                raw.push('&');
                raw.push_str(&r);
                raw.push(';');
            }
            Ok(Event::Eof) => break,
            Ok(Event::CData(_)) => panic!("no CDATA is written"),
            Ok(_) => {}
            Err(error) => panic!("not well-formed XML ({error}):\n{xml}"),
        }
    }
    (elements, failures)
}

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> &'a str {
    &attrs.iter().find(|(k, _)| k == key).unwrap().1
}

#[tokio::test]
async fn junit_xml_is_well_formed_and_hostile_names_and_answers_survive_escaping() {
    let name = format!("case {HOSTILE}");
    let dataset = Dataset::new(format!("set {HOSTILE}"))
        .case(
            Case::new(&name, "Go.")
                .repeat(2)
                .check(Check::contains("ok")),
        )
        .case(Case::new("fine", "Go.").check(Check::contains("ok")));
    // The failing answer tries to close the failure element and open another.
    let report = run(dataset, &["ok", "]]></failure><injected/>&amp;", "ok"]).await;
    let xml = report.to_junit();
    let (elements, failures) = read_junit(&xml);

    // U+0001 cannot be in XML at all: it is replaced; everything else comes back as it was.
    let expected = name.replace('\u{1}', "\u{FFFD}");
    let cases: Vec<&str> = elements
        .iter()
        .filter(|(n, _)| n == "testcase")
        .map(|(_, a)| attr(a, "name"))
        .collect();
    assert_eq!(cases, [expected.as_str(), "fine"]);
    let suite = &elements.iter().find(|(n, _)| n == "testsuite").unwrap().1;
    assert_eq!(
        attr(suite, "name"),
        format!("set {HOSTILE}").replace('\u{1}', "\u{FFFD}")
    );
    assert_eq!(attr(suite, "tests"), "2");
    assert_eq!(attr(suite, "failures"), "1");
    assert!(elements.iter().all(|(n, _)| n != "injected"), "{xml}");
    let failure = &elements.iter().find(|(n, _)| n == "failure").unwrap().1;
    assert_eq!(
        attr(failure, "message"),
        "1 of 2 attempts passed (50%), below the 100% required"
    );
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("attempt 2: contains \"ok\" failed")
            && failures[0].contains("]]></failure><injected/>&amp;"),
        "{}",
        failures[0]
    );
}

#[tokio::test]
async fn a_saved_report_loads_back_whole_and_a_damaged_one_names_its_line() {
    let dataset =
        Dataset::new("saved").case(Case::new("a", "Go.").repeat(2).check(Check::equals("ok")));
    let report = run(dataset, &["ok", "no"]).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("before.json");
    std::fs::write(&path, "an older report").unwrap();
    report.save(&path).unwrap();
    assert_eq!(Report::load(&path).unwrap(), report);
    // The temporary file was renamed over the old one: nothing else is left.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["before.json"]);

    let damaged = report
        .to_json()
        .replacen("\"attempts\": 2", "\"attempts\": \"two\"", 1);
    let line = damaged.lines().position(|l| l.contains("\"two\"")).unwrap() + 1;
    std::fs::write(&path, &damaged).unwrap();
    let error = Report::load(&path).unwrap_err().to_string();
    let place = format!("{}:{line}:", path.display());
    assert!(error.starts_with(&place), "{error} (expected {place})");
    assert!(error.contains("invalid type"), "{error}");

    std::fs::write(&path, "{").unwrap();
    let error = Report::load(&path).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}:1:", path.display())),
        "{error}"
    );

    let error = Report::load(dir.path().join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("missing.json: cannot be read"), "{error}");

    // A report cannot be written where there is no directory; nothing is left behind.
    let error = report
        .save(dir.path().join("no/such/dir/r.json"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("cannot be written"), "{error}");
}

#[tokio::test]
async fn a_comparison_lists_a_regression_side_by_side_and_new_and_removed_cases_apart() {
    let before_set = Dataset::new("geo")
        .case(
            Case::new("capital", "Go.")
                .repeat(2)
                .check(Check::equals("Paris")),
        )
        .case(
            Case::new("river", "Go.")
                .repeat(2)
                .check(Check::equals("Seine")),
        )
        .case(Case::new("gone", "Go.").check(Check::equals("x")));
    let after_set = Dataset::new("geo")
        .case(
            Case::new("capital", "Go.")
                .repeat(2)
                .check(Check::equals("Paris")),
        )
        .case(
            Case::new("river", "Go.")
                .repeat(2)
                .check(Check::equals("Seine")),
        )
        .case(Case::new("fresh", "Go.").check(Check::equals("y")));
    let before = run(before_set, &["Paris", "Paris", "Loire", "Seine", "x"]).await;
    let after = run(after_set, &["Paris", "Lyon", "Seine", "Seine", "no"]).await;

    // Compared as CI would: the before run read back from its JSON.
    let before = Report::from_json("before.json", &before.to_json()).unwrap();
    let comparison = Comparison::new(&before, &after);
    let regressed: Vec<&str> = comparison.regressions().map(|c| c.name.as_str()).collect();
    assert_eq!(regressed, ["capital"]);
    assert!(comparison.has_regressions());
    let river = comparison.cases.iter().find(|c| c.name == "river").unwrap();
    assert!(river.is_improvement());
    assert_eq!(river.pass_rate_delta(), Some(0.5));
    let names: Vec<&str> = comparison.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["capital", "river", "fresh", "gone"]);

    let table = comparison.table();
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}:\n{table}"))
            .to_owned()
    };
    assert!(line("capital").contains("100% → 50%"), "{table}");
    assert!(line("capital").contains("-50 pp"), "{table}");
    assert!(line("capital").ends_with("REGRESSION"), "{table}");
    assert!(line("river").contains("50% → 100%") && line("river").ends_with("better"));
    assert!(line("fresh").contains("— → 0%") && line("fresh").ends_with("new"));
    assert!(line("gone").contains("100% → —") && line("gone").ends_with("removed"));
    assert!(line("(all)").contains("80% → 60%"), "{table}");
    assert!(
        table.ends_with("regressions: capital (100% → 50%)\n"),
        "{table}"
    );

    let same = Comparison::new(&after, &after);
    assert!(!same.has_regressions());
    assert!(same.table().ends_with("no regressions\n"));
}

#[tokio::test]
async fn the_table_shows_every_case_and_why_the_failing_ones_failed() {
    let dataset = Dataset::new("t")
        .case(
            Case::new("good", "Go.")
                .repeat(2)
                .check(Check::equals("ok")),
        )
        .case(Case::new("bad\u{1b}[31m", "Go.").check(Check::equals("ok")));
    let report = run(dataset, &["ok", "ok", "nope"]).await;
    let table = report.table();
    assert!(
        table.starts_with("eval t: 2/3 attempts passed (67%); each case must reach 100%\n"),
        "{table}"
    );
    assert!(table.contains("\ngood "), "{table}");
    // A name cannot write escape sequences to the terminal.
    assert!(!table.contains('\u{1b}'), "{table:?}");
    assert!(
        table.contains("FAILED bad [31m: 0/1 passed, below 100%"),
        "{table}"
    );
    assert!(
        table.contains("  attempt 1: equals \"ok\" failed: expected \"ok\", got \"nope\""),
        "{table}"
    );
    assert_eq!(report.to_string(), table);
}

#[test]
fn a_report_file_over_the_bound_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    let file = std::fs::File::create(&path).unwrap();
    // Sparse: the size is there without writing it.
    file.set_len(agent_eval::report::MAX_REPORT_BYTES + 1)
        .unwrap();
    let error = Report::load(&path).unwrap_err();
    assert!(
        matches!(error, agent_eval::ReportError::TooLarge { .. }),
        "{error}"
    );
}
