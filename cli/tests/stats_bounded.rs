//! `stats` over 200,000 QPs with a small cap: the connection model's tables, the connections
//! kept for the report and the CM list stay within the cap the whole run (memory is bounded
//! by the cap, not by the connections a capture holds), and every incarnation is either
//! listed or counted. Timing lives in BENCHMARKS.md (bench/connections.sh), not here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use roce_conformance::ModelOptions;
use roce_inspect::internal::stats::Stats;
use roce_parser::{parse_ethernet, AethRepr, BthRepr, Config, FrameBuilder, Network};

const QPS: u32 = 200_000;
const CAP: usize = 5_000;

#[test]
fn stats_over_200k_qps_stays_within_the_cap() {
    let model = ModelOptions { max_flows: CAP, pmtu: None, reconnect_idle_ns: 1_000_000_000 };
    let mut stats = Stats::new(model);
    let mut buf = vec![0u8; 256];
    let payload = [0x42u8; 64];
    let (mut frame, mut peak) = (0u64, (0usize, 0usize, 0usize, 0usize));
    // Every QP once: a SEND_ONLY a -> b and its ACK b -> a, 1000 QPs per host pair.
    for qp in 0..QPS {
        let host = qp / 1000;
        let a = [10, 1, (host >> 8) as u8, host as u8];
        let b = [10, 2, (host >> 8) as u8, host as u8];
        for (src, dst, opcode, dqp, data) in
            [(a, b, 0x04u8, 0x10_0000 + qp, true), (b, a, 0x11, 0x80_0000 + qp, false)]
        {
            frame += 1;
            let bth = BthRepr {
                opcode,
                pkey: 0xffff,
                dest_qp: dqp,
                psn: qp,
                ackreq: data,
                ..Default::default()
            };
            let mut fb = FrameBuilder::new(Network::ipv4(src, dst), bth);
            if data {
                fb.payload = &payload;
            } else {
                fb.headers.aeth = Some(AethRepr::ack(0x1f, 1));
            }
            let n = fb.emit(&mut buf).unwrap();
            let p = parse_ethernet(&buf[..n], &Config::default()).unwrap();
            stats.add(frame, frame * 100, n as u32, n as u32, Some(&p));
        }
        if qp % 1000 == 0 {
            let (m, listed, cm) = stats.state();
            peak =
                (peak.0.max(m.flows), peak.1.max(m.lru_queue), peak.2.max(listed), peak.3.max(cm));
            assert!(m.pairing_index <= 8 * CAP, "{m:?}");
        }
    }
    let (flows, clock, listed, cm) = peak;
    assert!(flows <= CAP, "{flows} flows, cap {CAP}");
    assert!(clock <= 2 * CAP + 1024, "{clock} clock entries");
    assert!(listed < CAP + CAP / 4, "{listed} ended connections kept");
    assert_eq!(cm, 0);
    let (conns, not_listed) = stats.connections();
    assert_eq!(conns.len(), CAP, "the report lists the cap's worth");
    assert_eq!(
        conns.len() as u64 + not_listed,
        u64::from(QPS),
        "every connection listed or counted"
    );
    assert!(
        conns
            .iter()
            .all(|c| c.info.paired_by == Some(roce_conformance::PairedBy::Psn)
                && c.total.packets == 2)
    );
}
