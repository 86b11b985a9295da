//! Where the conversation's prompt-cache breakpoints go.
//!
//! The Messages API caches a request's prefix (tools, then system, then messages) up to and
//! including a block marked `cache_control: {type: ephemeral}`, and a later request whose
//! prefix is the same up to one of its own marked blocks reads it back. A request may mark at
//! most four blocks. A prefix shorter than the model's minimum (1,024 tokens for most models,
//! more for some) is neither written nor charged for, so marking one costs nothing.
//!
//! An agent's conversation grows by one assistant answer and one user message (its tool
//! results) a turn. So the newest user message is marked, which writes the whole conversation
//! to the cache, and so is the user message before it, which was the newest one of the
//! previous request: that prefix was written then, and is read now, however many blocks the
//! turn between added (the API looks back only about 20 blocks from a breakpoint for an
//! earlier one). Each turn then pays the cache-write rate for what it added and the
//! cache-read rate for everything before.

use serde_json::{Value, json};

/// Breakpoints a request may carry.
pub(super) const MAX_BREAKPOINTS: usize = 4;

/// Conversation breakpoints worth placing: the newest user message and the one before it.
const CONVERSATION_BREAKPOINTS: usize = 2;

/// Marks the last markable block of each of the last `available` (at most two) user messages
/// of `messages` (in the API's shape, tool results being user messages), newest first.
pub(super) fn mark_conversation(messages: &mut [Value], available: usize) {
    let wanted = available.min(CONVERSATION_BREAKPOINTS);
    let users = messages
        .iter_mut()
        .rev()
        .filter(|m| m["role"] == "user")
        .take(wanted);
    for message in users {
        let Some(blocks) = message["content"].as_array_mut() else {
            continue;
        };
        if let Some(block) = blocks.iter_mut().rev().find(|b| markable(b)) {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
    }
}

/// Whether the API accepts a breakpoint on `block`: not on thinking blocks, not on empty text.
fn markable(block: &Value) -> bool {
    match block["type"].as_str() {
        Some("thinking" | "redacted_thinking") | None => false,
        Some("text") => block["text"].as_str().is_some_and(|t| !t.is_empty()),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(blocks: Value) -> Value {
        json!({"role": "user", "content": blocks})
    }

    fn marked(messages: &[Value]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (m, message) in messages.iter().enumerate() {
            for (b, block) in message["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                if block.get("cache_control").is_some() {
                    out.push((m, b));
                }
            }
        }
        out
    }

    #[test]
    fn the_newest_user_message_and_the_one_a_turn_before_are_marked_on_their_last_block() {
        let mut messages = vec![
            user(json!([{"type": "text", "text": "goal"}])),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "t", "input": {}}]}),
            user(json!([{"type": "tool_result", "tool_use_id": "a", "content": "1"}])),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "t", "input": {}}]}),
            user(json!([
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
                {"type": "text", "text": "and then?"}
            ])),
        ];
        mark_conversation(&mut messages, 2);
        assert_eq!(marked(&messages), [(2, 0), (4, 1)]);
    }

    #[test]
    fn fewer_free_breakpoints_mark_fewer_messages_and_none_marks_none() {
        let conversation = vec![
            user(json!([{"type": "text", "text": "a"}])),
            json!({"role": "assistant", "content": [{"type": "text", "text": "b"}]}),
            user(json!([{"type": "text", "text": "c"}])),
        ];
        for (available, expected) in [(0, vec![]), (1, vec![(2, 0)]), (4, vec![(0, 0), (2, 0)])] {
            let mut messages = conversation.clone();
            mark_conversation(&mut messages, available);
            assert_eq!(marked(&messages), expected, "{available} free");
        }
    }

    #[test]
    fn blocks_the_api_refuses_a_breakpoint_on_are_passed_over() {
        let mut messages = vec![user(json!([
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            {"type": "text", "text": ""}
        ]))];
        mark_conversation(&mut messages, 2);
        assert_eq!(marked(&messages), [(0, 0)]);
        let mut empty = vec![user(json!([{"type": "text", "text": ""}]))];
        mark_conversation(&mut empty, 2);
        assert!(marked(&empty).is_empty());
        assert!(!markable(
            &json!({"type": "thinking", "thinking": "x", "signature": "s"})
        ));
    }
}
