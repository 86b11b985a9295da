//! What a request asks for: an AG-UI `RunAgentInput` read into a request — the thread, the
//! run's id, and either the person's next message or decisions for the thread's pause.
//!
//! The thread's conversation is kept on the server, so of the `messages` a client sends (AG-UI
//! clients send the whole history each time) only the last one, which must be the user's, is
//! read: its text (a string, or the `text` parts of an array) is the run's goal, and its
//! `image`, `audio` and `document` parts go with it as media, each of the kind its `mimeType`
//! says (`image/*` for an image part, `audio/*` for audio, anything else for a document). A
//! part's bytes come inline (`source: {type: "data", value: <base64>, mimeType}`, checked to be
//! of that type and within [`MediaLimits`]' default part size, before the run starts) or by URL
//! (`{type: "url", value, mimeType}`: the type is required here, and a URL that is not
//! `https`/`http`/`gs` or names a loopback or private address is refused, as every provider
//! would refuse it). A `video` part, or a `file` source (a handle another provider issued),
//! cannot be sent to eugene's models: the request is refused with `RUN_ERROR` `eugene.input`,
//! and nothing runs. The request body's limit
//! ([`AguiServer::max_body_bytes`](crate::AguiServer::max_body_bytes), 1 MiB by default) bounds
//! the whole message: raise it to take larger media. `state`, `tools`, `context` and
//! `forwardedProps` are accepted and not used. A request with `resume` entries continues the
//! thread's paused run with the decisions they make ([`crate::interrupt`]), and its messages are
//! not read.

use serde::Deserialize;
use serde_json::Value;

use agent_core::content::{Media, MediaKind, MediaLimits};

use crate::interrupt::{self, Answer, ResumeEntry};

/// The longest `threadId` and `runId` accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// `RunAgentInput`, the fields read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunAgentInput {
    thread_id: String,
    run_id: String,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    resume: Option<Vec<ResumeEntry>>,
}

/// What a run starts from.
#[derive(Debug)]
pub(crate) enum Start {
    /// The person's next message: its text and media.
    Goal(String, Vec<Media>),
    /// Decisions for the thread's paused run, and the pause they answer.
    Decide(Answer),
}

/// A request, read.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    /// What to start from, or why the request cannot start a run (sent as `RUN_ERROR`).
    pub(crate) start: Result<Start, String>,
    /// For decisions, what identifies them as an answer ([`interrupt::fingerprint`]).
    pub(crate) answer: Option<String>,
}

/// Reads `body`; an error (the body is not a `RunAgentInput`, an id too long) is answered
/// `400` before any stream starts.
pub(crate) fn read(body: &[u8]) -> Result<Request, String> {
    let input: RunAgentInput = serde_json::from_slice(body)
        .map_err(|error| format!("the body is not an AG-UI RunAgentInput: {error}"))?;
    for (name, id) in [("threadId", &input.thread_id), ("runId", &input.run_id)] {
        if id.is_empty() || id.len() > MAX_ID_BYTES {
            return Err(format!(
                "`{name}` must have 1 to {MAX_ID_BYTES} bytes, not {}",
                id.len()
            ));
        }
    }
    let (start, answer) = match &input.resume {
        Some(entries) if !entries.is_empty() => {
            let start = interrupt::decisions(entries).map(Start::Decide);
            let answer = start.is_ok().then(|| interrupt::fingerprint(entries));
            (start, answer)
        }
        _ => (
            goal(&input.messages).map(|(text, media)| Start::Goal(text, media)),
            None,
        ),
    };
    Ok(Request {
        thread_id: input.thread_id,
        run_id: input.run_id,
        start,
        answer,
    })
}

/// The text and media of the last message, which must be the user's.
fn goal(messages: &[Value]) -> Result<(String, Vec<Media>), String> {
    let Some(last) = messages.last() else {
        return Err("the request has no messages and no resume: nothing to run".into());
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return Err("the last message is not the user's: nothing to run".into());
    }
    let (text, media) = match last.get("content") {
        Some(Value::String(text)) => (text.clone(), Vec::new()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            let mut media = Vec::new();
            for (n, part) in parts.iter().enumerate() {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => texts.extend(part.get("text").and_then(Value::as_str)),
                    Some(kind @ ("image" | "audio" | "document")) => media
                        .push(media_of(part).map_err(|why| format!("part {n} ({kind}): {why}"))?),
                    Some(other) => {
                        return Err(format!(
                            "part {n}: a `{other}` part cannot be sent to the model (text, \
                             image, audio and document parts can)"
                        ));
                    }
                    None => return Err(format!("part {n} has no `type`")),
                }
            }
            (texts.join("\n"), media)
        }
        _ => (String::new(), Vec::new()),
    };
    if text.trim().is_empty() && media.is_empty() {
        return Err("the user's message has no text".into());
    }
    Ok((text, media))
}

/// A media part's bytes or URL, checked.
fn media_of(part: &Value) -> Result<Media, String> {
    let source = &part["source"];
    if let (Some(kind), Some(media_type)) = (part["type"].as_str(), source["mimeType"].as_str())
        && MediaKind::of(media_type).as_str() != kind
    {
        return Err(format!("`{media_type}` is not {kind}"));
    }
    let value = source["value"]
        .as_str()
        .ok_or("its source has no `value`")?;
    let media_type = source["mimeType"].as_str();
    match source["type"].as_str() {
        Some("data") => {
            let media_type = media_type.ok_or("inline bytes need their `mimeType`")?;
            Media::from_base64(media_type, value, &MediaLimits::default())
                .map_err(|error| error.to_string())
        }
        Some("url") => {
            let media_type = media_type.ok_or("a URL needs its `mimeType` here")?;
            agent_core::content::check::check_url(value, false)?;
            Ok(Media::url(value, media_type))
        }
        Some("file") => {
            Err("a provider's file handle cannot be used: send the bytes or a URL".into())
        }
        _ => Err("its source is not `data` or `url`".into()),
    }
}
