//! The importer over every CSV statement of the reference corpus (`../shared/corpus/bank-csv`):
//! how many parse with no error on their data rows, and, where a file ships the ledger another
//! tool made of it, how many dates and amounts agree. Skipped, saying so, without the corpus.

use crate::corpus;

use std::path::{Path, PathBuf};

use kakeibo_ledger::import::{BalancePosition, Figure, ImportError, ParseOptions, TimeOrder, parse};

fn corpus() -> Option<PathBuf> {
    corpus::bank_csv("", "importer corpus run")
}

#[test]
fn corpus_statements_parse() {
    let Some(root) = corpus() else { return };
    let files = corpus::statements(&root);
    let (mut clean, mut rows) = (0, 0);
    let mut failures = Vec::new();
    let mut unaccounted = Vec::new();
    for path in &files {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let bytes = std::fs::read(path).unwrap();
        let result = parse(&bytes, &ParseOptions::default());
        if let Ok(parsed) = &result {
            let lines = &parsed.lines;
            if lines.accounted() != lines.total || lines.total != physical_lines(&bytes) {
                unaccounted.push(format!(
                    "{name}: {} lines in the file, {} counted, {} accounted for: {lines:?}",
                    physical_lines(&bytes),
                    lines.total,
                    lines.accounted()
                ));
            }
        }
        match result {
            Ok(parsed) if parsed.errors.is_empty() => {
                clean += 1;
                rows += parsed.rows.len();
                eprintln!(
                    "ok    {name}: {} rows ({}, {}, delimiter {}, {:?}, {:?})",
                    parsed.rows.len(),
                    parsed.format.encoding,
                    parsed.format.date_order_reason,
                    parsed.format.delimiter,
                    parsed.format.columns,
                    parsed.format.reconciliation
                );
            }
            Ok(parsed) => {
                rows += parsed.rows.len();
                let first = &parsed.errors[0];
                failures.push(format!(
                    "{name}: {} rows, {} bad rows; first at line {} ({:?}): {}",
                    parsed.rows.len(),
                    parsed.errors.len(),
                    first.line,
                    first.column,
                    first.message
                ));
            }
            Err(e) => failures.push(format!("{name}: refused: {e}")),
        }
    }
    for failure in &failures {
        eprintln!("FAIL  {failure}");
    }
    eprintln!(
        "corpus: {clean} of {} statements parse cleanly, {rows} rows read",
        files.len()
    );
    // Every file that does not parse cleanly is one we know, for the reason given; a new one is
    // a regression.
    let unexpected: Vec<&String> = failures
        .iter()
        .filter(|f| !EXPECTED_FAILURES.iter().any(|(name, _)| f.starts_with(name)))
        .collect();
    assert!(
        unexpected.is_empty(),
        "statements that used to parse cleanly: {unexpected:#?}"
    );
    assert!(
        unaccounted.is_empty(),
        "every physical line is a row, a duplicate, a banner, a blank, a note or an unreadable line: {unaccounted:#?}"
    );
    let _ = ImportError::Empty;
}

/// The file's lines counted from its bytes, not from the importer's text: line feeds (one byte,
/// or two in UTF-16), plus an unterminated last line; a file of carriage returns alone counts those.
fn physical_lines(bytes: &[u8]) -> usize {
    let utf16 = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    let units: Vec<u16> = if utf16 {
        bytes
            .chunks_exact(2)
            .map(|p| {
                if bytes[0] == 0xFF {
                    u16::from_le_bytes([p[0], p[1]])
                } else {
                    u16::from_be_bytes([p[0], p[1]])
                }
            })
            .collect()
    } else {
        bytes.iter().map(|b| u16::from(*b)).collect()
    };
    let terminator = if units.contains(&u16::from(b'\n')) {
        u16::from(b'\n')
    } else {
        u16::from(b'\r')
    };
    let breaks = units.iter().filter(|u| **u == terminator).count();
    breaks + usize::from(units.last().is_some_and(|u| *u != terminator))
}

/// Files that are not clean statements, and why.
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    (
        "hledger/csv__sample.csv",
        "no header, and dates like 10/2009/09 (month/year/day) that only its rules file explains",
    ),
    ("hledger/csv__sample.ssv", "the same sample, semicolon-separated"),
    ("hledger/csv__sample.tsv", "the same sample, tab-separated"),
    (
        "hledger/test__errors__csvamountparse.csv",
        "an error fixture: its third amount is `badamount` (reported, line 5)",
    ),
    (
        "hledger/test__errors__csvbalanceparse.csv",
        "an error fixture: one row with a date and the word badbalance, no amount",
    ),
    (
        "hledger/test__errors__csvdateparse.csv",
        "an error fixture: no amount column at all",
    ),
    (
        "hledger/test__errors__csvstatusparse.csv",
        "an error fixture: dates and status marks, no amount",
    ),
    (
        "ofxstatement-plugins/dutch__Knab_transactieoverzicht_no_lines.csv",
        "a header with no transactions",
    ),
    (
        "ofxstatement-plugins/dutch__NL99INGB9999999999_25-11-2019_30-05-2020.csv",
        "a daily balance history, not transactions",
    ),
    (
        "ofxstatement-plugins/dutch__icscards.txt",
        "a fixed-width text rendering of a PDF statement, not CSV",
    ),
    (
        "hledger/test__errors__csvamountonenonzero.csv",
        "an error fixture: no header and two columns of money, neither the other's balance (refused)",
    ),
    // Rows the balance column contradicts are refused, not booked (figures read from the files):
    (
        "beancount-import/healthequity__data__1234567__cash-transactions-other.csv",
        "line 6: ($1,936.76) against a cash balance that falls by 336.76",
    ),
    (
        "beancount-import/schwab_csv__test_basic__transactions__EAC_Checking_Transactions_20201223-160009.CSV",
        "six rows its running balance does not follow (line 11: 1133.94 + 2500.00 is not 11550.00)",
    ),
    (
        "hledger/csv__apps__ynab4-rtl.csv",
        "two accounts in one file, and a running balance of 0.000 after a 4.750 outflow",
    ),
    (
        "ofxstatement-plugins/lloyds-uk__sample-statement.csv",
        "line 6: 6,039.58 − 5.97 is 6,033.61, but the balance says 6,029.49",
    ),
    (
        "ofxstatement-plugins/revolut__2022-january.csv",
        "a sample whose balances skip: 420.74 − 38.71 is not 223.53, 723.53 − 21.58 is not 425.68; \
         a hold of 0.00 that moves the balance by 21.93",
    ),
    (
        "ofxstatement-plugins/wise__sample-statement.csv",
        "rows in neither order of time, and a gap: 776.27 + 125.00 is not 145.00",
    ),
];

/// (date, signed amount of the statement's own account in minor units) of each transaction in
/// a ledger (`.ledger`, paisa) or beancount (`.beancount`, beangulp) file.
fn expected_entries(text: &str, beancount: bool) -> Vec<(chrono::NaiveDate, i64)> {
    let minor = |number: &str| -> Option<i64> {
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let sign = if whole.starts_with('-') { -1 } else { 1 };
        let whole: i64 = whole.trim_start_matches('-').parse().ok()?;
        let cents: i64 = format!("{fraction:0<2}")[..2].parse().ok()?;
        Some(sign * (whole * 100 + cents))
    };
    let own = text
        .lines()
        .find_map(|l| l.strip_prefix(";; Account: "))
        .map(str::trim)
        .unwrap_or_default()
        .to_owned();
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(date) = line
            .get(..10)
            .and_then(|d| chrono::NaiveDate::parse_from_str(&d.replace('/', "-"), "%Y-%m-%d").ok())
        else {
            continue;
        };
        let mut postings = Vec::new();
        while let Some(next) = lines.peek().filter(|l| l.starts_with(' ')) {
            postings.push(next.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
            lines.next();
        }
        let amount = if beancount {
            postings
                .iter()
                .find(|p| p.first().is_some_and(|a| a.starts_with(&own)))
                .and_then(|p| p.get(1))
                .and_then(|n| minor(n))
        } else {
            // Two postings, one amount: on the statement's account it is that amount, on the
            // other account it is the statement account's amount negated.
            let first = postings.first();
            let value = first.and_then(|p| p.get(1)).and_then(|n| minor(n));
            let on_statement = first
                .and_then(|p| p.first())
                .is_some_and(|a| a.starts_with("Assets") || a.starts_with("Liabilities"));
            value.map(|v| if on_statement { v } else { -v })
        };
        if let Some(amount) = amount {
            out.push((date, amount));
        }
    }
    out
}

#[test]
fn dates_and_amounts_agree_with_other_tools_ledgers() {
    let Some(root) = corpus() else { return };
    let pairs = [
        (
            "paisa-india/HDFC_Account_Statement__statement.txt",
            "paisa-india/HDFC_Account_Statement__statement.ledger",
            false,
        ),
        (
            "paisa-india/ICICI_Credit_Card_Statement__monthly.csv",
            "paisa-india/ICICI_Credit_Card_Statement__monthly.ledger",
            false,
        ),
        (
            "paisa-india/Paytm__statement.csv",
            "paisa-india/Paytm__statement.ledger",
            false,
        ),
        (
            "beangulp/tests__csvbank__statement.csv",
            "beangulp/tests__csvbank__statement.csv.beancount",
            true,
        ),
        (
            "beangulp/tests__utrade__UTrade20140713.csv",
            "beangulp/tests__utrade__UTrade20140713.csv.beancount",
            true,
        ),
    ];
    let (mut expected_total, mut dates_total, mut amounts_total, mut both_total) = (0, 0, 0, 0);
    for (statement, ledger, beancount) in pairs {
        let parsed = parse(
            &std::fs::read(root.join(statement)).unwrap(),
            &ParseOptions::default(),
        )
        .unwrap();
        let expected = expected_entries(&std::fs::read_to_string(root.join(ledger)).unwrap(), beancount);
        let ours: Vec<(chrono::NaiveDate, i64)> =
            parsed.rows.iter().map(|r| (r.date, r.amount_minor)).collect();
        let agree = |key: &dyn Fn(&(chrono::NaiveDate, i64)) -> String| {
            let mut pool: Vec<String> = ours.iter().map(key).collect();
            expected
                .iter()
                .filter(|e| {
                    let k = key(e);
                    pool.iter()
                        .position(|p| *p == k)
                        .map(|i| pool.swap_remove(i))
                        .is_some()
                })
                .count()
        };
        let dates = agree(&|e| e.0.to_string());
        let amounts = agree(&|e| e.1.to_string());
        let both = agree(&|e| format!("{} {}", e.0, e.1));
        eprintln!(
            "expected  {statement}: {} expected, {} ours; dates agree {dates}, amounts agree {amounts}, both {both}",
            expected.len(),
            ours.len()
        );
        expected_total += expected.len();
        dates_total += dates;
        amounts_total += amounts;
        both_total += both;
    }
    eprintln!(
        "expected: {expected_total} transactions; dates agree {dates_total}, amounts agree {amounts_total}, both {both_total}"
    );
    assert!(expected_total > 0);
    assert_eq!(
        (dates_total, amounts_total, both_total),
        (expected_total, expected_total, expected_total)
    );
}

/// The header-less ASN export has two columns of money: the balance before each row (column 9)
/// and the amount (column 11). The balance used to be taken as the amount (11 of 11 rows wrong,
/// and in INR); the column that reconciles as the other's running balance is the balance now, and
/// the currency column names EUR. Figures read from the file.
#[test]
fn the_headerless_asn_export_books_its_amounts_not_its_balances() {
    let Some(root) = corpus() else { return };
    let path =
        root.join("ofxstatement-plugins/dutch__transactie-historie_NL00ASNB9999999999_20220717204133.csv");
    let parsed = parse(&std::fs::read(path).unwrap(), &ParseOptions::default()).unwrap();
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.rows.len(), 11);
    let first: Vec<(String, i64, String)> = parsed.rows[..4]
        .iter()
        .map(|r| (r.date.to_string(), r.amount_minor, r.currency.to_string()))
        .collect();
    let eur = |date: &str, minor: i64| (date.to_owned(), minor, "EUR".to_owned());
    assert_eq!(
        first,
        [
            eur("2022-06-17", 22_377),
            eur("2022-06-17", -20_000),
            eur("2022-06-25", -220),
            eur("2022-06-27", 50_315)
        ]
    );
    let reconciliation = parsed.format.reconciliation.expect("reconciled");
    assert_eq!((reconciliation.checked, reconciliation.reconciled), (10, 10));
    assert_eq!(reconciliation.position, BalancePosition::Before);
    assert_eq!(reconciliation.column, "column 9");
}

/// A row the balance contradicts is refused, with the figures, and the others are read.
#[test]
fn the_lloyds_sample_row_its_balance_contradicts_is_refused() {
    let Some(root) = corpus() else { return };
    let path = root.join("ofxstatement-plugins/lloyds-uk__sample-statement.csv");
    let parsed = parse(&std::fs::read(&path).unwrap(), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
    assert_eq!(parsed.errors[0].line, 6);
    assert!(
        parsed.errors[0]
            .message
            .contains("the balance moved by −10.09 but the amount is −5.97"),
        "{}",
        parsed.errors[0].message
    );
    assert_eq!(parsed.rows.len(), 11);
    let reconciliation = parsed.format.reconciliation.unwrap();
    assert_eq!((reconciliation.checked, reconciliation.reconciled), (11, 10));
    assert_eq!(reconciliation.order, TimeOrder::NewestFirst);
    // Both figures go with the refusal, and the person may take the row in at either.
    let figures = parsed.errors[0].figures.expect("both figures");
    // The file names no currency: the plan gives the figures the account's, as it does the rows.
    assert_eq!(
        (
            figures.amount_minor,
            figures.balance_minor,
            figures.currency_unstated
        ),
        (-597, -1_009, true)
    );
    for (take, minor) in [(Figure::Amount, -597), (Figure::Balance, -1_009)] {
        let options = ParseOptions {
            figures: [(6, take)].into_iter().collect(),
            ..ParseOptions::default()
        };
        let parsed = parse(&std::fs::read(&path).unwrap(), &options).unwrap();
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        assert_eq!(parsed.rows.len(), 12);
        let row = parsed.rows.iter().find(|r| r.line == 6).expect("line 6 taken in");
        assert_eq!(row.amount_minor, minor);
        assert_eq!(parsed.format.taken.len(), 1);
        assert_eq!(parsed.format.taken[0].take, take);
    }
}

/// (line, date, amount in minor units, currency) of each row read from a corpus statement.
fn rows_of(root: &Path, file: &str, options: &ParseOptions) -> Vec<(usize, String, i64, String)> {
    let parsed = parse(&std::fs::read(root.join(file)).unwrap(), options).unwrap();
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    parsed
        .rows
        .iter()
        .map(|r| (r.line, r.date.to_string(), r.amount_minor, r.currency.to_string()))
        .collect()
}

/// Direction from the file. John Lewis: purchases written as positive pounds and a payment as
/// `"+ £1,234.56",CR` in an unnamed column — they used to get the same sign, with --invert too.
/// Mint: an unsigned amount and a `Transaction Type` of debit or credit (2 of 3 signs were wrong).
/// Figures read from the files.
#[test]
fn card_and_mint_exports_take_their_direction_from_the_file() {
    let Some(root) = corpus() else { return };
    let john_lewis = rows_of(
        &root,
        "ofxstatement-plugins/johnlewis-uk__sample-statement.csv",
        &ParseOptions::default(),
    );
    let gbp = |line: usize, date: &str, minor: i64| (line, date.to_owned(), minor, "GBP".to_owned());
    for expected in [
        gbp(2, "2020-03-28", -9_999),
        gbp(3, "2020-03-30", -99),
        gbp(7, "2020-04-21", 123_456),
        gbp(8, "2020-04-21", -1_717),
    ] {
        assert!(john_lewis.contains(&expected), "{expected:?} in {john_lewis:?}");
    }
    // --invert is applied on top of the file's direction, never instead of it.
    let inverted = rows_of(
        &root,
        "ofxstatement-plugins/johnlewis-uk__sample-statement.csv",
        &ParseOptions {
            mapping: kakeibo_ledger::import::Mapping {
                invert: true,
                ..Default::default()
            },
            ..Default::default()
        },
    );
    assert!(inverted.contains(&gbp(7, "2020-04-21", -123_456)), "{inverted:?}");
    assert!(inverted.contains(&gbp(2, "2020-03-28", 9_999)), "{inverted:?}");

    let mint = rows_of(&root, "beancount-import/mint__mint.csv", &ParseOptions::default());
    let signs: Vec<(usize, i64)> = mint.iter().take(3).map(|r| (r.0, r.2)).collect();
    assert_eq!(signs, [(2, -245), (3, 6_688), (4, -6_688)], "{mint:?}");
}

/// A US PayPal export whose every date reads either way (`6/4/2016`): it used to become
/// 2016-04-06, "assumed". The USD on its rows says month first, the preview flags the dates as
/// assumed, and the mapping's date order overrides.
#[test]
fn ambiguous_dates_follow_the_currency_are_flagged_and_can_be_forced() {
    let Some(root) = corpus() else { return };
    let bytes = std::fs::read(root.join("ledger-autosync/paypal.csv")).unwrap();
    let parsed = parse(&bytes, &ParseOptions::default()).unwrap();
    assert_eq!(parsed.rows[0].date.to_string(), "2016-06-04");
    assert!(parsed.format.date_order_assumed);
    let forced = parse(
        &bytes,
        &ParseOptions {
            mapping: kakeibo_ledger::import::Mapping {
                date_order: Some(kakeibo_ledger::import::DateOrder::DayFirst),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(forced.rows[0].date.to_string(), "2016-04-06");
    assert!(!forced.format.date_order_assumed);
}
