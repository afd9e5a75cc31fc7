//! Dates as banks write them. Numeric day/month order is decided once per file, from the data.

use chrono::NaiveDate;

/// How a file writes numeric dates whose year comes last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DateOrder {
    DayFirst,
    MonthFirst,
}

/// The pieces of a date cell before the order is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Year first (ISO and its variants): unambiguous.
    YearFirst(i32, u32, u32),
    /// `a/b/year`: day-month or month-day.
    YearLast(u32, u32, i32),
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
            date_part[..4].parse().ok()?,
            date_part[4..6].parse().ok()?,
            date_part[6..].parse().ok()?,
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
            .and_then(|i| u32::try_from(i + 1).ok())
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
    if a.len() <= 2 && b.len() <= 2 && (c.len() == 4 || c.len() == 2) {
        return Some(Shape::YearLast(number(a)?, number(b)?, year(c)?));
    }
    None
}

/// A four-digit year, or a two-digit one read as 20YY up to 69 and 19YY from 70.
fn year(text: &str) -> Option<i32> {
    let value: i32 = text.parse().ok()?;
    match text.len() {
        4 => Some(value),
        2 if value < 70 => Some(2000 + value),
        2 => Some(1900 + value),
        _ => None,
    }
}

/// Decides day-first or month-first from every date cell of a file: a first number above 12
/// means day-first, a second number above 12 month-first. When nothing decides it, the order
/// that keeps the statement in date order wins, and day-first breaks a tie. Returns the order and
/// a sentence saying why; `Err` when the file contradicts itself.
pub fn decide_order<'a>(cells: impl Iterator<Item = &'a str>) -> Result<(DateOrder, String), String> {
    let shapes: Vec<(u32, u32, i32)> = cells
        .filter_map(shape)
        .filter_map(|s| {
            if let Shape::YearLast(a, b, y) = s {
                Some((a, b, y))
            } else {
                None
            }
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
                dates.windows(2).all(|w| w[0] <= w[1]) || dates.windows(2).all(|w| w[0] >= w[1])
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

fn build(order: DateOrder, a: u32, b: u32, year: i32) -> Option<NaiveDate> {
    match order {
        DateOrder::DayFirst => NaiveDate::from_ymd_opt(year, b, a),
        DateOrder::MonthFirst => NaiveDate::from_ymd_opt(year, a, b),
    }
}

/// Parses one date cell with the file's order; `Err` with the reason when it is not a date.
pub fn parse_date(cell: &str, order: DateOrder) -> Result<NaiveDate, String> {
    let not_a_date = || format!("{:?} is not a date", cell.trim());
    match shape(cell).ok_or_else(not_a_date)? {
        Shape::YearFirst(y, m, d) | Shape::Named(y, m, d) => NaiveDate::from_ymd_opt(y, m, d),
        Shape::YearLast(a, b, y) => build(order, a, b, y),
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
        ] {
            assert_eq!(parse_date(cell, order), Ok(day(expected)), "{cell}");
        }
        for bad in ["", "yesterday", "2025-02-30", "13/13/2025", "12345", "1/2"] {
            assert!(parse_date(bad, DateOrder::DayFirst).is_err(), "{bad}");
        }
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
    }
}
