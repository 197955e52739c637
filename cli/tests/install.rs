//! What an installed roce-inspect offers beside its commands: shell completions and manual
//! pages generated from its clap definition, and a `--version` that says what was built.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const SUBCOMMANDS: [&str; 7] = ["dissect", "stats", "check", "rules", "gen", "completions", "man"];

#[test]
fn bash_completions_know_every_subcommand_and_option() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(
        script.contains("complete -F _roce__inspect") && script.contains(" roce-inspect"),
        "not a bash completion script for roce-inspect"
    );
    for sub in SUBCOMMANDS {
        assert!(script.contains(sub), "bash completions do not mention {sub}");
    }
    for opt in ["--format", "--frames", "--assume-complete", "--retx-timeout", "--write-expect"] {
        assert!(script.contains(opt), "bash completions do not mention {opt}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(stdout_of(&["completions", shell]).contains("dissect"), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_pages_render_as_roff() {
    let page = stdout_of(&["man"]);
    assert!(page.starts_with(".ie") || page.contains("\n.TH"), "no roff header:\n{page}");
    assert!(page.contains(".TH roce-inspect 1"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(page.contains(sub), "the man page does not list {sub}");
    }
    // A page per subcommand, with its options.
    for sub in SUBCOMMANDS {
        let page = stdout_of(&["man", sub]);
        assert!(page.contains(&format!(".TH roce-inspect-{sub} 1")), "{page}");
        assert!(page.contains(&format!("roce\\-inspect {}", sub.replace('-', "\\-"))), "{page}");
    }
    let dissect = stdout_of(&["man", "dissect"]);
    assert!(dissect.contains("\\-\\-format") && dissect.contains("\\-\\-frames"), "{dissect}");
    let out = run(&["man", "no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no subcommand 'no-such-command'"));
}

#[test]
fn version_names_the_commit_and_the_features() {
    let v = stdout_of(&["--version"]);
    let line = v.trim_end();
    let rest = line
        .strip_prefix(&format!("roce-inspect {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, features) = rest.split_once(", roce-parser features: ").expect(line);
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{line}"
    );
    // roce-inspect always builds roce-parser with std.
    assert!(features.strip_suffix(')').unwrap().split(", ").any(|f| f == "std"), "{line}");
    // In a git checkout of the project, the commit is HEAD's (the binary is built from it).
    let head = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap());
    if let Some(head) = head {
        assert!(head.starts_with(commit), "--version says {commit}, HEAD is {head}");
    }
}
