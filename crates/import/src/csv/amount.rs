//! Amounts as banks write them, parsed from text: signs, parentheses, `CR`/`DR`, currency
//! symbols and codes, thousands separators, decimal points and decimal commas. No arithmetic
//! here can overflow or panic: a statement chooses every length and figure it meets.

use kakeibo_money::{Currency, Money};
use kakeibo_statement::DecimalMark;

/// A parsed amount: minor units (signed as the cell says) and the currency the cell named, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAmount {
    pub minor: i64,
    pub currency: Option<Currency>,
}

/// Signs and abbreviations that name one currency, each before the shorter ones it contains.
const SYMBOLS: &[(&str, &str)] = &[
    ("₹", "INR"),
    ("Rs.", "INR"),
    ("Rs", "INR"),
    ("US$", "USD"),
    ("AU$", "AUD"),
    ("A$", "AUD"),
    ("CA$", "CAD"),
    ("C$", "CAD"),
    ("NZ$", "NZD"),
    ("HK$", "HKD"),
    ("S$", "SGD"),
    ("R$", "BRL"),
    ("MX$", "MXN"),
    ("$", "USD"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("¥", "JPY"),
    ("₩", "KRW"),
    ("₽", "RUB"),
    ("₺", "TRY"),
    ("₪", "ILS"),
    ("฿", "THB"),
    ("₫", "VND"),
    ("₴", "UAH"),
    ("₦", "NGN"),
    ("₱", "PHP"),
    ("₸", "KZT"),
    ("₾", "GEL"),
    ("zł", "PLN"),
    ("Kč", "CZK"),
    ("Ft", "HUF"),
    ("лв.", "BGN"),
    ("лв", "BGN"),
    ("RM", "MYR"),
    ("Rp", "IDR"),
    ("د.ا.", "JOD"),
    ("د.ا", "JOD"),
    ("د.ك.", "KWD"),
    ("د.ك", "KWD"),
    ("د.إ.", "AED"),
    ("د.إ", "AED"),
    (".د.ب", "BHD"),
    ("د.ب.", "BHD"),
    ("د.ت.", "TND"),
    ("د.م.", "MAD"),
    ("ر.س.", "SAR"),
    ("ر.س", "SAR"),
    ("ر.ق.", "QAR"),
    ("ر.ع.", "OMR"),
    ("ج.م.", "EGP"),
];

/// Signs several currencies share: they say nothing about which, so an amount written with one
/// is read only when the statement's currency is stated and is one of them.
const SHARED_SIGNS: &[(&str, &[&str])] = &[
    ("kr.", &["DKK", "NOK", "SEK", "ISK"]),
    ("kr", &["DKK", "NOK", "SEK", "ISK"]),
    ("Fr.", &["CHF"]),
    ("Fr", &["CHF"]),
];

/// Decides the decimal mark from every amount cell of a file: a comma followed by one or two
/// final digits (`12,50`), or a `1.234,56` shape, means a decimal comma; otherwise a point.
pub fn decide_decimal_mark<'a>(cells: impl Iterator<Item = &'a str>) -> DecimalMark {
    let (mut comma, mut point) = (0usize, 0usize);
    for cell in cells {
        let digits: String = cell
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect();
        let last_comma = digits.rfind(',');
        let last_point = digits.rfind('.');
        match (last_comma, last_point) {
            (Some(c), Some(p)) if c > p => comma = comma.saturating_add(1),
            (Some(_), Some(_)) => point = point.saturating_add(1),
            (Some(c), None) => {
                let after = digits.len().saturating_sub(c).saturating_sub(1);
                if (1..=2).contains(&after) {
                    comma = comma.saturating_add(1);
                }
            }
            (None, Some(p)) => {
                let after = digits.len().saturating_sub(p).saturating_sub(1);
                // `1.234` alone is ambiguous; three digits after a lone point count for neither.
                if after != 3 || digits.matches('.').count() == 1 && digits.len() <= 4 {
                    point = point.saturating_add(1);
                }
            }
            (None, None) => {}
        }
    }
    if comma > point {
        DecimalMark::Comma
    } else {
        DecimalMark::Point
    }
}

/// Parses one amount cell. `None` for a blank cell; `Err` with the reason for text that is not
/// an amount (it is never guessed).
pub fn parse_amount(cell: &str, mark: DecimalMark, default: Currency) -> Result<Option<CellAmount>, String> {
    let mut text: String = cell
        .trim()
        .chars()
        .filter(|c| !matches!(c, '\u{a0}' | '\u{202f}' | '\'') && !is_direction_mark(*c))
        .collect();
    if text.is_empty() || text == "-" {
        return Ok(None);
    }
    let mut negative = false;
    let mut currency = None;

    // Suffixes and wrappers, in any order: CR/DR, a trailing minus, parentheses, signs, symbols.
    loop {
        let before = text.clone();
        let upper = text.to_uppercase();
        if upper.ends_with("DR") || upper.ends_with("CR") {
            negative ^= upper.ends_with("DR");
            text.truncate(text.len().saturating_sub(2));
        } else if let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
            negative = !negative;
            text = inner.to_owned();
        } else if let Some(rest) = text.strip_suffix('-') {
            negative = !negative;
            text = rest.to_owned();
        } else if let Some(rest) = text.strip_prefix('-').or_else(|| text.strip_prefix('−')) {
            negative = !negative;
            text = rest.to_owned();
        } else if let Some(rest) = text.strip_prefix('+') {
            text = rest.to_owned();
        } else if let Some((rest, found)) = strip_currency(&text) {
            currency = Some(found);
            text = rest;
        } else {
            text = strip_shared_sign(&text, default).map_err(|mark| {
                format!(
                    "{cell:?} is written with {mark:?}, which names no one currency kakeibo knows: say which \
                     currency the statement is in (kakeibo import --currency; the mapping's currency column)"
                )
            })?;
        }
        text = text.trim().to_owned();
        if text == before {
            break;
        }
    }

    let (group, decimal) = match mark {
        DecimalMark::Point => (',', '.'),
        DecimalMark::Comma => ('.', ','),
    };
    let cleaned: String = text.chars().filter(|c| *c != group && *c != ' ').collect();
    let cleaned = cleaned.replace(decimal, ".");
    if cleaned.is_empty()
        || !cleaned.chars().all(|c| c.is_ascii_digit() || c == '.')
        || cleaned.matches('.').count() > 1
    {
        return Err(format!("{cell:?} is not an amount"));
    }
    let of = currency.unwrap_or(default);
    // A figure with more decimals than its currency has is not rounded: a wrong cent is wrong money.
    if let Some((_, fraction)) = cleaned.split_once('.') {
        let decimals = of.decimals() as usize;
        if fraction
            .get(decimals..)
            .is_some_and(|extra| extra.bytes().any(|d| d != b'0'))
        {
            return Err(format!(
                "{cell:?} has more decimals than {of} has ({decimals}): say which currency the statement \
                 is in (kakeibo import --currency)"
            ));
        }
    }
    let money = Money::parse_decimal(&cleaned, of).map_err(|e| e.to_string())?;
    let minor = if negative {
        money
            .amount_minor
            .checked_neg()
            .ok_or_else(|| format!("{cell:?} is too large an amount"))?
    } else {
        money.amount_minor
    };
    Ok(Some(CellAmount { minor, currency }))
}

/// Marks that set the direction of text (a right-to-left mark before an Arabic sign): they say
/// nothing about the amount.
fn is_direction_mark(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Letters or a currency sign around the number that [`SYMBOLS`] and the codes do not know: the
/// text without them when they are a sign the `default` currency shares with others (`kr` for
/// SEK), otherwise `Err` with the mark — it names a currency, and not one that can be told.
fn strip_shared_sign(text: &str, default: Currency) -> Result<String, String> {
    let mark = |c: char| c.is_alphabetic() || is_currency_sign(c) || c == '.';
    let head = text.trim_start_matches(mark);
    let rest = head.trim_end_matches(mark);
    // A lone point after the number belongs to it ("12." is twelve), not to a mark.
    // `head` is a suffix of `text` and `rest` a prefix of `head`.
    let lead = text.strip_suffix(head).unwrap_or_default();
    let trail = head.strip_prefix(rest).unwrap_or_default();
    let found = [lead, trail]
        .into_iter()
        .map(str::trim)
        .find(|m| !m.is_empty() && *m != ".");
    // Words that cannot be a currency's sign (no digits left, or more letters than a sign has)
    // are left for the number to fail on: the cell is no amount.
    let sign_like = |m: &str| m.chars().any(is_currency_sign) || m.chars().filter(|c| *c != '.').count() <= 4;
    let Some(found) = found.filter(|m| sign_like(m) && rest.chars().any(|c| c.is_ascii_digit())) else {
        return Ok(text.to_owned());
    };
    let shared = SHARED_SIGNS
        .iter()
        .find(|(sign, _)| sign.eq_ignore_ascii_case(found))
        .is_some_and(|(_, codes)| codes.contains(&default.as_str()));
    if shared {
        Ok(rest.to_owned())
    } else {
        Err(found.to_owned())
    }
}

fn is_currency_sign(c: char) -> bool {
    matches!(c, '$' | '€' | '£' | '¥' | '¢' | '\u{20a0}'..='\u{20c0}')
}

/// A currency symbol or ISO code at either end of `text`.
fn strip_currency(text: &str) -> Option<(String, Currency)> {
    for (symbol, code) in SYMBOLS {
        if let Some(rest) = text.strip_prefix(symbol).or_else(|| text.strip_suffix(symbol))
            && let Ok(currency) = Currency::parse(code)
        {
            return Some((rest.to_owned(), currency));
        }
    }
    let code_at = |code: &str| {
        Currency::parse(code)
            .ok()
            .filter(|_| code.chars().all(|c| c.is_ascii_uppercase()))
    };
    // Only where the first three bytes are whole characters (as before: a cell such as
    // `12€USD` names two currencies and stays refused).
    if let (true, Some(code), Some(rest)) = (text.len() > 3, text.get(..3), text.get(3..)) {
        if let Some(c) = code_at(code) {
            return Some((rest.to_owned(), c));
        }
        let cut = text.len().saturating_sub(3);
        if let (Some(rest), Some(code)) = (text.get(..cut), text.get(cut..))
            && let Some(c) = code_at(code)
        {
            return Some((rest.to_owned(), c));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cell: &str, mark: DecimalMark, expected: Option<(i64, Option<Currency>)>) {
        let parsed = parse_amount(cell, mark, Currency::INR)
            .unwrap()
            .map(|a| (a.minor, a.currency));
        assert_eq!(parsed, expected, "{cell:?}");
    }

    #[test]
    fn point_files() {
        use DecimalMark::Point;
        check("-3255.00", Point, Some((-325_500, None)));
        check("1,23,456.78", Point, Some((12_345_678, None)));
        check("(1,234.50)", Point, Some((-123_450, None)));
        check("₹ 1,000", Point, Some((100_000, Some(Currency::INR))));
        check("-$12.30", Point, Some((-1230, Some(Currency::USD))));
        check("$-12.30", Point, Some((-1230, Some(Currency::USD))));
        check("110.00 DR", Point, Some((-11_000, None)));
        check("110.00Cr", Point, Some((11_000, None)));
        check("250.00-", Point, Some((-25_000, None)));
        check("+7", Point, Some((700, None)));
        check("USD 1,000.5", Point, Some((100_050, Some(Currency::USD))));
        check("12.340 EUR", Point, Some((1234, Some(Currency::EUR))));
        check("Rs. 99", Point, Some((9900, Some(Currency::INR))));
        let jod = Currency::parse("JOD").ok();
        check("د.ا.\u{200f}4.750", Point, Some((4750, jod)));
        check("\u{200f}-د.ا.\u{200f}93.210", Point, Some((-93_210, jod)));
        check("+ £1,234.56", Point, Some((123_456, Some(Currency::GBP))));
        check(
            "12,50 zł",
            DecimalMark::Comma,
            Some((1250, Currency::parse("PLN").ok())),
        );
        check("R$ 10.00", Point, Some((1000, Currency::parse("BRL").ok())));
        check("  ", Point, None);
        check("-", Point, None);
    }

    #[test]
    fn comma_files() {
        use DecimalMark::Comma;
        check("1,25", Comma, Some((125, None)));
        check("-1.234,56", Comma, Some((-123_456, None)));
        check("1 234,56 €", Comma, Some((123_456, Some(Currency::EUR))));
        check("1'234,50", Comma, Some((123_450, None)));
    }

    #[test]
    fn what_the_currency_cannot_hold_or_a_sign_cannot_tell_is_refused() {
        let inr = Currency::INR;
        let sek = Currency::parse("SEK").unwrap();
        // A third decimal a two-decimal currency cannot hold: refused, not rounded.
        let error = parse_amount("12.345 EUR", DecimalMark::Point, inr).unwrap_err();
        assert!(error.contains("more decimals than EUR has (2)"), "{error}");
        assert!(parse_amount("4.755", DecimalMark::Point, inr).is_err());
        // "kr" is the sign of four currencies: read only when the statement's is one of them.
        let error = parse_amount("kr 100", DecimalMark::Point, inr).unwrap_err();
        assert!(
            error.contains("\"kr\"") && error.contains("--currency"),
            "{error}"
        );
        assert_eq!(
            parse_amount("kr 100", DecimalMark::Point, sek)
                .unwrap()
                .map(|a| a.minor),
            Some(10_000)
        );
        // Letters that are no currency are not dropped to leave a number.
        // Nor is a cell that names two currencies read as one of them.
        for bad in ["abc12", "12 pending", "₿0.5", "12€USD"] {
            assert!(parse_amount(bad, DecimalMark::Point, inr).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn refusals_are_explained_not_guessed() {
        for bad in ["ten", "12.3.4", "1e5", "N/A", "12-34", "=SUM(A1)", "0x10"] {
            assert!(
                parse_amount(bad, DecimalMark::Point, Currency::INR).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn decimal_mark_is_decided_per_file() {
        assert_eq!(
            decide_decimal_mark(["1,25", "10,00", "1.234,56"].into_iter()),
            DecimalMark::Comma
        );
        assert_eq!(
            decide_decimal_mark(["1,234.00", "12.50", "3"].into_iter()),
            DecimalMark::Point
        );
        assert_eq!(
            decide_decimal_mark(["1,234", "2,500"].into_iter()),
            DecimalMark::Point
        );
        assert_eq!(decide_decimal_mark(std::iter::empty()), DecimalMark::Point);
    }
}
