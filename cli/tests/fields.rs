//! `dissect -T fields -e FIELD ...` (tshark's habit): each line holds the values the JSON holds
//! for the same frame, tshark prints the same numbers for the fields both decode, and more
//! threads print the same bytes.

use std::process::Command;

use serde_json::Value;

mod common;
use common::shipped::captures;

fn run(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap(),
    )
}

/// `dissect -T fields` with `-e` for each of `fields`, then `rest`.
fn fields_args<'a>(fields: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["dissect", "-T", "fields"];
    for f in fields {
        args.extend(["-e", f]);
    }
    args.extend_from_slice(rest);
    args
}

/// A member of a frame's JSON by its dotted path, as the fields output writes it.
fn at(frame: &Value, path: &str) -> String {
    let mut v = frame;
    for key in path.split('.') {
        v = &v[key];
    }
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

const FIELDS: &[(&str, &str)] = &[
    ("frame", "frame"),
    ("caplen", "caplen"),
    ("eth.src", "eth.src"),
    ("ip.src", "ip.src"),
    ("ip.dst", "ip.dst"),
    ("ip.ecn", "ip.ecn"),
    ("udp.sport", "udp.sport"),
    ("bth.opcode_name", "roce.bth.opcode_name"),
    ("bth.dest_qp", "roce.bth.dest_qp"),
    ("bth.psn", "roce.bth.psn"),
    ("bth.ackreq", "roce.bth.ackreq"),
    ("aeth.syndrome", "roce.aeth.syndrome"),
    ("aeth.kind", "roce.aeth.kind"),
    ("aeth.msn", "roce.aeth.msn"),
    ("reth.va", "roce.reth.va"),
    ("reth.dma_len", "roce.reth.dma_len"),
    ("deth.src_qp", "roce.deth.src_qp"),
    ("icrc.status", "roce.icrc.status"),
    ("payload_len", "roce.payload_len"),
];

/// Every line, on every shipped capture, holds the JSON's values for its frame; the problems
/// are joined by the aggregator; `-E header=y` names the columns.
#[test]
fn each_line_holds_the_jsons_values() {
    let names: Vec<&str> = FIELDS.iter().map(|f| f.0).chain(["problem"]).collect();
    let args = fields_args(&names, &["-E", "header=y", "-E", "aggregator=;"]);
    let mut lines = 0;
    for cap in captures() {
        let c = cap.to_str().unwrap();
        let (jsonl, _, _) = run(&["dissect", "--format", "jsonl", c]);
        let frames: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let (out, err, code) = run(&[&args[..], &[c]].concat());
        assert_eq!(code, 0, "{err}");
        let mut rows = out.lines();
        let header: Vec<&str> = rows.next().unwrap().split('\t').collect();
        assert_eq!(header, names);
        let rows: Vec<&str> = rows.collect();
        assert_eq!(rows.len(), frames.len(), "{c}: one line per frame");
        for (row, frame) in rows.iter().zip(&frames) {
            let cells: Vec<&str> = row.split('\t').collect();
            assert_eq!(cells.len(), FIELDS.len() + 1, "{c}: {row}");
            for ((name, path), cell) in FIELDS.iter().zip(&cells) {
                assert_eq!(*cell, at(frame, path), "{c} frame {}: {name}", frame["frame"]);
            }
            let problems: Vec<String> = frame["problems"]
                .as_array()
                .map(|a| a.iter().map(|p| p["code"].as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            assert_eq!(cells[FIELDS.len()], problems.join(";"), "{c} frame {}", frame["frame"]);
            lines += 1;
        }
    }
    assert!(lines > 1000, "{lines} lines compared");
}

/// tshark -T fields prints the same numbers for the fields both decode (its DestQP is hex).
#[test]
fn same_values_as_tshark() {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true: tshark is required");
        eprintln!("note: tshark not found, skipping the comparison with tshark -T fields");
        return;
    }
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    };
    let mut compared = 0;
    for cap in captures() {
        let c = cap.to_str().unwrap();
        let fields = ["frame", "bth.opcode", "bth.dest_qp", "bth.psn", "udp.sport"];
        let (ours, _, _) = run(&fields_args(&fields, &["-Y", "bth", c]));
        let t = Command::new("tshark")
            .args(["-r", c, "-Y", "infiniband.bth", "-T", "fields", "-e", "frame.number"])
            .args(["-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp"])
            .args(["-e", "infiniband.bth.psn", "-e", "udp.srcport"])
            .output()
            .unwrap();
        assert!(t.status.success(), "tshark: {}", String::from_utf8_lossy(&t.stderr));
        let theirs = String::from_utf8(t.stdout).unwrap();
        let parse = |text: &str| -> Vec<Vec<Option<u64>>> {
            text.lines().map(|l| l.split('\t').map(number).collect()).collect()
        };
        let (a, b) = (parse(&ours), parse(&theirs));
        assert_eq!(a, b, "{c}: dissect -T fields against tshark -T fields");
        compared += a.len();
    }
    assert!(compared > 1000, "{compared} lines");
}

/// Two and three threads print one thread's bytes, the header once; mistakes are refused.
#[test]
fn threads_and_mistakes() {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/sample.pcap");
    let s = sample.to_str().unwrap();
    let args = fields_args(
        &["frame", "bth.psn"],
        &["-E", "header=y", "-E", "quote=d", "-E", "separator=,"],
    );
    let (one, _, _) = run(&[&args[..], &["--threads", "1", s]].concat());
    assert!(one.starts_with("\"frame\",\"bth.psn\"\n\"1\",\"1\"\n"), "{one}");
    for t in ["2", "3"] {
        let (more, _, _) = run(&[&args[..], &["--threads", t, s]].concat());
        assert_eq!(more, one, "--threads {t}");
    }
    // No frame: the header alone.
    let (none, _, code) = run(&[&args[..], &["-Y", "frame == 0", s]].concat());
    assert_eq!((none.as_str(), code), ("\"frame\",\"bth.psn\"\n", 0));
    for (bad, says) in [
        (vec!["dissect", "-T", "fields", s], "at least one -e"),
        (vec!["dissect", "-e", "frame", s], "-e and -E go with -T fields"),
        (vec!["dissect", "-T", "fields", "-e", "bth.pns", s], "did you mean"),
        (vec!["dissect", "-T", "fields", "-e", "aeth", s], "a header, not a value"),
        (vec!["dissect", "-T", "fields", "-e", "frame", "-E", "separator=ab", s], "one character"),
    ] {
        let (_, err, code) = run(&bad);
        assert_eq!(code, 2, "{bad:?}");
        assert!(err.contains(says), "{bad:?}: {err}");
    }
}
