//! Money as integer minor units of one currency, parsed from text and formatted for people.
//!
//! No floating point anywhere: amounts are `i64` minor units (paise, cents, yen), parsed
//! digit by digit and formatted with the currency's own decimals and digit grouping. No
//! arithmetic here can overflow or panic: every step is checked or saturating.

#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

use std::{fmt, str::FromStr};

/// An ISO 4217 currency code: three uppercase ASCII letters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("{0:?} is not a currency code (three letters such as INR, USD, EUR)")]
    BadCurrency(String),
    #[error("{0:?} is not a decimal amount")]
    BadAmount(String),
    #[error("{0:?} is too large an amount")]
    Overflow(String),
    #[error("{amount:?} has more decimals than {currency} carries, and rounding would change the money")]
    TooPrecise { amount: String, currency: Currency },
}

impl Currency {
    pub const INR: Self = Self(*b"INR");
    pub const USD: Self = Self(*b"USD");
    pub const EUR: Self = Self(*b"EUR");
    pub const GBP: Self = Self(*b"GBP");
    pub const JPY: Self = Self(*b"JPY");

    /// Parses a code, accepting lowercase and surrounding spaces (`" usd"` is USD).
    pub fn parse(code: &str) -> Result<Self, MoneyError> {
        let trimmed = code.trim();
        match *trimmed.as_bytes() {
            [a, b, c] if [a, b, c].iter().all(u8::is_ascii_alphabetic) => Ok(Self([
                a.to_ascii_uppercase(),
                b.to_ascii_uppercase(),
                c.to_ascii_uppercase(),
            ])),
            _ => Err(MoneyError::BadCurrency(code.to_owned())),
        }
    }

    pub fn as_str(&self) -> &str {
        // Only ever built from ASCII letters.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }

    /// Digits after the decimal point in the currency's minor unit.
    pub fn decimals(self) -> u32 {
        match &self.0 {
            b"JPY" | b"KRW" | b"VND" | b"CLP" | b"ISK" | b"UGX" | b"PYG" | b"XAF" | b"XOF" => 0,
            b"BHD" | b"KWD" | b"OMR" | b"JOD" | b"TND" | b"IQD" | b"LYD" => 3,
            b"BTC" => 8,
            _ => 2,
        }
    }

    /// The usual symbol, when the currency has an unambiguous one.
    pub fn symbol(self) -> Option<&'static str> {
        Some(match &self.0 {
            b"INR" => "₹",
            b"USD" => "$",
            b"EUR" => "€",
            b"GBP" => "£",
            b"JPY" => "¥",
            _ => return None,
        })
    }
}

/// A currency column read straight into a [`Currency`] (`char(3)` or text): a stored code that
/// is no currency is a decoding error, never a default.
#[cfg(feature = "postgres")]
impl sqlx::Type<sqlx::Postgres> for Currency {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <&str as sqlx::Type<sqlx::Postgres>>::type_info()
    }

    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

#[cfg(feature = "postgres")]
impl<'r> sqlx::Decode<'r, sqlx::Postgres> for Currency {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let code = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        Ok(Self::parse(code)?)
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Currency {
    type Err = MoneyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl schemars::JsonSchema for Currency {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Currency".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An ISO 4217 currency code: three uppercase letters.",
            "type": "string",
            "pattern": "^[A-Z]{3}$"
        })
    }
}

impl serde::Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// An amount of one currency in its minor unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Money {
    pub amount_minor: i64,
    pub currency: Currency,
}

impl Money {
    /// One unit of this amount's currency in `other`'s, as the two amounts imply (their signs
    /// ignored), truncated to six decimals and written as text — no floating point touches money:
    /// `$100.00` and `€92.10` give `0.921000`. None when this amount is zero.
    pub fn implied_rate(&self, other: Money) -> Option<String> {
        // other / self in major units: (other_minor / 10^other_dec) / (self_minor / 10^self_dec).
        let scale = 10i128.checked_pow(self.currency.decimals())?;
        let other_scale = 10i128.checked_pow(other.currency.decimals())?;
        let millionths = i128::from(other.amount_minor.unsigned_abs())
            .checked_mul(scale)?
            .checked_mul(1_000_000)?
            .checked_div(i128::from(self.amount_minor.unsigned_abs()).checked_mul(other_scale)?)?;
        Some(format!(
            "{}.{:06}",
            millionths / 1_000_000,
            millionths % 1_000_000
        ))
    }

    pub const fn new(amount_minor: i64, currency: Currency) -> Self {
        Self {
            amount_minor,
            currency,
        }
    }

    /// Parses a plain decimal such as `-3255.00`, `447.04` or `+12`: an optional sign, digits, and
    /// an optional fraction. Digits beyond the currency's decimals round half away from zero.
    pub fn parse_decimal(text: &str, currency: Currency) -> Result<Self, MoneyError> {
        let bad = || MoneyError::BadAmount(text.to_owned());
        let trimmed = text.trim();
        let (negative, unsigned) = if let Some(rest) = trimmed.strip_prefix('-') {
            (true, rest)
        } else {
            (false, trimmed.strip_prefix('+').unwrap_or(trimmed))
        };
        let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
            return Err(bad());
        }
        let decimals = currency.decimals() as usize;
        let overflow = || MoneyError::Overflow(text.to_owned());
        let mut minor: i64 = 0;
        for digit in whole
            .bytes()
            .chain(fraction.bytes().chain(std::iter::repeat(b'0')).take(decimals))
        {
            minor = minor
                .checked_mul(10)
                .and_then(|m| m.checked_add(i64::from(digit.saturating_sub(b'0'))))
                .ok_or_else(overflow)?;
        }
        if fraction.as_bytes().get(decimals).is_some_and(|d| *d >= b'5') {
            minor = minor.checked_add(1).ok_or_else(overflow)?;
        }
        let signed = if negative {
            minor.checked_neg().ok_or_else(overflow)?
        } else {
            minor
        };
        Ok(Self::new(signed, currency))
    }

    /// Parses a plain decimal exactly: as [`Money::parse_decimal`], with `.` or `,` as the
    /// radix, and digits past the currency's decimals allowed only when they are zeros
    /// (`-3.77000` is -3.77; `-3.775` is refused, never rounded). What statements' structured
    /// formats (OFX, camt, MT940) write.
    pub fn parse_exact(text: &str, currency: Currency) -> Result<Self, MoneyError> {
        let trimmed = text.trim();
        if trimmed.bytes().filter(|b| *b == b'.' || *b == b',').count() > 1 {
            return Err(MoneyError::BadAmount(text.to_owned()));
        }
        let point = trimmed.replace(',', ".");
        let decimals = currency.decimals() as usize;
        let beyond = point
            .split_once('.')
            .map_or("", |(_, fraction)| fraction.get(decimals..).unwrap_or(""));
        if beyond.bytes().any(|b| b != b'0') && beyond.bytes().all(|b| b.is_ascii_digit()) {
            return Err(MoneyError::TooPrecise {
                amount: text.to_owned(),
                currency,
            });
        }
        Self::parse_decimal(&point, currency)
    }

    /// The amount as a plain decimal with the currency's decimals and no grouping: `-3255.00`.
    pub fn to_decimal_string(&self) -> String {
        let (sign, whole, fraction) = self.parts();
        match fraction {
            Some(fraction) => format!("{sign}{whole}.{fraction}"),
            None => format!("{sign}{whole}"),
        }
    }

    /// The amount for people: symbol, grouped digits, decimals; `-₹12,34,567.00` (Indian grouping
    /// for INR), `$1,234.50`, `CHF 1,234.50` for a currency without a symbol of its own.
    pub fn format(&self) -> String {
        let (sign, whole, fraction) = self.parts();
        let grouped = if self.currency == Currency::INR {
            group_indian(&whole)
        } else {
            group_western(&whole)
        };
        let number = match fraction {
            Some(fraction) => format!("{grouped}.{fraction}"),
            None => grouped,
        };
        match self.currency.symbol() {
            Some(symbol) => format!("{sign}{symbol}{number}"),
            None => format!("{sign}{} {number}", self.currency),
        }
    }

    fn parts(&self) -> (&'static str, String, Option<String>) {
        let sign = if self.amount_minor < 0 { "-" } else { "" };
        let magnitude = self.amount_minor.unsigned_abs();
        let decimals = self.currency.decimals();
        if decimals == 0 {
            return (sign, magnitude.to_string(), None);
        }
        let scale = 10u64.pow(decimals);
        let (units, cents) = (
            magnitude.checked_div(scale).unwrap_or(0),
            magnitude.checked_rem(scale).unwrap_or(0),
        );
        let fraction = format!("{cents:0width$}", width = decimals as usize);
        (sign, units.to_string(), Some(fraction))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format())
    }
}

/// `1234567` → `1,234,567`.
fn group_western(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len().saturating_mul(2));
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && digits.len().saturating_sub(i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1234567` → `12,34,567`: the last three digits, then groups of two.
fn group_indian(digits: &str) -> String {
    if digits.len() <= 3 {
        return digits.to_owned();
    }
    let (head, tail) = digits.split_at(digits.len().saturating_sub(3));
    let mut out = String::with_capacity(digits.len().saturating_mul(2));
    for (i, c) in head.chars().enumerate() {
        if i > 0 && head.len().saturating_sub(i).is_multiple_of(2) {
            out.push(',');
        }
        out.push(c);
    }
    out.push(',');
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_format(minor: i64, currency: Currency, expected: &str) {
        assert_eq!(
            Money::new(minor, currency).format(),
            expected,
            "{minor} {currency}"
        );
    }

    #[test]
    fn exact_amounts_take_either_radix_and_never_round() {
        let exact = |text: &str, currency| Money::parse_exact(text, currency).map(|m| m.amount_minor);
        assert_eq!(exact("-200,00", Currency::EUR), Ok(-20_000));
        assert_eq!(exact("18.150", Currency::EUR), Ok(1815));
        assert_eq!(exact("5442.09000", Currency::USD), Ok(544_209));
        assert_eq!(exact("2700", Currency::JPY), Ok(2700));
        assert!(matches!(
            exact("-3.775", Currency::USD),
            Err(MoneyError::TooPrecise { .. })
        ));
        assert!(matches!(
            exact("1,234.56", Currency::USD),
            Err(MoneyError::BadAmount(_))
        ));
        assert!(matches!(
            exact("$120", Currency::USD),
            Err(MoneyError::BadAmount(_))
        ));
    }

    #[test]
    fn formats_inr_with_indian_grouping() {
        check_format(123_456_700, Currency::INR, "₹12,34,567.00");
        check_format(-2_335_000, Currency::INR, "-₹23,350.00");
        check_format(99_900, Currency::INR, "₹999.00");
        check_format(100_000, Currency::INR, "₹1,000.00");
        check_format(5, Currency::INR, "₹0.05");
        check_format(0, Currency::INR, "₹0.00");
        check_format(-1, Currency::INR, "-₹0.01");
        check_format(1_000_000_000_000, Currency::INR, "₹10,00,00,00,000.00");
    }

    #[test]
    fn formats_other_currencies_with_western_grouping() {
        check_format(123_450, Currency::USD, "$1,234.50");
        check_format(-100_000_000, Currency::EUR, "-€1,000,000.00");
        check_format(99, Currency::GBP, "£0.99");
        check_format(1_234_567, Currency::JPY, "¥1,234,567");
        check_format(-500, Currency::JPY, "-¥500");
        check_format(123_450, Currency::parse("chf").unwrap(), "CHF 1,234.50");
        check_format(1_234_567, Currency::parse("KWD").unwrap(), "KWD 1,234.567");
        check_format(i64::MIN, Currency::USD, "-$92,233,720,368,547,758.08");
    }

    #[test]
    fn parses_decimals_without_floats() {
        let inr = |s: &str| Money::parse_decimal(s, Currency::INR).map(|m| m.amount_minor);
        assert_eq!(inr("-3255.00"), Ok(-325_500));
        assert_eq!(inr("447.04"), Ok(44_704));
        assert_eq!(inr("185000"), Ok(18_500_000));
        assert_eq!(inr("+1.5"), Ok(150));
        assert_eq!(inr(".25"), Ok(25));
        assert_eq!(inr("0.005"), Ok(1));
        assert_eq!(inr("-0.005"), Ok(-1));
        assert_eq!(inr("0.0049"), Ok(0));
        assert_eq!(inr(" 12.34 "), Ok(1234));
        assert_eq!(
            Money::parse_decimal("1234.6", Currency::JPY).map(|m| m.amount_minor),
            Ok(1235)
        );
        for bad in ["", "-", ".", "1,000", "12.3.4", "abc", "1e5", "--1", "١٢"] {
            assert!(
                matches!(inr(bad), Err(MoneyError::BadAmount(_))),
                "{bad:?} should be refused"
            );
        }
        assert!(matches!(
            inr("99999999999999999999"),
            Err(MoneyError::Overflow(_))
        ));
    }

    #[test]
    fn decimal_strings_round_trip() {
        for (minor, currency, text) in [
            (-325_500, Currency::INR, "-3255.00"),
            (44_704, Currency::INR, "447.04"),
            (5, Currency::USD, "0.05"),
            (-7, Currency::JPY, "-7"),
        ] {
            let money = Money::new(minor, currency);
            assert_eq!(money.to_decimal_string(), text);
            assert_eq!(Money::parse_decimal(text, currency), Ok(money));
        }
    }

    #[test]
    fn currency_codes_are_validated() {
        assert_eq!(Currency::parse(" usd ").unwrap(), Currency::USD);
        for bad in ["US", "USDX", "U$D", "", "ÜSD"] {
            assert!(Currency::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(Currency::JPY.decimals(), 0);
        assert_eq!(Currency::INR.decimals(), 2);
        assert_eq!(serde_json::to_string(&Currency::EUR).unwrap(), "\"EUR\"");
        assert!(serde_json::from_str::<Currency>("\"E1R\"").is_err());
    }
}
