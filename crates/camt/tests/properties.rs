//! The camt reader never panics: arbitrary bytes, text shaped like camt, and the corpus's files
//! cut and mutated. `PROPTEST_CASES` runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_statement::{CamtMessage, ParseOptions, StatementFormat};
use proptest::prelude::*;

fn read(bytes: &[u8]) {
    let format = StatementFormat::Camt {
        message: CamtMessage::Statement,
        version: None,
    };
    for statement in [None, Some(1), Some(2)] {
        let options = ParseOptions {
            statement,
            ..ParseOptions::default()
        };
        if let Ok(parsed) = kakeibo_camt::parse(bytes, format, "a property", &options) {
            assert!(parsed.rows.len() <= bytes.len());
        }
    }
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>".to_owned()),
        Just("<Document><BkToCstmrStmt>".to_owned()),
        Just("</BkToCstmrStmt></Document>".to_owned()),
        Just("<Stmt><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>".to_owned()),
        Just("</Stmt>".to_owned()),
        Just("<Ntry>".to_owned()),
        Just("</Ntry>".to_owned()),
        Just("<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp>".to_owned()),
        Just("</Bal>".to_owned()),
        Just("<NtryDtls><TxDtls>".to_owned()),
        Just("</TxDtls></NtryDtls>".to_owned()),
        Just("<!DOCTYPE d [<!ENTITY a \"&a;\">]>".to_owned()),
        "<(Amt Ccy=\"EUR\"|CdtDbtInd|Sts|RvslInd|AcctSvcrRef|Ustrd|Nm)>".prop_map(|s| s),
        "</(Amt|CdtDbtInd|Sts|RvslInd|AcctSvcrRef|Ustrd|Nm)>".prop_map(|s| s),
        "<BookgDt><(Dt|DtTm)>[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:]{8})?</(Dt|DtTm)></BookgDt>".prop_map(|s| s),
        "(CRDT|DBIT|BOOK|PDNG|INFO|true)".prop_map(|s| s),
        "-?[0-9]{0,20}(\\.[0-9]{0,6})?".prop_map(|s| s),
        "[ -~\n\u{e4}&;]{0,12}".prop_map(|s| s),
    ]
}

kakeibo_testkit::reader_properties!(read, piece(), ["camt"]);
