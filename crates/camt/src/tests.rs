//! camt documents written for the rules the corpus leaves out on purpose: two statements, a
//! pending entry, a reversal, a batch, an ISO-8859-1 file, an entry in another currency, and
//! bad input.

use kakeibo_money::Currency;
use kakeibo_statement::{CamtMessage, Closing, ImportError, ParseOptions, Parsed, StatementFormat};

use super::parse;

fn read(text: &[u8], statement: Option<usize>) -> Result<Parsed, ImportError> {
    let options = ParseOptions {
        statement,
        ..ParseOptions::default()
    };
    let format = StatementFormat::Camt {
        message: CamtMessage::Statement,
        version: Some(2),
    };
    parse(text, format, "a test", &options)
}

fn entry(amount: &str, way: &str, status: &str, booked: &str, extra: &str) -> String {
    format!(
        "<Ntry><Amt Ccy=\"EUR\">{amount}</Amt><CdtDbtInd>{way}</CdtDbtInd>{extra}<Sts>{status}</Sts>\
         <BookgDt><Dt>{booked}</Dt></BookgDt><ValDt><Dt>{booked}</Dt></ValDt></Ntry>\n"
    )
}

fn statement(iban: &str, opening: &str, closing: &str, entries: &str) -> String {
    format!(
        "<Stmt><Id>S-{iban}</Id><Acct><Id><IBAN>{iban}</IBAN></Id><Tp><Cd>CACC</Cd></Tp><Ccy>EUR</Ccy></Acct>\n\
         <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{opening}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-03-01</Dt></Dt></Bal>\n\
         <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{closing}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-03-31</Dt></Dt></Bal>\n\
         {entries}</Stmt>\n"
    )
}

fn document(statements: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">\
         <BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr>\n{statements}</BkToCstmrStmt></Document>\n"
    )
}

#[test]
fn two_statements_one_at_a_time_with_their_balances_checked() {
    let batch = "<NtryDtls><Btch><NbOfTxs>2</NbOfTxs></Btch>\
        <TxDtls><Amt Ccy=\"EUR\">21.87</Amt><CdtDbtInd>DBIT</CdtDbtInd><RltdPties><Cdtr><Nm>Gas Co</Nm></Cdtr></RltdPties></TxDtls>\
        <TxDtls><Amt Ccy=\"EUR\">12.96</Amt><CdtDbtInd>DBIT</CdtDbtInd><RltdPties><Cdtr><Nm>Water Co</Nm></Cdtr></RltdPties></TxDtls></NtryDtls>";
    let first = [
        entry("34.83", "DBIT", "BOOK", "2024-03-05", "").replace("</ValDt>", &format!("</ValDt>{batch}")),
        entry("100.00", "CRDT", "BOOK", "2024-03-06", "<RvslInd>true</RvslInd>"),
        entry("5.00", "DBIT", "PDNG", "2024-03-30", ""),
    ]
    .concat();
    let second = entry("1.00", "CRDT", "BOOK", "2024-03-07", "");
    let text = document(
        &[
            statement("DE89370400440532013000", "50.00", "115.17", &first),
            statement("DE02120300000000202051", "0", "1.00", &second),
        ]
        .concat(),
    );
    let Err(ImportError::SeveralStatements { statements }) = read(text.as_bytes(), None) else {
        panic!("two statements are named");
    };
    assert_eq!(statements.len(), 2);
    assert!(statements.first().unwrap().contains("…3000"), "{statements:?}");

    let parsed = read(text.as_bytes(), Some(1)).unwrap();
    let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(
        amounts,
        vec![-3483, 10_000],
        "one row per booked entry, signed by CdtDbtInd"
    );
    assert!(parsed.rows.iter().all(|r| r.currency == Currency::EUR));
    assert_eq!(parsed.rows.first().unwrap().description, "Gas Co");
    assert!(parsed.rows.get(1).unwrap().description.starts_with("Reversal: "));
    assert_eq!(parsed.skipped.len(), 1, "the pending entry is kept out");
    assert!(parsed.skipped.first().unwrap().message.starts_with("pending"));
    let info = parsed.format.statement.as_ref().unwrap();
    assert_eq!(
        info.closing,
        Some(Closing {
            date: chrono::NaiveDate::from_ymd_opt(2024, 3, 31).unwrap(),
            held_minor: 11_517
        })
    );
    let notes = info.notes.join("\n");
    assert!(
        notes.contains("a batch of 2 payments (-€21.87 + -€12.96 = -€34.83, the entry's amount)"),
        "{notes}"
    );
    assert!(
        notes.contains("plus the booked entries €65.17 is the closing booked balance €115.17"),
        "{notes}"
    );
    assert!(notes.contains("a reversal (RvslInd)"), "{notes}");
    assert_eq!(parsed.lines.accounted(), parsed.lines.total, "{:?}", parsed.lines);

    let second = read(text.as_bytes(), Some(2)).unwrap();
    assert_eq!(second.rows.len(), 1);
}

#[test]
fn a_broken_balance_is_said_and_a_negative_amount_refused() {
    let entries = [
        entry("10.00", "DBIT", "BOOK", "2024-03-05", ""),
        entry("-3.00", "DBIT", "BOOK", "2024-03-06", ""),
    ]
    .concat();
    let text = document(&statement("DE89370400440532013000", "50.00", "45.00", &entries));
    let parsed = read(text.as_bytes(), None).unwrap();
    assert_eq!(parsed.rows.len(), 1);
    assert!(parsed.errors.first().unwrap().message.contains("negative"));
    let notes = parsed.format.statement.as_ref().unwrap().notes.join("\n");
    assert!(
        notes.contains("is €40.00, not the closing booked balance €45.00"),
        "{notes}"
    );
}

#[test]
fn version_8_status_latin1_bytes_and_another_currency() {
    let mut bytes = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<Document><BkToCstmrStmt><Stmt>\
        <Acct><Id><Othr><Id>12345</Id></Othr></Id><Ccy>CHF</Ccy></Acct>\
        <Ntry><Amt Ccy=\"CHF\">7.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>2024-01-31T23:30:00-05:00</DtTm></BookgDt>\
        <NtryDtls><TxDtls><RltdPties><Cdtr><Pty><Nm>B\xe4ckerei M\xfcller</Nm></Pty></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>\
        <Ntry><Amt Ccy=\"USD\">3.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2024-02-01</Dt></BookgDt></Ntry>\
        </Stmt></BkToCstmrStmt></Document>"
        .to_vec();
    bytes.push(b'\n');
    let parsed = read(&bytes, None).unwrap();
    let first = parsed.rows.first().unwrap();
    assert_eq!(first.description, "Bäckerei Müller");
    assert_eq!(
        first.date.to_string(),
        "2024-01-31",
        "the date as written, not moved by its offset"
    );
    assert_eq!(
        (first.amount_minor, first.currency),
        (-750, Currency::parse("CHF").unwrap())
    );
    let second = parsed.rows.get(1).unwrap();
    assert_eq!((second.amount_minor, second.currency), (-300, Currency::USD));
    assert!(
        parsed.format.encoding.starts_with("windows-1252"),
        "{}",
        parsed.format.encoding
    );
}

#[test]
fn bad_documents_are_refused_in_words() {
    let refused = |text: &str| read(text.as_bytes(), None).unwrap_err().to_string();
    assert!(refused("<Document><BkToCstmrStmt><Stmt><Ntry>").contains("not well-formed"));
    assert!(refused("<Document><BkToCstmrStmt></BkToCstmrStmt></Document>").contains("holds no statement"));
    let deep = format!("<Document>{}", "<X>".repeat(100));
    assert!(refused(&deep).contains("deeper than"));
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>\
        <Document><BkToCstmrStmt><Stmt><Acct><Ccy>EUR</Ccy></Acct><Ntry><Amt Ccy=\"EUR\">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>\
        <Sts>BOOK</Sts><BookgDt><Dt>2024-01-01</Dt></BookgDt><AddtlNtryInf>&b;</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>";
    let parsed = read(laughs.as_bytes(), None).unwrap();
    assert_eq!(parsed.rows.first().unwrap().description, "&b;", "never expanded");
}
