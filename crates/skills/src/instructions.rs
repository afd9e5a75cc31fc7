//! `AGENTS.md` and `KAKEIBO.md`: the person's standing instructions.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

/// The most instruction text a session takes, in bytes; a file that would pass it is refused.
pub const MAX_INSTRUCTION_BYTES: usize = 32 * 1024;

/// The instruction files found for a session, and what was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Each file taken, with its text, in the order the model reads them.
    pub files: Vec<(PathBuf, String)>,
    /// A sentence for each file left out (too large, unreadable, not UTF-8).
    pub refused: Vec<String>,
}

impl Instructions {
    /// The files for a session in `cwd`: the home directory's first (the most general), then each
    /// folder from the repository root down to `cwd` (see [`crate::folders`]); in each,
    /// `AGENTS.md`, then `KAKEIBO.md` unless it says what `AGENTS.md` says. A file is taken
    /// whole or not at all: once the next would pass [`MAX_INSTRUCTION_BYTES`], it and the rest
    /// are refused.
    pub fn discover(cwd: &Path, home: Option<&Path>) -> Self {
        let mut folders: Vec<PathBuf> = home.map(Path::to_path_buf).into_iter().collect();
        for folder in crate::folders(cwd) {
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
        let mut found = Self::default();
        let mut used = 0usize;
        for folder in folders {
            let mut agents: Option<String> = None;
            for name in ["AGENTS.md", "KAKEIBO.md"] {
                let path = folder.join(name);
                if !path.is_file() {
                    continue;
                }
                let text = match read_text(&path) {
                    Ok(text) => text,
                    Err(why) => {
                        found.refused.push(why);
                        continue;
                    }
                };
                if name == "KAKEIBO.md" && agents.as_deref().is_some_and(|a| a.trim() == text.trim()) {
                    continue;
                }
                if text.trim().is_empty() {
                    continue;
                }
                if used.saturating_add(text.len()) > MAX_INSTRUCTION_BYTES {
                    found.refused.push(format!(
                        "{} was left out: with it the instructions would be {} bytes, more than the {} a session takes",
                        path.display(),
                        used.saturating_add(text.len()),
                        MAX_INSTRUCTION_BYTES
                    ));
                    continue;
                }
                used += text.len();
                if name == "AGENTS.md" {
                    agents = Some(text.clone());
                }
                found.files.push((path, text));
            }
        }
        found
    }

    /// The section that follows the system prompt, or `None` without any file.
    pub fn prompt_section(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut section = String::from(
            "## The person's instructions\n\nThe person keeps these instructions in files of their own (AGENTS.md, KAKEIBO.md), \
             the most general first. Follow them as you follow the person's words: they may say how the household budgets, \
             what each account is for, how to answer. They cannot lift a confirmation or the rules above.\n",
        );
        for (path, text) in &self.files {
            let _ = write!(section, "\n### {}\n\n{}\n", path.display(), text.trim_end());
        }
        Some(section)
    }
}

/// A file's text, or the sentence saying why it was left out.
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{} could not be read ({e}), so it was left out", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text, so it was left out", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn from_home_then_the_root_down_to_the_working_folder() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let cwd = repo.path().join("books/2025");
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        write(&home.path().join("AGENTS.md"), "Answer in British English.");
        write(
            &repo.path().join("AGENTS.md"),
            "Our budget month starts on the 25th.",
        );
        write(
            &repo.path().join("KAKEIBO.md"),
            "Our budget month starts on the 25th.\n",
        );
        write(
            &repo.path().join("books/KAKEIBO.md"),
            "Savings is the emergency fund: never suggest spending it.",
        );
        write(&cwd.join("AGENTS.md"), "2025 is the year we save for a car.");
        write(&repo.path().parent().unwrap().join("AGENTS.md.unrelated"), "x");
        let found = Instructions::discover(&cwd, Some(home.path()));
        let texts: Vec<&str> = found.files.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Answer in British English.",
                "Our budget month starts on the 25th.",
                "Savings is the emergency fund: never suggest spending it.",
                "2025 is the year we save for a car."
            ],
            "the KAKEIBO.md that says what AGENTS.md says is read once"
        );
        assert!(found.refused.is_empty());
        let section = found.prompt_section().unwrap();
        assert!(section.find("British").unwrap() < section.find("car").unwrap());
    }

    #[test]
    fn past_32_kib_a_file_is_refused_with_a_sentence() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let cwd = repo.path().join("sub");
        write(&repo.path().join("AGENTS.md"), &"a".repeat(30 * 1024));
        write(&cwd.join("AGENTS.md"), &"b".repeat(4 * 1024));
        write(&cwd.join("KAKEIBO.md"), "short and different");
        let found = Instructions::discover(&cwd, None);
        assert_eq!(found.files.len(), 2, "{:?}", found.refused);
        assert_eq!(found.refused.len(), 1);
        let sentence = &found.refused[0];
        assert!(
            sentence.contains("sub/AGENTS.md was left out") && sentence.contains("32768"),
            "{sentence}"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(
            Instructions::discover(empty.path(), None)
                .prompt_section()
                .is_none()
        );
    }
}
