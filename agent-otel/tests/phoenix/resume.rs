//! A run that pauses in one process and is approved in another is one trace: the paused state
//! carries the first `invoke_agent` span's W3C `traceparent`, and the process that goes on makes
//! its own `invoke_agent` a child of it (a parent, not a link).

use serde_json::Value;

use crate::child::Scenario;
use crate::phoenix;

/// Scenarios that export to Phoenix's `project` and keep a paused state in a folder of their
/// own (emptied first): how to make one by mode, and the state's file.
fn in_project(project: &'static str) -> (impl Fn(&'static str) -> Scenario, std::path::PathBuf) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(project);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state_file = dir.join("state.json");
    let endpoint = phoenix().http_endpoint();
    let file = state_file.clone();
    let scenario = move |mode| {
        Scenario::new(mode)
            .endpoint(endpoint.clone())
            .project(project)
            .state_file(&file)
    };
    (scenario, state_file)
}

#[test]
fn a_run_paused_in_one_process_and_approved_in_another_is_one_trace() {
    let phoenix = phoenix();
    let project = "pause-resume";
    let (scenario, state_file) = in_project(project);

    let paused = scenario("pause").run();
    assert_eq!(paused.report["paused"], true, "{:?}", paused.report);
    let state: Value = serde_json::from_slice(&std::fs::read(&state_file).unwrap()).unwrap();
    let traceparent = state["trace_parent"]
        .as_str()
        .expect("the state keeps its traceparent");
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(
        (parts[0], parts[1].len(), parts[2].len()),
        ("00", 32, 16),
        "{traceparent}"
    );

    let resumed = scenario("resume").run();
    assert_eq!(
        resumed.report["final_text"], "Rang once.",
        "{:?}",
        resumed.report
    );
    assert_eq!(resumed.report["paused"], false);

    let exported =
        |ran: &crate::child::Ran| ran.report["shutdown"]["exported_spans"].as_u64().unwrap();
    let total = (exported(&paused) + exported(&resumed)) as usize;
    let spans = phoenix.spans(project, total);
    assert_eq!(spans.len(), total);
    assert!(
        spans.iter().all(|s| s.trace_id() == parts[1]),
        "every span of both processes is in the trace the state named: {spans:#?}"
    );
    let agents: Vec<_> = spans
        .iter()
        .filter(|s| s.name() == "invoke_agent")
        .collect();
    assert_eq!(agents.len(), 2, "one invoke_agent per process: {agents:#?}");
    let first = agents
        .iter()
        .find(|s| s.parent_id().is_none())
        .expect("the first process's invoke_agent is the trace's root");
    assert_eq!(
        first.span_id(),
        parts[2],
        "the state named the first invoke_agent"
    );
    let second = agents.iter().find(|s| s.parent_id().is_some()).unwrap();
    assert_eq!(
        second.parent_id(),
        Some(first.span_id()),
        "a child, not a link"
    );
    assert_eq!(
        spans.iter().filter(|s| s.parent_id().is_none()).count(),
        1,
        "one root"
    );
    // The approved call ran in the second process, inside its invoke_agent.
    let ring = spans
        .iter()
        .find(|s| s.text("gen_ai.tool.call.id") == Some("c1"))
        .expect("the approved call has its span");
    assert_eq!(ring.name(), "execute_tool ring");
    // (Directly: the decided calls run before the resumed run's first turn.)
    assert_eq!(ring.parent_id(), Some(second.span_id()));
}

#[test]
fn a_pause_inside_a_child_is_no_error_and_the_child_resumed_elsewhere_is_under_its_call() {
    let phoenix = phoenix();
    let project = "nested-pause-resume";
    let (scenario, _) = in_project(project);
    let paused = scenario("nested-pause").run();
    assert_eq!(paused.report["paused"], true, "{:?}", paused.report);
    let resumed = scenario("nested-resume").run();
    assert_eq!(
        resumed.report["final_text"], "The gardener rang.",
        "{:?}",
        resumed.report
    );
    let exported =
        |ran: &crate::child::Ran| ran.report["shutdown"]["exported_spans"].as_u64().unwrap();
    let total = (exported(&paused) + exported(&resumed)) as usize;
    let spans = phoenix.spans(project, total);

    // Two calls to the gardener, one per process: the first paused, and is no error.
    let calls: Vec<_> = spans
        .iter()
        .filter(|s| s.name() == "execute_tool gardener")
        .collect();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let (first_call, second_call) = match calls[0].text("eugene.tool.paused") {
        Some(_) => (calls[0], calls[1]),
        None => (calls[1], calls[0]),
    };
    assert_eq!(first_call.text("eugene.tool.paused"), Some("suspended"));
    assert_eq!(first_call.text("error.type"), None, "{first_call:#?}");
    // OTLP's status code: 0 unset, 1 ok, 2 error.
    assert_eq!(first_call.0["status"]["code"], 0, "{first_call:#?}");
    assert_eq!(second_call.text("eugene.tool.paused"), None);
    // The child's drive in the second process is under that process's call to it.
    let children: Vec<_> = spans
        .iter()
        .filter(|s| s.name() == "invoke_agent gardener")
        .collect();
    assert_eq!(children.len(), 2, "{children:#?}");
    let resumed_child = children
        .iter()
        .find(|s| s.parent_id() == Some(second_call.span_id()))
        .unwrap_or_else(|| {
            panic!(
                "the second process's `invoke_agent gardener` is not under its \
                 `execute_tool gardener`: {children:#?}"
            )
        });
    assert_ne!(resumed_child.parent_id(), Some(children[0].span_id()));
}
