//! The one insert path for transactions.
//!
//! Every transaction in the ledger enters through [`insert_transaction`]: at least two postings,
//! all in one currency, summing to exactly zero, on accounts of the same owner that can hold that
//! currency. Anything else is a typed [`LedgerError`] and nothing is written.

use chrono::NaiveDate;
use sha2::{Digest, Sha256};
use sqlx::{Acquire, PgConnection};
use uuid::Uuid;

use crate::{accounts::AccountType, error::LedgerError, money::Currency, owner::OwnerId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPosting {
    pub account_id: Uuid,
    /// Signed minor units: the effect on the account.
    pub amount_minor: i64,
    pub currency: Currency,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransaction {
    /// A caller-chosen id (deterministic seeds); a random one otherwise.
    pub id: Option<Uuid>,
    pub date: NaiveDate,
    pub description: String,
    /// The text as the statement had it; never rewritten afterwards.
    pub raw_description: String,
    pub import_batch_id: Option<Uuid>,
    /// Stable identity of an imported row (see [`source_hash`]); a second insert with the same
    /// hash for the same owner is a [`InsertOutcome::Duplicate`] and writes nothing.
    pub source_hash: Option<String>,
    pub postings: Vec<NewPosting>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    Inserted(Uuid),
    /// A transaction with the same source hash was already in the ledger.
    Duplicate,
}

/// Inserts one balanced transaction for `owner`, atomically (a savepoint when `conn` is already
/// in a transaction). See [`insert_transactions`].
pub async fn insert_transaction(
    owner: OwnerId,
    conn: &mut PgConnection,
    new: &NewTransaction,
) -> Result<InsertOutcome, LedgerError> {
    let outcomes = insert_transactions(owner, conn, std::slice::from_ref(new)).await?;
    Ok(outcomes.into_iter().next().unwrap_or(InsertOutcome::Duplicate))
}

/// Rows per statement when inserting many transactions.
const CHUNK: usize = 1_000;

/// Inserts balanced transactions for `owner`: every one is checked before anything is written,
/// and the whole call is atomic (a savepoint when `conn` is already in a transaction). Rows go in
/// chunks of set-based statements, so a statement of 100,000 rows takes a few hundred round trips.
/// The outcomes are in the order of `news`.
pub async fn insert_transactions(
    owner: OwnerId,
    conn: &mut PgConnection,
    news: &[NewTransaction],
) -> Result<Vec<InsertOutcome>, LedgerError> {
    let mut currencies = Vec::with_capacity(news.len());
    for new in news {
        currencies.push(check_balanced(new)?);
    }
    let mut accounts: Vec<(Uuid, Currency)> = news
        .iter()
        .zip(&currencies)
        .flat_map(|(new, currency)| new.postings.iter().map(move |p| (p.account_id, *currency)))
        .collect();
    accounts.sort_unstable();
    accounts.dedup();
    check_accounts(owner, &mut *conn, &accounts).await?;

    let ids: Vec<Uuid> = news.iter().map(|n| n.id.unwrap_or_else(Uuid::new_v4)).collect();
    let mut outcomes = Vec::with_capacity(news.len());
    let mut tx = conn.begin().await?;
    for ((chunk, chunk_ids), chunk_currencies) in news
        .chunks(CHUNK)
        .zip(ids.chunks(CHUNK))
        .zip(currencies.chunks(CHUNK))
    {
        let inserted = insert_chunk(owner, &mut tx, chunk, chunk_ids, chunk_currencies).await?;
        outcomes.extend(chunk_ids.iter().map(|id| {
            if inserted.contains(id) {
                InsertOutcome::Inserted(*id)
            } else {
                InsertOutcome::Duplicate
            }
        }));
    }
    tx.commit().await?;
    Ok(outcomes)
}

async fn insert_chunk(
    owner: OwnerId,
    conn: &mut PgConnection,
    news: &[NewTransaction],
    ids: &[Uuid],
    currencies: &[Currency],
) -> Result<std::collections::HashSet<Uuid>, LedgerError> {
    let dates: Vec<NaiveDate> = news.iter().map(|n| n.date).collect();
    let descriptions: Vec<&str> = news.iter().map(|n| n.description.trim()).collect();
    let raws: Vec<&str> = news.iter().map(|n| n.raw_description.as_str()).collect();
    let batches: Vec<Option<Uuid>> = news.iter().map(|n| n.import_batch_id).collect();
    let hashes: Vec<Option<&str>> = news.iter().map(|n| n.source_hash.as_deref()).collect();
    let inserted: Vec<Uuid> = sqlx::query_scalar(
        "INSERT INTO transactions (id, owner_id, date, description, raw_description, import_batch_id, source_hash)
         SELECT id, $1, date, description, raw, batch, hash
         FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::text[], $6::uuid[], $7::text[])
              AS t(id, date, description, raw, batch, hash)
         ON CONFLICT (owner_id, source_hash) WHERE source_hash IS NOT NULL DO NOTHING
         RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(ids)
    .bind(&dates)
    .bind(&descriptions)
    .bind(&raws)
    .bind(&batches)
    .bind(&hashes)
    .fetch_all(&mut *conn)
    .await?;
    let inserted: std::collections::HashSet<Uuid> = inserted.into_iter().collect();

    let (mut transaction_ids, mut account_ids, mut amounts, mut posting_currencies) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((new, id), currency) in news.iter().zip(ids).zip(currencies) {
        if !inserted.contains(id) {
            continue;
        }
        for posting in &new.postings {
            transaction_ids.push(*id);
            account_ids.push(posting.account_id);
            amounts.push(posting.amount_minor);
            posting_currencies.push(currency.as_str());
        }
    }
    sqlx::query(
        "INSERT INTO postings (owner_id, transaction_id, account_id, amount_minor, currency)
         SELECT $1, transaction_id, account_id, amount_minor, currency
         FROM UNNEST($2::uuid[], $3::uuid[], $4::bigint[], $5::text[])
              AS p(transaction_id, account_id, amount_minor, currency)",
    )
    .bind(owner.as_uuid())
    .bind(&transaction_ids)
    .bind(&account_ids)
    .bind(&amounts)
    .bind(&posting_currencies)
    .execute(&mut *conn)
    .await?;
    Ok(inserted)
}

/// The checks that need no database: two postings or more, one currency, a zero sum, a
/// description. Returns the currency.
fn check_balanced(new: &NewTransaction) -> Result<Currency, LedgerError> {
    let [first, rest @ ..] = new.postings.as_slice() else {
        return Err(LedgerError::TooFewPostings { count: 0 });
    };
    if rest.is_empty() {
        return Err(LedgerError::TooFewPostings { count: 1 });
    }
    if let Some(other) = rest.iter().find(|p| p.currency != first.currency) {
        return Err(LedgerError::MixedCurrencies {
            first: first.currency,
            other: other.currency,
        });
    }
    let sum: i128 = new.postings.iter().map(|p| i128::from(p.amount_minor)).sum();
    if sum != 0 {
        return Err(LedgerError::Unbalanced {
            sum_minor: sum,
            currency: first.currency,
        });
    }
    if new.description.trim().is_empty() {
        return Err(LedgerError::EmptyDescription);
    }
    Ok(first.currency)
}

/// Every posting's account belongs to `owner`, and a single-currency account matches the
/// currency of the transaction posting to it.
async fn check_accounts(
    owner: OwnerId,
    conn: &mut PgConnection,
    uses: &[(Uuid, Currency)],
) -> Result<(), LedgerError> {
    let ids: Vec<Uuid> = uses.iter().map(|(id, _)| *id).collect();
    let found: Vec<(Uuid, AccountType, Option<String>)> =
        sqlx::query_as("SELECT id, type, currency::text FROM accounts WHERE owner_id = $1 AND id = ANY($2)")
            .bind(owner.as_uuid())
            .bind(&ids)
            .fetch_all(conn)
            .await?;
    for (id, currency) in uses {
        let Some((_, account_type, account_currency)) = found.iter().find(|(found_id, ..)| found_id == id)
        else {
            return Err(LedgerError::UnknownAccount(*id));
        };
        // A category holds no currency of its own; every other account holds exactly one.
        if !account_type.holds_one_currency() {
            continue;
        }
        let account_currency = Currency::parse(account_currency.as_deref().unwrap_or_default())?;
        if account_currency != *currency {
            return Err(LedgerError::AccountCurrencyMismatch {
                account: *id,
                account_currency,
                posting_currency: *currency,
            });
        }
    }
    Ok(())
}

/// The stable identity of an imported statement row: SHA-256 (hex) over the account (by name,
/// which is unique per owner and known before the account exists), the date, the amount, the
/// description with case and spacing normalised, and which occurrence of that same row this is
/// within the file (two identical coffees on one day are two rows).
pub fn source_hash(
    account: &str,
    date: NaiveDate,
    amount_minor: i64,
    description: &str,
    occurrence: u32,
) -> String {
    let normalise = |text: &str| {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_uppercase()
    };
    let (account, description) = (normalise(account), normalise(description));
    let digest = Sha256::digest(format!(
        "{account}|{date}|{amount_minor}|{description}|{occurrence}"
    ));
    hex::encode(digest)
}

/// The source hash of a row the bank gave its own id (OFX `FITID`): the account, the id, and the
/// date and amount it came with, so an id a bank reuses for another row is another row; the
/// `occurrence` tells apart rows a file repeats with the same id.
pub fn source_hash_of_ref(
    account: &str,
    bank_ref: &str,
    date: NaiveDate,
    amount_minor: i64,
    occurrence: u32,
) -> String {
    let account = account
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase();
    let digest = Sha256::digest(format!(
        "{account}|ref:{bank_ref}|{date}|{amount_minor}|{occurrence}"
    ));
    hex::encode(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posting(amount_minor: i64, currency: Currency) -> NewPosting {
        NewPosting {
            account_id: Uuid::new_v4(),
            amount_minor,
            currency,
        }
    }

    fn transaction(postings: Vec<NewPosting>) -> NewTransaction {
        NewTransaction {
            id: None,
            date: NaiveDate::from_ymd_opt(2025, 3, 1).unwrap(),
            description: "coffee".into(),
            raw_description: "coffee".into(),
            import_batch_id: None,
            source_hash: None,
            postings,
        }
    }

    #[test]
    fn balance_rules() {
        let inr = Currency::INR;
        assert!(check_balanced(&transaction(vec![posting(100, inr), posting(-100, inr)])).is_ok());
        assert!(
            check_balanced(&transaction(vec![
                posting(100, inr),
                posting(-60, inr),
                posting(-40, inr)
            ]))
            .is_ok()
        );
        assert!(matches!(
            check_balanced(&transaction(vec![])),
            Err(LedgerError::TooFewPostings { count: 0 })
        ));
        assert!(matches!(
            check_balanced(&transaction(vec![posting(0, inr)])),
            Err(LedgerError::TooFewPostings { count: 1 })
        ));
        assert!(matches!(
            check_balanced(&transaction(vec![posting(100, inr), posting(-99, inr)])),
            Err(LedgerError::Unbalanced { sum_minor: 1, .. })
        ));
        assert!(matches!(
            check_balanced(&transaction(vec![
                posting(100, inr),
                posting(-100, Currency::USD)
            ])),
            Err(LedgerError::MixedCurrencies { .. })
        ));
        // The sum is taken without overflow: two maximal postings do not wrap around to zero.
        assert!(matches!(
            check_balanced(&transaction(vec![
                posting(i64::MAX, inr),
                posting(i64::MAX, inr),
                posting(2, inr)
            ])),
            Err(LedgerError::Unbalanced { .. })
        ));
        let mut blank = transaction(vec![posting(1, inr), posting(-1, inr)]);
        blank.description = "  ".into();
        assert!(matches!(
            check_balanced(&blank),
            Err(LedgerError::EmptyDescription)
        ));
    }

    #[test]
    fn source_hash_normalises_case_and_spacing_only() {
        let account = "Checking";
        let date = NaiveDate::from_ymd_opt(2025, 1, 2).unwrap();
        let a = source_hash(account, date, -100, "Chai  Point 12", 0);
        assert_eq!(a, source_hash(account, date, -100, " CHAI POINT 12 ", 0));
        assert_eq!(a.len(), 64);
        assert_ne!(a, source_hash(account, date, -100, "CHAI POINT 12", 1));
        assert_ne!(a, source_hash(account, date, -101, "CHAI POINT 12", 0));
        assert_ne!(a, source_hash("Savings", date, -100, "CHAI POINT 12", 0));
        assert_eq!(a, source_hash("checking", date, -100, "CHAI POINT 12", 0));
        assert_ne!(
            a,
            source_hash(account, date.succ_opt().unwrap(), -100, "CHAI POINT 12", 0)
        );
    }
}
