//! Subagent types: Markdown files whose frontmatter names a kind of subagent — `name`,
//! `description`, optionally `tools` (the tool names it may use) and `model` — and whose body is
//! its instructions, as Claude Code keeps them in `.claude/agents/`. The `task` tool offers each
//! beside the general-purpose type.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The largest type file read; a larger one is refused with a sentence.
pub const MAX_AGENT_BYTES: usize = 32 * 1024;

/// Where type files live below a searched folder.
const AGENT_FOLDERS: [&str; 2] = [".agents/agents", ".claude/agents"];

/// One kind of subagent, as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    pub name: String,
    pub description: String,
    /// Its instructions (the file's body), after kakeibo's own prompt.
    pub instructions: String,
    /// The tools it may use; `None`: all the parent's but `task`.
    pub tools: Option<Vec<String>>,
    /// Its model, as `/model` names one (`MODEL`, `gemini:MODEL`, …); `None`: the parent's.
    pub model: Option<String>,
    pub path: PathBuf,
}

/// The types of a session, and a sentence for each file left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentTypes {
    pub list: Vec<AgentType>,
    pub refused: Vec<String>,
}

/// `tools` as a comma-separated line or a list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ToolList {
    Line(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct Frontmatter {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolList>,
    model: Option<String>,
}

/// Reads the type file `path`, or says why not.
pub fn read_agent(path: &Path) -> Result<AgentType, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{shown} could not be read ({e})"))?;
    if bytes.len() > MAX_AGENT_BYTES {
        return Err(format!(
            "{shown} is {} bytes, more than the {MAX_AGENT_BYTES} a subagent type may have",
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    let (front, body) = crate::skills::frontmatter(&text).map_err(|why| format!("{shown}{why}"))?;
    let front: Frontmatter = serde_yaml_ng::from_str(front)
        .map_err(|e| format!("{shown}: its frontmatter does not read ({e})"))?;
    let name = front
        .name
        .ok_or_else(|| format!("{shown}: its frontmatter has no name"))?;
    if !crate::skills::valid_name(&name) {
        return Err(format!(
            "{shown}: the name {name:?} is not a subagent type name (1 to 64 lower-case letters, digits and single hyphens)"
        ));
    }
    let description = front
        .description
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty() && d.chars().count() <= 1024)
        .ok_or_else(|| format!("{shown}: its frontmatter has no description of 1 to 1,024 characters"))?;
    let tools = front.tools.map(|list| {
        let names: Vec<String> = match list {
            ToolList::Line(line) => line.split(',').map(|n| n.trim().to_owned()).collect(),
            ToolList::List(names) => names.into_iter().map(|n| n.trim().to_owned()).collect(),
        };
        names.into_iter().filter(|n| !n.is_empty()).collect()
    });
    let model = front
        .model
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty() && m != "inherit");
    Ok(AgentType {
        name,
        description,
        instructions: body.trim().to_owned(),
        tools,
        model,
        path: path.to_path_buf(),
    })
}

impl AgentTypes {
    /// The types for a session in `cwd`, searched as [`crate::Skills::discover`] searches: the
    /// working folder's first, then each folder up to the repository root, then the home
    /// directory's — the first of a name kept, a later one refused with a sentence.
    pub fn discover(cwd: &Path, home: Option<&Path>) -> Self {
        Self::from_dirs(&crate::skills::search_dirs(cwd, home, &AGENT_FOLDERS))
    }

    /// The types in each of `dirs` (each a folder of `.md` files).
    pub fn from_dirs(dirs: &[PathBuf]) -> Self {
        let (list, refused) = crate::skills::gather(
            dirs,
            |p| p.is_file() && p.extension().is_some_and(|e| e == "md"),
            read_agent,
            |t| (&t.name, &t.path),
            "subagent type",
        );
        Self { list, refused }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_type_file_gives_its_name_tools_model_and_instructions() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".claude/agents");
        write(
            &dir,
            "reviewer.md",
            "---\nname: subscription-reviewer\ndescription: Reviews\n  subscriptions.\ntools: detect_recurring, search_transactions\nmodel: gemini:gemini-2.5-flash\n---\nList each one.\n",
        );
        write(
            &dir,
            "listed.md",
            "---\nname: lister\ndescription: Lists.\ntools: [list_accounts]\nmodel: inherit\n---\n",
        );
        write(&dir, "broken.md", "---\nname: Not A Name\ndescription: x\n---\n");
        write(&dir, "notes.txt", "not a type");
        let found = AgentTypes::discover(home.path(), None);
        let names: Vec<&str> = found.list.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["lister", "subscription-reviewer"]);
        let reviewer = &found.list[1];
        assert_eq!(reviewer.description, "Reviews subscriptions.");
        assert_eq!(
            reviewer.tools.as_deref().unwrap(),
            ["detect_recurring", "search_transactions"]
        );
        assert_eq!(reviewer.model.as_deref(), Some("gemini:gemini-2.5-flash"));
        assert_eq!(reviewer.instructions, "List each one.");
        assert_eq!(found.list[0].tools.as_deref().unwrap(), ["list_accounts"]);
        assert_eq!(found.list[0].model, None, "inherit is the parent's model");
        assert_eq!(found.refused.len(), 1, "{:?}", found.refused);
        assert!(found.refused[0].contains("is not a subagent type name"));
    }

    #[test]
    fn a_project_type_hides_the_home_one_of_its_name() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".git")).unwrap();
        let text = "---\nname: reviewer\ndescription: Reviews.\n---\nBody.\n";
        write(&home.path().join(".agents/agents"), "r.md", text);
        write(&project.path().join(".agents/agents"), "r.md", text);
        let found = AgentTypes::discover(project.path(), Some(home.path()));
        assert_eq!(found.list.len(), 1);
        assert!(found.list[0].path.starts_with(project.path()));
        assert!(found.refused[0].contains("is hidden by"));
    }
}
