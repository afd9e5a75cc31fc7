//! The decision report on the labelled sets in `evals/decisions/`, with the offline backend: every
//! set reads, its sizes are what the issue asks (routing ≥ 40 dev and ≥ 40 held out, stuck runs
//! ≥ 20 and ≥ 12), each of the six kinds of stuck run is there, the repeat check never stops a run
//! making progress, and each held-out read is logged.

use kakeibo_evals::decisions::{Backend, run};

#[tokio::test]
async fn the_heuristic_backend_reports_every_set_and_logs_held_out_reads() {
    let root = kakeibo_testkit::workspace_root();
    let dir = root.join("evals/decisions");
    let log = tempfile::NamedTempFile::new().unwrap();
    let report = run(&dir, &Backend::Heuristic, log.path()).await.unwrap();
    let set = |name: &str| {
        report
            .sets
            .iter()
            .find(|s| s.set == name)
            .unwrap_or_else(|| panic!("{name}"))
    };

    assert!(set("routing-dev").items >= 40 && !set("routing-dev").heldout);
    assert!(set("routing-heldout").items >= 40 && set("routing-heldout").heldout);
    assert!(set("stuck-dev").items >= 20 && !set("stuck-dev").heldout);
    assert!(set("stuck-heldout").items >= 12 && set("stuck-heldout").heldout);

    // The repeat check alone: it stops exact repeats and never a run making progress.
    for name in ["stuck-dev", "stuck-heldout"] {
        let s = set(name);
        assert_eq!(s.wrong_stops, 0, "{s:?}");
        assert!(
            s.stops > 0 && s.missed_stops > 0,
            "it misses what only a judge sees: {s:?}"
        );
        assert_eq!(s.judge_failures, 0);
    }
    // Each count adds up: downgrades = right + wrong, every wrong id named once.
    for s in &report.sets {
        assert_eq!(
            s.wrong.len(),
            s.wrong_downgrades + s.missed_downgrades + s.wrong_stops + s.missed_stops,
            "{s:?}"
        );
    }

    let reads = std::fs::read_to_string(log.path()).unwrap();
    let lines: Vec<&str> = reads.lines().collect();
    assert_eq!(lines.len(), 2, "{reads}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("routing-heldout read by the heuristic backend"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("stuck-heldout read by the heuristic backend"))
    );

    let table = report.to_markdown();
    assert!(table.contains("| routing-heldout (held out) |"), "{table}");

    // The six kinds, in both stuck sets together.
    let kinds: std::collections::BTreeSet<String> = ["stuck-dev.yaml", "stuck-heldout.yaml"]
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
            value["items"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|i| i["kind"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "alternating",
            "exact_repeat",
            "paging",
            "recovery",
            "reworded_repeat",
            "same_result"
        ]
    );
}
