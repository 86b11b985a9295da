//! A2A file parts and eugene's [`Media`], both ways.
//!
//! An A2A [`Part`] is a file when it has `raw` (the bytes, base64 in ProtoJSON) or `url`, with
//! `mediaType` and `filename` beside it. Received ([`media_of_part`]): raw bytes are decoded by
//! [`Media::from_base64`] within [`MediaLimits`] (refused by their base64's length before
//! anything is decoded, refused when not base64 or not of the type `mediaType` says; a part
//! without `mediaType` takes its type from its bytes), and a URL is refused when it leads to a
//! loopback, private or link-local address ([`Media::check`]); the `filename` is the media's
//! name. Sent ([`part_of_media`]): the reverse, bytes as standard base64.

use agent_core::content::{Media, MediaError, MediaLimits, MediaSource};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::types::Part;

/// The media type a URL part without `mediaType` is taken as.
pub const UNKNOWN_TYPE: &str = "application/octet-stream";

/// Whether a part is a file (it has `raw` bytes or a `url`).
pub fn is_file(part: &Part) -> bool {
    part.raw.is_some() || part.url.is_some()
}

/// The media a file part is, decoded and checked against `limits`; `None` for a part that is
/// not a file (text, data). A part with both `raw` and `url` is refused (A2A allows one).
pub fn media_of_part(part: &Part, limits: &MediaLimits) -> Result<Option<Media>, MediaError> {
    let media = match (&part.raw, &part.url) {
        (None, None) => return Ok(None),
        (Some(raw), None) => Media::from_base64(part.media_type.as_str(), raw, limits)?,
        (None, Some(url)) => {
            let media_type = if part.media_type.is_empty() {
                UNKNOWN_TYPE
            } else {
                part.media_type.as_str()
            };
            let media = Media::url(url.as_str(), media_type);
            media.check(limits)?;
            media
        }
        (Some(_), Some(_)) => {
            return Err(MediaError::Corrupt {
                part: format!("the file part {:?}", part.filename),
                reason: "it has both `raw` and `url`; a part carries one".to_owned(),
            });
        }
    };
    Ok(Some(if part.filename.is_empty() {
        media
    } else {
        media.named(part.filename.as_str())
    }))
}

/// The media of every file part of `parts`, in order, each checked against `limits`; the first
/// part refused refuses them all.
pub fn media_of_parts<'a>(
    parts: impl IntoIterator<Item = &'a Part>,
    limits: &MediaLimits,
) -> Result<Vec<Media>, MediaError> {
    let mut media = Vec::new();
    for part in parts {
        media.extend(media_of_part(part, limits)?);
    }
    Ok(media)
}

/// The file part that carries `media`: `raw` (standard base64) or `url`, its type and name.
///
/// ```
/// use agent_core::content::{Media, MediaLimits};
/// let png = Media::new("image/png", agent_core::content::tiny_png()).named("dot.png");
/// let part = agent_a2a::media::part_of_media(&png);
/// assert_eq!((part.media_type.as_str(), part.filename.as_str()), ("image/png", "dot.png"));
/// let back = agent_a2a::media::media_of_part(&part, &MediaLimits::default()).unwrap();
/// assert_eq!(back, Some(png));
/// ```
pub fn part_of_media(media: &Media) -> Part {
    let (raw, url) = match &media.source {
        MediaSource::Bytes(bytes) => (Some(STANDARD.encode(bytes)), None),
        MediaSource::Url(url) => (None, Some(url.to_string())),
    };
    Part {
        raw,
        url,
        filename: media.name.as_deref().unwrap_or_default().to_owned(),
        media_type: media.essence(),
        ..Part::default()
    }
}
