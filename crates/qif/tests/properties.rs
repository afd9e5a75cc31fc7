//! The QIF reader never panics: arbitrary bytes, text shaped like QIF, and the corpus's files cut
//! and mutated. `PROPTEST_CASES` runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_money::Currency;
use kakeibo_statement::{DateOrder, Mapping, ParseOptions};
use proptest::prelude::*;

fn read(bytes: &[u8]) {
    for date_order in [None, Some(DateOrder::DayFirst), Some(DateOrder::MonthFirst)] {
        for currency in [None, Some(Currency::USD)] {
            let options = ParseOptions {
                mapping: Mapping {
                    date_order,
                    ..Mapping::default()
                },
                currency,
                ..ParseOptions::default()
            };
            if let Ok(parsed) = kakeibo_qif::parse(bytes, "a property", &options) {
                assert!(parsed.rows.len() <= bytes.len());
                assert!(parsed.rows.iter().all(|r| r.line >= 1));
            }
        }
    }
}

/// Pieces QIF files are made of, for text that looks like one.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "!(Type:(Bank|CCard|Cash|Oth A|Oth L|Invst|Memorized|Cat)|Account|Option:AutoSwitch|Clear:AutoSwitch)\n"
            .prop_map(|s| s),
        Just("^\n".to_owned()),
        "D[0-9]{1,2}[/.'-][0-9]{1,2}[/.' -]{1,2}[0-9]{2,4}\n".prop_map(|s| s),
        "[TUI$][-+]?[0-9]{0,3}(,[0-9]{3}){0,3}([.,][0-9]{0,3})?\n".prop_map(|s| s),
        "[PMNLCSE][ -~\u{e9}]{0,16}\n".prop_map(|s| s),
        "L\\[[A-Za-z ]{0,10}\\]\n".prop_map(|s| s),
        "\r?\n".prop_map(|s| s),
        "[ -~\u{e9}\r]{0,12}".prop_map(|s| s),
    ]
}

kakeibo_testkit::reader_properties!(read, piece(), ["qif"]);
