//! A statement's own category words (a card export's "Category" column) mapped to the starting
//! chart's categories. A rule whose pattern is the bank's word overrides this table; a word the
//! table does not know stays on the transaction as a hint and the row stays Uncategorized.

/// The bank's word (compared case-insensitively; of "Group-Detail" words, the detail first) and
/// the starting chart's category it means.
const DEFAULT_TABLE: &[(&str, &str)] = &[
    // Chase, Capital One, Discover and the like.
    ("food & drink", "Dining"),
    ("dining", "Dining"),
    ("restaurants", "Dining"),
    ("restaurant", "Dining"),
    ("fast food", "Dining"),
    ("coffee shops", "Dining"),
    ("eating out", "Dining"),
    ("eating_out", "Dining"),
    ("groceries", "Groceries"),
    ("grocery", "Groceries"),
    ("supermarkets", "Groceries"),
    ("gas", "Transport"),
    ("gas & fuel", "Transport"),
    ("gas/automotive", "Transport"),
    ("automotive", "Transport"),
    ("auto & transport", "Transport"),
    ("transportation", "Transport"),
    ("transport", "Transport"),
    ("public transportation", "Transport"),
    ("shopping", "Shopping"),
    ("merchandise", "Shopping"),
    ("bills & utilities", "Utilities"),
    ("utilities", "Utilities"),
    ("bills", "Utilities"),
    ("mobile phone", "Utilities"),
    ("internet", "Utilities"),
    ("phone/cable", "Utilities"),
    ("travel", "Travel"),
    ("airfare", "Travel"),
    ("air travel", "Travel"),
    ("hotel", "Travel"),
    ("lodging", "Travel"),
    ("holidays", "Travel"),
    ("entertainment", "Entertainment"),
    ("health & wellness", "Health"),
    ("health", "Health"),
    ("medical", "Health"),
    ("pharmacy", "Health"),
    ("doctor", "Health"),
    ("fees & adjustments", "Fees"),
    ("fees", "Fees"),
    ("bank fee", "Fees"),
    ("atm fee", "Fees"),
    ("service fee", "Fees"),
    ("late fee", "Fees"),
    ("rent", "Rent"),
    ("mortgage & rent", "Rent"),
    ("streaming", "Subscriptions"),
    ("subscriptions", "Subscriptions"),
    ("paycheck", "Salary"),
    ("salary", "Salary"),
    ("interest income", "Interest"),
    ("interest", "Interest"),
];

/// The starting chart's category the bank's word `word` means, if the table knows it.
#[must_use]
pub fn default_category(word: &str) -> Option<&'static str> {
    let lower = word.trim().to_lowercase();
    let lookup = |w: &str| {
        DEFAULT_TABLE
            .iter()
            .find(|(bank, _)| *bank == w)
            .map(|(_, ours)| *ours)
    };
    // "Restaurant-Restaurant", "Merchandise & Supplies-Groceries": the detail, then the group.
    lookup(&lower).or_else(|| {
        let (group, detail) = lower.rsplit_once('-')?;
        lookup(detail.trim()).or_else(|| lookup(group.trim()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_words_map() {
        assert_eq!(default_category("Food & Drink"), Some("Dining"));
        assert_eq!(default_category(" GAS "), Some("Transport"));
        assert_eq!(
            default_category("Merchandise & Supplies-Groceries"),
            Some("Groceries")
        );
        assert_eq!(default_category("Gifts & Donations"), None);
    }
}
