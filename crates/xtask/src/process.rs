//! Running other programs: cargo, the PostgreSQL binaries, and `runuser` when we are root.

use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::OnceLock,
    time::Instant,
};

use anyhow::{Context, Result, bail};

/// When this xtask started, for the elapsed time on each step.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Starts the clock the steps report against (the first call wins).
pub fn start_clock() {
    STARTED.get_or_init(Instant::now);
}

/// Announces a step of a long task on stderr, with the time since xtask started.
pub fn step(message: &str) {
    let elapsed = STARTED.get_or_init(Instant::now).elapsed().as_secs_f64();
    eprintln!("==> [{elapsed:>6.1}s] {message}");
}

/// A command to run, remembered with a printable form for error messages.
#[derive(Debug)]
pub struct Cmd {
    inner: Command,
    shown: String,
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        let shown = program.as_ref().to_string_lossy().into_owned();
        Self {
            inner: Command::new(program),
            shown,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.shown.push(' ');
        self.shown.push_str(&arg.as_ref().to_string_lossy());
        self.inner.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            self = self.arg(arg);
        }
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.inner.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.inner.env_remove(key);
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.inner.current_dir(dir);
        self
    }

    /// Runs with inherited stdio and returns the exit status.
    pub fn status(mut self) -> Result<ExitStatus> {
        self.inner
            .status()
            .with_context(|| format!("could not start `{}`", self.shown))
    }

    pub fn stdout(mut self, to: Stdio) -> Self {
        self.inner.stdout(to);
        self
    }

    pub fn stderr(mut self, to: Stdio) -> Self {
        self.inner.stderr(to);
        self
    }

    /// Starts it (stdio inherited unless redirected), without waiting.
    pub fn spawn(mut self) -> Result<Child> {
        self.inner
            .spawn()
            .with_context(|| format!("could not start `{}`", self.shown))
    }

    /// Runs with stdout piped through this process line by line — each line printed as it comes
    /// and handed to `on_line` — and stdin and stderr inherited; returns the exit status.
    pub fn status_teeing(mut self, mut on_line: impl FnMut(&str)) -> Result<ExitStatus> {
        use std::io::{BufRead as _, Write as _};
        let mut child = self
            .inner
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("could not start `{}`", self.shown))?;
        if let Some(stdout) = child.stdout.take() {
            let mut reader = std::io::BufReader::new(stdout);
            let mut buffer = Vec::new();
            let mut out = std::io::stdout();
            while reader.read_until(b'\n', &mut buffer).unwrap_or(0) > 0 {
                // A closed terminal must not stop the run; the child's output is only shown.
                let _ = out.write_all(&buffer).and_then(|()| out.flush());
                on_line(String::from_utf8_lossy(&buffer).trim_end());
                buffer.clear();
            }
        }
        child
            .wait()
            .with_context(|| format!("waiting for `{}`", self.shown))
    }

    /// Runs with inherited stdio and fails unless it exits 0.
    pub fn status_ok(self) -> Result<()> {
        let shown = self.shown.clone();
        let status = self.status()?;
        if !status.success() {
            bail!("`{shown}` failed ({status})");
        }
        Ok(())
    }

    /// Runs capturing stdout and stderr; fails with both in the message unless it exits 0.
    pub fn output_ok(mut self) -> Result<String> {
        let output = self
            .inner
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("could not start `{}`", self.shown))?;
        if !output.status.success() {
            bail!(
                "`{}` failed ({}):\n{}{}",
                self.shown,
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Runs capturing output and returns whether it exited 0, with its stdout.
    pub fn output_status(mut self) -> Result<(ExitStatus, String)> {
        let output = self
            .inner
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("could not start `{}`", self.shown))?;
        Ok((
            output.status,
            String::from_utf8_lossy(&output.stdout).into_owned(),
        ))
    }
}

/// `cargo` from the environment cargo gave us, run from the workspace root.
pub fn cargo(args: &[&str]) -> Cmd {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Cmd::new(cargo).args(args).current_dir(&workspace_root())
}

/// The checkout this xtask works on, found once per run.
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// The workspace root of the checkout this xtask was started in, found at run time: two levels
/// above the `CARGO_MANIFEST_DIR` that `cargo run` hands the process, else the nearest folder at or
/// above the current directory that holds a kakeibo workspace. Never the path this binary was
/// compiled from: two checkouts sharing a target directory share one xtask binary, and each must
/// act on its own files and its own database.
pub fn workspace_root() -> PathBuf {
    ROOT.get_or_init(|| {
        let from_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .and_then(|dir| dir.ancestors().nth(2).map(Path::to_path_buf))
            .filter(|root| is_workspace(root));
        let current = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        from_cargo.or_else(|| find_workspace(&current)).unwrap_or(current)
    })
    .clone()
}

/// The nearest folder at or above `start` that holds a kakeibo workspace.
pub fn find_workspace(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| is_workspace(dir))
        .map(Path::to_path_buf)
}

/// Whether `dir` is a kakeibo checkout's root: a workspace manifest beside `crates/xtask`.
fn is_workspace(dir: &Path) -> bool {
    dir.join("crates/xtask/Cargo.toml").is_file()
        && std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|manifest| manifest.contains("[workspace]"))
}

/// Finds a program on `PATH` or in one of `extra_dirs`, in that order.
pub fn find_program(name: &str, extra_dirs: &[PathBuf]) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    path_dirs
        .into_iter()
        .flatten()
        .chain(extra_dirs.iter().cloned())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Whether this process runs as root (uid 0).
pub fn is_root() -> bool {
    Cmd::new("id")
        .arg("-u")
        .output_ok()
        .is_ok_and(|uid| uid.trim() == "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_the_checkout_around_the_current_directory() {
        let top = std::env::temp_dir().join(format!("xtask-root-{}", std::process::id()));
        let (one, other) = (top.join("one"), top.join("other"));
        for checkout in [&one, &other] {
            std::fs::create_dir_all(checkout.join("crates/xtask/src")).unwrap();
            std::fs::write(
                checkout.join("Cargo.toml"),
                "[workspace]\nmembers = [\"crates/*\"]\n",
            )
            .unwrap();
            std::fs::write(checkout.join("crates/xtask/Cargo.toml"), "[package]\n").unwrap();
        }
        assert_eq!(find_workspace(&one.join("crates/xtask/src")), Some(one.clone()));
        assert_eq!(find_workspace(&other), Some(other.clone()));
        // A folder outside any checkout, and a crate manifest that is no workspace, are not one.
        assert_eq!(find_workspace(&top), None);
        std::fs::write(other.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(find_workspace(&other.join("crates")), None);
        std::fs::remove_dir_all(&top).unwrap();
    }
}
