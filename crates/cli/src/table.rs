//! Plain aligned tables for the terminal.

use crate::terminal::visible;

/// Prints `rows` under `header`, each column as wide as its widest cell; columns whose header
/// starts with `>` are right-aligned (the `>` is not printed). Every cell is shown with
/// [`visible`]: a cell is one line, and nothing in it reaches the terminal as a control.
/// [`print`] with a row made of each of `items`.
pub fn print_each<T>(header: &[&str], items: &[T], row: impl Fn(&T) -> Vec<String>) {
    let rows: Vec<Vec<String>> = items.iter().map(row).collect();
    print(header, &rows);
}

pub fn print(header: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| visible(cell).into_owned()).collect())
        .collect();
    let right = |i: usize| header.get(i).is_some_and(|h| h.starts_with('>'));
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .chain(header.get(i).map(|h| h.trim_start_matches('>').chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = widths
                    .get(i)
                    .map_or(0, |w| w.saturating_sub(cell.chars().count()));
                if right(i) {
                    format!("{}{cell}", " ".repeat(pad))
                } else {
                    format!("{cell}{}", " ".repeat(pad))
                }
            })
            .collect();
        crate::outln!("{}", parts.join("  ").trim_end());
    };
    line(header.iter().map(|h| h.trim_start_matches('>')).collect());
    line(
        widths
            .iter()
            .map(|w| "─".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}
