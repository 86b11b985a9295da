//! Bad programs and attacks on the sandbox: each ends in a clear error result (or is contained)
//! within the time limit and the memory cap, and the run goes on.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_llm::MockReply;
use agent_runtime::FinishReason;
use serde_json::Value;

use common::{Ran, result, run, runtime_with};

/// Runs `code` with a time limit of `secs`; what `run_code` answered, and how long it took.
async fn run_for(code: &str, secs: u64) -> (String, bool, Duration) {
    let ran = Arc::new(Ran::default());
    let (runtime, _) = runtime_with(
        code,
        &ran,
        Duration::from_secs(secs),
        vec![MockReply::text("went on")],
    );
    let started = Instant::now();
    let outcome = runtime.run("Run it.").await.unwrap();
    let took = started.elapsed();
    assert_eq!(
        outcome.final_text.as_deref(),
        Some("went on"),
        "the run goes on after the program"
    );
    assert_eq!(outcome.finish, FinishReason::NoMoreToolCalls);
    let (text, is_error) = result(&outcome);
    (text, is_error, took)
}

fn value(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap()["value"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_loops_forever_is_stopped_at_its_time_limit() {
    for code in [
        "while (true) {}",
        "for (;;) { try { while (true) {} } catch (e) {} }",
        "await new Promise(() => { while (true) {} });",
        "const spin = async () => { for (;;) await null; }; await spin();",
    ] {
        let (text, is_error, took) = run_for(code, 2).await;
        assert!(is_error, "{code}: {text}");
        assert!(text.contains("did not finish within 2 s"), "{code}: {text}");
        assert!(took < Duration::from_secs(10), "{code}: {took:?}");
    }
}

#[tokio::test]
async fn deep_recursion_huge_allocations_and_floods_of_print_end_in_clear_errors() {
    let (text, is_error, _) = run_for("const f = (n) => f(n + 1) + 1; return f(0);", 10).await;
    assert!(is_error, "{text}");
    assert!(text.to_lowercase().contains("stack"), "{text}");

    for code in [
        "let s = 'x'; for (;;) s = s + s; ",
        "const a = []; for (;;) a.push(new Array(1e6).fill(1));",
        "return new Array(1e9).fill(0).length;",
    ] {
        let (text, is_error, _) = run_for(code, 20).await;
        assert!(is_error, "{code}: {text}");
        assert!(
            text.contains("out of memory")
                || text.contains("string too long")
                || text.contains("RangeError"),
            "{code}: {text}"
        );
    }

    let (text, is_error, _) = run_for(
        "for (let i = 0; i < 100000; i++) console.log('x'.repeat(100)); return 1;",
        20,
    )
    .await;
    assert!(!is_error, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    let printed = answer["printed"].as_str().unwrap();
    assert!(printed.chars().count() < 2_200, "{}", printed.len());
    assert!(
        printed.contains("more characters printed, not kept"),
        "{printed}"
    );
}

#[tokio::test]
async fn unknown_skills_bad_arguments_throws_and_syntax_errors_are_error_results() {
    let (text, is_error) = run("return await no_such_skill({});").await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("no_such_skill") && text.contains("line 1"),
        "{text}"
    );

    // A bad argument is the registry's validation error, which the program can catch.
    let (text, is_error) = run(r#"
        try { await add({ a: "one", b: 2 }); } catch (e) { return "caught: " + e.message; }
    "#)
    .await;
    assert!(!is_error, "{text}");
    let caught = value(&text);
    assert!(caught.as_str().unwrap().starts_with("caught: "), "{caught}");
    assert!(caught.as_str().unwrap().contains("a"), "{caught}");

    // A skill's own error too; uncaught, it ends the program.
    let (text, is_error) = run("return await read_note({ name: 'missing' });").await;
    assert!(is_error, "{text}");
    assert!(text.contains("no note called `missing`"), "{text}");

    let (text, is_error) = run("console.log('before');\nthrow new TypeError('broken');").await;
    assert!(is_error, "{text}");
    assert!(text.contains("TypeError: broken"), "{text}");
    assert!(text.contains("line 2"), "{text}");
    assert!(text.contains("It printed before:\nbefore"), "{text}");

    let (text, is_error) = run("const a = 1;\nconst b = ;\nreturn a;").await;
    assert!(is_error, "{text}");
    assert!(text.contains("SyntaxError"), "{text}");
    assert!(text.contains("line 2"), "{text}");

    let (text, is_error) = run("await new Promise(() => {}); return 1;").await;
    assert!(is_error, "{text}");
    assert!(text.contains("nothing settles"), "{text}");

    // `run_code` is no function of the programs it runs.
    let (text, is_error) = run("return await run_code({ code: 'return 1' });").await;
    assert!(is_error, "{text}");
    assert!(text.contains("run_code is not defined"), "{text}");
}

#[tokio::test]
async fn the_program_reaches_no_host_no_clock_and_no_randomness() {
    let (text, is_error) = run(r#"
        const seen = {};
        for (const name of ["require", "process", "std", "os", "Deno", "Bun", "fetch",
                            "XMLHttpRequest", "WebSocket", "Date", "performance", "setTimeout",
                            "setInterval", "queueMicrotask", "scriptArgs", "__loadScript",
                            "gc", "Worker"]) {
          seen[name] = typeof globalThis[name];
        }
        seen.random = typeof Math.random;
        seen.viaFunction = typeof Function("return this")().process;
        seen.viaEval = eval("typeof require");
        try { await import("fs"); seen.import = "loaded"; } catch (e) { seen.import = "refused"; }
        try { await import("data:text/javascript,export default 1"); seen.data = "loaded"; }
        catch (e) { seen.data = "refused"; }
        seen.globals = Object.getOwnPropertyNames(globalThis)
          .filter((n) => typeof globalThis[n] === "function" && /^[a-z_]/.test(n)).sort();
        return seen;
    "#)
    .await;
    assert!(!is_error, "{text}");
    let seen = value(&text);
    for name in [
        "require",
        "process",
        "std",
        "os",
        "Deno",
        "Bun",
        "fetch",
        "XMLHttpRequest",
        "WebSocket",
        "Date",
        "performance",
        "setTimeout",
        "setInterval",
        "scriptArgs",
        "__loadScript",
        "gc",
        "Worker",
    ] {
        assert_eq!(seen[name], "undefined", "{name}: {seen}");
    }
    assert_eq!(seen["random"], "undefined", "{seen}");
    assert_eq!(seen["viaFunction"], "undefined");
    assert_eq!(seen["viaEval"], "undefined");
    assert_eq!(seen["import"], "refused");
    assert_eq!(seen["data"], "refused");
    // Lower-case global functions are the language's own and the skills: nothing of the host.
    let globals: Vec<&str> = seen["globals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for name in &globals {
        assert!(
            [
                "add",
                "delete_branch",
                "meet",
                "read_note",
                "write_count",
                "print",
                "eval",
                "queueMicrotask",
                "atob",
                "btoa",
                "isFinite",
                "isNaN",
                "parseFloat",
                "parseInt",
                "decodeURI",
                "decodeURIComponent",
                "encodeURI",
                "encodeURIComponent",
                "escape",
                "unescape",
            ]
            .contains(name),
            "an unexpected global function `{name}`: {globals:?}"
        );
    }
}

#[tokio::test]
async fn replacing_the_builtins_does_not_change_what_the_host_sees() {
    let ran = Arc::new(Ran::default());
    let (runtime, _) = runtime_with(
        r#"
        JSON.stringify = () => '{"name": "forged"}';
        JSON.parse = () => "forged";
        Object.prototype.name = "polluted";
        Promise.prototype.then = function () { throw new Error("hijacked"); };
        globalThis.Promise = function () { throw new Error("replaced"); };
        const note = await tools.read_note({ name: "real" });
        return note;
        "#,
        &ran,
        Duration::from_secs(5),
        vec![MockReply::text("done")],
    );
    let outcome = runtime.run("Run it.").await.unwrap();
    let (text, _) = result(&outcome);
    // Whatever became of the program's own value, the call went out as written and came back
    // as the skill answered.
    assert_eq!(ran.count("read_note"), 1, "{text}");
    assert!(!text.contains("forged"), "{text}");
    assert!(!text.contains("polluted"), "{text}");

    // The functions table cannot be rewritten to point a name at another skill.
    let (text, _) = run(r#"
        try { tools.read_note = tools.delete_branch; } catch (e) {}
        return await tools.read_note({ name: "x" });
    "#)
    .await;
    assert_eq!(value(&text), "note x", "{text}");
}

#[tokio::test]
async fn calls_past_the_limit_throw_and_the_ones_made_ran() {
    let (text, is_error) = run(r#"
        let made = 0;
        try { for (;;) { await add({ a: 1, b: 1 }); made++; } }
        catch (e) { return { made, error: e.message }; }
    "#)
    .await;
    assert!(!is_error, "{text}");
    let answer = value(&text);
    assert_eq!(answer["made"], 1000, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("1000 calls at most"),
        "{answer}"
    );
}

#[tokio::test]
async fn errors_at_the_programs_end_out_of_memory_and_lone_surrogates_are_said_plainly() {
    // A syntax error at the last byte is placed at the program's end, with line and column.
    for (code, column) in [("const a = 1;\nreturn a +", 11), ("return (a", 10)] {
        let (text, is_error) = run(code).await;
        assert!(is_error, "{text}");
        let line = code.lines().count();
        assert!(
            text.contains(&format!("line {line}, column {column}")),
            "{code:?}: {text}"
        );
        assert!(!text.contains("program.js"), "{text}");
    }
    // A promise chain that runs out of memory says so, not "threw null".
    let (text, is_error) = run(
        "let a = []; const grow = () => { a.push(new Array(100000).fill(a.length)); \
         return Promise.resolve().then(grow); }; await grow();",
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("memory"), "{text}");
    // A returned lone surrogate comes back as the replacement character, once encoded.
    let (text, is_error) = run(r#"return "a\uD800b";"#).await;
    assert!(!is_error, "{text}");
    assert_eq!(value(&text), serde_json::json!("a\u{fffd}b"), "{text}");
}
