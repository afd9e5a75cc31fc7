//! A benchmark's figures: printed as it ends, and written to `$BENCH_REPORT_DIR/<bench>.json`
//! when `cargo xtask bench` runs it, which assembles every part into the report. The peer
//! benchmark (`bench/peer/langgraph_flows.py`) writes a part of the same shape.

use std::{fmt::Write as _, path::PathBuf};

use serde::{Deserialize, Serialize};

/// What one benchmark measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub bench: String,
    pub title: String,
    /// The command that runs this benchmark alone.
    pub command: String,
    pub figures: Vec<Figure>,
    /// What the figures assume or leave out, in words.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One figure, with the baseline it is read against (measured in the same run) and the target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
    #[serde(default)]
    pub baseline: Option<String>,
    #[serde(default)]
    pub baseline_value: Option<f64>,
    /// `value / baseline_value`, or with `speedup` the other way round: how many times faster.
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub speedup: bool,
    /// The acceptance target, in words ("≤ 2×", "≥ 10× faster").
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub met: Option<bool>,
    /// Shown in the README's table although it has no target (a figure beside a target's).
    #[serde(default)]
    pub headline: bool,
}

impl Figure {
    #[must_use]
    pub fn new(name: &str, value: f64, unit: &str) -> Self {
        Self {
            name: name.to_owned(),
            value,
            unit: unit.to_owned(),
            baseline: None,
            baseline_value: None,
            ratio: None,
            speedup: false,
            target: None,
            met: None,
            headline: false,
        }
    }

    /// Shown in the README's table, target or not.
    #[must_use]
    pub fn headline(mut self) -> Self {
        self.headline = true;
        self
    }

    /// Read as a multiple of `baseline`: `value / baseline`.
    #[must_use]
    pub fn against(mut self, baseline: &str, value: f64) -> Self {
        self.baseline = Some(baseline.to_owned());
        self.baseline_value = Some(value);
        self.ratio = Some(self.value / value);
        self
    }

    /// Read as a speed-up over `baseline`: `baseline / value`.
    #[must_use]
    pub fn faster_than(mut self, baseline: &str, value: f64) -> Self {
        self.baseline = Some(baseline.to_owned());
        self.baseline_value = Some(value);
        self.ratio = Some(value / self.value);
        self.speedup = true;
        self
    }

    /// The target: the ratio (or the value, without a baseline) at most `limit`.
    #[must_use]
    pub fn at_most(mut self, limit: f64) -> Self {
        let read = self.ratio.unwrap_or(self.value);
        self.met = Some(read <= limit);
        self.target = Some(if self.ratio.is_some() {
            format!("≤ {limit}×")
        } else {
            format!("≤ {limit} {}", self.unit)
        });
        self
    }

    /// The target: the ratio (or the value, without a baseline) at least `limit`.
    #[must_use]
    pub fn at_least(mut self, limit: f64) -> Self {
        let read = self.ratio.unwrap_or(self.value);
        self.met = Some(read >= limit);
        let faster = if self.speedup { " faster" } else { "" };
        self.target = Some(if self.ratio.is_some() {
            format!("≥ {limit}×{faster}")
        } else {
            format!("≥ {limit} {}", self.unit)
        });
        self
    }

    /// The target on the value itself, whatever the baseline: at most `limit` (a count).
    #[must_use]
    pub fn value_at_most(mut self, limit: f64) -> Self {
        self.met = Some(self.value <= limit);
        self.target = Some(format!("≤ {limit} {}", self.unit));
        self
    }

    /// The ratio in words: "1.31× COPY" or "12.4× faster".
    #[must_use]
    pub fn ratio_text(&self) -> String {
        match (self.ratio, self.speedup) {
            (Some(r), true) => format!("{} faster", times(r)),
            (Some(r), false) => times(r),
            (None, _) => String::new(),
        }
    }
}

/// A ratio with the precision it deserves.
fn times(ratio: f64) -> String {
    if ratio >= 10.0 {
        format!("{ratio:.1}×")
    } else {
        format!("{ratio:.2}×")
    }
}

/// A value with the precision it deserves.
#[must_use]
pub fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1000.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

impl Report {
    #[must_use]
    pub fn new(bench: &str, title: &str, command: &str) -> Self {
        Self {
            bench: bench.to_owned(),
            title: title.to_owned(),
            command: command.to_owned(),
            figures: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn push(&mut self, figure: Figure) {
        self.figures.push(figure);
    }

    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// The figure called `name`.
    #[must_use]
    pub fn figure(&self, name: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.name == name)
    }

    /// The figures as aligned lines of text.
    #[must_use]
    pub fn text(&self) -> String {
        let mut out = format!("{}\n", self.title);
        let width = self
            .figures
            .iter()
            .map(|f| f.name.chars().count())
            .max()
            .unwrap_or(0);
        for f in &self.figures {
            let _ = write!(out, "  {:<width$}  {:>10} {:<6}", f.name, number(f.value), f.unit);
            if let (Some(baseline), Some(value)) = (&f.baseline, f.baseline_value) {
                let _ = write!(
                    out,
                    "  {:>12} against {baseline} ({} {})",
                    f.ratio_text(),
                    number(value),
                    f.unit
                );
            }
            if let (Some(target), Some(met)) = (&f.target, f.met) {
                let _ = write!(
                    out,
                    "  [target {target}: {}]",
                    if met { "met" } else { "NOT met" }
                );
            }
            out.push('\n');
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        out
    }

    /// Prints the figures, and writes them to `$BENCH_REPORT_DIR/<bench>.json` when it is set.
    pub fn finish(&self) {
        print!("{}", self.text());
        if let Some(path) = part_path(&self.bench) {
            std::fs::write(&path, serde_json::to_vec_pretty(self).unwrap())
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        }
    }

    /// The part another benchmark of this run wrote, if there is one.
    #[must_use]
    pub fn part(bench: &str) -> Option<Self> {
        let text = std::fs::read(part_path(bench)?).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

fn part_path(bench: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("BENCH_REPORT_DIR")?;
    Some(PathBuf::from(dir).join(format!("{bench}.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_targets_read_both_ways() {
        let slower = Figure::new("import", 3.0, "s").against("COPY", 2.0).at_most(2.0);
        assert_eq!((slower.ratio, slower.met), (Some(1.5), Some(true)));
        assert_eq!(slower.ratio_text(), "1.50×");
        let faster = Figure::new("overhead", 0.5, "ms")
            .faster_than("peer", 6.0)
            .at_least(10.0);
        assert_eq!((faster.ratio, faster.met), (Some(12.0), Some(true)));
        assert_eq!(faster.ratio_text(), "12.0× faster");
        assert_eq!(faster.target.as_deref(), Some("≥ 10× faster"));
        let missed = Figure::new("commits", 3.0, "per turn").at_most(2.0);
        assert_eq!(missed.met, Some(false));
        assert_eq!(missed.target.as_deref(), Some("≤ 2 per turn"));
        let counted = Figure::new("commits", 2.0, "per turn")
            .against("peer", 9.0)
            .value_at_most(2.0);
        assert_eq!(
            (counted.met, counted.target.as_deref()),
            (Some(true), Some("≤ 2 per turn"))
        );
        let over = Figure::new("commits", 3.0, "per turn")
            .against("peer", 9.0)
            .value_at_most(2.0);
        assert_eq!(
            over.met,
            Some(false),
            "the ratio (0.33) must not meet a target on the count"
        );
    }

    #[test]
    fn a_report_reads_back_what_it_wrote() {
        let mut report = Report::new("x", "X", "cargo bench");
        report.push(Figure::new("a", 1.0, "ms").against("b", 2.0));
        let back: Report = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(back.figure("a").and_then(|f| f.ratio), Some(0.5));
        assert!(report.text().contains("0.50×"));
    }
}
