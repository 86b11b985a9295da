// The facade's root holds what a first agent needs: stream plumbing, test helpers, format
// versions and the loop's bookkeeping live in modules (`eugene::llm`, `eugene::run`,
// `eugene::skills`), so each of these is an error at the root. (The wire formats, which need the
// `http` feature these cases are built without, are checked by the facade's doctests.)
use eugene::{
    CurrentRegistry, Goal, InnerCalls, PathStep, RUN_STATE_VERSION, RunScope, WIRE,
    WeakLiveSkills, all_events, answer_of, bench_support,
};

// They are where their modules say.
use eugene::llm::{WIRE as _, all_events as _, answer_of as _};
use eugene::run::{Goal as _, InnerCalls as _, RUN_STATE_VERSION as _, bench_support as _};
use eugene::skills::{CurrentRegistry as _, PathStep as _, RunScope as _, WeakLiveSkills as _};

fn main() {}
