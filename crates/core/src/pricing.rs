//! List prices per model and the cost of a run, in millionths of a dollar. A provider reports
//! the token counts, so no arithmetic here may overflow or panic: every step saturates.

#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

use serde::{Deserialize, Serialize};

use crate::message::Usage;

/// Dollars in millionths (`1_500_000` is $1.50): exact sums, six decimal places.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct MicroUsd(pub i64);

impl MicroUsd {
    /// `0.004512` style, six decimals.
    pub fn decimal(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let v = self.0.unsigned_abs();
        format!("{sign}{}.{:06}", v / 1_000_000, v % 1_000_000)
    }

    /// For people: six decimals below a cent, four above.
    pub fn format(self) -> String {
        if self.0.abs() < 10_000 {
            format!("${}", self.decimal())
        } else {
            // Six ASCII decimals: the last two go.
            let text = self.decimal();
            format!("${}", text.get(..text.len().saturating_sub(2)).unwrap_or(&text))
        }
    }
}

impl std::ops::Add for MicroUsd {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self(self.0.saturating_add(other.0))
    }
}

impl std::iter::Sum for MicroUsd {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), |sum, each| Self(sum.0.saturating_add(each.0)))
    }
}

impl std::ops::AddAssign for MicroUsd {
    fn add_assign(&mut self, other: Self) {
        self.0 = self.0.saturating_add(other.0);
    }
}

/// USD per million tokens, in millionths of a dollar per million tokens (so `1.5` is 1_500_000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    pub input: i64,
    pub output: i64,
    pub cached_input: i64,
}

impl Price {
    /// What a scripted or replayed model costs.
    pub const FREE: Self = Self {
        input: 0,
        output: 0,
        cached_input: 0,
    };

    /// `INPUT,OUTPUT[,CACHED]` in US dollars per million tokens (`0.30,2.50`; cached input costs
    /// a tenth of input when not given). The setting `MODEL_PRICE` of a model with no list price.
    pub fn parse(text: &str) -> Result<Self, String> {
        let dollars: Vec<&str> = text.split(',').map(str::trim).collect();
        let per_million = |field: &str, name: &str| -> Result<i64, String> {
            let usd: f64 = field
                .parse()
                .map_err(|_| format!("{name} {field:?} is not a number of dollars"))?;
            if !usd.is_finite() || !(0.0..=10_000.0).contains(&usd) {
                return Err(format!("{name} {field:?} is not between 0 and 10000 dollars"));
            }
            #[allow(clippy::cast_possible_truncation)]
            Ok((usd * 1_000_000.0).round() as i64)
        };
        let (input, output, cached) = match dollars.as_slice() {
            [input, output] => (*input, *output, None),
            [input, output, cached] => (*input, *output, Some(*cached)),
            _ => return Err("give INPUT,OUTPUT[,CACHED] in dollars per million tokens".to_owned()),
        };
        let input = per_million(input, "input")?;
        Ok(Self {
            input,
            output: per_million(output, "output")?,
            cached_input: cached.map_or(Ok(input / 10), |c| per_million(c, "cached input"))?,
        })
    }
}

/// A provider at a price of the operator's (a model with no list price, or a negotiated one).
pub struct Priced {
    pub inner: std::sync::Arc<dyn crate::provider::Provider>,
    pub price: Price,
}

impl std::fmt::Debug for Priced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Priced")
            .field("model", &self.inner.model())
            .field("price", &self.price)
            .finish()
    }
}

impl crate::provider::Provider for Priced {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn price(&self) -> Option<Price> {
        Some(self.price)
    }

    fn stream<'a>(
        &'a self,
        request: &'a crate::provider::ModelRequest,
    ) -> futures_util::stream::BoxStream<
        'a,
        Result<crate::provider::StreamEvent, crate::provider::ProviderError>,
    > {
        self.inner.stream(request)
    }

    fn count_tokens<'a>(
        &'a self,
        request: &'a crate::provider::ModelRequest,
    ) -> futures_util::future::BoxFuture<'a, Option<u64>> {
        self.inner.count_tokens(request)
    }
}

/// The list prices of SPEC.md, matched by exact model id, then by prefix.
const PRICES: &[(&str, Price)] = &[
    (
        "gemini-3.6-flash",
        Price {
            input: 1_500_000,
            output: 7_500_000,
            cached_input: 150_000,
        },
    ),
    (
        "gemini-3.5-flash-lite",
        Price {
            input: 300_000,
            output: 2_500_000,
            cached_input: 30_000,
        },
    ),
    (
        "gemini-3.5-flash",
        Price {
            input: 1_500_000,
            output: 9_000_000,
            cached_input: 150_000,
        },
    ),
    (
        "gemini-3.1-pro-preview",
        Price {
            input: 2_000_000,
            output: 12_000_000,
            cached_input: 200_000,
        },
    ),
    (
        "gemini-3.1-flash-lite",
        Price {
            input: 250_000,
            output: 1_500_000,
            cached_input: 25_000,
        },
    ),
    (
        "gemini-3-flash-preview",
        Price {
            input: 500_000,
            output: 3_000_000,
            cached_input: 50_000,
        },
    ),
    (
        "gemini-2.5-flash-lite",
        Price {
            input: 100_000,
            output: 400_000,
            cached_input: 10_000,
        },
    ),
    (
        "gemini-2.5-flash",
        Price {
            input: 300_000,
            output: 2_500_000,
            cached_input: 30_000,
        },
    ),
    (
        "gemini-2.5-pro",
        Price {
            input: 1_250_000,
            output: 10_000_000,
            cached_input: 130_000,
        },
    ),
];

/// The price of `model`: an exact id, else the longest id it starts with; `None` is unpriced.
pub fn price_of(model: &str) -> Option<Price> {
    PRICES
        .iter()
        .find(|(id, _)| *id == model)
        .map(|(_, p)| *p)
        .or_else(|| {
            PRICES
                .iter()
                .filter(|(id, _)| model.starts_with(id))
                .max_by_key(|(id, _)| id.len())
                .map(|(_, p)| *p)
        })
}

/// What `usage` costs on `model` at list price (an unpriced model costs nothing), and what it
/// would have cost with no cache.
pub fn cost(model: &str, usage: &Usage) -> (MicroUsd, MicroUsd) {
    cost_at(price_of(model), usage)
}

/// What `usage` costs at `price` (nothing when `None`), and what it would have cost with no cache.
pub fn cost_at(price: Option<Price>, usage: &Usage) -> (MicroUsd, MicroUsd) {
    let Some(price) = price else {
        return (MicroUsd(0), MicroUsd(0));
    };
    let per_token =
        |tokens: u64, per_million: i64| i128::from(tokens).saturating_mul(i128::from(per_million));
    let uncached_input = usage.input_tokens.saturating_sub(usage.cached_tokens);
    let total = per_token(uncached_input, price.input)
        .saturating_add(per_token(usage.cached_tokens, price.cached_input))
        .saturating_add(per_token(usage.output_tokens, price.output));
    let baseline = per_token(usage.input_tokens, price.input)
        .saturating_add(per_token(usage.output_tokens, price.output));
    let round = |x: i128| MicroUsd(i64::try_from(x.saturating_add(500_000) / 1_000_000).unwrap_or(i64::MAX));
    (round(total), round(baseline))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_setting_reads_dollars_per_million_tokens() {
        assert_eq!(
            Price::parse("0.30, 2.50").unwrap(),
            Price {
                input: 300_000,
                output: 2_500_000,
                cached_input: 30_000
            }
        );
        assert_eq!(Price::parse("0,0,0").unwrap(), Price::FREE);
        assert!(Price::parse("1").unwrap_err().contains("INPUT,OUTPUT"));
        assert!(Price::parse("1,x").unwrap_err().contains("\"x\" is not a number"));
        assert!(Price::parse("1,-2").unwrap_err().contains("between 0 and 10000"));
    }

    #[test]
    fn costs_at_list_price() {
        // 6005 input of which 4481 cached, 300 output on gemini-3.6-flash:
        // 1524 × 1.5 + 4481 × 0.15 + 300 × 7.5 = 2286 + 672.15 + 2250 = 5208.15 millionths.
        let usage = Usage {
            input_tokens: 6005,
            output_tokens: 300,
            cached_tokens: 4481,
            thought_tokens: 0,
        };
        let (total, baseline) = cost("gemini-3.6-flash", &usage);
        assert_eq!(total, MicroUsd(5208));
        assert_eq!(baseline, MicroUsd(11_258));
        assert_eq!(total.format(), "$0.005208");
        assert_eq!(MicroUsd(1_234_567).format(), "$1.2345");
        assert_eq!(
            price_of("gemini-2.5-flash-lite-001"),
            price_of("gemini-2.5-flash-lite")
        );
        assert_eq!(cost("my-local-llama", &usage).0, MicroUsd(0));
    }
}
