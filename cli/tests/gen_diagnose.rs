//! `gen diagnose`: every diagnosis scenario's capture and verdicts file are written, each
//! capture decodes cleanly, and its symptom is on the wire as `stats` and `dissect` see it
//! (the ground truth the `diagnose` command is tested against must itself be true).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::internal::gen::diagnose::scenarios;
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn run_json(args: &[&str], pcap: &Path) -> Value {
    let out = bin().args(args).arg(pcap).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn dissect(pcap: &Path) -> Vec<Value> {
    let out = bin().args(["dissect", "--format", "jsonl"]).arg(pcap).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The RC connections of `stats --format json`.
fn rc(stats: &Value) -> Vec<&Value> {
    stats["connections"].as_array().unwrap().iter().filter(|c| c["transport"] == "RC").collect()
}

/// The RC connection whose a end is `qpn_a` (or, with no CM, whose b end is `qpn_b`).
fn conn(stats: &Value, qpn_a: u64, qpn_b: u64) -> &Value {
    rc(stats)
        .into_iter()
        .find(|c| c["connection"]["qpn_a"] == qpn_a || c["connection"]["qpn_b"] == qpn_b)
        .unwrap()
}

/// How many times each (PSN, opcode) of a non-CM request was sent from `src`; the largest.
fn most_sent(frames: &[Value], src: &str) -> u64 {
    let mut n: HashMap<(u64, u64), u64> = HashMap::new();
    for f in frames {
        let bth = &f["roce"]["bth"];
        let op = bth["opcode"].as_u64().unwrap();
        if f["ip"]["src"] == src && bth["dest_qp"] != 1 && op <= 0x14 && op != 0x11 {
            *n.entry((bth["psn"].as_u64().unwrap(), op)).or_default() += 1;
        }
    }
    n.into_values().max().unwrap_or(0)
}

fn cm_outcomes(stats: &Value) -> Vec<&str> {
    stats["cm_connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect()
}

fn naks(c: &Value, kind: &str) -> u64 {
    c["naks"][kind].as_u64().unwrap()
}

fn total_naks(c: &Value) -> u64 {
    c["naks"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum()
}

#[test]
fn every_scenario_is_written_and_shows_its_symptom() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("roce-gen-diagnose-{}", std::process::id()));
    let out = bin().args(["gen", "diagnose", "-o"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all = scenarios();
    assert_eq!(all.len(), 18);
    for s in &all {
        let pcap = dir.join(format!("{}.pcap", s.name));
        let vj = dir.join(format!("{}.verdicts.json", s.name));
        assert!(pcap.is_file(), "{}", pcap.display());
        let v: Value = serde_json::from_slice(&std::fs::read(&vj).unwrap()).unwrap();
        assert_eq!(v, s.verdicts_json(), "{}", s.name);
        assert_eq!(v["scenario"], s.name);
        assert!(
            !s.verdicts.is_empty() && v["verdicts"].as_array().unwrap().len() == s.verdicts.len()
        );
        assert!(s.trace.frames.len() < 2000, "{}: {} frames", s.name, s.trace.frames.len());

        let st = run_json(&["stats", "--format", "json"], &pcap);
        let frames = st["frames"].as_u64().unwrap();
        assert_eq!(frames, s.trace.frames.len() as u64, "{}", s.name);
        assert_eq!(st["undecoded_frames"], 0, "{}", s.name);
        assert_eq!(st["icrc"]["ok"], frames, "{}: {}", s.name, st["icrc"]);
        assert_eq!(st["problems"], serde_json::json!([]), "{}", s.name);
        symptom(s.name, &st, &pcap);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scenario's symptom, as `stats` (and `dissect` where stats does not count it) shows it.
fn symptom(name: &str, st: &Value, pcap: &Path) {
    let (a, b) = (0x1234, 0x5678);
    match name {
        "healthy" => {
            let c = conn(st, a, b);
            assert_eq!(total_naks(c) + c["rnr_naks"].as_u64().unwrap(), 0);
            assert_eq!((c["retransmissions"].as_u64(), c["cnps"].as_u64()), (Some(0), Some(0)));
            assert_eq!(c["ecn_ce"], 0);
            assert!(c["messages"].as_u64().unwrap() >= 30);
            assert_eq!(cm_outcomes(st), ["disconnected"]);
        }
        "unanswered" => {
            let frames = dissect(pcap);
            assert!(frames.iter().all(|f| f["ip"]["src"] == "10.0.0.1"), "the peer sent something");
            assert!(frames.iter().all(|f| f["roce"]["bth"]["dest_qp"] != 1), "no CM");
            assert_eq!(most_sent(&frames, "10.0.0.1"), 8);
            assert!(st["cm_connections"].as_array().unwrap().is_empty());
            let c = conn(st, a, b);
            assert_eq!(c["timing"]["timeout_retransmissions"].as_array().unwrap().len(), 7);
        }
        "retry_exhausted_rc7" | "retry_exhausted_rc3" => {
            let retry = if name.ends_with('7') { 7 } else { 3 };
            let cms = st["cm_connections"].as_array().unwrap();
            assert!(cms.iter().all(|c| c["retry_count"] == retry), "{cms:?}");
            let c = conn(st, a, b);
            assert_eq!(c["timing"]["negotiated"]["retry_count"], retry);
            assert_eq!(c["timing"]["negotiated"]["max_timeout_retry"], retry);
            assert_eq!(
                c["timing"]["timeout_retransmissions"].as_array().unwrap().len() as u64,
                retry
            );
            assert!(c["acks"].as_u64().unwrap() >= 10, "data was ACKed first");
            assert_eq!(most_sent(&dissect(pcap), "10.0.0.1"), retry + 1);
            if retry == 3 {
                // The bystander goes on after the failure, healthy.
                let d = conn(st, 0x1236, 0x789a);
                assert_eq!(d["retransmissions"], 0);
                assert!(d["last_frame"].as_u64() > c["last_frame"].as_u64());
            }
        }
        "lossy_path" => {
            let c = conn(st, a, b);
            assert!(naks(c, "psn_sequence_error") >= 5, "{}", c["naks"]);
            assert_eq!(total_naks(c), naks(c, "psn_sequence_error"));
            assert!(c["retransmissions"].as_u64().unwrap() >= 5);
            assert!(c["timing"]["timeout_retransmissions"].as_array().unwrap().is_empty());
            assert_eq!(c["messages"], 60);
        }
        "congested" | "cnp_no_reduction" => {
            let c = conn(st, a, b);
            assert_eq!(c["cnps"], 4);
            assert!(c["congestion"]["ce_marked"].as_u64().unwrap() >= 4);
            let r = &c["congestion"]["rate_before_after_cnp"];
            assert_eq!(r["reactions"], 4);
            assert_eq!(r["slowed"], if name == "congested" { 4 } else { 0 }, "{r}");
        }
        "ce_without_cnp" => {
            let c = conn(st, a, b);
            assert_eq!(c["congestion"]["ce_marked"], 12);
            assert_eq!(c["cnps"], 0);
        }
        "not_ect" => {
            let frames = dissect(pcap);
            let data: Vec<&Value> =
                frames.iter().filter(|f| f["ip"]["src"] == "10.0.0.1").collect();
            assert_eq!(data.len(), 200);
            assert!(data.iter().all(|f| f["ip"]["ecn"] == 0));
            assert_eq!(conn(st, a, b)["ecn_ce"], 0);
        }
        "rnr_storm" => {
            let c = conn(st, a, b);
            assert!(c["rnr_naks"].as_u64().unwrap() > 10);
            assert_eq!(c["timing"]["negotiated"]["rnr_retry_count"], 7);
            assert_eq!(total_naks(c), 0);
        }
        "remote_access_error" => {
            let c = conn(st, a, b);
            assert_eq!(naks(c, "remote_access_error"), 1);
            assert_eq!(total_naks(c), 1);
            // The NAKed PSN is the WRITE_FIRST carrying the offending RETH.
            let frames = dissect(pcap);
            let nak = frames.iter().find(|f| f["roce"]["aeth"]["kind"] == "nak").unwrap();
            let psn = &nak["roce"]["bth"]["psn"];
            let first = frames
                .iter()
                .find(|f| f["roce"]["bth"]["psn"] == *psn && f["roce"]["reth"].is_object())
                .unwrap();
            let reth = &first["roce"]["reth"];
            assert_eq!(reth["va"], "0x00007f00dead0000");
            assert_eq!(
                (reth["rkey"].as_u64(), reth["dma_len"].as_u64()),
                (Some(0x1234), Some(65536))
            );
        }
        "rejected" => assert_eq!(cm_outcomes(st), ["rejected"]),
        "req_without_rep" => {
            assert_eq!(cm_outcomes(st), ["requested"]);
            let reqs =
                dissect(pcap).iter().filter(|f| f["roce"]["cm"]["attribute"] == "REQ").count();
            assert_eq!(reqs, 3);
        }
        "rep_without_rtu" => assert_eq!(cm_outcomes(st), ["replied"]),
        "cascade" => {
            let conns = rc(st);
            assert_eq!(conns.len(), 41);
            let first = conn(st, 0x1000, 0x2000);
            assert_eq!(first["timing"]["timeout_retransmissions"].as_array().unwrap().len(), 7);
            assert_eq!(total_naks(first), 0);
            let flushed = conns.iter().filter(|c| naks(c, "remote_operational_error") == 1).count();
            assert_eq!(flushed, 40);
            // Every NAK within 40 ms of #0's first unanswered transmission.
            let frames = dissect(pcap);
            let ts = |f: &Value| -> f64 { f["ts"].as_str().unwrap().parse().unwrap() };
            let sent0: Vec<&Value> = frames
                .iter()
                .filter(|f| {
                    f["roce"]["bth"]["dest_qp"] == 0x2000 && f["roce"]["bth"]["opcode"] == 0x0a
                })
                .collect();
            let start = ts(sent0[sent0.len() - 8]);
            for f in frames.iter().filter(|f| f["roce"]["aeth"]["kind"] == "nak") {
                let dt = ts(f) - start;
                assert!(dt > 0.0 && dt < 0.040, "NAK {dt} s after the first failure");
            }
        }
        "one_udp_port" => {
            let frames = dissect(pcap);
            let from_a: Vec<&Value> =
                frames.iter().filter(|f| f["ip"]["src"] == "10.0.0.1").collect();
            assert!(from_a.iter().all(|f| f["udp"]["sport"] == 49152), "one source port");
            assert_eq!(rc(st).len(), 8);
            assert!(rc(st).iter().all(|c| c["retransmissions"] == 0 && total_naks(c) == 0));
        }
        "cnp_dscp_and_acks_at_zero" => {
            let frames = dissect(pcap);
            let dscp = |src: &str, op: Option<u64>| -> Vec<u64> {
                let mut v: Vec<u64> = frames
                    .iter()
                    .filter(|f| f["ip"]["src"] == src && f["roce"]["bth"]["dest_qp"] != 1)
                    .filter(|f| op.is_none_or(|o| f["roce"]["bth"]["opcode"] == o))
                    .map(|f| f["ip"]["dscp"].as_u64().unwrap())
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            assert_eq!(dscp("10.0.0.1", None), [26]);
            assert_eq!(dscp("10.0.0.2", Some(0x81)), [5], "CNPs at DSCP 5");
            assert_eq!(dscp("10.0.0.2", Some(0x11)), [0], "ACKs at DSCP 0");
            assert_eq!(conn(st, a, b)["cnps"], 4);
        }
        "cm_qpn_mismatch" => {
            assert_eq!(cm_outcomes(st), ["established"]);
            let data = conn(st, a + 1, b + 1);
            assert!(data["acks"].as_u64().unwrap() > 0 && data["retransmissions"] == 0);
            let cm_qps = rc(st).into_iter().filter(|c| c["connection"]["qpn_a"] == a);
            assert!(cm_qps.into_iter().all(|c| c["packets"] == 0), "nothing on the CM QPs");
        }
        other => panic!("no symptom check for {other}"),
    }
}
