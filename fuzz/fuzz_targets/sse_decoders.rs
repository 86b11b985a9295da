//! Random bytes, cut into random chunks, through both stream decoders: never a panic, and the same
//! answer whatever the chunk boundaries.
#![no_main]

use agent_llm::{StreamEvent, WireFormat, decode_recorded_stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let cut = if rest.is_empty() { 0 } else { first as usize % (rest.len() + 1) };
    for format in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let (whole, whole_error) = decode_recorded_stream(format, &[rest]);
        let (split, split_error) = decode_recorded_stream(format, &[&rest[..cut], &rest[cut..]]);
        let answer = |events: &[StreamEvent]| match events.last() {
            Some(StreamEvent::Done(response)) => Some(response.clone()),
            _ => None,
        };
        assert_eq!(answer(&whole), answer(&split), "chunk boundaries changed the answer");
        assert_eq!(whole_error.is_some(), split_error.is_some());
    }
});
