//! Who decides a write: permission rules from configuration first, then the confirm policy.

use std::{fmt, str::FromStr};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::Tier;

/// A write the model asked for, waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PendingWrite {
    /// The tool_use id.
    pub id: String,
    pub tool: String,
    /// The write's input: a JSON object.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub args: Value,
    /// One line for the confirmation card.
    pub summary: String,
}

type Ask = dyn Fn(&PendingWrite) -> BoxFuture<'static, bool> + Send + Sync;

/// How writes that need a person are decided.
pub enum ConfirmPolicy {
    /// Ask now and wait (the CLI's `[y/N]`).
    Inline(Box<Ask>),
    /// Every write runs (MCP with writes on, eval turns marked allow).
    AutoAllow,
    /// Every write is declined (eval turns marked deny, the injection suite).
    AutoDeny,
    /// Stop the turn and store it; a later request decides (the web).
    Suspend,
}

impl fmt::Debug for ConfirmPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Inline(_) => "Inline",
            Self::AutoAllow => "AutoAllow",
            Self::AutoDeny => "AutoDeny",
            Self::Suspend => "Suspend",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

/// One rule: a tool, optional argument values that must match, and what to do.
/// Written `deny memory_save`, `allow set_budget`, `ask categorize_transactions(category=Groceries)`,
/// or with a prefix ending in `*` for every tool it starts (`allow mcp__rates__*`, `deny mcp__*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub action: Action,
    pub tool: String,
    pub constraints: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permission rule {0:?}: write it as `allow|ask|deny TOOL` or `… TOOL(key=value, …)`")]
pub struct BadRule(pub String);

impl FromStr for Rule {
    type Err = BadRule;
    fn from_str(text: &str) -> Result<Self, BadRule> {
        let bad = || BadRule(text.to_owned());
        let (action, rest) = text.trim().split_once(char::is_whitespace).ok_or_else(bad)?;
        let action = match action {
            "allow" => Action::Allow,
            "ask" => Action::Ask,
            "deny" => Action::Deny,
            _ => return Err(bad()),
        };
        let rest = rest.trim();
        let (tool, constraints) = match rest.split_once('(') {
            None => (rest, Vec::new()),
            Some((tool, args)) => {
                let args = args.strip_suffix(')').ok_or_else(bad)?;
                let constraints = args
                    .split(',')
                    .filter(|a| !a.trim().is_empty())
                    .map(|a| {
                        a.split_once('=')
                            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                            .ok_or_else(bad)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (tool.trim(), constraints)
            }
        };
        let name = tool.strip_suffix('*').unwrap_or(tool);
        let named = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if name.is_empty() || !name.chars().all(named) {
            return Err(bad());
        }
        Ok(Self {
            action,
            tool: tool.to_owned(),
            constraints,
        })
    }
}

impl Rule {
    /// The prefix a rule ending in `*` covers; `None` for a rule naming one tool.
    fn prefix(&self) -> Option<&str> {
        self.tool.strip_suffix('*')
    }

    fn matches(&self, tool: &str, args: &Value) -> bool {
        let named = match self.prefix() {
            Some(prefix) => tool.starts_with(prefix),
            None => self.tool == tool,
        };
        named
            && self.constraints.iter().all(|(key, want)| match args.get(key) {
                Some(Value::String(s)) => s.eq_ignore_ascii_case(want),
                Some(other) => want.parse::<Value>().is_ok_and(|w| w == *other),
                None => false,
            })
    }
}

/// The rules of a deployment. They come from configuration only, never from data or the model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionRules(pub Vec<Rule>);

impl PermissionRules {
    /// Rules separated by newlines or `;` (blank entries ignored).
    pub fn parse(text: &str) -> Result<Self, BadRule> {
        text.split(['\n', ';'])
            .filter(|r| !r.trim().is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// What to do with a call: a matching deny always wins; otherwise the most specific matching
    /// rule (argument values first, then a tool's own name over a prefix, then the longer
    /// prefix); with none, reads are allowed and writes asked.
    pub fn decide(&self, tool: &str, tier: Tier, args: &Value) -> Action {
        let matching: Vec<&Rule> = self.0.iter().filter(|r| r.matches(tool, args)).collect();
        if matching.iter().any(|r| r.action == Action::Deny) {
            return Action::Deny;
        }
        let specificity = |r: &&&Rule| (r.constraints.len(), r.prefix().is_none(), r.tool.len());
        matching.iter().max_by_key(specificity).map_or(
            match tier {
                Tier::Read => Action::Allow,
                Tier::Write => Action::Ask,
            },
            |r| r.action,
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_deny_always_wins_then_the_most_specific() {
        let rules = PermissionRules::parse(
            "allow set_budget; ask set_budget(category=Groceries)\nallow memory_save\ndeny memory_save(category=rules)",
        )
        .unwrap();
        let decide = |tool, args| rules.decide(tool, Tier::Write, &args);
        assert_eq!(decide("set_budget", json!({"category": "Dining"})), Action::Allow);
        assert_eq!(
            decide("set_budget", json!({"category": "groceries"})),
            Action::Ask
        );
        assert_eq!(decide("memory_save", json!({"category": "rules"})), Action::Deny);
        assert_eq!(
            decide("memory_save", json!({"category": "income"})),
            Action::Allow
        );
        assert_eq!(decide("categorize_transactions", json!({})), Action::Ask);
        assert_eq!(
            rules.decide("search_transactions", Tier::Read, &json!({})),
            Action::Allow
        );
        let servers = PermissionRules::parse(
            "allow mcp__rates__*; ask mcp__rates__schedule_transfer; deny mcp__bank-x__*",
        )
        .unwrap();
        let decide = |tool| servers.decide(tool, Tier::Write, &json!({}));
        assert_eq!(decide("mcp__rates__exchange_rate"), Action::Allow);
        assert_eq!(
            decide("mcp__rates__schedule_transfer"),
            Action::Ask,
            "a name over a prefix"
        );
        assert_eq!(decide("mcp__bank-x__pay"), Action::Deny);
        assert_eq!(decide("mcp__other__x"), Action::Ask, "no rule: a write is asked");
        assert_eq!(decide("set_budget"), Action::Ask);
        for bad in [
            "allow *",
            "allow mcp*x",
            "permit set_budget",
            "allow",
            "allow set_budget(category)",
            "deny x y",
        ] {
            assert!(PermissionRules::parse(bad).is_err(), "{bad}");
        }
    }
}
