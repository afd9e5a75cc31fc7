//! `kakeibo-dev`: the local stack on one port (see `cargo xtask dev`).

use std::{collections::BTreeMap, net::SocketAddr, path::PathBuf, sync::Arc};

use anyhow::{Context, Result};
use axum::serve::ListenerExt as _;
use clap::Parser;
use kakeibo_api::{Config, State};

/// Serves every kakeibo function (chat, confirm, runs, admin) and the built web app on one local
/// port — the same handlers the Lambda binaries run. Settings come from the environment
/// (DATABASE_URL, APP_DATABASE_URL, KAKEIBO_PROVIDER and the provider keys, ADMIN_EMAILS, the
/// quotas); JWT_SECRET and RATE_LIMIT_SALT are made up for this process when unset, which means
/// sessions end when it stops.
#[derive(Debug, Parser)]
#[command(name = "kakeibo-dev", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "KAKEIBO_DEV_ADDR", default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
    /// The built web app to serve outside /api/.
    #[arg(long, default_value = "web/dist")]
    web_dist: PathBuf,
    /// Where mail goes (the links that prove an address or reset a password): each mail a JSON
    /// file in this folder, nothing sent. Unused when MAIL_FROM sends through SES instead.
    #[arg(long, env = "MAIL_OUTBOX", default_value = "target/outbox")]
    mail_outbox: PathBuf,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    kakeibo_api::telemetry::init("info");
    let mut vars: BTreeMap<String, String> = std::env::vars().collect();
    for name in ["JWT_SECRET", "RATE_LIMIT_SALT"] {
        if vars.get(name).is_none_or(|v| v.trim().is_empty()) {
            tracing::warn!("{name} is unset; using a random one for this process");
            let random = format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            );
            vars.insert(name.to_owned(), random);
        }
    }
    vars.entry("SITE_URL".to_owned())
        .or_insert_with(|| format!("http://{}", args.addr));
    if vars.get("MAIL_FROM").is_none_or(|v| v.trim().is_empty()) {
        tracing::info!(
            outbox = %args.mail_outbox.display(),
            "mail is written to the outbox folder, one JSON file a mail, and never sent"
        );
        vars.insert(
            "MAIL_OUTBOX".to_owned(),
            args.mail_outbox.to_string_lossy().into_owned(),
        );
    }
    let config = Config::from_vars(vars).context("configuration")?;
    let state = State::new(config).context("starting")?;
    match &state.model {
        Ok(model) => tracing::info!(provider = model.name(), model = model.model(), "model"),
        Err(why) => tracing::warn!("no model — chat answers 503 until one is configured. {why}"),
    }
    let app = kakeibo_devserver::app(Arc::new(state), Some(&args.web_dist));
    // Streamed answers go out as they are written: without TCP_NODELAY, Nagle's algorithm holds
    // an event's small segment until the client's delayed ACK (40 ms on Linux) releases it.
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?
        .tap_io(|stream| {
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY refused on a connection: {e}");
            }
        });
    tracing::info!("serving http://{}", args.addr);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(stopped())
        .await
        .context("serving")?;
    Ok(())
}

/// Resolves when the server should stop: Ctrl+C (SIGINT), SIGTERM, or — when started by
/// `cargo xtask dev`, which sets `KAKEIBO_DEV_PARENT_PID` — that process being gone, so a killed
/// xtask never leaves an orphan holding the port.
async fn stopped() {
    let parent: Option<u32> = std::env::var("KAKEIBO_DEV_PARENT_PID")
        .ok()
        .and_then(|pid| pid.trim().parse().ok());
    let orphaned = async move {
        let Some(parent) = parent else {
            return std::future::pending::<&str>().await;
        };
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            if std::os::unix::process::parent_id() != parent {
                return "its parent (cargo xtask dev) is gone";
            }
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
                "SIGTERM"
            }
            Err(_) => std::future::pending().await,
        }
    };
    let why = tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        why = terminate => why,
        why = orphaned => why,
    };
    tracing::info!("stopping ({why})");
}
