//! Streamed answers: one `GenerateContentResponse` per server-sent event, no end marker; the
//! stream is complete once one of them gave a finish reason and the server closed it.

use serde_json::Value;

use super::PROVIDER;
use super::response::{Answer, decode_error};
use crate::llm::wire::truncate;
use crate::llm::{ProviderError, SseDecoder, StreamEvent};
use crate::message::ChatResponse;

/// Decodes a `streamGenerateContent?alt=sse` stream. A pure state machine: no I/O.
#[derive(Default)]
pub struct StreamDecoder {
    answer: Answer,
}

impl SseDecoder for StreamDecoder {
    fn feed(&mut self, _event: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|e| decode_error(&format!("a chunk is not JSON ({e}): {}", truncate(data))))?;
        let mut out = Vec::new();
        self.answer.add(&value, &mut out)?;
        Ok(out)
    }

    /// Never: a finish reason may be followed by more (usage), so the stream is read to its end.
    fn is_complete(&self) -> bool {
        false
    }

    /// A stream that ended before any chunk gave a finish reason is incomplete and an error.
    fn finish(self) -> Result<ChatResponse, ProviderError> {
        if !self.answer.has_ending() {
            return Err(ProviderError::Stream {
                provider: PROVIDER.into(),
                error_type: None,
                message: if self.answer.has_content() {
                    "the stream ended before the answer was complete (no `finishReason`)".into()
                } else {
                    "the stream ended before any data".into()
                },
            });
        }
        Ok(self.answer.finish())
    }
}
