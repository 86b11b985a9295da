//! How a run starts: a [`RunRequest`](super::RunRequest) (`run_request.rs`), kept in a session by
//! `in_session.rs`.

pub(super) mod in_session;
pub(super) mod run_request;
