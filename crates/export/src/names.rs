//! Account names in each target's syntax, and back.
//!
//! kakeibo names an account in one free-text string, unique for its owner (`Checking`,
//! `Food & Dining`, `Currency conversion (EUR)`). The plain-text tools want a root by type
//! (`Assets`, `Liabilities`, `Income`, `Expenses`, `Equity`) and a syntax of their own; each
//! mapping below is stable (the same name always gives the same text) and reversible
//! ([`journal_decode`], [`beancount_decode`] give the name back exactly), so nothing the person
//! wrote is lost on the way out.
//!
//! - **hledger and Ledger**: a name ends at two spaces or a tab, `:` separates components, a
//!   name in parentheses or brackets is a virtual posting, and `;` starts a comment. Those (and
//!   `%`, the escape itself, and control characters) are written `%XX`, the UTF-8 bytes in hex;
//!   the rest is kept, so `Food & Dining` stays `Food & Dining`.
//! - **Beancount**: a component is ASCII letters, digits and `-`, starting with a capital. A space
//!   is written `-`; every other byte (the letter `X` included, and a lower-case or digit first
//!   letter) is `X` and its two hex digits: `Food & Dining` → `Food-X26-Dining`,
//!   `7-Eleven` → `X37X2DEleven`.

use kakeibo_ledger::AccountType;

/// The root every tool expects for an account of this type.
pub fn root(account_type: AccountType) -> &'static str {
    match account_type {
        AccountType::Asset => "Assets",
        AccountType::Liability => "Liabilities",
        AccountType::Income => "Income",
        AccountType::Expense => "Expenses",
        AccountType::Equity => "Equity",
    }
}

fn hex_byte(out: &mut String, prefix: char, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push(prefix);
    for nibble in [byte >> 4, byte & 0x0f] {
        out.push(char::from(HEX.get(usize::from(nibble)).copied().unwrap_or(b'0')));
    }
}

fn escape_char(out: &mut String, prefix: char, c: char) {
    let mut buf = [0u8; 4];
    for byte in c.encode_utf8(&mut buf).bytes() {
        hex_byte(out, prefix, byte);
    }
}

/// A kakeibo name as one hledger/Ledger account component.
pub fn journal_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous: Option<char> = None;
    let last = name.chars().count().saturating_sub(1);
    for (i, c) in name.chars().enumerate() {
        let edge_space = c == ' ' && (i == 0 || i == last || previous == Some(' '));
        let opens_virtual = i == 0 && matches!(c, '(' | '[');
        let escaped = matches!(c, '%' | ':' | ';' | '\t') || c.is_control() || edge_space || opens_virtual;
        if escaped {
            escape_char(&mut out, '%', c);
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

/// A kakeibo name as one Beancount account component.
pub fn beancount_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    for (i, c) in name.chars().enumerate() {
        let plain = c.is_ascii_alphanumeric() && c != 'X' && (i > 0 || c.is_ascii_uppercase());
        if plain {
            out.push(c);
        } else if c == ' ' && i > 0 {
            out.push('-');
        } else {
            escape_char(&mut out, 'X', c);
        }
    }
    out
}

/// The full hledger/Ledger account name.
pub fn journal_account(account_type: AccountType, name: &str) -> String {
    format!("{}:{}", root(account_type), journal_component(name))
}

/// The full Beancount account name.
pub fn beancount_account(account_type: AccountType, name: &str) -> String {
    format!("{}:{}", root(account_type), beancount_component(name))
}

/// Bytes from `%XX`/`XXX` escapes: the hex pair after `prefix`.
fn unhex(pair: (Option<char>, Option<char>)) -> Option<u8> {
    let (Some(high), Some(low)) = pair else {
        return None;
    };
    let high = u8::try_from(high.to_digit(16)?).ok()?;
    let low = u8::try_from(low.to_digit(16)?).ok()?;
    Some(high * 16 + low)
}

fn decode(component: &str, prefix: char, space: Option<char>) -> Option<String> {
    let mut bytes = Vec::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        if c == prefix {
            bytes.push(unhex((chars.next(), chars.next()))?);
        } else if Some(c) == space {
            bytes.push(b' ');
        } else {
            let mut buf = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    String::from_utf8(bytes).ok()
}

/// The kakeibo name of an hledger/Ledger component written by [`journal_component`].
pub fn journal_decode(component: &str) -> Option<String> {
    decode(component, '%', None)
}

/// The kakeibo name of a Beancount component written by [`beancount_component`].
pub fn beancount_decode(component: &str) -> Option<String> {
    decode(component, 'X', Some('-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_read_as_a_person_wrote_them_where_the_syntax_allows() {
        assert_eq!(journal_component("Food & Dining"), "Food & Dining");
        assert_eq!(journal_component("Rent: flat 2"), "Rent%3A flat 2");
        assert_eq!(journal_component("a  b"), "a %20b");
        assert_eq!(journal_component("(virtual)"), "%28virtual)");
        assert_eq!(journal_component("Tea; coffee"), "Tea%3B coffee");
        assert_eq!(beancount_component("Food & Dining"), "Food-X26-Dining");
        assert_eq!(beancount_component("7-Eleven"), "X37X2DEleven");
        assert_eq!(beancount_component("ebay"), "X65bay");
        assert_eq!(beancount_component("Xbox"), "X58box");
        assert_eq!(
            beancount_component("Currency conversion (EUR)"),
            "Currency-conversion-X28EURX29"
        );
        assert_eq!(beancount_component("家計"), "XE5XAEXB6XE8XA8X88");
    }

    proptest! {
        #[test]
        fn every_name_comes_back(name in "\\PC{1,40}|[ -~]{1,40}") {
            let journal = journal_component(&name);
            prop_assert_eq!(journal_decode(&journal), Some(name.clone()));
            prop_assert!(!journal.contains("  ") && !journal.contains(':') && !journal.contains(';'));
            prop_assert!(!journal.starts_with(' ') && !journal.ends_with(' '));
            let bean = beancount_component(&name);
            prop_assert_eq!(beancount_decode(&bean), Some(name.clone()));
            prop_assert!(bean.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{}", bean);
            prop_assert!(bean.starts_with(|c: char| c.is_ascii_uppercase()), "{}", bean);
        }
    }
}
