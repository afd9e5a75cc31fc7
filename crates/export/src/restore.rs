//! The JSON export read back: [`restore`] puts a whole export into an empty ledger, every id as it
//! was, so each report afterwards is the report before, byte for byte.
//!
//! Everything is checked before anything is written — the format and version, that the export is
//! whole, that every transaction's postings sum to zero in each currency on accounts of the
//! export that hold that currency — and written in one database transaction: a restore is all of
//! it or none of it. An id already in this database (the export was made here and its ledger
//! still exists) is refused with a sentence, never renumbered in silence.

use std::{collections::HashMap, io::Read};

use kakeibo_ledger::{Currency, OwnerId};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::model::{Export, FORMAT, TransactionRow, VERSION};

/// What [`restore`] put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Restored {
    pub accounts: usize,
    pub transactions: usize,
    pub postings: usize,
    pub statements: usize,
    pub budgets: usize,
    pub rules: usize,
    pub memories: usize,
    pub conversations: usize,
    pub runs: usize,
    pub edits: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("this is not a kakeibo JSON export ({0})")]
    NotAnExport(String),
    #[error("this export is version {0}; this kakeibo restores version {VERSION}")]
    Version(u32),
    #[error(
        "this export covers only a period; a restore needs the whole ledger: \
         make it with `kakeibo export --format json` and no --period"
    )]
    Partial,
    #[error(
        "the ledger to restore into is not empty: it holds {0} transactions. A restore goes into an \
         empty ledger (a new owner, or one whose data was deleted)"
    )]
    NotEmpty(i64),
    #[error("transaction {id} ({date}) does not balance: its {currency} postings sum to {sum} minor units")]
    Unbalanced {
        id: Uuid,
        date: chrono::NaiveDate,
        currency: String,
        sum: i128,
    },
    #[error("transaction {id} has {count} posting(s); every transaction has two or more")]
    TooFewPostings { id: Uuid, count: usize },
    #[error("{what} names account {account}, which is not among the export's accounts")]
    UnknownAccount { what: String, account: Uuid },
    #[error("transaction {id} posts {posting} to {account:?}, which holds only {holds}")]
    WrongCurrency {
        id: Uuid,
        posting: String,
        account: String,
        holds: String,
    },
    #[error(
        "this export's ids are already in this database ({table} {id}): it was exported from here and \
         that ledger still exists. A restore keeps every id, so it would collide; restore into another \
         database, or delete the original ledger first. Nothing was written"
    )]
    Collides { table: String, id: String },
    #[error("{0}")]
    Money(#[from] kakeibo_ledger::MoneyError),
    #[error("writing the ledger: {0}")]
    Database(sqlx::Error),
    #[error("reading the export: {0}")]
    Read(#[from] std::io::Error),
}

impl From<sqlx::Error> for RestoreError {
    fn from(e: sqlx::Error) -> Self {
        // A primary key taken: an id of the export is already a row of this database. (Any other
        // unique constraint cannot be hit in a ledger emptied first; if it is, it says itself.)
        if let Some(db) = e.as_database_error()
            && db.code().as_deref() == Some("23505")
            && let Some(constraint) = db.constraint().filter(|c| c.ends_with("_pkey"))
        {
            let table = db.table().unwrap_or("a table").to_owned();
            return Self::Collides {
                table,
                id: format!("under {constraint}"),
            };
        }
        Self::Database(e)
    }
}

/// Reads a JSON export (any size the memory holds; the checks come in [`restore`]).
pub fn read(reader: impl Read) -> Result<Export, RestoreError> {
    let export: Export = serde_json::from_reader(std::io::BufReader::new(reader))
        .map_err(|e| RestoreError::NotAnExport(e.to_string()))?;
    if export.format != FORMAT {
        return Err(RestoreError::NotAnExport(format!(
            "its format is {:?}",
            export.format
        )));
    }
    if export.version != VERSION {
        return Err(RestoreError::Version(export.version));
    }
    if export.period.is_some() {
        return Err(RestoreError::Partial);
    }
    Ok(export)
}

/// Every transaction balanced per currency, on the export's accounts, each account holding the
/// currency posted to it.
fn check(export: &Export) -> Result<(), RestoreError> {
    let mut accounts: HashMap<Uuid, (&str, Option<&str>)> = HashMap::new();
    for account in &export.accounts {
        let holds_one = account.account_type.holds_one_currency();
        let holds = if holds_one {
            account.currency.as_deref()
        } else {
            None
        };
        accounts.insert(account.id, (account.name.as_str(), holds));
    }
    for t in &export.transactions {
        check_transaction(t, &accounts)?;
    }
    for (what, id) in export
        .budgets
        .iter()
        .map(|b| ("a budget", b.account_id))
        .chain(export.rules.iter().map(|r| ("a rule", r.account_id)))
    {
        if !accounts.contains_key(&id) {
            return Err(RestoreError::UnknownAccount {
                what: what.to_owned(),
                account: id,
            });
        }
    }
    Ok(())
}

fn check_transaction(
    t: &TransactionRow,
    accounts: &HashMap<Uuid, (&str, Option<&str>)>,
) -> Result<(), RestoreError> {
    if t.postings.len() < 2 {
        return Err(RestoreError::TooFewPostings {
            id: t.id,
            count: t.postings.len(),
        });
    }
    let mut sums: Vec<(&str, i128)> = Vec::new();
    for p in &t.postings {
        Currency::parse(&p.currency)?;
        let Some((name, holds)) = accounts.get(&p.account_id) else {
            return Err(RestoreError::UnknownAccount {
                what: format!("transaction {}", t.id),
                account: p.account_id,
            });
        };
        if let Some(holds) = holds
            && *holds != p.currency
        {
            return Err(RestoreError::WrongCurrency {
                id: t.id,
                posting: p.currency.clone(),
                account: (*name).to_owned(),
                holds: (*holds).to_owned(),
            });
        }
        match sums.iter_mut().find(|(c, _)| *c == p.currency) {
            Some((_, sum)) => *sum += i128::from(p.amount_minor),
            None => sums.push((&p.currency, i128::from(p.amount_minor))),
        }
    }
    if let Some((currency, sum)) = sums.into_iter().find(|(_, sum)| *sum != 0) {
        return Err(RestoreError::Unbalanced {
            id: t.id,
            date: t.date,
            currency: currency.to_owned(),
            sum,
        });
    }
    Ok(())
}

/// Puts `export` into `owner`'s ledger, which must hold no transactions (what an empty ledger may
/// still have — a new visitor's chart of accounts, rules and budgets on it, a statement previewed
/// but never imported — gives way to the export's). All of it or nothing.
pub async fn restore(owner: OwnerId, pool: &PgPool, export: &Export) -> Result<Restored, RestoreError> {
    check(export)?;
    let mut tx = kakeibo_ledger::begin_for_owner(owner, pool).await?;
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions WHERE owner_id = $1")
        .bind(owner.as_uuid())
        .fetch_one(&mut *tx)
        .await?;
    if held > 0 {
        return Err(RestoreError::NotEmpty(held));
    }
    for statement in [
        "DELETE FROM rules WHERE owner_id = $1",
        "DELETE FROM budgets WHERE owner_id = $1",
        "DELETE FROM import_batches WHERE owner_id = $1",
        "DELETE FROM accounts WHERE owner_id = $1",
    ] {
        sqlx::query(statement)
            .bind(owner.as_uuid())
            .execute(&mut *tx)
            .await?;
    }
    let restored = write::all(owner, &mut tx, export).await?;
    tx.commit().await?;
    Ok(restored)
}

mod write {
    //! The inserts, in the order the foreign keys need.

    use super::{Export, OwnerId, PgConnection, RestoreError, Restored, Uuid};
    use crate::data::label;

    pub async fn all(owner: OwnerId, conn: &mut PgConnection, e: &Export) -> Result<Restored, RestoreError> {
        let o = owner.as_uuid();
        if let Some(home) = &e.settings.home_currency {
            sqlx::query("UPDATE users SET home_currency = $2 WHERE id = $1")
                .bind(o)
                .bind(home)
                .execute(&mut *conn)
                .await?;
        }
        let a = &e.accounts;
        sqlx::query(
            "INSERT INTO accounts (id, owner_id, name, type, kind, currency, created_at)
             SELECT id, $1, name, type::account_type, kind::account_kind, currency, created_at
             FROM UNNEST($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
                  AS a(id, name, type, kind, currency, created_at)",
        )
        .bind(o)
        .bind(a.iter().map(|x| x.id).collect::<Vec<_>>())
        .bind(a.iter().map(|x| x.name.clone()).collect::<Vec<_>>())
        .bind(a.iter().map(|x| label(x.account_type)).collect::<Vec<_>>())
        .bind(a.iter().map(|x| x.kind.map(label)).collect::<Vec<_>>())
        .bind(a.iter().map(|x| x.currency.clone()).collect::<Vec<_>>())
        .bind(a.iter().map(|x| x.created_at).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await?;
        for b in &e.import_batches {
            sqlx::query(
                "INSERT INTO import_batches (id, owner_id, account_id, filename, source_sha256, status, plan,
                                             row_count, created_at, imported_at, options_key, undone_at)
                 VALUES ($1, $2, $3, $4, $5, 'committed', $6, $7, $8, $9, $10, $11)",
            )
            .bind(b.id)
            .bind(o)
            .bind(b.account_id)
            .bind(&b.filename)
            .bind(&b.source_sha256)
            .bind(&b.plan)
            .bind(b.row_count)
            .bind(b.created_at)
            .bind(b.imported_at)
            .bind(&b.options_key)
            .bind(b.undone_at)
            .execute(&mut *conn)
            .await?;
        }
        let postings = transactions(o, conn, e).await?;
        for b in &e.budgets {
            sqlx::query(
                "INSERT INTO budgets (id, owner_id, account_id, month, amount_minor, currency)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(b.id)
            .bind(o)
            .bind(b.account_id)
            .bind(&b.month)
            .bind(b.amount_minor)
            .bind(&b.currency)
            .execute(&mut *conn)
            .await?;
        }
        for r in &e.rules {
            sqlx::query(
                "INSERT INTO rules (id, owner_id, pattern, account_id, priority, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(r.id)
            .bind(o)
            .bind(&r.pattern)
            .bind(r.account_id)
            .bind(r.priority)
            .bind(r.created_at)
            .execute(&mut *conn)
            .await?;
        }
        let mut memories = 0;
        for m in &e.memories {
            memories += sqlx::query(
                "INSERT INTO memories (id, owner_id, content, category, source, created_at)
                 VALUES ($1, $2, $3, $4, $5::memory_source, $6)
                 ON CONFLICT (owner_id, content, category) DO NOTHING",
            )
            .bind(m.id)
            .bind(o)
            .bind(&m.content)
            .bind(&m.category)
            .bind(&m.source)
            .bind(m.created_at)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        }
        for m in &e.import_mappings {
            sqlx::query(
                "INSERT INTO import_mappings (owner_id, account, mapping, source, updated_at)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            )
            .bind(o)
            .bind(&m.account)
            .bind(&m.mapping)
            .bind(&m.source)
            .bind(m.updated_at)
            .execute(&mut *conn)
            .await?;
        }
        edits(o, conn, e).await?;
        conversations(o, conn, e).await?;
        runs(o, conn, e).await?;
        Ok(Restored {
            accounts: e.accounts.len(),
            transactions: e.transactions.len(),
            postings,
            statements: e.import_batches.len(),
            budgets: e.budgets.len(),
            rules: e.rules.len(),
            memories: usize::try_from(memories).unwrap_or(usize::MAX),
            conversations: e.conversations.len(),
            runs: e.runs.len(),
            edits: e.ledger_edits.len(),
        })
    }

    /// The transactions and their postings, a thousand transactions a statement.
    async fn transactions(o: Uuid, conn: &mut PgConnection, e: &Export) -> Result<usize, RestoreError> {
        let mut postings = 0;
        for chunk in e.transactions.chunks(1_000) {
            sqlx::query(
                "INSERT INTO transactions (id, owner_id, date, description, raw_description, import_batch_id,
                     source_hash, bank_ref, bank_category, paired_source_hash, paired_description,
                     paired_batch_id, paired_date, created_at)
                 SELECT id, $1, date, description, raw, batch, hash, bank_ref, bank_category, paired_hash,
                        paired_description, paired_batch, paired_date, created_at
                 FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::text[], $6::uuid[], $7::text[], $8::text[],
                             $9::text[], $10::text[], $11::text[], $12::uuid[], $13::date[], $14::timestamptz[])
                      AS t(id, date, description, raw, batch, hash, bank_ref, bank_category, paired_hash,
                           paired_description, paired_batch, paired_date, created_at)",
            )
            .bind(o)
            .bind(chunk.iter().map(|t| t.id).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.date).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.description.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.raw_description.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.import_batch_id).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.source_hash.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.bank_ref.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.bank_category.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.paired_source_hash.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.paired_description.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.paired_batch_id).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.paired_date).collect::<Vec<_>>())
            .bind(chunk.iter().map(|t| t.created_at).collect::<Vec<_>>())
            .execute(&mut *conn)
            .await?;
            let all: Vec<(Uuid, &crate::model::PostingRow)> = chunk
                .iter()
                .flat_map(|t| t.postings.iter().map(move |p| (t.id, p)))
                .collect();
            postings += all.len();
            sqlx::query(
                "INSERT INTO postings (id, owner_id, transaction_id, account_id, amount_minor, currency)
                 SELECT id, $1, transaction_id, account_id, amount_minor, currency
                 FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::bigint[], $6::text[])
                      AS p(id, transaction_id, account_id, amount_minor, currency)",
            )
            .bind(o)
            .bind(all.iter().map(|(_, p)| p.id).collect::<Vec<_>>())
            .bind(all.iter().map(|(t, _)| *t).collect::<Vec<_>>())
            .bind(all.iter().map(|(_, p)| p.account_id).collect::<Vec<_>>())
            .bind(all.iter().map(|(_, p)| p.amount_minor).collect::<Vec<_>>())
            .bind(all.iter().map(|(_, p)| p.currency.clone()).collect::<Vec<_>>())
            .execute(&mut *conn)
            .await?;
        }
        Ok(postings)
    }

    /// Edits, then which edit reverted which (an edit may be reverted by a later one).
    async fn edits(o: Uuid, conn: &mut PgConnection, e: &Export) -> Result<(), RestoreError> {
        for x in &e.ledger_edits {
            sqlx::query(
                "INSERT INTO ledger_edits (id, owner_id, made_at, made_by, kind, summary, before, after,
                                           import_batch_id, reverted_at, detail)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(x.id)
            .bind(o)
            .bind(x.made_at)
            .bind(&x.made_by)
            .bind(&x.kind)
            .bind(&x.summary)
            .bind(&x.before)
            .bind(&x.after)
            .bind(x.import_batch_id)
            .bind(x.reverted_at)
            .bind(&x.detail)
            .execute(&mut *conn)
            .await?;
        }
        for x in e.ledger_edits.iter().filter(|x| x.reverted_by.is_some()) {
            sqlx::query("UPDATE ledger_edits SET reverted_by = $3 WHERE owner_id = $1 AND id = $2")
                .bind(o)
                .bind(x.id)
                .bind(x.reverted_by)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }

    async fn conversations(o: Uuid, conn: &mut PgConnection, e: &Export) -> Result<(), RestoreError> {
        for c in &e.conversations {
            sqlx::query(
                "INSERT INTO conversations (id, owner_id, title, created_at, updated_at, summary, history_from)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(c.id)
            .bind(o)
            .bind(&c.title)
            .bind(c.created_at)
            .bind(c.updated_at)
            .bind(&c.summary)
            .bind(c.history_from)
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "INSERT INTO conversation_messages (owner_id, conversation_id, seq, message, created_at)
                 SELECT $1, $2, seq, message, created_at
                 FROM UNNEST($3::int[], $4::jsonb[], $5::timestamptz[]) AS m(seq, message, created_at)",
            )
            .bind(o)
            .bind(c.id)
            .bind(c.messages.iter().map(|m| m.seq).collect::<Vec<_>>())
            .bind(c.messages.iter().map(|m| m.message.clone()).collect::<Vec<_>>())
            .bind(c.messages.iter().map(|m| m.created_at).collect::<Vec<_>>())
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }

    async fn runs(o: Uuid, conn: &mut PgConnection, e: &Export) -> Result<(), RestoreError> {
        for r in &e.runs {
            sqlx::query(
                "INSERT INTO trace_runs (id, owner_id, conversation_id, started_at, finished_at, provider, model,
                     status, channel, iterations, input_tokens, output_tokens, cached_tokens, cost_usd_est,
                     latency_ms, question)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8::run_status, $9::channel, $10, $11, $12, $13,
                         $14::numeric, $15, $16)",
            )
            .bind(r.id)
            .bind(o)
            .bind(r.conversation_id)
            .bind(r.started_at)
            .bind(r.finished_at)
            .bind(&r.provider)
            .bind(&r.model)
            .bind(&r.status)
            .bind(&r.channel)
            .bind(r.iterations)
            .bind(r.input_tokens)
            .bind(r.output_tokens)
            .bind(r.cached_tokens)
            .bind(&r.cost_usd_est)
            .bind(r.latency_ms)
            .bind(&r.question)
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }
}
