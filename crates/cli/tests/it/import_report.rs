//! `kakeibo import` and `kakeibo report` as a user runs them, against a real database.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use sqlx::{ConnectOptions, PgPool};

fn kakeibo(args: &[&str], url: &str, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kakeibo"))
        .args(args)
        .env("DATABASE_URL", url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

const STATEMENT: &str = "Account 1234 statement\n\nDate;Description;Amount\n13.01.2025;CHAI POINT;-50,00\n13.01.2025;CHAI POINT;-50,00\n14.01.2025;SALARY;1.000,00\n15.01.2025;BROKEN;abc\n";

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn import_previews_asks_and_imports_once(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jan.csv");
    std::fs::write(&file, STATEMENT).unwrap();
    let file = file.to_str().unwrap();
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM transactions")
            .fetch_one(&pool)
            .await
            .unwrap()
    };

    // Nothing in the file names a currency and Checking holds nothing yet: it asks, never INR.
    let unstated = kakeibo(&["import", file, "--dry-run"], &url, "");
    assert_eq!(unstated.status.code(), Some(1));
    assert!(
        text(&unstated).contains("states no currency") && text(&unstated).contains("--currency"),
        "{}",
        text(&unstated)
    );

    let dry = kakeibo(&["import", file, "--dry-run", "--currency", "INR"], &url, "");
    assert!(dry.status.success(), "{}", text(&dry));
    let shown = text(&dry);
    assert!(shown.contains("3 rows to add into Checking"), "{shown}");
    assert!(shown.contains("day-first (13/1/2025 has no month 13)"), "{shown}");
    assert!(shown.contains("header on line 3"), "{shown}");
    assert!(shown.contains("\"abc\" is not an amount"), "{shown}");
    // The rows a person checks before saying yes, with their direction, and every line accounted for.
    assert!(shown.contains("line  date        description  in/out"), "{shown}");
    assert!(shown.contains("   4  2025-01-13  CHAI POINT   out"), "{shown}");
    assert!(shown.contains("   6  2025-01-14  SALARY       in"), "{shown}");
    assert!(
        shown.contains("7 lines in the file: 1 header, 1 banner line, 3 to add, 1 unreadable, 1 blank"),
        "{shown}"
    );
    assert!(
        shown.contains("money in: ₹1,000.00   money out: -₹100.00"),
        "{shown}"
    );
    assert_eq!(count().await, 0);

    let declined = kakeibo(&["import", file, "--currency", "INR"], &url, "n\n");
    assert!(text(&declined).contains("not imported"), "{}", text(&declined));
    let no_answer = kakeibo(&["import", file, "--currency", "INR"], &url, "");
    assert!(text(&no_answer).contains("not imported"), "end of input is no");
    assert_eq!(count().await, 0);

    let accepted = kakeibo(&["import", file, "--currency", "INR"], &url, "y\n");
    assert!(
        text(&accepted).contains("imported 3 rows (3 uncategorised)"),
        "{}",
        text(&accepted)
    );
    assert_eq!(count().await, 3);

    let again = kakeibo(&["import", file, "--yes"], &url, "");
    let shown_again = text(&again);
    // Checking is in use now: its currency is the one to go by, and the preview says so.
    assert!(
        shown_again.contains("the account Checking, which holds INR"),
        "{shown_again}"
    );
    assert!(
        shown_again.contains("nothing new to add, 3 already in the ledger"),
        "{shown_again}"
    );
    assert!(
        !shown_again.contains("money in:") && !shown_again.contains("money out:"),
        "{shown_again}"
    );
    assert!(shown_again.contains("nothing to import"), "{shown_again}");
    assert_eq!(count().await, 3);

    let json = kakeibo(&["import", file, "--dry-run", "--json"], &url, "");
    let preview: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(preview["duplicates_skipped"], 3);

    // Plurals, and a file with no header row said so (not "line 0").
    let one = dir.path().join("one.csv");
    std::fs::write(&one, "2025-02-03,TEA STALL,-20.00\n2025-02-04,BOOK SHOP,-350.00\n2025-02-05,TEA STALL,-20.00\n2025-02-06,BUS PASS,-150.00\n").unwrap();
    let headerless = kakeibo(&["import", one.to_str().unwrap(), "--dry-run"], &url, "");
    let shown = text(&headerless);
    assert!(shown.contains("no header row"), "{shown}");
    assert!(!shown.contains("line 0"), "{shown}");
    assert!(shown.contains("4 rows to add into Checking"), "{shown}");
    let single = dir.path().join("single.csv");
    std::fs::write(&single, "Date;Description;Amount\n16.01.2025;BAKERY;-80,00\n").unwrap();
    let single = kakeibo(&["import", single.to_str().unwrap(), "--yes"], &url, "");
    let shown = text(&single);
    assert!(shown.contains("1 row to add into Checking"), "{shown}");
    assert!(shown.contains("imported 1 row (1 uncategorised)"), "{shown}");
    assert_eq!(count().await, 4);

    let missing = kakeibo(&["import", "/nonexistent.csv"], &url, "");
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing).contains("cannot read /nonexistent.csv"),
        "{}",
        text(&missing)
    );
    std::fs::write(dir.path().join("empty.csv"), "").unwrap();
    let empty = kakeibo(
        &["import", dir.path().join("empty.csv").to_str().unwrap()],
        &url,
        "",
    );
    assert!(text(&empty).contains("the file is empty"), "{}", text(&empty));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn reports_print_tables_and_json(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let empty = kakeibo(&["report", "spend"], &url, "");
    assert_eq!(empty.status.code(), Some(1));
    assert!(text(&empty).contains("the ledger is empty"), "{}", text(&empty));

    assert!(kakeibo(&["seed", "--db"], &url, "").status.success());
    let spend = kakeibo(&["report", "spend", "--period", "2025-03"], &url, "");
    let shown = text(&spend);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("Groceries") && l.ends_with("₹23,350.00")),
        "{shown}"
    );

    let json = kakeibo(
        &[
            "report",
            "spend",
            "--period",
            "2025-01-01..2025-06-30",
            "--by",
            "month",
            "--json",
        ],
        &url,
        "",
    );
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["groups"].as_array().unwrap().len(), 6);

    let anomalies = text(&kakeibo(
        &["report", "anomalies", "--period", "2025-05"],
        &url,
        "",
    ));
    assert!(
        anomalies.contains("duplicate") && anomalies.contains("CROMA STORE 552901"),
        "{anomalies}"
    );
    let budget = kakeibo(
        &["report", "budget", "--period", "2025-01-01..2025-02-28"],
        &url,
        "",
    );
    assert!(text(&budget).contains("for one month"), "{}", text(&budget));
    let typo = kakeibo(&["report", "spend", "--period", "2025-13"], &url, "");
    assert_eq!(typo.status.code(), Some(1));
    assert!(text(&typo).contains("give a month as YYYY-MM"), "{}", text(&typo));
    for report in ["recurring", "accounts"] {
        let out = kakeibo(&["report", report], &url, "");
        assert!(out.status.success(), "{report}: {}", text(&out));
    }
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn date_order_flag_reads_two_digit_years_first(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("yy.csv");
    // Every date reads day-first too (24 March 2005): only the flag says the year comes first.
    std::fs::write(
        &file,
        "Date,Description,Amount\n24/03/05,RENT,-900.00\n24/03/07,GROCER,-42.10\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let read = |order: &str| {
        text(&kakeibo(
            &[
                "import",
                file,
                "--dry-run",
                "--currency",
                "EUR",
                "--date-order",
                order,
            ],
            &url,
            "",
        ))
    };
    let year_first = read("ymd");
    assert!(year_first.contains("2024-03-05  RENT"), "{year_first}");
    assert!(
        year_first.contains("year-first, as the mapping says"),
        "{year_first}"
    );
    let day_first = read("dmy");
    assert!(day_first.contains("2005-03-24  RENT"), "{day_first}");
    let long = read("day-first");
    assert!(
        long.contains("2005-03-24  RENT"),
        "the long spelling is the same flag: {long}"
    );
    let rejected = text(&kakeibo(&["import", file, "--date-order", "ydm"], &url, ""));
    assert!(rejected.contains("possible values: dmy, mdy, ymd"), "{rejected}");
}

/// A statement's text reaches the terminal as text: a description that moves the cursor up and
/// erases the row above, sets the clipboard (OSC 52), hides a link (OSC 8) or turns the line
/// around (U+202E) is shown with those controls as visible escapes, in the preview a person reads
/// before answering [y/N], and in the JSON preview too.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn import_preview_shows_controls_in_descriptions_as_escapes(pool: PgPool) {
    use std::fmt::Write as _;
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evil.csv");
    // One sequence a row, each within the 40 characters of the preview's description column; the
    // preview shows the first three rows and the last three.
    let descriptions = [
        "ERASE\x1b[1A\x1b[2K",
        "CLIP\x1b]52;c;ZWNobyBvd25lZA==\x07",
        "LINK\x1b]8;;http://evil\x1b\\label\x1b]8;;\x1b\\",
        "TURN \u{202e}DNUFER",
    ];
    let row = |day: u32, description: &str| format!("2025-01-{day},\"{description}\",-50.00\n");
    let mut csv = "Date,Description,Amount\n".to_owned();
    for (day, description) in (13..).zip(&descriptions[..3]) {
        csv.push_str(&row(day, description));
    }
    // Enough plain rows that the controls stay well under the importer's share for a text file.
    for day in 16..28 {
        writeln!(csv, "2025-01-{day},GROCERY STORE NUMBER {day},-{day}.00").unwrap();
    }
    csv.push_str(&row(28, descriptions[3]));
    std::fs::write(&file, csv).unwrap();
    let file = file.to_str().unwrap();

    let raw = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let found: Vec<char> = text
            .chars()
            .filter(|c| matches!(c, '\x1b' | '\x07' | '\u{9b}' | '\u{202e}'))
            .collect();
        (text, found)
    };
    let dry = kakeibo(&["import", file, "--dry-run", "--currency", "INR"], &url, "");
    assert!(dry.status.success(), "{}", text(&dry));
    let (shown, found) = raw(&dry.stdout);
    assert!(found.is_empty(), "raw controls {found:?} on stdout:\n{shown:?}");
    assert!(shown.contains("16 rows to add into Checking"), "{shown}");
    for escaped in [
        "ERASE\\x1b[1A\\x1b[2K",
        "CLIP\\x1b]52;c;ZWNobyBvd25lZA==\\x07",
        "LINK\\x1b]8;;http://evil\\x1b\\label\\x1b]8;;\\x1b\\",
        "TURN \\u{202e}DNUFER",
    ] {
        assert!(shown.contains(escaped), "{escaped} in\n{shown}");
    }
    // The table's columns line up on what is shown: the amounts end in one column.
    let ends: Vec<usize> = shown
        .lines()
        .filter(|l| l.ends_with("-₹50.00"))
        .map(|l| l.chars().count())
        .collect();
    assert!(
        ends.len() == 4 && ends.iter().all(|e| *e == ends[0]),
        "{ends:?}\n{shown}"
    );
    assert!(!text(&dry).contains('\x1b'), "{:?}", text(&dry));

    let json = kakeibo(
        &["import", file, "--dry-run", "--currency", "INR", "--json"],
        &url,
        "",
    );
    assert!(json.status.success(), "{}", text(&json));
    let (shown, found) = raw(&json.stdout);
    assert!(found.is_empty(), "raw controls {found:?} in the JSON:\n{shown:?}");
    let preview: serde_json::Value = serde_json::from_str(&shown).unwrap();
    // The JSON still says exactly what the file said, once its escapes are read.
    let kept: Vec<&str> = ["first_rows", "last_rows"]
        .iter()
        .flat_map(|key| preview[key].as_array().unwrap())
        .filter_map(|r| r["description"].as_str())
        .collect();
    for description in descriptions {
        assert!(kept.contains(&description), "{description:?} in {kept:?}");
    }
}

/// A row the balance column refuses: the preview names both figures and the flag that takes each;
/// `--take` books the row at the figure chosen, and says so.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_refused_row_is_taken_in_with_take(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aug.csv");
    std::fs::write(
        &file,
        "Date,Description,Amount,Balance\n2025-08-01,SALARY,100.00,1100.00\n2025-08-02,CAFE,-5.00,1095.00\n\
         2025-08-03,GROCER,-21.00,1083.00\n2025-08-04,RENT,-50.00,1033.00\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let refused = kakeibo(&["import", file, "--dry-run", "--currency", "EUR"], &url, "");
    assert!(refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains(
            "line 4 can be taken in at its amount (-€21.00) with --take 4=amount, or at the balance's change \
             (-€12.00) with --take 4=balance"
        ),
        "{}",
        text(&refused)
    );
    let bad = kakeibo(&["import", file, "--take", "4=guess"], &url, "");
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains("take a row at its amount or at its balance"),
        "{}",
        text(&bad)
    );
    // A line the balance column does not refuse: said, and nothing imported.
    let agreeing = kakeibo(
        &["import", file, "--yes", "--currency", "EUR", "--take", "3=amount"],
        &url,
        "",
    );
    assert_eq!(agreeing.status.code(), Some(1), "{}", text(&agreeing));
    assert!(
        text(&agreeing).contains("--take names line 3, which the balance column does not refuse"),
        "{}",
        text(&agreeing)
    );

    let taken = kakeibo(
        &[
            "import",
            file,
            "--yes",
            "--currency",
            "EUR",
            "--take",
            "4=balance",
        ],
        &url,
        "",
    );
    assert!(taken.status.success(), "{}", text(&taken));
    assert!(
        text(&taken).contains("taken in on your word: line 4 at the balance's change -€12.00"),
        "{}",
        text(&taken)
    );
    let booked: i64 = sqlx::query_scalar(
        "SELECT p.amount_minor FROM transactions t JOIN postings p ON p.transaction_id = t.id
         JOIN accounts a ON a.id = p.account_id WHERE t.description = 'GROCER' AND a.type = 'asset'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(booked, -1_200);
}

/// A QBO of a bank account and a card: refused with each listed, imported one by number or all
/// in turn, each into its own account.
#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_file_of_several_statements_imports_one_or_all(pool: PgPool) {
    let url = pool.connect_options().to_url_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("october.qbo");
    std::fs::write(
        &file,
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n\
         <BANKACCTFROM><BANKID>021000021<ACCTID>000555501234<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST>\n\
         <STMTTRN><TRNTYPE>POS<DTPOSTED>20251003<TRNAMT>-7.00<FITID>B1<NAME>LUNCH</STMTTRN>\n\
         </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD\n\
         <CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM><BANKTRANLIST>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251004<TRNAMT>-25.00<FITID>C1<NAME>BOOKS</STMTTRN>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251005<TRNAMT>-12.00<FITID>C2<NAME>CINEMA</STMTTRN>\n\
         </BANKTRANLIST></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let refused = kakeibo(&["import", file, "--dry-run"], &url, "");
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains(
            "holds 2 statements: 1. checking account …1234 (USD, 1 transaction), 2. credit card …2222 (USD, 2 transactions)"
        ),
        "{}",
        text(&refused)
    );
    let card = kakeibo(&["import", file, "--statement", "2", "--yes"], &url, "");
    assert!(card.status.success(), "{}", text(&card));
    assert!(text(&card).contains("imported 2 rows"), "{}", text(&card));
    // All in turn: the card's rows are there already; the checking account's are new.
    let all = kakeibo(&["import", file, "--all-statements", "--yes"], &url, "");
    assert!(all.status.success(), "{}", text(&all));
    let said = text(&all);
    assert!(
        said.contains("statement 1 of 2: checking account …1234 (USD, 1 transaction)"),
        "{said}"
    );
    assert!(said.contains("statement 2 of 2: credit card …2222"), "{said}");
    assert!(said.contains("imported 1 row"), "{said}");
    assert!(said.contains("nothing to import"), "{said}");
    let accounts: Vec<(String, i64)> = sqlx::query_as(
        "SELECT a.name, count(*) FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
         WHERE a.type IN ('asset', 'liability') AND a.name LIKE '%…%' GROUP BY a.name ORDER BY a.name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        accounts,
        vec![
            ("Checking …1234".to_owned(), 1),
            ("Credit Card …2222".to_owned(), 2)
        ]
    );
}
