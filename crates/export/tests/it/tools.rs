//! The real tools, run on an export: each one's check, and each account's balance as it prints it,
//! read back into kakeibo's names.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
};

use kakeibo_export::names;
use kakeibo_ledger::{Currency, Money};

/// (root, kakeibo's account name, currency) → balance in minor units, zero balances left out.
pub type Balances = BTreeMap<(String, String, String), i64>;

pub struct Tools {
    pub hledger: PathBuf,
    pub ledger: PathBuf,
    pub bean_check: PathBuf,
    pub bean_query: PathBuf,
}

impl Tools {
    /// The three tools, or the test skipped (failed under CI) saying what installs them.
    pub fn find() -> Option<Self> {
        let installs = "`cargo xtask test` installs Debian's hledger and ledger";
        let hledger = kakeibo_testkit::program("hledger", installs)?;
        let ledger = kakeibo_testkit::program("ledger", installs)?;
        let python = kakeibo_testkit::python("beancount 3")?;
        let bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
        Some(Self {
            hledger,
            ledger,
            bean_check: bin.join("bean-check"),
            bean_query: bin.join("bean-query"),
        })
    }
}

/// Runs `program` with `args`; its stdout when it exits 0 with nothing on stderr, else the
/// failure in full (the caller decides whether it expected one).
pub fn run(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() && stderr.trim().is_empty() {
        Ok(stdout)
    } else {
        Err(format!(
            "{} {args:?}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            program.display(),
            out.status
        ))
    }
}

fn add(
    balances: &mut Balances,
    full: &str,
    decode: fn(&str) -> Option<String>,
    currency: &str,
    number: &str,
) {
    let (root, component) = full
        .split_once(':')
        .unwrap_or_else(|| panic!("no root in {full:?}"));
    let name = decode(component).unwrap_or_else(|| panic!("{component:?} does not decode"));
    let currency_code = Currency::parse(currency.trim()).unwrap_or_else(|e| panic!("{currency:?}: {e}"));
    let minor = Money::parse_exact(number.trim(), currency_code)
        .unwrap_or_else(|e| panic!("{number:?} {currency}: {e}"))
        .amount_minor;
    if minor != 0 {
        *balances
            .entry((root.to_owned(), name, currency_code.as_str().to_owned()))
            .or_default() += minor;
    }
}

/// `hledger bal` as CSV, one row per account and commodity.
pub fn hledger_balances(tools: &Tools, file: &Path) -> Balances {
    let file = file.to_str().unwrap();
    let csv = run(
        &tools.hledger,
        &["-f", file, "bal", "--flat", "-N", "-O", "csv", "--layout=bare"],
    )
    .unwrap();
    csv_balances(&csv, names::journal_decode)
}

/// `ledger bal`, an account and its total a line (a total in two commodities takes two lines).
pub fn ledger_balances(tools: &Tools, file: &Path) -> Balances {
    let file = file.to_str().unwrap();
    let text = run(
        &tools.ledger,
        &[
            "-f",
            file,
            "bal",
            "--flat",
            "--no-total",
            "--balance-format",
            "%(account)\t%(display_total)\n",
        ],
    )
    .unwrap();
    let mut balances = Balances::new();
    let mut account = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let amount = match line.split_once('\t') {
            Some((name, amount)) => {
                name.clone_into(&mut account);
                amount
            }
            None => line,
        };
        let (number, currency) = amount
            .trim()
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("{line:?}"));
        add(&mut balances, &account, names::journal_decode, currency, number);
    }
    balances
}

/// `bean-query`'s sum per account and currency.
pub fn beancount_balances(tools: &Tools, file: &Path) -> Balances {
    let file = file.to_str().unwrap();
    let csv = run(
        &tools.bean_query,
        &[
            "-f",
            "csv",
            file,
            "SELECT account, currency, sum(number) AS n GROUP BY account, currency ORDER BY account, currency",
        ],
    )
    .unwrap();
    csv_balances(&csv, names::beancount_decode)
}

/// Balances from a CSV of account, currency and amount (after a header).
fn csv_balances(csv: &str, decode: fn(&str) -> Option<String>) -> Balances {
    let mut balances = Balances::new();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    for record in reader.records() {
        let record = record.unwrap();
        add(&mut balances, &record[0], decode, &record[1], &record[2]);
    }
    balances
}
