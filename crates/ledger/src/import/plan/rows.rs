//! Each row of a plan: its category, whether it is a transfer and its other side, whether it
//! is a duplicate; the opening balance and the balance check; the rows stored in chunks.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::NaiveDate;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{
    BalanceCheck, DuplicateRow, Elsewhere, LISTED, Opening, PlannedAccount, PlannedCorrection, PlannedRow,
    PlannedSplit, PlannedTransfer, RowSummary,
};
use crate::{
    accounts::{Account, AccountKind, UNCATEGORIZED},
    error::LedgerError,
    import::{Format, Parsed, bank_categories},
    owner::OwnerId,
    transactions::{NewPosting, NewTransaction},
    transfers::{self, Side},
};

/// A digest of a row's identity within its file (account, date, amount, description).
pub(super) fn row_key(account: &str, date: NaiveDate, amount_minor: i64, description_key: &str) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::hash::DefaultHasher::new();
    (account, date, amount_minor, description_key).hash(&mut hasher);
    hasher.finish()
}

/// The owner's categories and the starting chart's (which the commit creates when missing), by
/// lower-case name; and the owner's rules (pattern in lower case, category), in order.
pub(super) async fn categories_and_rules(
    owner: OwnerId,
    conn: &mut PgConnection,
    existing: &[Account],
) -> Result<(HashMap<String, String>, Vec<(String, String)>), LedgerError> {
    let categories: HashMap<String, String> = crate::accounts::DEFAULT_CHART
        .iter()
        .filter(|(_, t, _)| t.is_category())
        .map(|(name, _, _)| (name.to_lowercase(), (*name).to_owned()))
        .chain(
            existing
                .iter()
                .filter(|a| a.account_type.is_category())
                .map(|a| (a.name.to_lowercase(), a.name.clone())),
        )
        .collect();
    let rules: Vec<(String, String)> = sqlx::query_as(
        "SELECT lower(r.pattern), a.name FROM rules r JOIN accounts a ON a.id = r.account_id AND a.owner_id = r.owner_id
         WHERE r.owner_id = $1 ORDER BY r.priority, r.created_at, r.id",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    Ok((categories, rules))
}

/// Why `row`, going into `account`, looks like a transfer to another of the `holders`, if it does.
pub(super) fn looks_like_transfer(
    row: &crate::import::ParsedRow,
    (account, kind): (&str, AccountKind),
    holders: &[&Account],
    by_number: &HashMap<String, String>,
) -> Option<String> {
    let others: Vec<&Account> = holders
        .iter()
        .copied()
        .filter(|a| !a.name.eq_ignore_ascii_case(account))
        .collect();
    // The account on the other side by its number (camt, OFX BANKACCTTO, MT940 ?31): the number
    // of a statement that went into another of the owner's accounts.
    let number = row.counterparty_account().map(super::accounts::account_number);
    let named = number
        .as_ref()
        .and_then(|n| by_number.get(n).map(|name| (n, name)));
    if let Some((number, other)) = named.filter(|(_, name)| others.iter().any(|a| a.name == **name)) {
        return Some(format!(
            "it names your account {other} by its number …{}",
            crate::import::last_four(number)
        ));
    }
    transfers::looks_like_transfer(&row.description, kind, row.amount_minor, &others)
}

/// The category of a row that is no transfer: the statement's own category when it names one of
/// the owner's, else the first rule whose pattern is in its text (or is the bank's word), else the
/// bank's word through the table of common ones, else Uncategorized; and the bank's word, kept as
/// a hint when it named none of the owner's categories.
pub(super) fn category_of(
    row: &crate::import::ParsedRow,
    categories: &HashMap<String, String>,
    rules: &[(String, String)],
) -> (String, Option<String>) {
    let lower = row.description.to_lowercase();
    let bank_word = row.category.as_deref().map(str::trim).filter(|c| !c.is_empty());
    let bank_lower = bank_word.map(str::to_lowercase);
    let category = bank_lower
        .as_deref()
        .and_then(|c| categories.get(c).cloned())
        .or_else(|| {
            rules
                .iter()
                .find(|(pattern, _)| {
                    lower.contains(pattern.as_str()) || bank_lower.as_deref() == Some(pattern)
                })
                .map(|(_, c)| c.clone())
        })
        .or_else(|| {
            bank_word
                .and_then(bank_categories::default_category)
                .and_then(|c| categories.get(&c.to_lowercase()).cloned())
        })
        .unwrap_or_else(|| UNCATEGORIZED.to_owned());
    let bank_category = bank_word
        .filter(|w| !categories.contains_key(&w.to_lowercase()))
        .map(str::to_owned);
    (category, bank_category)
}

/// A row's category (transit for a transfer), the bank's word kept as a hint, and the parts of a
/// split row each with its category — a split row's `category` names them all ("Groceries +
/// Household").
pub(super) fn categorised(
    row: &crate::import::ParsedRow,
    transfer: bool,
    categories: &HashMap<String, String>,
    rules: &[(String, String)],
) -> (String, Option<String>, Vec<PlannedSplit>) {
    if transfer {
        return (crate::accounts::TRANSIT.to_owned(), None, Vec::new());
    }
    if row.splits().is_empty() {
        let (category, bank_category) = category_of(row, categories, rules);
        return (category, bank_category, Vec::new());
    }
    let splits: Vec<PlannedSplit> = row
        .splits()
        .iter()
        .map(|part| PlannedSplit {
            category: split_category(&part.category, categories, rules),
            amount_minor: part.amount_minor,
        })
        .collect();
    let mut names: Vec<&str> = splits.iter().map(|s| s.category.as_str()).collect();
    names.dedup();
    (names.join(" + "), None, splits)
}

/// The category of one part of a split row, by the word its file gives it: one of the owner's
/// (the whole word, else the part before a `:` subcategory), else a rule whose pattern is that
/// word, else the word through the table of common ones, else Uncategorized.
fn split_category(word: &str, categories: &HashMap<String, String>, rules: &[(String, String)]) -> String {
    let lower = word.trim().to_lowercase();
    let parent = lower.split(':').next().unwrap_or_default().trim().to_owned();
    categories
        .get(&lower)
        .or_else(|| categories.get(&parent))
        .cloned()
        .or_else(|| {
            rules
                .iter()
                .find(|(pattern, _)| *pattern == lower || *pattern == parent)
                .map(|(_, c)| c.clone())
        })
        .or_else(|| {
            bank_categories::default_category(word.trim())
                .and_then(|c| categories.get(&c.to_lowercase()).cloned())
        })
        .unwrap_or_else(|| UNCATEGORIZED.to_owned())
}

/// The rows that look like transfers (with why), paired with each other and with the legs
/// waiting in transit.
pub(super) async fn paired(
    owner: OwnerId,
    conn: &mut PgConnection,
    sides: Vec<(String, Side)>,
    window_days: u32,
) -> Result<Vec<PlannedTransfer>, LedgerError> {
    let legs = transfers::transit_legs(owner, conn).await?;
    let (whys, sides): (Vec<String>, Vec<Side>) = sides.into_iter().unzip();
    let decisions = transfers::pair(&sides, &legs, window_days);
    Ok(sides
        .into_iter()
        .zip(whys)
        .zip(decisions)
        .map(|((row, why), decision)| PlannedTransfer { row, why, decision })
        .collect())
}

/// The rows of a statement found in another of the owner's accounts.
pub(super) struct Found {
    pub(super) account: String,
    pub(super) keys: BTreeSet<(NaiveDate, i64, String)>,
}

impl Found {
    pub(super) fn summary(self) -> Elsewhere {
        Elsewhere {
            account: self.account,
            rows: self.keys.len(),
        }
    }
}

/// How many rows [`elsewhere`] looks up at once.
const ELSEWHERE_CHUNK: usize = 5_000;

/// Whether the statement was imported into another of the owner's accounts already: when at
/// least half of its rows (by date, amount and text) are in one other account, those rows are
/// taken as already there. Fewer are coincidences (a fee of the same bank on the same day) and
/// are booked.
pub(super) async fn elsewhere(
    owner: OwnerId,
    conn: &mut PgConnection,
    accounts: &[PlannedAccount],
    parsed: &Parsed,
) -> Result<Option<Found>, LedgerError> {
    if parsed.rows.is_empty() {
        return Ok(None);
    }
    let ours: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    let mut by_account: BTreeMap<String, BTreeSet<(NaiveDate, i64, String)>> = BTreeMap::new();
    // A chunk at a time: the rows' keys of a large statement, bound whole, would take its memory
    // twice over.
    for rows in parsed.rows.chunks(ELSEWHERE_CHUNK) {
        let dates: Vec<NaiveDate> = rows.iter().map(|r| r.date).collect();
        let amounts: Vec<i64> = rows.iter().map(|r| r.amount_minor).collect();
        let texts: Vec<String> = rows.iter().map(|r| r.description.to_uppercase()).collect();
        let found: Vec<(String, NaiveDate, i64, String)> = sqlx::query_as(
            "SELECT DISTINCT a.name, r.date, r.amount, r.text
             FROM UNNEST($2::date[], $3::bigint[], $4::text[]) AS r(date, amount, text)
             JOIN transactions t ON t.owner_id = $1 AND t.date = r.date
                  AND (upper(t.raw_description) = r.text OR upper(t.paired_description) = r.text)
             JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id AND p.amount_minor = r.amount
             JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
                  AND a.type IN ('asset', 'liability') AND a.kind IS DISTINCT FROM 'transit'
             WHERE NOT (a.name = ANY($5))",
        )
        .bind(owner.as_uuid())
        .bind(&dates)
        .bind(&amounts)
        .bind(&texts)
        .bind(&ours)
        .fetch_all(&mut *conn)
        .await?;
        for (account, date, amount, text) in found {
            by_account
                .entry(account)
                .or_default()
                .insert((date, amount, text));
        }
    }
    Ok(by_account
        .into_iter()
        .max_by_key(|(_, keys)| keys.len())
        .filter(|(_, keys)| keys.len().saturating_mul(2) >= parsed.rows.len())
        .map(|(account, keys)| Found { account, keys }))
}

/// The opening balance to book (an account's first statement that states balances) and the
/// check of the account's balance against the bank's closing balance after the commit (the rows
/// added, less the `removed` sum of the rows corrections take out).
pub(super) async fn opening_and_balance(
    owner: OwnerId,
    conn: &mut PgConnection,
    accounts: &[PlannedAccount],
    format: &Format,
    empty: &BTreeSet<Uuid>,
    existing: &[Account],
    (statement_sum, first_date, summary, removed): (i128, Option<NaiveDate>, &RowSummary, i64),
) -> Result<(Option<Opening>, Option<BalanceCheck>), LedgerError> {
    let (Some(closing), [account], Some(first)) = (format.closing(), accounts, first_date) else {
        return Ok((None, None));
    };
    let to_add: i64 = summary.flows.values().map(|(i, o)| i.saturating_add(*o)).sum();
    let found = existing.iter().find(|a| a.name == account.name);
    let is_empty = found.is_none_or(|a| empty.contains(&a.id));
    if is_empty {
        let Some(Ok(opening)) = i128::from(closing.held_minor)
            .checked_sub(statement_sum)
            .map(i64::try_from)
        else {
            return Ok((None, None));
        };
        let balance = BalanceCheck {
            account: account.name.clone(),
            date: closing.date,
            currency: account.currency,
            bank_minor: closing.held_minor,
            ledger_minor: opening.saturating_add(to_add),
            checked: true,
        };
        let opening = (opening != 0).then(|| Opening {
            account: account.name.clone(),
            date: first.pred_opt().unwrap_or(first),
            amount_minor: opening,
            currency: account.currency,
        });
        return Ok((opening, Some(balance)));
    }
    let Some(found) = found else {
        return Ok((None, None));
    };
    let (held, last): (i64, Option<NaiveDate>) = sqlx::query_as(
        "SELECT coalesce(sum(p.amount_minor), 0)::bigint, max(t.date)
         FROM postings p JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id
         WHERE p.owner_id = $1 AND p.account_id = $2",
    )
    .bind(owner.as_uuid())
    .bind(found.id)
    .fetch_one(conn)
    .await?;
    Ok((
        None,
        Some(BalanceCheck {
            account: account.name.clone(),
            date: closing.date,
            currency: account.currency,
            bank_minor: closing.held_minor,
            ledger_minor: held.saturating_add(to_add).saturating_sub(removed),
            checked: last.is_none_or(|l| l <= closing.date),
        }),
    ))
}

/// The rows of a plan being made, stored a chunk at a time: duplicates split off, the rest
/// summed up for the preview and written under the batch.
pub(super) struct Chunks {
    pub(super) owner: OwnerId,
    pub(super) batch: Uuid,
    pub(super) stored: usize,
    pub(super) summary: RowSummary,
    pub(super) duplicates: Vec<DuplicateRow>,
    pub(super) duplicate_count: usize,
    /// The rows to add that look like transfers, with why.
    pub(super) sides: Vec<(String, Side)>,
    /// The bank's ids of every row of the statement.
    pub(super) file_refs: HashSet<String>,
    /// The transactions already taken as a row whose id the bank changed.
    pub(super) taken: HashSet<Uuid>,
    /// The transactions the bank's corrections take out: a row is never a duplicate of one (a
    /// replacement may keep the id, date and amount of the row it replaces).
    pub(super) going: HashSet<Uuid>,
}

impl Chunks {
    /// Nothing stored yet of the rows of `parsed`, to be planned under `batch` with `corrections`.
    pub(super) fn new(
        owner: OwnerId,
        batch: Uuid,
        parsed: &Parsed,
        corrections: &[PlannedCorrection],
    ) -> Self {
        Self {
            owner,
            batch,
            stored: 0,
            summary: RowSummary::default(),
            duplicates: Vec::new(),
            duplicate_count: 0,
            sides: Vec::new(),
            // A row a correction names is not a row whose id the bank changed.
            file_refs: (parsed.rows.iter().filter_map(|r| r.bank_ref.clone()))
                .chain(parsed.corrections.iter().map(|c| c.bank_ref.clone()))
                .collect(),
            taken: HashSet::new(),
            going: corrections.iter().filter_map(|c| c.transaction).collect(),
        }
    }

    /// Counts a row that is already in the ledger in another account.
    pub(super) fn elsewhere(&mut self, row: &crate::import::ParsedRow, account: &str) {
        self.duplicate_count = self.duplicate_count.saturating_add(1);
        if self.duplicates.len() < LISTED {
            self.duplicates.push(DuplicateRow {
                line: row.line,
                date: row.date,
                description: row.description.clone(),
                amount_minor: row.amount_minor,
                reason: format!("already in the ledger in {account}"),
            });
        }
    }

    pub(super) async fn store(
        &mut self,
        conn: &mut PgConnection,
        rows: Vec<PlannedRow>,
    ) -> Result<(), LedgerError> {
        if rows.is_empty() {
            return Ok(());
        }
        let (rows, duplicates, count) = split_duplicates(self.owner, conn, rows, &self.going).await?;
        self.duplicate_count = self.duplicate_count.saturating_add(count);
        let room = LISTED.saturating_sub(self.duplicates.len());
        self.duplicates.extend(duplicates.into_iter().take(room));
        let (rows, renamed) = self.split_changed_ids(conn, rows).await?;
        self.duplicate_count = self.duplicate_count.saturating_add(renamed.len());
        let room = LISTED.saturating_sub(self.duplicates.len());
        self.duplicates.extend(renamed.into_iter().take(room));
        if rows.is_empty() {
            return Ok(());
        }
        for row in &rows {
            self.summary.add(row);
            if let Some(why) = &row.transfer {
                self.sides.push((
                    why.clone(),
                    Side {
                        transaction: None,
                        line: Some(row.line),
                        account: row.account.clone(),
                        date: row.date,
                        amount_minor: row.amount_minor,
                        currency: row.currency,
                        description: row.description.clone(),
                    },
                ));
            }
        }
        sqlx::query("INSERT INTO import_plan_rows (owner_id, batch_id, chunk, rows) VALUES ($1, $2, $3, $4)")
            .bind(self.owner.as_uuid())
            .bind(self.batch)
            .bind(i32::try_from(self.stored).unwrap_or(i32::MAX))
            .bind(sqlx::types::Json(&rows))
            .execute(conn)
            .await?;
        self.stored = self.stored.saturating_add(1);
        Ok(())
    }

    /// Splits off the rows whose id the bank changed between downloads: a row under an id new to
    /// the ledger whose account, date, amount and text are a transaction's that came with another
    /// id — one this statement does not have (an id it has is that row's own, so a second real
    /// purchase of the same coffee on the same day still lands). Each transaction answers for one
    /// row. Rows imported before ids were kept (and rows without one) are not matched this way.
    async fn split_changed_ids(
        &mut self,
        conn: &mut PgConnection,
        rows: Vec<PlannedRow>,
    ) -> Result<(Vec<PlannedRow>, Vec<DuplicateRow>), LedgerError> {
        type Key = (String, NaiveDate, i64, String);
        let key = |r: &PlannedRow| -> Key {
            (
                r.account.clone(),
                r.date,
                r.amount_minor,
                r.description.to_uppercase(),
            )
        };
        let mut columns: (Vec<String>, Vec<NaiveDate>, Vec<i64>, Vec<String>) = Default::default();
        for (account, date, amount, text) in rows.iter().filter(|r| r.bank_ref.is_some()).map(key) {
            columns.0.push(account);
            columns.1.push(date);
            columns.2.push(amount);
            columns.3.push(text);
        }
        if columns.0.is_empty() {
            return Ok((rows, Vec::new()));
        }
        let found: Vec<(Uuid, String, NaiveDate, i64, String, String, NaiveDate)> = sqlx::query_as(
            "SELECT DISTINCT t.id, a.name, t.date, p.amount_minor, upper(t.raw_description), t.bank_ref,
                    t.created_at::date
             FROM UNNEST($2::text[], $3::date[], $4::bigint[], $5::text[]) AS r(account, date, amount, text)
             JOIN accounts a ON a.owner_id = $1 AND a.name = r.account
             JOIN postings p ON p.owner_id = a.owner_id AND p.account_id = a.id AND p.amount_minor = r.amount
             JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id AND t.date = r.date
                  AND upper(t.raw_description) = r.text
             WHERE t.bank_ref IS NOT NULL
             ORDER BY t.date, t.id",
        )
        .bind(self.owner.as_uuid())
        .bind(&columns.0)
        .bind(&columns.1)
        .bind(&columns.2)
        .bind(&columns.3)
        .fetch_all(&mut *conn)
        .await?;
        let mut candidates: HashMap<Key, Vec<(Uuid, String, NaiveDate)>> = HashMap::new();
        for (id, account, date, amount, text, old_ref, imported) in found {
            if !self.file_refs.contains(&old_ref) && !self.taken.contains(&id) {
                candidates
                    .entry((account, date, amount, text))
                    .or_default()
                    .push((id, old_ref, imported));
            }
        }
        let mut renamed = Vec::new();
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            let Some(new_ref) = &row.bank_ref else {
                kept.push(row);
                continue;
            };
            let Some((id, old_ref, imported)) = candidates.get_mut(&key(&row)).and_then(Vec::pop) else {
                kept.push(row);
                continue;
            };
            self.taken.insert(id);
            renamed.push(DuplicateRow {
                reason: format!(
                    "already in the ledger (imported {imported}) under the bank's id {old_ref}: the bank gave it \
                     another id ({new_ref}) since"
                ),
                line: row.line,
                date: row.date,
                description: row.description,
                amount_minor: row.amount_minor,
            });
        }
        Ok((kept, renamed))
    }
}

/// The stored rows of plan `plan_id`, chunk `chunk`; empty past the last one.
pub(super) async fn plan_rows(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
    chunk: usize,
) -> Result<Vec<PlannedRow>, LedgerError> {
    let text: Option<String> = sqlx::query_scalar(
        "SELECT rows::text FROM import_plan_rows WHERE owner_id = $1 AND batch_id = $2 AND chunk = $3",
    )
    .bind(owner.as_uuid())
    .bind(plan_id)
    .bind(i32::try_from(chunk).unwrap_or(i32::MAX))
    .fetch_optional(conn)
    .await?;
    text.map_or_else(
        || Ok(Vec::new()),
        |text| {
            serde_json::from_str(&text).map_err(|source| LedgerError::UnreadablePlan {
                plan: plan_id,
                source,
            })
        },
    )
}

/// The rows already in the ledger (by their source hash), apart from the rows to add: the rows
/// to add, the first duplicates, and how many duplicates there are.
pub(super) async fn split_duplicates(
    owner: OwnerId,
    conn: &mut PgConnection,
    mut rows: Vec<PlannedRow>,
    going: &HashSet<Uuid>,
) -> Result<(Vec<PlannedRow>, Vec<DuplicateRow>, usize), LedgerError> {
    let hashes: Vec<&str> = rows.iter().map(|r| r.source_hash.as_str()).collect();
    // Each hash looked up in the unique index. As `source_hash = ANY($2)` the planner may instead
    // read the owner's transactions and test each against the whole array: with fresh rows it
    // has no statistics for yet, that took a re-import of 100,000 rows four minutes.
    let known: Vec<(String, NaiveDate, Uuid)> = sqlx::query_as(
        "SELECT t.source_hash, t.created_at::date, t.id
         FROM unnest($2::text[]) AS h(hash)
         JOIN transactions t ON t.owner_id = $1 AND t.source_hash = h.hash
         UNION ALL
         SELECT t.paired_source_hash, t.created_at::date, t.id
         FROM unnest($2::text[]) AS h(hash)
         JOIN transactions t ON t.owner_id = $1 AND t.paired_source_hash = h.hash",
    )
    .bind(owner.as_uuid())
    .bind(&hashes)
    .fetch_all(&mut *conn)
    .await?;
    let known: HashMap<String, NaiveDate> = known
        .into_iter()
        .filter(|(_, _, id)| !going.contains(id))
        .map(|(hash, day, _)| (hash, day))
        .collect();
    // Split off in place; the first few are kept by name, all are counted.
    let (mut listed, mut count) = (Vec::new(), 0usize);
    for r in rows.extract_if(.., |r| known.contains_key(&r.source_hash)) {
        count = count.saturating_add(1);
        if listed.len() < LISTED {
            listed.push(DuplicateRow {
                reason: format!(
                    "already in the ledger (imported {})",
                    known
                        .get(&r.source_hash)
                        .map_or_else(String::new, ToString::to_string)
                ),
                line: r.line,
                date: r.date,
                description: r.description,
                amount_minor: r.amount_minor,
            });
        }
    }
    Ok((rows, listed, count))
}

/// A planned row as the transaction it books: the statement's account and the category (or the
/// transit account), each one posting, summing to zero.
pub(super) fn transaction_of(
    row: &PlannedRow,
    asset: &Account,
    categories: &[(&Account, i64)],
    plan_id: Uuid,
) -> NewTransaction {
    let mut postings = vec![NewPosting {
        account_id: asset.id,
        amount_minor: row.amount_minor,
        currency: row.currency,
    }];
    // A planned amount's magnitude is at most `i64::MAX` (it was parsed), so nothing saturates;
    // were it ever to, or a split's parts not add up, the postings would not balance and the
    // insert refuses the transaction.
    postings.extend(categories.iter().map(|(category, amount)| NewPosting {
        account_id: category.id,
        amount_minor: amount.saturating_neg(),
        currency: row.currency,
    }));
    NewTransaction {
        id: None,
        date: row.date,
        description: row.description.clone(),
        raw_description: row.description.clone(),
        import_batch_id: Some(plan_id),
        source_hash: Some(row.source_hash.clone()),
        postings,
    }
}
