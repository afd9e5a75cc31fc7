//! A person's own edits from the register, each recorded with the transactions as they were and
//! as it left them (`ledger_edits`), and each reversible while nothing has changed them since.
//!
//! Every function runs on a connection already in a transaction scoped to the owner; the caller
//! commits. Nothing here asks for a confirmation: a person's edit on their own books is their
//! decision. What the agent writes still goes through the confirmation card.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use kakeibo_ledger::{
    Account, AccountKind, AccountType, Money, OwnerId, import::transit_account, list_accounts,
};

use crate::{
    RegisterError,
    snapshot::{self, Posting, Snapshot},
};

/// What an edit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, sqlx::Type, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum EditKind {
    /// A transaction filed under another category.
    Recategorize,
    /// A transaction's description changed.
    Describe,
    /// A transaction split across categories.
    Split,
    /// A transaction deleted.
    Delete,
    /// An import's transactions taken out.
    UndoImport,
    /// An earlier edit put back.
    Revert,
    /// A category merged into another.
    Merge,
    /// A rule's category given to the past rows like it.
    ApplyRule,
}

/// One recorded edit.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Edit {
    pub id: Uuid,
    pub made_at: DateTime<Utc>,
    pub made_by: String,
    pub kind: EditKind,
    /// What it did, in a sentence.
    pub summary: String,
    /// The import an `undo_import` undid.
    pub import_batch_id: Option<Uuid>,
    /// How many transactions it touched.
    pub transactions: i32,
    pub reverted_at: Option<DateTime<Utc>>,
    /// The edit that reverted it.
    pub reverted_by: Option<Uuid>,
}

/// One category's share in a split: its name and the size of its share (positive).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Share {
    pub category: String,
    pub amount_minor: i64,
}

const EDIT_COLUMNS: &str = "id, made_at, made_by, kind, summary, import_batch_id,
    greatest(jsonb_array_length(before), jsonb_array_length(after))::int4 AS transactions, reverted_at, reverted_by";

/// The owner's edits, newest first (at most `limit`, clamped to 1..=200).
pub async fn list(owner: OwnerId, conn: &mut PgConnection, limit: i64) -> Result<Vec<Edit>, RegisterError> {
    Ok(sqlx::query_as::<_, Edit>(sqlx::AssertSqlSafe(format!(
        "SELECT {EDIT_COLUMNS} FROM ledger_edits WHERE owner_id = $1 ORDER BY made_at DESC, id LIMIT $2"
    )))
    .bind(owner.as_uuid())
    .bind(limit.clamp(1, 200))
    .fetch_all(&mut *conn)
    .await?)
}

/// The postings of a transaction, sorted by what they are to the person.
pub(crate) struct Legs<'a> {
    /// On the person's own accounts (not the transit account).
    pub(crate) money: Vec<&'a Posting>,
    pub(crate) transit: usize,
    /// On expense and income accounts.
    pub(crate) categories: Vec<&'a Posting>,
}

pub(crate) fn legs<'a>(s: &'a Snapshot, accounts: &HashMap<Uuid, &Account>) -> Legs<'a> {
    let mut out = Legs {
        money: Vec::new(),
        transit: 0,
        categories: Vec::new(),
    };
    for p in &s.postings {
        match accounts.get(&p.account_id) {
            Some(a) if a.kind == Some(AccountKind::Transit) => out.transit += 1,
            Some(a) if matches!(a.account_type, AccountType::Asset | AccountType::Liability) => {
                out.money.push(p);
            }
            Some(a) if a.account_type.is_category() => out.categories.push(p),
            _ => {}
        }
    }
    out
}

/// The one transaction `id` of the owner as it stands.
async fn one(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Snapshot, RegisterError> {
    snapshot::read(owner, conn, &[id])
        .await?
        .into_iter()
        .next()
        .ok_or(RegisterError::NotFound)
}

/// A category of the owner by name (any case).
pub(crate) fn category<'a>(accounts: &'a [Account], name: &str) -> Result<&'a Account, RegisterError> {
    let name = name.trim();
    accounts
        .iter()
        .filter(|a| a.account_type.is_category() && a.name.eq_ignore_ascii_case(name))
        .min_by_key(|a| a.name != name)
        .ok_or_else(|| RegisterError::Invalid(format!("there is no category named “{name}”")))
}

pub(crate) fn by_id(accounts: &[Account]) -> HashMap<Uuid, &Account> {
    accounts.iter().map(|a| (a.id, a)).collect()
}

/// A row as a person recognises it: “BIGBASKET ORDER” (3 Jul 2025).
fn named(s: &Snapshot) -> String {
    format!("“{}” ({})", s.description, s.date.format("%-d %b %Y"))
}

/// The money-side legs of a row that may take a category: never a transfer, in transit or not.
pub(crate) fn categorised<'a>(
    s: &'a Snapshot,
    accounts: &HashMap<Uuid, &Account>,
) -> Result<Legs<'a>, RegisterError> {
    let legs = legs(s, accounts);
    if legs.money.len() >= 2 || legs.transit > 0 {
        return Err(RegisterError::Refused(
            "money moved between your own accounts is not spending or income, so it takes no category".into(),
        ));
    }
    if legs.categories.is_empty() {
        return Err(RegisterError::Refused(
            "this row has no category to change (an opening balance or a conversion)".into(),
        ));
    }
    Ok(legs)
}

/// Gives transaction `id` the category `name`.
pub async fn recategorize(
    owner: OwnerId,
    conn: &mut PgConnection,
    id: Uuid,
    name: &str,
) -> Result<Edit, RegisterError> {
    let before = one(owner, &mut *conn, id).await?;
    let accounts = list_accounts(owner, &mut *conn).await?;
    let target = category(&accounts, name)?;
    let index = by_id(&accounts);
    let legs = categorised(&before, &index)?;
    let [leg] = legs.categories.as_slice() else {
        return Err(RegisterError::Refused(
            "this row is split across categories: change its split instead".into(),
        ));
    };
    let was = index
        .get(&leg.account_id)
        .map_or("?", |a| a.name.as_str())
        .to_owned();
    if leg.account_id == target.id {
        return Err(RegisterError::Invalid(format!(
            "{} is already in {}",
            named(&before),
            target.name
        )));
    }
    let leg_account = leg.account_id;
    let mut after = before.clone();
    for p in &mut after.postings {
        if p.account_id == leg_account {
            p.account_id = target.id;
        }
    }
    sort(&mut after);
    let summary = format!("{}: {was} → {}", named(&before), target.name);
    record(
        owner,
        conn,
        EditKind::Recategorize,
        &summary,
        &[before],
        &[after],
        None,
    )
    .await
}

/// Gives transaction `id` a new description (the statement's own text is kept).
pub async fn describe(
    owner: OwnerId,
    conn: &mut PgConnection,
    id: Uuid,
    text: &str,
) -> Result<Edit, RegisterError> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 200 || text.chars().any(char::is_control) {
        return Err(RegisterError::Invalid(
            "a description is 1 to 200 characters on one line".into(),
        ));
    }
    let before = one(owner, &mut *conn, id).await?;
    if before.description == text {
        return Err(RegisterError::Invalid("that is its description already".into()));
    }
    let mut after = before.clone();
    after.description = text.to_owned();
    let summary = format!("{} renamed “{text}”", named(&before));
    record(
        owner,
        conn,
        EditKind::Describe,
        &summary,
        &[before],
        &[after],
        None,
    )
    .await
}

/// Splits transaction `id` across categories: the shares' sizes add up to what it spent (or
/// earned); one share is a change of category.
pub async fn split(
    owner: OwnerId,
    conn: &mut PgConnection,
    id: Uuid,
    shares: &[Share],
) -> Result<Edit, RegisterError> {
    if shares.is_empty() || shares.len() > 20 {
        return Err(RegisterError::Invalid("a split has 1 to 20 shares".into()));
    }
    if shares.iter().any(|s| s.amount_minor <= 0) {
        return Err(RegisterError::Invalid("every share is more than zero".into()));
    }
    let before = one(owner, &mut *conn, id).await?;
    let accounts = list_accounts(owner, &mut *conn).await?;
    let index = by_id(&accounts);
    let legs = categorised(&before, &index)?;
    let total: i64 = legs.categories.iter().map(|p| p.amount_minor).sum();
    let currency = legs
        .categories
        .first()
        .map(|p| p.currency)
        .ok_or(RegisterError::NotFound)?;
    // The shares in the order the person gave them; two of one category are one share.
    let mut merged: Vec<(Uuid, String, i64)> = Vec::new();
    for share in shares {
        let account = category(&accounts, &share.category)?;
        let too_large = || RegisterError::Invalid("the shares are too large".into());
        match merged.iter_mut().find(|(id, _, _)| *id == account.id) {
            Some(entry) => entry.2 = entry.2.checked_add(share.amount_minor).ok_or_else(too_large)?,
            None => merged.push((account.id, account.name.clone(), share.amount_minor)),
        }
    }
    let sum: i64 = merged.iter().map(|(_, _, a)| *a).fold(0i64, i64::saturating_add);
    if sum != total.saturating_abs() {
        return Err(RegisterError::Invalid(format!(
            "the shares add up to {}, and the row is {}",
            Money::new(sum, currency).format(),
            Money::new(total.saturating_abs(), currency).format()
        )));
    }
    let sign = if total < 0 { -1 } else { 1 };
    let mut after = before.clone();
    after.postings = legs.money.iter().map(|p| (*p).clone()).collect();
    after
        .postings
        .extend(merged.iter().map(|(account_id, _, amount)| Posting {
            account_id: *account_id,
            amount_minor: sign * amount,
            currency,
        }));
    sort(&mut after);
    let shares_text = merged
        .iter()
        .map(|(_, name, amount)| format!("{name} {}", Money::new(*amount, currency).format()))
        .collect::<Vec<_>>()
        .join(", ");
    let summary = format!("{} split: {shares_text}", named(&before));
    record(owner, conn, EditKind::Split, &summary, &[before], &[after], None).await
}

/// Deletes transaction `id` (recorded: it can be put back).
pub async fn delete(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Edit, RegisterError> {
    let before = one(owner, &mut *conn, id).await?;
    let accounts = list_accounts(owner, &mut *conn).await?;
    let index = by_id(&accounts);
    let legs = legs(&before, &index);
    let amount = legs
        .money
        .iter()
        .map(|p| p.amount_minor)
        .reduce(|a, b| {
            if legs.money.len() >= 2 {
                a.max(b)
            } else {
                a.saturating_add(b)
            }
        })
        .unwrap_or(0);
    let currency = before.postings.first().map(|p| p.currency);
    let figure = currency.map_or_else(String::new, |c| format!(", {}", Money::new(amount, c).format()));
    let summary = format!(
        "Deleted “{}” ({}{figure})",
        before.description,
        before.date.format("%-d %b %Y")
    );
    record(owner, conn, EditKind::Delete, &summary, &[before], &[], None).await
}

/// An import as an undo reads it.
#[derive(sqlx::FromRow)]
struct Batch {
    status: String,
    account_id: Option<Uuid>,
    filename: String,
    undone_at: Option<DateTime<Utc>>,
}

/// A recorded edit as a revert reads it.
#[derive(sqlx::FromRow)]
struct Recorded {
    kind: EditKind,
    detail: Option<sqlx::types::Json<serde_json::Value>>,
    summary: String,
    before: sqlx::types::Json<Vec<Snapshot>>,
    after: sqlx::types::Json<Vec<Snapshot>>,
    import_batch_id: Option<Uuid>,
    reverted_at: Option<DateTime<Utc>>,
}

/// Undoes import `batch`: its rows go; a transfer it completed waits in transit again for its
/// other side; a transfer whose other side came later keeps that side, waiting in transit.
pub async fn undo_import(
    owner: OwnerId,
    conn: &mut PgConnection,
    batch: Uuid,
) -> Result<Edit, RegisterError> {
    let found: Option<Batch> = sqlx::query_as(
        "SELECT status::text, account_id, filename, undone_at FROM import_batches
         WHERE owner_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(batch)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(Batch {
        status,
        account_id: account,
        filename,
        undone_at: undone,
    }) = found
    else {
        return Err(RegisterError::NotFound);
    };
    if status != "committed" {
        return Err(RegisterError::Invalid(format!(
            "{filename} was previewed, never imported"
        )));
    }
    if undone.is_some() {
        return Err(RegisterError::Invalid(format!(
            "the import of {filename} is undone already"
        )));
    }
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM transactions WHERE owner_id = $1 AND (import_batch_id = $2 OR paired_batch_id = $2)",
    )
    .bind(owner.as_uuid())
    .bind(batch)
    .fetch_all(&mut *conn)
    .await?;
    let before = snapshot::read(owner, &mut *conn, &ids).await?;
    let mut after = Vec::new();
    let (mut removed, mut waiting) = (0usize, 0usize);
    for s in &before {
        let ours = s.import_batch_id == Some(batch);
        let pair = if ours {
            s.paired_batch_id
        } else {
            s.import_batch_id
        };
        if ours && s.paired_batch_id.is_none() {
            removed += 1;
            continue;
        }
        // A transfer of two statements: this import's side goes; the other waits in transit.
        let Some(side) = account.and_then(|a| s.postings.iter().position(|p| p.account_id == a)) else {
            return Err(RegisterError::Refused(format!(
                "{} is a transfer whose side from {filename} cannot be told apart: it was left as it is, and nothing was undone",
                named(s)
            )));
        };
        let mut kept = s.clone();
        let currency = kept
            .postings
            .get(side)
            .map(|p| p.currency)
            .ok_or(RegisterError::NotFound)?;
        let transit = transit_account(owner, &mut *conn, currency).await?;
        if let Some(p) = kept.postings.get_mut(side) {
            p.account_id = transit.id;
        }
        if ours {
            // The other statement's line becomes the row's own.
            kept.date = s.paired_date.unwrap_or(s.date);
            if let Some(text) = &s.paired_description {
                kept.description.clone_from(text);
                kept.raw_description.clone_from(text);
            }
            kept.source_hash.clone_from(&s.paired_source_hash);
            kept.import_batch_id = pair;
        }
        kept.paired_source_hash = None;
        kept.paired_description = None;
        kept.paired_batch_id = None;
        kept.paired_date = None;
        sort(&mut kept);
        after.push(kept);
        waiting += 1;
    }
    let mut summary = format!(
        "Undid the import of {filename}: {removed} {} removed",
        if removed == 1 { "row" } else { "rows" }
    );
    if waiting > 0 {
        let transfers = if waiting == 1 { "transfer" } else { "transfers" };
        summary = format!("{summary}, {waiting} {transfers} back in transit for the other side");
    }
    let edit = record(
        owner,
        &mut *conn,
        EditKind::UndoImport,
        &summary,
        &before,
        &after,
        Some(batch),
    )
    .await?;
    mark_undone(owner, conn, batch).await?;
    Ok(edit)
}

/// Puts back what edit `id` changed, when nothing has changed it since; recorded as an edit of
/// its own (which may be reverted in turn).
pub async fn revert(owner: OwnerId, conn: &mut PgConnection, id: Uuid) -> Result<Edit, RegisterError> {
    let found: Option<Recorded> = sqlx::query_as(
        "SELECT kind, detail, summary, before, after, import_batch_id, reverted_at FROM ledger_edits
             WHERE owner_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(Recorded {
        kind,
        detail,
        summary,
        before,
        after,
        import_batch_id: batch,
        reverted_at: reverted,
    }) = found
    else {
        return Err(RegisterError::NotFound);
    };
    if reverted.is_some() {
        return Err(RegisterError::Invalid("that edit is reverted already".into()));
    }
    let detail = detail.map(|d| d.0);
    let undoes_merge = kind == EditKind::Merge;
    if kind == EditKind::Revert && detail.as_ref().is_some_and(|d| d["undoes"] == "merge") {
        return Err(RegisterError::Invalid(
            "that put a merged category back: merge the two again instead".into(),
        ));
    }
    if undoes_merge {
        // The category comes back first, so the rows can be put back on it.
        crate::categories::unmerge_account(owner, &mut *conn, detail.as_ref()).await?;
    }
    let text: String = format!("Reverted: {summary}").chars().take(500).collect();
    let edit = record_with(
        owner,
        &mut *conn,
        EditKind::Revert,
        &text,
        (&after.0, &before.0),
        batch,
        undoes_merge.then(|| serde_json::json!({"undoes": "merge"})),
    )
    .await?;
    if undoes_merge {
        crate::categories::unmerge_uses(owner, &mut *conn, detail.as_ref()).await?;
    }
    sqlx::query(
        "UPDATE ledger_edits SET reverted_at = now(), reverted_by = $3 WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(id)
    .bind(edit.id)
    .execute(&mut *conn)
    .await?;
    if let Some(batch) = batch {
        mark_undone(owner, conn, batch).await?;
    }
    Ok(edit)
}

/// An import is undone while none of the ledger's rows is one of its lines.
async fn mark_undone(owner: OwnerId, conn: &mut PgConnection, batch: Uuid) -> Result<(), RegisterError> {
    sqlx::query(
        "UPDATE import_batches SET undone_at = CASE
             WHEN EXISTS (SELECT 1 FROM transactions t WHERE t.owner_id = $1
                          AND (t.import_batch_id = $2 OR t.paired_batch_id = $2)) THEN NULL
             ELSE coalesce(undone_at, now()) END
         WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(batch)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(crate) fn sort(s: &mut Snapshot) {
    s.postings.sort_by_key(|p| (p.account_id, p.amount_minor));
}

/// Applies an edit (`before` must be what stands) and records it.
pub(crate) async fn record(
    owner: OwnerId,
    conn: &mut PgConnection,
    kind: EditKind,
    summary: &str,
    before: &[Snapshot],
    after: &[Snapshot],
    batch: Option<Uuid>,
) -> Result<Edit, RegisterError> {
    record_with(owner, conn, kind, summary, (before, after), batch, None).await
}

/// Like [`record`], keeping `detail`: what else the edit changed, for its revert.
pub(crate) async fn record_with(
    owner: OwnerId,
    conn: &mut PgConnection,
    kind: EditKind,
    summary: &str,
    (before, after): (&[Snapshot], &[Snapshot]),
    batch: Option<Uuid>,
    detail: Option<serde_json::Value>,
) -> Result<Edit, RegisterError> {
    snapshot::replace(owner, &mut *conn, before, after).await?;
    let summary: String = summary.chars().take(500).collect();
    Ok(sqlx::query_as::<_, Edit>(sqlx::AssertSqlSafe(format!(
        "INSERT INTO ledger_edits (owner_id, kind, summary, before, after, import_batch_id, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {EDIT_COLUMNS}"
    )))
    .bind(owner.as_uuid())
    .bind(kind)
    .bind(summary)
    .bind(sqlx::types::Json(before))
    .bind(sqlx::types::Json(after))
    .bind(batch)
    .bind(detail)
    .fetch_one(&mut *conn)
    .await?)
}
