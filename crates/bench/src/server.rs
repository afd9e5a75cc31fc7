//! Counts no noisy machine can blur, read from the server around N flows: transactions that
//! wrote (the transaction ids they consumed), all commits (`pg_stat_database`), statements
//! (`pg_stat_statements`, when the server loads it), and bytes of write-ahead log (the whole
//! server's: run the flows on a server of their own).

use std::time::Duration;

use sqlx::PgPool;

/// Per flow, over `flows` flows.
#[derive(Debug, Clone, Copy)]
pub struct PerFlow {
    pub flows: usize,
    pub writing: f64,
    pub commits: f64,
    /// Every statement the server ran, those inside functions included (`pg_stat_statements` with
    /// `track = all`, as `cargo xtask bench` runs it); `None` when the server does not load it.
    pub statements: Option<f64>,
    /// The statements the client sent (top-level): each is a round trip, but for the `BEGIN` and
    /// tenant that a scoped transaction sends as one.
    pub sent: Option<f64>,
    /// Milliseconds the server spent executing the top-level statements (`pg_stat_statements`).
    pub server_ms: Option<f64>,
    /// CPU milliseconds the database's server processes used (their `/proc` counters: a server
    /// on this machine only), parsing, planning, executing and committing included.
    pub server_cpu_ms: Option<f64>,
    pub wal_bytes: f64,
}

/// The counters before the flows.
#[derive(Debug)]
pub struct Probe {
    commits: i64,
    statements: Option<Statements>,
    xid: i64,
    wal: String,
    cpu: Option<std::collections::HashMap<i32, u64>>,
}

/// The CPU clock ticks each server process serving this database has used, when the server runs
/// on this machine.
async fn server_cpu(pool: &PgPool) -> Option<std::collections::HashMap<i32, u64>> {
    let pids: Vec<i32> =
        sqlx::query_scalar("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
            .fetch_all(pool)
            .await
            .ok()?;
    let mut ticks = std::collections::HashMap::new();
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command name in parentheses: state is field 3, utime 14 and stime 15.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        ticks.insert(
            pid,
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?,
        );
    }
    Some(ticks)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux).
fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// A backend reports its commits to `pg_stat_database` once it has been idle for ten seconds:
/// every reading waits for the pool's connections to report.
const STATS_SETTLE: Duration = Duration::from_secs(11);

/// Whether the server counts statements: the `pg_stat_statements` view is installed in this
/// database and the server preloads its library (the view refuses to answer otherwise).
async fn counts_statements(pool: &PgPool) -> bool {
    sqlx::query("SELECT 1 FROM pg_stat_statements LIMIT 1")
        .fetch_optional(pool)
        .await
        .is_ok()
}

/// Statements of this database so far: all, top-level, and the top-level ones' execution time.
#[derive(Debug, Clone, Copy)]
struct Statements {
    all: i64,
    top: i64,
    ms: f64,
}

/// Commits and (when counted) statements of this database so far, in one statement.
async fn reading(pool: &PgPool, statements: bool) -> (i64, Option<Statements>) {
    tokio::time::sleep(STATS_SETTLE).await;
    if statements {
        let (commits, all, top, ms): (i64, Option<i64>, Option<i64>, Option<f64>) = sqlx::query_as(
            "SELECT xact_commit, s.all_calls, s.top_calls, s.ms
             FROM pg_stat_database d,
                  LATERAL (SELECT sum(calls)::bigint AS all_calls,
                                  (sum(calls) FILTER (WHERE toplevel))::bigint AS top_calls,
                                  sum(total_exec_time) FILTER (WHERE toplevel) AS ms
                           FROM pg_stat_statements WHERE dbid = d.datid) s
             WHERE datname = current_database()",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        let counted = match (all, top, ms) {
            (Some(all), Some(top), Some(ms)) => Some(Statements { all, top, ms }),
            _ => None,
        };
        (commits, counted)
    } else {
        let commits =
            sqlx::query_scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
                .fetch_one(pool)
                .await
                .unwrap();
        (commits, None)
    }
}

/// The transaction id this probe takes, and where the write-ahead log ends.
async fn xid_and_wal(pool: &PgPool) -> (i64, String) {
    sqlx::query_as("SELECT pg_current_xact_id()::text::bigint, pg_current_wal_lsn()::text")
        .fetch_one(pool)
        .await
        .unwrap()
}

impl Probe {
    /// Reads the counters (after the statistics of earlier work have reached the server).
    pub async fn start(pool: &PgPool) -> Self {
        let counted = counts_statements(pool).await;
        // Before the reading, so its own statement falls outside the counts.
        let cpu = server_cpu(pool).await;
        let (commits, statements) = reading(pool, counted).await;
        let (xid, wal) = xid_and_wal(pool).await;
        Self {
            commits,
            statements,
            xid,
            wal,
            cpu,
        }
    }

    /// The counts per flow since [`Probe::start`], over `flows` flows.
    pub async fn per_flow(self, pool: &PgPool, flows: usize) -> PerFlow {
        let (xid_after, wal_after) = xid_and_wal(pool).await;
        let wal_bytes: f64 = sqlx::query_scalar("SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8")
            .bind(&wal_after)
            .bind(&self.wal)
            .fetch_one(pool)
            .await
            .unwrap();
        let (commits, statements) = reading(pool, self.statements.is_some()).await;
        // After the reading, so its own statement falls outside the counts; connections the pool
        // opened meanwhile count whole.
        let cpu_used = self
            .cpu
            .as_ref()
            .zip(server_cpu(pool).await)
            .map(|(before, after)| {
                after
                    .iter()
                    .map(|(pid, ticks)| ticks.saturating_sub(before.get(pid).copied().unwrap_or(0)))
                    .sum::<u64>()
            });
        #[allow(clippy::cast_precision_loss)] // Counts far below 2^52.
        let per = |n: i64| n as f64 / flows as f64;
        // The probes themselves: the second transaction id took one; the first reading, both
        // transaction-id probes and the log difference are a commit and a statement each (a
        // reading never counts itself).
        PerFlow {
            flows,
            writing: per(xid_after - self.xid - 1),
            commits: per(commits - self.commits - 4),
            statements: statements
                .zip(self.statements)
                .map(|(after, before)| per(after.all - before.all - 4)),
            sent: statements
                .zip(self.statements)
                .map(|(after, before)| per(after.top - before.top - 4)),
            server_ms: statements
                .zip(self.statements)
                .map(|(after, before)| (after.ms - before.ms) * per(1)),
            wal_bytes: wal_bytes * per(1),
            server_cpu_ms: cpu_used
                .map(|ticks| per(i64::try_from(ticks).unwrap_or(i64::MAX)) * 1000.0 / ticks_per_second()),
        }
    }
}
