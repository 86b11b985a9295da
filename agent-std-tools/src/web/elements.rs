//! What the writer needs to know of HTML elements: which have no content, which close an open
//! `p`, which a piece may be cut inside, which follow the table rules, which are blocks.

/// Elements without content.
pub(crate) const VOID: &[&str] = &[
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
    "keygen", "link", "meta", "param", "source", "track", "wbr",
];

/// Start tags that close an open `p` first.
pub(crate) const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dd",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "search",
    "section",
    "summary",
    "table",
    "ul",
];

/// Elements a piece may be cut inside, between their blocks, without changing the text (the
/// table parts only occur in tables written as lines: pieces are never cut inside a grid).
pub(crate) const CONTAINERS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figure",
    "footer",
    "form",
    "header",
    "hgroup",
    "main",
    "menu",
    "nav",
    "ol",
    "search",
    "section",
    "ul",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
];

/// The parts of a table whose start tags follow the table rules (see [`super::writer`]).
pub(crate) const TABLE_PARTS: &[&str] = &[
    "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th",
];

/// Whether `name` begins and ends a block.
pub(crate) fn is_block(name: &str) -> bool {
    CLOSES_P.contains(&name) || matches!(name, "tr" | "caption" | "thead" | "tbody" | "tfoot")
}
