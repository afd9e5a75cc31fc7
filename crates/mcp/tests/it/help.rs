//! `kakeibo-mcp --help` answers on stdout, like every other program's help, and exits 0.

#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn help_goes_to_stdout_and_names_the_settings() {
    for flag in ["--help", "-h"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kakeibo-mcp"))
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        for setting in [
            "APP_DATABASE_URL",
            "KAKEIBO_OWNER",
            "ALLOW_WRITES",
            "embedded cluster",
        ] {
            assert!(stdout.contains(setting), "{flag}: {stdout}");
        }
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}
