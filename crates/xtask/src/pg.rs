//! The database server the other tasks use.
//!
//! With `DATABASE_URL` unset: an embedded cluster under `.pgdata/` in the workspace, created with
//! the installed `initdb` and run with `pg_ctl` on 127.0.0.1 (port 5433 or `KAKEIBO_PG_PORT`).
//! `initdb` refuses to run as root, so as root every server binary runs as the `postgres` system
//! user. The cluster holds two login roles: `kakeibo` owns the tables and runs migrations,
//! `app_user` owns nothing, so row-level security applies to it.
//!
//! With `DATABASE_URL` set: that server, and `.pgdata/` is never touched.

use std::{
    fs,
    io::Read as _,
    path::{Path, PathBuf},
    process::ExitCode,
};

use std::os::unix::fs::PermissionsExt as _;

use anyhow::{Context, Result, bail};

use crate::process::{self, Cmd};

use kakeibo_localdb::{
    APP_PASSWORD, APP_ROLE, DEFAULT_PORT, DEV_DATABASE, OWNER_PASSWORD, OWNER_ROLE, TEST_DATABASE,
};

/// Connection URLs for the roles and databases the tasks need.
#[derive(Debug)]
pub struct Urls {
    /// The owner role on the development database (`DATABASE_URL`).
    pub owner: String,
    /// `app_user` on the development database (`APP_DATABASE_URL`).
    pub app: String,
    /// The database `#[sqlx::test]` uses to create one database per test.
    pub test_master: String,
    where_: String,
}

impl Urls {
    pub fn print_summary(&self) {
        println!("PostgreSQL: {}", self.where_);
        println!("  DATABASE_URL={}", self.owner);
        println!("  APP_DATABASE_URL={}", self.app);
    }
}

#[derive(Debug)]
pub enum Database {
    Embedded(Embedded),
    External { owner: String, app: Option<String> },
}

impl Database {
    pub fn from_env() -> Result<Self> {
        let non_empty = |key: &str| std::env::var(key).ok().filter(|v| !v.trim().is_empty());
        if let Some(owner) = non_empty("DATABASE_URL") {
            return Ok(Self::External {
                owner,
                app: non_empty("APP_DATABASE_URL"),
            });
        }
        let port = match non_empty("KAKEIBO_PG_PORT") {
            None => DEFAULT_PORT,
            Some(raw) => raw
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .with_context(|| format!("KAKEIBO_PG_PORT={raw:?} is not a TCP port number"))?,
        };
        Ok(Self::Embedded(Embedded {
            root: process::workspace_root(),
            port,
            flavour: Flavour::Dev,
        }))
    }

    /// The server the benchmarks run on: `DATABASE_URL`'s when it is set (its settings as they
    /// are), otherwise a cluster of their own under `.pgdata-bench/` (port 5436, or
    /// `KAKEIBO_BENCH_PG_PORT`) that commits durably, as a production server does
    /// (`synchronous_commit=on`, `fsync=on`), and counts statements (`pg_stat_statements`).
    pub fn for_bench() -> Result<Self> {
        let db = Self::from_env()?;
        let Self::Embedded(dev) = db else {
            return Ok(db);
        };
        let port = match std::env::var("KAKEIBO_BENCH_PG_PORT")
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            None => BENCH_PORT,
            Some(raw) => raw
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .with_context(|| format!("KAKEIBO_BENCH_PG_PORT={raw:?} is not a TCP port number"))?,
        };
        Ok(Self::Embedded(Embedded {
            root: dev.root,
            port,
            flavour: Flavour::Bench,
        }))
    }

    /// The command that restarts the embedded cluster as an operator would (`pg_ctl restart -m
    /// fast`: every connection ended, the server back with the options it had), as argv; refused
    /// for a server of `DATABASE_URL`'s, which is not ours to restart.
    pub fn restart_argv(&self) -> Result<Vec<String>> {
        let Self::Embedded(embedded) = self else {
            bail!("restarting the database needs the embedded cluster: unset DATABASE_URL");
        };
        let data = fs::canonicalize(embedded.link().join("data"))
            .context("the embedded cluster's data directory")?;
        let bin = server_bin()?;
        // The restarted server writes its log where pg_ctl's output goes (`restart` takes no
        // `-l`): into the cluster's log file, as `db up` started it.
        let log = embedded.link().join("postgres.log");
        let mut argv: Vec<String> = ["sh", "-c", "exec \"$@\" >>\"$0\" 2>&1"]
            .map(str::to_owned)
            .into();
        argv.push(log.display().to_string());
        if process::is_root() {
            let runuser =
                process::find_program("runuser", &[PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
                    .context("restarting as root needs `runuser` (util-linux)")?;
            argv.extend([
                runuser.display().to_string(),
                "-u".into(),
                "postgres".into(),
                "--".into(),
            ]);
        }
        argv.push(bin.pg_ctl.display().to_string());
        argv.extend(["restart", "-m", "fast", "-w", "-t", "60", "-D"].map(str::to_owned));
        argv.push(data.display().to_string());
        Ok(argv)
    }

    /// Whether this is a cluster of ours (which the caller may stop when done).
    pub fn is_embedded(&self) -> bool {
        matches!(self, Self::Embedded(_))
    }

    pub fn up(&self) -> Result<Urls> {
        match self {
            Self::Embedded(embedded) => embedded.up(),
            Self::External { owner, app } => external_up(owner, app.as_deref()),
        }
    }

    pub fn urls(&self) -> Result<Urls> {
        match self {
            Self::Embedded(embedded) => Ok(embedded.urls()),
            Self::External { owner, app } => external_urls(owner, app.as_deref()),
        }
    }

    pub fn down(&self) -> Result<()> {
        match self {
            Self::Embedded(embedded) => embedded.down(),
            Self::External { .. } => {
                println!("DATABASE_URL is set: that server is not ours to stop; nothing done.");
                Ok(())
            }
        }
    }

    pub fn status(&self) -> Result<ExitCode> {
        match self {
            Self::Embedded(embedded) => embedded.status(),
            Self::External { owner, app } => {
                let urls = external_urls(owner, app.as_deref())?;
                let reachable = psql(&urls.owner)?
                    .args(["-tAc", "SELECT version()"])
                    .output_status()?;
                urls.print_summary();
                if reachable.0.success() {
                    println!("  reachable: {}", reachable.1.trim());
                    Ok(ExitCode::SUCCESS)
                } else {
                    println!("  not reachable");
                    Ok(ExitCode::from(3))
                }
            }
        }
    }

    pub fn reset(&self) -> Result<()> {
        match self {
            Self::Embedded(embedded) => embedded.reset(),
            Self::External { owner, .. } => external_reset(owner),
        }
    }

    pub fn psql(&self, args: &[String]) -> Result<ExitCode> {
        let urls = self.urls()?;
        let status = Cmd::new(psql_program()?).arg(&urls.owner).args(args).status()?;
        Ok(if status.success() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

/// The benchmarks' cluster's port unless `KAKEIBO_BENCH_PG_PORT` says otherwise.
const BENCH_PORT: u16 = 5436;

/// An embedded cluster under `<workspace>/.pgdata` (development and tests) or `.pgdata-bench`.
#[derive(Debug)]
pub struct Embedded {
    root: PathBuf,
    port: u16,
    flavour: Flavour,
}

/// What an embedded cluster is for, and so how it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// Development and tests: commits return before the WAL reaches the disk (a crash may lose
    /// the last moments, never corrupt), which keeps the suite fast.
    Dev,
    /// Benchmarks: a production server's durability, and statements counted.
    Bench,
}

impl Flavour {
    fn dir(self) -> &'static str {
        match self {
            Self::Dev => ".pgdata",
            Self::Bench => ".pgdata-bench",
        }
    }

    fn settings(self) -> &'static str {
        match self {
            Self::Dev => "-c synchronous_commit=off",
            Self::Bench => {
                "-c synchronous_commit=on -c fsync=on -c full_page_writes=on \
                 -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
            }
        }
    }
}

/// The PostgreSQL server programs.
#[derive(Debug)]
struct ServerBin {
    initdb: PathBuf,
    pg_ctl: PathBuf,
}

impl Embedded {
    fn link(&self) -> PathBuf {
        self.root.join(self.flavour.dir())
    }

    fn urls(&self) -> Urls {
        let at = |role: &str, password: &str, db: &str| kakeibo_localdb::url(role, password, self.port, db);
        Urls {
            owner: at(OWNER_ROLE, OWNER_PASSWORD, DEV_DATABASE),
            app: at(APP_ROLE, APP_PASSWORD, DEV_DATABASE),
            test_master: at(OWNER_ROLE, OWNER_PASSWORD, TEST_DATABASE),
            where_: format!(
                "embedded cluster in {} on 127.0.0.1:{}",
                self.link().display(),
                self.port
            ),
        }
    }

    fn up(&self) -> Result<Urls> {
        let bin = server_bin()?;
        let as_postgres = process::is_root();
        if as_postgres {
            ensure_postgres_user()?;
        }
        let base = self.prepare_base(as_postgres)?;
        let data = base.join("data");
        let password_file = base.join("superuser-password");

        if !data.join("PG_VERSION").is_file() {
            if data.exists() {
                // An initdb that died half-way leaves a directory initdb refuses to reuse.
                fs::remove_dir_all(&data)
                    .with_context(|| format!("removing the unfinished cluster {}", data.display()))?;
            }
            process::step(&format!("creating a PostgreSQL cluster in {}", data.display()));
            let password = random_hex(18)?;
            fs::write(&password_file, &password)
                .with_context(|| format!("writing {}", password_file.display()))?;
            fs::set_permissions(&password_file, fs::Permissions::from_mode(0o600))?;
            if as_postgres {
                chown_postgres(&password_file)?;
            }
            server_cmd(as_postgres, &bin.initdb)?
                .arg("--pgdata")
                .arg(&data)
                .args([
                    "--username=postgres",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--locale=C",
                ])
                .arg(format!("--pwfile={}", password_file.display()))
                .output_ok()
                .context("initdb failed")?;
        }

        clear_stale_pid(&data)?;
        let (status, _) = server_cmd(as_postgres, &bin.pg_ctl)?
            .arg("status")
            .arg("-D")
            .arg(&data)
            .output_status()?;
        if status.success() {
            let running_port = running_port(&data);
            if running_port != Some(self.port) {
                bail!(
                    "the cluster in {} already runs on port {}; stop it with `cargo xtask db down` \
                     before changing KAKEIBO_PG_PORT",
                    data.display(),
                    running_port.map_or_else(|| "?".to_owned(), |p| p.to_string())
                );
            }
        } else {
            process::step(&format!("starting PostgreSQL on 127.0.0.1:{}", self.port));
            let log = base.join("postgres.log");
            let options = format!(
                "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' {}",
                self.port,
                self.flavour.settings()
            );
            let started = server_cmd(as_postgres, &bin.pg_ctl)?
                .arg("start")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "60", "-o", &options])
                .output_ok();
            if let Err(err) = started {
                bail!("{err:#}\nlast lines of {}:\n{}", log.display(), tail(&log, 15));
            }
        }

        let password = fs::read_to_string(&password_file)
            .with_context(|| format!("reading {}", password_file.display()))?;
        self.bootstrap_roles(password.trim())?;
        Ok(self.urls())
    }

    /// Creates `.pgdata` (or finds it) and returns the real directory the server uses.
    ///
    /// As root the directory belongs to `postgres`; when `postgres` cannot reach the workspace
    /// (say, a clone under a private home directory), the cluster lives under `/var/tmp` and
    /// `.pgdata` is a symbolic link to it.
    fn prepare_base(&self, as_postgres: bool) -> Result<PathBuf> {
        let link = self.link();
        if !link.exists() {
            fs::create_dir_all(&link).with_context(|| format!("creating {}", link.display()))?;
            if as_postgres {
                chown_postgres(&link)?;
                if !postgres_can_write(&link)? {
                    fs::remove_dir(&link)?;
                    let outside = PathBuf::from(format!("/var/tmp/kakeibo-pgdata-{:016x}", fnv1a(&link)));
                    fs::create_dir_all(&outside)?;
                    chown_postgres(&outside)?;
                    std::os::unix::fs::symlink(&outside, &link)
                        .with_context(|| format!("linking {} to {}", link.display(), outside.display()))?;
                    process::step(&format!(
                        "the postgres user cannot reach {}; the cluster lives in {} instead",
                        self.root.display(),
                        outside.display()
                    ));
                }
            }
        }
        fs::canonicalize(&link).with_context(|| format!("resolving {}", link.display()))
    }

    fn bootstrap_roles(&self, superuser_password: &str) -> Result<()> {
        // As the superuser, on `database`.
        let superuser_on = |database: &str, sql: &str| -> Result<String> {
            Cmd::new(psql_program()?)
                .args([
                    "-X",
                    "-q",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                ])
                .args(["-d", database, "-p", &self.port.to_string()])
                .env("PGPASSWORD", superuser_password)
                .env_remove("PGSERVICE")
                .args(["-tAc", sql])
                .output_ok()
        };
        let superuser = |sql: &str| superuser_on("postgres", sql);
        superuser(&format!(
            "DO $$ BEGIN
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{OWNER_ROLE}') THEN
                 CREATE ROLE {OWNER_ROLE} LOGIN CREATEDB PASSWORD '{OWNER_PASSWORD}';
               END IF;
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                 CREATE ROLE {APP_ROLE} LOGIN PASSWORD '{APP_PASSWORD}';
               ELSE
                 ALTER ROLE {APP_ROLE} LOGIN PASSWORD '{APP_PASSWORD}';
               END IF;
             END $$"
        ))?;
        if self.flavour == Flavour::Bench {
            // Every database created from here on (the benchmarks' scratch ones) has the view.
            superuser_on("template1", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")?;
            // `cargo xtask bench` checkpoints before each benchmark (PostgreSQL 15's predefined role).
            superuser(&format!("GRANT pg_checkpoint TO {OWNER_ROLE}"))?;
        }
        for db in [DEV_DATABASE, TEST_DATABASE] {
            let exists = superuser(&format!("SELECT 1 FROM pg_database WHERE datname = '{db}'"))?;
            if exists.trim().is_empty() {
                superuser(&format!("CREATE DATABASE {db} OWNER {OWNER_ROLE}"))?;
            }
        }
        Ok(())
    }

    fn down(&self) -> Result<()> {
        let data = self.link().join("data");
        if !data.join("PG_VERSION").is_file() {
            println!(
                "no embedded cluster in {}; nothing to stop",
                self.link().display()
            );
            return Ok(());
        }
        let data = fs::canonicalize(&data)?;
        let bin = server_bin()?;
        let as_postgres = process::is_root();
        clear_stale_pid(&data)?;
        let (running, _) = server_cmd(as_postgres, &bin.pg_ctl)?
            .arg("status")
            .arg("-D")
            .arg(&data)
            .output_status()?;
        if !running.success() {
            println!("PostgreSQL in {} is not running", data.display());
            return Ok(());
        }
        server_cmd(as_postgres, &bin.pg_ctl)?
            .args(["stop", "-m", "fast", "-w", "-D"])
            .arg(&data)
            .output_ok()?;
        println!("stopped PostgreSQL in {}", data.display());
        Ok(())
    }

    fn status(&self) -> Result<ExitCode> {
        let data = self.link().join("data");
        if !data.join("PG_VERSION").is_file() {
            println!(
                "no embedded cluster yet: `cargo xtask db up` creates one in {}",
                self.link().display()
            );
            return Ok(ExitCode::from(3));
        }
        let data = fs::canonicalize(&data)?;
        let bin = server_bin()?;
        clear_stale_pid(&data)?;
        let (running, out) = server_cmd(process::is_root(), &bin.pg_ctl)?
            .arg("status")
            .arg("-D")
            .arg(&data)
            .output_status()?;
        self.urls().print_summary();
        if running.success() {
            println!("  {}", out.lines().next().unwrap_or("running").trim());
            Ok(ExitCode::SUCCESS)
        } else {
            println!("  not running (`cargo xtask db up` starts it)");
            Ok(ExitCode::from(3))
        }
    }

    fn reset(&self) -> Result<()> {
        self.down()?;
        let link = self.link();
        if let Ok(meta) = fs::symlink_metadata(&link) {
            if meta.file_type().is_symlink() {
                let target = fs::canonicalize(&link)?;
                fs::remove_dir_all(&target).with_context(|| format!("removing {}", target.display()))?;
                fs::remove_file(&link)?;
            } else {
                fs::remove_dir_all(&link).with_context(|| format!("removing {}", link.display()))?;
            }
            println!("removed the embedded cluster in {}", link.display());
        }
        Ok(())
    }
}

fn external_urls(owner: &str, app: Option<&str>) -> Result<Urls> {
    let app = if let Some(app) = app {
        app.to_owned()
    } else {
        let mut url = url::Url::parse(owner).context("DATABASE_URL is not a valid URL")?;
        url.set_username(APP_ROLE)
            .map_err(|()| anyhow::anyhow!("DATABASE_URL has no host"))?;
        url.set_password(Some(APP_PASSWORD))
            .map_err(|()| anyhow::anyhow!("DATABASE_URL has no host"))?;
        url.to_string()
    };
    Ok(Urls {
        owner: owner.to_owned(),
        app,
        test_master: owner.to_owned(),
        where_: "the server named by DATABASE_URL".to_owned(),
    })
}

fn external_up(owner: &str, app: Option<&str>) -> Result<Urls> {
    let urls = external_urls(owner, app)?;
    psql(owner)?
        .args(["-tAc", "SELECT 1"])
        .output_ok()
        .context("cannot connect to the server in DATABASE_URL")?;
    if app.is_none() {
        let created = psql(owner)?
            .args([
                "-tAc",
                &format!(
                    "DO $$ BEGIN
                       IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                         CREATE ROLE {APP_ROLE} LOGIN PASSWORD '{APP_PASSWORD}';
                       END IF;
                     END $$"
                ),
            ])
            .output_ok();
        if let Err(err) = created {
            bail!(
                "APP_DATABASE_URL is unset and the role {APP_ROLE} could not be created ({err:#}); \
                 create a login role that owns no tables and set APP_DATABASE_URL to it"
            );
        }
    }
    Ok(urls)
}

fn external_reset(owner: &str) -> Result<()> {
    let url = url::Url::parse(owner).context("DATABASE_URL is not a valid URL")?;
    let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]" | "::1"));
    if !local && std::env::var("ALLOW_DESTRUCTIVE_RESET").as_deref() != Ok("1") {
        bail!(
            "refusing to wipe a database that is not on localhost; set ALLOW_DESTRUCTIVE_RESET=1 to insist"
        );
    }
    psql(owner)?
        .args([
            "-tAc",
            "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;",
        ])
        .output_ok()?;
    println!("emptied the public schema of the database in DATABASE_URL");
    Ok(())
}

pub fn psql(url: &str) -> Result<Cmd> {
    Ok(Cmd::new(psql_program()?).args(["-X", "-q", "-v", "ON_ERROR_STOP=1", url]))
}

fn postgres_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    // Highest major version first.
    dirs.sort_by_key(|dir| {
        std::cmp::Reverse(
            dir.parent()
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    dirs
}

fn server_bin() -> Result<ServerBin> {
    let dirs = postgres_bin_dirs();
    let find = |name: &str| {
        process::find_program(name, &dirs).with_context(|| {
            format!(
                "`{name}` not found on PATH or under /usr/lib/postgresql/*/bin: install the PostgreSQL \
                 server (Debian: apt-get install postgresql) or set DATABASE_URL to a running server"
            )
        })
    };
    Ok(ServerBin {
        initdb: find("initdb")?,
        pg_ctl: find("pg_ctl")?,
    })
}

fn psql_program() -> Result<PathBuf> {
    process::find_program("psql", &postgres_bin_dirs()).context(
        "`psql` not found: install the PostgreSQL client (Debian: apt-get install postgresql-client)",
    )
}

/// A server program, run as `postgres` when we are root.
fn server_cmd(as_postgres: bool, program: &Path) -> Result<Cmd> {
    if !as_postgres {
        return Ok(Cmd::new(program));
    }
    let runuser = process::find_program("runuser", &[PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .context("running as root needs `runuser` (util-linux) to start PostgreSQL as the postgres user")?;
    Ok(Cmd::new(runuser).args(["-u", "postgres", "--"]).arg(program))
}

fn ensure_postgres_user() -> Result<()> {
    if Cmd::new("id").args(["-u", "postgres"]).output_ok().is_ok() {
        return Ok(());
    }
    process::step("creating the postgres system user (initdb refuses to run as root)");
    Cmd::new("useradd")
        .args([
            "--system",
            "--user-group",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            "postgres",
        ])
        .output_ok()
        .context("could not create the postgres user")?;
    Ok(())
}

fn chown_postgres(path: &Path) -> Result<()> {
    Cmd::new("chown").arg("postgres:postgres").arg(path).output_ok()?;
    Ok(())
}

fn postgres_can_write(dir: &Path) -> Result<bool> {
    let (status, _) = server_cmd(true, Path::new("test"))?
        .arg("-w")
        .arg(dir)
        .output_status()?;
    Ok(status.success())
}

/// Removes `postmaster.pid` when the process it names is gone or is not PostgreSQL, which is
/// what a crash or a container restart leaves behind; `pg_ctl` would otherwise trust it.
fn clear_stale_pid(data: &Path) -> Result<()> {
    let pid_file = data.join("postmaster.pid");
    let Ok(contents) = fs::read_to_string(&pid_file) else {
        return Ok(());
    };
    let alive = contents
        .lines()
        .next()
        .and_then(|line| line.trim().parse::<u32>().ok())
        .is_some_and(kakeibo_localdb::pid_is_postgres);
    if !alive {
        process::step(&format!(
            "removing the stale {} left by a server that is gone",
            pid_file.display()
        ));
        fs::remove_file(&pid_file).with_context(|| format!("removing {}", pid_file.display()))?;
    }
    Ok(())
}

/// The port recorded in `postmaster.pid` (its fourth line) of a live server.
fn running_port(data: &Path) -> Option<u16> {
    kakeibo_localdb::running_port(data, kakeibo_localdb::pid_is_postgres)
}

fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn random_hex(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("reading /dev/urandom")?;
    Ok(hex::encode(buf))
}

fn fnv1a(path: &Path) -> u64 {
    path.to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// A database of its own for a suite that needs a whole server stack (the web journeys): dropped
/// if it exists, created empty on the same server, and its (owner, app_user) URLs returned.
pub fn fresh_database(urls: &Urls, name: &str) -> Result<(String, String)> {
    let owner = psql(&urls.test_master)?;
    owner
        .args(["-tAc", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")])
        .output_ok()
        .with_context(|| format!("dropping the database {name}"))?;
    psql(&urls.test_master)?
        .args(["-tAc", &format!("CREATE DATABASE {name}")])
        .output_ok()
        .with_context(|| format!("creating the database {name} (the owner role needs CREATEDB)"))?;
    let on = |url: &str| -> Result<String> {
        let mut url = url::Url::parse(url).context("a database URL is not a valid URL")?;
        url.set_path(&format!("/{name}"));
        Ok(url.to_string())
    };
    Ok((on(&urls.owner)?, on(&urls.app)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_url_is_derived_from_the_owner_url() {
        let urls = external_urls(
            "postgres://admin:secret@db.example:6543/ledger?sslmode=require",
            None,
        )
        .unwrap();
        assert_eq!(
            urls.app,
            "postgres://app_user:app_user@db.example:6543/ledger?sslmode=require"
        );
        assert_eq!(urls.test_master, urls.owner);
        let given = external_urls("postgres://a@h/d", Some("postgres://b:c@h/d")).unwrap();
        assert_eq!(given.app, "postgres://b:c@h/d");
        assert!(external_urls("not a url", None).is_err());
    }

    #[test]
    fn stale_pid_files_are_removed() {
        let dir = tempfile_dir();
        let pid_file = dir.join("postmaster.pid");
        // PID 1 is never a PostgreSQL server here; a number past pid_max names no process.
        for stale in ["1", "4194305", "garbage"] {
            fs::write(&pid_file, format!("{stale}\n/data\n1700000000\n5433\n")).unwrap();
            clear_stale_pid(&dir).unwrap();
            assert!(!pid_file.exists(), "pid {stale} should count as stale");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "xtask-test-{}-{}",
            std::process::id(),
            random_hex(4).unwrap()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}
