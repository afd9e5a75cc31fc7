//! The embedded development cluster of a kakeibo checkout: where it lives, whether it runs, and
//! the URLs of its roles.
//!
//! `cargo xtask db up` creates the cluster under `<checkout>/.pgdata/` and starts it; the programs
//! a developer runs by hand (`kakeibo`, `kakeibo-mcp`) find it with [`discover`] when
//! `DATABASE_URL` is unset, so `kakeibo report spend` works in a second terminal with nothing
//! exported. The standard library only: `xtask` depends on this crate too, and must build fast.

// A checkout's files and a server's answers can hold anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::{
    fmt, fs,
    path::{Path, PathBuf},
};

/// The port `cargo xtask db up` uses unless `KAKEIBO_PG_PORT` says otherwise.
pub const DEFAULT_PORT: u16 = 5433;
/// The role that owns the tables and runs migrations.
pub const OWNER_ROLE: &str = "kakeibo";
/// Its password (a local development cluster, listening on 127.0.0.1 only).
pub const OWNER_PASSWORD: &str = "kakeibo";
/// The role that owns nothing, so row-level security applies to it.
pub const APP_ROLE: &str = "app_user";
/// Its password.
pub const APP_PASSWORD: &str = "app_user";
/// The development database.
pub const DEV_DATABASE: &str = "kakeibo";
/// The database `#[sqlx::test]` creates one database per test from.
pub const TEST_DATABASE: &str = "kakeibo_test";

/// A URL of the local cluster.
pub fn url(role: &str, password: &str, port: u16, database: &str) -> String {
    format!("postgres://{role}:{password}@127.0.0.1:{port}/{database}")
}

/// A kakeibo checkout: the folder that holds the workspace's `Cargo.toml` and `crates/xtask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    root: PathBuf,
}

impl Checkout {
    /// The checkout at `root`, taken as it is.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The nearest checkout at or above `start`.
    pub fn find(start: &Path) -> Option<Self> {
        start
            .ancestors()
            .find(|dir| dir.join("Cargo.toml").is_file() && dir.join("crates/xtask/Cargo.toml").is_file())
            .map(Self::at)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<checkout>/.pgdata` (a folder, or a link to one under `/var/tmp`).
    pub fn pgdata(&self) -> PathBuf {
        self.root.join(".pgdata")
    }

    /// The cluster's data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.pgdata().join("data")
    }

    /// Whether a cluster was ever created here.
    pub fn has_cluster(&self) -> bool {
        self.data_dir().join("PG_VERSION").is_file()
    }

    /// The port of the server running on this checkout's cluster, if one runs.
    pub fn running_port(&self) -> Option<u16> {
        running_port(&self.data_dir(), pid_is_postgres)
    }
}

/// The port in `postmaster.pid` (its fourth line), when the process it names (its first line) is
/// alive according to `is_postgres`. A file left by a crashed server names a process that is gone.
pub fn running_port(data_dir: &Path, is_postgres: impl Fn(u32) -> bool) -> Option<u16> {
    let contents = fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    let mut lines = contents.lines();
    let pid = lines.next()?.trim().parse::<u32>().ok()?;
    let port = lines.nth(2)?.trim().parse::<u16>().ok()?;
    is_postgres(pid).then_some(port)
}

/// Whether `pid` is a running PostgreSQL server process (by its name in `/proc`).
pub fn pid_is_postgres(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|comm| matches!(comm.trim(), "postgres" | "postmaster"))
}

/// What [`discover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// The checkout's cluster runs on `port`.
    Running { checkout: Checkout, port: u16 },
    /// The checkout has a cluster that is not running.
    Stopped { checkout: Checkout },
    /// The checkout has never had a cluster.
    NoCluster { checkout: Checkout },
    /// None of the places looked at is inside a kakeibo checkout.
    NoCheckout,
}

/// Looks for the checkout of each of `starts` in turn (say the working directory, then the
/// running program's own folder) and reports on the first checkout found.
pub fn discover(starts: &[PathBuf]) -> Discovery {
    let Some(checkout) = starts.iter().find_map(|start| Checkout::find(start)) else {
        return Discovery::NoCheckout;
    };
    match checkout.running_port() {
        Some(port) => Discovery::Running { checkout, port },
        None if checkout.has_cluster() => Discovery::Stopped { checkout },
        None => Discovery::NoCluster { checkout },
    }
}

/// The working directory, then the folder of the running program: the places [`discover`] looks
/// at for a program started by hand (`cargo run` keeps the working directory; a binary built into
/// `<checkout>/target/` finds its checkout from anywhere).
pub fn default_starts() -> Vec<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let exe = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    cwd.into_iter().chain(exe).collect()
}

impl Discovery {
    /// The owner role's URL on the development database, when the cluster runs.
    pub fn owner_url(&self) -> Option<String> {
        match self {
            Self::Running { port, .. } => Some(url(OWNER_ROLE, OWNER_PASSWORD, *port, DEV_DATABASE)),
            _ => None,
        }
    }

    /// `app_user`'s URL on the development database, when the cluster runs.
    pub fn app_url(&self) -> Option<String> {
        match self {
            Self::Running { port, .. } => Some(url(APP_ROLE, APP_PASSWORD, *port, DEV_DATABASE)),
            _ => None,
        }
    }
}

/// One sentence for a person: which database was found, or why none was and what to do.
impl fmt::Display for Discovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Running { checkout, port } => write!(
                f,
                "the embedded cluster of {} on 127.0.0.1:{port}",
                checkout.root().display()
            ),
            Self::Stopped { checkout } => write!(
                f,
                "DATABASE_URL is unset and the embedded cluster in {} is not running: start it with \
                 `cargo xtask db up` (or `cargo xtask dev`) in {}",
                checkout.pgdata().display(),
                checkout.root().display()
            ),
            Self::NoCluster { checkout } => write!(
                f,
                "DATABASE_URL is unset and {} has no embedded cluster yet: create and start it with \
                 `cargo xtask db up` (or `cargo xtask dev`) in {}",
                checkout.root().display(),
                checkout.root().display()
            ),
            Self::NoCheckout => write!(
                f,
                "DATABASE_URL is unset and this is not inside a kakeibo checkout: set DATABASE_URL \
                 to a migrated database, or run this from the checkout after `cargo xtask db up`"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("kakeibo-localdb-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn checkout_in(dir: &Path) -> Checkout {
        fs::create_dir_all(dir.join("crates/xtask")).unwrap();
        fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        fs::write(dir.join("crates/xtask/Cargo.toml"), "[package]\n").unwrap();
        Checkout::at(dir)
    }

    #[test]
    fn a_checkout_is_found_from_any_folder_inside_it() {
        let tmp = TempDir::new("find");
        assert_eq!(Checkout::find(&tmp.0), None);
        let checkout = checkout_in(&tmp.0);
        let deep = tmp.0.join("web/src/pages");
        fs::create_dir_all(&deep).unwrap();
        assert_eq!(Checkout::find(&deep), Some(checkout.clone()));
        assert_eq!(
            discover(std::slice::from_ref(&deep)),
            Discovery::NoCluster {
                checkout: checkout.clone()
            }
        );
        // The first start inside a checkout wins; one outside any is passed over.
        let outside = TempDir::new("outside");
        assert_eq!(
            discover(&[outside.0.clone(), deep]),
            Discovery::NoCluster { checkout }
        );
        assert_eq!(discover(std::slice::from_ref(&outside.0)), Discovery::NoCheckout);
    }

    #[test]
    fn the_port_comes_from_a_live_servers_pid_file_only() {
        let tmp = TempDir::new("pid");
        let checkout = checkout_in(&tmp.0);
        let data = checkout.data_dir();
        fs::create_dir_all(&data).unwrap();
        fs::write(data.join("PG_VERSION"), "17\n").unwrap();
        assert_eq!(
            discover(std::slice::from_ref(&tmp.0)),
            Discovery::Stopped {
                checkout: checkout.clone()
            }
        );

        fs::write(data.join("postmaster.pid"), "4242\n/data\n1700000000\n5444\n").unwrap();
        assert_eq!(running_port(&data, |pid| pid == 4242), Some(5444));
        assert_eq!(running_port(&data, |_| false), None, "a stale pid file");
        fs::write(data.join("postmaster.pid"), "4242\n/data\n").unwrap();
        assert_eq!(running_port(&data, |_| true), None, "a truncated pid file");
        fs::write(data.join("postmaster.pid"), "garbage\n/data\n1\n5444\n").unwrap();
        assert_eq!(running_port(&data, |_| true), None);
        // No process of this test is PostgreSQL: the file counts as stale.
        fs::write(
            data.join("postmaster.pid"),
            format!("{}\n/data\n1700000000\n5444\n", std::process::id()),
        )
        .unwrap();
        assert_eq!(checkout.running_port(), None);
    }

    #[test]
    fn urls_and_sentences_name_what_to_do() {
        let checkout = Checkout::at("/src/kakeibo");
        let running = Discovery::Running {
            checkout: checkout.clone(),
            port: 5440,
        };
        assert_eq!(
            running.owner_url().as_deref(),
            Some("postgres://kakeibo:kakeibo@127.0.0.1:5440/kakeibo")
        );
        assert_eq!(
            running.app_url().as_deref(),
            Some("postgres://app_user:app_user@127.0.0.1:5440/kakeibo")
        );
        let stopped = Discovery::Stopped { checkout };
        assert_eq!(stopped.owner_url(), None);
        assert!(stopped.to_string().contains("`cargo xtask db up`"), "{stopped}");
        assert!(stopped.to_string().contains("/src/kakeibo/.pgdata"), "{stopped}");
        assert!(Discovery::NoCheckout.to_string().contains("set DATABASE_URL"));
    }
}
