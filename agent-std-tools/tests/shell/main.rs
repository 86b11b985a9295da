//! `run_shell` in one test binary: its calls and process groups, the sandbox attacked by hostile
//! commands, the agent's secrets kept from them, and the isolation attacks that run a real agent
//! process (this binary again, in child processes).

#[path = "../common/mod.rs"]
mod common;

mod shell;
mod shell_confined;
mod shell_env;
mod shell_isolation;
