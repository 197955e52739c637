#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! A damaged tap among several (`stats A B`, `check A B`): a file whose header is sound but
//! whose first record is broken is a warning naming it (its frame and byte offset), and the
//! other files are read to their ends: the results are those of the others alone. Only when
//! no file gives a frame is the input unreadable (exit code 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/sample.pcap")
}

/// `pcaps/sample.pcap` with its first record claiming 300,000 bytes (past the 262,144-byte
/// limit of libpcap and Wireshark): damage before the file's first frame, its header sound.
fn damaged(name: &str) -> PathBuf {
    let mut bytes = std::fs::read(sample()).unwrap();
    let big_endian = matches!(bytes[..4], [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d]);
    let len = if big_endian { 300_000u32.to_be_bytes() } else { 300_000u32.to_le_bytes() };
    bytes[32..36].copy_from_slice(&len);
    bytes[36..40].copy_from_slice(&len);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("taps_damage");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn run(args: &[&Path], options: &[&str]) -> Output {
    Command::new(BIN).args(options).args(args).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The one warning a damaged tap gives: its file, frame 1 at byte offset 24, what is wrong,
/// and that the others were read on.
fn assert_names_the_damage(warning: &str, file: &Path) {
    let file = file.display().to_string();
    assert!(warning.starts_with(&format!("{file}: frame 1 at byte offset 24: ")), "{warning}");
    assert!(warning.contains("record length 300000 exceeds the 262144-byte limit"), "{warning}");
    assert!(warning.ends_with("the other captures are read on"), "{warning}");
}

#[test]
fn a_tap_broken_before_its_first_frame_is_a_warning_and_the_others_are_read() {
    let s = sample();
    let bad = damaged("tap2.pcap");
    // Alone, the damaged file is unreadable.
    let out = run(&[&bad], &["stats"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));

    for files in [[&s, &bad], [&bad, &s]] {
        let files: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
        // stats: the sample's document, the warning, and the damaged tap without frames.
        let alone = json(&run(&[&s], &["stats", "--format", "json"]));
        let out = run(&files, &["stats", "--format", "json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let doc = json(&out);
        let members = doc.as_object().unwrap();
        for (key, value) in members {
            if key != "warnings" && key != "taps" {
                assert_eq!(value, &alone[key], "stats member {key}");
            }
        }
        assert_eq!(members.len(), alone.as_object().unwrap().len() + 1, "only taps added");
        let warnings = doc["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_names_the_damage(warnings[0].as_str().unwrap(), &bad);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert_names_the_damage(lines[0].strip_prefix("roce-inspect: warning: ").unwrap(), &bad);
        let taps = doc["taps"]["taps"].as_array().unwrap();
        let frames: Vec<(String, u64)> = taps
            .iter()
            .map(|t| (t["file"].as_str().unwrap().to_string(), t["frames"].as_u64().unwrap()))
            .collect();
        let want: Vec<(String, u64)> = files
            .iter()
            .map(|f| (f.display().to_string(), if *f == bad { 0 } else { 39 }))
            .collect();
        assert_eq!(frames, want);

        // check: the sample's findings, summary and connections; the warning; exit code as
        // the sample's alone (a warning does not change it).
        let alone_out = run(&[&s], &["check", "--format", "json"]);
        let alone = json(&alone_out);
        let out = run(&files, &["check", "--format", "json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), alone_out.status.code(), "{stderr}");
        let doc = json(&out);
        for key in ["findings", "summary", "connections"] {
            assert_eq!(doc[key], alone[key], "check member {key}");
        }
        let warnings = doc["capture_warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_names_the_damage(warnings[0].as_str().unwrap(), &bad);

        // check's text: the sample's frames, the warning under them.
        let out = run(&files, &["check"]);
        assert_eq!(out.status.code(), alone_out.status.code());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.lines().next().unwrap().contains(": 39 frames, 39 RoCE"), "{text}");
        let warning = text.lines().find_map(|l| l.strip_prefix("warning: ")).unwrap();
        assert_names_the_damage(warning, &bad);
    }
}

#[test]
fn taps_that_give_no_frame_are_unreadable() {
    let a = damaged("broken-a.pcap");
    let b = damaged("broken-b.pcap");
    // The first damage met is a warning, the last one the error: nothing could be read.
    let out = run(&[&a, &b], &["stats"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_names_the_damage(lines[0].strip_prefix("roce-inspect: warning: ").unwrap(), &a);
    let error = lines[1].strip_prefix("roce-inspect: error: ").unwrap();
    assert!(error.starts_with(&format!("{}: frame 1 at byte offset 24: ", b.display())), "{error}");
    assert!(!error.contains("read on"), "{error}");
}
