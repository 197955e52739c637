//! `stats --nic-counters BEFORE AFTER --nic-host IP` on pcaps/sample.pcap (a NAK, an RNR NAK,
//! a CNP and an ECN-CE mark between 10.0.0.1 and 10.0.0.2) with the snapshot files of
//! testdata/nic-counters: deltas that agree, deltas that disagree, hostile files; mlx5's
//! names, and rxe's (`rdma statistic` line and hw_counters), bnxt_re's and irdma's.

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stats(after: &str, host: &str, json: bool) -> Output {
    stats_of("before.txt", after, host, json)
}

fn stats_of(before: &str, after: &str, host: &str, json: bool) -> Output {
    let d = root().join("testdata/nic-counters");
    let mut c = Command::new(env!("CARGO_BIN_EXE_roce-inspect"));
    c.arg("stats").arg(root().join("pcaps/sample.pcap"));
    c.arg("--nic-counters").arg(d.join(before)).arg(d.join(after));
    c.args(["--nic-host", host]);
    if json {
        c.args(["--format", "json"]);
    }
    c.output().unwrap()
}

fn rows(after: &str, host: &str) -> Vec<(String, Option<u64>, Option<u64>, String)> {
    rows_of("before.txt", after, host)
}

fn rows_of(
    before: &str,
    after: &str,
    host: &str,
) -> Vec<(String, Option<u64>, Option<u64>, String)> {
    let o = stats_of(before, after, host, true);
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
    // ECN-CE marked packet and the 3 retransmitted request packets. packet_seq_err counts
    // the sequence error NAKs received (NVIDIA: "received NAK sequence error packets").
    assert_eq!(
        rows("after-agree.txt", "10.0.0.2"),
        [
            row("packet_seq_err", Some(0), Some(0), "agree"),
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
    // received the sequence error NAK, the RNR NAK and the CNP.
    let r = rows("after-agree.txt", "10.0.0.1");
    let get = |n: &str| r.iter().find(|x| x.0 == n).unwrap().clone();
    assert_eq!(get("packet_seq_err"), row("packet_seq_err", Some(0), Some(1), "counter_lower"));
    assert_eq!(get("np_cnp_sent"), row("np_cnp_sent", Some(1), Some(0), "counter_higher"));
    assert_eq!(get("rp_cnp_handled"), row("rp_cnp_handled", Some(0), Some(1), "counter_lower"));
}

#[test]
fn hostile_files_name_file_and_line() {
    for (file, needle) in [
        ("hostile-duplicate.txt", "hostile-duplicate.txt:3: np_cnp_sent: given twice"),
        ("hostile-negative.txt", "hostile-negative.txt:2: rp_cnp_handled: `-2` is not a count"),
        ("hostile-overflow.txt", "hostile-overflow.txt:2: rp_cnp_handled"),
        ("hostile-rdma-statistic.txt", "hostile-rdma-statistic.txt:2: sent_pkts: given twice"),
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

/// The drivers and event IDs of the rows, from the JSON.
fn ids_of(before: &str, after: &str, host: &str) -> Vec<(String, String, Vec<String>)> {
    let o = stats_of(before, after, host, true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    j["nic_counters"]["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let drivers = r["drivers"].as_array().unwrap();
            (
                r["counter"].as_str().unwrap().to_string(),
                r["event_id"].as_str().unwrap().to_string(),
                drivers.iter().map(|d| d.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn rxe_rdma_statistic_lines() {
    // `rdma statistic show link rxe0/1` of 10.0.0.2: one line of name value pairs.
    let (b, a) = ("rxe-before.txt", "rxe-after.txt");
    assert_eq!(
        rows_of(b, a, "10.0.0.2"),
        [
            row("rcvd_seq_err", Some(0), Some(0), "agree"),
            row("out_of_seq_request", Some(1), Some(1), "agree"),
            row("duplicate_request", Some(3), Some(3), "agree"),
            row("rcvd_rnr_err", Some(0), Some(0), "agree"),
            row("send_rnr_err", Some(1), Some(1), "agree"),
            row("sent_pkts", Some(15), Some(15), "agree"),
            // 19 packets to 10.0.0.2 on the wire, 18 received: one lost past the capture point.
            row("rcvd_pkts", Some(18), Some(19), "counter_lower"),
            row("retry_exceeded_err", Some(0), None, "not_in_capture"),
            row("retry_rnr_exceeded_err", Some(0), None, "not_in_capture"),
            row("completer_retry_err", Some(0), None, "not_in_capture"),
            row("rdma_sends", Some(2), None, "not_in_capture"),
            row("rdma_recvs", Some(3), None, "not_in_capture"),
            row("send_err", Some(0), None, "not_in_capture"),
            row("ack_deferred", Some(2), None, "not_in_capture"),
            row("link_downed", Some(0), None, "not_in_capture"),
        ]
    );
    let ids = ids_of(b, a, "10.0.0.2");
    let id = |c: &str| ids.iter().find(|x| x.0 == c).unwrap().clone();
    assert_eq!(id("retry_exceeded_err").1, "retry_exceeded");
    assert_eq!(id("retry_rnr_exceeded_err").1, "rnr_retry_exceeded");
    assert_eq!(
        id("send_rnr_err"),
        ("send_rnr_err".into(), "rnr_nak_sent".into(), vec!["rxe".into()])
    );
    // A name rxe shares with mlx5 (and bnxt_re's newer names) is one row naming them all.
    assert_eq!(id("duplicate_request").2, ["mlx5", "rxe", "bnxt_re"]);
    let text = String::from_utf8(stats_of(b, a, "10.0.0.2", false).stdout).unwrap();
    assert!(text.contains("(rxe: RNR NAKs sent)"), "{text}");
    assert!(text.contains("(rxe: retries exhausted"), "{text}");
    let line = text.lines().find(|l| l.trim_start().starts_with("rcvd_pkts")).unwrap();
    assert!(line.contains("18") && line.contains("19") && line.contains("counter lower"), "{line}");
    let line = text.lines().find(|l| l.trim_start().starts_with("link_downed")).unwrap();
    assert!(line.contains("stats does not count this event"), "{line}");
}

#[test]
fn rxe_hw_counters_of_the_other_host() {
    // grep . hw_counters/* of 10.0.0.1 (lifespan, not a counter of the table, ignored).
    let r = rows_of("rxe-sysfs-before.txt", "rxe-sysfs-after.txt", "10.0.0.1");
    let get = |n: &str| r.iter().find(|x| x.0 == n).unwrap().clone();
    assert_eq!(get("rcvd_seq_err"), row("rcvd_seq_err", Some(1), Some(1), "agree"));
    assert_eq!(get("rcvd_rnr_err"), row("rcvd_rnr_err", Some(1), Some(1), "agree"));
    assert_eq!(get("rcvd_pkts"), row("rcvd_pkts", Some(15), Some(15), "agree"));
    assert_eq!(get("sent_pkts"), row("sent_pkts", Some(21), Some(19), "counter_higher"));
    assert_eq!(
        get("completer_retry_err"),
        row("completer_retry_err", Some(1), None, "not_in_capture")
    );
    assert!(r.iter().all(|x| x.0 != "lifespan"));
    assert_eq!(r.len(), 15);
}

#[test]
fn bnxt_re_names() {
    let r = rows_of("bnxt_re-before.txt", "bnxt_re-after.txt", "10.0.0.2");
    assert_eq!(
        r,
        [
            row("seq_err_naks_rcvd", Some(0), Some(0), "agree"),
            // Every dropped packet against one NAK per gap on the wire.
            row("oos_drop_count", Some(2), Some(1), "agree"),
            row("dup_req", Some(3), Some(3), "agree"),
            row("missing_resp", Some(0), None, "not_in_capture"),
            row("to_retransmits", Some(0), Some(0), "agree"),
            row("rnr_naks_rcvd", Some(0), Some(0), "agree"),
            row("tx_cnp_pkts", Some(1), Some(1), "agree"),
            row("rx_ecn_marked_pkts", Some(3), Some(1), "counter_higher"),
            row("rx_cnp_pkts", Some(0), Some(0), "agree"),
            row("tx_pkts", Some(15), Some(15), "agree"),
            row("rx_pkts", Some(19), Some(19), "agree"),
            row("remote_invalid_req_err", Some(0), Some(0), "agree"),
            row("remote_access_err", Some(0), Some(0), "agree"),
            row("res_rx_invalid_rkey", Some(0), Some(0), "agree"),
            row("remote_op_err", Some(0), Some(0), "agree"),
            row("max_retry_exceeded", Some(0), None, "not_in_capture"),
        ]
    );
    let ids = ids_of("bnxt_re-before.txt", "bnxt_re-after.txt", "10.0.0.2");
    assert!(ids.contains(&(
        "max_retry_exceeded".into(),
        "retry_exceeded".into(),
        vec!["bnxt_re".into()]
    )));
    let text = String::from_utf8(
        stats_of("bnxt_re-before.txt", "bnxt_re-after.txt", "10.0.0.2", false).stdout,
    )
    .unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with("rx_ecn_marked_pkts")).unwrap();
    assert!(line.contains("counter higher: capture loss"), "{line}");
}

#[test]
fn irdma_names_with_spaces() {
    // irdma's hw_counters files are named `RNR received`, `CRC errors`: grep prints
    // `.../hw_counters/RNR received:6`.
    let r = rows_of("irdma-before.txt", "irdma-after.txt", "10.0.0.1");
    let get = |n: &str| r.iter().find(|x| x.0 == n).unwrap().clone();
    assert_eq!(get("RNR received"), row("RNR received", Some(1), Some(1), "agree"));
    assert_eq!(get("RNR sent"), row("RNR sent", Some(0), Some(0), "agree"));
    assert_eq!(get("CRC errors"), row("CRC errors", Some(0), Some(0), "agree"));
    assert_eq!(get("ip4InPkts"), row("ip4InPkts", Some(15), Some(15), "agree"));
    assert_eq!(get("ip4OutPkts"), row("ip4OutPkts", Some(19), Some(19), "agree"));
    assert_eq!(get("ip6InPkts"), row("ip6InPkts", Some(0), Some(0), "agree"));
    assert_eq!(get("TxUDP"), row("TxUDP", Some(19), Some(19), "agree"));
    // The CNP to 10.0.0.1 on the wire: ignored by the reaction point, not handled.
    assert_eq!(get("cnpHandled"), row("cnpHandled", Some(0), Some(1), "counter_lower"));
    assert_eq!(get("cnpIgnored"), row("cnpIgnored", Some(1), None, "not_in_capture"));
    assert_eq!(get("RetransSegs"), row("RetransSegs", Some(3), None, "not_in_capture"));
    // `Nak Sequence Error`: the source does not say which side counts it; not mapped.
    assert!(r.iter().all(|x| x.0 != "Nak Sequence Error" && x.0 != "InRdmaWrites"));
    assert_eq!(r.len(), 17);
}
