//! Corrections a bank sends of rows it gave before (OFX `CORRECTFITID`, rule O8): the row it
//! names by its id is found in the statement's account, and the commit deletes it — a `REPLACE`
//! books its own row in its place, a `DELETE` books none. A correction of a row the ledger does
//! not have (already applied, or never imported) changes nothing, and the preview says so.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use uuid::Uuid;

use super::PlannedAccount;
use crate::{
    error::LedgerError,
    import::{CorrectionAction, Parsed},
    money::{Currency, Money},
    owner::OwnerId,
};

/// A correction as planned: the transaction it takes out, when the ledger has it, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedCorrection {
    pub line: usize,
    /// The bank's id of the row corrected.
    pub bank_ref: String,
    pub action: CorrectionAction,
    /// The transaction the commit deletes; none when the ledger has no row of that id.
    pub transaction: Option<Uuid>,
    /// Its amount on the statement's account (zero without one).
    pub amount_minor: i64,
    pub in_words: String,
}

/// The statement's corrections, each with the row it names in `accounts`.
pub(super) async fn planned(
    owner: OwnerId,
    conn: &mut PgConnection,
    accounts: &[PlannedAccount],
    parsed: &Parsed,
) -> Result<Vec<PlannedCorrection>, LedgerError> {
    if parsed.corrections.is_empty() {
        return Ok(Vec::new());
    }
    let refs: Vec<&str> = parsed.corrections.iter().map(|c| c.bank_ref.as_str()).collect();
    let names: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    let found: Vec<(String, Uuid, NaiveDate, String, i64, Currency)> = sqlx::query_as(
        "SELECT DISTINCT ON (t.bank_ref) t.bank_ref, t.id, t.date, t.raw_description, p.amount_minor, p.currency
         FROM transactions t
         JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id
         JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id AND a.name = ANY($3)
         WHERE t.owner_id = $1 AND t.bank_ref = ANY($2)
         ORDER BY t.bank_ref, t.created_at",
    )
    .bind(owner.as_uuid())
    .bind(&refs)
    .bind(&names)
    .fetch_all(conn)
    .await?;
    Ok(parsed
        .corrections
        .iter()
        .map(|c| {
            let hit = found.iter().find(|f| f.0 == c.bank_ref);
            let what = hit.map(|(_, _, date, text, minor, currency)| {
                format!("{date} “{text}” {}", Money::new(*minor, *currency).format())
            });
            let (verb, if_absent) = match c.action {
                CorrectionAction::Replace => ("replaces", "its row is added as any other"),
                CorrectionAction::Delete => ("deletes", "nothing to delete"),
            };
            let in_words = match what {
                Some(what) => format!("line {} {verb} the row the bank gave as {}: {what}", c.line, c.bank_ref),
                None => format!(
                    "line {} {verb} the bank's row {}, which is not in the ledger (already corrected, or never \
                     imported): {if_absent}",
                    c.line, c.bank_ref
                ),
            };
            PlannedCorrection {
                line: c.line,
                bank_ref: c.bank_ref.clone(),
                action: c.action,
                transaction: hit.map(|f| f.1),
                amount_minor: hit.map_or(0, |f| f.4),
                in_words,
            }
        })
        .collect())
}

/// Deletes the transactions the plan's corrections take out (those still there): how many.
pub(super) async fn apply(
    owner: OwnerId,
    conn: &mut PgConnection,
    corrections: &[PlannedCorrection],
) -> Result<usize, LedgerError> {
    let ids: Vec<Uuid> = corrections.iter().filter_map(|c| c.transaction).collect();
    if ids.is_empty() {
        return Ok(0);
    }
    let done = sqlx::query("DELETE FROM transactions WHERE owner_id = $1 AND id = ANY($2)")
        .bind(owner.as_uuid())
        .bind(&ids)
        .execute(conn)
        .await?;
    Ok(usize::try_from(done.rows_affected()).unwrap_or(usize::MAX))
}
