//! The seed's three files: `transactions.csv`, `labels.json` (ground truth) and `rates.json`.

use std::{fs, path::Path};

use chrono::NaiveDate;
use serde::{Serialize, Serializer};

use kakeibo_money::{Currency, Money, StaticRates};

use crate::{AnomalyKind, END_DATE, MONTHS, SEED, SeedData, SeedError};

const HEADER: [&str; 4] = ["date", "description", "amount", "category"];

/// `transactions.csv`: `date,description,amount,category`, amounts as decimal rupees, the
/// category cell empty for the rows that arrive uncategorised; fields quoted only when needed.
pub fn transactions_csv(data: &SeedData) -> Result<String, SeedError> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(Vec::new());
    let csv_error = |e: csv::Error| SeedError(format!("writing CSV: {e}"));
    writer.write_record(HEADER).map_err(csv_error)?;
    for row in &data.rows {
        let amount = Money::new(row.amount_minor, Currency::INR).to_decimal_string();
        let category = if row.uncategorized_on_import {
            ""
        } else {
            row.category
        };
        writer
            .write_record([
                row.date.to_string().as_str(),
                &neutralise_formula(&row.description),
                &amount,
                category,
            ])
            .map_err(csv_error)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| SeedError(format!("writing CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| SeedError(format!("writing CSV: {e}")))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Labels<'a> {
    generated_with: GeneratedWith,
    transactions: Vec<LabelRow<'a>>,
    recurring: Vec<LabelRecurring<'a>>,
    anomalies: Vec<LabelAnomaly<'a>>,
    hostile: Vec<LabelHostile<'a>>,
    totals: Totals,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeneratedWith {
    seed: u32,
    end_date: &'static str,
    months: [&'static str; 6],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LabelRow<'a> {
    line: usize,
    date: String,
    description: &'a str,
    amount_minor: i64,
    category: &'a str,
    uncategorized_on_import: bool,
}

#[derive(Serialize)]
struct LabelRecurring<'a> {
    merchant: &'a str,
    cadence: &'static str,
    occurrences: usize,
    category: &'a str,
}

#[derive(Serialize)]
struct LabelAnomaly<'a> {
    line: usize,
    kind: &'static str,
    note: &'a str,
}

#[derive(Serialize)]
struct LabelHostile<'a> {
    line: usize,
    description: &'a str,
    attack: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Totals {
    row_count: usize,
    uncategorized_count: usize,
    by_category: Ordered<usize>,
}

/// A JSON object whose keys keep the order they were added in.
struct Ordered<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// `labels.json`: the ground truth of every row, the recurring merchants, the anomalies, the
/// hostile rows and the totals (rows per true category, in order of first appearance).
pub fn labels_json(data: &SeedData) -> Result<String, SeedError> {
    let mut by_category: Vec<(String, usize)> = Vec::new();
    for row in &data.rows {
        match by_category.iter_mut().find(|(name, _)| name == row.category) {
            Some((_, count)) => *count = count.saturating_add(1),
            None => by_category.push((row.category.to_owned(), 1)),
        }
    }
    let labels = Labels {
        generated_with: GeneratedWith {
            seed: SEED,
            end_date: END_DATE,
            months: MONTHS,
        },
        transactions: data
            .rows
            .iter()
            .map(|r| LabelRow {
                line: r.line,
                date: r.date.to_string(),
                description: &r.description,
                amount_minor: r.amount_minor,
                category: r.category,
                uncategorized_on_import: r.uncategorized_on_import,
            })
            .collect(),
        recurring: data
            .recurring
            .iter()
            .map(|r| LabelRecurring {
                merchant: r.merchant,
                cadence: "monthly",
                // Each recurring item is generated once a month.
                occurrences: MONTHS.len(),
                category: r.category,
            })
            .collect(),
        anomalies: data
            .anomalies
            .iter()
            .map(|a| LabelAnomaly {
                line: a.line,
                kind: match a.kind {
                    AnomalyKind::Outlier => "outlier",
                    AnomalyKind::Duplicate => "duplicate",
                    AnomalyKind::Refund => "refund",
                },
                note: a.note,
            })
            .collect(),
        hostile: data
            .hostile
            .iter()
            .map(|h| LabelHostile {
                line: h.line,
                description: h.description,
                attack: h.attack,
            })
            .collect(),
        totals: Totals {
            row_count: data.rows.len(),
            uncategorized_count: data.rows.iter().filter(|r| r.uncategorized_on_import).count(),
            by_category: Ordered(by_category),
        },
    };
    let mut json = serde_json::to_string_pretty(&labels).map_err(|e| SeedError(e.to_string()))?;
    json.push('\n');
    Ok(json)
}

/// `rates.json`: the static rates per unit of the base currency, with their date.
pub fn rates_json(rates: &StaticRates) -> Result<String, SeedError> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct RatesFile {
        base: Currency,
        as_of: &'static str,
        note: &'static str,
        rates: Ordered<serde_json::Number>,
    }
    let number = |scaled: i64| -> Result<serde_json::Number, SeedError> {
        if scaled % StaticRates::SCALE == 0 {
            return Ok(serde_json::Number::from(scaled / StaticRates::SCALE));
        }
        let text = format!(
            "{}.{:06}",
            scaled / StaticRates::SCALE,
            scaled % StaticRates::SCALE
        );
        let trimmed = text.trim_end_matches('0');
        trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .ok_or_else(|| SeedError(format!("rate {trimmed} is not a JSON number")))
    };
    let file = RatesFile {
        base: rates.base,
        as_of: rates.as_of,
        note: rates.note,
        rates: Ordered(
            rates
                .per_base_unit
                .iter()
                .map(|(currency, scaled)| Ok((currency.to_string(), number(*scaled)?)))
                .collect::<Result<_, SeedError>>()?,
        ),
    };
    let mut json = serde_json::to_string_pretty(&file).map_err(|e| SeedError(e.to_string()))?;
    json.push('\n');
    Ok(json)
}

/// Writes the three files into `dir` (created when missing).
pub fn write_files(dir: &Path, data: &SeedData, rates: &StaticRates) -> Result<(), SeedError> {
    let io = |what: &Path, e: std::io::Error| SeedError(format!("{}: {e}", what.display()));
    fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    for (name, contents) in [
        ("transactions.csv", transactions_csv(data)?),
        ("labels.json", labels_json(data)?),
        ("rates.json", rates_json(rates)?),
    ] {
        let path = dir.join(name);
        fs::write(&path, contents).map_err(|e| io(&path, e))?;
    }
    Ok(())
}

/// One row of a seed `transactions.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    /// The CSV line number (the header is line 1).
    pub csv_line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    /// `None` when the cell is empty.
    pub category: Option<String>,
}

/// Reads a seed `transactions.csv` (exactly the header `date,description,amount,category`, INR).
/// Any bad row fails the whole read, naming its line: a seed is all or nothing.
pub fn read_transactions_csv(text: &str) -> Result<Vec<CsvRow>, SeedError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| SeedError(format!("line 1: {e}")))?;
    if header.iter().collect::<Vec<_>>() != HEADER {
        return Err(SeedError(format!(
            "line 1: expected the header {:?}, found {:?}",
            HEADER.join(","),
            header.iter().collect::<Vec<_>>().join(",")
        )));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| SeedError(e.to_string()))?;
        let csv_line = record
            .position()
            .map_or(0, |p| usize::try_from(p.line()).unwrap_or(0));
        let bad = |what: &str| SeedError(format!("line {csv_line}: {what}"));
        let [date, description, amount, category] = [0, 1, 2, 3].map(|i| record.get(i).unwrap_or_default());
        if record.len() != 4 {
            return Err(bad(&format!("expected 4 fields, found {}", record.len())));
        }
        let date =
            NaiveDate::parse_from_str(date, "%Y-%m-%d").map_err(|_| bad(&format!("bad date {date:?}")))?;
        let amount_minor = Money::parse_decimal(amount, Currency::INR)
            .map_err(|e| bad(&e.to_string()))?
            .amount_minor;
        if description.trim().is_empty() {
            return Err(bad("empty description"));
        }
        rows.push(CsvRow {
            csv_line,
            date,
            description: description.to_owned(),
            amount_minor,
            category: Some(category.to_owned()).filter(|c| !c.is_empty()),
        });
    }
    Ok(rows)
}

/// A cell as it may be written into a CSV file a spreadsheet will open: text starting with
/// `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so it is never run as a
/// formula.
pub fn neutralise_formula(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised() {
        assert_eq!(neutralise_formula("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(neutralise_formula("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(neutralise_formula("-2+3"), "'-2+3");
        assert_eq!(neutralise_formula("SWIGGY"), "SWIGGY");
    }
}
