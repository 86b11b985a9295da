//! A transport that counts the server's `notifications/tools/list_changed` as they are read, in
//! the order the server sent its messages: before rmcp hands the notification to the handler
//! (on a task of its own) and before any answer read after it. A call that sees the count
//! grow while it waited knows the server changed its tools before answering it.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// `inner`, counting the tool-list changes it reads in `announced`.
pub(super) struct Watched<T> {
    pub(super) inner: T,
    pub(super) announced: Arc<AtomicU64>,
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
        if let Some(JsonRpcMessage::Notification(notification)) = &message
            && matches!(
                notification.notification,
                ServerNotification::ToolListChangedNotification(_)
            )
        {
            self.announced.fetch_add(1, Ordering::SeqCst);
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
