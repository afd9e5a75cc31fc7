//! Debian packages the suite runs: installed with apt-get when this runs as root and they are
//! missing, else a sentence saying how.

use std::path::Path;

use anyhow::{Result, bail};

use crate::process::{self, Cmd};

/// Makes sure each `(program, package)` is installed: the program's path exists, or its package
/// is installed for `purpose` (one apt-get run for all that are missing).
pub fn ensure(needed: &[(&str, &str)], purpose: &str) -> Result<()> {
    let missing: Vec<&str> = needed
        .iter()
        .filter(|(program, _)| !Path::new(program).is_file())
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    if !process::is_root() {
        bail!(
            "{list} (Debian) {} missing and this is not root, so it cannot be installed here; \
             run `sudo apt-get install -y {list}` and try again",
            if missing.len() == 1 { "is" } else { "are" }
        );
    }
    process::step(&format!(
        "installing Debian's {list} for {purpose} (apt-get install -y {list})"
    ));
    let install = || {
        Cmd::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(missing.iter().copied())
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
    };
    if !install()?.success() {
        Cmd::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status_ok()?;
        if !install()?.success() {
            bail!("apt-get could not install {list}");
        }
    }
    if let Some((program, _)) = needed.iter().find(|(program, _)| !Path::new(program).is_file()) {
        bail!("apt-get installed {list}, but {program} is still missing");
    }
    Ok(())
}
