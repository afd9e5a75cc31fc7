//! Importing statements into a real ledger through `import_statement_csv`, as `app_user`:
//! preview then commit exactly the preview, re-imports and overlaps, identical rows, bad input,
//! path confinement, rules and currencies.

use crate::common;
use crate::corpus;

use common::{app_pool, new_user, owner_pool};
use kakeibo_core::{CallError, ToolError, ToolRegistry};
use kakeibo_ledger::OwnerId;
use kakeibo_tools::{Scope, registry};
use serde_json::{Value, json};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use uuid::Uuid;

struct Ledger {
    owner_pool: PgPool,
    owner: OwnerId,
    tools: ToolRegistry,
    folder: tempfile::TempDir,
}

async fn ledger(options: PgPoolOptions, connect: PgConnectOptions) -> Ledger {
    let owner_pool = owner_pool(options, connect.clone()).await;
    let owner = new_user(&owner_pool).await;
    let folder = tempfile::tempdir().unwrap();
    let scope = Scope::new(owner, app_pool(&connect).await).with_import_root(folder.path());
    Ledger {
        owner_pool,
        owner,
        tools: registry(&scope),
        folder,
    }
}

impl Ledger {
    async fn upload(&self, name: &str, bytes: &[u8]) -> Uuid {
        sqlx::query_scalar(
            "INSERT INTO uploads (owner_id, filename, size_bytes, sha256, content) VALUES ($1, $2, $3, 'x', $4) RETURNING id",
        )
        .bind(self.owner.as_uuid())
        .bind(name)
        .bind(i32::try_from(bytes.len()).unwrap())
        .bind(bytes)
        .fetch_one(&self.owner_pool)
        .await
        .unwrap()
    }

    async fn preview(&self, upload: Uuid) -> Value {
        self.tools
            .call(
                "import_statement_csv",
                json!({"upload_id": upload, "currency": "INR"}),
            )
            .await
            .unwrap()
    }

    async fn preview_without_currency(&self, text: &str) -> Value {
        let upload = self.upload("next.csv", text.as_bytes()).await;
        self.tools
            .call("import_statement_csv", json!({"upload_id": upload}))
            .await
            .unwrap()
    }

    async fn commit(&self, preview: &Value) -> Value {
        self.tools
            .call(
                "import_statement_csv",
                json!({"plan_id": preview["plan_id"], "dry_run": false}),
            )
            .await
            .unwrap()["committed"]
            .clone()
    }

    async fn import(&self, name: &str, text: &str) -> (Value, Value) {
        let preview = self.preview(self.upload(name, text.as_bytes()).await).await;
        let committed = self.commit(&preview).await;
        (preview, committed)
    }

    async fn count(&self, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql)
            .bind(self.owner.as_uuid())
            .fetch_one(&self.owner_pool)
            .await
            .unwrap()
    }

    async fn transactions(&self) -> i64 {
        self.count("SELECT count(*) FROM transactions WHERE owner_id = $1")
            .await
    }
}

const STATEMENT: &str = "Date,Narration,Withdrawal Amt.,Deposit Amt.,Closing Balance\n\
    01/04/2025,CHAI POINT,50.00,,950.00\n\
    01/04/2025,CHAI POINT,50.00,,900.00\n\
    02/04/2025,SALARY ACME,,1000.00,1900.00\n\
    13/04/2025,SWIGGY ORDER 1,250.00,,1650.00\n";

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn preview_then_commit_adds_exactly_the_preview(options: PgPoolOptions, connect: PgConnectOptions) {
    let l = ledger(options, connect).await;
    let upload = l.upload("april.csv", STATEMENT.as_bytes()).await;
    let preview = l.preview(upload).await;
    assert_eq!(preview["rows_to_add"], 4, "{preview:#}");
    assert_eq!(preview["format"]["date_order"], "day_first");
    assert_eq!(preview["format"]["encoding"], "UTF-8");
    assert_eq!(preview["money_out"][0]["formatted"], "-₹350.00");
    assert_eq!(l.transactions().await, 0, "a preview adds nothing");

    // The statement changes after the preview: the commit still applies the stored plan.
    sqlx::query("UPDATE uploads SET content = 'date,amount\n2025-01-01,1\n', size_bytes = 25 WHERE id = $1")
        .bind(upload)
        .execute(&l.owner_pool)
        .await
        .unwrap();
    let committed = l.commit(&preview).await;
    assert_eq!(committed["imported"], 4);
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT t.date::text, t.description, p.amount_minor FROM transactions t
         JOIN postings p ON p.transaction_id = t.id JOIN accounts a ON a.id = p.account_id
         WHERE t.owner_id = $1 AND a.name = 'Checking' ORDER BY t.date, p.amount_minor",
    )
    .bind(l.owner.as_uuid())
    .fetch_all(&l.owner_pool)
    .await
    .unwrap();
    // The statement's balances say Checking held ₹1,000.00 before its first row: that opening
    // balance is booked the day before, so Checking ends at the bank's ₹1,650.00.
    assert_eq!(
        preview["opening_balance"]["amount"]["amount_minor"], 100_000,
        "{preview:#}"
    );
    assert_eq!(preview["closing_balance"]["agrees"], true, "{preview:#}");
    let planned: Vec<(String, String, i64)> = vec![
        ("2025-03-31".into(), "Opening balance of Checking".into(), 100_000),
        ("2025-04-01".into(), "CHAI POINT".into(), -5000),
        ("2025-04-01".into(), "CHAI POINT".into(), -5000),
        ("2025-04-02".into(), "SALARY ACME".into(), 100_000),
        ("2025-04-13".into(), "SWIGGY ORDER 1".into(), -25_000),
    ];
    assert_eq!(rows, planned, "both identical coffees of one day are kept");

    let again = l
        .tools
        .call(
            "import_statement_csv",
            json!({"plan_id": preview["plan_id"], "dry_run": false}),
        )
        .await;
    assert!(
        matches!(again, Err(CallError::Tool(ToolError::Refused(ref m))) if m.contains("already committed")),
        "{again:?}"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reimports_add_nothing_and_overlaps_add_only_new_rows(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    let (_, first) = l.import("april.csv", STATEMENT).await;
    assert_eq!(first["imported"], 4);

    let (preview, committed) = l.import("april-again.csv", STATEMENT).await;
    assert_eq!(
        (
            preview["rows_to_add"].as_i64(),
            preview["duplicates_skipped"].as_i64()
        ),
        (Some(0), Some(4))
    );
    assert!(
        preview["duplicates"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("already in the ledger")
    );
    assert_eq!(committed["imported"], 0);
    // The four rows and the opening balance the first import booked.
    assert_eq!(l.transactions().await, 5);

    // Overlapping: the last two rows again, one more coffee that day, and a new row.
    let overlap = "Date,Narration,Withdrawal Amt.,Deposit Amt.\n\
        02/04/2025,SALARY ACME,,1000.00\n13/04/2025,SWIGGY ORDER 1,250.00,\n\
        01/04/2025,CHAI POINT,50.00,\n01/04/2025,CHAI POINT,50.00,\n01/04/2025,CHAI POINT,50.00,\n\
        20/04/2025,RENT,20000.00,\n";
    let (preview, committed) = l.import("april-late.csv", overlap).await;
    assert_eq!(
        (
            preview["rows_to_add"].as_i64(),
            preview["duplicates_skipped"].as_i64()
        ),
        (Some(2), Some(4))
    );
    assert_eq!(committed["imported"], 2, "the third coffee and the rent");
    assert_eq!(l.transactions().await, 7);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn bad_input_is_refused_with_its_reason_and_writes_nothing(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty.csv", b"", "empty"),
        ("photo.csv", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0", "binary"),
        (
            "broken.csv",
            b"\xEF\xBB\xBFdate,amount\n2025-01-01,\xFF\xFE1\n",
            "not valid UTF-8",
        ),
        (
            "names.csv",
            b"name,colour\nx,y\n",
            "no header row with a date column and an amount",
        ),
        ("nothing.csv", b"date,description,amount\n", "no data rows"),
    ];
    for (name, bytes, expected) in cases {
        let upload = l.upload(name, bytes).await;
        let err = l
            .tools
            .call("import_statement_csv", json!({"upload_id": upload}))
            .await
            .unwrap_err();
        let CallError::Tool(ToolError::Refused(message)) = &err else {
            panic!("{name}: {err:?}")
        };
        assert!(message.contains(expected), "{name}: {message}");
        assert!(
            message.starts_with(name),
            "{name}: the message names the file: {message}"
        );
    }
    // A 100 MB file never gets read.
    let big = l.folder.path().join("huge.csv");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(100 * 1024 * 1024)
        .unwrap();
    let err = l
        .tools
        .call("import_statement_csv", json!({"path": "huge.csv"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("statements up to 10485760 bytes"),
        "{err}"
    );
    assert_eq!(
        l.count("SELECT count(*) FROM import_batches WHERE owner_id = $1")
            .await,
        0
    );
    assert_eq!(l.transactions().await, 0);

    // A bad row is reported with its line and column and skipped; the rest is imported.
    let (preview, committed) = l
        .import(
            "one-bad.csv",
            "date,description,amount\n2025-01-01,TEA,-10.00\n2025-01-02,CAKE,ten\n2025-01-03,BUN,-5\n",
        )
        .await;
    assert_eq!(preview["parse_errors"], 1);
    assert_eq!(preview["errors"][0]["line"], 3);
    assert_eq!(preview["errors"][0]["column"], "amount");
    assert_eq!(preview["errors"][0]["raw"], "2025-01-02,CAKE,ten");
    assert_eq!(committed["imported"], 2);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn paths_stay_inside_the_import_folder(options: PgPoolOptions, connect: PgConnectOptions) {
    let l = ledger(options, connect).await;
    std::fs::write(l.folder.path().join("ok.csv"), STATEMENT).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "date,amount\n2025-01-01,1\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.csv"),
        l.folder.path().join("link.csv"),
    )
    .unwrap();

    let ok = l
        .tools
        .call(
            "import_statement_csv",
            json!({"path": "ok.csv", "currency": "INR"}),
        )
        .await
        .unwrap();
    assert_eq!(ok["rows_to_add"], 4);
    let secret = outside.path().join("secret.csv").display().to_string();
    for path in [
        "../secret.csv",
        "link.csv",
        secret.as_str(),
        "/etc/passwd",
        "missing.csv",
    ] {
        let err = l
            .tools
            .call("import_statement_csv", json!({"path": path}))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("cannot be imported"), "{path}: {text}");
        assert!(
            !text.contains("root:") && !text.contains("2025-01-01"),
            "{path}: no file content in {text}"
        );
    }

    // The web's registry has no import folder: paths are refused outright.
    let web = registry(&Scope::new(l.owner, l.owner_pool.clone()));
    let err = web
        .call("import_statement_csv", json!({"path": "ok.csv"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("reads uploaded statements only"),
        "{err}"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rules_categorise_and_currencies_get_their_own_accounts(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    l.tools
        .call(
            "set_category_rule",
            json!({"pattern": "swiggy", "category": "Dining"}),
        )
        .await
        .unwrap();
    let (preview, _) = l.import("april.csv", STATEMENT).await;
    let dining = preview["by_category"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "Dining")
        .unwrap();
    assert_eq!(dining["rows"], 1);

    let wise = "Date,Amount,Currency,Description\n24-08-2020,-12.50,EUR,Bakery\n25-08-2020,-3.00,EUR,Coffee\n26-08-2020,100.00,USD,Refund\n27-08-2020,-4.00,USD,Bus\n";
    let (preview, committed) = l.import("wise.csv", wise).await;
    let accounts: Vec<(&str, &str)> = preview["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["currency"].as_str().unwrap()))
        .collect();
    assert_eq!(accounts, [("Checking (EUR)", "EUR"), ("Checking (USD)", "USD")]);
    assert_eq!(committed["imported"], 4);

    let report = l
        .tools
        .call(
            "get_spend_report",
            json!({"period": {"from": "2020-08-01", "to": "2020-08-31"}}),
        )
        .await
        .unwrap();
    assert!(
        report["total"].is_null(),
        "two currencies are never added together: {report:#}"
    );
    let totals: Vec<(&str, i64)> = report["totals_by_currency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["currency"].as_str().unwrap(),
                t["amount_minor"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(totals, [("EUR", 1550), ("USD", 400)]);
    // Money in with no category is income, listed only when asked for and never in a total.
    let with_income = l
        .tools
        .call(
            "get_spend_report",
            json!({"period": {"from": "2020-08-01", "to": "2020-08-31"}, "include_income": true}),
        )
        .await
        .unwrap();
    let income: Vec<(&str, &str, i64)> = with_income["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "income")
        .map(|g| {
            (
                g["group"].as_str().unwrap(),
                g["currency"].as_str().unwrap(),
                g["amount_minor"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(income, [("Uncategorized income", "USD", -10_000)]);
    assert_eq!(with_income["totals_by_currency"], report["totals_by_currency"]);
}

/// Money in with no category (a salary no rule knows) is income: it used to be booked on
/// Uncategorized as a negative expense and netted into spending ("Uncategorized −₹650.00, total
/// spending ₹0.00"). Spending is the money out; the total is the sum of the groups it lists.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn money_in_with_no_category_is_income_never_netted_into_spending(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let ledger = ledger(options, connect).await;
    let statement = "Date,Narration,Withdrawal Amt.,Deposit Amt.,Closing Balance\n\
        01/04/2025,ZXQ TRADERS 1,50.00,,950.00\n\
        02/04/2025,ZXQ DEPOSIT IN,,1000.00,1950.00\n\
        13/04/2025,ZXQ TRADERS 2,250.00,,1700.00\n";
    let (preview, committed) = ledger.import("april.csv", statement).await;
    assert_eq!(committed["imported"], 3, "{preview}");
    let amounts = |report: &Value| -> Vec<(String, String, i64)> {
        report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap().to_owned(),
                    g["kind"].as_str().unwrap().to_owned(),
                    g["amount_minor"].as_i64().unwrap(),
                )
            })
            .collect()
    };

    let spending = ledger
        .tools
        .call("get_spend_report", json!({"period": "2025-04"}))
        .await
        .unwrap();
    assert_eq!(
        amounts(&spending),
        [("Uncategorized".to_owned(), "spending".to_owned(), 30_000)],
        "{spending}"
    );
    assert_eq!(spending["total"]["amount_minor"], 30_000, "{spending}");
    assert_eq!(spending["groups"][0]["transactions"], 2);

    let with_income = ledger
        .tools
        .call(
            "get_spend_report",
            json!({"period": "2025-04", "include_income": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        amounts(&with_income),
        [
            ("Uncategorized".to_owned(), "spending".to_owned(), 30_000),
            ("Uncategorized income".to_owned(), "income".to_owned(), -100_000),
        ],
        "{with_income}"
    );
    assert_eq!(
        with_income["total"], spending["total"],
        "income never counts toward the total"
    );

    let by_month = ledger
        .tools
        .call(
            "get_spend_report",
            json!({"period": {"from": "2025-04-01", "to": "2025-04-30"}, "group_by": "month", "include_income": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        amounts(&by_month),
        [
            ("2025-04".to_owned(), "spending".to_owned(), 30_000),
            ("2025-04".to_owned(), "income".to_owned(), -100_000),
        ],
        "a month's spending and income are separate groups: {by_month}"
    );
}

/// A statement that names no currency goes into an account in use in that account's currency,
/// and is refused — never booked as INR — when the account holds nothing yet.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_statement_that_names_no_currency_asks_unless_the_account_says(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    let statement = "Date,Description,Amount\n2024-01-15,ACME STORE,-8.99\n2024-01-16,PAYROLL,1200.00\n";
    let upload = l.upload("lloyds.csv", statement.as_bytes()).await;
    let refused = l
        .tools
        .call("import_statement_csv", json!({"upload_id": upload}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("states no currency") && refused.contains("currency"),
        "{refused}"
    );
    assert_eq!(l.transactions().await, 0);

    // Said once, the account is in use (a new owner's Checking is made in the statement's
    // currency); the next statement into it goes by that.
    let with_currency = l
        .tools
        .call(
            "import_statement_csv",
            json!({"upload_id": upload, "currency": "GBP"}),
        )
        .await
        .unwrap();
    assert_eq!(with_currency["accounts"][0]["currency"], "GBP", "{with_currency}");
    l.commit(&with_currency).await;
    let next = "Date,Description,Amount\n2024-02-01,ACME STORE,-3.50\n";
    let preview = l.preview_without_currency(next).await;
    assert_eq!(preview["rows_to_add"], 1, "{preview}");
    assert_eq!(preview["first_rows"][0]["amount"]["currency"], "GBP", "{preview}");
    assert!(
        preview["format"]["currency_from"]
            .as_str()
            .unwrap()
            .contains("the account Checking, which holds GBP"),
        "{preview}"
    );
}

/// A preview a person can check: the first and last three rows with their direction, and every
/// line of the file accounted for — in the chat tool's result as in the CLI and the web card. An
/// unterminated quote on the second row used to preview "1 rows to add … 0 unreadable", the other
/// rows vanishing without a word; now every line it swallowed is unreadable, each named.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_preview_shows_both_ends_and_accounts_for_every_line(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    let days: String = (1..=9).fold(String::new(), |mut days, day| {
        use std::fmt::Write as _;
        let _ = writeln!(days, "2025-05-0{day},SHOP {day},-{day}.00");
        days
    });
    let text = format!("Statement of account\nDate,Description,Amount\n{days}\n2025-05-10,SALARY,500.00\n");
    let preview = l.preview(l.upload("may.csv", text.as_bytes()).await).await;
    let lines = |key: &str| -> Vec<u64> {
        preview[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["line"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(lines("first_rows"), [3, 4, 5]);
    assert_eq!(lines("last_rows"), [10, 11, 13]);
    assert_eq!(preview["first_rows"][0]["direction"], "out");
    assert_eq!(preview["last_rows"][2]["direction"], "in");
    assert_eq!(preview["last_rows"][2]["amount"]["formatted"], "₹500.00");
    assert_eq!(
        preview["lines"],
        json!({"total": 13, "banner": 1, "header": 1, "blank": 1, "notes": 0, "rows": 10, "duplicates": 0,
               "skipped": 0, "unreadable": 0, "continued": 0})
    );
    assert!(
        preview["layout"]
            .as_str()
            .unwrap()
            .starts_with("Comma-separated, UTF-8, header on line 2. Dates from “Date”"),
        "{}",
        preview["layout"]
    );
    l.commit(&preview).await;
    let again = l.preview(l.upload("may.csv", text.as_bytes()).await).await;
    assert_eq!(again["lines"]["duplicates"], 10);
    assert_eq!(again["lines"]["rows"], 0);

    let broken =
        "Date,Description,Amount\n2025-06-01,\"Coffee,-3.00\n2025-06-02,Tea,-2.00\n2025-06-03,Cake,-4.00\n";
    let preview = l.preview(l.upload("june.csv", broken.as_bytes()).await).await;
    assert_eq!(preview["rows_to_add"], 0, "{preview}");
    let unreadable: Vec<u64> = preview["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(unreadable, [2, 3, 4]);
    assert_eq!(preview["lines"]["unreadable"], 3);
    assert_eq!(preview["lines"]["total"], 4);
}

/// The mapping a statement was read with is saved with its account by the commit, and the next
/// statement into that account is read the same way: a header-less layout named by column numbers
/// needs naming once; a date order decided once is the hint when the next file's dates all read
/// either way — said so in the preview — and a file of its own layout still reads by detection.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_mapping_is_saved_with_its_account_and_reused(options: PgPoolOptions, connect: PgConnectOptions) {
    let l = ledger(options, connect).await;
    // Header-less, semicolons, the amount in column 2 and the balance-like figure in column 4.
    let first = "14/03/2025;-12,50;GROCER;100,00\n15/03/2025;-3,00;BAKERY;97,00\n";
    let mapping = json!({"date": "1", "amount": "2", "description": "3", "header": false, "delimiter": ";"});
    let upload = l.upload("march.csv", first.as_bytes()).await;
    let preview = l
        .tools
        .call(
            "import_statement_csv",
            json!({"upload_id": upload, "currency": "EUR", "mapping": mapping}),
        )
        .await
        .unwrap();
    assert_eq!(preview["rows_to_add"], 2, "{preview}");
    l.commit(&preview).await;
    let saved: Value = sqlx::query_scalar(
        "SELECT mapping FROM import_mappings WHERE owner_id = $1 AND account = 'Checking'",
    )
    .bind(l.owner.as_uuid())
    .fetch_one(&l.owner_pool)
    .await
    .unwrap();
    assert_eq!(saved["amount"], "2");
    assert_eq!(saved["date_order"], "day_first", "decided by 14/03 and saved");

    // The next statement: every date reads either way, and no mapping is given.
    let next = "02/04/2025;-7,25;GROCER;89,75\n03/04/2025;-1,00;KIOSK;88,75\n";
    let preview = l.preview_without_currency(next).await;
    assert_eq!(preview["rows_to_add"], 2, "{preview}");
    let amounts: Vec<i64> = preview["first_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["amount"]["amount_minor"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, [-725, -100]);
    assert_eq!(
        preview["first_rows"][0]["date"], "2025-04-02",
        "day-first, as before"
    );
    assert_eq!(preview["format"]["date_order_assumed"], true);
    assert!(
        preview["format"]["date_order_reason"]
            .as_str()
            .unwrap()
            .contains("as in the last import into Checking (march.csv)"),
        "{preview}"
    );
    assert!(
        preview["layout"]
            .as_str()
            .unwrap()
            .contains("Read with the mapping saved with Checking by the import of march.csv."),
        "{}",
        preview["layout"]
    );
    // Committed, that statement keeps the order it was read with for the next one.
    l.commit(&preview).await;
    let third = l
        .preview_without_currency("05/05/2025;-4,00;GROCER;84,75\n06/05/2025;-2,00;KIOSK;82,75\n")
        .await;
    assert_eq!(third["first_rows"][0]["date"], "2025-05-05", "{third}");
    assert!(
        third["format"]["date_order_reason"]
            .as_str()
            .unwrap()
            .contains("as in the last import into Checking (next.csv)"),
        "{third}"
    );
    // A statement of another layout into the same account is read by detection.
    let other = l
        .preview_without_currency("Date,Description,Amount\n2025-05-01,RENT,-700.00\n")
        .await;
    assert_eq!(other["rows_to_add"], 1, "{other}");
    assert_eq!(other["format"]["mapping_from"], Value::Null);
}

/// Every corpus statement the importer reads, imported into an account of its own and then
/// previewed again: the second preview adds nothing, and every row it read is a duplicate.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reimporting_any_corpus_statement_adds_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let Some(root) = corpus::bank_csv("", "re-imports of the corpus") else {
        return;
    };
    let l = ledger(options, connect).await;
    let mut imported_files = 0;
    for (i, path) in corpus::statements(&root).iter().enumerate() {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let bytes = std::fs::read(path).unwrap();
        let upload = l.upload(&name, &bytes).await;
        let account = format!("Statement {i}");
        let call = json!({"upload_id": upload, "account": account, "currency": "EUR"});
        let Ok(first) = l.tools.call("import_statement_csv", call.clone()).await else {
            continue; // Refused as a whole: import_expectations says why.
        };
        if first["rows_to_add"] == 0 {
            continue;
        }
        let committed = l.commit(&first).await;
        assert_eq!(committed["imported"], first["rows_to_add"], "{name}");
        let again = l.tools.call("import_statement_csv", call).await.unwrap();
        assert_eq!(again["rows_to_add"], 0, "{name}: a re-import adds nothing");
        // Its own rows, and those the first import found already in another account (several
        // corpus files hold the same rows).
        let before = first["rows_to_add"].as_u64().unwrap() + first["duplicates_skipped"].as_u64().unwrap();
        assert_eq!(again["duplicates_skipped"], before, "{name}");
        imported_files += 1;
    }
    eprintln!("{imported_files} corpus statements imported twice: the second added nothing");
    assert!(imported_files > 40, "{imported_files}");
}

/// A ledger whose latest transaction is early in year 0 (a statement can say so): the dashboard
/// of its latest month still answers — its by-month series starts at year 0, not in year -1,
/// which no date the read tools take is written in.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_dashboard_of_a_ledger_in_year_zero_answers(options: PgPoolOptions, connect: PgConnectOptions) {
    let l = ledger(options, connect).await;
    let (preview, committed) = l
        .import("old.csv", "Date,Description,Amount\n0000-03-15,TEA,-10.00\n")
        .await;
    assert_eq!(committed["imported"], 1, "{preview}");
    let dashboard = kakeibo_tools::dashboard::dashboard(l.owner, &l.owner_pool, None)
        .await
        .unwrap();
    assert_eq!(dashboard.month.as_deref(), Some("0000-03"));
    let panels = dashboard.panels.unwrap();
    assert_eq!(panels.spend_by_month.period.from, "0000-01-01");
}

/// A row that looks like a transfer whose other side never comes waits in transit: searched, it
/// shows its own amount and "Transfers in transit"; categorising it is refused with the reason;
/// `settle_transit` makes it spending or a transfer to a named account, and asks for exactly one.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn rows_in_transit_are_listed_refused_as_spending_and_settled(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let l = ledger(options, connect).await;
    let statement = "Date,Narration,Withdrawal Amt.,Deposit Amt.\n\
        01/04/2025,SALARY ACME,,50000.00\n\
        03/04/2025,ONLINE TRANSFER TO BROKERAGE,10000.00,\n\
        05/04/2025,CARD PAYMENT THANK YOU CREDIT CARD,2000.00,\n";
    let (_, committed) = l.import("april.csv", statement).await;
    assert_eq!(committed["imported"], 3, "{committed}");
    let balances = l.tools.call("get_balances", json!({})).await.unwrap();
    let transit = balances["in_transit"].as_array().unwrap();
    assert_eq!(transit.len(), 2, "{balances:#}");
    let id =
        |text: &str| transit.iter().find(|t| t["description"] == text).unwrap()["transaction_id"].clone();
    let (brokerage, card) = (
        id("ONLINE TRANSFER TO BROKERAGE"),
        id("CARD PAYMENT THANK YOU CREDIT CARD"),
    );
    let found = l
        .tools
        .call("search_transactions", json!({"query": "BROKERAGE"}))
        .await
        .unwrap();
    let row = &found["transactions"][0];
    assert_eq!(
        (row["category"].as_str(), row["amount_minor"].as_i64()),
        (Some("Transfers in transit"), Some(-1_000_000)),
        "{found:#}"
    );

    let refused = l
        .tools
        .call(
            "categorize_transactions",
            json!({"transaction_ids": [brokerage], "category": "Shopping"}),
        )
        .await
        .unwrap();
    assert_eq!(refused["updated"], 0);
    assert!(
        refused["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("waiting in transit"),
        "{refused}"
    );

    // Exactly one of the three.
    let both = l
        .tools
        .call(
            "settle_transit",
            json!({"transaction_id": card, "category": "Fees", "account": "Credit Card"}),
        )
        .await;
    assert!(
        matches!(&both, Err(CallError::Tool(ToolError::InvalidInput(p))) if p[0].contains("exactly one")),
        "{both:?}"
    );
    let settled = l
        .tools
        .call(
            "settle_transit",
            json!({"transaction_id": card, "account": "Credit Card"}),
        )
        .await
        .unwrap();
    assert!(
        settled["became"].as_str().unwrap().contains("to Credit Card"),
        "{settled}"
    );
    let settled = l
        .tools
        .call(
            "settle_transit",
            json!({"transaction_id": brokerage, "category": "Shopping"}),
        )
        .await
        .unwrap();
    assert!(
        settled["became"]
            .as_str()
            .unwrap()
            .contains("spending in Shopping"),
        "{settled}"
    );
    let balances = l.tools.call("get_balances", json!({})).await.unwrap();
    assert_eq!(balances["in_transit"], json!([]), "{balances:#}");
    let card = balances["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Credit Card")
        .unwrap();
    assert_eq!(card["amount_minor"], 200_000, "{balances:#}");
    // A transfer, searched, shows the money that left Checking.
    let found = l
        .tools
        .call("search_transactions", json!({"query": "THANK YOU"}))
        .await
        .unwrap();
    let row = &found["transactions"][0];
    assert_eq!(
        (row["category"].as_str(), row["amount_minor"].as_i64()),
        (Some("Transfer"), Some(-200_000)),
        "{found:#}"
    );
}
