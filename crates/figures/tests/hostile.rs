//! Answers are model output: any text at all must be read without a panic, and every figure
//! found must point at the text it was read from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use kakeibo_figures::{RowRef, Source, ToolFigure, check, find};
use kakeibo_money::Currency;
use proptest::prelude::*;

fn sources() -> Vec<Source> {
    [
        (219_173, "USD"),
        (41_250, "USD"),
        (16_000_000, "INR"),
        (0, "EUR"),
        (i64::MIN, "USD"),
        (i64::MAX, "JPY"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (minor, code))| Source {
        call_id: format!("c{i}"),
        tool: "get_spend_report".into(),
        figure: ToolFigure::new("x", "/x", *minor, Currency::parse(code).unwrap())
            .with_rows(RowRef::Transactions { ids: Vec::new() }),
    })
    .collect()
}

fn check_text(text: &str) {
    let chars: Vec<char> = text.chars().collect();
    for f in find(text) {
        let span: String = chars[f.start..f.end].iter().collect();
        assert_eq!(span, f.text, "{text:?}");
    }
    let checked = check(text, &sources());
    assert_eq!(
        checked.ungrounded,
        checked
            .figures
            .iter()
            .filter(|f| f.grounding == kakeibo_figures::Grounding::Ungrounded)
            .count()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_text(text in any::<String>()) {
        check_text(&text);
    }

    #[test]
    fn texts_made_of_what_figures_are_made_of(
        text in r"[-−(~≈ ]{0,2}(\$|₹|€|£|¥|Rs\.?|USD|INR)? ?[0-9]{0,40}([,.' \u{a0}][0-9]{1,4}){0,6} ?(k|M|lakh|crore|%|percent|EUR|rupees)?\)?[ .]{0,2}"
    ) {
        check_text(&text);
    }
}

#[test]
fn huge_numbers_and_exponents_do_not_overflow() {
    for text in [
        "$99999999999999999999999999999.99",
        "₹9,99,99,99,99,99,99,99,999 crore",
        "about $900000000000000000000000000000 billion",
        "99999999999999999999999999999%",
        "0.00000000000000000000000001%",
        "-$9,223,372,036,854,775,808.00",
    ] {
        check_text(text);
    }
}
