//! The head and tail of a command's output stream, kept within a character budget while the rest
//! is only counted: memory stays bounded whatever the command prints.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The head and tail of a stream, with everything in between counted but not kept.
pub(super) struct Capture {
    max_chars: usize,
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total_bytes: usize,
    total_chars: usize,
}

impl Capture {
    pub(super) fn new(max_chars: usize) -> Self {
        let head_chars = max_chars / 2;
        let tail_chars = max_chars - head_chars;
        Capture {
            max_chars,
            head: Vec::new(),
            // Up to 4 bytes a character, so the kept bytes always hold enough characters.
            head_cap: head_chars * 4,
            tail: VecDeque::new(),
            tail_cap: tail_chars * 4,
            total_bytes: 0,
            total_chars: 0,
        }
    }

    pub(super) async fn read_from<R: AsyncRead + Unpin>(&mut self, reader: &mut R) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => self.push(&buf[..n]),
            }
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total_bytes += bytes.len();
        // Characters are the bytes that do not continue a UTF-8 sequence.
        self.total_chars += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let room = self.head_cap.saturating_sub(self.head.len());
        let (to_head, to_tail) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(to_tail);
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
        }
    }

    pub(super) fn render(&self) -> String {
        let head_chars = self.max_chars / 2;
        let tail_chars = self.max_chars - head_chars;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.total_bytes == self.head.len() + tail.len() {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let text = String::from_utf8_lossy(&all);
            let text = text.trim_end_matches('\n');
            let count = text.chars().count();
            if count <= self.max_chars {
                return text.to_owned();
            }
            let head: String = text.chars().take(head_chars).collect();
            let tail: String = text.chars().skip(count - tail_chars).collect();
            return cut(&head, &tail, count - head_chars - tail_chars);
        }
        let head: String = String::from_utf8_lossy(&self.head)
            .chars()
            .take(head_chars)
            .collect();
        let tail_text = String::from_utf8_lossy(&tail);
        let tail_text = tail_text.trim_end_matches('\n');
        let tail_count = tail_text.chars().count();
        let tail: String = tail_text
            .chars()
            .skip(tail_count.saturating_sub(tail_chars))
            .collect();
        let kept = head.chars().count() + tail.chars().count();
        cut(&head, &tail, self.total_chars.saturating_sub(kept))
    }
}

fn cut(head: &str, tail: &str, cut: usize) -> String {
    format!("{head}\n[... {cut} characters cut ...]\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Capture::new(100);
        c.push(b"hello\n");
        assert_eq!(c.render(), "hello");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_cut() {
        let mut c = Capture::new(10);
        for _ in 0..1000 {
            c.push(b"abcdefghij");
        }
        let text = c.render();
        assert!(
            text.starts_with("abcde\n[... 9990 characters cut ...]\n"),
            "{text}"
        );
        assert!(text.ends_with("fghij"), "{text}");
    }

    #[test]
    fn multibyte_characters_are_counted_as_characters() {
        let mut c = Capture::new(4);
        c.push("ééééé".repeat(100).as_bytes());
        let text = c.render();
        assert!(text.contains("[... 496 characters cut ...]"), "{text}");
    }
}
