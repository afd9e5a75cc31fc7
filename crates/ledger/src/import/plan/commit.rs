//! The commit: exactly the stored plan applied, once.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{
    BalanceCheck, Opening, PLAN_VERSION, Plan, PlannedRow, ROWS_PER_CHUNK,
    accounts::account_for,
    rows::{plan_rows, transaction_of},
};
use crate::{
    accounts::{
        Account, AccountKind, OPENING_BALANCES, TRANSIT, UNCATEGORIZED, create_account, ensure_chart,
        list_accounts,
    },
    error::LedgerError,
    money::Currency,
    owner::OwnerId,
    transactions::{InsertOutcome, NewPosting, NewTransaction, insert_transactions},
    transfers::{self, Decision},
};

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommitReport {
    pub import_batch_id: Uuid,
    pub imported: usize,
    pub uncategorized: usize,
    /// Rows of the plan that another import added in the meantime.
    pub skipped_duplicates: usize,
    pub date_range: Option<(NaiveDate, NaiveDate)>,
    pub parse_errors: usize,
    /// Rows made one transfer with their other side.
    pub transfers_paired: usize,
    /// Rows left waiting in transit for their other side (or for an answer).
    pub in_transit: usize,
    /// The opening balance booked, if any.
    pub opening: Option<Opening>,
    /// The account's balance after the commit against the bank's closing balance.
    pub balance: Option<BalanceCheck>,
    /// Rows of earlier statements the bank's corrections took out.
    pub corrected: usize,
}

impl CommitReport {
    /// Nothing done yet for `plan`.
    fn new(plan_id: Uuid, plan: &Plan) -> Self {
        Self {
            import_batch_id: plan_id,
            imported: 0,
            uncategorized: 0,
            skipped_duplicates: 0,
            date_range: None,
            parse_errors: plan.lines.unreadable.max(plan.errors.len()),
            transfers_paired: 0,
            in_transit: 0,
            opening: None,
            balance: plan.balance.clone(),
            corrected: 0,
        }
    }
}

/// The equity account `base` for `currency`: `base` itself when it holds that currency (or does
/// not exist yet), else one named for the currency (`Opening Balances (EUR)`), created when missing.
pub(crate) async fn equity_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    base: &str,
    currency: Currency,
) -> Result<Account, LedgerError> {
    let existing = list_accounts(owner, &mut *conn).await?;
    let name = account_for(base, currency, &existing, true);
    sqlx::query(
        "INSERT INTO accounts (owner_id, name, type, currency) VALUES ($1, $2, 'equity', $3)
         ON CONFLICT (owner_id, name) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(&name)
    .bind(currency.as_str())
    .execute(&mut *conn)
    .await?;
    crate::accounts::find_account(owner, conn, &name)
        .await?
        .ok_or(LedgerError::UnknownAccountName(name))
}

/// The clearing account of transfers in `currency` (created when missing).
pub async fn transit_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    currency: Currency,
) -> Result<Account, LedgerError> {
    let existing = list_accounts(owner, &mut *conn).await?;
    if let Some(found) = existing
        .iter()
        .find(|a| a.kind == Some(AccountKind::Transit) && a.currency == Some(currency))
    {
        return Ok(found.clone());
    }
    let name = account_for(TRANSIT, currency, &existing, true);
    create_account(owner, conn, &name, AccountKind::Transit, currency).await
}

/// The plan's accounts created (or given the statement's currency while they hold nothing), the
/// chart ensured in the home currency, and the transit accounts the plan needs: the whole chart,
/// and the transit account per currency.
pub(super) async fn prepare_accounts(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan: &Plan,
) -> Result<(Vec<Account>, HashMap<Currency, Account>), LedgerError> {
    // The planned accounts first: a new owner's first statement in EUR makes Checking a EUR
    // account; an account with nothing in it takes the statement's currency.
    let existing = list_accounts(owner, &mut *conn).await?;
    for planned in &plan.accounts {
        if !existing.iter().any(|a| a.name == planned.name) {
            create_account(owner, &mut *conn, &planned.name, planned.kind, planned.currency).await?;
        } else if planned.takes_currency {
            sqlx::query(
                "UPDATE accounts a SET currency = $3 WHERE a.owner_id = $1 AND a.name = $2
                   AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id)",
            )
            .bind(owner.as_uuid())
            .bind(&planned.name)
            .bind(planned.currency.as_str())
            .execute(&mut *conn)
            .await?;
        }
    }
    let home = plan.accounts.first().map(|a| a.currency);
    let mut chart = ensure_chart(owner, &mut *conn, home).await?;
    let mut transit: HashMap<Currency, Account> = HashMap::new();
    let currencies: BTreeSet<Currency> = plan.accounts.iter().map(|a| a.currency).collect();
    if plan.summary.transfers > 0 {
        for currency in currencies {
            transit.insert(currency, transit_account(owner, &mut *conn, currency).await?);
        }
        chart = list_accounts(owner, &mut *conn).await?;
    }
    Ok((chart, transit))
}

/// Books the opening balance of `account`; whether it was booked (not when it already was).
pub(super) async fn book_opening(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    opening: &Opening,
    account: &Account,
) -> Result<bool, LedgerError> {
    let equity = equity_account(owner, &mut *conn, OPENING_BALANCES, opening.currency).await?;
    let booked = crate::transactions::insert_transaction(
        owner,
        &mut *conn,
        &NewTransaction {
            id: None,
            date: opening.date,
            description: format!("Opening balance of {}", opening.account),
            raw_description: format!("Opening balance of {}", opening.account),
            import_batch_id: Some(plan_id),
            source_hash: Some(format!("opening:{}:{}", account.id, opening.date)),
            postings: vec![
                NewPosting {
                    account_id: account.id,
                    amount_minor: opening.amount_minor,
                    currency: opening.currency,
                },
                NewPosting {
                    account_id: equity.id,
                    amount_minor: opening.amount_minor.saturating_neg(),
                    currency: opening.currency,
                },
            ],
        },
    )
    .await?;
    Ok(matches!(booked, InsertOutcome::Inserted(_)))
}

/// The statement's own words kept on the transactions they came with: its category word, as a
/// hint, and the bank's id of the row.
pub(super) async fn keep_bank_words(
    owner: OwnerId,
    conn: &mut PgConnection,
    hints: Vec<(Uuid, Option<&str>, Option<&str>)>,
) -> Result<(), LedgerError> {
    if hints.is_empty() {
        return Ok(());
    }
    let mut columns: (Vec<Uuid>, Vec<Option<&str>>, Vec<Option<&str>>) = Default::default();
    for (id, word, bank_ref) in hints {
        columns.0.push(id);
        columns.1.push(word);
        columns.2.push(bank_ref);
    }
    sqlx::query(
        "UPDATE transactions t SET bank_category = coalesce(h.word, t.bank_category),
                                   bank_ref = coalesce(h.bank_ref, t.bank_ref)
         FROM UNNEST($2::uuid[], $3::text[], $4::text[]) AS h(id, word, bank_ref)
         WHERE t.owner_id = $1 AND t.id = h.id",
    )
    .bind(owner.as_uuid())
    .bind(&columns.0)
    .bind(&columns.1)
    .bind(&columns.2)
    .execute(conn)
    .await?;
    Ok(())
}

/// Applies the stored plan `plan_id` of `owner`, exactly as planned: no file is read again.
/// Committing a plan twice is refused. Call it inside a transaction (`with_owner`): the import
/// is then all or nothing. `progress` hears (rows done, rows in all) as chunks go in.
pub async fn commit(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<CommitReport, LedgerError> {
    commit_with(owner, conn, plan_id, &BTreeMap::new(), progress).await
}

/// Like [`commit`], with the person's answers to the plan's questions: for a row (by its line)
/// that could be one transfer with several others, the index of the candidate it is. A row with
/// no answer waits in transit.
pub async fn commit_with(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    choices: &BTreeMap<usize, usize>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<CommitReport, LedgerError> {
    let mut plan = load_plan(owner, &mut *conn, plan_id).await?;
    // The answers given with the plan, and over them those given now.
    let mut answers = std::mem::take(&mut plan.answers);
    answers.extend(choices.iter().map(|(line, pick)| (*line, *pick)));
    let choices = &answers;

    let (chart, transit) = prepare_accounts(owner, &mut *conn, &plan).await?;
    let by_name: HashMap<&str, &Account> = chart.iter().map(|a| (a.name.as_str(), a)).collect();
    let find = |name: &str| {
        by_name
            .get(name)
            .copied()
            .ok_or_else(|| LedgerError::UnknownAccountName(name.to_owned()))
    };

    let total = plan.lines.rows.max(plan.rows.len());
    let mut report = CommitReport::new(plan_id, &plan);
    // The rows the bank corrected go first: a replacing row may be keyed like the one it replaces.
    report.corrected = super::corrections::apply(owner, &mut *conn, &plan.corrections).await?;
    // The transactions of the rows that look like transfers, by line; and the bank's words.
    let mut transfer_rows: HashMap<usize, Uuid> = HashMap::new();
    let mut done = 0;
    // A version 1 plan holds its rows; a newer one's are read a stored chunk at a time.
    let inline = std::mem::take(&mut plan.rows);
    let mut stored_chunk = 0;
    loop {
        let rows = if inline.is_empty() {
            let rows = plan_rows(owner, &mut *conn, plan_id, stored_chunk).await?;
            stored_chunk = stored_chunk.saturating_add(1);
            rows
        } else if done < inline.len() {
            inline.iter().skip(done).take(ROWS_PER_CHUNK).cloned().collect()
        } else {
            Vec::new()
        };
        if rows.is_empty() {
            break;
        }
        let news = rows
            .iter()
            .map(|row| {
                let others = other_sides(row, &transit, &find)?;
                Ok(transaction_of(row, find(&row.account)?, &others, plan_id))
            })
            .collect::<Result<Vec<_>, LedgerError>>()?;
        let mut hints: Vec<(Uuid, Option<&str>, Option<&str>)> = Vec::new();
        for (row, outcome) in rows
            .iter()
            .zip(insert_transactions(owner, &mut *conn, &news).await?)
        {
            match outcome {
                InsertOutcome::Inserted(id) => {
                    report.imported = report.imported.saturating_add(1);
                    report.uncategorized = report.uncategorized.saturating_add(usize::from(
                        row.category == UNCATEGORIZED && row.transfer.is_none(),
                    ));
                    report.date_range = Some(match report.date_range {
                        None => (row.date, row.date),
                        Some((from, to)) => (from.min(row.date), to.max(row.date)),
                    });
                    if row.transfer.is_some() {
                        transfer_rows.insert(row.line, id);
                    }
                    if row.bank_category.is_some() || row.bank_ref.is_some() {
                        hints.push((id, row.bank_category.as_deref(), row.bank_ref.as_deref()));
                    }
                }
                InsertOutcome::Duplicate => {
                    report.skipped_duplicates = report.skipped_duplicates.saturating_add(1);
                }
            }
        }
        keep_bank_words(owner, &mut *conn, hints).await?;
        done = done.saturating_add(rows.len());
        progress(done, total);
    }
    pair_transfers(owner, &mut *conn, &plan, choices, &transfer_rows, &mut report).await?;
    if let Some(opening) = &plan.opening {
        let account = find(&opening.account)?;
        if book_opening(owner, &mut *conn, plan_id, opening, account).await? {
            report.opening = Some(opening.clone());
        }
    }
    // The rows are in the ledger: their stored copy has served.
    sqlx::query("DELETE FROM import_plan_rows WHERE owner_id = $1 AND batch_id = $2")
        .bind(owner.as_uuid())
        .bind(plan_id)
        .execute(&mut *conn)
        .await?;
    let asset_account = plan
        .accounts
        .first()
        .and_then(|p| by_name.get(p.name.as_str()))
        .map(|a| a.id);
    if !plan.base_account.is_empty() {
        crate::import::save_mapping(
            owner,
            &mut *conn,
            &plan.base_account,
            &plan.mapping,
            &plan.filename,
        )
        .await?;
    }
    sqlx::query(
        "UPDATE import_batches SET status = 'committed', imported_at = now(), row_count = $3, account_id = $4
         WHERE owner_id = $1 AND id = $2",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .bind(i32::try_from(report.imported).unwrap_or(i32::MAX))
    .bind(asset_account)
    .execute(&mut *conn)
    .await?;
    Ok(report)
}

/// Where a row's money goes on the other side, and how much: the transit account of a transfer,
/// else its category, else each part's category of a split row.
fn other_sides<'a>(
    row: &PlannedRow,
    transit: &'a HashMap<Currency, Account>,
    find: &dyn Fn(&str) -> Result<&'a Account, LedgerError>,
) -> Result<Vec<(&'a Account, i64)>, LedgerError> {
    if row.transfer.is_some() {
        let transit = transit
            .get(&row.currency)
            .ok_or_else(|| LedgerError::UnknownAccountName(TRANSIT.to_owned()))?;
        return Ok(vec![(transit, row.amount_minor)]);
    }
    if row.splits.is_empty() {
        return Ok(vec![(find(&row.category)?, row.amount_minor)]);
    }
    row.splits
        .iter()
        .map(|part| Ok((find(&part.category)?, part.amount_minor)))
        .collect()
}

/// Makes each planned pair one transfer: the row's transit leg merges into its other side's (a
/// leg already in the ledger, or another row of this statement). A row whose question was
/// answered pairs with the chosen candidate; the rest wait in transit.
pub(super) async fn pair_transfers(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan: &Plan,
    choices: &BTreeMap<usize, usize>,
    inserted: &HashMap<usize, Uuid>,
    report: &mut CommitReport,
) -> Result<(), LedgerError> {
    let mut merged: BTreeSet<Uuid> = BTreeSet::new();
    for planned in &plan.transfers {
        let Some(line) = planned.row.line else { continue };
        let Some(&mine) = inserted.get(&line) else {
            continue;
        };
        if merged.contains(&mine) {
            continue;
        }
        let with = match &planned.decision {
            Decision::Paired { with } => Some(with),
            Decision::Ask { candidates } => choices.get(&line).and_then(|i| candidates.get(*i)),
            Decision::Transit => None,
        };
        let other = with.and_then(|w| match (w.transaction, w.line) {
            (Some(leg), _) => Some(leg),
            (None, Some(other_line)) => inserted.get(&other_line).copied(),
            (None, None) => None,
        });
        match other {
            Some(other) if !merged.contains(&other) && other != mine => {
                // The side already in the ledger keeps its transaction; two rows of this
                // statement keep the first's.
                transfers::merge(owner, &mut *conn, other, mine).await?;
                merged.insert(other);
                merged.insert(mine);
                report.transfers_paired = report.transfers_paired.saturating_add(2);
            }
            _ => {}
        }
    }
    report.in_transit = inserted.values().filter(|id| !merged.contains(id)).count();
    // A leg from an earlier import counted once here: only this statement's rows are reported.
    report.transfers_paired = inserted.values().filter(|id| merged.contains(id)).count();
    Ok(())
}

/// Records the person's answers to plan `plan_id`'s questions (for a row, by its line, with
/// several equal candidates: the index of the one it is; a row left out waits in transit) and
/// returns the plan. Refused for a line that asks nothing or an index past its candidates.
pub async fn answer(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    answers: &BTreeMap<usize, usize>,
) -> Result<Plan, LedgerError> {
    let mut plan = load_plan(owner, &mut *conn, plan_id).await?;
    for (&line, &pick) in answers {
        let fits = plan.transfers.iter().any(|t| {
            t.row.line == Some(line)
                && matches!(&t.decision, Decision::Ask { candidates } if pick < candidates.len())
        });
        if !fits {
            return Err(LedgerError::NoSuchQuestion { plan: plan_id, line });
        }
    }
    plan.answers = answers.clone();
    sqlx::query("UPDATE import_batches SET plan = $3 WHERE owner_id = $1 AND id = $2")
        .bind(owner.as_uuid())
        .bind(plan_id)
        .bind(sqlx::types::Json(&plan))
        .execute(conn)
        .await?;
    Ok(plan)
}

/// The stored plan, locked for this transaction, if it is still to be committed.
pub(in crate::import) async fn load_plan(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
) -> Result<Plan, LedgerError> {
    // Read as text and straight into the plan: a tree of values would take several times its memory.
    let stored: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT status::text, plan::text FROM import_batches WHERE owner_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .fetch_optional(&mut *conn)
    .await?;
    let plan = match stored {
        None => {
            return Err(LedgerError::NoPlan(plan_id));
        }
        Some((status, _)) if status == "committed" => {
            return Err(LedgerError::PlanCommitted(plan_id));
        }
        Some((_, Some(text))) => {
            serde_json::from_str::<Plan>(&text).map_err(|source| LedgerError::UnreadablePlan {
                plan: plan_id,
                source,
            })?
        }
        Some((_, None)) => {
            return Err(LedgerError::EmptyPlan(plan_id));
        }
    };
    if plan.version > PLAN_VERSION {
        return Err(LedgerError::NewerPlan {
            plan: plan_id,
            version: plan.version,
        });
    }

    Ok(plan)
}
