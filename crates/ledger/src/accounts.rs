//! The chart of accounts. Categories are accounts of type expense or income.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::{error::LedgerError, money::Currency, owner::OwnerId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, sqlx::Type, serde::Serialize, serde::Deserialize)]
#[sqlx(type_name = "account_type", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum AccountType {
    Asset,
    Liability,
    Income,
    Expense,
    Equity,
}

impl AccountType {
    /// Asset, liability and equity accounts hold one currency; categories (expense, income)
    /// take postings in any currency.
    pub fn holds_one_currency(self) -> bool {
        matches!(self, Self::Asset | Self::Liability | Self::Equity)
    }

    pub fn is_category(self) -> bool {
        matches!(self, Self::Expense | Self::Income)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: Uuid,
    pub name: String,
    pub account_type: AccountType,
    pub currency: Currency,
}

/// The asset account statements are imported into.
pub const CHECKING: &str = "Checking";
/// Where a posting waits for a category.
pub const UNCATEGORIZED: &str = "Uncategorized";

/// Every owner's starting accounts.
pub const DEFAULT_CHART: &[(&str, AccountType)] = &[
    (CHECKING, AccountType::Asset),
    ("Credit Card", AccountType::Liability),
    ("Groceries", AccountType::Expense),
    ("Dining", AccountType::Expense),
    ("Transport", AccountType::Expense),
    ("Rent", AccountType::Expense),
    ("Utilities", AccountType::Expense),
    ("Subscriptions", AccountType::Expense),
    ("Shopping", AccountType::Expense),
    ("Health", AccountType::Expense),
    ("Entertainment", AccountType::Expense),
    ("Travel", AccountType::Expense),
    ("Fees", AccountType::Expense),
    (UNCATEGORIZED, AccountType::Expense),
    ("Salary", AccountType::Income),
    ("Interest", AccountType::Income),
    ("Other Income", AccountType::Income),
    ("Opening Balances", AccountType::Equity),
];

type AccountRow = (Uuid, String, AccountType, String);

fn from_row((id, name, account_type, currency): AccountRow) -> Result<Account, LedgerError> {
    Ok(Account {
        id,
        name,
        account_type,
        currency: Currency::parse(&currency)?,
    })
}

/// Creates the accounts of [`DEFAULT_CHART`] that `owner` lacks (in `currency`), keeps the rest,
/// and returns the whole chart.
pub async fn ensure_chart(
    owner: OwnerId,
    conn: &mut PgConnection,
    currency: Currency,
) -> Result<Vec<Account>, LedgerError> {
    let names: Vec<&str> = DEFAULT_CHART.iter().map(|(name, _)| *name).collect();
    let types: Vec<AccountType> = DEFAULT_CHART.iter().map(|(_, t)| *t).collect();
    sqlx::query(
        "INSERT INTO accounts (owner_id, name, type, currency)
         SELECT $1, name, type, $4 FROM UNNEST($2::text[], $3::account_type[]) AS chart(name, type)
         ON CONFLICT (owner_id, name) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(&names)
    .bind(&types)
    .bind(currency.as_str())
    .execute(&mut *conn)
    .await?;
    list_accounts(owner, conn).await
}

/// Every account of `owner`, by name.
pub async fn list_accounts(owner: OwnerId, conn: &mut PgConnection) -> Result<Vec<Account>, LedgerError> {
    let rows: Vec<AccountRow> = sqlx::query_as(
        "SELECT id, name, type, currency::text FROM accounts WHERE owner_id = $1 ORDER BY name, id",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(from_row).collect()
}

/// The account of `owner` named `name`, compared case-insensitively (`groceries` is Groceries).
pub async fn find_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    name: &str,
) -> Result<Option<Account>, LedgerError> {
    let row: Option<AccountRow> = sqlx::query_as(
        "SELECT id, name, type, currency::text FROM accounts
         WHERE owner_id = $1 AND lower(name) = lower(btrim($2))
         ORDER BY name = btrim($2) DESC, id LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .fetch_optional(conn)
    .await?;
    row.map(from_row).transpose()
}
