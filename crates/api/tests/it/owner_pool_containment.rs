//! Which source files hold the owner-role pool — the connection that bypasses row-level
//! security. The set must equal this reviewed list, each entry with its reason; a new holder
//! fails here until someone writes down why it needs to read or write across owners.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

/// The reviewed holders and why each needs the owner role.
const ALLOWED: &[(&str, &str)] = &[
    ("crates/ledger/src/db.rs", "defines OwnerRolePool"),
    ("crates/ledger/src/lib.rs", "re-exports it"),
    (
        "crates/operator/src/admin.rs",
        "the one door to cross-owner reads and the operator's actions",
    ),
    (
        "crates/operator/src/quota.rs",
        "per-address counters have no owner; the gate reads the site's daily budget",
    ),
    (
        "crates/operator/src/budget.rs",
        "the site's daily model budget belongs to no owner: every visitor's calls reserve against it",
    ),
    (
        "crates/operator/src/housekeeping.rs",
        "the nightly reaper deletes across owners by design",
    ),
    ("functions/reap/src/lib.rs", "runs the reaper"),
    ("crates/cli/src/main.rs", "`kakeibo reap` runs the reaper by hand"),
    (
        "functions/reap/src/main.rs",
        "hands the owner-role pool to the reaper",
    ),
    (
        "crates/cli/src/operator_cmd.rs",
        "makes operator accounts, which nothing on the site can",
    ),
    (
        "crates/auth/src/visitors.rs",
        "creates, signs up, signs in, moves and deletes users, which app_user may not",
    ),
    (
        "crates/auth/src/proofs.rs",
        "the mailed links: their table and the users they prove or reset, which app_user may not touch",
    ),
    ("crates/api/src/state.rs", "builds the pool once per process"),
    (
        "crates/api/src/visitor.rs",
        "hands it to auth to create a visitor and to the quota gate for new addresses",
    ),
    (
        "functions/chat/src/chat.rs",
        "a message charged to the quotas and given back (MessageCharge)",
    ),
    (
        "functions/chat/src/session.rs",
        "sign-up, sign-in, sign-out and delete (through auth), today's counters for the session",
    ),
    (
        "functions/chat/src/google_sign_in.rs",
        "signing in through Google creates or joins users (through auth)",
    ),
    (
        "functions/chat/src/uploads.rs",
        "the day's preview counter is the quota gate's",
    ),
    (
        "functions/runs/src/lib.rs",
        "the day's export counter is the quota gate's (rate_limits is the owner role's)",
    ),
    (
        "functions/chat/src/account.rs",
        "password changes, reset and address links (through auth)",
    ),
    ("functions/confirm/src/lib.rs", "the quota gate (kind resume)"),
    ("functions/admin/src/lib.rs", "calls the admin module"),
    (
        "crates/testdb/src/lib.rs",
        "the database tests' owner-role pool on each test's own database (a dev-dependency)",
    ),
];

fn root() -> PathBuf {
    kakeibo_testkit::workspace_root()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_reviewed_modules_hold_the_owner_role_pool() {
    let root = root();
    let mut files = Vec::new();
    for group in ["crates", "functions"] {
        let Ok(members) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for member in members.flatten() {
            rust_files(&member.path().join("src"), &mut files);
        }
    }
    assert!(
        files.len() > 50,
        "the scan found the sources ({} files)",
        files.len()
    );
    let mut holders = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.contains("OwnerRolePool") || text.contains("owner_pool") {
            let relative = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            holders.insert(relative);
        }
    }
    let found: Vec<&str> = holders.iter().map(String::as_str).collect();
    let mut allowed: Vec<&str> = ALLOWED.iter().map(|(f, _)| *f).collect();
    allowed.sort_unstable();
    assert_eq!(
        found, allowed,
        "the holders of the owner-role pool changed; review them and say why"
    );
}
