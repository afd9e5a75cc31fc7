//! Starting the servers of a configuration and listing their tools.

use std::{
    collections::{HashMap, VecDeque},
    process::Stdio,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use futures_util::future::join_all;
use kakeibo_core::Tool;
use rmcp::{
    RoleClient, ServiceExt,
    service::RunningService,
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    task::JoinHandle,
};

use crate::{McpConfig, ServerSpec, Timeouts, Transport, tool::McpTool};

/// The variables of this process a stdio server is given, beside its entry's own `env`.
const PASSED_VARIABLES: [&str; 11] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE",
];

/// The last lines a server wrote on stderr (shown when it fails), at most this many.
const STDERR_LINES: usize = 5;
/// Each of those lines, at most this many characters.
const STDERR_LINE_CHARS: usize = 300;

/// A connected server: the connection (dropping it ends the server), what it last said on
/// stderr, and why it stopped once it has.
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) service: RunningService<RoleClient, ()>,
    stderr: Tail,
    /// The task reading a stdio server's stderr into `stderr`, until the server exits.
    reader: Mutex<Option<JoinHandle<()>>>,
    gone: Mutex<Option<String>>,
}

impl Server {
    /// Why the server stopped, if it has.
    pub(crate) fn gone(&self) -> Option<String> {
        self.gone.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Records that the server stopped, with what it last said; the sentence to report.
    pub(crate) async fn stopped(&self, error: &str) -> String {
        let reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(reader) = reader {
            // What it said before it went: a moment for the reader to reach the end.
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        let sentence = format!(
            "the MCP server `{}` stopped ({error}){}; its tools are left out for the rest of the session",
            self.name,
            self.stderr.said()
        );
        *self.gone.lock().unwrap_or_else(PoisonError::into_inner) = Some(sentence.clone());
        tracing::warn!(server = %self.name, "an MCP server stopped");
        sentence
    }
}

/// The last lines of a server's stderr.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: &str) {
        let line: String = line.trim().chars().take(STDERR_LINE_CHARS).collect();
        if line.is_empty() {
            return;
        }
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// `; it said: "…"` with the lines kept, or nothing.
    fn said(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.is_empty() {
            String::new()
        } else {
            let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("; it said: {:?}", joined.join(" / "))
        }
    }
}

/// The servers of a configuration that started, their tools, and what was left out and why.
/// Dropping it (and every tool taken from it) ends the servers.
#[derive(Default)]
pub struct McpServers {
    tools: Vec<Arc<dyn Tool>>,
    reports: Vec<String>,
    connected: Vec<(String, usize)>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers")
            .field("connected", &self.connected)
            .field("reports", &self.reports)
            .finish_non_exhaustive()
    }
}

impl McpServers {
    /// Starts every server of `config` at once and lists its tools, each server within
    /// `timeouts.start`. Never fails: what cannot be used is reported and left out.
    pub async fn connect(config: &McpConfig, timeouts: Timeouts) -> Self {
        let mut servers = Self {
            reports: config.problems.clone(),
            ..Self::default()
        };
        let started = join_all(config.servers.iter().map(|spec| start(spec, timeouts))).await;
        let mut taken: HashMap<String, String> = HashMap::new();
        for (spec, result) in config.servers.iter().zip(started) {
            match result {
                Ok((server, listed)) => {
                    let server = Arc::new(server);
                    let mut count = 0;
                    for remote in listed {
                        match McpTool::new(&server, &remote, timeouts.call) {
                            Ok(tool) => {
                                if let Some(other) = taken.get(tool.name()) {
                                    servers.reports.push(format!(
                                        "the tool `{}` of the MCP server `{}` is left out: its name is taken by `{other}`",
                                        remote.name, spec.name
                                    ));
                                } else {
                                    taken.insert(tool.name().to_owned(), spec.name.clone());
                                    servers.tools.push(Arc::new(tool));
                                    count += 1;
                                }
                            }
                            Err(why) => servers.reports.push(why),
                        }
                    }
                    tracing::info!(server = %spec.name, tools = count, "MCP server connected");
                    servers.connected.push((spec.name.clone(), count));
                }
                Err(why) => {
                    tracing::warn!(server = %spec.name, "an MCP server was left out");
                    servers.reports.push(why);
                }
            }
        }
        servers
    }

    /// The tools of the servers that started, named `mcp__SERVER__TOOL`.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// A sentence for each server or tool left out, and why.
    pub fn reports(&self) -> &[String] {
        &self.reports
    }

    /// Each server that started, with how many of its tools are offered.
    pub fn connected(&self) -> &[(String, usize)] {
        &self.connected
    }

    /// Whether no server is configured or started.
    pub fn is_empty(&self) -> bool {
        self.connected.is_empty()
    }
}

/// Starts one server and lists its tools, within the start timeout.
async fn start(spec: &ServerSpec, timeouts: Timeouts) -> Result<(Server, Vec<rmcp::model::Tool>), String> {
    let stderr = Tail::default();
    let failed = |why: String, stderr: &Tail| {
        format!(
            "the MCP server `{}` is left out: {why}{}",
            spec.name,
            stderr.said()
        )
    };
    let mut reader = None;
    let connecting = async {
        let service = match &spec.transport {
            Transport::Stdio { command, args, env } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).env_clear().kill_on_drop(true);
                for name in PASSED_VARIABLES {
                    if let Some(value) = std::env::var_os(name) {
                        process.env(name, value);
                    }
                }
                process.envs(env);
                let (transport, err) = TokioChildProcess::builder(process)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("`{command}` could not be started: {e}"))?;
                reader = err.map(|err| {
                    let tail = stderr.clone();
                    tokio::spawn(async move {
                        let mut lines = BufReader::new(err).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tail.push(&line);
                        }
                    })
                });
                match ().serve(transport).await {
                    Ok(service) => service,
                    Err(e) => {
                        // What it said before it went: give the reader a moment to finish.
                        if let Some(reader) = reader.take() {
                            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
                        }
                        return Err(format!("it did not start ({e})"));
                    }
                }
            }
            Transport::Http { url, headers } => {
                let transport = StreamableHttpClientTransport::from_config(http_config(url, headers)?);
                ().serve(transport)
                    .await
                    .map_err(|e| format!("{url} did not answer as an MCP server ({e})"))?
            }
        };
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| format!("it did not list its tools ({e})"))?;
        Ok::<_, String>((service, tools))
    };
    match tokio::time::timeout(timeouts.start, connecting).await {
        Ok(Ok((service, tools))) => Ok((
            Server {
                name: spec.name.clone(),
                service,
                stderr,
                reader: Mutex::new(reader),
                gone: Mutex::new(None),
            },
            tools,
        )),
        Ok(Err(why)) => Err(failed(why, &stderr)),
        Err(_) => Err(failed(
            format!(
                "it did not start within {} s (MCP_TIMEOUT sets the limit, in milliseconds)",
                timeouts.start.as_secs_f32()
            ),
            &stderr,
        )),
    }
}

/// The HTTP transport's settings: the URL, a bearer `Authorization` header as the transport's
/// own, every other header as given.
fn http_config(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            let token = value
                .strip_prefix("Bearer ")
                .ok_or_else(|| "its Authorization header is not `Bearer TOKEN`".to_owned())?;
            config = config.auth_header(token.to_owned());
            continue;
        }
        let header = http::HeaderName::try_from(name.as_str())
            .map_err(|_| format!("its header name {name:?} is not a valid HTTP header name"))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of its header {name:?} is not a valid HTTP header value"))?;
        custom.insert(header, value);
    }
    Ok(config.custom_headers(custom))
}
