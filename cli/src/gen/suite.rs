//! The conformance scenario suite (pcaps/conformance/): for every rule a capture where it
//! must fire, and clean captures where nothing may be reported (or, for host-capture
//! effects, only capture-integrity warnings). Each scenario knows the findings it must
//! produce, by rule and frames: `roce-inspect gen suite` writes the captures and their
//! `.expect.json` files from here, and the suite test replays them all.

use std::net::{IpAddr, Ipv4Addr};

use roce_parser::headers::*;
use serde::{Deserialize, Serialize};

use super::conn::{frame, op, ud_send, Cm, Sent};
use super::{scenarios, Endpoint, RcConn, Trace};

/// A finding a scenario must produce.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Expected {
    pub rule: String,
    pub frames: Vec<u64>,
}

/// How to check a capture, as an expect file records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectOptions {
    #[serde(default)]
    pub assume_complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u32>,
}

/// The reviewed findings of one capture (`check --expect FILE`, `check --write-expect FILE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectFile {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default)]
    pub options: ExpectOptions,
    pub findings: Vec<Expected>,
}

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    pub assume_complete: bool,
    pub build: fn() -> (Trace, Vec<Expected>),
}

fn ex(rule: &str, frames: &[u64]) -> Expected {
    Expected { rule: rule.to_string(), frames: frames.to_vec() }
}

fn ip(d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, d))
}

fn conn() -> RcConn {
    RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000)
}

/// A connection opened by CM (frames 1-3: REQ, REP, RTU; PMTU 1024).
fn cm_conn(t: &mut Trace) -> RcConn {
    let c = conn();
    Cm::new(77, (0x1111, 0x2222)).connect(t, &c, 4000);
    c
}

/// A normal RC mix both ways: SENDs, WRITEs, READs, atomics.
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

/// A BTH to `b`; `pkt-rules` gives each bad frame a QP of its own (`qp_offset`) so that
/// only the per-packet rule under test can see it.
fn bth(b: &Endpoint, opcode: u8, psn: u32) -> BthRepr {
    BthRepr { opcode, pkey: 0xffff, dest_qp: b.qpn + psn, psn, ..Default::default() }
}

/// The suite, in file order.
pub const SUITE: &[Scenario] = &[
    Scenario { name: "clean-rc-mix", description: "RC SEND / WRITE / READ / atomic both ways, CM-opened", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        clean_mix(&mut c, &mut t);
        Cm::new(77, (0x1111, 0x2222)).disconnect(&mut t, &c);
        (t, vec![])
    }},
    Scenario { name: "clean-sample", description: "the project's sample: go-back-N after a NAK, RNR retry after the timer, ECN with a CNP, UD, IPv6", assume_complete: true, build: || (scenarios::sample(1), vec![]) },
    Scenario { name: "clean-recoveries", description: "go-back-N after loss downstream, RNR retry after the timer, READ retry after a lost response", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        let pkts = c.message(true, true, 4096, None);
        for p in &pkts { c.emit_request(&mut t, true, p); }
        c.nak(&mut t, true, pkts[2].psn, AethRepr::nak(0, 0).syndrome);
        for p in &pkts[2..] { c.emit_request(&mut t, true, p); }
        c.ack(&mut t, true, pkts[3].psn, 1);
        let p = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &p[0]);
        c.nak(&mut t, true, p[0].psn, AethRepr::rnr_nak(3, 1).syndrome);
        t.advance(40_000);
        c.emit_request(&mut t, true, &p[0]);
        c.ack(&mut t, true, p[0].psn, 1);
        let req = c.read_request(&mut t, true, 3000);
        c.read_responses(&mut t, true, req.psn, 3000, &[1]);
        let mut retry = req.clone();
        retry.psn = req.psn + 1;
        let reth = req.headers.reth.unwrap_or_default();
        retry.headers.reth = Some(RethRepr { va: reth.va + 1024, rkey: reth.rkey, dma_len: reth.dma_len - 1024 });
        t.advance(2_000_000);
        c.emit_request(&mut t, true, &retry);
        let aeth = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, c.sides[0].msn)), ..Default::default() };
        c.emit_response(&mut t, true, op::READ_RESPONSE_FIRST, req.psn + 1, aeth, &[1; 1024]);
        c.emit_response(&mut t, true, op::READ_RESPONSE_LAST, req.psn + 2, aeth, &[1; 952]);
        (t, vec![])
    }},
    Scenario { name: "clean-psn-wrap-interleaved", description: "three interleaved connections (one UC) crossing PSN 2^24", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c1 = RcConn::new(Endpoint::new(ip(1), 0x10), Endpoint::new(ip(2), 0x20), 1024, 0xff_fffd, 0xff_ffff);
        let mut c2 = RcConn::new(Endpoint::new(ip(1), 0x11), Endpoint::new(ip(2), 0x21), 1024, 0xff_fff0, 7);
        let mut c3 = RcConn::new(Endpoint::new(ip(3), 0x12), Endpoint::new(ip(2), 0x22), 4096, 1, 2).uc();
        for _ in 0..4 {
            c1.send_or_write(&mut t, true, true, 5000, None);
            c2.read(&mut t, true, 3000);
            c3.send_or_write(&mut t, true, false, 9000, None);
            c1.read(&mut t, false, 1500);
            c2.send_or_write(&mut t, false, false, 2100, Some(3));
        }
        (t, vec![])
    }},
    Scenario { name: "clean-ud-xrc", description: "UD SENDs with and without immediate, and an XRC request / ACK pair", assume_complete: true, build: || {
        let mut t = Trace::new();
        let a = Endpoint::new(ip(1), 0x31);
        let b = Endpoint::new(ip(2), 0x32);
        for i in 0..4 { ud_send(&mut t, &a, &b, 0x1111_1111, 100 + i, &[i as u8; 300], (i % 2 == 1).then_some(i)); }
        let x = ExtHeaders { xrceth: Some(XrcethRepr { reserved: 0, xrcsrq: 0x77 }), ..Default::default() };
        let req = BthRepr { opcode: 0xa4, pkey: 0xffff, dest_qp: b.qpn, psn: 500, ackreq: true, ..Default::default() };
        t.push(&frame(&a, &b, req, x, &[1; 64], 2));
        let ack = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 1)), ..Default::default() };
        t.push(&frame(&b, &a, BthRepr { opcode: 0xb1, dest_qp: a.qpn, ..req }, ack, &[], 2));
        (t, vec![])
    }},
    Scenario { name: "host-capture-loss-reorder", description: "the clean mix as a host capture records it: a packet missing, an ACK before its request (warnings only)", assume_complete: false, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        clean_mix(&mut c, &mut t);
        t.frames.remove(1); // the SEND_MIDDLE of the first message
        // The WRITE_LAST (now frame 9) and its ACK (10) swapped, timestamps kept in order.
        let (x, y) = (t.frames[8].data.clone(), t.frames[9].data.clone());
        t.frames[8].data = y;
        t.frames[9].data = x;
        (t, vec![ex("CAP-GAP", &[1, 2]), ex("CAP-REORDER", &[9, 10])])
    }},
    Scenario { name: "pkt-rules", description: "one bad frame per per-packet rule: ICRC, TVer, reserved and vendor opcodes, payload on a READ request, padded FIRST, reserved bits, short CNP, QP1 Q_Key", assume_complete: true, build: || {
        let a = Endpoint::new(ip(1), 0x111);
        let b = Endpoint::new(ip(2), 0x222);
        let mut t = Trace::new();
        let mut f = frame(&a, &b, bth(&b, op::SEND_ONLY, 1), ExtHeaders::default(), &[1, 2, 3, 4], 2);
        f.icrc = Some(0xdead_beef);
        t.push(&f);
        t.push(&frame(&a, &b, BthRepr { tver: 1, ..bth(&b, op::SEND_ONLY, 2) }, ExtHeaders::default(), &[], 2));
        t.push(&frame(&a, &b, bth(&b, 0x15, 3), ExtHeaders::default(), &[], 2));
        t.push(&frame(&a, &b, bth(&b, 0xc5, 4), ExtHeaders::default(), &[], 2));
        t.push(&frame(&a, &b, bth(&b, op::READ_REQUEST, 5), ExtHeaders::default(), &[0; 8], 2));
        let mut f = frame(&a, &b, bth(&b, op::SEND_FIRST, 6), ExtHeaders::default(), &[0; 1022], 2);
        f.padcnt = Some(2);
        t.push(&f);
        t.push(&frame(&a, &b, BthRepr { resv7: 0x11, ..bth(&b, op::SEND_ONLY, 8) }, ExtHeaders::default(), &[], 2));
        t.push(&frame(&a, &b, BthRepr { becn: true, ..bth(&b, op::CNP, 0) }, ExtHeaders::default(), &[0; 8], 2));
        ud_send(&mut t, &Endpoint { qpn: 1, ..a }, &Endpoint { qpn: 1, ..b }, 0x1234, 1, &[0; 256], None);
        (t, vec![
            ex("PKT-ICRC", &[1]), ex("PKT-TVER", &[2]), ex("PKT-OPCODE", &[3]), ex("PKT-OPCODE", &[4]),
            ex("PKT-LENGTH", &[5]), ex("PKT-PAD", &[6]), ex("PKT-RESERVED", &[7]), ex("PKT-CNP", &[8]),
            ex("CC-CNP-TARGET", &[8]), ex("PKT-UD-QKEY", &[9]),
        ])
    }},
    Scenario { name: "req-psn-skip", description: "the requester skips a PSN (judged as a fault: the capture is known complete)", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        c.sides[0].next_psn += 1;
        c.send_or_write(&mut t, true, false, 10, None); // 6, 7
        (t, vec![ex("REQ-PSN", &[4, 6])])
    }},
    Scenario { name: "req-psn-in-read-range", description: "a SEND reuses a PSN consumed by a 3-PSN READ", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let rd = c.read(&mut t, true, 3000); // 4; 5-7 responses
        let mut s = c.message(true, false, 8, None);
        s[0].psn = rd.psn + 1;
        c.emit_request(&mut t, true, &s[0]); // 8
        (t, vec![ex("REQ-PSN", &[4, 8])])
    }},
    Scenario { name: "req-msg-seq", description: "a WRITE interleaved into a SEND, then a MIDDLE with no message in progress", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let a = c.message(true, false, 3000, None);
        let b = c.message(true, true, 10, None);
        c.emit_request(&mut t, true, &a[0]); // 4
        let mut w = b[0].clone();
        w.psn = a[1].psn;
        c.emit_request(&mut t, true, &w); // 5
        let mut m = a[1].clone();
        m.psn = a[2].psn;
        c.emit_request(&mut t, true, &m); // 6
        (t, vec![ex("REQ-MSG-SEQ", &[4, 5]), ex("REQ-MSG-SEQ", &[6])])
    }},
    Scenario { name: "req-length-dmalen-align", description: "a short FIRST, a WRITE shorter than its DMA Length, a misaligned atomic", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let mut s = c.message(true, false, 3000, None);
        s[0].payload.truncate(1000);
        for p in &s { c.emit_request(&mut t, true, p); } // 4, 5, 6
        let mut w = c.message(true, true, 2048, None);
        if let Some(r) = w[0].headers.reth.as_mut() { r.dma_len = 4096; }
        for p in &w { c.emit_request(&mut t, true, p); } // 7, 8
        let psn = c.sides[0].next_psn;
        c.sides[0].next_psn += 1;
        let atomic = Sent { opcode: op::FETCH_ADD, psn, headers: ExtHeaders { atomic_eth: Some(AtomicEthRepr { va: 0x1004, rkey: 1, swap_add: 1, compare: 0 }), ..Default::default() }, payload: vec![], ackreq: true };
        c.emit_request(&mut t, true, &atomic); // 9
        (t, vec![ex("REQ-LENGTH", &[4]), ex("REQ-DMALEN", &[7, 8]), ex("REQ-ATOMIC-ALIGN", &[9])])
    }},
    Scenario { name: "req-gbn-retx-same", description: "after a NAK naming the MIDDLE the requester resends the LAST first, then resends it changed", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let w = c.message(true, true, 3072, None);
        for p in &w { c.emit_request(&mut t, true, p); } // 4, 5, 6
        c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 0).syndrome); // 7
        c.emit_request(&mut t, true, &w[2]); // 8
        let mut changed = w[2].clone();
        changed.payload.truncate(10);
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &changed); // 9
        (t, vec![ex("REQ-GBN", &[7, 8]), ex("REQ-RETX-SAME", &[6, 9])])
    }},
    Scenario { name: "req-rnr-wait", description: "a retry 0.1 ms after an RNR NAK with a 0.64 ms timer", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 4
        c.nak(&mut t, true, s[0].psn, AethRepr::rnr_nak(12, 0).syndrome); // 5
        t.advance(100_000);
        c.emit_request(&mut t, true, &s[0]); // 6
        (t, vec![ex("REQ-RNR-WAIT", &[5, 6])])
    }},
    Scenario { name: "req-retx-cause", description: "a retransmission nothing explains", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 4
        c.emit_request(&mut t, true, &s[0]); // 5
        (t, vec![ex("REQ-RETX-CAUSE", &[4, 5])])
    }},
    Scenario { name: "req-read-retry", description: "a re-issued READ whose VA does not advance with its PSN", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let req = c.read_request(&mut t, true, 3000); // 4
        c.read_responses(&mut t, true, req.psn, 3000, &[1, 2]); // 5
        let mut retry = req.clone();
        retry.psn = req.psn + 1;
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &retry); // 6
        (t, vec![ex("REQ-READ-RETRY", &[4, 6])])
    }},
    Scenario { name: "rsp-ack-range", description: "an ACK of a PSN never sent, requests continuing below it", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let next = c.sides[0].next_psn;
        c.ack(&mut t, true, next + 5, 1); // 6
        t.advance(2_000_000);
        c.send_or_write(&mut t, true, false, 10, None); // 7, 8
        // The proper ACK that follows (8) is then behind the bogus one: also reported.
        (t, vec![ex("RSP-ACK-RANGE", &[6, 7]), ex("RSP-ACK-MONOTONIC", &[6, 8])])
    }},
    Scenario { name: "rsp-ack-monotonic", description: "an ACK naming a PSN before one already acknowledged", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.ack(&mut t, true, s[0].psn - 2, 1); // 7
        (t, vec![ex("RSP-ACK-MONOTONIC", &[5, 7])])
    }},
    Scenario { name: "rsp-nak-seq", description: "a NAK naming an acknowledged PSN, then two NAKs for one gap", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let acked = c.sides[0].next_psn - 1;
        let w = c.message(true, true, 3072, None);
        for p in &w { c.emit_request(&mut t, true, p); } // 6, 7, 8
        c.nak(&mut t, true, acked, AethRepr::nak(0, 1).syndrome); // 9
        c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 1).syndrome); // 10
        c.nak(&mut t, true, w[1].psn, AethRepr::nak(0, 1).syndrome); // 11
        (t, vec![ex("RSP-NAK-SEQ", &[5, 9]), ex("RSP-NAK-SEQ", &[10, 11])])
    }},
    Scenario { name: "rsp-msn", description: "the MSN jumps by two for one message", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.ack(&mut t, true, s[0].psn, 2); // 7
        (t, vec![ex("RSP-MSN", &[5, 7])])
    }},
    Scenario { name: "rsp-dup", description: "a duplicate SEND acknowledged with its own old PSN instead of ePSN - 1", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let first = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &first[0]); // 4
        c.ack(&mut t, true, first[0].psn, 1); // 5
        c.send_or_write(&mut t, true, false, 10, None); // 6, 7
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &first[0]); // 8: timeout retry of an old PSN
        c.nak(&mut t, true, first[0].psn, AethRepr::ack(0x1f, 2).syndrome); // 9
        (t, vec![ex("RSP-DUP", &[8, 9])])
    }},
    Scenario { name: "rsp-read", description: "READ responses out of order, and a READ answered with too few bytes", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let rd = c.read_request(&mut t, true, 3000); // 4
        let aeth = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 1)), ..Default::default() };
        c.emit_response(&mut t, true, op::READ_RESPONSE_FIRST, rd.psn, aeth, &[0; 1024]); // 5
        c.emit_response(&mut t, true, op::READ_RESPONSE_LAST, rd.psn + 1, aeth, &[0; 1024]); // 6
        let rd2 = c.read_request(&mut t, true, 100); // 7
        let aeth2 = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 2)), ..Default::default() };
        c.emit_response(&mut t, true, op::READ_RESPONSE_ONLY, rd2.psn, aeth2, &[0; 60]); // 8
        (t, vec![ex("RSP-READ", &[4, 6]), ex("RSP-READ", &[7, 8])])
    }},
    Scenario { name: "rsp-atomic", description: "a FETCH_ADD answered by a plain ACK", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let psn = c.sides[0].next_psn;
        c.sides[0].next_psn += 1;
        let fa = Sent { opcode: op::FETCH_ADD, psn, headers: ExtHeaders { atomic_eth: Some(AtomicEthRepr { va: 0x1000, rkey: 1, swap_add: 1, compare: 0 }), ..Default::default() }, payload: vec![], ackreq: true };
        c.emit_request(&mut t, true, &fa); // 4
        c.ack(&mut t, true, psn, 1); // 5
        (t, vec![ex("RSP-ATOMIC", &[4, 5])])
    }},
    Scenario { name: "rsp-nak-error", description: "the responder's QP keeps sending after a remote access error NAK", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let w = c.message(true, true, 100, None);
        c.emit_request(&mut t, true, &w[0]); // 4
        c.nak(&mut t, true, w[0].psn, AethRepr::nak(2, 0).syndrome); // 5
        c.send_or_write(&mut t, false, false, 10, None); // 6, 7
        (t, vec![ex("RSP-NAK-ERROR", &[5, 6])])
    }},
    Scenario { name: "rsp-ackreq", description: "an AckReq packet never acknowledged while the capture runs 300 ms on", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        t.advance(300_000_000);
        c.send_or_write(&mut t, false, false, 10, None); // 7, 8
        (t, vec![ex("RSP-ACKREQ", &[6])])
    }},
    Scenario { name: "cc-cnp", description: "CE-marked WRITEs and no CNP back", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.ecn = 3;
        c.send_or_write(&mut t, true, true, 2048, None); // 4, 5, 6
        c.ecn = 2;
        t.advance(5_000_000);
        c.send_or_write(&mut t, true, true, 10, None); // 7, 8
        (t, vec![ex("CC-CNP", &[4])])
    }},
    Scenario { name: "cc-cnp-target", description: "a CNP to a QP that sent no CE-marked data", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, true, 10, None); // 4, 5
        c.cnp(&mut t, true); // 6
        (t, vec![ex("CC-CNP-TARGET", &[6])])
    }},
    Scenario { name: "cap-time", description: "timestamps going backwards", assume_complete: true, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        c.send_or_write(&mut t, true, false, 10, None); // 1, 2
        t.frames[1].ts_ns = t.frames[0].ts_ns - 500;
        (t, vec![ex("CAP-TIME", &[2])])
    }},
];

impl Scenario {
    /// The capture and its expect file.
    pub fn generate(&self) -> (Trace, ExpectFile) {
        let (t, mut findings) = (self.build)();
        findings.sort();
        let expect = ExpectFile {
            description: self.description.to_string(),
            options: ExpectOptions { assume_complete: self.assume_complete, pmtu: None },
            findings,
        };
        (t, expect)
    }
}
