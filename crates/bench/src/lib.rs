//! What kakeibo's benchmarks share: a scratch database ([`scratch`]), the server's own counters
//! of commits and statements ([`server`]), the host's CPU steal ([`cpu`]), and the [`Report`] each benchmark prints and leaves
//! for `cargo xtask bench` to assemble into `bench/report/latest.{json,md}`.
//!
//! Benchmarks only: a benchmark stops on what it did not expect, so these helpers panic where a
//! library would return an error.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Benchmark support: stop on the unexpected.

pub mod cpu;
mod report;
pub mod scratch;
pub mod server;

pub use report::{Figure, Report};

/// A number from the environment, or the default.
#[must_use]
pub fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

/// The `p`th percentile (nearest rank) of `sorted`, which must not be empty.
#[must_use]
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "a percentile of no samples");
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )] // Sample counts are far below 2^52; the rank is clamped into the slice.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1).min(sorted.len() - 1)]
}

/// Milliseconds of `samples`, sorted.
#[must_use]
pub fn sorted_ms(samples: &[std::time::Duration]) -> Vec<f64> {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((percentile(&samples, 50.0) - 50.0).abs() < f64::EPSILON);
        assert!((percentile(&samples, 99.0) - 99.0).abs() < f64::EPSILON);
        assert!((percentile(&samples, 100.0) - 100.0).abs() < f64::EPSILON);
        assert!((percentile(&[7.0], 99.0) - 7.0).abs() < f64::EPSILON);
    }
}
