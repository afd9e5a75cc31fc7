//! OFX statements through the plan and the commit: each statement of a file into its own
//! account, named after the bank's account and remembered by its number; `LEDGERBAL` checked;
//! a second import of a file adds nothing; an overlapping, longer download adds exactly its new
//! rows; two identical purchases on one day both land; a bank that numbers each file's rows
//! 1, 2, 3 loses none of them; a bank that changes a row's id between downloads adds it once;
//! the bank's corrections replace and delete; a camt entry naming another own account by its IBAN
//! is a transfer; a QIF split is one transaction with a posting per category.

use crate::common;

use std::fmt::Write as _;

use common::{new_user, owner_pool};
use kakeibo_ledger::{
    OwnerId, begin_for_owner,
    import::{self, ParseOptions, Target},
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

const HEADER: &str = "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n";

/// A file of a checking statement with `rows` (date, amount, FITID, name) and a closing balance,
/// and, when `card` is given, a card statement after it.
fn ofx(
    rows: &[(&str, &str, &str, &str)],
    closing: &str,
    card: Option<&[(&str, &str, &str, &str)]>,
) -> Vec<u8> {
    let transactions = |rows: &[(&str, &str, &str, &str)]| {
        let mut text = String::new();
        for (date, amount, fitid, name) in rows {
            let _ = writeln!(
                text,
                "<STMTTRN><TRNTYPE>POS<DTPOSTED>{date}120000[-5:EST]<TRNAMT>{amount}<FITID>{fitid}<NAME>{name}</STMTTRN>"
            );
        }
        text
    };
    let mut text = format!(
        "{HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n\
         <BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n{}\
         </BANKTRANLIST><LEDGERBAL><BALAMT>{closing}<DTASOF>20240229</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1>\n",
        transactions(rows)
    );
    if let Some(card) = card {
        let _ = write!(
            text,
            "<CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD<CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM>\n\
             <BANKTRANLIST>\n{}</BANKTRANLIST><LEDGERBAL><BALAMT>-25.00<DTASOF>20240229</LEDGERBAL></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1>\n",
            transactions(card)
        );
    }
    text.push_str("</OFX>\n");
    text.into_bytes()
}

/// Previews and commits statement `statement` of `bytes` into the account it names (or
/// `account`); the plan and the report.
async fn import(
    pool: &PgPool,
    owner: OwnerId,
    bytes: &[u8],
    statement: Option<usize>,
    account: Option<&str>,
) -> (import::Plan, import::CommitReport) {
    let options = ParseOptions {
        statement,
        ..ParseOptions::default()
    };
    import_with(pool, owner, bytes, &options, account).await
}

/// Like [`import`], read with `options`.
pub(crate) async fn import_with(
    pool: &PgPool,
    owner: OwnerId,
    bytes: &[u8],
    options: &ParseOptions,
    account: Option<&str>,
) -> (import::Plan, import::CommitReport) {
    let parsed = import::parse(bytes, options).unwrap();
    let mut tx = begin_for_owner(owner, pool).await.unwrap();
    let target = Target {
        account: account.map(str::to_owned),
        ..Target::default()
    };
    let (plan_id, plan) = import::plan_into(
        owner,
        &mut tx,
        "download.qbo",
        &import::file_sha256(bytes),
        parsed,
        &target,
    )
    .await
    .unwrap();
    let report = import::commit(owner, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    tx.commit().await.unwrap();
    (plan, report)
}

const FEBRUARY: [(&str, &str, &str, &str); 3] = [
    ("20240205", "-4.50", "A1", "COFFEE"),
    ("20240205", "-4.50", "A2", "COFFEE"),
    ("20240210", "-100.00", "A3", "RENT SHARE"),
];

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn ofx_statements_land_once_each_in_their_own_accounts(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let card_rows = [("20240203", "-25.00", "C1", "BOOKS")];
    let file = ofx(&FEBRUARY, "891.00", Some(&card_rows));
    assert!(matches!(
        import::parse(&file, &ParseOptions::default()),
        Err(import::ImportError::SeveralStatements { .. })
    ));

    // The checking statement: its own account, named after the bank's; both coffees; the
    // bank's LEDGERBAL is where the account ends (an opening balance makes up the rest).
    let (plan, report) = import(&pool, owner, &file, Some(1), None).await;
    assert_eq!(plan.base_account, "Checking …6789");
    assert_eq!(report.imported, 3, "two identical purchases are two rows");
    let balance = report.balance.unwrap();
    assert!(balance.agrees() && balance.bank_minor == 89_100, "{balance:?}");

    // The card statement: a card account of its own, a liability owing what LEDGERBAL says.
    let (plan, report) = import(&pool, owner, &file, Some(2), None).await;
    assert_eq!(plan.base_account, "Credit Card …2222");
    assert_eq!(
        plan.accounts.first().map(|a| a.kind),
        Some(kakeibo_ledger::AccountKind::Card)
    );
    assert_eq!(report.imported, 1);
    assert!(report.balance.unwrap().agrees());

    // The same file again: nothing new.
    for (statement, rows) in [(1, 3), (2, 1)] {
        let (plan, report) = import(&pool, owner, &file, Some(statement), None).await;
        assert_eq!(
            (report.imported, plan.lines.duplicates),
            (0, rows),
            "statement {statement} a second time"
        );
    }

    // A longer download overlapping the first: only its new rows. Its account is remembered,
    // even after the person renamed nothing and named no account.
    let mut march = FEBRUARY.to_vec();
    march.push(("20240301", "-4.50", "A4", "COFFEE"));
    march.push(("20240302", "250.00", "A5", "REFUND"));
    let longer = ofx(&march, "1136.50", None);
    let (plan, report) = import(&pool, owner, &longer, None, None).await;
    assert_eq!(plan.base_account, "Checking …6789");
    assert!(
        plan.account_from
            .as_deref()
            .is_some_and(|why| why.contains("checking account …6789")),
        "{plan:?}"
    );
    assert_eq!((report.imported, plan.lines.duplicates), (2, 3));
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_bank_that_numbers_each_file_from_one_loses_no_row(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let january = ofx(
        &[
            ("20240105", "-16.85", "1", "ALDI"),
            ("20240106", "-3.00", "2", "BUS"),
        ],
        "100.00",
        None,
    );
    let february = ofx(
        &[
            ("20240205", "-20.00", "1", "ALDI"),
            ("20240206", "-3.00", "2", "BUS"),
        ],
        "77.00",
        None,
    );
    let (_, first) = import(&pool, owner, &january, None, Some("Everyday")).await;
    let (_, second) = import(&pool, owner, &february, None, Some("Everyday")).await;
    assert_eq!(
        (first.imported, second.imported),
        (2, 2),
        "FITID 1 of February is not FITID 1 of January"
    );
    let (_, again) = import(&pool, owner, &february, None, Some("Everyday")).await;
    assert_eq!(again.imported, 0);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_bank_that_changes_its_ids_between_downloads_adds_no_row_twice(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    // The first download: one coffee so far that day.
    let first = ofx(&[("20240205", "-4.50", "P1", "COFFEE")], "995.50", None);
    // The next: the bank booked the pending coffee under a new id, a second coffee of the same
    // day came with its own, and the rent is new.
    let renamed = ofx(
        &[
            ("20240205", "-4.50", "B7", "COFFEE"),
            ("20240205", "-4.50", "B8", "COFFEE"),
            ("20240210", "-100.00", "B9", "RENT SHARE"),
        ],
        "891.00",
        None,
    );
    let (_, report) = import(&pool, owner, &first, None, None).await;
    assert_eq!(report.imported, 1);
    let (plan, report) = import(&pool, owner, &renamed, None, None).await;
    assert_eq!(
        report.imported, 2,
        "the renamed coffee is the one in the ledger; the second coffee and the rent are new"
    );
    assert_eq!(plan.lines.duplicates, 1);
    let why = &plan.duplicates[0].reason;
    assert!(
        why.contains("P1") && why.contains("B7") && why.contains("another id"),
        "{why}"
    );
    let balance = report.balance.unwrap();
    assert!(balance.agrees(), "{balance:?}");

    // Again: every row is known by its own id now.
    let (plan, report) = import(&pool, owner, &renamed, None, None).await;
    assert_eq!((report.imported, plan.lines.duplicates), (0, 3));

    // A third coffee that day under a new id: B7 is again the coffee first known as P1, B8 is
    // known by its own id, and nothing is left for B10 to be — it is new.
    let both = ofx(
        &[
            ("20240205", "-4.50", "B7", "COFFEE"),
            ("20240205", "-4.50", "B8", "COFFEE"),
            ("20240205", "-4.50", "B10", "COFFEE"),
        ],
        "886.50",
        None,
    );
    let (_, report) = import(&pool, owner, &both, None, None).await;
    assert_eq!(
        report.imported, 1,
        "B10's twins are in the file under their own ids"
    );
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_banks_corrections_replace_and_delete_the_rows_they_name(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let (_, report) = import(&pool, owner, &ofx(&FEBRUARY, "891.00", None), None, None).await;
    assert_eq!(report.imported, 3);
    // The bank's next file: the rent share was 90.00, not 100.00 (A4 replaces A3), the second
    // coffee never happened (A2 deleted), and a new purchase.
    let corrected = format!(
        "{HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n\
         <BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240210<TRNAMT>-90.00<FITID>A4<CORRECTFITID>A3<CORRECTACTION>REPLACE<NAME>RENT SHARE</STMTTRN>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240205<TRNAMT>-4.50<FITID>A5<CORRECTFITID>A2<CORRECTACTION>DELETE<NAME>COFFEE</STMTTRN>\n\
         <STMTTRN><TRNTYPE>POS<DTPOSTED>20240212<TRNAMT>-6.00<FITID>A6<NAME>BAKERY</STMTTRN>\n\
         </BANKTRANLIST><LEDGERBAL><BALAMT>899.50<DTASOF>20240229</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    );
    let (plan, report) = import(&pool, owner, corrected.as_bytes(), None, None).await;
    let words: Vec<&str> = plan.corrections.iter().map(|c| c.in_words.as_str()).collect();
    assert!(
        words[0].starts_with("line 9 replaces the row the bank gave as A3: 2024-02-10 “RENT SHARE”"),
        "{words:?}"
    );
    assert!(
        words[1].starts_with("line 10 deletes the row the bank gave as A2"),
        "{words:?}"
    );
    assert_eq!((report.imported, report.corrected), (2, 2));
    let balance = report.balance.unwrap();
    assert!(
        balance.agrees() && balance.ledger_minor == 89_950,
        "1000 − 4.50 − 90 − 6 after the corrections: {balance:?}"
    );
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT t.raw_description, p.amount_minor FROM transactions t
         JOIN postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id
         JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id AND a.name = 'Checking …6789'
         ORDER BY t.date, p.amount_minor",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        rows,
        [
            ("Opening balance of Checking …6789", 100_000),
            ("COFFEE", -450),
            ("RENT SHARE", -9000),
            ("BAKERY", -600)
        ]
        .map(|(d, a)| (d.to_owned(), a))
        .to_vec()
    );

    // The same file again: its rows are there, and what it corrects is gone already.
    let (plan, report) = import(&pool, owner, corrected.as_bytes(), None, None).await;
    assert_eq!((report.imported, report.corrected), (0, 0));
    assert!(
        plan.corrections
            .iter()
            .all(|c| c.in_words.contains("not in the ledger"))
    );

    // A replacement that keeps the id, the date and the amount (only the name was wrong) is no
    // duplicate of the row it replaces: the row is replaced, not lost.
    let renamed = format!(
        "{HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n\
         <BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n\
         <STMTTRN><TRNTYPE>POS<DTPOSTED>20240212<TRNAMT>-6.00<FITID>A6<CORRECTFITID>A6<CORRECTACTION>REPLACE<NAME>CORNER BAKERY</STMTTRN>\n\
         </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    );
    let (plan, report) = import(&pool, owner, renamed.as_bytes(), None, None).await;
    assert_eq!(
        (report.imported, report.corrected, plan.lines.duplicates),
        (1, 1, 0)
    );
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let bakery: Vec<String> = sqlx::query_scalar(
        "SELECT raw_description FROM transactions WHERE raw_description LIKE '%BAKERY%' ORDER BY 1",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(bakery, ["CORNER BAKERY"]);
}

/// A camt.053 statement of `iban` with one booked entry: (date, amount, money in, the other side's
/// name and IBAN, the bank's reference).
fn camt(iban: &str, entries: &[(&str, &str, bool, &str, &str, &str)]) -> Vec<u8> {
    let mut text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">\
         <BkToCstmrStmt><Stmt><Id>1</Id><Acct><Id><IBAN>{iban}</IBAN></Id><Ccy>EUR</Ccy></Acct>\n"
    );
    for (date, amount, money_in, name, other, reference) in entries {
        let (mark, party, account) = if *money_in {
            ("CRDT", "Dbtr", "DbtrAcct")
        } else {
            ("DBIT", "Cdtr", "CdtrAcct")
        };
        let _ = writeln!(
            text,
            "<Ntry><Amt Ccy=\"EUR\">{amount}</Amt><CdtDbtInd>{mark}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>\
             <BookgDt><Dt>{date}</Dt></BookgDt><AcctSvcrRef>{reference}</AcctSvcrRef><NtryDtls><TxDtls><RltdPties>\
             <{party}><Pty><Nm>{name}</Nm></Pty></{party}><{account}><Id><IBAN>{other}</IBAN></Id></{account}>\
             </RltdPties></TxDtls></NtryDtls></Ntry>"
        );
    }
    text.push_str("</Stmt></BkToCstmrStmt></Document>\n");
    text.into_bytes()
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn money_to_an_account_named_by_its_iban_is_a_transfer_between_own_accounts(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    let (everyday, savings) = ("DE89370400440532013000", "DE02120300000000202051");
    // Each account's first statement: now kakeibo knows both numbers.
    let (_, first) = import(
        &pool,
        owner,
        &camt(
            everyday,
            &[(
                "2025-09-01",
                "1000.00",
                true,
                "EMPLOYER GMBH",
                "DE44500105175407324931",
                "E1",
            )],
        ),
        None,
        None,
    )
    .await;
    let (_, second) = import(
        &pool,
        owner,
        &camt(
            savings,
            &[(
                "2025-09-02",
                "5.00",
                true,
                "BANK INTEREST",
                "DE44500105175407324931",
                "S1",
            )],
        ),
        None,
        None,
    )
    .await;
    assert_eq!((first.imported, second.imported), (1, 1));
    // The everyday account pays 200.00 to the savings account's IBAN; the savings statement
    // receives it from the everyday account's. Neither says "transfer" in words.
    let (plan, paid) = import(
        &pool,
        owner,
        &camt(
            everyday,
            &[("2025-09-10", "200.00", false, "A PERSON", savings, "E2")],
        ),
        None,
        None,
    )
    .await;
    let why = &plan.transfers[0].why;
    assert_eq!(why, "it names your account Account …2051 by its number …2051");
    let (plan, received) = import(
        &pool,
        owner,
        &camt(
            savings,
            &[("2025-09-10", "200.00", true, "A PERSON", everyday, "S2")],
        ),
        None,
        None,
    )
    .await;
    assert_eq!(
        plan.transfers[0].why,
        "it names your account Account …3000 by its number …3000"
    );
    assert_eq!((paid.in_transit, received.transfers_paired), (1, 1));
    // Nothing of the 200.00 is spending or income: no category posting of it is left.
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let categorised: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM postings p JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
         WHERE a.type IN ('income', 'expense') AND abs(p.amount_minor) = 20000",
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(categorised, 0);
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn a_qif_split_is_one_transaction_with_a_posting_per_category(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let pool = owner_pool(options, connect).await;
    let owner = new_user(&pool).await;
    // A market run split between groceries (a subcategory of the file's) and shopping; a second
    // record whose parts do not add up stays one row.
    let qif = "!Type:Bank\nD12/24/2024\nT-50.00\nPMarket\nSGroceries:Vegetables\n$-35.00\nSShopping\n$-15.00\n^\n\
               D12/26/2024\nT-20.00\nPKiosk\nSGroceries\n$-5.00\nSShopping\n$-5.00\n^\n";
    let options = ParseOptions {
        currency: Some(kakeibo_ledger::Currency::USD),
        ..ParseOptions::default()
    };
    let parsed = import::parse(qif.as_bytes(), &options).unwrap();
    let mut tx = begin_for_owner(owner, &pool).await.unwrap();
    let (plan_id, plan) = import::plan(
        owner,
        &mut tx,
        "december.qif",
        &import::file_sha256(qif.as_bytes()),
        parsed,
        None,
    )
    .await
    .unwrap();
    let preview = import::preview(plan_id, &plan);
    let categories: Vec<(&str, usize, i64)> = preview
        .by_category
        .iter()
        .map(|c| {
            (
                c.category.as_str(),
                c.rows,
                c.amounts.iter().map(|a| a.amount_minor).sum(),
            )
        })
        .collect();
    assert_eq!(
        categories,
        [
            ("Groceries", 1, -3500),
            ("Shopping", 1, -1500),
            ("Uncategorized", 1, -2000)
        ]
    );
    assert_eq!(preview.first_rows[0].category, "Groceries + Shopping");
    let report = import::commit(owner, &mut tx, plan_id, &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(report.imported, 2);
    let postings: Vec<(String, i64)> = sqlx::query_as(
        "SELECT a.name, p.amount_minor FROM postings p
         JOIN accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
         JOIN transactions t ON t.owner_id = p.owner_id AND t.id = p.transaction_id
         WHERE t.raw_description = 'Market' ORDER BY p.amount_minor",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        postings,
        [("Checking", -5000), ("Shopping", 1500), ("Groceries", 3500)]
            .map(|(a, m)| (a.to_owned(), m))
            .to_vec()
    );
}
