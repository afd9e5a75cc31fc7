//! OFX's values read by its rules: a date is the calendar day as written, an amount a signed
//! decimal with `.` or `,` as its radix, a payee the most telling of `NAME`, `PAYEE` and `MEMO`.

use chrono::NaiveDate;
use kakeibo_money::{Currency, Money};

/// The calendar date of an OFX date-time (`YYYYMMDD[HHMMSS[.XXX]][[±h[.mm]][:TZ]]`): its first
/// eight digits as written, never moved through a time zone (OFX rule O6: converting is what puts
/// transactions a day early).
pub fn calendar_date(text: &str) -> Result<NaiveDate, String> {
    let digits = text
        .trim()
        .get(..8)
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
    let date = digits.and_then(|d| {
        let year = d.get(..4)?.parse().ok()?;
        let month = d.get(4..6)?.parse().ok()?;
        let day = d.get(6..8)?.parse().ok()?;
        NaiveDate::from_ymd_opt(year, month, day)
    });
    date.ok_or_else(|| {
        if text.trim().is_empty() {
            "no date".to_owned()
        } else {
            format!("{:?} is not a date (YYYYMMDD…)", clip(text))
        }
    })
}

/// An OFX amount (§3.2.9.1: an optional sign, digits, `.` or `,` as the radix, no grouping, at
/// most 32 characters) in `currency`'s minor units. Digits past the currency's decimals must be
/// zeros (`-3.77000`); anything else is refused rather than rounded.
pub fn amount_minor(text: &str, currency: Currency) -> Result<i64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("no amount".to_owned());
    }
    if text.len() > 32 {
        return Err(format!(
            "{:?} is not an amount: longer than 32 characters",
            clip(text)
        ));
    }
    Money::parse_exact(text, currency)
        .map(|money| money.amount_minor)
        .map_err(|e| e.to_string())
}

/// What a transaction is called: `PAYEE`'s name or `NAME`, unless it is empty or only digits
/// (some banks put a number there and the payee in `MEMO`); `MEMO` instead when it is the same
/// text written out in full (`NAME` holds 32 characters), beside it when it says something else.
pub fn description(name: &str, payee: &str, memo: &str) -> String {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let name = squeeze(if payee.trim().is_empty() { name } else { payee });
    let memo = squeeze(memo);
    let telling = |s: &str| s.chars().any(char::is_alphabetic);
    match (telling(&name), memo.is_empty()) {
        (false, false) => memo,
        (_, true) => name,
        (true, false) if memo.starts_with(&name) => memo,
        (true, false) if memo.contains(&name) || name.contains(&memo) => name,
        (true, false) => format!("{name} · {memo}"),
    }
}

/// Transaction types whose direction is fixed (OFX rule O5): a debit or fee takes money out, a
/// credit puts it in. The rest (`POS`, `CHECK`, `XFER`, `PAYMENT`, …) say nothing of the sign.
pub fn sign_of_type(trntype: &str) -> Option<bool> {
    match trntype.trim().to_ascii_uppercase().as_str() {
        "DEBIT" | "FEE" | "SRVCHG" => Some(false),
        "CREDIT" => Some(true),
        _ => None,
    }
}

/// At most 40 characters of `text`, for a sentence.
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

    #[test]
    fn the_date_is_the_bank_calendar_day_whatever_the_zone() {
        let day = NaiveDate::from_ymd_opt(2009, 4, 1).unwrap();
        for text in [
            "20090401",
            "20090401122017.000[-5:EST]",
            "20090401235959[+14]",
            "20090401000000[-3.5:NST]",
            "20090401120000[-:TZ]",
        ] {
            assert_eq!(calendar_date(text), Ok(day), "{text}");
        }
        assert!(calendar_date("00000000").is_err());
        assert!(calendar_date("2009-04-01").is_err());
        assert!(calendar_date("").is_err());
    }

    #[test]
    fn amounts_by_the_spec() {
        assert_eq!(amount_minor("-6.60", Currency::USD), Ok(-660));
        assert_eq!(amount_minor("-200,00", Currency::EUR), Ok(-20000));
        assert_eq!(amount_minor("-3.77000", Currency::USD), Ok(-377));
        assert_eq!(amount_minor("+12", Currency::USD), Ok(1200));
        assert_eq!(amount_minor("1200", Currency::JPY), Ok(1200));
        assert_eq!(amount_minor(".5", Currency::USD), Ok(50));
        assert!(amount_minor("-3.775", Currency::USD).is_err());
        assert!(amount_minor("1,234.56", Currency::USD).is_err());
        assert!(amount_minor("12.3.4", Currency::USD).is_err());
        assert!(amount_minor("99999999999999999999", Currency::USD).is_err());
        assert!(amount_minor("", Currency::USD).is_err());
        assert!(amount_minor("-", Currency::USD).is_err());
    }

    #[test]
    fn the_most_telling_description() {
        assert_eq!(
            description("MCDONALD'S #112", "", "POS MERCHANDISE;MCDONALD'S #112"),
            "MCDONALD'S #112"
        );
        assert_eq!(
            description("000000000000000", "", "PREAUTHORIZED DEBIT;B.C. HYDRO"),
            "PREAUTHORIZED DEBIT;B.C. HYDRO"
        );
        assert_eq!(
            description(
                "EFTPOS WDL HANDYWAY ALDI STORE  ",
                "",
                "EFTPOS WDL HANDYWAY ALDI STORE   GEELONG WEST VICAU"
            ),
            "EFTPOS WDL HANDYWAY ALDI STORE GEELONG WEST VICAU"
        );
        assert_eq!(description("Rent", "", "March"), "Rent · March");
        assert_eq!(description("x", "Acme Power", ""), "Acme Power");
    }
}
