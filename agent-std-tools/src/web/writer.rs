//! What the linear HTML rewrite writes, tag by tag: every element closed, in order; elements
//! nested past the depth limit dropped (their text kept); tables laid out as grids only within
//! the budgets of [`super::tables`] and otherwise written as lines; the whole cut into pieces of
//! about [`PIECE_BYTES`] that are converted one after the other.
//!
//! - **In step with the parser**: the open elements are closed where an HTML parser closes them
//!   implicitly (a `p` before a block, an `li` before the next), and table parts follow its table
//!   rules: a cell or row closes what is open in the current table above its row or section, a
//!   cell with no row gets one, a table started where a row is expected ends the current table,
//!   table parts outside any table and end tags that would reach past a cell or table are dropped
//!   (the parser ignores them). So the tables the converter finds are the ones counted here.
//! - **Pieces**: once a piece holds [`PIECE_BYTES`] (a grid's cells, placeholders and rows
//!   counting 16 bytes each), it is cut between two blocks (every element open is a container
//!   such as `div`, `section` or `ul`); once it holds twice that, anywhere outside a table laid
//!   out as a grid. A cut closes the open elements and opens them again
//!   (an `ol` goes on counting), so each piece is well-formed on its own. Text is written in
//!   chunks, so that a piece can also be cut inside a long text.

use super::elements::{CLOSES_P, CONTAINERS, TABLE_PARTS, VOID, is_block};
use super::tables::{
    self, MAX_COLSPAN, MAX_GRID_NESTING, MAX_PAGE_CELLS, MAX_ROWSPAN, MAX_TABLE_BYTES,
    ROWSPAN_DIGITS, Table,
};

/// About how many bytes of HTML each piece converted on its own holds (see the module docs).
pub(crate) const PIECE_BYTES: usize = 32 * 1024;

/// How many bytes of HTML a cell, placeholder or row of a grid counts for in its piece: the
/// converter's work for a placeholder has no HTML of its own.
const CELL_BYTES: usize = 16;

/// The longest start tag written again as it was after a cut; longer ones lose their attributes.
const MAX_REOPENED_TAG: usize = 256;

/// An element written and still open.
struct Open {
    /// Its name as read.
    name: String,
    /// The name written for it (`""`: no tag, as for cells of a table written as lines).
    tag: String,
    /// Its start tag, to write again after a cut.
    reopen: String,
    /// For a table, how it is written.
    table: Option<Table>,
    /// For an `ol`: its first number and how many items were started in it.
    list: (i64, usize),
}

/// The rewritten HTML, cut into pieces.
pub(crate) struct Flat {
    /// Well-formed HTML, nested at most the depth asked for.
    pub(crate) html: String,
    /// Where each piece but the last ends in `html`; every piece is well-formed on its own.
    cuts: Vec<usize>,
    /// Whether tags nested deeper than the limit were dropped.
    pub(crate) flattened: bool,
    /// How many tables were written as lines.
    pub(crate) linearized: usize,
}

impl Flat {
    /// The pieces, in order.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = &str> {
        let ends = self.cuts.iter().copied().chain([self.html.len()]);
        let starts = [0].into_iter().chain(self.cuts.iter().copied());
        starts.zip(ends).map(|(start, end)| &self.html[start..end])
    }
}

/// Writes the rewritten HTML (see the module docs).
pub(crate) struct Writer {
    out: String,
    /// The open elements written, outermost first.
    open: Vec<Open>,
    /// How many start tags past the depth limit are open (dropped, with their end tags).
    overflow: usize,
    flattened: bool,
    max_depth: usize,
    /// The open tables laid out as grids, by their index in `open`, outermost first.
    grids: Vec<usize>,
    /// The cells, placeholders and rows of the grids ended so far, and of those in this piece.
    grid_cells: usize,
    piece_cells: usize,
    linearized: usize,
    cuts: Vec<usize>,
    /// How many open elements are not containers.
    non_containers: usize,
    /// Whether the last thing written ended a block.
    after_block: bool,
    /// The size of a piece ([`PIECE_BYTES`] but in tests): cut between blocks once it holds
    /// this many bytes, anywhere outside a grid once twice that. Text is written in chunks of a
    /// quarter of it.
    piece_bytes: usize,
}

impl Writer {
    /// A writer for an input of `len` bytes, nesting at most `max_depth` elements (at least 1),
    /// cutting pieces of about `piece_bytes` ([`PIECE_BYTES`] but in tests).
    pub(crate) fn new(len: usize, max_depth: usize, piece_bytes: usize) -> Writer {
        Writer {
            out: String::with_capacity(len.min(1 << 20)),
            open: Vec::new(),
            overflow: 0,
            flattened: false,
            max_depth: max_depth.max(1),
            grids: Vec::new(),
            grid_cells: 0,
            piece_cells: 0,
            linearized: 0,
            cuts: Vec::new(),
            non_containers: 0,
            after_block: false,
            piece_bytes: piece_bytes.max(4),
        }
    }

    /// Closes what is open and returns what was written.
    pub(crate) fn finish(mut self) -> Flat {
        while !self.open.is_empty() {
            self.close_top();
        }
        Flat {
            html: self.out,
            cuts: self.cuts,
            flattened: self.flattened,
            linearized: self.linearized,
        }
    }

    /// Writes `text`, a `<` in it escaped, in chunks between which a piece may be cut.
    pub(crate) fn text(&mut self, text: &str) {
        let mut rest = text;
        while !rest.is_empty() {
            let (chunk, after) = rest.split_at(chunk_length(rest, self.piece_bytes / 4));
            rest = after;
            self.boundary(false);
            for (i, part) in chunk.split('<').enumerate() {
                if i > 0 {
                    self.out.push_str("&lt;");
                }
                self.out.push_str(part);
            }
            if !chunk.trim_ascii().is_empty() {
                self.after_block = false;
            }
            self.check_table_bytes();
        }
    }

    fn top_is(&self, names: &[&str]) -> bool {
        self.open
            .last()
            .is_some_and(|top| names.contains(&top.name.as_str()))
    }

    /// The innermost open table, by index.
    fn innermost_table(&self) -> Option<usize> {
        self.open.iter().rposition(|o| o.name == "table")
    }

    /// Closes the open elements above index `at`.
    fn close_above(&mut self, at: usize) {
        while self.open.len() > at + 1 {
            self.close_top();
        }
    }

    fn close_top(&mut self) {
        let last = self.open.len().wrapping_sub(1);
        if self.top_is(&["tr"])
            && let Some(t) = self.innermost_table()
            && let Some(table) = self.open[t].table.as_mut()
            && !table.end_row(&mut self.out)
        {
            self.linearize(t);
        }
        if let Some(Open {
            table: Some(table), ..
        }) = self.open.last_mut()
            && !table.end(&mut self.out)
        {
            self.linearize(last);
        }
        let Some(open) = self.open.pop() else {
            return;
        };
        if !open.tag.is_empty() {
            self.out.push_str("</");
            self.out.push_str(&open.tag);
            self.out.push('>');
        }
        if let Some(table) = open.table.as_ref().filter(|t| t.start().is_some()) {
            self.grids.pop();
            self.grid_cells += table.cells();
            self.piece_cells += table.cells();
        }
        if !CONTAINERS.contains(&open.name.as_str()) {
            self.non_containers -= 1;
        }
    }

    /// Applies the table rules (see the module docs) before the start tag of table part `name`;
    /// whether the tag is written.
    fn before_table_part(&mut self, name: &str) -> bool {
        let table = self.innermost_table();
        let find = |w: &Writer, t: usize, names: &[&str]| {
            w.open[t..]
                .iter()
                .rposition(|o| names.contains(&o.name.as_str()))
                .map_or(t, |i| t + i)
        };
        match (name, table) {
            ("table", Some(t)) => {
                let part = find(
                    self,
                    t,
                    &["table", "thead", "tbody", "tfoot", "tr", "td", "th"],
                );
                if !matches!(self.open[part].name.as_str(), "td" | "th") {
                    // Started where a row or section is expected: the current table ends.
                    while self.open.len() > t {
                        self.close_top();
                    }
                }
                true
            }
            ("table", None) => true,
            (_, None) => false,
            ("td" | "th", Some(t)) => {
                let row = find(self, t, &["table", "thead", "tbody", "tfoot", "tr"]);
                self.close_above(row);
                if self.open[row].name != "tr" {
                    if self.overflow == 0 && self.open.len() + 1 >= self.max_depth {
                        // No room for the row and the cell: the cell is dropped.
                        self.overflow = 1;
                        self.flattened = true;
                        return false;
                    }
                    self.start("tr", &[]);
                }
                true
            }
            ("tr", Some(t)) => {
                let section = find(self, t, &["table", "thead", "tbody", "tfoot"]);
                self.close_above(section);
                true
            }
            (_, Some(t)) => {
                self.close_above(t);
                true
            }
        }
    }

    /// Writes the start tag of element `name` with the attributes kept.
    pub(crate) fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let void = VOID.contains(&name);
        if !void && self.overflow > 0 {
            self.overflow += 1;
            return;
        }
        if matches!(name, "col" | "colgroup") {
            // Column groups change nothing the converter renders.
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
                "option" if self.top_is(&["option"]) => self.close_top(),
                "optgroup" => {
                    while self.top_is(&["option", "optgroup"]) {
                        self.close_top();
                    }
                }
                _ => {}
            }
            if TABLE_PARTS.contains(&name) && !self.before_table_part(name) {
                return;
            }
        }
        self.boundary(is_block(name));
        if !void && self.open.len() >= self.max_depth {
            self.overflow = 1;
            self.flattened = true;
            return;
        }
        let table = self.innermost_table();
        let span = |key: &str, max: usize| {
            attributes
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(1, |(_, v)| v.parse::<usize>().unwrap_or(1).clamp(1, max))
        };
        let (colspan, rowspan) = (span("colspan", MAX_COLSPAN), span("rowspan", MAX_ROWSPAN));
        let mut new_table = None;
        // A table's rows and cells are written as it is: as lines or in a grid it follows.
        let mut fits = true;
        let mut in_lines = false;
        if let Some(t) = table
            && matches!(name, "thead" | "tbody" | "tfoot" | "tr" | "td" | "th")
            && let Some(table) = self.open[t].table.as_mut()
        {
            in_lines = table.start().is_none();
            fits = table.part(name, colspan, rowspan, &mut self.out);
        }
        let tag = match name {
            "table"
                if self.grids.len() >= MAX_GRID_NESTING || self.grid_cells >= MAX_PAGE_CELLS =>
            {
                self.linearized += 1;
                new_table = Some(Table::Lines { row_cells: 0 });
                "div"
            }
            "table" => {
                new_table = Some(Table::grid(
                    self.out.len(),
                    MAX_PAGE_CELLS - self.grid_cells,
                ));
                "table"
            }
            "caption" => "div",
            _ if in_lines => tables::linear_tag(name).unwrap_or(""),
            "tfoot" => "tbody",
            _ => name,
        };
        let mut written = String::new();
        if !tag.is_empty() {
            written.push('<');
            written.push_str(tag);
            if matches!(tag, "td" | "th") {
                // Spans first, as the converter reads them (see `ROWSPAN_DIGITS`).
                if rowspan > 1 {
                    push_attribute(
                        &mut written,
                        "rowspan",
                        &format!("{rowspan:0ROWSPAN_DIGITS$}"),
                    );
                }
                if colspan > 1 {
                    push_attribute(&mut written, "colspan", &colspan.to_string());
                }
            }
            if tag == name || name == "tfoot" {
                for (key, value) in attributes {
                    if !matches!(*key, "colspan" | "rowspan") {
                        push_attribute(&mut written, key, value);
                    }
                }
            }
            written.push('>');
        }
        self.out.push_str(&written);
        self.after_block = false;
        if !void {
            if name == "li"
                && let Some(parent) = self.open.last_mut()
                && parent.name == "ol"
            {
                parent.list.1 += 1;
            }
            let first = attributes
                .iter()
                .find(|(k, _)| *k == "start")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(1);
            if written.len() > MAX_REOPENED_TAG {
                written = format!("<{tag}>");
            }
            if new_table.as_ref().is_some_and(|t| t.start().is_some()) {
                self.grids.push(self.open.len());
            }
            if !CONTAINERS.contains(&name) {
                self.non_containers += 1;
            }
            self.open.push(Open {
                name: name.to_owned(),
                tag: tag.to_owned(),
                reopen: written,
                table: new_table,
                list: (first, 0),
            });
        }
        if !fits && let Some(t) = table {
            self.linearize(t);
        }
        self.check_table_bytes();
    }

    /// Writes the end tag of element `name`, closing what the parser would close with it.
    pub(crate) fn end(&mut self, name: &str) {
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        let found = if TABLE_PARTS.contains(&name) && name != "caption" {
            // Within the current table only.
            let Some(t) = self.innermost_table() else {
                return;
            };
            self.open[t..]
                .iter()
                .rposition(|open| open.name == name)
                .map(|i| t + i)
        } else {
            // Not past a cell or a table.
            let from = self
                .open
                .iter()
                .rposition(|o| matches!(o.name.as_str(), "table" | "td" | "th"))
                .map_or(0, |i| i + 1);
            self.open[from..]
                .iter()
                .rposition(|open| open.name == name)
                .map(|i| from + i)
        };
        if let Some(at) = found {
            while self.open.len() > at {
                self.close_top();
            }
            self.after_block = is_block(name);
            self.check_table_bytes();
        }
    }

    /// Writes the table at `open[at]`, so far laid out as a grid, as lines from its start.
    fn linearize(&mut self, at: usize) {
        let Some(start) = self.open[at].table.as_ref().and_then(Table::start) else {
            return;
        };
        // The grids open inside it keep offsets further on, which the rewrite moves.
        let inner: Vec<usize> = self.grids.iter().copied().filter(|&g| g > at).collect();
        let kept: Vec<Vec<usize>> = inner
            .iter()
            .map(|&g| {
                self.open[g]
                    .table
                    .as_ref()
                    .map_or(Vec::new(), Table::offsets)
            })
            .collect();
        let mut marks: Vec<(usize, usize, usize)> = kept
            .iter()
            .enumerate()
            .flat_map(|(i, offsets)| offsets.iter().enumerate().map(move |(k, &o)| (o, i, k)))
            .collect();
        marks.sort_unstable();
        let mut offsets: Vec<usize> = marks.iter().map(|m| m.0 - start).collect();
        let (lines, row_cells) = tables::linearize(&self.out[start..], &mut offsets);
        self.out.truncate(start);
        self.out.push_str(&lines);
        let mut moved = kept;
        for (&(_, i, k), offset) in marks.iter().zip(offsets) {
            moved[i][k] = start + offset;
        }
        for (&g, offsets) in inner.iter().zip(&moved) {
            if let Some(table) = self.open[g].table.as_mut() {
                table.set_offsets(offsets);
            }
        }
        self.open[at].table = Some(Table::Lines { row_cells });
        self.grids.retain(|&g| g != at);
        self.linearized += 1;
        for (i, open) in self.open[at..].iter_mut().enumerate() {
            if i > 0 && open.name == "table" {
                break;
            }
            if let Some(tag) = tables::linear_tag(&open.name) {
                open.tag = tag.to_owned();
                open.reopen = if tag.is_empty() {
                    String::new()
                } else {
                    format!("<{tag}>")
                };
            }
        }
    }

    /// Writes the outermost table laid out as a grid as lines once it holds more than
    /// [`MAX_TABLE_BYTES`].
    fn check_table_bytes(&mut self) {
        while let Some(&g) = self.grids.first() {
            match self.open[g].table.as_ref().and_then(Table::start) {
                Some(start) if self.out.len() - start > MAX_TABLE_BYTES => self.linearize(g),
                _ => break,
            }
        }
    }

    /// Cuts the output into a new piece here if it is time to (see the module docs); `block`:
    /// whether a block starts here.
    fn boundary(&mut self, block: bool) {
        if !self.grids.is_empty() {
            return;
        }
        let piece =
            self.out.len() - self.cuts.last().copied().unwrap_or(0) + self.piece_cells * CELL_BYTES;
        let clean = (block || self.after_block) && self.non_containers == 0;
        if piece < self.piece_bytes || (!clean && piece < 2 * self.piece_bytes) {
            return;
        }
        for open in self.open.iter().rev() {
            if !open.tag.is_empty() {
                self.out.push_str("</");
                self.out.push_str(&open.tag);
                self.out.push('>');
            }
        }
        self.cuts.push(self.out.len());
        self.piece_cells = 0;
        for (i, open) in self.open.iter().enumerate() {
            if open.name == "ol" {
                // The item open in it, if any, goes on with the same number.
                let (first, items) = open.list;
                let in_item = self.open.get(i + 1).is_some_and(|o| o.name == "li");
                let next = first + items as i64 - i64::from(in_item);
                self.out.push_str(&format!("<ol start=\"{next}\">"));
            } else {
                self.out.push_str(&open.reopen);
            }
        }
    }
}

/// Writes ` key="value"` into `tag`, a `"` in the value escaped.
fn push_attribute(tag: &mut String, key: &str, value: &str) {
    tag.push(' ');
    tag.push_str(key);
    tag.push_str("=\"");
    for (i, part) in value.split('"').enumerate() {
        if i > 0 {
            tag.push_str("&quot;");
        }
        tag.push_str(part);
    }
    tag.push('"');
}

/// How much of `text` to write as the next chunk: at most `max` bytes (but a whole character),
/// ending after a space where there is one in its second half.
fn chunk_length(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if at == 0 {
        return text.chars().next().map_or(text.len(), char::len_utf8);
    }
    match text.as_bytes()[..at]
        .iter()
        .rposition(u8::is_ascii_whitespace)
    {
        Some(space) if space >= at / 2 => space + 1,
        _ => at,
    }
}
