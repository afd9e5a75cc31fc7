//! Beancount 3 files.
//!
//! Every account is opened on the first day anything is dated, with its currency as the
//! constraint when it holds one (a category takes any), and its kakeibo name as metadata; each
//! transaction carries its id and source as metadata; a statement's closing balance is a
//! `balance` directive dated the day after (Beancount checks at the start of its day), exact to the
//! cent; a rate a
//! transfer across currencies implied is a `price`; a budget is a `custom "budget"` entry as Fava
//! reads them.

use std::io::Write;

use kakeibo_ledger::Currency;

use crate::{
    ExportError,
    data::{Assertion, BROUGHT_FORWARD, Meta, Txn, decimal, first_of, implied_rates, label},
    names::{beancount_account, beancount_component},
    text::{one_line, quoted},
};

const WIDTH: usize = 48;

pub struct Beancount<'w> {
    out: &'w mut (dyn Write + Send),
}

impl<'w> Beancount<'w> {
    pub fn new(out: &'w mut (dyn Write + Send)) -> Self {
        Self { out }
    }

    fn name(meta: &Meta, id: uuid::Uuid) -> Result<String, ExportError> {
        let account = meta.account(id)?;
        Ok(beancount_account(account.account_type, &account.name))
    }

    fn posting(&mut self, account: &str, minor: i64, currency: Currency) -> Result<(), ExportError> {
        let pad = WIDTH.saturating_sub(account.chars().count());
        writeln!(
            self.out,
            "  {account}{:pad$}  {} {currency}",
            "",
            decimal(minor, currency)
        )?;
        Ok(())
    }

    pub fn begin(&mut self, meta: &Meta) -> Result<(), ExportError> {
        crate::text::header(self.out, ";", "a Beancount file", meta, beancount_account)?;
        writeln!(self.out)?;
        writeln!(self.out, "option \"title\" \"kakeibo export\"")?;
        if let Some(home) = meta.home_currency {
            writeln!(self.out, "option \"operating_currency\" \"{home}\"")?;
        }
        let day = meta.first_day;
        for account in &meta.accounts {
            let name = beancount_account(account.account_type, &account.name);
            match &account.currency {
                Some(currency) => writeln!(self.out, "\n{day} open {name} {currency}")?,
                None => writeln!(self.out, "\n{day} open {name}")?,
            }
            writeln!(self.out, "  kakeibo-name: {}", quoted(&account.name))?;
            writeln!(
                self.out,
                "  kakeibo-type: {}",
                quoted(&label(account.account_type))
            )?;
            if let Some(kind) = account.kind {
                writeln!(self.out, "  kakeibo-kind: {}", quoted(&label(kind)))?;
            }
        }
        if let Some(forward) = &meta.brought_forward {
            let equity = format!("Equity:{}", beancount_component(BROUGHT_FORWARD));
            writeln!(self.out, "\n{day} open {equity}")?;
            writeln!(self.out, "\n{} * \"Balances brought forward\"", forward.date)?;
            for (account, currency, minor) in &forward.balances {
                let name = Self::name(meta, *account)?;
                self.posting(&name, *minor, *currency)?;
            }
            for (currency, minor) in &forward.balancing {
                self.posting(&equity, *minor, *currency)?;
            }
        }
        for budget in &meta.budgets {
            let name = Self::name(meta, budget.account_id)?;
            let currency = Currency::parse(&budget.currency)?;
            writeln!(
                self.out,
                "\n{}-01 custom \"budget\" {name} \"monthly\" {} {currency}",
                budget.month,
                decimal(budget.amount_minor, currency)
            )?;
            if let Some(next) =
                first_of(&budget.month).and_then(|d| d.checked_add_months(chrono::Months::new(1)))
            {
                writeln!(self.out, "  until: {next}")?;
            }
        }
        Ok(())
    }

    pub fn transaction(&mut self, meta: &Meta, txn: &Txn) -> Result<(), ExportError> {
        let row = &txn.row;
        writeln!(self.out)?;
        for (from, rate, to) in implied_rates(meta, txn) {
            writeln!(self.out, "{} price {from} {rate} {to}", row.date)?;
        }
        writeln!(self.out, "{} * {}", row.date, quoted(&row.description))?;
        writeln!(self.out, "  kakeibo-id: \"{}\"", row.id)?;
        for (key, value) in txn.tags() {
            if let Some(value) = value {
                writeln!(self.out, "  {key}: {}", quoted(value))?;
            }
        }
        for posting in &row.postings {
            let currency = Currency::parse(&posting.currency)?;
            let name = Self::name(meta, posting.account_id)?;
            self.posting(&name, posting.amount_minor, currency)?;
        }
        Ok(())
    }

    pub fn assertion(&mut self, meta: &Meta, assertion: &Assertion) -> Result<(), ExportError> {
        let name = Self::name(meta, assertion.account)?;
        let currency = assertion.currency;
        let bank = decimal(assertion.bank_minor, currency);
        let Some(next) = assertion.date.succ_opt() else {
            return Ok(());
        };
        if assertion.holds() {
            // An explicit tolerance of nothing: Beancount would let a balance a unit of its last
            // digit off pass, and kakeibo's ledger agrees with the bank to the cent.
            let exact = decimal(0, currency);
            writeln!(self.out, "\n{next} balance {name}  {bank} ~ {exact} {currency}")?;
            writeln!(self.out, "  source: {}", quoted(&assertion.filename))?;
        } else {
            writeln!(
                self.out,
                "\n; {}: the bank stated {name} = {bank} {currency} ({}); the ledger holds {} {currency}, so it is not asserted",
                assertion.date,
                one_line(&assertion.filename),
                decimal(assertion.ledger_minor, currency)
            )?;
        }
        Ok(())
    }
}
