//! Loading the seed rows into one owner's ledger through the one insert path.

use std::collections::HashMap;

use chrono::NaiveDate;
use sha2::{Digest, Sha256};
use sqlx::PgConnection;
use uuid::{Builder, Uuid};

use crate::{
    accounts::{CHECKING, UNCATEGORIZED, ensure_chart},
    error::LedgerError,
    money::Currency,
    owner::{DEV_OWNER, OwnerId},
    transactions::{InsertOutcome, NewPosting, NewTransaction, insert_transactions, source_hash},
};
use kakeibo_seed::CsvRow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    pub inserted: usize,
    /// Rows already in the ledger (same source hash): loading twice adds nothing.
    pub duplicates: usize,
    pub uncategorized: usize,
    /// The batch the new rows belong to; `None` when nothing was new.
    pub import_batch_id: Option<Uuid>,
}

/// The deterministic id of a seed transaction: the first 16 bytes of
/// SHA-256(`kakeibo.seed.transaction:<csv line>|<date>|<description>`), marked as a version 5,
/// RFC 4122 UUID. The CSV line counts the header as line 1.
///
/// That is the id in the development owner's ledger (recorded exchanges and replay fixtures
/// name it). Ids are primary keys across all owners, so every other owner's copy of the demo
/// ledger gets its own: the owner's id joins the hashed text (`…transaction:<owner>:<line>|…`).
pub fn transaction_id(owner: OwnerId, csv_line: usize, date: NaiveDate, description: &str) -> Uuid {
    let text = if owner == DEV_OWNER {
        format!("kakeibo.seed.transaction:{csv_line}|{date}|{description}")
    } else {
        format!("kakeibo.seed.transaction:{owner}:{csv_line}|{date}|{description}")
    };
    let digest = Sha256::digest(text);
    let mut bytes = [0u8; 16];
    for (byte, from) in bytes.iter_mut().zip(digest.iter()) {
        *byte = *from;
    }
    Builder::from_sha1_bytes(bytes).into_uuid()
}

/// Loads `rows` into `owner`'s ledger (creating the chart of accounts when missing). Each row is
/// two postings: Checking `+amount` and its category `-amount` (Uncategorized when the cell is
/// empty or names no category). Call it inside [`crate::with_owner`] so the load is one
/// transaction.
pub async fn load(
    owner: OwnerId,
    conn: &mut PgConnection,
    filename: &str,
    rows: &[CsvRow],
) -> Result<LoadReport, LedgerError> {
    let chart = ensure_chart(owner, &mut *conn, Some(Currency::INR)).await?;
    let by_name: HashMap<String, _> = chart.iter().map(|a| (a.name.to_lowercase(), a)).collect();
    let account = |name: &str| {
        by_name
            .get(&name.to_lowercase())
            .copied()
            .ok_or_else(|| LedgerError::UnknownAccountName(name.to_owned()))
    };
    let checking = account(CHECKING)?;
    let uncategorized = account(UNCATEGORIZED)?;

    let batch_id: Uuid = sqlx::query_scalar(
        "INSERT INTO import_batches (owner_id, account_id, filename, status, row_count, imported_at)
         VALUES ($1, $2, $3, 'committed', $4, now()) RETURNING id",
    )
    .bind(owner.as_uuid())
    .bind(checking.id)
    .bind(filename)
    .bind(i32::try_from(rows.len()).unwrap_or(i32::MAX))
    .fetch_one(&mut *conn)
    .await?;

    let mut report = LoadReport {
        inserted: 0,
        duplicates: 0,
        uncategorized: 0,
        import_batch_id: Some(batch_id),
    };
    let mut seen: HashMap<(NaiveDate, i64, String), u32> = HashMap::new();
    let mut news = Vec::with_capacity(rows.len());
    let mut uncategorised_flags = Vec::with_capacity(rows.len());
    for row in rows {
        let category = row
            .category
            .as_deref()
            .and_then(|name| by_name.get(&name.to_lowercase()).copied())
            .filter(|a| a.account_type.is_category())
            .unwrap_or(uncategorized);
        let occurrence = seen
            .entry((row.date, row.amount_minor, row.description.to_uppercase()))
            .and_modify(|n| *n = n.saturating_add(1))
            .or_insert(0);
        let negated = row.amount_minor.checked_neg().ok_or(LedgerError::Unbalanced {
            sum_minor: i128::from(row.amount_minor),
            currency: Currency::INR,
        })?;
        uncategorised_flags.push(category.id == uncategorized.id);
        news.push(NewTransaction {
            id: Some(transaction_id(owner, row.csv_line, row.date, &row.description)),
            date: row.date,
            description: row.description.clone(),
            raw_description: row.description.clone(),
            import_batch_id: Some(batch_id),
            source_hash: Some(source_hash(
                &checking.name,
                row.date,
                row.amount_minor,
                &row.description,
                *occurrence,
            )),
            postings: vec![
                NewPosting {
                    account_id: checking.id,
                    amount_minor: row.amount_minor,
                    currency: Currency::INR,
                },
                NewPosting {
                    account_id: category.id,
                    amount_minor: negated,
                    currency: Currency::INR,
                },
            ],
        });
    }
    for (outcome, uncategorised) in insert_transactions(owner, &mut *conn, &news)
        .await?
        .into_iter()
        .zip(uncategorised_flags)
    {
        match outcome {
            InsertOutcome::Inserted(_) => {
                report.inserted = report.inserted.saturating_add(1);
                report.uncategorized = report.uncategorized.saturating_add(usize::from(uncategorised));
            }
            InsertOutcome::Duplicate => report.duplicates = report.duplicates.saturating_add(1),
        }
    }

    if report.inserted == 0 {
        sqlx::query("DELETE FROM import_batches WHERE owner_id = $1 AND id = $2")
            .bind(owner.as_uuid())
            .bind(batch_id)
            .execute(&mut *conn)
            .await?;
        report.import_batch_id = None;
    } else if report.duplicates > 0 {
        sqlx::query("UPDATE import_batches SET row_count = $3 WHERE owner_id = $1 AND id = $2")
            .bind(owner.as_uuid())
            .bind(batch_id)
            .bind(i32::try_from(report.inserted).unwrap_or(i32::MAX))
            .execute(&mut *conn)
            .await?;
    }
    Ok(report)
}

/// Removes `owner`'s whole ledger: transactions and postings, import batches, rules, budgets,
/// memories and accounts. Conversations, runs and the user row stay.
pub async fn clear_ledger(owner: OwnerId, conn: &mut PgConnection) -> Result<(), LedgerError> {
    for statement in [
        "DELETE FROM transactions WHERE owner_id = $1",
        "DELETE FROM import_batches WHERE owner_id = $1",
        "DELETE FROM import_mappings WHERE owner_id = $1",
        "DELETE FROM rules WHERE owner_id = $1",
        "DELETE FROM budgets WHERE owner_id = $1",
        "DELETE FROM memories WHERE owner_id = $1",
        "DELETE FROM accounts WHERE owner_id = $1",
    ] {
        sqlx::query(statement)
            .bind(owner.as_uuid())
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ids_are_version_5_rfc_4122() {
        let date = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
        let id = transaction_id(DEV_OWNER, 2, date, "RELIANCE FRESH 146088");
        assert_eq!(id.get_version_num(), 5);
        assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(id, transaction_id(DEV_OWNER, 2, date, "RELIANCE FRESH 146088"));
        assert_ne!(id, transaction_id(DEV_OWNER, 3, date, "RELIANCE FRESH 146088"));
        let visitor = OwnerId::new(Uuid::from_u128(7));
        let theirs = transaction_id(visitor, 2, date, "RELIANCE FRESH 146088");
        assert_ne!(theirs, id);
        assert_eq!(theirs.get_version_num(), 5);
    }
}
