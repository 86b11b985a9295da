//! The lines `read_file` shows, built from a file's bytes as they are read: whole lines where
//! they fit the output limit, the start of one that does not, and the notice that says what was
//! shown and where to read on. Memory stays within the output limit whatever the shape of the
//! file.

use agent_core::SkillError;

/// How much of the file is read at a time.
pub(super) const CHUNK_BYTES: usize = 64 * 1024;

/// Once the output is complete, how many more bytes are read to count the file's lines (and the
/// length of a line that was cut); past this, the notice says "at least".
const COUNT_BYTES: u64 = 32 * 1024 * 1024;

/// The lines `read_file` shows, built from the file's bytes as they are read.
pub(super) struct Lines {
    offset: usize,
    limit: Option<usize>,
    max_chars: usize,
    out: String,
    /// Characters in `out`.
    chars: usize,
    /// Lines added to `out`.
    shown: usize,
    /// Lines begun so far (the last one may not have ended).
    total: usize,
    /// Whether a line has begun and not ended.
    in_line: bool,
    /// The current line's bytes, when it is one to show: only as many as the output could still
    /// take (a character is at most four bytes), so a longer line is known to be too long.
    line: Vec<u8>,
    /// Whether `line` was cut short.
    line_cut: bool,
    /// Characters of the current line past `line` (counted as UTF-8 leading bytes).
    line_rest_chars: usize,
    /// The current line's last byte (to leave out a `\r` before its `\n`).
    last_byte: u8,
    /// Why the output ended, once it has.
    stop: Option<StopReason>,
    /// Bytes read since the output ended.
    after_stop: u64,
    /// Whether the file was read to its end (not cut off after `COUNT_BYTES`).
    to_end: bool,
    lossy: bool,
    binary_later: bool,
}

enum StopReason {
    Limit,
    Budget,
    /// A line longer than the whole budget, whose start was shown: its length in characters,
    /// once known.
    LongLine(Option<usize>),
}

impl Lines {
    pub(super) fn new(offset: usize, limit: Option<usize>, max_chars: usize) -> Lines {
        Lines {
            offset,
            limit,
            max_chars,
            out: String::new(),
            chars: 0,
            shown: 0,
            total: 0,
            in_line: false,
            line: Vec::new(),
            line_cut: false,
            line_rest_chars: 0,
            last_byte: 0,
            stop: None,
            after_stop: 0,
            to_end: true,
            lossy: false,
            binary_later: false,
        }
    }

    /// Whether enough was read: the output is complete and the lines were counted as far as
    /// [`COUNT_BYTES`] allows.
    pub(super) fn done(&self) -> bool {
        !self.to_end
    }

    /// Whether the current line is one to show.
    fn showing(&self) -> bool {
        self.total >= self.offset && self.stop.is_none()
    }

    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        if self.stop.is_some() {
            self.after_stop += bytes.len() as u64;
            if self.after_stop > COUNT_BYTES {
                self.to_end = false;
            }
        }
        while !bytes.is_empty() {
            if !self.in_line {
                self.begin_line();
            }
            let (part, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            bytes = &bytes[part.len() + usize::from(ended)..];
            if let Some(&last) = part.last() {
                self.last_byte = last;
            }
            if self.showing() {
                // Room for one character more than the output can take: enough to know.
                let room = (self.max_chars - self.chars + 1) * 4;
                let take = part.len().min(room.saturating_sub(self.line.len()));
                self.line.extend_from_slice(&part[..take]);
                if take < part.len() {
                    self.line_cut = true;
                    self.line_rest_chars += utf8_chars(&part[take..]);
                    // Too long to fit: the output ends with this line (or before it).
                    self.end_line_early();
                }
            } else if matches!(self.stop, Some(StopReason::LongLine(None))) && self.in_line {
                self.line_rest_chars += utf8_chars(part);
            }
            if ended {
                self.end_line();
            }
        }
    }

    fn begin_line(&mut self) {
        self.total += 1;
        self.in_line = true;
        self.line.clear();
        self.line_cut = false;
        self.line_rest_chars = 0;
        self.last_byte = 0;
        if self.showing() && self.limit.is_some_and(|limit| self.shown >= limit) {
            self.stop = Some(StopReason::Limit);
        }
    }

    /// The current line, known to be too long for what is left of the output, ends the output.
    fn end_line_early(&mut self) {
        if self.shown == 0 {
            // One line longer than the whole budget: show its start.
            let text = self.text();
            let cut: String = text.chars().take(self.max_chars).collect();
            self.out.push_str(&cut);
            self.shown = 1;
            self.stop = Some(StopReason::LongLine(None));
        } else {
            self.stop = Some(StopReason::Budget);
        }
    }

    /// The kept bytes of the current line as text, noting invalid UTF-8 and NUL bytes.
    fn text(&mut self) -> String {
        let mut bytes = self.line.as_slice();
        if !self.line_cut {
            bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        }
        if bytes.contains(&0) {
            self.binary_later = true;
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            // A character cut in two where the line was cut short is not an invalid byte.
            Err(e) if self.line_cut && e.error_len().is_none() => {
                String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
            }
            Err(_) => {
                self.lossy = true;
                String::from_utf8_lossy(bytes).into_owned()
            }
        }
    }

    fn end_line(&mut self) {
        self.in_line = false;
        if let Some(StopReason::LongLine(len @ None)) = &mut self.stop {
            if self.shown == 1 && self.total == self.offset {
                let cut_chars = String::from_utf8_lossy(&self.line).chars().count();
                let cr = usize::from(self.last_byte == b'\r');
                *len = Some(cut_chars + self.line_rest_chars - cr);
            }
            return;
        }
        if !self.showing() {
            return;
        }
        let text = self.text();
        let len = text.chars().count() + usize::from(self.shown > 0);
        if self.chars + len > self.max_chars {
            self.end_line_early();
            if let Some(StopReason::LongLine(len)) = &mut self.stop {
                *len = Some(text.chars().count());
            }
            return;
        }
        if self.shown > 0 {
            self.out.push('\n');
        }
        self.out.push_str(&text);
        self.chars += len;
        self.shown += 1;
    }

    /// The answer; `shown` is the file's path as messages show it.
    pub(super) fn finish(mut self, shown: &str) -> Result<String, SkillError> {
        if self.in_line && self.to_end {
            self.end_line();
        }
        let (offset, total, max_chars) = (self.offset, self.total, self.max_chars);
        if offset > total {
            return Err(SkillError::bad_args(
                "offset",
                format!("`{shown}` has {total} lines; offset {offset} is past the end"),
            ));
        }
        let last = offset + self.shown - 1;
        let of_total = if self.to_end {
            format!("of {total}")
        } else {
            format!("of at least {total}")
        };
        let hint = if last < total || !self.to_end {
            format!("Read on with offset={}.", last + 1)
        } else {
            String::new()
        };
        let mut notes = Vec::new();
        match self.stop {
            Some(StopReason::LongLine(len)) => {
                let len = match len {
                    Some(len) => format!("{len}"),
                    None => format!(
                        "more than {}",
                        String::from_utf8_lossy(&self.line).chars().count()
                            + self.line_rest_chars
                    ),
                };
                notes.push(format!(
                    "line {offset} is {len} characters long; showing its first {max_chars}. {hint}"
                ))
            }
            Some(StopReason::Budget) => notes.push(format!(
                "showing lines {offset}-{last} {of_total}: the output limit of {max_chars} characters was reached. {hint}"
            )),
            Some(StopReason::Limit) => {
                notes.push(format!("showing lines {offset}-{last} {of_total}. {hint}"))
            }
            None if offset > 1 => notes.push(format!(
                "showing lines {offset}-{last} of {total}; end of file"
            )),
            None => {}
        }
        if self.lossy {
            notes.push(
                "the file is not valid UTF-8: invalid bytes are shown as \u{FFFD}".to_owned(),
            );
        }
        if self.binary_later {
            notes.push("the file contains NUL bytes past its start".to_owned());
        }
        let mut out = self.out;
        if !notes.is_empty() {
            out.push_str(&format!("\n\n[{}]", notes.join("; ")));
        }
        Ok(out)
    }
}

/// How many characters `bytes` of UTF-8 hold: the bytes that are not continuation bytes.
fn utf8_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}
