//! A camt document's statements as written: every `Stmt` (camt.053), `Rpt` (camt.052) and
//! `Ntfctn` (camt.054) with its account, balances and entries, each entry with its transaction
//! details. Elements are matched by their local names, so every version of every message reads
//! alike (`camt.053.001.02` to `.13`); values are kept as written, read in `lib.rs`.

use quick_xml::events::Event;

/// The deepest nesting read (real camt nests about fourteen).
pub const MAX_DEPTH: usize = 64;

/// A stated balance as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Balance {
    /// `OPBD`, `PRCD`, `CLBD`, `CLAV`, `ITBD`, … (or a proprietary code).
    pub code: String,
    pub amount: String,
    pub currency: String,
    pub credit_debit: String,
    pub date: String,
}

/// One underlying transaction of an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detail {
    pub amount: String,
    pub currency: String,
    pub credit_debit: String,
    /// `AmtDtls/TxAmt` and `AmtDtls/InstdAmt` (amount, currency).
    pub transaction_amount: Option<(String, String)>,
    pub instructed: Option<(String, String)>,
    pub debtor: String,
    pub creditor: String,
    pub debtor_account: String,
    pub creditor_account: String,
    pub remittance: Vec<String>,
    pub reference: String,
    pub additional: String,
}

/// One entry (`Ntry`): a booking on the account, or a pending or informational one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub line: usize,
    pub end_line: usize,
    pub amount: String,
    pub currency: String,
    pub credit_debit: String,
    pub reversal: bool,
    pub status: String,
    pub booking: String,
    pub value: String,
    pub servicer_ref: String,
    pub additional: String,
    pub details: Vec<Detail>,
}

/// One statement, report or notification.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Statement {
    pub line: usize,
    pub id: String,
    pub account: String,
    pub account_kind: String,
    pub currency: String,
    pub from: String,
    pub to: String,
    pub balances: Vec<Balance>,
    pub entries: Vec<Entry>,
}

/// Why a document cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    NotXml { line: usize, why: String },
    TooDeep { line: usize },
}

/// What is being read when an element closes.
#[derive(Default)]
struct Reading {
    statements: Vec<Statement>,
    statement: Option<Statement>,
    entry: Option<Entry>,
    detail: Option<Detail>,
    balance: Option<Balance>,
}

fn ends(stack: &[String], tail: &[&str]) -> bool {
    stack.len() >= tail.len()
        && stack
            .iter()
            .rev()
            .zip(tail.iter().rev())
            .all(|(have, want)| have == want)
}

/// The statements of a camt document's text.
pub fn read(text: &str) -> Result<Vec<Statement>, Unreadable> {
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<String> = Vec::new();
    let mut value = String::new();
    let mut currency = String::new();
    let mut at = Reading::default();
    // The reader only moves forward: lines are counted from where the last count stopped, so a
    // 10 MiB document is counted once, not once per element.
    let mut counted = (0usize, 1usize);
    let mut line_at = |offset: u64| {
        let end = usize::try_from(offset).unwrap_or(usize::MAX).min(text.len());
        let (from, line) = counted;
        let newlines = text
            .get(from.min(end)..end)
            .map_or(0, |part| part.matches('\n').count());
        counted = (end.max(from), line.saturating_add(newlines));
        counted.1
    };
    loop {
        let event = reader.read_event().map_err(|e| Unreadable::NotXml {
            line: line_at(reader.error_position()),
            why: e.to_string(),
        })?;
        match event {
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(Unreadable::TooDeep {
                        line: line_at(reader.buffer_position()),
                    });
                }
                let name = start.local_name().as_ref().to_owned();
                currency = start
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == "Ccy")
                    .map(|a| a.value.trim().to_owned())
                    .unwrap_or_default();
                value.clear();
                let line = line_at(reader.buffer_position());
                opened(&name, &stack, line, &mut at);
                stack.push(name);
            }
            Event::Text(text) => value.push_str(&text.xml10_content()),
            Event::CData(data) => value.push_str(&data.xml10_content()),
            Event::GeneralRef(reference) => {
                let name = reference.xml10_content();
                match reference.resolve_char_ref() {
                    Ok(Some(c)) => value.push(c),
                    _ => {
                        if let Some(resolved) = quick_xml::escape::resolve_predefined_entity(&name) {
                            value.push_str(resolved);
                        } else {
                            // An entity a document type declares is never expanded: it stays as written.
                            value.push('&');
                            value.push_str(&name);
                            value.push(';');
                        }
                    }
                }
            }
            Event::End(_) => {
                let line = line_at(reader.buffer_position());
                closed(&stack, value.trim(), &currency, line, &mut at);
                value.clear();
                stack.pop();
            }
            Event::Eof => break,
            Event::Empty(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(Unreadable::NotXml {
            line: line_at(reader.buffer_position()),
            why: format!("the document ends before <{open}> closes"),
        });
    }
    Ok(at.statements)
}

const CONTAINERS: [(&str, &str); 3] = [
    ("BkToCstmrStmt", "Stmt"),
    ("BkToCstmrAcctRpt", "Rpt"),
    ("BkToCstmrDbtCdtNtfctn", "Ntfctn"),
];

fn opened(name: &str, stack: &[String], line: usize, at: &mut Reading) {
    let parent = stack.last().map(String::as_str).unwrap_or_default();
    if CONTAINERS
        .iter()
        .any(|(root, child)| *child == name && *root == parent)
    {
        at.statement = Some(Statement {
            line,
            ..Statement::default()
        });
    } else if at.statement.is_some() {
        match name {
            "Ntry" if at.entry.is_none() => {
                at.entry = Some(Entry {
                    line,
                    ..Entry::default()
                });
            }
            "TxDtls" if at.entry.is_some() => at.detail = Some(Detail::default()),
            "Bal" if at.entry.is_none() => at.balance = Some(Balance::default()),
            _ => {}
        }
    }
}

/// An element closed: its text put where its path says.
fn closed(stack: &[String], value: &str, currency: &str, line: usize, at: &mut Reading) {
    let name = stack.last().map(String::as_str).unwrap_or_default();
    let owned = || value.to_owned();
    if let Some(detail) = at.detail.as_mut() {
        match name {
            "TxDtls" => {
                if let (Some(detail), Some(entry)) = (at.detail.take(), at.entry.as_mut()) {
                    entry.details.push(detail);
                }
            }
            "Amt" if ends(stack, &["TxDtls", "Amt"]) => {
                detail.amount = owned();
                currency.clone_into(&mut detail.currency);
            }
            "Amt" if ends(stack, &["AmtDtls", "TxAmt", "Amt"]) => {
                detail.transaction_amount = Some((owned(), currency.to_owned()));
            }
            "Amt" if ends(stack, &["AmtDtls", "InstdAmt", "Amt"]) => {
                detail.instructed = Some((owned(), currency.to_owned()));
            }
            "CdtDbtInd" if ends(stack, &["TxDtls", "CdtDbtInd"]) => detail.credit_debit = owned(),
            "Nm" if stack.iter().any(|s| s == "Dbtr") && !stack.iter().any(|s| s == "UltmtDbtr") => {
                detail.debtor = owned();
            }
            "Nm" if stack.iter().any(|s| s == "Cdtr") && !stack.iter().any(|s| s == "UltmtCdtr") => {
                detail.creditor = owned();
            }
            "IBAN" | "Id" if stack.iter().any(|s| s == "DbtrAcct") && detail.debtor_account.is_empty() => {
                detail.debtor_account = owned();
            }
            "IBAN" | "Id" if stack.iter().any(|s| s == "CdtrAcct") && detail.creditor_account.is_empty() => {
                detail.creditor_account = owned();
            }
            "Ustrd" => detail.remittance.push(owned()),
            "Ref" if ends(stack, &["CdtrRefInf", "Ref"]) => detail.reference = owned(),
            "AddtlTxInf" => detail.additional = owned(),
            _ => {}
        }
        return;
    }
    if let Some(entry) = at.entry.as_mut() {
        match name {
            "Ntry" => {
                if let (Some(mut entry), Some(statement)) = (at.entry.take(), at.statement.as_mut()) {
                    entry.end_line = line.max(entry.line);
                    // A vector's first push makes room for four details; most entries have one.
                    entry.details.shrink_to_fit();
                    statement.entries.push(entry);
                }
            }
            "Amt" if ends(stack, &["Ntry", "Amt"]) => {
                entry.amount = owned();
                currency.clone_into(&mut entry.currency);
            }
            "CdtDbtInd" if ends(stack, &["Ntry", "CdtDbtInd"]) => entry.credit_debit = owned(),
            "RvslInd" if ends(stack, &["Ntry", "RvslInd"]) => {
                entry.reversal = value.eq_ignore_ascii_case("true");
            }
            "Sts" if ends(stack, &["Ntry", "Sts"]) && !value.is_empty() => entry.status = owned(),
            "Cd" if ends(stack, &["Ntry", "Sts", "Cd"]) => entry.status = owned(),
            "Dt" | "DtTm" if stack.iter().any(|s| s == "BookgDt") && !value.is_empty() => {
                entry.booking = owned();
            }
            "Dt" | "DtTm" if stack.iter().any(|s| s == "ValDt") && !value.is_empty() => entry.value = owned(),
            "AcctSvcrRef" if ends(stack, &["Ntry", "AcctSvcrRef"]) => entry.servicer_ref = owned(),
            "AddtlNtryInf" => entry.additional = owned(),
            _ => {}
        }
        return;
    }
    if let Some(balance) = at.balance.as_mut() {
        match name {
            "Bal" => {
                if let (Some(balance), Some(statement)) = (at.balance.take(), at.statement.as_mut()) {
                    statement.balances.push(balance);
                }
            }
            "Cd" | "Prtry" if ends(stack, &["CdOrPrtry", name]) => balance.code = owned(),
            "Amt" if ends(stack, &["Bal", "Amt"]) => {
                balance.amount = owned();
                currency.clone_into(&mut balance.currency);
            }
            "CdtDbtInd" => balance.credit_debit = owned(),
            "Dt" | "DtTm" if !value.is_empty() => balance.date = owned(),
            _ => {}
        }
        return;
    }
    let Some(statement) = at.statement.as_mut() else {
        return;
    };
    let in_account = stack.iter().any(|s| s == "Acct");
    match name {
        "Stmt" | "Rpt" | "Ntfctn" if stack.len() >= 2 => {
            if let Some(statement) = at.statement.take() {
                at.statements.push(statement);
            }
        }
        "Id" if ends(stack, &["Stmt", "Id"])
            || ends(stack, &["Rpt", "Id"])
            || ends(stack, &["Ntfctn", "Id"]) =>
        {
            statement.id = owned();
        }
        "IBAN" if in_account => statement.account = owned(),
        "Id" if in_account && ends(stack, &["Othr", "Id"]) && statement.account.is_empty() => {
            statement.account = owned();
        }
        "Ccy" if ends(stack, &["Acct", "Ccy"]) => statement.currency = owned(),
        "Cd" if ends(stack, &["Acct", "Tp", "Cd"]) => statement.account_kind = owned(),
        "FrDtTm" | "FrDt" if ends(stack, &["FrToDt", name]) => statement.from = owned(),
        "ToDtTm" | "ToDt" if ends(stack, &["FrToDt", name]) => statement.to = owned(),
        _ => {}
    }
}
