//! `.mcp.json` in Claude Code's shape: `{"mcpServers": {NAME: SERVER, …}}`, where a server is a
//! command spawned over stdio (`command`, `args`, `env`, optional `"type": "stdio"`) or a
//! streamable-HTTP endpoint (`"type": "http"`, `url`, `headers`). `${VAR}` and
//! `${VAR:-default}` in any of those strings are read from the environment.

use std::{collections::BTreeMap, path::Path};

use serde::Deserialize;
use serde_json::Value;

/// Why a configuration file could not be read at all (a server entry that is wrong is reported
/// and left out instead: see [`McpConfig::problems`]).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading the MCP configuration {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the MCP configuration {path} is not JSON: {message}")]
    NotJson { path: String, message: String },
    #[error(
        "the MCP configuration {path} has no \"mcpServers\" object (write it as Claude Code's .mcp.json: \
         {{\"mcpServers\": {{\"name\": {{\"command\": \"…\", \"args\": […]}}}}}})"
    )]
    NoServers { path: String },
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A command spawned with its stdin and stdout as the connection.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One server of a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name its tools are prefixed with (`mcp__NAME__tool`).
    pub name: String,
    pub transport: Transport,
}

/// The servers of a configuration, and a sentence for each entry left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    pub servers: Vec<ServerSpec>,
    pub problems: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl McpConfig {
    /// Reads a `.mcp.json` file; `${VAR}` references are read from this process's environment.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, &shown, &|name| std::env::var(name).ok())
    }

    /// Reads a configuration's text (`path` only names it in messages); `var` looks up `${VAR}`.
    pub fn parse(text: &str, path: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::NotJson {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let Some(Value::Object(entries)) = value.get("mcpServers") else {
            return Err(ConfigError::NoServers {
                path: path.to_owned(),
            });
        };
        let mut config = Self::default();
        for (name, entry) in entries {
            match server(name, entry, var) {
                Ok(spec) => config.servers.push(spec),
                Err(why) => config
                    .problems
                    .push(format!("the MCP server `{name}` of {path} is left out: {why}")),
            }
        }
        Ok(config)
    }

    /// A server given some other way than a file (an editor's `session/new`): its name checked
    /// as a file's are, and a name already taken reported and left out.
    pub fn add(&mut self, spec: ServerSpec) {
        if valid_name(&spec.name) {
            self.merge(Self {
                servers: vec![spec],
                problems: Vec::new(),
            });
        } else {
            self.problems.push(format!(
                "the MCP server {:?} is left out: a server's name may hold only letters, digits, `_` and `-`",
                spec.name
            ));
        }
    }

    /// The servers the other configuration names, added after these (an editor's servers after
    /// a file's); a name given twice keeps the first and reports the second.
    pub fn merge(&mut self, other: Self) {
        self.problems.extend(other.problems);
        for spec in other.servers {
            if self.servers.iter().any(|s| s.name == spec.name) {
                self.problems.push(format!(
                    "the MCP server `{}` is named twice; the first is kept",
                    spec.name
                ));
            } else {
                self.servers.push(spec);
            }
        }
    }
}

/// One entry, checked: a usable name, a known transport, every `${VAR}` set.
fn server(name: &str, entry: &Value, var: &dyn Fn(&str) -> Option<String>) -> Result<ServerSpec, String> {
    if !valid_name(name) {
        return Err("a server's name may hold only letters, digits, `_` and `-`".to_owned());
    }
    let raw: RawServer = serde_json::from_value(entry.clone()).map_err(|e| e.to_string())?;
    let expand = |text: &str| expand(text, var);
    let expand_map = |map: &BTreeMap<String, String>| {
        map.iter()
            .map(|(k, v)| Ok((k.clone(), expand(v)?)))
            .collect::<Result<BTreeMap<_, _>, String>>()
    };
    let transport = match (raw.kind.as_deref(), &raw.command, &raw.url) {
        (None | Some("stdio"), Some(command), None) => Transport::Stdio {
            command: expand(command)?,
            args: raw.args.iter().map(|a| expand(a)).collect::<Result<_, _>>()?,
            env: expand_map(&raw.env)?,
        },
        (None | Some("http" | "streamable-http"), None, Some(url)) => {
            let url = expand(url)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("its url {url:?} is not http:// or https://"));
            }
            Transport::Http {
                url,
                headers: expand_map(&raw.headers)?,
            }
        }
        (Some("sse"), ..) => {
            return Err(
                "the old SSE transport is not supported; use the server's streamable-HTTP endpoint (\"type\": \"http\")"
                    .to_owned(),
            );
        }
        (Some(other), ..) if !matches!(other, "stdio" | "http" | "streamable-http") => {
            return Err(format!("its type {other:?} is neither \"stdio\" nor \"http\""));
        }
        (_, Some(_), Some(_)) => return Err("it has both a command and a url".to_owned()),
        _ => {
            return Err(
                "it needs a \"command\" (a program spoken to over stdio) or a \"url\" (streamable HTTP)"
                    .to_owned(),
            );
        }
    };
    Ok(ServerSpec {
        name: name.to_owned(),
        transport,
    })
}

/// Whether a server's name can prefix its tools' names: letters, digits, `_` and `-`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `${VAR}` and `${VAR:-default}` replaced; a variable unset without a default is an error.
fn expand(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let (before, after) = rest.split_at(start);
        out.push_str(before);
        let body = after.get(2..).unwrap_or_default();
        let Some(end) = body.find('}') else {
            out.push_str(after);
            return Ok(out);
        };
        let (reference, tail) = body.split_at(end);
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        match (var(name), default) {
            (Some(value), _) if !value.is_empty() => out.push_str(&value),
            (_, Some(default)) => out.push_str(default),
            (Some(value), None) => out.push_str(&value),
            (None, None) => return Err(format!("it needs ${{{name}}}, which is not set")),
        }
        rest = tail.get(1..).unwrap_or_default();
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "RATES_KEY" => Some("k-123".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn claude_codes_shape_is_read_and_each_bad_entry_said() {
        let text = r#"{"mcpServers": {
            "rates": {"command": "python3", "args": ["rates.py", "--key=${RATES_KEY}"], "env": {"LEVEL": "${LEVEL:-warn}"}},
            "broker": {"type": "http", "url": "https://broker.example/mcp", "headers": {"Authorization": "Bearer ${RATES_KEY}"}},
            "typed": {"type": "stdio", "command": "srv"},
            "old": {"type": "sse", "url": "https://x.example/sse"},
            "both": {"command": "a", "url": "http://b"},
            "none": {"args": []},
            "unset": {"command": "${NOT_SET}"},
            "ftp": {"type": "http", "url": "ftp://x"},
            "bad name": {"command": "x"},
            "weird": {"type": "websocket", "url": "ws://x"},
            "empty": {"command": "x", "args": ["${EMPTY:-fallback}", "${EMPTY}"]}
        }}"#;
        let config = McpConfig::parse(text, ".mcp.json", &env).unwrap();
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["rates", "broker", "typed", "empty"],
            "in the file's order"
        );
        let rates = config.servers.iter().find(|s| s.name == "rates").unwrap();
        assert_eq!(
            rates.transport,
            Transport::Stdio {
                command: "python3".into(),
                args: vec!["rates.py".into(), "--key=k-123".into()],
                env: BTreeMap::from([("LEVEL".into(), "warn".into())]),
            }
        );
        let broker = config.servers.iter().find(|s| s.name == "broker").unwrap();
        assert_eq!(
            broker.transport,
            Transport::Http {
                url: "https://broker.example/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer k-123".into())]),
            }
        );
        let empty = config.servers.iter().find(|s| s.name == "empty").unwrap();
        assert!(matches!(&empty.transport, Transport::Stdio { args, .. } if args == &["fallback", ""]));
        let problems = config.problems.join("\n");
        for said in [
            "`old` of .mcp.json is left out: the old SSE transport is not supported",
            "`both` of .mcp.json is left out: it has both a command and a url",
            "`none` of .mcp.json is left out: it needs a \"command\"",
            "`unset` of .mcp.json is left out: it needs ${NOT_SET}, which is not set",
            "`ftp` of .mcp.json is left out: its url \"ftp://x\" is not http:// or https://",
            "`bad name` of .mcp.json is left out: a server's name may hold only",
            "`weird` of .mcp.json is left out: its type \"websocket\"",
        ] {
            assert!(problems.contains(said), "{said}\n---\n{problems}");
        }
        assert_eq!(config.problems.len(), 7);
    }

    #[test]
    fn a_file_that_is_not_a_configuration_is_refused_whole() {
        assert!(matches!(
            McpConfig::parse("{", "x.json", &env),
            Err(ConfigError::NotJson { .. })
        ));
        let no_servers = McpConfig::parse(r#"{"servers": {}}"#, "x.json", &env).unwrap_err();
        assert!(
            no_servers.to_string().contains("no \"mcpServers\" object"),
            "{no_servers}"
        );
        let missing = McpConfig::load(Path::new("/nonexistent/.mcp.json")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("reading the MCP configuration /nonexistent/.mcp.json")
        );
    }

    #[test]
    fn merging_keeps_the_first_of_a_name() {
        let mut first = McpConfig::parse(r#"{"mcpServers": {"a": {"command": "x"}}}"#, "f", &env).unwrap();
        let second = McpConfig::parse(
            r#"{"mcpServers": {"a": {"command": "y"}, "b": {"command": "z"}}}"#,
            "g",
            &env,
        )
        .unwrap();
        first.merge(second);
        assert_eq!(first.servers.len(), 2);
        assert!(matches!(&first.servers[0].transport, Transport::Stdio { command, .. } if command == "x"));
        assert_eq!(
            first.problems,
            ["the MCP server `a` is named twice; the first is kept"]
        );
    }
}
