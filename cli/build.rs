//! Names the commit the binary is built from, for `--version` (env ROCE_INSPECT_COMMIT):
//! `git rev-parse --short HEAD` when the crate is built inside a git checkout of the project;
//! else the commit cargo recorded when it packaged the crate (`.cargo_vcs_info.json`, what a
//! crates.io build has); else "unknown". Never fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = from_git(&manifest)
        .or_else(|| from_vcs_info(&manifest))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=ROCE_INSPECT_COMMIT={commit}");
}

/// The trimmed output of `git -C dir args`, when git runs and succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn from_git(manifest: &Path) -> Option<String> {
    // Only the project's own checkout (cli/ sits one level below its root): a crate unpacked
    // inside another repository (a home directory kept in git) must not take its commit.
    let top = PathBuf::from(git(manifest, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != manifest.parent()?.canonicalize().ok()? {
        return None;
    }
    let commit = git(manifest, &["rev-parse", "--short", "HEAD"])?;
    // Built again when HEAD moves: HEAD itself (a checkout) and its reflog (a commit).
    if let Some(dir) = git(manifest, &["rev-parse", "--absolute-git-dir"]) {
        for file in ["HEAD", "logs/HEAD"] {
            let path = Path::new(&dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    Some(commit)
}

/// `{"git": {"sha1": "..."}}` of the packaged crate, shortened as git would.
fn from_vcs_info(manifest: &Path) -> Option<String> {
    let info = std::fs::read_to_string(manifest.join(".cargo_vcs_info.json")).ok()?;
    let (_, rest) = info.split_once("\"sha1\"")?;
    let sha: String = rest
        .trim_start_matches(|c: char| c == ':' || c == '"' || c.is_whitespace())
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .take(7)
        .collect();
    (sha.len() == 7).then_some(sha)
}
