//! The HTTP server attacked over real TCP on 127.0.0.1, in one test binary: its two pools of
//! connections, and the defences an outside attacker meets. The churn of thousands of token-less
//! connections (`http_churn.rs`, which needs the process and both cores to itself) and `accept()`
//! failing with `EMFILE` (`http_accept_errors.rs`, which lowers the process's `RLIMIT_NOFILE`)
//! keep binaries of their own.

#[path = "../support/raw_http.rs"]
mod raw_http;

mod http_layers;
mod http_pools;
mod http_security;
