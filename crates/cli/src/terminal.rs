//! Text from outside (a statement, a model, a tool's result, the database) made safe to print:
//! the characters a terminal acts on instead of showing are shown as escapes.
//!
//! Escaped: every C0 control (`\x1b` …, with `\n`, `\t` and `\r` by their names), DEL (`\x7f`),
//! every C1 control (`\u{9b}` …) and the bidirectional controls that reorder what is shown
//! (`\u{202e}` …). Everything else, non-ASCII text included, is printed as it is. A backslash is
//! left as it is: text that spells `\x1b` itself is shown as that, and does nothing either.

use std::{borrow::Cow, fmt::Write as _};

/// Whether a terminal may act on `c` instead of showing it, or show it so that the text around it
/// reads in another order.
fn acted_on(c: char) -> bool {
    c.is_ascii_control()
        || ('\u{80}'..='\u{9f}').contains(&c)
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// `s` with every control character shown as an escape: for one line of output, a table cell or
/// a name, where a line break is text too (it shows as `\n`).
pub fn visible(s: &str) -> Cow<'_, str> {
    escaped(s, acted_on, terminal_escape)
}

/// `s` with every control character but line breaks (`\n`) and tabs shown as an escape: for text
/// of many lines, such as a model's answer.
pub fn visible_lines(s: &str) -> Cow<'_, str> {
    escaped(s, |c| acted_on(c) && !matches!(c, '\n' | '\t'), terminal_escape)
}

/// Serialised JSON with the characters a terminal acts on written as `\uXXXX` escapes: the same
/// JSON value, read back, and nothing raw on the terminal. (A JSON serialiser escapes only what
/// JSON requires, below U+0020; DEL, the C1 controls and the bidirectional controls stay raw.)
pub fn json(serialised: &str) -> Cow<'_, str> {
    // Line breaks, tabs and returns outside strings are JSON's whitespace, and a serialiser has
    // already escaped them (and every other C0 control) inside strings.
    let escape = |c: char| acted_on(c) && !matches!(c, '\n' | '\t' | '\r');
    escaped(serialised, escape, |out, c| {
        // Every character escaped here is in the Basic Multilingual Plane: one `\uXXXX` each.
        let _ = write!(out, "\\u{:04x}", u32::from(c));
    })
}

fn terminal_escape(out: &mut String, c: char) {
    let _ = match c {
        '\n' => out.write_str("\\n"),
        '\t' => out.write_str("\\t"),
        '\r' => out.write_str("\\r"),
        c if c.is_ascii() => write!(out, "\\x{:02x}", u32::from(c)),
        c => write!(out, "{}", c.escape_unicode()),
    };
}

fn escaped(s: &str, escape: impl Fn(char) -> bool, write: fn(&mut String, char)) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().saturating_add(16));
    for c in s.chars() {
        if escape(c) {
            write(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::{json, visible, visible_lines};

    #[test]
    fn plain_text_is_untouched_and_borrowed() {
        for plain in [
            "CHAI POINT",
            "家計簿",
            "₹1,000.00",
            "Café — naïve",
            "a\\x1b b",
            "😀 emoji",
            "",
        ] {
            assert!(
                matches!(visible(plain), std::borrow::Cow::Borrowed(s) if s == plain),
                "{plain}"
            );
            assert!(matches!(visible_lines(plain), std::borrow::Cow::Borrowed(_)));
            assert!(matches!(json(plain), std::borrow::Cow::Borrowed(_)));
        }
    }

    #[test]
    fn every_c0_control_and_del_are_escaped() {
        assert_eq!(visible("a\x1b[1A\x1b[2Kb"), "a\\x1b[1A\\x1b[2Kb");
        assert_eq!(
            visible("\x00\x07\x08\x0b\x0c\x7f"),
            "\\x00\\x07\\x08\\x0b\\x0c\\x7f"
        );
        assert_eq!(visible("one\ntwo\tthree\rfour"), "one\\ntwo\\tthree\\rfour");
        for b in (0u8..0x20).chain([0x7f]) {
            let shown = visible(&char::from(b).to_string()).into_owned();
            assert!(shown.starts_with('\\') && shown.is_ascii(), "{b:#x}: {shown:?}");
            assert!(!shown.chars().any(char::is_control), "{b:#x}: {shown:?}");
        }
    }

    #[test]
    fn osc_sequences_lose_their_escape_and_bell() {
        let osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07";
        assert_eq!(visible(osc52), "\\x1b]52;c;ZWNobyBwd25lZA==\\x07");
        let osc8 = "\x1b]8;;http://evil\x1b\\label\x1b]8;;\x1b\\";
        assert_eq!(visible(osc8), "\\x1b]8;;http://evil\\x1b\\label\\x1b]8;;\\x1b\\");
    }

    #[test]
    fn every_c1_control_is_escaped() {
        for c in '\u{80}'..='\u{9f}' {
            let shown = visible(&c.to_string()).into_owned();
            assert_eq!(shown, format!("\\u{{{:x}}}", u32::from(c)));
        }
        assert_eq!(visible("x\u{9b}31mred"), "x\\u{9b}31mred");
    }

    #[test]
    fn bidirectional_controls_are_escaped() {
        let bidi = [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
        ];
        for c in bidi {
            assert_eq!(visible(&c.to_string()), format!("\\u{{{:x}}}", u32::from(c)));
            assert_eq!(
                visible_lines(&c.to_string()),
                format!("\\u{{{:x}}}", u32::from(c))
            );
        }
        assert_eq!(visible("REFUND \u{202e}00.001-"), "REFUND \\u{202e}00.001-");
        // Neighbours that are not controls stay.
        assert_eq!(visible("\u{2029}\u{2070}\u{200d}"), "\u{2029}\u{2070}\u{200d}");
    }

    #[test]
    fn many_lines_keep_line_breaks_and_tabs_only() {
        assert_eq!(
            visible_lines("total:\n\t₹1,000\r\x1b[2K家計簿\u{85}"),
            "total:\n\t₹1,000\\r\\x1b[2K家計簿\\u{85}"
        );
    }

    #[test]
    fn json_escapes_are_json_and_read_back_the_same() {
        let value = serde_json::json!({"d": "a\x1b[2K\u{7f}\u{9b}\u{202e}家計簿\n"});
        let raw = serde_json::to_string_pretty(&value).unwrap();
        let shown = json(&raw).into_owned();
        let raw_controls =
            |c: char| (c.is_control() && !matches!(c, '\n' | ' ')) || ('\u{2000}'..='\u{206f}').contains(&c);
        assert!(!shown.chars().any(raw_controls), "{shown}");
        assert!(shown.contains("\n  \"d\""), "the layout stays: {shown}");
        assert!(shown.contains("\\u007f") && shown.contains("\\u009b") && shown.contains("\\u202e"));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), value);
    }
}
