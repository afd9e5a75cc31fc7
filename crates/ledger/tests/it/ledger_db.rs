//! The ledger against a real PostgreSQL: the one insert path, the seed load, row-level security
//! under `app_user`, and the cascade that deletes a user's everything.
//!
//! Each test gets its own migrated database (`#[sqlx::test]`); `cargo xtask test` provides the
//! server (`DATABASE_URL`) and the `app_user` credentials (`APP_DATABASE_URL`).

use crate::common;

use chrono::NaiveDate;
use common::{app_pool, new_user, owner_pool};
use kakeibo_ledger::{
    Account, Currency, DEV_OWNER, InsertOutcome, LedgerError, NewPosting, NewTransaction, OwnerId,
    begin_for_owner, ensure_chart, insert_transaction, seed, with_owner,
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use uuid::Uuid;

/// Every table that holds an owner's data, with the column naming the owner.
const OWNER_SCOPED: [(&str, &str); 17] = [
    ("users", "id"),
    ("accounts", "owner_id"),
    ("import_batches", "owner_id"),
    ("transactions", "owner_id"),
    ("postings", "owner_id"),
    ("rules", "owner_id"),
    ("budgets", "owner_id"),
    ("memories", "owner_id"),
    ("conversations", "owner_id"),
    ("conversation_messages", "owner_id"),
    ("suspended_turns", "owner_id"),
    ("trace_runs", "owner_id"),
    ("trace_events", "owner_id"),
    ("uploads", "owner_id"),
    ("import_mappings", "owner_id"),
    ("import_plan_rows", "owner_id"),
    ("ledger_edits", "owner_id"),
];

async fn chart(pool: &PgPool, owner: OwnerId) -> Vec<Account> {
    with_owner(owner, pool, |conn| {
        Box::pin(ensure_chart(owner, conn, Some(Currency::INR)))
    })
    .await
    .unwrap()
}

fn account<'a>(chart: &'a [Account], name: &str) -> &'a Account {
    chart.iter().find(|a| a.name == name).unwrap()
}

fn purchase(from: &Account, to: &Account, amounts: (i64, i64), currency: Currency) -> NewTransaction {
    NewTransaction {
        id: None,
        date: NaiveDate::from_ymd_opt(2025, 3, 3).unwrap(),
        description: "DMART STORE 123456".into(),
        raw_description: "DMART STORE 123456".into(),
        import_batch_id: None,
        source_hash: None,
        postings: vec![
            NewPosting {
                account_id: from.id,
                amount_minor: amounts.0,
                currency,
            },
            NewPosting {
                account_id: to.id,
                amount_minor: amounts.1,
                currency,
            },
        ],
    }
}

async fn insert(pool: &PgPool, owner: OwnerId, new: &NewTransaction) -> Result<InsertOutcome, LedgerError> {
    let mut tx = begin_for_owner(owner, pool).await?;
    let outcome = insert_transaction(owner, &mut tx, new).await?;
    tx.commit().await?;
    Ok(outcome)
}

async fn count(pool: &PgPool, table: &str, owner: OwnerId) -> i64 {
    let column = OWNER_SCOPED
        .iter()
        .find(|(t, _)| *t == table)
        .map_or("owner_id", |(_, c)| *c);
    let sql = format!("SELECT count(*) FROM {table} WHERE {column} = $1");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(owner.as_uuid())
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn load_seed(pool: &PgPool, owner: OwnerId) -> seed::LoadReport {
    let data = seed::generate().unwrap();
    let rows = seed::read_transactions_csv(&seed::transactions_csv(&data).unwrap()).unwrap();
    with_owner(owner, pool, |conn| {
        Box::pin(async move { seed::load(owner, conn, "transactions.csv", &rows).await })
    })
    .await
    .unwrap()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn unbalanced_and_malformed_transactions_are_refused_and_nothing_is_written(pool: PgPool) {
    let owner = new_user(&pool).await;
    let other = new_user(&pool).await;
    let chart = chart(&pool, owner).await;
    let other_chart = self::chart(&pool, other).await;
    let (checking, groceries) = (account(&chart, "Checking"), account(&chart, "Groceries"));

    let refused = [
        purchase(checking, groceries, (-10_000, 9_999), Currency::INR),
        purchase(checking, groceries, (-10_000, 10_000), Currency::USD),
        purchase(
            checking,
            account(&other_chart, "Groceries"),
            (-10_000, 10_000),
            Currency::INR,
        ),
        NewTransaction {
            postings: vec![],
            ..purchase(checking, groceries, (0, 0), Currency::INR)
        },
        NewTransaction {
            postings: vec![
                NewPosting {
                    account_id: checking.id,
                    amount_minor: -100,
                    currency: Currency::INR,
                },
                NewPosting {
                    account_id: groceries.id,
                    amount_minor: 100,
                    currency: Currency::USD,
                },
            ],
            ..purchase(checking, groceries, (0, 0), Currency::INR)
        },
    ];
    let errors: Vec<LedgerError> = {
        let mut errors = Vec::new();
        for new in &refused {
            errors.push(insert(&pool, owner, new).await.unwrap_err());
        }
        errors
    };
    assert!(
        matches!(
            errors[0],
            LedgerError::Unbalanced {
                sum_minor: -1,
                currency: Currency::INR
            }
        ),
        "{:?}",
        errors[0]
    );
    assert!(
        matches!(errors[1], LedgerError::AccountCurrencyMismatch { .. }),
        "{:?}",
        errors[1]
    );
    assert!(
        matches!(errors[2], LedgerError::UnknownAccount(_)),
        "{:?}",
        errors[2]
    );
    assert!(
        matches!(errors[3], LedgerError::TooFewPostings { count: 0 }),
        "{:?}",
        errors[3]
    );
    assert!(
        matches!(errors[4], LedgerError::MixedCurrencies { .. }),
        "{:?}",
        errors[4]
    );
    assert_eq!(count(&pool, "transactions", owner).await, 0);
    assert_eq!(count(&pool, "postings", owner).await, 0);
    assert_eq!(count(&pool, "postings", other).await, 0);

    let balanced = purchase(checking, groceries, (-10_000, 10_000), Currency::INR);
    assert!(matches!(
        insert(&pool, owner, &balanced).await.unwrap(),
        InsertOutcome::Inserted(_)
    ));
    assert_eq!(count(&pool, "transactions", owner).await, 1);
    assert_eq!(count(&pool, "postings", owner).await, 2);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_failed_insert_inside_a_larger_transaction_leaves_it_usable(pool: PgPool) {
    let owner = new_user(&pool).await;
    let chart = chart(&pool, owner).await;
    let (checking, dining) = (account(&chart, "Checking"), account(&chart, "Dining"));
    let good = purchase(checking, dining, (-500, 500), Currency::INR);
    // Same id twice: the second insert fails in the database, after validation passed.
    let fixed_id = NewTransaction {
        id: Some(Uuid::new_v4()),
        ..good.clone()
    };

    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    insert_transaction(owner, &mut tx, &fixed_id).await.unwrap();
    assert!(matches!(
        insert_transaction(owner, &mut tx, &fixed_id).await,
        Err(LedgerError::Database(_))
    ));
    insert_transaction(owner, &mut tx, &good).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(count(&pool, "transactions", owner).await, 2);
    assert_eq!(count(&pool, "postings", owner).await, 4);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_same_source_row_is_imported_once(pool: PgPool) {
    let owner = new_user(&pool).await;
    let chart = chart(&pool, owner).await;
    let (checking, dining) = (account(&chart, "Checking"), account(&chart, "Dining"));
    let date = NaiveDate::from_ymd_opt(2025, 3, 3).unwrap();
    let row = |occurrence| NewTransaction {
        source_hash: Some(kakeibo_ledger::source_hash(
            &checking.name,
            date,
            -500,
            "CHAI POINT",
            occurrence,
        )),
        ..purchase(checking, dining, (-500, 500), Currency::INR)
    };
    assert!(matches!(
        insert(&pool, owner, &row(0)).await.unwrap(),
        InsertOutcome::Inserted(_)
    ));
    assert_eq!(
        insert(&pool, owner, &row(0)).await.unwrap(),
        InsertOutcome::Duplicate
    );
    assert!(matches!(
        insert(&pool, owner, &row(1)).await.unwrap(),
        InsertOutcome::Inserted(_)
    ));
    assert_eq!(count(&pool, "transactions", owner).await, 2);
    assert_eq!(count(&pool, "postings", owner).await, 4);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_seed_loads_balanced_and_once(pool: PgPool) {
    let report = load_seed(&pool, DEV_OWNER).await;
    assert_eq!(
        (report.inserted, report.duplicates, report.uncategorized),
        (352, 0, 28)
    );
    assert_eq!(count(&pool, "transactions", DEV_OWNER).await, 352);
    assert_eq!(count(&pool, "postings", DEV_OWNER).await, 704);

    let unbalanced: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT transaction_id FROM postings GROUP BY transaction_id
         HAVING sum(amount_minor) <> 0 OR count(*) < 2) t",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(unbalanced, 0);

    let march_groceries: i64 = sqlx::query_scalar(
        "SELECT sum(p.amount_minor)::bigint FROM postings p
         JOIN accounts a ON a.id = p.account_id JOIN transactions t ON t.id = p.transaction_id
         WHERE a.name = 'Groceries' AND t.date >= '2025-03-01' AND t.date < '2025-04-01'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    // Rows that arrive uncategorised sit in Uncategorized, not in their true category.
    let march_groceries_truth: i64 = seed::generate()
        .unwrap()
        .rows
        .iter()
        .filter(|r| {
            r.category == "Groceries"
                && !r.uncategorized_on_import
                && r.date.to_string().starts_with("2025-03")
        })
        .map(|r| -r.amount_minor)
        .sum();
    assert_eq!(march_groceries, march_groceries_truth);
    assert_eq!(
        march_groceries, 2_335_000,
        "the reference oracle: ₹23,350.00 on groceries in March 2025"
    );

    let first: Uuid =
        sqlx::query_scalar("SELECT id FROM transactions WHERE description = 'RELIANCE FRESH 146088'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        first,
        seed::transaction_id(
            DEV_OWNER,
            2,
            NaiveDate::from_ymd_opt(2025, 1, 1).unwrap(),
            "RELIANCE FRESH 146088"
        )
    );

    let again = load_seed(&pool, DEV_OWNER).await;
    assert_eq!(
        (again.inserted, again.duplicates, again.import_batch_id),
        (0, 352, None)
    );
    assert_eq!(count(&pool, "transactions", DEV_OWNER).await, 352);
    assert_eq!(count(&pool, "import_batches", DEV_OWNER).await, 1);
}

/// Puts at least one row for `owner` into every owner-scoped table.
async fn fill_every_table(pool: &PgPool, owner: OwnerId) {
    load_seed(pool, owner).await;
    let o = owner.as_uuid();
    let statements = [
        "INSERT INTO rules (owner_id, pattern, account_id)
         SELECT $1, 'SWIGGY', id FROM accounts WHERE owner_id = $1 AND name = 'Dining'",
        "INSERT INTO budgets (owner_id, account_id, month, amount_minor)
         SELECT $1, id, '2025-03', 2000000 FROM accounts WHERE owner_id = $1 AND name = 'Groceries'",
        "INSERT INTO memories (owner_id, content, category) VALUES ($1, 'paid on the 1st', 'income')",
        "INSERT INTO conversations (owner_id, title) VALUES ($1, 'March')",
        "INSERT INTO conversation_messages (owner_id, conversation_id, seq, message)
         SELECT $1, id, 0, '{\"role\":\"user\"}' FROM conversations WHERE owner_id = $1",
        "INSERT INTO suspended_turns (owner_id, conversation_id, run_id, version, state, args_hash, expires_at)
         SELECT $1, id, gen_random_uuid(), 1, '{}', 'h', now() + interval '1 hour' FROM conversations WHERE owner_id = $1",
        "INSERT INTO trace_runs (owner_id, provider, model, channel) VALUES ($1, 'script', 'test', 'cli')",
        "INSERT INTO trace_events (owner_id, run_id, seq, type, payload)
         SELECT $1, id, 0, 'model_call', '{}' FROM trace_runs WHERE owner_id = $1",
        "INSERT INTO uploads (owner_id, filename, size_bytes, sha256, content) VALUES ($1, 'a.csv', 3, 'x', 'a,b')",
        "INSERT INTO import_mappings (owner_id, account, mapping, source) VALUES ($1, 'Checking', '{}', 'a.csv')",
        "INSERT INTO import_plan_rows (owner_id, batch_id, chunk, rows)
         SELECT $1, id, 0, '[]' FROM import_batches WHERE owner_id = $1",
        "INSERT INTO ledger_edits (owner_id, kind, summary, before, after) VALUES ($1, 'delete', 'Deleted a row', '[]', '[]')",
    ];
    for statement in statements {
        sqlx::query(statement).bind(o).execute(pool).await.unwrap();
    }
    for (table, _) in OWNER_SCOPED {
        assert!(
            count(pool, table, owner).await > 0,
            "{table} should hold a row of {owner}"
        );
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn app_user_sees_and_writes_only_the_owner_it_is_scoped_to(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let app = app_pool(&connect).await;
    let (a, b) = (new_user(&owner_pool).await, new_user(&owner_pool).await);
    fill_every_table(&owner_pool, a).await;
    fill_every_table(&owner_pool, b).await;

    let mut tx = begin_for_owner(a, &app).await.unwrap();
    for (table, column) in OWNER_SCOPED {
        let sql = format!(
            "SELECT count(*) FILTER (WHERE {column} = $1), count(*) FILTER (WHERE {column} <> $1) FROM {table}"
        );
        let (mine, others): (i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(a.as_uuid())
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        assert!(mine > 0, "{table}: A sees its own rows");
        assert_eq!(others, 0, "{table}: A sees none of B's rows");
    }
    let b_rows: i64 = sqlx::query("UPDATE transactions SET description = 'x' WHERE owner_id = $1")
        .bind(b.as_uuid())
        .execute(&mut *tx)
        .await
        .map(|r| i64::try_from(r.rows_affected()).unwrap())
        .unwrap();
    assert_eq!(b_rows, 0, "A cannot update B's transactions");
    let deleted = sqlx::query("DELETE FROM accounts WHERE owner_id = $1")
        .bind(b.as_uuid())
        .execute(&mut *tx)
        .await;
    assert_eq!(
        deleted.unwrap().rows_affected(),
        0,
        "A cannot delete B's accounts"
    );
    tx.rollback().await.unwrap();

    // Writing a row for B while scoped to A is refused by the policy's WITH CHECK.
    let mut tx = begin_for_owner(a, &app).await.unwrap();
    let err = sqlx::query("INSERT INTO memories (owner_id, content, category) VALUES ($1, 'planted', 'x')")
        .bind(b.as_uuid())
        .execute(&mut *tx)
        .await
        .unwrap_err();
    assert_eq!(
        err.as_database_error()
            .and_then(sqlx::error::DatabaseError::code)
            .as_deref(),
        Some("42501"),
        "{err}"
    );
    tx.rollback().await.unwrap();

    // The ledger's own insert path, scoped to A but asked to write for B, finds none of B's accounts.
    let b_chart = chart(&owner_pool, b).await;
    let into_b = purchase(
        account(&b_chart, "Checking"),
        account(&b_chart, "Dining"),
        (-100, 100),
        Currency::INR,
    );
    assert!(matches!(
        insert(&app, a, &into_b).await,
        Err(LedgerError::UnknownAccount(_))
    ));
    let mut tx = begin_for_owner(a, &app).await.unwrap();
    assert!(
        insert_transaction(b, &mut tx, &into_b).await.is_err(),
        "RLS refuses B's rows under A's scope"
    );
    drop(tx);
    assert_eq!(count(&owner_pool, "transactions", b).await, 352);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn app_user_with_no_owner_set_reads_every_owner_scoped_table_empty(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let a = new_user(&owner_pool).await;
    fill_every_table(&owner_pool, a).await;
    let app = app_pool(&connect).await;

    for (table, _) in OWNER_SCOPED {
        let sql = format!("SELECT count(*) FROM {table}");
        let seen: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&app)
            .await
            .unwrap();
        assert_eq!(seen, 0, "{table} must read empty without an owner");
    }

    // The owner setting is transaction-local: after a scoped transaction, the same pooled
    // connection is back to seeing nothing.
    let single = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(app.connect_options().as_ref().clone())
        .await
        .unwrap();
    let inside: i64 = with_owner(a, &single, |conn| {
        Box::pin(async move {
            sqlx::query_scalar("SELECT count(*) FROM transactions")
                .fetch_one(conn)
                .await
        })
    })
    .await
    .unwrap();
    assert_eq!(inside, 352);
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM transactions")
        .fetch_one(&single)
        .await
        .unwrap();
    assert_eq!(after, 0);
}

/// Tables with an owner that app_user may not touch at all.
const OWNER_ROLE_ONLY: [&str; 1] = ["owner_daily_messages"];

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn every_owner_scoped_table_has_its_policy_and_app_user_no_credentials(pool: PgPool) {
    let scoped: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name = 'owner_id' ORDER BY 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut expected: Vec<String> = OWNER_SCOPED
        .iter()
        .filter(|(t, _)| *t != "users")
        .map(|(t, _)| (*t).to_owned())
        .chain(OWNER_ROLE_ONLY.iter().map(|t| (*t).to_owned()))
        .collect();
    expected.sort();
    assert_eq!(
        scoped, expected,
        "the test's list of owner-scoped tables is the schema's"
    );

    // Owner-keyed tables only the owner role touches (the quota gate's counters): app_user has
    // no privilege on them at all, so it needs no policy there.
    for table in OWNER_ROLE_ONLY {
        let sql = format!(
            "SELECT has_table_privilege('app_user', '{table}', 'SELECT') OR has_table_privilege('app_user', '{table}', 'INSERT')
                 OR has_table_privilege('app_user', '{table}', 'UPDATE') OR has_table_privilege('app_user', '{table}', 'DELETE')"
        );
        let any: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(!any, "app_user has no privilege on {table}");
    }

    for table in scoped
        .iter()
        .map(String::as_str)
        .filter(|t| !OWNER_ROLE_ONLY.contains(t))
        .chain(["users"])
    {
        let (rls, policies): (bool, Vec<String>) = sqlx::query_as(
            "SELECT c.relrowsecurity, coalesce(array_agg(p.policyname::text) FILTER (WHERE p.policyname IS NOT NULL), '{}')
             FROM pg_class c LEFT JOIN pg_policies p ON p.tablename = c.relname AND p.schemaname = 'public'
             WHERE c.relname = $1 AND c.relnamespace = 'public'::regnamespace GROUP BY c.relrowsecurity",
        )
        .bind(table)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert!(rls, "{table} has row-level security enabled");
        let name = if table == "users" {
            "users_self".to_owned()
        } else {
            format!("{table}_owner")
        };
        assert_eq!(policies, [name], "{table} has exactly its one policy");
    }

    let can = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query_scalar::<_, bool>(sql).fetch_one(&pool).await.unwrap() }
    };
    assert!(!can("SELECT has_column_privilege('app_user', 'users', 'password_hash', 'SELECT')").await);
    assert!(!can("SELECT has_table_privilege('app_user', 'email_tokens', 'SELECT')").await);
    assert!(!can("SELECT has_table_privilege('app_user', 'users', 'INSERT')").await);
    assert!(!can("SELECT has_table_privilege('app_user', 'users', 'DELETE')").await);
    assert!(!can("SELECT has_table_privilege('app_user', 'rate_limits', 'SELECT')").await);
    assert!(!can("SELECT has_table_privilege('app_user', 'operator_flags', 'UPDATE')").await);
    assert!(can("SELECT has_column_privilege('app_user', 'users', 'blocked_at', 'SELECT')").await);
    let owns_something: bool = can(
        "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relowner = 'app_user'::regrole AND relnamespace = 'public'::regnamespace)",
    )
    .await;
    assert!(!owns_something, "app_user owns no table, so RLS binds it");
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn deleting_a_user_removes_all_of_their_data_and_nothing_else(pool: PgPool) {
    let (gone, kept) = (new_user(&pool).await, new_user(&pool).await);
    fill_every_table(&pool, gone).await;
    fill_every_table(&pool, kept).await;

    sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(gone.as_uuid())
        .execute(&pool)
        .await
        .unwrap();

    for (table, _) in OWNER_SCOPED {
        assert_eq!(
            count(&pool, table, gone).await,
            0,
            "{table} keeps nothing of the deleted user"
        );
        assert!(
            count(&pool, table, kept).await > 0,
            "{table} keeps the other user's rows"
        );
    }
}

/// A currency column reads straight into a `Currency`, char(3) or text; what is no currency code
/// fails the query instead of becoming a default.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_currency_column_reads_as_a_currency_or_fails(pool: PgPool) {
    let usd: kakeibo_ledger::Currency = sqlx::query_scalar("SELECT 'USD'::char(3)")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(usd, kakeibo_ledger::Currency::USD);
    let eur: kakeibo_ledger::Currency = sqlx::query_scalar("SELECT ' eur'::text")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(eur, kakeibo_ledger::Currency::EUR);
    let bad = sqlx::query_scalar::<_, kakeibo_ledger::Currency>("SELECT 'U$'::text")
        .fetch_one(&pool)
        .await;
    assert!(matches!(bad, Err(sqlx::Error::ColumnDecode { .. })), "{bad:?}");
}
