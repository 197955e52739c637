//! A million generated frames over a hundred thousand QPs: the checker's own accounting of
//! its state stays within its caps the whole time (memory grows with live connections, up to
//! the cap, never with packets), and evictions are reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use roce_conformance::{Checker, FrameInfo, Options, StateStats};
use roce_parser::{parse_ethernet, AethRepr, BthRepr, Config, FrameBuilder, Network};

const QPS: u32 = 100_000;
const FRAMES: u64 = 1_000_000;
const MAX_FLOWS: usize = 20_000;

#[test]
fn million_frames_over_100k_qps_stay_bounded() {
    let opts = Options { max_flows: MAX_FLOWS, ..Options::default() };
    let per_rule = opts.max_findings_per_rule as usize;
    let mut checker = Checker::new(opts);
    let mut next_psn = vec![0u32; QPS as usize];
    let mut buf = vec![0u8; 256];
    let payload = [0x42u8; 64];
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut peak = StateStats::default();
    let mut findings = 0usize;
    let mut frame = 0u64;
    while frame < FRAMES {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let qp = (rng % u64::from(QPS)) as u32;
        // Host pairs: 1000 pairs, 100 QPs each.
        let host = qp / 100;
        let a = [10, 1, (host >> 8) as u8, host as u8];
        let b = [10, 2, (host >> 8) as u8, host as u8];
        let psn = next_psn[qp as usize];
        next_psn[qp as usize] = (psn + 1) & 0xff_ffff;
        // A SEND_ONLY a -> b, then its ACK b -> a.
        for (src, dst, opcode, dqp, has_payload) in
            [(a, b, 0x04u8, 0x10_0000 + qp, true), (b, a, 0x11, 0x20_0000 + qp, false)]
        {
            frame += 1;
            let bth = BthRepr {
                opcode,
                pkey: 0xffff,
                dest_qp: dqp,
                psn,
                ackreq: has_payload,
                ..Default::default()
            };
            let mut fb = FrameBuilder::new(Network::ipv4(src, dst), bth);
            if has_payload {
                fb.payload = &payload;
            } else {
                fb.headers.aeth = Some(AethRepr::ack(0x1f, psn + 1));
            }
            let n = fb.emit(&mut buf).unwrap();
            let p = parse_ethernet(&buf[..n], &Config::default()).unwrap();
            let info =
                FrameInfo { number: frame, ts_ns: frame * 100, caplen: n as u32, len: n as u32 };
            checker.feed(&info, &p);
        }
        findings += checker.take_findings().len();
        if frame.is_multiple_of(10_000) {
            let s = checker.state();
            peak.flows = peak.flows.max(s.flows);
            peak.pairing_index = peak.pairing_index.max(s.pairing_index);
            peak.lru_queue = peak.lru_queue.max(s.lru_queue);
            peak.finding_counters = peak.finding_counters.max(s.finding_counters);
            peak.remembered_requests = peak.remembered_requests.max(s.remembered_requests);
            peak.congestion = peak.congestion.max(s.congestion);
            peak.listed_connections = peak.listed_connections.max(s.listed_connections);
        }
    }
    let report = checker.finish();
    println!("peak state over {FRAMES} frames: {peak:?}; final {:?}", report.state);
    assert!(peak.flows <= MAX_FLOWS, "{peak:?}");
    assert!(peak.pairing_index <= MAX_FLOWS * 8, "{peak:?}");
    assert!(peak.lru_queue <= 2 * MAX_FLOWS + 1024 + 1, "{peak:?}");
    assert!(peak.remembered_requests <= MAX_FLOWS * (64 + 16), "{peak:?}");
    assert!(peak.finding_counters <= MAX_FLOWS * 4 + 16, "{peak:?}");
    assert!(peak.congestion <= 4 * MAX_FLOWS, "{peak:?}");
    // Ended connections kept for the report: at most a quarter past the cap between trims.
    assert!(peak.listed_connections < MAX_FLOWS + MAX_FLOWS / 4, "{peak:?}");
    assert_eq!(report.connections.len(), MAX_FLOWS, "the report lists the cap's worth");
    assert_eq!(
        report.connections.len() as u64 + report.connections_not_listed,
        report.state.evicted + report.state.flows as u64 / 2,
        "every incarnation listed or counted"
    );
    // Far more flows than the cap were live: evictions happened and were reported (the
    // first `per_rule` listed, the rest counted).
    assert!(report.state.evicted > 100_000, "{:?}", report.state);
    assert_eq!(findings + report.findings.len(), per_rule, "only CAP-EVICT findings, capped");
    assert_eq!(report.warnings, report.state.evicted);
    assert_eq!(report.errors, 0);
}
