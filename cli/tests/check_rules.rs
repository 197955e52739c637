//! Every conformance rule on generated traffic: a scenario where it must fire (rule ID and
//! exact frames asserted) and correct traffic where it must stay silent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::net::{IpAddr, Ipv4Addr};

use roce_conformance::{Checker, Finding, FrameInfo, Options, Report, Severity};
use roce_inspect::gen::conn::{frame, op, ud_send, Cm, Sent};
use roce_inspect::gen::{scenarios, Endpoint, RcConn, Trace};
use roce_parser::headers::*;
use roce_parser::{parse_ethernet, Config};

fn ip(d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, d))
}

fn conn() -> RcConn {
    RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000)
}

/// Runs the checker over the frames (caplen = len unless `snap` cuts them).
fn check_frames(frames: &[(u64, Vec<u8>, u32)], opts: Options) -> Report {
    let mut c = Checker::new(opts);
    let mut all: Vec<Finding> = Vec::new();
    for (i, (ts, data, len)) in frames.iter().enumerate() {
        let info =
            FrameInfo { number: i as u64 + 1, ts_ns: *ts, caplen: data.len() as u32, len: *len };
        let p = parse_ethernet(data, &Config::default()).unwrap();
        c.feed(&info, &p);
        all.append(&mut c.take_findings());
    }
    let mut r = c.finish();
    all.append(&mut r.findings);
    r.findings = all;
    r
}

fn check(t: &Trace, opts: Options) -> Report {
    let frames: Vec<(u64, Vec<u8>, u32)> =
        t.frames.iter().map(|f| (f.ts_ns, f.data.clone(), f.data.len() as u32)).collect();
    check_frames(&frames, opts)
}

fn complete() -> Options {
    Options { assume_complete: true, ..Options::default() }
}

/// The findings of one rule, as (frames, severity).
fn of(r: &Report, rule: &str) -> Vec<(Vec<u64>, Severity)> {
    r.findings.iter().filter(|f| f.rule == rule).map(|f| (f.frames.clone(), f.severity)).collect()
}

fn assert_only(r: &Report, rule: &str, expect: &[(&[u64], Severity)]) {
    let got = of(r, rule);
    let want: Vec<(Vec<u64>, Severity)> = expect.iter().map(|(f, s)| (f.to_vec(), *s)).collect();
    assert_eq!(got, want, "{rule}: all findings {:#?}", r.findings);
    let others: Vec<&Finding> = r.findings.iter().filter(|f| f.rule != rule).collect();
    assert!(others.is_empty(), "unexpected findings besides {rule}: {others:#?}");
}

fn assert_silent(r: &Report) {
    assert!(r.findings.is_empty(), "expected no findings: {:#?}", r.findings);
}

/// A normal RC mix: SENDs, WRITEs, READs, atomics both ways.
fn clean_mix(c: &mut RcConn, t: &mut Trace) {
    c.send_or_write(t, true, false, 3000, Some(9));
    c.send_or_write(t, false, false, 10, None);
    c.send_or_write(t, true, true, 4096, None);
    c.read(t, true, 2500);
    c.read(t, false, 0);
    c.atomic(t, true, true);
    c.send_or_write(t, true, true, 0, Some(1));
    c.send_or_write(t, true, false, 1024, None);
}

#[test]
fn clean_traffic_is_silent_even_when_assumed_complete() {
    let mut t = Trace::new();
    let mut c = conn();
    clean_mix(&mut c, &mut t);
    assert_silent(&check(&t, complete()));
    assert_silent(&check(&t, Options::default()));
    // The project's sample: CM, go-back-N after a NAK, RNR retry after the timer, CNP, UD, IPv6.
    let s = scenarios::sample(1);
    assert_silent(&check(&s, complete()));
}

#[test]
fn psn_wraparound_and_interleaved_connections_are_silent() {
    let mut t = Trace::new();
    let mut c1 = RcConn::new(
        Endpoint::new(ip(1), 0x10),
        Endpoint::new(ip(2), 0x20),
        1024,
        0xff_fffd,
        0xff_ffff,
    );
    let mut c2 =
        RcConn::new(Endpoint::new(ip(1), 0x11), Endpoint::new(ip(2), 0x21), 1024, 0xff_fff0, 7);
    let mut c3 =
        RcConn::new(Endpoint::new(ip(3), 0x12), Endpoint::new(ip(2), 0x22), 4096, 1, 2).uc();
    for _ in 0..4 {
        c1.send_or_write(&mut t, true, true, 5000, None);
        c2.read(&mut t, true, 3000);
        c3.send_or_write(&mut t, true, false, 9000, None);
        c1.read(&mut t, false, 1500);
        c2.send_or_write(&mut t, false, false, 2100, Some(3));
    }
    let r = check(&t, complete());
    assert_silent(&r);
    assert_eq!(r.connections.len(), 3);
}

#[test]
fn go_back_n_rnr_and_read_retry_recoveries_are_silent() {
    let mut t = Trace::new();
    let mut c = conn();
    // Loss downstream of the capture: NAK names the lost PSN; resend from it in order.
    let pkts = c.message(true, true, 4096, None);
    for p in &pkts {
        c.emit_request(&mut t, true, p);
    }
    c.nak(&mut t, true, pkts[2].psn, AethRepr::nak(0, 0).syndrome);
    for p in &pkts[2..] {
        c.emit_request(&mut t, true, p);
    }
    c.ack(&mut t, true, pkts[3].psn, 1);
    // RNR retry after the timer (code 3 = 0.03 ms).
    let p = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &p[0]);
    c.nak(&mut t, true, p[0].psn, AethRepr::rnr_nak(3, 1).syndrome);
    t.advance(40_000);
    c.emit_request(&mut t, true, &p[0]);
    c.ack(&mut t, true, p[0].psn, 1);
    // READ retry after a lost response: the MIDDLE response is lost; the requester re-reads
    // the rest from the missing PSN with the VA advanced by one PMTU.
    let req = c.read_request(&mut t, true, 3000);
    c.read_responses(&mut t, true, req.psn, 3000, &[1]);
    let mut retry = req.clone();
    retry.psn = req.psn + 1;
    let reth = req.headers.reth.unwrap();
    retry.headers.reth =
        Some(RethRepr { va: reth.va + 1024, rkey: reth.rkey, dma_len: reth.dma_len - 1024 });
    t.advance(2_000_000);
    c.emit_request(&mut t, true, &retry);
    c.sides[0].msn -= 1;
    let msn = c.sides[0].msn + 1;
    c.sides[0].msn = msn;
    let aeth = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, msn)), ..Default::default() };
    c.emit_response(&mut t, true, op::READ_RESPONSE_FIRST, req.psn + 1, aeth, &[1; 1024]);
    c.emit_response(&mut t, true, op::READ_RESPONSE_LAST, req.psn + 2, aeth, &[1; 952]);
    assert_silent(&check(&t, complete()));
}

fn cm_conn(t: &mut Trace) -> RcConn {
    let c = conn();
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.connect(t, &c, 4000);
    c
}

#[test]
fn pkt_rules_fire_on_the_bad_frame() {
    let a = Endpoint::new(ip(1), 0x111);
    let b = Endpoint::new(ip(2), 0x222);
    let mut t = Trace::new();
    let bth = |opcode: u8, psn: u32| BthRepr {
        opcode,
        pkey: 0xffff,
        dest_qp: b.qpn,
        psn,
        ..Default::default()
    };
    // 1: bad ICRC. 2: TVer 1. 3: reserved opcode. 4: vendor opcode. 5: READ with payload.
    let mut f = frame(&a, &b, bth(op::SEND_ONLY, 1), ExtHeaders::default(), &[1, 2, 3, 4], 2);
    f.icrc = Some(0xdead_beef);
    t.push(&f);
    t.push(&frame(
        &a,
        &b,
        BthRepr { tver: 1, ..bth(op::SEND_ONLY, 2) },
        ExtHeaders::default(),
        &[],
        2,
    ));
    t.push(&frame(&a, &b, bth(0x15, 3), ExtHeaders::default(), &[], 2));
    t.push(&frame(&a, &b, bth(0xc5, 4), ExtHeaders::default(), &[], 2));
    t.push(&frame(&a, &b, bth(op::READ_REQUEST, 5), ExtHeaders::default(), &[0; 8], 2));
    // 6: SEND_FIRST padded. 7: reserved bits. 8: CNP with an 8-byte body. 9: UD to QP1, wrong Q_Key.
    let mut f = frame(&a, &b, bth(op::SEND_FIRST, 6), ExtHeaders::default(), &[0; 1022], 2);
    f.padcnt = Some(2);
    t.push(&f);
    t.push(&frame(
        &a,
        &b,
        BthRepr { resv7: 0x11, ..bth(op::SEND_ONLY, 8) },
        ExtHeaders::default(),
        &[],
        2,
    ));
    t.push(&frame(
        &a,
        &b,
        BthRepr { becn: true, ..bth(op::CNP, 0) },
        ExtHeaders::default(),
        &[0; 8],
        2,
    ));
    ud_send(
        &mut t,
        &Endpoint { qpn: 1, ..a },
        &Endpoint { qpn: 1, ..b },
        0x1234,
        1,
        &[0; 256],
        None,
    );
    let r = check(
        &t,
        Options {
            rules: only(&[
                "PKT-ICRC",
                "PKT-TVER",
                "PKT-OPCODE",
                "PKT-LENGTH",
                "PKT-PAD",
                "PKT-RESERVED",
                "PKT-CNP",
                "PKT-UD-QKEY",
            ]),
            ..complete()
        },
    );
    let e = Severity::Error;
    assert_eq!(of(&r, "PKT-ICRC"), vec![(vec![1], e)]);
    assert_eq!(of(&r, "PKT-TVER"), vec![(vec![2], e)]);
    assert_eq!(of(&r, "PKT-OPCODE"), vec![(vec![3], e), (vec![4], Severity::Warning)]);
    assert_eq!(of(&r, "PKT-LENGTH"), vec![(vec![5], e)]);
    assert_eq!(of(&r, "PKT-PAD"), vec![(vec![6], e)]);
    assert_eq!(of(&r, "PKT-RESERVED"), vec![(vec![7], Severity::Warning)]);
    assert_eq!(of(&r, "PKT-CNP"), vec![(vec![8], e)]);
    assert_eq!(of(&r, "PKT-UD-QKEY"), vec![(vec![9], e)]);
    assert_eq!(r.findings.len(), 9, "{:#?}", r.findings);
}

#[test]
fn truncation_on_the_wire_is_pkt_length_but_a_snap_length_is_not() {
    let mut t = Trace::new();
    let mut c = conn();
    c.send_or_write(&mut t, true, true, 600, None);
    let mut frames: Vec<(u64, Vec<u8>, u32)> =
        t.frames.iter().map(|f| (f.ts_ns, f.data.clone(), f.data.len() as u32)).collect();
    // Frame 1 cut to 100 bytes by a snap length (len keeps the wire length): a capture note.
    frames[0].1.truncate(100);
    let r = check_frames(&frames, complete());
    assert_only(&r, "CAP-TRUNCATED", &[(&[1], Severity::Warning)]);
    // The same bytes claimed as the whole frame: the frame lies about its length.
    frames[0].2 = 100;
    let r = check_frames(&frames, complete());
    assert_only(&r, "PKT-LENGTH", &[(&[1], Severity::Error)]);
}

fn only(ids: &[&str]) -> roce_conformance::RuleSet {
    let mut s = roce_conformance::RuleSet::default();
    s.disable_all();
    for id in ids {
        s.enable(id).unwrap();
    }
    s
}

#[test]
fn req_psn_skip_and_reuse_inside_a_read() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t); // frames 1-3: CM
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5 (ACK)
    c.sides[0].next_psn += 1; // the requester skips a PSN
    c.send_or_write(&mut t, true, false, 10, None); // 6, 7
    let r = check(&t, complete());
    assert_only(&r, "REQ-PSN", &[(&[4, 6], Severity::Error)]);
    // Without --assume-complete the same hole is capture loss.
    let r = check(&t, Options::default());
    assert_only(&r, "CAP-GAP", &[(&[4, 6], Severity::Warning)]);

    // A SEND that reuses a PSN consumed by a 3-PSN READ.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let rd = c.read(&mut t, true, 3000); // 4 (READ), 5-7 responses
    let mut s = c.message(true, false, 8, None);
    s[0].psn = rd.psn + 1;
    c.emit_request(&mut t, true, &s[0]); // 8
    let r = check(&t, Options { rules: only(&["REQ-PSN"]), ..complete() });
    assert_only(&r, "REQ-PSN", &[(&[4, 8], Severity::Error)]);
}

#[test]
fn req_msg_seq_interleave_and_orphans() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let a = c.message(true, false, 3000, None); // FIRST MIDDLE LAST
    let b = c.message(true, true, 10, None); // WRITE ONLY
    c.emit_request(&mut t, true, &a[0]); // 4 FIRST
    let mut w = b[0].clone();
    w.psn = a[1].psn;
    c.emit_request(&mut t, true, &w); // 5 WRITE_ONLY inside the SEND: interleave
    let mut m = a[1].clone();
    m.psn = a[2].psn;
    c.emit_request(&mut t, true, &m); // 6 SEND_MIDDLE with no message in progress
    let r = check(&t, Options { rules: only(&["REQ-MSG-SEQ"]), ..complete() });
    assert_only(&r, "REQ-MSG-SEQ", &[(&[4, 5], Severity::Error), (&[6], Severity::Error)]);
}

#[test]
fn req_length_dmalen_and_atomic_alignment() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t); // PMTU 1024 from the REQ
    let mut s = c.message(true, false, 3000, None);
    s[0].payload.truncate(1000); // FIRST shorter than the PMTU
    for p in &s {
        c.emit_request(&mut t, true, p); // 4, 5, 6
    }
    let mut w = c.message(true, true, 2048, None);
    w[0].headers.reth.as_mut().unwrap().dma_len = 4096; // RETH says 4096, message carries 2048
    for p in &w {
        c.emit_request(&mut t, true, p); // 7, 8
    }
    let psn = c.sides[0].next_psn;
    c.sides[0].next_psn += 1;
    let atomic = Sent {
        opcode: op::FETCH_ADD,
        psn,
        headers: ExtHeaders {
            atomic_eth: Some(AtomicEthRepr { va: 0x1004, rkey: 1, swap_add: 1, compare: 0 }),
            ..Default::default()
        },
        payload: vec![],
        ackreq: true,
    };
    c.emit_request(&mut t, true, &atomic); // 9
    let r = check(
        &t,
        Options { rules: only(&["REQ-LENGTH", "REQ-DMALEN", "REQ-ATOMIC-ALIGN"]), ..complete() },
    );
    assert_eq!(of(&r, "REQ-LENGTH"), vec![(vec![4], Severity::Error)]);
    assert_eq!(of(&r, "REQ-DMALEN"), vec![(vec![7, 8], Severity::Error)]);
    assert_eq!(of(&r, "REQ-ATOMIC-ALIGN"), vec![(vec![9], Severity::Error)]);
    assert_eq!(r.findings.len(), 3, "{:#?}", r.findings);
}

#[test]
fn req_retransmission_rules() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let w = c.message(true, true, 3072, None);
    for p in &w {
        c.emit_request(&mut t, true, p); // 4, 5, 6
    }
    c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 0).syndrome); // 7 names the MIDDLE
    c.emit_request(&mut t, true, &w[2]); // 8: resends the LAST first (go-back-N broken)
    let mut changed = w[2].clone();
    changed.payload.truncate(10);
    t.advance(5_000_000);
    c.emit_request(&mut t, true, &changed); // 9: same PSN, different length
    let r = check(&t, complete());
    assert_eq!(of(&r, "REQ-GBN"), vec![(vec![7, 8], Severity::Error)]);
    assert_eq!(of(&r, "REQ-RETX-SAME"), vec![(vec![6, 9], Severity::Error)]);
    assert_eq!(r.findings.len(), 2, "{:#?}", r.findings);

    // RNR NAK with a 0.64 ms timer; the retry comes after 0.1 ms.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 4
    c.nak(&mut t, true, s[0].psn, AethRepr::rnr_nak(12, 0).syndrome); // 5
    t.advance(100_000);
    c.emit_request(&mut t, true, &s[0]); // 6
    assert_only(&check(&t, complete()), "REQ-RNR-WAIT", &[(&[5, 6], Severity::Error)]);

    // A retransmission nothing explains.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 4
    c.emit_request(&mut t, true, &s[0]); // 5
    assert_only(&check(&t, complete()), "REQ-RETX-CAUSE", &[(&[4, 5], Severity::Warning)]);

    // A re-issued READ whose VA does not advance with the PSN.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let req = c.read_request(&mut t, true, 3000); // 4
    c.read_responses(&mut t, true, req.psn, 3000, &[1, 2]); // 5: FIRST only
    let mut retry = req.clone();
    retry.psn = req.psn + 1; // VA and length unchanged: wrong
    t.advance(5_000_000);
    c.emit_request(&mut t, true, &retry); // 6
    assert_only(&check(&t, complete()), "REQ-READ-RETRY", &[(&[4, 6], Severity::Error)]);
}

#[test]
fn capture_integrity_gaps_reorder_and_time() {
    // Packets removed from the capture: only capture-integrity warnings.
    let mut t = Trace::new();
    let mut c = conn();
    clean_mix(&mut c, &mut t);
    let mut frames: Vec<(u64, Vec<u8>, u32)> =
        t.frames.iter().map(|f| (f.ts_ns, f.data.clone(), f.data.len() as u32)).collect();
    frames.remove(1); // the SEND_MIDDLE of the first message
    let r = check_frames(&frames, Options::default());
    assert_only(&r, "CAP-GAP", &[(&[1, 2], Severity::Warning)]);
    assert_eq!(r.errors, 0);
    assert_eq!(r.connections[0].missing_packets, 1);

    // Transmit and receive reordered: the ACK captured before the request it answers.
    // (Host captures keep timestamps increasing: only the bytes change places.)
    let mut frames: Vec<(u64, Vec<u8>, u32)> =
        t.frames.iter().map(|f| (f.ts_ns, f.data.clone(), f.data.len() as u32)).collect();
    let (x, y) = (frames[2].1.clone(), frames[3].1.clone());
    frames[2].1 = y; // the ACK of SEND_LAST_IMM first (frame 3) ...
    frames[3].1 = x; // ... then the request (frame 4)
    let r = check_frames(&frames, Options::default());
    assert_only(&r, "CAP-REORDER", &[(&[3, 4], Severity::Warning)]);
    // Timestamps going backwards.
    let mut t2 = frames.clone();
    t2[3].0 = t2[2].0 - 500;
    let r = check_frames(&t2, Options { rules: only(&["CAP-TIME"]), ..Options::default() });
    assert_only(&r, "CAP-TIME", &[(&[4], Severity::Warning)]);
}

#[test]
fn rsp_ack_range_when_requests_stay_below_an_acknowledged_psn() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    let next = c.sides[0].next_psn;
    c.ack(&mut t, true, next + 5, 1); // 6: ACK of a PSN never sent
    t.advance(2_000_000);
    c.send_or_write(&mut t, true, false, 10, None); // 7 continues below it, 8
    let r = check(&t, Options { rules: only(&["RSP-ACK-RANGE"]), ..complete() });
    assert_only(&r, "RSP-ACK-RANGE", &[(&[6, 7], Severity::Error)]);
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
    let r = check(&t, Options { max_flows: 10, ..complete() });
    assert!(r.state.flows <= 10, "{:?}", r.state);
    assert_eq!(r.state.evicted as usize, of(&r, "CAP-EVICT").len() + r.suppressed as usize);
    assert!(r.state.evicted >= 80, "{:?}", r.state);
    assert!(r.findings.iter().all(|f| f.rule == "CAP-EVICT"));
}

#[test]
fn responder_ack_rules() {
    let e = Severity::Error;
    // ACK PSNs going backwards.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 6
    c.ack(&mut t, true, s[0].psn - 2, 1); // 7: names a PSN before the one acked in 5
    assert_only(
        &check(&t, Options { rules: only(&["RSP-ACK-MONOTONIC"]), ..complete() }),
        "RSP-ACK-MONOTONIC",
        &[(&[5, 7], e)],
    );

    // A NAK naming an acknowledged PSN, and a second NAK for the same gap.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    let acked = c.sides[0].next_psn - 1;
    let w = c.message(true, true, 3072, None);
    for p in &w {
        c.emit_request(&mut t, true, p); // 6, 7, 8
    }
    c.nak(&mut t, true, acked, AethRepr::nak(0, 1).syndrome); // 9: names the PSN ACKed in 5
    c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 1).syndrome); // 10: a real gap
    c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 1).syndrome); // 11: the same gap again
    let r = check(&t, Options { rules: only(&["RSP-NAK-SEQ"]), ..complete() });
    assert_only(&r, "RSP-NAK-SEQ", &[(&[5, 9], e), (&[10, 11], e)]);

    // MSN jumping by two for one message.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5 (MSN 1)
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 6
    c.ack(&mut t, true, s[0].psn, 2); // 7: MSN 3
    assert_only(
        &check(&t, Options { rules: only(&["RSP-MSN"]), ..complete() }),
        "RSP-MSN",
        &[(&[5, 7], e)],
    );

    // A duplicate acknowledged with its own old PSN instead of ePSN - 1.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let first = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &first[0]); // 4
    c.ack(&mut t, true, first[0].psn, 1); // 5
    c.send_or_write(&mut t, true, false, 10, None); // 6, 7
    c.emit_request(&mut t, true, &first[0]); // 8: duplicate
    c.nak(&mut t, true, first[0].psn, AethRepr::ack(0x1f, 2).syndrome); // 9: ACK of the old PSN
    assert_only(
        &check(&t, Options { rules: only(&["RSP-DUP"]), ..complete() }),
        "RSP-DUP",
        &[(&[8, 9], e)],
    );
}

#[test]
fn responder_read_atomic_and_error_rules() {
    let e = Severity::Error;
    // READ responses in the wrong order, and a READ answered with too few bytes.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let rd = c.read_request(&mut t, true, 3000); // 4: three PSNs
    let aeth = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 1)), ..Default::default() };
    c.emit_response(&mut t, true, op::READ_RESPONSE_FIRST, rd.psn, aeth, &[0; 1024]); // 5
    c.emit_response(&mut t, true, op::READ_RESPONSE_LAST, rd.psn + 1, aeth, &[0; 1024]); // 6: should be MIDDLE
    let rd2 = c.read_request(&mut t, true, 100); // 7
    let aeth2 = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 2)), ..Default::default() };
    c.emit_response(&mut t, true, op::READ_RESPONSE_ONLY, rd2.psn, aeth2, &[0; 60]); // 8: 60 of 100 bytes
    let r = check(&t, Options { rules: only(&["RSP-READ"]), ..complete() });
    assert_only(&r, "RSP-READ", &[(&[4, 6], e), (&[7, 8], e)]);

    // An atomic answered by a plain ACK.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let psn = c.sides[0].next_psn;
    c.sides[0].next_psn += 1;
    let fa = Sent {
        opcode: op::FETCH_ADD,
        psn,
        headers: ExtHeaders {
            atomic_eth: Some(AtomicEthRepr { va: 0x1000, rkey: 1, swap_add: 1, compare: 0 }),
            ..Default::default()
        },
        payload: vec![],
        ackreq: true,
    };
    c.emit_request(&mut t, true, &fa); // 4
    c.ack(&mut t, true, psn, 1); // 5
    assert_only(
        &check(&t, Options { rules: only(&["RSP-ATOMIC"]), ..complete() }),
        "RSP-ATOMIC",
        &[(&[4, 5], e)],
    );

    // After a remote access error NAK the responder's QP keeps talking.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let w = c.message(true, true, 100, None);
    c.emit_request(&mut t, true, &w[0]); // 4
    c.nak(&mut t, true, w[0].psn, AethRepr::nak(2, 0).syndrome); // 5: remote access error
    c.send_or_write(&mut t, false, false, 10, None); // 6: b sends a request on the same QP; 7 ACK
    let r = check(&t, Options { rules: only(&["RSP-NAK-ERROR"]), ..complete() });
    assert_only(&r, "RSP-NAK-ERROR", &[(&[5, 6], e)]);
}

#[test]
fn ackreq_unanswered_until_the_capture_ends() {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5: answered
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 6: AckReq, never answered
    t.advance(300_000_000);
    c.send_or_write(&mut t, false, false, 10, None); // 7, 8: the capture goes on
    let r = check(&t, Options { rules: only(&["RSP-ACKREQ"]), ..complete() });
    assert_only(&r, "RSP-ACKREQ", &[(&[6], Severity::Warning)]);
}

#[test]
fn congestion_rules() {
    let w = Severity::Warning;
    // CE-marked WRITEs and no CNP at all.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.ecn = 3;
    c.send_or_write(&mut t, true, true, 2048, None); // 4, 5 marked; 6 ACK
    c.ecn = 2;
    t.advance(5_000_000);
    c.send_or_write(&mut t, true, true, 10, None); // 7, 8
    let r = check(&t, Options { rules: only(&["CC-CNP", "CC-CNP-TARGET"]), ..complete() });
    assert_only(&r, "CC-CNP", &[(&[4], w)]);
    // A CNP within the window answers the whole burst: silent.
    let mut t2 = Trace::new();
    let mut c = cm_conn(&mut t2);
    c.ecn = 3;
    c.send_or_write(&mut t2, true, true, 2048, None);
    c.ecn = 2;
    c.cnp(&mut t2, true);
    t2.advance(5_000_000);
    c.send_or_write(&mut t2, true, true, 10, None);
    assert_silent(&check(&t2, complete()));
    // A CNP to a QP that sent no marked data.
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    c.send_or_write(&mut t, true, true, 10, None); // 4, 5
    c.cnp(&mut t, true); // 6
    let r = check(&t, Options { rules: only(&["CC-CNP", "CC-CNP-TARGET"]), ..complete() });
    assert_only(&r, "CC-CNP-TARGET", &[(&[6], w)]);
}
