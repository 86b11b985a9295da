//! Transcript repair before a run resumes: every tool call gets exactly one result, right after
//! its assistant message and in call order, so the transcript is valid for both wire formats;
//! and the note that repairs an answer cut off mid-call (the call is not run; the model is told).

use agent_core::call::ToolResult;
use agent_core::error::SkillError;
use agent_llm::message::{Message, Role, TruncatedToolCall};

/// Makes a transcript given to `resume` valid for both wire formats before any model sees it: the
/// results right after each assistant message that made calls answer those calls, once each, in
/// call order. A call without a result (a transcript saved before its calls were answered) gets
/// an error result saying it was not run; it is not run now, since it may have run before the
/// transcript was saved. Results that match no call are kept, after the others.
pub(in crate::runtime) fn answer_unanswered_calls(transcript: &mut Vec<Message>) {
    let mut i = 0;
    while i < transcript.len() {
        if transcript[i].tool_calls.is_empty() {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = transcript[start..]
            .iter()
            .position(|m| m.role != Role::Tool)
            .map_or(transcript.len(), |n| start + n);
        let calls = &transcript[i].tool_calls;
        let in_order = end - start == calls.len()
            && calls
                .iter()
                .zip(&transcript[start..end])
                .all(|(call, m)| m.tool_call_id.as_ref() == Some(&call.id));
        if in_order {
            i = end;
            continue;
        }
        let calls = calls.clone();
        let mut results: Vec<Message> = transcript.drain(start..end).collect();
        let mut answers = Vec::with_capacity(calls.len() + results.len());
        for call in &calls {
            match results
                .iter()
                .position(|m| m.tool_call_id.as_ref() == Some(&call.id))
            {
                Some(at) => answers.push(results.remove(at)),
                None => answers.push(Message::tool_result(&ToolResult::new(
                    call,
                    Err(SkillError::tool(
                        "this call was not run: the conversation was resumed before it was \
                         answered. Make the call again if you still need it",
                    )),
                ))),
            }
        }
        answers.append(&mut results);
        i = start + answers.len();
        transcript.splice(start..start, answers);
    }
}

/// The message that tells the model its calls were cut off by the token limit and not run.
pub(in crate::runtime) fn cut_off_notice(truncated: &[TruncatedToolCall]) -> Option<Message> {
    if truncated.is_empty() {
        return None;
    }
    let names: Vec<String> = truncated.iter().map(|c| format!("`{}`", c.name)).collect();
    Some(Message::user(format!(
        "Your answer was cut off by the token limit while you were writing a call to {}; \
         it was not run. Make the call again with shorter arguments (for example, split the work).",
        names.join(", ")
    )))
}
