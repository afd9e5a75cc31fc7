use uuid::Uuid;

use super::*;
use crate::{
    accounts::{Account, AccountKind, AccountType},
    money::Currency,
};

#[test]
fn accounts_per_currency() {
    let existing = vec![Account {
        id: Uuid::nil(),
        name: "Checking".into(),
        account_type: AccountType::Asset,
        kind: Some(AccountKind::Checking),
        currency: Some(Currency::INR),
    }];
    assert_eq!(
        account_for("Checking", Currency::INR, &existing, true),
        "Checking"
    );
    assert_eq!(
        account_for("Checking", Currency::EUR, &existing, true),
        "Checking (EUR)"
    );
    assert_eq!(account_for("Wise", Currency::EUR, &existing, true), "Wise");
    assert_eq!(account_for("Wise", Currency::EUR, &existing, false), "Wise (EUR)");
}
