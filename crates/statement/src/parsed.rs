//! A statement as read: its rows with their dates, amounts and currencies, the rows refused
//! with their line and reason, and where every line of the file went. What every format's reader
//! gives, and what the ledger plans an import from.

use chrono::NaiveDate;
use kakeibo_money::Currency;
use serde::{Deserialize, Serialize};

use crate::{
    options::{DateOrder, DecimalMark, Mapping},
    reconciliation::Reconciliation,
    sniff::StatementFormat,
};

/// Why a whole file is refused (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("the file is empty")]
    Empty,
    #[error("the file is not a text statement (it looks binary)")]
    Binary,
    #[error("the file is {bytes} bytes; statements up to {limit} bytes are accepted")]
    TooLarge { bytes: usize, limit: usize },
    #[error("cannot read the text: {0}")]
    Encoding(String),
    #[error(
        "no header row with a date column and an amount (or debit/credit) column was found in the first lines; \
         name the date and amount (or debit and credit) columns in the mapping, by header or 1-based number"
    )]
    NoHeader,
    #[error("{0}")]
    Dates(String),
    #[error("no data rows under the header (line {header_line})")]
    NoRows { header_line: usize },
    #[error("the mapping cannot be used: {0}")]
    Mapping(String),
    /// A statement of a format kakeibo recognises but does not read yet (or a document that is
    /// no statement at all).
    #[error("{}", not_read(*.format, .why))]
    NotRead { format: StatementFormat, why: String },
    /// A structured statement that cannot be read as a whole (an error answer from the bank, a
    /// file cut short, markup nested past the limit), in words.
    #[error("{0}")]
    Statement(String),
    /// A file of several statements (accounts) when one reads into one account: which ones, so
    /// its person can name the one to import.
    #[error(
        "the file holds {} statements: {}; import one at a time, naming it by its number (`--statement N`)",
        .statements.len(), .statements.iter().enumerate().map(|(i, s)| format!("{}. {s}", i.saturating_add(1))).collect::<Vec<_>>().join(", ")
    )]
    SeveralStatements { statements: Vec<String> },
}

fn not_read(format: StatementFormat, why: &str) -> String {
    match format {
        StatementFormat::OtherXml => {
            format!("the file is not a bank statement: it is {format}, known by {why}")
        }
        _ => format!(
            "the file is a bank statement in {format}, known by {why}, which this reader does not read: import it \
             with `kakeibo import`, which reads every format"
        ),
    }
}

/// One problem row: where, which column, what, and the line as written (clipped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowError {
    pub line: usize,
    pub column: Option<String>,
    pub message: String,
    pub raw: String,
    /// The two figures of a row whose amount disagrees with the statement's balance column: the
    /// person may take it in at either ([`ParseOptions::figures`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}

/// A row's amount as read and the change of the balance column across it, as they would be
/// booked (money in positive, after any flip of the statement's signs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    pub amount_minor: i64,
    pub balance_minor: i64,
    pub currency: Currency,
    /// Nothing named the row's currency: the plan gives the figures its rows' (as
    /// [`ParsedRow::currency_unstated`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub currency_unstated: bool,
}

impl Figures {
    /// Both figures with their signs turned (a file that writes spending as positive).
    #[must_use]
    pub fn flipped(self) -> Self {
        Self {
            amount_minor: self.amount_minor.saturating_neg(),
            balance_minor: self.balance_minor.saturating_neg(),
            ..self
        }
    }

    /// The figure `take` names.
    #[must_use]
    pub fn of(&self, take: Figure) -> i64 {
        match take {
            Figure::Amount => self.amount_minor,
            Figure::Balance => self.balance_minor,
        }
    }
}

/// Which figure a row refused by the balance column is taken in at, as its person said.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The amount the row states.
    Amount,
    /// The change of the balance column across the row.
    Balance,
}

/// A row the balance column refused, taken in at the figure its person chose: recorded with the
/// plan, so the import says which rows were booked on a person's word and at what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TakenFigure {
    pub line: usize,
    pub take: Figure,
    #[serde(flatten)]
    pub figures: Figures,
}

impl TakenFigure {
    /// "line 4 at the balance's change -$12.00", or "line 6 left out: its balance did not move"
    /// for a row taken at a balance change of nothing (it moves no money, and is not booked).
    #[must_use]
    pub fn in_words(&self) -> String {
        let minor = self.figures.of(self.take);
        let money = kakeibo_money::Money::new(minor, self.figures.currency).format();
        match self.take {
            Figure::Balance if minor == 0 => format!("line {} left out: its balance did not move", self.line),
            Figure::Balance => format!("line {} at the balance's change {money}", self.line),
            Figure::Amount => format!("line {} at its amount {money}", self.line),
        }
    }
}

/// One row read from a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParsedRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    pub amount_minor: i64,
    pub currency: Currency,
    /// The statement's own category cell, if it has one.
    pub category: Option<String>,
    /// Nothing in the file or the options named this row's currency: the plan takes it from the
    /// account the statement goes into when that account is in use, or refuses.
    #[serde(default)]
    pub currency_unstated: bool,
    /// The bank's own id of the row when the format has one (OFX `FITID`): what tells two equal
    /// rows apart, and a row downloaded twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_ref: Option<String>,
    /// What few rows have: the other side's account, a split. Boxed, so a row without (most
    /// rows) costs one word for it: a 10 MiB statement holds a hundred thousand rows and more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Box<RowDetail>>,
}

impl ParsedRow {
    /// The account on the other side, by its number as the bank wrote it.
    #[must_use]
    pub fn counterparty_account(&self) -> Option<&str> {
        self.detail.as_ref()?.counterparty_account.as_deref()
    }

    /// The row's parts across categories; empty for a row of one category.
    #[must_use]
    pub fn splits(&self) -> &[Split] {
        self.detail.as_ref().map_or(&[], |d| d.splits.as_slice())
    }
}

/// What few rows of a statement have.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowDetail {
    /// The account on the other side, by its number as the bank wrote it (camt `CdtrAcct`/
    /// `DbtrAcct`, OFX `BANKACCTTO`, MT940 `?31`): a number of another of the owner's accounts
    /// makes the row a transfer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty_account: Option<String>,
    /// The row split across categories (a QIF split whose parts add up to it): each part booked
    /// to its own category, in one transaction. Empty for a row of one category.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<Split>,
}

impl RowDetail {
    /// The detail of a row, none when it has neither.
    #[must_use]
    pub fn of(counterparty_account: Option<String>, splits: Vec<Split>) -> Option<Box<Self>> {
        (counterparty_account.is_some() || !splits.is_empty()).then(|| {
            Box::new(Self {
                counterparty_account,
                splits,
            })
        })
    }
}

/// One part of a split row: its category as the file names it, and its amount (signed as the
/// row is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Split {
    pub category: String,
    pub amount_minor: i64,
}

/// What was detected about the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Format {
    pub encoding: String,
    pub delimiter: String,
    pub header_line: usize,
    pub columns: std::collections::BTreeMap<String, String>,
    pub date_order: DateOrder,
    pub date_order_reason: String,
    /// Every numeric date could be read either way and nothing in the file decided: the order is
    /// a hint's or the default, and the preview says so.
    #[serde(default)]
    pub date_order_assumed: bool,
    /// Where the currency of amounts that name none came from ("the currency column", "the
    /// account Checking, which holds INR"); none when every amount names its own.
    #[serde(default)]
    pub currency_from: Option<String>,
    pub decimal_mark: DecimalMark,
    /// How the amounts agreed with the running-balance column, when the statement has one.
    #[serde(default)]
    pub reconciliation: Option<Reconciliation>,
    /// Every sign was flipped, as the mapping asked (a statement that writes spending as positive).
    #[serde(default)]
    pub inverted: bool,
    /// Why the amounts are spending written as positive (and so were turned to money out), when
    /// the file's own words say so.
    #[serde(default)]
    pub spending_positive: Option<String>,
    /// Where the mapping came from when it was not given with this import ("the mapping saved
    /// with Checking by the import of jan.csv").
    #[serde(default)]
    pub mapping_from: Option<String>,
    /// The accounts the rows belong to, when the file names more than one in an account column
    /// (an app's export of several); each one's balances are checked on their own.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// How the fees of a fee column were read, when any row has one.
    #[serde(default)]
    pub fees: Option<Fees>,
    /// What kind of account the statement is of, when the file says (a card's Sale, Payment and
    /// Return rows; a banner naming a credit card), and why.
    #[serde(default)]
    pub account_kind: Option<KindHint>,
    /// Rows the balance column refused that were taken in at the figure their person chose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taken: Vec<TakenFigure>,
    /// A structured statement's own account, period, stated balances and notes (OFX): none for
    /// delimited text, whose layout the fields above describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<StatementInfo>,
}

impl Format {
    /// The balance the statement says its account closed at: a delimited file's balance column
    /// after its last row, or a structured statement's booked balance.
    #[must_use]
    pub fn closing(&self) -> Option<crate::Closing> {
        self.reconciliation
            .as_ref()
            .and_then(|r| r.closing)
            .or_else(|| self.statement.as_ref().and_then(|s| s.closing))
    }
}

/// What a structured statement says of itself: the format and why it was recognised, which
/// statement of the file it is, its account, period and balances, and what the reader noticed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementInfo {
    pub format: StatementFormat,
    /// What in the file said so ("the header line `OFXHEADER:100`").
    pub recognised_by: String,
    /// Which statement of the file this is (1-based), and how many the file holds.
    pub number: usize,
    pub of: usize,
    /// The bank's account, as the statement names it.
    pub account: Option<StatementAccount>,
    /// The statement's own currency (OFX `CURDEF`), when it names one.
    pub currency: Option<kakeibo_money::Currency>,
    /// The period the statement covers, as it states it.
    pub period: Option<(NaiveDate, NaiveDate)>,
    /// The booked balance the statement states (OFX `LEDGERBAL`), as held: what is owed on a card
    /// is negative. The plan checks the account against it.
    pub closing: Option<crate::Closing>,
    /// The available balance, shown and never checked (it counts holds and limits).
    pub available: Option<crate::Closing>,
    /// What the reader noticed and did not change: an amount whose sign its transaction type
    /// contradicts, corrections that cannot be applied, investment lines left out. One sentence each.
    pub notes: Vec<String>,
}

impl StatementInfo {
    /// The statement as a person would say it: "OFX 1 (SGML), known by the header line
    /// `OFXHEADER:100`; windows-1252. Statement 1 of 2 is of the checking account …6789, from
    /// 2024-02-01 to 2024-02-29. Dates are the bank's calendar day as written; …", its notes after.
    #[must_use]
    pub fn in_words(&self, encoding: &str) -> String {
        let mut sentences = vec![format!(
            "{}, known by {}; {encoding}.",
            self.format, self.recognised_by
        )];
        let which = if self.of > 1 {
            format!("Statement {} of {}", self.number, self.of)
        } else {
            "The statement".to_owned()
        };
        let account = self.account.as_ref().map_or_else(
            || "names no account".to_owned(),
            |a| format!("is of the {}", a.in_words()),
        );
        let period = self
            .period
            .map(|(from, to)| format!(", from {from} to {to}"))
            .unwrap_or_default();
        sentences.push(format!("{which} {account}{period}."));
        sentences.push(
            "Dates are the bank's calendar day as written (no time zone moves them); amounts are signed as the bank \
             signs them, money out negative."
                .to_owned(),
        );
        if let (Some(available), Some(currency)) = (self.available, self.currency) {
            sentences.push(format!(
                "The bank's available balance on {} (not checked: it counts holds) is {}.",
                available.date,
                kakeibo_money::Money::new(available.held_minor, currency).format()
            ));
        }
        sentences.extend(self.notes.iter().map(|n| {
            let mut note = n.clone();
            if let Some(first) = note.get(..1) {
                let upper = first.to_uppercase();
                note.replace_range(..1, &upper);
            }
            format!("{note}.")
        }));
        sentences.join(" ")
    }
}

/// A bank account as a statement names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementAccount {
    /// The account number as written (`ACCTID`).
    pub id: String,
    /// The bank's routing number or id, when given (`BANKID`).
    pub bank: Option<String>,
    /// The kind of account in the statement's own word (`CHECKING`, `CREDITCARD`).
    pub kind_word: String,
}

impl StatementAccount {
    /// "checking account …5678", "credit card …2222": the kind in words and the number's last
    /// four characters.
    #[must_use]
    pub fn in_words(&self) -> String {
        let kind = match self.kind_word.to_ascii_uppercase().as_str() {
            "CREDITCARD" => "credit card".to_owned(),
            "CREDITLINE" => "credit line".to_owned(),
            "MONEYMRKT" => "money market account".to_owned(),
            "CD" => "certificate of deposit".to_owned(),
            other => format!("{} account", other.to_lowercase()),
        };
        format!("{kind} …{}", last_four(&self.id))
    }

    /// The name of the ledger account a statement of this account goes into when none is named
    /// and none was before: "Checking …5678", "Credit Card …2222".
    #[must_use]
    pub fn ledger_name(&self) -> String {
        let kind = match self.kind_word.to_ascii_uppercase().as_str() {
            "CHECKING" => "Checking",
            "SAVINGS" | "MONEYMRKT" | "CD" => "Savings",
            "CREDITCARD" | "CREDITLINE" => "Credit Card",
            "INVESTMENT" => "Brokerage Cash",
            _ => "Account",
        };
        format!("{kind} …{}", last_four(&self.id))
    }
}

/// The last four characters of an account number, spaces left out: all a page shows of it.
#[must_use]
pub fn last_four(id: &str) -> String {
    let chars: Vec<char> = id.chars().filter(|c| !c.is_whitespace()).collect();
    chars.iter().skip(chars.len().saturating_sub(4)).collect()
}

/// The kind of account a statement says it is of, and the words that say so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindHint {
    pub kind: kakeibo_money::AccountKind,
    pub why: String,
}

/// How a statement's fee column moves the money, as its balance column says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fees {
    /// The balance falls by the amount and the fee (Revolut): each row moves its amount less its fee.
    TakenOff,
    /// The balance falls by the amount alone: the fee is already in it (a net amount).
    Included,
    /// No balance column says which: the amounts are booked as written, the fees not taken off.
    Unchecked,
}

/// Where every physical line of a statement went. The counts add up to `total`: no line is
/// dropped without a word.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineCount {
    /// The file's lines.
    pub total: usize,
    /// Lines above the header row (the bank's banner: account, period, …).
    pub banner: usize,
    /// The header row (0 for a file without one).
    pub header: usize,
    /// Empty lines, and lines of empty cells.
    pub blank: usize,
    /// Lines with neither a date nor an amount (notes, footers) and `#` comments.
    pub notes: usize,
    /// Rows read; in a plan, the rows to add.
    pub rows: usize,
    /// In a plan: rows already in the ledger.
    pub duplicates: usize,
    /// Summary lines ("Closing balance") and rows that move no money.
    pub skipped: usize,
    /// Lines that could not be read, each in the errors with its reason.
    pub unreadable: usize,
    /// Lines that continue a quoted cell of the line above (a description written over two lines).
    pub continued: usize,
}

impl LineCount {
    /// The sum of every kind of line: `total` when every line is accounted for.
    #[must_use]
    pub fn accounted(&self) -> usize {
        [
            self.banner,
            self.header,
            self.blank,
            self.notes,
            self.rows,
            self.duplicates,
            self.skipped,
            self.unreadable,
            self.continued,
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }
}

/// A parsed statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Parsed {
    pub format: Format,
    pub rows: Vec<ParsedRow>,
    pub errors: Vec<RowError>,
    /// Rows that move no money (a zero or missing amount), with the reason; not errors.
    pub skipped: Vec<RowError>,
    /// Where every line of the file went.
    pub lines: LineCount,
    /// The mapping to save with the account when this statement is committed: the one it was read
    /// with, and the order of day and month its dates decided.
    #[serde(default)]
    pub mapping: Mapping,
    /// Corrections the bank sent of rows of earlier statements (OFX `CORRECTFITID`).
    #[serde(default)]
    pub corrections: Vec<Correction>,
}

/// A correction the bank sent: the row of an earlier statement it names by the bank's id is
/// replaced by the row on `line` (read and booked as any other) or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Correction {
    pub line: usize,
    /// The bank's id of the row corrected.
    pub bank_ref: String,
    pub action: CorrectionAction,
}

/// What a correction does to the row it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CorrectionAction {
    /// The row of `line` takes its place.
    Replace,
    /// It goes.
    Delete,
}

impl Parsed {
    /// The figures of rows the balance column refused and of rows taken in anyway.
    pub fn figures_mut(&mut self) -> impl Iterator<Item = &mut Figures> {
        self.errors
            .iter_mut()
            .filter_map(|e| e.figures.as_mut())
            .chain(self.format.taken.iter_mut().map(|t| &mut t.figures))
    }

    /// A statement of this format with nothing read yet.
    pub fn new(format: Format) -> Self {
        Self {
            format,
            rows: Vec::new(),
            errors: Vec::new(),
            skipped: Vec::new(),
            lines: LineCount::default(),
            mapping: Mapping::default(),
            corrections: Vec::new(),
        }
    }
}

/// `n` things in words: "1 transaction", "3 transactions", "1 entry", "2 entries".
#[must_use]
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Which statement of a file of `count` to read: the one `requested` (1-based), or the only one;
/// a file of several with none requested is refused with each in words (`listed`), so its
/// person can name one. Gives the 0-based index.
pub fn choose(
    requested: Option<usize>,
    count: usize,
    listed: impl FnOnce() -> Vec<String>,
) -> Result<usize, ImportError> {
    match requested {
        Some(number) if (1..=count).contains(&number) => Ok(number.saturating_sub(1)),
        Some(number) => Err(ImportError::Statement(format!(
            "there is no statement {number}: the file holds {count}"
        ))),
        None if count == 1 => Ok(0),
        None => Err(ImportError::SeveralStatements { statements: listed() }),
    }
}
