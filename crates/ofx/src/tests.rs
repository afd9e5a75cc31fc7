//! Statements written for the rules the corpus leaves out on purpose: two statements in a file,
//! an OFX 2 header over an SGML body, empty elements, a Windows-1252 file, corrections, a type
//! that contradicts its sign, an investment statement, and bad input of every kind.

use chrono::NaiveDate;
use kakeibo_money::{AccountKind, Currency};
use kakeibo_statement::{Closing, CorrectionAction, ImportError, OfxSyntax, ParseOptions, Parsed};

use super::parse;

const V1_HEADER: &str = "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n";

fn read(text: &[u8], statement: Option<usize>) -> Result<Parsed, ImportError> {
    let options = ParseOptions {
        statement,
        ..ParseOptions::default()
    };
    parse(text, OfxSyntax::Sgml, "a test", &options)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// A bank statement and a card statement in one file (as QuickBooks' QBO downloads are).
fn two_statements() -> String {
    format!(
        "{V1_HEADER}<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20240301</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS><CURDEF>USD<BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST><DTSTART>20240201<DTEND>20240229
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240205120000[-5:EST]<TRNAMT>-4.50<FITID>A1<NAME>COFFEE</STMTTRN>
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240205120000[-5:EST]<TRNAMT>-4.50<FITID>A2<NAME>COFFEE</STMTTRN>
<STMTTRN><TRNTYPE>XFER<DTPOSTED>20240210<TRNAMT>-100.00<FITID>A3<NAME>CARD PAYMENT<CCACCTTO><ACCTID>4111000011112222</CCACCTTO></STMTTRN>
</BANKTRANLIST><LEDGERBAL><BALAMT>891.00<DTASOF>20240229</LEDGERBAL><AVAILBAL><BALAMT>850.00<DTASOF>20240229</AVAILBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1>
<CREDITCARDMSGSRSV1><CCSTMTTRNRS><TRNUID>2<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<CCSTMTRS><CURDEF>USD<CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM>
<BANKTRANLIST><DTSTART>20240201<DTEND>20240229
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240203<TRNAMT>-25.00<FITID>C1<NAME>BOOKS</STMTTRN>
<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240211<TRNAMT>100.00<FITID>C2<NAME>PAYMENT THANK YOU</STMTTRN>
</BANKTRANLIST><LEDGERBAL><BALAMT>-150.00<DTASOF>20240229</LEDGERBAL></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1>
</OFX>
"
    )
}

#[test]
fn a_file_of_two_statements_is_read_one_at_a_time() {
    let text = two_statements();
    let Err(ImportError::SeveralStatements { statements }) = read(text.as_bytes(), None) else {
        panic!("several statements must be named");
    };
    assert_eq!(
        statements,
        vec![
            "checking account …6789 (USD, 3 transactions)".to_owned(),
            "credit card …2222 (USD, 2 transactions)".to_owned()
        ]
    );
    let bank = read(text.as_bytes(), Some(1)).unwrap();
    let amounts: Vec<i64> = bank.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(
        amounts,
        vec![-450, -450, -10000],
        "two equal purchases are two rows"
    );
    let refs: Vec<Option<&str>> = bank.rows.iter().map(|r| r.bank_ref.as_deref()).collect();
    assert_eq!(refs, vec![Some("A1"), Some("A2"), Some("A3")]);
    assert!(
        bank.rows
            .iter()
            .all(|r| r.date >= day(2024, 2, 5) && r.currency == Currency::USD)
    );
    assert_eq!(
        bank.rows.get(2).map(|r| r.description.as_str()),
        Some("CARD PAYMENT · transfer to account …2222")
    );
    let info = bank.format.statement.as_ref().unwrap();
    assert_eq!((info.number, info.of), (1, 2));
    assert_eq!(
        info.closing,
        Some(Closing {
            date: day(2024, 2, 29),
            held_minor: 89_100
        })
    );
    assert_eq!(info.available.map(|a| a.held_minor), Some(85_000));
    assert_eq!(
        bank.format.account_kind.as_ref().map(|k| k.kind),
        Some(AccountKind::Checking)
    );
    assert_eq!(bank.lines.accounted(), bank.lines.total, "{:?}", bank.lines);

    let card = read(text.as_bytes(), Some(2)).unwrap();
    assert_eq!(
        card.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        vec![-2500, 10_000]
    );
    assert_eq!(
        card.format.account_kind.as_ref().map(|k| k.kind),
        Some(AccountKind::Card)
    );
    assert_eq!(card.format.closing().map(|c| c.held_minor), Some(-15_000));
    assert!(matches!(
        read(text.as_bytes(), Some(3)),
        Err(ImportError::Statement(_))
    ));
}

#[test]
fn an_ofx2_header_over_an_sgml_body_with_empty_elements() {
    let text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?OFX OFXHEADER=\"200\" VERSION=\"211\"?>\n<OFX>\n\
        <BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR\n<BANKACCTFROM><BANKID><ACCTID>FR76 3000<ACCTTYPE>SAVINGS</BANKACCTFROM>\n\
        <BANKTRANLIST><DTSTART><DTEND>\n\
        <STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240105<TRNAMT>12,50<FITID><NAME><MEMO>Interest</STMTTRN>\n\
        <STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240105<TRNAMT>12,50<FITID><NAME><MEMO>Interest</STMTTRN>\n\
        </BANKTRANLIST><LEDGERBAL><BALAMT><DTASOF></LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n";
    let parsed = read(text.as_bytes(), None).unwrap();
    assert_eq!(parsed.rows.len(), 2, "{parsed:?}");
    for row in &parsed.rows {
        assert_eq!((row.amount_minor, row.currency), (1250, Currency::EUR));
        assert_eq!(row.description, "Interest");
        assert_eq!(row.bank_ref, None, "an empty FITID is no id");
    }
    let info = parsed.format.statement.as_ref().unwrap();
    assert_eq!(info.closing, None);
    assert!(
        info.notes.iter().any(|n| n.contains("LEDGERBAL")),
        "{:?}",
        info.notes
    );
    assert_eq!(
        parsed.format.account_kind.as_ref().map(|k| k.kind),
        Some(AccountKind::Savings)
    );
}

#[test]
fn a_windows_1252_file_keeps_its_accents_and_entities() {
    let mut bytes = V1_HEADER.as_bytes().to_vec();
    bytes.extend_from_slice(
        b"<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>CAD<BANKACCTFROM><ACCTID>1</BANKACCTFROM><BANKTRANLIST>\
          <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20230509<TRNAMT>-1.00<FITID>9<NAME>Carte pr\xe9pay\xe9e &amp; co</STMTTRN>\
          </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>",
    );
    let parsed = read(&bytes, None).unwrap();
    assert_eq!(
        parsed.rows.first().map(|r| r.description.as_str()),
        Some("Carte prépayée & co")
    );
    assert!(
        parsed.format.encoding.starts_with("windows-1252"),
        "{}",
        parsed.format.encoding
    );
}

#[test]
fn a_type_against_its_sign_is_reported_and_corrections_are_read() {
    let text = format!(
        "{V1_HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><ACCTID>1</BANKACCTFROM><BANKTRANLIST>
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240102<TRNAMT>30.00<FITID>1<NAME>REFUND?</STMTTRN>
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240103<TRNAMT>-5.00<FITID>2<CORRECTFITID>1<CORRECTACTION>REPLACE<NAME>FIX</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>20240104<TRNAMT>0.00<FITID>3<NAME>AUTH</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>00000000<TRNAMT>-1.00<FITID>4<NAME>BAD DATE</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>20240105<TRNAMT>-1.005<FITID>5<NAME>BAD AMOUNT</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>20240106<TRNAMT>-9.00<FITID>6<CORRECTFITID>0<CORRECTACTION>DELETE</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>20240106<TRNAMT>-9.00<FITID>7<CORRECTFITID>0<CORRECTACTION>UNDO</STMTTRN>
<STMTTRN><TRNTYPE>POS<DTPOSTED>20240106<TRNAMT>-9.00<FITID>8<CORRECTACTION>DELETE</STMTTRN>
</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>
"
    );
    let parsed = read(text.as_bytes(), None).unwrap();
    assert_eq!(
        parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        vec![3000, -500],
        "booked as signed; a replacing row is a row"
    );
    let corrections: Vec<(usize, &str, CorrectionAction)> = parsed
        .corrections
        .iter()
        .map(|c| (c.line, c.bank_ref.as_str(), c.action))
        .collect();
    assert_eq!(
        corrections,
        vec![
            (13, "1", CorrectionAction::Replace),
            (17, "0", CorrectionAction::Delete)
        ]
    );
    let notes = &parsed.format.statement.as_ref().unwrap().notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("TRNTYPE DEBIT says money out but TRNAMT 30.00 is positive")),
        "{notes:?}"
    );
    let skipped: Vec<&str> = parsed.skipped.iter().map(|s| s.message.as_str()).collect();
    assert!(
        skipped
            .iter()
            .any(|m| m.contains("CORRECTACTION \"UNDO\", which is neither REPLACE nor DELETE")),
        "{skipped:?}"
    );
    assert!(
        skipped.iter().any(|m| m.contains("names no transaction")),
        "{skipped:?}"
    );
    assert!(
        skipped.iter().any(|m| m.contains("moves no money")),
        "{skipped:?}"
    );
    let errors: Vec<(Option<&str>, &str)> = parsed
        .errors
        .iter()
        .map(|e| (e.column.as_deref(), e.message.as_str()))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors.first().and_then(|e| e.0), Some("DTPOSTED"));
    assert_eq!(errors.get(1).and_then(|e| e.0), Some("TRNAMT"));
    assert_eq!(parsed.lines.accounted(), parsed.lines.total, "{:?}", parsed.lines);
}

#[test]
fn an_investment_statement_gives_its_cash_lines_and_names_what_it_leaves_out() {
    let text = format!(
        "{V1_HEADER}<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS><DTASOF>20240301<CURDEF>USD
<INVACCTFROM><BROKERID>broker.example<ACCTID>777</INVACCTFROM>
<INVTRANLIST><DTSTART>20240101<DTEND>20240301
<BUYSTOCK><INVBUY><INVTRAN><FITID>B1<DTTRADE>20240110</INVTRAN><SECID><UNIQUEID>123<UNIQUEIDTYPE>CUSIP</SECID><UNITS>10<UNITPRICE>5<TOTAL>-50</INVBUY><BUYTYPE>BUY</BUYSTOCK>
<INVBANKTRAN><STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240105<TRNAMT>500.00<FITID>D1<NAME>DEPOSIT</STMTTRN><SUBACCTFUND>CASH</INVBANKTRAN>
</INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>
"
    );
    let parsed = read(text.as_bytes(), None).unwrap();
    assert_eq!(
        parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        vec![50_000]
    );
    assert_eq!(parsed.skipped.len(), 1);
    assert!(
        parsed
            .skipped
            .first()
            .unwrap()
            .message
            .starts_with("BUYSTOCK is a securities transaction")
    );
}

#[test]
fn bad_input_is_refused_in_words() {
    let refused = |bytes: &[u8]| match read(bytes, None) {
        Err(e) => e.to_string(),
        Ok(parsed) => panic!("read: {parsed:?}"),
    };
    let cut = format!(
        "{V1_HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST><STMTTRN><TRNAMT>-1"
    );
    assert!(refused(cut.as_bytes()).contains("cut short"));
    let error = format!(
        "{V1_HEADER}<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>15500<SEVERITY>ERROR<MESSAGE>Signon invalid</STATUS></SONRS></SIGNONMSGSRSV1></OFX>"
    );
    assert!(refused(error.as_bytes()).contains("code 15500 (Signon invalid)"));
    assert!(
        refused(format!("{V1_HEADER}<OFX></OFX>").as_bytes())
            .contains("no bank, card or investment statement")
    );
    let deep = format!("{V1_HEADER}<OFX>{}", "<AGG>\n".repeat(10_000));
    assert!(refused(deep.as_bytes()).contains("deeper than"));
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\
        <?OFX OFXHEADER=\"200\"?><OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD</CURDEF><BANKTRANLIST>\
        <STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20240101</DTPOSTED><TRNAMT>-1</TRNAMT><FITID>1</FITID><NAME>&lol1;</NAME></STMTTRN>\
        </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
    let parsed = read(laughs.as_bytes(), None).unwrap();
    assert_eq!(
        parsed.rows.first().map(|r| r.description.as_str()),
        Some("&lol1;"),
        "never expanded"
    );
    assert!(matches!(read(b"   ", None), Err(ImportError::Empty)));
}
