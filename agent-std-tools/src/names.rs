//! How a name read from the disk (or a path the model gave) is shown in a skill's output: on one
//! line, and with nothing invisible in it.
//!
//! Names are raw bytes on Unix and may contain anything but `/` and NUL. Shown as they are, a
//! newline in a name would fake further lines of output (more entries, matches in other files),
//! and invisible characters would make a name read as another: U+202E (right-to-left override)
//! turns `report\u{202e}txt.exe` into what looks like `reportexe.txt`, zero-width characters
//! make two names look the same, and Unicode tag characters carry text a reader cannot see.
//! [`display_name`] escapes all of them; every name `list_dir`, `search_files` and the file
//! skills' messages show goes through it.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;

use unicode_general_category::{GeneralCategory, get_general_category};

/// A file name (or a path) as the skills show it: on one line, with every invisible character
/// made visible. Shown escaped:
///
/// - `\n`, `\r` and `\t` for newline, carriage return and tab;
/// - `\u{..}` (hexadecimal code point, as in Rust) for every other character that is invisible
///   or changes how the text around it is shown: control characters (C0, DEL, C1), format
///   characters (general category Cf: the bidirectional embeddings, overrides and isolates
///   U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, zero-width spaces and
///   joiners U+200B–U+200D and U+2060, the byte-order mark U+FEFF, soft hyphen U+00AD, the tag
///   characters U+E0000–U+E007F, …), the line and paragraph separators U+2028 and U+2029,
///   variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF, U+180B–U+180F), the combining
///   grapheme joiner U+034F, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), and code
///   points Unicode 16 leaves unassigned (a later version may make them any of these);
/// - `\xNN` for each byte that is not part of valid UTF-8.
///
/// Everything else, other Unicode included, is shown as it is (an emoji's variation selector
/// too is shown escaped, `❤\u{fe0f}`). A backslash is not escaped, so a name that already holds
/// the text `\n` looks like one holding a newline; the guarantee is that one entry is one line
/// and that what is shown is every character there is.
pub(crate) fn display_name(name: impl AsRef<OsStr>) -> String {
    let bytes = name.as_ref().as_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if hidden(c) => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02X}");
        }
    }
    out
}

/// Whether `c` is invisible, or changes how the text around it is shown (see [`display_name`]).
fn hidden(c: char) -> bool {
    // Printable ASCII, the common case, without a table lookup.
    if (' '..='~').contains(&c) {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::Unassigned
    ) || matches!(
        c,
        '\u{034F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{180B}'..='\u{180F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FFA0}'
            | '\u{E0100}'..='\u{E01EF}'
    )
}

#[cfg(test)]
mod tests {
    use super::display_name;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn shown(bytes: &[u8]) -> String {
        display_name(OsStr::from_bytes(bytes))
    }

    #[test]
    fn names_are_shown_on_one_line() {
        assert_eq!(shown(b"plain name.txt"), "plain name.txt");
        assert_eq!(shown(b"a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(shown(b"\x1b[31m\x00\x7f"), "\\u{1b}[31m\\u{0}\\u{7f}");
        assert_eq!(
            shown("\u{85}\u{2028}\u{2029}é".as_bytes()),
            "\\u{85}\\u{2028}\\u{2029}é"
        );
        assert_eq!(shown(b"bad\xff\xfe.txt"), "bad\\xFF\\xFE.txt");
        assert_eq!(shown(b"dir/sub\\x"), "dir/sub\\x");
    }

    #[test]
    fn every_bidirectional_control_is_escaped() {
        let controls = [
            0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
            0x2069,
        ];
        for code in controls {
            let c = char::from_u32(code).unwrap();
            assert_eq!(
                shown(format!("a{c}b").as_bytes()),
                format!("a\\u{{{code:x}}}b")
            );
        }
    }

    #[test]
    fn invisible_characters_are_escaped_and_visible_ones_kept() {
        for (name, escaped) in [
            ("zero\u{200b}width", "zero\\u{200b}width"),
            ("join\u{200d}\u{2060}", "join\\u{200d}\\u{2060}"),
            ("\u{feff}bom", "\\u{feff}bom"),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
            ("tag\u{e0041}\u{e007f}", "tag\\u{e0041}\\u{e007f}"),
            ("vs\u{fe0f}\u{e0100}", "vs\\u{fe0f}\\u{e0100}"),
            ("filler\u{3164}\u{115f}", "filler\\u{3164}\\u{115f}"),
            ("cgj\u{34f}", "cgj\\u{34f}"),
            ("unassigned\u{378}", "unassigned\\u{378}"),
        ] {
            assert_eq!(shown(name.as_bytes()), escaped);
        }
        let visible = "ünïcödé 日本語 עברית العربية emoji😀 ε=mc²";
        assert_eq!(shown(visible.as_bytes()), visible);
    }
}
