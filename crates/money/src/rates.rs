//! Static exchange rates: kakeibo never calls a rate service, by design.

use crate::Currency;

/// Rates per one unit of the base currency, as integers scaled by [`StaticRates::SCALE`].
#[derive(Debug, Clone, Copy)]
pub struct StaticRates {
    pub base: Currency,
    /// The day the rates were taken, `YYYY-MM-DD`.
    pub as_of: &'static str,
    pub note: &'static str,
    pub per_base_unit: &'static [(Currency, i64)],
}

impl StaticRates {
    /// Rates carry six decimal places.
    pub const SCALE: i64 = 1_000_000;

    /// The scaled rate of `currency`, if the table has it.
    pub fn rate(&self, currency: Currency) -> Option<i64> {
        self.per_base_unit
            .iter()
            .find(|(c, _)| *c == currency)
            .map(|(_, r)| *r)
    }
}

/// The rates of the demo ledger (per 1 INR, as of 2025-06-30).
pub const STATIC_RATES: StaticRates = StaticRates {
    base: Currency::INR,
    as_of: "2025-06-30",
    note: "Static rates, fixed on purpose: kakeibo calls no exchange-rate service.",
    per_base_unit: &[
        (Currency::INR, 1_000_000),
        (Currency::USD, 11_655),
        (Currency::EUR, 10_742),
        (Currency::GBP, 9_186),
        (Currency::JPY, 1_680_000),
    ],
};
