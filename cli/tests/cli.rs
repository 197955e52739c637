//! The built binary on real captures, the project's sample, and damaged files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../../testdata/real.rs"]
mod real;
use real::{ground_truth, real_dir};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn stats_and_dissect_agree_with_ground_truth_on_every_real_capture() {
    let Some(dir) = real_dir() else { return };
    let truth = ground_truth(&dir);
    assert!(truth.len() >= 20);
    for (name, t) in truth {
        let path = dir.join(&name);
        let p = path.to_str().unwrap();
        let s: Value = serde_json::from_str(&stdout_of(&["stats", "--format", "json", p])).unwrap();
        assert_eq!(s["frames"], t[0], "{name} frames");
        assert_eq!(s["roce_frames"], t[1] + t[2], "{name} RoCE frames");
        assert_eq!(s["rocev2_frames"], t[1], "{name}");
        assert_eq!(s["rocev1_frames"], t[2], "{name}");
        // The README's ICRC columns count RoCE frames; the native InfiniBand packets of the
        // ERF captures (every one verified: parser/tests/real_captures.rs) are beside them.
        let ib = s["infiniband_frames"].as_u64().unwrap_or(0);
        assert_eq!(ib > 0, name.contains("ib2") || name.contains("infiniband"), "{name}");
        assert_eq!(
            [&s["icrc"]["ok"], &s["icrc"]["bad"], &s["icrc"]["unverifiable"]],
            [t[3] + ib, t[4], t[5]],
            "{name} ICRC ok/bad/unverifiable"
        );

        // dissect --format jsonl: one line per frame, frames numbered 1..n, and the same
        // opcode histogram as stats.
        let lines = stdout_of(&["dissect", "--format", "jsonl", p]);
        let mut hist: BTreeMap<String, u64> = BTreeMap::new();
        let mut n = 0;
        for (i, line) in lines.lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["frame"], i as u64 + 1, "{name}");
            n += 1;
            if let Some(name) = v["roce"]["bth"]["opcode_name"].as_str() {
                *hist.entry(name.to_string()).or_default() += 1;
            }
        }
        assert_eq!(n, t[0], "{name}: one line per frame");
        let stats_hist: BTreeMap<String, u64> = s["opcodes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(hist, stats_hist, "{name}: opcode histogram");
    }
}

#[test]
fn sample_is_reproducible_and_matches_its_golden_stats() {
    let root = root();
    let tmp = std::env::temp_dir().join(format!("roce-inspect-sample-{}.pcap", std::process::id()));
    stdout_of(&["gen", "sample", "-o", tmp.to_str().unwrap()]);
    let committed = std::fs::read(root.join("pcaps/sample.pcap")).unwrap();
    assert_eq!(
        std::fs::read(&tmp).unwrap(),
        committed,
        "gen sample no longer reproduces pcaps/sample.pcap"
    );
    let _ = std::fs::remove_file(&tmp);

    let got: Value = serde_json::from_str(&stdout_of(&[
        "stats",
        "--format",
        "json",
        root.join("pcaps/sample.pcap").to_str().unwrap(),
    ]))
    .unwrap();
    let golden: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("pcaps/sample.stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(got, golden, "stats output changed: review and regenerate pcaps/sample.stats.json");
    // What the sample is for: every kind of event the README promises.
    let conn = &got["connections"][0];
    assert_eq!(conn["paired_by"], "cm");
    assert_eq!(conn["naks"]["psn_sequence_error"], 1);
    assert_eq!(conn["rnr_naks"], 1);
    assert_eq!(conn["cnps"], 1);
    assert_eq!(conn["retransmissions"], 3);
    assert_eq!(got["cm_connections"][0]["outcome"], "disconnected");
}

#[test]
fn dissect_text_verbose_and_filters() {
    let sample = root().join("pcaps/sample.pcap");
    let p = sample.to_str().unwrap();
    let text = stdout_of(&["dissect", p]);
    assert_eq!(text.lines().count(), 39);
    assert!(
        text.lines().nth(21).unwrap().contains("RC_ACKNOWLEDGE")
            && text.contains("NAK: PSN sequence error")
    );
    let v = stdout_of(&["dissect", "-V", "--frames", "27", p]);
    assert!(v.contains("AETH: syndrome 0x21: RNR NAK, 0.01 ms"), "{v}");
    assert!(v.contains("CNP") || !v.contains("Frame 32"));
    let acks = stdout_of(&["dissect", "--format", "jsonl", "--opcode", "rc_acknowledge", p]);
    assert_eq!(acks.lines().count(), 9);
    let cnp = stdout_of(&["dissect", "--format", "json", "--opcode", "0x81", p]);
    let arr: Value = serde_json::from_str(&cnp).unwrap();
    assert_eq!(arr.as_array().unwrap().len(), 1);
    assert_eq!(arr[0]["roce"]["bth"]["becn"], true);
    assert_eq!(arr[0]["roce"]["payload_len"], 16);
    let range = stdout_of(&["dissect", "--format", "jsonl", "--frames", "10-12", p]);
    assert_eq!(range.lines().count(), 3);
    // Reading from stdin gives the same as the file.
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["dissect", "-"])
        .stdin(std::fs::File::open(&sample).unwrap())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
}

#[test]
fn damaged_input_exit_codes_and_messages() {
    let dir = root().join("testdata/capture");
    // Nothing readable: exit 2 with the file named.
    for name in ["bad_magic.pcap", "truncated_file_header.pcap"] {
        let out = run(&["stats", dir.join(name).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name), "{name}: {err}");
    }
    // Damage after some frames: exit 0, frames before it kept, a warning naming frame and offset.
    let out =
        run(&["dissect", "--format", "jsonl", dir.join("record_past_end.pcap").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("record_past_end.pcap") && err.contains("frame"),
        "{err}"
    );
    assert!(err.contains("offset"), "{err}");
    assert!(!out.stdout.is_empty(), "frames before the damage are still reported");
    // A missing file.
    let out = run(&["stats", "/nonexistent/x.pcap"]);
    assert_eq!(out.status.code(), Some(2));
    // A wrong command line.
    assert_eq!(run(&["dissect", "--opcode", "NOT_AN_OPCODE", "x"]).status.code(), Some(2));
}

#[test]
fn damaged_mads_are_problems_not_panics() {
    use roce_inspect::internal::gen::conn::{ud_send, Endpoint};
    use roce_inspect::internal::gen::Trace;
    let a = Endpoint::new("10.7.0.1".parse().unwrap(), 1);
    let b = Endpoint::new("10.7.0.2".parse().unwrap(), 1);
    let mut good = [0u8; 256];
    good[0] = 1; // base version
    good[1] = 0x07; // CM
    good[2] = 2; // class version
    good[3] = 0x03; // Send
    good[17] = 0x10; // REQ
    let mut t = Trace::new();
    ud_send(&mut t, &a, &b, 0x8001_0000, 1, &good[..100], None); // 1: short MAD
    let mut bad_version = good;
    bad_version[2] = 9;
    ud_send(&mut t, &a, &b, 0x8001_0000, 2, &bad_version, None); // 2: unknown class version
    let mut bad_attr = good;
    bad_attr[17] = 0x77;
    ud_send(&mut t, &a, &b, 0x8001_0000, 3, &bad_attr, None); // 3: unknown attribute
    let path = std::env::temp_dir().join(format!("roce-bad-mads-{}.pcap", std::process::id()));
    t.write_pcap(std::fs::File::create(&path).unwrap()).unwrap();
    let out = stdout_of(&["dissect", "--format", "jsonl", path.to_str().unwrap()]);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let has = |i: usize, code: &str| {
        lines[i]["problems"].as_array().unwrap().iter().any(|p| {
            p["code"] == code
                && p["message"] == roce_parser::Problem::from_code(code).unwrap().message()
        })
    };
    assert!(has(0, "mad_truncated"), "{}", lines[0]);
    assert!(has(1, "mad_unknown_version"), "{}", lines[1]);
    assert!(has(2, "mad_unknown_attribute"), "{}", lines[2]);
    assert_eq!(lines[0]["roce"]["cm"]["class"], "CM");
    let _ = std::fs::remove_file(&path);
}

/// The JSON contract, byte for byte: `dissect --format jsonl` on the sample (CM, every
/// extended header the sample holds, VLAN-free IPv4 and IPv6, a NAK, a CNP, problems) equals
/// the reviewed golden file, and `--format json` holds the same objects.
#[test]
fn dissect_json_matches_its_golden_file() {
    let root = root();
    let sample = root.join("pcaps/sample.pcap");
    let got = stdout_of(&["dissect", "--format", "jsonl", sample.to_str().unwrap()]);
    let golden = std::fs::read_to_string(root.join("pcaps/sample.dissect.jsonl")).unwrap();
    assert_eq!(
        got, golden,
        "dissect JSON changed: review and regenerate pcaps/sample.dissect.jsonl"
    );

    let array: Value = serde_json::from_str(&stdout_of(&[
        "dissect",
        "--format",
        "json",
        sample.to_str().unwrap(),
    ]))
    .unwrap();
    let lines: Vec<Value> = golden.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(array.as_array().unwrap(), &lines);
}
