//! OFX markup read the same way whether it is SGML (OFX 1) or XML (OFX 2): the header, the bytes
//! decoded by the charset it declares, and the body as a stream of elements.
//!
//! OFX 1's leaf elements need not close (`<TRNAMT>-6.60<FITID>…`) while its aggregates must;
//! OFX 2 closes everything. One tolerant reading serves both: an element known to be an aggregate
//! opens a level; any other element followed by text is a leaf holding that text; a closing tag
//! closes its aggregate and every aggregate left open inside it. Nothing is ever expanded but the
//! five XML entities and numeric character references, so a document type's entities (the
//! "billion laughs") are text; nesting deeper than [`MAX_DEPTH`] is refused.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// The deepest nesting of aggregates read (real statements nest about eight).
pub const MAX_DEPTH: usize = 32;

/// The longest element name read; a longer `<…` is text.
const MAX_NAME: usize = 64;

/// What the header said and the body's text.
#[derive(Debug)]
pub struct Document<'a> {
    /// The file's text: its own bytes when they are UTF-8 (a 10 MiB file is not copied).
    text: std::borrow::Cow<'a, str>,
    /// Where the body starts, at the first element.
    body_start: usize,
    /// The line the body starts on (1-based): header lines above it are counted as header.
    pub body_line: usize,
    /// How the bytes were decoded, and why ("windows-1252, as `CHARSET:1252` declares").
    pub encoding: String,
}

/// The header's declarations that decide the decoding: OFX 1's `CHARSET` and `ENCODING` lines,
/// OFX 2's XML `encoding`.
fn declared_charset(start: &str) -> Option<String> {
    for line in start.lines().take(30) {
        let line = line.trim();
        if line.starts_with('<') && !line.starts_with("<?") {
            break;
        }
        if let Some((key, value)) = line.split_once(':')
            && key.trim().eq_ignore_ascii_case("CHARSET")
        {
            return Some(value.trim().to_owned());
        }
        if let Some(at) = line.find("encoding=") {
            let rest = line.get(at.saturating_add(9)..).unwrap_or_default();
            let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let value: String = rest.chars().skip(1).take_while(|c| *c != quote).collect();
            return Some(value);
        }
    }
    None
}

/// The encoding a declared charset names (`1252`, `ISO-8859-1`, `8859-1`, `UTF-8`, `NONE`).
fn encoding_of(declared: &str) -> Option<&'static Encoding> {
    let upper = declared.trim().to_ascii_uppercase();
    match upper.as_str() {
        "NONE" | "" => None,
        // Latin-1 is read as its superset, Windows-1252, as browsers do.
        "1252" | "CP1252" | "WINDOWS-1252" | "8859-1" | "ISO-8859-1" | "ISO8859-1" | "LATIN1" | "LATIN-1" => {
            Some(WINDOWS_1252)
        }
        other => Encoding::for_label(other.as_bytes()),
    }
}

/// Decodes an OFX file: valid UTF-8 is UTF-8 whatever the header says (a header often declares
/// `1252` over plain ASCII, and a lying one over UTF-8); otherwise the declared charset, and
/// without one Windows-1252.
pub fn decode(bytes: &[u8]) -> Result<Document<'_>, String> {
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    let start = String::from_utf8_lossy(bytes.get(..4096.min(bytes.len())).unwrap_or(bytes)).into_owned();
    let declared = declared_charset(&start);
    let (text, encoding) = if let Ok(text) = std::str::from_utf8(bytes) {
        let encoding = match &declared {
            Some(d) if !bytes.is_ascii() && encoding_of(d).is_some_and(|e| e != UTF_8) => {
                format!("UTF-8 (the bytes are valid UTF-8, though the header declares {d})")
            }
            _ => "UTF-8".to_owned(),
        };
        (std::borrow::Cow::Borrowed(text), encoding)
    } else {
        let (encoding, why) = match declared.as_deref().map(|d| (d, encoding_of(d))) {
            Some((d, Some(e))) if e != UTF_8 => (e, format!("as the header declares {d}")),
            Some((d, _)) => (
                WINDOWS_1252,
                format!("the header declares {d}, which the bytes are not"),
            ),
            None => (
                WINDOWS_1252,
                "no charset declared and the bytes are not UTF-8".to_owned(),
            ),
        };
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        if had_errors {
            return Err(format!("the bytes are neither UTF-8 nor {}", encoding.name()));
        }
        (
            std::borrow::Cow::Owned(text.into_owned()),
            format!("{} ({why})", encoding.name()),
        )
    };
    let first = text.find("<OFX").or_else(|| text.find("<ofx")).unwrap_or(0);
    let head = text.get(..first).unwrap_or_default();
    let body_line = head.matches('\n').count().saturating_add(1);
    Ok(Document {
        text,
        body_start: first,
        body_line,
        encoding,
    })
}

impl Document<'_> {
    /// The body, from the first element.
    pub fn body(&self) -> &str {
        self.text.get(self.body_start..).unwrap_or_default()
    }
}

/// One piece of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// `<NAME>`: its name in upper case, the line it is on.
    Open(String, usize),
    /// `</NAME>`.
    Close(String),
    /// `<NAME/>`: an empty element.
    Empty(String),
    /// Text between tags, raw (entities not yet replaced), or a CDATA section's content.
    Text(&'a str, bool),
}

/// The body as events, with the line each starts on.
#[derive(Debug)]
pub struct Events<'a> {
    text: &'a str,
    at: usize,
    line: usize,
}

impl<'a> Events<'a> {
    pub fn new(text: &'a str, first_line: usize) -> Self {
        Self {
            text,
            at: 0,
            line: first_line,
        }
    }

    /// The line the reader is on.
    pub fn line(&self) -> usize {
        self.line
    }

    fn advance(&mut self, by: usize) -> &'a str {
        let end = self.at.saturating_add(by).min(self.text.len());
        let taken = self.text.get(self.at..end).unwrap_or_default();
        self.line = self.line.saturating_add(taken.matches('\n').count());
        self.at = end;
        taken
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.at..).unwrap_or_default()
    }

    /// Skips past `end` (or to the end of the text).
    fn skip_past(&mut self, end: &str) {
        let by = self
            .rest()
            .find(end)
            .map_or(self.rest().len(), |at| at.saturating_add(end.len()));
        self.advance(by);
    }

    /// A declaration (`<!DOCTYPE … [ … ]>`): skipped whole, its internal subset included; nothing
    /// in it is ever expanded.
    fn skip_declaration(&mut self) {
        let mut depth = 0usize;
        let mut by = self.rest().len();
        for (at, c) in self.rest().char_indices() {
            match c {
                '[' => depth = depth.saturating_add(1),
                ']' => depth = depth.saturating_sub(1),
                '>' if depth == 0 => {
                    by = at.saturating_add(1);
                    break;
                }
                _ => {}
            }
        }
        self.advance(by);
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':')
}

impl<'a> Iterator for Events<'a> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            let rest = self.rest();
            if rest.is_empty() {
                return None;
            }
            if !rest.starts_with('<') {
                let len = rest.find('<').unwrap_or(rest.len());
                return Some(Event::Text(self.advance(len), false));
            }
            if rest.starts_with("<![CDATA[") {
                self.advance(9);
                let inner = self.rest();
                let len = inner.find("]]>").unwrap_or(inner.len());
                let content = self.advance(len);
                self.advance(3);
                return Some(Event::Text(content, true));
            }
            if rest.starts_with("<!--") {
                self.skip_past("-->");
                continue;
            }
            if rest.starts_with("<!") {
                self.skip_declaration();
                continue;
            }
            if rest.starts_with("<?") {
                self.skip_past("?>");
                continue;
            }
            let closing = rest.starts_with("</");
            let name_start = if closing { 2 } else { 1 };
            let name: String = rest
                .get(name_start..)
                .unwrap_or_default()
                .chars()
                .take_while(|c| is_name_char(*c))
                .take(MAX_NAME.saturating_add(1))
                .collect();
            if name.is_empty() || name.len() > MAX_NAME {
                // A `<` that starts no element ("< 5", a raw `<` in a value): text.
                let len = rest
                    .get(1..)
                    .and_then(|r| r.find('<'))
                    .map_or(rest.len(), |at| at.saturating_add(1));
                return Some(Event::Text(self.advance(len), false));
            }
            let line = self.line;
            let tag_end = rest.find('>');
            let next_open = rest
                .get(1..)
                .and_then(|r| r.find('<'))
                .map(|at| at.saturating_add(1));
            let len = match (tag_end, next_open) {
                (Some(end), Some(open)) if open < end => open,
                (Some(end), _) => end.saturating_add(1),
                (None, _) => rest.len(),
            };
            let tag = self.advance(len);
            let name = name.to_ascii_uppercase();
            return Some(if closing {
                Event::Close(name)
            } else if tag.trim_end_matches('>').ends_with('/') {
                Event::Empty(name)
            } else {
                Event::Open(name, line)
            });
        }
    }
}

/// Replaces the five XML entities and numeric character references; a value escaped twice
/// (`&amp;lt;`, written by some banks) is unescaped twice. Any other `&name;` stays as written.
pub fn unescape(raw: &str) -> String {
    let once = unescape_once(raw);
    if once.contains('&') && once != raw {
        unescape_once(&once)
    } else {
        once
    }
}

fn unescape_once(raw: &str) -> String {
    if !raw.contains('&') {
        return raw.to_owned();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at..).unwrap_or_default();
        let entity_end = after.get(..12.min(after.len())).and_then(|head| head.find(';'));
        let replaced = entity_end.and_then(|end| {
            let name = after.get(1..end)?;
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code).filter(|c| !c.is_control() || c.is_whitespace())?
                }
            };
            Some((c, end))
        });
        if let Some((c, end)) = replaced {
            out.push(c);
            rest = after.get(end.saturating_add(1)..).unwrap_or_default();
        } else {
            out.push('&');
            rest = after.get(1..).unwrap_or_default();
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<Event<'_>> {
        Events::new(text, 1).collect()
    }

    #[test]
    fn sgml_leaves_and_xml_leaves_read_alike() {
        let sgml = events("<STMTTRN><TRNAMT>-6.60<FITID>7</STMTTRN>");
        assert_eq!(
            sgml,
            vec![
                Event::Open("STMTTRN".into(), 1),
                Event::Open("TRNAMT".into(), 1),
                Event::Text("-6.60", false),
                Event::Open("FITID".into(), 1),
                Event::Text("7", false),
                Event::Close("STMTTRN".into()),
            ]
        );
        let xml = events("<name><![CDATA[A & B]]></name><empty/>");
        assert_eq!(
            xml,
            vec![
                Event::Open("NAME".into(), 1),
                Event::Text("A & B", true),
                Event::Close("NAME".into()),
                Event::Empty("EMPTY".into()),
            ]
        );
    }

    #[test]
    fn declarations_and_comments_are_skipped_and_never_expanded() {
        let text =
            "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><!-- x --><A>&lol2;</A>";
        let found = events(text);
        assert_eq!(found.get(1), Some(&Event::Text("&lol2;", false)));
        assert_eq!(unescape("&lol2;"), "&lol2;");
    }

    #[test]
    fn entities_once_and_twice() {
        assert_eq!(unescape("B.C. HYDRO &amp; POWER"), "B.C. HYDRO & POWER");
        assert_eq!(unescape("TPAY &amp;lt;DEFTPYMT&amp;gt;"), "TPAY <DEFTPYMT>");
        assert_eq!(unescape("&#233;t&#xE9;"), "été");
        assert_eq!(unescape("AT&T"), "AT&T");
        assert_eq!(unescape("&#0;"), "&#0;");
    }

    #[test]
    fn the_declared_charset_decides_bytes_that_are_not_utf8() {
        let latin1 = b"OFXHEADER:100\nCHARSET:8859-1\n\n<OFX><NAME>pr\xe9pay\xe9e</OFX>";
        let document = decode(latin1).unwrap();
        assert!(document.body().contains("prépayée"), "{}", document.body());
        assert_eq!(document.body_line, 4);
        assert!(document.encoding.contains("8859-1"), "{}", document.encoding);
        let utf8 = "OFXHEADER:100\nCHARSET:1252\n\n<OFX><NAME>prépayée</OFX>";
        let document = decode(utf8.as_bytes()).unwrap();
        assert!(document.body().contains("prépayée"));
        assert!(
            document.encoding.starts_with("UTF-8 (the bytes are valid UTF-8"),
            "{}",
            document.encoding
        );
    }
}
