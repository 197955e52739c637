#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The checker on native InfiniBand: every capture of the conformance suite (and the sample)
//! rewritten as a routed InfiniBand fabric carries it (`gen::to_native_ib`: LRH, a GRH with
//! the IP addresses as GIDs, the same transport, new ICRC and VCRC, in a DLT_INFINIBAND
//! capture) gives the findings of the RoCE capture, rule for rule and frame for frame, and
//! the same connections; `gen sample --native-ib` writes the sample so.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn json(args: &[&str]) -> Value {
    let out = Command::new(BIN).args(args).output().unwrap();
    // `check` exits 1 when it found errors: the document is still the answer.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A nanosecond pcap of link type 247 holding `frames` with their times.
fn write_ib_pcap(path: &Path, frames: &[(u64, Vec<u8>)]) {
    let mut f = vec![0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&247u32.to_le_bytes());
    for (ts, b) in frames {
        f.extend_from_slice(&((ts / 1_000_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&((ts % 1_000_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&(b.len() as u32).to_le_bytes());
        f.extend_from_slice(&(b.len() as u32).to_le_bytes());
        f.extend_from_slice(b);
    }
    std::fs::write(path, f).unwrap();
}

/// The capture as native InfiniBand, or `None` when a frame is not RoCEv2 (frame numbers
/// would shift).
fn as_native_ib(path: &Path) -> Option<PathBuf> {
    let mut cap = roce_capture::open(path).unwrap();
    let mut frames = Vec::new();
    let mut out = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        if !roce_inspect::internal::gen::to_native_ib(f.data, &mut out) {
            return None;
        }
        frames.push((f.ts_ns, out.clone()));
    }
    let ib = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ib-{}", path.file_name().unwrap().to_string_lossy()));
    write_ib_pcap(&ib, &frames);
    Some(ib)
}

/// (rule, frames, PSN) of each finding, and the checker's counts.
fn findings(doc: &Value) -> (Vec<(String, Value, Value)>, Value, Value) {
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["frames"].clone(), f["psn"].clone()))
        .collect();
    (f, doc["summary"]["errors"].clone(), doc["summary"]["warnings"].clone())
}

/// What a connection is, beside its addresses (GIDs on one side, IPs on the other).
fn connections(doc: &Value) -> Vec<String> {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let keep = [
                "transport",
                "paired_by",
                "pmtu",
                "packets",
                "retransmissions",
                "naks",
                "began",
                "ended",
                "first_frame",
                "last_frame",
            ];
            keep.iter().map(|k| format!("{k}={}", c[*k])).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn the_conformance_suite_as_native_infiniband_gives_the_same_findings() {
    let dir = root().join("pcaps/conformance");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    paths.sort();
    paths.push(root().join("pcaps/sample.pcap"));
    let (mut compared, mut with_findings, mut total_findings) = (0, 0, 0);
    for path in &paths {
        let Some(ib) = as_native_ib(path) else { continue };
        let (p, i) = (path.to_str().unwrap(), ib.to_str().unwrap());
        let roce = json(&["check", "--format", "json", p]);
        let native = json(&["check", "--format", "json", i]);
        assert_eq!(findings(&native), findings(&roce), "{p}");
        assert_eq!(connections(&native), connections(&roce), "{p}");
        assert_eq!(native["summary"]["infiniband_frames"], roce["summary"]["roce_frames"], "{p}");
        assert!(native["summary"].get("infiniband_unmodelled").is_none(), "{p}: routed, modelled");
        compared += 1;
        let n = roce["findings"].as_array().unwrap().len();
        with_findings += usize::from(n > 0);
        total_findings += n;
        std::fs::remove_file(ib).unwrap();
    }
    println!("{compared} captures as native InfiniBand, {with_findings} with findings ({total_findings} findings), the same as RoCE");
    assert!(
        compared >= 60 && with_findings >= 30,
        "{compared} captures, {with_findings} with findings"
    );
}

#[test]
fn gen_sample_native_ib_is_the_sample_on_infiniband() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gen-sample-ib.pcap");
    let s = Command::new(BIN)
        .args(["gen", "sample", "--native-ib", "-o", out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(s.success());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(root().join("pcaps/sample-ib.pcap")).unwrap(),
        "gen sample --native-ib no longer reproduces pcaps/sample-ib.pcap"
    );
    let sample = root().join("pcaps/sample.pcap");
    let roce = json(&["stats", "--format", "json", sample.to_str().unwrap()]);
    let native = json(&["stats", "--format", "json", out.to_str().unwrap()]);
    assert_eq!(native["infiniband_frames"], roce["roce_frames"]);
    assert_eq!(
        (&native["icrc"]["ok"], &native["roce_frames"]),
        (&roce["icrc"]["ok"], &Value::from(0))
    );
    assert_eq!(connections(&native), connections(&roce));
    assert_eq!(native["opcodes"], roce["opcodes"]);
    // Every frame: the LRH's LIDs from the addresses, a GRH, both CRCs ok.
    let lines = Command::new(BIN)
        .args(["dissect", "--format", "jsonl", out.to_str().unwrap()])
        .output()
        .unwrap();
    for l in String::from_utf8(lines.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["lrh"]["lnh_name"], "iba_global", "{l}");
        assert_eq!(v["vcrc"]["status"], "ok");
        assert_eq!(v["roce"]["icrc"]["status"], "ok");
    }
    // --native-ib and --mirror are one or the other.
    let both = Command::new(BIN)
        .args(["gen", "sample", "--native-ib", "--mirror", "vxlan", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!both.status.success());
}
