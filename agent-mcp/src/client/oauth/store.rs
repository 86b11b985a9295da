//! [`FileTokenStore`]: one server's OAuth credentials in one JSON file.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde_json::{Value, json};

use super::error::OAuthError;

/// The largest token file [`FileTokenStore`] reads (64 KiB; a real one is under 4 KiB). A
/// larger file is an error naming it, not read.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// The name of the longest file name [`token_file_name`] makes before it shortens one.
const MAX_NAME_BYTES: usize = 160;

/// A [`CredentialStore`] that keeps one MCP server's credentials (client id, access and refresh
/// token, granted scopes) in one JSON file.
///
/// The file is `{"server": URL, "credentials": {...}}`. It is written to a temporary file in
/// the same directory, flushed to disk and renamed over the old one, so a crash leaves the old
/// file or the new one, never half of one; on Unix it is created with mode `0600` and its
/// directory with `0700`. Reading it accepts at most [`MAX_TOKEN_FILE_BYTES`]; a file that is
/// not valid JSON of that shape, or that holds another server's tokens, is an error naming
/// the file (and is left as it is). A missing file means "not logged in". Refreshes through one
/// store (and its clones) are serialized; two processes refreshing the same file at once are
/// not (the later save wins, and the other process's refresh token may have been rotated
/// away: it then asks to log in again).
#[derive(Clone)]
pub struct FileTokenStore {
    path: PathBuf,
    server: String,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl FileTokenStore {
    /// The store for `server_url` in `dir`: the file is `dir/`[`token_file_name`]`(server_url)`.
    /// The directory is made when tokens are first saved.
    pub fn in_dir(dir: impl Into<PathBuf>, server_url: &str) -> Result<Self, OAuthError> {
        let name = token_file_name(server_url)?;
        Ok(FileTokenStore::at(dir.into().join(name), server_url))
    }

    /// The store for `server_url` in the file at `path`.
    pub fn at(path: impl Into<PathBuf>, server_url: &str) -> Self {
        FileTokenStore {
            path: path.into(),
            server: server_url.to_owned(),
            refresh: Arc::default(),
        }
    }

    /// The token file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, what: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("the token file {}: {what}", self.path.display()))
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        // Opened without blocking, then checked to be a regular file: a FIFO or a device at the
        // path would otherwise hold the open (or the read) forever, where no timeout reaches.
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = match options.open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error(format_args!("cannot be opened: {e}"))),
        };
        match file.metadata() {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => {
                return Err(self.error(
                    "is not a regular file (a FIFO, a device or a folder): delete it and log in again",
                ));
            }
            Err(e) => return Err(self.error(format_args!("cannot be inspected: {e}"))),
        }
        let mut bytes = Vec::new();
        file.take(MAX_TOKEN_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.error(format_args!("cannot be read: {e}")))?;
        if bytes.len() as u64 > MAX_TOKEN_FILE_BYTES {
            return Err(self.error(format_args!(
                "is larger than {MAX_TOKEN_FILE_BYTES} bytes; it is not a token file"
            )));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            self.error(format_args!(
                "is not JSON ({e}); delete it and log in again"
            ))
        })?;
        let server = value.get("server").and_then(Value::as_str);
        if server != Some(self.server.as_str()) {
            return Err(self.error(format_args!(
                "holds tokens for {}, not for {}",
                server.map_or_else(|| "no named server".to_owned(), |s| format!("`{s}`")),
                self.server
            )));
        }
        let credentials = value.get("credentials").cloned().unwrap_or(Value::Null);
        serde_json::from_value(credentials).map(Some).map_err(|e| {
            self.error(format_args!(
                "does not hold OAuth credentials ({e}); delete it and log in again"
            ))
        })
    }

    fn write(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let body = serde_json::to_vec_pretty(&json!({
            "server": self.server,
            "credentials": credentials,
        }))
        .map_err(|e| self.error(format_args!("cannot be encoded: {e}")))?;
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        create_private_dir(&dir)
            .map_err(|e| self.error(format_args!("its directory cannot be made: {e}")))?;
        let temp = dir.join(temp_name(&self.path));
        let written = write_private(&temp, &body).and_then(|()| std::fs::rename(&temp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(self.error(format_args!("cannot be written: {e}")));
        }
        Ok(())
    }
}

impl std::fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileTokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.error(format_args!("cannot be removed: {e}"))),
        }
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self.refresh.clone().lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

/// The file name [`FileTokenStore::in_dir`] gives a server's tokens: the URL (scheme, host,
/// port, path) with every character other than `a-z A-Z 0-9 . -` written as `_` and its hex
/// code, so two URLs never share a file, and `.json`. A name that would be longer than 160
/// bytes is cut and ends with a hash of the whole URL instead.
///
/// ```
/// let name = agent_mcp::client::oauth::token_file_name("http://127.0.0.1:8080/mcp").unwrap();
/// assert_eq!(name, "http_3a_2f_2f127.0.0.1_3a8080_2fmcp.json");
/// ```
pub fn token_file_name(server_url: &str) -> Result<String, OAuthError> {
    let url = url::Url::parse(server_url).map_err(|e| OAuthError::InvalidUrl {
        url: server_url.to_owned(),
        reason: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(OAuthError::InvalidUrl {
            url: server_url.to_owned(),
            reason: "it must be an http:// or https:// URL with a host".into(),
        });
    }
    let mut name = String::new();
    for byte in server_url.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'-' {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("_{byte:02x}"));
        }
    }
    if name.len() > MAX_NAME_BYTES {
        name.truncate(MAX_NAME_BYTES - 17);
        name.push_str(&format!("-{:016x}", fnv1a(server_url.as_bytes())));
    }
    name.push_str(".json");
    Ok(name)
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust versions, for file names only.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn temp_name(path: &Path) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_private(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(body)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_urls_never_share_a_file_and_long_ones_are_cut_with_a_hash() {
        let a = token_file_name("http://h/a_b").unwrap();
        let b = token_file_name("http://h/a/b").unwrap();
        assert_ne!(a, b);
        let long = format!("https://h/{}", "x".repeat(400));
        let longer = format!("https://h/{}y", "x".repeat(400));
        let (one, two) = (
            token_file_name(&long).unwrap(),
            token_file_name(&longer).unwrap(),
        );
        assert!(one.len() <= MAX_NAME_BYTES + 5, "{one}");
        assert_ne!(one, two);
        assert!(token_file_name("file:///etc/passwd").is_err());
        assert!(token_file_name("not a url").is_err());
    }

    /// A FIFO at the token path (nobody writing to it) used to hold the load forever, in a
    /// blocking open no timeout reaches: it is refused at once, as a folder is.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_folder_at_the_token_path_is_refused_without_waiting() {
        let dir = std::env::temp_dir().join(format!("eugene-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("tokens.json");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
        let store = FileTokenStore::at(&fifo, "https://mcp.example/");
        let (sent, read) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sent.send(store.read().map(|c| c.is_some()));
        });
        // The bound only keeps a regression from hanging the suite: the answer comes at once.
        let answer = read
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("loading a FIFO came back");
        let error = answer.unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        let folder = dir.join("folder.json");
        std::fs::create_dir_all(&folder).unwrap();
        let error = FileTokenStore::at(&folder, "https://mcp.example/")
            .read()
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a regular file"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
