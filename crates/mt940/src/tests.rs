//! MT940 and MT942 written for the rules the corpus leaves out on purpose: a SWIFT envelope, two
//! accounts, days of one account, a reversal, a broken balance, an interim report.

use chrono::NaiveDate;
use kakeibo_statement::{ImportError, ParseOptions, Parsed, StatementFormat};

use super::parse;

fn read(text: &str, format: StatementFormat, statement: Option<usize>) -> Result<Parsed, ImportError> {
    let options = ParseOptions {
        statement,
        ..ParseOptions::default()
    };
    parse(text.as_bytes(), format, "a test", &options)
}

const TWO_ACCOUNTS: &str =
    "{1:F01BANKDEFFXXXX0000000000}{2:O9401200250101BANKDEFFXXXX00000000002501011200N}{4:\r
:20:STMT1\r
:25:10020030/1111\r
:28C:1/1\r
:60F:C250101EUR100,00\r
:61:2501020102D20,00NMSCNONREF//B1\r
:86:166?00GUTSCHRIFT?20Rent January?32LANDLORD\r
:61:2501030103RC5,00NMSCNONREF//B2\r
:86:Storno\r
:62F:C250103EUR75,00\r
-}\r
{4:\r
:20:STMT2\r
:25:10020030/1111\r
:28C:2/1\r
:60F:C250103EUR75,00\r
:61:2501040104C25,\r
:62F:C250104EUR100,00\r
-}\r
:20:STMT3\r
:25:10020030/2222\r
:28C:1/1\r
:60F:D250101EUR10,00\r
:61:2501020102D1,00NMSCNONREF\r
:86:fee\r
:62F:D250102EUR12,00\r
-\r
";

#[test]
fn accounts_one_at_a_time_their_days_as_one_statement() {
    let Err(ImportError::SeveralStatements { statements }) = read(TWO_ACCOUNTS, StatementFormat::Mt940, None)
    else {
        panic!("two accounts are named");
    };
    assert_eq!(
        statements,
        vec![
            "account 10020030/1111 (2 messages)",
            "account 10020030/2222 (1 message)"
        ]
    );
    let first = read(TWO_ACCOUNTS, StatementFormat::Mt940, Some(1)).unwrap();
    let rows: Vec<(i64, &str, Option<&str>)> = first
        .rows
        .iter()
        .map(|r| (r.amount_minor, r.description.as_str(), r.bank_ref.as_deref()))
        .collect();
    assert_eq!(
        rows.get(..2),
        Some(
            &[
                (-2000, "LANDLORD · Rent January", Some("B1")),
                (-500, "Reversal: Storno", Some("B2"))
            ][..]
        )
    );
    assert_eq!(first.rows.get(2).map(|r| r.amount_minor), Some(2500));
    let info = first.format.statement.as_ref().unwrap();
    assert_eq!(
        info.closing.map(|c| (c.date, c.held_minor)),
        Some((NaiveDate::from_ymd_opt(2025, 1, 4).unwrap(), 10_000))
    );
    assert!(
        info.notes
            .iter()
            .any(|n| n.contains("2 messages of this account")),
        "{:?}",
        info.notes
    );
    assert!(
        !info.notes.iter().any(|n| n.contains("not its closing")),
        "every message reconciles: {:?}",
        info.notes
    );
    assert_eq!(first.lines.accounted(), first.lines.total, "{:?}", first.lines);

    let second = read(TWO_ACCOUNTS, StatementFormat::Mt940, Some(2)).unwrap();
    assert_eq!(
        second.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        vec![-100]
    );
    let notes = &second.format.statement.as_ref().unwrap().notes;
    assert!(
        notes.iter().any(|n| n.contains(
            "the opening balance -€10.00 plus its lines -€1.00 is -€11.00, not its closing balance -€12.00"
        )),
        "{notes:?}"
    );
}

#[test]
fn an_interim_report_is_pending_and_booked_nowhere() {
    let text = ":20:CGNGHKLI0290980\n:25:GJB0291077111\n:28C:03917/00001\n:34F:EURD0,00\n:13D:1610301730+0000\n\
                :61:1610301031D0,42MCI0NONREF//055001022000001\nYAY MT942 CHG\n:86:REMIT:Costs\n:90D:1EUR2,30\n";
    let parsed = read(text, StatementFormat::Mt942, None).unwrap();
    assert!(parsed.rows.is_empty());
    assert_eq!(parsed.skipped.len(), 1);
    assert!(parsed.skipped.first().unwrap().message.starts_with("pending"));
    assert_eq!(
        parsed.format.statement.as_ref().unwrap().currency,
        Some(kakeibo_money::Currency::EUR)
    );
}

#[test]
fn no_message_is_refused_in_words() {
    let refused = read("just some text\nwith no fields\n", StatementFormat::Mt940, None).unwrap_err();
    assert!(refused.to_string().contains("no message"), "{refused}");
}
