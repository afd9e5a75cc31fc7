//! The quota gate of the public site: check and charge in one call.
//!
//! The work is one SQL function (`consume_quota`, migration 0003), so a check and its charge are
//! one statement and one round trip: the per-owner and per-address counters are upserts that only
//! count while under their cap, which makes the gate exact under any concurrency.

use chrono::{DateTime, NaiveDate, Utc};
use sha2::{Digest, Sha256};

use crate::OperatorError;
use kakeibo_ledger::{OwnerId, OwnerRolePool};

/// The limits of SPEC §5; every one is configurable.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaLimits {
    /// Messages a day for an anonymous visitor.
    pub anonymous_daily: i32,
    /// Messages a day once signed in.
    pub signed_in_daily: i32,
    /// Messages a day from one address, for the anonymous visitors behind it together. A signed-in
    /// person is counted per account only: homes, offices and mobile carriers put many people
    /// behind one address, and the global daily budget is the site's real cap.
    pub address_daily: i32,
    /// The whole site's model spend a UTC day, in USD (list-price estimates from `trace_runs`).
    pub global_daily_usd: f64,
    /// Downloads of one's whole data (`GET /api/export`) a UTC day: each reads every row.
    pub exports_daily: i32,
}

impl Default for QuotaLimits {
    fn default() -> Self {
        Self {
            anonymous_daily: 8,
            signed_in_daily: 25,
            address_daily: 20,
            global_daily_usd: 0.667,
            exports_daily: 5,
        }
    }
}

/// What is being admitted: a new message, or the rest of a turn after a confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaKind {
    Message,
    /// Never refused for the message quotas.
    Resume,
}

/// Why a request was refused (the `reason` of the `503`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    Paused,
    Blocked,
    OwnerQuota,
    IpQuota,
    DailyCap,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Self::Paused => "paused",
            Self::Blocked => "blocked",
            Self::OwnerQuota => "owner_quota",
            Self::IpQuota => "ip_quota",
            Self::DailyCap => "daily_cap",
        }
    }

    /// A sentence for the person who was refused.
    pub fn message(self) -> &'static str {
        match self {
            Self::Paused => "live chat is paused by the operator; try again later",
            Self::Blocked => "this visitor is blocked",
            Self::OwnerQuota => "you have used today's messages; they renew at midnight UTC",
            Self::IpQuota => "today's messages from your network are used up; they renew at midnight UTC",
            Self::DailyCap => "the site has reached today's model budget; it renews at midnight UTC",
        }
    }
}

/// The per-address key a visitor's messages and previews are charged to: anonymous visitors'
/// only (a signed-in person is counted per account, wherever they are).
#[must_use]
pub fn charged_address(is_anonymous: bool, address_key: &str) -> Option<&str> {
    is_anonymous.then_some(address_key)
}

/// The messages the anonymous visitors behind `address_key` were admitted today (its key is the
/// day's: see [`address_key`]).
pub async fn address_messages_today(pool: &OwnerRolePool, address_key: &str) -> Result<i32, OperatorError> {
    let count: Option<i32> = sqlx::query_scalar("SELECT count FROM rate_limits WHERE key = $1")
        .bind(address_key)
        .fetch_optional(pool.get())
        .await?;
    Ok(count.unwrap_or(0))
}

/// What the message counter shows: the limit that binds, and which one it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct MessagesLeft {
    pub limit: i32,
    pub used: i32,
    pub left: i32,
    pub binding: Binding,
}

/// Which limit binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    /// The visitor's (or account's) own daily limit.
    Visitor,
    /// The limit shared by the anonymous visitors behind one address, which runs out first.
    Network,
}

impl MessagesLeft {
    /// The visitor's own count against their limit, and for an anonymous visitor the address's
    /// against its: whichever leaves fewer messages binds.
    #[must_use]
    pub fn of(own: (i32, i32), address: Option<(i32, i32)>) -> Self {
        let mine = Self {
            limit: own.0,
            used: own.1,
            left: own.0.saturating_sub(own.1).max(0),
            binding: Binding::Visitor,
        };
        match address {
            Some((limit, used)) if limit.saturating_sub(used).max(0) < mine.left => Self {
                limit,
                used,
                left: limit.saturating_sub(used).max(0),
                binding: Binding::Network,
            },
            _ => mine,
        }
    }
}

/// The per-address key: SHA-256 of `address|salt|YYYY-MM-DD` (UTC). No raw address is stored,
/// and the key changes every day.
pub fn address_key(address: &str, salt: &str, day: NaiveDate) -> String {
    hex::encode(Sha256::digest(format!("{address}|{salt}|{day}")))
}

/// Checks every quota in order and charges the admitted message, atomically.
pub async fn consume(
    owner: OwnerId,
    pool: &OwnerRolePool,
    address_key: Option<&str>,
    kind: QuotaKind,
    limits: &QuotaLimits,
    now: DateTime<Utc>,
) -> Result<Result<(), Refusal>, OperatorError> {
    let kind = match kind {
        QuotaKind::Message => "message",
        QuotaKind::Resume => "resume",
    };
    let verdict: String =
        sqlx::query_scalar("SELECT consume_quota($1, $2, $3, $4, $5, $6, $7::float8::numeric, $8)")
            .bind(owner.as_uuid())
            .bind(address_key)
            .bind(kind)
            .bind(limits.anonymous_daily)
            .bind(limits.signed_in_daily)
            .bind(limits.address_daily)
            .bind(limits.global_daily_usd)
            .bind(now)
            .fetch_one(pool.get())
            .await?;
    Ok(match verdict.as_str() {
        "ok" => Ok(()),
        "paused" => Err(Refusal::Paused),
        "blocked" => Err(Refusal::Blocked),
        "owner_quota" => Err(Refusal::OwnerQuota),
        "ip_quota" => Err(Refusal::IpQuota),
        "daily_cap" => Err(Refusal::DailyCap),
        other => {
            return Err(OperatorError::UnknownVerdict(other.to_owned()));
        }
    })
}

/// How many statement previews a day each message of the daily quotas is worth: a visitor may
/// preview three times their messages, an address three times its messages. A preview parses up
/// to 10 MiB and stores a plan, so it is counted like the work it is.
pub const PREVIEWS_PER_MESSAGE: i32 = 3;

/// Which preview quota a refusal came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewRefusal {
    /// The visitor's own previews today.
    Visitor { limit: i32 },
    /// Every visitor's behind the address.
    Address { limit: i32 },
}

impl PreviewRefusal {
    /// A sentence for the person who was refused.
    pub fn message(self) -> String {
        match self {
            Self::Visitor { limit } => {
                format!(
                    "you have previewed {limit} statements today, the most a day; previews renew at midnight UTC"
                )
            }
            Self::Address { limit } => format!(
                "{limit} statements were previewed from your network today, the most a day; previews renew at midnight UTC"
            ),
        }
    }
}

/// Counts a statement preview of `owner` against their daily preview quota and, when anonymous,
/// the address's ([`PREVIEWS_PER_MESSAGE`]), in one transaction: both are charged, or neither.
pub async fn admit_preview(
    owner: OwnerId,
    signed_in: bool,
    pool: &OwnerRolePool,
    address_key: &str,
    limits: &QuotaLimits,
    now: DateTime<Utc>,
) -> Result<Result<(), PreviewRefusal>, OperatorError> {
    let own = if signed_in {
        limits.signed_in_daily
    } else {
        limits.anonymous_daily
    }
    .saturating_mul(PREVIEWS_PER_MESSAGE);
    let shared = limits.address_daily.saturating_mul(PREVIEWS_PER_MESSAGE);
    let day = now.date_naive();
    let mut tx = pool.get().begin().await?;
    let mut counters = vec![(
        format!("previews|{}|{day}", owner.as_uuid()),
        own,
        PreviewRefusal::Visitor { limit: own },
    )];
    // The address's previews are the anonymous visitors' behind it, as its messages are.
    if let Some(key) = charged_address(!signed_in, address_key) {
        counters.push((
            format!("previews|{key}"),
            shared,
            PreviewRefusal::Address { limit: shared },
        ));
    }
    for (key, limit, refusal) in counters {
        let counted: Option<i32> = sqlx::query_scalar(
            "INSERT INTO rate_limits AS r (key, window_start, count)
             SELECT $1, ($2 AT TIME ZONE 'UTC')::date, 1 WHERE $3 > 0
             ON CONFLICT (key) DO UPDATE SET count = r.count + 1 WHERE r.count < $3
             RETURNING count",
        )
        .bind(key)
        .bind(now)
        .bind(limit)
        .fetch_optional(&mut *tx)
        .await?;
        if counted.is_none() {
            tx.rollback().await?;
            return Ok(Err(refusal));
        }
    }
    tx.commit().await?;
    Ok(Ok(()))
}

/// Counts a download of `owner`'s whole data against their daily export quota; `Err(limit)` once
/// they have had as many today.
pub async fn admit_export(
    owner: OwnerId,
    pool: &OwnerRolePool,
    limits: &QuotaLimits,
    now: DateTime<Utc>,
) -> Result<Result<(), i32>, OperatorError> {
    let counted: Option<i32> = sqlx::query_scalar(
        "INSERT INTO rate_limits AS r (key, window_start, count)
         SELECT $1, ($2 AT TIME ZONE 'UTC')::date, 1 WHERE $3 > 0
         ON CONFLICT (key) DO UPDATE SET count = r.count + 1 WHERE r.count < $3
         RETURNING count",
    )
    .bind(format!("exports|{}|{}", owner.as_uuid(), now.date_naive()))
    .bind(now)
    .bind(limits.exports_daily)
    .fetch_optional(pool.get())
    .await?;
    Ok(if counted.is_some() {
        Ok(())
    } else {
        Err(limits.exports_daily)
    })
}

/// Counts a new visitor made from `address_key` today; `false` once the address has made as many
/// as its daily message quota (no visitor can send more messages than that from there anyway).
/// The counter is a row of its own in `rate_limits` (the hashed key with a `visitors|` prefix).
pub async fn admit_new_visitor(
    pool: &OwnerRolePool,
    address_key: &str,
    limits: &QuotaLimits,
    now: DateTime<Utc>,
) -> Result<bool, OperatorError> {
    if limits.address_daily <= 0 {
        return Ok(false);
    }
    let counted: Option<i32> = sqlx::query_scalar(
        "INSERT INTO rate_limits AS r (key, window_start, count) VALUES ($1, ($2 AT TIME ZONE 'UTC')::date, 1)
         ON CONFLICT (key) DO UPDATE SET count = r.count + 1 WHERE r.count < $3
         RETURNING count",
    )
    .bind(format!("visitors|{address_key}"))
    .bind(now)
    .bind(limits.address_daily)
    .fetch_optional(pool.get())
    .await?;
    Ok(counted.is_some())
}

/// Messages `owner` was admitted on the UTC day `day` (what the message quotas count; a day
/// without any is 0). `owner_daily_messages` is the owner role's only.
pub async fn messages_today(
    owner: OwnerId,
    pool: &OwnerRolePool,
    day: NaiveDate,
) -> Result<i32, OperatorError> {
    let count: Option<i32> =
        sqlx::query_scalar("SELECT count FROM owner_daily_messages WHERE owner_id = $1 AND day = $2")
            .bind(owner.as_uuid())
            .bind(day)
            .fetch_optional(pool.get())
            .await?;
    Ok(count.unwrap_or(0))
}

/// Gives back a message [`consume`] admitted when the turn could not start after all.
pub async fn refund(
    owner: OwnerId,
    pool: &OwnerRolePool,
    address_key: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), OperatorError> {
    let mut tx = pool.get().begin().await?;
    sqlx::query(
        "UPDATE owner_daily_messages SET count = greatest(count - 1, 0)
         WHERE owner_id = $1 AND day = ($2 AT TIME ZONE 'UTC')::date",
    )
    .bind(owner.as_uuid())
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if let Some(key) = address_key {
        sqlx::query("UPDATE rate_limits SET count = greatest(count - 1, 0) WHERE key = $1")
            .bind(key)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_that_leaves_fewer_messages_binds() {
        assert_eq!(
            MessagesLeft::of((8, 3), Some((20, 18))),
            MessagesLeft {
                limit: 20,
                used: 18,
                left: 2,
                binding: Binding::Network
            }
        );
        assert_eq!(
            MessagesLeft::of((8, 3), Some((20, 4))),
            MessagesLeft {
                limit: 8,
                used: 3,
                left: 5,
                binding: Binding::Visitor
            }
        );
        // A signed-in person has no address limit; a spent one shows 0, never less.
        assert_eq!(
            MessagesLeft::of((25, 30), None),
            MessagesLeft {
                limit: 25,
                used: 30,
                left: 0,
                binding: Binding::Visitor
            }
        );
    }

    #[test]
    fn address_key_hides_the_address_and_changes_daily() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 29).unwrap_or_default();
        let next = day.succ_opt().unwrap_or_default();
        let key = address_key("203.0.113.7", "salt", day);
        assert_eq!(key.len(), 64);
        assert!(!key.contains("203"));
        assert_ne!(key, address_key("203.0.113.7", "salt", next));
        assert_ne!(key, address_key("203.0.113.7", "other salt", day));
        assert_eq!(key, address_key("203.0.113.7", "salt", day));
    }
}
