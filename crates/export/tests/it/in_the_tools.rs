//! Every journal opens clean in the tool it is for, each account's balance as the tool prints it
//! equals kakeibo's, and every closing balance a statement stated is asserted — and checked: the
//! same file with one assertion off by a cent fails in each tool.

use std::path::{Path, PathBuf};

use kakeibo_export::{Format, Period, export};
use kakeibo_ledger::{DEV_OWNER, OwnerId};
use kakeibo_tools::{GetBalances, Scope, balances::BalancesInput};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

use crate::{
    household,
    tools::{self, Balances, Tools},
};

pub async fn write(pool: &PgPool, owner: OwnerId, format: Format, period: Period, dir: &Path) -> PathBuf {
    let path = dir.join(format!("export.{}", format.extension()));
    let mut bytes = Vec::new();
    export(owner, pool, format, period, &mut bytes, &mut |_| {})
        .await
        .unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Every account's balance per currency, summed from the postings.
async fn ledger_balances(pool: &PgPool, owner: OwnerId) -> Balances {
    let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT a.type::text, a.name, p.currency::text, sum(p.amount_minor)::bigint
         FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
         WHERE p.owner_id = $1 GROUP BY 1, 2, 3 HAVING sum(p.amount_minor) <> 0",
    )
    .bind(owner.as_uuid())
    .fetch_all(pool)
    .await
    .unwrap();
    rows.into_iter()
        .map(|(kind, name, currency, minor)| {
            let root = match kind.as_str() {
                "asset" => "Assets",
                "liability" => "Liabilities",
                "income" => "Income",
                "expense" => "Expenses",
                _ => "Equity",
            };
            ((root.to_owned(), name, currency), minor)
        })
        .collect()
}

/// What `kakeibo report accounts` says each account that holds money holds.
async fn report_accounts(app: &PgPool, owner: OwnerId) -> Vec<(String, String, i64)> {
    let out = kakeibo_tools::ask(
        GetBalances(Scope::new(owner, app.clone())),
        BalancesInput { months: None },
    )
    .await
    .unwrap();
    out.accounts
        .iter()
        .map(|a| {
            (
                a.name.clone(),
                a.balance.currency.as_str().to_owned(),
                a.balance.amount_minor,
            )
        })
        .collect()
}

/// The three journals of `owner`'s ledger, checked by their tools; each tool's balances equal
/// the ledger's and the accounts report's. Returns the folder and the three files.
async fn opens_clean(
    app: &PgPool,
    owner_pool: &PgPool,
    owner: OwnerId,
    tools: &Tools,
) -> (tempfile::TempDir, [PathBuf; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let journal = write(app, owner, Format::Hledger, Period::default(), dir.path()).await;
    let ledger = write(app, owner, Format::Ledger, Period::default(), dir.path()).await;
    let bean = write(app, owner, Format::Beancount, Period::default(), dir.path()).await;
    let (j, l, b) = (
        journal.to_str().unwrap(),
        ledger.to_str().unwrap(),
        bean.to_str().unwrap(),
    );
    tools::run(&tools.hledger, &["-f", j, "check", "--strict", "ordereddates"]).unwrap();
    tools::run(&tools.ledger, &["--pedantic", "-f", l, "bal"]).unwrap();
    let checked = tools::run(&tools.bean_check, &[b]).unwrap();
    assert!(checked.trim().is_empty(), "bean-check: {checked}");

    let expected = ledger_balances(owner_pool, owner).await;
    assert!(!expected.is_empty());
    assert_eq!(tools::hledger_balances(tools, &journal), expected, "hledger");
    assert_eq!(tools::ledger_balances(tools, &ledger), expected, "ledger");
    assert_eq!(tools::beancount_balances(tools, &bean), expected, "beancount");
    let holders = report_accounts(app, owner).await;
    assert!(!holders.is_empty());
    for (name, currency, minor) in holders {
        let printed = expected
            .iter()
            .find(|((root, n, c), _)| {
                (root == "Assets" || root == "Liabilities") && *n == name && *c == currency
            })
            .map_or(0, |(_, m)| *m);
        assert_eq!(
            printed, minor,
            "{name} {currency}: the tools print {printed}, the report says {minor}"
        );
    }
    (dir, [journal, ledger, bean])
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_demo_ledger_opens_clean_in_hledger_ledger_and_beancount(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let Some(tools) = Tools::find() else { return };
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    kakeibo_testdb::load_demo_ledger(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    let (_dir, [journal, ..]) = opens_clean(&app, &owner_pool, DEV_OWNER, &tools).await;
    let text = std::fs::read_to_string(journal).unwrap();
    assert_eq!(text.matches("\n    ; kakeibo-id: ").count(), 352);
}

/// The same file with `stated` (an assertion's amount) a cent more.
fn off_by_a_cent(path: &Path, stated: &str, moved: &str) -> PathBuf {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(stated), "no {stated:?} in {}", path.display());
    let wrong = path.with_extension(format!("wrong.{}", path.extension().unwrap().to_str().unwrap()));
    std::fs::write(&wrong, text.replacen(stated, moved, 1)).unwrap();
    wrong
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_household_opens_clean_and_every_stated_balance_is_checked(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let Some(tools) = Tools::find() else { return };
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    let owner = household::build(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    let (_dir, [journal, ledger, bean]) = opens_clean(&app, &owner_pool, owner, &tools).await;

    let text = std::fs::read_to_string(&journal).unwrap();
    // Checking and savings state balances: two assertions, both where the ledger agrees.
    assert_eq!(text.matches(" = ").count(), 2, "{text}");
    assert!(
        text.contains("    Assets:Checking") && text.contains("0 USD = 2443.26 USD"),
        "{text}"
    );
    assert!(text.contains("0 USD = 10308.58 USD"), "{text}");
    // The transfer across currencies, with its rate; the budget; the rule; the odd name escaped.
    assert!(text.contains("P 2025-11-03 USD 0.925000 EUR"), "{text}");
    assert!(text.contains("~ monthly from 2025-10-01 to 2025-11-01"), "{text}");
    assert!(
        text.contains("(Expenses:Groceries)") && text.contains("400.00 USD"),
        "{text}"
    );
    assert!(text.contains("Expenses:7-Eleven%3A snacks%3B %20late"), "{text}");
    assert!(
        text.contains("rule   10  \"CHIPOTLE\"  ->  Expenses:7-Eleven%3A snacks%3B %20late"),
        "{text}"
    );
    let beancount = std::fs::read_to_string(&bean).unwrap();
    assert_eq!(beancount.matches(" balance Assets:").count(), 2, "{beancount}");
    assert!(
        beancount.contains("2025-11-03 price USD 0.925000 EUR"),
        "{beancount}"
    );
    assert!(
        beancount.contains("custom \"budget\" Expenses:Groceries \"monthly\" 400.00 USD"),
        "{beancount}"
    );
    assert!(beancount.contains("open Expenses:X37X2DEleven"), "{beancount}");

    // Each tool checks the assertions: one a cent off fails in every one of them.
    let wrong = off_by_a_cent(&journal, "= 2443.26 USD", "= 2443.27 USD");
    let failed = tools::run(&tools.hledger, &["-f", wrong.to_str().unwrap(), "check"]).unwrap_err();
    assert!(failed.contains("balance assertion"), "{failed}");
    let wrong = off_by_a_cent(&ledger, "= 2443.26 USD", "= 2443.27 USD");
    let failed = tools::run(&tools.ledger, &["-f", wrong.to_str().unwrap(), "bal"]).unwrap_err();
    assert!(failed.contains("Balance assertion"), "{failed}");
    let wrong = off_by_a_cent(&bean, "2443.26 ~ 0.00 USD", "2443.27 ~ 0.00 USD");
    let failed = tools::run(&tools.bean_check, &[wrong.to_str().unwrap()]).unwrap_err();
    assert!(failed.contains("Balance failed"), "{failed}");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_period_opens_with_its_balances_brought_forward(options: PgPoolOptions, connect: PgConnectOptions) {
    let Some(tools) = Tools::find() else { return };
    let owner_pool = kakeibo_testdb::owner_pool(options, connect.clone()).await;
    let owner = household::build(&owner_pool).await;
    let app = kakeibo_testdb::app_pool(&connect).await;
    let dir = tempfile::tempdir().unwrap();
    let period = kakeibo_export::Period::parse("2025-10-20..").unwrap();
    let journal = write(&app, owner, Format::Hledger, period, dir.path()).await;
    let bean = write(&app, owner, Format::Beancount, period, dir.path()).await;
    tools::run(
        &tools.hledger,
        &[
            "-f",
            journal.to_str().unwrap(),
            "check",
            "--strict",
            "ordereddates",
        ],
    )
    .unwrap();
    let checked = tools::run(&tools.bean_check, &[bean.to_str().unwrap()]).unwrap();
    assert!(checked.trim().is_empty(), "bean-check: {checked}");
    // What holds money ends where the whole ledger ends; spending is only the period's.
    let whole = ledger_balances(&owner_pool, owner).await;
    for printed in [
        tools::hledger_balances(&tools, &journal),
        tools::beancount_balances(&tools, &bean),
    ] {
        for ((root, name, currency), minor) in &whole {
            if root == "Assets" || root == "Liabilities" {
                assert_eq!(
                    printed.get(&(root.clone(), name.clone(), currency.clone())),
                    Some(minor),
                    "{name}"
                );
            }
        }
        let groceries = printed.get(&("Expenses".to_owned(), "Groceries".to_owned(), "USD".to_owned()));
        assert!(groceries < whole.get(&("Expenses".to_owned(), "Groceries".to_owned(), "USD".to_owned())));
    }
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.contains("2025-10-20 * Balances brought forward"), "{text}");
    assert!(!text.contains("\n2025-10-19 "), "{text}");
}
