//! The load itself: the plan, the visitors run side by side until the time is up, and what they
//! recorded, merged.

use std::{
    collections::{BTreeMap, BTreeSet},
    net::{IpAddr, Ipv4Addr},
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

/// Timings by route and errors by kind.
#[derive(Debug, Default)]
pub struct Tally {
    pub routes: BTreeMap<&'static str, Vec<Duration>>,
    pub errors: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn timed(&mut self, route: &'static str, took: Duration) {
        self.routes.entry(route).or_default().push(took);
    }

    pub(crate) fn error(&mut self, route: &'static str, kind: impl std::fmt::Display) {
        *self.errors.entry(format!("{route}: {kind}")).or_default() += 1;
    }

    fn merge(&mut self, other: Self) {
        for (route, samples) in other.routes {
            self.routes.entry(route).or_default().extend(samples);
        }
        for (kind, count) in other.errors {
            *self.errors.entry(kind).or_default() += count;
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
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..plan.visitors {
        let plan = plan.clone();
        tasks.spawn(async move { visitor::visit(&plan, index, deadline).await });
    }
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
    Traffic {
        visitors,
        tally,
        elapsed: started.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
