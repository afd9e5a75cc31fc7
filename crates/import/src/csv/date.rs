//! Dates as banks write them. Numeric day/month order is decided once per file, from the data.

use chrono::NaiveDate;
use kakeibo_statement::DateOrder;

/// The pieces of a date cell before the order is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Year first (ISO and its variants): unambiguous.
    YearFirst(i32, u32, u32),
    /// `a/b/year` with a four-digit year: day-month or month-day.
    YearLast(u32, u32, i32),
    /// `a/b/c`, each of one or two digits: the year last (day-month or month-day) or first.
    Short(u32, u32, u32),
    /// A month name made it unambiguous.
    Named(i32, u32, u32),
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Splits a cell into its date pieces; times after the date are ignored.
fn shape(cell: &str) -> Option<Shape> {
    let cell = cell.trim();
    let is_month_name = |t: &str| {
        t.len() >= 3
            && t.chars().all(char::is_alphabetic)
            && MONTHS.iter().any(|m| t.to_lowercase().starts_with(m))
    };
    let date_part = if cell.split(|c: char| !c.is_alphanumeric()).any(is_month_name) {
        // "01 Jan 2025", "Jan 5, 2025", "5-JAN-25": the words and numbers before any time.
        cell.split([' ', ','])
            .filter(|p| !p.is_empty() && !p.contains(':'))
            .collect::<Vec<_>>()
            .join("-")
    } else {
        // Drop a time part, before or after the date, and its zone: `2021-09-05 11:32:41`,
        // `2020-11-15T18:00+02:00`, `10/02/2021 09:15`, `14:05, 15/01/2024`. The date is the day as
        // written: a zone never moves it.
        cell.split(['T', ' ', ','])
            .find(|p| !p.is_empty() && !p.contains(':'))
            .unwrap_or_default()
            .to_owned()
    };
    if date_part.len() == 8 && date_part.chars().all(|c| c.is_ascii_digit()) {
        // 20200213
        return Some(Shape::YearFirst(
            date_part.get(..4)?.parse().ok()?,
            date_part.get(4..6)?.parse().ok()?,
            date_part.get(6..)?.parse().ok()?,
        ));
    }
    let parts: Vec<&str> = date_part
        .split(['-', '/', '.'])
        .filter(|p| !p.is_empty())
        .collect();
    let [a, b, c] = parts.as_slice() else { return None };
    let month_name = |s: &str| {
        let lower = s.to_lowercase();
        MONTHS
            .iter()
            .position(|m| lower.starts_with(m))
            .and_then(|i| u32::try_from(i.saturating_add(1)).ok())
    };
    let number = |s: &str| s.parse::<u32>().ok();
    if let Some(month) = month_name(b) {
        // 01-Jan-2025, 2025-Jan-01
        if a.len() == 4 {
            return Some(Shape::Named(a.parse().ok()?, month, number(c)?));
        }
        return Some(Shape::Named(year(c)?, month, number(a)?));
    }
    if let Some(month) = month_name(a) {
        // Jan-1-2025
        return Some(Shape::Named(year(c)?, month, number(b)?));
    }
    if a.len() == 4 {
        return Some(Shape::YearFirst(a.parse().ok()?, number(b)?, number(c)?));
    }
    if a.len() <= 2 && b.len() <= 2 && c.len() == 4 {
        return Some(Shape::YearLast(number(a)?, number(b)?, year(c)?));
    }
    if a.len() <= 2 && b.len() <= 2 && c.len() == 2 {
        return Some(Shape::Short(number(a)?, number(b)?, number(c)?));
    }
    None
}

/// A four-digit year, or a two-digit one (see [`century`]).
fn year(text: &str) -> Option<i32> {
    let value: i32 = text.parse().ok()?;
    match text.len() {
        4 => Some(value),
        2 => Some(century(value)),
        _ => None,
    }
}

/// A two-digit year read as 20YY up to 69 and 19YY from 70.
fn century(short: i32) -> i32 {
    short.saturating_add(if short < 70 { 2000 } else { 1900 })
}

/// Decides day-first or month-first from every date cell of a file: a first number above 12
/// means day-first, a second number above 12 month-first. When nothing decides it, the order
/// that keeps the statement in date order wins, and day-first breaks a tie. Returns the order and
/// a sentence saying why; `Err` when the file contradicts itself.
pub fn decide_order<'a>(cells: impl Iterator<Item = &'a str>) -> Result<(DateOrder, String), String> {
    let all: Vec<Shape> = cells.filter_map(shape).collect();
    // Two-digit years: a first number above 31 is a year (year-first), a last one above 31 too.
    let shorts = || {
        all.iter().filter_map(|s| match s {
            Shape::Short(a, b, c) => Some((*a, *b, *c)),
            _ => None,
        })
    };
    let year_first = shorts().find(|(a, _, _)| *a > 31);
    let year_last = shorts().find(|(_, _, c)| *c > 31);
    let four_digit_last = all.iter().any(|s| matches!(s, Shape::YearLast(..)));
    if let Some((a, b, c)) = year_first {
        if let Some((x, y, z)) = year_last {
            return Err(format!(
                "dates contradict each other: {a:02}/{b:02}/{c:02} has its year first but {x:02}/{y:02}/{z:02} last"
            ));
        }
        if four_digit_last {
            return Err(format!(
                "dates contradict each other: {a:02}/{b:02}/{c:02} has its year first, others have it last"
            ));
        }
        return Ok((
            DateOrder::YearFirst,
            format!("year-first ({a:02}/{b:02}/{c:02} has no day or month {a})"),
        ));
    }
    let shapes: Vec<(u32, u32, i32)> = all
        .iter()
        .filter_map(|s| match *s {
            Shape::YearLast(a, b, y) => Some((a, b, y)),
            Shape::Short(a, b, c) => Some((a, b, century(i32::try_from(c).ok()?))),
            Shape::YearFirst(..) | Shape::Named(..) => None,
        })
        .collect();
    let day_first_evidence = shapes.iter().find(|(a, _, _)| *a > 12);
    let month_first_evidence = shapes.iter().find(|(_, b, _)| *b > 12);
    match (day_first_evidence, month_first_evidence) {
        (Some(d), Some(m)) => Err(format!(
            "dates contradict each other: {}/{}/{} is day-first but {}/{}/{} is month-first",
            d.0, d.1, d.2, m.0, m.1, m.2
        )),
        (Some(d), None) => Ok((
            DateOrder::DayFirst,
            format!("day-first ({}/{}/{} has no month {})", d.0, d.1, d.2, d.0),
        )),
        (None, Some(m)) => Ok((
            DateOrder::MonthFirst,
            format!("month-first ({}/{}/{} has no month {})", m.0, m.1, m.2, m.1),
        )),
        (None, None) if shapes.is_empty() => Ok((DateOrder::DayFirst, "no ambiguous dates".to_owned())),
        (None, None) => {
            let sorted_as = |order: DateOrder| {
                let dates: Vec<NaiveDate> = shapes
                    .iter()
                    .filter_map(|&(a, b, y)| build(order, a, b, y))
                    .collect();
                let pairs = || dates.iter().zip(dates.iter().skip(1));
                pairs().all(|(a, b)| a <= b) || pairs().all(|(a, b)| a >= b)
            };
            match (sorted_as(DateOrder::DayFirst), sorted_as(DateOrder::MonthFirst)) {
                (false, true) => Ok((
                    DateOrder::MonthFirst,
                    "month-first (only that order keeps the dates in sequence)".to_owned(),
                )),
                (true, false) => Ok((
                    DateOrder::DayFirst,
                    "day-first (only that order keeps the dates in sequence)".to_owned(),
                )),
                _ => Ok((
                    DateOrder::DayFirst,
                    "day-first assumed: no date in the file decides the order".to_owned(),
                )),
            }
        }
    }
}

/// The date `a/b/year` is under a year-last order (none under year-first).
fn build(order: DateOrder, a: u32, b: u32, year: i32) -> Option<NaiveDate> {
    match order {
        DateOrder::DayFirst => NaiveDate::from_ymd_opt(year, b, a),
        DateOrder::MonthFirst => NaiveDate::from_ymd_opt(year, a, b),
        DateOrder::YearFirst => None,
    }
}

/// Parses one date cell with the file's order; `Err` with the reason when it is not a date.
pub fn parse_date(cell: &str, order: DateOrder) -> Result<NaiveDate, String> {
    let not_a_date = || format!("{:?} is not a date", cell.trim());
    match shape(cell).ok_or_else(not_a_date)? {
        Shape::YearFirst(y, m, d) | Shape::Named(y, m, d) => NaiveDate::from_ymd_opt(y, m, d),
        Shape::YearLast(..) if order == DateOrder::YearFirst => {
            return Err(format!(
                "{:?} has its year last, not first: the dates are not year-first (--date-order dmy or mdy)",
                cell.trim()
            ));
        }
        Shape::YearLast(a, b, y) => build(order, a, b, y),
        Shape::Short(y, m, d) if order == DateOrder::YearFirst => {
            NaiveDate::from_ymd_opt(century(i32::try_from(y).map_err(|_| not_a_date())?), m, d)
        }
        Shape::Short(a, b, c) => build(order, a, b, century(i32::try_from(c).map_err(|_| not_a_date())?)),
    }
    .ok_or_else(not_a_date)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn shapes() {
        for (cell, order, expected) in [
            ("2025-03-08", DateOrder::DayFirst, "2025-03-08"),
            ("2012/3/22", DateOrder::DayFirst, "2012-03-22"),
            ("20200213", DateOrder::MonthFirst, "2020-02-13"),
            ("13/01/2025", DateOrder::DayFirst, "2025-01-13"),
            ("01/13/2025", DateOrder::MonthFirst, "2025-01-13"),
            ("03/05/23", DateOrder::DayFirst, "2023-05-03"),
            ("03.05.2023", DateOrder::DayFirst, "2023-05-03"),
            ("2021-09-05 11:32:41", DateOrder::DayFirst, "2021-09-05"),
            ("2020-11-15T18:00:21Z", DateOrder::DayFirst, "2020-11-15"),
            ("01 Jan 2025", DateOrder::MonthFirst, "2025-01-01"),
            ("Jan 5, 2025", DateOrder::DayFirst, "2025-01-05"),
            ("5-JAN-25", DateOrder::MonthFirst, "2025-01-05"),
            ("10/02/2021 09:15", DateOrder::MonthFirst, "2021-10-02"),
            ("31/12/99", DateOrder::DayFirst, "1999-12-31"),
            ("24/03/05", DateOrder::YearFirst, "2024-03-05"),
            ("24/03/05", DateOrder::DayFirst, "2005-03-24"),
            ("2024-03-05", DateOrder::YearFirst, "2024-03-05"),
        ] {
            assert_eq!(parse_date(cell, order), Ok(day(expected)), "{cell}");
        }
        for bad in ["", "yesterday", "2025-02-30", "13/13/2025", "12345", "1/2"] {
            assert!(parse_date(bad, DateOrder::DayFirst).is_err(), "{bad}");
        }
        let error = parse_date("05/03/2024", DateOrder::YearFirst).unwrap_err();
        assert!(error.contains("not year-first"), "{error}");
    }

    #[test]
    fn order_is_decided_from_the_file() {
        let (order, why) = decide_order(["01/02/2025", "13/02/2025"].into_iter()).unwrap();
        assert_eq!(order, DateOrder::DayFirst, "{why}");
        assert!(why.contains("13/2/2025"), "{why}");
        assert_eq!(
            decide_order(["02/13/2025", "01/02/2025"].into_iter()).unwrap().0,
            DateOrder::MonthFirst
        );
        assert!(decide_order(["13/02/2025", "02/13/2025"].into_iter()).is_err());
        // Nothing above 12: the order that keeps the statement sorted wins.
        let (order, _) = decide_order(["01/05/2025", "01/06/2025", "02/01/2025"].into_iter()).unwrap();
        assert_eq!(order, DateOrder::MonthFirst);
        let (order, why) = decide_order(["01/03/2025", "02/03/2025"].into_iter()).unwrap();
        assert_eq!(order, DateOrder::DayFirst);
        assert!(why.contains("assumed"), "{why}");
        assert_eq!(
            decide_order(["2025-01-02"].into_iter()).unwrap().0,
            DateOrder::DayFirst
        );
        // Two-digit years: a first number that is no day or month puts the year first.
        let (order, why) = decide_order(["99/12/31", "00/01/02"].into_iter()).unwrap();
        assert_eq!(order, DateOrder::YearFirst, "{why}");
        assert!(why.contains("no day or month 99"), "{why}");
        assert!(decide_order(["99/12/31", "01/02/99"].into_iter()).is_err());
        assert!(decide_order(["99/12/31", "01/02/2024"].into_iter()).is_err());
    }
}
