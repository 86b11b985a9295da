//! `--attach FILE`: files sent with the question, read before any model is asked anything.
//!
//! Each file is read with `agent_std_tools::media`'s loader, the one `read_file` answers media
//! with: refused from its size before it is read when it is over 20 MiB, read through a bound
//! after, its type taken from its bytes (never its name) and checked, so a corrupt image or a
//! decompression bomb is refused here, naming the file, with exit status 2 and nothing sent.

use std::path::PathBuf;

use agent_std_tools::media::{DEFAULT_MAX_MEDIA_BYTES, load_media, media_limits};
use eugene::media::Media;
use eugene::{Message, run::RunRequest};

use crate::output::Style;

/// Reads every `--attach` file, in order, and says on stderr what each is; the first that cannot
/// be sent is the error, naming it.
pub fn load(files: &[PathBuf], style: Style) -> Result<Vec<Media>, String> {
    let limits = media_limits(DEFAULT_MAX_MEDIA_BYTES);
    files
        .iter()
        .map(|file| {
            let loaded = load_media(file, &limits).map_err(|error| format!("--attach {error}"))?;
            eprintln!(
                "{}",
                style.dim(&format!(
                    "attached {}: {}",
                    file.display(),
                    loaded.summary()
                ))
            );
            Ok(loaded.media)
        })
        .collect()
}

/// The question as a message, with the attachments after its text.
pub fn message(question: String, attachments: Vec<Media>) -> Message {
    attachments
        .into_iter()
        .fold(Message::user(question), Message::attach)
}

/// A run of the question in a session, with the attachments.
pub fn request(request: RunRequest<'_>, attachments: Vec<Media>) -> RunRequest<'_> {
    attachments.into_iter().fold(request, RunRequest::attach)
}
