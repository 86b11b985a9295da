//! A transport that counts the server's `notifications/tools/list_changed` and
//! `notifications/resources/list_changed` as they are read, in the order the server sent its
//! messages: before rmcp hands the notification to the handler (on a task of its own) and before
//! any answer read after it. A call that sees a count grow while it waited knows the server
//! changed that list before answering it.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// `inner`, counting the tool-list changes it reads in `tools` and the resource-list changes
/// in `resources`.
pub(super) struct Watched<T> {
    inner: T,
    tools: Arc<AtomicU64>,
    resources: Arc<AtomicU64>,
}

impl<T> Watched<T> {
    /// `inner`, counting in `(tools, resources)` (the connection's `Follow::counters`).
    pub(super) fn new(inner: T, (tools, resources): (Arc<AtomicU64>, Arc<AtomicU64>)) -> Self {
        Watched {
            inner,
            tools,
            resources,
        }
    }
}

impl<T> Transport<RoleClient> for Watched<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(notification)) = &message {
            match notification.notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    self.tools.fetch_add(1, Ordering::SeqCst);
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    self.resources.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            }
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
