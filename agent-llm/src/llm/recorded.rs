//! Replaying a recorded stream: [`replay_recorded_stream`] decodes a server-sent-events body,
//! cut into chunks as it might have arrived, through a wire format's own decoder and the same
//! pipeline as a live stream ([`super::stream`]), without a network or a runtime. For the tests
//! of the decoders and the fuzz target: compiled only with the cargo feature `test-utils`.

use futures::StreamExt;

use super::provider::WireCodec;
use super::stream::decode;
use super::{AnthropicWire, OpenAiWire, ProviderError, StreamEvent};

/// A streaming wire format, for [`decode_recorded_stream`]. Any other codec's streams are
/// replayed with [`replay_recorded_stream`], which needs no variant here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// Anthropic Messages server-sent events.
    Anthropic,
    /// OpenAI-compatible Chat Completions server-sent events.
    OpenAi,
}

/// [`replay_recorded_stream`] with the decoder of `format`.
pub fn decode_recorded_stream(
    format: WireFormat,
    chunks: &[&[u8]],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    match format {
        WireFormat::Anthropic => replay_recorded_stream::<AnthropicWire>(chunks),
        WireFormat::OpenAi => replay_recorded_stream::<OpenAiWire>(chunks),
    }
}

/// Decodes a recorded server-sent-events body with the decoder of the wire format `W`, cut into
/// `chunks` as it might have arrived over the network, exactly as a live stream is decoded: for
/// replaying traffic and for fuzzing the decoders. The events are returned up to the first
/// error, which is returned too.
pub fn replay_recorded_stream<W: WireCodec>(
    chunks: &[&[u8]],
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    use eventsource_stream::Eventsource;
    let owned: Vec<Result<bytes::Bytes, std::convert::Infallible>> = chunks
        .iter()
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    let events = futures::stream::iter(owned).eventsource().map(|item| {
        item.map_err(|e| ProviderError::Stream {
            provider: W::NAME.into(),
            error_type: None,
            message: format!("the stream is malformed: {e}"),
        })
    });
    let decoded = decode(events, W::Decoder::default());
    futures::executor::block_on(async move {
        let mut decoded = Box::pin(decoded);
        let mut out = Vec::new();
        while let Some(item) = decoded.next().await {
            match item {
                Ok(event) => out.push(event),
                Err(error) => return (out, Some(error)),
            }
        }
        (out, None)
    })
}
