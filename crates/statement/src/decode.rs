//! Bytes to text: refuse what is not a text statement, then find the encoding.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

use crate::parsed::ImportError;

/// The largest statement accepted, in bytes.
pub const MAX_BYTES: usize = 10 * 1024 * 1024;

/// The text of a statement and the encoding it was read in. UTF-8 text is the statement's own
/// bytes, borrowed: a 10 MiB statement is not copied to be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub text: std::borrow::Cow<'a, str>,
    /// `UTF-8`, `UTF-8 (BOM)`, `windows-1252`, `UTF-16LE (BOM)`, …
    pub encoding: String,
}

/// Refuses a file past [`MAX_BYTES`] and one with nothing in it: what every reader checks first.
pub fn within_limits(bytes: &[u8]) -> Result<(), ImportError> {
    if bytes.len() > MAX_BYTES {
        return Err(ImportError::TooLarge {
            bytes: bytes.len(),
            limit: MAX_BYTES,
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty);
    }
    Ok(())
}

/// How many lines a text has (a last line without its newline counts).
#[must_use]
pub fn count_lines(text: &str) -> usize {
    let newlines = text.matches('\n').count();
    if text.ends_with('\n') || text.is_empty() {
        newlines
    } else {
        newlines.saturating_add(1)
    }
}

/// Decodes a statement: UTF-8 (with or without a byte-order mark), UTF-16 with a mark, and
/// otherwise the legacy encoding the bytes fit best (Windows-1252/Latin-1 for Western banks).
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, ImportError> {
    within_limits(bytes)?;
    for (mark, encoding, name) in [
        (&[0xEF, 0xBB, 0xBF][..], UTF_8, "UTF-8 (BOM)"),
        (&[0xFF, 0xFE][..], UTF_16LE, "UTF-16LE (BOM)"),
        (&[0xFE, 0xFF][..], UTF_16BE, "UTF-16BE (BOM)"),
    ] {
        if let Some(rest) = bytes.strip_prefix(mark) {
            let (text, had_errors) = encoding.decode_without_bom_handling(rest);
            if had_errors {
                return Err(ImportError::Encoding(format!(
                    "the file starts as {name} but is not valid {name}"
                )));
            }
            return checked(std::borrow::Cow::Owned(text.into_owned()), name);
        }
    }
    if looks_binary(bytes) {
        return Err(ImportError::Binary);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return checked(std::borrow::Cow::Borrowed(text), "UTF-8");
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let guess: &'static Encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let encoding = if guess == UTF_8 { WINDOWS_1252 } else { guess };
    // A file of legacy text with UTF-8 lines pasted in (two exports joined, an edited line):
    // each line is read in its own encoding, and the preview names the lines.
    let utf8_lines: Vec<usize> = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.is_ascii() && std::str::from_utf8(line).is_ok())
        .map(|(index, _)| index.saturating_add(1))
        .collect();
    let mut text = String::with_capacity(bytes.len().saturating_add(bytes.len() / 8));
    for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if index > 0 {
            text.push('\n');
        }
        if let Ok(utf8) = std::str::from_utf8(line) {
            text.push_str(utf8);
        } else {
            // Without sniffing a byte-order mark per line: a legacy line may start with `ÿþ`.
            let (legacy, had_errors) = encoding.decode_without_bom_handling(line);
            if had_errors {
                return Err(ImportError::Encoding(format!(
                    "line {} is neither UTF-8 nor {}",
                    index.saturating_add(1),
                    encoding.name()
                )));
            }
            text.push_str(&legacy);
        }
    }
    let name = if utf8_lines.is_empty() {
        encoding.name().to_owned()
    } else {
        format!("{}, with UTF-8 on {}", encoding.name(), line_list(&utf8_lines))
    };
    checked(std::borrow::Cow::Owned(text), &name)
}

/// "line 3", "lines 3, 7 and 9", "lines 3, 7, 9, … (12 in all)".
fn line_list(lines: &[usize]) -> String {
    const SHOWN: usize = 8;
    let named: Vec<String> = lines.iter().take(SHOWN).map(ToString::to_string).collect();
    match (lines.len(), named.split_last()) {
        (_, None) => String::new(),
        (1, Some((only, _))) => format!("line {only}"),
        (n, Some((last, before))) if n <= SHOWN => format!("lines {} and {last}", before.join(", ")),
        (n, Some(_)) => format!("lines {}, … ({n} in all)", named.join(", ")),
    }
}

/// NUL bytes, or many control characters, mean this is not a text file.
fn looks_binary(bytes: &[u8]) -> bool {
    let sample = bytes.get(..8192).unwrap_or(bytes);
    if sample.contains(&0) {
        return true;
    }
    let controls = sample
        .iter()
        .filter(|b| b.is_ascii_control() && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C))
        .count();
    controls.saturating_mul(20) > sample.len()
}

/// Text whose decoding produced control characters in bulk is not a statement either.
fn checked<'a>(text: std::borrow::Cow<'a, str>, encoding: &str) -> Result<Decoded<'a>, ImportError> {
    use std::borrow::Cow;
    let text = match text {
        Cow::Borrowed(t) => Cow::Borrowed(t.strip_prefix('\u{FEFF}').unwrap_or(t)),
        Cow::Owned(t) => match t.strip_prefix('\u{FEFF}') {
            Some(rest) => Cow::Owned(rest.to_owned()),
            None => Cow::Owned(t),
        },
    };
    let odd = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        .count();
    if odd.saturating_mul(20) > text.chars().count().max(1) {
        return Err(ImportError::Binary);
    }
    if text.trim().is_empty() {
        return Err(ImportError::Empty);
    }
    // Old Mac exports end lines with a carriage return alone, and a file pasted together from
    // several may hold one among its other line ends: each is a line end, as the CSV reader takes
    // it, so the lines counted are the lines read.
    let lone_return = |text: &str| {
        let bytes = text.as_bytes();
        bytes
            .iter()
            .zip(bytes.iter().skip(1))
            .any(|(&a, &b)| a == b'\r' && b != b'\n')
            || text.ends_with('\r')
    };
    let text = if lone_return(&text) {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        text
    };
    Ok(Decoded {
        text,
        encoding: encoding.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings() {
        assert_eq!(decode(b"date,amount\n").unwrap().encoding, "UTF-8");
        let bom = decode(b"\xEF\xBB\xBFdate,amount\n").unwrap();
        assert_eq!(
            (bom.encoding.as_str(), &*bom.text),
            ("UTF-8 (BOM)", "date,amount\n")
        );
        let latin = decode(
            b"date,description,amount\n2024-01-02,CAF\xC9 REN\xC9,-4.50\n2024-01-03,D\xC9P\xD4T,100\n",
        )
        .unwrap();
        assert_eq!(latin.encoding, "windows-1252");
        assert!(latin.text.contains("CAFÉ RENÉ"));
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("date,amount\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16).unwrap().text, "date,amount\n");
    }

    #[test]
    fn utf8_lines_in_a_legacy_file_are_read_as_utf8_and_named() {
        let mixed = decode(
            b"date,description,amount\n2024-01-02,CAF\xC9 REN\xC9,-4.50\n2024-01-03,Caf\xC3\xA9 cr\xC3\xA8me,-3.00\n",
        )
        .unwrap();
        assert_eq!(mixed.encoding, "windows-1252, with UTF-8 on line 3");
        assert!(mixed.text.contains("CAFÉ RENÉ"), "{}", mixed.text);
        assert!(mixed.text.contains("Café crème"), "{}", mixed.text);
        assert!(!mixed.text.contains('Ã'), "no mojibake: {}", mixed.text);
        assert_eq!(line_list(&[1, 2, 3]), "lines 1, 2 and 3");
        assert_eq!(
            line_list(&(1..=10).collect::<Vec<_>>()),
            "lines 1, 2, 3, 4, 5, 6, 7, 8, … (10 in all)"
        );
        assert_eq!(decode(b"a,b\r1,2\r").unwrap().text, "a,b\n1,2\n");
        // One lone return among line feeds (a file pasted together) is a line end too.
        assert_eq!(
            decode(b"a,b\n1\r2,3\r\n4,5\n").unwrap().text,
            "a,b\n1\n2,3\n4,5\n"
        );
        assert!(
            matches!(
                decode(b"a,b\r\n1,2\r\n").unwrap().text,
                std::borrow::Cow::Borrowed(_)
            ),
            "nothing to change"
        );
    }

    #[test]
    fn refusals() {
        assert_eq!(decode(b""), Err(ImportError::Empty));
        assert_eq!(decode(b" \n\r\n"), Err(ImportError::Empty));
        assert_eq!(decode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Err(ImportError::Binary));
        assert_eq!(
            decode(&[0x01, 0x02, 0x03, 0x04, b'a', 0x05, 0x06]),
            Err(ImportError::Binary)
        );
        assert!(matches!(
            decode(&vec![b'a'; MAX_BYTES + 1]),
            Err(ImportError::TooLarge { .. })
        ));
        assert!(matches!(
            decode(b"\xEF\xBB\xBFok\xFF\xFE"),
            Err(ImportError::Encoding(_))
        ));
    }
}
