//! The README's numbers against a fresh measurement, and the context estimator against the
//! corpus's recorded token counts.

use kakeibo_metrics::{
    Inputs, Recorded, check,
    estimator::{self, Estimator, EstimatorReport},
};

fn exchanges() -> Option<std::path::PathBuf> {
    kakeibo_testkit::corpus_dir("kakeibo-fixtures", "the estimator against real token counts")
}

#[test]
fn the_readme_numbers_agree_with_a_fresh_measurement() {
    let Some(exchanges) = exchanges() else { return };
    let differences = check(&Inputs {
        root: kakeibo_testkit::workspace_root(),
        exchanges: Some(exchanges),
        recorded: Recorded::AsInReadme,
    })
    .unwrap();
    assert!(
        differences.is_empty(),
        "the README's numbers table is not what `cargo xtask metrics` measures now; run it and \
         commit the README:\n{}",
        differences.join("\n")
    );
}

#[test]
fn the_estimator_is_within_three_percent_on_the_held_out_half() {
    let Some(dir) = exchanges() else { return };
    let tools = kakeibo_metrics::Tools::from_registry().unwrap();
    let all = estimator::exchanges(&dir, &tools.declarations).unwrap();
    assert_eq!(all.len(), 30, "the corpus records 30 exchanges");
    let report = EstimatorReport::measure("corpus".into(), all);
    let held = |kind: fn(&Estimator) -> bool| report.errors(kind).and_then(|e| e.held_out.clone()).unwrap();
    let ours = held(|e| *e == Estimator::Shipped);
    let flat = held(|e| *e == Estimator::CharsOver4);
    assert_eq!(ours.exchanges, 15);
    assert!(
        ours.mape <= 3.0,
        "held-out mean error {:.2}% (goal ≤ 3%)",
        ours.mape
    );
    assert!(
        ours.mape < flat.mape,
        "ours {:.2}% against chars/4 {:.2}%",
        ours.mape,
        flat.mape
    );
    // The shipped divisors are this fit's, rounded: each within 1% of what the fit half gives.
    let refit = report.refit.unwrap();
    let shipped = report.shipped;
    for (name, a, b) in [
        ("prose", shipped.prose, refit.prose),
        ("json", shipped.json, refit.json),
        ("declarations", shipped.declarations, refit.declarations),
        ("digits", shipped.digits, refit.digits),
        ("signatures", shipped.opaque, refit.opaque),
    ] {
        assert!((a - b).abs() / b < 0.01, "{name}: shipped {a}, fitted {b}");
    }
}

#[test]
fn the_fit_recovers_known_divisors() {
    use kakeibo_core::context::{Census, Divisors};
    let truth = Divisors {
        prose: 4.0,
        json: 3.0,
        declarations: 9.0,
        digits: 0.8,
        opaque: 5.0,
    };
    let exchanges: Vec<estimator::Exchange> = (0..12_u64)
        .map(|i| {
            let census = Census {
                prose: 10_000 + 97 * i * i,
                json: 3_000 * (i % 4) + 50 * i,
                declarations: 12_000 + 10 * (i % 3),
                digits: 150 + 40 * (i % 5) + 7 * i,
                opaque: 600 * (i % 3) + 30 * i,
            };
            estimator::Exchange {
                id: format!("x{i}"),
                recorded_at: format!("{i:02}"),
                model: "m".into(),
                half: estimator::Half::Fit,
                real: census.tokens(&truth),
                census,
                reference: (0, 0),
                json_share: 0.0,
            }
        })
        .collect();
    let fitted = estimator::fit(&exchanges.iter().collect::<Vec<_>>()).unwrap();
    for (a, b) in [
        (fitted.prose, truth.prose),
        (fitted.json, truth.json),
        (fitted.declarations, truth.declarations),
        (fitted.digits, truth.digits),
        (fitted.opaque, truth.opaque),
    ] {
        assert!((a - b).abs() / b < 0.02, "fitted {a}, true {b}");
    }
    // Nothing to tell two classes apart: no fit.
    let blind: Vec<estimator::Exchange> = exchanges
        .into_iter()
        .map(|mut e| {
            e.census.opaque = 0;
            e
        })
        .collect();
    assert!(estimator::fit(&blind.iter().collect::<Vec<_>>()).is_none());
}

/// The figures are read from the report `kakeibo-evals` writes, by its own field names.
#[test]
fn an_evaluation_report_is_read_as_kakeibo_evals_writes_it() {
    let now = chrono::Utc::now();
    let injection = kakeibo_evals::injection::InjectionSummary {
        scenarios: vec![],
        not_run: vec![],
        block_rate: 100.0,
        resist_rate: 83.3,
        answered_rate: 50.0,
        flagged_rate: 0.0,
    };
    let report = kakeibo_evals::report::EvalReport::assemble(
        now,
        now,
        "gemini".into(),
        "gemini-3.6-flash".into(),
        "judge".into(),
        "cli".into(),
        Some("smoke".into()),
        vec![],
        vec![],
        Some(injection),
    );
    let figures: kakeibo_metrics::reports::EvalFigures =
        serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    assert_eq!(
        (figures.provider.as_str(), figures.model.as_str()),
        ("gemini", "gemini-3.6-flash")
    );
    assert_eq!(figures.filter.as_deref(), Some("smoke"));
    assert_eq!(figures.task_count, 0);
    let injection = figures.injection.unwrap();
    assert_eq!((injection.block_rate, injection.resist_rate), (100.0, 83.3));
}
