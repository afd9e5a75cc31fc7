//! The OFX reader never panics and never holds more than it was given: arbitrary bytes, text
//! shaped like OFX, and the corpus's files cut and mutated. `PROPTEST_CASES` runs more (the
//! closing note of the issue that brought this reader has a run of a million per property).

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_statement::{OfxSyntax, ParseOptions};
use proptest::prelude::*;

fn read(bytes: &[u8]) {
    for statement in [None, Some(1), Some(2)] {
        let options = ParseOptions {
            statement,
            ..ParseOptions::default()
        };
        if let Ok(parsed) = kakeibo_ofx::parse(bytes, OfxSyntax::Sgml, "a property", &options) {
            assert!(parsed.rows.len() <= bytes.len());
            assert!(parsed.rows.iter().all(|r| r.line >= 1));
        }
    }
}

/// Pieces OFX files are made of, for text that looks like one.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("OFXHEADER:100\nCHARSET:1252\n\n".to_owned()),
        Just("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><?OFX OFXHEADER=\"200\"?>".to_owned()),
        Just("<OFX>".to_owned()),
        Just("</OFX>".to_owned()),
        Just("<BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD".to_owned()),
        Just("<CCSTMTRS><CURDEF>EUR<CCACCTFROM><ACCTID>4111</CCACCTFROM>".to_owned()),
        Just("<INVSTMTRS><INVTRANLIST><BUYSTOCK><INVBUY>".to_owned()),
        Just("<BANKTRANLIST><STMTTRN>".to_owned()),
        Just("</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1>".to_owned()),
        Just("<LEDGERBAL><BALAMT>".to_owned()),
        Just("<![CDATA[".to_owned()),
        Just("]]>".to_owned()),
        Just("<!DOCTYPE x [<!ENTITY a \"&a;&a;\">]>".to_owned()),
        Just("&amp;lt;".to_owned()),
        "<(TRNTYPE|DTPOSTED|TRNAMT|FITID|NAME|MEMO|CORRECTFITID|CORRECTACTION|DTASOF|ACCTID)>"
            .prop_map(|s| s),
        "[-+]?[0-9]{0,20}([.,][0-9]{0,8})?".prop_map(|s| s),
        "[0-9]{8}([0-9]{6})?(\\[[-+]?[0-9]{1,2}(:[A-Z]{3})?\\])?".prop_map(|s| s),
        "[ -~\n\u{e9}]{0,12}".prop_map(|s| s),
    ]
}

kakeibo_testkit::reader_properties!(read, piece(), ["ofx1", "ofx2", "qfx"]);
