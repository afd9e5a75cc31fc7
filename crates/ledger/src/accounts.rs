//! The chart of accounts. Categories are accounts of type expense or income; they hold no
//! currency of their own. Asset and liability accounts have a kind (checking, savings, card, …)
//! and one currency, fixed when they are created.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::{error::LedgerError, money::Currency, owner::OwnerId};

pub use kakeibo_money::{AccountKind, AccountType};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: Uuid,
    pub name: String,
    pub account_type: AccountType,
    /// The kind of an asset or liability account; none for categories and equity.
    pub kind: Option<AccountKind>,
    /// The one currency of an asset, liability or equity account; none for categories.
    pub currency: Option<Currency>,
}

/// The asset account statements are imported into.
pub const CHECKING: &str = "Checking";
/// Where a posting waits for a category.
pub const UNCATEGORIZED: &str = "Uncategorized";
/// Where one side of a transfer between own accounts waits for the other.
pub const TRANSIT: &str = "Transfers in transit";
/// The equity account opening balances are booked against.
pub const OPENING_BALANCES: &str = "Opening Balances";

/// Every owner's starting accounts: the name, the type and, for an asset or liability, the kind.
/// The accounts that hold money take the owner's home currency; the categories hold none.
pub const DEFAULT_CHART: &[(&str, AccountType, Option<AccountKind>)] = &[
    (CHECKING, AccountType::Asset, Some(AccountKind::Checking)),
    ("Savings", AccountType::Asset, Some(AccountKind::Savings)),
    ("Credit Card", AccountType::Liability, Some(AccountKind::Card)),
    ("Groceries", AccountType::Expense, None),
    ("Dining", AccountType::Expense, None),
    ("Transport", AccountType::Expense, None),
    ("Rent", AccountType::Expense, None),
    ("Utilities", AccountType::Expense, None),
    ("Subscriptions", AccountType::Expense, None),
    ("Shopping", AccountType::Expense, None),
    ("Health", AccountType::Expense, None),
    ("Entertainment", AccountType::Expense, None),
    ("Travel", AccountType::Expense, None),
    ("Fees", AccountType::Expense, None),
    (UNCATEGORIZED, AccountType::Expense, None),
    ("Salary", AccountType::Income, None),
    ("Interest", AccountType::Income, None),
    ("Other Income", AccountType::Income, None),
    (OPENING_BALANCES, AccountType::Equity, None),
];

type AccountRow = (Uuid, String, AccountType, Option<AccountKind>, Option<String>);

fn from_row((id, name, account_type, kind, currency): AccountRow) -> Result<Account, LedgerError> {
    Ok(Account {
        id,
        name,
        account_type,
        kind,
        currency: currency.as_deref().map(Currency::parse).transpose()?,
    })
}

/// The owner's home currency, when one is set.
pub async fn home_currency(owner: OwnerId, conn: &mut PgConnection) -> Result<Option<Currency>, LedgerError> {
    let code: Option<Option<String>> =
        sqlx::query_scalar("SELECT home_currency::text FROM users WHERE id = $1")
            .bind(owner.as_uuid())
            .fetch_optional(conn)
            .await?;
    code.flatten()
        .as_deref()
        .map(Currency::parse)
        .transpose()
        .map_err(Into::into)
}

/// Sets the owner's home currency. The accounts that hold money keep theirs: a currency is fixed
/// when an account is created. Starting accounts with nothing in them yet follow the new one.
pub async fn set_home_currency(
    owner: OwnerId,
    conn: &mut PgConnection,
    currency: Currency,
) -> Result<(), LedgerError> {
    sqlx::query("UPDATE users SET home_currency = $2 WHERE id = $1")
        .bind(owner.as_uuid())
        .bind(currency.as_str())
        .execute(&mut *conn)
        .await?;
    let starting: Vec<&str> = DEFAULT_CHART
        .iter()
        .filter(|(_, t, _)| t.holds_one_currency())
        .map(|(name, _, _)| *name)
        .collect();
    sqlx::query(
        "UPDATE accounts a SET currency = $3 WHERE a.owner_id = $1 AND a.name = ANY($2)
           AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id)",
    )
    .bind(owner.as_uuid())
    .bind(&starting)
    .bind(currency.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// Creates the accounts of [`DEFAULT_CHART`] that `owner` lacks and returns the whole chart. The
/// accounts that hold money take the home currency: the owner's, else `home` (which becomes the
/// owner's). With neither, only the categories are created.
pub async fn ensure_chart(
    owner: OwnerId,
    conn: &mut PgConnection,
    home: Option<Currency>,
) -> Result<Vec<Account>, LedgerError> {
    let home = if let Some(known) = home_currency(owner, &mut *conn).await? {
        Some(known)
    } else {
        if let Some(currency) = home {
            set_home_currency(owner, &mut *conn, currency).await?;
        }
        home
    };
    let chart: Vec<_> = DEFAULT_CHART
        .iter()
        .filter(|(_, t, _)| home.is_some() || t.is_category())
        .collect();
    let names: Vec<&str> = chart.iter().map(|(name, _, _)| *name).collect();
    let types: Vec<AccountType> = chart.iter().map(|(_, t, _)| *t).collect();
    let kinds: Vec<Option<AccountKind>> = chart.iter().map(|(_, _, k)| *k).collect();
    let currencies: Vec<Option<String>> = chart
        .iter()
        .map(|(_, t, _)| {
            home.filter(|_| t.holds_one_currency())
                .map(|c| c.as_str().to_owned())
        })
        .collect();
    sqlx::query(
        "INSERT INTO accounts (owner_id, name, type, kind, currency)
         SELECT $1, name, type, kind, currency
         FROM UNNEST($2::text[], $3::account_type[], $4::account_kind[], $5::text[]) AS chart(name, type, kind, currency)
         ON CONFLICT (owner_id, name) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(&names)
    .bind(&types)
    .bind(&kinds)
    .bind(&currencies)
    .execute(&mut *conn)
    .await?;
    list_accounts(owner, conn).await
}

/// Creates an asset or liability account of `kind` in `currency` (nothing when one of that name
/// exists) and returns it.
pub async fn create_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    name: &str,
    kind: AccountKind,
    currency: Currency,
) -> Result<Account, LedgerError> {
    sqlx::query(
        "INSERT INTO accounts (owner_id, name, type, kind, currency) VALUES ($1, btrim($2), $3, $4, $5)
         ON CONFLICT (owner_id, name) DO NOTHING",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .bind(kind.account_type())
    .bind(kind)
    .bind(currency.as_str())
    .execute(&mut *conn)
    .await?;
    find_account(owner, conn, name)
        .await?
        .ok_or_else(|| LedgerError::UnknownAccountName(name.to_owned()))
}

/// Every account of `owner`, by name.
pub async fn list_accounts(owner: OwnerId, conn: &mut PgConnection) -> Result<Vec<Account>, LedgerError> {
    let rows: Vec<AccountRow> = sqlx::query_as(
        "SELECT id, name, type, kind, currency::text FROM accounts WHERE owner_id = $1 ORDER BY name, id",
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
        "SELECT id, name, type, kind, currency::text FROM accounts
         WHERE owner_id = $1 AND lower(name) = lower(btrim($2))
         ORDER BY name = btrim($2) DESC, id LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(name)
    .fetch_optional(conn)
    .await?;
    row.map(from_row).transpose()
}
