//! `convert_currency`: static rates, stated with their date.

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Amount;
use kakeibo_ledger::{Currency, STATIC_RATES, StaticRates};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum CurrencyCode {
    #[allow(clippy::upper_case_acronyms)]
    INR,
    #[allow(clippy::upper_case_acronyms)]
    USD,
    #[allow(clippy::upper_case_acronyms)]
    EUR,
    #[allow(clippy::upper_case_acronyms)]
    GBP,
    #[allow(clippy::upper_case_acronyms)]
    JPY,
}

impl CurrencyCode {
    pub fn currency(self) -> Currency {
        match self {
            Self::INR => Currency::INR,
            Self::USD => Currency::USD,
            Self::EUR => Currency::EUR,
            Self::GBP => Currency::GBP,
            Self::JPY => Currency::JPY,
        }
    }
}

/// What to convert.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConvertInput {
    /// The amount in minor units of `from` (paise, cents; yen have none).
    pub amount_minor: i64,
    pub from: CurrencyCode,
    pub to: CurrencyCode,
}

#[derive(Debug, Serialize)]
pub struct Converted {
    pub from: Amount,
    pub to: Amount,
    /// Units of `to` per unit of `from`, six decimal places.
    pub rate: String,
    pub as_of: &'static str,
    pub note: &'static str,
}

#[derive(Debug)]
pub struct ConvertCurrency;

impl TypedTool for ConvertCurrency {
    type Input = ConvertInput;
    type Output = Converted;
    const NAME: &'static str = "convert_currency";
    const DESCRIPTION: &'static str = "Convert an amount between INR, USD, EUR, GBP and JPY at kakeibo's static \
        rates (with their as-of date; not live). Use it when the user asks what an amount is in another \
        currency. Input and output are minor units.";
    const TIER: Tier = Tier::Read;

    fn run(&self, input: ConvertInput) -> BoxFuture<'_, Result<Converted, ToolError>> {
        Box::pin(async move {
            let (from, to) = (input.from.currency(), input.to.currency());
            let converted = convert(&STATIC_RATES, input.amount_minor, from, to).ok_or_else(|| {
                ToolError::Refused(format!("{} is too large to convert", input.amount_minor))
            })?;
            Ok(Converted {
                from: Amount::new(input.amount_minor, from),
                to: Amount::new(converted, to),
                rate: rate_text(&STATIC_RATES, from, to).unwrap_or_default(),
                as_of: STATIC_RATES.as_of,
                note: "Static rates, not live market prices.",
            })
        })
    }
}

/// `amount_minor` of `from` in minor units of `to`, rounded half away from zero, in integers:
/// minor_to = minor_from × rate_to × 10^dec_to / (rate_from × 10^dec_from).
pub fn convert(rates: &StaticRates, amount_minor: i64, from: Currency, to: Currency) -> Option<i64> {
    let (rate_from, rate_to) = (i128::from(rates.rate(from)?), i128::from(rates.rate(to)?));
    let numerator = i128::from(amount_minor) * rate_to * 10i128.pow(to.decimals());
    let denominator = rate_from * 10i128.pow(from.decimals());
    let half = denominator / 2;
    let rounded = if numerator >= 0 {
        (numerator + half) / denominator
    } else {
        (numerator - half) / denominator
    };
    i64::try_from(rounded).ok()
}

/// rate_to / rate_from with six decimals, rounded half up.
fn rate_text(rates: &StaticRates, from: Currency, to: Currency) -> Option<String> {
    let (rate_from, rate_to) = (i128::from(rates.rate(from)?), i128::from(rates.rate(to)?));
    let scaled = (rate_to * 1_000_000 + rate_from / 2) / rate_from;
    Some(format!("{}.{:06}", scaled / 1_000_000, scaled % 1_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_in_minor_units() {
        // ₹1,000.00 at 0.011655 USD per rupee is $11.655, which rounds to $11.66.
        assert_eq!(
            convert(&STATIC_RATES, 100_000, Currency::INR, Currency::USD),
            Some(1166)
        );
        // ¥1,680 is ₹1,000.00.
        assert_eq!(
            convert(&STATIC_RATES, 1_680, Currency::JPY, Currency::INR),
            Some(100_000)
        );
        assert_eq!(
            convert(&STATIC_RATES, -100_000, Currency::INR, Currency::USD),
            Some(-1166)
        );
        assert_eq!(convert(&STATIC_RATES, 5, Currency::EUR, Currency::EUR), Some(5));
        assert_eq!(
            rate_text(&STATIC_RATES, Currency::INR, Currency::JPY).as_deref(),
            Some("1.680000")
        );
        assert_eq!(
            rate_text(&STATIC_RATES, Currency::USD, Currency::INR).as_deref(),
            Some("85.800086")
        );
    }
}
