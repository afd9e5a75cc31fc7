//! The one door to cross-owner reads and the operator's actions.
//!
//! Every function here takes an [`AdminSession`], which only [`assert_admin`] can make: the
//! signed-in visitor must be an operator account (made by `kakeibo operator add`, never by
//! signing up — so nobody becomes the operator by signing up first with the operator's address)
//! and their email on the `ADMIN_EMAILS` allowlist (trimmed, case-insensitive; an empty list
//! means nobody). Everything here runs as the owner role, which bypasses row-level
//! security — which is why nothing else may read across owners.

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::OperatorError;
use kakeibo_core::{ErrorTrace, TraceKind, trace::keys};
use kakeibo_ledger::{OwnerId, OwnerRolePool};

/// The operator's allowlist, normalised once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminAllowlist(Vec<String>);

impl AdminAllowlist {
    /// From a comma-separated list (`ADMIN_EMAILS`); blanks are dropped.
    pub fn parse(list: &str) -> Self {
        Self(
            list.split(',')
                .map(|e| e.trim().to_lowercase())
                .filter(|e| !e.is_empty())
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Proof that the caller is an operator. It cannot be built outside this module.
#[derive(Debug, Clone)]
pub struct AdminSession {
    email: String,
    _sealed: (),
}

impl AdminSession {
    pub fn email(&self) -> &str {
        &self.email
    }
}

/// An [`AdminSession`] when the signed-in visitor is an operator account (`operator`) whose
/// `email` is on the allowlist.
pub fn assert_admin(email: Option<&str>, operator: bool, allowlist: &AdminAllowlist) -> Option<AdminSession> {
    if !operator {
        return None;
    }
    let email = email?.trim().to_lowercase();
    if email.is_empty() || !allowlist.0.contains(&email) {
        return None;
    }
    Some(AdminSession { email, _sealed: () })
}

/// The operator's switch that pauses live chat (the quota gate refuses with `paused`).
pub async fn set_live_chat_paused(
    _: &AdminSession,
    pool: &OwnerRolePool,
    paused: bool,
) -> Result<(), OperatorError> {
    sqlx::query(
        "INSERT INTO operator_flags (key, value, updated_at) VALUES ('live_chat_paused', $1, now())
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()",
    )
    .bind(paused)
    .execute(pool.get())
    .await?;
    Ok(())
}

/// Blocks or unblocks a visitor; `false` when there is no such visitor.
pub async fn set_blocked(
    _: &AdminSession,
    pool: &OwnerRolePool,
    owner: OwnerId,
    blocked: bool,
) -> Result<bool, OperatorError> {
    let done = sqlx::query(
        "UPDATE users SET blocked_at = CASE WHEN $2 THEN coalesce(blocked_at, now()) ELSE NULL END WHERE id = $1",
    )
    .bind(owner.as_uuid())
    .bind(blocked)
    .execute(pool.get())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The panels of the `/admin` page.
#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub generated_at: DateTime<Utc>,
    pub budget: Value,
    pub traffic: Value,
    pub health: Value,
    pub safety: Value,
    pub tools: Value,
    pub recent_runs: Value,
    pub users: Value,
    pub geo: Value,
}

fn json_rows(rows: Vec<Value>) -> Value {
    Value::Array(rows)
}

/// Everything the operator's dashboard shows, as of `now`, against the daily budget in USD.
pub async fn overview(
    _: &AdminSession,
    pool: &OwnerRolePool,
    now: DateTime<Utc>,
    daily_budget_usd: f64,
) -> Result<Overview, OperatorError> {
    // One transaction in UTC: "today" and every day boundary below are UTC days, as the quota
    // gate's are.
    let mut tx = pool.get().begin().await?;
    sqlx::query("SET LOCAL TIME ZONE 'UTC'").execute(&mut *tx).await?;
    let db = &mut *tx;
    let today = now.date_naive();
    let budget = budget_panel(&mut *db, today, daily_budget_usd).await?;

    // 2. Traffic.
    let traffic: Value = sqlx::query_scalar(
        "SELECT json_build_object(
            'active_today', (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date),
            'active_7_days', (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date - 6),
            'active_30_days', (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date - 29),
            'anonymous', (SELECT count(*) FROM users WHERE is_anonymous),
            'signed_in', (SELECT count(*) FROM users WHERE NOT is_anonymous),
            'conversion_pct', (SELECT CASE WHEN count(*) = 0 THEN 0
                                 ELSE round(100.0 * count(*) FILTER (WHERE NOT is_anonymous) / count(*), 1) END
                               FROM users WHERE created_at >= $1::date - 29),
            'returning', (SELECT count(*) FROM (SELECT owner_id FROM trace_runs WHERE started_at >= $1::date - 29
                            GROUP BY owner_id HAVING count(DISTINCT started_at::date) >= 2) AS r))",
    )
    .bind(today)
    .fetch_one(&mut *db)
    .await?;

    // 3. Health, over 30 days.
    let health = health_panel(&mut *db, today).await?;

    // 4. Safety: writes counted as decisions. A proposal is an inline decision (no `expired` key)
    //    or a suspension (`suspended`); the decision after a suspension carries `expired`.
    let safety: Value = sqlx::query_scalar(
        "WITH c AS (SELECT e.* FROM trace_events e JOIN trace_runs r ON r.id = e.run_id AND r.owner_id = e.owner_id
                    WHERE e.type = $2::trace_event_type AND r.started_at >= $1::date - 29)
         SELECT json_build_object(
            'writes_proposed', (SELECT count(*) FROM c WHERE c.payload ? $4 OR NOT (c.payload ? $5)),
            'writes_allowed', (SELECT count(*) FROM c WHERE c.payload->$3 = 'true'::jsonb),
            'writes_declined', (SELECT count(*) FROM c WHERE c.payload->$3 = 'false'::jsonb
                                   AND coalesce(c.payload->$5, 'false'::jsonb) = 'false'::jsonb),
            'writes_expired', (SELECT count(*) FROM c WHERE c.payload->$5 = 'true'::jsonb),
            'writes_awaiting', (SELECT count(*) FROM suspended_turns WHERE status = 'pending' AND expires_at > now()),
            'imports', (SELECT count(*) FROM import_batches WHERE status = 'committed' AND imported_at >= $1::date - 29),
            'blocked_runs', coalesce((SELECT json_agg(json_build_object('id', id, 'owner_id', owner_id,
                                 'started_at', started_at) ORDER BY started_at DESC)
                               FROM (SELECT id, owner_id, started_at FROM trace_runs WHERE status = 'blocked'
                                     ORDER BY started_at DESC LIMIT 50) AS b), '[]'::json))",
    )
    .bind(today)
    .bind(TraceKind::Confirm.as_str())
    .bind(keys::CONFIRM_ALLOWED)
    .bind(keys::CONFIRM_SUSPENDED)
    .bind(keys::CONFIRM_EXPIRED)
    .fetch_one(&mut *db)
    .await?;

    // 5. Tools, over 30 days.
    let tools = tools_panel(&mut *db, today).await?;

    // 6. Recent runs.
    let recent: Vec<Value> = sqlx::query_scalar(
        "SELECT json_build_object('id', r.id, 'owner_id', r.owner_id, 'email', u.email, 'anonymous', u.is_anonymous,
                 'started_at', r.started_at, 'channel', r.channel, 'model', r.model, 'status', r.status,
                 'input_tokens', r.input_tokens, 'cached_tokens', r.cached_tokens, 'output_tokens', r.output_tokens,
                 'cost_usd_est', r.cost_usd_est::float8, 'latency_ms', r.latency_ms, 'question', r.question)
         FROM trace_runs r JOIN users u ON u.id = r.owner_id
         ORDER BY r.started_at DESC, r.id LIMIT 100",
    )
    .fetch_all(&mut *db)
    .await?;

    // 7. Users.
    let users: Vec<Value> = sqlx::query_scalar(
        "SELECT json_build_object('id', u.id, 'email', u.email, 'anonymous', u.is_anonymous,
                 'joined', u.created_at, 'last_seen', u.last_seen_at,
                 'messages_today', coalesce((SELECT m.count FROM owner_daily_messages m
                                             WHERE m.owner_id = u.id AND m.day = $1::date), 0),
                 'cost_to_date_usd', coalesce((SELECT sum(cost_usd_est)::float8 FROM trace_runs r WHERE r.owner_id = u.id), 0),
                 'blocked', u.blocked_at IS NOT NULL)
         FROM users u ORDER BY u.last_seen_at DESC, u.id LIMIT 200",
    )
    .bind(today)
    .fetch_all(&mut *db)
    .await?;

    // 8. Coarse geography, when the edge supplied it.
    let geo: Vec<Value> = sqlx::query_scalar(
        "SELECT json_build_object('lat', lat, 'lon', lon, 'country', country, 'runs', runs)
         FROM (SELECT round(geo_lat::numeric, 1) AS lat, round(geo_lon::numeric, 1) AS lon, geo_country AS country,
                      count(*) AS runs
               FROM trace_runs WHERE geo_lat IS NOT NULL AND geo_lon IS NOT NULL AND started_at >= $1::date - 29
               GROUP BY 1, 2, 3) AS points",
    )
    .bind(today)
    .fetch_all(&mut *db)
    .await?;

    tx.commit().await?;
    Ok(Overview {
        generated_at: now,
        budget,
        traffic,
        health,
        safety,
        tools: json_rows(tools),
        recent_runs: json_rows(recent),
        users: json_rows(users),
        geo: json_rows(geo),
    })
}

/// Runs over 30 days: how many, by status, their latency, tool errors and iteration limits.
async fn health_panel(db: &mut sqlx::PgConnection, today: NaiveDate) -> Result<Value, OperatorError> {
    sqlx::query_scalar(
        "WITH r AS (SELECT * FROM trace_runs WHERE started_at >= $1::date - 29)
         SELECT json_build_object(
            'runs', (SELECT count(*) FROM r),
            'by_status', coalesce((SELECT json_object_agg(status, n) FROM
                            (SELECT status::text AS status, count(*) AS n FROM r GROUP BY status) AS s), '{}'::json),
            'latency_p50_ms', (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM r WHERE finished_at IS NOT NULL),
            'latency_p95_ms', (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) FROM r WHERE finished_at IS NOT NULL),
            'tool_error_pct', (SELECT CASE WHEN count(*) = 0 THEN 0 ELSE
                                 round(100.0 * count(*) FILTER (WHERE (e.payload->>$2)::boolean) / count(*), 1) END
                               FROM trace_events e JOIN r ON r.id = e.run_id AND r.owner_id = e.owner_id
                               WHERE e.type = $3::trace_event_type),
            'iteration_limit_hits', (SELECT count(*) FROM trace_events e JOIN r ON r.id = e.run_id AND r.owner_id = e.owner_id
                               WHERE e.type = $4::trace_event_type AND e.payload->>$5 = $6))",
    )
    .bind(today)
    .bind(keys::TOOL_ERROR)
    .bind(TraceKind::ToolCall.as_str())
    .bind(TraceKind::Error.as_str())
    .bind(keys::ERROR_KIND)
    .bind(ErrorTrace::IterationLimit { iterations: 0 }.kind_name())
    .fetch_one(db)
    .await
    .map_err(OperatorError::from)
}

/// Each tool over 30 days: calls, error rate, median latency (declined writes not counted).
async fn tools_panel(db: &mut sqlx::PgConnection, today: NaiveDate) -> Result<Vec<Value>, OperatorError> {
    sqlx::query_scalar(
        "SELECT json_build_object('name', e.payload->>$2, 'calls', count(*),
                 'error_pct', round(100.0 * count(*) FILTER (WHERE (e.payload->>$3)::boolean) / count(*), 1),
                 'median_latency_ms', percentile_cont(0.5) WITHIN GROUP (ORDER BY e.latency_ms))
         FROM trace_events e JOIN trace_runs r ON r.id = e.run_id AND r.owner_id = e.owner_id
         WHERE e.type = $5::trace_event_type AND r.started_at >= $1::date - 29
           AND coalesce((e.payload->>$4)::boolean, true)
         GROUP BY e.payload->>$2 ORDER BY count(*) DESC",
    )
    .bind(today)
    .bind(keys::TOOL_NAME)
    .bind(keys::TOOL_ERROR)
    .bind(keys::TOOL_CONFIRMED)
    .bind(TraceKind::ToolCall.as_str())
    .fetch_all(db)
    .await
    .map_err(OperatorError::from)
}

/// 1. Budget: today, month to date, the projection, the cap and ceiling, and 30 filled days.
async fn budget_panel(
    db: &mut sqlx::PgConnection,
    today: NaiveDate,
    daily_budget_usd: f64,
) -> Result<Value, OperatorError> {
    let month_start = NaiveDate::from_ymd_opt(today.year(), today.month(), 1).unwrap_or(today);
    let days_in_month = month_start
        .checked_add_months(chrono::Months::new(1))
        .map_or(30, |next| (next - month_start).num_days());

    // Spend per UTC day over the last 30 days (days without runs filled with 0).
    let series: Vec<(NaiveDate, f64)> = sqlx::query_as(
        "SELECT d::date, coalesce(sum(r.cost_usd_est), 0)::float8
         FROM generate_series($1::date - 29, $1::date, interval '1 day') AS d
         LEFT JOIN trace_runs r ON r.started_at >= d AND r.started_at < d + interval '1 day'
         GROUP BY d ORDER BY d",
    )
    .bind(today)
    .fetch_all(&mut *db)
    .await?;
    let month_to_date: f64 = sqlx::query_scalar(
        "SELECT coalesce(sum(cost_usd_est), 0)::float8 FROM trace_runs WHERE started_at >= $1::date",
    )
    .bind(month_start)
    .fetch_one(&mut *db)
    .await?;
    let today_usd = series.last().map_or(0.0, |(_, usd)| *usd);
    // What the gate and each model call count: settled today, and held by calls in flight.
    let (settled, held): (i64, i64) = sqlx::query_as(
        "SELECT coalesce(max(settled_micro_usd), 0), coalesce(max(reserved_micro_usd), 0)
         FROM budget_days WHERE day = $1",
    )
    .bind(today)
    .fetch_one(&mut *db)
    .await?;
    #[allow(clippy::cast_precision_loss)]
    let (settled_usd, held_usd) = (settled as f64 / 1e6, held as f64 / 1e6);
    let paused: bool = sqlx::query_scalar(
        "SELECT coalesce((SELECT value FROM operator_flags WHERE key = 'live_chat_paused'), false)",
    )
    .fetch_one(&mut *db)
    .await?;
    let elapsed = f64::from(today.day());
    #[allow(clippy::cast_precision_loss)]
    let projected = (month_to_date / elapsed * days_in_month as f64).max(month_to_date);
    let state = if paused {
        "paused"
    } else if settled_usd + held_usd >= daily_budget_usd {
        "tripped"
    } else {
        "ok"
    };
    #[allow(clippy::cast_precision_loss)]
    let budget = json!({
        "today_usd": today_usd,
        "budget_settled_usd": settled_usd,
        "in_flight_usd": held_usd,
        "month_to_date_usd": month_to_date,
        "projected_month_usd": projected,
        "daily_cap_usd": daily_budget_usd,
        "monthly_ceiling_usd": daily_budget_usd * days_in_month as f64,
        "state": state,
        "paused": paused,
        "last_30_days": series.iter().map(|(d, usd)| json!({"day": d, "usd": usd})).collect::<Vec<_>>(),
    });
    Ok(budget)
}

/// Any visitor's run with its events, for the operator's trace page: the run's owner is looked
/// up, then the run is read through the same owner-scoped query the visitor's own page uses.
pub async fn run_detail(
    _: &AdminSession,
    pool: &OwnerRolePool,
    run: kakeibo_core::RunId,
) -> Result<Option<kakeibo_agent::runs::RunDetail>, OperatorError> {
    let owner: Option<Uuid> = sqlx::query_scalar("SELECT owner_id FROM trace_runs WHERE id = $1")
        .bind(run.as_uuid())
        .fetch_optional(pool.get())
        .await?;
    match owner {
        Some(owner) => kakeibo_agent::runs::run_detail(OwnerId::new(owner), pool.get(), run)
            .await
            .map_err(OperatorError::from),
        None => Ok(None),
    }
}

/// Whether `owner` exists (the action's target), for a clear 404 on a typo.
pub async fn visitor_exists(
    _: &AdminSession,
    pool: &OwnerRolePool,
    owner: Uuid,
) -> Result<bool, OperatorError> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)")
            .bind(owner)
            .fetch_one(pool.get())
            .await?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_is_trimmed_and_case_insensitive_and_empty_means_nobody() {
        let list = AdminAllowlist::parse(" Ops@Example.com , ,second@example.com");
        assert!(assert_admin(Some("ops@example.com"), true, &list).is_some());
        assert!(assert_admin(Some("  OPS@EXAMPLE.COM "), true, &list).is_some());
        assert!(assert_admin(Some("second@example.com"), true, &list).is_some());
        assert!(assert_admin(Some("other@example.com"), true, &list).is_none());
        assert!(assert_admin(None, true, &list).is_none());
        assert!(assert_admin(Some(""), true, &list).is_none());
        assert!(
            assert_admin(Some("ops@example.com"), false, &list).is_none(),
            "not an operator account"
        );
        let nobody = AdminAllowlist::parse("  , ");
        assert!(nobody.is_empty());
        assert!(assert_admin(Some("ops@example.com"), true, &nobody).is_none());
        assert!(assert_admin(Some(""), true, &nobody).is_none());
    }
}
