//! The bounded buffer between a run and its event stream. The run writes into it without ever
//! waiting (its sink is called on the run's own task), the response reads from it as fast as the
//! client reads. A client that falls behind by more than the bound — [`BufferLimits::events`]
//! events or [`BufferLimits::bytes`] bytes of them — has its stream **cut**: what was buffered is
//! dropped, nothing more is written to it, and its response ends with an error (so the client
//! sees a broken stream, never a `RUN_FINISHED` it did not get). The run itself goes on, is not
//! slowed, and its outcome is kept in the thread.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc;

/// How far a client's stream may fall behind its run before it is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferLimits {
    /// Events buffered at most.
    pub events: usize,
    /// Bytes of events (as sent) buffered at most.
    pub bytes: usize,
}

impl Default for BufferLimits {
    /// 4,096 events and 8 MiB.
    fn default() -> Self {
        BufferLimits {
            events: 4096,
            bytes: 8 * 1024 * 1024,
        }
    }
}

/// The run's side: events go in, never waiting.
pub(crate) struct Outbox {
    sender: Mutex<Option<mpsc::Sender<Bytes>>>,
    shared: Arc<Shared>,
    max_bytes: usize,
}

/// The stream's side.
pub(crate) struct Inbox {
    receiver: mpsc::Receiver<Bytes>,
    shared: Arc<Shared>,
}

struct Shared {
    bytes: AtomicUsize,
    cut: AtomicBool,
}

/// A buffer with these limits, as its two sides.
pub(crate) fn buffer(limits: BufferLimits) -> (Outbox, Inbox) {
    let (sender, receiver) = mpsc::channel(limits.events.max(1));
    let shared = Arc::new(Shared {
        bytes: AtomicUsize::new(0),
        cut: AtomicBool::new(false),
    });
    (
        Outbox {
            sender: Mutex::new(Some(sender)),
            shared: shared.clone(),
            max_bytes: limits.bytes,
        },
        Inbox { receiver, shared },
    )
}

impl Outbox {
    /// Buffers `frame`; past a bound, cuts the stream instead.
    pub(crate) fn push(&self, frame: Bytes) {
        let mut sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        let Some(open) = sender.as_ref() else {
            return;
        };
        let len = frame.len();
        let over = self.shared.bytes.fetch_add(len, Ordering::AcqRel) + len > self.max_bytes;
        if over || open.try_send(frame).is_err() {
            if !open.is_closed() {
                self.shared.cut.store(true, Ordering::Release);
                tracing::warn!("an AG-UI client fell behind its run: its stream is cut");
            }
            *sender = None;
        }
    }

    /// Ends the stream after what is buffered.
    pub(crate) fn close(&self) {
        self.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl Inbox {
    /// The next frame: `Ok(None)` at the end, `Err` once the stream was cut.
    pub(crate) async fn next(&mut self) -> Result<Option<Bytes>, StreamCut> {
        if self.shared.cut.load(Ordering::Acquire) {
            return Err(StreamCut);
        }
        let frame = self.receiver.recv().await;
        if self.shared.cut.load(Ordering::Acquire) {
            return Err(StreamCut);
        }
        if let Some(frame) = &frame {
            self.shared.bytes.fetch_sub(frame.len(), Ordering::AcqRel);
        }
        Ok(frame)
    }
}

/// The stream fell behind its run by more than its [`BufferLimits`] and was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client fell behind the run by more than the server buffers: the stream was cut")]
pub struct StreamCut;
