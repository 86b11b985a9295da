//! Recorded streams decoded from many cuts: split in two at a byte, a stream decodes to exactly the
//! same answer; cut short at a byte, it gives the complete answer or a clean error, never a wrong
//! answer and never a panic. (The fuzz target `sse_decoders` covers every byte and random data.)

use agent_llm::{
    GeminiWire, OpenAiResponsesWire, ProviderError, StreamEvent, WireFormat,
    decode_recorded_stream, replay_recorded_stream,
};

/// A decoder of recorded chunks.
type Replay<'a> = dyn Fn(&[&[u8]]) -> (Vec<StreamEvent>, Option<ProviderError>) + 'a;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recordings")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn done(events: &[StreamEvent]) -> Option<&agent_llm::ChatResponse> {
    match events.last() {
        Some(StreamEvent::Done(response)) => Some(response),
        _ => None,
    }
}

fn check(format: WireFormat, name: &str) {
    check_bytes(
        &move |chunks| decode_recorded_stream(format, chunks),
        name,
        &fixture(name),
    );
}

/// The streamed body of interaction `i` of a recorded cassette.
fn cassette_body(name: &str, i: usize) -> Vec<u8> {
    let cassette: serde_json::Value =
        serde_yaml_ng::from_slice(&fixture(name)).expect("the cassette is YAML");
    let body = cassette["interactions"][i]["response"]["body"]["string"].as_str();
    body.expect("a streamed answer").as_bytes().to_vec()
}

fn check_bytes(replay: &Replay<'_>, name: &str, bytes: &[u8]) {
    let (events, error) = replay(&[bytes]);
    assert!(error.is_none(), "{name}: {error:?}");
    let full = done(&events).expect("the whole stream decodes").clone();
    // Every position around a line break (where events and fields begin and end), and every 17th
    // byte in between; all of them would take a minute in a debug build.
    let cuts = (0..=bytes.len()).filter(|&i| {
        i % 17 == 0
            || i == bytes.len()
            || (i.saturating_sub(1)..=(i + 1).min(bytes.len() - 1)).any(|j| bytes[j] == b'\n')
    });
    for cut in cuts {
        let (split, error) = replay(&[&bytes[..cut], &bytes[cut..]]);
        assert!(error.is_none(), "{name} split at {cut}: {error:?}");
        assert_eq!(done(&split), Some(&full), "{name} split at {cut}");

        let (short, error) = replay(&[&bytes[..cut]]);
        match (done(&short), error) {
            (Some(response), None) => {
                // Complete in what matters: the message and why it stopped. (An OpenAI-compatible
                // stream cut after its finish reason but before the usage chunk lacks the usage.)
                assert_eq!(response.message, full.message, "{name} cut at {cut}");
                assert_eq!(
                    response.stop_reason, full.stop_reason,
                    "{name} cut at {cut}"
                );
            }
            (None, Some(_)) => {}
            (response, error) => panic!(
                "{name} cut at {cut}: neither an answer nor an error: {response:?} {error:?}"
            ),
        }
    }
}

#[test]
fn anthropic_text_and_tool_use_survives_cuts() {
    check(
        WireFormat::Anthropic,
        "anthropic_stream_text_then_single_tool_use_partial_json.sse",
    );
}

#[test]
fn anthropic_truncated_tool_input_survives_cuts() {
    check(
        WireFormat::Anthropic,
        "anthropic_stream_max_tokens_truncated_mid_tool_input.sse",
    );
}

#[test]
fn openai_parallel_tool_calls_survive_cuts() {
    check(
        WireFormat::OpenAi,
        "openai_chat_stream_two_parallel_tool_calls_finish_and_usage.sse",
    );
}

#[test]
fn responses_streamed_call_survives_cuts() {
    let name = "openai_responses_vcr_stream_tool_call_then_text_roundtrip.yaml";
    check_bytes(
        &replay_recorded_stream::<OpenAiResponsesWire>,
        name,
        &cassette_body(name, 0),
    );
}

#[test]
fn responses_encrypted_reasoning_then_call_survives_cuts() {
    let name = "openai_responses_vcr_stream_encrypted_reasoning_then_tool_call.yaml";
    check_bytes(
        &replay_recorded_stream::<OpenAiResponsesWire>,
        name,
        &cassette_body(name, 0),
    );
}

#[test]
fn gemini_streams_of_text_calls_and_thoughts_survive_cuts() {
    for name in [
        "gemini_vcr_stream_text_system_instruction.yaml",
        "gemini_vcr_stream_sequential_function_calls_roundtrip.yaml",
        "gemini_vcr_stream_thought_signature_on_function_call_roundtrip.yaml",
        "gemini_vcr_stream_thoughts_then_signed_text.yaml",
    ] {
        check_bytes(
            &replay_recorded_stream::<GeminiWire>,
            name,
            &cassette_body(name, 0),
        );
    }
}
