//! A household, not just an account: three statements of one person (`fixtures/household/`)
//! imported into a fresh ledger in each of the six orders give the same spending, income,
//! balances and transfers, equal to the truth worked by hand; no transfer between the person's
//! own accounts is spending or income; every account that states balances ends at its bank's
//! closing balance; a second import of any file adds nothing.

use crate::common;

use std::collections::BTreeMap;

use common::{new_user, owner_pool};
use kakeibo_ledger::{
    Currency, OwnerId, begin_for_owner,
    import::{self, ParseOptions, Target},
    transfers::Decision,
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

const FILES: [(&str, &str); 3] = [
    ("checking.csv", "Checking"),
    ("card.csv", "Credit Card"),
    ("savings.csv", "Savings"),
];

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/household")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Previews and commits `bytes` into `account`; the plan and the commit report.
async fn import_into(
    pool: &PgPool,
    owner: OwnerId,
    name: &str,
    bytes: &[u8],
    account: &str,
) -> (import::Plan, import::CommitReport) {
    common::import_statement(pool, owner, name, bytes, account, Currency::USD).await
}

/// What a person sees of the household, every figure from the rows.
#[derive(Debug, PartialEq, Eq)]
struct Household {
    /// Each account that holds money: (kind, balance).
    balances: BTreeMap<String, (String, i64)>,
    /// Money out to categories, less refunds (Uncategorized money in is income, not a refund).
    spending: i64,
    income: i64,
    /// Transactions between two of the owner's accounts.
    transfers: i64,
    /// Rows waiting in transit.
    in_transit: i64,
    /// Transfers that touch a category: must be none.
    transfers_in_categories: i64,
}

async fn household(pool: &PgPool, owner: OwnerId) -> Household {
    let balances: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT a.name, a.kind::text, coalesce(sum(p.amount_minor), 0)::bigint FROM accounts a
         LEFT JOIN postings p ON p.account_id = a.id AND p.owner_id = a.owner_id
         WHERE a.owner_id = $1 AND a.kind IS NOT NULL GROUP BY a.id
         HAVING count(p.id) > 0",
    )
    .bind(owner.as_uuid())
    .fetch_all(pool)
    .await
    .unwrap();
    let (spending, income): (i64, i64) = sqlx::query_as(
        "SELECT coalesce(sum(p.amount_minor) FILTER (WHERE a.type = 'expense' AND NOT (a.name = 'Uncategorized' AND p.amount_minor < 0)), 0)::bigint,
                coalesce(-sum(p.amount_minor) FILTER (WHERE a.type = 'income' OR (a.name = 'Uncategorized' AND p.amount_minor < 0)), 0)::bigint
         FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id WHERE p.owner_id = $1",
    )
    .bind(owner.as_uuid())
    .fetch_one(pool)
    .await
    .unwrap();
    let (transfers, in_transit, transfers_in_categories): (i64, i64, i64) = sqlx::query_as(
        "WITH shape AS (
             SELECT t.id,
                    count(*) FILTER (WHERE a.type IN ('asset', 'liability') AND a.kind <> 'transit') AS holders,
                    count(*) FILTER (WHERE a.kind = 'transit') AS transit,
                    count(*) FILTER (WHERE a.type IN ('expense', 'income')) AS categories
             FROM transactions t JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
             JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
             WHERE t.owner_id = $1 GROUP BY t.id)
         SELECT count(*) FILTER (WHERE holders = 2), count(*) FILTER (WHERE transit > 0),
                count(*) FILTER (WHERE (holders = 2 OR transit > 0) AND categories > 0)
         FROM shape",
    )
    .bind(owner.as_uuid())
    .fetch_one(pool)
    .await
    .unwrap();
    Household {
        balances: balances.into_iter().map(|(n, k, b)| (n, (k, b))).collect(),
        spending,
        income,
        transfers,
        in_transit,
        transfers_in_categories,
    }
}

fn truth() -> Household {
    Household {
        balances: [
            ("Checking", "checking", 244_326),
            ("Credit Card", "card", 6_501),
            ("Savings", "savings", 1_030_858),
        ]
        .into_iter()
        .map(|(n, k, b)| (n.to_owned(), (k.to_owned(), b)))
        .collect(),
        spending: 219_173,
        income: 300_858,
        transfers: 4,
        in_transit: 0,
        transfers_in_categories: 0,
    }
}

/// Every order of three.
fn orders() -> Vec<[usize; 3]> {
    vec![[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_household_adds_up_in_every_order(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = owner_pool(options, connect).await;
    for order in orders() {
        let owner = new_user(&pool).await;
        let mut openings = BTreeMap::new();
        for index in order {
            let (file, account) = FILES[index];
            let (plan, report) = import_into(&pool, owner, file, &fixture(file), account).await;
            assert_eq!(report.parse_errors, 0, "{file} in order {order:?}");
            if let Some(opening) = report.opening {
                openings.insert(opening.account, opening.amount_minor);
            }
            if let Some(balance) = &plan.balance {
                assert!(
                    balance.agrees(),
                    "{file} in order {order:?}: {}",
                    balance.in_words()
                );
            }
            // Nothing is asked: every pair in this household has one best fit.
            assert!(
                !plan
                    .transfers
                    .iter()
                    .any(|t| matches!(t.decision, Decision::Ask { .. })),
                "{file} in order {order:?}: {:?}",
                plan.transfers
            );
        }
        assert_eq!(household(&pool, owner).await, truth(), "order {order:?}");
        assert_eq!(
            openings,
            BTreeMap::from([
                ("Checking".to_owned(), 200_000),
                ("Savings".to_owned(), 1_000_000)
            ]),
            "order {order:?}"
        );
        // The card, new to a ledger that had none, is a card: a liability.
        let card: (String, String) = sqlx::query_as(
            "SELECT type::text, currency::text FROM accounts WHERE owner_id = $1 AND name = 'Credit Card'",
        )
        .bind(owner.as_uuid())
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(
            card,
            ("liability".to_owned(), "USD".to_owned()),
            "order {order:?}"
        );
        // A second import of any file adds nothing.
        for (file, account) in FILES {
            let (plan, report) = import_into(&pool, owner, file, &fixture(file), account).await;
            assert_eq!(
                (plan.rows_to_add(), report.imported),
                (0, 0),
                "{file} again, order {order:?}"
            );
        }
        assert_eq!(
            household(&pool, owner).await,
            truth(),
            "order {order:?}, after the second imports"
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_card_statement_says_what_it_is(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    // Imported into an account of a name the chart does not have: its kind comes from its rows.
    let (plan, _) = import_into(&pool, owner, "card.csv", &fixture("card.csv"), "Sapphire").await;
    let account = plan.accounts.first().unwrap();
    assert_eq!(
        account.kind,
        kakeibo_ledger::AccountKind::Card,
        "{}",
        account.kind_from
    );
    assert!(account.kind_from.contains("sale"), "{}", account.kind_from);
    // The bank's categories map to the chart's; the payments are transfers, not spending.
    let categories: Vec<(String, i64)> = sqlx::query_as(
        "SELECT a.name, sum(p.amount_minor)::bigint FROM postings p JOIN accounts a ON a.id = p.account_id
         WHERE p.owner_id = $1 AND a.type = 'expense' GROUP BY a.name ORDER BY a.name",
    )
    .bind(owner.as_uuid())
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        categories,
        [
            ("Dining", 1_450),
            ("Groceries", 15_025),
            ("Shopping", 7_542),
            ("Transport", 4_500),
            ("Utilities", 1_549)
        ]
        .map(|(n, a)| (n.to_owned(), a))
        .to_vec()
    );
    // A statement aimed at another account is found where it already is.
    let (again, _) = import_into(&pool, owner, "card.csv", &fixture("card.csv"), "Another Card").await;
    assert_eq!(again.rows_to_add(), 0);
    assert_eq!(
        again.elsewhere.as_ref().map(|e| e.account.as_str()),
        Some("Sapphire")
    );
}

/// The row in transit of `owner` whose text is `description` (the latest of them).
async fn in_transit(pool: &PgPool, owner: OwnerId, description: &str) -> uuid::Uuid {
    common::in_transit(pool, owner, description).await.0
}

/// Each posting of `transaction`: (account, amount, currency), by account.
async fn postings(pool: &PgPool, owner: OwnerId, transaction: uuid::Uuid) -> Vec<(String, i64, String)> {
    sqlx::query_as(
        "SELECT a.name, p.amount_minor, p.currency::text FROM postings p JOIN accounts a ON a.id = p.account_id
         WHERE p.owner_id = $1 AND p.transaction_id = $2 ORDER BY a.name",
    )
    .bind(owner.as_uuid())
    .bind(transaction)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rows_in_transit_are_settled_as_the_person_says(options: PgPoolOptions, connect: PgConnectOptions) {
    use kakeibo_ledger::settle::{Settle, settle};
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    // Checking alone: its two card payments and two savings transfers wait for their other side.
    import_into(&pool, owner, "checking.csv", &fixture("checking.csv"), "Checking").await;
    assert_eq!(household(&pool, owner).await.in_transit, 4);
    let spending = household(&pool, owner).await.spending;
    let run = |id, how: Settle| {
        let pool = pool.clone();
        async move {
            let mut tx = begin_for_owner(owner, &pool).await.unwrap();
            let out = settle(owner, &mut tx, id, &how).await;
            if out.is_ok() {
                tx.commit().await.unwrap();
            }
            out
        }
    };

    // Spending after all: the transit posting goes to the category, and spending grows by it.
    // (The latest card payment: $120.00 on 10/28.)
    let (first_payment, amount) = common::in_transit(&pool, owner, "CHASE CREDIT CRD AUTOPAY").await;
    assert_eq!(amount, -12_000);
    let done = run(first_payment, Settle::Category("Utilities".into()))
        .await
        .unwrap();
    assert!(done.became.contains("spending in Utilities"), "{}", done.became);
    assert_eq!(household(&pool, owner).await.spending, spending + 12_000);
    // Settled once: it is no longer in transit.
    let again = run(first_payment, Settle::Category("Dining".into())).await;
    assert!(
        matches!(again, Err(kakeibo_ledger::LedgerError::NotInTransit { .. })),
        "{again:?}"
    );

    // To an account of the person's in the same currency: one transfer, nothing spent.
    let to_savings = in_transit(&pool, owner, "ONLINE TRANSFER TO SAVINGS").await;
    run(
        to_savings,
        Settle::Account {
            name: "Savings".into(),
            arrived_minor: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(
        postings(&pool, owner, to_savings).await,
        [
            ("Checking".to_owned(), -50_000, "USD".to_owned()),
            ("Savings".to_owned(), 50_000, "USD".to_owned())
        ]
    );
    // Not the account the row is in; not a category.
    let from_savings = in_transit(&pool, owner, "ONLINE TRANSFER FROM SAVINGS").await;
    for wrong in ["Checking", "Groceries", "No Such Account"] {
        let refused = run(
            from_savings,
            Settle::Account {
                name: wrong.into(),
                arrived_minor: None,
            },
        )
        .await;
        assert!(
            matches!(
                refused,
                Err(kakeibo_ledger::LedgerError::NotAnotherAccount { .. })
            ),
            "{wrong}: {refused:?}"
        );
    }

    // To an account in another currency: the amount that arrived is needed, and both are kept.
    let mut conn = pool.acquire().await.unwrap();
    kakeibo_ledger::create_account(
        owner,
        &mut conn,
        "Wise EUR",
        kakeibo_ledger::AccountKind::Checking,
        Currency::EUR,
    )
    .await
    .unwrap();
    drop(conn);
    let second_payment = in_transit(&pool, owner, "CHASE CREDIT CRD AUTOPAY").await;
    let needs = run(
        second_payment,
        Settle::Account {
            name: "Wise EUR".into(),
            arrived_minor: None,
        },
    )
    .await;
    assert!(
        matches!(needs, Err(kakeibo_ledger::LedgerError::NeedsArrivedAmount { .. })),
        "{needs:?}"
    );
    let done = run(
        second_payment,
        Settle::Account {
            name: "Wise EUR".into(),
            arrived_minor: Some(22_600),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        done.rate.as_deref(),
        Some("1 USD = 0.919933 EUR"),
        "{}",
        done.became
    );
    assert_eq!(
        postings(&pool, owner, second_payment).await,
        [
            ("Checking".to_owned(), -24_567, "USD".to_owned()),
            ("Currency conversion".to_owned(), 24_567, "USD".to_owned()),
            ("Currency conversion (EUR)".to_owned(), -22_600, "EUR".to_owned()),
            ("Wise EUR".to_owned(), 22_600, "EUR".to_owned()),
        ]
    );

    // Two rows in transit of two currencies: one transfer, both statement lines kept.
    let eur = b"Date,Description,Amount\n2025-10-21,TRANSFER TO US CHECKING,-185.00\n";
    common::import_statement(&pool, owner, "wise.csv", eur, "Wise EUR", Currency::EUR).await;
    let from_wise = in_transit(&pool, owner, "TRANSFER TO US CHECKING").await;
    // Money out of both is no transfer between them.
    let both_out = run(from_wise, Settle::With(second_payment)).await;
    assert!(both_out.is_err(), "{both_out:?}");
    let done = run(from_savings, Settle::With(from_wise)).await.unwrap();
    assert_eq!(
        done.rate.as_deref(),
        Some("1 USD = 0.925000 EUR"),
        "{}",
        done.became
    );
    assert_eq!(
        postings(&pool, owner, from_savings).await,
        [
            ("Checking".to_owned(), 20_000, "USD".to_owned()),
            ("Currency conversion".to_owned(), -20_000, "USD".to_owned()),
            ("Currency conversion (EUR)".to_owned(), 18_500, "EUR".to_owned()),
            ("Wise EUR".to_owned(), -18_500, "EUR".to_owned()),
        ]
    );
    let after = household(&pool, owner).await;
    assert_eq!(after.in_transit, 0);
    assert_eq!(after.spending, spending + 12_000);
    // Re-importing either statement adds nothing: the absorbed line is known.
    let (plan, _) = import_into(&pool, owner, "checking.csv", &fixture("checking.csv"), "Checking").await;
    assert_eq!(plan.rows_to_add(), 0);
}

/// Two rows fit equally: the preview asks, never guesses; an answer given with the plan decides
/// the commit, and the row not chosen waits in transit. A statement named no account goes where
/// the last one of its layout went, and the plan says why.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_tie_is_asked_and_the_answer_decides(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let checking = b"Date,Description,Amount\n2025-10-02,ONLINE TRANSFER TO SAVINGS,-500.00\n\
        2025-10-06,ONLINE TRANSFER TO SAVINGS,-500.00\n";
    import_into(&pool, owner, "checking.csv", checking, "Joint Checking").await;
    let savings = b"Date,Description,Amount\n2025-10-04,TRANSFER FROM CHECKING,500.00\n";
    let parsed = import::parse(
        savings,
        &ParseOptions {
            currency: Some(Currency::USD),
            ..ParseOptions::default()
        },
    )
    .unwrap();
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let target = Target {
        account: Some("Savings".into()),
        ..Target::default()
    };
    let (plan_id, plan) = import::plan_into(
        owner,
        &mut tx,
        "savings.csv",
        &import::file_sha256(savings),
        parsed,
        &target,
    )
    .await
    .unwrap();
    let Decision::Ask { candidates } = &plan.transfers[0].decision else {
        panic!("{:?}", plan.transfers)
    };
    assert_eq!(candidates.len(), 2);
    let later = candidates
        .iter()
        .position(|c| c.date.to_string() == "2025-10-06")
        .unwrap();
    // Only a question can be answered, and only with one of its candidates.
    let line = plan.transfers[0].row.line.unwrap();
    for wrong in [BTreeMap::from([(line + 1, later)]), BTreeMap::from([(line, 2)])] {
        assert!(
            import::answer(owner, &mut tx, plan_id, &wrong).await.is_err(),
            "{wrong:?}"
        );
    }
    let answered = import::answer(owner, &mut tx, plan_id, &BTreeMap::from([(line, later)]))
        .await
        .unwrap();
    let words = import::preview(plan_id, &answered).transfers[0].in_words.clone();
    assert!(
        words.contains("you said: one transfer with Joint Checking on 2025-10-06"),
        "{words}"
    );
    let report = import::commit(owner, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!((report.transfers_paired, report.in_transit), (1, 0));
    let waiting = kakeibo_ledger::balances(owner, &mut pool.acquire().await.unwrap(), 1)
        .await
        .unwrap()
        .in_transit;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0].date.to_string(), "2025-10-02");

    // The same layout again, no account named: it goes into Joint Checking, and says why.
    let next = b"Date,Description,Amount\n2025-11-03,GROCER,-20.00\n";
    let parsed = import::parse(
        next,
        &ParseOptions {
            currency: Some(Currency::USD),
            ..ParseOptions::default()
        },
    )
    .unwrap();
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let (_, plan) = import::plan_into(
        owner,
        &mut tx,
        "november.csv",
        &import::file_sha256(next),
        parsed,
        &Target::default(),
    )
    .await
    .unwrap();
    assert_eq!(plan.accounts[0].name, "Savings", "the last of this layout");
    assert_eq!(
        plan.account_from.as_deref(),
        Some("savings.csv, of the same layout, went into Savings")
    );
}

/// The other side of a transfer that did not look like one ("DEPOSIT") was booked as income; told
/// so, the row in transit and that deposit become one transfer, and the income is gone.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_transfer_booked_as_income_is_made_one_transfer(options: PgPoolOptions, connect: PgConnectOptions) {
    use kakeibo_ledger::settle::{Settle, settle};
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let checking = b"Date,Description,Amount\n2025-10-05,ONLINE TRANSFER TO SAVINGS,-500.00\n";
    import_into(&pool, owner, "checking.csv", checking, "Checking").await;
    let savings = b"Date,Description,Amount\n2025-10-06,DEPOSIT,500.00\n";
    import_into(&pool, owner, "savings.csv", savings, "Savings").await;
    let before = household(&pool, owner).await;
    assert_eq!((before.income, before.in_transit), (50_000, 1));
    let leg = in_transit(&pool, owner, "ONLINE TRANSFER TO SAVINGS").await;
    let deposit: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM transactions WHERE owner_id = $1 AND description = 'DEPOSIT'")
            .bind(owner.as_uuid())
            .fetch_one(&pool)
            .await
            .unwrap();
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    settle(owner, &mut tx, leg, &Settle::With(deposit)).await.unwrap();
    tx.commit().await.unwrap();
    let after = household(&pool, owner).await;
    assert_eq!(
        (
            after.income,
            after.in_transit,
            after.transfers,
            after.transfers_in_categories
        ),
        (0, 0, 1, 0)
    );
    assert_eq!(
        postings(&pool, owner, leg).await,
        [
            ("Checking".to_owned(), -50_000, "USD".to_owned()),
            ("Savings".to_owned(), 50_000, "USD".to_owned())
        ]
    );
    // Either statement again adds nothing: the deposit's line is kept on the transfer.
    let (plan, _) = import_into(&pool, owner, "savings.csv", savings, "Savings").await;
    assert_eq!(plan.rows_to_add(), 0);
}
