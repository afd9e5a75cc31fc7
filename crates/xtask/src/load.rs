//! `cargo xtask load`: kakeibo-dev, built for release and run on the scripted demo model, on a
//! database of its own (`kakeibo_load`, made afresh each run on the same server as the rest),
//! driven by kakeibo-load for a fixed time; the server is stopped however the run ends.

use std::{
    fs::File,
    process::{Child, ExitCode, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::{
    pg::{self, Database},
    process::{self, Cmd},
    serve, web,
};

/// What `cargo xtask load` was asked for.
#[derive(Debug)]
pub struct Load<'a> {
    pub visitors: u16,
    pub seconds: u64,
    pub addr: &'a str,
    pub pool_size: u32,
    /// Seconds into the load at which the embedded cluster is restarted (`pg_ctl restart -m fast`).
    pub restart_db_after: Option<u64>,
    /// The preview storm instead of the visitors (kakeibo-load --preview-storm).
    pub preview_storm: bool,
}

/// Stops the server when dropped, whatever happened in between.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Cmd::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .output_ok();
        let _ = self.0.wait();
    }
}

pub fn run(db: &Database, load: &Load<'_>) -> Result<ExitCode> {
    let socket = serve::socket_addr(load.addr)?;
    let url = format!("http://{}", load.addr);
    if serve::answers(socket) {
        bail!("something already answers on {url}: stop it, or pick another address with --addr");
    }
    let urls = db.up()?;
    let restart = load.restart_db_after.map(|_| db.restart_argv()).transpose()?;
    process::step(
        "building kakeibo-dev, kakeibo-load and kakeibo for release (cargo's progress below; the first \
         release build takes several minutes)",
    );
    process::cargo(&[
        "build",
        "--release",
        "--package",
        "kakeibo-devserver",
        "--package",
        "kakeibo-load",
        "--package",
        "kakeibo-cli",
    ])
    .status_ok()?;
    let bin = web::target_dir().join("release");

    process::step("the load's database (kakeibo_load): made afresh, migrated, the demo ledger loaded");
    let (owner, app) = pg::fresh_database(&urls, "kakeibo_load")?;
    for args in [["migrate"].as_slice(), ["seed", "--db"].as_slice()] {
        Cmd::new(bin.join("kakeibo"))
            .args(args)
            .env("DATABASE_URL", &owner)
            .output_ok()
            .with_context(|| format!("kakeibo {} on the load's database", args.join(" ")))?;
    }

    let log_path = web::artifacts_dir().join("load-server.log");
    std::fs::create_dir_all(web::artifacts_dir())?;
    let log = File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let script = process::workspace_root().join("fixtures/scripts/demo.yaml");
    process::step(&format!(
        "starting kakeibo-dev on {url} (the scripted demo model, a pool of {} connections per role; \
         its log: {})",
        load.pool_size,
        log_path.display()
    ));
    let child = Cmd::new(bin.join("kakeibo-dev"))
        .args(["--addr", load.addr])
        .current_dir(&process::workspace_root())
        .env("DATABASE_URL", &owner)
        .env("APP_DATABASE_URL", &app)
        .env("KAKEIBO_PROVIDER", format!("script:{}", script.display()))
        .env("SITE_URL", &url)
        .env("DATABASE_POOL_SIZE", load.pool_size.to_string())
        // The load is many visitors, each sending hundreds of messages: the quotas that keep a
        // public site affordable would refuse them (the scripted model costs nothing).
        .env("ANON_DAILY_MESSAGE_QUOTA", "1000000")
        .env("IP_DAILY_MESSAGE_QUOTA", "1000000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log))
        .spawn()?;
    let mut server = Server(child);
    let started = Instant::now();
    while !serve::answers(socket) {
        if let Some(status) = server.0.try_wait()? {
            bail!(
                "kakeibo-dev stopped before it answered ({status}); its log: {}",
                log_path.display()
            );
        }
        if started.elapsed() > Duration::from_mins(1) {
            bail!(
                "kakeibo-dev did not answer within 60 s; its log: {}",
                log_path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    process::step(&format!(
        "{} visitors for {} s (kakeibo-load; the report goes to bench/report/load.{{json,md}})",
        load.visitors, load.seconds
    ));
    let mut command = Cmd::new(bin.join("kakeibo-load"))
        .args([
            "--url",
            &url,
            "--visitors",
            &load.visitors.to_string(),
            "--seconds",
            &load.seconds.to_string(),
            "--server-pid",
            &server.0.id().to_string(),
            "--report-dir",
        ])
        .arg(process::workspace_root().join("bench/report"))
        .env("DATABASE_URL", &owner);
    if load.preview_storm {
        process::step("the preview storm instead (bench/report/preview-storm.{json,md})");
        command = command.arg("--preview-storm");
    }
    if let (Some(after), Some(argv)) = (load.restart_db_after, restart) {
        process::step(&format!(
            "the database is restarted {after} s into the load (pg_ctl restart -m fast)"
        ));
        command = command
            .args(["--disrupt-after", &after.to_string(), "--"])
            .args(argv);
    }
    let status = command.status()?;
    drop(server);
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
