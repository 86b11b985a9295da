//! The calls left open on a person's answer: a `tools/call` [`Request`] that the server asked
//! something during ([`OpenCall`]), kept per connection in [`OpenCalls`] under a key the paused
//! run's state names, until the run continues (in this process) or the connection closes.

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolResponse, CallToolResult, CancelledNotificationParam, CreateMessageResult,
    ElicitResult, ElicitationAction, ErrorData, RequestId, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::elicitation::{Elicitation, ElicitationAnswer};
use super::sampling::{Sampling, SamplingRequest};

/// How many calls of one connection may stay open on a question at once; one more closes the
/// oldest (its request is cancelled, its question answered `cancel`).
pub const MAX_OPEN_ELICITATIONS: usize = 32;

/// A `tools/call` request to the server; dropped before its answer came, it is withdrawn (the
/// server is told to cancel it).
pub(super) struct Request {
    pub(super) answer: JoinHandle<Result<CallToolResponse, ServiceError>>,
    pub(super) id: RequestId,
    pub(super) peer: Peer<RoleClient>,
}

impl Drop for Request {
    fn drop(&mut self) {
        if self.answer.is_finished() {
            return;
        }
        self.answer.abort();
        let peer = self.peer.clone();
        let id = self.id.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = "the client stopped waiting for the call".to_owned();
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                    .await;
            });
        }
    }
}

/// What a `tools/call` answer is.
pub(super) fn call_response(result: ServerResult) -> Result<CallToolResponse, ServiceError> {
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        // A result without `content` reads as an empty one.
        ServerResult::EmptyResult(_) => Ok(CallToolResponse::Complete(CallToolResult::default())),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// A call whose request is open on a question, while its run waits for a person.
pub(super) struct OpenCall {
    pub(super) request: Request,
    pub(super) question: Open,
    pub(super) child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
}

/// What an open call waits on a person for, and where the answer goes.
pub(super) enum Open {
    Elicit {
        reply: oneshot::Sender<ElicitResult>,
        elicitation: Elicitation,
    },
    Sample {
        reply: oneshot::Sender<Result<CreateMessageResult, ErrorData>>,
        sampling: Sampling,
        request: SamplingRequest,
        reason: String,
    },
}

/// The open calls of one connection, by the key their suspension's state names.
#[derive(Default)]
pub(super) struct OpenCalls {
    next: u64,
    calls: BTreeMap<u64, (String, OpenCall)>,
}

/// A key no other process makes: this process's tag and a number.
fn process_tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{:x}{:x}", std::process::id(), nanos)
    })
}

impl OpenCalls {
    pub(super) fn insert(&mut self, call: OpenCall) -> String {
        while self.calls.len() >= MAX_OPEN_ELICITATIONS {
            if let Some((_, (key, _oldest))) = self.calls.pop_first() {
                tracing::warn!(
                    key,
                    "closed the oldest call open on a question: too many open"
                );
            }
        }
        self.next += 1;
        let key = format!("{}-{}", process_tag(), self.next);
        self.calls.insert(self.next, (key.clone(), call));
        key
    }

    pub(super) fn take(&mut self, key: &str) -> Option<OpenCall> {
        let number = self
            .calls
            .iter()
            .find(|(_, (k, _))| k == key)
            .map(|(n, _)| *n)?;
        self.calls.remove(&number).map(|(_, call)| call)
    }

    /// How many calls are open on a question.
    pub(super) fn len(&self) -> usize {
        self.calls.len()
    }
}

impl OpenCalls {
    /// Closes every call (their requests are withdrawn); continuing one of them then fails with
    /// the expired error.
    pub(super) fn close_all(&mut self) {
        drop(std::mem::take(&mut self.calls));
    }
}

/// The answer for an open call's server.
pub(super) enum Answer {
    Elicit(oneshot::Sender<ElicitResult>, ElicitResult),
    Sample(
        oneshot::Sender<Result<CreateMessageResult, ErrorData>>,
        Result<(Sampling, SamplingRequest), ErrorData>,
    ),
}

/// What the server gets for an answer: content only for an accepted form.
pub(super) fn result_of(question: &Elicitation, answer: &ElicitationAnswer) -> ElicitResult {
    match (question, answer) {
        (Elicitation::Url { .. }, ElicitationAnswer::Accept(_)) => {
            ElicitResult::new(ElicitationAction::Accept)
        }
        _ => answer.to_result(),
    }
}
