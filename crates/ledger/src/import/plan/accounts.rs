//! Which account each statement's rows go to: the accounts a plan names or creates, per currency.

use std::collections::{BTreeSet, HashMap};

use sqlx::PgConnection;
use uuid::Uuid;

use super::{AccountChoice, PlannedAccount, Target};
use crate::{
    accounts::{Account, AccountKind, AccountType, CHECKING},
    error::LedgerError,
    import::{Format, Parsed},
    money::Currency,
    owner::OwnerId,
};

/// The account for `currency`: `base` itself when it holds that currency (or does not exist yet,
/// or holds nothing yet, and this is the statement's only currency), otherwise `base (CUR)`.
pub fn account_for(base: &str, currency: Currency, existing: &[Account], only_currency: bool) -> String {
    account_named(base, currency, existing, only_currency, &BTreeSet::new())
}

pub(super) fn account_named(
    base: &str,
    currency: Currency,
    existing: &[Account],
    only_currency: bool,
    empty: &BTreeSet<Uuid>,
) -> String {
    match existing.iter().find(|a| a.name.eq_ignore_ascii_case(base)) {
        Some(account) if account.currency == Some(currency) => account.name.clone(),
        Some(account) if only_currency && empty.contains(&account.id) => account.name.clone(),
        None if only_currency => base.to_owned(),
        _ => format!("{base} ({currency})"),
    }
}

/// One account per currency of the statement, of `kind`.
pub(super) fn planned_accounts(
    base: &str,
    existing: &[Account],
    parsed: &Parsed,
    (kind, kind_from): (AccountKind, &str),
    empty: &BTreeSet<Uuid>,
) -> Result<Vec<PlannedAccount>, LedgerError> {
    let mut currencies: Vec<Currency> = parsed.rows.iter().map(|r| r.currency).collect();
    currencies.sort_unstable();
    currencies.dedup();
    let mut accounts = Vec::with_capacity(currencies.len());
    for c in &currencies {
        let name = account_named(base, *c, existing, currencies.len() == 1, empty);
        let found = existing.iter().find(|a| a.name.eq_ignore_ascii_case(&name));
        if let Some(account) = found
            && account.currency != Some(*c)
            && !empty.contains(&account.id)
        {
            return Err(LedgerError::AccountHoldsAnotherCurrency {
                account: account.name.clone(),
            });
        }
        let (kind, kind_from) = match found.and_then(|a| a.kind) {
            Some(own) => (
                own,
                format!("{} is a {own} account", found.map_or("", |a| a.name.as_str())),
            ),
            None => (kind, kind_from.to_owned()),
        };
        accounts.push(PlannedAccount {
            name: found.map_or(name, |a| a.name.clone()),
            currency: *c,
            exists: found.is_some(),
            kind,
            kind_from,
            takes_currency: found.is_some_and(|a| a.currency != Some(*c)),
        });
    }
    Ok(accounts)
}

/// Rows whose currency nothing stated take the currency of the account they go into, when that
/// account is in use (it has postings); otherwise the plan is refused with what to say. An empty
/// account's currency is only the chart's default, no evidence of the statement's.
pub(super) fn settle_unstated_currency(
    base: &str,
    existing: &[Account],
    empty: &BTreeSet<Uuid>,
    home: Option<Currency>,
    parsed: &mut Parsed,
) -> Result<(), LedgerError> {
    let rows_unstated = parsed.rows.iter().any(|r| r.currency_unstated);
    if !rows_unstated && !parsed.figures_mut().any(|f| f.currency_unstated) {
        return Ok(());
    }
    let target = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base));
    let in_use = target.filter(|a| !empty.contains(&a.id)).and_then(|a| {
        Some((
            a.currency?,
            format!("the account {}, which holds {}", a.name, a.currency?),
        ))
    });
    let from = in_use.or_else(|| home.map(|c| (c, format!("your home currency, {c}"))));
    // The amounts were read with two decimals; a currency with others cannot take them as they are.
    let Some((currency, why)) = from.filter(|(c, _)| c.decimals() == Currency::INR.decimals()) else {
        // Only refused rows name no currency: they stay unbooked, their figures as read.
        if !rows_unstated {
            return Ok(());
        }
        return Err(LedgerError::NoCurrencyToGoBy {
            account: base.to_owned(),
        });
    };
    for row in parsed.rows.iter_mut().filter(|r| r.currency_unstated) {
        row.currency = currency;
        row.currency_unstated = false;
    }
    for figures in parsed.figures_mut().filter(|f| f.currency_unstated) {
        figures.currency = currency;
        figures.currency_unstated = false;
    }
    parsed.format.currency_from = Some(format!("{why} (the statement names none)"));
    Ok(())
}

/// The account the last committed statement of `format`'s layout (its delimiter, header line and
/// columns) went into, and why, when one did: where a statement of that layout goes by default.
pub(super) async fn last_account_for_layout(
    owner: OwnerId,
    conn: &mut PgConnection,
    format: &Format,
) -> Result<Option<(String, String)>, LedgerError> {
    let columns = serde_json::to_value(&format.columns).unwrap_or_default();
    let found: Option<(String, String)> = sqlx::query_as(
        "SELECT plan->>'base_account', filename FROM import_batches
         WHERE owner_id = $1 AND status = 'committed' AND plan IS NOT NULL
           AND plan->'format'->'columns' = $2 AND plan->'format'->>'delimiter' = $3
           AND (plan->'format'->>'header_line')::int = $4 AND coalesce(plan->>'base_account', '') <> ''
         ORDER BY imported_at DESC NULLS LAST LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(sqlx::types::Json(columns))
    .bind(&format.delimiter)
    .bind(i32::try_from(format.header_line).unwrap_or(i32::MAX))
    .fetch_optional(conn)
    .await?;
    Ok(found.map(|(account, file)| {
        let why = format!("{file}, of the same layout, went into {account}");
        (account, why)
    }))
}

/// The account the last committed statement of the bank's `account` went into, and why.
/// An account number as it is compared: upper-case, without spaces (`de89 3704…` is `DE893704…`).
pub(super) fn account_number(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_uppercase()
}

/// The owner's accounts by the bank's number of each statement committed into them.
pub(super) async fn accounts_by_number(
    owner: OwnerId,
    conn: &mut PgConnection,
) -> Result<HashMap<String, String>, LedgerError> {
    let found: Vec<(String, String)> = sqlx::query_as(
        "SELECT DISTINCT plan->'format'->'statement'->'account'->>'id', plan->>'base_account'
         FROM import_batches
         WHERE owner_id = $1 AND status = 'committed' AND plan IS NOT NULL
           AND plan->'format'->'statement'->'account'->>'id' IS NOT NULL
           AND coalesce(plan->>'base_account', '') <> ''",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    Ok(found
        .into_iter()
        .map(|(number, name)| (account_number(&number), name))
        .collect())
}

async fn last_account_for_bank_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    account: &crate::import::StatementAccount,
) -> Result<Option<(String, String)>, LedgerError> {
    let found: Option<(String, String)> = sqlx::query_as(
        "SELECT plan->>'base_account', filename FROM import_batches
         WHERE owner_id = $1 AND status = 'committed' AND plan IS NOT NULL
           AND plan->'format'->'statement'->'account'->>'id' = $2
           AND coalesce(plan->'format'->'statement'->'account'->>'bank', '') = $3
           AND coalesce(plan->>'base_account', '') <> ''
         ORDER BY imported_at DESC NULLS LAST LIMIT 1",
    )
    .bind(owner.as_uuid())
    .bind(&account.id)
    .bind(account.bank.as_deref().unwrap_or_default())
    .fetch_optional(conn)
    .await?;
    Ok(found.map(|(name, file)| {
        let why = format!(
            "the statement of {} in {file} went into {name}",
            account.in_words()
        );
        (name, why)
    }))
}

/// The account a statement goes into — the one named, else the one the last statement of its
/// layout went into (and why), else Checking.
pub(super) async fn base_account(
    owner: OwnerId,
    conn: &mut PgConnection,
    target: &Target,
    existing: &[Account],
    format: &Format,
) -> Result<(String, Option<String>), LedgerError> {
    if let Some(named) = &target.account {
        return Ok((named.trim().to_owned(), None));
    }
    if let Some(statement) = &format.statement {
        // A structured statement names its account: it goes where that account's last statement
        // went, else into an account of its own named after it. Layouts say nothing here (every
        // OFX file has the same one).
        let Some(account) = &statement.account else {
            return Ok((CHECKING.to_owned(), None));
        };
        return Ok(last_account_for_bank_account(owner, conn, account)
            .await?
            .filter(|(name, _)| existing.iter().any(|a| a.name == *name))
            .map_or_else(|| (account.ledger_name(), None), |(name, why)| (name, Some(why))));
    }
    Ok(last_account_for_layout(owner, conn, format)
        .await?
        .filter(|(name, _)| existing.iter().any(|a| a.name == *name))
        .map_or_else(|| (CHECKING.to_owned(), None), |(name, why)| (name, Some(why))))
}

/// The accounts of `owner` that hold no postings.
pub(super) async fn empty_accounts(
    owner: OwnerId,
    conn: &mut PgConnection,
) -> Result<BTreeSet<Uuid>, LedgerError> {
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT a.id FROM accounts a WHERE a.owner_id = $1
           AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.owner_id = a.owner_id AND p.account_id = a.id)",
    )
    .bind(owner.as_uuid())
    .fetch_all(conn)
    .await?;
    Ok(ids.into_iter().collect())
}

/// The kind of the statement's account when it is new, and why.
pub(super) fn kind_of(target: &Target, base: &str, format: &Format) -> (AccountKind, String) {
    if let Some(kind) = target.kind {
        return (kind, "asked for".to_owned());
    }
    if let Some((name, _, Some(kind))) = crate::accounts::DEFAULT_CHART
        .iter()
        .find(|(name, _, kind)| kind.is_some() && name.eq_ignore_ascii_case(base))
    {
        return (
            *kind,
            format!("{name} is one of the starting accounts, a {kind} account"),
        );
    }
    if let Some(hint) = &format.account_kind {
        return (
            hint.kind,
            format!("the statement is a {}'s: {}", hint.kind, hint.why),
        );
    }
    (AccountKind::Checking, "nothing says otherwise".to_owned())
}

/// A statement may go into `base`: an asset or liability account (or a new one), of the kind
/// asked for when one is.
pub(super) fn check_target(
    existing: &[Account],
    base: &str,
    kind: Option<AccountKind>,
) -> Result<(), LedgerError> {
    let named = existing.iter().find(|a| a.name.eq_ignore_ascii_case(base));
    if let Some(named) = named
        && !matches!(named.account_type, AccountType::Asset | AccountType::Liability)
    {
        return Err(LedgerError::NotAStatementAccount {
            account: named.name.clone(),
            account_type: named.account_type,
        });
    }
    if let (Some(named), Some(asked)) = (named, kind)
        && let Some(is) = named.kind
        && is != asked
    {
        return Err(LedgerError::KindMismatch {
            account: named.name.clone(),
            is,
            asked,
        });
    }
    Ok(())
}

/// The accounts a person may choose for a statement: those that hold money, transit aside.
pub(super) fn account_choices(holders: &[&Account]) -> Vec<AccountChoice> {
    holders
        .iter()
        .filter_map(|a| {
            Some(AccountChoice {
                name: a.name.clone(),
                kind: a.kind.filter(|k| *k != AccountKind::Transit)?,
                currency: a.currency?,
            })
        })
        .collect()
}
