//! Plain aligned tables for the terminal.

/// Prints `rows` under `header`, each column as wide as its widest cell; columns whose header
/// starts with `>` are right-aligned (the `>` is not printed).
pub fn print(header: &[&str], rows: &[Vec<String>]) {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .chain(std::iter::once(header[i].trim_start_matches('>').chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = widths[i].saturating_sub(cell.chars().count());
                if header[i].starts_with('>') {
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
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
