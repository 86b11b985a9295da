//! What a [`Media`] part must be before it is sent: bytes that are what its media type says
//! (read from the bytes by [`infer`], never from a name), an image whose header can be read and
//! whose size in pixels is within the limit (read from the header by [`imagesize`], never
//! decoded, so a decompression bomb costs nothing), a PDF that starts and ends as one, text that
//! is UTF-8, and a URL that does not lead to a loopback, private or link-local address.
//!
//! | check | error |
//! |---|---|
//! | more bytes than [`MediaLimits::max_part_bytes`] | [`MediaError::TooLarge`] |
//! | bytes of another type than declared (a JPEG called `image/png`, an EXE called `application/pdf`) | [`MediaError::Mismatch`] |
//! | an image header that cannot be read, a PDF without `%PDF-` … `%%EOF`, text that is not UTF-8 | [`MediaError::Corrupt`] |
//! | an image over [`MediaLimits::max_image_pixels`] or [`MediaLimits::max_image_side`] | [`MediaError::TooManyPixels`] |
//! | a URL to `localhost`, `127.0.0.1`, `10.0.0.0/8`, `169.254.169.254`, `[::1]`… | [`MediaError::UrlRefused`] |
//!
//! The limits of each wire format (Anthropic's 5 MB per image, 8,000 pixels a side...) are
//! `agent_llm`'s; [`MediaLimits::default`] is the most any of them takes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{Media, MediaKind, MediaSource};

/// Bounds a part is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// The most bytes one part may hold.
    pub max_part_bytes: usize,
    /// The most pixels (width × height) an image may have.
    pub max_image_pixels: u64,
    /// The most pixels an image may have on its longer side.
    pub max_image_side: u32,
    /// Whether a URL may lead to a private or link-local address (never a loopback one).
    pub allow_private_urls: bool,
}

impl Default for MediaLimits {
    /// 50 MB a part, 100 megapixels and 16,384 pixels a side an image, public URLs only.
    fn default() -> Self {
        MediaLimits {
            max_part_bytes: 50 * 1024 * 1024,
            max_image_pixels: 100_000_000,
            max_image_side: 16_384,
            allow_private_urls: false,
        }
    }
}

/// What a check learned of a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaInfo {
    /// Its size in bytes (0 for a URL).
    pub bytes: usize,
    /// Width and height, for an image held in memory.
    pub dimensions: Option<(u32, u32)>,
}

/// Why a part cannot be sent. Each names the part (its type, size and name), never its bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// More bytes than the limit.
    #[error("{part} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The part, described.
        part: String,
        /// The limit.
        limit: usize,
    },
    /// The bytes are of another type than the part says.
    #[error("{part}: the bytes are {found}, not {declared}")]
    Mismatch {
        /// The part, described.
        part: String,
        /// The type the part declares.
        declared: String,
        /// What the bytes are.
        found: String,
    },
    /// The bytes are not a valid file of their type.
    #[error("{part} is not a valid file of its type: {reason}")]
    Corrupt {
        /// The part, described.
        part: String,
        /// What is wrong.
        reason: String,
    },
    /// The bytes are of no type eugene can send.
    #[error(
        "the type of these {bytes} bytes cannot be recognized (not an image, PDF, audio or UTF-8 text)"
    )]
    Unknown {
        /// How many bytes.
        bytes: usize,
    },
    /// An image larger, in pixels, than the limit.
    #[error("{part} is {width}×{height} pixels, over the limit of {limit}")]
    TooManyPixels {
        /// The part, described.
        part: String,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The limit, in words.
        limit: String,
    },
    /// A URL that leads where parts may not point.
    #[error("{part}: {reason}")]
    UrlRefused {
        /// The part, described.
        part: String,
        /// Why.
        reason: String,
    },
}

/// The media type of `bytes`, read from the bytes.
pub(crate) fn sniff_type(bytes: &[u8]) -> Result<&'static str, MediaError> {
    if let Some(kind) = infer::get(bytes) {
        let found = normalize(kind.mime_type());
        if known(found) {
            return Ok(found);
        }
    }
    if !bytes.is_empty() && std::str::from_utf8(bytes).is_ok() {
        return Ok("text/plain");
    }
    Err(MediaError::Unknown { bytes: bytes.len() })
}

/// The types eugene reads from bytes and sends.
fn known(media_type: &str) -> bool {
    matches!(
        media_type,
        "image/png"
            | "image/jpeg"
            | "image/gif"
            | "image/webp"
            | "application/pdf"
            | "audio/wav"
            | "audio/mpeg"
            | "audio/ogg"
            | "audio/flac"
            | "audio/mp4"
            | "audio/aac"
            | "audio/webm"
    )
}

/// A media type lowercase and without its parameters (`Image/PNG; q=1` is `image/png`), aliases
/// left as written; [`Media::essence`] resolves them too.
pub fn bare_type(media_type: &str) -> String {
    let lower = media_type.to_ascii_lowercase();
    lower.split(';').next().unwrap_or("").trim().to_owned()
}

/// One name for each type that has several.
fn normalize(media_type: &str) -> &str {
    match media_type {
        "image/jpg" | "image/pjpeg" => "image/jpeg",
        "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "audio/wav",
        "audio/mp3" | "audio/x-mp3" | "audio/mpeg3" => "audio/mpeg",
        "audio/x-flac" => "audio/flac",
        "audio/m4a" | "audio/x-m4a" => "audio/mp4",
        "audio/x-aac" => "audio/aac",
        "application/ogg" => "audio/ogg",
        other => other,
    }
}

impl Media {
    /// The media type in its one spelling: lowercase, without parameters (`; charset=utf-8`),
    /// aliases resolved (`image/jpg` is `image/jpeg`, `audio/x-wav` is `audio/wav`, `audio/mp3`
    /// is `audio/mpeg`). What the checks compare and what the wire formats are sent.
    pub fn essence(&self) -> String {
        normalize(&bare_type(&self.media_type)).to_owned()
    }

    /// Checks the part against `limits` (see the [module](self) for what is checked). URLs are
    /// checked by their host as written; `agent_llm` also resolves a host name and checks its
    /// addresses before sending.
    pub fn check(&self, limits: &MediaLimits) -> Result<MediaInfo, MediaError> {
        match &self.source {
            MediaSource::Url(url) => {
                check_url(url, limits.allow_private_urls).map_err(|reason| {
                    MediaError::UrlRefused {
                        part: self.describe(),
                        reason,
                    }
                })?;
                Ok(MediaInfo {
                    bytes: 0,
                    dimensions: None,
                })
            }
            MediaSource::Bytes(bytes) => self.check_bytes(bytes, limits),
        }
    }

    fn check_bytes(&self, bytes: &[u8], limits: &MediaLimits) -> Result<MediaInfo, MediaError> {
        if bytes.len() > limits.max_part_bytes {
            return Err(MediaError::TooLarge {
                part: self.describe(),
                limit: limits.max_part_bytes,
            });
        }
        let declared = self.essence();
        let declared = declared.as_str();
        let corrupt = |reason: &str| MediaError::Corrupt {
            part: self.describe(),
            reason: reason.to_owned(),
        };
        let found = infer::get(bytes).map(|kind| normalize(kind.mime_type()));
        if declared.starts_with("text/") {
            if let Some(found) = found.filter(|found| !found.starts_with("text/")) {
                return Err(self.mismatch(declared, found));
            }
            std::str::from_utf8(bytes).map_err(|_| corrupt("the text is not UTF-8"))?;
            return Ok(MediaInfo {
                bytes: bytes.len(),
                dimensions: None,
            });
        }
        match found {
            Some(found) if found == declared => {}
            Some(found) => return Err(self.mismatch(declared, found)),
            None if self.kind() == MediaKind::Image || declared == "application/pdf" => {
                return Err(corrupt(&format!(
                    "the bytes do not start as {declared} does"
                )));
            }
            // A type `infer` does not know (say `audio/L16`): taken as declared.
            None => {}
        }
        let mut dimensions = None;
        if self.kind() == MediaKind::Image {
            let size = imagesize::blob_size(bytes)
                .map_err(|e| corrupt(&format!("its header cannot be read ({e})")))?;
            let (width, height) = (
                u32::try_from(size.width).unwrap_or(u32::MAX),
                u32::try_from(size.height).unwrap_or(u32::MAX),
            );
            if width == 0 || height == 0 {
                return Err(corrupt("it has no pixels"));
            }
            let pixels = u64::from(width) * u64::from(height);
            if pixels > limits.max_image_pixels || width.max(height) > limits.max_image_side {
                return Err(MediaError::TooManyPixels {
                    part: self.describe(),
                    width,
                    height,
                    limit: format!(
                        "{} pixels and {} a side",
                        limits.max_image_pixels, limits.max_image_side
                    ),
                });
            }
            dimensions = Some((width, height));
        }
        if declared == "application/pdf" {
            let tail = &bytes[bytes.len().saturating_sub(1024)..];
            if !tail.windows(5).any(|w| w == b"%%EOF") {
                return Err(corrupt("the PDF does not end with %%EOF (cut short?)"));
            }
        }
        Ok(MediaInfo {
            bytes: bytes.len(),
            dimensions,
        })
    }

    fn mismatch(&self, declared: &str, found: &str) -> MediaError {
        MediaError::Mismatch {
            part: self.describe(),
            declared: declared.to_owned(),
            found: found.to_owned(),
        }
    }
}

/// Checks a part's URL by what it says: a scheme a provider fetches (`https`, `http`, `gs`), and
/// a host that is not `localhost`, a loopback address, or (unless `allow_private`) a private,
/// link-local or otherwise non-public address. The error says why, in words.
///
/// Only URLs every parser reads alike pass: no whitespace or control characters, no backslash,
/// no user info (`user@`), no percent-escapes or non-ASCII letters in the host (an international
/// name is written in its `xn--` form). What a fetcher would read differently is refused rather
/// than guessed at.
pub fn check_url(url: &str, allow_private: bool) -> Result<(), String> {
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err("the URL holds whitespace, a control character or a backslash".to_owned());
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("a URL part needs a scheme (https://…)".to_owned());
    };
    if !matches!(
        scheme.to_ascii_lowercase().as_str(),
        "https" | "http" | "gs"
    ) {
        return Err(format!(
            "the scheme `{scheme}` cannot be sent (https, http or gs)"
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err("the URL names a user (`user@host`); send it without".to_owned());
    }
    let host = url_host(rest);
    if host.is_empty() {
        return Err("the URL has no host".to_owned());
    }
    if !host.is_ascii() || host.contains('%') {
        return Err(
            "the URL's host has percent-escapes or letters outside ASCII (write an \
             international name in its xn-- form)"
                .to_owned(),
        );
    }
    let lower = host.to_ascii_lowercase();
    let lower = lower.trim_end_matches('.');
    if lower == "localhost" || lower.ends_with(".localhost") {
        return Err("the URL leads to this machine (localhost)".to_owned());
    }
    if let Some(kind) = host_kind(lower) {
        return check_kind(kind, allow_private);
    }
    Ok(())
}

/// Whether an address of this kind may be a part's URL.
pub fn check_kind(kind: &'static str, allow_private: bool) -> Result<(), String> {
    if kind != "loopback" && allow_private {
        Ok(())
    } else {
        Err(format!(
            "the URL leads to a {kind} address; only public addresses can be sent"
        ))
    }
}

/// The host of what follows `scheme://`, without user info, port or brackets.
pub fn url_host(rest: &str) -> &str {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    if let Some(bracketed) = host_port.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or("");
    }
    host_port.split(':').next().unwrap_or("")
}

/// The kind of address a literal host is, when it is not public: parses IPv4 (also the short
/// and numeric forms browsers accept, such as `2130706433` or `127.1`) and IPv6.
fn host_kind(host: &str) -> Option<&'static str> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return address_kind(ip);
    }
    legacy_ipv4(host).and_then(|ip| address_kind(IpAddr::V4(ip)))
}

/// `inet_aton`'s forms: one to four numbers, decimal, octal (`0…`) or hex (`0x…`).
fn legacy_ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = host
        .split('.')
        .map(|p| {
            if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
                u64::from_str_radix(hex, 16).ok()
            } else if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let value = match parts.as_slice() {
        [a] => *a,
        [a, b] if *a < 256 => (a << 24) | b,
        [a, b, c] if *a < 256 && *b < 256 => (a << 24) | (b << 16) | c,
        [a, b, c, d] if [a, b, c, d].iter().all(|x| **x < 256) => {
            (a << 24) | (b << 16) | (c << 8) | d
        }
        _ => return None,
    };
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

/// The kind of a non-public address (`loopback`, `private`, `link-local`...), or `None` for a
/// public one. `web_fetch` and media URLs use the same classification.
pub fn address_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => kind_v4(v4),
        IpAddr::V6(v6) => kind_v6(v6),
    }
}

fn kind_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("carrier-grade NAT")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast, broadcast or reserved")
    } else if (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) {
        Some("reserved")
    } else if ip.is_documentation() {
        Some("documentation")
    } else {
        None
    }
}

fn kind_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return kind_v4(v4);
    }
    let s = ip.segments();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("private")
    } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64: the IPv4 address is in the last 32 bits.
        kind_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ))
    } else if s[0] == 0x2002 {
        // 6to4: the IPv4 address is in the second and third segments.
        kind_v4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ))
        .or(Some("6to4"))
    } else if s[0] == 0x2001 && s[1] == 0 {
        // Teredo: the client's IPv4 address, inverted, in the last 32 bits.
        kind_v4(Ipv4Addr::new(
            !(s[6] >> 8) as u8,
            !s[6] as u8,
            !(s[7] >> 8) as u8,
            !s[7] as u8,
        ))
        .or(Some("Teredo"))
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("documentation")
    } else if s[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (deprecated) addresses.
        Some("reserved")
    } else {
        None
    }
}
