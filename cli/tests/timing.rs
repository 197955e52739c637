//! What `stats` measures of a connection's timers, on the suite captures whose timers the
//! generator set to the nanosecond (cli/src/gen/timers.rs): every value of the `timing`
//! object is asserted against the generator's constants, not against a recorded output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::process::Command;

use roce_inspect::internal::gen::timers::{self, ack_timeout};
use serde_json::{json, Value};

fn stats_json(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance")
        .join(format!("{name}.pcap"));
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["stats", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The timing of the RC connection (the busiest, listed first).
fn timing(name: &str) -> Value {
    let v = stats_json(name);
    let c = &v["connections"][0];
    assert_eq!(c["transport"], "RC", "{name}");
    c["timing"].clone()
}

/// A latency every sample of which is `ns`.
fn all(count: u64, ns: u64) -> Value {
    json!({"count": count, "min": ns, "p50": ns, "p90": ns, "p99": ns, "max": ns})
}

#[test]
fn latencies_to_the_nanosecond() {
    let t = timing("clean-timing-latencies");
    // Three SENDs, the WRITE's LAST (AckReq) and the SEND after the RNR NAK.
    assert_eq!(t["ack_latency_ns"], all(5, timers::ACK_DELAY));
    assert_eq!(t["read_latency_ns"]["first_response"], all(1, timers::READ_FIRST_DELAY));
    assert_eq!(
        t["read_latency_ns"]["last_response"],
        all(1, timers::READ_FIRST_DELAY + 2 * timers::READ_GAP)
    );
    assert_eq!(t["atomic_latency_ns"], all(1, timers::ATOMIC_DELAY));
    assert_eq!(t["nak_generation_ns"], all(1, timers::NAK_DELAY));
    assert_eq!(t["nak_reaction_ns"], all(1, timers::NAK_REACTION));
    assert_eq!(
        t["rnr_waits"],
        json!([{"frames": [25, 26], "psn": 1010, "advertised_ns": 1_280_000, "waited_ns": timers::RNR_WAIT}])
    );
    // The go-back-N resend after the NAK is no timeout.
    assert_eq!(t["timeout_retransmissions"], json!([]));
    assert_eq!(t["inferred_timeout_exponent"], Value::Null);
    assert_eq!(t["backoff"], Value::Null);
}

#[test]
fn timeout_exponent_14_three_retries() {
    let t = timing("clean-timing-timeout-t14");
    let to = ack_timeout(14);
    assert_eq!(to, 67_108_864);
    assert_eq!(
        t["timeout_retransmissions"],
        json!([
            {"psn": 1001, "frames": [6, 7], "retry": 1, "measured_ns": to},
            {"psn": 1001, "frames": [7, 8], "retry": 2, "measured_ns": to},
            {"psn": 1001, "frames": [8, 9], "retry": 3, "measured_ns": to},
        ])
    );
    assert_eq!(t["backoff"], "constant");
    assert_eq!(
        t["inferred_timeout_exponent"],
        json!({"exponent": 14, "timeout_ns": to, "first_retries": 1, "shortest_ns": to, "longest_ns": to})
    );
    // The ACK at the end covers the last transmission only.
    assert_eq!(t["ack_latency_ns"], all(2, timers::ACK_DELAY));
}

#[test]
fn exponential_backoff_from_exponent_12() {
    let t = timing("clean-timing-backoff");
    let measured: Vec<u64> = t["timeout_retransmissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["measured_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(measured, [ack_timeout(12), ack_timeout(13), ack_timeout(14)]);
    let retries: Vec<u64> = t["timeout_retransmissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["retry"].as_u64().unwrap())
        .collect();
    assert_eq!(retries, [1, 2, 3]);
    assert_eq!(t["backoff"], "exponential");
    assert_eq!(t["inferred_timeout_exponent"]["exponent"], 12);
}

#[test]
fn text_section_names_the_timeouts() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance/clean-timing-timeout-t14.pcap");
    let out =
        Command::new(env!("CARGO_BIN_EXE_roce-inspect")).arg("stats").arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("timing (capture clock)"), "{text}");
    assert!(text.contains("timeout: PSN 1001 retry 3 after 67.108864 ms  [frames 8, 9]"), "{text}");
    assert!(
        text.contains("local ACK timeout: consistent with t = 14 (4.096 us x 2^14 = 67.108864 ms)"),
        "{text}"
    );
}

#[test]
fn connections_without_timers_report_nothing_measured() {
    // A UD flow has no responder: every latency null, every list empty.
    let v = stats_json("clean-timing-latencies");
    let ud = v["connections"].as_array().unwrap().iter().find(|c| c["transport"] == "UD").unwrap();
    assert_eq!(ud["timing"]["ack_latency_ns"], Value::Null);
    assert_eq!(ud["timing"]["timeout_retransmissions"], json!([]));
}

#[path = "../../testdata/real.rs"]
mod real;

/// Reviewed against `dissect` of the capture: frames 60 (SEND_ONLY, AckReq) -> 63 (ACK) is
/// 7.041767 - 7.031169 s; READ 66 -> 67 (FIRST) and 69 (LAST). The SEND of frame 70 is
/// "ACKed" by frame 71 naming PSN 16777215, which covers nothing: no second ACK latency.
/// The capture has no retransmission (the failure is the PSN reuse after the READ), so no
/// timeout and no exponent.
#[test]
fn rping_failure_capture_reviewed_values() {
    let Some(dir) = real::real_dir() else { return };
    let path = dir.join("sanderw71_SoftRoce_rping_3072_faillire.pcapng");
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["stats", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["connections"][0]["timing"];
    assert_eq!(t["ack_latency_ns"], all(1, 10_598_349));
    assert_eq!(t["read_latency_ns"]["first_response"], all(1, 2_804_321));
    assert_eq!(t["read_latency_ns"]["last_response"], all(1, 2_804_904));
    assert_eq!(t["timeout_retransmissions"], json!([]));
    assert_eq!(t["inferred_timeout_exponent"], Value::Null);
    // rping's REQ (frame 37): RDMA-CM's defaults, nothing measured to contradict them.
    let n = &t["negotiated"];
    assert_eq!(n["req_frame"], 37);
    assert_eq!((n["local_ack_timeout"].as_u64(), n["retry_count"].as_u64()), (Some(19), Some(7)));
    assert_eq!(
        (n["rnr_retry_count"].as_u64(), n["rep_rnr_retry_count"].as_u64()),
        (Some(7), Some(7))
    );
    assert_eq!(n["agrees"], true);
}

#[test]
fn qp_timeout_option_judges_the_measured_timeouts() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance/clean-timing-timeout-t14.pcap");
    let check = |t: &str| {
        Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["check", "--format", "json", "--qp-timeout", t])
            .arg(&path)
            .output()
            .unwrap()
    };
    let rules_of = |out: &std::process::Output| -> Vec<(String, Value)> {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["rule"].as_str().unwrap().to_string(), f["frames"].clone()))
            .collect()
    };
    // 67.108864 ms timeouts: on time for T = 14, and for T = 15 (134 ms) too early.
    let on_time = check("14");
    assert_eq!(on_time.status.code(), Some(0));
    assert_eq!(rules_of(&on_time), []);
    let early = check("15");
    assert_eq!(early.status.code(), Some(0), "warnings only");
    let got = rules_of(&early);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|(r, _)| r == "REQ-QP-TIMEOUT"));
    assert_eq!(got[0].1, json!([6, 7]));
    // Not an exponent: refused on the command line.
    for bad in ["0", "32", "x"] {
        assert_eq!(check(bad).status.code(), Some(2), "--qp-timeout {bad}");
    }
}

#[test]
fn negotiated_against_measured() {
    // The REQ announces 14 and the NIC fires at 4.096 us x 2^14, three retries of Retry
    // Count 3: agrees.
    let n = &timing("clean-timing-timeout-t14")["negotiated"];
    assert_eq!(n["local_ack_timeout"], 14);
    assert_eq!(n["local_ack_timeout_ns"], ack_timeout(14));
    assert_eq!((n["retry_count"].as_u64(), n["max_timeout_retry"].as_u64()), (Some(3), Some(3)));
    assert_eq!(n["agrees"], true, "{n}");
    // The REQ announces 16 (268 ms) and the wire shows 67 ms.
    let n = &timing("req-qp-timeout")["negotiated"];
    assert_eq!(n["agrees"], false);
    let why = n["disagreements"][0].as_str().unwrap();
    assert!(
        why.starts_with("first retries after 67108864 to 67108864 ns, outside 241591911.."),
        "{why}"
    );
    // One RNR retry under RNR Retry Count 7 (for ever), which the REP repeats.
    let n = &timing("clean-timing-latencies")["negotiated"];
    assert_eq!((n["rnr_retry_count"].as_u64(), n["max_rnr_retry"].as_u64()), (Some(7), Some(1)));
    assert_eq!(n["rep_rnr_retry_count"], 7);
    assert_eq!(n["agrees"], true, "{n}");
    // Under RNR Retry Count 0 the same retry disagrees (the timeout captures announce 0).
    let n = &timing("clean-timing-timeout-t14")["negotiated"];
    assert_eq!((n["rnr_retry_count"].as_u64(), n["max_rnr_retry"].as_u64()), (Some(0), Some(0)));
    // The exponential backoff's first retry is on time for the announced 12.
    assert_eq!(timing("clean-timing-backoff")["negotiated"]["agrees"], true);
}

/// `check --format json` on a suite capture, assume_complete: (rule, frames, psn, message).
fn findings(name: &str) -> Vec<(String, Value, Value, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pcaps/conformance")
        .join(format!("{name}.pcap"));
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["check", "--format", "json", "--assume-complete"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{name}: warnings only");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let m = f["message"].as_str().unwrap().to_string();
            (f["rule"].as_str().unwrap().to_string(), f["frames"].clone(), f["psn"].clone(), m)
        })
        .collect()
}

/// Three RNR retries of one PSN under RNR Retry Count 2: `stats` counts three and disagrees,
/// and `check` reports the same verdict, on the REQ and the third NAK and retry.
#[test]
fn rnr_retry_count_beyond_the_count_fires() {
    let t = timing("req-cm-rnr-retry-count");
    let waits = t["rnr_waits"].as_array().unwrap();
    let frames: Vec<Value> = waits.iter().map(|w| w["frames"].clone()).collect();
    assert_eq!(frames, [json!([5, 6]), json!([7, 8]), json!([9, 10])]);
    assert!(waits.iter().all(|w| w["waited_ns"] == timers::RNR_WAIT));
    let n = &t["negotiated"];
    assert_eq!(
        (n["rnr_retry_count"].as_u64(), n["rep_rnr_retry_count"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!((n["max_rnr_retry"].as_u64(), n["agrees"].as_bool()), (Some(3), Some(false)));
    let why = n["disagreements"][0].as_str().unwrap();
    assert_eq!(why, "a PSN was retried 3 times after RNR NAKs, more than the RNR Retry Count 2");
    let got = findings("req-cm-rnr-retry-count");
    assert_eq!(got.len(), 1, "{got:?}");
    let (rule, frames, psn, message) = &got[0];
    assert_eq!((rule.as_str(), frames), ("REQ-CM-RNR-RETRY-COUNT", &json!([1, 9, 10])));
    assert_eq!(psn, &waits[2]["psn"]);
    assert!(message.starts_with(why), "check and stats say the same: {message}");
    assert!(
        message.contains("retry 3 of PSN 1000 (frame 10, after the RNR NAK in frame 9)"),
        "{message}"
    );
}

/// Exactly the count (two retries under 2), and ten retries under 7 (for ever): both agree
/// in `stats` and `check` stays silent.
#[test]
fn rnr_retry_count_within_the_count_is_silent() {
    for (name, count, retries) in
        [("clean-cm-rnr-retry-count", 2, 2), ("clean-cm-rnr-retry-forever", 7, 10)]
    {
        let n = &timing(name)["negotiated"];
        assert_eq!(n["rnr_retry_count"], count, "{name}");
        assert_eq!(n["max_rnr_retry"], retries, "{name}");
        assert_eq!(n["agrees"], true, "{name}: {n}");
        assert_eq!(findings(name), [], "{name}");
    }
}

/// A capture written here: both sides of one RC connection send requests (SEND_ONLY asking
/// for an ACK), A's acknowledged after 10 us, B's after 30 us; B's last request is resent
/// once after 2^14 x 4.096 us with nothing acknowledging it, then acknowledged.
fn two_requesters(path: &std::path::Path) {
    use roce_parser::{AethRepr, BthRepr};
    use roce_parser::{FrameBuilder, Network};
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let (qp_a, qp_b) = (0x11u32, 0x22u32);
    let frame = |src: [u8; 4], dst: [u8; 4], dest_qp: u32, psn: u32, ack: Option<u32>| {
        let opcode = if ack.is_some() { 0x11 } else { 0x04 };
        let bth = BthRepr {
            opcode,
            pkey: 0xffff,
            dest_qp,
            psn,
            ackreq: ack.is_none(),
            ..Default::default()
        };
        let payload = [0x5au8; 64];
        let mut fb = FrameBuilder::new(Network::ipv4(src, dst), bth);
        match ack {
            Some(msn) => fb.headers.aeth = Some(AethRepr::ack(0x1f, msn)),
            None => fb.payload = &payload,
        }
        let mut buf = vec![0u8; 256];
        let len = fb.emit(&mut buf).unwrap();
        buf.truncate(len);
        buf
    };
    let mut frames: Vec<(u64, Vec<u8>)> = Vec::new();
    let t0 = 1_000_000_000u64;
    for k in 0..10u32 {
        let t = t0 + u64::from(k) * 1_000_000;
        frames.push((t, frame(a, b, qp_b, 100 + k, None)));
        frames.push((t + 10_000, frame(b, a, qp_a, 100 + k, Some(k + 1))));
        frames.push((t + 500_000, frame(b, a, qp_a, 5000 + k, None)));
        frames.push((t + 530_000, frame(a, b, qp_b, 5000 + k, Some(k + 1))));
    }
    let t = t0 + 20_000_000;
    let timeout = 4096u64 << 14;
    frames.push((t, frame(b, a, qp_a, 5010, None)));
    frames.push((t + timeout, frame(b, a, qp_a, 5010, None)));
    frames.push((t + timeout + 30_000, frame(a, b, qp_b, 5010, Some(11))));
    // A nanosecond pcap.
    let mut out = Vec::new();
    for v in [0xa1b2_3c4du32, 0x0004_0002, 0, 0, 65535, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (ts, f) in &frames {
        let n = f.len() as u32;
        for v in [(ts / 1_000_000_000) as u32, (ts % 1_000_000_000) as u32, n, n] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(f);
    }
    std::fs::write(path, out).unwrap();
}

/// Each direction's `timing` holds its own requester's timers: A's ACK latency of 10 us and
/// no timeout, B's 30 us and the timeout with t = 14; the connection's holds both; `stats`'
/// text names each requester.
#[test]
fn each_requester_has_its_own_timers() {
    let dir = std::env::temp_dir().join(format!("roce-timing-dirs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("two-requesters.pcap");
    two_requesters(&path);
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).arg(&path).output();
        let o = o.unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let v: Value = serde_json::from_str(&run(&["stats", "--format", "json"])).unwrap();
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "one connection: {conns:#?}");
    let c = &conns[0];
    assert_eq!(c["timing"]["ack_latency_ns"]["count"], 21);
    let dirs = c["directions"].as_array().unwrap();
    let of = |src: &str| dirs.iter().find(|d| d["src"] == src).unwrap()["timing"].clone();
    let (ta, tb) = (of("10.0.0.1"), of("10.0.0.2"));
    assert_eq!(ta["ack_latency_ns"], all(10, 10_000));
    assert_eq!(ta["timeout_retransmissions"], json!([]));
    assert_eq!(ta["inferred_timeout_exponent"], Value::Null);
    assert_eq!(tb["ack_latency_ns"]["count"], 11);
    assert_eq!(tb["ack_latency_ns"]["min"], 30_000);
    let retx = tb["timeout_retransmissions"].as_array().unwrap();
    assert_eq!(retx.len(), 1, "{tb:#}");
    assert_eq!(retx[0]["measured_ns"], 4096u64 << 14);
    assert_eq!(tb["inferred_timeout_exponent"]["exponent"], 14);
    assert_eq!(ta["negotiated"], Value::Null);
    assert_eq!(c["timing"]["inferred_timeout_exponent"], tb["inferred_timeout_exponent"]);
    let text = run(&["stats"]);
    assert!(
        text.contains(
            "requester 10.0.0.1 -> 10.0.0.2 (DestQP 0x000022): ACK latency p50 10 us (10)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "requester 10.0.0.2 -> 10.0.0.1 (DestQP 0x000011): ACK latency p50 30 us (11), 1 timeout retransmissions, consistent with t = 14 (67.108864 ms)"
        ),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
