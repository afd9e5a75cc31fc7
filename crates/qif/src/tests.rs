//! QIF written for the rules the corpus leaves out on purpose: a file whose dates read both
//! ways, one that mixes the orders, several accounts, decimal commas, a split that does not add up, a transfer.

use kakeibo_money::Currency;
use kakeibo_statement::{DateOrder, ImportError, ParseOptions, Parsed};

use super::parse;

fn read(text: &str, options: &ParseOptions) -> Result<Parsed, ImportError> {
    parse(text.as_bytes(), "a test", options)
}

fn usd() -> ParseOptions {
    ParseOptions {
        currency: Some(Currency::USD),
        ..ParseOptions::default()
    }
}

#[test]
fn dates_that_read_both_ways_are_asked_then_taken_as_told() {
    let text = "!Type:Bank\nD01/02/2024\nT-5.00\nPCoffee\n^\nD03/04/2024\nT-6.00\nPTea\n^\n";
    let refused = read(text, &usd()).unwrap_err().to_string();
    assert!(refused.contains("--date-order"), "{refused}");
    let mut options = usd();
    options.mapping.date_order = Some(DateOrder::DayFirst);
    let parsed = read(text, &options).unwrap();
    assert_eq!(parsed.rows.first().unwrap().date.to_string(), "2024-02-01");
    // One date past 12 decides the whole file.
    let decided = read(&format!("{text}D25/04/2024\nT-1.00\nPBun\n^\n"), &usd()).unwrap();
    assert_eq!(decided.format.date_order, DateOrder::DayFirst);
    assert_eq!(decided.rows.get(1).unwrap().date.to_string(), "2024-04-03");
}

#[test]
fn a_file_that_mixes_the_orders_reads_each_date_that_says_its_own_way() {
    // Records exported under two settings: 13/01 says day-first, 01/25 month-first, and the
    // majority (two day-first dates to one) reads 02/03 as 2 March.
    let text = "!Type:Bank\nD13/01/2024\nT-5.00\nPCoffee\n^\nD01/25/2024\nT-6.00\nPTea\n^\n\
                D02/03/2024\nT-7.00\nPBun\n^\nD20/03/2024\nT-8.00\nPJam\n^\n";
    let parsed = read(text, &usd()).unwrap();
    let dates: Vec<String> = parsed.rows.iter().map(|r| r.date.to_string()).collect();
    assert_eq!(dates, ["2024-01-13", "2024-01-25", "2024-03-02", "2024-03-20"]);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.format.date_order, DateOrder::DayFirst);
    assert!(
        parsed
            .format
            .date_order_reason
            .starts_with("the file mixes the orders: 2 date(s) read day-first only (line 2 reads 13/01/2024), 1 month-first only (line 6 reads 01/25/2024)"),
        "{}",
        parsed.format.date_order_reason
    );
}

#[test]
fn accounts_splits_transfers_and_decimal_commas() {
    let text = "!Account\nNEveryday\nTBank\n^\nNCard\nTCCard\n^\n!Option:AutoSwitch\n!Clear:AutoSwitch\n\
                !Account\nNEveryday\nTBank\n^\n!Type:Bank\nD12/21' 7\nT-1.234,50\nPRent\nL[Savings]\n^\n\
                D12/22' 7\nT100,00\nPShop\nSFood\n$60,00\nSHouse\n$30,00\n^\n\
                D12/24' 7\nT-50,00\nPMarket\nSFood:Groceries\n$-35,00\nSHousehold\n$-15,00\n^\n\
                !Account\nNCard\nTCCard\n^\n!Type:CCard\nD12/23'07\nT-9,99\nPBooks\nLLeisure\n^\n";
    let Err(ImportError::SeveralStatements { statements }) = read(text, &usd()) else {
        panic!("two accounts");
    };
    assert_eq!(
        statements,
        vec!["Everyday (Bank, 3 transactions)", "Card (CCard, 1 transaction)"]
    );
    let options = ParseOptions {
        statement: Some(1),
        ..usd()
    };
    let everyday = read(text, &options).unwrap();
    let rows: Vec<(String, i64, &str)> = everyday
        .rows
        .iter()
        .map(|r| (r.date.to_string(), r.amount_minor, r.description.as_str()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("2007-12-21".to_owned(), -123_450, "Rent · transfer to Savings"),
            ("2007-12-22".to_owned(), 10_000, "Shop"),
            ("2007-12-24".to_owned(), -5000, "Market")
        ]
    );
    // Splits that add up are the row's parts, each to its category; those that do not leave
    // the row whole.
    let parts: Vec<Vec<(&str, i64)>> = everyday
        .rows
        .iter()
        .map(|r| {
            r.splits()
                .iter()
                .map(|s| (s.category.as_str(), s.amount_minor))
                .collect()
        })
        .collect();
    assert_eq!(
        parts,
        vec![
            vec![],
            vec![],
            vec![("Food:Groceries", -3500), ("Household", -1500)]
        ]
    );
    let notes = everyday.format.statement.as_ref().unwrap().notes.join("\n");
    assert!(
        notes.contains("split Food $60.00, House $30.00 (they do not add up to it)"),
        "{notes}"
    );
    assert!(
        notes.contains("split Food:Groceries -$35.00, Household -$15.00; each part booked to its category"),
        "{notes}"
    );
    let card = read(
        text,
        &ParseOptions {
            statement: Some(2),
            ..usd()
        },
    )
    .unwrap();
    assert_eq!(card.rows.first().unwrap().category.as_deref(), Some("Leisure"));
    assert_eq!(
        card.format.account_kind.as_ref().map(|k| k.kind),
        Some(kakeibo_money::AccountKind::Card)
    );
    assert_eq!(card.lines.accounted(), card.lines.total, "{:?}", card.lines);
}

#[test]
fn an_investment_file_is_refused_in_words() {
    let text = "!Type:Invst\nD8/25'93\nNShrsIn\nYFranklin Income\nI2.313\nQ4,151.00\n^\n";
    let refused = read(text, &usd()).unwrap_err().to_string();
    assert!(refused.contains("investment account"), "{refused}");
}
