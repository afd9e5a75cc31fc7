//! hledger journals and Ledger files: one writer, two dialects.
//!
//! Both read the same transaction syntax; they differ in directives. hledger gets `commodity`
//! with its display format, account types as `type:` tags, and `hledger check --strict` passes;
//! Ledger gets `commodity` and `tag` declarations so `ledger --pedantic` passes, and a `note`
//! under each account. Budgets are periodic transactions (`~ monthly from … to …`) of virtual
//! postings, so they never move a balance; categorisation rules are comments at the top.

use std::io::Write;

use kakeibo_ledger::{AccountKind, AccountType, Currency};

use crate::{
    ExportError,
    data::{Assertion, BROUGHT_FORWARD, Meta, Txn, decimal, first_of, implied_rates, label},
    names::journal_account,
    text::one_line,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Hledger,
    Ledger,
}

/// The metadata tags a transaction may carry (declared for `ledger --pedantic`).
const TAGS: [&str; 8] = [
    "kakeibo-id",
    "source",
    "bank-ref",
    "bank-description",
    "bank-category",
    "description",
    "paired-source",
    "paired-description",
];

const WIDTH: usize = 48;

pub struct Journal<'w> {
    out: &'w mut (dyn Write + Send),
    dialect: Dialect,
}

impl<'w> Journal<'w> {
    pub fn new(out: &'w mut (dyn Write + Send), dialect: Dialect) -> Self {
        Self { out, dialect }
    }

    fn name(meta: &Meta, id: uuid::Uuid) -> Result<String, ExportError> {
        let account = meta.account(id)?;
        Ok(journal_account(account.account_type, &account.name))
    }

    fn posting(&mut self, account: &str, amount: &str) -> Result<(), ExportError> {
        let pad = WIDTH.saturating_sub(account.chars().count());
        writeln!(self.out, "    {account}{:pad$}  {amount}", "")?;
        Ok(())
    }

    pub fn begin(&mut self, meta: &Meta) -> Result<(), ExportError> {
        let tool = match self.dialect {
            Dialect::Hledger => "an hledger journal",
            Dialect::Ledger => "a Ledger file",
        };
        crate::text::header(self.out, ";", tool, meta, journal_account)?;
        writeln!(self.out)?;
        if self.dialect == Dialect::Ledger {
            for tag in TAGS {
                writeln!(self.out, "tag {tag}")?;
            }
        }
        for currency in &meta.currencies {
            match self.dialect {
                Dialect::Hledger => writeln!(
                    self.out,
                    "commodity {} {currency}",
                    decimal(100_000 * 10i64.pow(currency.decimals()), *currency)
                )?,
                Dialect::Ledger => writeln!(self.out, "commodity {currency}")?,
            }
        }
        writeln!(self.out)?;
        for account in &meta.accounts {
            let name = journal_account(account.account_type, &account.name);
            let mut about = vec![label(account.account_type)];
            about.extend(account.kind.map(label));
            about.extend(account.currency.clone());
            match self.dialect {
                Dialect::Hledger => {
                    let kind = hledger_type(account.account_type, account.kind);
                    writeln!(
                        self.out,
                        "account {name}  ; type: {kind}, kakeibo: {}",
                        about.join(" ")
                    )?;
                }
                Dialect::Ledger => {
                    writeln!(self.out, "account {name}\n    note kakeibo: {}", about.join(" "))?;
                }
            }
        }
        if meta.brought_forward.is_some() {
            match self.dialect {
                Dialect::Hledger => writeln!(self.out, "account Equity:{BROUGHT_FORWARD}  ; type: E")?,
                Dialect::Ledger => writeln!(self.out, "account Equity:{BROUGHT_FORWARD}")?,
            }
        }
        self.budgets(meta)?;
        self.brought_forward(meta)
    }

    fn budgets(&mut self, meta: &Meta) -> Result<(), ExportError> {
        let mut months: Vec<&str> = meta.budgets.iter().map(|b| b.month.as_str()).collect();
        months.dedup();
        for month in months {
            let (Some(from), Some(to)) = (
                first_of(month),
                first_of(month).and_then(|d| d.checked_add_months(chrono::Months::new(1))),
            ) else {
                continue;
            };
            writeln!(self.out)?;
            match self.dialect {
                Dialect::Hledger => writeln!(self.out, "~ monthly from {from} to {to}  kakeibo budget")?,
                Dialect::Ledger => writeln!(
                    self.out,
                    "~ monthly from {} to {}",
                    from.format("%Y/%m/%d"),
                    to.format("%Y/%m/%d")
                )?,
            }
            for budget in meta.budgets.iter().filter(|b| b.month == month) {
                let currency = Currency::parse(&budget.currency)?;
                let account = format!("({})", Self::name(meta, budget.account_id)?);
                self.posting(
                    &account,
                    &format!("{} {currency}", decimal(budget.amount_minor, currency)),
                )?;
            }
        }
        Ok(())
    }

    fn brought_forward(&mut self, meta: &Meta) -> Result<(), ExportError> {
        let Some(forward) = &meta.brought_forward else {
            return Ok(());
        };
        writeln!(self.out, "\n{} * Balances brought forward", forward.date)?;
        for (account, currency, minor) in &forward.balances {
            let name = Self::name(meta, *account)?;
            self.posting(&name, &format!("{} {currency}", decimal(*minor, *currency)))?;
        }
        for (currency, minor) in &forward.balancing {
            self.posting(
                &format!("Equity:{BROUGHT_FORWARD}"),
                &format!("{} {currency}", decimal(*minor, *currency)),
            )?;
        }
        Ok(())
    }

    pub fn transaction(&mut self, meta: &Meta, txn: &Txn) -> Result<(), ExportError> {
        let row = &txn.row;
        writeln!(self.out)?;
        for (from, rate, to) in implied_rates(meta, txn) {
            writeln!(self.out, "P {} {from} {rate} {to}", row.date)?;
        }
        let (description, altered) = description(&row.description);
        // A description opening with `(` would be read as a code: an empty code comes first.
        let code = if description.starts_with('(') { "() " } else { "" };
        writeln!(self.out, "{} * {code}{description}", row.date)?;
        writeln!(self.out, "    ; kakeibo-id: {}", row.id)?;
        if altered {
            writeln!(self.out, "    ; description: {}", one_line(&row.description))?;
        }
        for (tag, value) in txn.tags() {
            if let Some(value) = value {
                writeln!(self.out, "    ; {tag}: {}", one_line(value))?;
            }
        }
        for posting in &row.postings {
            let currency = Currency::parse(&posting.currency)?;
            let name = Self::name(meta, posting.account_id)?;
            self.posting(
                &name,
                &format!("{} {currency}", decimal(posting.amount_minor, currency)),
            )?;
        }
        Ok(())
    }

    pub fn assertion(&mut self, meta: &Meta, assertion: &Assertion) -> Result<(), ExportError> {
        let name = Self::name(meta, assertion.account)?;
        let currency = assertion.currency;
        let bank = format!("{} {currency}", decimal(assertion.bank_minor, currency));
        let file = one_line(&assertion.filename);
        if assertion.holds() {
            writeln!(
                self.out,
                "\n{} * Closing balance stated by the bank\n    ; source: {file}",
                assertion.date
            )?;
            self.posting(&name, &format!("0 {currency} = {bank}"))?;
        } else {
            writeln!(
                self.out,
                "\n; {}: the bank stated {name} = {bank} ({file}); the ledger holds {} {currency}, so it is not asserted",
                assertion.date,
                decimal(assertion.ledger_minor, currency)
            )?;
        }
        Ok(())
    }
}

/// hledger's account type: cash-like assets `C` (so its cashflow report finds them), other assets
/// `A`, liabilities `L`, equity `E`, income `R`, expenses `X`.
fn hledger_type(account_type: AccountType, kind: Option<AccountKind>) -> &'static str {
    match account_type {
        AccountType::Asset if kind != Some(AccountKind::Transit) => "C",
        AccountType::Asset => "A",
        AccountType::Liability => "L",
        AccountType::Equity => "E",
        AccountType::Income => "R",
        AccountType::Expense => "X",
    }
}

/// The description as a transaction line can hold it: a `;` would start a comment, so it is
/// written as a full-width semicolon, and the exact text goes in a `description:` tag. The
/// second value says whether the text had to change.
fn description(text: &str) -> (String, bool) {
    let line = one_line(text).replace(';', "；");
    let line = line.trim().to_owned();
    let line = if line.is_empty() {
        "(no description)".to_owned()
    } else {
        line
    };
    let altered = line != text;
    (line, altered)
}
