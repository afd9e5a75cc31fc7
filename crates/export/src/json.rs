//! The JSON export, written a section at a time in the order of [`Export`]'s fields, the
//! transactions and conversations one element at a time.

use std::io::Write;

use sqlx::PgConnection;
use uuid::Uuid;

use crate::{
    ExportError,
    data::Meta,
    model::{
        BatchRow, ConversationRow, EditRow, FORMAT, MappingRow, MemoryRow, MessageRow, PeriodRow, RunRow,
        Settings, VERSION,
    },
};

#[cfg(doc)]
use crate::model::Export;

fn field(out: &mut (dyn Write + Send), name: &str, value: &impl serde::Serialize) -> Result<(), ExportError> {
    write!(out, "\"{name}\":")?;
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out, ",")?;
    Ok(())
}

pub async fn write(
    conn: &mut PgConnection,
    meta: &Meta,
    out: &mut (dyn Write + Send),
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<(u64, u64), ExportError> {
    let owner = meta.owner;
    writeln!(out, "{{")?;
    field(out, "format", &FORMAT)?;
    field(out, "version", &VERSION)?;
    field(out, "exported_at", &meta.exported_at)?;
    field(out, "owner", &owner.as_uuid())?;
    let period = (meta.period.from.is_some() || meta.period.to.is_some()).then_some(PeriodRow {
        from: meta.period.from,
        to: meta.period.to,
    });
    field(out, "period", &period)?;
    field(
        out,
        "settings",
        &Settings {
            home_currency: meta.home_currency.map(|c| c.as_str().to_owned()),
        },
    )?;
    field(out, "accounts", &meta.accounts)?;
    let batches: Vec<BatchRow> = sqlx::query_as(
        "SELECT id, account_id, filename, source_sha256, row_count, created_at, imported_at, undone_at,
                options_key, plan
         FROM import_batches WHERE owner_id = $1 AND status = 'committed' ORDER BY created_at, id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    field(out, "import_batches", &batches)?;
    field(out, "budgets", &meta.budgets)?;
    field(out, "rules", &meta.rules)?;
    let memories: Vec<MemoryRow> = sqlx::query_as(
        "SELECT id, content, category, source::text AS source, created_at FROM memories
         WHERE owner_id = $1 ORDER BY created_at, id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    field(out, "memories", &memories)?;
    let mappings: Vec<MappingRow> = sqlx::query_as(
        "SELECT account, mapping, source, updated_at FROM import_mappings WHERE owner_id = $1 ORDER BY account",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    field(out, "import_mappings", &mappings)?;
    let edits: Vec<EditRow> = sqlx::query_as(
        "SELECT id, made_at, made_by, kind, summary, before, after, import_batch_id, reverted_at, reverted_by, detail
         FROM ledger_edits WHERE owner_id = $1 ORDER BY made_at, id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    field(out, "ledger_edits", &edits)?;

    write!(out, "\"transactions\":[")?;
    let mut first = true;
    let counts = crate::stream(&mut *conn, meta, progress, |txn| {
        if !std::mem::take(&mut first) {
            write!(out, ",")?;
        }
        writeln!(out)?;
        serde_json::to_writer(&mut *out, &txn.row)?;
        Ok(())
    })
    .await?;
    writeln!(out, "],")?;
    conversations(conn, meta, out).await?;
    let runs: Vec<RunRow> = sqlx::query_as(
        "SELECT id, conversation_id, started_at, finished_at, provider, model, status::text AS status,
                channel::text AS channel, iterations, input_tokens, output_tokens, cached_tokens,
                cost_usd_est::text AS cost_usd_est, latency_ms, question
         FROM trace_runs WHERE owner_id = $1 ORDER BY started_at, id",
    )
    .bind(owner.as_uuid())
    .fetch_all(&mut *conn)
    .await?;
    write!(out, "\"runs\":")?;
    serde_json::to_writer(&mut *out, &runs)?;
    writeln!(out, "\n}}")?;
    Ok(counts)
}

/// Each conversation with its messages, one conversation held at a time.
async fn conversations(
    conn: &mut PgConnection,
    meta: &Meta,
    out: &mut (dyn Write + Send),
) -> Result<(), ExportError> {
    #[derive(sqlx::FromRow)]
    struct Head {
        id: Uuid,
        title: Option<String>,
        created_at: chrono::DateTime<chrono::Utc>,
        updated_at: chrono::DateTime<chrono::Utc>,
        summary: Option<serde_json::Value>,
        history_from: i32,
    }
    let owner = meta.owner.as_uuid();
    let heads: Vec<Head> = sqlx::query_as(
        "SELECT id, title, created_at, updated_at, summary, history_from FROM conversations
         WHERE owner_id = $1 ORDER BY created_at, id",
    )
    .bind(owner)
    .fetch_all(&mut *conn)
    .await?;
    write!(out, "\"conversations\":[")?;
    for (i, head) in heads.into_iter().enumerate() {
        let messages: Vec<MessageRow> = sqlx::query_as(
            "SELECT seq, message, created_at FROM conversation_messages
             WHERE owner_id = $1 AND conversation_id = $2 ORDER BY seq",
        )
        .bind(owner)
        .bind(head.id)
        .fetch_all(&mut *conn)
        .await?;
        if i > 0 {
            write!(out, ",")?;
        }
        writeln!(out)?;
        serde_json::to_writer(
            &mut *out,
            &ConversationRow {
                id: head.id,
                title: head.title,
                created_at: head.created_at,
                updated_at: head.updated_at,
                summary: head.summary,
                history_from: head.history_from,
                messages,
            },
        )?;
    }
    writeln!(out, "],")?;
    Ok(())
}
