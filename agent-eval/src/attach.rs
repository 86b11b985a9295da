//! A YAML case's `attach:` files, read when the dataset is: each through
//! `agent_core::content::file`'s bounded loader (the one `read_file` and `eugene --attach` use), so
//! a file over [`DEFAULT_MAX_MEDIA_BYTES`] is refused from its size before it is read, its type
//! comes from its bytes, and a corrupt image or a decompression bomb is an error naming the case
//! and the file. A file attached by several cases is read once and shared.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_core::content::Media;
use agent_core::content::file::{DEFAULT_MAX_MEDIA_BYTES, load_media, media_limits};

use crate::case::Case;
use crate::dataset_error::DatasetError;

/// The most files one case may attach.
pub const MAX_ATTACHMENTS: usize = 16;

/// The most bytes a dataset's attached files may hold together (each file counted once, however
/// many cases attach it); each file holds at most [`DEFAULT_MAX_MEDIA_BYTES`].
pub const MAX_ATTACHED_BYTES: usize = 256 * 1024 * 1024;

/// Reads every case's `attach:` paths, relative to the directory of `file` (the dataset), into
/// the case's attachments. The first file that cannot be read or is not media that can be sent
/// is the error; nothing is attached then.
pub(crate) fn load_attachments(file: &str, cases: &mut [Case]) -> Result<(), DatasetError> {
    let base = Path::new(file).parent().unwrap_or(Path::new(""));
    let limits = media_limits(DEFAULT_MAX_MEDIA_BYTES);
    let mut read: HashMap<PathBuf, Media> = HashMap::new();
    let mut total = 0usize;
    for case in cases.iter_mut() {
        for written in std::mem::take(&mut case.attach_paths) {
            let path = base.join(&written);
            let media = match read.get(&path) {
                Some(media) => media.clone(),
                None => {
                    let loaded =
                        load_media(&path, &limits).map_err(|source| DatasetError::Attachment {
                            file: file.to_owned(),
                            case: case.name().to_owned(),
                            source: Box::new(source),
                        })?;
                    total += loaded.info.bytes;
                    if total > MAX_ATTACHED_BYTES {
                        return Err(DatasetError::TooMuchAttached {
                            file: file.to_owned(),
                            case: case.name().to_owned(),
                            max: MAX_ATTACHED_BYTES,
                        });
                    }
                    read.insert(path, loaded.media.clone());
                    loaded.media
                }
            };
            case.add_attachment(media);
        }
    }
    Ok(())
}
