//! Files read as media (an image, a PDF, a sound), bounded: the loader behind `read_file`'s media
//! answers, `eugene --attach FILE` and the `attach:` of `eugene eval`'s datasets.
//!
//! A file is read as [`Media`] in three steps, each of which can refuse it:
//!
//! 1. Its size, from its metadata, is compared with the limit (`MediaLimits::max_part_bytes`;
//!    [`DEFAULT_MAX_MEDIA_BYTES`] unless configured) before a byte is read: a 200 MB file costs a
//!    `stat`, not 200 MB of memory. A directory, a FIFO or a device is refused from its metadata
//!    too, before it is opened, so a FIFO is not waited on (but for one put in the file's place
//!    between the look and the open: `read_file` opens inside its sandbox, which refuses that too).
//! 2. It is read through a bound of one byte more than the limit, so a file that grows while it is
//!    read is refused too, never read whole.
//! 3. Its type is read from its bytes ([`Media::sniff`]; a file's name or extension plays no
//!    part), and the media is checked ([`Media::check`]): an image whose header cannot be read, or
//!    that claims more pixels than the limit (a decompression bomb: a few hundred bytes that say
//!    100,000 × 100,000), a PDF cut short, bytes of no known type are refused, with the file's
//!    name in the error.
//!
//! ```
//! use agent_core::content::file::{load_media, media_limits, DEFAULT_MAX_MEDIA_BYTES};
//!
//! let path = std::env::temp_dir().join(format!("pixel-{}.dat", std::process::id()));
//! std::fs::write(&path, agent_core::content::tiny_png()).unwrap(); // the bytes say PNG
//! let loaded = load_media(&path, &media_limits(DEFAULT_MAX_MEDIA_BYTES)).unwrap();
//! assert_eq!(&*loaded.media.media_type, "image/png");
//! assert_eq!(loaded.summary(), "image/png, 1×1 pixels, 67 bytes");
//!
//! std::fs::write(&path, b"MZ\x90\x00 not an image").unwrap();
//! let error = load_media(&path, &media_limits(1024)).unwrap_err().to_string();
//! assert!(error.contains("cannot be recognized"), "{error}");
//! # std::fs::remove_file(&path).unwrap();
//! ```
//!
//! `agent-std-tools`' `read_file` opens its file inside the workspace sandbox and reads it with
//! [`read_media`]; [`load_media`] is for a path a user gave (the CLI's `--attach`, a dataset).

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use super::{Media, MediaError, MediaInfo, MediaLimits};

/// The most bytes a file read as media may have unless configured otherwise: 20 MiB, more than
/// any provider takes in one image (Anthropic 5 MB, OpenAI 20 MB) and room for a long PDF.
pub const DEFAULT_MAX_MEDIA_BYTES: usize = 20 * 1024 * 1024;

/// The default [`MediaLimits`] with `max_bytes` as the most bytes a part may have.
pub fn media_limits(max_bytes: usize) -> MediaLimits {
    MediaLimits {
        max_part_bytes: max_bytes,
        ..MediaLimits::default()
    }
}

/// A file read as media: the part, and what its check learned (its size, an image's pixels).
#[derive(Debug, Clone)]
pub struct LoadedMedia {
    /// The media, named after the file.
    pub media: Media,
    /// What [`Media::check`] found.
    pub info: MediaInfo,
}

impl LoadedMedia {
    /// What it is, in a few words and never its bytes: `image/png, 640×480 pixels, 48213 bytes`
    /// or `application/pdf, 120000 bytes`.
    pub fn summary(&self) -> String {
        match self.info.dimensions {
            Some((width, height)) => format!(
                "{}, {width}×{height} pixels, {} bytes",
                &*self.media.media_type, self.info.bytes
            ),
            None => format!("{}, {} bytes", &*self.media.media_type, self.info.bytes),
        }
    }
}

/// Why a file could not be read as media. Its `Display` starts with the file as the caller named
/// it.
#[derive(Debug)]
#[non_exhaustive]
pub enum MediaFileError {
    /// The file cannot be opened or read (missing, no permission, an I/O error).
    Io {
        /// The file.
        file: String,
        /// Why.
        source: io::Error,
    },
    /// Something other than a regular file is at the path (a directory, a FIFO, a device).
    NotRegular {
        /// The file.
        file: String,
        /// What is there, in words (`a directory`, `a FIFO (a named pipe)`).
        what: String,
    },
    /// Its metadata says it is larger than the limit; nothing was read.
    TooLarge {
        /// The file.
        file: String,
        /// Its size, from its metadata.
        size: u64,
        /// The limit, in bytes.
        limit: usize,
    },
    /// It grew past the limit while it was read; what was read is dropped.
    Grew {
        /// The file.
        file: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// Its bytes are not media that can be sent: of no known type, corrupt, or an image of too
    /// many pixels.
    Media {
        /// The file.
        file: String,
        /// What the check found.
        source: MediaError,
    },
}

impl fmt::Display for MediaFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MediaFileError::Io { file, source } => write!(f, "{file}: cannot be read: {source}"),
            MediaFileError::NotRegular { file, what } => {
                write!(f, "{file}: not a regular file but {what}")
            }
            MediaFileError::TooLarge { file, size, limit } => write!(
                f,
                "{file}: {size} bytes, over the limit of {limit} bytes for media; nothing was read"
            ),
            MediaFileError::Grew { file, limit } => write!(
                f,
                "{file}: grew past the limit of {limit} bytes for media while it was read"
            ),
            MediaFileError::Media { file, source } => write!(f, "{file}: {source}"),
        }
    }
}

impl std::error::Error for MediaFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MediaFileError::Io { source, .. } => Some(source),
            MediaFileError::Media { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads the file at `path` (a path the user gave, outside any workspace) as media, within
/// `limits` (see the [module](self) for the steps). What is at the path is judged from its
/// metadata before it is opened: a directory, a FIFO or a device is refused without waiting on
/// it (a FIFO swapped in between the look and the open would be waited on). The media is named after the file's last component (control and invisible characters
/// escaped, as `\u{202e}`); errors name `path` as given.
pub fn load_media(path: &Path, limits: &MediaLimits) -> Result<LoadedMedia, MediaFileError> {
    let file = path.display().to_string();
    let io = |source| MediaFileError::Io {
        file: file.clone(),
        source,
    };
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(MediaFileError::NotRegular {
            file: file.clone(),
            what: what_is(kind).to_owned(),
        });
    }
    let opened = std::fs::File::open(path).map_err(io)?;
    let metadata = opened.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(MediaFileError::NotRegular {
            file: file.clone(),
            what: what_is(metadata.file_type()).to_owned(),
        });
    }
    let name = path.file_name().map(|n| shown(&n.to_string_lossy()));
    read_media(opened, metadata.len(), &file, name.as_deref(), limits)
}

/// What a file that is not a regular file is, in words.
fn what_is(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (a named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A file name as a part's name: control characters and those that are invisible or reorder the
/// text around them (bidirectional controls, zero-width characters) written as `\u{..}`.
fn shown(name: &str) -> String {
    name.chars()
        .map(|c| {
            let hidden = c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                    | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}');
            if hidden {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Reads media from `reader`, a file of `size` bytes by its metadata, within `limits`: refused
/// from `size` before reading when it is over `limits.max_part_bytes`, read through a bound of
/// one byte more, then its type read from the bytes and checked (see the [module](self)).
/// `file` names it in errors; `name`, if any, is the media's name.
pub fn read_media(
    reader: impl Read,
    size: u64,
    file: &str,
    name: Option<&str>,
    limits: &MediaLimits,
) -> Result<LoadedMedia, MediaFileError> {
    let limit = limits.max_part_bytes;
    if size > limit as u64 {
        return Err(MediaFileError::TooLarge {
            file: file.to_owned(),
            size,
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| MediaFileError::Io {
            file: file.to_owned(),
            source,
        })?;
    if bytes.len() > limit {
        return Err(MediaFileError::Grew {
            file: file.to_owned(),
            limit,
        });
    }
    let refused = |source| MediaFileError::Media {
        file: file.to_owned(),
        source,
    };
    let mut media = Media::sniff(bytes).map_err(refused)?;
    if let Some(name) = name {
        media = media.named(name);
    }
    let info = media.check(limits).map_err(refused)?;
    Ok(LoadedMedia { media, info })
}
