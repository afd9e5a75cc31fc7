//! What every format writes, read in one snapshot: the accounts and everything small up front,
//! the transactions as a stream of rows, never all at once.

use std::collections::HashMap;

use chrono::NaiveDate;
use futures_util::TryStreamExt;
use kakeibo_ledger::{AccountType, Currency, Money, OwnerId};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::{
    ExportError, Period,
    model::{AccountRow, BudgetRow, PostingRow, RuleRow, TransactionRow},
};

/// A balance a statement stated for an account on a day.
#[derive(Debug, Clone)]
pub struct Assertion {
    pub account: Uuid,
    pub date: NaiveDate,
    pub currency: Currency,
    pub bank_minor: i64,
    /// What the ledger holds in the account at the end of that day, now.
    pub ledger_minor: i64,
    pub filename: String,
}

impl Assertion {
    /// Asserted only where kakeibo's ledger agrees with the bank: the receiving tool then re-checks
    /// the reconciliation. Where it disagrees the export says so in a comment instead.
    pub fn holds(&self) -> bool {
        self.bank_minor == self.ledger_minor
    }
}

/// The balances a period's export starts from: each account's, at the day before it.
#[derive(Debug, Clone)]
pub struct BroughtForward {
    pub date: NaiveDate,
    /// (account, currency, minor units), then the balancing amount per currency.
    pub balances: Vec<(Uuid, Currency, i64)>,
    pub balancing: Vec<(Currency, i64)>,
}

/// The synthetic account a period's brought-forward balances are balanced against: the income
/// and spending of the months before it.
pub const BROUGHT_FORWARD: &str = "Brought forward";

/// Everything but the transactions.
#[derive(Debug)]
pub struct Meta {
    pub owner: OwnerId,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    pub period: Period,
    pub home_currency: Option<Currency>,
    pub accounts: Vec<AccountRow>,
    index: HashMap<Uuid, usize>,
    pub budgets: Vec<BudgetRow>,
    pub rules: Vec<RuleRow>,
    pub assertions: Vec<Assertion>,
    pub brought_forward: Option<BroughtForward>,
    /// Every currency that appears anywhere, sorted.
    pub currencies: Vec<Currency>,
    /// The first day anything is dated (accounts are opened on it).
    pub first_day: NaiveDate,
}

impl Meta {
    pub fn account(&self, id: Uuid) -> Result<&AccountRow, ExportError> {
        self.index
            .get(&id)
            .and_then(|&i| self.accounts.get(i))
            .ok_or(ExportError::UnknownAccount(id))
    }

    pub async fn load(owner: OwnerId, conn: &mut PgConnection, period: Period) -> Result<Self, ExportError> {
        let accounts: Vec<AccountRow> = sqlx::query_as(
            "SELECT id, name, type, kind, currency::text AS currency, created_at
             FROM accounts WHERE owner_id = $1 ORDER BY type, name",
        )
        .bind(owner.as_uuid())
        .fetch_all(&mut *conn)
        .await?;
        let index = accounts.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
        let budgets: Vec<BudgetRow> = sqlx::query_as(
            "SELECT id, account_id, month::text AS month, amount_minor, currency::text AS currency
             FROM budgets WHERE owner_id = $1 ORDER BY month, account_id",
        )
        .bind(owner.as_uuid())
        .fetch_all(&mut *conn)
        .await?;
        let rules: Vec<RuleRow> = sqlx::query_as(
            "SELECT id, pattern, account_id, priority, created_at FROM rules
             WHERE owner_id = $1 ORDER BY priority, created_at, id",
        )
        .bind(owner.as_uuid())
        .fetch_all(&mut *conn)
        .await?;
        let home_currency = kakeibo_ledger::home_currency(owner, &mut *conn).await?;
        let assertions = assertions(owner, &mut *conn, period).await?;
        let brought_forward = match period.from {
            Some(from) => brought_forward(owner, &mut *conn, from).await?,
            None => None,
        };
        let (currencies, first_day) = currencies_and_first_day(owner, &mut *conn, period).await?;
        let currencies: Vec<Currency> = currencies
            .iter()
            .map(|c| Currency::parse(c))
            .collect::<Result<_, _>>()?;
        let first_day = [
            first_day,
            budgets.iter().filter_map(|b| first_of(&b.month)).min(),
            brought_forward.as_ref().map(|b| b.date),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or_else(|| chrono::Utc::now().date_naive());
        Ok(Self {
            owner,
            exported_at: chrono::Utc::now(),
            period,
            home_currency,
            accounts,
            index,
            budgets,
            rules,
            assertions,
            brought_forward,
            currencies,
            first_day,
        })
    }
}

/// The first day of a `YYYY-MM` month.
pub fn first_of(month: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").ok()
}

/// A type or kind as the ledger and the JSON name it (`asset`, `checking`).
pub fn label(value: impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        _ => String::new(),
    }
}

async fn currencies_and_first_day(
    owner: OwnerId,
    conn: &mut PgConnection,
    period: Period,
) -> Result<(Vec<String>, Option<NaiveDate>), ExportError> {
    let (currencies, first): (Vec<String>, Option<NaiveDate>) = sqlx::query_as(
        "SELECT array(SELECT DISTINCT c FROM (
                    SELECT currency::text AS c FROM postings WHERE owner_id = $1
                    UNION SELECT currency::text FROM accounts WHERE owner_id = $1 AND currency IS NOT NULL
                    UNION SELECT currency::text FROM budgets WHERE owner_id = $1) AS all_currencies
                    ORDER BY c),
                (SELECT min(date) FROM transactions WHERE owner_id = $1
                  AND ($2::date IS NULL OR date >= $2) AND ($3::date IS NULL OR date <= $3))",
    )
    .bind(owner.as_uuid())
    .bind(period.from)
    .bind(period.to)
    .fetch_one(conn)
    .await?;
    Ok((currencies, first))
}

/// The closing balances the owner's committed statements stated, each beside what the ledger
/// holds at the end of that day.
async fn assertions(
    owner: OwnerId,
    conn: &mut PgConnection,
    period: Period,
) -> Result<Vec<Assertion>, ExportError> {
    let rows: Vec<(Uuid, NaiveDate, String, i64, i64, String)> = sqlx::query_as(
        "WITH stated AS (
             SELECT DISTINCT ON (a.id, (b.plan->'balance'->>'date')::date)
                    a.id AS account, (b.plan->'balance'->>'date')::date AS day,
                    b.plan->'balance'->>'currency' AS currency,
                    (b.plan->'balance'->>'bank_minor')::bigint AS bank_minor, b.filename
             FROM import_batches b
             JOIN accounts a ON a.owner_id = b.owner_id AND a.name = b.plan->'balance'->>'account'
             WHERE b.owner_id = $1 AND b.status = 'committed' AND b.undone_at IS NULL
               AND jsonb_typeof(b.plan->'balance') = 'object'
             ORDER BY a.id, (b.plan->'balance'->>'date')::date, b.created_at DESC)
         SELECT s.account, s.day, s.currency, s.bank_minor,
                coalesce((SELECT sum(p.amount_minor) FROM postings p
                          JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
                          WHERE p.owner_id = $1 AND p.account_id = s.account
                            AND p.currency = s.currency AND t.date <= s.day), 0)::bigint,
                s.filename
         FROM stated s
         WHERE ($2::date IS NULL OR s.day >= $2) AND ($3::date IS NULL OR s.day <= $3)
         ORDER BY s.day, s.account",
    )
    .bind(owner.as_uuid())
    .bind(period.from)
    .bind(period.to)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(account, date, currency, bank_minor, ledger_minor, filename)| {
            Ok(Assertion {
                account,
                date,
                currency: Currency::parse(&currency)?,
                bank_minor,
                ledger_minor,
                filename,
            })
        })
        .collect()
}

async fn brought_forward(
    owner: OwnerId,
    conn: &mut PgConnection,
    from: NaiveDate,
) -> Result<Option<BroughtForward>, ExportError> {
    let rows: Vec<(Uuid, String, i64)> = sqlx::query_as(
        "SELECT p.account_id, p.currency::text, sum(p.amount_minor)::bigint
         FROM postings p
         JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
         JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
         WHERE p.owner_id = $1 AND t.date < $2 AND a.type IN ('asset', 'liability', 'equity')
         GROUP BY p.account_id, a.type, a.name, p.currency
         HAVING sum(p.amount_minor) <> 0
         ORDER BY a.type, a.name, p.currency",
    )
    .bind(owner.as_uuid())
    .bind(from)
    .fetch_all(conn)
    .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut balances = Vec::with_capacity(rows.len());
    let mut balancing: Vec<(Currency, i64)> = Vec::new();
    for (account, currency, minor) in rows {
        let currency = Currency::parse(&currency)?;
        balances.push((account, currency, minor));
        match balancing.iter_mut().find(|(c, _)| *c == currency) {
            Some((_, sum)) => *sum -= minor,
            None => balancing.push((currency, -minor)),
        }
    }
    balancing.retain(|(_, sum)| *sum != 0);
    Ok(Some(BroughtForward {
        date: from,
        balances,
        balancing,
    }))
}

/// A transaction as it streams out: the row, the statement it came from, and its other line's.
#[derive(Debug, Clone)]
pub struct Txn {
    pub row: TransactionRow,
    pub source_file: Option<String>,
    pub paired_file: Option<String>,
}

impl Txn {
    /// What the journals say of a transaction beside its postings, as `(key, value)` where it
    /// has one: its statement, the bank's reference, words and category, and a transfer's other
    /// statement line.
    pub fn tags(&self) -> [(&'static str, Option<&str>); 6] {
        let row = &self.row;
        [
            ("source", self.source_file.as_deref()),
            ("bank-ref", row.bank_ref.as_deref()),
            (
                "bank-description",
                Some(row.raw_description.as_str()).filter(|raw| *raw != row.description),
            ),
            ("bank-category", row.bank_category.as_deref()),
            ("paired-source", self.paired_file.as_deref()),
            ("paired-description", row.paired_description.as_deref()),
        ]
    }
}

#[derive(sqlx::FromRow)]
struct Flat {
    id: Uuid,
    date: NaiveDate,
    description: String,
    raw_description: String,
    import_batch_id: Option<Uuid>,
    source_hash: Option<String>,
    bank_ref: Option<String>,
    bank_category: Option<String>,
    paired_source_hash: Option<String>,
    paired_description: Option<String>,
    paired_batch_id: Option<Uuid>,
    paired_date: Option<NaiveDate>,
    created_at: chrono::DateTime<chrono::Utc>,
    source_file: Option<String>,
    paired_file: Option<String>,
    posting_id: Uuid,
    account_id: Uuid,
    amount_minor: i64,
    currency: String,
}

impl Flat {
    fn posting(&self) -> PostingRow {
        PostingRow {
            id: self.posting_id,
            account_id: self.account_id,
            amount_minor: self.amount_minor,
            currency: self.currency.clone(),
        }
    }

    fn into_txn(self) -> Txn {
        let posting = self.posting();
        Txn {
            row: TransactionRow {
                id: self.id,
                date: self.date,
                description: self.description,
                raw_description: self.raw_description,
                import_batch_id: self.import_batch_id,
                source_hash: self.source_hash,
                bank_ref: self.bank_ref,
                bank_category: self.bank_category,
                paired_source_hash: self.paired_source_hash,
                paired_description: self.paired_description,
                paired_batch_id: self.paired_batch_id,
                paired_date: self.paired_date,
                created_at: self.created_at,
                postings: vec![posting],
            },
            source_file: self.source_file,
            paired_file: self.paired_file,
        }
    }
}

/// Calls `each` with every transaction of the period, in date order (then as they were added),
/// one at a time: the rows stream from the server and only one transaction is held.
pub async fn each_transaction(
    owner: OwnerId,
    conn: &mut PgConnection,
    period: Period,
    mut each: impl FnMut(&Txn) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let mut rows = sqlx::query_as::<_, Flat>(
        "SELECT t.id, t.date, t.description, t.raw_description, t.import_batch_id, t.source_hash,
                t.bank_ref, t.bank_category, t.paired_source_hash, t.paired_description,
                t.paired_batch_id, t.paired_date, t.created_at,
                b.filename AS source_file, pb.filename AS paired_file,
                p.id AS posting_id, p.account_id, p.amount_minor, p.currency::text AS currency
         FROM transactions t
         JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
         LEFT JOIN import_batches b ON b.id = t.import_batch_id AND b.owner_id = t.owner_id
         LEFT JOIN import_batches pb ON pb.id = t.paired_batch_id AND pb.owner_id = t.owner_id
         WHERE t.owner_id = $1 AND ($2::date IS NULL OR t.date >= $2) AND ($3::date IS NULL OR t.date <= $3)
         ORDER BY t.date, t.created_at, t.id, p.amount_minor DESC, p.id",
    )
    .bind(owner.as_uuid())
    .bind(period.from)
    .bind(period.to)
    .fetch(conn);
    let mut current: Option<Txn> = None;
    while let Some(flat) = rows.try_next().await? {
        match &mut current {
            Some(txn) if txn.row.id == flat.id => txn.row.postings.push(flat.posting()),
            _ => {
                if let Some(done) = current.replace(flat.into_txn()) {
                    each(&done)?;
                }
            }
        }
    }
    if let Some(done) = current {
        each(&done)?;
    }
    Ok(())
}

/// Minor units as a plain decimal in the currency's precision (`-1234.50`).
pub fn decimal(minor: i64, currency: Currency) -> String {
    Money::new(minor, currency).to_decimal_string()
}

/// The rates a transaction across currencies implies, as `(date, from, rate, to)`: one unit of the
/// currency that left the person's account in each other currency, truncated to six decimals as
/// kakeibo states it when it settles such a transfer.
pub fn implied_rates(meta: &Meta, txn: &Txn) -> Vec<(Currency, String, Currency)> {
    let parse = |p: &PostingRow| Currency::parse(&p.currency).ok();
    let Some(first) = txn.row.postings.first().and_then(parse) else {
        return Vec::new();
    };
    if txn.row.postings.iter().all(|p| parse(p) == Some(first)) {
        return Vec::new();
    }
    let held = |p: &&PostingRow| {
        meta.account(p.account_id)
            .is_ok_and(|a| matches!(a.account_type, AccountType::Asset | AccountType::Liability))
    };
    let from = txn
        .row
        .postings
        .iter()
        .filter(held)
        .find(|p| p.amount_minor < 0)
        .and_then(parse)
        .unwrap_or(first);
    let moved = |currency: Currency| -> i64 {
        txn.row
            .postings
            .iter()
            .filter(|p| parse(p) == Some(currency) && p.amount_minor > 0)
            .map(|p| p.amount_minor)
            .sum()
    };
    let mut others: Vec<Currency> = txn
        .row
        .postings
        .iter()
        .filter_map(parse)
        .filter(|c| *c != from)
        .collect();
    others.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    others.dedup();
    others
        .into_iter()
        .filter_map(|to| {
            Money::new(moved(from), from)
                .implied_rate(Money::new(moved(to), to))
                .map(|r| (from, r, to))
        })
        .collect()
}
