//! Compaction: when the transcript is over its limit, the media of the messages between the goal
//! and the newest turns is dropped first (each part replaced by a line that says what it was);
//! if that is not enough, those messages are summarised by the run's own model into one message.
//! The cut never separates a tool call from its results.
//!
//! A media part counts toward the limit by an estimate, since its tokens depend on the model:
//! an image as [`IMAGE_CHARS`] characters (about 1,600 tokens, what a one-megapixel image costs),
//! a document or a sound as a character per three bytes.

use agent_core::content::{MediaKind, Part};
use agent_llm::llm::LlmProvider;
use agent_llm::message::{ChatRequest, Message, Role, Usage};

/// What an image counts for against a transcript limit, in characters.
pub(crate) const IMAGE_CHARS: usize = 6_400;

/// What a part counts for against a transcript limit, in characters.
pub(in crate::runtime) fn part_chars(part: &Part) -> usize {
    match part {
        Part::Text(text) => text.chars().count(),
        Part::Media(media) if media.kind() == MediaKind::Image => IMAGE_CHARS,
        Part::Media(media) => media.len().div_ceil(3).max(IMAGE_CHARS / 4),
    }
}

/// What dropping old media took out.
pub(in crate::runtime) struct Dropped {
    /// Parts replaced.
    pub parts: usize,
    /// Their bytes.
    pub bytes: usize,
}

/// Replaces the media of the messages after the goal and before the kept tail (as [`cut`] places
/// it) with a text part each: `[image/png, 48213 bytes, "chart.png": removed to keep the
/// conversation within its limit]`. `None` when there was none.
pub(in crate::runtime) fn drop_old_media(
    transcript: &mut [Message],
    keep_recent: usize,
) -> Option<Dropped> {
    let cut = cut(transcript, keep_recent)?;
    let mut dropped = Dropped { parts: 0, bytes: 0 };
    for message in &mut transcript[1..cut] {
        for part in &mut message.parts {
            if let Part::Media(media) = part {
                dropped.parts += 1;
                dropped.bytes += media.len();
                *part = Part::Text(format!(
                    "[{}: removed to keep the conversation within its limit]",
                    media.describe()
                ));
            }
        }
    }
    (dropped.parts > 0).then_some(dropped)
}

/// What one attempt at compacting did.
pub(in crate::runtime) struct Attempt {
    /// Tokens the summary call used (none when it failed).
    pub usage: Usage,
    /// What changed; `None` when the summary call failed or came back empty, and the transcript
    /// is unchanged.
    pub compacted: Option<Compacted>,
}

/// A successful compaction.
pub(in crate::runtime) struct Compacted {
    /// Messages replaced by the summary.
    pub removed: usize,
    /// Messages kept after the goal (the summary included).
    pub kept: usize,
    /// The summary's length in characters.
    pub summary_chars: usize,
}

/// Where the kept tail starts: at least `keep_recent` messages from the end, at a message that is
/// not a tool result (so no call is separated from its results), after the goal and leaving at
/// least two messages to summarise. `None` when there is nothing to cut.
pub(in crate::runtime) fn cut(transcript: &[Message], keep_recent: usize) -> Option<usize> {
    let mut cut = transcript.len().saturating_sub(keep_recent.max(1));
    while cut > 0 && transcript[cut].role == Role::Tool {
        cut -= 1;
    }
    (cut >= 3).then_some(cut)
}

/// Summarises everything between the goal and the kept tail with `provider`, and puts the summary
/// in its place. `None` when nothing can be cut. The transcript changes only once the summary is
/// in, so dropping this future (a cancelled run) leaves it as it was.
pub(in crate::runtime) async fn compact(
    transcript: &mut Vec<Message>,
    provider: &dyn LlmProvider,
    keep_recent: usize,
) -> Option<Attempt> {
    let cut = cut(transcript, keep_recent)?;
    let Some((summary, usage)) = summarise(&transcript[1..cut], provider).await else {
        return Some(Attempt {
            usage: Usage::default(),
            compacted: None,
        });
    };
    if summary.trim().is_empty() {
        return Some(Attempt {
            usage,
            compacted: None,
        });
    }
    let summary_chars = summary.chars().count();
    let message = Message::user(format!(
        "[Summary of the earlier part of this conversation]\n{summary}"
    ));
    transcript.splice(1..cut, [message]);
    Some(Attempt {
        usage,
        compacted: Some(Compacted {
            removed: cut - 1,
            kept: transcript.len() - 1,
            summary_chars,
        }),
    })
}

/// A summary of `messages` by the model, with the tokens it took; `None` when the call failed.
/// The text may be empty (the model wrote nothing).
async fn summarise(messages: &[Message], provider: &dyn LlmProvider) -> Option<(String, Usage)> {
    let mut text = String::new();
    for message in messages {
        let who = match message.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool result",
        };
        text.push_str(&format!("[{who}] {}\n", message.content));
        for part in &message.parts {
            match part {
                Part::Text(more) => text.push_str(&format!("{more}\n")),
                Part::Media(media) => text.push_str(&format!("[{}]\n", media.describe())),
            }
        }
        for call in &message.tool_calls {
            text.push_str(&format!("[tool call] {} {}\n", call.name, call.arguments));
        }
    }
    let prompt = [Message::user(format!(
        "Summarise this part of an agent's work so it can continue without it: what was \
         tried, what was found (files, facts, numbers), what failed and what is left to do. \
         Be concise.\n\n{text}"
    ))];
    let request = ChatRequest::new(&prompt)
        .system("You write concise, factual summaries.")
        .max_tokens(1024);
    let response = provider.complete(&request).await.ok()?;
    Some((response.message.content, response.usage))
}

/// A message's size in characters, as the transcript limit counts it (media by an estimate).
pub(in crate::runtime) fn message_chars(message: &Message) -> usize {
    message.content.chars().count()
        + message
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>()
        + message.parts.iter().map(part_chars).sum::<usize>()
}
