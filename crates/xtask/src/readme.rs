//! The README's commands, run as a newcomer would type them, so a change that breaks a documented
//! command fails the suite.
//!
//! A fenced block whose info string is `sh tested` is run whole by `bash -euo pipefail` from the
//! checkout's root, in a fresh shell per block. A block marked `sh tested dev` needs the local
//! site: it runs while `cargo xtask dev --demo` serves (started here on a free port, which takes
//! the place of the README's `127.0.0.1:3000` in those blocks). Every block runs without a model
//! key in its environment, and — on the embedded cluster — without `DATABASE_URL`, so the
//! commands find the database the way they do for a newcomer.
//!
//! Starting the site also checks what `cargo xtask dev` promises: its URL is printed only once the
//! site answers, and stopping xtask with SIGINT, SIGTERM or SIGKILL stops the server too, so
//! nothing keeps the port.

use std::{
    fs,
    io::{BufRead as _, BufReader},
    net::{SocketAddr, TcpListener},
    path::Path,
    process::{Child, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::{pg, process, process::Cmd, serve::answers};

/// A fenced block of the README.
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    /// The line of its opening fence (1-based).
    pub line: usize,
    /// The words after the fence's language: `tested`, `dev`.
    pub tags: Vec<String>,
    pub text: String,
}

/// The `sh` blocks of a Markdown text.
pub fn sh_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in markdown.lines().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            if let Some(block) = open.take() {
                if fence.trim().is_empty() {
                    blocks.push(block);
                    continue;
                }
                open = Some(block);
            } else {
                let mut words = fence.split_whitespace();
                if words.next() == Some("sh") {
                    open = Some(Block {
                        line: index + 1,
                        tags: words.map(str::to_owned).collect(),
                        text: String::new(),
                    });
                } else {
                    // Another language's block: skip to its closing fence.
                    open = Some(Block {
                        line: 0,
                        tags: vec!["other".to_owned()],
                        text: String::new(),
                    });
                }
            }
            continue;
        }
        if let Some(block) = open.as_mut() {
            block.text.push_str(line);
            block.text.push('\n');
        }
    }
    blocks.retain(|block| block.line > 0);
    blocks
}

impl Block {
    fn tagged(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

/// Variables a block never sees: a live model must not answer a documented command in CI.
const MODEL_VARIABLES: [&str; 9] = [
    "KAKEIBO_PROVIDER",
    "GEMINI_API_KEY",
    "GEMINI_AUTH",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "RECORD",
    "REPLAY",
    "SITE_URL",
];

/// Runs the README's tested blocks. Returns whether all of them passed.
pub fn run(db: &pg::Database, urls: &pg::Urls) -> Result<bool> {
    let root = process::workspace_root();
    let readme = fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let blocks = sh_blocks(&readme);
    let tested: Vec<&Block> = blocks.iter().filter(|b| b.tagged("tested")).collect();
    let (dev_blocks, plain): (Vec<&Block>, Vec<&Block>) = tested.iter().partition(|b| b.tagged("dev"));
    process::step(&format!(
        "the README's commands: {} of its {} sh blocks are marked `tested` ({} need the local site)",
        tested.len(),
        blocks.len(),
        dev_blocks.len()
    ));
    let started = Instant::now();
    let mut failed = Vec::new();
    for block in &plain {
        if !run_block(db, urls, block, None)? {
            failed.push(block.line);
        }
    }
    if !dev_blocks.is_empty() {
        failed.extend(with_dev_site(db, urls, &dev_blocks)?);
    }
    if failed.is_empty() {
        process::step(&format!(
            "the README's commands: {} blocks passed in {:.0} s",
            tested.len(),
            started.elapsed().as_secs_f64()
        ));
        Ok(true)
    } else {
        process::step(&format!(
            "the README's commands: FAILED — the blocks at README.md lines {failed:?}"
        ));
        Ok(false)
    }
}

/// One block in a fresh `bash -euo pipefail`, each command echoed as it runs.
fn run_block(db: &pg::Database, urls: &pg::Urls, block: &Block, site: Option<SocketAddr>) -> Result<bool> {
    let text = match site {
        Some(addr) => block.text.replace("127.0.0.1:3000", &addr.to_string()),
        None => block.text.clone(),
    };
    process::step(&format!("README.md line {}", block.line));
    let mut command = Cmd::new("bash")
        .args(["-euo", "pipefail", "-x", "-c", &text])
        .current_dir(&process::workspace_root())
        .env("PS4", "README$ ");
    for name in MODEL_VARIABLES {
        command = command.env_remove(name);
    }
    command = match db {
        // The newcomer's case: nothing set, the commands find the checkout's cluster.
        pg::Database::Embedded(_) => command.env_remove("DATABASE_URL").env_remove("APP_DATABASE_URL"),
        pg::Database::External { .. } => command
            .env("DATABASE_URL", &urls.owner)
            .env("APP_DATABASE_URL", &urls.app),
    };
    let status = command.status()?;
    if !status.success() {
        eprintln!(
            "README.md line {}: the block failed ({status}):\n{text}",
            block.line
        );
    }
    Ok(status.success())
}

/// A free port on 127.0.0.1.
fn free_port() -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?)
}

/// `cargo xtask dev --demo` on `addr`, its stdout lines sent to the receiver and its stderr into
/// `log`.
fn start_dev(addr: SocketAddr, log: &Path) -> Result<(Child, mpsc::Receiver<String>)> {
    let log_file = fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let mut command = Cmd::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["xtask", "dev", "--demo", "--addr", &addr.to_string()])
        .current_dir(&process::workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file));
    for name in MODEL_VARIABLES {
        command = command.env_remove(name);
    }
    let mut child = command.spawn()?;
    let stdout = child.stdout.take().context("the site's stdout")?;
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    Ok((child, received))
}

/// Waits for the URL line; it must come only once the site answers.
fn wait_for_url(child: &mut Child, lines: &mpsc::Receiver<String>, addr: SocketAddr) -> Result<()> {
    let url = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_mins(15);
    while Instant::now() < deadline {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.trim() == url => {
                if !answers(addr) {
                    bail!("`cargo xtask dev` printed {url} before the site answered");
                }
                return Ok(());
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!(
                    "`cargo xtask dev` ended without printing {url} ({:?})",
                    child.try_wait()
                );
            }
        }
        if let Some(status) = child.try_wait()? {
            bail!("`cargo xtask dev` exited ({status}) before printing {url}");
        }
    }
    bail!("`cargo xtask dev` printed no {url} within 15 minutes")
}

/// Stops xtask with `signal` and checks that the site is gone with it.
fn stop_dev(child: &mut Child, signal: &str, addr: SocketAddr, log: &Path) -> Result<()> {
    Cmd::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .output_ok()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("`cargo xtask dev` did not exit within 20 s of {signal}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // After SIGKILL xtask says nothing; the server notices its parent is gone within a second.
    let deadline = Instant::now() + Duration::from_secs(5);
    while answers(addr) {
        if Instant::now() > deadline {
            bail!(
                "after {signal} to `cargo xtask dev`, something still answers on {addr}: an orphaned kakeibo-dev"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let said = fs::read_to_string(log).unwrap_or_default();
    if signal != "KILL" && !said.contains(&format!("stopped kakeibo-dev on SIG{signal}")) {
        bail!("`cargo xtask dev` exited on {signal} ({status}) without saying it stopped the server");
    }
    Ok(())
}

/// The `dev` blocks while the site runs, then the three ways of stopping it.
fn with_dev_site(db: &pg::Database, urls: &pg::Urls, blocks: &[&Block]) -> Result<Vec<usize>> {
    let log = crate::web::artifacts_dir().join("readme-dev.log");
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut failed = Vec::new();
    for (round, signal) in ["INT", "TERM", "KILL"].into_iter().enumerate() {
        let addr = free_port()?;
        process::step(&format!(
            "starting `cargo xtask dev --demo --addr {addr}` (its log: {}), to stop it with SIG{signal}",
            log.display()
        ));
        let (mut child, lines) = start_dev(addr, &log)?;
        let outcome = wait_for_url(&mut child, &lines, addr).and_then(|()| {
            if round == 0 {
                for block in blocks {
                    if !run_block(db, urls, block, Some(addr))? {
                        failed.push(block.line);
                    }
                }
            }
            stop_dev(&mut child, signal, addr, &log)
        });
        if let Err(err) = outcome {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("{}", serve_log_tail(&log));
            bail!("{err:#}");
        }
    }
    Ok(failed)
}

fn serve_log_tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    format!(
        "last lines of {}:\n{}",
        log.display(),
        lines[lines.len().saturating_sub(30)..].join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sh_blocks_are_found_with_their_tags_and_other_languages_skipped() {
        let markdown = "intro\n```sh\ncargo xtask dev\n```\ntext\n```json\n{\"a\": \"```sh\"}\n```\n\
            ```sh tested\nkakeibo report spend\nkakeibo report budget\n```\n```sh tested dev\ncurl x\n```\n";
        let blocks = sh_blocks(markdown);
        assert_eq!(blocks.len(), 3, "{blocks:?}");
        assert_eq!(blocks[0].line, 2);
        assert!(blocks[0].tags.is_empty());
        assert_eq!(blocks[1].tags, ["tested"]);
        assert_eq!(blocks[1].text, "kakeibo report spend\nkakeibo report budget\n");
        assert!(blocks[2].tagged("tested") && blocks[2].tagged("dev"));
    }

    #[test]
    fn the_readme_has_tested_blocks_of_both_kinds() {
        let readme = fs::read_to_string(process::workspace_root().join("README.md")).unwrap();
        let blocks = sh_blocks(&readme);
        assert!(blocks.iter().any(|b| b.tagged("tested") && !b.tagged("dev")));
        assert!(blocks.iter().any(|b| b.tagged("tested") && b.tagged("dev")));
    }
}
