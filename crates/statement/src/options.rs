//! How a statement is to be read: the options every reader takes, and the person's mapping of a
//! delimited file's columns.

use kakeibo_money::Currency;

use crate::parsed::{Figure, ImportError};

/// How to read a statement.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    pub mapping: Mapping,
    /// The currency of amounts that name none (when unset and nothing in the file names one, the
    /// rows are marked `currency_unstated` and the plan decides).
    pub currency: Option<Currency>,
    /// The order of day and month to take when every date reads either way, and why (a previous
    /// import into the same account); the file's own dates and the mapping's order come first.
    pub date_hint: Option<(DateOrder, String)>,
    /// Rows the balance column refuses, taken in anyway at the figure their person chose (by
    /// line). A line the balance column does not refuse, or refuses with no change to take, is
    /// left as it would be without.
    pub figures: std::collections::BTreeMap<usize, Figure>,
    /// Which statement of a file of several to read (1-based); a file of one needs none.
    pub statement: Option<usize>,
}

/// How a file writes numeric dates that could be read more than one way: `4/6/25` is 4 June 2025
/// day-first (`dmy`), April 6 month-first (`mdy`), and 6 April 2004 year-first (`ymd`, only with
/// two-digit years: a four-digit year says where it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DateOrder {
    #[serde(alias = "dmy")]
    DayFirst,
    #[serde(alias = "mdy")]
    MonthFirst,
    #[serde(alias = "ymd")]
    YearFirst,
}

impl DateOrder {
    /// "day-first", "month-first" or "year-first".
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::DayFirst => "day-first",
            Self::MonthFirst => "month-first",
            Self::YearFirst => "year-first",
        }
    }
}

/// Which character separates the decimals, decided once per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecimalMark {
    Point,
    Comma,
}

/// How to read a statement where the importer's own detection needs help: column choices that
/// override what the headers suggest (header names, case-insensitive, or 1-based column numbers),
/// the delimiter, lines to skip, whether there is a header row, the order of day and month, and
/// whether every sign is flipped. `--mapping FILE` reads one (or a Firefly III Data Importer
/// configuration); the import tool takes one; the last one used for an account is saved with it.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    pub date: Option<String>,
    pub description: Option<String>,
    pub amount: Option<String>,
    pub debit: Option<String>,
    pub credit: Option<String>,
    pub currency: Option<String>,
    pub category: Option<String>,
    /// The running-balance column, which every row's amount is reconciled against.
    #[serde(default)]
    pub balance: Option<String>,
    /// A column saying which way each amount goes (debit/credit, Af/Bij, S/H, DR/CR).
    #[serde(default)]
    pub direction: Option<String>,
    /// How numeric dates are written when every date could be read either way (4/6: day_first is 4 June).
    #[serde(default)]
    pub date_order: Option<DateOrder>,
    /// The statement shows spending as positive amounts (most card statements): flip every sign.
    #[serde(default)]
    pub invert: bool,
    /// The delimiter: "," ";" "tab" or "|" (found from the file when unset).
    #[serde(default)]
    pub delimiter: Option<String>,
    /// Lines at the top of the file to pass over before the header (or the first row).
    #[serde(default)]
    pub skip_lines: Option<usize>,
    /// Whether the first line after the skipped ones is a header row (found from the file when
    /// unset); false means every line is a row and columns are named by number.
    #[serde(default)]
    pub header: Option<bool>,
}

impl Mapping {
    /// Whether the mapping names any column (rather than only hints such as the date order).
    #[must_use]
    pub fn names_columns(&self) -> bool {
        [
            &self.date,
            &self.description,
            &self.amount,
            &self.debit,
            &self.credit,
            &self.currency,
            &self.category,
            &self.balance,
            &self.direction,
        ]
        .iter()
        .any(|c| c.is_some())
    }

    /// The delimiter byte it names, if any; an unknown one is an error naming the accepted ones.
    pub fn delimiter_byte(&self) -> Result<Option<u8>, ImportError> {
        let Some(name) = self.delimiter.as_deref() else {
            return Ok(None);
        };
        match name {
            "," | "comma" => Ok(Some(b',')),
            ";" | "semicolon" => Ok(Some(b';')),
            "\t" | "tab" => Ok(Some(b'\t')),
            "|" | "pipe" => Ok(Some(b'|')),
            other => Err(ImportError::Mapping(format!(
                "the delimiter {other:?} is not one of \",\" \";\" \"tab\" \"|\""
            ))),
        }
    }
}
