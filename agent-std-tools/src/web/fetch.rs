//! One fetch: redirects followed by hand (every hop's addresses checked again), the body read up
//! to its limit, and the answer put together with its notes (or the error, with an excerpt).

use agent_core::{SkillContext, SkillError};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use super::address::client_for;
use super::text::to_text;
use super::{WebConfig, shown, shown_raw};

pub(super) async fn fetch(
    ctx: &SkillContext,
    mut url: Url,
    config: &WebConfig,
) -> Result<String, SkillError> {
    let mut hops = 0;
    let response = loop {
        let client = client_for(&url, config).await?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| SkillError::from_error(e.without_url()).context(&url))?;
        if response.status().is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            if hops == config.max_redirects {
                return Err(SkillError::tool(format!(
                    "`{}` redirected more than {} times",
                    shown(&url),
                    config.max_redirects
                )));
            }
            let location = location.to_str().unwrap_or_default();
            url = url.join(location).map_err(|e| {
                SkillError::tool(format!(
                    "`{}` redirected to a bad URL `{}`: {e}",
                    shown(&url),
                    shown_raw(location)
                ))
            })?;
            hops += 1;
            continue;
        }
        break response;
    };

    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (body, cut_body) = read_body(response, config.max_bytes, &url).await?;
    let mut notes = Vec::new();
    if cut_body {
        notes.push(format!(
            "only the first {} bytes of the body were read",
            config.max_bytes
        ));
    }
    let text = to_text(ctx, body, &content_type, &url, config.max_chars, &mut notes).await?;
    let more = text.more;
    let mut text = if more == 0 {
        text.text.trim()
    } else {
        text.text.trim_start()
    }
    .to_owned();
    // The HTML converter keeps only what can be shown and counts the rest (`more`).
    let cut = text.char_indices().nth(config.max_chars).map(|(at, _)| at);
    if cut.is_some() || more > 0 {
        let at = cut.unwrap_or(text.len());
        let shown = text[..at].chars().count();
        let total = shown + text[at..].chars().count() + more;
        text.truncate(at);
        notes.push(format!("showing {shown} of {total} characters of text"));
    }
    if !status.is_success() {
        let excerpt: String = text.chars().take(2_000).collect();
        return Err(SkillError::tool(format!(
            "`{}` answered HTTP {status}\n\n{excerpt}",
            shown(&url)
        )));
    }
    let mut out = format!(
        "URL: {}\nContent-Type: {content_type}\n\n{text}",
        shown(&url)
    );
    if !notes.is_empty() {
        out.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    Ok(out)
}

async fn read_body(
    mut response: reqwest::Response,
    max_bytes: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), SkillError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| SkillError::from_error(e.without_url()).context(url))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// Adds the URL to an error from the HTTP client.
trait WithUrl {
    fn context(self, url: &Url) -> SkillError;
}

impl WithUrl for SkillError {
    fn context(self, url: &Url) -> SkillError {
        match self {
            SkillError::Tool { message, source } => SkillError::Tool {
                message: format!("fetching `{}`: {message}", shown(url)),
                source,
            },
            other => other,
        }
    }
}
