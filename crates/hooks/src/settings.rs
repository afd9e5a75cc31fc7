//! The `hooks` object of a Claude Code settings file, read and checked.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "set_budget|categorize",
//!                            "hooks": [{"type": "command", "command": "./policy.sh", "timeout": 5}]}]}}
//! ```
//!
//! Each event holds groups; a group's `matcher` (tool events only) is a regular expression
//! anchored to the whole tool name — empty or `*` matches every tool, and one that is not a valid
//! expression is compared with the name exactly. A group's handlers run one at a time, in order.

use std::{collections::BTreeMap, path::Path, time::Duration};

use regex::Regex;
use serde::Deserialize;

/// How long a handler may take when its `timeout` (seconds) is not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_mins(1);

/// Claude Code events kakeibo has no moment for: accepted in a settings file and never run, so
/// one file can serve both.
const NOT_RUN_HERE: &[&str] = &[
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "PostToolUseFailure",
    "Setup",
];

/// The events kakeibo runs hooks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    Stop,
}

impl Event {
    pub const ALL: [Event; 6] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PostToolUse,
        Event::Stop,
    ];

    /// The name settings files and hook input use.
    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PostToolUse => "PostToolUse",
            Event::Stop => "Stop",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether a group's matcher picks tools for this event.
    fn matches_tools(self) -> bool {
        matches!(
            self,
            Event::PreToolUse | Event::PermissionRequest | Event::PostToolUse
        )
    }
}

/// Why a settings file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read the hooks file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("the hooks settings are not valid: {0}")]
    Invalid(String),
    #[error(
        "\"{0}\" is not a hook event; kakeibo runs SessionStart, UserPromptSubmit, PreToolUse, \
         PermissionRequest, PostToolUse and Stop"
    )]
    UnknownEvent(String),
    #[error("{event} hook #{index}: {problem}")]
    Handler {
        event: &'static str,
        index: usize,
        problem: String,
    },
    #[error(
        "{event} hook #{index} is a shell command, and here hooks can only be HTTP endpoints \
         (a function has no operator shell)"
    )]
    CommandNotAllowed { event: &'static str, index: usize },
}

/// What runs for a hook: a shell command, or an HTTP endpoint the input is POSTed to.
#[derive(Debug, Clone, PartialEq)]
pub enum Handler {
    Command {
        command: String,
        timeout: Duration,
    },
    Http {
        url: url::Url,
        timeout: Duration,
        /// Header values, with `$NAME`/`${NAME}` filled from the environment for the names in
        /// `allowed_env_vars` (and emptied for any other).
        headers: BTreeMap<String, String>,
        allowed_env_vars: Vec<String>,
    },
}

impl Handler {
    pub fn timeout(&self) -> Duration {
        match self {
            Handler::Command { timeout, .. } | Handler::Http { timeout, .. } => *timeout,
        }
    }
}

/// Which tools a group is for.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Pattern(Regex),
    Exact(String),
}

impl Matcher {
    fn parse(text: Option<&str>) -> Self {
        match text.map(str::trim) {
            None | Some("" | "*") => Matcher::All,
            Some(text) => match Regex::new(&format!("^(?:{text})$")) {
                Ok(re) => Matcher::Pattern(re),
                Err(_) => Matcher::Exact(text.to_owned()),
            },
        }
    }

    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Pattern(re) => re.is_match(tool),
            Matcher::Exact(name) => name == tool,
        }
    }
}

/// One event's group: a matcher and its handlers.
#[derive(Debug, Clone)]
pub struct Group {
    pub matcher: Matcher,
    pub handlers: Vec<Handler>,
}

/// Hooks settings, checked: every event's groups in file order.
#[derive(Debug, Clone, Default)]
pub struct HookSettings {
    events: BTreeMap<Event, Vec<Group>>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    hooks: BTreeMap<String, Vec<RawGroup>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<RawHandler>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawHandler {
    #[serde(rename = "type")]
    kind: String,
    command: Option<String>,
    url: Option<String>,
    timeout: Option<f64>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    allowed_env_vars: Vec<String>,
}

impl HookSettings {
    /// Reads a settings file: a whole Claude Code `settings.json` (only `hooks` is read) or
    /// one holding only `hooks`.
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json(&text)
    }

    /// Parses settings JSON, checking every handler.
    pub fn from_json(text: &str) -> Result<Self, SettingsError> {
        let file: File = serde_json::from_str(text).map_err(|e| SettingsError::Invalid(e.to_string()))?;
        let mut events = BTreeMap::new();
        for (name, raw_groups) in file.hooks {
            let Some(event) = Event::from_name(&name) else {
                if NOT_RUN_HERE.contains(&name.as_str()) {
                    tracing::warn!(event = %name, "this hook event has no moment in kakeibo; its hooks never run");
                    continue;
                }
                return Err(SettingsError::UnknownEvent(name));
            };
            let mut groups = Vec::with_capacity(raw_groups.len());
            let mut index = 0;
            for raw in raw_groups {
                let matcher = if event.matches_tools() {
                    Matcher::parse(raw.matcher.as_deref())
                } else {
                    Matcher::All
                };
                let mut handlers = Vec::with_capacity(raw.hooks.len());
                for handler in raw.hooks {
                    index += 1;
                    handlers.push(handler.check().map_err(|problem| SettingsError::Handler {
                        event: event.name(),
                        index,
                        problem,
                    })?);
                }
                groups.push(Group { matcher, handlers });
            }
            events.insert(event, groups);
        }
        Ok(Self { events })
    }

    /// Refuses settings with a shell command: for a process with no operator shell (a function).
    pub fn http_only(self) -> Result<Self, SettingsError> {
        for (event, groups) in &self.events {
            let handlers = groups.iter().flat_map(|g| &g.handlers);
            if let Some(index) = handlers
                .enumerate()
                .find_map(|(i, h)| matches!(h, Handler::Command { .. }).then_some(i + 1))
            {
                return Err(SettingsError::CommandNotAllowed {
                    event: event.name(),
                    index,
                });
            }
        }
        Ok(self)
    }

    /// The handlers that run for `event` (and `tool`, for a tool event), in order.
    pub fn handlers(&self, event: Event, tool: Option<&str>) -> Vec<&Handler> {
        self.events
            .get(&event)
            .into_iter()
            .flatten()
            .filter(|g| tool.is_none_or(|t| g.matcher.matches(t)))
            .flat_map(|g| &g.handlers)
            .collect()
    }

    /// Whether any hook is set.
    pub fn is_empty(&self) -> bool {
        self.events
            .values()
            .all(|g| g.iter().all(|g| g.handlers.is_empty()))
    }
}

impl RawHandler {
    fn check(self) -> Result<Handler, String> {
        let timeout = match self.timeout {
            None => DEFAULT_TIMEOUT,
            Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(format!(
                    "timeout {s} is not a number of seconds between 0 and 3600"
                ));
            }
        };
        match self.kind.as_str() {
            "command" => match self.command {
                Some(command) if !command.trim().is_empty() => Ok(Handler::Command { command, timeout }),
                _ => Err("a command hook needs a \"command\"".to_owned()),
            },
            "http" => {
                let Some(url) = self.url else {
                    return Err("an http hook needs a \"url\"".to_owned());
                };
                let url = url::Url::parse(&url).map_err(|e| format!("url {url:?}: {e}"))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(format!("url {url}: only http and https endpoints can be hooks"));
                }
                Ok(Handler::Http {
                    url,
                    timeout,
                    headers: self.headers,
                    allowed_env_vars: self.allowed_env_vars,
                })
            }
            "prompt" | "agent" => Err(format!(
                "\"{}\" hooks are not run by kakeibo: use \"command\" or \"http\"",
                self.kind
            )),
            other => Err(format!(
                "unknown hook type {other:?}: use \"command\" or \"http\""
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_are_anchored_and_fall_back_to_exact_names() {
        assert!(Matcher::parse(Some("set_budget|categorize")).matches("categorize"));
        assert!(!Matcher::parse(Some("set")).matches("set_budget"));
        assert!(Matcher::parse(Some("set_.*")).matches("set_budget"));
        assert!(Matcher::parse(Some("")).matches("anything"));
        assert!(Matcher::parse(Some("*")).matches("anything"));
        assert!(Matcher::parse(None).matches("anything"));
        // Not a valid expression: compared as it is.
        let broken = Matcher::parse(Some("spend(by"));
        assert!(matches!(broken, Matcher::Exact(_)));
        assert!(broken.matches("spend(by"));
        assert!(!broken.matches("spend_by_category"));
    }

    #[test]
    fn a_whole_settings_file_reads_its_hooks_and_says_what_is_wrong() {
        let settings = HookSettings::from_json(
            r#"{"permissions": {"allow": []},
                "hooks": {"PreToolUse": [{"matcher": "set_budget", "hooks": [{"type": "command", "command": "exit 2", "timeout": 5}]},
                                         {"hooks": [{"type": "http", "url": "http://127.0.0.1:9/h"}]}],
                          "Notification": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        )
        .expect("valid settings");
        assert_eq!(settings.handlers(Event::PreToolUse, Some("set_budget")).len(), 2);
        let others = settings.handlers(Event::PreToolUse, Some("spend_by_category"));
        assert_eq!(others.len(), 1);
        assert_eq!(others[0].timeout(), DEFAULT_TIMEOUT);
        assert!(settings.handlers(Event::Stop, None).is_empty());
        assert!(matches!(
            settings.clone().http_only(),
            Err(SettingsError::CommandNotAllowed {
                event: "PreToolUse",
                index: 1
            })
        ));

        for (text, wanted) in [
            (r#"{"hooks": {"PreTooluse": []}}"#, "not a hook event"),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}"#,
                "needs a \"command\"",
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "file:///x"}]}]}}"#,
                "only http",
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt"}]}]}}"#,
                "not run by kakeibo",
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
                "timeout",
            ),
            (r#"{"hooks": []}"#, "not valid"),
        ] {
            let err = HookSettings::from_json(text).expect_err(text).to_string();
            assert!(err.contains(wanted), "{text}: {err}");
        }
    }
}
