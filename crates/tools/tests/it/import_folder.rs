//! `read_confined`: a statement is read from inside the import folder and from nowhere else —
//! not through a link that leads out, not by swapping the file for a link between a check and the
//! read — and a refusal says the same whether a path outside the folder exists or not.

use std::{
    fs,
    os::unix::fs::symlink,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use kakeibo_core::ToolError;
use kakeibo_tools::read_confined;

const STATEMENT: &[u8] = b"Date,Description,Amount\n2025-01-13,CHAI POINT,-50.00\n";
const SECRET: &[u8] = b"TOP SECRET: a file outside the import folder\n";

/// The refusal's reason, without the path it quotes.
fn refusal(root: &Path, path: &str) -> String {
    match read_confined(Some(root), path) {
        Err(ToolError::Refused(sentence)) => sentence
            .strip_prefix(&format!("{path:?} "))
            .unwrap_or_else(|| panic!("{sentence} starts with the path"))
            .to_owned(),
        Err(other) => panic!("{path}: not a refusal: {other:?}"),
        Ok((name, bytes)) => panic!("{path}: read {name} ({:?})", String::from_utf8_lossy(&bytes)),
    }
}

#[test]
fn links_out_and_paths_out_are_refused_alike() {
    let folder = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = folder.path().join("imports");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("ok.csv"), STATEMENT).unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(root.join("sub/inner.csv"), STATEMENT).unwrap();
    // A file next to the folder (`../existing.csv`) and one further out, each reachable by a link.
    fs::write(folder.path().join("existing.csv"), SECRET).unwrap();
    fs::write(outside.path().join("secret.csv"), SECRET).unwrap();
    symlink(outside.path().join("secret.csv"), root.join("link.csv")).unwrap();
    symlink(folder.path().join("existing.csv"), root.join("up.csv")).unwrap();
    symlink("/etc/passwd", root.join("passwd.csv")).unwrap();
    symlink(outside.path(), root.join("away")).unwrap();
    symlink("ok.csv", root.join("alias.csv")).unwrap();
    // A named pipe: refused as not a file, not waited on for a writer.
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("pipe.csv"))
        .status()
        .unwrap();
    assert!(made.success());

    // Inside the folder: read, links that stay inside included.
    for (path, name) in [
        ("ok.csv", "ok.csv"),
        ("sub/inner.csv", "inner.csv"),
        ("sub/../ok.csv", "ok.csv"),
    ] {
        let (read, bytes) = read_confined(Some(&root), path).unwrap();
        assert_eq!((read.as_str(), bytes.as_slice()), (name, STATEMENT), "{path}");
    }
    assert_eq!(read_confined(Some(&root), "alias.csv").unwrap().1, STATEMENT);

    let secret = outside.path().join("secret.csv").display().to_string();
    let refused = [
        "link.csv",
        "up.csv",
        "passwd.csv",
        "away/secret.csv",
        "../existing.csv",
        "../nonexistent.csv",
        "/etc/passwd",
        "/nonexistent",
        secret.as_str(),
        "missing.csv",
        "pipe.csv",
        "sub",
        ".",
        "",
        "sub/../../existing.csv",
    ];
    let reasons: Vec<(&str, String)> = refused.iter().map(|p| (*p, refusal(&root, p))).collect();
    for (path, reason) in &reasons {
        assert_eq!(
            reason, "cannot be imported: no such file in the import folder",
            "{path}: every refusal is the same sentence, whether the path outside exists or not"
        );
    }

    // No folder at all: said so, and about the folder, not the file.
    assert!(refusal(&folder.path().join("gone"), "ok.csv").contains("the import folder does not exist"));
    let none = read_confined(None, "ok.csv").unwrap_err().to_string();
    assert!(none.contains("reads uploaded statements only"), "{none}");
}

#[test]
fn oversized_files_are_refused_with_their_size() {
    let folder = tempfile::tempdir().unwrap();
    let big = fs::File::create(folder.path().join("big.csv")).unwrap();
    let max = u64::try_from(kakeibo_ledger::import::MAX_BYTES).unwrap();
    big.set_len(max + 1).unwrap();
    let reason = refusal(folder.path(), "big.csv");
    assert!(reason.contains(&format!("is {} bytes", max + 1)), "{reason}");
    big.set_len(max).unwrap();
    let (_, bytes) = read_confined(Some(folder.path()), "big.csv").unwrap();
    assert_eq!(bytes.len(), kakeibo_ledger::import::MAX_BYTES);
}

/// One thread swaps `statement.csv` between a real file and a link to a secret outside the folder
/// (each an atomic rename over the name), as fast as it can, while this one reads it: no read
/// ever returns the secret's bytes. (A check of the path followed by a second open by name leaks
/// the secret within a few hundred reads.)
#[test]
fn swapping_the_file_for_a_link_never_leaks_the_target() {
    let folder = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = folder.path().to_path_buf();
    let secret = outside.path().join("secret.csv");
    fs::write(&secret, SECRET).unwrap();
    fs::write(root.join("statement.csv"), STATEMENT).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root) = (Arc::clone(&stop), root.clone());
        std::thread::spawn(move || {
            let (link, file, name) = (root.join(".link"), root.join(".file"), root.join("statement.csv"));
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                symlink(&secret, &link).unwrap();
                fs::rename(&link, &name).unwrap();
                fs::write(&file, STATEMENT).unwrap();
                fs::rename(&file, &name).unwrap();
                swaps += 2;
            }
            swaps
        })
    };

    let started = Instant::now();
    let (mut reads, mut refusals, mut leaks) = (0u32, 0u32, 0u32);
    while started.elapsed() < Duration::from_millis(1500) || reads < 2000 {
        match read_confined(Some(&root), "statement.csv") {
            Ok((_, bytes)) if bytes == SECRET => leaks += 1,
            Ok((_, bytes)) => {
                assert_eq!(bytes, STATEMENT);
                reads += 1;
            }
            Err(ToolError::Refused(_)) => refusals += 1,
            Err(other) => panic!("{other:?}"),
        }
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert_eq!(
        leaks, 0,
        "the secret outside the folder was read {leaks} times ({reads} reads of the statement, \
         {refusals} refusals, {swaps} swaps)"
    );
    assert!(
        reads > 0 && refusals > 0,
        "both sides of the swap were seen: {reads} reads, {refusals} refusals, {swaps} swaps"
    );
}
