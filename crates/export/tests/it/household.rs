//! A household to export: a checking account and savings that state balances (so an opening
//! balance each and closing balances to assert), a card, transfers between them, a euro account
//! a transfer reached across currencies, a budget, a rule, and a category whose name no tool's
//! syntax allows as written.

use kakeibo_ledger::{
    Currency, OwnerId, begin_for_owner,
    settle::{Settle, settle},
};
use sqlx::PgPool;

/// A category name with a colon, a semicolon, two spaces and a leading digit.
pub const ODD_NAME: &str = "7-Eleven: snacks;  late";

fn fixture(name: &str) -> Vec<u8> {
    let path = kakeibo_testkit::workspace_root()
        .join("fixtures/household")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

async fn import_into(
    pool: &PgPool,
    owner: OwnerId,
    name: &str,
    bytes: &[u8],
    account: &str,
    currency: Currency,
) {
    kakeibo_testdb::import_statement(pool, owner, name, bytes, account, currency).await;
}

/// Builds the household for a new owner (`pool` is the owner role's).
pub async fn build(pool: &PgPool) -> OwnerId {
    let owner = kakeibo_testdb::new_user(pool).await;
    for (file, account) in [
        ("checking.csv", "Checking"),
        ("card.csv", "Credit Card"),
        ("savings.csv", "Savings"),
    ] {
        import_into(pool, owner, file, &fixture(file), account, Currency::USD).await;
    }
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
    import_into(
        pool,
        owner,
        "checking-nov.csv",
        b"Date,Description,Amount\n2025-11-03,WISE TRANSFER OUT,-200.00\n",
        "Checking",
        Currency::USD,
    )
    .await;
    import_into(
        pool,
        owner,
        "wise.csv",
        b"Date,Description,Amount\n2025-11-04,TRANSFER FROM US CHECKING,185.00\n",
        "Wise EUR",
        Currency::EUR,
    )
    .await;
    let (usd, _) = kakeibo_testdb::in_transit(pool, owner, "WISE TRANSFER OUT").await;
    let (eur, _) = kakeibo_testdb::in_transit(pool, owner, "TRANSFER FROM US CHECKING").await;
    let mut tx = begin_for_owner(owner, pool).await.unwrap();
    let done = settle(owner, &mut tx, usd, &Settle::With(eur)).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        done.rate.as_deref(),
        Some("1 USD = 0.925000 EUR"),
        "{}",
        done.became
    );

    // A category no syntax takes as written, holding the card's Chipotle row; a budget; a rule.
    sqlx::query("INSERT INTO accounts (owner_id, name, type) VALUES ($1, $2, 'expense')")
        .bind(owner.as_uuid())
        .bind(ODD_NAME)
        .execute(pool)
        .await
        .unwrap();
    let moved = sqlx::query(
        "UPDATE postings SET account_id = (SELECT id FROM accounts WHERE owner_id = $1 AND name = $2)
         WHERE owner_id = $1 AND amount_minor > 0 AND transaction_id IN
               (SELECT id FROM transactions WHERE owner_id = $1 AND description LIKE 'CHIPOTLE%')
           AND account_id IN (SELECT id FROM accounts WHERE owner_id = $1 AND type = 'expense')",
    )
    .bind(owner.as_uuid())
    .bind(ODD_NAME)
    .execute(pool)
    .await
    .unwrap();
    assert_eq!(moved.rows_affected(), 1);
    sqlx::query(
        "INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency)
         SELECT $1, id, '2025-10', 40000, 'USD' FROM accounts WHERE owner_id = $1 AND name = 'Groceries'",
    )
    .bind(owner.as_uuid())
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO rules (owner_id, pattern, account_id, priority)
         SELECT $1, 'CHIPOTLE', id, 10 FROM accounts WHERE owner_id = $1 AND name = $2",
    )
    .bind(owner.as_uuid())
    .bind(ODD_NAME)
    .execute(pool)
    .await
    .unwrap();
    // Descriptions a journal line or a spreadsheet would misread.
    for (from, to) in [
        ("Zelle payment to ANNA LEE", "(Zelle) to ANNA; dinner\nsplit"),
        ("GROCERY OUTLET #42", "=GROCERY OUTLET #42"),
    ] {
        let changed =
            sqlx::query("UPDATE transactions SET description = $3 WHERE owner_id = $1 AND description = $2")
                .bind(owner.as_uuid())
                .bind(from)
                .bind(to)
                .execute(pool)
                .await
                .unwrap();
        assert_eq!(changed.rows_affected(), 1, "{from}");
    }
    owner
}
