//! The importer's unit tests: parsing statements of every layout it reads.

use super::*;

/// Text to the bytes of one encoding.
type Encode = fn(&str) -> Vec<u8>;

fn parse_text(text: &str) -> Parsed {
    parse(text.as_bytes(), &ParseOptions::default()).unwrap()
}

#[test]
fn a_plain_statement() {
    let parsed = parse_text(
        "date,description,amount,category\n2025-01-01,SALARY,185000.00,Salary\n2025-01-02,=HYPERLINK(\"x\"),-649.00,\n",
    );
    assert_eq!(parsed.rows.len(), 2);
    assert_eq!(parsed.rows[0].amount_minor, 18_500_000);
    assert_eq!(
        parsed.rows[1].description, "=HYPERLINK(\"x\")",
        "stored as the text it is"
    );
    assert_eq!(parsed.rows[0].category.as_deref(), Some("Salary"));
    assert_eq!(parsed.rows[1].line, 3);
    assert!(parsed.errors.is_empty());
}

#[test]
fn a_fee_beside_the_amount_is_money_out_when_the_balance_shows_it() {
    // Revolut's layout: the balance falls by the amount and the fee.
    let revolut = "Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance\n\
        TOPUP,Current,2022-01-01 10:00:00,2022-01-01 10:00:01,Top-up,100.00,0.00,EUR,COMPLETED,100.00\n\
        ATM,Current,2022-01-02 10:00:00,2022-01-02 10:00:01,Cash,-20.00,1.00,EUR,COMPLETED,79.00\n\
        EXCHANGE,Current,2022-01-03 10:00:00,2022-01-03 10:00:01,To USD,-10.00,0.50,EUR,COMPLETED,68.50\n";
    let parsed = parse_text(revolut);
    assert_eq!(
        parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        [10_000, -2_100, -1_050]
    );
    let reconciliation = parsed.format.reconciliation.as_ref().unwrap();
    assert_eq!((reconciliation.checked, reconciliation.reconciled), (2, 2));
    assert_eq!(parsed.format.fees, Some(Fees::TakenOff));
    // A net amount (the fee already in it) as the balance shows: the fee is not taken twice.
    let net = "Date,Description,Fees,Amount,Balance\n2014-04-14,BOUGHT,7.95,-4925.45,25674.63\n\
               2014-05-08,BOUGHT,7.95,-9580.26,16094.37\n2014-05-09,SOLD,7.95,1000.00,17094.37\n";
    let parsed = parse_text(net);
    assert_eq!(
        parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        [-492_545, -958_026, 100_000]
    );
    assert_eq!(parsed.format.fees, Some(Fees::Included));
    // Without a balance nothing says which: the amounts as written, and the preview says so.
    let parsed = parse_text("Date,Description,Amount,Fee\n2022-01-02,Cash,-20.00,1.00\n");
    assert_eq!(parsed.rows[0].amount_minor, -2_000);
    assert_eq!(parsed.format.fees, Some(Fees::Unchecked));
}

/// A statement whose line 4 states −21.00 where its balance fell by 12.00, and whose line 6
/// states −7.00 where its balance did not move.
const DISAGREEING: &str = "Date,Description,Amount,Balance\n\
    2025-07-01,Salary,100.00,1100.00\n\
    2025-07-02,Coffee,-5.00,1095.00\n\
    2025-07-03,Groceries,-21.00,1083.00\n\
    2025-07-04,Rent,-50.00,1033.00\n\
    2025-07-05,Ghost,-7.00,1033.00\n\
    2025-07-06,Book,-10.00,1023.00\n";

fn with_figures(invert: bool, figures: &[(usize, Figure)]) -> Parsed {
    let options = ParseOptions {
        currency: Some(Currency::EUR),
        mapping: Mapping {
            invert,
            ..Mapping::default()
        },
        figures: figures.iter().copied().collect(),
        ..ParseOptions::default()
    };
    parse(DISAGREEING.as_bytes(), &options).unwrap()
}

fn amount_of(parsed: &Parsed, line: usize) -> Option<i64> {
    parsed
        .rows
        .iter()
        .find(|r| r.line == line)
        .map(|r| r.amount_minor)
}

#[test]
fn a_row_the_balance_refuses_carries_both_figures() {
    let parsed = with_figures(false, &[]);
    let refused: Vec<(usize, Option<Figures>)> = parsed.errors.iter().map(|e| (e.line, e.figures)).collect();
    let figures = |amount_minor, balance_minor| {
        Some(Figures {
            amount_minor,
            balance_minor,
            currency: Currency::EUR,
            currency_unstated: false,
        })
    };
    assert_eq!(refused, [(4, figures(-2_100, -1_200)), (6, figures(-700, 0))]);
    assert_eq!(parsed.rows.len(), 4);
    assert!(parsed.format.taken.is_empty());
}

#[test]
fn a_refused_row_is_taken_in_at_the_figure_chosen_and_recorded() {
    // Line 3 reconciles: a figure named for it changes nothing.
    let parsed = with_figures(false, &[(4, Figure::Balance), (3, Figure::Amount)]);
    assert_eq!(amount_of(&parsed, 4), Some(-1_200));
    assert_eq!(amount_of(&parsed, 3), Some(-500));
    assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [6]);
    assert_eq!(parsed.format.taken.len(), 1);
    let taken = parsed.format.taken[0];
    assert_eq!(
        (taken.line, taken.take, taken.figures.amount_minor),
        (4, Figure::Balance, -2_100)
    );
    assert_eq!(taken.in_words(), "line 4 at the balance's change -€12.00");
    let parsed = with_figures(false, &[(4, Figure::Amount)]);
    assert_eq!(amount_of(&parsed, 4), Some(-2_100));
    // Taken at a balance that did not move, the row moves no money: skipped, not booked.
    let parsed = with_figures(false, &[(6, Figure::Balance)]);
    assert_eq!(amount_of(&parsed, 6), None);
    assert!(parsed.skipped.iter().any(|s| s.line == 6), "{:?}", parsed.skipped);
    assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [4]);
    assert_eq!(parsed.format.taken[0].line, 6);
    assert_eq!(
        parsed.format.taken[0].in_words(),
        "line 6 left out: its balance did not move"
    );
    // Not every row agreed: no closing balance is read from the column.
    assert!(parsed.format.reconciliation.unwrap().closing.is_none());
}

#[test]
fn figures_read_as_booked_when_the_signs_are_flipped() {
    let parsed = with_figures(true, &[(4, Figure::Balance)]);
    assert_eq!(amount_of(&parsed, 4), Some(1_200));
    assert_eq!(amount_of(&parsed, 3), Some(500));
    let taken = parsed.format.taken[0].figures;
    assert_eq!((taken.amount_minor, taken.balance_minor), (2_100, 1_200));
    let refused = parsed.errors[0].figures.unwrap();
    assert_eq!((refused.amount_minor, refused.balance_minor), (700, 0));
}

#[test]
fn an_amount_in_another_currency_than_its_column_says_is_refused() {
    let parsed =
        parse_text("Date,Description,Amount,Currency\n2024-01-02,Tea,€3.50,EUR\n2024-01-03,Cab,$9.00,EUR\n");
    assert_eq!(parsed.rows.len(), 1);
    assert_eq!(parsed.errors[0].line, 3);
    assert!(
        parsed.errors[0]
            .message
            .contains("the currency column says EUR but the amount is written in USD"),
        "{}",
        parsed.errors[0].message
    );
}

#[test]
fn bad_rows_are_reported_and_skipped() {
    let parsed = parse_text(
        "Date,Narration,Withdrawal Amt.,Deposit Amt.\n13/01/2025,ATM,500.00,\n14/01/2025,,10.00,\n\
         15/01/2025,BOTH,1.00,2.00\n31/02/2025,NO SUCH DAY,1.00,\n16/01/2025,TEN,ten,\n,,,\n\
         Pending items are not shown,,,\n18/01/2025,WAIVED FEE,0.00,\n17/01/2025,SALARY,,900.00\n",
    );
    assert_eq!(
        parsed.rows.iter().map(|r| r.amount_minor).collect::<Vec<_>>(),
        [-50_000, -1000, 90_000]
    );
    assert_eq!(parsed.rows[1].description, "(no description)");
    assert_eq!(parsed.format.date_order, DateOrder::DayFirst);
    let errors: Vec<(usize, Option<&str>)> = parsed
        .errors
        .iter()
        .map(|e| (e.line, e.column.as_deref()))
        .collect();
    assert_eq!(
        errors,
        [
            (4, Some("Withdrawal Amt.")),
            (5, Some("Date")),
            (6, Some("Withdrawal Amt."))
        ]
    );
    assert_eq!(parsed.errors[2].raw, "16/01/2025,TEN,ten,");
    assert_eq!(parsed.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [9]);
    assert_eq!(parsed.lines.notes, 1);
    assert_eq!(parsed.lines.blank, 1);
    assert_eq!(parsed.lines.accounted(), parsed.lines.total);
}

#[test]
fn an_unterminated_quote_names_every_line_it_swallowed() {
    let parsed = parse_text(
        "Date,Description,Amount\n2025-01-01,\"Coffee,-3.00\n2025-01-02,Tea,-2.00\n\n2025-01-03,Cake,-4.00\n",
    );
    assert!(parsed.rows.is_empty(), "{:?}", parsed.rows);
    let errors: Vec<usize> = parsed.errors.iter().map(|e| e.line).collect();
    assert_eq!(errors, [2, 3, 4, 5]);
    assert!(
        parsed.errors[0].message.contains("lines 3 to 5"),
        "{}",
        parsed.errors[0].message
    );
    assert!(
        parsed.errors[1].message.contains("line 2"),
        "{}",
        parsed.errors[1].message
    );
    assert_eq!(parsed.lines.unreadable, 4);
    assert_eq!((parsed.lines.accounted(), parsed.lines.total), (5, 5));
    // The last line's quote left open takes in nothing after it, and is still not read.
    let parsed = parse_text("Date,Description,Amount\n2025-01-02,Tea,-2.00\n2025-01-03,\"Cake,-4.00\n");
    assert_eq!(parsed.rows.len(), 1);
    assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    // A description written over two lines is one row, and its second line is accounted for.
    let parsed =
        parse_text("Date,Description,Amount\n2025-01-01,\"Coffee\nand cake\",-3.00\n2025-01-02,Tea,-2.00\n");
    assert_eq!(parsed.rows.len(), 2);
    assert_eq!(parsed.rows[0].description, "Coffee and cake");
    assert_eq!(
        (parsed.lines.rows, parsed.lines.continued, parsed.lines.total),
        (2, 1, 4)
    );
    assert_eq!(parsed.lines.accounted(), 4);
    // The same, in a file whose every line ends with the delimiter.
    let parsed = parse_text(
        "Date,Description,Amount\n2025-01-01,\"Coffee\nand cake\",-3.00,\n2025-01-02,Tea,-2.00,\n",
    );
    assert_eq!(parsed.rows.len(), 2, "{:?}", parsed.errors);
    assert_eq!(parsed.rows[0].description, "Coffee and cake");
}

#[test]
fn every_line_is_accounted_for() {
    let parsed = parse_text(
        "Account 1234\nPeriod: January\n\nDate,Description,Amount\n2025-01-01,A,-1.00\n,,\n2025-01-02,B,0.00\n\
         Closing balance,,5.00\nPending items are not shown\n2025-01-03,C,x\n",
    );
    let l = &parsed.lines;
    assert_eq!(
        (
            l.total,
            l.banner,
            l.blank,
            l.header,
            l.rows,
            l.skipped,
            l.notes,
            l.unreadable
        ),
        (10, 2, 2, 1, 1, 2, 1, 1),
        "{l:?}"
    );
    assert_eq!(l.accounted(), l.total);
}

#[test]
fn a_row_of_nothing_whose_balance_moved_is_unreadable() {
    let parsed = parse_text(
        "Date,Description,Amount,Balance\n2025-01-01,SALARY,100.00,100.00\n2025-01-02,HOLD,0.00,78.07\n\
         2025-01-03,SHOP,-8.07,70.00\n2025-01-04,NOTHING,0.00,70.00\n2025-01-05,TEA,-2.00,68.00\n",
    );
    assert_eq!(parsed.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4, 6]);
    assert_eq!(parsed.errors.iter().map(|e| e.line).collect::<Vec<_>>(), [3]);
    assert!(
        parsed.errors[0].message.contains("though the row moves no money"),
        "{}",
        parsed.errors[0].message
    );
    assert_eq!(parsed.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [5]);
    assert_eq!(parsed.lines.accounted(), parsed.lines.total);
}

#[test]
fn a_card_statement_that_writes_purchases_as_positive_is_read_as_spending() {
    let card = "Credit Card Statement\nCard number: XXXX 1234\nDate,Description,Amount\n\
                2025-01-02,SHOP,12.00\n2025-01-03,CAFE,3.50\n2025-01-04,BOOKS,20.00\n\
                2025-01-05,TAXI,8.00\n2025-01-06,PAYMENT THANK YOU,-100.00\n";
    let parsed = parse_text(card);
    let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
    assert!(
        parsed
            .format
            .spending_positive
            .as_deref()
            .is_some_and(|w| w.contains("card statement")),
        "{:?}",
        parsed.format.spending_positive
    );
    // An account's statement that mentions a card but spends as negative is left as written.
    let account = card
        .replace("12.00", "-12.00")
        .replace("3.50", "-3.50")
        .replace("20.00", "-20.00");
    let amounts: Vec<i64> = parse_text(&account).rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1200, -350, -2000, 800, -10_000]);
    // --invert says the same as the card's words: flipped once, not twice.
    let inverted = parse(
        card.as_bytes(),
        &ParseOptions {
            mapping: Mapping {
                invert: true,
                ..Mapping::default()
            },
            ..ParseOptions::default()
        },
    )
    .unwrap();
    let amounts: Vec<i64> = inverted.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
    // Payments marked CR in their cells: the unmarked purchases are money out, the CR ones
    // money in, and the card rule does not flip them again.
    let marked = card.replace("-100.00", "\"100.00 CR\"");
    let amounts: Vec<i64> = parse_text(&marked).rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1200, -350, -2000, -800, 10_000]);
    // No word of a card: as written.
    let plain = card.replace("Credit Card Statement", "Statement");
    assert_eq!(parse_text(&plain).rows[0].amount_minor, 1200);
}

#[test]
fn whole_file_refusals() {
    let refuse = |bytes: &[u8]| parse(bytes, &ParseOptions::default()).unwrap_err();
    assert_eq!(refuse(b""), ImportError::Empty);
    assert_eq!(refuse(b"\0\0binary"), ImportError::Binary);
    assert_eq!(refuse(b"name,colour\nx,y\n"), ImportError::NoHeader);
    assert_eq!(refuse(b"date,amount\n"), ImportError::NoRows { header_line: 1 });
    assert!(matches!(
        refuse(b"date,amount\n13/02/2025,1\n02/13/2025,2\n"),
        ImportError::Dates(_)
    ));
}

/// Any order of the columns, any delimiter, any encoding, either order of time: the same rows,
/// all reconciled against the balance.
#[test]
fn a_statement_with_a_balance_reads_the_same_however_it_is_laid_out() {
    let rows = [
        ("2025-03-01", "OPENING SHOP", "-120.50", "879.50"),
        ("2025-03-02", "SALARY", "2500.00", "3379.50"),
        ("2025-03-05", "RENT", "-1200.00", "2179.50"),
        ("2025-03-09", "CAFÉ CRÈME", "-4.25", "2175.25"),
        ("2025-03-12", "REFUND", "20.00", "2195.25"),
    ];
    let header = ["Date", "Description", "Amount", "Balance"];
    let mut orders: Vec<Vec<usize>> = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                if a != b && a != c && b != c {
                    let d = (0..4).find(|x| ![a, b, c].contains(x)).unwrap();
                    orders.push(vec![a, b, c, d]);
                }
            }
        }
    }
    assert_eq!(orders.len(), 24);
    let expected: Vec<(String, String, i64)> = rows
        .iter()
        .map(|r| {
            let minor: i64 = r.2.replace('.', "").parse().unwrap();
            (r.0.to_owned(), r.1.to_owned(), minor)
        })
        .collect();
    let encodings: [(&str, Encode); 4] = [
        ("UTF-8", |t| t.as_bytes().to_vec()),
        ("UTF-8 (BOM)", |t| {
            [&[0xEF, 0xBB, 0xBF][..], t.as_bytes()].concat()
        }),
        ("UTF-16LE (BOM)", |t| {
            [0xFF, 0xFE]
                .into_iter()
                .chain(t.encode_utf16().flat_map(u16::to_le_bytes))
                .collect()
        }),
        ("windows-1252", |t| {
            encoding_rs::WINDOWS_1252.encode(t).0.into_owned()
        }),
    ];
    for order in &orders {
        for delimiter in [",", ";", "\t"] {
            for (newest_first, (encoding, encode)) in [false, true]
                .into_iter()
                .flat_map(|n| encodings.iter().map(move |e| (n, e)))
            {
                let line = |cells: [&str; 4]| {
                    order
                        .iter()
                        .map(|i| cells[*i])
                        .collect::<Vec<_>>()
                        .join(delimiter)
                };
                let mut lines = vec![line(header)];
                let mut body: Vec<String> = rows.iter().map(|r| line([r.0, r.1, r.2, r.3])).collect();
                if newest_first {
                    body.reverse();
                }
                lines.extend(body);
                let bytes = encode(&(lines.join("\n") + "\n"));
                let parsed = parse(&bytes, &ParseOptions::default()).unwrap();
                assert_eq!(parsed.format.encoding, *encoding);
                let mut got: Vec<(String, String, i64)> = parsed
                    .rows
                    .iter()
                    .map(|r| (r.date.to_string(), r.description.clone(), r.amount_minor))
                    .collect();
                got.sort();
                let mut want = expected.clone();
                want.sort();
                assert_eq!(
                    got, want,
                    "{order:?} {delimiter:?} {encoding} newest first {newest_first}"
                );
                let r = parsed.format.reconciliation.as_ref().unwrap();
                assert_eq!((r.checked, r.reconciled), (4, 4), "{order:?} {delimiter:?}");
                assert!(parsed.errors.is_empty());
            }
        }
    }
}

#[test]
fn a_direction_column_is_found_from_its_cells_only_when_it_cannot_be_anything_else() {
    // Debit and credit words: a direction column, whatever its header.
    let parsed = parse_text("Date,Amount,Kind\n2025-01-02,10.00,debit\n2025-01-03,5.00,credit\n");
    let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1000, 500]);
    // Only CR beside blanks: the blanks are money out.
    let parsed = parse_text("Date,Amount,\n2025-01-02,10.00,\n2025-01-03,5.00,CR\n");
    let amounts: Vec<i64> = parsed.rows.iter().map(|r| r.amount_minor).collect();
    assert_eq!(amounts, [-1000, 500]);
    // A cleared flag (C and U) or a lone letter is not a direction.
    for flags in [("C", "U"), ("C", ""), ("X", "Y")] {
        let text = format!(
            "Date,Amount,Cleared\n2025-01-02,-10.00,{}\n2025-01-03,5.00,{}\n",
            flags.0, flags.1
        );
        let amounts: Vec<i64> = parse_text(&text).rows.iter().map(|r| r.amount_minor).collect();
        assert_eq!(amounts, [-1000, 500], "{flags:?}");
    }
}
