//! Text from the ledger, made safe for a line of a plain-text file, and the header every journal
//! starts with.

use std::io::Write;

use kakeibo_ledger::AccountType;

use crate::{ExportError, data::Meta};

/// The text on one line: line breaks, tabs and other control characters become spaces (the JSON
/// export keeps the text exactly).
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A Beancount string literal.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in one_line(text).chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The comment block at the top of a journal: whose ledger, when, which period, how names are
/// written, and the categorisation rules (the tools have no place for them but a comment).
pub fn header(
    out: &mut (dyn Write + Send),
    comment: &str,
    tool: &str,
    meta: &Meta,
    name: fn(AccountType, &str) -> String,
) -> Result<(), ExportError> {
    let period = match (meta.period.from, meta.period.to) {
        (None, None) => "the whole ledger".to_owned(),
        (from, to) => format!(
            "transactions from {} to {}, balances brought forward",
            from.map_or_else(|| "the first".to_owned(), |d| d.to_string()),
            to.map_or_else(|| "the last".to_owned(), |d| d.to_string())
        ),
    };
    writeln!(out, "{comment} kakeibo (家計簿) export, as {tool}")?;
    writeln!(
        out,
        "{comment} owner {}, exported {}; {period}",
        meta.owner.as_uuid(),
        meta.exported_at.format("%Y-%m-%dT%H:%M:%SZ")
    )?;
    writeln!(
        out,
        "{comment} Accounts are kakeibo's names under Assets, Liabilities, Income, Expenses and Equity;"
    )?;
    writeln!(
        out,
        "{comment} what this syntax forbids in a name is escaped reversibly (see the README's export section)."
    )?;
    if !meta.rules.is_empty() {
        writeln!(
            out,
            "{comment}\n{comment} Categorisation rules: a description containing the pattern goes to the account;"
        )?;
        writeln!(out, "{comment} the lowest priority is tried first.")?;
        for rule in &meta.rules {
            let account = meta.account(rule.account_id)?;
            writeln!(
                out,
                "{comment} rule {:>4}  {}  ->  {}",
                rule.priority,
                quoted(&rule.pattern),
                name(account.account_type, &account.name)
            )?;
        }
    }
    Ok(())
}
