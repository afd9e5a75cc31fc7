//! The statements of an OFX body: each bank, card and investment statement with its account,
//! currency, period, balances and transactions, read element by element without a tree (a 10 MiB
//! file is read in one pass, holding only what it keeps).

use crate::markup::{Event, Events, MAX_DEPTH, unescape};

/// Aggregates: elements that hold others and always close. Any element not named here that is
/// followed by text is a leaf.
const AGGREGATES: &[&str] = &[
    "OFX",
    "SIGNONMSGSRSV1",
    "SONRS",
    "STATUS",
    "FI",
    "BANKMSGSRSV1",
    "STMTTRNRS",
    "STMTRS",
    "BANKACCTFROM",
    "BANKACCTTO",
    "BANKTRANLIST",
    "STMTTRN",
    "PAYEE",
    "LEDGERBAL",
    "AVAILBAL",
    "BALLIST",
    "BAL",
    "CURRENCY",
    "ORIGCURRENCY",
    "CREDITCARDMSGSRSV1",
    "CCSTMTTRNRS",
    "CCSTMTRS",
    "CCACCTFROM",
    "CCACCTTO",
    "INVSTMTMSGSRSV1",
    "INVSTMTTRNRS",
    "INVSTMTRS",
    "INVACCTFROM",
    "INVTRANLIST",
    "INVBANKTRAN",
    "INVPOSLIST",
    "INVBAL",
    "INVOOLIST",
    "INV401K",
    "INV401KBAL",
    "SECLISTMSGSRSV1",
    "SECLIST",
    "MKTGINFO",
];

/// Leaves that may be empty (`<FITID>` with nothing after it): never taken for aggregates.
const LEAVES: &[&str] = &[
    "TRNTYPE",
    "DTPOSTED",
    "DTUSER",
    "DTAVAIL",
    "TRNAMT",
    "FITID",
    "CORRECTFITID",
    "CORRECTACTION",
    "SRVRTID",
    "CHECKNUM",
    "REFNUM",
    "SIC",
    "PAYEEID",
    "NAME",
    "EXTDNAME",
    "MEMO",
    "CURDEF",
    "BANKID",
    "BRANCHID",
    "ACCTID",
    "ACCTTYPE",
    "ACCTKEY",
    "BROKERID",
    "BALAMT",
    "DTASOF",
    "DTSTART",
    "DTEND",
    "CODE",
    "SEVERITY",
    "MESSAGE",
    "CURSYM",
    "CURRATE",
    "TRNUID",
];

/// Which kind of statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bank,
    Card,
    Investment,
}

/// One transaction as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transaction {
    /// The line its `<STMTTRN>` opens on, and the last line it spans.
    pub line: usize,
    pub end_line: usize,
    pub trntype: String,
    pub posted: String,
    pub amount: String,
    pub fitid: String,
    pub correct_fitid: String,
    pub correct_action: String,
    pub name: String,
    pub payee: String,
    pub memo: String,
    pub check_number: String,
    /// The account money went to, when the bank marks a transfer (`BANKACCTTO`/`CCACCTTO`).
    pub to_account: String,
    /// `CURRENCY` (the amount is in this currency) or `ORIGCURRENCY` (it was converted from it).
    pub currency: Option<(String, bool)>,
}

/// A stated balance as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Balance {
    pub amount: String,
    pub as_of: String,
}

/// One statement as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub kind: Kind,
    pub line: usize,
    pub currency: String,
    pub bank_id: String,
    pub account_id: String,
    pub account_type: String,
    pub start: String,
    pub end: String,
    pub transactions: Vec<Transaction>,
    pub ledger: Option<Balance>,
    pub available: Option<Balance>,
    /// Investment transactions that are not cash: their aggregate's name and line.
    pub securities: Vec<(String, usize)>,
    /// The status its response carried, when not success: code and message.
    pub status: Option<(String, String)>,
}

impl Statement {
    /// The statement `name` opens (`STMTRS`, `CCSTMTRS`, `INVSTMTRS`), room made for `transactions`.
    fn opened(name: &str, line: usize, transactions: usize) -> Self {
        let kind = match name {
            "CCSTMTRS" => Kind::Card,
            "INVSTMTRS" => Kind::Investment,
            _ => Kind::Bank,
        };
        let mut opened = Self::new(kind, line);
        opened.transactions.reserve_exact(transactions);
        opened
    }

    fn new(kind: Kind, line: usize) -> Self {
        Self {
            kind,
            line,
            currency: String::new(),
            bank_id: String::new(),
            account_id: String::new(),
            account_type: String::new(),
            start: String::new(),
            end: String::new(),
            transactions: Vec::new(),
            ledger: None,
            available: None,
            securities: Vec::new(),
            status: None,
        }
    }
}

/// What the body holds.
#[derive(Debug, Default)]
pub struct Body {
    pub statements: Vec<Statement>,
    /// A sign-on or statement response's error status (code, message), if any.
    pub errors: Vec<(String, String)>,
    /// The last line of the body.
    pub last_line: usize,
}

/// Why a body cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    TooDeep { line: usize },
    CutShort { open: String, line: usize },
}

/// Reads the statements of `body`, whose first line is `first_line`.
pub fn read(body: &str, first_line: usize) -> Result<Body, Unreadable> {
    let mut events = Events::new(body, first_line);
    let mut peeked: Option<Event<'_>> = None;
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut found = Body::default();
    let mut statement: Option<Statement> = None;
    let mut transaction: Option<Transaction> = None;
    let mut status: (String, String) = (String::new(), String::new());
    let mut leaf: Option<String> = None;
    // Transactions are sized once, by the tags the body has left: a large statement's grown by
    // doubling would hold them twice at a time. What a statement did not use is given back.
    let mut unread = body.matches("<STMTTRN>").count();
    while let Some(event) = peeked.take().or_else(|| events.next()) {
        match event {
            Event::Open(name, line) => {
                leaf = None;
                let aggregate = if AGGREGATES.contains(&name.as_str()) {
                    true
                } else if LEAVES.contains(&name.as_str()) {
                    false
                } else {
                    // An element this reader does not know: a leaf when text follows it or its
                    // own closing tag does, else an aggregate (closed by its tag, or by its
                    // parent's).
                    peeked = events.next();
                    match &peeked {
                        Some(Event::Text(text, cdata)) => !*cdata && text.trim().is_empty(),
                        Some(Event::Close(closed)) => closed != &name,
                        _ => true,
                    }
                };
                if !aggregate {
                    leaf = Some(name);
                    continue;
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(Unreadable::TooDeep { line });
                }
                let parent = stack.last().map(|(p, _)| p.as_str()).unwrap_or_default();
                match name.as_str() {
                    "STMTRS" | "CCSTMTRS" | "INVSTMTRS" => {
                        statement = Some(Statement::opened(&name, line, unread));
                    }
                    "STMTTRN" => {
                        transaction = Some(Transaction {
                            line,
                            ..Transaction::default()
                        });
                    }
                    "STATUS" => status = (String::new(), String::new()),
                    "LEDGERBAL" | "AVAILBAL" => {
                        if let Some(s) = statement.as_mut() {
                            let stated = if name == "LEDGERBAL" {
                                &mut s.ledger
                            } else {
                                &mut s.available
                            };
                            *stated = Some(Balance::default());
                        }
                    }
                    "CURRENCY" | "ORIGCURRENCY" => {
                        if let Some(t) = transaction.as_mut() {
                            t.currency = Some((String::new(), name == "CURRENCY"));
                        }
                    }
                    _ if parent == "INVTRANLIST" && name != "INVBANKTRAN" => {
                        if let Some(s) = statement.as_mut() {
                            s.securities.push((name.clone(), line));
                        }
                    }
                    _ => {}
                }
                stack.push((name, line));
            }
            Event::Empty(_) => leaf = None,
            Event::Text(raw, cdata) => {
                if !cdata && raw.trim().is_empty() {
                    // Layout between tags; an empty leaf keeps its empty value.
                    continue;
                }
                let Some(name) = leaf.take() else { continue };
                let value = if cdata { raw.to_owned() } else { unescape(raw) };
                let value = value.trim();
                let parent = stack.last().map(|(p, _)| p.as_str()).unwrap_or_default();
                assign(
                    parent,
                    &name,
                    value,
                    &mut statement,
                    &mut transaction,
                    &mut status,
                );
            }
            Event::Close(name) => {
                leaf = None;
                let Some(depth) = stack.iter().rposition(|(open, _)| *open == name) else {
                    continue;
                };
                while stack.len() > depth {
                    let Some((closed, _)) = stack.pop() else { break };
                    let grand = stack.last().map(|(p, _)| p.as_str()).unwrap_or_default();
                    if closed == "STMTTRN" {
                        unread = unread.saturating_sub(1);
                    }
                    close(
                        &closed,
                        grand,
                        &mut found,
                        &mut statement,
                        &mut transaction,
                        &status,
                        events.line(),
                    );
                }
            }
        }
    }
    found.last_line = events.line();
    if let Some((open, line)) = stack.first() {
        return Err(Unreadable::CutShort {
            open: open.clone(),
            line: *line,
        });
    }
    Ok(found)
}

/// A leaf's value, put where its aggregate says.
fn assign(
    parent: &str,
    name: &str,
    value: &str,
    statement: &mut Option<Statement>,
    transaction: &mut Option<Transaction>,
    status: &mut (String, String),
) {
    let value = value.to_owned();
    match (parent, name) {
        ("STATUS", "CODE") => status.0 = value,
        ("STATUS", "MESSAGE") => status.1 = value,
        ("STMTTRN", _) => {
            let Some(t) = transaction.as_mut() else { return };
            match name {
                "TRNTYPE" => t.trntype = value,
                "DTPOSTED" => t.posted = value,
                "TRNAMT" => t.amount = value,
                "FITID" => t.fitid = value,
                "CORRECTFITID" => t.correct_fitid = value,
                "CORRECTACTION" => t.correct_action = value,
                "NAME" => t.name = value,
                "MEMO" => t.memo = value,
                "CHECKNUM" => t.check_number = value,
                _ => {}
            }
        }
        ("PAYEE", "NAME") => {
            if let Some(t) = transaction.as_mut() {
                t.payee = value;
            }
        }
        ("BANKACCTTO" | "CCACCTTO", "ACCTID") => {
            if let Some(t) = transaction.as_mut() {
                t.to_account = value;
            }
        }
        ("CURRENCY" | "ORIGCURRENCY", "CURSYM") => {
            if let Some((code, _)) = transaction.as_mut().and_then(|t| t.currency.as_mut()) {
                *code = value;
            }
        }
        _ => {
            let Some(s) = statement.as_mut() else { return };
            match (parent, name) {
                ("STMTRS" | "CCSTMTRS" | "INVSTMTRS", "CURDEF") => s.currency = value,
                ("BANKACCTFROM" | "CCACCTFROM" | "INVACCTFROM", "BANKID" | "BROKERID") => s.bank_id = value,
                ("BANKACCTFROM" | "CCACCTFROM" | "INVACCTFROM", "ACCTID") => s.account_id = value,
                ("BANKACCTFROM", "ACCTTYPE") => s.account_type = value,
                ("BANKTRANLIST" | "INVTRANLIST", "DTSTART") => s.start = value,
                ("BANKTRANLIST" | "INVTRANLIST", "DTEND") => s.end = value,
                ("LEDGERBAL", "BALAMT") => s.ledger.get_or_insert_default().amount = value,
                ("LEDGERBAL", "DTASOF") => s.ledger.get_or_insert_default().as_of = value,
                ("AVAILBAL", "BALAMT") => s.available.get_or_insert_default().amount = value,
                ("AVAILBAL", "DTASOF") => s.available.get_or_insert_default().as_of = value,
                _ => {}
            }
        }
    }
}

/// An aggregate closed: a transaction joins its statement, a statement the body, a status its
/// response.
fn close(
    closed: &str,
    parent: &str,
    found: &mut Body,
    statement: &mut Option<Statement>,
    transaction: &mut Option<Transaction>,
    status: &(String, String),
    line: usize,
) {
    match closed {
        "STMTTRN" => {
            if let (Some(mut t), Some(s)) = (transaction.take(), statement.as_mut()) {
                t.end_line = line.max(t.line);
                s.transactions.push(t);
            }
        }
        "STMTRS" | "CCSTMTRS" | "INVSTMTRS" => {
            if let Some(mut s) = statement.take() {
                s.transactions.shrink_to_fit();
                found.statements.push(s);
            }
        }
        "STATUS" => {
            let failed = !status.0.is_empty() && status.0 != "0";
            if failed {
                match (parent, found.statements.last_mut()) {
                    // A statement response's status comes before its statement: kept for it.
                    ("STMTTRNRS" | "CCSTMTTRNRS" | "INVSTMTTRNRS" | "SONRS", _) => {
                        found.errors.push(status.clone());
                    }
                    (_, Some(s)) => s.status = Some(status.clone()),
                    (_, None) => found.errors.push(status.clone()),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sgml_body_on_one_line() {
        let body = "<OFX><BANKMSGSRSV1><STMTTRNRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>CAD\
            <BANKACCTFROM><BANKID>1<ACCTID>12300 0001<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST><DTSTART>20090401\
            <STMTTRN><TRNTYPE>POS<DTPOSTED>20090401122017.000[-5:EST]<TRNAMT>-6.60<FITID><NAME>MCDONALD'S<MEMO>x</STMTTRN>\
            </BANKTRANLIST><LEDGERBAL><BALAMT>382.34<DTASOF>20090523</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
        let found = read(body, 1).unwrap();
        let [s] = found.statements.as_slice() else {
            panic!("{found:?}")
        };
        assert_eq!(s.currency, "CAD");
        assert_eq!(s.account_id, "12300 0001");
        let [t] = s.transactions.as_slice() else { panic!() };
        assert_eq!(
            (t.amount.as_str(), t.fitid.as_str(), t.name.as_str()),
            ("-6.60", "", "MCDONALD'S")
        );
        assert_eq!(s.ledger.as_ref().map(|b| b.amount.as_str()), Some("382.34"));
        assert!(found.errors.is_empty());
    }

    #[test]
    fn nesting_past_the_limit_and_a_cut_short_file_are_refused() {
        let deep = "<OFX>".to_owned() + &"<X> ".repeat(40);
        assert!(matches!(read(&deep, 1), Err(Unreadable::TooDeep { .. })));
        let cut = "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST><STMTTRN><TRNAMT>1";
        assert!(matches!(read(cut, 1), Err(Unreadable::CutShort { .. })));
    }
}
