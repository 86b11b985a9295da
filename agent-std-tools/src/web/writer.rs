//! What the linear HTML rewrite writes, tag by tag: every element closed, in order, and closed
//! where an HTML parser closes it implicitly (a `p` before a block, an `li` before the next);
//! elements nested past the depth limit dropped, their text kept.

use super::elements::{CLOSES_P, VOID};

/// The rewritten HTML, and whether anything was nested too deep.
pub(crate) struct Flat {
    /// Well-formed HTML, nested at most the depth asked for.
    pub(crate) html: String,
    /// Whether tags nested deeper than the limit were dropped.
    pub(crate) flattened: bool,
}

/// Writes the rewritten HTML (see the module docs).
pub(crate) struct Writer {
    out: String,
    /// The open elements written, outermost first.
    open: Vec<String>,
    /// How many start tags past the depth limit are open (dropped, with their end tags).
    overflow: usize,
    flattened: bool,
    max_depth: usize,
}

impl Writer {
    /// A writer for an input of `len` bytes, nesting at most `max_depth` elements (at least 1).
    pub(crate) fn new(len: usize, max_depth: usize) -> Writer {
        Writer {
            out: String::with_capacity(len.min(1 << 20)),
            open: Vec::new(),
            overflow: 0,
            flattened: false,
            max_depth: max_depth.max(1),
        }
    }

    /// Closes what is open and returns what was written.
    pub(crate) fn finish(mut self) -> Flat {
        while !self.open.is_empty() {
            self.close_top();
        }
        Flat {
            html: self.out,
            flattened: self.flattened,
        }
    }

    /// Writes `text`, a `<` in it escaped.
    pub(crate) fn text(&mut self, text: &str) {
        for (i, part) in text.split('<').enumerate() {
            if i > 0 {
                self.out.push_str("&lt;");
            }
            self.out.push_str(part);
        }
    }

    fn close_top(&mut self) {
        if let Some(name) = self.open.pop() {
            self.out.push_str("</");
            self.out.push_str(&name);
            self.out.push('>');
        }
    }

    fn top_is(&self, names: &[&str]) -> bool {
        self.open
            .last()
            .is_some_and(|top| names.contains(&top.as_str()))
    }

    /// Writes the start tag of element `name` with the attributes kept.
    pub(crate) fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let void = VOID.contains(&name);
        if !void && self.overflow > 0 {
            self.overflow += 1;
            return;
        }
        if !void {
            // What the HTML parser would close implicitly, kept in step here.
            if CLOSES_P.contains(&name) && self.top_is(&["p"]) {
                self.close_top();
            }
            match name {
                "li" if self.top_is(&["li"]) => self.close_top(),
                "dd" | "dt" if self.top_is(&["dd", "dt"]) => self.close_top(),
                "td" | "th" if self.top_is(&["td", "th"]) => self.close_top(),
                "option" if self.top_is(&["option"]) => self.close_top(),
                "tr" | "thead" | "tbody" | "tfoot" | "optgroup" => {
                    let nested: &[&str] = match name {
                        "tr" => &["td", "th", "tr"],
                        "optgroup" => &["option", "optgroup"],
                        _ => &["td", "th", "tr", "thead", "tbody", "tfoot"],
                    };
                    while self.top_is(nested) {
                        self.close_top();
                    }
                }
                _ => {}
            }
            if self.open.len() >= self.max_depth {
                self.overflow = 1;
                self.flattened = true;
                return;
            }
        }
        self.out.push('<');
        self.out.push_str(name);
        for (key, value) in attributes {
            self.out.push(' ');
            self.out.push_str(key);
            self.out.push_str("=\"");
            for (i, part) in value.split('"').enumerate() {
                if i > 0 {
                    self.out.push_str("&quot;");
                }
                self.out.push_str(part);
            }
            self.out.push('"');
        }
        self.out.push('>');
        if !void {
            self.open.push(name.to_owned());
        }
    }

    /// Writes the end tag of element `name`, closing what the parser would close with it.
    pub(crate) fn end(&mut self, name: &str) {
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        if let Some(at) = self.open.iter().rposition(|open| open == name) {
            while self.open.len() > at {
                self.close_top();
            }
        }
    }
}
