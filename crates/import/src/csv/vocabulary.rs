//! The words of statement headers: what each column is called, in English and the common bank
//! vocabularies, and the currency codes a header may end with.

/// What a column holds.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Date,
    ValueDate,
    Description,
    Amount,
    Debit,
    Credit,
    Direction,
    Balance,
    Currency,
    Reference,
    Category,
    /// Which account a row belongs to, in an export of several.
    Account,
    /// A fee the bank charged on the row, taken from the balance beside its amount (Revolut).
    Fee,
}

/// Header names per role, normalised (lowercase, letters and digits, single spaces), best first.
const VOCABULARY: &[(Role, &[&str])] = &[
    (
        Role::Date,
        &[
            "transaction date",
            "txn date",
            "trans date",
            "tran date",
            "date",
            "booking date",
            "buchungstag",
            "buchungsdatum",
            "posting date",
            "posted date",
            "post date",
            "datum",
            "fecha",
            "date operation",
            // The day the money moved (and the balance changed), before the day it was asked.
            "completed date",
            "started date",
            "date utc",
            "created utc",
            "created",
            "datetime",
            "transaction time",
            "date time",
            "timestamp",
            "date processed",
            "order date",
            "transactiedatum",
            "boekdatum",
            "buchung",
            "könyvelés dátuma",
            "transaction date utc",
        ],
    ),
    (
        Role::ValueDate,
        &[
            "value date",
            "value dat",
            "valuta",
            "valutadatum",
            "date de valeur",
            "wertstellung",
            "valor",
        ],
    ),
    (
        Role::Description,
        &[
            "description",
            "narration",
            "particulars",
            "details",
            "transaction details",
            "transaction description",
            "payee",
            "payee name",
            "name",
            "merchant",
            "naam omschrijving",
            "omschrijving",
            "beschreibung",
            "verwendungszweck",
            "buchungstext",
            "auftraggeber empfänger",
            "libellé",
            "libelle",
            "remarque",
            "concepto",
            "memo",
            "remarks",
            "note",
            "notes",
            "title",
            "counterparty",
            "mededelingen",
            "transaction",
            "activity",
            "tegenrekeninghouder",
            "partner név",
            "közlemény",
            "comment",
            "reporting category",
            "type",
        ],
    ),
    (
        Role::Amount,
        &[
            "amount",
            "amt",
            "transaction amount",
            "value",
            "betrag",
            "bedrag",
            "montant",
            "importe",
            "net",
            "total",
            "amount total",
            "amount in rs",
            "amount in inr",
            "amount rs",
            "item total",
            "összeg",
            "gross",
        ],
    ),
    (
        Role::Debit,
        &[
            "debit",
            "debit amount",
            "debit amt",
            "withdrawal",
            "withdrawals",
            "withdrawal amt",
            "withdrawal amount",
            "paid out",
            "money out",
            "outflow",
            "soll",
            "uitgaven",
            "debit inr",
        ],
    ),
    (
        Role::Credit,
        &[
            "credit",
            "credit amount",
            "credit amt",
            "deposit",
            "deposits",
            "deposit amt",
            "deposit amount",
            "paid in",
            "money in",
            "inflow",
            "haben",
            "inkomsten",
            "credit inr",
        ],
    ),
    (
        Role::Direction,
        &[
            "af bij",
            "debit credit",
            "dr cr",
            "cr dr",
            "credit debit indicator",
            "debit credit indicator",
            "creditdebet",
            "billingamountsign",
        ],
    ),
    (
        Role::Balance,
        &[
            "balance",
            "running balance",
            "runningbalance",
            "cash balance",
            "ledger balance",
            "closing balance",
            "available balance",
            "saldo",
            "solde",
            "balance inr",
        ],
    ),
    (
        Role::Currency,
        &[
            "currency",
            "ccy",
            "curr",
            "currency code",
            "währung",
            "wahrung",
            "devise",
            "moneda",
            "valutacode",
            "devizanem",
        ],
    ),
    (
        Role::Reference,
        &[
            "reference",
            "ref",
            "ref no",
            "reference number",
            "chq ref number",
            "chq ref no",
            "cheque no",
            "transaction id",
            "id",
            "referentie",
            "transaction reference",
        ],
    ),
    (Role::Category, &["category", "kategorie", "categorie"]),
    (Role::Account, &["account", "account name"]),
    (Role::Fee, &["fee", "fees", "commission", "comisión", "comision"]),
];

/// Normalises a header: lowercase, runs of anything but letters and digits become one space.
pub fn normalise(header: &str) -> String {
    header
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The role a header names and how good a name it is (lower is better), if any.
pub(super) fn role_of(header: &str) -> Option<(Role, usize)> {
    let name = normalise(header);
    if name.is_empty() {
        return None;
    }
    for (role, names) in VOCABULARY {
        if let Some(rank) = names.iter().position(|n| *n == name) {
            return Some((*role, rank));
        }
    }
    // "Amount (EUR)", "Bedrag (EUR)", "Debit Amount INR": a known name followed by a currency code.
    let (head, tail) = name.rsplit_once(' ')?;
    if KNOWN_CODES.contains(&tail) {
        return role_of(head).map(|(role, rank)| (role, rank.saturating_add(50)));
    }
    None
}

/// Currency codes a header may end with ("Amount (EUR)").
pub const KNOWN_CODES: &[&str] = &[
    "inr", "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "nzd", "sek", "nok", "dkk", "pln", "czk", "huf",
    "sgd", "hkd", "cny", "aed", "sar", "zar", "brl", "mxn", "ars", "try", "ils", "krw", "thb", "myr", "idr",
    "php",
];
