//! Compile-time tests of `#[skill]`: every accepted form compiles and behaves (each pass case
//! asserts its own schema), and every mistake fails with the message in its `.stderr` snapshot,
//! pointing at the offending tokens. And of `agent_skills!`: one bad
//! skill folder per rule of the Agent Skills format (`tests/ui/agent_skills/<rule>/`), each error
//! naming the file, the line and the rule, and the mistakes in the call itself. And of the
//! `eugene` facade: its root holds no wire internal or test helper. All cases compile
//! in one batch. Regenerate snapshots with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    // trybuild builds the cases in a project of its own, with this package's dev-dependencies and
    // none of the workspace's profile settings: with debug info, that project's dependencies took
    // 3.3 GB of `target/`. The cases need errors and a run, not a debugger.
    // SAFETY: this test binary runs this one test; no other thread reads the environment now.
    unsafe { std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false") };
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.compile_fail("tests/ui/agent_skills/*.rs");
    // The facade's root: no wire internal, test helper or bookkeeping there.
    cases.compile_fail("tests/ui/facade/*.rs");
}
