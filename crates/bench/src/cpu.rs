//! The machine's CPU clock as `/proc/stat` counts it, to say how much of a stretch of time the
//! hypervisor took away (steal): on a shared host it comes and goes, and a benchmark that runs
//! one side while it is high and the other while it is low compares the host, not the code.

/// The whole machine's CPU ticks at one moment (Linux; zero elsewhere).
#[derive(Debug, Clone, Copy, Default)]
pub struct Ticks {
    /// Every tick, steal included.
    pub total: u64,
    /// Ticks the hypervisor gave to other guests while this one wanted to run.
    pub steal: u64,
}

impl Ticks {
    #[must_use]
    pub fn now() -> Self {
        let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
            return Self::default();
        };
        // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
        let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
            return Self::default();
        };
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|f| f.parse().ok())
            .collect();
        Self {
            total: fields.iter().sum(),
            steal: fields.get(7).copied().unwrap_or(0),
        }
    }

    /// The ticks from `earlier` to `self`.
    #[must_use]
    pub fn since(self, earlier: Self) -> Self {
        Self {
            total: self.total.saturating_sub(earlier.total),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// Adds another stretch's ticks.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            total: self.total.saturating_add(other.total),
            steal: self.steal.saturating_add(other.steal),
        }
    }

    /// The share of the stretch the hypervisor stole, in percent (`None` with no ticks counted).
    #[must_use]
    pub fn steal_percent(self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)] // Tick counts are far below 2^52.
        (self.total > 0).then(|| self.steal as f64 * 100.0 / self.total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_a_share_of_the_stretch() {
        let before = Ticks {
            total: 1000,
            steal: 10,
        };
        let after = Ticks {
            total: 1400,
            steal: 110,
        };
        let stretch = after.since(before);
        assert_eq!((stretch.total, stretch.steal), (400, 100));
        assert_eq!(stretch.steal_percent(), Some(25.0));
        assert_eq!(stretch.plus(stretch).steal_percent(), Some(25.0));
        assert_eq!(Ticks::default().steal_percent(), None);
    }

    #[test]
    fn this_machine_counts_ticks() {
        if cfg!(target_os = "linux") {
            assert!(Ticks::now().total > 0);
        }
    }
}
