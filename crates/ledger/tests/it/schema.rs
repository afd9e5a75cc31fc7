//! The live schema in one file: `schema/CURRENT.sql` is what the migrations make — `pg_dump`'s
//! schema of a freshly migrated database, without owners, the dump's session settings or its
//! version lines. A function redefined migration after migration (`app_open_turn`, say) has its
//! current body there, and a migration that changes the schema changes that file in the same
//! commit, or this test fails. To write it anew: `KAKEIBO_WRITE_SCHEMA=1 cargo test -p
//! kakeibo-ledger --test it schema`.

use std::{path::PathBuf, process::Command};

use sqlx::{
    ConnectOptions,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// `pg_dump` on the PATH, else in a Debian PostgreSQL's folder.
fn pg_dump() -> Option<PathBuf> {
    let on_path = Command::new("pg_dump").arg("--version").output();
    if on_path.is_ok_and(|o| o.status.success()) {
        return Some(PathBuf::from("pg_dump"));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|version| version.path().join("bin/pg_dump"))
        .filter(|path| path.is_file())
        .collect();
    found.sort();
    found.pop()
}

/// The dump without what differs between two dumps of the same schema: comments but the
/// `-- Name:` headings, session settings, the per-dump `\restrict` key, runs of blank lines.
fn normalised(dump: &str) -> String {
    let mut out = String::with_capacity(dump.len());
    let mut blank = true;
    for line in dump.lines() {
        let noise = (line.starts_with("--") && !line.starts_with("-- Name:"))
            || line.starts_with("SET ")
            || line.starts_with("SELECT pg_catalog.set_config(")
            || line.starts_with("\\restrict")
            || line.starts_with("\\unrestrict");
        if noise || (line.is_empty() && blank) {
            continue;
        }
        blank = line.is_empty();
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned() + "\n"
}

#[sqlx::test(migrator = "kakeibo_ledger::MIGRATOR")]
async fn the_committed_schema_is_what_the_migrations_make(_: PgPoolOptions, connect: PgConnectOptions) {
    let Some(pg_dump) = pg_dump().or_else(|| kakeibo_testkit::skip("pg_dump is not installed")) else {
        return;
    };
    // The test database's address, without sqlx's own settings (which pg_dump refuses).
    let mut url = connect.to_url_lossy();
    url.set_query(None);
    let output = Command::new(pg_dump)
        .args(["--schema-only", "--no-owner", "--exclude-table=_sqlx_migrations"])
        .arg(url.as_str())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let live = normalised(&String::from_utf8(output.stdout).unwrap());
    let path = kakeibo_testkit::workspace_root().join("schema/CURRENT.sql");
    if std::env::var("KAKEIBO_WRITE_SCHEMA").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &live).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != live {
        let first = committed
            .lines()
            .zip(live.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(live.lines().count()));
        panic!(
            "schema/CURRENT.sql is not what the migrations make (first difference at line {}: {:?} committed, {:?} live); \
             write it anew with KAKEIBO_WRITE_SCHEMA=1 cargo test -p kakeibo-ledger --test it schema",
            first + 1,
            committed.lines().nth(first).unwrap_or("(end)"),
            live.lines().nth(first).unwrap_or("(end)"),
        );
    }
}
