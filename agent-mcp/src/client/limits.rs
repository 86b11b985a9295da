//! How long a request to the server may take, and how much of a list is read.

use std::time::Duration;

/// The most items a list of the server's (resources, templates, prompts) is read to; the rest
/// is not read, with a warning.
pub const MAX_LISTED: usize = 1000;

/// How long the handshake and the first `tools/list` may take, when connecting and reconnecting.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
