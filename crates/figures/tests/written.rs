//! The figure finder against a table of written figures: every spelling the finder must read,
//! and false friends it must leave alone. Precision and recall are printed and must both be at
//! least 99%.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use kakeibo_figures::{StatedKind, find};

fn key(value: &str, unit: &str, approximate: bool) -> String {
    format!("{value} {unit}{}", if approximate { " ~" } else { "" })
}

#[test]
fn the_finder_reads_the_table_with_precision_and_recall_of_99_percent() {
    let table = include_str!("written.txt");
    let (mut expected_n, mut found_n, mut right) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (sentence, figures) = line.split_once(" ||").expect("a `||` on every line");
        let mut expected: Vec<String> = figures
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                let parts: Vec<&str> = f.split(' ').collect();
                key(parts[0], parts[1], parts.get(2) == Some(&"~"))
            })
            .collect();
        let found: Vec<String> = find(sentence)
            .into_iter()
            .map(|f| {
                let unit = match f.kind {
                    StatedKind::Money(m) => m.to_string(),
                    StatedKind::Percent => "%".to_owned(),
                };
                key(&f.value, &unit, f.approximate)
            })
            .collect();
        expected_n += expected.len();
        found_n += found.len();
        for f in &found {
            if let Some(at) = expected.iter().position(|e| e == f) {
                expected.remove(at);
                right += 1;
            } else {
                misses.push(format!("{sentence}: found {f} not in the table"));
            }
        }
        misses.extend(expected.iter().map(|e| format!("{sentence}: missed {e}")));
    }
    #[allow(clippy::cast_precision_loss)]
    let (precision, recall) = (right as f64 / found_n as f64, right as f64 / expected_n as f64);
    println!(
        "figure finder: {expected_n} written figures; precision {:.2}% ({right}/{found_n}), recall {:.2}% ({right}/{expected_n})",
        precision * 100.0,
        recall * 100.0
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(
        expected_n >= 150,
        "the table holds {expected_n} figures; it must hold at least 150"
    );
    assert!(precision >= 0.99 && recall >= 0.99, "{misses:#?}");
}
