//! What a person (or the model) sees of a plan before saying yes: the layout in words, the first
//! and last rows with their direction, money in and out, the date range, and every line of the
//! file accounted for — duplicates, skipped and unreadable lines with their line numbers. The CLI,
//! the chat tool, the MCP server and the web card all show this one preview.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use super::{
    DuplicateRow, Format, LineCount, Plan, PlannedRow, PlannedTransfer, RowError, balance_check,
    layout_in_words,
    plan::{AccountChoice, Elsewhere, PlannedAccount, PlannedCorrection},
};
use crate::{
    money::{Currency, Money},
    transfers::{Decision, Side},
};

/// How many rows the preview shows from each end of the statement.
pub const END_ROWS: usize = 3;

/// The preview of a plan: what the CLI prints, the chat tool answers, the MCP server serves and
/// the web's card shows.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ImportPreview {
    pub plan_id: Uuid,
    pub filename: String,
    /// The layout as it was read.
    pub format: Format,
    /// The layout in sentences ([`layout_in_words`]).
    pub layout: String,
    /// The balance column's check in a sentence ([`balance_check`]); none without one.
    pub balance_check: Option<String>,
    pub accounts: Vec<PlannedAccount>,
    pub rows_to_add: usize,
    /// Rows that look like transfers, and what becomes of each.
    pub transfers: Vec<TransferPreview>,
    /// Why the statement goes into its account when none was named.
    pub account_from: Option<String>,
    pub transfer_window_days: u32,
    pub opening_balance: Option<OpeningBalance>,
    pub closing_balance: Option<ClosingBalance>,
    /// Rows already in the ledger in another of the owner's accounts.
    pub elsewhere: Option<Elsewhere>,
    /// The accounts the statement could go into instead.
    pub account_choices: Vec<AccountChoice>,
    pub date_range: Option<DateRange>,
    /// Per currency.
    pub money_in: Vec<PreviewMoney>,
    pub money_out: Vec<PreviewMoney>,
    pub by_category: Vec<CategoryRows>,
    pub uncategorized: usize,
    pub first_rows: Vec<PreviewRow>,
    pub last_rows: Vec<PreviewRow>,
    pub duplicates_skipped: usize,
    /// The first 20.
    pub duplicates: Vec<DuplicateRow>,
    pub parse_errors: usize,
    /// The first 50.
    pub errors: Vec<RowError>,
    /// The first 20.
    pub skipped: Vec<RowError>,
    /// The bank's corrections of rows of earlier statements, and what each does.
    pub corrections: Vec<PlannedCorrection>,
    /// Every line of the file, accounted for.
    pub lines: LineCount,
    /// What to do to import it, in a sentence for the model.
    pub next_step: String,
}

/// An amount with its currency, and as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PreviewMoney {
    pub amount_minor: i64,
    pub formatted: String,
    pub currency: Currency,
}

/// The first and last dates of the rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DateRange {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// The opening balance booked before an account's first row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OpeningBalance {
    pub account: String,
    pub date: NaiveDate,
    pub amount: PreviewMoney,
}

/// The bank's closing balance beside the ledger's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClosingBalance {
    pub account: String,
    pub date: NaiveDate,
    pub bank: PreviewMoney,
    pub ledger: PreviewMoney,
    pub checked: bool,
    pub agrees: bool,
    pub in_words: String,
}

/// A category's rows and their sums.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CategoryRows {
    pub category: String,
    pub rows: usize,
    pub amounts: Vec<PreviewMoney>,
}

/// Money in or out of the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    In,
    Out,
}

/// One row as the preview lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PreviewRow {
    pub line: usize,
    pub date: NaiveDate,
    pub description: String,
    /// A transfer's is Transfers in transit.
    pub category: String,
    pub bank_category: Option<String>,
    pub amount: PreviewMoney,
    pub direction: Direction,
}

/// One side of a transfer: a row to import, or a transaction in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TransferSide {
    pub transaction_id: Option<Uuid>,
    pub line: Option<usize>,
    pub account: String,
    pub date: NaiveDate,
    pub description: String,
    pub amount: PreviewMoney,
}

/// What becomes of a row that looks like a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransferStatus {
    /// One transfer with a row already in the ledger.
    Paired,
    /// It waits in Transfers in transit for its other side.
    InTransit,
    /// Several rows fit equally: the person says which.
    Ask,
}

/// A row that looks like a transfer, and what becomes of it, in words too (with the person's
/// answer, when a question was answered).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TransferPreview {
    pub row: TransferSide,
    pub why: String,
    pub status: TransferStatus,
    pub in_words: String,
    /// The other side, when paired.
    pub with: Option<TransferSide>,
    /// The person's answer: which candidate it is.
    pub answer: Option<usize>,
    /// The rows that fit equally, when asked.
    pub candidates: Vec<TransferSide>,
}

/// The preview of plan `plan_id`.
pub fn preview(plan_id: Uuid, plan: &Plan) -> ImportPreview {
    let summary = &plan.summary;
    let rows = plan.rows_to_add();
    ImportPreview {
        plan_id,
        filename: plan.filename.clone(),
        format: plan.format.clone(),
        layout: layout_in_words(&plan.format),
        balance_check: balance_check(&plan.format),
        accounts: plan.accounts.clone(),
        rows_to_add: rows,
        transfers: plan
            .transfers
            .iter()
            .map(|t| transfer(t, &plan.answers))
            .collect(),
        account_from: plan.account_from.clone(),
        transfer_window_days: plan.window_days,
        opening_balance: plan.opening.as_ref().map(|o| OpeningBalance {
            account: o.account.clone(),
            date: o.date,
            amount: money(o.amount_minor, o.currency),
        }),
        closing_balance: plan.balance.as_ref().map(|b| ClosingBalance {
            account: b.account.clone(),
            date: b.date,
            bank: money(b.bank_minor, b.currency),
            ledger: money(b.ledger_minor, b.currency),
            checked: b.checked,
            agrees: b.agrees(),
            in_words: b.in_words(),
        }),
        elsewhere: plan.elsewhere.clone(),
        account_choices: plan.choices.clone(),
        date_range: summary.dates.map(|(from, to)| DateRange { from, to }),
        money_in: summary.flows.iter().map(|(c, (i, _))| money(*i, *c)).collect(),
        money_out: summary.flows.iter().map(|(c, (_, o))| money(*o, *c)).collect(),
        by_category: summary
            .by_category
            .iter()
            .map(|(name, (count, sums))| CategoryRows {
                category: name.clone(),
                rows: *count,
                amounts: sums.iter().map(|(c, m)| money(*m, *c)).collect(),
            })
            .collect(),
        uncategorized: summary.uncategorized,
        first_rows: summary.first.iter().map(row).collect(),
        last_rows: summary.last.iter().map(row).collect(),
        duplicates_skipped: plan.lines.duplicates.max(plan.duplicates.len()),
        duplicates: plan.duplicates.iter().take(20).cloned().collect(),
        parse_errors: plan.lines.unreadable.max(plan.errors.len()),
        errors: plan.errors.iter().take(50).cloned().collect(),
        skipped: plan.skipped.iter().take(20).cloned().collect(),
        corrections: plan.corrections.clone(),
        lines: plan.lines.clone(),
        next_step: next_step(plan_id, rows, plan.corrections_to_apply()),
    }
}

fn money(minor: i64, currency: Currency) -> PreviewMoney {
    PreviewMoney {
        amount_minor: minor,
        formatted: Money::new(minor, currency).format(),
        currency,
    }
}

fn row(r: &PlannedRow) -> PreviewRow {
    PreviewRow {
        line: r.line,
        date: r.date,
        description: r.description.clone(),
        category: if r.transfer.is_some() {
            crate::accounts::TRANSIT.to_owned()
        } else {
            r.category.clone()
        },
        bank_category: r.bank_category.clone(),
        amount: money(r.amount_minor, r.currency),
        direction: if r.amount_minor < 0 {
            Direction::Out
        } else {
            Direction::In
        },
    }
}

fn side(s: &Side) -> TransferSide {
    TransferSide {
        transaction_id: s.transaction,
        line: s.line,
        account: s.account.clone(),
        date: s.date,
        description: s.description.clone(),
        amount: money(s.amount_minor, s.currency),
    }
}

/// A row that looks like a transfer, and what becomes of it.
fn transfer(t: &PlannedTransfer, answers: &std::collections::BTreeMap<usize, usize>) -> TransferPreview {
    let answer = t.row.line.and_then(|line| answers.get(&line).copied());
    let (status, said) = match &t.decision {
        Decision::Paired { with } => (
            TransferStatus::Paired,
            format!(
                "one transfer with {} on {} (“{}”)",
                with.account, with.date, with.description
            ),
        ),
        Decision::Transit => (
            TransferStatus::InTransit,
            "waits in Transfers in transit for its other side".to_owned(),
        ),
        Decision::Ask { candidates } => match answer.and_then(|i| candidates.get(i)) {
            Some(with) => (
                TransferStatus::Ask,
                format!(
                    "you said: one transfer with {} on {} (“{}”)",
                    with.account, with.date, with.description
                ),
            ),
            None => (
                TransferStatus::Ask,
                format!(
                    "{} rows fit equally: say which one it is, or it waits in transit",
                    candidates.len()
                ),
            ),
        },
    };
    TransferPreview {
        row: side(&t.row),
        why: t.why.clone(),
        status,
        in_words: said,
        with: match &t.decision {
            Decision::Paired { with } => Some(side(with)),
            _ => None,
        },
        answer,
        candidates: match &t.decision {
            Decision::Ask { candidates } => candidates.iter().map(side).collect(),
            _ => Vec::new(),
        },
    }
}

fn next_step(plan_id: Uuid, rows: usize, corrections: usize) -> String {
    match rows {
        0 if corrections > 0 => format!(
            "No rows to add; to apply the bank's {corrections} correction(s), commit plan {plan_id} (dry_run false \
             with this plan_id)."
        ),
        0 => "Nothing to import.".to_owned(),
        1 => format!("To import this row, commit plan {plan_id} (dry_run false with this plan_id)."),
        n => format!("To import these {n} rows, commit plan {plan_id} (dry_run false with this plan_id)."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{DateOrder, DecimalMark, RowSummary};

    fn layout_of(text: &str) -> String {
        let parsed = crate::import::parse(text.as_bytes(), &crate::import::ParseOptions::default()).unwrap();
        layout_in_words(&parsed.format)
    }

    #[test]
    fn the_layout_says_whether_fees_were_taken_off() {
        // Revolut's layout: the balance falls by the amount and the fee.
        let revolut = "Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance\n\
            TOPUP,Current,2022-01-01 10:00:00,2022-01-01 10:00:01,Top-up,100.00,0.00,EUR,COMPLETED,100.00\n\
            ATM,Current,2022-01-02 10:00:00,2022-01-02 10:00:01,Cash,-20.00,1.00,EUR,COMPLETED,79.00\n";
        let words = layout_of(revolut);
        assert!(
            words.contains("less the fee in “Fee” (the balance falls by both)"),
            "{words}"
        );
        // Without a balance nothing says which: the amounts as written, and the preview says so.
        let words = layout_of("Date,Description,Amount,Fee\n2022-01-02,Cash,-20.00,1.00\n");
        assert!(words.contains("the fees in “Fee” are not taken off"), "{words}");
    }

    fn format() -> Format {
        Format {
            encoding: "UTF-8".into(),
            delimiter: ";".into(),
            header_line: 3,
            columns: [
                ("date", "Buchung"),
                ("amount", "Betrag"),
                ("direction", "S/H"),
                ("description", "Auftraggeber / Verwendungszweck"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            date_order: DateOrder::DayFirst,
            date_order_reason: "day-first (28/12/2018 has no month 28)".into(),
            date_order_assumed: false,
            currency_from: Some("EUR, from the currency column".into()),
            decimal_mark: DecimalMark::Comma,
            reconciliation: None,
            inverted: false,
            spending_positive: None,
            mapping_from: None,
            accounts: Vec::new(),
            fees: None,
            account_kind: None,
            taken: Vec::new(),
            statement: None,
        }
    }

    #[test]
    fn the_layout_reads_as_sentences() {
        assert_eq!(
            layout_in_words(&format()),
            "Semicolon-separated, UTF-8, header on line 3. Dates from “Buchung”, day-first (28/12/2018 has no \
             month 28). Amounts from “Betrag”, decimal comma; in or out from “S/H”. Described by “Auftraggeber”, \
             then “Verwendungszweck”. Currency: EUR, from the currency column."
        );
    }

    #[test]
    fn the_ends_never_repeat_a_row() {
        let row = |line: usize| PlannedRow {
            line,
            date: chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap_or_default(),
            description: String::new(),
            amount_minor: 1,
            currency: Currency::EUR,
            account: String::new(),
            category: String::new(),
            source_hash: String::new(),
            transfer: None,
            bank_category: None,
            bank_ref: None,
            splits: Vec::new(),
        };
        let lines = |rows: &[PlannedRow]| rows.iter().map(|r| r.line).collect::<Vec<_>>();
        for (n, head, tail) in [
            (8, vec![1, 2, 3], vec![6, 7, 8]),
            (5, vec![1, 2, 3], vec![4, 5]),
            (2, vec![1, 2], vec![]),
            (0, vec![], vec![]),
        ] {
            let mut summary = RowSummary::default();
            for line in 1..=n {
                summary.add(&row(line));
            }
            assert_eq!(
                (lines(&summary.first), lines(&summary.last)),
                (head, tail),
                "{n} rows"
            );
            assert_eq!(summary.rows, n);
        }
    }
}
