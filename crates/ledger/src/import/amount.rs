//! Amounts as banks write them, parsed from text: signs, parentheses, `CR`/`DR`, currency
//! symbols and codes, thousands separators, decimal points and decimal commas.

use crate::money::{Currency, Money};

/// Which character separates the decimals, decided once per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecimalMark {
    Point,
    Comma,
}

/// A parsed amount: minor units (signed as the cell says) and the currency the cell named, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAmount {
    pub minor: i64,
    pub currency: Option<Currency>,
}

const SYMBOLS: &[(&str, Currency)] = &[
    ("₹", Currency::INR),
    ("Rs.", Currency::INR),
    ("Rs", Currency::INR),
    ("INR", Currency::INR),
    ("US$", Currency::USD),
    ("$", Currency::USD),
    ("€", Currency::EUR),
    ("£", Currency::GBP),
    ("¥", Currency::JPY),
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
            (Some(c), Some(p)) if c > p => comma += 1,
            (Some(_), Some(_)) => point += 1,
            (Some(c), None) => {
                let after = digits.len() - c - 1;
                if (1..=2).contains(&after) {
                    comma += 1;
                }
            }
            (None, Some(p)) => {
                let after = digits.len() - p - 1;
                // `1.234` alone is ambiguous; three digits after a lone point count for neither.
                if after != 3 || digits.matches('.').count() == 1 && digits.len() <= 4 {
                    point += 1;
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
        .filter(|c| !matches!(c, '\u{a0}' | '\u{202f}' | '\''))
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
            text.truncate(text.len() - 2);
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
            text = strip_foreign_marks(&text);
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
    let money = Money::parse_decimal(&cleaned, currency.unwrap_or(default)).map_err(|e| e.to_string())?;
    let minor = if negative {
        -money.amount_minor
    } else {
        money.amount_minor
    };
    Ok(Some(CellAmount { minor, currency }))
}

/// Letters, currency signs and direction marks around the number (`د.ا.\u{200f}4.750`, `4.75 zł`)
/// that name no currency we know: dropped, the number kept.
fn strip_foreign_marks(text: &str) -> String {
    let mark = |c: char| {
        c.is_alphabetic()
            || is_currency_sign(c)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}')
    };
    let mut letters_seen = false;
    let head = text.trim_start_matches(|c: char| {
        let strip = mark(c) || (c == '.' && letters_seen);
        letters_seen |= c.is_alphabetic();
        strip
    });
    head.trim_end_matches(mark).to_owned()
}

fn is_currency_sign(c: char) -> bool {
    matches!(
        c,
        '$' | '€'
            | '£'
            | '¥'
            | '₹'
            | '₽'
            | '₩'
            | '₺'
            | '₪'
            | '฿'
            | '₫'
            | '₴'
            | '₦'
            | '₱'
            | '¢'
            | '₡'
            | '₲'
            | '₵'
    )
}

/// A currency symbol or ISO code at either end of `text`.
fn strip_currency(text: &str) -> Option<(String, Currency)> {
    for (symbol, currency) in SYMBOLS {
        if let Some(rest) = text.strip_prefix(symbol).or_else(|| text.strip_suffix(symbol)) {
            return Some((rest.to_owned(), *currency));
        }
    }
    let code_at = |code: &str| {
        Currency::parse(code)
            .ok()
            .filter(|_| code.chars().all(|c| c.is_ascii_uppercase()))
    };
    if text.len() > 3 && text.is_char_boundary(3) {
        if let Some(c) = code_at(&text[..3]) {
            return Some((text[3..].to_owned(), c));
        }
        if text.is_char_boundary(text.len() - 3)
            && let Some(c) = code_at(&text[text.len() - 3..])
        {
            return Some((text[..text.len() - 3].to_owned(), c));
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
        check("12.345 EUR", Point, Some((1235, Some(Currency::EUR))));
        check("Rs. 99", Point, Some((9900, Some(Currency::INR))));
        check("د.ا.\u{200f}4.75", Point, Some((475, None)));
        check("+ £1,234.56", Point, Some((123_456, Some(Currency::GBP))));
        check("12,50 zł", DecimalMark::Comma, Some((1250, None)));
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
