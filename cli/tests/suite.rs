//! The conformance suite: pcaps/conformance/ is exactly what `gen suite` writes, and every
//! capture there, and every real capture (ROCE_INSPECT_REAL_CAPTURES), gives exactly the
//! findings of its reviewed expect file (`check --expect`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../testdata/real.rs"]
mod real;
use real::real_dir;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn check_expect(capture: &Path, expect: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("check")
        .arg(capture)
        .arg("--expect")
        .arg(expect)
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn suite_is_regenerated_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("roce-suite-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["gen", "suite", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let committed = root().join("pcaps/conformance");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut have: Vec<String> = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    have.sort();
    assert_eq!(
        names, have,
        "pcaps/conformance/ differs from `roce-inspect gen suite`: regenerate and review"
    );
    for n in &names {
        assert_eq!(
            std::fs::read(dir.join(n)).unwrap(),
            std::fs::read(committed.join(n)).unwrap(),
            "{n} changed: regenerate and review"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_suite_capture_gives_its_expected_findings() {
    let dir = root().join("pcaps/conformance");
    let mut n = 0;
    let mut rules_fired = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pcap") {
            let expect = p.with_extension("expect.json");
            let (code, out) = check_expect(&p, &expect);
            assert_eq!(code, 0, "{out}");
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&expect).unwrap()).unwrap();
            for f in v["findings"].as_array().unwrap() {
                rules_fired.insert(f["rule"].as_str().unwrap().to_string());
            }
            n += 1;
        }
    }
    assert!(n >= 25, "{n} suite captures");
    // Every rule of the catalog fires somewhere in the suite, except the checker's own
    // limits (CAP-EVICT, tested with a tiny flow cap), snap-length truncation
    // (CAP-TRUNCATED, needs a snap length the generator does not write) and packets lost
    // between taps (CAP-DROP-BETWEEN: several captures read as one, cli/tests/taps.rs).
    for r in roce_conformance::RULES {
        if matches!(r.id, "CAP-EVICT" | "CAP-TRUNCATED" | "CAP-DROP-BETWEEN") {
            continue;
        }
        assert!(rules_fired.contains(r.id), "no suite capture makes {} fire", r.id);
    }
}

#[test]
fn every_real_capture_gives_its_reviewed_findings() {
    let Some(real) = real_dir() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(root().join("testdata/real-expect")).unwrap() {
        let expect = e.unwrap().path();
        let name = expect
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(".expect.json")
            .to_string();
        let (code, out) = check_expect(&real.join(&name), &expect);
        assert_eq!(code, 0, "{out}");
        n += 1;
    }
    assert!(n >= 23);
}

#[test]
fn expect_reports_a_readable_diff() {
    let dir = root().join("pcaps/conformance");
    // The REQ-PSN capture checked against the clean mix's (empty) expectations.
    let (code, out) =
        check_expect(&dir.join("req-psn-skip.pcap"), &dir.join("clean-rc-mix.expect.json"));
    assert_eq!(code, 1);
    assert!(out.contains("+ unexpected  REQ-PSN") && out.contains("frames 4,6"), "{out}");
    let (code, out) =
        check_expect(&dir.join("clean-rc-mix.pcap"), &dir.join("req-psn-skip.expect.json"));
    assert_eq!(code, 1);
    assert!(out.contains("- missing     REQ-PSN"), "{out}");
}
