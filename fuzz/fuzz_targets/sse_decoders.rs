//! Random bytes, cut into random chunks, through every stream decoder: never a panic, and the
//! same answer whatever the chunk boundaries.
#![no_main]

use agent_llm::{
    AnthropicWire, GeminiWire, OpenAiResponsesWire, OpenAiWire, ProviderError, StreamEvent,
    replay_recorded_stream,
};
use libfuzzer_sys::fuzz_target;

type Replay = fn(&[&[u8]]) -> (Vec<StreamEvent>, Option<ProviderError>);

const DECODERS: [Replay; 4] = [
    replay_recorded_stream::<AnthropicWire>,
    replay_recorded_stream::<OpenAiWire>,
    replay_recorded_stream::<OpenAiResponsesWire>,
    replay_recorded_stream::<GeminiWire>,
];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let cut = if rest.is_empty() { 0 } else { first as usize % (rest.len() + 1) };
    for replay in DECODERS {
        let (whole, whole_error) = replay(&[rest]);
        let (split, split_error) = replay(&[&rest[..cut], &rest[cut..]]);
        let answer = |events: &[StreamEvent]| match events.last() {
            Some(StreamEvent::Done(response)) => Some(response.clone()),
            _ => None,
        };
        assert_eq!(answer(&whole), answer(&split), "chunk boundaries changed the answer");
        assert_eq!(whole_error.is_some(), split_error.is_some());
    }
});
