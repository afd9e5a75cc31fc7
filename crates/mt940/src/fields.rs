//! An MT940/MT942 message's fields read by SWIFT's rules: a balance (`:60F:`, `:62F:`), a
//! statement line (`:61:`) with its dates, its debit/credit mark, funds code, amount and
//! references, and the information to the account owner (`:86:`), structured or free.

use chrono::{Datelike, NaiveDate};
use kakeibo_money::{Currency, Money};

/// A `YYMMDD` date: the year 20YY below 80, else 19YY. A day past the month's end (30 February,
/// which some banks write) is the month's last day, said in the second value.
pub fn short_date(text: &str) -> Result<(NaiveDate, Option<String>), String> {
    let digits = text.get(..6).filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
    let parts = digits.and_then(|d| {
        let yy: i32 = d.get(..2)?.parse().ok()?;
        let month: u32 = d.get(2..4)?.parse().ok()?;
        let day: u32 = d.get(4..6)?.parse().ok()?;
        Some((
            if yy < 80 {
                2000_i32.saturating_add(yy)
            } else {
                1900_i32.saturating_add(yy)
            },
            month,
            day,
        ))
    });
    let Some((year, month, day)) = parts else {
        return Err(format!(
            "{:?} is not a date (YYMMDD)",
            text.get(..6).unwrap_or(text)
        ));
    };
    dated(year, month, day)
}

/// A date from its parts; a day past the month's end is the month's last day, with a sentence.
pub fn dated(year: i32, month: u32, day: u32) -> Result<(NaiveDate, Option<String>), String> {
    if let Some(date) = NaiveDate::from_ymd_opt(year, month, day) {
        return Ok((date, None));
    }
    let last = (28..=31)
        .rev()
        .find_map(|d| NaiveDate::from_ymd_opt(year, month, d))
        .filter(|last| day > last.day() && day <= 31)
        .ok_or_else(|| format!("{year:04}-{month:02}-{day:02} is not a date"))?;
    Ok((
        last,
        Some(format!(
            "the bank wrote day {day} of a month of {} days: dated {last}, the month's last day",
            last.day()
        )),
    ))
}

/// A balance field (`C181126EUR13564,13`): held (debit negative), its date and currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub date: NaiveDate,
    pub currency: Currency,
    pub minor: i64,
}

pub fn balance(text: &str) -> Result<Balance, String> {
    let text = text.trim();
    let mark = text.get(..1).ok_or("an empty balance")?;
    let (date, _) = short_date(text.get(1..7).unwrap_or_default())?;
    let currency = Currency::parse(text.get(7..10).unwrap_or_default()).map_err(|e| e.to_string())?;
    let minor = Money::parse_exact(text.get(10..).unwrap_or_default(), currency)
        .map_err(|e| e.to_string())?
        .amount_minor;
    match mark {
        "C" => Ok(Balance {
            date,
            currency,
            minor,
        }),
        "D" => Ok(Balance {
            date,
            currency,
            minor: minor.saturating_neg(),
        }),
        other => Err(format!("the balance's mark {other:?} is neither C nor D")),
    }
}

/// A statement line (`:61:`) as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub value_date: NaiveDate,
    /// The entry (booking) date, when the line has one: the date the row posts on.
    pub entry_date: Option<NaiveDate>,
    /// Money in positive. A reversal (`RC`/`RD`) moves money the other way from its letter's.
    pub minor: i64,
    pub reversal: bool,
    /// The transaction type code (`NTRF`, `NMSC`, …), the account owner's reference and the
    /// bank's (after `//`), and the supplementary details (the field's second line).
    pub kind: String,
    pub reference: String,
    pub bank_reference: String,
    pub details: String,
    pub notes: Vec<String>,
}

/// Reads a `:61:` field: `YYMMDD[MMDD](C|D|RC|RD)[funds code]amount type reference[//bank
/// reference]` and an optional second line. `CR…` is a credit with funds code R, not a
/// reversal; a reversal of a credit (`RC`) takes money out, of a debit (`RD`) puts it in.
pub fn statement_line(text: &str, currency: Currency) -> Result<Line, String> {
    let (first, details) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    let (value_date, mut notes) = match short_date(first) {
        Ok((date, note)) => (date, note.into_iter().collect::<Vec<_>>()),
        Err(why) => return Err(why),
    };
    let mut rest = first.get(6..).unwrap_or_default();
    let mut entry_date = None;
    let entry_digits = rest.get(..4).filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
    if let Some(digits) = entry_digits {
        let month: u32 = digits.get(..2).and_then(|m| m.parse().ok()).unwrap_or(0);
        let day: u32 = digits.get(2..).and_then(|d| d.parse().ok()).unwrap_or(0);
        // The entry's year is the value date's, but for a booking across the new year.
        let year = match (value_date.month(), month) {
            (1, 12) => value_date.year().saturating_sub(1),
            (12, 1) => value_date.year().saturating_add(1),
            _ => value_date.year(),
        };
        let (date, note) = dated(year, month, day)?;
        notes.extend(note);
        entry_date = Some(date);
        rest = rest.get(4..).unwrap_or_default();
    }
    let (reversal, credit, after_mark) = if let Some(r) = rest.strip_prefix("RC") {
        (true, false, r)
    } else if let Some(r) = rest.strip_prefix("RD") {
        (true, true, r)
    } else if let Some(r) = rest.strip_prefix('C') {
        (false, true, r)
    } else if let Some(r) = rest.strip_prefix('D') {
        (false, false, r)
    } else {
        return Err(format!(
            "{:?} has no debit/credit mark (C, D, RC or RD)",
            clip(first)
        ));
    };
    // A funds code: one letter before the amount's first digit.
    let after_funds = match after_mark.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => after_mark.get(1..).unwrap_or_default(),
        _ => after_mark,
    };
    let amount_len = after_funds
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(after_funds.len());
    let amount_text = after_funds.get(..amount_len).unwrap_or_default();
    if amount_text.is_empty() {
        return Err(format!("{:?} has no amount", clip(first)));
    }
    let minor = Money::parse_exact(amount_text, currency)
        .map_err(|e| e.to_string())?
        .amount_minor;
    let tail = after_funds.get(amount_len..).unwrap_or_default();
    let kind = tail.get(..4).unwrap_or(tail).to_owned();
    let references = tail.get(4..).unwrap_or_default();
    let (reference, bank_reference) = references.split_once("//").unwrap_or((references, ""));
    Ok(Line {
        value_date,
        entry_date,
        minor: if credit { minor } else { minor.saturating_neg() },
        reversal,
        kind,
        reference: reference.trim().to_owned(),
        bank_reference: bank_reference.trim().to_owned(),
        details: details.split_whitespace().collect::<Vec<_>>().join(" "),
        notes,
    })
}

/// Whether a `:86:` field is structured: three digits (the business code) and a `?`.
fn structured(text: &str) -> bool {
    text.len() > 4
        && text
            .get(..3)
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
        && text.get(3..4) == Some("?")
}

/// What a `:86:` field says: structured (German banks' `GVC?00…?20…?32…`) or free text. The
/// counterparty's name and the purpose, joined; free text as written, its lines joined.
pub fn information(text: &str) -> String {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if !structured(text) {
        return squeeze(&text.replace('\n', " "));
    }
    // Sub-fields wrap across lines mid-word: the lines are joined as they are.
    let joined = text.replace(['\n', '\r'], "");
    let (mut name, mut purpose, mut booking) = (String::new(), String::new(), String::new());
    for part in joined.split('?').skip(1) {
        let (code, value) = (
            part.get(..2).unwrap_or_default(),
            part.get(2..).unwrap_or_default(),
        );
        match code {
            "00" => booking.push_str(value),
            "20" | "21" | "22" | "23" | "24" | "25" | "26" | "27" | "28" | "29" | "60" | "61" | "62"
            | "63" => {
                purpose.push_str(value);
            }
            "32" | "33" => name.push_str(value),
            _ => {}
        }
    }
    let words: Vec<String> = [name, purpose]
        .iter()
        .map(|s| squeeze(s))
        .filter(|s| !s.is_empty())
        .collect();
    if words.is_empty() {
        squeeze(&booking)
    } else {
        words.join(" · ")
    }
}

/// The counterparty's account of a structured `:86:` field (sub-field `?31`, an IBAN or an
/// account number), when it has one.
pub fn counterparty_account(text: &str) -> Option<String> {
    if !structured(text) {
        return None;
    }
    let joined = text.replace(['\n', '\r'], "");
    joined
        .split('?')
        .skip(1)
        .find_map(|part| part.strip_prefix("31"))
        .map(|value| value.split_whitespace().collect::<String>())
        .filter(|value| !value.is_empty())
}

pub fn clip(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(40).collect::<String>())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn statement_lines_by_the_rules() {
        let eur = Currency::EUR;
        let line = statement_line("1811271127DR119,35NDDTNONREF", eur).unwrap();
        assert_eq!(
            (line.value_date, line.entry_date, line.minor, line.reversal),
            (day(2018, 11, 27), Some(day(2018, 11, 27)), -11_935, false)
        );
        assert_eq!(line.kind, "NDDT");
        let line = statement_line("0709040904CR300,NTRFTFNr 40005 MSGID//0724710345313905", eur).unwrap();
        assert_eq!(
            (line.minor, line.reversal),
            (30_000, false),
            "CR is a credit with funds code R"
        );
        assert_eq!(line.bank_reference, "0724710345313905");
        let line = statement_line("0709040904RCR204,88NRTINONREF", eur).unwrap();
        assert_eq!(
            (line.minor, line.reversal),
            (-20_488, true),
            "a reversal of a credit takes money out"
        );
        let line = statement_line("1610301031D0,42MCI0NONREF//055001022000001\nYAY MT942 CHG", eur).unwrap();
        assert_eq!((line.minor, line.details.as_str()), (-42, "YAY MT942 CHG"));
        let line = statement_line("1602300301DR6,00N024NONREF", eur).unwrap();
        assert_eq!(line.value_date, day(2016, 2, 29));
        assert_eq!(line.entry_date, Some(day(2016, 3, 1)));
        assert!(line.notes.first().unwrap().contains("day 30"));
        let across = statement_line("2501021231D5,00NMSCNONREF", eur).unwrap();
        assert_eq!(
            across.entry_date,
            Some(day(2024, 12, 31)),
            "booked in the old year"
        );
        assert!(statement_line("181127X5,00", eur).is_err());
        assert!(
            statement_line("1811271127D5,005NMSC", eur).is_err(),
            "more decimals than EUR has"
        );
    }

    #[test]
    fn balances_and_information() {
        assert_eq!(
            balance("D070903EUR1234718,36"),
            Ok(Balance {
                date: day(2007, 9, 3),
                currency: Currency::EUR,
                minor: -123_471_836
            })
        );
        assert_eq!(
            information(
                "159?00RETOURE?100399?20EREF+TFNR 40005 00005?21MTLG:Grund nicht s\npezifizie?22rt Reject?32ACME GMBH"
            ),
            "ACME GMBH · EREF+TFNR 40005 00005MTLG:Grund nicht spezifiziert Reject"
        );
        assert_eq!(
            information("basically some information here\nlots of information"),
            "basically some information here lots of information"
        );
    }

    #[test]
    fn the_counterpartys_account_of_a_structured_field() {
        assert_eq!(
            counterparty_account(
                "166?00GUTSCHRIFT?20RENT?30COBADEFF?31DE8937040044\n0532013000?32ME SAVINGS"
            ),
            Some("DE89370400440532013000".to_owned())
        );
        assert_eq!(counterparty_account("166?00GUTSCHRIFT?20RENT?32ME"), None);
        assert_eq!(counterparty_account("free text ?31DE89"), None);
    }
}
