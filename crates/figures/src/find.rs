//! Finding the figures a text states: money in any common spelling, and percentages.
//!
//! A number is a money figure when a currency stands beside it (a symbol, an ISO code or a word,
//! before or after), or when it is written with exactly two decimals and nothing else (`1,234.56`:
//! counts never have cents). It is a percentage when `%` or "percent" follows. Anything else —
//! a year, a count, a date, a time, an account's last digits, a version — is not a figure.

use kakeibo_money::Currency;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One figure the text states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Stated {
    /// The figure as written, currency and scale word included ("₹1.6 lakh", "$2,191.73").
    pub text: String,
    /// Where it starts and ends in the text, in characters (Unicode scalar values).
    pub start: usize,
    pub end: usize,
    /// The value as a plain decimal (`-2191.73`, `160000`, `12.5`), sign included.
    pub value: String,
    pub kind: StatedKind,
    /// Hedged ("about", "roughly", "~") or abbreviated ("k", "lakh"): a rounded figure.
    pub approximate: bool,
    /// The digits and the power of ten they stand at: `value = mantissa × 10^exponent`.
    #[serde(skip)]
    pub(crate) mantissa: i128,
    #[serde(skip)]
    pub(crate) exponent: i32,
    /// Hedged: trailing zeros of a whole number are rounding, not precision.
    #[serde(skip)]
    pub(crate) hedged: bool,
}

/// Money (with the currency written beside it, if any) or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "currency", rename_all = "snake_case")]
pub enum StatedKind {
    Money(Marker),
    Percent,
}

/// The currency a figure is written in, as far as its writing says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Marker {
    /// An ISO code, or a symbol only one currency uses (₹, €, £).
    Code(Currency),
    /// `$` or "dollars": any dollar.
    Dollar,
    /// `¥`: the yen or the yuan.
    Yen,
    /// "Rs" or "rupees": any rupee.
    Rupee,
    /// "kr": any krona or krone.
    Krona,
    /// No currency written (a bare `1,234.56`).
    Unknown,
}

impl Marker {
    /// Whether an amount in `currency` can be what this marker names.
    pub fn admits(self, currency: Currency) -> bool {
        let code = currency.as_str();
        match self {
            Self::Code(c) => c == currency,
            Self::Dollar => matches!(
                code,
                "USD" | "CAD" | "AUD" | "NZD" | "SGD" | "HKD" | "TWD" | "MXN" | "JMD" | "TTD" | "BSD" | "FJD"
            ),
            Self::Yen => matches!(code, "JPY" | "CNY"),
            Self::Rupee => matches!(code, "INR" | "PKR" | "LKR" | "NPR" | "MUR" | "SCR"),
            Self::Krona => matches!(code, "SEK" | "NOK" | "DKK" | "ISK"),
            Self::Unknown => true,
        }
    }
}

impl std::fmt::Display for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Code(c) => write!(f, "{c}"),
            Self::Dollar => f.write_str("$"),
            Self::Yen => f.write_str("¥"),
            Self::Rupee => f.write_str("Rs"),
            Self::Krona => f.write_str("kr"),
            Self::Unknown => f.write_str("?"),
        }
    }
}

/// ISO codes read as currencies when written beside a number as a word of their own.
const CODES: &[&str] = &[
    "USD", "EUR", "GBP", "INR", "JPY", "CNY", "CAD", "AUD", "NZD", "CHF", "SEK", "NOK", "DKK", "SGD", "HKD",
    "KRW", "BRL", "MXN", "ZAR", "AED", "SAR", "PLN", "CZK", "HUF", "TRY", "THB", "IDR", "MYR", "PHP", "VND",
    "PKR", "LKR", "NPR", "BDT", "ILS", "EGP", "NGN", "KES", "TWD", "ISK", "CLP", "COP", "ARS", "PEN", "BHD",
    "KWD", "OMR", "JOD", "QAR", "RON", "BGN", "UAH",
];

/// Words and symbols that name a currency after the number.
const AFTER: &[(&str, Marker)] = &[
    ("dollars", Marker::Dollar),
    ("dollar", Marker::Dollar),
    ("rupees", Marker::Rupee),
    ("rupee", Marker::Rupee),
    ("euros", Marker::Code(Currency::EUR)),
    ("euro", Marker::Code(Currency::EUR)),
    ("pounds", Marker::Code(Currency::GBP)),
    ("yen", Marker::Code(Currency::JPY)),
    ("kr", Marker::Krona),
    ("€", Marker::Code(Currency::EUR)),
    ("₹", Marker::Code(Currency::INR)),
    ("£", Marker::Code(Currency::GBP)),
    ("$", Marker::Dollar),
];

/// Scale words after a number and the power of ten they stand for. Longer first.
const SCALES: &[(&str, i32)] = &[
    ("thousand", 3),
    ("million", 6),
    ("billion", 9),
    ("crores", 7),
    ("crore", 7),
    ("lakhs", 5),
    ("lakh", 5),
    ("lacs", 5),
    ("lac", 5),
    ("mn", 6),
    ("bn", 9),
    ("cr", 7),
    ("k", 3),
    ("K", 3),
    ("M", 6),
    ("m", 6),
    ("B", 9),
];

/// Words before a figure that make it a rounded one.
const HEDGES: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "approx.",
    "approx",
    "nearly",
    "almost",
    "some",
    "over",
    "under",
    "more than",
    "less than",
    "close to",
    "circa",
    "~",
    "≈",
];

/// Every figure `text` states, in order.
pub fn find(text: &str) -> Vec<Stated> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let here = at(&chars, i);
        if !here.is_ascii_digit() {
            i += 1;
            continue;
        }
        let Some(number) = number_at(&chars, i) else {
            // A run of digits and separators that is no number (a version, a phone): skip it.
            i = skip_run(&chars, i);
            continue;
        };
        let end = number.end;
        if let Some(stated) = figure(&chars, i, number) {
            i = stated.end.max(end);
            found.push(stated);
        } else {
            i = end;
        }
    }
    found
}

fn at(chars: &[char], i: usize) -> char {
    chars.get(i).copied().unwrap_or('\0')
}

/// The char before `i`, or NUL at the start.
fn before(chars: &[char], i: usize) -> char {
    i.checked_sub(1).map_or('\0', |j| at(chars, j))
}

fn skip_run(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && (at(chars, i).is_ascii_digit() || is_separator(at(chars, i))) {
        i += 1;
    }
    i
}

fn is_separator(c: char) -> bool {
    matches!(c, ',' | '.' | '\'' | '\u{a0}' | '\u{202f}' | '\u{2009}' | ' ')
}

/// A number read at `start`: its digits, the power of ten of the last one, where it ends.
#[derive(Debug, Clone, Copy)]
struct Number {
    mantissa: i128,
    exponent: i32,
    /// Digits after the decimal separator.
    decimals: u32,
    end: usize,
    /// The exponent when a lone `.` before three digits is a decimal point after all.
    dot_decimal: Option<i32>,
}

/// Reads the number that starts at `start` (a digit), or `None` when its separators make no
/// number.
fn number_at(chars: &[char], start: usize) -> Option<Number> {
    // Groups of digits and the separator before each.
    let mut groups: Vec<(char, String)> = vec![('\0', String::new())];
    let mut i = start;
    loop {
        let c = at(chars, i);
        if c.is_ascii_digit() {
            groups.last_mut()?.1.push(c);
            i += 1;
            continue;
        }
        if is_separator(c) && at(chars, i + 1).is_ascii_digit() {
            let last_len = groups.last().map_or(0, |g| g.1.len());
            if c == ' ' {
                // A plain space groups only three digits after at most three: "1 234,56".
                let next = chars
                    .iter()
                    .skip(i + 1)
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                let ok = if groups.len() == 1 {
                    (1..=3).contains(&last_len)
                } else {
                    last_len == 3
                };
                if next != 3 || !ok {
                    break;
                }
            }
            groups.push((c, String::new()));
            i += 1;
            continue;
        }
        break;
    }
    let (integer, fraction) = split_decimal(&groups)?;
    if !valid_grouping(&integer) {
        return None;
    }
    let mut digits: String = integer.iter().map(|g| g.1.as_str()).collect();
    digits.push_str(&fraction);
    if digits.len() > 30 {
        return None;
    }
    let mantissa: i128 = digits.parse().ok()?;
    let decimals = u32::try_from(fraction.len()).ok()?;
    // "1.125" read as grouping is 1125; a percentage reads it as a decimal.
    let lone_dot = groups.len() == 2 && groups.get(1).is_some_and(|g| g.0 == '.') && decimals == 0;
    Some(Number {
        mantissa,
        exponent: -i32::try_from(decimals).ok()?,
        decimals,
        end: i,
        dot_decimal: lone_dot.then_some(-3),
    })
}

/// The integer part's groups and the fraction's digits: the decimal separator is the last
/// separator when two kinds appear; with one kind, a single one followed by other than three
/// digits (or after a lone zero).
fn split_decimal(groups: &[(char, String)]) -> Option<(Vec<(char, String)>, String)> {
    let seps: Vec<char> = groups.iter().skip(1).map(|g| g.0).collect();
    let Some(&last) = seps.last() else {
        return Some((groups.to_vec(), String::new()));
    };
    let decimal_kind = |c: char| c == '.' || c == ',';
    let kinds_differ = seps.iter().any(|&c| c != last);
    let (body, tail) = groups.split_at(groups.len().saturating_sub(1));
    let tail = tail.first()?;
    let fraction_here = if kinds_differ {
        decimal_kind(last) && !seps.iter().take(seps.len() - 1).any(|&c| c == last)
    } else if !decimal_kind(last) || seps.len() > 1 {
        false
    } else {
        let lone_zero = body.first().is_some_and(|g| g.1 == "0");
        tail.1.len() != 3 || lone_zero
    };
    if fraction_here {
        Some((body.to_vec(), tail.1.clone()))
    } else if kinds_differ && decimal_kind(last) {
        // "1.234.5,6,7": two kinds, the last used twice — no number.
        None
    } else {
        Some((groups.to_vec(), String::new()))
    }
}

/// Western (`1,234,567`) or Indian (`12,34,567`) grouping, or none.
fn valid_grouping(groups: &[(char, String)]) -> bool {
    let lens: Vec<usize> = groups.iter().map(|g| g.1.len()).collect();
    let Some((first, rest)) = lens.split_first() else {
        return false;
    };
    if rest.is_empty() {
        return *first > 0;
    }
    // All grouping separators of one kind.
    let kind = groups.get(1).map(|g| g.0);
    if groups.iter().skip(1).any(|g| Some(g.0) != kind) {
        return false;
    }
    let western = (1..=3).contains(first) && rest.iter().all(|&l| l == 3);
    let indian = (1..=2).contains(first)
        && rest
            .split_last()
            .is_some_and(|(last, mid)| *last == 3 && mid.iter().all(|&l| l == 2));
    western || indian
}

/// The figure around the number at `start`, or `None` when it is no figure.
fn figure(chars: &[char], start: usize, number: Number) -> Option<Stated> {
    if is_part_of_something_else(chars, start, number.end) {
        return None;
    }
    let pre = look_before(chars, start);
    let post = look_after(chars, number.end);
    let kind = if post.percent {
        StatedKind::Percent
    } else if let Some(marker) = pre.marker.or(post.marker) {
        StatedKind::Money(marker)
    } else if number.decimals == 2 && post.scale == 0 {
        StatedKind::Money(Marker::Unknown)
    } else {
        return None;
    };
    let negative = pre.minus || (pre.open_paren && post.close_paren);
    let (from, to) = (pre.start, post.end);
    let text: String = chars
        .get(from..to)
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    let mantissa = if negative {
        -number.mantissa
    } else {
        number.mantissa
    };
    let written = match (kind, number.dot_decimal) {
        (StatedKind::Percent, Some(exponent)) => exponent,
        _ => number.exponent,
    };
    let exponent = written + post.scale;
    Some(Stated {
        text: text.trim_end_matches(')').to_owned(),
        start: from,
        end: to.saturating_sub(usize::from(text.ends_with(')'))),
        value: decimal_string(mantissa, exponent),
        kind,
        approximate: pre.hedged || post.scale != 0,
        mantissa,
        exponent,
        hedged: pre.hedged,
    })
}

/// Digits joined to other things: a date (`2025-06-01`, `06/01`), a time (`10:30`), a code
/// (`x2051`, `Q2`, `v1.2`), a masked account (`…2051`, `****2051`, `#2051`).
fn is_part_of_something_else(chars: &[char], start: usize, end: usize) -> bool {
    let b = before(chars, start);
    let a = at(chars, end);
    // "Rs500", "INR500": a currency against the digits is no code.
    let currency_against = b.is_alphabetic() && marker_before(chars, start).is_some();
    if (b.is_alphanumeric() && !currency_against)
        || b == '_'
        || matches!(b, '…' | '*' | '#' | '/' | ':' | '@' | '×' | 'x')
    {
        return true;
    }
    if b == '.' && before(chars, start.saturating_sub(1)) == '.' {
        return true; // "...2051"
    }
    // Letters straight after ("10th", "3pm", "2GB") other than a scale ("1.2k", "5M").
    if a.is_alphabetic() {
        let word: String = chars.iter().skip(end).take_while(|c| c.is_alphabetic()).collect();
        if !SCALES.iter().any(|(s, _)| *s == word) && !word.eq_ignore_ascii_case("cr") {
            return true;
        }
    }
    let digit_after = |i: usize| at(chars, i).is_ascii_digit();
    if matches!(a, '/' | ':') && digit_after(end + 1) {
        return true;
    }
    // A date's or a range's dash between digits: "2025-06", "06-01".
    if a == '-' && digit_after(end + 1) {
        return true;
    }
    if matches!(b, '-' | '/') && before(chars, start.saturating_sub(1)).is_ascii_digit() {
        return true;
    }
    // Followed by a time word: "3.30 pm", "12.30 hrs".
    let next_word: String = chars
        .iter()
        .skip(end)
        .skip_while(|c| **c == ' ')
        .take_while(|c| c.is_alphabetic() || **c == '.')
        .collect();
    matches!(
        next_word.to_lowercase().trim_end_matches('.'),
        "am" | "pm" | "a.m" | "p.m" | "hrs" | "hours" | "h" | "o'clock"
    )
}

/// What stands before a number.
#[derive(Debug, Default)]
struct Before {
    start: usize,
    marker: Option<Marker>,
    minus: bool,
    open_paren: bool,
    hedged: bool,
}

fn look_before(chars: &[char], start: usize) -> Before {
    let mut out = Before {
        start,
        ..Before::default()
    };
    let mut i = start;
    // A minus straight before the digits: "$-45".
    if matches!(before(chars, i), '-' | '−') && !before(chars, i - 1).is_ascii_digit() {
        out.minus = true;
        i -= 1;
        out.start = i;
    }
    let space_skipped = skip_spaces_back(chars, i);
    if let Some((marker, from)) = marker_before(chars, space_skipped) {
        // A symbol sits against the number; a code or word may have one space between.
        out.marker = Some(marker);
        i = from;
        out.start = from;
        if matches!(before(chars, i), '-' | '−') && !before(chars, i - 1).is_ascii_digit() {
            out.minus = true;
            i -= 1;
            out.start = i;
        }
    }
    if before(chars, i) == '(' {
        // Accounts laid out — a line's start, `:`, `=`, a table's `|` — not an aside in prose.
        let ahead = chars
            .get(..i - 1)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|c| **c != ' ');
        out.open_paren = matches!(ahead, None | Some(':' | '=' | '|' | '\n' | '\t'));
    }
    let head: String = chars.get(..i).map(|s| s.iter().collect()).unwrap_or_default();
    let head = head.trim_end().to_lowercase();
    out.hedged = HEDGES.iter().any(|h| {
        head.strip_suffix(h).is_some_and(|rest| {
            rest.is_empty() || !rest.ends_with(char::is_alphanumeric) || h.starts_with(['~', '≈'])
        })
    });
    out
}

fn skip_spaces_back(chars: &[char], mut i: usize) -> usize {
    // One space at most (or a no-break space): "USD 45", "Rs. 500".
    if matches!(before(chars, i), ' ' | '\u{a0}' | '\u{202f}') {
        i -= 1;
    }
    i
}

/// The currency written just before `end`, and where it starts.
fn marker_before(chars: &[char], end: usize) -> Option<(Marker, usize)> {
    let b = before(chars, end);
    let word_start = |i: usize| !before(chars, i).is_alphanumeric();
    match b {
        '$' => {
            let i = end - 1;
            // A prefixed dollar: US$, A$, C$, CA$, NZ$, S$, HK$.
            let prefix: String = chars
                .get(i.saturating_sub(2)..i)
                .map(|s| s.iter().collect())
                .unwrap_or_default();
            for (p, code) in [
                ("US", "USD"),
                ("CA", "CAD"),
                ("NZ", "NZD"),
                ("HK", "HKD"),
                ("AU", "AUD"),
            ] {
                if prefix == p && word_start(i - 2) {
                    return Some((Marker::Code(Currency::parse(code).ok()?), i - 2));
                }
            }
            let one = before(chars, i);
            for (p, code) in [('A', "AUD"), ('C', "CAD"), ('S', "SGD")] {
                if one == p && word_start(i - 1) {
                    return Some((Marker::Code(Currency::parse(code).ok()?), i - 1));
                }
            }
            Some((Marker::Dollar, i))
        }
        '₹' => Some((Marker::Code(Currency::INR), end - 1)),
        '€' => Some((Marker::Code(Currency::EUR), end - 1)),
        '£' => Some((Marker::Code(Currency::GBP), end - 1)),
        '¥' | '￥' => Some((Marker::Yen, end - 1)),
        '.' if before(chars, end - 1) == 's' && before(chars, end - 2) == 'R' && word_start(end - 3) => {
            Some((Marker::Rupee, end - 3))
        }
        's' if before(chars, end - 1) == 'R' && word_start(end - 2) => Some((Marker::Rupee, end - 2)),
        c if c.is_ascii_uppercase() => {
            let from = end.checked_sub(3)?;
            let word: String = chars.get(from..end)?.iter().collect();
            (CODES.contains(&word.as_str()) && word_start(from))
                .then(|| Currency::parse(&word).ok().map(|c| (Marker::Code(c), from)))
                .flatten()
        }
        _ => None,
    }
}

/// What stands after a number.
#[derive(Debug, Default)]
struct After {
    end: usize,
    scale: i32,
    marker: Option<Marker>,
    percent: bool,
    close_paren: bool,
}

fn look_after(chars: &[char], end: usize) -> After {
    let mut out = After {
        end,
        ..After::default()
    };
    let mut i = end;
    if let Some((scale, to)) = word_after(chars, i, SCALES) {
        out.scale = scale;
        i = to;
        out.end = to;
    }
    let j = skip_space(chars, i);
    if at(chars, j) == '%' {
        out.percent = true;
        out.end = j + 1;
        return out;
    }
    for word in ["percent", "per cent"] {
        if starts_word(chars, j, word) {
            out.percent = true;
            out.end = j + word.chars().count();
            return out;
        }
    }
    if let Some(c) = code_after(chars, j) {
        out.marker = Some(Marker::Code(c));
        i = j + 3;
        out.end = i;
    } else if let Some((marker, to)) = word_after(chars, j, AFTER) {
        out.marker = Some(marker);
        i = to;
        out.end = to;
    }
    if at(chars, i) == ')' {
        out.close_paren = true;
        out.end = i + 1;
    }
    out
}

fn skip_space(chars: &[char], i: usize) -> usize {
    if matches!(at(chars, i), ' ' | '\u{a0}' | '\u{202f}') {
        i + 1
    } else {
        i
    }
}

/// The first of `words` at `i` (or after one space), as a word of its own; its value and end.
fn word_after<T: Copy>(chars: &[char], i: usize, words: &[(&str, T)]) -> Option<(T, usize)> {
    for from in [i, skip_space(chars, i)] {
        for (word, value) in words {
            if starts_word(chars, from, word) {
                return Some((*value, from + word.chars().count()));
            }
        }
    }
    None
}

/// Whether `word` is written at `i` and no letter follows it (a symbol may be followed by anything).
fn starts_word(chars: &[char], i: usize, word: &str) -> bool {
    let n = word.chars().count();
    let matches = chars
        .get(i..i + n)
        .is_some_and(|s| s.iter().copied().eq(word.chars()));
    let symbol = !word.starts_with(char::is_alphabetic);
    matches && (symbol || !at(chars, i + n).is_alphanumeric())
}

fn code_after(chars: &[char], i: usize) -> Option<Currency> {
    let word: String = chars.get(i..i + 3)?.iter().collect();
    if !CODES.contains(&word.as_str()) || at(chars, i + 3).is_alphanumeric() {
        return None;
    }
    Currency::parse(&word).ok()
}

/// `mantissa × 10^exponent` written out: `-2191.73`, `160000`.
pub(crate) fn decimal_string(mantissa: i128, exponent: i32) -> String {
    let sign = if mantissa < 0 { "-" } else { "" };
    let digits = mantissa.unsigned_abs().to_string();
    if exponent >= 0 {
        let zeros = "0".repeat(usize::try_from(exponent).unwrap_or(0));
        return format!("{sign}{digits}{zeros}");
    }
    let places = usize::try_from(-exponent).unwrap_or(0);
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (whole, fraction) = padded.split_at(padded.len() - places);
    format!("{sign}{whole}.{fraction}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> (String, String, bool) {
        let found = find(text);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        let f = &found[0];
        let unit = match f.kind {
            StatedKind::Money(m) => m.to_string(),
            StatedKind::Percent => "%".into(),
        };
        (f.value.clone(), unit, f.approximate)
    }

    #[test]
    fn spellings() {
        assert_eq!(one("You spent $2,191.73."), ("2191.73".into(), "$".into(), false));
        assert_eq!(
            one("₹12,34,567.89 in all"),
            ("1234567.89".into(), "INR".into(), false)
        );
        assert_eq!(one("about ₹1.6 lakh"), ("160000".into(), "INR".into(), true));
        assert_eq!(
            one("1.234,56 € for rent"),
            ("1234.56".into(), "EUR".into(), false)
        );
        assert_eq!(one("Refund: ($45.00)"), ("-45.00".into(), "$".into(), false));
        assert_eq!(one("a refund ($45.00)"), ("45.00".into(), "$".into(), false));
        assert_eq!(one("USD 1,200"), ("1200".into(), "USD".into(), false));
        assert_eq!(one("up 12.5% on May"), ("12.5".into(), "%".into(), false));
        assert_eq!(one("Rs. 500 on tea"), ("500".into(), "Rs".into(), false));
        assert_eq!(one("$1.2k a month"), ("1200".into(), "$".into(), true));
        assert_eq!(one("-€3,50 fee"), ("-3.50".into(), "EUR".into(), false));
    }

    #[test]
    fn false_friends() {
        for text in [
            "In June 2025 you had 12 transactions.",
            "on 2025-06-01 at 10:30",
            "card ending …2051",
            "account ****2051 and #4417",
            "version 1.25.0",
            "06/01/2025",
            "the 3rd of May",
            "call +1 555 123 4567",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn decimals_write_out() {
        assert_eq!(decimal_string(-5, -2), "-0.05");
        assert_eq!(decimal_string(16, 4), "160000");
        assert_eq!(decimal_string(219_173, -2), "2191.73");
    }
}
