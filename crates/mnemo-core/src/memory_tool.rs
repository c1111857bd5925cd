//! Anthropic's memory tool, served from the store: the model keeps files under `/memories`
//! (view, create, str_replace, insert, delete, rename) and each file is a memory, so what it
//! writes gets versions, the policy gate, the audit trail, export and complete deletion.
//!
//! This module holds the tool's own rules, with no I/O: the command shapes, which paths are
//! valid, how a directory and a file are shown, and the text edits. The library maps a file
//! to a record (its path in the record's metadata) and runs the store operations.

use serde::{Deserialize, Serialize};

/// The directory every file lives under.
pub const ROOT: &str = "/memories";

/// The metadata key holding a file's path.
pub const PATH_KEY: &str = "memory_path";

/// One call of the memory tool, as the model sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Shows a directory's files or a file's lines (numbered), optionally a range of them.
    View {
        /// `/memories` or a path under it.
        path: String,
        /// The first and last line to show (1-based; the last may be -1 for the end).
        #[serde(default)]
        view_range: Option<(i64, i64)>,
    },
    /// Creates a file, or replaces the text of one that exists.
    Create {
        /// The file's path.
        path: String,
        /// Its text.
        file_text: String,
    },
    /// Replaces the one occurrence of `old_str` in a file with `new_str`.
    StrReplace {
        /// The file's path.
        path: String,
        /// Text that occurs exactly once in the file.
        old_str: String,
        /// Its replacement.
        #[serde(default)]
        new_str: String,
    },
    /// Inserts text after a line (0: at the start).
    Insert {
        /// The file's path.
        path: String,
        /// The line after which to insert.
        insert_line: i64,
        /// The text to insert.
        insert_text: String,
    },
    /// Deletes a file, or a directory with every file under it.
    Delete {
        /// The path.
        path: String,
    },
    /// Moves a file, or a directory with every file under it.
    Rename {
        /// The current path.
        old_path: String,
        /// The new path.
        new_path: String,
    },
}

/// A mistake in a call, told to the model as the tool's answer (nothing was changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

fn fail<T>(message: impl Into<String>) -> Result<T, ToolError> {
    Err(ToolError(message.into()))
}

/// Checks a path and returns it normalised (no trailing slash): it must be `/memories` or
/// under it, with no empty, `.` or `..` part, no backslash and no control character.
pub fn check_path(path: &str) -> Result<String, ToolError> {
    let trimmed = path.trim();
    let normal = trimmed.trim_end_matches('/');
    let normal = if normal.is_empty() { trimmed } else { normal };
    let under_root = normal == ROOT || normal.starts_with(&format!("{ROOT}/"));
    let parts_ok = normal
        .split('/')
        .skip(1)
        .all(|part| !part.is_empty() && part != "." && part != ".." && part.len() <= 255);
    if !under_root
        || !parts_ok
        || normal.contains('\\')
        || normal.chars().any(char::is_control)
        || normal.len() > 1024
    {
        return fail(format!(
            "Error: the path {path} is not allowed: paths are {ROOT} or under it, without `..`"
        ));
    }
    Ok(normal.to_owned())
}

/// Whether `file` is `dir` itself or under it.
pub fn within(file: &str, dir: &str) -> bool {
    file == dir || file.starts_with(&format!("{dir}/"))
}

/// A file as a directory listing shows it: its path, its size and whether it waits for the
/// user's confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The file's path.
    pub path: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Whether the user has yet to confirm it (held by the policy gate).
    pub pending: bool,
}

/// A directory's listing: each file under it, sorted by path.
pub fn render_directory(dir: &str, files: &[Listed]) -> String {
    let mut files: Vec<&Listed> = files.iter().filter(|f| within(&f.path, dir)).collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut out = format!("Here're the files and directories up to 2 levels deep in {dir}:\n");
    for file in files {
        let held = if file.pending { " (awaiting the user's confirmation)" } else { "" };
        out.push_str(&format!("{}\t{}{held}\n", human_size(file.bytes), file.path));
    }
    out
}

fn human_size(bytes: usize) -> String {
    if bytes < 1024 { format!("{bytes}B") } else { format!("{:.1}K", bytes as f64 / 1024.0) }
}

/// A file's lines, numbered from 1 (right-aligned to six places, then a tab), optionally
/// the lines of `range` only.
pub fn render_file(path: &str, text: &str, range: Option<(i64, i64)>) -> Result<String, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let (first, last) = match range {
        None => (1, lines.len()),
        Some((first, last)) => {
            let count = lines.len() as i64;
            let last = if last == -1 { count } else { last };
            if first < 1 || first > count || last < first || last > count {
                return fail(format!(
                    "Error: invalid view_range [{first}, {last}] for {path}: it has {count} lines"
                ));
            }
            (first as usize, last as usize)
        }
    };
    let mut out = format!("Here's the content of {path} with line numbers:\n");
    for (n, line) in lines.iter().enumerate().take(last).skip(first - 1) {
        out.push_str(&format!("{:>6}\t{line}\n", n + 1));
    }
    Ok(out)
}

/// The text with the one occurrence of `old` replaced by `new`.
pub fn replace_once(path: &str, text: &str, old: &str, new: &str) -> Result<String, ToolError> {
    if old.is_empty() {
        return fail("Error: old_str must not be empty");
    }
    match text.matches(old).count() {
        1 => Ok(text.replacen(old, new, 1)),
        0 => fail(format!(
            "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )),
        many => fail(format!(
            "No replacement was performed. Multiple occurrences ({many}) of old_str `{old}` in \
             {path}. Please ensure it is unique"
        )),
    }
}

/// The text with `insert` placed after line `after` (0: before the first line).
pub fn insert_after(path: &str, text: &str, after: i64, insert: &str) -> Result<String, ToolError> {
    let mut lines: Vec<&str> =
        if text.is_empty() { Vec::new() } else { text.split('\n').collect() };
    let count = lines.len() as i64;
    if after < 0 || after > count {
        return fail(format!(
            "Error: invalid insert_line {after} for {path}: it must be between 0 and {count}"
        ));
    }
    let inserted: Vec<&str> = insert.trim_end_matches('\n').split('\n').collect();
    let at = after as usize;
    lines.splice(at..at, inserted);
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_under_the_root() {
        assert_eq!(check_path("/memories/").unwrap(), "/memories");
        assert_eq!(check_path("/memories/notes/a.md").unwrap(), "/memories/notes/a.md");
        for bad in [
            "/etc/passwd",
            "/memories/../x",
            "/memories//a",
            "memories/a",
            "/memoriesx",
            "/memories/./a",
            "/memories/a\\b",
            "/memories/a\u{7}",
        ] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn files_render_with_numbered_lines_and_ranges() {
        let shown = render_file("/memories/a", "one\ntwo\nthree", Some((2, -1))).unwrap();
        assert_eq!(
            shown,
            "Here's the content of /memories/a with line numbers:\n     2\ttwo\n     3\tthree\n"
        );
        assert!(render_file("/memories/a", "one", Some((2, 3))).is_err());
    }

    #[test]
    fn a_directory_lists_the_files_under_it() {
        let files = [
            Listed { path: "/memories/b.md".into(), bytes: 2048, pending: false },
            Listed { path: "/memories/a.md".into(), bytes: 10, pending: true },
            Listed { path: "/memoriesx".into(), bytes: 1, pending: false },
        ];
        let shown = render_directory("/memories", &files);
        assert_eq!(
            shown,
            "Here're the files and directories up to 2 levels deep in /memories:\n10B\t/memories/a.md (awaiting the user's confirmation)\n2.0K\t/memories/b.md\n"
        );
    }

    #[test]
    fn edits_need_one_occurrence_and_a_line_in_range() {
        assert_eq!(replace_once("p", "a b a", "b", "c").unwrap(), "a c a");
        assert!(replace_once("p", "a b a", "a", "c").unwrap_err().0.contains("Multiple"));
        assert!(replace_once("p", "a b", "x", "c").unwrap_err().0.contains("did not appear"));
        assert_eq!(insert_after("p", "one\ntwo", 1, "new\n").unwrap(), "one\nnew\ntwo");
        assert_eq!(insert_after("p", "one", 0, "zero").unwrap(), "zero\none");
        assert_eq!(insert_after("p", "", 0, "first").unwrap(), "first");
        assert!(insert_after("p", "one", 3, "x").is_err());
    }

    #[test]
    fn calls_parse_as_the_model_sends_them() {
        let call: Command = serde_json::from_str(
            r#"{"command": "str_replace", "path": "/memories/a", "old_str": "x", "new_str": "y"}"#,
        )
        .unwrap();
        assert_eq!(
            call,
            Command::StrReplace {
                path: "/memories/a".into(),
                old_str: "x".into(),
                new_str: "y".into()
            }
        );
        let view: Command = serde_json::from_str(
            r#"{"command": "view", "path": "/memories", "view_range": [1, -1]}"#,
        )
        .unwrap();
        assert_eq!(view, Command::View { path: "/memories".into(), view_range: Some((1, -1)) });
        assert!(serde_json::from_str::<Command>(r#"{"command": "format", "path": "/"}"#).is_err());
    }
}
