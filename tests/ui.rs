//! Compile-time tests of `#[skill]`: every accepted form compiles and behaves (each pass case
//! asserts its own schema), and every mistake fails with the message in its `.stderr` snapshot,
//! pointing at the offending tokens. And of `agent_skills!` (feature `agent-skills`): one bad
//! skill folder per rule of the Agent Skills format (`tests/ui/agent_skills/<rule>/`), each error
//! naming the file, the line and the rule, and the mistakes in the call itself. All cases compile
//! in one batch. Regenerate snapshots with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    #[cfg(feature = "agent-skills")]
    cases.compile_fail("tests/ui/agent_skills/*.rs");
}
