//! Server-sent events read as their bytes arrive, within bounds: what every streamed answer this
//! project reads goes through ([`events`]), the model providers' and the A2A client's.
//!
//! The bounds hold whatever the other side sends, because they are checked on each chunk as it
//! arrives, never once an event is complete:
//!
//! - **Size**: an event (its `data` lines, and the line being read) over
//!   [`SseLimits::max_event_bytes`] ends the stream with [`SseError::TooLarge`] as soon as it
//!   passes it, so a `data:` line that never ends costs that much memory and no more.
//! - **Size of the stream**: one that brings more than [`SseLimits::max_stream_bytes`] ends with
//!   [`SseError::StreamTooLarge`], however its events are cut.
//! - **Time**: the whole stream ends at [`SseLimits::deadline`] ([`SseError::Deadline`]),
//!   checked on every chunk, so a peer that always has bytes ready cannot keep the reader from
//!   looking at the clock; and a silence longer than [`SseLimits::idle`] ends it
//!   ([`SseError::Idle`]).
//! - **Work**: each byte is looked at once (lines end with LF, CRLF or a lone CR, as the format
//!   says, a CR at the end of one chunk and an LF at the start of the next being one line end),
//!   so reading is linear in what arrives.
//!
//! ```
//! use agent_llm::sse::{self, SseLimits};
//! use futures::StreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let chunks = futures::stream::iter([
//!     Ok::<_, std::io::Error>(bytes::Bytes::from("event: note\ndata: hel")),
//!     Ok(bytes::Bytes::from("lo\r\n\r\ndata: two\rdata: lines\r\r")),
//! ]);
//! let events: Vec<_> = sse::events(chunks, SseLimits::default()).collect().await;
//! let events: Vec<_> = events.into_iter().map(Result::unwrap).collect();
//! assert_eq!((events[0].event.as_str(), events[0].data.as_str()), ("note", "hello"));
//! assert_eq!((events[1].event.as_str(), events[1].data.as_str()), ("message", "two\nlines"));
//! # }
//! ```

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::time::Instant;

/// One event: its type (`message` unless an `event:` line named another), its data (the
/// `data:` lines joined with line feeds) and its id, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, `message` by default.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The last `id:` field seen, if any.
    pub id: Option<String>,
}

/// The bounds of one stream.
#[derive(Debug, Clone, Copy)]
pub struct SseLimits {
    /// The largest event (its data and the line being read), in bytes. Default 16 MiB.
    pub max_event_bytes: usize,
    /// The longest silence between two chunks. Default: none.
    pub idle: Option<Duration>,
    /// When the whole stream must have ended, first byte to last event. Default: none.
    pub deadline: Option<Instant>,
    /// The most bytes the whole stream may bring, counted as they arrive. Default: none.
    pub max_stream_bytes: Option<u64>,
}

impl Default for SseLimits {
    fn default() -> Self {
        SseLimits {
            max_event_bytes: 16 * 1024 * 1024,
            idle: None,
            deadline: None,
            max_stream_bytes: None,
        }
    }
}

/// Why a stream ended before its last event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event grew past [`SseLimits::max_event_bytes`].
    #[error("an event is over {0} bytes")]
    TooLarge(usize),
    /// The stream brought more than [`SseLimits::max_stream_bytes`].
    #[error("the stream brought more than {0} bytes")]
    StreamTooLarge(u64),
    /// The stream was still going at its deadline.
    #[error("the stream was still going at its deadline")]
    Deadline,
    /// Nothing arrived for this long.
    #[error("no data for {0:?}; the connection stalled")]
    Idle(Duration),
    /// The connection broke (the transport's own words).
    #[error("the connection broke: {0}")]
    Broken(String),
    /// An event's text is not UTF-8.
    #[error("an event is not UTF-8")]
    NotUtf8,
}

/// The events of a stream of chunks, within `limits`; after an error the stream ends.
pub fn events<S, E>(
    chunks: S,
    limits: SseLimits,
) -> impl Stream<Item = Result<SseEvent, SseError>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let reader = Reader {
        chunks: Box::pin(chunks),
        parser: Parser::new(limits.max_event_bytes),
        limits,
        ready: std::collections::VecDeque::new(),
        done: false,
        read: 0,
    };
    futures::stream::unfold(reader, |mut reader| async move {
        let item = reader.next().await?;
        if item.is_err() {
            reader.done = true;
        }
        Some((item, reader))
    })
}

struct Reader<E> {
    chunks: std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, E>> + Send>>,
    parser: Parser,
    limits: SseLimits,
    ready: std::collections::VecDeque<SseEvent>,
    done: bool,
    /// Bytes read so far.
    read: u64,
}

impl<E: std::fmt::Display> Reader<E> {
    async fn next(&mut self) -> Option<Result<SseEvent, SseError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            if self.limits.deadline.is_some_and(|d| Instant::now() >= d) {
                return Some(Err(SseError::Deadline));
            }
            let chunk = match (self.limits.idle, self.limits.deadline) {
                (None, None) => self.chunks.next().await,
                (idle, deadline) => {
                    let wait = idle.map(|idle| Instant::now() + idle);
                    let until = match (wait, deadline) {
                        (Some(a), Some(b)) => a.min(b),
                        (a, b) => a.or(b).expect("one is set"),
                    };
                    match tokio::time::timeout_at(until, self.chunks.next()).await {
                        Ok(chunk) => chunk,
                        Err(_) if deadline.is_some_and(|d| Instant::now() >= d) => {
                            return Some(Err(SseError::Deadline));
                        }
                        Err(_) => return Some(Err(SseError::Idle(idle.unwrap_or_default()))),
                    }
                }
            };
            match chunk {
                None => {
                    self.done = true;
                    // A stream that ends mid-event drops it, as the format says.
                }
                Some(Err(error)) => return Some(Err(SseError::Broken(error.to_string()))),
                Some(Ok(bytes)) => {
                    self.read += bytes.len() as u64;
                    if let Some(max) = self.limits.max_stream_bytes
                        && self.read > max
                    {
                        return Some(Err(SseError::StreamTooLarge(max)));
                    }
                    if let Err(error) = self.parser.feed(&bytes, &mut self.ready) {
                        return Some(Err(error));
                    }
                }
            }
        }
    }
}

/// The line parser: each byte is looked at once.
struct Parser {
    max: usize,
    /// The line being read.
    line: Vec<u8>,
    /// The last chunk ended with CR: an LF first in the next one ends no second line.
    after_cr: bool,
    /// The event being built.
    data: Vec<u8>,
    has_data: bool,
    event: Vec<u8>,
    id: Option<Vec<u8>>,
    /// The first line of the stream may start with a byte-order mark.
    started: bool,
}

impl Parser {
    fn new(max: usize) -> Self {
        Parser {
            max,
            line: Vec::new(),
            after_cr: false,
            data: Vec::new(),
            has_data: false,
            event: Vec::new(),
            id: None,
            started: false,
        }
    }

    fn feed(
        &mut self,
        mut bytes: &[u8],
        ready: &mut std::collections::VecDeque<SseEvent>,
    ) -> Result<(), SseError> {
        // An empty chunk (an HTTP/2 peer may send one) changes nothing, not even a pending CR.
        if bytes.is_empty() {
            return Ok(());
        }
        if !self.started {
            self.started = true;
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        if self.after_cr {
            self.after_cr = false;
            bytes = bytes.strip_prefix(b"\n").unwrap_or(bytes);
        }
        while !bytes.is_empty() {
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.grow(bytes.len())?;
                    self.line.extend_from_slice(bytes);
                    return Ok(());
                }
                Some(end) => {
                    self.grow(end)?;
                    self.line.extend_from_slice(&bytes[..end]);
                    let cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    if cr {
                        match bytes.first() {
                            Some(b'\n') => bytes = &bytes[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    let line = std::mem::take(&mut self.line);
                    self.line_ended(&line, ready)?;
                    self.line = line;
                    self.line.clear();
                }
            }
        }
        Ok(())
    }

    /// Checks the event's size with `more` bytes added to the line being read.
    fn grow(&self, more: usize) -> Result<(), SseError> {
        if self.data.len() + self.line.len() + more > self.max {
            return Err(SseError::TooLarge(self.max));
        }
        Ok(())
    }

    fn line_ended(
        &mut self,
        line: &[u8],
        ready: &mut std::collections::VecDeque<SseEvent>,
    ) -> Result<(), SseError> {
        if line.is_empty() {
            if self.has_data {
                let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|_| SseError::NotUtf8);
                let event = std::mem::take(&mut self.event);
                ready.push_back(SseEvent {
                    event: if event.is_empty() {
                        "message".into()
                    } else {
                        text(event)?
                    },
                    data: text(std::mem::take(&mut self.data))?,
                    id: self.id.clone().map(text).transpose()?,
                });
            }
            self.data.clear();
            self.event.clear();
            self.has_data = false;
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(()); // a comment
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
                if self.data.len() > self.max {
                    return Err(SseError::TooLarge(self.max));
                }
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            b"id" if !value.contains(&0) => self.id = Some(value.to_vec()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<Result<SseEvent, SseError>> {
        let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
            .iter()
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(events(futures::stream::iter(chunks), SseLimits::default()).collect())
    }

    #[test]
    fn every_line_ending_and_every_cut_give_the_same_events() {
        let text = b"\xEF\xBB\xBF: comment\nid: 7\nevent: a\ndata: one\r\ndata: two\r\rdata:x\n\n";
        let whole = parse(&[text]);
        assert_eq!(whole.len(), 2, "{whole:?}");
        for cut in 0..text.len() {
            assert_eq!(parse(&[&text[..cut], &text[cut..]]), whole, "cut at {cut}");
        }
        // An empty chunk between a CR and its LF is no line end of its own.
        let split = parse(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
        assert_eq!(split.len(), 1, "{split:?}");
        assert_eq!(split[0].as_ref().unwrap().data, "a\nb");
        let first = whole[0].as_ref().unwrap();
        assert_eq!(
            (first.event.as_str(), first.data.as_str()),
            ("a", "one\ntwo")
        );
        assert_eq!(first.id.as_deref(), Some("7"));
        assert_eq!(whole[1].as_ref().unwrap().data, "x");
    }

    #[test]
    fn an_event_over_the_limit_ends_the_stream_as_it_arrives() {
        let limits = SseLimits {
            max_event_bytes: 1024,
            ..SseLimits::default()
        };
        // A line that never ends, in chunks: refused at the chunk that passes the limit.
        let chunks = futures::stream::iter(
            std::iter::once(Ok::<_, std::io::Error>(Bytes::from_static(b"data: ")))
                .chain(std::iter::repeat_with(|| Ok(Bytes::from(vec![b'x'; 100])))),
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let first = rt.block_on(async { Box::pin(events(chunks, limits)).next().await });
        assert_eq!(first, Some(Err(SseError::TooLarge(1024))));
    }
}
