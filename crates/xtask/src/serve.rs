//! Running `kakeibo-dev` for `cargo xtask dev`: the URL is printed only once the server answers,
//! and however xtask is stopped (Ctrl+C, SIGINT, SIGTERM, SIGHUP) the server is stopped with it.
//! Should xtask die without a chance to say so (SIGKILL), the server notices its parent is gone
//! (`KAKEIBO_DEV_PARENT_PID`) and stops by itself.

use std::{
    io::{Read as _, Write as _},
    net::{SocketAddr, TcpStream, ToSocketAddrs as _},
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicI32, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::process::{self, Cmd};

/// Whether an HTTP server answers at `addr` (any status: it is up).
pub fn answers(addr: SocketAddr) -> bool {
    status_line(addr, "/api/session").is_some_and(|head| head.starts_with(b"HTTP/1."))
}

/// The first 12 bytes of the server's answer to `GET path` (`HTTP/1.1 200`), if it answers
/// within a couple of seconds.
pub fn status_line(addr: SocketAddr, path: &str) -> Option<[u8; 12]> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    Some(head)
}

/// Resolves `--addr` once, for the readiness probe.
pub fn socket_addr(addr: &str) -> Result<SocketAddr> {
    addr.to_socket_addrs()
        .with_context(|| format!("--addr {addr} is not an address (HOST:PORT)"))?
        .next()
        .with_context(|| format!("--addr {addr} resolves to no address"))
}

/// Spawns `command`, announces the URL when it answers, and waits until it exits or xtask is
/// told to stop; returns xtask's exit code.
pub fn serve(command: Cmd, addr: SocketAddr, url: &str) -> Result<ExitCode> {
    let started = Instant::now();
    let received = Arc::new(AtomicI32::new(0));
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing the signal handlers")?;
    let mut child = command
        .env("KAKEIBO_DEV_PARENT_PID", std::process::id().to_string())
        .spawn()?;
    let pid = child.id();
    let forward = Arc::clone(&received);
    let handle = signals.handle();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            forward.store(signal, Ordering::SeqCst);
            // The terminal's Ctrl+C reaches the server too; a signal sent to xtask alone does not.
            let _ = Cmd::new("kill").args(["-TERM", &pid.to_string()]).output_ok();
        }
    });

    let mut announced = false;
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for kakeibo-dev")? {
            break status;
        }
        if !announced && received.load(Ordering::SeqCst) == 0 && answers(addr) {
            announced = true;
            process::step(&format!(
                "kakeibo-dev answers after {:.1} s: open {url}   (Ctrl+C stops it)",
                started.elapsed().as_secs_f64()
            ));
            println!("{url}");
        }
        std::thread::sleep(Duration::from_millis(if announced { 250 } else { 100 }));
    };
    handle.close();

    let signal = received.load(Ordering::SeqCst);
    if signal != 0 {
        let name = match signal {
            SIGINT => "SIGINT",
            SIGTERM => "SIGTERM",
            _ => "SIGHUP",
        };
        process::step(&format!(
            "stopped kakeibo-dev on {name} ({status}); {url} no longer answers. The database keeps \
             running: `cargo xtask db down` stops it"
        ));
        return Ok(ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)));
    }
    if !announced {
        bail!("kakeibo-dev exited before it answered on {url} ({status}); its log is above");
    }
    if status.success() {
        Ok(ExitCode::SUCCESS)
    } else {
        process::step(&format!("kakeibo-dev stopped ({status})"));
        Ok(ExitCode::FAILURE)
    }
}
