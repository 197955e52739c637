//! The project does not point outside its checkout: no tracked file but `.ci/run` (which sets
//! ROCE_INSPECT_REAL_CAPTURES for CI) names the folder beside it. The real captures are found
//! through that variable only, so a fresh clone alone builds, tests and documents itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Split so that this file does not hold it.
const NEEDLE: &str = concat!("..", "/shared");

/// The only file allowed to name it.
const ALLOWED: &[&str] = &[".ci/run"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The tracked files (`git ls-files`), or, outside a git checkout, every file under the root
/// but `target/` and `.git`.
fn project_files(root: &Path) -> Vec<String> {
    let git = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output();
    if let Some(out) = git.ok().filter(|o| o.status.success()) {
        return String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
    }
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == "target" || rel.ends_with(".git") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// The line numbers of `file` that hold the needle.
fn hits(file: &[u8]) -> Vec<usize> {
    file.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| line.windows(NEEDLE.len()).any(|w| w == NEEDLE.as_bytes()))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn no_tracked_file_points_beside_the_checkout() {
    let root = root();
    let files = project_files(&root);
    assert!(files.len() > 50, "found only {} project files", files.len());
    assert!(files.iter().any(|f| f == "README.md"), "README.md not among the project files");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !ALLOWED.contains(&f.as_str())) {
        // Deleted but not yet staged files are listed by git and gone from the disk.
        let Ok(bytes) = std::fs::read(root.join(f)) else { continue };
        for line in hits(&bytes) {
            found.push(format!("{f}:{line}"));
        }
    }
    assert!(
        found.is_empty(),
        "{NEEDLE} named outside .ci/run (the real captures are found through \
         ROCE_INSPECT_REAL_CAPTURES):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_search_finds_what_it_looks_for() {
    assert_eq!(hits(format!("a\nsee {NEEDLE}/pcaps\nb {NEEDLE}\n").as_bytes()), [2, 3]);
    assert!(hits(b"wasm-bindgen-shared\nshared library\n").is_empty());
}

/// The design notes the project started from (written beside the checkout, not in it) are
/// not pointed at: what users and contributors need is in docs/, in the project's words.
#[test]
fn no_tracked_file_points_at_notes_that_are_not_in_the_repository() {
    let root = root();
    // Split so that this file does not hold them.
    let notes: Vec<String> =
        ["SPEC", "DESIGN", "RULES", "CM", "STYLE"].iter().map(|n| format!("{n}.md")).collect();
    let mut found = Vec::new();
    for f in project_files(&root) {
        // The CHANGELOG tells history, which may name what was.
        if f == "CHANGELOG.md" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&f)) else { continue };
        for (i, line) in text.lines().enumerate() {
            for n in &notes {
                // A whole word, not a path: the rule catalog under docs/ is not the note.
                let hit = line.match_indices(n.as_str()).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '/')
                });
                if hit && !root.join(n).exists() {
                    found.push(format!("{f}:{}: {n}", i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "files not in the repository named:\n  {}", found.join("\n  "));
}
