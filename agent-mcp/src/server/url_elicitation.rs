//! What URL-mode elicitation ([`ConnectedClient::elicit_url`]) sends and answers: the checks a
//! URL passes before a person is sent there, and [`ClientUrlAnswer`].
//!
//! [`ConnectedClient::elicit_url`]: super::ConnectedClient::elicit_url

use agent_core::SkillError;

/// The longest URL [`ConnectedClient::elicit_url`](super::ConnectedClient::elicit_url) sends: 8 KiB.
pub const MAX_ELICITATION_URL_BYTES: usize = 8 * 1024;

/// The longest elicitation id [`ConnectedClient::elicit_url`](super::ConnectedClient::elicit_url) sends: 256 bytes.
pub const MAX_ELICITATION_ID_BYTES: usize = 256;

/// Server side: what the client's user answered to a URL-mode elicitation
/// ([`ConnectedClient::elicit_url`](super::ConnectedClient::elicit_url)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientUrlAnswer {
    /// They agreed to go to the URL; what they do there reaches the server by its own way.
    Accept,
    /// They said no to going.
    Decline,
    /// They dismissed the request without choosing.
    Cancel,
}

/// `url` parsed, if a URL elicitation may send a person there.
pub(crate) fn checked_url(url: &str) -> Result<url::Url, SkillError> {
    if url.len() > MAX_ELICITATION_URL_BYTES {
        return Err(SkillError::tool(format!(
            "the URL to send the MCP client's user to is {} bytes, more than the \
             {MAX_ELICITATION_URL_BYTES} allowed",
            url.len()
        )));
    }
    let parsed = url::Url::parse(url)
        .map_err(|e| SkillError::tool(format!("the URL {url:?} is not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(SkillError::tool(format!(
            "the URL to send the MCP client's user to must be http or https, not {}",
            parsed.scheme()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(SkillError::tool(
            "the URL to send the MCP client's user to holds credentials (user:password@); \
             MCP forbids sending them in an elicitation",
        ));
    }
    Ok(parsed)
}
