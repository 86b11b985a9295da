//! Media that arrives as base64 text (an MCP image, an A2A file part): decoded within a bound
//! that is checked on the encoded length before a byte is decoded, then checked as any part is
//! ([`Media::check`]). Standard and URL-safe alphabets are read, with or without padding, as
//! ProtoJSON (A2A) allows; whitespace is not.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

use super::{Media, MediaError, MediaLimits};
use crate::call::SharedStr;

/// The most base64 characters that can decode to at most `max_bytes` bytes (with padding).
pub fn max_base64_len(max_bytes: usize) -> usize {
    max_bytes.div_ceil(3).saturating_mul(4)
}

impl Media {
    /// Media of `media_type` from base64 `data`, as a peer sent it: refused, with nothing
    /// decoded, when `data` is longer than the base64 of [`MediaLimits::max_part_bytes`];
    /// refused when it is not base64 ([`MediaError::Corrupt`]); and then checked against
    /// `limits` ([`Media::check`]), so bytes of another type than `media_type` are refused too.
    /// A `media_type` that is empty is read from the bytes ([`Media::sniff`]).
    ///
    /// ```
    /// use agent_core::content::{Media, MediaError, MediaLimits};
    /// let limits = MediaLimits::default();
    /// let png = Media::from_base64("image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==", &limits).unwrap();
    /// assert_eq!(png.bytes().unwrap(), &agent_core::content::tiny_png());
    /// assert!(matches!(Media::from_base64("image/png", "not base64!", &limits), Err(MediaError::Corrupt { .. })));
    /// let small = MediaLimits { max_part_bytes: 16, ..limits };
    /// assert!(matches!(Media::from_base64("image/png", &"A".repeat(100), &small), Err(MediaError::TooLarge { .. })));
    /// ```
    pub fn from_base64(
        media_type: impl Into<SharedStr>,
        data: &str,
        limits: &MediaLimits,
    ) -> Result<Media, MediaError> {
        let media_type: SharedStr = media_type.into();
        let described = || {
            let media_type = if media_type.is_empty() {
                "media of no stated type"
            } else {
                &media_type
            };
            format!("{media_type}, {} characters of base64", data.len())
        };
        if data.len() > max_base64_len(limits.max_part_bytes) {
            return Err(MediaError::TooLarge {
                part: described(),
                limit: limits.max_part_bytes,
            });
        }
        let unpadded = data.trim_end_matches('=');
        if data.len() - unpadded.len() > 2 {
            return Err(not_base64(described(), "too much padding"));
        }
        let engine = if unpadded.contains(['-', '_']) {
            &URL_SAFE_NO_PAD
        } else {
            &STANDARD_NO_PAD
        };
        let bytes = engine
            .decode(unpadded)
            .map_err(|e| not_base64(described(), &e.to_string()))?;
        let media = if media_type.is_empty() {
            Media::sniff(bytes)?
        } else {
            Media::new(media_type, bytes)
        };
        media.check(limits)?;
        Ok(media)
    }
}

fn not_base64(part: String, why: &str) -> MediaError {
    MediaError::Corrupt {
        part,
        reason: format!("its base64 is not valid ({why})"),
    }
}
