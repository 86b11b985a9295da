//! Which tables `html2text` may lay out as grids, and tables written as lines instead.
//!
//! `html2text` lays a table out on a grid of rows by columns: every row gets a copy of the column
//! widths, every cell spanning rows leaves a placeholder in each row below it, and a table too
//! wide for the page puts each cell on lines of its own, the full width of the page. Its memory
//! grows with that grid, not with the HTML: 40,000 rows of `<tr><td rowspan=65534>a<td>b` (1.7
//! MB) make 800 million placeholders and passed 6 GB; 2 MiB of cells in one row took 446 MB.
//! Measured with `html2text` 0.17, a cell laid out costs about 2 KB, a placeholder about 750
//! bytes, an empty place in the grid about 10 bytes.
//!
//! [`Grid`] follows `html2text`'s layout of one table as its cells are written, exactly (the same
//! placeholders, the same merging of columns), and says when the table passes a budget:
//! [`MAX_TABLE_CELLS`] cells, placeholders and rows, [`MAX_TABLE_COLUMNS`] columns; with
//! [`MAX_TABLE_BYTES`] of HTML and [`MAX_GRID_NESTING`] (checked by the writer), that bounds a
//! table's layout to a few megabytes, and [`MAX_PAGE_CELLS`] for all of a page's grids bounds
//! their time (a placeholder costs no HTML: 2 MiB of small tables of cells spanning 78 empty
//! rows took 13 s). Where `html2text` 0.17 would misplace cells spanning rows
//! (and then panic on some tables), [`Table`], a table as the writer writes it, makes the table
//! regular first: it cuts such cells at the table's last row (else `html2text` adds rows below
//! the table for them) and ends a row shorter than the cells hanging into it with blank cells
//! ([`Grid::padding`]). A table past its budget is written as lines by [`linearize`]: each row a
//! line, its cells separated by ` | `.

use std::collections::HashSet;

/// The most cells, placeholders left by cells spanning rows, and rows a table laid out as a grid
/// may have; past it the table is written as lines.
pub(crate) const MAX_TABLE_CELLS: usize = 4096;

/// The most cells, placeholders and rows all the tables of a page laid out as grids may have
/// together (about: tables open inside one another are counted as they end); the tables past
/// it are written as lines.
pub(crate) const MAX_PAGE_CELLS: usize = 65_536;

/// The most columns a table laid out as a grid may have (at 100 characters to a line, more never
/// fit side by side).
pub(crate) const MAX_TABLE_COLUMNS: usize = 50;

/// The most bytes of HTML a table laid out as a grid may hold, the tables nested in it included.
pub(crate) const MAX_TABLE_BYTES: usize = 64 * 1024;

/// How many tables laid out as grids may enclose one another; a table inside that many is
/// written as lines from its start.
pub(crate) const MAX_GRID_NESTING: usize = 8;

/// The largest `colspan` written (the HTML standard's limit).
pub(crate) const MAX_COLSPAN: usize = 1000;

/// The largest `rowspan` written (the HTML standard's limit).
pub(crate) const MAX_ROWSPAN: usize = 65534;

/// A cell spanning rows, as `html2text` keeps it: rows it still covers, its column, its span.
type Hanging = (usize, usize, usize);

/// `html2text`'s layout of one table, followed cell by cell (its `RenderTable::new`).
pub(crate) struct Grid {
    /// Cells, placeholders and rows so far.
    cells: usize,
    /// The most it may have.
    limit: usize,
    /// Rows so far.
    rows: usize,
    /// Where the next cell of the current row starts, if a row is open.
    col: Option<usize>,
    /// Cells from rows above still covering this row, in the order they are met (last first).
    hanging: Vec<Hanging>,
    /// Those that will still cover the next row.
    next: Vec<Hanging>,
    /// The columns at which a cell ends (and 0): the table's columns are the gaps between them.
    ends: HashSet<usize>,
}

impl Grid {
    /// An empty table that may have `limit` cells, placeholders and rows (at most
    /// [`MAX_TABLE_CELLS`]).
    pub(crate) fn new(limit: usize) -> Grid {
        Grid {
            cells: 0,
            limit: limit.min(MAX_TABLE_CELLS),
            rows: 0,
            col: None,
            hanging: Vec::new(),
            next: Vec::new(),
            ends: HashSet::from([0]),
        }
    }

    /// Whether the table is within its budgets so far.
    pub(crate) fn fits(&self) -> bool {
        self.cells <= self.limit && self.ends.len() <= MAX_TABLE_COLUMNS + 1
    }

    /// A row starts; whether the table still fits.
    pub(crate) fn row(&mut self) -> bool {
        self.end_row();
        self.col = Some(0);
        self.cells += 1;
        self.rows += 1;
        self.fits()
    }

    /// A cell starts, spanning `colspan` columns (at least 1) and `rowspan` rows (at least 1);
    /// whether the table still fits.
    pub(crate) fn cell(&mut self, colspan: usize, rowspan: usize) -> bool {
        if self.col.is_none() {
            self.row();
        }
        let mut col = self.col.unwrap_or(0);
        while let Some(&(_, at, span)) = self.hanging.last() {
            if at > col || !self.fits() {
                break;
            }
            col = self.placeholder(col, span);
        }
        if rowspan > 1 {
            self.next.push((rowspan - 1, col, colspan));
        }
        col += colspan;
        self.ends.insert(col);
        self.cells += 1;
        self.col = Some(col);
        self.fits()
    }

    /// The placeholder for the last cell hanging from above, at `col`; where the next cell starts.
    fn placeholder(&mut self, col: usize, span: usize) -> usize {
        let Some(mut hanging) = self.hanging.pop() else {
            return col;
        };
        self.cells += 1;
        let col = col + span;
        self.ends.insert(col);
        if hanging.0 > 1 {
            hanging.0 -= 1;
            self.next.push(hanging);
        }
        col
    }

    /// Ends the open row: the cells still hanging into it become placeholders at its end.
    fn end_row(&mut self) {
        let Some(mut col) = self.col.take() else {
            return;
        };
        while let Some(&(_, _, span)) = self.hanging.last() {
            if !self.fits() {
                return;
            }
            col = self.placeholder(col, span);
        }
        self.hanging = std::mem::take(&mut self.next);
        self.hanging.reverse();
    }

    /// How many empty cells the open row needs at its end so that each cell hanging into it from
    /// above sits in its own column: `html2text` puts those past a row's last cell right after
    /// it, whatever their column, and then panics on some tables (rows misaligned).
    pub(crate) fn padding(&self) -> usize {
        let Some(mut col) = self.col else {
            return 0;
        };
        let mut padding = 0;
        for &(_, at, span) in self.hanging.iter().rev() {
            if at > col {
                padding += at - col;
                col = at;
            }
            col += span;
        }
        padding
    }

    /// How many rows the table has so far.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The table ends, its cells spanning rows cut at its last row (the writer makes them so):
    /// whether `html2text` lays it out within the budgets.
    pub(crate) fn finish(&mut self) -> bool {
        self.end_row();
        self.fits()
    }
}

/// How many digits the writer writes a `rowspan` in (zeros first), as the first attribute of its
/// cell, so that [`Table::end`] can cut it at the table's last row in place.
pub(crate) const ROWSPAN_DIGITS: usize = 5;

/// A table being written: laid out as a grid (followed by a [`Grid`]) or written as lines.
pub(crate) enum Table {
    /// Laid out as a grid, from byte `start` of the output on; `spans` are its cells spanning
    /// rows: where their start tag is in the output, their row and their span.
    Grid {
        start: usize,
        grid: Box<Grid>,
        spans: Vec<(usize, usize, usize)>,
    },
    /// Written as lines; its current row has `row_cells` cells so far.
    Lines { row_cells: usize },
}

impl Table {
    /// A table laid out as a grid, starting at byte `start` of the output, that may have `limit`
    /// cells, placeholders and rows (at most [`MAX_TABLE_CELLS`]).
    pub(crate) fn grid(start: usize, limit: usize) -> Table {
        Table::Grid {
            start,
            grid: Box::new(Grid::new(limit)),
            spans: Vec::new(),
        }
    }

    /// The cells, placeholders and rows of a table laid out as a grid so far.
    pub(crate) fn cells(&self) -> usize {
        match self {
            Table::Grid { grid, .. } => grid.cells,
            Table::Lines { .. } => 0,
        }
    }

    /// Where a table laid out as a grid starts in the output.
    pub(crate) fn start(&self) -> Option<usize> {
        match self {
            Table::Grid { start, .. } => Some(*start),
            Table::Lines { .. } => None,
        }
    }

    /// Before the start tag of its row or cell `name` (spanning `colspan` and `rowspan`) is
    /// written at the end of `out`: as lines, writes the separator a cell needs; as a grid,
    /// follows the layout. Whether the table still fits its budgets.
    pub(crate) fn part(
        &mut self,
        name: &str,
        colspan: usize,
        rowspan: usize,
        out: &mut String,
    ) -> bool {
        match self {
            Table::Lines { row_cells } => {
                match name {
                    "tr" => *row_cells = 0,
                    "td" | "th" => {
                        if *row_cells > 0 {
                            out.push_str(CELL_SEPARATOR);
                        }
                        *row_cells += 1;
                    }
                    _ => {}
                }
                true
            }
            Table::Grid { grid, spans, .. } => match name {
                "tr" => grid.row(),
                "td" | "th" => {
                    let fits = grid.cell(colspan, rowspan);
                    if rowspan > 1 {
                        spans.push((out.len(), grid.rows() - 1, rowspan));
                    }
                    fits
                }
                _ => true,
            },
        }
    }

    /// Before its open row's end tag is written: a row of a grid shorter than the cells hanging
    /// into it ends with blank cells (not empty ones: `html2text` drops empty columns, and then
    /// misplaces the cells hanging into them). Whether the table still fits.
    pub(crate) fn end_row(&mut self, out: &mut String) -> bool {
        let Table::Grid { grid, .. } = self else {
            return true;
        };
        let mut fits = true;
        for _ in 0..grid.padding() {
            out.push_str("<td>&nbsp;</td>");
            fits &= grid.cell(1, 1);
        }
        fits
    }

    /// Before its end tag is written: whether the table fits; if it does, its cells spanning past
    /// its last row are cut there, in `out`.
    pub(crate) fn end(&mut self, out: &mut String) -> bool {
        let Table::Grid { grid, spans, .. } = self else {
            return true;
        };
        if !grid.finish() {
            return false;
        }
        let rows = grid.rows();
        for &(tag, row, span) in spans.iter() {
            if row + span > rows {
                let at = tag + "<td rowspan=\"".len();
                let cut = format!("{:0ROWSPAN_DIGITS$}", rows - row);
                out.replace_range(at..at + ROWSPAN_DIGITS, &cut);
            }
        }
        true
    }

    /// The offsets in the output a grid keeps (where it starts, where its spanning cells are).
    pub(crate) fn offsets(&self) -> Vec<usize> {
        match self {
            Table::Grid { start, spans, .. } => [*start]
                .into_iter()
                .chain(spans.iter().map(|s| s.0))
                .collect(),
            Table::Lines { .. } => Vec::new(),
        }
    }

    /// Moves the offsets of [`Table::offsets`], in the same order.
    pub(crate) fn set_offsets(&mut self, offsets: &[usize]) {
        if let Table::Grid { start, spans, .. } = self {
            let mut offsets = offsets.iter().copied();
            *start = offsets.next().unwrap_or(*start);
            for (span, offset) in spans.iter_mut().zip(offsets) {
                span.0 = offset;
            }
        }
    }
}

/// Tags the writer writes for a table's own elements when the table is written as lines: a row
/// is a block, a cell nothing but its separator, the rest nothing. `None` for other elements.
pub(crate) fn linear_tag(name: &str) -> Option<&'static str> {
    match name {
        "table" | "tr" => Some("div"),
        "thead" | "tbody" | "tfoot" | "td" | "th" => Some(""),
        _ => None,
    }
}

/// What goes before a cell written as lines that is not its row's first.
pub(crate) const CELL_SEPARATOR: &str = " | ";

/// Rewrites `region`, HTML written by the writer that starts with a table's `<table>` tag, with
/// that table's own tags written as lines (tables nested in it are left as they are); returns it
/// and how many cells the table's last row has so far. `marks`, ascending offsets in `region` of
/// tags, are moved to where those tags are in the rewritten text.
pub(crate) fn linearize(region: &str, marks: &mut [usize]) -> (String, usize) {
    rewrite(region, marks, false)
}

/// Rewrites `piece`, a well-formed piece of the writer's HTML, with all its tables written as
/// lines.
pub(crate) fn linearize_all(piece: &str) -> String {
    rewrite(piece, &mut [], true).0
}

/// [`linearize`], or with `all` [`linearize_all`].
///
/// The writer's HTML is regular: every `<` starts a tag, written as `<name attributes>` or
/// `</name>` with attribute values in double quotes that hold no `"`.
fn rewrite(region: &str, marks: &mut [usize], all: bool) -> (String, usize) {
    let mut out = String::with_capacity(region.len());
    // The cells in the current row of each table open in the region, outermost first.
    let mut rows: Vec<usize> = Vec::new();
    let mut rest = region;
    let mut next_mark = 0;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let at = region.len() - rest.len() + lt;
        while let Some(mark) = marks.get_mut(next_mark)
            && *mark <= at
        {
            *mark = out.len();
            next_mark += 1;
        }
        let tag_len = tag_length(&rest[lt..]);
        let tag = &rest[lt..lt + tag_len];
        rest = &rest[lt + tag_len..];
        let (end, name) = match tag[1..].strip_prefix('/') {
            Some(after) => (true, after),
            None => (false, &tag[1..]),
        };
        let name = name.split([' ', '>']).next().unwrap_or("");
        if name == "table" && !end {
            rows.push(0);
        }
        let own = all || rows.len() == 1;
        if name == "table" && end {
            rows.pop();
        }
        match linear_tag(name).filter(|_| own) {
            Some(linear) => {
                if let Some(cells) = rows.last_mut()
                    && !end
                {
                    match name {
                        "tr" => *cells = 0,
                        "td" | "th" => {
                            if *cells > 0 {
                                out.push_str(CELL_SEPARATOR);
                            }
                            *cells += 1;
                        }
                        _ => {}
                    }
                }
                if !linear.is_empty() {
                    out.push_str(if end { "</" } else { "<" });
                    out.push_str(linear);
                    out.push('>');
                }
            }
            None => out.push_str(tag),
        }
    }
    out.push_str(rest);
    (out, rows.first().copied().unwrap_or(0))
}

/// The length of the tag `html` starts with: up to its `>` outside double quotes.
fn tag_length(html: &str) -> usize {
    let mut quoted = false;
    for (i, b) in html.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'>' if !quoted => return i + 1,
            _ => {}
        }
    }
    html.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_followed_as_html2text_lays_them_out() {
        let mut grid = Grid::new(MAX_TABLE_CELLS);
        // Each row starts one column further right, under the cells spanning down from above:
        // row n has n + 2 columns.
        for _ in 0..MAX_TABLE_COLUMNS - 1 {
            assert!(grid.row());
            assert!(grid.cell(1, 65534));
            assert!(grid.cell(1, 1));
        }
        assert!(grid.row());
        assert!(grid.cell(1, 65534));
        assert!(!grid.cell(1, 1), "{} columns", MAX_TABLE_COLUMNS + 1);

        // Wide spans merge into the columns the table really has.
        let mut grid = Grid::new(MAX_TABLE_CELLS);
        for _ in 0..100 {
            grid.row();
            assert!(grid.cell(1000, 1) && grid.cell(1, 1));
        }
        assert!(grid.finish());

        // Many rows of one cell each.
        let mut grid = Grid::new(MAX_TABLE_CELLS);
        for _ in 0..MAX_TABLE_CELLS / 2 {
            grid.row();
            grid.cell(1, 1);
        }
        assert!(grid.finish());
        grid = Grid::new(MAX_TABLE_CELLS);
        for _ in 0..MAX_TABLE_CELLS / 2 + 1 {
            grid.row();
            grid.cell(1, 1);
        }
        assert!(!grid.finish());
    }

    #[test]
    fn tables_are_written_as_lines_their_nested_tables_kept() {
        let region = r#"<table><tbody><tr><td colspan="2">a</td><th title="x>y">b</th></tr><tr><td><table><tr><td>i</td><td>j</td></tr></table></td><td>c"#;
        let mut marks = [region.find("<table><tr>").unwrap()];
        let (lines, cells) = linearize(region, &mut marks);
        assert_eq!(
            lines,
            "<div><div>a | b</div><div><table><tr><td>i</td><td>j</td></tr></table> | c"
        );
        assert_eq!(cells, 2);
        assert!(lines[marks[0]..].starts_with("<table><tr><td>i"));
        assert_eq!(
            linearize_all(region),
            "<div><div>a | b</div><div><div><div>i | j</div></div> | c"
        );
    }
}
