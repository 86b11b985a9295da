//! [`DatasetError`]: why a dataset cannot be read, or is not a valid one (`dataset.rs` reads it,
//! `attach.rs` reads its cases' attached files).

/// A dataset that cannot be read or is not a valid one. Its `Display` starts with the place:
/// `cases.yaml:12:7: cases[1]: unknown field `goall`, expected one of ...`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file cannot be read.
    #[error("{file}: cannot be read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`](crate::dataset::MAX_FILE_BYTES).
    #[error("{file}: the file is over {max} bytes, more than a dataset may have")]
    TooLarge {
        /// The file.
        file: String,
        /// The limit.
        max: u64,
    },
    /// The file is not a valid dataset.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong, with the path to the key (`cases[1].checks[0]`) when there is one.
        message: String,
    },
    /// A case's attached file cannot be read, or is not media that can be sent.
    #[error("{file}: case `{case}`: {source}")]
    Attachment {
        /// The dataset file.
        file: String,
        /// The case that attaches it.
        case: String,
        /// Why, naming the attached file.
        source: Box<agent_core::content::file::MediaFileError>,
    },
    /// The dataset's attached files hold more than [`MAX_ATTACHED_BYTES`](crate::dataset::MAX_ATTACHED_BYTES) together.
    #[error("{file}: case `{case}`: the attached files hold more than {max} bytes together")]
    TooMuchAttached {
        /// The dataset file.
        file: String,
        /// The case whose file went over.
        case: String,
        /// The limit.
        max: usize,
    },
}
