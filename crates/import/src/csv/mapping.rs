//! Mapping files: kakeibo's own (a JSON [`Mapping`]) and the configuration files of the Firefly III
//! Data Importer, so a user coming from Firefly keeps their bank setups.
//!
//! A Firefly configuration names a role for each column by position (`date_transaction`,
//! `amount`, `amount_debit`, `description`, `currency-code`, `generic-debit-credit`, …), the
//! delimiter, whether the file has a header row, and the date format in PHP's letters (`d.m.Y`).
//! Those become column numbers, the delimiter, `header` and the order of day and month; the roles
//! kakeibo has no use for (IBANs, tags, budgets) are named in the notes, never silently dropped.

use serde_json::Value;

use super::{DateOrder, ImportError, Mapping};

/// A mapping read from a file, and what was left out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappingFile {
    pub mapping: Mapping,
    /// "a Firefly III Data Importer configuration (ff3-importer-1.3.9)" or "a kakeibo mapping".
    pub kind: String,
    /// Roles of the file that kakeibo does not use, by column.
    pub unused: Vec<String>,
}

/// Reads a mapping file: kakeibo's JSON mapping, or a Firefly III Data Importer configuration.
pub fn read_mapping(bytes: &[u8]) -> Result<MappingFile, ImportError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ImportError::Mapping(format!("the file is not JSON: {e}")))?;
    if value.get("roles").is_some() {
        return from_firefly(&value);
    }
    let mapping: Mapping = serde_json::from_value(value).map_err(|e| ImportError::Mapping(e.to_string()))?;
    mapping.delimiter_byte()?;
    Ok(MappingFile {
        mapping,
        kind: "a kakeibo mapping".to_owned(),
        unused: Vec::new(),
    })
}

/// The roles a Firefly configuration may give a column that kakeibo reads, in the order a
/// column is preferred for its place (the transaction date over the booking date).
const DATE_ROLES: [&str; 5] = [
    "date_transaction",
    "date",
    "date_book",
    "date_process",
    "date_payment",
];
const DESCRIPTION_ROLES: [&str; 4] = ["description", "narration", "opposing-name", "note"];
const DIRECTION_ROLES: [&str; 3] = ["generic-debit-credit", "rabo-debit-credit", "ing-debit-credit"];

/// A Firefly III Data Importer configuration as a mapping.
fn from_firefly(config: &Value) -> Result<MappingFile, ImportError> {
    let source = config["source"].as_str().unwrap_or("unknown version");
    let refuse =
        |why: String| ImportError::Mapping(format!("this Firefly III configuration ({source}) {why}"));
    if let Some(kind) = config["content_type"]
        .as_str()
        .filter(|k| !k.eq_ignore_ascii_case("csv"))
    {
        return Err(refuse(format!("is for {kind} files, not CSV")));
    }
    if let Some(flow) = config["flow"].as_str().filter(|f| *f != "file") {
        return Err(refuse(format!("imports from {flow}, not from a file")));
    }
    let roles: Vec<&str> = config["roles"]
        .as_array()
        .map(|r| r.iter().map(|v| v.as_str().unwrap_or("_ignore")).collect())
        .unwrap_or_default();
    // 1-based column numbers, as a mapping names them.
    let column = |wanted: &[&str]| -> Option<String> {
        wanted
            .iter()
            .find_map(|role| roles.iter().position(|r| r == role))
            .map(|i| i.saturating_add(1).to_string())
    };
    let date = column(&DATE_ROLES).ok_or_else(|| refuse("gives no column the role of a date".to_owned()))?;
    let negated = column(&["amount_negated"]);
    let debit = column(&["amount_debit", "debit_amount"]);
    let credit = column(&["amount_credit", "credit_amount"]);
    let split = debit.is_some() || credit.is_some();
    let amount = if split {
        None
    } else {
        column(&["amount"]).or_else(|| negated.clone())
    };
    if amount.is_none() && !split {
        return Err(refuse("gives no column the role of an amount".to_owned()));
    }
    let invert = !split && negated.is_some() && column(&["amount"]).is_none();
    let delimiter = match config["delimiter"].as_str() {
        Some("comma") | None => ",",
        Some("semicolon") => ";",
        Some("tab") => "tab",
        Some(other) => {
            return Err(refuse(format!(
                "uses the delimiter {other:?}, which kakeibo does not read"
            )));
        }
    };
    let date_format = config["date"].as_str().unwrap_or("");
    let mapping = Mapping {
        date: Some(date),
        description: column(&DESCRIPTION_ROLES),
        amount,
        debit,
        credit,
        currency: column(&["currency-code", "currency-name"]),
        category: column(&["category-name"]),
        balance: column(&["closing_balance"]),
        direction: column(&DIRECTION_ROLES),
        date_order: date_order(date_format),
        invert,
        delimiter: Some(delimiter.to_owned()),
        skip_lines: None,
        header: Some(config["headers"].as_bool().unwrap_or(false)),
    };
    // Every column given a role the mapping does not read is named: roles kakeibo has no use for,
    // and second columns of a role it reads once (a second description, a note beside one).
    let chosen: Vec<String> = [
        &mapping.date,
        &mapping.description,
        &mapping.amount,
        &mapping.debit,
        &mapping.credit,
        &mapping.currency,
        &mapping.category,
        &mapping.balance,
        &mapping.direction,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    let unused = roles
        .iter()
        .enumerate()
        .filter(|(i, role)| **role != "_ignore" && !chosen.contains(&i.saturating_add(1).to_string()))
        .map(|(i, role)| format!("column {}: {role}", i.saturating_add(1)))
        .collect();
    Ok(MappingFile {
        mapping,
        kind: format!("a Firefly III Data Importer configuration ({source})"),
        unused,
    })
}

/// The order of day and month in a PHP date format (`d.m.Y`, `m/d/Y`, `fr:d/m/Y`), or year-first
/// for a two-digit year first (`y-m-d`); none when a four-digit year comes first or the month is a
/// name, where no order needs deciding.
fn date_order(format: &str) -> Option<DateOrder> {
    // A locale prefix ("fr:", "nl:") before the format; the colons of a time come later.
    let format = format
        .split_once(':')
        .filter(|(l, _)| l.len() == 2 && l.chars().all(|c| c.is_ascii_lowercase()))
        .map_or(format, |(_, f)| f);
    let mut letters = format.chars().filter(|c| "djmnYyM".contains(*c));
    let first = letters.next()?;
    let second = letters.next()?;
    match (first, second) {
        ('d' | 'j', 'm' | 'n') => Some(DateOrder::DayFirst),
        ('m' | 'n', 'd' | 'j') => Some(DateOrder::MonthFirst),
        // A two-digit year first (`y-m-d`): `24-03-05` could be read with the year last.
        ('y', 'm' | 'n') => Some(DateOrder::YearFirst),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_orders_from_php_formats() {
        assert_eq!(date_order("d.m.Y"), Some(DateOrder::DayFirst));
        assert_eq!(date_order("fr:d/m/Y"), Some(DateOrder::DayFirst));
        assert_eq!(date_order("nl:d-m-Y H:i"), Some(DateOrder::DayFirst));
        assert_eq!(date_order("de:m/d/Y H:i"), Some(DateOrder::MonthFirst));
        assert_eq!(date_order("H:i, d/m/Y"), Some(DateOrder::DayFirst));
        assert_eq!(date_order("m#d#Y"), Some(DateOrder::MonthFirst));
        assert_eq!(date_order("n/j/Y"), Some(DateOrder::MonthFirst));
        assert_eq!(date_order("Y-m-d"), None);
        assert_eq!(date_order("d M Y"), None);
        assert_eq!(date_order("M d, Y"), None);
        assert_eq!(date_order(""), None);
    }

    #[test]
    fn a_firefly_configuration_becomes_a_mapping() {
        let config = br#"{"version": 3, "source": "ff3-importer-1.3.9", "date": "d/m/Y", "delimiter": "semicolon",
            "headers": true, "roles": ["date_transaction", "opposing-iban", "description", "amount_negated", "currency-code", "note"],
            "flow": "file", "content_type": "csv"}"#;
        let read = read_mapping(config).unwrap();
        let m = &read.mapping;
        assert_eq!(m.date.as_deref(), Some("1"));
        assert_eq!(m.description.as_deref(), Some("3"));
        assert_eq!(m.amount.as_deref(), Some("4"));
        assert!(m.invert, "amount_negated: spending written as positive");
        assert_eq!(m.currency.as_deref(), Some("5"));
        assert_eq!((m.delimiter.as_deref(), m.header), (Some(";"), Some(true)));
        assert_eq!(m.date_order, Some(DateOrder::DayFirst));
        assert_eq!(read.unused, ["column 2: opposing-iban", "column 6: note"]);
    }

    #[test]
    fn refusals_say_why() {
        let refused = |json: &str| read_mapping(json.as_bytes()).unwrap_err().to_string();
        assert!(refused("not json").contains("not JSON"));
        assert!(refused(r#"{"roles": ["description", "amount"]}"#).contains("no column the role of a date"));
        assert!(refused(r#"{"roles": ["date_transaction"], "content_type": "camt"}"#).contains("camt files"));
        assert!(refused(r#"{"date": "1", "colour": "2"}"#).contains("unknown field `colour`"));
        assert!(refused(r#"{"date": "1", "delimiter": "x"}"#).contains("delimiter"));
    }
}
