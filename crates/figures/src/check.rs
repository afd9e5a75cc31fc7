//! Matching an answer's figures against its turn's tool figures.
//!
//! A money figure is grounded when a tool figure in a currency it can be written in is equal to
//! it in minor units (after rounding the written figure to the currency's minor unit), or is the
//! sum or difference of two such figures; a figure written coarser than the currency (`$2,192`,
//! `₹1.6 lakh`, "about $2,200") is grounded as approximate when the tool figure rounds to it. A
//! percentage is grounded when it is the ratio of two tool figures of one currency, or the
//! change from one to the other, to the precision it is written with. Signs are not compared:
//! "a refund of $20" states the magnitude of a −20.

use std::collections::HashMap;

use kakeibo_money::Currency;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    Source,
    find::{Stated, StatedKind, find},
};

/// The most distinct tool amounts pairs are formed from (sums, differences, ratios).
const PAIRED: usize = 400;

/// Whether a stated figure was found among the turn's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grounding {
    /// Equal to the tool figures named.
    Exact,
    /// Written rounded, and the tool figures round to it.
    Approximate,
    /// Not found in the turn's tool results.
    Ungrounded,
}

/// How a grounded figure was made from the sources (indexes into [`FigureCheck::sources`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum How {
    /// One source's amount.
    Equal { source: usize },
    /// Two sources added.
    Sum { a: usize, b: usize },
    /// One source less another.
    Difference { a: usize, b: usize },
    /// `part` as a share of `whole`.
    Ratio { part: usize, whole: usize },
    /// The change from `from` to `to`, as a share of `from`.
    Change { from: usize, to: usize },
}

/// One stated figure and what was found for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Checked {
    #[serde(flatten)]
    pub stated: Stated,
    pub grounding: Grounding,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub how: Option<How>,
}

/// Every figure of an answer, checked; the tool figures they were found in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FigureCheck {
    pub figures: Vec<Checked>,
    /// The tool figures the grounded ones name, each once.
    pub sources: Vec<Source>,
    /// How many figures are ungrounded.
    pub ungrounded: usize,
    /// The checked answer's length in characters: each figure's `start` and `end` count from
    /// its beginning, which is this many characters before the end of a text that ends with it.
    pub chars: usize,
    /// When this answer corrects an earlier one (asked to, once, for its ungrounded figures):
    /// those figures, as the earlier answer wrote them. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrected: Vec<String>,
}

impl FigureCheck {
    /// The ungrounded figures, as written.
    pub fn ungrounded_texts(&self) -> Vec<&str> {
        self.figures
            .iter()
            .filter(|f| f.grounding == Grounding::Ungrounded)
            .map(|f| f.stated.text.as_str())
            .collect()
    }
}

/// Checks every figure `answer` states against `sources`, the turn's tool figures.
pub fn check(answer: &str, sources: &[Source]) -> FigureCheck {
    let stated = find(answer);
    let chars = answer.chars().count();
    if stated.is_empty() {
        return FigureCheck {
            chars,
            ..FigureCheck::default()
        };
    }
    let pool = Pool::new(sources);
    let mut used: Vec<usize> = Vec::new();
    let mut renumber = |i: usize| {
        if let Some(at) = used.iter().position(|&u| u == i) {
            at
        } else {
            used.push(i);
            used.len() - 1
        }
    };
    let mut figures = Vec::with_capacity(stated.len());
    for s in stated {
        let found = match s.kind {
            StatedKind::Money(_) => pool.money(&s),
            StatedKind::Percent => pool.percent(&s),
        };
        let (grounding, how) = match found {
            Some((grounding, how)) => (grounding, Some(renumbered(how, &mut renumber))),
            None => (Grounding::Ungrounded, None),
        };
        figures.push(Checked {
            stated: s,
            grounding,
            how,
        });
    }
    let ungrounded = figures
        .iter()
        .filter(|f| f.grounding == Grounding::Ungrounded)
        .count();
    FigureCheck {
        figures,
        sources: used.iter().filter_map(|&i| sources.get(i).cloned()).collect(),
        ungrounded,
        chars,
        corrected: Vec::new(),
    }
}

fn renumbered(how: How, n: &mut impl FnMut(usize) -> usize) -> How {
    match how {
        How::Equal { source } => How::Equal { source: n(source) },
        How::Sum { a, b } => How::Sum { a: n(a), b: n(b) },
        How::Difference { a, b } => How::Difference { a: n(a), b: n(b) },
        How::Ratio { part, whole } => How::Ratio {
            part: n(part),
            whole: n(whole),
        },
        How::Change { from, to } => How::Change {
            from: n(from),
            to: n(to),
        },
    }
}

/// The turn's amounts, each distinct (currency, amount) once, the first source with rows
/// preferred.
struct Pool {
    /// (currency, amount, index of its source)
    amounts: Vec<(Currency, i64, usize)>,
}

impl Pool {
    fn new(sources: &[Source]) -> Self {
        let mut seen: HashMap<(Currency, i64), usize> = HashMap::new();
        let mut amounts: Vec<(Currency, i64, usize)> = Vec::new();
        for (i, s) in sources.iter().enumerate() {
            let key = (s.figure.currency, s.figure.amount_minor);
            if let Some(&at) = seen.get(&key) {
                let earlier_has_rows = amounts
                    .get(at)
                    .and_then(|a| sources.get(a.2))
                    .is_some_and(|e| e.figure.rows.is_some());
                if !earlier_has_rows
                    && s.figure.rows.is_some()
                    && let Some(slot) = amounts.get_mut(at)
                {
                    slot.2 = i;
                }
            } else {
                seen.insert(key, amounts.len());
                amounts.push((s.figure.currency, s.figure.amount_minor, i));
            }
        }
        Self { amounts }
    }

    fn money(&self, s: &Stated) -> Option<(Grounding, How)> {
        let StatedKind::Money(marker) = s.kind else {
            return None;
        };
        let candidates: Vec<&(Currency, i64, usize)> =
            self.amounts.iter().filter(|a| marker.admits(a.0)).collect();
        let mut best: Option<(Grounding, How)> = None;
        for &&(currency, amount, source) in &candidates {
            if let Some(g) = compare(s, currency, i128::from(amount)) {
                consider(&mut best, g, How::Equal { source });
                if g == Grounding::Exact {
                    return best;
                }
            }
        }
        if best.is_some() {
            return best;
        }
        let paired = candidates.get(..candidates.len().min(PAIRED)).unwrap_or_default();
        for (i, &&(ca, a, sa)) in paired.iter().enumerate() {
            for &&(cb, b, sb) in paired.iter().skip(i + 1) {
                if ca != cb {
                    continue;
                }
                let (a, b) = (i128::from(a), i128::from(b));
                if let Some(g) = compare(s, ca, a + b) {
                    consider(&mut best, g, How::Sum { a: sa, b: sb });
                }
                if let Some(g) = compare(s, ca, a - b) {
                    consider(&mut best, g, How::Difference { a: sa, b: sb });
                }
                if best.is_some_and(|b| b.0 == Grounding::Exact) {
                    return best;
                }
            }
        }
        best
    }

    fn percent(&self, s: &Stated) -> Option<(Grounding, How)> {
        let (value, unit) = percent_parts(s)?;
        let paired = self
            .amounts
            .get(..self.amounts.len().min(PAIRED))
            .unwrap_or_default();
        for &(ca, a, sa) in paired {
            for &(cb, b, sb) in paired {
                if ca != cb || sa == sb || b == 0 {
                    continue;
                }
                let (a, b) = (i128::from(a).abs(), i128::from(b).abs());
                if close_share(a, b, value, unit) {
                    return Some((Grounding::Exact, How::Ratio { part: sa, whole: sb }));
                }
            }
        }
        for &(ca, a, sa) in paired {
            for &(cb, b, sb) in paired {
                if ca != cb || sa == sb || b == 0 {
                    continue;
                }
                let change = (i128::from(a) - i128::from(b)).abs();
                if close_share(change, i128::from(b).abs(), value, unit) {
                    return Some((Grounding::Exact, How::Change { from: sb, to: sa }));
                }
            }
        }
        None
    }
}

/// Keeps the first match, or the first exact one.
fn consider(best: &mut Option<(Grounding, How)>, grounding: Grounding, how: How) {
    let better = match best {
        None => true,
        Some((was, _)) => grounding == Grounding::Exact && *was != Grounding::Exact,
    };
    if better {
        *best = Some((grounding, how));
    }
}

/// A percentage's digits with how many follow the point, and the unit of its last written digit
/// in the same scale: `12.5%` is (125 at 1 place, 1); "about 20%" is (20 at 0 places, 10).
fn percent_parts(s: &Stated) -> Option<(Scaled, i128)> {
    let magnitude = s.mantissa.abs();
    let (value, places) = if s.exponent >= 0 {
        (magnitude.checked_mul(pow10(s.exponent)?)?, 0)
    } else {
        (magnitude, s.exponent.unsigned_abs())
    };
    if places > 6 {
        return None;
    }
    let mut unit: i128 = 1;
    if s.hedged && places == 0 {
        let mut v = value;
        while v != 0 && v % 10 == 0 && unit < 100 {
            v /= 10;
            unit *= 10;
        }
    }
    Some((Scaled { value, places }, unit))
}

/// A percentage's digits and how many of them follow the decimal point.
#[derive(Debug, Clone, Copy)]
struct Scaled {
    value: i128,
    places: u32,
}

/// Whether `part / whole × 100` rounds to the written percentage: |100·part·10^k − value·whole|
/// is at most half a unit of `whole`.
fn close_share(part: i128, whole: i128, pct: Scaled, unit: i128) -> bool {
    let scale = 10i128.pow(pct.places);
    let Some(lhs) = part
        .checked_mul(100)
        .and_then(|v| v.checked_mul(scale))
        .and_then(|v| v.checked_sub(pct.value.checked_mul(whole)?))
    else {
        return false;
    };
    lhs.checked_mul(2)
        .zip(whole.checked_mul(unit))
        .is_some_and(|(twice, room)| twice.abs() <= room)
}

fn pow10(exponent: i32) -> Option<i128> {
    10i128.checked_pow(u32::try_from(exponent).ok()?)
}

/// Whether `amount` (minor units of `currency`) is what `s` states: exactly, or within the
/// rounding its writing shows.
fn compare(s: &Stated, currency: Currency, amount: i128) -> Option<Grounding> {
    let decimals = i32::try_from(currency.decimals()).ok()?;
    let shift = s.exponent.checked_add(decimals)?;
    let magnitude = s.mantissa.abs();
    let (stated_minor, mut unit) = if shift >= 0 {
        (magnitude.checked_mul(pow10(shift)?)?, pow10(shift)?)
    } else {
        // Written finer than the currency: rounded to its minor unit, half away from zero.
        let divisor = pow10(-shift)?;
        ((magnitude + divisor / 2) / divisor, 1)
    };
    if s.hedged && s.exponent >= 0 {
        // "about $2,200": its trailing zeros are rounding too.
        let mut v = magnitude;
        while v != 0 && v % 10 == 0 {
            v /= 10;
            unit = unit.checked_mul(10)?;
        }
    }
    let difference = (stated_minor - amount.abs()).abs();
    if difference == 0 {
        Some(Grounding::Exact)
    } else if unit > 1 && difference.checked_mul(2)? <= unit {
        Some(Grounding::Approximate)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::{RowRef, ToolFigure};

    use super::*;

    fn src(label: &str, minor: i64, currency: Currency) -> Source {
        Source {
            call_id: "c1".into(),
            tool: "get_spend_report".into(),
            figure: ToolFigure::new(label, format!("/{label}"), minor, currency)
                .with_rows(RowRef::Transactions { ids: Vec::new() }),
        }
    }

    fn groundings(answer: &str, sources: &[Source]) -> Vec<(String, Grounding)> {
        check(answer, sources)
            .figures
            .into_iter()
            .map(|f| (f.stated.text, f.grounding))
            .collect()
    }

    #[test]
    fn exact_rounded_summed_and_wrong() {
        use Grounding::{Approximate, Exact, Ungrounded};
        let usd = [
            src("total", 219_173, Currency::USD),
            src("Dining", 41_250, Currency::USD),
            src("Groceries", 60_000, Currency::USD),
        ];
        assert_eq!(
            groundings(
                "You spent $2,191.73 — about $2,200 — of which $412.50 on dining; dining and groceries \
                 came to $1,012.50, $187.50 more on groceries; dining was 18.8% of it. Rent: $950.00.",
                &usd
            ),
            [
                ("$2,191.73".into(), Exact),
                ("$2,200".into(), Approximate),
                ("$412.50".into(), Exact),
                ("$1,012.50".into(), Exact),
                ("$187.50".into(), Exact),
                ("18.8%".into(), Exact),
                ("$950.00".into(), Ungrounded),
            ]
        );
        // Rounded without a hedge: to the last digit written.
        assert_eq!(groundings("$2,192", &usd), [("$2,192".into(), Approximate)]);
        assert_eq!(groundings("$2,191", &usd), [("$2,191".into(), Ungrounded)]);
        // The currency must fit: no euro is a dollar.
        assert_eq!(groundings("€2,191.73", &usd), [("€2,191.73".into(), Ungrounded)]);
    }

    #[test]
    fn lakh_and_change_and_sources_renumbered() {
        let inr = [
            src("May", 14_000_000, Currency::INR),
            src("June", 16_100_000, Currency::INR),
        ];
        let checked = check("June's ₹1.6 lakh was up 15% on May.", &inr);
        assert_eq!(checked.ungrounded, 0, "{checked:?}");
        assert_eq!(checked.figures[0].grounding, Grounding::Approximate);
        assert_eq!(checked.figures[0].how, Some(How::Equal { source: 0 }));
        assert_eq!(checked.sources[0].figure.label, "June");
        assert_eq!(checked.figures[1].how, Some(How::Change { from: 1, to: 0 }));
    }
}
