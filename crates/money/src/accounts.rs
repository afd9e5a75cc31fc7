//! The types of accounts (what the books count them as) and the kinds of the accounts a person
//! holds.

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(
    feature = "postgres",
    derive(sqlx::Type),
    sqlx(type_name = "account_type", rename_all = "lowercase")
)]
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

/// What an asset or liability account is to the person who has it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(
    feature = "postgres",
    derive(sqlx::Type),
    sqlx(type_name = "account_kind", rename_all = "lowercase")
)]
#[serde(rename_all = "lowercase")]
pub enum AccountKind {
    Checking,
    Savings,
    /// A credit card: a liability (what is owed on it).
    Card,
    Cash,
    /// A loan or mortgage: a liability.
    Loan,
    /// Where one side of a transfer between own accounts waits for the other: an asset that
    /// holds money on its way.
    Transit,
}

impl AccountKind {
    /// Cards and loans are owed; the rest are held.
    #[must_use]
    pub fn account_type(self) -> AccountType {
        match self {
            Self::Card | Self::Loan => AccountType::Liability,
            Self::Checking | Self::Savings | Self::Cash | Self::Transit => AccountType::Asset,
        }
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Checking => "checking",
            Self::Savings => "savings",
            Self::Card => "card",
            Self::Cash => "cash",
            Self::Loan => "loan",
            Self::Transit => "transit",
        }
    }
}

impl std::str::FromStr for AccountKind {
    type Err = String;

    /// The kinds a person names (`transit` is kakeibo's own).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_lowercase().as_str() {
            "checking" | "current" => Ok(Self::Checking),
            "savings" => Ok(Self::Savings),
            "card" | "credit card" | "credit" => Ok(Self::Card),
            "cash" => Ok(Self::Cash),
            "loan" | "mortgage" => Ok(Self::Loan),
            other => Err(format!(
                "unknown account kind {other:?}: checking, savings, card, cash or loan"
            )),
        }
    }
}

impl std::fmt::Display for AccountKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
