//! kakeibo-mcp-client: other people's MCP servers as tool sources for the agent — how a person
//! plugs in what kakeibo does not have (exchange rates, a brokerage, a tax calculator).
//!
//! [`McpConfig`] reads Claude Code's `.mcp.json` (stdio commands and streamable-HTTP URLs);
//! [`McpServers::connect`] starts every server at once, each within its start timeout, and
//! lists its tools. Each tool becomes a [`kakeibo_core::Tool`] named `mcp__SERVER__TOOL`:
//!
//! - a tool its server marks `readOnlyHint` is a **read** (it runs when the model asks, beside
//!   the other reads); every other one is a **write**, asked of the person through the confirm
//!   policy and the permission rules like kakeibo's own writes (`allow mcp__rates__*` lets a
//!   server's tools run unasked; a deny rule always wins);
//! - its input is checked against the server's own JSON Schema before it is asked about or run,
//!   and the model is given that schema in the subset every provider accepts;
//! - its description is clipped and marked as the server's words, and its result — like every
//!   tool result — reaches the model fenced as data, never as instructions;
//! - a call that does not answer within the call timeout is given up; a server that stops is
//!   reported, and its tools refuse from then on.
//!
//! A server that cannot start, does not answer within its start timeout, or lists tools that
//! cannot be offered is reported in a sentence ([`McpServers::reports`]) and left out: the rest
//! of the session goes on without it. A stdio server is given only a small set of this process's
//! variables (`PATH`, `HOME`, the locale, …) plus the `env` its entry names — never the model
//! keys or database URLs kakeibo itself holds.
//!
//! The CLI (`--mcp-config FILE`), ACP (the servers an editor passes to `session/new`) and the
//! library use it. The website's functions never do: a visitor cannot add servers.

// A server sends anything: no indexing that can panic.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod config;
mod connect;
mod tool;

use std::time::Duration;

pub use config::{ConfigError, McpConfig, ServerSpec, Transport};
pub use connect::McpServers;

/// How long a server has to start and list its tools, and a call to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub start: Duration,
    pub call: Duration,
}

impl Default for Timeouts {
    /// 30 s to start, 120 s a call.
    fn default() -> Self {
        Self {
            start: Duration::from_secs(30),
            call: Duration::from_mins(2),
        }
    }
}

impl Timeouts {
    /// The defaults, or `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` (milliseconds, as Claude Code
    /// reads them) where set to a whole number above zero.
    pub fn from_env() -> Self {
        let millis = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
        };
        let default = Self::default();
        Self {
            start: millis("MCP_TIMEOUT").unwrap_or(default.start),
            call: millis("MCP_TOOL_TIMEOUT").unwrap_or(default.call),
        }
    }
}

/// The name a server's tool is offered under: `mcp__SERVER__TOOL`, with every character a
/// provider refuses in the tool's name made `_` (a server's name was checked when it was
/// configured); `None` past 64 characters (the shortest providers' limit).
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("mcp__{server}__{}", clean(tool));
    (name.len() <= 64).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_every_provider_accepts() {
        assert_eq!(
            tool_name("rates", "exchange_rate").as_deref(),
            Some("mcp__rates__exchange_rate")
        );
        assert_eq!(
            tool_name("tax-calc", "get.rate v2").as_deref(),
            Some("mcp__tax-calc__get_rate_v2")
        );
        assert_eq!(tool_name("s", "é").as_deref(), Some("mcp__s___"));
        assert_eq!(tool_name("server", &"x".repeat(60)), None);
    }
}
