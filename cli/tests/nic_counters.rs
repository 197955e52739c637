//! `stats --nic-counters BEFORE AFTER --nic-host IP` on pcaps/sample.pcap (a NAK, an RNR NAK,
//! a CNP and an ECN-CE mark between 10.0.0.1 and 10.0.0.2) with the snapshot files of
//! testdata/nic-counters: deltas that agree, deltas that disagree, hostile files.

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stats(after: &str, host: &str, json: bool) -> Output {
    let d = root().join("testdata/nic-counters");
    let mut c = Command::new(env!("CARGO_BIN_EXE_roce-inspect"));
    c.arg("stats").arg(root().join("pcaps/sample.pcap"));
    c.arg("--nic-counters").arg(d.join("before.txt")).arg(d.join(after));
    c.args(["--nic-host", host]);
    if json {
        c.args(["--format", "json"]);
    }
    c.output().unwrap()
}

fn rows(after: &str, host: &str) -> Vec<(String, Option<u64>, Option<u64>, String)> {
    let o = stats(after, host, true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["nic_counters"]["host"], host);
    j["nic_counters"]["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["counter"].as_str().unwrap().to_string(),
                r["delta"].as_u64(),
                r["capture"].as_u64(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(
    name: &str,
    delta: Option<u64>,
    capture: Option<u64>,
    v: &str,
) -> (String, Option<u64>, Option<u64>, String) {
    (name.to_string(), delta, capture, v.to_string())
}

#[test]
fn deltas_that_agree_with_the_capture() {
    // 10.0.0.2 sent the PSN sequence error NAK, the RNR NAK and the CNP, received the
    // ECN-CE marked packet and the 3 retransmitted request packets.
    assert_eq!(
        rows("after-agree.txt", "10.0.0.2"),
        [
            row("packet_seq_err", Some(1), Some(1), "agree"),
            row("out_of_sequence", Some(2), Some(1), "agree"),
            row("duplicate_request", Some(3), Some(3), "agree"),
            row("implied_nak_seq_err", Some(0), None, "not_in_capture"),
            row("local_ack_timeout_err", Some(0), Some(0), "agree"),
            row("rnr_nak_retry_err", Some(0), Some(0), "agree"),
            row("np_cnp_sent", Some(1), Some(1), "agree"),
            row("np_ecn_marked_roce_packets", Some(1), Some(1), "agree"),
            row("rp_cnp_handled", Some(0), Some(0), "agree"),
            row("rx_icrc_encapsulated", Some(0), Some(0), "agree"),
        ]
    );
}

#[test]
fn deltas_that_disagree_and_a_reset() {
    let r = rows("after-disagree.txt", "10.0.0.2");
    let get = |n: &str| r.iter().find(|x| x.0 == n).unwrap().clone();
    assert_eq!(get("out_of_sequence"), row("out_of_sequence", Some(0), Some(1), "counter_lower"));
    assert_eq!(
        get("local_ack_timeout_err"),
        row("local_ack_timeout_err", Some(2), Some(0), "counter_higher")
    );
    assert_eq!(
        get("np_ecn_marked_roce_packets"),
        row("np_ecn_marked_roce_packets", Some(5), Some(1), "counter_higher")
    );
    assert_eq!(get("rp_cnp_handled"), row("rp_cnp_handled", None, Some(0), "reset"));
    let text = String::from_utf8(stats("after-disagree.txt", "10.0.0.2", false).stdout).unwrap();
    assert!(text.contains("NIC counters of 10.0.0.2"), "{text}");
    assert!(text.contains("counter went down: reset or wrapped"), "{text}");
}

#[test]
fn the_other_host_sees_the_other_side() {
    // As 10.0.0.1's counters the same files disagree: it sent no NAK and no CNP, it
    // received the RNR NAK and the CNP.
    let r = rows("after-agree.txt", "10.0.0.1");
    let get = |n: &str| r.iter().find(|x| x.0 == n).unwrap().clone();
    assert_eq!(get("packet_seq_err"), row("packet_seq_err", Some(1), Some(0), "counter_higher"));
    assert_eq!(get("np_cnp_sent"), row("np_cnp_sent", Some(1), Some(0), "counter_higher"));
    assert_eq!(get("rp_cnp_handled"), row("rp_cnp_handled", Some(0), Some(1), "counter_lower"));
}

#[test]
fn hostile_files_name_file_and_line() {
    for (file, needle) in [
        ("hostile-duplicate.txt", "hostile-duplicate.txt:3: np_cnp_sent: given twice"),
        ("hostile-negative.txt", "hostile-negative.txt:2: rp_cnp_handled: `-2` is not a count"),
        ("hostile-overflow.txt", "hostile-overflow.txt:2: rp_cnp_handled"),
        ("missing.txt", "missing.txt"),
    ] {
        let o = stats(file, "10.0.0.2", false);
        assert_eq!(o.status.code(), Some(2), "{file}");
        assert!(o.stdout.is_empty(), "{file}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{file}: {err}");
    }
    // A counter in BEFORE and not in AFTER: not two snapshots of one NIC.
    let o = stats("hostile-missing-counter.txt", "10.0.0.2", false);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is in BEFORE but not in AFTER"));
}

#[test]
fn nic_host_is_required() {
    let d = root().join("testdata/nic-counters");
    let o = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("stats")
        .arg(root().join("pcaps/sample.pcap"))
        .arg("--nic-counters")
        .arg(d.join("before.txt"))
        .arg(d.join("after-agree.txt"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--nic-host"));
}

#[test]
fn a_host_without_traffic_is_an_error_naming_the_hosts_seen() {
    for json in [false, true] {
        for host in ["10.0.0.9", "::1"] {
            let o = stats("after-agree.txt", host, json);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{host}: {err}");
            assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
            let capture = root().join("pcaps/sample.pcap");
            assert!(
                err.contains(&format!(
                    "--nic-host {host}: no RoCE traffic from or to it in {}",
                    capture.display()
                )),
                "{err}"
            );
            // The busiest five of the six addresses of sample.pcap, then a count.
            assert!(
                err.contains(
                    "(hosts seen: 10.0.0.1 (34 frames), 10.0.0.2 (34 frames), fd00::3 (4 frames), \
                     fd00::4 (4 frames), 10.0.0.5 (1 frame) and 1 more)"
                ),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
    // A host of the capture is reconciled as before.
    assert!(stats("after-agree.txt", "10.0.0.1", false).status.success());
}
