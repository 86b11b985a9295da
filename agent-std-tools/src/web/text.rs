//! A response's body as text: HTML flattened and converted on a blocking thread, within
//! [`MAX_HTML_BYTES`] and [`MAX_HTML_DEPTH`]; other text types as they are; binary content refused.
//!
//! HTML is converted piece by piece (the pieces of [`super::writer`], about 32 KiB of HTML
//! each): each is parsed, laid out and rendered on its own, the call's stop flag checked between
//! those steps and during parsing, so that a conversion past the time limit or cancelled stops
//! within one piece's work. Only the first `keep` characters of the text are kept; the rest is
//! converted too but only counted, so the text held stays bounded whatever the page lays out to.

use std::panic::{AssertUnwindSafe, catch_unwind};

use agent_core::{SkillContext, SkillError};
use html2text::config::Config;
use reqwest::Url;

use super::links::Links;
use super::tables::{
    self, MAX_GRID_NESTING, MAX_PAGE_CELLS, MAX_TABLE_BYTES, MAX_TABLE_CELLS, MAX_TABLE_COLUMNS,
};
use super::{MAX_HTML_BYTES, MAX_HTML_DEPTH, html, shown};
use crate::blocking::{Stop, StopReader, blocking_until_stopped};

/// How wide the text of HTML is laid out, in columns.
const WIDTH: usize = 100;

/// A body's text: its start, and how many characters of text follow it.
pub(super) struct Text {
    /// The text, or at least its first `keep` characters (after leading whitespace).
    pub(super) text: String,
    /// How many characters follow `text` (trailing whitespace not counted); 0 when `text` is all.
    pub(super) more: usize,
}

/// The body as text: HTML converted (on a blocking thread, see the module docs), other text as it
/// is; binary content is refused. At least the first `keep` characters are returned. Notes on
/// what was left out go to `notes`.
pub(super) async fn to_text(
    ctx: &SkillContext,
    body: Vec<u8>,
    content_type: &str,
    url: &Url,
    keep: usize,
    notes: &mut Vec<String>,
) -> Result<Text, SkillError> {
    let sniff = &body[..body.len().min(1024)];
    let looks_html = {
        let start = String::from_utf8_lossy(sniff)
            .trim_start()
            .to_ascii_lowercase();
        start.starts_with("<!doctype html") || start.starts_with("<html")
    };
    if content_type.contains("html") || (content_type.is_empty() && looks_html) {
        let (text, html_notes) =
            blocking_until_stopped(ctx, move |stop| html_to_text(&body, keep, stop)).await?;
        notes.extend(html_notes);
        return Ok(text);
    }
    let textual = content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "csv"]
            .iter()
            .any(|t| content_type.contains(t));
    if textual || (content_type.is_empty() && !body[..body.len().min(8192)].contains(&0)) {
        return Ok(Text {
            text: String::from_utf8_lossy(&body).into_owned(),
            more: 0,
        });
    }
    Err(SkillError::tool(format!(
        "`{}` is `{content_type}` ({} bytes), not text; web_fetch returns text only",
        shown(url),
        body.len()
    )))
}

/// HTML to text, within [`MAX_HTML_BYTES`] and [`MAX_HTML_DEPTH`], piece by piece, stopping when
/// `stop` is set; with notes on what was left out or changed.
fn html_to_text(body: &[u8], keep: usize, stop: &Stop) -> Result<(Text, Vec<String>), SkillError> {
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
    drop(html);
    if flat.flattened {
        notes.push(format!(
            "the HTML was nested more than {MAX_HTML_DEPTH} elements deep; the deeper tags were dropped, their text kept"
        ));
    }
    if flat.linearized > 0 {
        let (count, were) = match flat.linearized {
            1 => ("1 table was".to_owned(), "it is"),
            n => (format!("{n} tables were"), "they are"),
        };
        notes.push(format!(
            "{count} too large or too irregular to lay out as a grid (at most {MAX_TABLE_CELLS} cells and rows, {MAX_TABLE_COLUMNS} columns, {} KiB of HTML, {MAX_GRID_NESTING} tables nested, {MAX_PAGE_CELLS} cells in all the page's grids): {were} shown as lines, a row to a line, cells separated by ` | `",
            MAX_TABLE_BYTES / 1024
        ));
    }
    let links = Links::default();
    let config = html2text::config::with_decorator(links.clone())
        .do_decorate()
        .allow_width_overflow();
    let mut text = Collected::new(keep);
    let mut failed = 0;
    for piece in flat.pieces() {
        let (converted, as_lines) = convert_or_lines(&config, &links, piece, stop)?;
        failed += usize::from(as_lines);
        text.push(&converted);
    }
    if failed > 0 {
        notes.push(format!(
            "the converter failed on the tables of {failed} part(s) of the page; their tables are shown as lines, cells separated by ` | `"
        ));
    }
    text.push(&links.footnotes());
    Ok((
        Text {
            text: text.text,
            more: text.more,
        },
        notes,
    ))
}

/// One piece of HTML as text (see [`convert`]); if the converter panics on it, the piece with its
/// tables written as lines, and `true`.
fn convert_or_lines(
    config: &Config<Links>,
    links: &Links,
    piece: &str,
    stop: &Stop,
) -> Result<(String, bool), SkillError> {
    let links_before = links.len();
    if let Ok(converted) = catch_unwind(AssertUnwindSafe(|| convert(config, piece, stop))) {
        return Ok((converted?, false));
    }
    // html2text 0.17 panics on some tables; their text is kept, as lines.
    links.truncate(links_before);
    let lines = tables::linearize_all(piece);
    match catch_unwind(AssertUnwindSafe(|| convert(config, &lines, stop))) {
        Ok(converted) => Ok((converted?, true)),
        Err(_) => Err(SkillError::tool(
            "could not convert the HTML: the converter failed on it",
        )),
    }
}

/// One piece of HTML as text, stopping between its steps when `stop` is set.
fn convert(config: &Config<Links>, piece: &str, stop: &Stop) -> Result<String, SkillError> {
    let go_on = || {
        if stop.is_set() {
            Err(SkillError::Cancelled)
        } else {
            Ok(())
        }
    };
    let failed = |e: html2text::Error| {
        if stop.is_set() {
            SkillError::Cancelled
        } else {
            SkillError::tool(format!("could not read the HTML: {e}"))
        }
    };
    go_on()?;
    let reader = StopReader {
        inner: piece.as_bytes(),
        stop,
    };
    let dom = config.parse_html(reader).map_err(failed)?;
    go_on()?;
    let tree = match config.dom_to_render_tree(&dom) {
        Ok(tree) => tree,
        // Nothing in the piece to render.
        Err(html2text::Error::Fail) => return Ok(String::new()),
        Err(e) => return Err(failed(e)),
    };
    drop(dom);
    go_on()?;
    config.render_to_string(tree, WIDTH).map_err(failed)
}

/// The pieces' text joined, a blank line between two, kept up to a number of characters and
/// only counted past it.
struct Collected {
    text: String,
    /// The characters in `text`.
    chars: usize,
    /// How many characters to keep.
    keep: usize,
    /// The characters counted past `text`, up to the last that is not whitespace.
    more: usize,
    /// The whitespace counted last, past the last character that is not.
    pending: usize,
}

impl Collected {
    fn new(keep: usize) -> Collected {
        Collected {
            text: String::new(),
            chars: 0,
            keep,
            more: 0,
            pending: 0,
        }
    }

    fn push(&mut self, piece: &str) {
        if piece.trim().is_empty() {
            return;
        }
        let first = self.chars == 0;
        let (separator, piece) = if first {
            ("", piece.trim_start())
        } else {
            ("\n", piece)
        };
        if self.chars <= self.keep {
            self.text.push_str(separator);
            self.text.push_str(piece);
            self.chars += separator.len() + piece.chars().count();
        } else {
            let body = piece.trim_end();
            self.more += self.pending + separator.len() + body.chars().count();
            self.pending = piece[body.len()..].chars().count();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::writer::PIECE_BYTES;

    fn convert_all(html: &str, keep: usize) -> (Text, Vec<String>) {
        html_to_text(html.as_bytes(), keep, &Stop::never()).unwrap()
    }

    #[test]
    fn links_are_numbered_across_pieces() {
        let html: String = (0..3000)
            .map(|i| format!("<p><a href=\"/l{i}\">link {i}</a></p>"))
            .collect();
        assert!(html.len() > 2 * PIECE_BYTES);
        let (text, _) = convert_all(&html, usize::MAX);
        for i in [0, 1500, 2999] {
            let n = i + 1;
            assert!(text.text.contains(&format!("[link {i}][{n}]")), "{i}");
            assert!(text.text.contains(&format!("\n[{n}]: /l{i}\n")), "{i}");
        }
        assert_eq!(text.text.matches("]: /l").count(), 3000);
    }

    #[test]
    fn text_past_what_is_kept_is_counted() {
        let html = "<p>word word word</p>".repeat(20_000);
        let (all, _) = convert_all(&html, usize::MAX);
        let (kept, _) = convert_all(&html, 100);
        assert_eq!(all.more, 0);
        assert!(kept.more > 0 && kept.text.len() < all.text.len());
        assert!(all.text.starts_with(&kept.text));
        assert_eq!(
            kept.text.chars().count() + kept.more,
            all.text.trim_end().chars().count()
        );
    }

    #[test]
    fn tables_the_converter_panics_on_are_converted() {
        // html2text 0.17 panics on these tables, whose cells span rows past their end.
        for (html, cells) in [
            (
                "<table><tr><td rowspan=2 colspan=2>a</td><td rowspan=3>b</td></tr></table>",
                &["a", "b"][..],
            ),
            (
                "<table><tr><td rowspan=3>a<br>b<br>c</td></tr></table><table><tr><td>d<td>e</table>",
                &["a", "b", "c", "d", "e"][..],
            ),
        ] {
            let (text, notes) = convert_all(html, usize::MAX);
            for cell in cells {
                assert!(text.text.contains(cell), "{}", text.text);
            }
            assert!(notes.is_empty(), "{notes:?}");
        }
    }

    #[test]
    fn a_piece_the_converter_panics_on_is_converted_again_as_lines() {
        // A table the writer would have made regular first (its last row ends with blank cells),
        // on which html2text 0.17 panics.
        let piece = r#"<p><a href="/x">x</a></p><table><tr><td rowspan="2" colspan="2">a</td><td colspan="3">b</td></tr><tr><td>c</td><td rowspan="2">d</td></tr><tr></tr></table>"#;
        let links = Links::default();
        let config = html2text::config::with_decorator(links.clone())
            .do_decorate()
            .allow_width_overflow();
        let (text, as_lines) = convert_or_lines(&config, &links, piece, &Stop::never()).unwrap();
        assert!(as_lines);
        assert!(
            text.contains("[x][1]") && text.contains("a | b") && text.contains("c | d"),
            "{text}"
        );
        assert_eq!(links.footnotes(), "[1]: /x\n");
    }

    proptest::proptest! {
        #[test]
        fn any_table_is_converted(
            parts in proptest::collection::vec(
                (0usize..8, 0usize..5, 0usize..5),
                0..60,
            ),
        ) {
            let html: String = parts
                .iter()
                .map(|&(kind, rows, cols)| match kind {
                    0 => "<table>".to_owned(),
                    1 => "</table>".to_owned(),
                    2 => "<tr>".to_owned(),
                    3 => "</tr>".to_owned(),
                    4 => format!("<td rowspan={rows} colspan={cols}>x"),
                    5 => format!("<th rowspan={}>y", rows * 1000),
                    6 => "</td>".to_owned(),
                    _ => "<tbody>".to_owned(),
                })
                .collect();
            let converted = html_to_text(html.as_bytes(), usize::MAX, &Stop::never());
            proptest::prop_assert!(converted.is_ok(), "{html}");
        }
    }
}
