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

/// The operator's dashboard (`GET /api/admin/overview`): eight panels, every cost in integer
/// micro-dollars (`…_micro_usd`; `1_500_000` is $1.50), exact as `trace_runs` keeps them.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Overview {
    pub generated_at: DateTime<Utc>,
    pub budget: BudgetPanel,
    pub traffic: Traffic,
    pub health: Health,
    pub safety: Safety,
    pub tools: Vec<ToolUse>,
    pub recent_runs: Vec<RecentRun>,
    pub users: Vec<UserRow>,
    pub geo: Vec<GeoPoint>,
}

/// Where the site's daily model budget stands.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BudgetPanel {
    /// What today's runs cost.
    pub today_micro_usd: i64,
    /// What the cap counts today: the settled cost of the budgeted calls…
    pub budget_settled_micro_usd: i64,
    /// …and what calls in flight hold.
    pub in_flight_micro_usd: i64,
    pub month_to_date_micro_usd: i64,
    /// Month to date spread over the whole month (never below month to date).
    pub projected_month_micro_usd: i64,
    pub daily_cap_micro_usd: i64,
    pub monthly_ceiling_micro_usd: i64,
    pub state: BudgetState,
    pub paused: bool,
    /// Each of the last 30 UTC days, oldest first, days without runs at 0.
    pub last_30_days: Vec<DaySpend>,
}

/// Whether live chat runs: the operator paused it, the cap is reached, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BudgetState {
    Ok,
    Tripped,
    Paused,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct DaySpend {
    pub day: NaiveDate,
    pub micro_usd: i64,
}

/// Visitors over 1, 7 and 30 days.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Traffic {
    pub active_today: i64,
    pub active_7_days: i64,
    pub active_30_days: i64,
    pub anonymous: i64,
    pub signed_in: i64,
    /// Of the visitors who came in the last 30 days, the share who signed up, in percent.
    pub conversion_pct: f64,
    pub returning: i64,
}

/// Runs over 30 days.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Health {
    pub runs: i64,
    #[schemars(with = "std::collections::BTreeMap<String, i64>")]
    pub by_status: sqlx::types::Json<std::collections::BTreeMap<String, i64>>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
    pub tool_error_pct: f64,
    pub iteration_limit_hits: i64,
}

/// Writes over 30 days, counted as decisions.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct Safety {
    pub writes_proposed: i64,
    pub writes_allowed: i64,
    pub writes_declined: i64,
    pub writes_expired: i64,
    pub writes_awaiting: i64,
    pub imports: i64,
    /// The latest 50 runs the provider blocked.
    #[schemars(with = "Vec<BlockedRun>")]
    pub blocked_runs: sqlx::types::Json<Vec<BlockedRun>>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BlockedRun {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub started_at: DateTime<Utc>,
}

/// One tool over 30 days (declined writes not counted).
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct ToolUse {
    pub name: Option<String>,
    pub calls: i64,
    pub error_pct: f64,
    pub median_latency_ms: Option<f64>,
}

/// One of the latest runs of any visitor.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct RecentRun {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub email: Option<String>,
    pub anonymous: bool,
    pub started_at: DateTime<Utc>,
    pub channel: String,
    pub model: String,
    pub status: String,
    pub input_tokens: i64,
    pub cached_tokens: i64,
    pub output_tokens: i64,
    pub cost_micro_usd: i64,
    pub latency_ms: i32,
    pub question: Option<String>,
}

/// A visitor, most recently seen first.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct UserRow {
    pub id: Uuid,
    pub email: Option<String>,
    pub anonymous: bool,
    pub joined: DateTime<Utc>,
    pub last_seen: Option<DateTime<Utc>>,
    pub messages_today: i64,
    pub cost_to_date_micro_usd: i64,
    pub blocked: bool,
}

/// Runs by coarse place (one decimal of a degree), when the edge supplied it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, schemars::JsonSchema)]
pub struct GeoPoint {
    pub lat: f64,
    pub lon: f64,
    pub country: Option<String>,
    pub runs: i64,
}

/// A dollar amount of the settings in micro-dollars.
fn micro_usd(usd: f64) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let micro = (usd * 1e6).round() as i64;
    micro
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
    let budget = budget_panel(&mut *db, today, micro_usd(daily_budget_usd)).await?;

    // 2. Traffic.
    let traffic: Traffic = sqlx::query_as(
        "SELECT
            (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date) AS active_today,
            (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date - 6) AS active_7_days,
            (SELECT count(DISTINCT owner_id) FROM trace_runs WHERE started_at >= $1::date - 29) AS active_30_days,
            (SELECT count(*) FROM users WHERE is_anonymous) AS anonymous,
            (SELECT count(*) FROM users WHERE NOT is_anonymous) AS signed_in,
            (SELECT CASE WHEN count(*) = 0 THEN 0
                    ELSE round(100.0 * count(*) FILTER (WHERE NOT is_anonymous) / count(*), 1) END
             FROM users WHERE created_at >= $1::date - 29)::float8 AS conversion_pct,
            (SELECT count(*) FROM (SELECT owner_id FROM trace_runs WHERE started_at >= $1::date - 29
               GROUP BY owner_id HAVING count(DISTINCT started_at::date) >= 2) AS r) AS returning",
    )
    .bind(today)
    .fetch_one(&mut *db)
    .await?;

    // 3. Health, over 30 days.
    let health = health_panel(&mut *db, today).await?;

    // 4. Safety: writes counted as decisions. A proposal is an inline decision (no `expired` key)
    //    or a suspension (`suspended`); the decision after a suspension carries `expired`.
    let safety: Safety = sqlx::query_as(
        "WITH c AS (SELECT e.* FROM trace_events e JOIN trace_runs r ON r.id = e.run_id AND r.owner_id = e.owner_id
                    WHERE e.type = $2::trace_event_type AND r.started_at >= $1::date - 29)
         SELECT
            (SELECT count(*) FROM c WHERE c.payload ? $4 OR NOT (c.payload ? $5)) AS writes_proposed,
            (SELECT count(*) FROM c WHERE c.payload->$3 = 'true'::jsonb) AS writes_allowed,
            (SELECT count(*) FROM c WHERE c.payload->$3 = 'false'::jsonb
                AND coalesce(c.payload->$5, 'false'::jsonb) = 'false'::jsonb) AS writes_declined,
            (SELECT count(*) FROM c WHERE c.payload->$5 = 'true'::jsonb) AS writes_expired,
            (SELECT count(*) FROM suspended_turns WHERE status = 'pending' AND expires_at > now()) AS writes_awaiting,
            (SELECT count(*) FROM import_batches WHERE status = 'committed' AND imported_at >= $1::date - 29) AS imports,
            coalesce((SELECT json_agg(json_build_object('id', id, 'owner_id', owner_id,
                              'started_at', started_at) ORDER BY started_at DESC)
                      FROM (SELECT id, owner_id, started_at FROM trace_runs WHERE status = 'blocked'
                            ORDER BY started_at DESC LIMIT 50) AS b), '[]'::json)::jsonb AS blocked_runs",
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
    let recent_runs: Vec<RecentRun> = sqlx::query_as(
        "SELECT r.id, r.owner_id, u.email, u.is_anonymous AS anonymous, r.started_at, r.channel::text AS channel,
                r.model, r.status::text AS status, r.input_tokens, r.cached_tokens, r.output_tokens,
                (r.cost_usd_est * 1000000)::bigint AS cost_micro_usd, r.latency_ms, r.question
         FROM trace_runs r JOIN users u ON u.id = r.owner_id
         WHERE r.parent_run_id IS NULL
         ORDER BY r.started_at DESC, r.id LIMIT 100",
    )
    .fetch_all(&mut *db)
    .await?;

    // 7. Users.
    let users: Vec<UserRow> = sqlx::query_as(
        "SELECT u.id, u.email, u.is_anonymous AS anonymous, u.created_at AS joined, u.last_seen_at AS last_seen,
                coalesce((SELECT m.count FROM owner_daily_messages m
                          WHERE m.owner_id = u.id AND m.day = $1::date), 0)::bigint AS messages_today,
                coalesce((SELECT (sum(cost_usd_est) * 1000000)::bigint FROM trace_runs r WHERE r.owner_id = u.id), 0)
                    AS cost_to_date_micro_usd,
                u.blocked_at IS NOT NULL AS blocked
         FROM users u ORDER BY u.last_seen_at DESC, u.id LIMIT 200",
    )
    .bind(today)
    .fetch_all(&mut *db)
    .await?;

    // 8. Coarse geography, when the edge supplied it.
    let geo: Vec<GeoPoint> = sqlx::query_as(
        "SELECT round(geo_lat::numeric, 1)::float8 AS lat, round(geo_lon::numeric, 1)::float8 AS lon,
                geo_country AS country, count(*) AS runs
         FROM trace_runs WHERE geo_lat IS NOT NULL AND geo_lon IS NOT NULL AND started_at >= $1::date - 29
         GROUP BY 1, 2, 3",
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
        tools,
        recent_runs,
        users,
        geo,
    })
}

/// Runs over 30 days: how many, by status, their latency, tool errors and iteration limits.
async fn health_panel(db: &mut sqlx::PgConnection, today: NaiveDate) -> Result<Health, OperatorError> {
    sqlx::query_as(
        "WITH r AS (SELECT * FROM trace_runs WHERE started_at >= $1::date - 29),
              top AS (SELECT * FROM r WHERE parent_run_id IS NULL)
         SELECT
            (SELECT count(*) FROM top) AS runs,
            coalesce((SELECT jsonb_object_agg(status, n) FROM
                (SELECT status::text AS status, count(*) AS n FROM top GROUP BY status) AS s), '{}'::jsonb) AS by_status,
            (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM top WHERE finished_at IS NOT NULL)
                AS latency_p50_ms,
            (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) FROM top WHERE finished_at IS NOT NULL)
                AS latency_p95_ms,
            (SELECT CASE WHEN count(*) = 0 THEN 0 ELSE
                 round(100.0 * count(*) FILTER (WHERE (e.payload->>$2)::boolean) / count(*), 1) END
             FROM trace_events e JOIN r ON r.id = e.run_id AND r.owner_id = e.owner_id
             WHERE e.type = $3::trace_event_type)::float8 AS tool_error_pct,
            (SELECT count(*) FROM trace_events e JOIN r ON r.id = e.run_id AND r.owner_id = e.owner_id
             WHERE e.type = $4::trace_event_type AND e.payload->>$5 = $6) AS iteration_limit_hits",
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
async fn tools_panel(db: &mut sqlx::PgConnection, today: NaiveDate) -> Result<Vec<ToolUse>, OperatorError> {
    sqlx::query_as(
        "SELECT e.payload->>$2 AS name, count(*) AS calls,
                round(100.0 * count(*) FILTER (WHERE (e.payload->>$3)::boolean) / count(*), 1)::float8 AS error_pct,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY e.latency_ms) AS median_latency_ms
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
    daily_cap_micro_usd: i64,
) -> Result<BudgetPanel, OperatorError> {
    let month_start = NaiveDate::from_ymd_opt(today.year(), today.month(), 1).unwrap_or(today);
    let days_in_month = month_start
        .checked_add_months(chrono::Months::new(1))
        .map_or(30, |next| (next - month_start).num_days());

    // Spend per UTC day over the last 30 days (days without runs filled with 0).
    let last_30_days: Vec<DaySpend> = sqlx::query_as(
        "SELECT d::date AS day, (coalesce(sum(r.cost_usd_est), 0) * 1000000)::bigint AS micro_usd
         FROM generate_series($1::date - 29, $1::date, interval '1 day') AS d
         LEFT JOIN trace_runs r ON r.started_at >= d AND r.started_at < d + interval '1 day'
         GROUP BY d ORDER BY d",
    )
    .bind(today)
    .fetch_all(&mut *db)
    .await?;
    let month_to_date: i64 = sqlx::query_scalar(
        "SELECT (coalesce(sum(cost_usd_est), 0) * 1000000)::bigint FROM trace_runs WHERE started_at >= $1::date",
    )
    .bind(month_start)
    .fetch_one(&mut *db)
    .await?;
    let today_micro_usd = last_30_days.last().map_or(0, |d| d.micro_usd);
    // What the gate and each model call count: settled today, and held by calls in flight.
    let (settled, held): (i64, i64) = sqlx::query_as(
        "SELECT coalesce(max(settled_micro_usd), 0), coalesce(max(reserved_micro_usd), 0)
         FROM budget_days WHERE day = $1",
    )
    .bind(today)
    .fetch_one(&mut *db)
    .await?;
    let paused: bool = sqlx::query_scalar(
        "SELECT coalesce((SELECT value FROM operator_flags WHERE key = 'live_chat_paused'), false)",
    )
    .fetch_one(&mut *db)
    .await?;
    let elapsed = i64::from(today.day());
    let projected = month_to_date
        .saturating_mul(days_in_month)
        .checked_div(elapsed)
        .unwrap_or(month_to_date)
        .max(month_to_date);
    let state = if paused {
        BudgetState::Paused
    } else if settled.saturating_add(held) >= daily_cap_micro_usd {
        BudgetState::Tripped
    } else {
        BudgetState::Ok
    };
    Ok(BudgetPanel {
        today_micro_usd,
        budget_settled_micro_usd: settled,
        in_flight_micro_usd: held,
        month_to_date_micro_usd: month_to_date,
        projected_month_micro_usd: projected,
        daily_cap_micro_usd,
        monthly_ceiling_micro_usd: daily_cap_micro_usd.saturating_mul(days_in_month),
        state,
        paused,
        last_30_days,
    })
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
