//! A linear pass that rewrites HTML before `html2text` sees it: well-formed (every element
//! closed, in order), nested at most a given depth, without scripts, styles, comments or
//! SVG/MathML, with only the attributes the converter renders, its tables bounded and the whole
//! cut into pieces converted one at a time ([`super::writer`]). The parser then never holds more
//! than about twice that depth of open elements, so its work per tag stays bounded.
//!
//! Its reading of the input is an approximation of HTML's tokenizer; where they differ on odd
//! markup only the rendering suffers, never the bound: the output is written by the writer, tag
//! by tag.

use super::writer::{Flat, PIECE_BYTES, Writer};
use crate::blocking::Stop;

/// How many tags are read between two looks at the stop flag.
const CHECK_EVERY_TAGS: usize = 4096;

/// Elements whose content is raw text up to their end tag, and which are left out with it.
const RAW_DROPPED: &[&str] = &["iframe", "noembed", "noframes", "script", "style", "title"];

/// Elements whose content is raw text up to their end tag, kept as text.
const RAW_KEPT: &[&str] = &["textarea", "xmp"];

/// Start tags that leave SVG or MathML content (the HTML standard's list).
const BREAKOUT: &[&str] = &[
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// The attributes kept: those `html2text` renders.
const KEPT_ATTRIBUTES: &[&str] = &[
    "alt", "colspan", "href", "id", "rowspan", "src", "start", "title",
];

/// A start or end tag as read.
struct Tag<'a> {
    name: String,
    end: bool,
    self_closing: bool,
    attributes: Vec<(&'a str, &'a str)>,
}

/// Whether `b` is HTML whitespace.
fn space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Reads the tag whose name starts at `at` (after `<` or `</`); returns it and where it ends, or
/// `None` when the input ends inside it (the HTML parser drops such a tag).
fn read_tag(html: &str, at: usize, end: bool) -> Option<(Tag<'_>, usize)> {
    let b = html.as_bytes();
    let mut i = at;
    while i < b.len() && !space(b[i]) && b[i] != b'/' && b[i] != b'>' {
        i += 1;
    }
    let raw_name = &html[at..i];
    // A name we could not write back is read as a `span`.
    let name = if raw_name.len() <= 32
        && raw_name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-')
    {
        raw_name.to_ascii_lowercase()
    } else {
        "span".to_owned()
    };
    let mut tag = Tag {
        name,
        end,
        self_closing: false,
        attributes: Vec::new(),
    };
    loop {
        while i < b.len() && (space(b[i]) || b[i] == b'/') {
            tag.self_closing = b[i] == b'/' && b.get(i + 1) == Some(&b'>');
            i += 1;
        }
        match b.get(i)? {
            b'>' => return Some((tag, i + 1)),
            _ => {
                let key_start = i;
                i += 1; // The first character may be `=`.
                while i < b.len() && !space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
                    i += 1;
                }
                let key = &html[key_start..i];
                while i < b.len() && space(b[i]) {
                    i += 1;
                }
                let mut value = "";
                if b.get(i) == Some(&b'=') {
                    i += 1;
                    while i < b.len() && space(b[i]) {
                        i += 1;
                    }
                    match b.get(i)? {
                        &quote @ (b'"' | b'\'') => {
                            let close = b[i + 1..].iter().position(|&c| c == quote)? + i + 1;
                            value = &html[i + 1..close];
                            i = close + 1;
                        }
                        _ => {
                            let start = i;
                            while i < b.len() && !space(b[i]) && b[i] != b'>' {
                                i += 1;
                            }
                            value = &html[start..i];
                        }
                    }
                }
                if let Some(kept) = KEPT_ATTRIBUTES.iter().find(|k| k.eq_ignore_ascii_case(key))
                    && !tag.attributes.iter().any(|(k, _)| k == kept)
                {
                    tag.attributes.push((kept, value));
                }
            }
        }
    }
}

/// Where `needle` (ASCII) next occurs in `b` from `from`, ignoring ASCII case.
fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let first = needle[0];
    let mut i = from;
    while i + needle.len() <= b.len() {
        let next = b[i..b.len() - needle.len() + 1]
            .iter()
            .position(|c| c.eq_ignore_ascii_case(&first))?;
        i += next;
        if b[i..i + needle.len()].eq_ignore_ascii_case(needle) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Where the raw text of a `name` element starting at `from` ends, and where its end tag ends.
fn raw_text_end(b: &[u8], from: usize, name: &str) -> (usize, usize) {
    let mut at = from;
    let needle = format!("</{name}");
    while let Some(found) = find(b, at, needle.as_bytes()) {
        let after = found + needle.len();
        match b.get(after) {
            None => return (found, b.len()),
            Some(&c) if space(c) || c == b'/' || c == b'>' => {
                let close = b[after..]
                    .iter()
                    .position(|&c| c == b'>')
                    .map_or(b.len(), |p| after + p + 1);
                return (found, close);
            }
            Some(_) => at = after,
        }
    }
    (b.len(), b.len())
}

/// Rewrites `html` (see the module docs), in time linear in its length, cut into pieces of about
/// [`PIECE_BYTES`]; `None` when `stop` was set meanwhile.
pub(super) fn flatten(html: &str, max_depth: usize, stop: &Stop) -> Option<Flat> {
    flatten_in_pieces(html, max_depth, PIECE_BYTES, stop)
}

/// [`flatten`] with pieces of about `piece_bytes`.
fn flatten_in_pieces(
    html: &str,
    max_depth: usize,
    piece_bytes: usize,
    stop: &Stop,
) -> Option<Flat> {
    let b = html.as_bytes();
    let mut w = Writer::new(html.len(), max_depth, piece_bytes);
    // Inside SVG or MathML: how many of its elements are open (their content is left out).
    let mut foreign = 0usize;
    let mut tags = 0usize;
    let mut i = 0;
    while i < b.len() {
        tags += 1;
        if tags.is_multiple_of(CHECK_EVERY_TAGS) && stop.is_set() {
            return None;
        }
        let lt = b[i..]
            .iter()
            .position(|&c| c == b'<')
            .map_or(b.len(), |p| i + p);
        if foreign == 0 {
            w.text(&html[i..lt]);
        }
        i = lt;
        if i >= b.len() {
            break;
        }
        let after = |n: usize, what: &[u8]| -> usize {
            find(b, i + n, what).map_or(b.len(), |p| p + what.len())
        };
        let (tag, next) = match b.get(i + 1) {
            Some(b'!') if b[i..].starts_with(b"<!--") => {
                i = if b[i + 4..].starts_with(b">") {
                    i + 5
                } else if b[i + 4..].starts_with(b"->") {
                    i + 6
                } else {
                    after(4, b"-->")
                };
                continue;
            }
            Some(b'!' | b'?') => {
                i = after(2, b">");
                continue;
            }
            Some(b'/') => match b.get(i + 2) {
                Some(c) if c.is_ascii_alphabetic() => match read_tag(html, i + 2, true) {
                    Some(found) => found,
                    None => break,
                },
                Some(b'>') => {
                    i += 3;
                    continue;
                }
                Some(_) => {
                    i = after(2, b">");
                    continue;
                }
                None => {
                    if foreign == 0 {
                        w.text("</");
                    }
                    break;
                }
            },
            Some(c) if c.is_ascii_alphabetic() => match read_tag(html, i + 1, false) {
                Some(found) => found,
                None => break,
            },
            _ => {
                if foreign == 0 {
                    w.text("<");
                }
                i += 1;
                continue;
            }
        };
        i = next;
        let name = tag.name.as_str();
        if foreign > 0 {
            if tag.end {
                foreign -= 1;
                continue;
            }
            if !BREAKOUT.contains(&name) {
                if !tag.self_closing {
                    foreign += 1;
                }
                continue;
            }
            foreign = 0;
        }
        if matches!(name, "html" | "head" | "body") {
            continue;
        }
        if tag.end {
            w.end(name);
            continue;
        }
        if matches!(name, "svg" | "math") {
            if !tag.self_closing {
                foreign = 1;
            }
            continue;
        }
        if name == "plaintext" {
            w.text(&html[i..]);
            break;
        }
        if RAW_DROPPED.contains(&name) || RAW_KEPT.contains(&name) {
            let (text_end, close) = raw_text_end(b, i, name);
            if RAW_KEPT.contains(&name) {
                w.text(&html[i..text_end]);
            }
            i = close;
            continue;
        }
        w.start(name, &tag.attributes);
    }
    Some(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::tables::MAX_PAGE_CELLS;

    fn flat(html: &str, depth: usize) -> String {
        let flat = flatten(html, depth, &Stop::never()).unwrap();
        flat.html
    }

    #[test]
    fn flattening_keeps_text_and_bounds_depth() {
        let deep = flat(&format!("{}x", "<div>".repeat(10)), 3);
        assert_eq!(deep, "<div><div><div>x</div></div></div>");
        assert!(
            flatten(&"<b>".repeat(4), 3, &Stop::never())
                .unwrap()
                .flattened
        );
        assert!(
            !flatten(&"<b>".repeat(3), 3, &Stop::never())
                .unwrap()
                .flattened
        );
        assert_eq!(
            flat("<ul><li>a<li>b</ul><p>c<p>d", 8),
            "<ul><li>a</li><li>b</li></ul><p>c</p><p>d</p>"
        );
        assert_eq!(
            flat(
                "<html><head><title>T</title><style>p{}</style></head><body>a < b</body></html>",
                8
            ),
            "a &lt; b"
        );
        assert_eq!(
            flat("<p>a<script>if (a<b) {}</script><!-- <div> -->b</p>", 8),
            "<p>ab</p>"
        );
        assert_eq!(
            flat(r#"<a title='say "hi"' href=/x onclick="a>b">t</a>"#, 8),
            r#"<a title="say &quot;hi&quot;" href="/x">t</a>"#
        );
        assert_eq!(
            flat("<p>a<svg><path/><text>t</text></svg>b</p>", 8),
            "<p>ab</p>"
        );
        assert_eq!(flat("<svg><g><div>x</div>", 8), "<div>x</div>");
        assert_eq!(
            flat("<br><img src=a alt=b><hr/>", 1),
            r#"<br><img src="a" alt="b"><hr>"#
        );
        assert_eq!(flat("<textarea><b>x</b></textarea>", 8), "&lt;b>x&lt;/b>");
    }

    #[test]
    fn tables_follow_the_parser_and_their_budgets() {
        // A cell without a row gets one; table parts outside a table are dropped.
        assert_eq!(
            flat("<table><td>a<td>b</table><td>x</td>", 8),
            "<table><tr><td>a</td><td>b</td></tr></table>x"
        );
        // An end tag does not reach past a cell; a table where a row is expected ends the last.
        assert_eq!(
            flat("<div><table><tr><td>x</div>y</table>z", 8),
            "<div><table><tr><td>xy</td></tr></table>z</div>"
        );
        assert_eq!(
            flat("<table><tr><table><tr><td>x", 8),
            "<table><tr></tr></table><table><tr><td>x</td></tr></table>"
        );
        // Spans as the converter reads them, within the standard's limits and cut at the last
        // row; no column groups; captions and footers where the converter shows them.
        assert_eq!(
            flat(
                "<table><colgroup><col span=3></colgroup><caption>c</caption><tfoot><tr><td colspan=0 rowspan=99999 id=i>f<tr><td rowspan=2 colspan=9>g<td rowspan=1>h",
                8
            ),
            r#"<table><div>c</div><tbody><tr><td rowspan="00002" id="i">f</td></tr><tr><td rowspan="00001" colspan="9">g</td><td>h</td></tr></tbody></table>"#
        );
        // Past a budget: lines, in full.
        let html = format!(
            "<table>{}</table>",
            "<tr><td rowspan=65534>a<td>b".repeat(60)
        );
        let out = flatten(&html, 8, &Stop::never()).unwrap();
        assert_eq!(out.linearized, 1);
        assert_eq!(
            out.html,
            format!("<div>{}</div>", "<div>a | b</div>".repeat(60))
        );
        // Past the page's budget of grid cells, tables are lines (3 cells and rows each here).
        let many = "<table><tr><td>a<td>b</table>".repeat(30_000);
        let out = flatten(&many, 8, &Stop::never()).unwrap();
        assert_eq!(out.linearized, 30_000 - MAX_PAGE_CELLS / 3);
        assert!(
            out.html.starts_with("<table>") && out.html.ends_with("<div><div>a | b</div></div>")
        );
        // Tables nested deeper than the grids allow are lines from their start.
        let nested = "<table><tr><td>".repeat(10);
        let out = flatten(&nested, 64, &Stop::never()).unwrap();
        assert_eq!(out.linearized, 2);
        assert_eq!(out.html.matches("<table>").count(), 8);
    }

    #[test]
    fn pieces_are_cut_between_blocks_and_lists_go_on_counting() {
        let html = format!("<ol start=3>{}</ol>", "<li>item</li>".repeat(20));
        let out = flatten_in_pieces(&html, 8, 64, &Stop::never()).unwrap();
        let pieces: Vec<&str> = out.pieces().collect();
        assert!(pieces.len() > 2, "{pieces:?}");
        assert_eq!(pieces.concat(), out.html);
        let mut next = 3;
        for piece in &pieces {
            let start = format!(r#"<ol start="{next}">"#);
            assert!(
                piece.starts_with(&start) || (next == 3 && piece.starts_with("<ol>")),
                "{piece}"
            );
            assert!(piece.ends_with("</ol>"), "{piece}");
            next += piece.matches("<li>").count();
        }
        assert_eq!(next, 23);
        // A long text is cut too, outside grids.
        let out = flatten_in_pieces(
            &format!("<p>{}</p>", "word ".repeat(100)),
            8,
            64,
            &Stop::never(),
        )
        .unwrap();
        assert!(out.pieces().count() > 2);
        assert!(
            out.pieces()
                .all(|p| p.starts_with("<p>") && p.ends_with("</p>"))
        );
        // A grid's placeholders count toward its piece, though they have no HTML: tables of 50
        // cells spanning 78 empty rows (1.5 KB, 4,028 cells and rows each) are a piece each.
        let table = format!(
            "<table><tr>{}{}</table>",
            "<td rowspan=99>x".repeat(50),
            "<tr>".repeat(78)
        );
        let out = flatten(&table.repeat(10), 8, &Stop::never()).unwrap();
        assert_eq!(out.linearized, 0);
        assert_eq!(out.pieces().count(), 10);
        let grid = format!("<table><tr><td>{}</table>", "word ".repeat(100));
        let out = flatten_in_pieces(&grid, 8, 64, &Stop::never()).unwrap();
        assert_eq!(out.pieces().count(), 1);
    }

    proptest::proptest! {
        #[test]
        fn flattened_html_is_well_formed_and_shallow(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<div>", "</div>", "<b>", "</b>", "<p>", "</p>", "<li>", "<ul>", "</ul>",
                    "<td>", "<tr>", "<table>", "</table>", "<br>", "<br/>", "<div/>", "<svg>",
                    "</svg>", "<path/>", "<script>", "</script>", "<!--", "-->", "<", ">",
                    "text", "<a href='x>y'>", "</a>", "<x-y>", "</x-y>", "<textarea>",
                    "</textarea>", "<?x>", "</>", "&amp;", "<B>", "</B >", "<!doctype html>",
                    "<th>", "</td>", "</tr>", "<tbody>", "</tbody>", "<tfoot>", "<caption>",
                    "</caption>", "<col>", "<colgroup>", "</colgroup>", "<td rowspan=3 colspan=2>",
                    "<ol start=5>", "</ol>", "<ol>", "long text with words in it",
                ]),
                0..80,
            ),
            depth in 1usize..6,
            piece_bytes in 4usize..64,
        ) {
            let flat = flatten_in_pieces(&parts.concat(), depth, piece_bytes, &Stop::never()).unwrap();
            proptest::prop_assert_eq!(flat.pieces().collect::<String>(), flat.html.clone());
            for piece in flat.pieces() {
                // Every tag written is `<name ...>` or `</name>`; check nesting with a stack.
                let mut open: Vec<String> = Vec::new();
                let mut rest = piece;
                while let Some(at) = rest.find('<') {
                    let end = rest[at..].find('>').unwrap() + at;
                    let tag = &rest[at + 1..end];
                    rest = &rest[end + 1..];
                    if let Some(name) = tag.strip_prefix('/') {
                        let top = open.pop();
                        proptest::prop_assert_eq!(top.as_deref(), Some(name));
                    } else {
                        let name = tag.split(' ').next().unwrap();
                        if !["br", "img", "hr"].contains(&name) {
                            open.push(name.to_owned());
                            proptest::prop_assert!(open.len() <= depth, "{}", flat.html);
                        }
                    }
                }
                proptest::prop_assert!(open.is_empty(), "{}", flat.html);
            }
        }
    }
}
