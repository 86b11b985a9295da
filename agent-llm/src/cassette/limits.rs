//! The bounds of cassettes and their servers, and the names they share.

/// The environment variable [`Cassette::from_env`](super::Cassette::from_env) reads the mode
/// from: `record` or `replay` (the default, also when it is unset or empty).
pub const MODE_VAR: &str = "EUGENE_CASSETTE";

/// The largest cassette file that is read (64 MiB): a larger one is refused before reading, and
/// recording refuses to write one.
pub const MAX_CASSETTE_BYTES: u64 = 64 * 1024 * 1024;

/// The largest request or response body the servers take or keep (16 MiB). A request past it is
/// answered `413`; a recorded answer past it makes the recording fail.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The most interactions a cassette may hold (10,000), read or recorded.
pub const MAX_INTERACTIONS: usize = 10_000;

/// What a redacted header, query parameter or URL password is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The shortest secret the scan before writing searches for (8 characters): shorter values are
/// still redacted where they are recognised (headers, query parameters), but searching for them
/// elsewhere would match ordinary text by chance.
pub const MIN_SECRET_CHARS: usize = 8;
