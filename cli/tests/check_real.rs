//! `roce-inspect check` on every real capture: no error other than the ICRC and length
//! findings on the frames the captures' README lists as bad or unverifiable; the known
//! capture defects (docs/rules.md) show up as capture-integrity warnings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

#[path = "../../testdata/real.rs"]
mod real;
use real::real_dir;

fn check(path: &std::path::Path) -> (Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["check", "--format", "json", path.to_str().unwrap()])
        .output()
        .unwrap();
    (serde_json::from_slice(&out.stdout).unwrap(), out.status.code().unwrap())
}

/// Real faults the checker finds in the real captures, each reviewed by hand:
/// (file, rule, frames of each finding, why).
const REAL_FINDINGS: &[(&str, &str, &[&[u64]], &str)] = &[
    (
        "sanderw71_SoftRoce_rping_3072_faillire.pcapng",
        "REQ-PSN",
        &[&[66, 70]],
        // The READ in frame 66 asks for 3072 bytes at PMTU 1024 (CM): it consumes PSNs
        // 4445926..4445928, and the responder answers on exactly those (frames 67-69). The
        // requester's next SEND (frame 70) reuses 4445928: the failure the file is named for.
        "SEND reuses the last PSN of a 3-PSN READ",
    ),
    (
        "sanderw71_SoftRoce_rping_3072_faillire.pcapng",
        "RSP-DUP",
        &[&[70, 71]],
        // To the responder that SEND is a duplicate of PSN 4445928 (its READ range); C9-105
        // wants an ACK of ePSN - 1 = 4445928, it sends PSN 0xFFFFFF.
        "duplicate acknowledged with PSN 0xFFFFFF",
    ),
    (
        "sanderw71_SoftRoce_RoCE_capture_10_packets.pcapng",
        "RSP-MSN",
        &[
            &[56, 60],
            &[68, 72],
            &[80, 84],
            &[92, 96],
            &[104, 108],
            &[116, 120],
            &[128, 132],
            &[140, 144],
            &[152, 156],
            &[164, 168],
        ],
        // soft-RoCE (rxe) does not advance the MSN for an RDMA WRITE without immediate (it
        // counts only messages that complete a receive, READs and atomics): each rping round's
        // WRITE is acknowledged with an unchanged MSN, against C9-148.
        "rxe leaves the MSN unchanged for RDMA WRITE",
    ),
    (
        "sanderw71_SoftRoce_FirstSuccesfullRping.pcapng",
        "RSP-MSN",
        &[&[15, 21]],
        // The second SEND to 192.168.178.13 (frame 20) is acknowledged with MSN 1, the MSN of
        // the first SEND's ACK (frame 15): the completed message was not counted.
        "MSN not advanced for a completed SEND",
    ),
];

#[test]
fn real_captures_have_no_unexplained_errors() {
    let Some(dir) = real_dir() else { return };
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let mut checked = 0;
    for line in readme
        .lines()
        .filter(|l| l.starts_with("| ") && (l.contains(".pcap |") || l.contains(".pcapng |")))
    {
        let c: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name, bad, unverifiable) =
            (c[1], c[8].parse::<u64>().unwrap(), c[9].parse::<u64>().unwrap());
        let (v, code) = check(&dir.join(name));
        let mut by_rule: BTreeMap<String, u64> = BTreeMap::new();
        for f in v["findings"].as_array().unwrap() {
            let known = REAL_FINDINGS.iter().any(|(file, rule, frames, _)| {
                *file == name
                    && f["rule"] == *rule
                    && frames.iter().any(|fr| f["frames"] == serde_json::json!(fr))
            });
            if known {
                continue;
            }
            if f["severity"] == "error" {
                *by_rule.entry(f["rule"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
        let icrc = by_rule.remove("PKT-ICRC").unwrap_or(0);
        let length = by_rule.remove("PKT-LENGTH").unwrap_or(0);
        assert_eq!(icrc, bad, "{name}: PKT-ICRC errors = frames the README lists with a bad ICRC");
        assert!(length <= unverifiable, "{name}: PKT-LENGTH only on truncated frames");
        assert!(by_rule.is_empty(), "{name}: unexplained errors {by_rule:?}");
        let known = REAL_FINDINGS.iter().any(|(file, ..)| *file == name);
        assert_eq!(code, i32::from(icrc + length > 0 || known), "{name}: exit status");
        checked += 1;
    }
    assert!(checked >= 20);
    // The reviewed real findings are still found.
    for (file, rule, frames, why) in REAL_FINDINGS {
        let (v, _) = check(&dir.join(file));
        for fr in *frames {
            let found = v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["rule"] == *rule && f["frames"] == serde_json::json!(fr));
            assert!(found, "{file}: {rule} at frames {fr:?} ({why}) no longer reported");
        }
    }
}

#[test]
fn known_capture_defects_are_integrity_warnings() {
    let Some(dir) = real_dir() else { return };
    // docs/rules.md: in rc-small the ACK in frame 19 comes before the request it acknowledges (20).
    let (v, _) = check(&dir.join("magnate3_linux-riscv-dev_rc-small.pcap"));
    let reorder: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "CAP-REORDER").collect();
    assert_eq!(reorder.len(), 1);
    assert_eq!(reorder[0]["frames"], serde_json::json!([19, 20]));
    // docs/rules.md: in rocev2_test the ACK in frame 153 names PSN 7753531 while QP 0x152's requests
    // were captured only up to 7753523: capture loss, reported as CAP-GAP, never as an error.
    let (v, code) = check(&dir.join("magnate3_linux-riscv-dev_rocev2_test.pcap"));
    assert_eq!(code, 0);
    let gaps: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "CAP-GAP").collect();
    assert!(gaps.len() > 100, "hundreds of gaps: {}", gaps.len());
    assert!(
        gaps.iter().any(|f| f["frames"].as_array().unwrap().contains(&serde_json::json!(153))
            || f["psn"] == 7_753_524),
        "the gap before frame 153"
    );
    let conns = v["connections"].as_array().unwrap();
    assert!(conns
        .iter()
        .all(|c| c["completeness"].as_f64().unwrap() < 1.0 || c["missing_packets"] == 0));
}
