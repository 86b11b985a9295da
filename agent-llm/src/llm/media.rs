//! Media in requests: what each wire format takes ([`MediaRules`]), the checks every part passes
//! before anything is sent, and the encodings the formats share (base64, `data:` URLs).
//!
//! A request is checked whole before it is encoded ([`prepare`]): each part's kind and media
//! type (its [`essence`](Media::essence)) must be one the format takes ([`MediaRules`]), as bytes
//! or (where the format fetches them) a URL; [`Media::check`] must pass under the format's
//! [`MediaLimits`] (bytes that are what the type says, image size read from the header, public
//! URLs only); and the request's media together must fit [`MediaRules::max_request_bytes`],
//! counted in base64 as the APIs count them. A part the caller put in the conversation that
//! fails is [`ProviderError::Media`], naming the message, the part and the format, and nothing
//! is sent; a part a tool returned that fails is replaced in the request by a line saying what
//! it was and why it was not sent (see [`prepare`]). A URL's host name is then resolved and each
//! address checked ([`check_urls_resolved`]).

use std::cell::RefCell;
use std::net::IpAddr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use agent_core::content::check::{address_kind, check_kind, url_host};
use agent_core::content::{Media, MediaKind, MediaLimits, Part};

use serde_json::Value;

use super::ProviderError;
use crate::message::{ChatRequest, Message, Role};

/// A megabyte, as the providers count their limits (2^20 bytes).
pub(super) const MB: usize = 1024 * 1024;

/// The image types OpenAI's APIs take (Chat Completions and Responses alike).
pub(super) const OPENAI_IMAGES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// OpenAI's limits (Chat Completions and Responses alike): 32 MB a file, 20 MB an image, 50 MB a
/// request.
pub(super) fn openai_rules(
    audio: &'static [&'static str],
    by_url: &'static [MediaKind],
) -> MediaRules {
    MediaRules {
        images: OPENAI_IMAGES,
        documents: &["application/pdf", "text/plain"],
        audio,
        by_url,
        limits: MediaLimits {
            max_part_bytes: 32 * MB,
            ..MediaLimits::default()
        },
        max_image_bytes: 20 * MB,
        max_request_bytes: 50 * MB,
        assistant_media: false,
    }
}

/// What a wire format takes: which media types of each kind, which kinds by URL, and how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaRules {
    /// The image types it takes (`image/png`...).
    pub images: &'static [&'static str],
    /// The document types it takes (`application/pdf`, `text/plain`...).
    pub documents: &'static [&'static str],
    /// The audio types it takes.
    pub audio: &'static [&'static str],
    /// The kinds it takes as a URL it fetches itself (the others must be bytes).
    pub by_url: &'static [MediaKind],
    /// Bounds of each part.
    pub limits: MediaLimits,
    /// The most bytes one image may hold (formats whose image limit is below their other parts').
    pub max_image_bytes: usize,
    /// The most bytes of media one request may carry, all parts together.
    pub max_request_bytes: usize,
    /// Whether an assistant message may carry media (the model's own images, sent back).
    pub assistant_media: bool,
}

impl MediaRules {
    /// Takes nothing: every media part is refused.
    pub const NONE: MediaRules = MediaRules {
        images: &[],
        documents: &[],
        audio: &[],
        by_url: &[],
        limits: MediaLimits {
            max_part_bytes: 0,
            max_image_pixels: 0,
            max_image_side: 0,
            allow_private_urls: false,
        },
        max_image_bytes: 0,
        max_request_bytes: 0,
        assistant_media: false,
    };

    fn types(&self, kind: MediaKind) -> &'static [&'static str] {
        match kind {
            MediaKind::Image => self.images,
            MediaKind::Document => self.documents,
            MediaKind::Audio => self.audio,
        }
    }
}

/// The base64 size of `media` (0 for a URL): what the APIs count against their limits.
fn encoded_len(media: &Media) -> usize {
    media.len().div_ceil(3) * 4
}

/// Why `media` in `message` cannot be sent under `rules`, if it cannot.
fn refusal(provider: &str, rules: &MediaRules, message: &Message, media: &Media) -> Option<String> {
    if message.role == Role::System || (message.role == Role::Assistant && !rules.assistant_media) {
        return Some(format!(
            "the {provider} format takes media only in user messages and tool results"
        ));
    }
    let kind = media.kind();
    let media_type = media.essence();
    let takes = rules.types(kind);
    if !takes.contains(&media_type.as_str()) {
        return Some(if takes.is_empty() {
            format!("the {provider} format takes no {}", kind.as_str())
        } else {
            format!(
                "the {provider} format takes {} of the types {}",
                kind.as_str(),
                takes.join(", ")
            )
        });
    }
    if media.url_str().is_some() && !rules.by_url.contains(&kind) {
        return Some(format!(
            "the {provider} format takes no {} by URL; attach its bytes",
            kind.as_str()
        ));
    }
    if let Err(error) = media.check(&rules.limits) {
        return Some(error.to_string());
    }
    if kind == MediaKind::Image && encoded_len(media) > rules.max_image_bytes {
        return Some(format!(
            "the {provider} format takes images of at most {} bytes of base64",
            rules.max_image_bytes
        ));
    }
    None
}

/// Checks every media part of `messages` against `rules` (see the [module docs](self)); the
/// messages to send in their place when some had to change, `None` when they go as they are.
///
/// A part the user (or the program) put in a user, system or assistant message that cannot be
/// sent is [`ProviderError::Media`]: nothing is sent, since only the caller can choose what to
/// send instead. A part a tool returned is another matter: the run should not end because a
/// skill read a video or a provider's limit is lower than another's. It is replaced, in the
/// request only (the transcript keeps it, for a provider that takes it), by a text part that
/// names it and says why it was not sent (`[video/mp4, 3 MB, "clip.mp4": not sent: …]`); and
/// when the request's media are over the format's total, tool results' media are replaced the
/// same way, oldest first.
pub(crate) fn prepare(
    provider: &str,
    rules: &MediaRules,
    messages: &[Message],
) -> Result<Option<Vec<Message>>, ProviderError> {
    if messages.iter().all(|m| m.parts.is_empty()) {
        return Ok(None);
    }
    let mut total = 0usize;
    let mut notes: Vec<(usize, usize, String)> = Vec::new(); // (message, part, why)
    for (index, message) in messages.iter().enumerate() {
        let from_tool = message.role == Role::Tool;
        for (place, part) in message.parts.iter().enumerate() {
            let Part::Media(media) = part else { continue };
            match refusal(provider, rules, message, media) {
                Some(why) if from_tool => notes.push((index, place, why)),
                Some(why) => {
                    return Err(ProviderError::Media {
                        provider: provider.to_owned(),
                        message: format!(
                            "message {index} ({}), part {}: {why}",
                            role_name(message),
                            media.describe()
                        ),
                    });
                }
                None if !from_tool => {
                    total = total.saturating_add(encoded_len(media));
                    if total > rules.max_request_bytes {
                        return Err(ProviderError::Media {
                            provider: provider.to_owned(),
                            message: format!(
                                "message {index} ({}), part {}: the request's media come to \
                                 more than the {provider} limit of {} bytes of base64",
                                role_name(message),
                                media.describe(),
                                rules.max_request_bytes
                            ),
                        });
                    }
                }
                None => {}
            }
        }
    }
    // Tool results' media that passed, newest first, while the total allows.
    for (index, message) in messages.iter().enumerate().rev() {
        if message.role != Role::Tool {
            continue;
        }
        for (place, part) in message.parts.iter().enumerate().rev() {
            let Part::Media(media) = part else { continue };
            if notes.iter().any(|(i, p, _)| (*i, *p) == (index, place)) {
                continue;
            }
            total = total.saturating_add(encoded_len(media));
            if total > rules.max_request_bytes {
                notes.push((
                    index,
                    place,
                    format!(
                        "the request's media would be over the {provider} limit of {} bytes \
                         of base64",
                        rules.max_request_bytes
                    ),
                ));
            }
        }
    }
    if notes.is_empty() {
        return Ok(None);
    }
    let mut replaced = messages.to_vec();
    for (index, place, why) in notes {
        let part = &mut replaced[index].parts[place];
        if let Part::Media(media) = part {
            tracing::warn!(
                target: crate::llm::WIRE,
                provider,
                "a tool result's {} is not sent: {why}",
                media.describe()
            );
            *part = Part::Text(format!("[{}: not sent: {why}]", media.describe()));
        }
    }
    Ok(Some(replaced))
}

fn role_name(message: &Message) -> &'static str {
    match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool result",
    }
}

/// The URL parts of `request` (cheap clones), for [`check_urls_resolved`].
pub(crate) fn url_parts(request: &ChatRequest<'_>) -> Vec<Media> {
    request
        .messages
        .iter()
        .flat_map(Message::media)
        .filter(|media| media.url_str().is_some())
        .cloned()
        .collect()
}

/// Resolves the host name of each URL part (each name once, all at once, within five seconds)
/// and checks every address: a name that resolves to a loopback or private address is refused,
/// as `web_fetch` refuses it. A name that does not resolve here is left to the provider, which
/// fetches it from its own network; and the provider resolves the name again when it fetches, so
/// this check is a guard against mistakes and plain attacks, not a pin (`web_fetch` pins).
pub(crate) async fn check_urls_resolved(
    provider: &str,
    allow_private: bool,
    urls: &[Media],
) -> Result<(), ProviderError> {
    let mut hosts: Vec<(&str, &Media)> = Vec::new();
    for media in urls {
        let Some((scheme, rest)) = media.url_str().and_then(|u| u.split_once("://")) else {
            continue;
        };
        let host = url_host(rest);
        // Literal addresses were checked already; `gs://` is Google's own storage.
        if host.parse::<IpAddr>().is_ok() || scheme.eq_ignore_ascii_case("gs") {
            continue;
        }
        if !hosts
            .iter()
            .any(|(seen, _)| seen.eq_ignore_ascii_case(host))
        {
            hosts.push((host, media));
        }
    }
    let lookups = hosts
        .iter()
        .map(|(host, _)| tokio::net::lookup_host((*host, 443)));
    let resolved = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures::future::join_all(lookups),
    )
    .await
    .unwrap_or_default();
    for ((host, media), addresses) in hosts.iter().zip(resolved) {
        let Ok(addresses) = addresses else { continue };
        for address in addresses {
            if let Some(kind) = address_kind(address.ip()) {
                check_kind(kind, allow_private).map_err(|why| ProviderError::Media {
                    provider: provider.to_owned(),
                    message: format!(
                        "part {}: {why} ({host} resolves to {})",
                        media.describe(),
                        address.ip()
                    ),
                })?;
            }
        }
    }
    Ok(())
}

thread_local! {
    /// While a request body is made to be sent ([`encode_spliced`]): the media whose base64 a
    /// marker stands for, in order, and the marker's nonce.
    static SPLICE: RefCell<Option<(u64, Vec<Media>)>> = const { RefCell::new(None) };
}

/// The marker of media `index` under `nonce`, as it is in the JSON value. Serialized, U+0001 is
/// written `\u0001`: the only place those six characters and the nonce meet is a marker, since
/// the nonce is random and no other text can know it.
fn marker(nonce: u64, index: usize) -> String {
    format!("\u{1}{nonce:016x}:{index}\u{1}")
}

/// The request body made by `encode`, as the bytes sent: JSON whose media are base64-encoded
/// once, straight into the output, not built as strings of the JSON value and copied (and
/// scanned for escapes) again. What it sends is what `encode` alone gives, serialized.
pub(crate) fn encode_spliced(encode: impl FnOnce() -> Value) -> Vec<u8> {
    // What was there before is put back, even if `encode` panics: a body made inside another
    // one's making keeps its own markers apart.
    struct Restore(Option<(u64, Vec<Media>)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            SPLICE.with(|s| *s.borrow_mut() = before);
        }
    }
    let nonce = fastrand::u64(..);
    let restore = Restore(SPLICE.with(|s| s.borrow_mut().replace((nonce, Vec::new()))));
    let value = encode();
    let media = SPLICE
        .with(|s| s.borrow_mut().take())
        .map(|(_, media)| media)
        .unwrap_or_default();
    drop(restore);
    let json = serde_json::to_vec(&value).unwrap_or_default();
    if media.is_empty() {
        return json;
    }
    // Where each marker is, and what goes there; then the body in one allocation of its final
    // size (zeroed by the allocator, not written twice), filled in order.
    let prefix = format!("\\u0001{nonce:016x}:");
    let end = b"\\u0001";
    let mut spans: Vec<(usize, usize, &[u8])> = Vec::with_capacity(media.len());
    let mut from = 0;
    while let Some(at) = find(&json[from..], prefix.as_bytes()).map(|at| from + at) {
        let after = at + prefix.len();
        let digits = json[after..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let index: Option<usize> = std::str::from_utf8(&json[after..after + digits])
            .ok()
            .and_then(|d| d.parse().ok());
        let bytes = index.and_then(|i| media.get(i)).and_then(Media::bytes);
        match bytes {
            Some(bytes) if json[after + digits..].starts_with(end) => {
                let stop = after + digits + end.len();
                spans.push((at, stop, bytes));
                from = stop;
            }
            // Not a marker after all: kept as it was.
            _ => from = after,
        }
    }
    let removed: usize = spans.iter().map(|(start, stop, _)| stop - start).sum();
    let added: usize = spans.iter().map(|(_, _, b)| b.len().div_ceil(3) * 4).sum();
    let mut out = vec![0u8; json.len() - removed + added];
    let (mut read, mut write) = (0, 0);
    for (start, stop, bytes) in spans {
        let text = &json[read..start];
        out[write..write + text.len()].copy_from_slice(text);
        write += text.len();
        write += STANDARD
            .encode_slice(bytes, &mut out[write..])
            .unwrap_or_default();
        read = stop;
    }
    out[write..write + json.len() - read].copy_from_slice(&json[read..]);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The bytes in standard base64 (or, while a body is made to be sent, a marker
/// [`encode_spliced`] replaces with it). Only for media already checked: a URL part has no bytes
/// and gives an empty string.
pub(super) fn base64_of(media: &Media) -> String {
    if media.bytes().is_none() {
        return String::new();
    }
    let spliced = SPLICE.with(|s| {
        s.borrow_mut().as_mut().map(|(nonce, held)| {
            held.push(media.clone());
            marker(*nonce, held.len() - 1)
        })
    });
    spliced.unwrap_or_else(|| {
        media
            .bytes()
            .map(|b| STANDARD.encode(b))
            .unwrap_or_default()
    })
}

/// A `data:` URL of the bytes, or the part's own URL.
pub(super) fn data_url(media: &Media) -> String {
    match media.url_str() {
        Some(url) => url.to_owned(),
        None => format!("data:{};base64,{}", media.essence(), base64_of(media)),
    }
}

/// A plain-text document's text (checked to be UTF-8 before sending).
pub(super) fn document_text(media: &Media) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(media.bytes().map_or(&[][..], |b| &b[..]))
}

/// A plain-text document as text, for formats that take no text file: its name, then its text.
pub(super) fn document_as_text(media: &Media) -> String {
    format!("{}:\n{}", file_name(media), document_text(media))
}

/// The part's name, or one made from its kind and type (`document.pdf`) where a format
/// requires a file name.
pub(super) fn file_name(media: &Media) -> String {
    if let Some(name) = &media.name {
        return name.to_string();
    }
    let essence = media.essence();
    let subtype = essence.split('/').nth(1).unwrap_or("bin");
    let extension = match subtype {
        "plain" => "txt",
        "jpeg" => "jpg",
        "mpeg" => "mp3",
        other => other,
    };
    format!("{}.{extension}", media.kind().as_str())
}
