//! A transaction as it stands — its row and its postings — read whole, and put back whole.
//!
//! Every edit of the register is two lists of snapshots: the transactions as they were and as the
//! edit leaves them. Applying an edit deletes the transactions it touches and inserts the `after`
//! snapshots through the ledger's one insert path (so postings still sum to zero, on accounts the
//! owner has); reverting applies `before`. The transaction keeps its id, its statement identity
//! and a transfer's second line throughout.

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{Currency, InsertOutcome, NewPosting, NewTransaction, OwnerId, insert_transactions};

use crate::RegisterError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posting {
    pub account_id: Uuid,
    pub amount_minor: i64,
    pub currency: Currency,
}

/// One transaction whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub id: Uuid,
    pub date: NaiveDate,
    pub description: String,
    pub raw_description: String,
    pub import_batch_id: Option<Uuid>,
    pub source_hash: Option<String>,
    pub created_at: DateTime<Utc>,
    pub paired_source_hash: Option<String>,
    pub paired_description: Option<String>,
    pub paired_batch_id: Option<Uuid>,
    pub paired_date: Option<NaiveDate>,
    pub bank_category: Option<String>,
    /// In a stable order (account, then amount), so two snapshots of the same state are equal.
    pub postings: Vec<Posting>,
}

/// The transactions `ids` of `owner` as they stand, in the order of their ids; an id the owner
/// has no transaction for is left out.
pub async fn read(
    owner: OwnerId,
    conn: &mut PgConnection,
    ids: &[Uuid],
) -> Result<Vec<Snapshot>, RegisterError> {
    let rows: Vec<sqlx::types::Json<Snapshot>> = sqlx::query_scalar(
        "SELECT jsonb_build_object(
                'id', t.id, 'date', t.date, 'description', t.description, 'raw_description', t.raw_description,
                'import_batch_id', t.import_batch_id, 'source_hash', t.source_hash, 'created_at', t.created_at,
                'paired_source_hash', t.paired_source_hash, 'paired_description', t.paired_description,
                'paired_batch_id', t.paired_batch_id, 'paired_date', t.paired_date, 'bank_category', t.bank_category,
                'postings', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                 'account_id', p.account_id, 'amount_minor', p.amount_minor, 'currency', p.currency)
                               ORDER BY p.account_id, p.amount_minor), '[]')
                             FROM postings p WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id))
         FROM transactions t WHERE t.owner_id = $1 AND t.id = ANY($2) ORDER BY t.id",
    )
    .bind(owner.as_uuid())
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|row| row.0).collect())
}

/// Puts `after` in place of the transactions of `before` (and of `after`): those are deleted,
/// then `after` inserted through the ledger's insert path with their ids and their statement
/// identity. Fails — writing nothing — when what stands now is not `before`.
pub async fn replace(
    owner: OwnerId,
    conn: &mut PgConnection,
    before: &[Snapshot],
    after: &[Snapshot],
) -> Result<(), RegisterError> {
    let ids: Vec<Uuid> = before
        .iter()
        .chain(after)
        .map(|s| s.id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Locked, then compared: an edit made on what a person saw, not on what changed since.
    sqlx::query("SELECT 1 FROM transactions WHERE owner_id = $1 AND id = ANY($2) FOR UPDATE")
        .bind(owner.as_uuid())
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    let standing = read(owner, &mut *conn, &ids).await?;
    let mut expected = before.to_vec();
    expected.sort_by_key(|s| s.id);
    if standing != expected {
        return Err(RegisterError::Changed);
    }
    sqlx::query("DELETE FROM transactions WHERE owner_id = $1 AND id = ANY($2)")
        .bind(owner.as_uuid())
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    let news: Vec<NewTransaction> = after
        .iter()
        .map(|s| NewTransaction {
            id: Some(s.id),
            date: s.date,
            description: s.description.clone(),
            raw_description: s.raw_description.clone(),
            import_batch_id: s.import_batch_id,
            source_hash: s.source_hash.clone(),
            postings: s
                .postings
                .iter()
                .map(|p| NewPosting {
                    account_id: p.account_id,
                    amount_minor: p.amount_minor,
                    currency: p.currency,
                })
                .collect(),
        })
        .collect();
    // A statement line that came back meanwhile (re-imported since a row was deleted) holds the
    // row's identity now: putting the row back would book it twice, so nothing is.
    let outcomes = insert_transactions(owner, &mut *conn, &news).await?;
    if outcomes.iter().any(|o| matches!(o, InsertOutcome::Duplicate)) {
        return Err(RegisterError::Changed);
    }
    for s in after {
        sqlx::query(
            "UPDATE transactions SET created_at = $3, paired_source_hash = $4, paired_description = $5,
                    paired_batch_id = $6, paired_date = $7, bank_category = $8
             WHERE owner_id = $1 AND id = $2",
        )
        .bind(owner.as_uuid())
        .bind(s.id)
        .bind(s.created_at)
        .bind(&s.paired_source_hash)
        .bind(&s.paired_description)
        .bind(s.paired_batch_id)
        .bind(s.paired_date)
        .bind(&s.bank_category)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
