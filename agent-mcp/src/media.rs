//! MCP content and eugene's [`Part`]s, both ways.
//!
//! | MCP content block | eugene part |
//! |---|---|
//! | `text` | [`Part::Text`] |
//! | `image` (base64 `data`, `mimeType`) of a type models take ([`IMAGE_TYPES`]) | [`Part::Media`], an image |
//! | `image` of another type (SVG, BMP, TIFF) | [`Part::Text`] `[image: TYPE, N bytes of base64, …]` |
//! | `audio` (base64 `data`, `mimeType`) | [`Part::Media`], audio |
//! | `resource` with a `blob` of an image, audio, PDF or text type | [`Part::Media`] named by the resource's `uri` (the type read from the bytes when the server gives none) |
//! | `resource` with a `blob` of another type (a zip, an executable) | [`Part::Text`] `[resource URI: TYPE, N bytes of base64]`: no model takes it |
//! | `resource` with `text` | [`Part::Text`] |
//! | `resource_link` | received: [`Part::Text`] `[resource link: URI]`; served for a URL part |
//!
//! Received ([`part_of_block`], [`media_of_resource`]): base64 is decoded by
//! [`Media::from_base64`] within [`MediaLimits`] (the client's are
//! [`MediaLimits::default`] unless [`McpSkills::with_media_limits`](crate::McpSkills::with_media_limits)
//! says otherwise): a part whose base64 is longer than the limit allows is refused before
//! anything is decoded, invalid base64 is refused, and so are bytes that are not what the
//! `mimeType` says. One refused part refuses the whole result: nothing partial reaches the model.
//!
//! Served ([`content_blocks`]): a skill's [`Content`] becomes one block per part, in order:
//! text as `text`, an image as `image`, audio as `audio`, any other media held in memory (a PDF,
//! a text file) as an embedded `resource` with a `blob` and the URI `eugene://media/NAME` (the
//! part's name, or its position when it has none), and media at a URL as a `resource_link`.

use agent_core::content::check::bare_type;
use agent_core::content::{Content, Media, MediaError, MediaKind, MediaLimits, MediaSource, Part};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{ContentBlock, Resource, ResourceContents};

/// The part an MCP content block is, its media decoded and checked against `limits`.
pub fn part_of_block(block: &ContentBlock, limits: &MediaLimits) -> Result<Part, MediaError> {
    Ok(match block {
        ContentBlock::Text(text) => Part::Text(text.text.clone()),
        ContentBlock::Image(image) if !is_model_type(&image.mime_type) => Part::Text(format!(
            "[image: {}, {} bytes of base64, of a type models do not take]",
            image.mime_type,
            image.data.len()
        )),
        ContentBlock::Image(image) => Part::Media(Media::from_base64(
            image.mime_type.as_str(),
            &image.data,
            limits,
        )?),
        ContentBlock::Audio(audio) => Part::Media(Media::from_base64(
            audio.mime_type.as_str(),
            &audio.data,
            limits,
        )?),
        ContentBlock::Resource(embedded) => match media_of_resource(&embedded.resource, limits)? {
            Some(media) => Part::Media(media),
            None => Part::Text(describe_resource(&embedded.resource)),
        },
        ContentBlock::ResourceLink(link) => Part::Text(format!("[resource link: {}]", link.uri)),
        #[allow(unreachable_patterns)] // rmcp's enum is non-exhaustive
        _ => Part::Text("[content of a kind this client does not show]".to_owned()),
    })
}

/// Whether a block may carry media: an image of a type models take, audio, or a resource with a
/// `blob` of such a type (or of no stated type).
pub fn is_media_block(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Image(image) => is_model_type(&image.mime_type),
        ContentBlock::Audio(_) => true,
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents { mime_type, .. } => {
                mime_type.as_deref().is_none_or(is_model_type)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The image types models take (and [`Media::check`] reads).
pub const IMAGE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/gif",
    "image/webp",
];

/// Whether a model takes media of this type: an image of [`IMAGE_TYPES`], audio, a PDF or text.
pub fn is_model_type(media_type: &str) -> bool {
    let bare = bare_type(media_type);
    let lower = bare.as_str();
    match MediaKind::of(lower) {
        MediaKind::Image => IMAGE_TYPES.contains(&lower),
        MediaKind::Audio => true,
        MediaKind::Document => lower.starts_with("text/") || lower == "application/pdf",
    }
}

/// The media a resource's contents are, when they are a `blob` a model takes (by its stated
/// type, or by its bytes when it states none): decoded, checked against `limits`, named by the
/// resource's URI. `None` for text contents and for blobs of other types.
pub fn media_of_resource(
    contents: &ResourceContents,
    limits: &MediaLimits,
) -> Result<Option<Media>, MediaError> {
    let ResourceContents::BlobResourceContents {
        uri,
        mime_type,
        blob,
        ..
    } = contents
    else {
        return Ok(None);
    };
    let media = match mime_type.as_deref() {
        Some(media_type) if is_model_type(media_type) => {
            Media::from_base64(media_type, blob, limits)?
        }
        Some(_) => return Ok(None),
        None => match Media::from_base64("", blob, limits) {
            Ok(media) => media,
            Err(MediaError::Unknown { .. }) => return Ok(None),
            Err(error) => return Err(error),
        },
    };
    Ok(Some(media.named(uri.as_str())))
}

/// Resource contents in words: the text of text contents, a line describing a blob.
pub fn describe_resource(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => format!(
            "[resource {uri}: {}, {} bytes of base64]",
            mime_type.as_deref().unwrap_or("binary"),
            blob.len()
        ),
        #[allow(unreachable_patterns)] // rmcp's enum is non-exhaustive
        _ => "[a resource of a kind this client does not show]".to_owned(),
    }
}

/// The MCP blocks a skill's [`Content`] is served as, in order (see the [module](self)).
///
/// ```
/// use agent_core::content::{Content, Media};
/// use rmcp::model::ContentBlock;
///
/// let png = agent_core::content::tiny_png();
/// let blocks = agent_mcp::media::content_blocks(
///     &Content::text("A chart:").with(Media::new("image/png", png).named("chart.png")),
/// );
/// assert!(matches!(&blocks[0], ContentBlock::Text(t) if t.text == "A chart:"));
/// assert!(matches!(&blocks[1], ContentBlock::Image(i) if i.mime_type == "image/png"));
/// ```
pub fn content_blocks(content: &Content) -> Vec<ContentBlock> {
    content
        .parts
        .iter()
        .enumerate()
        .map(|(index, part)| match part {
            Part::Text(text) => ContentBlock::text(text.clone()),
            Part::Media(media) => media_block(media, index),
        })
        .collect()
}

/// One media part as a block; `index` names it when it has no name.
fn media_block(media: &Media, index: usize) -> ContentBlock {
    let name = media
        .name
        .as_deref()
        .map_or_else(|| format!("part-{index}"), str::to_owned);
    match &media.source {
        MediaSource::Url(url) => ContentBlock::resource_link(
            Resource::new(url.to_string(), name).with_mime_type(media.essence()),
        ),
        MediaSource::Bytes(bytes) => {
            let data = STANDARD.encode(bytes);
            match media.kind() {
                MediaKind::Image => ContentBlock::image(data, media.essence()),
                MediaKind::Audio => ContentBlock::audio(data, media.essence()),
                MediaKind::Document => ContentBlock::resource(
                    ResourceContents::blob(data, media_uri(&name)).with_mime_type(media.essence()),
                ),
            }
        }
    }
}

/// `eugene://media/NAME`, the name percent-encoded (all but `A-Z a-z 0-9 - . _ ~`).
///
/// ```
/// assert_eq!(agent_mcp::media::media_uri("q3 report.pdf"), "eugene://media/q3%20report.pdf");
/// ```
pub fn media_uri(name: &str) -> String {
    let mut uri = String::from("eugene://media/");
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}
