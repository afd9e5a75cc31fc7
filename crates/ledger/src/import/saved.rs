//! Mappings saved per account: the commit keeps how its statement was read, and the next
//! statement into the same account is read the same way — its columns, delimiter, skipped lines,
//! header and signs as the mapping, its order of day and month only as a hint for a file whose own
//! dates do not decide.

use sqlx::PgConnection;

use super::{ImportError, Mapping, ParseOptions, Parsed, parse};
use crate::{LedgerError, OwnerId};

/// The mapping the last import into an account used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedMapping {
    pub account: String,
    pub mapping: Mapping,
    /// The statement it was saved from.
    pub source: String,
}

/// The mapping saved with `account` (by its name, case-insensitive), if any.
pub async fn saved_mapping(
    owner: OwnerId,
    conn: &mut PgConnection,
    account: &str,
) -> Result<Option<SavedMapping>, LedgerError> {
    let row: Option<(String, serde_json::Value, String)> = sqlx::query_as(
        "SELECT account, mapping, source FROM import_mappings WHERE owner_id = $1 AND lower(account) = lower($2)",
    )
    .bind(owner.as_uuid())
    .bind(account.trim())
    .fetch_optional(conn)
    .await?;
    // A mapping saved by an older kakeibo that no longer reads is no mapping: detection decides.
    Ok(row.and_then(|(account, mapping, source)| {
        serde_json::from_value(mapping).ok().map(|mapping| SavedMapping {
            account,
            mapping,
            source,
        })
    }))
}

/// Keeps `mapping` as the way statements into `account` are read.
pub async fn save_mapping(
    owner: OwnerId,
    conn: &mut PgConnection,
    account: &str,
    mapping: &Mapping,
    source: &str,
) -> Result<(), LedgerError> {
    sqlx::query(
        "INSERT INTO import_mappings (owner_id, account, mapping, source) VALUES ($1, $2, $3, $4)
         ON CONFLICT (owner_id, lower(account)) DO UPDATE SET mapping = EXCLUDED.mapping,
             source = EXCLUDED.source, updated_at = now()",
    )
    .bind(owner.as_uuid())
    .bind(account)
    .bind(sqlx::types::Json(mapping))
    .bind(source)
    .execute(conn)
    .await?;
    Ok(())
}

/// Parses a statement going into an account with a saved mapping. When the options name no
/// columns or layout of their own, the saved mapping reads the file (the options' `invert` and
/// date order on top), falling back to detection when it does not fit this file; either way the
/// saved date order is the hint for dates that read either way, and it is kept for the next
/// statement when this one's dates do not decide.
pub fn parse_with_saved(
    bytes: &[u8],
    options: &ParseOptions,
    saved: Option<&SavedMapping>,
) -> Result<Parsed, ImportError> {
    // A mapping says how delimited text is laid out; a structured statement says it itself.
    let delimited = kakeibo_import::sniff(bytes).format == kakeibo_import::StatementFormat::Delimited;
    let Some(saved) = saved.filter(|_| delimited) else {
        return parse(bytes, options);
    };
    let hint = saved.mapping.date_order.map(|order| {
        (
            order,
            format!(
                "{} as in the last import into {} ({}): every date could be read either way",
                order.name(),
                saved.account,
                saved.source
            ),
        )
    });
    let hinted = ParseOptions {
        date_hint: options.date_hint.clone().or(hint),
        ..options.clone()
    };
    let keep_order = |mut parsed: Parsed| {
        if parsed.mapping.date_order.is_none() {
            parsed.mapping.date_order = saved.mapping.date_order;
        }
        parsed
    };
    if has_layout(&options.mapping) || !has_layout(&saved.mapping) {
        return parse(bytes, &hinted).map(keep_order);
    }
    let reuse = ParseOptions {
        mapping: Mapping {
            date_order: options.mapping.date_order,
            invert: options.mapping.invert || saved.mapping.invert,
            ..saved.mapping.clone()
        },
        ..hinted.clone()
    };
    match parse(bytes, &reuse) {
        // The saved columns do not fit this file (more of it unreadable or moving nothing than
        // read): detection reads it when it does better.
        Ok(parsed) if parsed.errors.len().saturating_add(parsed.skipped.len()) > parsed.rows.len() => {
            match parse(bytes, &hinted) {
                Ok(detected) if detected.rows.len() > parsed.rows.len() => Ok(keep_order(detected)),
                _ => Ok(keep_order(with_source(parsed, saved))),
            }
        }
        Ok(parsed) => Ok(keep_order(with_source(parsed, saved))),
        Err(ImportError::NoHeader | ImportError::Mapping(_) | ImportError::NoRows { .. }) => {
            parse(bytes, &hinted).map(keep_order)
        }
        Err(other) => Err(other),
    }
}

/// Whether a mapping says how the file is laid out (columns, delimiter, skipped lines, header),
/// not only hints such as the date order or `invert`.
fn has_layout(mapping: &Mapping) -> bool {
    mapping.names_columns()
        || mapping.delimiter.is_some()
        || mapping.skip_lines.is_some()
        || mapping.header.is_some()
}

/// A statement read with the saved mapping says so.
fn with_source(mut parsed: Parsed, saved: &SavedMapping) -> Parsed {
    parsed.format.mapping_from = Some(format!(
        "the mapping saved with {} by the import of {}",
        saved.account, saved.source
    ));
    parsed
}
