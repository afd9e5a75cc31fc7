//! What the source says about itself: the workspace's crates and their lines, the agent loop's
//! length, and the tests written.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::MetricsError;

/// Lines of a source file by kind, as `tokei` counts them: a line with any code on it is code, a
/// line with only comment on it is a comment, and a line of whitespace is blank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Lines {
    pub code: u64,
    pub comments: u64,
    pub blank: u64,
}

impl Lines {
    fn add(&mut self, other: Self) {
        self.code += other.code;
        self.comments += other.comments;
        self.blank += other.blank;
    }

    /// Code and comment lines.
    pub fn with_comments(&self) -> u64 {
        self.code + self.comments
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    /// Inside `/* … */`, nested this deep.
    Comment(u32),
    /// Inside `"…"`.
    Str,
    /// Inside `r#…"…"#…` with this many hashes.
    Raw(usize),
}

fn ident(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Counts the lines of Rust source `text`. Strings and character literals are followed, so a
/// `//` or `/*` inside one is not taken for a comment.
pub fn count_rust(text: &str) -> Lines {
    let mut lines = Lines::default();
    let mut state = State::Code;
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let (mut code, mut comment) = (matches!(state, State::Str | State::Raw(_)), false);
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            let next = chars.get(i + 1).copied();
            match state {
                State::Comment(depth) => {
                    comment |= !c.is_whitespace();
                    if c == '*' && next == Some('/') {
                        state = if depth == 1 {
                            State::Code
                        } else {
                            State::Comment(depth - 1)
                        };
                        i += 1;
                    } else if c == '/' && next == Some('*') {
                        state = State::Comment(depth + 1);
                        i += 1;
                    }
                }
                State::Str => {
                    if c == '\\' {
                        i += 1;
                    } else if c == '"' {
                        state = State::Code;
                    }
                }
                State::Raw(hashes) => {
                    if c == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                        state = State::Code;
                        i += hashes;
                    }
                }
                State::Code => {
                    if c.is_whitespace() {
                    } else if c == '/' && next == Some('/') {
                        comment = true;
                        break;
                    } else if c == '/' && next == Some('*') {
                        comment = true;
                        state = State::Comment(1);
                        i += 1;
                    } else {
                        code = true;
                        let before = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
                        if c == '"' {
                            state = State::Str;
                        } else if c == 'r'
                            && (!ident(before)
                                || (before == Some('b')
                                    && !ident(i.checked_sub(2).and_then(|j| chars.get(j)).copied())))
                        {
                            let hashes = chars.iter().skip(i + 1).take_while(|&&h| h == '#').count();
                            if chars.get(i + 1 + hashes) == Some(&'"') {
                                state = State::Raw(hashes);
                                i += 1 + hashes;
                            }
                        } else if c == '\'' {
                            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
                            if next == Some('\\') {
                                i += chars
                                    .iter()
                                    .skip(i + 3)
                                    .position(|&q| q == '\'')
                                    .map_or(0, |p| p + 3);
                            } else if chars.get(i + 2) == Some(&'\'') {
                                i += 2;
                            }
                        }
                    }
                }
            }
            i += 1;
        }
        if code {
            lines.code += 1;
        } else if comment || matches!(state, State::Comment(_)) && !line.trim().is_empty() {
            lines.comments += 1;
        } else {
            lines.blank += 1;
        }
    }
    lines
}

/// A workspace member as `cargo metadata` describes it.
#[derive(Debug, Clone, Deserialize)]
struct Package {
    name: String,
    manifest_path: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_root: PathBuf,
}

/// One crate's lines of Rust.
#[derive(Debug, Clone, Serialize)]
pub struct CrateLines {
    pub name: String,
    /// Its folder, relative to the workspace's root.
    pub path: String,
    /// `src/` and `build.rs`.
    pub src: Lines,
    /// Everything else: `tests/`, `examples/`, `benches/`.
    pub tests: Lines,
    /// Test functions written in it (see [`count_tests`]).
    pub test_functions: u64,
}

/// The workspace's crates (by `cargo metadata`), sorted by path.
pub fn crates(root: &Path) -> Result<Vec<CrateLines>, MetricsError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(root)
        .output()
        .map_err(|e| MetricsError::Command {
            command: "cargo metadata".into(),
            message: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(MetricsError::Command {
            command: "cargo metadata".into(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    let metadata: Metadata = serde_json::from_slice(&output.stdout).map_err(|e| MetricsError::Command {
        command: "cargo metadata".into(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for package in metadata.packages {
        let dir = package
            .manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut lines = CrateLines {
            name: package.name,
            path: dir
                .strip_prefix(&metadata.workspace_root)
                .unwrap_or(&dir)
                .display()
                .to_string(),
            src: Lines::default(),
            tests: Lines::default(),
            test_functions: 0,
        };
        for file in files(&dir, &["rs"])? {
            let text = read(&file)?;
            let relative = file.strip_prefix(&dir).unwrap_or(&file);
            let counted = count_rust(&text);
            if relative.starts_with("src") || relative == Path::new("build.rs") {
                lines.src.add(counted);
            } else {
                lines.tests.add(counted);
            }
            lines.test_functions += count_tests(&text, Language::Rust);
        }
        out.push(lines);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Files under `dir` with one of `extensions`, skipping build output, packages and hidden
/// folders, sorted.
pub fn files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, MetricsError> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| MetricsError::Io {
            path: folder.display().to_string(),
            message: e.to_string(),
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "node_modules" || name == "dist") {
                    pending.push(path);
                }
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.contains(&e))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn read(path: &Path) -> Result<String, MetricsError> {
    std::fs::read_to_string(path).map_err(|e| MetricsError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    TypeScript,
}

/// Test functions written in `text`: in Rust, the functions under `#[test]`, `#[tokio::test]` or
/// `#[sqlx::test]` (a property in `proptest!` is one); in TypeScript, the calls of Vitest's
/// `it(…)` or `test(…)` (with `.each`, `.skip` and the like).
pub fn count_tests(text: &str, language: Language) -> u64 {
    let is_test = |line: &str| match language {
        Language::Rust => ["#[test]", "#[tokio::test", "#[sqlx::test"]
            .iter()
            .any(|p| line.starts_with(p)),
        Language::TypeScript => ["it", "test"].iter().any(|name| {
            line.strip_prefix(name).is_some_and(|rest| {
                rest.starts_with('(')
                    || rest.strip_prefix('.').is_some_and(|m| {
                        m.trim_start_matches(|c: char| c.is_ascii_alphabetic())
                            .starts_with('(')
                    })
            })
        }),
    };
    text.lines().map(str::trim_start).filter(|l| is_test(l)).count() as u64
}

/// The web app's tests: (unit tests in `web/src`, journeys in `web/e2e`).
pub fn web_tests(root: &Path) -> Result<(u64, u64), MetricsError> {
    let count = |folder: &str| -> Result<u64, MetricsError> {
        let dir = root.join(folder);
        if !dir.is_dir() {
            return Ok(0);
        }
        files(&dir, &["ts", "tsx"])?
            .iter()
            .filter(|f| {
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                name.contains(".test.") || name.contains(".e2e.")
            })
            .map(|f| read(f).map(|t| count_tests(&t, Language::TypeScript)))
            .sum()
    };
    Ok((count("web/src")?, count("web/e2e")?))
}

/// Where the agent loop is: the `turn` module, one file or a folder of them.
pub const LOOP_MODULE: &str = "crates/core/src/turn";

/// The agent loop's lines: every file of [`LOOP_MODULE`] (`turn.rs`, or the `turn/` folder)
/// up to its test module; a file of tests only (`tests.rs`) is not the loop.
pub fn agent_loop(root: &Path) -> Result<Lines, MetricsError> {
    let module = root.join(LOOP_MODULE);
    let mut sources = if module.is_dir() {
        files(&module, &["rs"])?
    } else {
        vec![module.with_extension("rs")]
    };
    sources.retain(|f| f.file_name().and_then(|n| n.to_str()) != Some("tests.rs"));
    let mut lines = Lines::default();
    for file in sources {
        let text = read(&file)?;
        let end = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
        lines.add(count_rust(text.get(..end).unwrap_or(&text)));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_code_comment_or_blank() {
        let text = r##"//! A module.
fn f() -> &'static str { // trailing
    /* a block
       still */
    let url = "http://x/*y"; // not a comment opener
    let c = '"';

    let raw = r#"
// inside a raw string
"#;
    let b = br"x";
    let e = '\'';
    x /* inline */ + 1
}
"##;
        let lines = count_rust(text);
        assert_eq!(
            lines,
            Lines {
                code: 10,
                comments: 3,
                blank: 1
            }
        );
    }

    #[test]
    fn tests_are_counted_by_their_markers() {
        let rust = "#[test]\nfn a() {}\n  #[tokio::test(flavor = \"multi_thread\")]\nasync fn b() {}\n#[sqlx::test(migrator = \"M\")]\n// #[test] in a comment\n#[testing]\n";
        assert_eq!(count_tests(rust, Language::Rust), 3);
        let ts = "describe('x', () => {\n  it('a', () => {});\n  it.each([1])('b', () => {});\n  test('c', () => {});\n  item('d');\n  it.skip('e');\n});\n";
        assert_eq!(count_tests(ts, Language::TypeScript), 4);
    }
}
