//! What a person (or the model) sees of a plan before saying yes: the layout in words, the first
//! and last rows with their direction, money in and out, the date range, and every line of the
//! file accounted for — duplicates, skipped and unreadable lines with their line numbers. The CLI,
//! the chat tool, the MCP server and the web card all show this one preview.

use serde_json::{Value, json};
use uuid::Uuid;

use super::{BalanceKind, DecimalMark, Fees, Format, Plan, PlannedRow, PlannedTransfer, TimeOrder};
use crate::{
    money::{Currency, Money},
    transfers::{Decision, Side},
};

/// How many rows the preview shows from each end of the statement.
pub const END_ROWS: usize = 3;

/// The preview of plan `plan_id`.
pub fn preview(plan_id: Uuid, plan: &Plan) -> Value {
    let summary = &plan.summary;
    let rows = plan.rows_to_add();
    json!({
        "plan_id": plan_id,
        "filename": plan.filename,
        "format": plan.format,
        "layout": layout_in_words(&plan.format),
        "balance_check": balance_check(&plan.format),
        "accounts": plan.accounts,
        "rows_to_add": rows,
        "transfers": plan.transfers.iter().map(|t| transfer(t, &plan.answers)).collect::<Vec<_>>(),
        "account_from": plan.account_from,
        "transfer_window_days": plan.window_days,
        "opening_balance": plan.opening.as_ref().map(|o| json!({
            "account": o.account,
            "date": o.date,
            "amount": money(o.amount_minor, o.currency),
        })),
        "closing_balance": plan.balance.as_ref().map(|b| json!({
            "account": b.account,
            "date": b.date,
            "bank": money(b.bank_minor, b.currency),
            "ledger": money(b.ledger_minor, b.currency),
            "checked": b.checked,
            "agrees": b.agrees(),
            "in_words": b.in_words(),
        })),
        "elsewhere": plan.elsewhere,
        "account_choices": plan.choices,
        "date_range": summary.dates.map(|(f, l)| json!({"from": f, "to": l})),
        "money_in": summary.flows.iter().map(|(c, (i, _))| money(*i, *c)).collect::<Vec<_>>(),
        "money_out": summary.flows.iter().map(|(c, (_, o))| money(*o, *c)).collect::<Vec<_>>(),
        "by_category": summary.by_category.iter().map(|(name, (count, sums))| json!({
            "category": name,
            "rows": count,
            "amounts": sums.iter().map(|(c, m)| money(*m, *c)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "uncategorized": summary.uncategorized,
        "first_rows": summary.first.iter().map(row).collect::<Vec<_>>(),
        "last_rows": summary.last.iter().map(row).collect::<Vec<_>>(),
        "duplicates_skipped": plan.lines.duplicates.max(plan.duplicates.len()),
        "duplicates": plan.duplicates.iter().take(20).collect::<Vec<_>>(),
        "parse_errors": plan.lines.unreadable.max(plan.errors.len()),
        "errors": plan.errors.iter().take(50).collect::<Vec<_>>(),
        "skipped": plan.skipped.iter().take(20).collect::<Vec<_>>(),
        "lines": plan.lines,
        "next_step": next_step(plan_id, rows),
    })
}

fn money(minor: i64, currency: Currency) -> Value {
    json!({"amount_minor": minor, "formatted": Money::new(minor, currency).format(), "currency": currency})
}

fn row(r: &PlannedRow) -> Value {
    json!({
        "line": r.line,
        "date": r.date,
        "description": r.description,
        "category": if r.transfer.is_some() { crate::accounts::TRANSIT } else { r.category.as_str() },
        "bank_category": r.bank_category,
        "amount": money(r.amount_minor, r.currency),
        "direction": if r.amount_minor < 0 { "out" } else { "in" },
    })
}

fn side(s: &Side) -> Value {
    json!({
        "transaction_id": s.transaction,
        "line": s.line,
        "account": s.account,
        "date": s.date,
        "description": s.description,
        "amount": money(s.amount_minor, s.currency),
    })
}

/// A row that looks like a transfer, and what becomes of it, in words too (with the person's
/// answer, when a question was answered).
fn transfer(t: &PlannedTransfer, answers: &std::collections::BTreeMap<usize, usize>) -> Value {
    let answer = t.row.line.and_then(|line| answers.get(&line).copied());
    let (status, said) = match &t.decision {
        Decision::Paired { with } => (
            "paired",
            format!(
                "one transfer with {} on {} (“{}”)",
                with.account, with.date, with.description
            ),
        ),
        Decision::Transit => (
            "in_transit",
            "waits in Transfers in transit for its other side".to_owned(),
        ),
        Decision::Ask { candidates } => match answer.and_then(|i| candidates.get(i)) {
            Some(with) => (
                "ask",
                format!(
                    "you said: one transfer with {} on {} (“{}”)",
                    with.account, with.date, with.description
                ),
            ),
            None => (
                "ask",
                format!(
                    "{} rows fit equally: say which one it is, or it waits in transit",
                    candidates.len()
                ),
            ),
        },
    };
    json!({
        "row": side(&t.row),
        "why": t.why,
        "status": status,
        "in_words": said,
        "with": match &t.decision { Decision::Paired { with } => side(with), _ => Value::Null },
        "answer": answer,
        "candidates": match &t.decision {
            Decision::Ask { candidates } => candidates.iter().map(side).collect::<Vec<_>>(),
            _ => Vec::new(),
        },
    })
}

fn next_step(plan_id: Uuid, rows: usize) -> String {
    match rows {
        0 => "Nothing to import.".to_owned(),
        1 => format!("To import this row, commit plan {plan_id} (dry_run false with this plan_id)."),
        n => format!("To import these {n} rows, commit plan {plan_id} (dry_run false with this plan_id)."),
    }
}

/// The detected layout as a person would say it: "Comma-separated, UTF-8, header on line 1.
/// Dates from “Date”, day-first (13/01/2025 has no month 13). Amounts from “Amount”, decimal
/// point. …"
pub fn layout_in_words(format: &Format) -> String {
    let columns = &format.columns;
    let quoted = |role: &str| columns.get(role).map(|h| format!("“{h}”"));
    let separated = match format.delimiter.as_str() {
        "," => "Comma-separated".to_owned(),
        ";" => "Semicolon-separated".to_owned(),
        "tab" => "Tab-separated".to_owned(),
        "|" => "Separated by |".to_owned(),
        other => format!("Separated by {other}"),
    };
    let header = if format.header_line == 0 {
        "no header row (the columns were told apart by their cells)".to_owned()
    } else {
        format!("header on line {}", format.header_line)
    };
    let mut sentences = vec![format!("{separated}, {}, {header}.", format.encoding)];
    if let Some(from) = &format.mapping_from {
        sentences.push(format!("Read with {from}."));
    }
    let order = format.date_order.name();
    let reason = &format.date_order_reason;
    let dates = quoted("date").unwrap_or_else(|| "the date column".to_owned());
    sentences.push(if reason == "no ambiguous dates" {
        format!("Dates from {dates}; none of them reads two ways.")
    } else if reason.starts_with(order) {
        format!("Dates from {dates}, {reason}.")
    } else {
        format!("Dates from {dates} ({reason}).")
    });
    let mark = match format.decimal_mark {
        DecimalMark::Point => "decimal point",
        DecimalMark::Comma => "decimal comma",
    };
    let mut amounts = match (quoted("amount"), quoted("debit"), quoted("credit")) {
        (Some(amount), _, _) => format!("Amounts from {amount}"),
        (None, Some(debit), Some(credit)) => format!("Money out from {debit}, money in from {credit}"),
        (None, Some(debit), None) => format!("Money out from {debit}"),
        (None, None, Some(credit)) => format!("Money in from {credit}"),
        (None, None, None) => "Amounts".to_owned(),
    };
    amounts.push_str(", ");
    amounts.push_str(mark);
    let fees = quoted("fee").unwrap_or_else(|| "the fee column".to_owned());
    match format.fees {
        Some(Fees::TakenOff) => {
            amounts.push_str(", less the fee in ");
            amounts.push_str(&fees);
            amounts.push_str(" (the balance falls by both)");
        }
        Some(Fees::Included) => {
            amounts.push_str(", the fees in ");
            amounts.push_str(&fees);
            amounts.push_str(" already in them (the balance moves by the amount alone)");
        }
        Some(Fees::Unchecked) => {
            amounts.push_str(" (the fees in ");
            amounts.push_str(&fees);
            amounts.push_str(" are not taken off: no balance shows whether they come on top)");
        }
        None => {}
    }
    if let Some(direction) = quoted("direction") {
        amounts.push_str("; in or out from ");
        amounts.push_str(&direction);
    }
    if let Some(why) = &format.spending_positive {
        amounts.push_str("; spending written as positive (");
        amounts.push_str(why);
        amounts.push_str("), so booked as money out");
    }
    if format.inverted {
        amounts.push_str("; every sign flipped, as asked (spending written as positive)");
    }
    sentences.push(format!("{amounts}."));
    if let Some(description) = columns.get("description").filter(|d| !d.is_empty()) {
        let names: Vec<String> = description.split(" / ").map(|d| format!("“{d}”")).collect();
        sentences.push(format!("Described by {}.", names.join(", then ")));
    }
    if let Some(from) = &format.currency_from {
        sentences.push(format!("Currency: {from}."));
    }
    if format.accounts.len() > 1 {
        let column = quoted("account").unwrap_or_else(|| "the account column".to_owned());
        sentences.push(format!(
            "The rows belong to {} accounts in {column} ({}): all of them go into the one account \
             this import is for; import each account's rows on their own to keep them apart.",
            format.accounts.len(),
            format.accounts.join(", ")
        ));
    }
    sentences.join(" ")
}

/// "Reconciled against the balance column (“Balance”): 10 of 10 balance changes agree, rows
/// newest first", and what that means for the rows that do not.
pub fn balance_check(format: &Format) -> Option<String> {
    let r = format.reconciliation.as_ref()?;
    let order = match r.order {
        TimeOrder::OldestFirst => "oldest first",
        TimeOrder::NewestFirst => "newest first",
    };
    let mut line = format!(
        "Reconciled against the balance column (“{}”): {} of {} balance change{} agree, rows {order}",
        r.column,
        r.reconciled,
        r.checked,
        if r.checked == 1 { "" } else { "s" }
    );
    if r.by_date {
        line.push_str(
            ", some listed out of their order of time and checked where their dates and balances put them",
        );
    }
    if r.accounts > 1 {
        line.push_str("; each account's rows against its own balance");
    }
    if r.balance_kind == BalanceKind::Owed {
        line.push_str("; the balance counts what is owed");
    }
    if r.signs_from_balance {
        line.push_str("; the amounts have no sign, so each takes its balance change's");
    }
    let disagree = r.checked.saturating_sub(r.reconciled);
    let taken = format.taken.len().min(disagree);
    match taken {
        0 => {}
        1 => line.push_str("; one that does not is taken in at the figure you chose"),
        n => {
            line.push_str("; ");
            line.push_str(&n.to_string());
            line.push_str(" that do not are taken in at the figures you chose");
        }
    }
    match disagree.saturating_sub(taken) {
        0 => {}
        1 if taken > 0 => line.push_str("; the other is listed as unreadable and not imported"),
        1 => line.push_str("; the row that does not is listed as unreadable and not imported"),
        n if taken > 0 => {
            line.push_str("; the other ");
            line.push_str(&n.to_string());
            line.push_str(" are listed as unreadable and not imported");
        }
        n => {
            line.push_str("; the ");
            line.push_str(&n.to_string());
            line.push_str(" rows that do not are listed as unreadable and not imported");
        }
    }
    line.push('.');
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{DateOrder, RowSummary};

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
