//! `stats` and `check` read connections from one model: on every capture under pcaps/ and
//! every real capture, both list the same connection incarnations (names, frames, packets).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "../../testdata/real.rs"]
mod real;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn json(cmd: &str, file: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args([cmd, "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{cmd} {}: {out:?}", file.display());
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{cmd} {}: {e}", file.display()))
}

/// (connection, first frame, last frame, packets) of every listed connection.
fn listed(v: &Value) -> BTreeSet<String> {
    v["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!("{} {} {} {}", c["connection"], c["first_frame"], c["last_frame"], c["packets"])
        })
        .collect()
}

fn captures(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            captures(&p, out);
        } else if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            out.push(p);
        }
    }
}

#[test]
fn stats_and_check_list_the_same_connections() {
    let mut files = Vec::new();
    captures(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps"), &mut files);
    if let Some(dir) = real::real_dir() {
        captures(&dir, &mut files);
    }
    assert!(files.len() > 40, "{} captures", files.len());
    let mut incarnations = 0;
    for f in &files {
        let (s, c) = (listed(&json("stats", f)), listed(&json("check", f)));
        assert_eq!(s, c, "{}: stats and check disagree on the connections", f.display());
        incarnations += s.iter().filter(|l| !l.contains("\"incarnation\":1")).count();
    }
    // The suite's reconnect scenarios give later incarnations.
    assert!(incarnations >= 4, "{incarnations} later incarnations");
}
