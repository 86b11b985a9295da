//! Compile-time tests of `#[skill]`: every accepted form compiles and behaves (each pass case
//! asserts its own schema), and every mistake fails with the message in its `.stderr` snapshot,
//! pointing at the offending tokens. Regenerate snapshots with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
