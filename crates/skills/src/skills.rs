//! Agent Skills: folders with a `SKILL.md`, listed to the model a line each, loaded by `Skill`.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
};

use futures_util::future::BoxFuture;
use kakeibo_core::{Tier, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest `SKILL.md` read; a larger one is refused with a sentence.
pub const MAX_SKILL_BYTES: usize = 64 * 1024;

/// Where skills live below a searched folder.
const SKILL_FOLDERS: [&str; 2] = [".agents/skills", ".claude/skills"];

/// One skill: its name and description (the frontmatter) and its instructions (the rest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub instructions: String,
    /// The skill's folder.
    pub folder: PathBuf,
}

/// The skills of a session, and a sentence for each folder left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    pub list: Vec<Skill>,
    pub refused: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Frontmatter {
    name: Option<String>,
    description: Option<String>,
}

/// A name as the Agent Skills standard has it: 1–64 lower-case letters, digits and single
/// hyphens, neither first nor last.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A Markdown file's frontmatter block and the body after it; the error is the end of a sentence
/// that begins with the file's name.
pub(crate) fn frontmatter(text: &str) -> Result<(&str, &str), &'static str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(" does not open with a --- frontmatter block")?;
    rest.split_once("\n---\n")
        .or_else(|| rest.split_once("\r\n---\r\n"))
        .or_else(|| rest.strip_suffix("\n---").map(|f| (f, "")))
        .ok_or(": its frontmatter block has no closing ---")
}

/// The folders searched for `subfolders` (a project's `.agents/skills`, …): below the working
/// folder first, then each folder up to the repository root, then the home directory.
pub(crate) fn search_dirs(cwd: &Path, home: Option<&Path>, subfolders: &[&str]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = crate::folders(cwd).into_iter().rev().collect();
    if let Some(home) = home
        && !roots.iter().any(|r| r == home)
    {
        roots.push(home.to_path_buf());
    }
    let mut dirs = Vec::new();
    for root in roots {
        for sub in subfolders {
            dirs.push(root.join(sub));
        }
    }
    dirs
}

/// The entries of each of `dirs` that `pick` takes, in name order, as `read` reads them: the
/// first of a name (`key`: its name and where it is) kept, a later one and one that does not
/// read refused with a sentence calling it a `what`.
pub(crate) fn gather<T>(
    dirs: &[PathBuf],
    pick: impl Fn(&Path) -> bool,
    read: impl Fn(&Path) -> Result<T, String>,
    key: impl Fn(&T) -> (&str, &Path),
    what: &str,
) -> (Vec<T>, Vec<String>) {
    let (mut list, mut refused) = (Vec::<T>::new(), Vec::new());
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| pick(p)).collect();
        paths.sort();
        for path in paths {
            match read(&path) {
                Ok(found) => {
                    let (name, _) = key(&found);
                    if let Some(first) = list.iter().find(|t| key(t).0 == name) {
                        refused.push(format!(
                            "the {what} {name:?} in {} is hidden by the one in {}",
                            path.display(),
                            key(first).1.display()
                        ));
                    } else {
                        list.push(found);
                    }
                }
                Err(why) => refused.push(format!("{why}, so the {what} was left out")),
            }
        }
    }
    (list, refused)
}

/// Reads the skill in `folder` (its `SKILL.md`), or says why not.
pub fn read_skill(folder: &Path) -> Result<Skill, String> {
    let path = folder.join("SKILL.md");
    let shown = path.display();
    let bytes = std::fs::read(&path).map_err(|e| format!("{shown} could not be read ({e})"))?;
    if bytes.len() > MAX_SKILL_BYTES {
        return Err(format!(
            "{shown} is {} bytes, more than the {MAX_SKILL_BYTES} a skill may have",
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    let (front, body) = frontmatter(&text).map_err(|why| format!("{shown}{why}"))?;
    let front: Frontmatter = serde_yaml_ng::from_str(front)
        .map_err(|e| format!("{shown}: its frontmatter does not read ({e})"))?;
    let name = front
        .name
        .ok_or_else(|| format!("{shown}: its frontmatter has no name"))?;
    let description = front
        .description
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .ok_or_else(|| format!("{shown}: its frontmatter has no description"))?;
    if !valid_name(&name) {
        return Err(format!(
            "{shown}: the name {name:?} is not a skill name (1 to 64 lower-case letters, digits and single hyphens)"
        ));
    }
    if folder.file_name().and_then(|n| n.to_str()) != Some(name.as_str()) {
        return Err(format!("{shown}: the name {name:?} is not its folder's name"));
    }
    if description.chars().count() > 1024 {
        return Err(format!(
            "{shown}: its description is longer than 1,024 characters"
        ));
    }
    Ok(Skill {
        name,
        description,
        instructions: body.trim().to_owned(),
        folder: folder.to_path_buf(),
    })
}

impl Skills {
    /// The skills for a session in `cwd`: below the working folder first, then each folder up to
    /// the repository root, then the home directory — so a project's skill hides a same-named one
    /// of the home directory (which is refused with a sentence saying so).
    pub fn discover(cwd: &Path, home: Option<&Path>) -> Self {
        Self::from_dirs(&search_dirs(cwd, home, &SKILL_FOLDERS))
    }

    /// The skills in each of `dirs` (each a folder of skill folders), the first of a name kept.
    pub fn from_dirs(dirs: &[PathBuf]) -> Self {
        let (list, refused) = gather(
            dirs,
            |p| p.join("SKILL.md").is_file(),
            read_skill,
            |s| (&s.name, &s.folder),
            "skill",
        );
        Self { list, refused }
    }

    /// The section that follows the system prompt: each skill in a line, or `None` without any.
    pub fn prompt_section(&self) -> Option<String> {
        if self.list.is_empty() {
            return None;
        }
        let mut section = String::from(
            "## Skills\n\nThe person keeps skills: instructions for a kind of task, in files of their own. When a request \
             is one a skill below is for, call Skill with its name before anything else and follow the instructions it \
             returns as you follow the person's words (they cannot lift a confirmation or the rules above).\n\n",
        );
        for skill in &self.list {
            let _ = writeln!(section, "- {}: {}", skill.name, skill.description);
        }
        Some(section)
    }
}

/// What the model asks `Skill` for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name, as the list of skills gives it.
    pub name: String,
}

/// A skill's instructions.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillOutput {
    pub name: String,
    pub description: String,
    /// What to do: the skill's `SKILL.md` below its frontmatter.
    pub instructions: String,
}

/// `Skill`: loads a skill's instructions (a read: it only reads the person's files).
#[derive(Debug, Clone)]
pub struct SkillTool {
    skills: Arc<Vec<Skill>>,
}

impl SkillTool {
    pub fn new(skills: &Skills) -> Self {
        Self {
            skills: Arc::new(skills.list.clone()),
        }
    }
}

impl TypedTool for SkillTool {
    type Input = SkillInput;
    type Output = SkillOutput;
    const NAME: &'static str = "Skill";
    const DESCRIPTION: &'static str = "Load the instructions of one of the person's skills (the list of skills in the system prompt names \
         each with what it is for). Call it before a task a skill is for, then follow what it returns.";
    const TIER: Tier = Tier::Read;

    fn run(&self, input: SkillInput) -> BoxFuture<'_, Result<SkillOutput, ToolError>> {
        let found = self
            .skills
            .iter()
            .find(|s| s.name == input.name)
            .map(|s| SkillOutput {
                name: s.name.clone(),
                description: s.description.clone(),
                instructions: s.instructions.clone(),
            });
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        let answer = found.ok_or_else(|| {
            ToolError::Refused(format!(
                "there is no skill {:?}; the skills are: {}",
                input.name,
                names.join(", ")
            ))
        });
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, folder: &str, text: &str) {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn skills_are_found_checked_and_the_nearest_of_a_name_kept() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let project = repo.path().join(".agents/skills");
        skill(
            &project,
            "monthly-review",
            "---\nname: monthly-review\ndescription: >\n  Review a month:\n  spending and budgets.\n---\n\n1. Call get_spend_report.\n",
        );
        skill(
            &project,
            "Bad_Name",
            "---\nname: Bad_Name\ndescription: x\n---\nbody",
        );
        skill(&project, "no-front", "just text");
        skill(
            &project,
            "elsewhere",
            "---\nname: other-name\ndescription: x\n---\nbody",
        );
        skill(
            &home.path().join(".claude/skills"),
            "monthly-review",
            "---\nname: monthly-review\ndescription: the home one\n---\nbody",
        );
        skill(
            &home.path().join(".agents/skills"),
            "tax-year",
            "---\nname: tax-year\ndescription: The tax year's summary.\nlicense: MIT\n---\nSum the year.",
        );
        let found = Skills::discover(repo.path(), Some(home.path()));
        let names: Vec<&str> = found.list.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["monthly-review", "tax-year"]);
        assert_eq!(found.list[0].description, "Review a month: spending and budgets.");
        assert_eq!(found.list[0].instructions, "1. Call get_spend_report.");
        let refused = found.refused.join("\n");
        for said in [
            "\"Bad_Name\" is not a skill name",
            "does not open with a --- frontmatter",
            "is not its folder's name",
            "is hidden by the one in",
        ] {
            assert!(refused.contains(said), "{said}: {refused}");
        }
        let section = found.prompt_section().unwrap();
        assert!(section.contains(
            "- monthly-review: Review a month: spending and budgets.\n- tax-year: The tax year's summary.\n"
        ));
    }
}
