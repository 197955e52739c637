//! What `stats` measures of congestion (CE marks, CNPs, ECN-CE -> CNP latency, CNP pacing per
//! QP / IP pair / destination, the sender's rate around each CNP), on the suite capture whose
//! timings the generator set to the nanosecond (`clean-congestion-pacing`,
//! cli/src/gen/timers.rs): every value is derived from the generator's constants and the
//! frame lengths `stats` itself reports, never from a recorded output. No real capture in
//! the shared set has a CNP, so there is no real-capture test here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::process::Command;

use roce_inspect::internal::gen::timers::{self, CE_TO_CNP, CNP_ROUND};
use serde_json::{json, Value};

fn capture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance/clean-congestion-pacing.pcap")
}

fn stats(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .arg("stats")
        .args(args)
        .arg(capture())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn stats_json() -> Value {
    serde_json::from_slice(&stats(&["--format", "json"])).unwrap()
}

fn interval(count: u64, min: u64, p50: u64, max: u64) -> Value {
    json!({"count": count, "min": min, "p50": p50, "max": max})
}

fn bps(bytes: u64, ns: u64) -> u64 {
    bytes * 8 * 1_000_000_000 / ns
}

/// The WRITE_ONLY frame length: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload
/// + ICRC 4, checked against the bytes `stats` counted on the marked direction.
fn write_len(conn: &Value, writes: u64) -> u64 {
    let len = 14 + 20 + 8 + 12 + 16 + timers::CNP_WRITE_LEN as u64 + 4;
    let marked =
        conn["directions"].as_array().unwrap().iter().find(|d| d["src"] == "10.9.0.1").unwrap();
    assert_eq!(marked["bytes"], writes * len);
    len
}

#[test]
fn per_connection_to_the_nanosecond() {
    let v = stats_json();
    // The three RC connections (the CM MADs on QP1 are listed as UD flows after them).
    let conns: Vec<&Value> =
        v["connections"].as_array().unwrap().iter().filter(|c| c["transport"] == "RC").collect();
    assert_eq!(conns.len(), 3);
    let c = conns[0];
    let qps: Vec<&Value> =
        c["directions"].as_array().unwrap().iter().map(|d| &d["dest_qp"]).collect();
    assert_eq!(qps, [0x222, 0x111], "the busiest connection is listed first");
    let writes: usize = timers::BURSTS.iter().sum();
    let l = write_len(c, writes as u64);
    let g = &c["congestion"];
    assert_eq!(g["ce_marked"], writes as u64);
    assert_eq!(g["cnps"], 4);
    assert_eq!(g["cnps_unpaired"], 0);
    // The first mark of each round is paired with the round's CNP.
    assert_eq!(
        g["ce_to_cnp_ns"],
        json!({"count": 4, "min": CE_TO_CNP, "p50": CE_TO_CNP, "p90": CE_TO_CNP, "p99": CE_TO_CNP, "max": CE_TO_CNP})
    );
    assert_eq!(g["cnp_interval_ns"], json!({"qp": interval(3, CNP_ROUND, CNP_ROUND, CNP_ROUND)}));
    let r = &g["rate_before_after_cnp"];
    assert_eq!(r["window"], "interval between CNPs");
    assert_eq!(r["reactions"], 4);
    assert_eq!(r["not_listed"], 0);
    // CNP k: before = the burst of round k (the first: from the flow's first packet, 4 us
    // before the CNP), after = the burst of round k + 1, over the 50 us between CNPs; the last
    // CNP has nothing after it (not counted as slowed).
    let b = timers::BURSTS.map(|n| n as u64 * l);
    let row = |frame: u64, bb: u64, bn: u64, ab: u64, an: u64| {
        let ab_bps = if an == 0 { 0 } else { bps(ab, an) };
        json!({"cnp_frame": frame, "before_bytes": bb, "before_ns": bn, "after_bytes": ab,
               "after_ns": an, "before_bps": bps(bb, bn), "after_bps": ab_bps})
    };
    assert_eq!(
        r["listed"],
        json!([
            row(14, b[0], CE_TO_CNP, b[1], CNP_ROUND),
            row(25, b[1], CNP_ROUND, b[2], CNP_ROUND),
            row(35, b[2], CNP_ROUND, b[3], CNP_ROUND),
            row(44, b[3], CNP_ROUND, 0, 0),
        ])
    );
    assert_eq!(r["slowed"], 3);
    for other in &conns[1..] {
        let g = &other["congestion"];
        assert_eq!((g["ce_marked"].as_u64(), g["cnps"].as_u64()), (Some(4), Some(4)));
        assert_eq!(g["ce_to_cnp_ns"]["max"], CE_TO_CNP);
        assert_eq!(g["cnp_interval_ns"]["qp"], interval(3, CNP_ROUND, CNP_ROUND, CNP_ROUND));
        // One WRITE per round: the same rate before and after each CNP but the first.
        assert_eq!(g["rate_before_after_cnp"]["slowed"], 1);
    }
}

#[test]
fn pacing_per_ip_pair_and_destination() {
    let v = stats_json();
    let second = timers::SECOND_OFFSET;
    let third_gap = timers::THIRD_OFFSET - timers::SECOND_OFFSET;
    assert_eq!(
        v["congestion"],
        json!({
            "ip_pairs": [
                // Both QPs of 10.9.0.1 from 10.9.0.2: 20 us then 30 us, four times and three.
                {"src": "10.9.0.2", "dst": "10.9.0.1", "cnps": 8,
                 "cnp_interval_ns": interval(7, second, second, CNP_ROUND - second)},
                {"src": "10.9.0.4", "dst": "10.9.0.1", "cnps": 4,
                 "cnp_interval_ns": interval(3, CNP_ROUND, CNP_ROUND, CNP_ROUND)},
            ],
            // 10.9.0.1 from both NPs: 20, 10, 20 us in each round.
            "destinations": [
                {"dst": "10.9.0.1", "cnps": 12,
                 "cnp_interval_ns": interval(11, third_gap, second, second)},
            ],
            "cnps_not_tracked": 0,
        })
    );
}

#[test]
fn scopes_beyond_the_cap_are_counted_not_kept() {
    let v: Value =
        serde_json::from_slice(&stats(&["--format", "json", "--max-flows", "1"])).unwrap();
    let g = &v["congestion"];
    assert_eq!(g["ip_pairs"].as_array().unwrap().len(), 1);
    assert_eq!(g["destinations"].as_array().unwrap().len(), 1);
    // The four CNPs of 10.9.0.4 -> 10.9.0.1 (a second pair; same destination).
    assert_eq!(g["cnps_not_tracked"], 4);
}

#[test]
fn text_section() {
    let t = String::from_utf8(stats(&[])).unwrap();
    for line in [
        "    congestion (capture clock): 10 CE-marked packets, 4 CNPs (0 unpaired)",
        "      ECN-CE -> CNP                 4  p50 4 us, p90 4 us, p99 4 us, max 4 us",
        "      CNP interval per QP: 3 intervals, min 50 us, p50 50 us, max 50 us",
        "      sender rate around CNPs (interval between CNPs): 4 CNPs, slowed after 3",
        "CNP pacing (capture clock)",
        "  IP pair 10.9.0.2 -> 10.9.0.1: 8 CNPs, 7 intervals, min 20 us, p50 20 us, max 30 us",
        "  destination 10.9.0.1: 12 CNPs, 11 intervals, min 10 us, p50 20 us, max 20 us",
    ] {
        assert!(t.lines().any(|l| l == line), "no line {line:?} in\n{t}");
    }
}

#[test]
fn no_congestion_no_section() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance/clean-timing-latencies.pcap");
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["stats", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let g = &v["connections"][0]["congestion"];
    assert_eq!(g["ce_marked"], 0);
    assert_eq!(g["ce_to_cnp_ns"], Value::Null);
    assert_eq!(g["cnp_interval_ns"], json!({"qp": null}));
    assert_eq!(g["rate_before_after_cnp"]["reactions"], 0);
    assert_eq!(v["congestion"], json!({"ip_pairs": [], "destinations": [], "cnps_not_tracked": 0}));
}

fn check(args: &[&str], capture: &str) -> (Option<i32>, Value, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance")
        .join(format!("{capture}.pcap"));
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["check", "--format", "json", "--assume-complete"])
        .args(args)
        .arg(&path)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn fired(v: &Value, rule: &str) -> Vec<Value> {
    let all = v["findings"].as_array().cloned().unwrap_or_default();
    all.into_iter().filter(|f| f["rule"] == rule).map(|f| f["frames"].clone()).collect()
}

#[test]
fn cnp_min_interval_per_scope() {
    let name = "clean-congestion-pacing";
    // Per QP the CNPs are exactly 50 us apart: 50us is met, 51us is not (three gaps per QP).
    let (_, v, _) = check(&["--cnp-min-interval", "50us"], name);
    assert_eq!(fired(&v, "CC-CNP-PACING"), Vec::<Value>::new());
    let (_, v, _) = check(&["--cnp-min-interval", "51us,qp"], name);
    assert_eq!(fired(&v, "CC-CNP-PACING").len(), 9);
    // Per IP pair 10.9.0.2 -> 10.9.0.1: 20 us then 30 us; 25us catches the four 20 us gaps.
    let (_, v, _) = check(&["--cnp-min-interval", "25us,pair"], name);
    assert_eq!(
        fired(&v, "CC-CNP-PACING"),
        vec![json!([14, 17]), json!([25, 28]), json!([35, 38]), json!([44, 47])]
    );
    // Per destination 10.9.0.1: the 10 us gaps.
    let (_, v, _) = check(&["--cnp-min-interval", "15us,dest"], name);
    assert_eq!(
        fired(&v, "CC-CNP-PACING"),
        vec![json!([17, 20]), json!([28, 31]), json!([38, 41]), json!([47, 50])]
    );
    for bad in ["50", "50us,host", "0us", "x"] {
        let (code, _, err) = check(&["--cnp-min-interval", bad], name);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains("cnp-min-interval"), "{bad}: {err}");
    }
}

#[test]
fn rnr_timer_against_the_advertised_code() {
    let name = "clean-timing-latencies";
    let (_, v, _) = check(&["--rnr-timer", "14"], name);
    assert_eq!(fired(&v, "RSP-RNR-TIMER"), Vec::<Value>::new());
    let (_, v, _) = check(&["--rnr-timer", "16"], name);
    assert_eq!(fired(&v, "RSP-RNR-TIMER"), vec![json!([25])]);
    let (code, _, err) = check(&["--rnr-timer", "32"], name);
    assert_eq!(code, Some(2), "{err}");
}
