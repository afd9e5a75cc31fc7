//! After the load: the database read (as the owner role, past row-level security) for what the
//! visitors did — every admitted message has its finished run, every allowed write exactly one
//! result and every declined one none, no visitor shown or given another's rows, no suspended turn
//! left claimed.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

use crate::traffic::{Traffic, WriteKind};

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("reading the database for the checks: {0}")]
    Database(#[from] sqlx::Error),
}

/// What the database says of the load. [`Checks::passed`] when `problems` is empty.
#[derive(Debug, Default, Serialize)]
pub struct Checks {
    /// Messages admitted (answered with a `turn_end`), and how many of their runs are missing or
    /// still `running`.
    pub admitted: usize,
    pub runs_missing: usize,
    pub runs_unfinished: usize,
    /// Runs of the visitors nobody saw a `turn_end` for (only a message whose stream broke may
    /// have one).
    pub runs_unseen: usize,
    pub writes_allowed: usize,
    pub writes_declined: usize,
    /// Writes whose confirmation's answer never came back whole: each may have run, at most once.
    pub writes_unsettled: usize,
    /// Allowed writes with no result, writes with more than one, declined writes with any.
    pub writes_lost: usize,
    pub writes_doubled: usize,
    pub writes_declined_but_done: usize,
    /// Rows of one visitor's writes under another owner, and runs, conversations or tags of
    /// another visitor shown in a visitor's pages.
    pub cross_visitor_writes: usize,
    pub cross_visitor_reads: usize,
    /// Suspended turns of the visitors still claimed (or applied and not cleared) after the load,
    /// and still pending (a write never answered).
    pub suspended_claimed: i64,
    pub suspended_pending: i64,
    /// Each failed check, in words.
    pub problems: Vec<String>,
    /// What a disruption (a database restart) explains, in words: requests it cut may leave a
    /// run `running` (the nightly reaper's abandoned-runs step ends it), a write's confirmation
    /// unanswered, or a claim held (its lease lets the next confirm take it over; the reaper
    /// clears it when it expires). Never a write done twice or a row shown to another visitor.
    pub explained: Vec<String>,
}

impl Checks {
    #[must_use]
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Reads the database for the visitors of `traffic`. `pool` connects as the owner role.
pub async fn check(pool: &PgPool, traffic: &Traffic) -> Result<Checks, CheckError> {
    let mut checks = Checks::default();
    let owners: Vec<Uuid> = traffic.visitors.iter().filter_map(|v| v.owner).collect();
    let runs: Runs = sqlx::query_as::<_, (Uuid, Uuid, String)>(
        "SELECT id, owner_id, status::text FROM trace_runs WHERE owner_id = ANY($1)",
    )
    .bind(&owners)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|(id, owner, status)| (id, (owner, status)))
    .collect();
    check_runs(&mut checks, traffic, &runs);
    check_writes(&mut checks, traffic, pool).await?;
    check_reads(&mut checks, traffic, pool, &owners, &runs).await?;
    check_suspended(&mut checks, traffic, pool, &owners).await?;
    Ok(checks)
}

/// Each run of the visitors: its owner and status.
type Runs = BTreeMap<Uuid, (Uuid, String)>;

/// Every admitted message's run exists, finished, under its visitor; no other run exists but for a
/// stream that broke off.
fn check_runs(checks: &mut Checks, traffic: &Traffic, runs: &Runs) {
    let seen: BTreeSet<Uuid> = traffic
        .visitors
        .iter()
        .flat_map(|v| v.runs.iter().copied())
        .collect();
    checks.admitted = traffic.visitors.iter().map(|v| v.runs.len()).sum();
    for visitor in &traffic.visitors {
        for run in &visitor.runs {
            match runs.get(run) {
                Some((owner, _)) if Some(*owner) != visitor.owner => checks.runs_missing += 1,
                Some((_, status)) if status == "running" => checks.runs_unfinished += 1,
                Some(_) => {}
                None => checks.runs_missing += 1,
            }
        }
    }
    checks.runs_unseen = runs.keys().filter(|id| !seen.contains(id)).count();
    let unended: u64 = traffic.visitors.iter().map(|v| v.unended).sum();
    if checks.runs_missing > 0 {
        checks.problems.push(format!(
            "{} admitted messages have no run of their visitor",
            checks.runs_missing
        ));
    }
    let cut = disrupted(traffic);
    if checks.runs_unfinished > 0 {
        let said = format!(
            "{} runs are still `running` after their turn ended",
            checks.runs_unfinished
        );
        explain_or_fail(
            checks,
            u64::try_from(checks.runs_unfinished).unwrap_or(u64::MAX) <= cut,
            said,
        );
    }
    let unseen = u64::try_from(checks.runs_unseen).unwrap_or(u64::MAX);
    if unseen > unended {
        let said = format!(
            "{} runs exist that no answer reported ({unended} streams broke off)",
            checks.runs_unseen
        );
        explain_or_fail(checks, unseen <= unended + cut, said);
    }
}

/// Exactly what was allowed was written, once, under the visitor that asked; nothing declined.
async fn check_writes(checks: &mut Checks, traffic: &Traffic, pool: &PgPool) -> Result<(), CheckError> {
    let rules = counts(
        pool,
        "SELECT owner_id, pattern, count(*) FROM rules WHERE pattern LIKE 'LOAD-V%' GROUP BY 1, 2",
    )
    .await?;
    let imported = counts(
        pool,
        "SELECT owner_id, split_part(raw_description, ' ', 1), count(*) FROM transactions
         WHERE raw_description LIKE 'LOAD-V%' GROUP BY 1, 2",
    )
    .await?;
    let mut asked = BTreeSet::new();
    for visitor in &traffic.visitors {
        for write in &visitor.writes {
            asked.insert(write.tag.clone());
            let (found, expected) = match write.kind {
                WriteKind::Rule => (&rules, 1),
                WriteKind::Import { rows } => (&imported, i64::try_from(rows).unwrap_or(i64::MAX)),
            };
            let done: i64 = found
                .iter()
                .filter(|((_, tag), _)| *tag == write.tag)
                .map(|(_, n)| n)
                .sum();
            let elsewhere = found
                .iter()
                .any(|((owner, tag), _)| *tag == write.tag && Some(*owner) != visitor.owner);
            if elsewhere {
                checks.cross_visitor_writes += 1;
                checks
                    .problems
                    .push(format!("{} was written under another owner", write.tag));
            }
            match (write.allowed, write.settled) {
                (_, false) => checks.writes_unsettled += 1,
                (true, true) => checks.writes_allowed += 1,
                (false, true) => checks.writes_declined += 1,
            }
            if done > expected {
                checks.writes_doubled += 1;
                checks
                    .problems
                    .push(format!("{} ran more than once ({done} rows)", write.tag));
            } else if !write.allowed && done > 0 {
                checks.writes_declined_but_done += 1;
                checks
                    .problems
                    .push(format!("{} was declined and still ran", write.tag));
            } else if write.allowed && write.settled && done != expected {
                checks.writes_lost += 1;
                checks.problems.push(format!(
                    "{} was allowed and answered, but wrote {done} of {expected} rows",
                    write.tag
                ));
            }
        }
    }
    for (_, tag) in rules.keys().chain(imported.keys()) {
        if !asked.contains(tag) {
            checks
                .problems
                .push(format!("{tag} was written, but no visitor asked for it"));
        }
    }
    Ok(())
}

/// Nobody was shown another's runs, conversations or rows.
async fn check_reads(
    checks: &mut Checks,
    traffic: &Traffic,
    pool: &PgPool,
    owners: &[Uuid],
    runs: &Runs,
) -> Result<(), CheckError> {
    let conversations: BTreeMap<Uuid, Uuid> =
        sqlx::query_as::<_, (Uuid, Uuid)>("SELECT id, owner_id FROM conversations WHERE owner_id = ANY($1)")
            .bind(owners)
            .fetch_all(pool)
            .await?
            .into_iter()
            .collect();
    for visitor in &traffic.visitors {
        let owner = visitor.owner.as_ref();
        let foreign_runs = visitor
            .listed_runs
            .iter()
            .filter(|id| runs.get(*id).map(|(o, _)| o) != owner)
            .count();
        let foreign_conversations = visitor
            .listed_conversations
            .iter()
            .filter(|id| conversations.get(*id) != owner)
            .count();
        let shown = foreign_runs + foreign_conversations + visitor.foreign_tags.len();
        if shown > 0 {
            checks.cross_visitor_reads += shown;
            checks.problems.push(format!(
                "visitor {} was shown {foreign_runs} runs, {foreign_conversations} conversations and \
                 {} tags ({:?}) of someone else",
                visitor.index,
                visitor.foreign_tags.len(),
                visitor.foreign_tags
            ));
        }
    }
    Ok(())
}

/// No suspended turn is left claimed; pending ones only for confirmations never answered.
async fn check_suspended(
    checks: &mut Checks,
    traffic: &Traffic,
    pool: &PgPool,
    owners: &[Uuid],
) -> Result<(), CheckError> {
    let suspended: Vec<(String, i64)> = sqlx::query_as(
        "SELECT status::text, count(*) FROM suspended_turns WHERE owner_id = ANY($1) GROUP BY 1",
    )
    .bind(owners)
    .fetch_all(pool)
    .await?;
    for (status, count) in suspended {
        if status == "pending" {
            checks.suspended_pending += count;
        } else {
            checks.suspended_claimed += count;
        }
    }
    let cut = i64::try_from(disrupted(traffic)).unwrap_or(i64::MAX);
    if checks.suspended_claimed > 0 {
        let said = format!(
            "{} suspended turns are still claimed after their confirmations ended",
            checks.suspended_claimed
        );
        explain_or_fail(checks, checks.suspended_claimed <= cut, said);
    }
    let unsettled = i64::try_from(checks.writes_unsettled).unwrap_or(i64::MAX);
    if checks.suspended_pending > unsettled {
        let said = format!(
            "{} suspended turns wait for a confirmation, but only {} confirmations went unanswered",
            checks.suspended_pending, checks.writes_unsettled
        );
        explain_or_fail(checks, checks.suspended_pending <= unsettled + cut, said);
    }
    Ok(())
}

/// Requests a disruption cut (none without one).
fn disrupted(traffic: &Traffic) -> u64 {
    traffic.tally.disrupted.values().sum()
}

/// `said` as explained by the disruption when `explained` holds, else as a failed check.
fn explain_or_fail(checks: &mut Checks, explained: bool, said: String) {
    if explained {
        checks
            .explained
            .push(format!("{said}: requests the disruption cut"));
    } else {
        checks.problems.push(said);
    }
}

/// `(owner, tag) → count` from a query selecting those three columns.
async fn counts(pool: &PgPool, sql: &'static str) -> Result<BTreeMap<(Uuid, String), i64>, sqlx::Error> {
    Ok(sqlx::query_as::<_, (Uuid, String, i64)>(sql)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|(owner, tag, count)| ((owner, tag), count))
        .collect())
}
