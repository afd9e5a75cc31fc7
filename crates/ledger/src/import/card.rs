//! A stored plan in one sentence, for the card a person answers before the commit: what is
//! added, over which days, how much in and out, into which account — no ids.

use chrono::{Datelike, NaiveDate};
use sqlx::PgConnection;
use uuid::Uuid;

use super::plan::{Plan, load_plan};
use crate::{error::LedgerError, money::Money, owner::OwnerId};

impl Plan {
    /// How many rows of earlier statements the bank's corrections take out.
    #[must_use]
    pub fn corrections_to_apply(&self) -> usize {
        self.corrections
            .iter()
            .filter(|c| c.transaction.is_some())
            .count()
    }

    /// "Add 12 rows (1–28 Jul 2025; in ₹96,299.00, out ₹38,324.65) to Checking (INR); 3 already
    /// in the ledger are skipped." A new account says so, with its kind.
    #[must_use]
    pub fn in_words(&self) -> String {
        let rows = self.rows_to_add();
        let duplicates = self.lines.duplicates;
        let into = self
            .accounts
            .iter()
            .map(|a| {
                if a.exists {
                    format!("{} ({})", a.name, a.currency)
                } else {
                    format!("a new {} account {} ({})", a.kind.as_str(), a.name, a.currency)
                }
            })
            .collect::<Vec<_>>()
            .join(" and ");
        let into = if into.is_empty() {
            String::new()
        } else {
            format!(" to {into}")
        };
        let out = self.corrections_to_apply();
        let corrected = match out {
            0 => String::new(),
            n => format!(
                "; the bank's corrections take out {n} {} of earlier statements",
                rows_word(n)
            ),
        };
        if rows == 0 {
            return match duplicates {
                0 => format!(
                    "Add nothing from {}: it has no rows to add{corrected}",
                    self.filename
                ),
                n => format!(
                    "Add nothing from {}: its {n} {} already in the ledger{corrected}",
                    self.filename,
                    rows_word(n)
                ),
            };
        }
        let mut facts = Vec::new();
        if let Some((from, to)) = self.summary.dates {
            facts.push(days(from, to));
        }
        for (currency, (inflow, outflow)) in &self.summary.flows {
            let mut flow = Vec::new();
            if *inflow != 0 {
                flow.push(format!("in {}", Money::new(*inflow, *currency).format()));
            }
            if *outflow != 0 {
                flow.push(format!(
                    "out {}",
                    Money::new(outflow.saturating_neg(), *currency).format()
                ));
            }
            if !flow.is_empty() {
                facts.push(flow.join(", "));
            }
        }
        let facts = if facts.is_empty() {
            String::new()
        } else {
            format!(" ({})", facts.join("; "))
        };
        let skipped = match duplicates {
            0 => String::new(),
            n => format!(
                "; {n} already in the ledger {} skipped",
                if n == 1 { "is" } else { "are" }
            ),
        };
        let taken = self
            .format
            .taken
            .iter()
            .map(super::TakenFigure::in_words)
            .collect::<Vec<_>>();
        let taken = if taken.is_empty() {
            String::new()
        } else {
            format!(
                "; taken in on your word though the balance column disagrees: {}",
                taken.join(", ")
            )
        };
        format!(
            "Add {rows} {}{facts}{into}{skipped}{taken}{corrected}",
            rows_word(rows)
        )
    }
}

fn rows_word(n: usize) -> &'static str {
    if n == 1 { "row" } else { "rows" }
}

/// A span of days as a person writes it: "3 Jul 2025", "1–28 Jul 2025", "28 Jun – 3 Jul 2025",
/// "28 Dec 2024 – 3 Jan 2025".
fn days(from: NaiveDate, to: NaiveDate) -> String {
    if from == to {
        from.format("%-d %b %Y").to_string()
    } else if (from.year(), from.month()) == (to.year(), to.month()) {
        format!("{}–{}", from.format("%-d"), to.format("%-d %b %Y"))
    } else if from.year() == to.year() {
        format!("{} – {}", from.format("%-d %b"), to.format("%-d %b %Y"))
    } else {
        format!("{} – {}", from.format("%-d %b %Y"), to.format("%-d %b %Y"))
    }
}

/// The stored plan `plan_id` of `owner` in one sentence ([`Plan::in_words`]); an error when the
/// owner has no such plan still to commit.
pub async fn plan_in_words(
    owner: OwnerId,
    conn: &mut PgConnection,
    plan_id: Uuid,
) -> Result<String, LedgerError> {
    Ok(load_plan(owner, conn, plan_id).await?.in_words())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn spans_of_days_read_as_people_write_them() {
        assert_eq!(days(day(2025, 7, 3), day(2025, 7, 3)), "3 Jul 2025");
        assert_eq!(days(day(2025, 7, 1), day(2025, 7, 28)), "1–28 Jul 2025");
        assert_eq!(days(day(2025, 6, 28), day(2025, 7, 3)), "28 Jun – 3 Jul 2025");
        assert_eq!(
            days(day(2024, 12, 28), day(2025, 1, 3)),
            "28 Dec 2024 – 3 Jan 2025"
        );
    }
}
