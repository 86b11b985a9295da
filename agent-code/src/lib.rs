//! Code mode: the model writes a short program that calls skills, and `run_code` runs it in a
//! sandboxed interpreter, with every inner call still gated, paused and resumed like a direct one.
//!
//! ```
//! use agent_code::CodeMode;
//! use agent_core::Registry;
//!
//! let mut registry = Registry::new();
//! // ... add the skills first: each becomes a function of the programs.
//! registry.with_code_mode();
//! assert!(registry.contains("run_code"));
//! ```
//!
//! A model that calls tools one at a time pays a model turn, and reads the whole transcript
//! again, for each call, and reads every intermediate result even when it needs only their sum.
//! With `run_code` it writes the loop instead:
//!
//! ```js
//! const files = await list_files({ path: "src" });
//! let total = 0;
//! for (const name of files.split("\n")) total += (await read_file({ path: name })).length;
//! return total;
//! ```
//!
//! - **The functions.** Each skill of the registry is an `async` function of the program
//!   (`tools.name(args)`, and `name(args)` when the name is an identifier), declared in
//!   `run_code`'s description as TypeScript generated from its input and output schemas: a
//!   skill with a typed output answers with that value, any other with its text. The
//!   declarations are sorted by name and depend on nothing else, so the description is the same
//!   byte for byte on every turn, and a cached prompt prefix survives.
//! - **Every inner call is a registry call.** It goes through the run's registry
//!   ([`agent_core::CurrentRegistry`]) as a direct call would: hooks, permission rules,
//!   validation, timeouts, retries, the output budget. A failed or denied call rejects its
//!   promise with an `Error` the program may catch. Calls the program awaits together
//!   (`Promise.all`) run at the same time when their skills are concurrency-safe; any other call
//!   runs alone.
//! - **Pausing inside code.** A call a hook asks a person about pauses the program: once nothing
//!   else can run, the `run_code` call suspends ([`agent_core::SkillError::Suspended`]), and the
//!   run pauses with the call named by its place (`run_code › delete_branch`, id `p1/c2`: the
//!   program's second call). On resume the program runs again from the start; each call that
//!   completed before the pause is answered from its record instead of running again, the
//!   decided call runs once (or is denied), and the program goes on. A program that makes other
//!   calls when it runs again (it cannot depend on a clock or randomness, but could on a
//!   changed result) has those calls refused.
//! - **Media stays with the host.** A skill that answers with media (an image, a PDF) answers a
//!   program with `{"text": "…", "media": [{"media_type", "bytes", "name", "url"}]}`: what the
//!   media is, not its bytes (a program handles JSON; a 5 MB image is not copied into the
//!   interpreter). The media itself does not reach the model through a program; a model that
//!   needs to see it calls the skill directly.
//! - **What comes back.** `{"value": <what it returned>, "printed": "<what it printed>"}`, the
//!   printed text cut at [`DEFAULT_MAX_PRINTED`] characters; an exception, a syntax error (with
//!   line and column in the program as written), the time limit, the memory cap or the call
//!   limit is an error result, and the run goes on. A returned value larger than
//!   [`DEFAULT_MAX_ARGUMENT_BYTES`] comes back as its text, cut there, never read into a tree.
//! - **What crosses to the host is bounded where it is made.** A call's arguments are written as
//!   JSON inside the interpreter, under its memory cap, and a call whose JSON is longer than
//!   [`DEFAULT_MAX_ARGUMENT_BYTES`] ([`RunCode::max_argument_bytes`]) throws in the program
//!   before anything crosses (16 KB of program can build 12 MB of arguments, which the host's
//!   JSON tree would hold many times over). The programs of one `run_code` skill run at most
//!   [`DEFAULT_MAX_PROGRAMS`] at a time ([`RunCode::max_programs`]), so twenty in one turn hold
//!   at most four memory caps; the others wait for a turn within their own time limit.
//!
//! **Why QuickJS** (through `rquickjs`): the interpreter must be a sandbox by design, bounded,
//! and build here (rustc 1.95). QuickJS is a complete JavaScript engine (the language models
//! write most reliably after Python) whose core has no file, network, process or module access at
//! all: those live in its separate `std`/`os` modules, which this crate does not build, and
//! without a module loader `import` fails. It caps memory and stack per runtime and calls an
//! interrupt handler while it runs, which this crate uses for the time limit. `rquickjs` 0.14
//! builds on rustc 1.87+. The alternatives: `monty` (a Python subset made for this) needs rustc
//! 1.96 in its current releases; `boa` (pure Rust) has no memory cap to set.
//!
//! **Durable runs and events.** In a run with a journal (Restate's, through `agent-restate`),
//! each call of a program is a step of the journal ([`agent_runtime::InnerCalls`]), made one at a
//! time in the program's order so that a replay meets them in that order: after a crash the
//! program runs again, and the calls that completed are answered from the journal (tested with
//! SIGKILL between two calls on the real Restate server). With or without a journal, each call is
//! reported to the run's sinks as an `AgentEvent::Nested` under `run_code`.
//!
//! **Limits and what was left out.** The program runs on a blocking thread of its own, so a busy
//! loop never holds up the async runtime; it is stopped at the time limit wherever it is (the
//! limit counts its calls too). Calls the program started and did not await when it ends are
//! dropped. A call to an agent used as a skill that pauses cannot be made from a program (it is
//! an error result saying so). A program's calls are reported with `step` 0: they belong to the
//! `run_code` call.

mod calls;
mod declarations;
mod interpreter;
mod skill;

pub use skill::{
    CodeMode, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_CALLS, DEFAULT_MAX_PRINTED,
    DEFAULT_MAX_PROGRAMS, DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT, Program, RUN_CODE, RunCode,
};
