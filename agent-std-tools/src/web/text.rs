//! A response's body as text: HTML flattened and converted on a blocking thread, within
//! [`MAX_HTML_BYTES`] and [`MAX_HTML_DEPTH`]; other text types as they are; binary content refused.

use agent_core::{SkillContext, SkillError};
use reqwest::Url;

use super::{MAX_HTML_BYTES, MAX_HTML_DEPTH, html, shown};
use crate::blocking::{Stop, StopReader, blocking_until_stopped};

/// The body as text: HTML converted (on a blocking thread, see the module docs), other text as it
/// is; binary content is refused. Notes on what was left out go to `notes`.
pub(super) async fn to_text(
    ctx: &SkillContext,
    body: Vec<u8>,
    content_type: &str,
    url: &Url,
    notes: &mut Vec<String>,
) -> Result<String, SkillError> {
    let sniff = &body[..body.len().min(1024)];
    let looks_html = {
        let start = String::from_utf8_lossy(sniff)
            .trim_start()
            .to_ascii_lowercase();
        start.starts_with("<!doctype html") || start.starts_with("<html")
    };
    if content_type.contains("html") || (content_type.is_empty() && looks_html) {
        let (text, html_notes) =
            blocking_until_stopped(ctx, move |stop| html_to_text(&body, stop)).await?;
        notes.extend(html_notes);
        return Ok(text);
    }
    let textual = content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "csv"]
            .iter()
            .any(|t| content_type.contains(t));
    if textual || (content_type.is_empty() && !body[..body.len().min(8192)].contains(&0)) {
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    Err(SkillError::tool(format!(
        "`{}` is `{content_type}` ({} bytes), not text; web_fetch returns text only",
        shown(url),
        body.len()
    )))
}

/// HTML to text, within [`MAX_HTML_BYTES`] and [`MAX_HTML_DEPTH`], stopping when `stop` is set;
/// with notes on what was left out.
fn html_to_text(body: &[u8], stop: &Stop) -> Result<(String, Vec<String>), SkillError> {
    let mut notes = Vec::new();
    let html = if body.len() > MAX_HTML_BYTES {
        notes.push(format!(
            "only the first {MAX_HTML_BYTES} bytes of the HTML were converted"
        ));
        String::from_utf8_lossy(&body[..MAX_HTML_BYTES])
    } else {
        String::from_utf8_lossy(body)
    };
    let flat = html::flatten(&html, MAX_HTML_DEPTH, stop).ok_or(SkillError::Cancelled)?;
    if flat.flattened {
        notes.push(format!(
            "the HTML was nested more than {MAX_HTML_DEPTH} elements deep; the deeper tags were dropped, their text kept"
        ));
    }
    let reader = StopReader {
        inner: flat.html.as_bytes(),
        stop,
    };
    let text = html2text::config::plain()
        .allow_width_overflow()
        .string_from_read(reader, 100)
        .map_err(|e| {
            if stop.is_set() {
                SkillError::Cancelled
            } else {
                SkillError::tool(format!("could not read the HTML: {e}"))
            }
        })?;
    Ok((text, notes))
}
