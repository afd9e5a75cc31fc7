//! `kakeibo-mcp`: the ledger's tools over MCP on stdio. Only JSON-RPC goes to stdout (and
//! `--help`); every other message of ours goes to stderr.

use std::{path::PathBuf, process::ExitCode};

use kakeibo_ledger::{DEV_OWNER, OwnerId};
use kakeibo_mcp::LedgerServer;
use kakeibo_tools::Scope;
use rmcp::ServiceExt;

const HELP: &str = "kakeibo-mcp: the kakeibo ledger's tools for MCP clients, over stdio.

Settings (environment):
  APP_DATABASE_URL or DATABASE_URL   the ledger's database (APP_DATABASE_URL, row-level security, first);
                                     unset: the embedded cluster of the kakeibo checkout this runs in
                                     (or that holds this binary), when `cargo xtask db up` has started it
  KAKEIBO_OWNER                      whose ledger (a user id; default the development owner)
  ALLOW_WRITES=1                     also list the six write tools (off: the server is read-only)
  KAKEIBO_IMPORT_DIR                 where import_statement_csv may read files by path (default: none)

It makes no model calls. Configure it in a client as the command `kakeibo-mcp` with those variables.";

#[tokio::main]
async fn main() -> ExitCode {
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return ExitCode::SUCCESS;
    }
    // Logs on stderr (stdout is the answer or the protocol), errors unless RUST_LOG asks for more.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("kakeibo-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let url = if let Some(url) = var("APP_DATABASE_URL").or_else(|| var("DATABASE_URL")) {
        url
    } else {
        let found = kakeibo_localdb::discover(&kakeibo_localdb::default_starts());
        found.app_url().ok_or_else(|| {
            format!("{found} (or set APP_DATABASE_URL to the ledger's database; --help says more)")
        })?
    };
    let owner = match var("KAKEIBO_OWNER") {
        Some(text) => OwnerId::new(
            text.trim()
                .parse()
                .map_err(|e| format!("KAKEIBO_OWNER={text}: {e}"))?,
        ),
        None => DEV_OWNER,
    };
    let allow_writes = var("ALLOW_WRITES").as_deref() == Some("1");
    let pool = kakeibo_ledger::connect(&url, 2).map_err(|e| e.to_string())?;
    let mut scope = Scope::new(owner, pool);
    if let Some(dir) = var("KAKEIBO_IMPORT_DIR") {
        scope = scope.with_import_root(PathBuf::from(dir));
    }
    eprintln!(
        "kakeibo-mcp: owner {owner}, writes {}",
        if allow_writes {
            "allowed"
        } else {
            "off (read-only)"
        }
    );
    let server = LedgerServer::new(&scope, allow_writes)
        .serve(kakeibo_mcp::lines::filter(
            tokio::io::stdin(),
            tokio::io::stdout(),
        ))
        .await
        .map_err(|e| format!("starting the MCP session: {e}"))?;
    server
        .waiting()
        .await
        .map_err(|e| format!("the MCP session ended: {e}"))?;
    Ok(())
}
