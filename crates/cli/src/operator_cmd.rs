//! `kakeibo operator add|remove EMAIL`: operator accounts, made only here (as the owner role),
//! never by signing up on the site.

use std::io::BufRead;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use kakeibo_auth::visitors;
use kakeibo_ledger::OwnerRolePool;

use crate::{DbArgs, pool};

#[derive(Debug, Args)]
pub struct OperatorArgs {
    #[command(subcommand)]
    action: Action,
    #[command(flatten)]
    database: DbArgs,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Make EMAIL an operator account; the password is the first line of standard input. An
    /// existing account with that email is taken over (new password, every session ended). The
    /// admin pages also need EMAIL on ADMIN_EMAILS.
    Add { email: String },
    /// Take the operator flag away from EMAIL (its sessions end).
    Remove { email: String },
}

pub async fn run(args: OperatorArgs) -> Result<()> {
    let pool = OwnerRolePool::new(pool(&args.database)?);
    match args.action {
        Action::Add { email } => {
            eprintln!("kakeibo: the password for {email} (one line on standard input):");
            let mut password = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut password)
                .context("reading the password")?;
            let password = password.trim_end_matches(['\r', '\n']);
            let visitor = visitors::make_operator(&pool, &email, password)
                .await
                .with_context(|| format!("making {email} an operator"))?;
            crate::outln!(
                "operator {} ({}); add it to ADMIN_EMAILS to open the admin pages",
                crate::terminal::visible(&visitor.email.unwrap_or_default()),
                visitor.id
            );
        }
        Action::Remove { email } => {
            if !visitors::remove_operator(&pool, &email).await? {
                bail!("there is no account {email}");
            }
            crate::outln!("{email} is no longer an operator");
        }
    }
    Ok(())
}
