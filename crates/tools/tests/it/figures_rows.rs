//! Every figure a read tool returns on the demo ledger names rows, and the rows, fetched again
//! by their reference, add up to the figure — to the minor unit, in its currency. Another
//! owner's scope fetches none of them.

use crate::common;

use common::{app_pool, load_demo_ledger, owner_pool};
use kakeibo_core::figures::{Aggregate, ToolFigure};
use kakeibo_ledger::{DEV_OWNER, OwnerId};
use kakeibo_tools::{Scope, registry, rows};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_figure_is_the_sum_of_its_rows(options: PgPoolOptions, connect: PgConnectOptions) {
    let owner = owner_pool(options, connect.clone()).await;
    load_demo_ledger(&owner).await;
    let app = app_pool(&connect).await;
    let scope = Scope::new(DEV_OWNER, app.clone());
    let stranger = OwnerId::new(uuid::Uuid::new_v4());
    let tools = registry(&scope);
    let calls = [
        ("get_spend_report", json!({"period": "2025-06"})),
        (
            "get_spend_report",
            json!({"period": "2025-03", "include_income": true}),
        ),
        (
            "get_spend_report",
            json!({"period": {"from": "2025-01-15", "to": "2025-04-10"}, "group_by": "month", "include_income": true}),
        ),
        ("get_budget_status", json!({"month": "2025-06"})),
        ("search_transactions", json!({"query": "swiggy"})),
        ("flag_anomalies", json!({"month": "2025-03"})),
        ("flag_anomalies", json!({"month": "2025-05"})),
        ("detect_recurring", json!({})),
        ("get_balances", json!({"months": 6})),
        ("list_accounts", json!({})),
    ];
    let (mut checked, mut unsourced) = (0, 0);
    for (name, input) in calls {
        let tool = tools.get(name).unwrap();
        let sourced = tool.execute_sourced(input.clone()).await.unwrap();
        assert!(!sourced.figures.is_empty(), "{name}({input}) states no figure");
        for figure in &sourced.figures {
            let ToolFigure {
                label,
                pointer,
                amount_minor,
                currency,
                rows: reference,
                aggregate,
            } = figure;
            // The figure is where its pointer says, as the model reads it.
            let at = sourced
                .value
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{name}: no {pointer}"));
            assert_eq!(at["amount_minor"], *amount_minor, "{name} {pointer}");
            assert_eq!(at["currency"], currency.as_str(), "{name} {pointer}");
            let Some(reference) = reference else {
                unsourced += 1;
                continue;
            };
            let found = rows::fetch(DEV_OWNER, &app, reference).await.unwrap();
            let sum = found.sum.as_ref().map_or(0, |s| s.amount_minor);
            let made = match aggregate {
                Aggregate::Sum => sum,
                // Half away from zero, as the tool rounds.
                Aggregate::Average => {
                    let (sum, n) = (i128::from(sum), i128::from(found.count));
                    i64::try_from((sum + sum.signum() * n / 2) / n).unwrap()
                }
            };
            assert_eq!(
                made, *amount_minor,
                "{name}({input}) {label} at {pointer}: {reference:?}"
            );
            if *amount_minor != 0 {
                assert!(found.count > 0, "{name} {label}");
                assert_eq!(found.sum.as_ref().unwrap().currency, *currency, "{name} {label}");
            }
            let listed: i64 = found.rows.iter().map(|r| r.amount.amount_minor).sum();
            if found.count == i64::try_from(found.rows.len()).unwrap() {
                assert_eq!(listed, sum, "{name} {label}: the listed rows are all of them");
            }
            let theirs = rows::fetch(stranger, &app, reference).await.unwrap();
            assert_eq!(theirs.count, 0, "another owner fetches none of {name} {label}");
            assert!(theirs.rows.is_empty());
            checked += 1;
        }
    }
    println!("figures checked against their rows: {checked} (and {unsourced} that no row makes)");
    assert!(checked > 50, "{checked}");
}
