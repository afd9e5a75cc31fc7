//! The MT940 reader never panics: arbitrary bytes, text shaped like MT940, and the corpus's files
//! cut and mutated. `PROPTEST_CASES` runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests may panic on what they did not expect.

use kakeibo_statement::{ParseOptions, StatementFormat};
use proptest::prelude::*;

fn read(bytes: &[u8]) {
    for format in [StatementFormat::Mt940, StatementFormat::Mt942] {
        for statement in [None, Some(1), Some(2)] {
            let options = ParseOptions {
                statement,
                ..ParseOptions::default()
            };
            if let Ok(parsed) = kakeibo_mt940::parse(bytes, format, "a property", &options) {
                assert!(parsed.rows.len() <= bytes.len());
            }
        }
    }
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{1:F01BANK}{2:O940}{4:\n".to_owned()),
        Just("-}\n".to_owned()),
        Just("-\n".to_owned()),
        "\n:(20|25|28C|60F|60M|62F|62M|64|86|34F|13D|90D):".prop_map(|s| s),
        "\n:61:[0-9]{6}([0-9]{4})?(C|D|RC|RD)[A-Z]?[0-9]{0,12},[0-9]{0,4}N[A-Z0-9]{3}[A-Z ]{0,8}(//[0-9]{0,10})?".prop_map(|s| s),
        "[CD][0-9]{6}[A-Z]{3}[0-9]{0,10},[0-9]{0,3}".prop_map(|s| s),
        "\\?[0-9]{2}[ -~]{0,20}".prop_map(|s| s),
        "[ -~\n\u{e4}\u{1}\u{3}]{0,20}".prop_map(|s| s),
    ]
}

kakeibo_testkit::reader_properties!(read, piece(), ["mt940"]);
