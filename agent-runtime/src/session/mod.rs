//! Sessions: a conversation kept in a [`SessionStore`] under an id, so that it continues across
//! processes, and a run paused for approval there can be continued by id. A run is kept in a
//! session with [`RunRequest::in_session`](crate::RunRequest::in_session).
//!
//! ```
//! use agent_core::Registry;
//! use agent_llm::{MockProvider, MockReply};
//! use agent_runtime::{AgentRuntime, MemorySessionStore};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let store = MemorySessionStore::default();
//! let provider = MockProvider::new([MockReply::text("Hi!"), MockReply::text("You said hello.")]);
//! let runtime = AgentRuntime::new(provider, Registry::new());
//! runtime.run("Hello.").in_session(&store, "chat-1").await.unwrap();
//! // Later, maybe in another process with a store on disk:
//! let outcome = runtime.run("What did I say?").in_session(&store, "chat-1").await.unwrap();
//! assert_eq!(outcome.transcript.len(), 4);
//! # }
//! ```
//!
//! A session's paused run continues with [`AgentRuntime::decide`](crate::AgentRuntime::decide):
//! `runtime.decide([("c1", Decision::Approve)]).in_session(&store, "chat-1").await`.
//!
//! **Concurrency.** Every save names the version it read ([`SessionStore::save`]); a save over a
//! newer version is refused with [`StoreError::Conflict`], so of two runs of one session that
//! race, one is kept and the other is told, never silently lost.

mod claims;
pub(crate) mod error;
#[cfg(feature = "redb")]
mod redb;
mod store;

pub use self::claims::PauseClaims;
pub use self::error::StoreError;
#[cfg(feature = "redb")]
pub use self::redb::RedbSessionStore;
pub use self::store::{LoadedSession, MemorySessionStore, SessionRecord, SessionStore};
