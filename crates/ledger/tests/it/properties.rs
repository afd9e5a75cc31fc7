//! Properties of the importer's parsers over arbitrary input: no bytes a statement can hold panic
//! the decoder, the layout detection, the amount or the date parser, and where a property holds
//! it holds for every input — an amount formatted then parsed is the same amount, every line of a
//! parsed file is accounted for. Seeded with the corpus statements (cut and flipped at random).
//!
//! The case count is proptest's (`PROPTEST_CASES`, 256 by default): seconds in the suite; raise it
//! for a long run (`PROPTEST_CASES=1000000 cargo xtask test -- never_panic`).

use std::sync::LazyLock;

use kakeibo_ledger::{
    Currency, Money,
    import::{
        DateOrder, DecimalMark, Mapping, ParseOptions, decode, detect, parse, parse_amount, parse_date,
    },
};
use proptest::{collection::vec, prelude::*, sample::select};

use crate::corpus;

/// The corpus statements' bytes, when the corpus is there (the tests below still run without it,
/// on generated input alone).
static STATEMENTS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let root = kakeibo_testkit::corpus_root().join("bank-csv");
    if !root.is_dir() {
        return Vec::new();
    }
    corpus::statements(&root)
        .iter()
        .map(|path| std::fs::read(path).unwrap())
        .collect()
});

/// Pieces a statement is made of, for text that is shaped like one.
const PIECES: &[&str] = &[
    "Date",
    "Amount",
    "Balance",
    "Debit",
    "Credit",
    "Description",
    "Currency",
    "Fee",
    "Account",
    "CR",
    "DR",
    "2024-03-05",
    "05/03/2024",
    "3/5/24",
    "24/03/05",
    "31.12.99",
    "1 Jan 2025",
    "2025-13-40",
    "-12.50",
    "1,234.56",
    "1.234,56",
    "(7.00)",
    "₹ 1,000",
    "$-3",
    "€",
    "د.ا.\u{200f}4.750",
    "kr 100",
    "12.345 EUR",
    "0",
    "-",
    "",
    " ",
    "\"",
    "\"\"",
    "\"a,b\"",
    "\n",
    "\r\n",
    "\r",
    ",",
    ";",
    "\t",
    "|",
    "#",
    "=SUM(A1)",
    "\u{feff}",
    "\u{0}",
    "ÿ",
    "Ã©",
    "9999999999999999999",
    "-0.001",
    "+",
    "()",
];

fn statement_text() -> impl Strategy<Value = String> {
    vec(select(PIECES), 0..120).prop_map(|pieces| pieces.concat())
}

/// A corpus statement, cut short and with some bytes changed.
fn mutated_statement() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
    )
        .prop_map(|(which, cut, flips)| {
            let Some(file) = (!STATEMENTS.is_empty()).then(|| &STATEMENTS[which.index(STATEMENTS.len())])
            else {
                return Vec::new();
            };
            let mut bytes = file[..cut.index(file.len() + 1)].to_vec();
            for (at, byte) in flips {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] = byte;
                }
            }
            bytes
        })
}

/// What every parse that succeeds must say of its lines: each one went somewhere.
fn lines_add_up(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(parsed) = parse(bytes, &ParseOptions::default()) {
        prop_assert_eq!(parsed.lines.accounted(), parsed.lines.total, "{:?}", parsed.lines);
    }
    Ok(())
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_importer(bytes in vec(any::<u8>(), 0..512)) {
        lines_add_up(&bytes)?;
        if let Ok(decoded) = decode(&bytes) {
            let _ = detect(&decoded.text, &Mapping::default());
        }
    }

    #[test]
    fn statement_shaped_text_never_panics_and_every_line_is_accounted_for(text in statement_text()) {
        lines_add_up(text.as_bytes())?;
    }

    #[test]
    fn corpus_statements_cut_and_changed_never_panic(bytes in mutated_statement()) {
        lines_add_up(&bytes)?;
    }

    #[test]
    fn any_cell_is_an_amount_a_date_or_a_reason(cell in any::<String>(), piece in select(PIECES)) {
        for text in [cell.as_str(), piece, &format!("{piece}{cell}")] {
            for mark in [DecimalMark::Point, DecimalMark::Comma] {
                let _ = parse_amount(text, mark, Currency::INR);
            }
            for order in [DateOrder::DayFirst, DateOrder::MonthFirst, DateOrder::YearFirst] {
                let _ = parse_date(text, order);
            }
        }
    }

    #[test]
    fn an_amount_formatted_then_parsed_is_the_same_amount(
        minor in -999_999_999_999i64..=999_999_999_999,
        code in select(&["INR", "USD", "EUR", "GBP", "JPY", "JOD", "CHF", "SEK"][..]),
    ) {
        let currency = Currency::parse(code).unwrap();
        let money = Money::new(minor, currency);
        // For people (symbol, grouping) and plain, both read back to the same minor units.
        for text in [money.format(), money.to_decimal_string()] {
            let parsed = parse_amount(&text, DecimalMark::Point, currency).unwrap().unwrap();
            prop_assert_eq!(parsed.minor, minor, "{}", text);
            prop_assert!(parsed.currency.is_none_or(|c| c == currency), "{}", text);
        }
    }
}

/// Found by `corpus_statements_cut_and_changed_never_panic`: a lone carriage return among line
/// feeds was a line end to the CSV reader and none to the line count, so five lines were
/// accounted for in a file of four.
#[test]
fn a_lone_return_among_line_feeds_is_a_line_of_its_own() {
    let text = "Date,Payee,Notes,Category,Amount\n2\r24-08-02,Deposit,test 1,Income,1787.76\n\
                2024-07-02,Deposit,test 2,Income,1787.76\n2024-06-02,Deposit,test 3,Inc";
    lines_add_up(text.as_bytes()).unwrap();
    let parsed = parse(text.as_bytes(), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.lines.total, 5);
}
