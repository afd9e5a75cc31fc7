//! The site's daily model budget, as a hard cap: every model call of a web turn reserves its worst
//! case before it is sent and settles to its real cost after (migration 0016).
//!
//! The check and the charge are one statement (`app_reserve_budget`), which locks the day's row:
//! concurrent reservations queue there, and each sees the holds of the calls still in flight. A
//! hold whose function died expires after [`HOLD_TTL_SECONDS`] and is given back by the next
//! reservation of the day.

use chrono::{DateTime, NaiveDate, Utc};
use futures_util::future::BoxFuture;
use kakeibo_core::{Budget, Hold, MicroUsd, Refused, RunId};
use kakeibo_ledger::OwnerRolePool;
use uuid::Uuid;

use crate::OperatorError;

/// How long a hold counts without being settled: a function runs at most 15 minutes, so a hold
/// older than that belongs to a call whose function is gone.
pub const HOLD_TTL_SECONDS: i32 = 15 * 60;

/// The site's budget of one UTC day, shared by every visitor and every function.
#[derive(Debug, Clone)]
pub struct DailyBudget {
    pool: OwnerRolePool,
    cap: MicroUsd,
}

impl DailyBudget {
    /// A budget of `cap_usd` US dollars a UTC day (the setting `GLOBAL_DAILY_BUDGET_USD`).
    pub fn new(pool: OwnerRolePool, cap_usd: f64) -> Self {
        Self {
            pool,
            cap: micro_usd(cap_usd),
        }
    }

    pub fn cap(&self) -> MicroUsd {
        self.cap
    }

    async fn try_reserve(&self, run: RunId, amount: MicroUsd, now: DateTime<Utc>) -> Result<Hold, Refused> {
        let hold = Hold {
            id: Uuid::new_v4(),
            amount,
        };
        let admitted: bool = sqlx::query_scalar("SELECT app_reserve_budget($1, $2, $3, $4, $5, $6)")
            .bind(hold.id)
            .bind(run.as_uuid())
            .bind(amount.0)
            .bind(self.cap.0)
            .bind(now)
            .bind(HOLD_TTL_SECONDS)
            .fetch_one(self.pool.get())
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "the budget could not be reserved");
                Refused::Unavailable("the database did not answer".to_owned())
            })?;
        if admitted {
            Ok(hold)
        } else {
            Err(Refused::DailyCap)
        }
    }
}

impl Budget for DailyBudget {
    fn reserve(&self, run: RunId, amount: MicroUsd) -> BoxFuture<'_, Result<Hold, Refused>> {
        Box::pin(self.try_reserve(run, amount, Utc::now()))
    }

    fn settle(&self, hold: Hold, spent: MicroUsd) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let settled = sqlx::query("SELECT app_settle_budget($1, $2, $3)")
                .bind(hold.id)
                .bind(spent.0.max(0))
                .bind(Utc::now())
                .execute(self.pool.get())
                .await;
            if let Err(e) = settled {
                // The hold stays counted until it expires: the day's spend errs high, not low.
                tracing::error!(error = %e, hold = %hold.id, "a model call's cost could not be settled");
            }
        })
    }
}

/// One day of the budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Day {
    /// The real cost of the calls that ended.
    pub settled: MicroUsd,
    /// What the calls in flight hold.
    pub reserved: MicroUsd,
}

/// The budget of `day` (zero when nothing was reserved that day).
pub async fn day(pool: &OwnerRolePool, day: NaiveDate) -> Result<Day, OperatorError> {
    let row: Option<(i64, i64)> =
        sqlx::query_as("SELECT settled_micro_usd, reserved_micro_usd FROM budget_days WHERE day = $1")
            .bind(day)
            .fetch_optional(pool.get())
            .await?;
    Ok(row.map_or_else(Day::default, |(settled, reserved)| Day {
        settled: MicroUsd(settled),
        reserved: MicroUsd(reserved),
    }))
}

/// Dollars to millionths, rounded; a negative or non-finite setting is no budget at all.
fn micro_usd(usd: f64) -> MicroUsd {
    if !usd.is_finite() || usd <= 0.0 {
        return MicroUsd(0);
    }
    #[allow(clippy::cast_possible_truncation)]
    MicroUsd((usd * 1_000_000.0).round().min(9.0e18) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_become_millionths() {
        assert_eq!(micro_usd(0.667), MicroUsd(667_000));
        assert_eq!(micro_usd(-1.0), MicroUsd(0));
        assert_eq!(micro_usd(f64::NAN), MicroUsd(0));
    }
}
