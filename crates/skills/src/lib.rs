//! kakeibo-skills: what a person tells the agent once instead of every time.
//!
//! - **Instructions** ([`Instructions::discover`]): `AGENTS.md` — and `KAKEIBO.md` beside it
//!   where it says something else — in every folder from the working directory's repository root
//!   down to the working directory, after the one in the home directory; 32 KiB in all, read in
//!   that order, and a file past the limit refused with a sentence. They follow kakeibo's system
//!   prompt, so a household can say how it budgets or what each account is for.
//! - **Skills** ([`Skills::discover`]): Agent Skills folders — a `SKILL.md` with `name` and
//!   `description` in its frontmatter and the instructions below it — under `.agents/skills/`
//!   and `.claude/skills/` of those folders and of the home directory. A session is told each
//!   skill's name and description in a line; the [`SkillTool`] (`Skill`, a read) loads one's
//!   instructions when the model asks.
//!
//! - **Subagent types** ([`AgentTypes::discover`]): Markdown files under `.agents/agents/` and
//!   `.claude/agents/` — frontmatter `name`, `description`, optional `tools` and `model`, the body
//!   the type's instructions — offered by the `task` tool beside the general-purpose type.
//!
//! All are the person's own files, read from their machine: the CLI, ACP and the library use
//! them; the website's functions never do (a visitor has no files there).

// Files are the person's, but read them as bytes that can be anything: no indexing that panics.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

mod agents;
mod instructions;
mod skills;

use std::path::{Path, PathBuf};

pub use agents::{AgentType, AgentTypes, MAX_AGENT_BYTES};
pub use instructions::{Instructions, MAX_INSTRUCTION_BYTES};
pub use skills::{MAX_SKILL_BYTES, Skill, SkillInput, SkillOutput, SkillTool, Skills};

/// The folders searched, most general first: the repository root of `cwd` (the nearest folder
/// at or above it holding `.git`; `cwd` itself when there is none) and each folder below it down
/// to `cwd`.
pub fn folders(cwd: &Path) -> Vec<PathBuf> {
    let root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd);
    let mut chain: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    chain.reverse();
    chain
}

/// The home directory (`HOME`), when it is set and is a folder.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_dir())
}
