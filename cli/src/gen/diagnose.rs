//! Diagnosis scenarios: captures whose connections each have one known fate, written as
//! mlx5 and rxe put it on the wire, with the verdict a diagnosis must give them.
//!
//! Why: a diagnosis (which connection failed, how, and which failure came first) can only
//! be trusted if it is proven on captures whose truth is known. Real captures of retry
//! exhaustion, RNR storms, remote access errors or flush cascades are rare and never come
//! with their ground truth; these are generated, deterministic (fixed QPNs, PSNs and seeds)
//! and small, and each says which verdicts its connections must get.
//! `roce-inspect gen diagnose -o DIR` writes `DIR/NAME.pcap` and `DIR/NAME.verdicts.json`
//! for each; cli/tests/gen_diagnose.rs checks the symptoms are in every capture.

use std::net::{IpAddr, Ipv4Addr};

use roce_parser::{AethRepr, RethRepr};
use serde_json::{json, Map, Value};

use super::conn::{Cm, Sent};
use super::timers::ack_timeout;
use super::{Endpoint, RcConn, Rng, Trace};

/// One diagnosis scenario: its capture and the verdicts its connections must get.
pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    /// The set of verdict IDs the capture's connections get ("healthy" left out, except for
    /// the healthy scenario, which has only it).
    pub verdicts: &'static [&'static str],
    pub trace: Trace,
    /// The connection that fails (first, when several do).
    pub first_failure: Option<Failing>,
    /// Connections failing within the window after the first one (the cascade).
    pub followed: Option<u32>,
    /// The request the responder refused (remote access error).
    pub offending: Option<Offending>,
}

/// A connection by its two ends, the side that opened it (sent the CM REQ, or the first
/// request without CM) as `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failing {
    pub a: IpAddr,
    /// None when the wire never names it (requests without CM that nothing answers: a BTH
    /// carries only the destination QP).
    pub qpn_a: Option<u32>,
    pub b: IpAddr,
    /// None when the wire never names it (a REQ nobody answered, a REQ rejected).
    pub qpn_b: Option<u32>,
}

/// The RETH of the refused RDMA WRITE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offending {
    pub va: u64,
    pub rkey: u32,
    pub length: u32,
}

impl Scenario {
    /// The `NAME.verdicts.json` document.
    pub fn verdicts_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("scenario".into(), json!(self.name));
        m.insert("description".into(), json!(self.description));
        m.insert("verdicts".into(), json!(self.verdicts));
        if let Some(f) = self.first_failure {
            m.insert(
                "first_failure".into(),
                json!({"a": f.a.to_string(), "qpn_a": f.qpn_a, "b": f.b.to_string(), "qpn_b": f.qpn_b}),
            );
        }
        if let Some(n) = self.followed {
            m.insert("followed".into(), json!(n));
        }
        if let Some(o) = self.offending {
            m.insert("offending".into(), json!({"va": o.va, "rkey": o.rkey, "length": o.length}));
        }
        Value::Object(m)
    }
}

/// Every scenario, in a fixed order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        healthy(),
        unanswered(),
        retry_exhausted_rc7(),
        retry_exhausted_rc3(),
        lossy_path(),
        congested(),
        ce_without_cnp(),
        not_ect(),
        cnp_no_reduction(),
        rnr_storm(),
        remote_access_error(),
        rejected(),
        req_without_rep(),
        rep_without_rtu(),
        cascade(),
        one_udp_port(),
        cnp_dscp_and_acks_at_zero(),
        cm_qpn_mismatch(),
    ]
}

/// CM connects 10.0.0.1 QP 0x1234 and 10.0.0.2 QP 0x5678 (REQ, REP, RTU), then the data
/// goes between QP 0x1235 and QP 0x5679 (answered: those QPs were connected out of band),
/// and the CM pair carries nothing: the QPs the application connected are not those it uses.
fn cm_qpn_mismatch() -> Scenario {
    let mut t = Trace::new();
    let c = pair(1024, 0x31_0000, 0x32_0000);
    let mut cm = cm_for(0x600, (0x0a00_0010, 0x0b00_0010), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    let a = Endpoint::new(a_end().ip, QPN_A + 1);
    let b = Endpoint::new(b_end().ip, QPN_B + 1);
    let mut data = RcConn::new(a, b, 1024, 0x41_0000, 0x42_0000);
    for k in 0..3 {
        traffic_round(&mut data, &mut t, k);
    }
    Scenario {
        name: "cm_qpn_mismatch",
        description: "CM REQ/REP/RTU between 10.0.0.1 QP 0x1234 and 10.0.0.2 QP 0x5678; then \
                      WRITEs, SENDs and READs, all answered, between QP 0x1235 and QP 0x5679, \
                      and nothing on the QPs CM connected",
        verdicts: &["connection_setup_failed"],
        trace: t,
        first_failure: failing(&c),
        followed: None,
        offending: None,
    }
}

/// Eight RC connections 10.0.0.1 -> 10.0.0.2 (QPs 0x100+k -> 0x200+k), CM-opened, healthy,
/// every frame of 10.0.0.1 from UDP source port 49152: ECMP hashes all eight onto one path.
fn one_udp_port() -> Scenario {
    let mut t = Trace::new();
    for k in 0..8u32 {
        let a = Endpoint::new(a_end().ip, 0x100 + k);
        let b = Endpoint::new(b_end().ip, 0x200 + k);
        let mut c = RcConn::new(a, b, 1024, 0x1000 * (k + 1), 0x9000 * (k + 1));
        c.wire[0].udp_sport = Some(49152);
        let mut cm = cm_for(0x400 + u64::from(k), (0x0c00_0000 + k, 0x0d00_0000 + k), 14, 7, 7);
        cm.connect(&mut t, &c, PORT);
        traffic_round(&mut c, &mut t, k);
        t.advance(10_000);
    }
    Scenario {
        name: "one_udp_port",
        description: "8 CM-opened RC connections 10.0.0.1 QP 0x100+k -> 10.0.0.2 QP 0x200+k, \
                      everything answered, and every frame 10.0.0.1 sends leaves from UDP \
                      source port 49152 (a NIC without RoCE UDP entropy): one ECMP path for all",
        verdicts: &["network_configuration"],
        trace: t,
        first_failure: Some(Failing {
            a: a_end().ip,
            qpn_a: Some(0x100),
            b: b_end().ip,
            qpn_b: Some(0x200),
        }),
        followed: None,
        offending: None,
    }
}

/// Congestion handled (CE marks, CNPs, the sender slows), but 10.0.0.2 sends its CNPs at
/// DSCP 5 and its ACKs and READ responses at DSCP 0 while 10.0.0.1's data rides DSCP 26:
/// the sonic-mgmt and ucx #10325 questions, checked with `--expect-cnp-dscp 46`.
fn cnp_dscp_and_acks_at_zero() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x50_0000, 0x60_0000);
    c.wire[1].dscp = 0;
    c.wire[1].cnp_dscp = 5;
    let mut cm = cm_for(0x500, (0x0e00_0001, 0x0f00_0001), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    episodes(&mut c, &mut t);
    sort(&mut t);
    Scenario {
        name: "cnp_dscp_and_acks_at_zero",
        description: "the congested scenario's traffic (CE marks, CNPs, the sender slowing), but \
                      10.0.0.2 ACKs at DSCP 0 the WRITEs 10.0.0.1 sends at DSCP 26, and sends its \
                      CNPs at DSCP 5 (mlx5's default is 48; 46 is stated with --expect-cnp-dscp)",
        verdicts: &["congested", "network_configuration"],
        trace: t,
        first_failure: failing(&c),
        followed: None,
        offending: None,
    }
}

/// The requester 10.0.0.1 QP 0x1234 and the responder 10.0.0.2 QP 0x5678 of every
/// scenario but the cascade.
const QPN_A: u32 = 0x1234;
const QPN_B: u32 = 0x5678;
/// The RDMA-CM port the passive side listens on (rping's, perftest's default is 18515).
const PORT: u16 = 7471;
/// Between request packets of a stream (1 KiB at about 10 Gb/s).
const GAP: u64 = 1_000;
/// From a request to its ACK or NAK, as the capture sees it.
const RESPONSE_DELAY: u64 = 2_000;
/// From a NAK to the requester's go-back-N resend.
const NAK_REACTION: u64 = 1_500;
/// How late a NIC's timeout fires past its Local ACK Timeout (timer granularity).
const TIMER_SLACK: u64 = 3_000;
/// The RNR NAK timer code of the RNR storm (1.28 ms) and the wait after each NAK.
const RNR_CODE: u8 = 14;
const RNR_WAIT: u64 = 1_300_000;
/// The ib_cm REQ retry interval for RDMA-CM's REQ: 2 x packet lifetime (16: 268 ms, RoCE's
/// `CMA_IBOE_PACKET_LIFETIME`) + Remote CM Response Timeout (22: 17.18 s).
const CM_REQ_RETRY: u64 = 2 * (4096 << 16) + (4096 << 22);

fn ip(c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, c, d))
}

fn a_end() -> Endpoint {
    Endpoint::new(ip(0, 1), QPN_A)
}

fn b_end() -> Endpoint {
    Endpoint::new(ip(0, 2), QPN_B)
}

/// The pair of every two-host scenario, a -> b requests from `psn_a`, b -> a from `psn_b`.
fn pair(pmtu: usize, psn_a: u32, psn_b: u32) -> RcConn {
    RcConn::new(a_end(), b_end(), pmtu, psn_a, psn_b)
}

fn failing(c: &RcConn) -> Option<Failing> {
    Some(Failing { a: c.a.ip, qpn_a: Some(c.a.qpn), b: c.b.ip, qpn_b: Some(c.b.qpn) })
}

/// Frames emitted at explicit times (`t.now_ns` set per frame) back in time order; frames
/// at the same time keep the order they were emitted in.
fn sort(t: &mut Trace) {
    t.frames.sort_by_key(|f| f.ts_ns);
    t.now_ns = t.frames.last().map_or(t.now_ns, |f| f.ts_ns + t.gap_ns);
}

/// `pkts` from `from_a`'s side, `gap` apart starting now; `t.now_ns` ends one gap after the
/// last.
fn burst(c: &RcConn, t: &mut Trace, from_a: bool, pkts: &[Sent], gap: u64) {
    let saved = t.gap_ns;
    t.gap_ns = gap;
    for p in pkts {
        c.emit_request(t, from_a, p);
    }
    t.gap_ns = saved;
}

/// A CM handshake for `c` whose REQ announces Local ACK Timeout `timeout`, Retry Count
/// `retry` and RNR Retry Count `rnr`.
fn cm_for(tid: u64, ids: (u32, u32), timeout: u8, retry: u8, rnr: u8) -> Cm {
    let mut cm = Cm::new(tid, ids);
    cm.local_ack_timeout = Some(timeout);
    cm.retry_count = Some(retry);
    cm.rnr_retry_count = Some(rnr);
    cm
}

/// An RC mix both ways, everything answered: WRITEs, SENDs (one with immediate), READs.
fn traffic_round(c: &mut RcConn, t: &mut Trace, k: u32) {
    c.send_or_write(t, true, true, 8192, None);
    c.send_or_write(t, true, false, 2000, Some(k));
    c.read(t, true, 6000);
    c.send_or_write(t, false, false, 64, None);
    c.read(t, false, 512);
}

fn healthy() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x10_0000, 0x20_0000);
    let mut cm = cm_for(0x100, (0x0a00_0001, 0x0b00_0001), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    for k in 0..6 {
        traffic_round(&mut c, &mut t, k);
        t.advance(50_000);
    }
    cm.disconnect(&mut t, &c);
    Scenario {
        name: "healthy",
        description: "CM connect (REQ/REP/RTU), six rounds of WRITE, SEND with immediate, \
                      READ one way and SEND, READ the other, everything answered, CM disconnect \
                      (DREQ/DREP)",
        verdicts: &["healthy"],
        trace: t,
        first_failure: None,
        followed: None,
        offending: None,
    }
}

/// Two 64 KiB RDMA WRITEs (PMTU 4096: 16 packets each) from a, never answered: resent
/// whole after each of 7 timeouts (perftest's default: timeout 14, retry count 7), then
/// nothing. No CM: the QPs were connected out of band (perftest without -R).
fn unanswered() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(4096, 0x3a_5c01, 0x7e_2210);
    let mut pkts = c.message(true, true, 65536, None);
    pkts.extend(c.message(true, true, 65536, None));
    for round in 0..8 {
        if round > 0 {
            t.advance(ack_timeout(14) + TIMER_SLACK);
        }
        burst(&c, &mut t, true, &pkts, 400);
    }
    // Nothing on the wire names 10.0.0.1's QP: no CM, and no packet is addressed to it.
    let first_failure = failing(&c).map(|f| Failing { qpn_a: None, ..f });
    Scenario {
        name: "unanswered",
        description: "no CM (QPs connected out of band, as perftest without -R): 10.0.0.1 \
                      sends two 64 KiB RDMA WRITEs (32 packets, PMTU 4096) to 10.0.0.2, which \
                      never sends a single packet; all 32 resent after each of 7 timeouts \
                      (Local ACK Timeout 14, 67 ms), then silence",
        verdicts: &["unanswered"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// `n` rounds of WRITE and SEND, ACKed.
fn acked_traffic(c: &mut RcConn, t: &mut Trace, n: usize) {
    for k in 0..n {
        c.send_or_write(t, true, k % 2 == 0, 4096, None);
        c.send_or_write(t, false, false, 128, None);
        t.advance(20_000);
    }
}

/// A WRITE_ONLY sent `1 + retries` times, a Local ACK Timeout (`timeout`) apart, never
/// answered; `t.now_ns` is left just after the last transmission.
fn unacked_write(c: &mut RcConn, t: &mut Trace, timeout: u8, retries: u8) {
    let w = c.message(true, true, 1024, None);
    for k in 0..=retries {
        if k > 0 {
            t.advance(ack_timeout(timeout) + TIMER_SLACK);
        }
        for s in &w {
            c.emit_request(t, true, s);
        }
    }
}

fn retry_exhausted_rc7() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x45_0000, 0x46_0000);
    let mut cm = cm_for(0x200, (0x0a00_0002, 0x0b00_0002), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    acked_traffic(&mut c, &mut t, 12);
    unacked_write(&mut c, &mut t, 14, 7);
    // The eighth timeout ends the retries (IBV_WC_RETRY_EXC_ERR); the application
    // disconnects, and the peer, gone, never answers the DREQ.
    t.advance(ack_timeout(14) + 150_000);
    cm.dreq(&mut t, &c);
    let first_failure = failing(&c);
    Scenario {
        name: "retry_exhausted_rc7",
        description: "CM connect, the REQ announcing Retry Count 7 and Local ACK Timeout 14 \
                      (67 ms); 12 rounds of WRITE or SEND and a SEND back, all ACKed; then a \
                      WRITE_ONLY never answered, sent 8 times (the original and 7 retries) \
                      67 ms apart; one timeout after the last, a DREQ from 10.0.0.1 that gets \
                      no DREP",
        verdicts: &["retry_exhausted"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

fn retry_exhausted_rc3() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x55_0000, 0x56_0000);
    // A second connection of 10.0.0.1, to 10.0.0.3, healthy to the end of the capture: it
    // shows the first one's requester stopped after its third retry.
    let mut d = RcConn::new(
        Endpoint::new(ip(0, 1), 0x1236),
        Endpoint::new(ip(0, 3), 0x789a),
        1024,
        0x57_0000,
        0x58_0000,
    );
    let mut cm = cm_for(0x300, (0x0a00_0003, 0x0b00_0003), 12, 3, 7);
    cm.connect(&mut t, &c, PORT);
    let mut cm2 = cm_for(0x301, (0x0a00_0004, 0x0b00_0004), 12, 3, 7);
    cm2.connect(&mut t, &d, PORT);
    acked_traffic(&mut c, &mut t, 10);
    let start = t.now_ns;
    unacked_write(&mut c, &mut t, 12, 3);
    // The bystander: a 4 KiB WRITE every 2 ms, from before the failure to four timeouts
    // after the last retry.
    let end = t.now_ns + 4 * ack_timeout(12);
    let mut at = start + 500_000;
    while at < end {
        t.now_ns = at;
        d.send_or_write(&mut t, true, true, 4096, None);
        at += 2_000_000;
    }
    sort(&mut t);
    let first_failure = failing(&c);
    Scenario {
        name: "retry_exhausted_rc3",
        description: "CM connect 10.0.0.1 -> 10.0.0.2, the REQ announcing Retry Count 3 and \
                      Local ACK Timeout 12 (16.8 ms); 10 rounds of traffic ACKed; then a \
                      WRITE_ONLY never answered, sent 4 times (the original and 3 retries) \
                      16.8 ms apart, then silence on that connection; a second connection \
                      10.0.0.1 -> 10.0.0.3 keeps writing (ACKed) every 2 ms until 4 timeouts \
                      after the last retry",
        verdicts: &["retry_exhausted"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// A WRITE / SEND stream a -> b (8 KiB WRITEs and 4 KiB SENDs, PMTU 1024, 1 us apart) of
/// which about 2 % of the packets are lost after the capture point (first transmissions
/// only): the responder NAKs (PSN sequence error) the PSN it expected when the next one
/// arrives, drops what follows until it comes; the requester, 1.5 us after the NAK, goes
/// back to it. Everything is ACKed in the end.
fn lossy_path() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x66_0000, 0x67_0000);
    let mut cm = cm_for(0x400, (0x0a00_0005, 0x0b00_0005), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    let mut pkts: Vec<(Sent, bool)> = Vec::new();
    for k in 0..60 {
        let write = k % 3 != 2;
        let m = c.message(true, write, if write { 8192 } else { 4096 }, None);
        let n = m.len();
        pkts.extend(m.into_iter().enumerate().map(|(j, s)| (s, j + 1 == n)));
    }
    let n = pkts.len();
    let mut rng = Rng::new(0x1055_0002);
    // Never in the first message or the last two (a loss there would need a timeout).
    let lost: Vec<bool> = (0..n).map(|i| i >= 8 && i + 16 < n && rng.below(50) == 0).collect();
    let mut sent = vec![false; n];
    let mut now = t.now_ns;
    let (mut i, mut expected) = (0, 0);
    let mut nak_outstanding = false;
    let mut go_back: Option<(u64, usize)> = None;
    loop {
        if let Some((at, to)) = go_back {
            if now >= at || i >= n {
                now = now.max(at);
                i = to;
                go_back = None;
            }
        }
        let Some((s, last)) = pkts.get(i) else { break };
        t.now_ns = now;
        c.emit_request(&mut t, true, s);
        let first = !sent[i];
        sent[i] = true;
        if first && lost[i] {
            // Lost downstream of the capture point.
        } else if i == expected {
            expected += 1;
            nak_outstanding = false;
            if *last {
                t.now_ns = now + RESPONSE_DELAY;
                c.ack(&mut t, true, s.psn, 1);
            }
        } else if i > expected && !nak_outstanding {
            nak_outstanding = true;
            t.now_ns = now + RESPONSE_DELAY;
            let psn = pkts.get(expected).map_or(s.psn, |p| p.0.psn);
            let msn = c.sides[0].msn;
            c.nak(&mut t, true, psn, AethRepr::nak(0, msn).syndrome);
            go_back = Some((now + RESPONSE_DELAY + NAK_REACTION, expected));
        }
        i += 1;
        now += GAP;
    }
    sort(&mut t);
    t.advance(100_000);
    cm.disconnect(&mut t, &c);
    let first_failure = failing(&c);
    Scenario {
        name: "lossy_path",
        description: "CM connect; a stream of 60 messages (8 KiB WRITEs, 4 KiB SENDs, PMTU \
                      1024) from 10.0.0.1, about 2 % of its packets lost after the capture \
                      point: each loss answered by a NAK PSN sequence error naming the lost \
                      PSN, the requester going back to it (go-back-N), everything ACKed in the \
                      end; CM disconnect",
        verdicts: &["lossy_path"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// A WRITE_ONLY (1 KiB) from a at `now` with the ECN bits `ecn`, ACKed after
/// [`RESPONSE_DELAY`].
fn write_at(c: &mut RcConn, t: &mut Trace, now: u64, ecn: u8) {
    let w = c.message(true, true, 1024, None);
    c.ecn = ecn;
    t.now_ns = now;
    for s in &w {
        c.emit_request(t, true, s);
    }
    c.ecn = 2;
    let psn = w.last().map_or(0, |s| s.psn);
    t.now_ns = now + RESPONSE_DELAY;
    c.ack(t, true, psn, 1);
}

/// CE -> CNP at the notification point.
const CE_TO_CNP: u64 = 4_000;

/// 1 KiB WRITE_ONLYs from a, ECT(0); in each of four episodes three in a row are marked CE
/// on the way, b sends a CNP 4 us after the first mark, and a's gap between packets grows
/// after each CNP (1, 2, 3, 4, then 5 us: DCQCN cutting its rate).
/// Four congestion episodes on `c` (three CE marks in a row, a CNP 4 us after the first),
/// the sender's gap growing after each CNP (1, 2, 3, 4, 5 us), then the frames in time order.
fn episodes(c: &mut RcConn, t: &mut Trace) {
    let mut now = t.now_ns + 10_000;
    for stage in 0..5u64 {
        let gap = GAP * (stage + 1);
        let mut cnp_at = None;
        for j in 0.. {
            if let Some(at) = cnp_at {
                if now >= at {
                    t.now_ns = at;
                    c.cnp(t, true);
                    break;
                }
            }
            if stage == 4 && j == 24 {
                break;
            }
            let ce = stage < 4 && (18..21).contains(&j);
            write_at(c, t, now, if ce { 3 } else { 2 });
            if ce && cnp_at.is_none() {
                cnp_at = Some(now + CE_TO_CNP);
            }
            now += gap;
        }
    }
}

fn congested() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x77_0000, 0x78_0000);
    let mut cm = cm_for(0x500, (0x0a00_0006, 0x0b00_0006), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    episodes(&mut c, &mut t);
    sort(&mut t);
    let first_failure = failing(&c);
    Scenario {
        name: "congested",
        description: "CM connect; 1 KiB WRITE_ONLYs 10.0.0.1 -> 10.0.0.2 sent ECT(0), each \
                      ACKed; in four episodes three in a row arrive CE-marked, 10.0.0.2 sends \
                      a CNP to QP 0x1234 4 us after the first mark, and the sender's gap \
                      between packets grows after each CNP (1, 2, 3, 4, 5 us): DCQCN at work",
        verdicts: &["congested"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// Four bursts of 50 1 KiB WRITE_ONLYs 1 us apart, bursts 1.2 ms apart; in each burst
/// three in a row marked CE; no CNP.
fn ce_without_cnp() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x79_0000, 0x7a_0000);
    let mut cm = cm_for(0x600, (0x0a00_0007, 0x0b00_0007), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    let start = t.now_ns + 10_000;
    for b in 0..4u64 {
        for k in 0..50u64 {
            let ce = (30..33).contains(&k);
            write_at(&mut c, &mut t, start + b * 1_200_000 + k * GAP, if ce { 3 } else { 2 });
        }
    }
    sort(&mut t);
    let first_failure = failing(&c);
    Scenario {
        name: "ce_without_cnp",
        description: "CM connect; four bursts, 1.2 ms apart, of 50 1 KiB WRITE_ONLYs \
                      10.0.0.1 -> 10.0.0.2 1 us apart, ECT(0), each ACKed; in each burst three \
                      in a row arrive CE-marked (12 in all) and 10.0.0.2 never sends a CNP \
                      (its notification point is disabled); the sender's rate never changes",
        verdicts: &["congestion_control_not_working"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// WRITEs from a sent Not-ECT (its NIC's ECN is off for the priority); b's ACKs ECT(0).
/// No CM (perftest without -R).
fn not_ect() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x7b_0000, 0x7c_0000);
    c.ecn = 0;
    for _ in 0..50 {
        c.send_or_write(&mut t, true, true, 4096, None);
    }
    let first_failure = failing(&c);
    Scenario {
        name: "not_ect",
        description: "no CM (perftest without -R); 50 4 KiB WRITEs (PMTU 1024) 10.0.0.1 -> \
                      10.0.0.2, every data packet Not-ECT (ECN 0: the sender's NIC does not \
                      mark ECT, so no switch can mark CE and DCQCN cannot work); the \
                      responder's ACKs are ECT(0)",
        verdicts: &["congestion_control_not_working"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// 220 1 KiB WRITE_ONLYs exactly 1 us apart whatever happens; CNPs after CE marks at
/// packets 20, 70, 120, 170 (each at that packet's time, before it): every interval between
/// CNPs carries the same rate.
fn cnp_no_reduction() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x7d_0000, 0x7e_0000);
    let mut cm = cm_for(0x700, (0x0a00_0008, 0x0b00_0008), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    let start = t.now_ns + 10_000;
    let cnps = [20u64, 70, 120, 170];
    for k in 0..220u64 {
        let at = start + k * GAP;
        if cnps.contains(&k) {
            t.now_ns = at;
            c.cnp(&mut t, true);
        }
        let ce = cnps.iter().any(|&m| k + 4 >= m && k + 2 <= m);
        write_at(&mut c, &mut t, at, if ce { 3 } else { 2 });
    }
    sort(&mut t);
    let first_failure = failing(&c);
    Scenario {
        name: "cnp_no_reduction",
        description: "CM connect; 220 1 KiB WRITE_ONLYs 10.0.0.1 -> 10.0.0.2 exactly 1 us \
                      apart, ECT(0), each ACKed; four times three arrive CE-marked and \
                      10.0.0.2 sends a CNP to QP 0x1234 4 us after the first mark (50 us \
                      apart), and the sender never slows down (its reaction point is \
                      disabled): the same rate between every two CNPs",
        verdicts: &["congested", "congestion_control_not_working"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// A few WRITEs ACKed, then six SENDs one at a time, each RNR NAKed three times (timer
/// code 14, 1.28 ms; retried 1.3 ms after each) before the receiver posts a buffer and
/// ACKs it. The REQ announces RNR Retry Count 7 (for ever).
fn rnr_storm() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(1024, 0x88_0000, 0x89_0000);
    let mut cm = cm_for(0x800, (0x0a00_0009, 0x0b00_0009), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    for _ in 0..3 {
        c.send_or_write(&mut t, true, true, 2048, None);
    }
    t.gap_ns = 0;
    for _ in 0..6 {
        t.advance(GAP);
        let s = c.message(true, false, 512, None);
        for p in s.iter().take(1) {
            c.emit_request(&mut t, true, p);
            for _ in 0..3 {
                t.advance(RESPONSE_DELAY);
                let msn = c.sides[0].msn;
                c.nak(&mut t, true, p.psn, AethRepr::rnr_nak(RNR_CODE, msn).syndrome);
                t.advance(RNR_WAIT);
                c.emit_request(&mut t, true, p);
            }
            t.advance(RESPONSE_DELAY);
            c.ack(&mut t, true, p.psn, 1);
        }
    }
    t.gap_ns = 1_000;
    t.advance(GAP);
    cm.disconnect(&mut t, &c);
    let first_failure = failing(&c);
    Scenario {
        name: "rnr_storm",
        description: "CM connect, the REQ announcing RNR Retry Count 7 (for ever); three \
                      WRITEs ACKed; then six SEND_ONLYs one at a time, each answered by an \
                      RNR NAK (timer 14, 1.28 ms) three times, retried 1.3 ms after each, \
                      then ACKed (18 RNR NAKs: the receiver posts its buffers late); CM \
                      disconnect",
        verdicts: &["receiver_not_ready"],
        trace: t,
        first_failure,
        followed: None,
        offending: None,
    }
}

/// The refused WRITE's RETH: R_Key 0x1234 is the region the earlier WRITEs used, but the
/// VA lies outside it.
const BAD_VA: u64 = 0x7f00_dead_0000;
const BAD_RKEY: u32 = 0x1234;
const BAD_LEN: u32 = 65536;

fn remote_access_error() -> Scenario {
    let mut t = Trace::new();
    let mut c = pair(4096, 0x99_0000, 0x9a_0000);
    let mut cm = cm_for(0x900, (0x0a00_000a, 0x0b00_000a), 14, 7, 7);
    cm.connect(&mut t, &c, PORT);
    for _ in 0..4 {
        c.send_or_write(&mut t, true, true, 16384, None);
        c.send_or_write(&mut t, true, false, 256, None);
    }
    t.advance(20_000);
    let mut w = c.message(true, true, BAD_LEN as usize, None);
    if let Some(first) = w.first_mut() {
        first.headers.reth = Some(RethRepr { va: BAD_VA, rkey: BAD_RKEY, dma_len: BAD_LEN });
    }
    // 4 KiB packets 0.4 us apart; the NAK leaves the responder 2 us after the FIRST and
    // stops the requester 1 us later: FIRST and 7 MIDDLEs are on the wire, the rest never.
    let start = t.now_ns;
    for (k, p) in w.iter().take(8).enumerate() {
        t.now_ns = start + k as u64 * 400;
        c.emit_request(&mut t, true, p);
    }
    t.now_ns = start + RESPONSE_DELAY;
    let psn = w.first().map_or(0, |p| p.psn);
    let msn = c.sides[0].msn;
    c.nak(&mut t, true, psn, AethRepr::nak(2, msn).syndrome);
    sort(&mut t);
    // The application sees IBV_WC_REM_ACCESS_ERR and disconnects.
    t.advance(200_000);
    cm.disconnect(&mut t, &c);
    let first_failure = failing(&c);
    Scenario {
        name: "remote_access_error",
        description: "CM connect (PMTU 4096); four 16 KiB WRITEs and SENDs ACKed; then a \
                      64 KiB RDMA WRITE to VA 0x7f00dead0000 with R_Key 0x1234 (outside the \
                      region the key covers): the responder answers the WRITE_FIRST with a \
                      NAK remote access error, the requester stops after 7 MIDDLEs already in \
                      flight; the application disconnects (DREQ/DREP)",
        verdicts: &["application_error"],
        trace: t,
        first_failure,
        followed: None,
        offending: Some(Offending { va: BAD_VA, rkey: BAD_RKEY, length: BAD_LEN }),
    }
}

fn setup_failure(c: &RcConn, qpn_b_known: bool) -> Option<Failing> {
    Some(Failing {
        a: c.a.ip,
        qpn_a: Some(c.a.qpn),
        b: c.b.ip,
        qpn_b: qpn_b_known.then_some(c.b.qpn),
    })
}

fn rejected() -> Scenario {
    let mut t = Trace::new();
    let c = pair(1024, 0xa0_0000, 0xa1_0000);
    Cm::new(0xa00, (0x0a00_000b, 0x0b00_000b)).rejected(&mut t, &c, PORT);
    Scenario {
        name: "rejected",
        description: "a CM REQ from 10.0.0.1 answered by a REJ (consumer defined: \
                      rdma_reject) from 10.0.0.2; no connection, no data",
        verdicts: &["connection_setup_failed"],
        trace: t,
        first_failure: setup_failure(&c, false),
        followed: None,
        offending: None,
    }
}

fn req_without_rep() -> Scenario {
    let mut t = Trace::new();
    let c = pair(1024, 0xa2_0000, 0xa3_0000);
    let mut cm = Cm::new(0xb00, (0x0a00_000c, 0x0b00_000c));
    for k in 0..3 {
        if k > 0 {
            t.advance(CM_REQ_RETRY);
        }
        cm.request(&mut t, &c, PORT);
    }
    Scenario {
        name: "req_without_rep",
        description: "a CM REQ from 10.0.0.1 to 10.0.0.2 (no listener, host unreachable) sent \
                      3 times, the same transaction, 17.7 s apart (ib_cm's retries: 2 x packet \
                      lifetime + Remote CM Response Timeout 22); no REP, no data",
        verdicts: &["connection_setup_failed"],
        trace: t,
        first_failure: setup_failure(&c, false),
        followed: None,
        offending: None,
    }
}

fn rep_without_rtu() -> Scenario {
    let mut t = Trace::new();
    let c = pair(1024, 0xa4_0000, 0xa5_0000);
    Cm::new(0xc00, (0x0a00_000d, 0x0b00_000d)).request_reply(&mut t, &c, PORT);
    Scenario {
        name: "rep_without_rtu",
        description: "a CM REQ from 10.0.0.1, the REP from 10.0.0.2, and no RTU ever: the \
                      connection is never established; no data",
        verdicts: &["connection_setup_failed"],
        trace: t,
        first_failure: setup_failure(&c, true),
        followed: None,
        offending: None,
    }
}

/// Connections of the cascade.
const CASCADE: usize = 41;
/// Local ACK Timeout of the cascade's REQs (4.19 ms) and their Retry Count.
const CASCADE_TIMEOUT: u8 = 10;
const CASCADE_RETRY: u8 = 7;

/// 10.0.0.1 QP 0x1000 + k to 10.0.1.(k + 1) QP 0x2000 + k; MACs by host, none shared.
fn cascade_conn(k: usize) -> RcConn {
    let k8 = k as u8;
    let k32 = k as u32;
    let a = Endpoint { mac: [0x02, 0, 0, 0, 0, 0x01], ip: ip(0, 1), qpn: 0x1000 + k32 };
    let b = Endpoint { mac: [0x02, 0, 0, 0, 0x01, k8 + 1], ip: ip(1, k8 + 1), qpn: 0x2000 + k32 };
    RcConn::new(a, b, 1024, 0x10_0000 + 0x1000 * k32, 0x80_0000 + 0x1000 * k32)
}

/// 41 healthy connections; #0's peer goes away at t0: a WRITE_ONLY sent 8 times, 4.19 ms
/// apart (Retry Count 7 exhausted at about t0 + 33.6 ms); the others carry on (a SEND each,
/// ACKed) until each of the 40 gets a NAK remote operational error, from t0 + 34 ms to
/// t0 + 38 ms, and nothing more but the CM disconnects when the application aborts.
fn cascade() -> Scenario {
    let mut t = Trace::new();
    let mut conns: Vec<RcConn> = (0..CASCADE).map(cascade_conn).collect();
    let mut cms = Vec::with_capacity(CASCADE);
    for (k, c) in conns.iter().enumerate() {
        let k32 = k as u32;
        let mut cm = cm_for(
            0xd00 + k as u64,
            (0x0a01_0000 + k32, 0x0b01_0000 + k32),
            CASCADE_TIMEOUT,
            CASCADE_RETRY,
            7,
        );
        cm.connect(&mut t, c, PORT);
        cms.push(cm);
    }
    for _ in 0..2 {
        for c in conns.iter_mut() {
            c.send_or_write(&mut t, true, true, 4096, None);
            c.read(&mut t, true, 2048);
        }
    }
    let t0 = t.now_ns + 100_000;
    let mut rest = conns.iter_mut();
    if let Some(c0) = rest.next() {
        t.now_ns = t0;
        unacked_write(c0, &mut t, CASCADE_TIMEOUT, CASCADE_RETRY);
    }
    let give_up = t0 + 8 * (ack_timeout(CASCADE_TIMEOUT) + TIMER_SLACK);
    for (k, c) in rest.enumerate() {
        let k = k as u64;
        // Still healthy after t0.
        t.now_ns = t0 + 1_000_000 + k * 500_000;
        c.send_or_write(&mut t, true, false, 512, None);
        // Then the flush: the request NAKed remote operational error, nothing after it.
        let w = c.message(true, true, 1024, None);
        t.now_ns = give_up + 400_000 + k * 100_000;
        for s in &w {
            c.emit_request(&mut t, true, s);
        }
        t.now_ns += RESPONSE_DELAY;
        let psn = w.first().map_or(0, |s| s.psn);
        let msn = c.sides[0].msn;
        c.nak(&mut t, true, psn, AethRepr::nak(3, msn).syndrome);
    }
    // The application aborts 10 ms after the last NAK: RDMA-CM disconnects every
    // connection; #0's peer, gone, never answers its DREQ.
    let abort = give_up + 400_000 + CASCADE as u64 * 100_000 + 10_000_000;
    for (k, (c, cm)) in conns.iter().zip(cms.iter_mut()).enumerate() {
        t.now_ns = abort + k as u64 * 50_000;
        if k == 0 {
            cm.dreq(&mut t, c);
        } else {
            cm.disconnect(&mut t, c);
        }
    }
    sort(&mut t);
    let first_failure = conns.first().and_then(failing);
    Scenario {
        name: "cascade",
        description: "41 CM-opened connections 10.0.0.1 QP 0x1000+k -> 10.0.1.(k+1) QP \
                      0x2000+k, healthy (WRITEs, READs); then #0's peer stops answering: a \
                      WRITE_ONLY sent 8 times 4.19 ms apart (Retry Count 7, Local ACK \
                      Timeout 10) with no ACK; the 40 others still exchange a SEND each, then \
                      each gets a NAK remote operational error to a WRITE between 34 and 38 ms \
                      after #0's first unanswered transmission (0.4 to 4.3 ms after its \
                      retries ran out), and nothing more on those QPs; 10 ms later the \
                      application aborts: a DREQ on every connection, answered by DREP except \
                      on #0",
        verdicts: &["retry_exhausted", "application_error"],
        trace: t,
        first_failure,
        followed: Some(40),
        offending: None,
    }
}
