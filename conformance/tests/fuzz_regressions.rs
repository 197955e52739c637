//! Inputs on which the `conformance` fuzz target (fuzz/, `bash fuzz/ci.sh`) failed, replayed.
//! The files in testdata/regressions/ are fuzz inputs: bytes 0 and 1 select the checker
//! options (fuzz/common/src/sequence.rs; 0x80 0x00 is one tracked flow, PMTU 256, 4 findings
//! per rule, no timer option), then records of a little-endian u16 length and that many
//! bytes of an Ethernet frame.
//!
//! Fixed: the checker's state grows with the live (tracked) flows only; these three kinds of
//! packets that never become a tracked flow used to grow it with every new connection seen
//! (now the finding counters and the congestion maps are capped from `max_flows`). Each
//! file feeds 300 such packets with one tracked flow allowed:
//! - conformance-ud-finding-counters.bin: UD SEND_ONLY with a bad ICRC to 300 QPs: the
//!   per-(connection, rule) finding counters (finding.rs `Sink::counts`) reach 300; they are
//!   forgotten only when a tracked flow is evicted, and UD is never tracked;
//! - conformance-ce-host-pairs.bin: an ECN-CE-marked RC SEND_ONLY from 300 hosts: CE bursts
//!   waiting for a CNP (congestion.rs `Congestion::waiting`) reach 300; a host pair's list
//!   expires only when the same pair is seen again, and the map of pairs has no cap;
//! - conformance-cnp-qps.bin: CNPs to 300 QPs: `Congestion::last_cnp` reaches 300 (it is
//!   capped only in `mark`, never in `cnp`), and the CC-CNP-TARGET counters grow as above.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use roce_conformance::{Checker, FrameInfo, Options};
use roce_parser::{parse_ethernet, Config};

/// Bounds the fuzz target checks for one tracked flow (fuzz/common/src/targets.rs).
const MAX_FINDING_COUNTERS: usize = 2 * 64 + 64;
const MAX_CONGESTION: usize = (3 + 64) * 2;

fn replay(name: &str) {
    let path = format!("{}/../testdata/regressions/{name}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(data[..2], [0x80, 0x00], "option bytes");
    let opts =
        Options { max_flows: 1, pmtu: Some(256), max_findings_per_rule: 4, ..Options::default() };
    let mut checker = Checker::new(opts);
    let mut rest = &data[2..];
    let mut number = 0u64;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]) & 0x7fff);
        let frame = &rest[2..(2 + len).min(rest.len())];
        rest = &rest[2 + frame.len()..];
        number += 1;
        let info = FrameInfo {
            number,
            ts_ns: 1_700_000_000_000_000_000 + 1000 * number,
            caplen: frame.len() as u32,
            len: frame.len() as u32,
        };
        let p = parse_ethernet(frame, &Config::default()).unwrap();
        checker.feed(&info, &p);
        let _ = checker.take_findings();
        let s = checker.state();
        assert!(s.flows <= 1, "frame {number}: {s:?}");
        assert!(s.finding_counters <= MAX_FINDING_COUNTERS, "frame {number}: {s:?}");
        assert!(s.congestion <= MAX_CONGESTION, "frame {number}: {s:?}");
    }
    assert_eq!(number, 300);
    let _ = checker.finish();
}

#[test]
fn ud_finding_counters_stay_bounded() {
    replay("conformance-ud-finding-counters.bin");
}

#[test]
fn ce_waiting_stays_bounded() {
    replay("conformance-ce-host-pairs.bin");
}

#[test]
fn cnp_times_stay_bounded() {
    replay("conformance-cnp-qps.bin");
}
