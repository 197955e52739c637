//! Every conformance rule on generated traffic. The scenarios live in the suite
//! (`roce_inspect::internal::gen::suite`, written to pcaps/conformance/): each must give exactly its
//! expected findings (rule and frames) through the library, and the clean ones nothing.
//! The tests below add what a single expect file cannot say.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::net::{IpAddr, Ipv4Addr};

use roce_conformance::{Checker, Finding, FrameInfo, Options, Report, Severity};
use roce_inspect::internal::gen::suite::{Expected, SUITE};
use roce_inspect::internal::gen::{Endpoint, RcConn, Trace};
use roce_parser::{parse_ethernet, Config};

fn ip(d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, d))
}

/// Runs the checker over (timestamp, bytes, wire length) frames.
fn check_frames(frames: &[(u64, Vec<u8>, u32)], opts: Options) -> Report {
    let mut c = Checker::new(opts);
    let mut all: Vec<Finding> = Vec::new();
    for (i, (ts, data, len)) in frames.iter().enumerate() {
        let info =
            FrameInfo { number: i as u64 + 1, ts_ns: *ts, caplen: data.len() as u32, len: *len };
        c.feed(&info, &parse_ethernet(data, &Config::default()).unwrap());
        all.append(&mut c.take_findings());
    }
    let mut r = c.finish();
    all.append(&mut r.findings);
    r.findings = all;
    r
}

fn frames_of(t: &Trace) -> Vec<(u64, Vec<u8>, u32)> {
    t.frames.iter().map(|f| (f.ts_ns, f.data.clone(), f.data.len() as u32)).collect()
}

fn found(r: &Report) -> Vec<Expected> {
    let mut v: Vec<Expected> = r
        .findings
        .iter()
        .map(|f| Expected { rule: f.rule.to_string(), frames: f.frames.clone() })
        .collect();
    v.sort();
    v
}

#[test]
fn every_suite_scenario_gives_exactly_its_findings() {
    for s in SUITE {
        let (t, expect) = s.generate();
        let opts = Options {
            assume_complete: expect.options.assume_complete,
            qp_timeout: expect.options.qp_timeout,
            cnp_min_interval: expect
                .options
                .cnp_min_interval
                .as_deref()
                .map(|c| roce_conformance::CnpPacing::parse(c).unwrap()),
            rnr_timer: expect.options.rnr_timer,
            expect_dscp: expect.options.expect_dscp,
            expect_cnp_dscp: expect.options.expect_cnp_dscp,
            expect_pcp: expect.options.expect_pcp,
            ..Options::default()
        };
        let r = check_frames(&frames_of(&t), opts);
        assert_eq!(found(&r), expect.findings, "{}: {:#?}", s.name, r.findings);
        // The rule catalog's severity, except where the finding says otherwise (vendor
        // opcodes and the like are warnings under an error rule).
        for f in &r.findings {
            let rule = roce_conformance::find_rule(f.rule).unwrap();
            assert!(f.severity == rule.severity || f.rule.starts_with("PKT-"), "{}: {f:?}", s.name);
        }
        // Clean scenarios stay clean without --assume-complete too.
        if s.name.starts_with("clean-") {
            assert!(
                check_frames(&frames_of(&t), Options::default()).findings.is_empty(),
                "{}",
                s.name
            );
        }
    }
}

fn scenario(name: &str) -> Trace {
    SUITE.iter().find(|s| s.name == name).unwrap().generate().0
}

#[test]
fn a_psn_hole_is_capture_loss_unless_the_capture_is_known_complete() {
    let t = scenario("req-psn-skip");
    let r = check_frames(&frames_of(&t), Options::default());
    assert_eq!(found(&r), vec![Expected { rule: "CAP-GAP".into(), frames: vec![4, 6] }]);
    assert_eq!(r.errors, 0);
    assert_eq!(rc(&r).missing_packets, 1);
}

/// The RC connection of a scenario (the CM exchange on QP1 is listed too).
fn rc(r: &Report) -> &roce_conformance::ConnectionReport {
    r.connections.iter().find(|c| c.info.transport == "RC").unwrap()
}

#[test]
fn host_capture_effects_are_warnings_with_completeness() {
    let t = scenario("host-capture-loss-reorder");
    let r = check_frames(&frames_of(&t), Options::default());
    assert_eq!(r.errors, 0);
    assert!(r
        .findings
        .iter()
        .all(|f| f.severity == Severity::Warning && f.rule.starts_with("CAP-")));
    let c = rc(&r);
    assert_eq!(c.missing_packets, 1);
    assert!(c.completeness < 1.0 && c.completeness > 0.9, "{c:?}");
}

#[test]
fn interleaved_connections_are_told_apart() {
    let r = check_frames(&frames_of(&scenario("clean-psn-wrap-interleaved")), Options::default());
    assert_eq!(r.connections.len(), 3);
    assert!(r
        .connections
        .iter()
        .filter(|c| c.info.transport == "RC")
        .all(|c| c.info.paired_by.is_some()));
}

#[test]
fn truncation_on_the_wire_is_pkt_length_but_a_snap_length_is_not() {
    let mut t = Trace::new();
    let mut c =
        RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000);
    c.send_or_write(&mut t, true, true, 600, None);
    let mut frames = frames_of(&t);
    // Frame 1 cut to 100 bytes by a snap length (the wire length is kept): a capture note.
    frames[0].1.truncate(100);
    let r = check_frames(&frames, Options { assume_complete: true, ..Options::default() });
    assert_eq!(found(&r), vec![Expected { rule: "CAP-TRUNCATED".into(), frames: vec![1] }]);
    // The same bytes claimed as the whole frame: the frame lies about its length.
    frames[0].2 = 100;
    let r = check_frames(&frames, Options { assume_complete: true, ..Options::default() });
    assert_eq!(found(&r), vec![Expected { rule: "PKT-LENGTH".into(), frames: vec![1] }]);
}

#[test]
fn eviction_is_reported_and_state_stays_bounded() {
    let mut t = Trace::new();
    for i in 0..50u32 {
        let mut c = RcConn::new(
            Endpoint::new(ip(1), 0x1000 + i),
            Endpoint::new(ip(2), 0x2000 + i),
            1024,
            i * 100,
            i * 200,
        );
        c.send_or_write(&mut t, true, false, 10, None);
    }
    let r = check_frames(
        &frames_of(&t),
        Options { max_flows: 10, assume_complete: true, ..Options::default() },
    );
    assert!(r.state.flows <= 10, "{:?}", r.state);
    let evictions = r.findings.iter().filter(|f| f.rule == "CAP-EVICT").count();
    assert_eq!(r.state.evicted as usize, evictions + r.suppressed as usize);
    // A connection (both directions) is evicted at once: 50 connections, 5 fit.
    assert!(r.state.evicted >= 45, "{:?}", r.state);
    assert_eq!(r.connections.len(), 10, "the report lists --max-flows connections");
    assert_eq!(r.connections.len() as u64 + r.connections_not_listed, 50);
    assert!(r.findings.iter().all(|f| f.rule == "CAP-EVICT"));
}

#[test]
fn rules_can_be_disabled_and_enabled() {
    let t = scenario("pkt-rules");
    let mut rules = roce_conformance::RuleSet::default();
    rules.disable("PKT-ICRC").unwrap();
    let r = check_frames(
        &frames_of(&t),
        Options { rules, assume_complete: true, ..Options::default() },
    );
    assert!(r.findings.iter().all(|f| f.rule != "PKT-ICRC") && r.findings.len() == 9);
    let mut only = roce_conformance::RuleSet::default();
    only.disable_all();
    only.enable("PKT-TVER").unwrap();
    let r = check_frames(
        &frames_of(&t),
        Options { rules: only, assume_complete: true, ..Options::default() },
    );
    assert_eq!(found(&r), vec![Expected { rule: "PKT-TVER".into(), frames: vec![2] }]);
}

/// After an idle gap the peer's first answer decides whether the requester's far PSN began a
/// new incarnation: in req-psn-idle-nak and req-psn-idle-msn it proves the QP was not reset
/// (one incarnation, REQ-PSN named after it); in clean-idle-reconnect it is a fresh QP's (two
/// incarnations, the second an idle reconnect).
#[test]
fn idle_reconnect_is_undone_by_contrary_evidence() {
    for (name, incarnations, first_packets) in
        [("req-psn-idle-nak", 1, 12), ("req-psn-idle-msn", 1, 12), ("clean-idle-reconnect", 2, 10)]
    {
        let s = SUITE.iter().find(|s| s.name == name).unwrap();
        let (t, _) = s.generate();
        let r =
            check_frames(&frames_of(&t), Options { assume_complete: true, ..Options::default() });
        assert_eq!(r.connections.len(), incarnations, "{name}: {:?}", r.connections);
        let idle = r.connections.iter().filter(|c| c.info.began.how.as_str() == "idle_reconnect");
        assert_eq!(idle.count(), incarnations - 1, "{name}");
        assert_eq!(r.connections[0].info.packets, first_packets, "{name}");
        for f in &r.findings {
            assert_eq!(f.connection.map(|c| c.incarnation), Some(1), "{name}: {f:?}");
        }
    }
}
