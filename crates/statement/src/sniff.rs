//! What kind of statement a file is, from its content alone — never from its name (a file renamed
//! to `.ofx` is what its bytes say, and an XML declaration may sit over an SGML body).
//!
//! Only the beginning of the file is read ([`SNIFF_BYTES`]), after a byte-order mark, SWIFT
//! framing bytes and leading blank space. The answer names the format and the evidence, so a
//! refusal can say why a file was taken for what it is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How much of the beginning of a file the sniff reads.
pub const SNIFF_BYTES: usize = 16 * 1024;

/// The kinds of statement a bank gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "format", rename_all = "snake_case")]
pub enum StatementFormat {
    /// CSV and other delimited text (tab, `;`, `|`).
    Delimited,
    /// Open Financial Exchange, as banks, Quicken (QFX) and QuickBooks (QBO) download it.
    Ofx { syntax: OfxSyntax },
    /// ISO 20022 cash management: `camt.052` (account report), `camt.053` (statement), `camt.054`
    /// (debit and credit notification); `version` is the message's (`camt.053.001.08`: 8).
    Camt {
        message: CamtMessage,
        version: Option<u16>,
    },
    /// SWIFT MT940, a customer statement.
    Mt940,
    /// SWIFT MT942, an interim transaction report (entries not yet on a statement).
    Mt942,
    /// Quicken Interchange Format.
    Qif,
    /// An XML document that is neither OFX nor camt.
    OtherXml,
}

/// How an OFX file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OfxSyntax {
    /// OFX 1.x: `OFXHEADER:100` key-value lines over an SGML body whose leaf elements need not
    /// close (also a body with no header at all).
    Sgml,
    /// OFX 2.x: an XML declaration and `<?OFX OFXHEADER="200" …?>`.
    Xml,
}

/// Which camt message a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CamtMessage {
    /// `camt.052`, `BkToCstmrAcctRpt`.
    AccountReport,
    /// `camt.053`, `BkToCstmrStmt`.
    Statement,
    /// `camt.054`, `BkToCstmrDbtCdtNtfctn`.
    Notification,
}

impl CamtMessage {
    fn number(self) -> &'static str {
        match self {
            Self::AccountReport => "052",
            Self::Statement => "053",
            Self::Notification => "054",
        }
    }
}

impl fmt::Display for StatementFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Delimited => f.write_str("delimited text (CSV)"),
            Self::Ofx {
                syntax: OfxSyntax::Sgml,
            } => f.write_str("OFX 1 (SGML)"),
            Self::Ofx {
                syntax: OfxSyntax::Xml,
            } => f.write_str("OFX 2 (XML)"),
            Self::Camt { message, version } => {
                write!(f, "ISO 20022 camt.{}", message.number())?;
                match version {
                    Some(version) => write!(f, ".001.{version:02}"),
                    None => Ok(()),
                }
            }
            Self::Mt940 => f.write_str("SWIFT MT940"),
            Self::Mt942 => f.write_str("SWIFT MT942"),
            Self::Qif => f.write_str("QIF"),
            Self::OtherXml => f.write_str("an XML document"),
        }
    }
}

/// A file's format and what in it said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sniffed {
    #[serde(flatten)]
    pub format: StatementFormat,
    /// The evidence, in words ("the header line `OFXHEADER:100`").
    pub why: String,
}

impl Sniffed {
    fn new(format: StatementFormat, why: impl Into<String>) -> Self {
        Self {
            format,
            why: why.into(),
        }
    }
}

/// The format of a statement's `bytes`, from their content. Anything that is none of the
/// structured formats is delimited text, which the CSV reader then reads or refuses in words.
pub fn sniff(bytes: &[u8]) -> Sniffed {
    let text = beginning(bytes);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{1}' || c == '\u{feff}');
    if let Some(found) = ofx(text).or_else(|| xml(text)) {
        return found;
    }
    if let Some(found) = qif(text).or_else(|| swift(text)) {
        return found;
    }
    Sniffed::new(StatementFormat::Delimited, "no structured format's marks")
}

/// The first [`SNIFF_BYTES`] as text: UTF-16 by its byte-order mark, anything else read as
/// UTF-8 with what does not decode replaced (the marks looked for are ASCII).
fn beginning(bytes: &[u8]) -> String {
    let start = bytes.get(..SNIFF_BYTES.min(bytes.len())).unwrap_or(bytes);
    match encoding_rs::Encoding::for_bom(start) {
        Some((encoding, _)) if encoding != encoding_rs::UTF_8 => {
            encoding.decode_with_bom_removal(start).0.into_owned()
        }
        _ => String::from_utf8_lossy(start).into_owned(),
    }
}

fn ofx(text: &str) -> Option<Sniffed> {
    let upper = text.to_ascii_uppercase();
    let header_v1 = upper.lines().take(20).any(|line| {
        line.split_once(':')
            .is_some_and(|(key, _)| key.trim() == "OFXHEADER")
    });
    if header_v1 {
        let why = "the header line `OFXHEADER:100`";
        return Some(Sniffed::new(
            StatementFormat::Ofx {
                syntax: OfxSyntax::Sgml,
            },
            why,
        ));
    }
    // Without the v1 header, only a file that is markup from its first byte is OFX: a CSV may
    // name `<OFX>` in a description.
    if !upper.starts_with('<') {
        return None;
    }
    if upper.contains("<?OFX") {
        let why = "the processing instruction `<?OFX OFXHEADER=\"200\" …?>`";
        return Some(Sniffed::new(
            StatementFormat::Ofx {
                syntax: OfxSyntax::Xml,
            },
            why,
        ));
    }
    if upper.contains("<OFX>") {
        let syntax = if upper.starts_with("<?XML") {
            OfxSyntax::Xml
        } else {
            OfxSyntax::Sgml
        };
        return Some(Sniffed::new(
            StatementFormat::Ofx { syntax },
            "the element `<OFX>`, with no OFX header",
        ));
    }
    None
}

/// The namespace of every camt message, before its number and version.
const NAMESPACE: &str = "urn:iso:std:iso:20022:tech:xsd:camt.";

/// Roots of the three camt messages, for a file whose namespace does not name its message.
const CAMT_ROOTS: [(&str, CamtMessage); 3] = [
    ("<BkToCstmrAcctRpt", CamtMessage::AccountReport),
    ("<BkToCstmrStmt", CamtMessage::Statement),
    ("<BkToCstmrDbtCdtNtfctn", CamtMessage::Notification),
];

fn xml(text: &str) -> Option<Sniffed> {
    if !text.starts_with('<') {
        return None;
    }
    if let Some(at) = text.find(NAMESPACE) {
        let rest = text.get(at.saturating_add(NAMESPACE.len())..).unwrap_or_default();
        let message = match rest.get(..3) {
            Some("052") => Some(CamtMessage::AccountReport),
            Some("053") => Some(CamtMessage::Statement),
            Some("054") => Some(CamtMessage::Notification),
            _ => None,
        };
        if let Some(message) = message {
            // `053.001.08`: the version is the two digits after `.001.`.
            let version = rest
                .get(3..)
                .and_then(|v| v.strip_prefix(".001."))
                .and_then(|v| v.get(..2))
                .and_then(|v| v.parse().ok());
            let namespace = format!(
                "{NAMESPACE}{}",
                rest.split(['"', '\'', ' ']).next().unwrap_or_default()
            );
            return Some(Sniffed::new(
                StatementFormat::Camt { message, version },
                format!("the namespace {namespace}"),
            ));
        }
    }
    if let Some((root, message)) = CAMT_ROOTS.iter().find(|(root, _)| text.contains(root)) {
        let why = format!("the element `{root}>`");
        return Some(Sniffed::new(
            StatementFormat::Camt {
                message: *message,
                version: None,
            },
            why,
        ));
    }
    let declared = text
        .get(..5)
        .is_some_and(|start| start.eq_ignore_ascii_case("<?xml"));
    declared.then(|| {
        Sniffed::new(
            StatementFormat::OtherXml,
            "an XML declaration, with no camt or OFX element",
        )
    })
}

fn qif(text: &str) -> Option<Sniffed> {
    let first = text.lines().next()?.trim();
    let lower = first.to_ascii_lowercase();
    ["!type:", "!account", "!option:", "!clear:"]
        .iter()
        .any(|mark| lower.starts_with(mark))
        .then(|| Sniffed::new(StatementFormat::Qif, format!("its first line `{}`", clip(first))))
}

/// SWIFT MT940/MT942: tagged fields at the start of lines (`:20:` reference, `:25:` account, …),
/// perhaps after a block header (`{1:…}{2:O940…}`) or a few lines of prose.
fn swift(text: &str) -> Option<Sniffed> {
    let has = |tag: &str| text.lines().any(|line| line.trim_start().starts_with(tag));
    if !(has(":20:") && has(":25:")) {
        return None;
    }
    let opening = has(":60F:") || has(":60M:");
    let interim = text.contains("{2:O942") || text.contains("{2:I942") || has(":34F:") || has(":13D:");
    if interim && !opening {
        return Some(Sniffed::new(
            StatementFormat::Mt942,
            "the fields :20: and :25: with :34F:/:13D: and no opening balance",
        ));
    }
    (opening || has(":61:")).then(|| {
        Sniffed::new(
            StatementFormat::Mt940,
            "the fields :20:, :25: and an opening balance or :61: lines",
        )
    })
}

/// A line as the evidence quotes it: at most 40 characters.
fn clip(line: &str) -> String {
    line.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(text: &str) -> StatementFormat {
        sniff(text.as_bytes()).format
    }

    #[test]
    fn each_format_by_its_marks() {
        assert_eq!(
            format("date,amount\n2025-01-01,1.00\n"),
            StatementFormat::Delimited
        );
        assert_eq!(
            format("OFXHEADER:100\nDATA:OFXSGML\n\n<OFX>"),
            StatementFormat::Ofx {
                syntax: OfxSyntax::Sgml
            }
        );
        // The three deviations real headers show: spaces, one line, no blank line before <OFX>.
        assert_eq!(
            format(" OFXHEADER : 100 DATA:OFXSGML<OFX>"),
            StatementFormat::Ofx {
                syntax: OfxSyntax::Sgml
            }
        );
        assert_eq!(
            format("<?xml version=\"1.0\"?>\n<?OFX OFXHEADER=\"200\" VERSION=\"200\"?>\n<OFX>"),
            StatementFormat::Ofx {
                syntax: OfxSyntax::Xml
            }
        );
        assert_eq!(
            format("\n\n<OFX>\n<SIGNONMSGSRSV1>"),
            StatementFormat::Ofx {
                syntax: OfxSyntax::Sgml
            }
        );
        assert_eq!(
            format(
                "<?xml version='1.0'?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">"
            ),
            StatementFormat::Camt {
                message: CamtMessage::Statement,
                version: Some(8)
            }
        );
        assert_eq!(
            format("<Document><BkToCstmrDbtCdtNtfctn>"),
            StatementFormat::Camt {
                message: CamtMessage::Notification,
                version: None
            }
        );
        assert_eq!(format("<?xml version=\"1.0\"?><rss/>"), StatementFormat::OtherXml);
        assert_eq!(
            format("!Type:Bank\nD2024'01'02\nT10.00\n^\n"),
            StatementFormat::Qif
        );
        assert_eq!(
            format("{1:F01X}{2:O940X}\n:20:REF\n:25:ACC\n:28C:1\n:60F:C250101EUR1,00\n"),
            StatementFormat::Mt940
        );
        assert_eq!(
            format(":20:REF\n:25:ACC\n:34F:EURD0,00\n:13D:1610301730+0000\n"),
            StatementFormat::Mt942
        );
    }

    #[test]
    fn the_name_of_the_format_says_what_it_is() {
        let camt = StatementFormat::Camt {
            message: CamtMessage::AccountReport,
            version: Some(4),
        };
        assert_eq!(camt.to_string(), "ISO 20022 camt.052.001.04");
        let sniffed = sniff(
            "<?xml version=\"1.0\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">"
                .as_bytes(),
        );
        assert_eq!(
            sniffed.why,
            "the namespace urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"
        );
    }

    #[test]
    fn a_utf16_file_and_framing_bytes_are_seen_through() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("!Type:Bank\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(sniff(&utf16).format, StatementFormat::Qif);
        assert_eq!(
            format("\u{1}:20:REF\n:25:ACC\n:61:250101C1,00NTRF\n"),
            StatementFormat::Mt940
        );
    }

    #[test]
    fn a_csv_that_mentions_the_marks_stays_a_csv() {
        let csv = "date,description,amount\n2025-01-01,\"<OFX> :20: !Type:Bank\",1.00\n";
        // `<OFX>` inside a cell: the sniff takes the file for OFX only when it starts as one or
        // has its header; a CSV naming it in a description is a CSV.
        assert_eq!(format(csv), StatementFormat::Delimited);
    }
}
