//! Where the data is: the delimiter, the header row past any banner lines, and which column
//! holds what, by header names in English and common bank vocabularies.

use kakeibo_statement::{DateOrder, DecimalMark, Mapping};
use std::collections::BTreeMap;

use super::{
    ImportError,
    vocabulary::{KNOWN_CODES, Role, normalise, role_of},
};

/// The columns of a statement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Columns {
    pub date: usize,
    /// Description columns, best first: the first non-empty one describes a row.
    pub description: Vec<usize>,
    pub amount: Option<usize>,
    pub debit: Option<usize>,
    pub credit: Option<usize>,
    pub direction: Option<usize>,
    pub currency: Option<usize>,
    pub reference: Option<usize>,
    pub category: Option<usize>,
    /// The running balance after each row, which the amounts are reconciled against.
    #[serde(default)]
    pub balance: Option<usize>,
    /// Which account each row belongs to, when the file is an export of several.
    #[serde(default)]
    pub account: Option<usize>,
    /// A fee charged on each row beside its amount: the row moves the amount less the fee.
    #[serde(default)]
    pub fee: Option<usize>,
}

/// The shape of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub delimiter: u8,
    /// 1-based line of the header row; 0 when the file has none (columns inferred from cells).
    pub header_line: usize,
    pub headers: Vec<String>,
    pub columns: Columns,
    /// Lines at the top that the mapping says to pass over.
    pub skip: usize,
}

impl Layout {
    /// `{role: header}` for reports.
    pub fn described(&self) -> BTreeMap<&'static str, String> {
        let name = |i: usize| {
            self.headers
                .get(i)
                .filter(|h| !h.trim().is_empty())
                .cloned()
                .unwrap_or_else(|| format!("column {}", i.saturating_add(1)))
        };
        let c = &self.columns;
        let mut out = BTreeMap::new();
        out.insert("date", name(c.date));
        out.insert(
            "description",
            c.description
                .iter()
                .map(|i| name(*i))
                .collect::<Vec<_>>()
                .join(" / "),
        );
        for (key, column) in [
            ("amount", c.amount),
            ("debit", c.debit),
            ("credit", c.credit),
            ("direction", c.direction),
            ("currency", c.currency),
            ("reference", c.reference),
            ("category", c.category),
            ("balance", c.balance),
            ("account", c.account),
            ("fee", c.fee),
        ] {
            if let Some(i) = column {
                out.insert(key, name(i));
            }
        }
        out
    }
}

const CANDIDATE_DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];
/// How far down a file the header row may be.
const HEADER_SEARCH_LINES: usize = 40;

/// Records of `text` split by `delimiter`, each with the 1-based line it starts on.
pub fn records(text: &str, delimiter: u8) -> impl Iterator<Item = (usize, Vec<String>)> + '_ {
    spanned_records(text, delimiter).map(|r| (r.line, r.cells))
}

/// One record of a statement and the physical lines it covers (more than one when a quoted cell
/// holds a line break — or when a quote is never closed and swallows the lines after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// 1-based line the record starts on.
    pub line: usize,
    /// 1-based line the record ends on (`line` for a record on one line).
    pub last_line: usize,
    pub cells: Vec<String>,
}

/// Records of `text` split by `delimiter`, with the lines each covers.
///
/// The line is counted here from the record's byte offset: the reader's own line number is taken
/// before it skips blank lines, so after a blank line it would point one line too early. A
/// record ends where the reader stands after reading it, its terminator included.
pub fn spanned_records(text: &str, delimiter: u8) -> impl Iterator<Item = Record> + '_ {
    let bytes = text.as_bytes();
    let (mut offset, mut line) = (0usize, 1usize);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let mut record = csv::StringRecord::new();
    std::iter::from_fn(move || {
        // The text is a `str`, so the reader's only error (invalid UTF-8) cannot happen; stop
        // rather than loop should it ever.
        if !reader.read_record(&mut record).ok()? {
            return None;
        }
        let mut start = record
            .position()
            .map_or(offset, |p| usize::try_from(p.byte()).unwrap_or(offset));
        while matches!(bytes.get(start), Some(b'\n' | b'\r')) {
            start = start.saturating_add(1);
        }
        line = line.saturating_add(newlines(bytes.get(offset.min(start)..start).unwrap_or_default()));
        offset = start.max(offset);
        let end = usize::try_from(reader.position().byte())
            .unwrap_or(bytes.len())
            .clamp(offset, bytes.len());
        let raw = bytes.get(offset..end).unwrap_or_default();
        let inner = newlines(raw).saturating_sub(usize::from(raw.ends_with(b"\n")));
        Some(Record {
            line,
            last_line: line.saturating_add(inner),
            cells: record.iter().map(str::to_owned).collect(),
        })
    })
}

#[allow(clippy::naive_bytecount)] // Short slices between two records.
fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// Finds the delimiter, the header row and the columns (as far as the mapping leaves them open).
pub fn detect(text: &str, mapping: &Mapping) -> Result<Layout, ImportError> {
    let delimiters: Vec<u8> = match mapping.delimiter_byte()? {
        Some(d) => vec![d],
        None => CANDIDATE_DELIMITERS.to_vec(),
    };
    let skip = mapping.skip_lines.unwrap_or(0);
    if mapping.header == Some(false) {
        return infer(text, mapping, &delimiters, skip).ok_or(ImportError::NoHeader);
    }
    let mut best: Option<(usize, Layout)> = None;
    for &delimiter in &delimiters {
        let candidates = records(text, delimiter).skip_while(|(line, _)| *line <= skip);
        for (line, cells) in candidates.take(HEADER_SEARCH_LINES) {
            if cells.len() < 2 {
                continue;
            }
            let score = cells.iter().filter(|c| role_of(c).is_some()).count();
            let named = [&mapping.date, &mapping.amount, &mapping.debit, &mapping.credit]
                .into_iter()
                .flatten()
                .any(|wanted| {
                    wanted.parse::<usize>().is_err()
                        && cells.iter().any(|c| normalise(c) == normalise(wanted))
                });
            // A header the mapping vouches for is the first line of two cells or more after the
            // skipped ones.
            let vouched = mapping.header == Some(true);
            if score == 0 && !named && !vouched {
                continue;
            }
            if let Some(columns) = map_columns(&cells, mapping) {
                if best
                    .as_ref()
                    .is_none_or(|(s, l)| score > *s || (score == *s && line < l.header_line))
                {
                    best = Some((
                        score,
                        Layout {
                            delimiter,
                            header_line: line,
                            headers: cells,
                            columns,
                            skip,
                        },
                    ));
                }
                break;
            }
            if vouched {
                break;
            }
        }
    }
    best.map(|(_, layout)| layout)
        .or_else(|| {
            (mapping.header != Some(true))
                .then(|| infer(text, mapping, &delimiters, skip))
                .flatten()
        })
        .ok_or(ImportError::NoHeader)
}

/// A file without a header row: columns named by the mapping's numbers, or else inferred from
/// the cells — the first column that reads as dates, the first other one that reads as amounts,
/// and the text columns (most letters first) for the description. Lines starting with `#` are
/// comments.
#[allow(clippy::cast_precision_loss)] // Shares of at most 50 rows.
fn infer(text: &str, mapping: &Mapping, delimiters: &[u8], skip: usize) -> Option<Layout> {
    use super::{amount, date};
    for &delimiter in delimiters {
        let rows: Vec<Vec<String>> = records(text, delimiter)
            .filter(|(line, _)| *line > skip)
            .map(|(_, cells)| cells)
            .filter(|cells| {
                !cells.first().is_some_and(|c| c.starts_with('#')) && cells.iter().any(|c| !c.is_empty())
            })
            .take(50)
            .collect();
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        let full = rows.iter().filter(|r| r.len() == width).count();
        if width < 2 || full.saturating_mul(5) < rows.len().saturating_mul(4) {
            continue;
        }
        let headers: Vec<String> = (1..=width).map(|n| format!("column {n}")).collect();
        if let Some(columns) = map_columns(&headers, mapping) {
            return Some(Layout {
                delimiter,
                header_line: 0,
                headers,
                columns,
                skip,
            });
        }
        // A first row of text is a header we could not read, not data: infer nothing then.
        let first_row_is_text = rows
            .first()
            .is_some_and(|r| r.iter().all(|c| !c.chars().any(|ch| ch.is_ascii_digit())));
        if first_row_is_text {
            continue;
        }
        let share = |column: usize, reads: &dyn Fn(&str) -> bool| {
            let cells: Vec<&str> = rows
                .iter()
                .filter_map(|r| r.get(column))
                .map(String::as_str)
                .filter(|c| !c.is_empty())
                .collect();
            if cells.is_empty() {
                0.0
            } else {
                cells.iter().filter(|c| reads(c)).count() as f64 / cells.len() as f64
            }
        };
        let is_date = |c: &str| {
            date::parse_date(c, DateOrder::DayFirst)
                .or_else(|_| date::parse_date(c, DateOrder::MonthFirst))
                .is_ok()
        };
        let is_amount = |c: &str| {
            [DecimalMark::Point, DecimalMark::Comma].iter().any(|m| {
                matches!(
                    amount::parse_amount(c, *m, kakeibo_money::Currency::INR),
                    Ok(Some(_))
                )
            })
        };
        let Some(date) = (0..width).find(|c| share(*c, &is_date) >= 0.8) else {
            continue;
        };
        let amounts: Vec<usize> = (0..width)
            .filter(|c| *c != date && share(*c, &is_amount) >= 0.6)
            .collect();
        let Some(&first_amount) = amounts.first() else {
            continue;
        };
        // Two columns of money: the one that is the running balance of the other is the balance
        // (a header-less export may put the balance first).
        let pair = balance_pair(&rows, date, &amounts);
        // Two columns of money and neither is the other's running balance (money in and money out,
        // or an amount and a fee): which is which is not for the importer to guess.
        if pair.is_none() && amounts.len() > 1 && mapping.amount.is_none() && mapping.debit.is_none() {
            continue;
        }
        let (amount, balance) = pair.map_or((first_amount, None), |(a, b)| (a, Some(b)));
        let letters = |column: usize| -> usize {
            rows.iter()
                .filter_map(|r| r.get(column))
                .map(|c| c.chars().filter(|ch| ch.is_alphabetic()).count())
                .sum()
        };
        // A column of currency codes ("EUR" on every row) names each row's currency.
        let currency = (0..width).find(|c| {
            *c != date
                && share(*c, &|cell: &str| {
                    cell.len() == 3 && KNOWN_CODES.contains(&cell.to_lowercase().as_str())
                }) >= 0.99
        });
        let mut description: Vec<usize> = (0..width)
            .filter(|c| {
                *c != date && *c != amount && Some(*c) != balance && Some(*c) != currency && letters(*c) > 0
            })
            .collect();
        description.sort_by_key(|c| std::cmp::Reverse(letters(*c)));
        let columns = Columns {
            date,
            description,
            amount: Some(amount),
            debit: None,
            credit: None,
            direction: None,
            currency,
            reference: None,
            category: None,
            balance,
            account: None,
            fee: None,
        };
        return Some(Layout {
            delimiter,
            header_line: 0,
            headers,
            columns,
            skip,
        });
    }
    None
}

/// Among the columns of money of a header-less file, the (amount, balance) pair under which every
/// row reconciles (at least three rows checked), if one does.
fn balance_pair(rows: &[Vec<String>], date: usize, amounts: &[usize]) -> Option<(usize, usize)> {
    use super::{amount, date as dates, reconcile};
    let cells = |c: usize| rows.iter().filter_map(move |r| r.get(c)).map(String::as_str);
    let mark = amount::decide_decimal_mark(amounts.iter().flat_map(|c| cells(*c)));
    let money = |r: &Vec<String>, c: usize| {
        r.get(c)
            .and_then(|cell| {
                amount::parse_amount(cell, mark, kakeibo_money::Currency::INR)
                    .ok()
                    .flatten()
            })
            .map(|a| a.minor)
    };
    let day = |r: &Vec<String>| {
        let cell = r.get(date)?;
        dates::parse_date(cell, DateOrder::DayFirst)
            .or_else(|_| dates::parse_date(cell, DateOrder::MonthFirst))
            .ok()
    };
    let mut best: Option<((usize, usize), usize)> = None;
    for &a in amounts {
        for &b in amounts.iter().filter(|b| **b != a) {
            let mut links = Vec::new();
            let mut broken = false;
            for (line, row) in rows.iter().enumerate() {
                match (money(row, a), money(row, b)) {
                    (Some(amount_minor), balance) if amount_minor != 0 => {
                        links.push(reconcile::Link {
                            line: line.saturating_add(1),
                            amount_minor,
                            balance_minor: balance,
                            broken_before: std::mem::take(&mut broken),
                            series: 0,
                            date: day(row),
                        });
                    }
                    _ => broken = true,
                }
            }
            let Some(verdict) = reconcile::reconcile("", &links) else {
                continue;
            };
            let r = &verdict.reconciliation;
            if r.checked >= 3 && r.reconciled == r.checked && best.is_none_or(|(_, n)| r.reconciled > n) {
                best = Some(((a, b), r.reconciled));
            }
        }
    }
    best.map(|(pair, _)| pair)
}

/// Maps a candidate header row; `None` unless it has a date and an amount (or debit/credit).
fn map_columns(cells: &[String], mapping: &Mapping) -> Option<Columns> {
    let mut by_role: BTreeMap<Role, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, cell) in cells.iter().enumerate() {
        if let Some((role, rank)) = role_of(cell) {
            by_role.entry(role).or_default().push((rank, i));
        }
    }
    for list in by_role.values_mut() {
        list.sort_unstable();
    }
    let first = |role: Role| by_role.get(&role).and_then(|l| l.first()).map(|(_, i)| *i);
    let find = |wanted: &Option<String>| -> Option<Option<usize>> {
        let wanted = wanted.as_deref()?;
        if let Ok(n) = wanted.trim().parse::<usize>() {
            return Some(n.checked_sub(1).filter(|i| *i < cells.len()));
        }
        Some(cells.iter().position(|c| normalise(c) == normalise(wanted)))
    };
    let pick = |wanted: &Option<String>, role: Role| match find(wanted) {
        Some(found) => found,
        None => first(role),
    };

    let date = pick(&mapping.date, Role::Date).or_else(|| first(Role::ValueDate))?;
    // A mapping that names the amount leaves no debit and credit columns, and one that names
    // those leaves no amount: what the headers suggest never mixes with what it says.
    let split = mapping.debit.is_some() || mapping.credit.is_some();
    let amount = if split {
        find(&mapping.amount).flatten()
    } else {
        pick(&mapping.amount, Role::Amount)
    };
    // Naming one side of a debit/credit pair leaves the other to the headers.
    let (debit, credit) = if mapping.amount.is_some() {
        (None, None)
    } else {
        (
            pick(&mapping.debit, Role::Debit),
            pick(&mapping.credit, Role::Credit),
        )
    };
    if amount.is_none() && debit.is_none() && credit.is_none() {
        return None;
    }
    let description = match find(&mapping.description) {
        Some(found) => found.into_iter().collect(),
        None => by_role
            .get(&Role::Description)
            .map(|l| l.iter().map(|(_, i)| *i).collect())
            .unwrap_or_default(),
    };
    Some(Columns {
        date,
        description,
        amount,
        debit,
        credit,
        direction: pick(&mapping.direction, Role::Direction),
        currency: pick(&mapping.currency, Role::Currency),
        reference: first(Role::Reference),
        category: pick(&mapping.category, Role::Category),
        balance: pick(&mapping.balance, Role::Balance),
        account: first(Role::Account),
        fee: first(Role::Fee),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names() {
        assert_eq!(role_of(" Date     ").map(|r| r.0), Some(Role::Date));
        assert_eq!(role_of("Narration").map(|r| r.0), Some(Role::Description));
        assert_eq!(role_of("Value Dat").map(|r| r.0), Some(Role::ValueDate));
        assert_eq!(role_of("Bedrag (EUR)").map(|r| r.0), Some(Role::Amount));
        assert_eq!(role_of("Withdrawal Amt.").map(|r| r.0), Some(Role::Debit));
        assert_eq!(role_of("Chq./Ref.No.").map(|r| r.0), Some(Role::Reference));
        assert_eq!(role_of("Af Bij").map(|r| r.0), Some(Role::Direction));
        assert_eq!(role_of("Colour"), None);
    }

    #[test]
    fn finds_the_header_past_a_banner() {
        let text = "Account statement\nAccount: 1234;;\n\nBooking date;Text;Amount;Saldo\n01.02.2024;Coffee;-3,50;100,00\n";
        let layout = detect(text, &Mapping::default()).unwrap();
        assert_eq!((layout.delimiter, layout.header_line), (b';', 4));
        assert_eq!(layout.columns.date, 0);
        assert_eq!(layout.columns.amount, Some(2));
        assert!(
            layout.columns.description.is_empty(),
            "Text is not in the vocabulary"
        );

        let mapped = detect(
            text,
            &Mapping {
                description: Some("text".into()),
                ..Mapping::default()
            },
        )
        .unwrap();
        assert_eq!(mapped.columns.description, [1]);
    }

    #[test]
    fn debit_credit_and_tabs() {
        let text = "Date\tParticulars\tWithdrawals\tDeposits\tBalance\n01/04/2024\tATM\t500.00\t\t1000.00\n";
        let layout = detect(text, &Mapping::default()).unwrap();
        assert_eq!(layout.delimiter, b'\t');
        assert_eq!(
            (layout.columns.debit, layout.columns.credit, layout.columns.amount),
            (Some(2), Some(3), None)
        );
    }

    #[test]
    fn line_numbers_survive_blank_lines_and_quoted_newlines() {
        let lines: Vec<usize> = records("a\nb;;\n\nc;d\n\"x\ny\";z\r\n\r\nq;w\n", b';')
            .map(|(line, _)| line)
            .collect();
        assert_eq!(lines, [1, 2, 4, 5, 8]);
        let spans: Vec<(usize, usize)> = spanned_records("a\nb;;\n\nc;d\n\"x\ny\";z\r\n\r\nq;w", b';')
            .map(|r| (r.line, r.last_line))
            .collect();
        assert_eq!(spans, [(1, 1), (2, 2), (4, 4), (5, 6), (8, 8)]);
        let unterminated: Vec<(usize, usize)> = spanned_records("d,a\n1,\"x\n2,y\n3,z\n", b',')
            .map(|r| (r.line, r.last_line))
            .collect();
        assert_eq!(unterminated, [(1, 1), (2, 4)]);
    }

    #[test]
    fn naming_one_side_of_a_debit_credit_pair_leaves_the_other_to_the_headers() {
        let text = "Date,Details,Paid out,Paid in\n01/04/2024,ATM,500.00,\n02/04/2024,SALARY,,900.00\n";
        let mapping = Mapping {
            debit: Some("Paid out".into()),
            ..Mapping::default()
        };
        let layout = detect(text, &mapping).unwrap();
        assert_eq!(
            (layout.columns.debit, layout.columns.credit, layout.columns.amount),
            (Some(2), Some(3), None)
        );
    }

    #[test]
    fn no_header_is_an_error() {
        assert_eq!(
            detect("hello,world\nhow,are\n", &Mapping::default()),
            Err(ImportError::NoHeader)
        );
        assert_eq!(
            detect("date,description\n2024-01-01,x\n", &Mapping::default()),
            Err(ImportError::NoHeader)
        );
    }

    #[test]
    fn columns_are_inferred_without_a_header() {
        let layout = detect(
            "# exported\n2025-01-01, éclair, 1\n2025-01-02,bread,-2.50\n",
            &Mapping::default(),
        )
        .unwrap();
        assert_eq!(
            (layout.header_line, layout.columns.date, layout.columns.amount),
            (0, 0, Some(2))
        );
        assert_eq!(layout.columns.description, [1]);
        let mapped = Mapping {
            date: Some("2".into()),
            amount: Some("1".into()),
            ..Mapping::default()
        };
        let layout = detect("7,2025-01-01,x\n8,2025-01-02,y\n", &mapped).unwrap();
        assert_eq!((layout.columns.date, layout.columns.amount), (1, Some(0)));
    }
}
