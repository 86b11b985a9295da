//! Files read as media, for `read_file`: the loader itself is agent-core's
//! ([`agent_core::content::file`], re-exported here): size from the metadata first, a bounded
//! read, the type from the bytes, the checks. `read_file` opens its file inside the workspace
//! sandbox and reads it with [`read_media`]; `eugene --attach` and eval datasets use
//! [`load_media`] on paths a user gave.

use agent_core::content::Media;
pub use agent_core::content::file::{
    DEFAULT_MAX_MEDIA_BYTES, LoadedMedia, MediaFileError, load_media, media_limits, read_media,
};

/// How many bytes at the start of a file [`starts_as_media`] reads the type from: every magic
/// number `Media::sniff` knows is within them.
const SNIFF_BYTES: usize = 8 * 1024;

/// Whether the first bytes of a file are those of media `read_file` answers with as such (an
/// image, a PDF, a sound) rather than as text.
pub(crate) fn starts_as_media(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    Media::sniff(head.to_vec()).is_ok_and(|media| &*media.media_type != "text/plain")
}
