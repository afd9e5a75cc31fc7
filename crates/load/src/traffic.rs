//! The load itself: the plan, the visitors run side by side until the time is up, and what they
//! recorded, merged.

use std::{
    collections::{BTreeMap, BTreeSet},
    net::{IpAddr, Ipv4Addr},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use serde::Serialize;
use uuid::Uuid;

use crate::visitor;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The site, `http://HOST:PORT` without a trailing slash.
    pub base: String,
    /// The `Origin` the site accepts writes from (its `SITE_URL`).
    pub origin: String,
    /// Visitors at once; each sends its next request when its last one is answered.
    pub visitors: usize,
    /// How long new work starts; work under way then is finished (and counted) before the end.
    pub duration: Duration,
    /// The longest any one request may take before it counts as an error.
    pub request_timeout: Duration,
    /// A command run once during the load (a database restart), and when.
    pub disruption: Option<Disruption>,
}

/// A command run during the load to disturb it, `after` its start: `pg_ctl restart -m fast` for
/// `cargo xtask load --restart-db-after`.
#[derive(Debug, Clone)]
pub struct Disruption {
    pub after: Duration,
    pub argv: Vec<String>,
}

/// Requests that fail this long after a disruption ended still count as its doing (a pool notices
/// a dead connection only when it next uses it).
const GRACE: Duration = Duration::from_secs(2);

/// When the disruption ran, in milliseconds from the load's start (`u64::MAX`: not yet), and the
/// first success of a request sent after it ended.
#[derive(Debug)]
pub struct Window {
    pub started_ms: AtomicU64,
    pub ended_ms: AtomicU64,
    pub recovered_ms: AtomicU64,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            started_ms: AtomicU64::new(u64::MAX),
            ended_ms: AtomicU64::new(u64::MAX),
            recovered_ms: AtomicU64::new(u64::MAX),
        }
    }
}

impl Window {
    /// Whether a request from `from_ms` to `to_ms` met the disruption (or its grace after).
    pub(crate) fn overlaps(&self, from_ms: u64, to_ms: u64) -> bool {
        let started = self.started_ms.load(Ordering::SeqCst);
        if started == u64::MAX {
            return false;
        }
        let ended = self.ended_ms.load(Ordering::SeqCst);
        let until = ended.saturating_add(u64::try_from(GRACE.as_millis()).unwrap_or(u64::MAX));
        from_ms <= until && to_ms >= started
    }

    /// Notes a success of a request sent at `from_ms`, answered at `to_ms`.
    pub(crate) fn succeeded(&self, from_ms: u64, to_ms: u64) {
        let ended = self.ended_ms.load(Ordering::SeqCst);
        if ended != u64::MAX && from_ms >= ended {
            self.recovered_ms.fetch_min(to_ms - ended, Ordering::SeqCst);
        }
    }
}

/// What the disruption did.
#[derive(Debug, Clone, Serialize)]
pub struct DisruptionReport {
    pub command: String,
    /// From the load's start, in milliseconds.
    pub started_ms: u64,
    pub ended_ms: u64,
    /// The command's exit, and the end of its output.
    pub outcome: String,
    /// From the disruption's end to the first answer of a request sent after it.
    pub recovered_after_ms: Option<u64>,
}

/// The loopback address of visitor `index`: 127.0.x.y from 127.0.0.2 on, so each visitor is an
/// address of its own to the site's per-address quotas (Linux routes all of 127.0.0.0/8 to lo).
#[must_use]
pub fn address(index: usize) -> IpAddr {
    let n = index + 2;
    let [.., x, y] = u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes();
    IpAddr::V4(Ipv4Addr::new(127, 0, x, y))
}

/// A write the load asked for, tagged so that the database can be searched for it.
#[derive(Debug, Clone, Serialize)]
pub struct Write {
    /// Text no other write of the run contains: a rule's pattern, an imported row's description.
    pub tag: String,
    pub kind: WriteKind,
    /// The decision sent in the confirmation.
    pub allowed: bool,
    /// Whether the confirmation's answer came back whole. Otherwise nobody knows whether the write
    /// ran — only that it must have run at most once.
    pub settled: bool,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// `set_category_rule`: one row of `rules` whose pattern is the tag.
    Rule,
    /// `import_statement_csv`: `rows` rows of `transactions` whose description holds the tag.
    Import { rows: u64 },
}

/// What one visitor did and saw.
#[derive(Debug, Clone, Serialize)]
pub struct VisitorLog {
    pub index: usize,
    /// Its ledger's owner, from `GET /api/session` (`None` when it never got a session).
    pub owner: Option<Uuid>,
    /// The run of every message the site admitted, from its `turn_end`.
    pub runs: Vec<Uuid>,
    /// Messages answered `200` whose stream ended without a `turn_end`.
    pub unended: u64,
    pub writes: Vec<Write>,
    /// Every run and conversation its listings showed it.
    pub listed_runs: BTreeSet<Uuid>,
    pub listed_conversations: BTreeSet<Uuid>,
    /// Tags of other visitors' writes seen in its pages (there must be none).
    pub foreign_tags: BTreeSet<String>,
}

impl VisitorLog {
    pub(crate) fn new(index: usize) -> Self {
        Self {
            index,
            owner: None,
            runs: Vec::new(),
            unended: 0,
            writes: Vec::new(),
            listed_runs: BTreeSet::new(),
            listed_conversations: BTreeSet::new(),
            foreign_tags: BTreeSet::new(),
        }
    }
}

/// Timings by route and errors by kind: those the disruption explains apart from the rest.
#[derive(Debug, Default)]
pub struct Tally {
    pub routes: BTreeMap<&'static str, Vec<Duration>>,
    pub errors: BTreeMap<String, u64>,
    pub disrupted: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn timed(&mut self, route: &'static str, took: Duration) {
        self.routes.entry(route).or_default().push(took);
    }

    pub(crate) fn error(&mut self, route: &'static str, kind: impl std::fmt::Display) {
        *self.errors.entry(format!("{route}: {kind}")).or_default() += 1;
    }

    pub(crate) fn disrupted(&mut self, route: &'static str, kind: impl std::fmt::Display) {
        *self.disrupted.entry(format!("{route}: {kind}")).or_default() += 1;
    }

    fn merge(&mut self, other: Self) {
        for (route, samples) in other.routes {
            self.routes.entry(route).or_default().extend(samples);
        }
        for (kind, count) in other.errors {
            *self.errors.entry(kind).or_default() += count;
        }
        for (kind, count) in other.disrupted {
            *self.disrupted.entry(kind).or_default() += count;
        }
    }
}

/// Everything the visitors did, merged.
#[derive(Debug)]
pub struct Traffic {
    pub visitors: Vec<VisitorLog>,
    pub tally: Tally,
    /// From the first request to the last answer.
    pub elapsed: Duration,
    pub disruption: Option<DisruptionReport>,
}

/// One route's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RouteFigures {
    pub route: &'static str,
    pub requests: usize,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Traffic {
    /// Requests answered (with any status) per second, all routes together.
    #[must_use]
    pub fn requests_per_second(&self) -> f64 {
        let answered: usize = self.tally.routes.values().map(Vec::len).sum();
        per_second(answered, self.elapsed)
    }

    /// Each route's count, rate and percentiles, in route order.
    #[must_use]
    pub fn routes(&self) -> Vec<RouteFigures> {
        self.tally
            .routes
            .iter()
            .filter(|(_, samples)| !samples.is_empty())
            .map(|(route, samples)| {
                let ms = kakeibo_bench::sorted_ms(samples);
                RouteFigures {
                    route,
                    requests: samples.len(),
                    per_second: per_second(samples.len(), self.elapsed),
                    p50_ms: kakeibo_bench::percentile(&ms, 50.0),
                    p99_ms: kakeibo_bench::percentile(&ms, 99.0),
                    max_ms: ms.last().copied().unwrap_or_default(),
                }
            })
            .collect()
    }
}

fn per_second(count: usize, elapsed: Duration) -> f64 {
    #[allow(clippy::cast_precision_loss)] // Request counts are far below 2^52.
    let count = count as f64;
    count / elapsed.as_secs_f64().max(f64::EPSILON)
}

/// Runs `plan.visitors` visitors until `plan.duration` has passed and each has finished what it
/// was doing; `progress` hears a line every few seconds.
pub async fn drive(plan: &Plan, progress: &(dyn Fn(&str) + Sync)) -> Traffic {
    let started = Instant::now();
    let deadline = started + plan.duration;
    let window = Arc::new(Window::default());
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..plan.visitors {
        let (plan, window) = (plan.clone(), Arc::clone(&window));
        tasks.spawn(async move { visitor::visit(&plan, index, deadline, started, &window).await });
    }
    let disruption = plan
        .disruption
        .clone()
        .map(|d| tokio::spawn(disrupt(d, started, Arc::clone(&window))));
    let mut visitors = Vec::with_capacity(plan.visitors);
    let mut tally = Tally::default();
    let mut ticker = tokio::time::interval(Duration::from_secs(10));
    ticker.tick().await;
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                Some(Ok((log, visitor_tally))) => {
                    visitors.push(log);
                    tally.merge(visitor_tally);
                }
                // A visitor that panicked is a bug of this program, said plainly.
                Some(Err(e)) => tally.error("load", format!("a visitor's task failed: {e}")),
                None => break,
            },
            _ = ticker.tick() => progress(&format!(
                "{:>4.0} s: {} of {} visitors still at work",
                started.elapsed().as_secs_f64(),
                tasks.len(),
                plan.visitors
            )),
        }
    }
    visitors.sort_by_key(|v| v.index);
    let disruption = match disruption {
        Some(task) => match task.await {
            Ok(mut report) => {
                let recovered = window.recovered_ms.load(Ordering::SeqCst);
                report.recovered_after_ms = (recovered != u64::MAX).then_some(recovered);
                Some(report)
            }
            Err(e) => {
                tally.error("load", format!("the disruption's task failed: {e}"));
                None
            }
        },
        None => None,
    };
    Traffic {
        visitors,
        tally,
        elapsed: started.elapsed(),
        disruption,
    }
}

/// Milliseconds since `start`.
pub(crate) fn since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Runs the disruption's command when its time comes, marking the window around it.
async fn disrupt(disruption: Disruption, start: Instant, window: Arc<Window>) -> DisruptionReport {
    tokio::time::sleep(disruption.after).await;
    let command = disruption.argv.join(" ");
    window.started_ms.store(since(start), Ordering::SeqCst);
    let argv = disruption.argv.clone();
    // No pipes: a server the command starts would hold them open, and reading them never ends.
    let outcome = tokio::task::spawn_blocking(move || {
        let (program, rest) = argv.split_first()?;
        Some(
            std::process::Command::new(program)
                .args(rest)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status(),
        )
    })
    .await;
    window.ended_ms.store(since(start), Ordering::SeqCst);
    let outcome = match outcome {
        Ok(Some(Ok(status))) => status.to_string(),
        Ok(Some(Err(e))) => format!("could not run: {e}"),
        Ok(None) => "no command".to_owned(),
        Err(e) => format!("its task failed: {e}"),
    };
    DisruptionReport {
        command,
        started_ms: window.started_ms.load(Ordering::SeqCst),
        ended_ms: window.ended_ms.load(Ordering::SeqCst),
        outcome,
        recovered_after_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disruption_explains_what_met_it_and_its_grace_only() {
        let window = Window::default();
        assert!(!window.overlaps(0, u64::MAX), "nothing ran yet");
        window.started_ms.store(10_000, Ordering::SeqCst);
        assert!(window.overlaps(9_000, 10_001), "under way: open-ended");
        assert!(window.overlaps(30_000, 30_100), "under way: open-ended");
        window.ended_ms.store(11_000, Ordering::SeqCst);
        assert!(!window.overlaps(5_000, 9_999), "over before it began");
        assert!(window.overlaps(9_000, 10_500));
        assert!(window.overlaps(12_900, 13_000), "within the grace");
        assert!(!window.overlaps(13_001, 13_100), "after the grace");
        window.succeeded(10_500, 11_200);
        assert_eq!(
            window.recovered_ms.load(Ordering::SeqCst),
            u64::MAX,
            "sent before it ended"
        );
        window.succeeded(11_300, 11_900);
        window.succeeded(11_100, 12_500);
        assert_eq!(
            window.recovered_ms.load(Ordering::SeqCst),
            900,
            "the first answer after it"
        );
    }

    #[test]
    fn each_visitor_has_a_loopback_address_of_its_own() {
        assert_eq!(address(0), IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
        assert_eq!(address(253), IpAddr::V4(Ipv4Addr::new(127, 0, 0, 255)));
        assert_eq!(address(254), IpAddr::V4(Ipv4Addr::new(127, 0, 1, 0)));
        let all: BTreeSet<IpAddr> = (0..1000).map(address).collect();
        assert_eq!(all.len(), 1000);
        assert!(all.iter().all(IpAddr::is_loopback));
    }
}
