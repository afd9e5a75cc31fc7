//! A statement's layout in sentences, as the preview shows it before a person says yes: how the
//! file was read (or, for a structured statement, [`crate::StatementInfo::in_words`]) and what
//! its balance column said of the rows.

use crate::{BalanceKind, DecimalMark, Fees, Format, TimeOrder};

/// The detected layout as a person would say it: "Comma-separated, UTF-8, header on line 1.
/// Dates from “Date”, day-first (13/01/2025 has no month 13). Amounts from “Amount”, decimal
/// point. …"
pub fn layout_in_words(format: &Format) -> String {
    if let Some(statement) = &format.statement {
        return statement.in_words(&format.encoding);
    }
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
