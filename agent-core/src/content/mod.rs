//! Content beyond text: images, documents and audio, as [`Media`], in a sequence of [`Part`]s.
//!
//! A message of the conversation (`agent_llm::Message`) keeps its text and, after it, any parts;
//! a skill answers with media by returning a [`Media`] or a [`Content`] (text and media mixed).
//!
//! ```
//! use agent_core::content::{Content, Media, MediaKind};
//!
//! // 1×1 PNG, as a skill that draws a chart would return it.
//! let png = agent_core::content::tiny_png();
//! let chart = Media::new("image/png", png.clone()).named("chart.png");
//! assert_eq!(chart.kind(), MediaKind::Image);
//! let answer = Content::text("Sales by month:").with(chart.clone());
//! assert_eq!(answer.text_only(), "Sales by month:");
//! assert_eq!(answer.media().count(), 1);
//! // The bytes are shared, never copied: a clone holds the same buffer.
//! assert_eq!(chart.clone().bytes().unwrap().as_ptr(), png.as_ptr());
//! ```
//!
//! # Held once
//!
//! A part's bytes are a [`bytes::Bytes`]: cloning a message, a transcript or a run's state counts
//! a reference and copies nothing, so a 5 MB image in a 50-turn run is in memory once. Encoding a
//! request base64-encodes it into the body once, which the wire formats need (a streamed request
//! that may fall back to a whole answer prepares both bodies).
//!
//! # Checked before it is sent
//!
//! [`Media::check`] reads a part's type from its bytes (never its name) and refuses a part whose
//! bytes are not what its media type says, a corrupt image, a PDF that is not one; the providers
//! run it, with their limits, before anything is sent ([`check`](mod@check) has the details).
//!
//! # Received as base64
//!
//! What a protocol peer sends (an MCP tool's image, an A2A file part) arrives as base64 text:
//! [`Media::from_base64`] refuses it by its encoded length before decoding anything, decodes it,
//! and checks it as above.

pub mod check;
mod encoded;
pub mod file;
mod serde_media;

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

use crate::call::SharedStr;
pub use check::{MediaError, MediaInfo, MediaLimits};
pub use encoded::max_base64_len;

/// What kind of content a [`Media`] is, from its media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// `image/*`.
    Image,
    /// `audio/*`.
    Audio,
    /// Everything else: `application/pdf`, `text/plain` and other documents.
    Document,
}

impl MediaKind {
    /// Of a media type: `image/*` is an image, `audio/*` audio, anything else a document.
    pub fn of(media_type: &str) -> MediaKind {
        let top = media_type.split('/').next().unwrap_or("");
        if top.eq_ignore_ascii_case("image") {
            MediaKind::Image
        } else if top.eq_ignore_ascii_case("audio") {
            MediaKind::Audio
        } else {
            MediaKind::Document
        }
    }

    /// `image`, `audio` or `document`.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::Document => "document",
        }
    }
}

/// Where a [`Media`]'s content is: in memory, or at a URL the provider fetches.
#[derive(Clone, PartialEq, Eq)]
pub enum MediaSource {
    /// The bytes, shared (cloning counts a reference).
    Bytes(Bytes),
    /// An `https` (or `http`, or a provider's own such as `gs://`) URL. A URL whose host is a
    /// loopback, private or link-local address is refused before sending (see
    /// [`check::check_url`]).
    Url(SharedStr),
}

impl fmt::Debug for MediaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Never the bytes themselves: a debug print of a transcript stays readable.
            MediaSource::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
            MediaSource::Url(url) => write!(f, "Url({:?})", &**url),
        }
    }
}

/// An image, a document or a sound: its media type, its bytes or URL, and a name where the
/// format has one (Anthropic's document title, OpenAI's `filename`).
///
/// Serialized (in a run's state, a session, a journal) as
/// `{"media_type": "image/png", "data": "<base64>", "name": "chart.png"}` or with `"url"` in place
/// of `"data"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// The IANA media type: `image/png`, `application/pdf`, `audio/wav`...
    pub media_type: SharedStr,
    /// The content, or where it is.
    pub source: MediaSource,
    /// A file name, where one is known.
    pub name: Option<SharedStr>,
}

impl Media {
    /// Media of this type from bytes. The type is what the caller says; [`Media::check`] (which
    /// every provider runs before sending) refuses bytes that are not of it. Use
    /// [`Media::sniff`] to take the type from the bytes instead.
    pub fn new(media_type: impl Into<SharedStr>, bytes: impl Into<Bytes>) -> Self {
        Media {
            media_type: media_type.into(),
            source: MediaSource::Bytes(bytes.into()),
            name: None,
        }
    }

    /// Media at a URL the provider fetches, of the type the caller says.
    pub fn url(url: impl Into<SharedStr>, media_type: impl Into<SharedStr>) -> Self {
        Media {
            media_type: media_type.into(),
            source: MediaSource::Url(url.into()),
            name: None,
        }
    }

    /// Media whose type is read from its bytes: PNG, JPEG, GIF, WebP, PDF, WAV, MP3, OGG, FLAC,
    /// M4A/AAC, WebM; UTF-8 text is `text/plain`. Anything else is an error saying so.
    pub fn sniff(bytes: impl Into<Bytes>) -> Result<Self, MediaError> {
        let bytes = bytes.into();
        let media_type = check::sniff_type(&bytes)?;
        Ok(Media::new(media_type, bytes))
    }

    /// The same media with a name.
    pub fn named(mut self, name: impl Into<SharedStr>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Image, audio or document, from the media type.
    pub fn kind(&self) -> MediaKind {
        MediaKind::of(&self.media_type)
    }

    /// The bytes, when the media is held in memory.
    pub fn bytes(&self) -> Option<&Bytes> {
        match &self.source {
            MediaSource::Bytes(bytes) => Some(bytes),
            MediaSource::Url(_) => None,
        }
    }

    /// The URL, when the media is fetched by the provider.
    pub fn url_str(&self) -> Option<&str> {
        match &self.source {
            MediaSource::Url(url) => Some(url),
            MediaSource::Bytes(_) => None,
        }
    }

    /// How many bytes it holds (0 for a URL).
    pub fn len(&self) -> usize {
        self.bytes().map_or(0, Bytes::len)
    }

    /// Whether it holds no bytes (a URL, or empty bytes).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A short description for logs, spans and errors, never the content:
    /// `image/png, 48213 bytes, "chart.png"` or `image/jpeg at https://…`.
    pub fn describe(&self) -> String {
        let name = match &self.name {
            Some(name) => format!(", {:?}", &**name),
            None => String::new(),
        };
        match &self.source {
            MediaSource::Bytes(bytes) => {
                format!("{}, {} bytes{name}", &*self.media_type, bytes.len())
            }
            MediaSource::Url(url) => format!("{} at {}{name}", &*self.media_type, &**url),
        }
    }
}

/// One part of a message or of a skill's answer: text, or media.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image, a document or a sound.
    Media(Media),
}

impl Part {
    /// The media, if this part is one.
    pub fn as_media(&self) -> Option<&Media> {
        match self {
            Part::Media(media) => Some(media),
            Part::Text(_) => None,
        }
    }
}

impl From<Media> for Part {
    fn from(media: Media) -> Self {
        Part::Media(media)
    }
}

impl From<String> for Part {
    fn from(text: String) -> Self {
        Part::Text(text)
    }
}

impl From<&str> for Part {
    fn from(text: &str) -> Self {
        Part::Text(text.to_owned())
    }
}

/// Mixed content, in order: what a skill returns to answer with text and media together.
///
/// ```
/// use agent_core::content::{Content, Media};
/// let answer = Content::text("Two pages:")
///     .with(Media::new("application/pdf", &b"%PDF-1.7 ..."[..]).named("invoice.pdf"));
/// assert_eq!(answer.parts.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Content {
    /// The parts, in order.
    pub parts: Vec<Part>,
}

impl Content {
    /// Content that starts with this text.
    pub fn text(text: impl Into<String>) -> Self {
        Content {
            parts: vec![Part::Text(text.into())],
        }
    }

    /// The same content with one more part at the end.
    pub fn with(mut self, part: impl Into<Part>) -> Self {
        self.parts.push(part.into());
        self
    }

    /// Its text parts, joined by newlines: what a reader that takes no media sees of it.
    pub fn text_only(&self) -> Cow<'_, str> {
        let mut texts = self.parts.iter().filter_map(|part| match part {
            Part::Text(text) => Some(text.as_str()),
            Part::Media(_) => None,
        });
        let Some(first) = texts.next() else {
            return Cow::Borrowed("");
        };
        match texts.next() {
            None => Cow::Borrowed(first),
            Some(second) => {
                let mut joined = format!("{first}\n{second}");
                for text in texts {
                    joined.push('\n');
                    joined.push_str(text);
                }
                Cow::Owned(joined)
            }
        }
    }

    /// The media parts, in order.
    pub fn media(&self) -> impl Iterator<Item = &Media> {
        self.parts.iter().filter_map(Part::as_media)
    }

    /// Splits off the text before the first media part (joined by newlines) from the rest:
    /// a message keeps the first as its text and the rest as its parts, in order.
    pub fn into_leading_text(self) -> (String, Vec<Part>) {
        let first_media = self
            .parts
            .iter()
            .position(|part| matches!(part, Part::Media(_)))
            .unwrap_or(self.parts.len());
        let mut parts = self.parts;
        let rest = parts.split_off(first_media);
        let text = parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text),
                Part::Media(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        (text, rest)
    }
}

impl From<Media> for Content {
    fn from(media: Media) -> Self {
        Content {
            parts: vec![Part::Media(media)],
        }
    }
}

impl From<Vec<Part>> for Content {
    fn from(parts: Vec<Part>) -> Self {
        Content { parts }
    }
}

/// A valid 1×1 PNG, for examples and tests.
#[doc(hidden)]
pub fn tiny_png() -> Bytes {
    Bytes::from_static(&[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F,
        0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ])
}
