//! The conformance scenario suite (pcaps/conformance/): for every rule a capture where it
//! must fire, and clean captures where nothing may be reported (or, for host-capture
//! effects, only capture-integrity warnings). Each scenario knows the findings it must
//! produce, by rule and frames: `roce-inspect gen suite` writes the captures and their
//! `.expect.json` files from here, and the suite test replays them all.

use std::net::{IpAddr, Ipv4Addr};

use roce_parser::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, ExtHeaders, RethRepr, VlanTag, XrcethRepr,
};

use super::conn::{frame, op, ud_send, Cm, Sent, Wire};
use super::{scenarios, timers, Endpoint, RcConn, Trace};

// The expect file's types are crate::expect's; here as the suite has always named them.
pub use crate::expect::{ExpectFile, ExpectOptions, Expected};

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    pub assume_complete: bool,
    /// `--qp-timeout` for the check (the expect file's `options.qp_timeout`).
    pub qp_timeout: Option<u8>,
    /// `--cnp-min-interval` for the check (the expect file's `options.cnp_min_interval`).
    pub cnp_min_interval: Option<&'static str>,
    /// `--rnr-timer` for the check (the expect file's `options.rnr_timer`).
    pub rnr_timer: Option<u8>,
    /// The network configuration stated for the check (`--expect-dscp`,
    /// `--expect-cnp-dscp`, `--expect-pcp`; the expect file's `options.expect_*`).
    pub net: NetExpect,
    pub build: fn() -> (Trace, Vec<Expected>),
}

/// The network configuration a scenario is checked against (NET-*): none for most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetExpect {
    /// `--expect-dscp`.
    pub dscp: Option<u8>,
    /// `--expect-cnp-dscp`.
    pub cnp_dscp: Option<u8>,
    /// `--expect-pcp`.
    pub pcp: Option<u8>,
}

impl NetExpect {
    /// No network configuration stated: the NET-* rules stay silent.
    pub const NONE: NetExpect = NetExpect { dscp: None, cnp_dscp: None, pcp: None };
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

/// [`cm_conn`] whose REQ announces Local ACK Timeout 10 (4.194304 ms): the connections whose
/// requester resends after 5 ms of silence, so that the REQ agrees with the wire
/// (REQ-CM-ACK-TIMEOUT).
fn cm_conn_t10(t: &mut Trace) -> RcConn {
    let c = conn();
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.local_ack_timeout = Some(10);
    cm.connect(t, &c, 4000);
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

/// AETH syndrome of a NAK "PSN sequence error".
const NAK_SEQ: u8 = AethRepr::nak(0, 0).syndrome;

/// Starting PSNs of a second incarnation of [`conn`]: a -> b millions of PSNs "behind" the
/// first incarnation's (2^24 - 4.2 M away from 1000), b -> a 2.8 M "ahead" of 5000.
const A2: u32 = 0xb4_1e62;
const B2: u32 = 0x2a_6fb9;

fn emit_all(c: &RcConn, t: &mut Trace, from_a: bool, pkts: &[Sent]) {
    for p in pkts {
        c.emit_request(t, from_a, p);
    }
}

/// Ten frames of one incarnation: a -> b SEND (ACK MSN 1), WRITE of two packets (ACK
/// MSN 2), b -> a SEND (ACK MSN 1), a -> b READ of two PSNs (responses MSN 3).
fn incarnation_traffic(c: &mut RcConn, t: &mut Trace) {
    c.send_or_write(t, true, false, 10, None);
    c.send_or_write(t, true, true, 2048, None);
    c.send_or_write(t, false, false, 10, None);
    c.read(t, true, 1500);
}

/// 0.2 ms after a disconnect, a new REQ/REP/RTU on the same QPNs (new communication IDs)
/// announcing the second incarnation's PSNs [`A2`], [`B2`].
fn reconnect_cm(c: &mut RcConn, t: &mut Trace, cm: &mut Cm) {
    t.advance(200_000);
    c.restart(A2, B2);
    cm.renew((0x3333, 0x4444));
    cm.connect(t, c, 4000);
}

/// Eight frames of faults in a fresh incarnation: a -> b SEND, ACK (MSN 1), SEND, ACK with
/// MSN 3; b -> a SEND, ACK (MSN 1), a SEND one PSN too far, the NAK naming the skipped PSN.
fn new_incarnation_faults(c: &mut RcConn, t: &mut Trace) {
    c.send_or_write(t, true, false, 10, None);
    let s = c.message(true, false, 10, None);
    c.emit_request(t, true, &s[0]);
    c.ack(t, true, s[0].psn, 2);
    c.send_or_write(t, false, false, 10, None);
    let skipped = c.sides[1].next_psn;
    c.sides[1].next_psn += 1;
    let s = c.message(false, false, 10, None);
    c.emit_request(t, false, &s[0]);
    c.nak(t, false, skipped, NAK_SEQ);
}

/// Frames 4-16 after a CM connect: READ of 6000 bytes (4), FIRST (5), a 3 ms stall, the READ
/// re-issued from its second PSN (6), the rest of the first answer (7-11), the answer to the
/// re-issued READ (12-16) whose LAST carries `last_len` bytes (880 is right).
fn overlapping_read_retry(c: &mut RcConn, t: &mut Trace, last_len: usize) {
    let rd = c.read_request(t, true, 6000); // 4
    c.read_responses(t, true, rd.psn, 6000, &[1, 2, 3, 4, 5]); // 5
    let msn = c.sides[0].msn;
    t.advance(3_000_000);
    let pmtu = c.pmtu as u32;
    let mut retry = rd.clone();
    retry.psn = rd.psn + 1;
    if let Some(r) = retry.headers.reth.as_mut() {
        r.va += u64::from(pmtu);
        r.dma_len -= pmtu;
    }
    c.emit_request(t, true, &retry); // 6
    for k in 1..6 {
        c.read_response(t, true, rd.psn, 6000, k, msn); // 7-11
    }
    let len = 4 * c.pmtu + last_len;
    for k in 0..5 {
        c.read_response(t, true, retry.psn, len, k, msn); // 12-16
    }
}

/// A connection without CM whose packets carry P_Key 0x8003.
fn pkey_conn_no_cm() -> RcConn {
    let mut d =
        RcConn::new(Endpoint::new(ip(3), 0x333), Endpoint::new(ip(4), 0x444), 1024, 7000, 9000);
    d.pkey = 0x8003;
    d
}

/// A CM-opened connection on P_Key 0x8001 (1-3, the REQ announcing Local ACK Timeout 10,
/// 4.194304 ms): SEND (4, ACK 5, MSN 1); a WRITE_FIRST carrying the foreign P_Key 0x8002 at
/// the requester's next PSN p (6), which the responder drops; the requester's own SEND_ONLYs
/// at p and p + 1 (7, 8), their ACK lost downstream; 5 ms later both resent (9, 10), the
/// first carrying `resent_len` of its 10 bytes; ACK of p + 1 (11, MSN 3).
fn pkey_foreign_psn(resent_len: usize) -> Trace {
    let mut t = Trace::new();
    let mut c = conn();
    c.pkey = 0x8001;
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.local_ack_timeout = Some(10);
    cm.connect(&mut t, &c, 4000); // 1-3
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    let s = c.message(true, false, 10, None);
    let s2 = c.message(true, false, 10, None);
    let reth = RethRepr { va: 0x5000, rkey: 0x77, dma_len: 4096 };
    let foreign = Sent {
        opcode: op::WRITE_FIRST,
        psn: s[0].psn,
        headers: ExtHeaders { reth: Some(reth), ..Default::default() },
        payload: vec![0x55; 1024],
        ackreq: false,
    };
    c.pkey = 0x8002;
    c.emit_request(&mut t, true, &foreign); // 6
    c.pkey = 0x8001;
    c.emit_request(&mut t, true, &s[0]); // 7
    c.emit_request(&mut t, true, &s2[0]); // 8
    t.advance(5_000_000);
    let mut again = s[0].clone();
    again.payload.truncate(resent_len);
    c.emit_request(&mut t, true, &again); // 9
    c.emit_request(&mut t, true, &s2[0]); // 10
    c.ack(&mut t, true, s2[0].psn, 2); // 11
    t
}

/// Two CM incarnations on the same QPNs (1-18 as in clean-cm-reconnect), and in the second
/// a late request of the first on each direction, to the same DestQP at its old PSN, which
/// the responder's reset QP drops: a -> b SEND (19, ACK 20 MSN 1); the first incarnation's
/// WRITE_FIRST at PSN 1001 (21, about 5 M PSNs "ahead" of the second's); a -> b SEND (22,
/// with `skip` one PSN too far; ACK 23 MSN 2), WRITE of two packets (24, 25, ACK 26 MSN 3);
/// b -> a SEND (27, ACK 28 MSN 1); the first incarnation's SEND_ONLY at PSN 5000 (29, about
/// 2.8 M "behind" the second's); b -> a SEND (30, ACK 31 MSN 2); DREQ/DREP (32, 33).
fn stale_incarnation(skip: bool) -> Trace {
    let mut t = Trace::new();
    let mut c = conn();
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.connect(&mut t, &c, 4000); // 1-3
    let mut old = c.clone();
    incarnation_traffic(&mut c, &mut t); // 4-13
    cm.disconnect(&mut t, &c); // 14, 15
    reconnect_cm(&mut c, &mut t, &mut cm); // 16-18
    c.send_or_write(&mut t, true, false, 10, None); // 19, 20
    old.message(true, false, 10, None);
    let late = old.message(true, true, 2048, None);
    old.emit_request(&mut t, true, &late[0]); // 21
    if skip {
        c.sides[0].next_psn = (c.sides[0].next_psn + 1) & 0x00ff_ffff;
    }
    c.send_or_write(&mut t, true, false, 10, None); // 22, 23
    c.send_or_write(&mut t, true, true, 2048, None); // 24-26
    c.send_or_write(&mut t, false, false, 10, None); // 27, 28
    let late = old.message(false, false, 10, None);
    old.emit_request(&mut t, false, &late[0]); // 29
    c.send_or_write(&mut t, false, false, 10, None); // 30, 31
    cm.disconnect(&mut t, &c); // 32, 33
    t
}

/// [`stale_incarnation`] with the late request first: 1-18 as in clean-cm-reconnect; the
/// first incarnation's WRITE_FIRST at PSN 1001 (19) before any request of the second; a -> b
/// SEND at the REP starting PSN (20, ACK 21 MSN 1), WRITE (22, 23, ACK 24 MSN 2);
/// DREQ/DREP (25, 26).
fn stale_incarnation_first() -> Trace {
    let mut t = Trace::new();
    let mut c = conn();
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.connect(&mut t, &c, 4000); // 1-3
    let mut old = c.clone();
    incarnation_traffic(&mut c, &mut t); // 4-13
    cm.disconnect(&mut t, &c); // 14, 15
    reconnect_cm(&mut c, &mut t, &mut cm); // 16-18
    old.message(true, false, 10, None);
    let late = old.message(true, true, 2048, None);
    old.emit_request(&mut t, true, &late[0]); // 19
    c.send_or_write(&mut t, true, false, 10, None); // 20, 21
    c.send_or_write(&mut t, true, true, 2048, None); // 22-24
    cm.disconnect(&mut t, &c); // 25, 26
    t
}

/// A CM-opened connection (1-3, Local ACK Timeout 10): FETCH_ADD (4) answered with original
/// value 41 (5, MSN 1), the answer lost downstream; 5 ms later the requester resends the
/// FETCH_ADD (6), and the responder answers the duplicate with original value `again` and
/// the same MSN (7); SEND (8, ACK 9 MSN 2).
fn duplicate_atomic(again: u64) -> Trace {
    let mut t = Trace::new();
    let mut c = cm_conn_t10(&mut t);
    let psn = c.sides[0].next_psn;
    c.sides[0].next_psn += 1;
    let aeth = AtomicEthRepr { va: 0x7f00_0000_1000, rkey: 0x9abc, swap_add: 1, compare: 0 };
    let fa = Sent {
        opcode: op::FETCH_ADD,
        psn,
        headers: ExtHeaders { atomic_eth: Some(aeth), ..Default::default() },
        payload: vec![],
        ackreq: true,
    };
    let answer = |orig: u64| ExtHeaders {
        aeth: Some(AethRepr::ack(0x1f, 1)),
        atomic_ack_eth: Some(AtomicAckEthRepr { orig }),
        ..Default::default()
    };
    c.emit_request(&mut t, true, &fa); // 4
    c.emit_response(&mut t, true, op::ATOMIC_ACK, psn, answer(41), &[]); // 5
    c.sides[0].msn = 1;
    t.advance(5_000_000);
    c.emit_request(&mut t, true, &fa); // 6
    c.emit_response(&mut t, true, op::ATOMIC_ACK, psn, answer(again), &[]); // 7
    c.send_or_write(&mut t, true, false, 10, None); // 8, 9
    t
}

/// A connection without CM, the PMTU unknown to the checker until a FIRST is seen: SEND_ONLY
/// (1, ACK 2 MSN 1); a READ of 3000 bytes (3), sized while the PMTU is unknown, answered
/// FIRST, MIDDLE, LAST (4-6, MSN 2; the PMTU, 1024, is learnt from the FIRST); the capture
/// ends there.
fn read_before_pmtu() -> Trace {
    let mut t = Trace::new();
    let mut c = conn();
    c.send_or_write(&mut t, true, false, 10, None); // 1, 2
    c.read(&mut t, true, 3000); // 3-6
    t
}

/// A CM-opened connection whose a -> b PSNs start at `start` (1-3): SEND (4, ACK 5 MSN 1);
/// SEND (6, ACK 7 MSN 2), then, with `skip`, the requester skips one PSN; WRITE of three
/// packets (8-10) ACKed (11, MSN 3); READ of 2500 bytes (12) answered (13-15, MSN 4); SEND
/// (16, ACK 17 MSN 5).
fn psn_skip_stream(start: u32, skip: bool) -> Trace {
    let mut t = Trace::new();
    let mut c =
        RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, start, 5000);
    Cm::new(77, (0x1111, 0x2222)).connect(&mut t, &c, 4000); // 1-3
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    c.send_or_write(&mut t, true, false, 10, None); // 6, 7
    if skip {
        c.sides[0].next_psn = (c.sides[0].next_psn + 1) & 0x00ff_ffff;
    }
    c.send_or_write(&mut t, true, true, 3000, None); // 8-11
    c.read(&mut t, true, 2500); // 12-15
    c.send_or_write(&mut t, true, false, 10, None); // 16, 17
    t
}

/// A CM-opened connection (1-3, Local ACK Timeout 10): READ of 3000 bytes (4) answered
/// (5-7, MSN 1), the answer lost downstream; 5 ms later the READ re-issued at the same PSN
/// and VA with DMA Length `retry_len` (8), answered again on its own PSNs with MSN 1 (9..);
/// then a SEND (ACK MSN 2), a WRITE of two packets (ACK MSN 3) and a READ of 100 bytes
/// (answered, MSN 4).
fn read_retry_then_traffic(retry_len: usize) -> Trace {
    let mut t = Trace::new();
    let mut c = cm_conn_t10(&mut t);
    let rd = c.read_request(&mut t, true, 3000); // 4
    c.read_responses(&mut t, true, rd.psn, 3000, &[]); // 5, 6, 7
    t.advance(5_000_000);
    let mut retry = rd.clone();
    if let Some(r) = retry.headers.reth.as_mut() {
        r.dma_len = retry_len as u32;
    }
    c.emit_request(&mut t, true, &retry); // 8
    c.read_responses_again(&mut t, true, rd.psn, retry_len); // 9..
    c.send_or_write(&mut t, true, false, 10, None);
    c.send_or_write(&mut t, true, true, 2048, None);
    c.read(&mut t, true, 100);
    t
}

/// How the responder answers the request after the idle gap in [`idle_jump`].
#[derive(Clone, Copy)]
enum IdleAnswer {
    /// The QP was not reset: a NAK "PSN sequence error" naming the old expected PSN, MSN 3.
    NakOld,
    /// The QP was not reset: the responder ACKs the request with MSN 4 (the old MSN + 1).
    AckOldMsn,
    /// A real reconnect: both QPs restarted, the ACK carries MSN 1.
    Fresh,
}

/// After an idle gap, the requester resumes 100 000 PSNs past its old ones: a PSN skip on a
/// QP that was not reset, or a reconnect without CM, told apart by the responder's answer.
/// Traffic without CM (1-10: the last a -> b request is the READ of frame 8, MSN 3); 1.5 s
/// of silence; a -> b SEND_ONLY at the old next PSN + 100 000 (11), answered as `answer`
/// says (12).
fn idle_jump(answer: IdleAnswer) -> Trace {
    let mut t = Trace::new();
    let mut c = conn();
    incarnation_traffic(&mut c, &mut t); // 1-10
    t.advance(1_500_000_000);
    let expected = c.sides[0].next_psn;
    let jump = (expected + 100_000) & 0x00ff_ffff;
    match answer {
        IdleAnswer::Fresh => c.restart(jump, B2),
        IdleAnswer::NakOld | IdleAnswer::AckOldMsn => c.sides[0].next_psn = jump,
    }
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 11
    match answer {
        IdleAnswer::NakOld => c.nak(&mut t, true, expected, NAK_SEQ), // 12
        IdleAnswer::AckOldMsn | IdleAnswer::Fresh => c.ack(&mut t, true, jump, 1), // 12
    }
    t
}

/// req-gbn-new-psn: WRITE (4-7), NAK naming its second PSN (8), 0.1 ms later a new SEND
/// (9), then the resend from the NAK'd PSN (10-13) and the ACK (14).
fn gbn_new_psn() -> (Trace, Vec<Expected>) {
    let mut t = Trace::new();
    let mut c = cm_conn(&mut t);
    let w = c.message(true, true, 4096, None);
    emit_all(&c, &mut t, true, &w); // 4-7
    c.nak(&mut t, true, w[1].psn, NAK_SEQ); // 8
    t.advance(100_000);
    let s = c.message(true, false, 10, None);
    c.emit_request(&mut t, true, &s[0]); // 9
    emit_all(&c, &mut t, true, &w[1..]); // 10, 11, 12
    c.emit_request(&mut t, true, &s[0]); // 13
    c.ack(&mut t, true, s[0].psn, 2); // 14
    (t, vec![ex("REQ-GBN", &[8, 9])])
}

/// The suite, in file order.
/// The network configuration the NET-* scenarios state: DSCP 26 for RoCE traffic, 46 for
/// CNPs, PFC priority (PCP) 3.
const NET: NetExpect = NetExpect { dscp: Some(26), cnp_dscp: Some(46), pcp: Some(3) };

/// Which side's misconfiguration [`net_config`] shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NetFault {
    None,
    /// b sends at DSCP 0 (its traffic class never set); its CNPs stay at 46.
    Dscp,
    /// b sends its CNP at DSCP 5.
    CnpDscp,
    /// b tags its frames with PCP 0 up to its CNP, then sends untagged.
    Pcp,
}

/// A CM-opened connection configured as [`NET`] states, with a fault of b's: CM REQ, REP,
/// RTU (1-3); a -> b SEND (4, ACK 5); a CE-marked WRITE (6, ACK 7) and b's CNP to a's QP
/// (8); a READ of 1500 bytes (9, responses 10, 11); b -> a SEND (12, ACK 13). b sends 2, 5,
/// 7, 8, 10, 11, 12. a's frames are double-tagged, an S-tag with PCP 3 outside a C-tag with
/// PCP 0 (the outermost tag is the one judged); b's carry one tag, VLAN 100 PCP 3.
fn net_config(fault: NetFault) -> Trace {
    let tag = |tpid, pcp, vid| Some(VlanTag { tpid, pcp, dei: false, vid });
    let mut t = Trace::new();
    let mut c = conn();
    let a = Wire {
        dscp: 26,
        cnp_dscp: 46,
        vlans: [tag(0x88a8, 3, 10), tag(0x8100, 0, 100)],
        udp_sport: None,
    };
    let mut b =
        Wire { dscp: 26, cnp_dscp: 46, vlans: [tag(0x8100, 3, 100), None], udp_sport: None };
    match fault {
        NetFault::None => {}
        NetFault::Dscp => b.dscp = 0,
        NetFault::CnpDscp => b.cnp_dscp = 5,
        NetFault::Pcp => b.vlans = [tag(0x8100, 0, 100), None],
    }
    c.wire = [a, b];
    Cm::new(77, (0x1111, 0x2222)).connect(&mut t, &c, 4000); // 1-3
    c.send_or_write(&mut t, true, false, 10, None); // 4, 5
    c.ecn = 3;
    c.send_or_write(&mut t, true, true, 10, None); // 6, 7
    c.ecn = 2;
    c.cnp(&mut t, true); // 8
    if fault == NetFault::Pcp {
        c.wire[1].vlans = [None, None];
    }
    c.read(&mut t, true, 1500); // 9, 10, 11
    c.send_or_write(&mut t, false, false, 10, None); // 12, 13
    t
}

pub const SUITE: &[Scenario] = &[
    Scenario { name: "clean-rc-mix", description: "RC SEND / WRITE / READ / atomic both ways, CM-opened", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        clean_mix(&mut c, &mut t);
        Cm::new(77, (0x1111, 0x2222)).disconnect(&mut t, &c);
        (t, vec![])
    }},
    Scenario { name: "clean-sample", description: "the project's sample: go-back-N after a NAK, RNR retry after the timer, ECN with a CNP, UD, IPv6", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (scenarios::sample(1), vec![]) },
    Scenario { name: "clean-recoveries", description: "go-back-N after loss downstream, RNR retry after the timer, READ retry after a lost response", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "clean-psn-wrap-interleaved", description: "three interleaved connections (one UC) crossing PSN 2^24", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "clean-ud-xrc", description: "UD SENDs with and without immediate, and an XRC request / ACK pair", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "host-capture-loss-reorder", description: "the clean mix as a host capture records it: a packet missing, an ACK before its request (warnings only)", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "pkt-rules", description: "one bad frame per per-packet rule: ICRC, TVer, reserved and vendor opcodes, payload on a READ request, padded FIRST, reserved bits, short CNP, QP1 Q_Key", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "req-psn-skip", description: "the requester skips a PSN (judged as a fault: the capture is known complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        c.sides[0].next_psn += 1;
        c.send_or_write(&mut t, true, false, 10, None); // 6, 7
        (t, vec![ex("REQ-PSN", &[4, 6])])
    }},
    Scenario { name: "req-psn-in-read-range", description: "a SEND reuses a PSN consumed by a 3-PSN READ", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let rd = c.read(&mut t, true, 3000); // 4; 5-7 responses
        let mut s = c.message(true, false, 8, None);
        s[0].psn = rd.psn + 1;
        c.emit_request(&mut t, true, &s[0]); // 8
        (t, vec![ex("REQ-PSN", &[4, 8])])
    }},
    Scenario { name: "req-msg-seq", description: "a WRITE interleaved into a SEND, then a MIDDLE with no message in progress", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "req-length-dmalen-align", description: "a short FIRST, a WRITE shorter than its DMA Length, a misaligned atomic", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "req-gbn-retx-same", description: "after a NAK naming the MIDDLE the requester resends the LAST first, then resends it changed 5 ms later (the REQ announcing Local ACK Timeout 10, 4.194304 ms)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn_t10(&mut t);
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
    Scenario { name: "req-retx-same-payload", description: "a SEND_ONLY of 64 bytes (4) unanswered, resent 5 ms later with the same opcode, length and headers but other payload bytes (5; the REQ announcing Local ACK Timeout 10, 4.194304 ms), then ACKed (6): only the payload's digest tells the two apart", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn_t10(&mut t);
        let s = c.message(true, false, 64, None);
        let mut first = s[0].clone();
        first.payload = vec![0x11; 64];
        c.emit_request(&mut t, true, &first); // 4
        let mut changed = first.clone();
        changed.payload[40] = 0x12;
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &changed); // 5
        c.ack(&mut t, true, first.psn, 1); // 6
        (t, vec![ex("REQ-RETX-SAME", &[4, 5])])
    }},
    Scenario { name: "req-rnr-wait", description: "a retry 0.1 ms after an RNR NAK with a 0.64 ms timer (the REQ announcing RNR Retry Count 7: the retry itself is allowed)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        let mut cm = Cm::new(77, (0x1111, 0x2222));
        cm.rnr_retry_count = Some(7);
        cm.connect(&mut t, &c, 4000);
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 4
        c.nak(&mut t, true, s[0].psn, AethRepr::rnr_nak(12, 0).syndrome); // 5
        t.advance(100_000);
        c.emit_request(&mut t, true, &s[0]); // 6
        (t, vec![ex("REQ-RNR-WAIT", &[5, 6])])
    }},
    Scenario { name: "req-retx-cause", description: "a retransmission nothing explains", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 4
        c.emit_request(&mut t, true, &s[0]); // 5
        (t, vec![ex("REQ-RETX-CAUSE", &[4, 5])])
    }},
    Scenario { name: "req-read-retry", description: "a re-issued READ whose VA does not advance with its PSN", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "rsp-ack-range", description: "an ACK of a PSN never sent, requests continuing below it", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let next = c.sides[0].next_psn;
        c.ack(&mut t, true, next + 5, 1); // 6
        t.advance(2_000_000);
        c.send_or_write(&mut t, true, false, 10, None); // 7, 8
        // The bogus ACK changes nothing: the proper ACK that follows (8) is judged against
        // frame 5, and its MSN (which counted what the bogus ACK claimed) sets a new baseline.
        (t, vec![ex("RSP-ACK-RANGE", &[6, 7])])
    }},
    Scenario { name: "rsp-ack-monotonic", description: "an ACK naming a PSN before one already acknowledged", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.ack(&mut t, true, s[0].psn - 2, 1); // 7
        (t, vec![ex("RSP-ACK-MONOTONIC", &[5, 7])])
    }},
    Scenario { name: "rsp-nak-seq", description: "a NAK naming an acknowledged PSN, then two NAKs for one gap", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "rsp-msn", description: "the MSN jumps by two for one message", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.ack(&mut t, true, s[0].psn, 2); // 7
        (t, vec![ex("RSP-MSN", &[5, 7])])
    }},
    Scenario { name: "rsp-dup", description: "a duplicate SEND acknowledged with its own old PSN instead of ePSN - 1", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "rsp-read", description: "READ responses out of order, and a READ answered with too few bytes", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
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
    Scenario { name: "rsp-atomic", description: "a FETCH_ADD answered by a plain ACK", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let psn = c.sides[0].next_psn;
        c.sides[0].next_psn += 1;
        let fa = Sent { opcode: op::FETCH_ADD, psn, headers: ExtHeaders { atomic_eth: Some(AtomicEthRepr { va: 0x1000, rkey: 1, swap_add: 1, compare: 0 }), ..Default::default() }, payload: vec![], ackreq: true };
        c.emit_request(&mut t, true, &fa); // 4
        c.ack(&mut t, true, psn, 1); // 5
        (t, vec![ex("RSP-ATOMIC", &[4, 5])])
    }},
    Scenario { name: "rsp-nak-error", description: "the responder's QP keeps sending after a remote access error NAK", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let w = c.message(true, true, 100, None);
        c.emit_request(&mut t, true, &w[0]); // 4
        c.nak(&mut t, true, w[0].psn, AethRepr::nak(2, 0).syndrome); // 5
        c.send_or_write(&mut t, false, false, 10, None); // 6, 7
        (t, vec![ex("RSP-NAK-ERROR", &[5, 6])])
    }},
    Scenario { name: "rsp-ackreq", description: "an AckReq packet never acknowledged while the capture runs 300 ms on", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        t.advance(300_000_000);
        c.send_or_write(&mut t, false, false, 10, None); // 7, 8
        (t, vec![ex("RSP-ACKREQ", &[6])])
    }},
    Scenario { name: "cc-cnp", description: "CE-marked WRITEs and no CNP back", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.ecn = 3;
        c.send_or_write(&mut t, true, true, 2048, None); // 4, 5, 6
        c.ecn = 2;
        t.advance(5_000_000);
        c.send_or_write(&mut t, true, true, 10, None); // 7, 8
        (t, vec![ex("CC-CNP", &[4])])
    }},
    Scenario { name: "cc-cnp-target", description: "a CNP to a QP that sent no CE-marked data", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, true, 10, None); // 4, 5
        c.cnp(&mut t, true); // 6
        (t, vec![ex("CC-CNP-TARGET", &[6])])
    }},
    Scenario { name: "cap-time", description: "timestamps going backwards", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        c.send_or_write(&mut t, true, false, 10, None); // 1, 2
        t.frames[1].ts_ns = t.frames[0].ts_ns - 500;
        (t, vec![ex("CAP-TIME", &[2])])
    }},
    Scenario { name: "cap-time-burst", description: "timestamps going backwards five times (frames 2, 4, 6, 8, 10; frame 6 the furthest back): one CAP-TIME finding citing the first and the worst step, with the count", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        for _ in 0..5 {
            c.send_or_write(&mut t, true, false, 10, None);
        }
        for (i, back) in [(1, 100), (3, 200), (5, 900), (7, 300), (9, 50)] {
            t.frames[i].ts_ns = t.frames[i - 1].ts_ns - back;
        }
        (t, vec![ex("CAP-TIME", &[2, 6])])
    }},
    // Connection lifecycle: reconnects with and without CM.
    Scenario { name: "clean-cm-reconnect", description: "two CM incarnations on the same QPNs (assume_complete): REQ/REP/RTU (1-3), traffic (4-13), DREQ/DREP (14-15), then a new REQ/REP/RTU (16-18, new communication IDs) with new starting PSNs millions away from the old ones (a -> b restarts 'behind' the old PSNs, b -> a 'ahead'), the same traffic again (19-28) with MSNs restarting at 1, DREQ/DREP (29-30). The second incarnation is judged from its own REQ/REP PSNs: nothing may be reported (no duplicate, retransmission, PSN jump or MSN finding across the incarnations)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        let mut cm = Cm::new(77, (0x1111, 0x2222));
        cm.connect(&mut t, &c, 4000); // 1-3
        incarnation_traffic(&mut c, &mut t); // 4-13
        cm.disconnect(&mut t, &c); // 14, 15
        reconnect_cm(&mut c, &mut t, &mut cm); // 16-18
        incarnation_traffic(&mut c, &mut t); // 19-28
        cm.disconnect(&mut t, &c); // 29, 30
        (t, vec![])
    }},
    Scenario { name: "cm-reconnect-faults", description: "faults inside the second CM incarnation (assume_complete): frames 1-18 as in clean-cm-reconnect; then a -> b SEND (19) ACKed with MSN 1 (20), SEND (21) ACKed with MSN 3 (22): RSP-MSN on 20 and 22 (one message, MSN +2), judged against the new incarnation's ACK, not the old one's; b -> a SEND at the REQ starting PSN (23, ACK 24), then a SEND two PSNs on (25) that the responder NAKs (26, naming the skipped PSN): REQ-PSN on 23 and 25", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        let mut cm = Cm::new(77, (0x1111, 0x2222));
        cm.connect(&mut t, &c, 4000); // 1-3
        incarnation_traffic(&mut c, &mut t); // 4-13
        cm.disconnect(&mut t, &c); // 14, 15
        reconnect_cm(&mut c, &mut t, &mut cm); // 16-18
        new_incarnation_faults(&mut c, &mut t); // 19-26
        (t, vec![ex("RSP-MSN", &[20, 22]), ex("REQ-PSN", &[23, 25])])
    }},
    Scenario { name: "clean-reconnect-no-cm", description: "the same QPNs reconnected without CM (assume_complete): traffic (1-10), 1.5 s of silence, then both directions resume at PSNs millions outside the old window (a -> b 'behind', b -> a 'ahead'), each with a message start (SEND_ONLY 11, WRITE_FIRST 16) acknowledged with MSN 1 (12, 18): a new incarnation seen without its CM exchange, judged afresh; nothing may be reported (no RSP-DUP, RSP-MSN, REQ-PSN, REQ-RETX-*)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        incarnation_traffic(&mut c, &mut t); // 1-10
        t.advance(1_500_000_000);
        c.restart(A2, B2);
        c.send_or_write(&mut t, true, false, 10, None); // 11, 12 (MSN 1)
        c.send_or_write(&mut t, true, true, 2048, None); // 13, 14, 15 (MSN 2)
        c.send_or_write(&mut t, false, true, 2048, None); // 16, 17, 18 (MSN 1)
        c.read(&mut t, true, 1500); // 19, 20, 21 (MSN 3)
        (t, vec![])
    }},
    Scenario { name: "reconnect-no-cm-faults", description: "faults after a reconnect without CM (assume_complete): frames 1-10 and the 1.5 s silence as in clean-reconnect-no-cm; a -> b restarts with a SEND_ONLY (11) ACKed with MSN 1 (12), then a WRITE (13, 14) ACKed with MSN 3 (15): RSP-MSN on 12 and 15; b -> a restarts with a WRITE (16, 17, ACK 18 MSN 1), then a SEND two PSNs on (19) that the responder NAKs (20): REQ-PSN on 17 and 19. Both findings lie inside the new incarnation", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        incarnation_traffic(&mut c, &mut t); // 1-10
        t.advance(1_500_000_000);
        c.restart(A2, B2);
        c.send_or_write(&mut t, true, false, 10, None); // 11, 12 (MSN 1)
        let w = c.message(true, true, 2048, None);
        emit_all(&c, &mut t, true, &w); // 13, 14
        c.ack(&mut t, true, w[1].psn, 2); // 15: MSN 3 for one message
        c.send_or_write(&mut t, false, true, 2048, None); // 16, 17, 18 (MSN 1)
        let skipped = c.sides[1].next_psn;
        c.sides[1].next_psn += 1;
        let s = c.message(false, false, 10, None);
        c.emit_request(&mut t, false, &s[0]); // 19
        c.nak(&mut t, false, skipped, NAK_SEQ); // 20
        (t, vec![ex("RSP-MSN", &[12, 15]), ex("REQ-PSN", &[17, 19])])
    }},
    Scenario { name: "clean-cm-reject-reconnect", description: "CM connection (1-3), SENDs both ways (4-7, MSN 1), DREQ/DREP (8, 9); a new REQ (10) is rejected (REJ 11, consumer defined); a third REQ/REP/RTU (12-14) with other starting PSNs opens the connection again; SENDs both ways at those PSNs with MSN 1 (15-18), DREQ/DREP (19, 20). The rejected REQ opens nothing and the accepted one starts a new incarnation: nothing may be reported (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        let mut cm = Cm::new(77, (0x1111, 0x2222));
        cm.connect(&mut t, &c, 4000); // 1-3
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        c.send_or_write(&mut t, false, false, 10, None); // 6, 7
        cm.disconnect(&mut t, &c); // 8, 9
        t.advance(200_000);
        c.restart(A2, B2);
        cm.renew((0x3333, 0x4444));
        cm.rejected(&mut t, &c, 4000); // 10, 11
        t.advance(1_000_000);
        c.restart(0xd2_0b44, 0xe0_4c17);
        cm.renew((0x5555, 0x6666));
        cm.connect(&mut t, &c, 4000); // 12-14
        c.send_or_write(&mut t, true, false, 10, None); // 15, 16
        c.send_or_write(&mut t, false, false, 10, None); // 17, 18
        cm.disconnect(&mut t, &c); // 19, 20
        (t, vec![])
    }},
    // Duplicate and re-issued READs.
    Scenario { name: "clean-read-duplicate", description: "duplicate READs the responder re-executes (assume_complete). Implicit NAK: READ (4, 3 PSNs) and a SEND (5); the READ responses (6-8, MSN 1) are lost downstream, the SEND's ACK (9, MSN 2) reaches the requester, which re-issues the READ unchanged (10) and, go-back-N, the SEND (11); the responder answers the READ again on its own PSNs with the current MSN 2 (12-14) and ACKs the duplicate SEND with ePSN - 1 (15). SEND (16, ACK 17 MSN 3). Timeout: READ (18) answered (19, MSN 4), the answer lost downstream; 5 ms later the same READ (20) answered again with MSN 4 (21); SEND (22, ACK 23 MSN 5). Nothing may be reported: RSP-DUP does not apply to READs, the MSN counts each READ once", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let rd = c.read_request(&mut t, true, 3000); // 4
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 5
        c.read_responses(&mut t, true, rd.psn, 3000, &[]); // 6, 7, 8
        c.ack(&mut t, true, s[0].psn, 1); // 9
        t.advance(3_000);
        c.emit_request(&mut t, true, &rd); // 10
        c.emit_request(&mut t, true, &s[0]); // 11
        c.read_responses_again(&mut t, true, rd.psn, 3000); // 12, 13, 14
        c.ack(&mut t, true, s[0].psn, 0); // 15
        c.send_or_write(&mut t, true, false, 10, None); // 16, 17
        let rd = c.read_request(&mut t, true, 100); // 18
        c.read_responses(&mut t, true, rd.psn, 100, &[]); // 19
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &rd); // 20
        c.read_responses_again(&mut t, true, rd.psn, 100); // 21
        c.send_or_write(&mut t, true, false, 10, None); // 22, 23
        (t, vec![])
    }},
    Scenario { name: "req-read-retry-length", description: "a READ of 3000 bytes (4) answered (5-7, MSN 1) but the answer lost downstream; 5 ms later the requester re-issues it at the same PSN and VA with DMA Length 2000 (8): REQ-READ-RETRY on 4 and 8 (the end address moved). The responder answers the re-issued READ correctly for 2000 bytes, FIRST + LAST on its PSNs with the current MSN (9, 10): no RSP-READ (the answer is judged against the READ that was re-issued). assume_complete", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let rd = c.read_request(&mut t, true, 3000); // 4
        c.read_responses(&mut t, true, rd.psn, 3000, &[]); // 5, 6, 7
        t.advance(5_000_000);
        let mut retry = rd.clone();
        if let Some(r) = retry.headers.reth.as_mut() { r.dma_len = 2000; }
        c.emit_request(&mut t, true, &retry); // 8
        c.read_responses_again(&mut t, true, rd.psn, 2000); // 9, 10
        (t, vec![ex("REQ-READ-RETRY", &[4, 8])])
    }},
    Scenario { name: "clean-read-retry-overlap", description: "a READ re-issued while the answer to the first one is still arriving (assume_complete): READ of 6000 bytes, 6 PSNs (4); FIRST (5, MSN 1); the rest stalls 3 ms, the requester times out and re-issues the READ from the first missing PSN with VA + 1024 and 4976 bytes (6); the first answer's MIDDLE x4 and LAST (7-11) arrive after it, then the answer to the re-issued READ, FIRST, MIDDLE x3, LAST on PSNs 2-6 with the current MSN (12-16); SEND (17, ACK 18 MSN 2). Each response belongs to the READ whose answer it continues: 7-11 to frame 4, 12-16 to frame 6. Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        overlapping_read_retry(&mut c, &mut t, 880); // 4-16
        c.send_or_write(&mut t, true, false, 10, None); // 17, 18
        (t, vec![])
    }},
    Scenario { name: "rsp-read-retry-overlap", description: "as clean-read-retry-overlap (frames 4-16, assume_complete), but the responder's answer to the re-issued READ (6, 4976 bytes) ends with a LAST of 1024 bytes (16): 5120 bytes for a 4976-byte READ, RSP-READ on 6 and 16 (the re-issued READ and the response closing its answer). The first answer (5, 7-11) is complete and correct: nothing on it", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        overlapping_read_retry(&mut c, &mut t, 1024); // 4-16
        c.send_or_write(&mut t, true, false, 10, None); // 17, 18
        (t, vec![ex("RSP-READ", &[6, 16])])
    }},
    // Go-back-N and in-flight packets.
    Scenario { name: "req-gbn-new-psn", description: "after a NAK \"PSN sequence error\" (8) naming the WRITE's second PSN (5), the requester, which had sent the whole WRITE (4-7) when the NAK came, waits 0.1 ms and sends a new PSN (SEND_ONLY 9) before resending from the NAK'd PSN (10-12, then 13 = the SEND again; ACK 14 MSN 2): REQ-GBN on 8 and 9 (assume_complete; see req-gbn-new-psn-host for the same without it)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: gbn_new_psn },
    Scenario { name: "req-gbn-new-psn-host", description: "req-gbn-new-psn checked without assume_complete: nothing is missing from the capture (the NAK'd PSN was captured in 5, PSNs 4-9 are consecutive), so REQ-GBN on 8 and 9 still fires", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: gbn_new_psn },
    Scenario { name: "clean-gbn-in-flight", description: "go-back-N with packets in flight (assume_complete): WRITE FIRST, MIDDLE, MIDDLE (4-6), the second lost downstream; the NAK naming it (7) is captured 1 us after the third; the WRITE_LAST (8) and a new SEND_ONLY (9) follow 0.4 and 0.8 us after the NAK (sent before it reached the requester: within one round trip, two packets), then 3 us after the NAK the resend from the NAK'd PSN, in order (10-13), and the ACK (14, MSN 2). Nothing may be reported: no REQ-GBN for 8-9, no REQ-RETX-CAUSE for any of 10-13 (one go-back-N burst, explained by the NAK)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let w = c.message(true, true, 4096, None);
        emit_all(&c, &mut t, true, &w[..3]); // 4, 5, 6
        c.nak(&mut t, true, w[1].psn, NAK_SEQ); // 7
        let nak_ts = t.frames.last().map_or(0, |f| f.ts_ns);
        let s = c.message(true, false, 10, None);
        t.now_ns = nak_ts + 400;
        t.gap_ns = 400;
        c.emit_request(&mut t, true, &w[3]); // 8
        c.emit_request(&mut t, true, &s[0]); // 9
        t.gap_ns = 1_000;
        t.now_ns = nak_ts + 3_000;
        emit_all(&c, &mut t, true, &w[1..]); // 10, 11, 12
        c.emit_request(&mut t, true, &s[0]); // 13
        c.ack(&mut t, true, s[0].psn, 2); // 14
        (t, vec![])
    }},
    // Timeout resend bursts.
    Scenario { name: "clean-timeout-burst", description: "timeout resends of several PSNs at once (assume_complete; CM 1-3, the REQ announcing Local ACK Timeout 10, 4.194304 ms): a WRITE (4-7) lost downstream, no response; 5 ms later all four PSNs resent back to back (8-11), ACK (12, MSN 1). A SEND (13-15) whose ACK (16, MSN 2) is lost downstream; 5 ms later the three PSNs resent (17-19), acknowledged as duplicates with ePSN - 1 and MSN 2 (20). Nothing may be reported: each burst is one timeout retry, not a REQ-RETX-CAUSE per packet", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn_t10(&mut t);
        let w = c.message(true, true, 4096, None);
        emit_all(&c, &mut t, true, &w); // 4-7
        t.advance(5_000_000);
        emit_all(&c, &mut t, true, &w); // 8-11
        c.ack(&mut t, true, w[3].psn, 1); // 12
        let s = c.message(true, false, 3000, None);
        emit_all(&c, &mut t, true, &s); // 13-15
        c.ack(&mut t, true, s[2].psn, 1); // 16
        t.advance(5_000_000);
        emit_all(&c, &mut t, true, &s); // 17-19
        c.ack(&mut t, true, s[2].psn, 0); // 20
        (t, vec![])
    }},
    Scenario { name: "req-retx-cause-burst", description: "a resend burst nothing explains (assume_complete): WRITE (4-7) ACKed (8, MSN 1); 0.1 ms later (below the 1 ms retransmission timeout, no NAK) all four PSNs resent (9-12), ACKed as duplicates (13). One unexplained burst is one finding: REQ-RETX-CAUSE on 4 and 9 (the first PSN's original and its resend), not one per packet", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        let w = c.message(true, true, 4096, None);
        emit_all(&c, &mut t, true, &w); // 4-7
        c.ack(&mut t, true, w[3].psn, 1); // 8
        t.advance(100_000);
        emit_all(&c, &mut t, true, &w); // 9-12
        c.ack(&mut t, true, w[3].psn, 0); // 13
        (t, vec![ex("REQ-RETX-CAUSE", &[4, 9])])
    }},
    // PSN skips inside a message.
    Scenario { name: "req-psn-skip-dma-complete", description: "WRITE_FIRST (6, 1024 bytes, RETH DMA Length 2000) then WRITE_LAST two PSNs on (7, 976 bytes), after a SEND (4, ACK 5): FIRST + LAST already carry the 2000 bytes, nothing of the message is missing, so the skipped PSN cannot be capture loss: REQ-PSN on 6 and 7 WITHOUT assume_complete, and no CAP-GAP", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let mut w = c.message(true, true, 2000, None);
        w[1].psn += 1;
        c.sides[0].next_psn += 1;
        emit_all(&c, &mut t, true, &w); // 6, 7
        (t, vec![ex("REQ-PSN", &[6, 7])])
    }},
    Scenario { name: "host-capture-loss-in-write", description: "the counterpart of req-psn-skip-dma-complete, without assume_complete: WRITE_FIRST (6, RETH DMA Length 3000) and WRITE_LAST two PSNs on (7) carry 1976 bytes, so the MIDDLE between them is missing from the capture, and the responder ACKs the whole WRITE (8, MSN 2): CAP-GAP on 6 and 7 only (capture loss, not REQ-PSN, REQ-DMALEN or RSP-MSN)", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let w = c.message(true, true, 3000, None);
        c.emit_request(&mut t, true, &w[0]); // 6
        c.emit_request(&mut t, true, &w[2]); // 7
        c.ack(&mut t, true, w[2].psn, 1); // 8
        (t, vec![ex("CAP-GAP", &[6, 7])])
    }},
    // NAKs that are themselves the fault.
    Scenario { name: "rsp-nak-seq-ignored", description: "SEND (4) ACKed (5, MSN 1); WRITE (6-8); a NAK \"PSN sequence error\" (9) naming the SEND's PSN, already acknowledged in 5: RSP-NAK-SEQ on 5 and 9. The requester rightly ignores it: no resend, 0.1 ms later a new SEND (10), ACK (11, MSN 3). No REQ-GBN for 10 (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let acked = c.sides[0].next_psn - 1;
        let w = c.message(true, true, 3072, None);
        emit_all(&c, &mut t, true, &w); // 6, 7, 8
        c.nak(&mut t, true, acked, NAK_SEQ); // 9
        t.advance(100_000);
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 10
        c.ack(&mut t, true, s[0].psn, 2); // 11
        (t, vec![ex("RSP-NAK-SEQ", &[5, 9])])
    }},
    Scenario { name: "clean-nak-after-ack", description: "the boundary of rsp-nak-seq-ignored (assume_complete): SEND (4) ACKed (5, MSN 1); WRITE (6-8) whose FIRST is lost downstream; the NAK (9, MSN 1) names the PSN right after the acknowledged one, which is the first missing one; the requester resends from it (10-12), ACK (13, MSN 2). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let w = c.message(true, true, 3072, None);
        emit_all(&c, &mut t, true, &w); // 6, 7, 8
        c.nak(&mut t, true, w[0].psn, NAK_SEQ); // 9
        t.advance(3_000);
        emit_all(&c, &mut t, true, &w); // 10, 11, 12
        c.ack(&mut t, true, w[2].psn, 1); // 13
        (t, vec![])
    }},
    Scenario { name: "rsp-ack-range-nak", description: "SEND (4) ACKed (5, MSN 1); WRITE FIRST, MIDDLE (6, 7); a NAK \"PSN sequence error\" (8) naming a PSN 4 past the last one sent; 2 ms later the requester's next packets continue below it: WRITE_LAST (9), ACK (10, MSN 2), SEND (11), ACK (12, MSN 3). RSP-ACK-RANGE on 8 and 9 (assume_complete), and nothing that follows from the bogus NAK: no RSP-NAK-SEQ, RSP-ACK-MONOTONIC, RSP-DUP or RSP-MSN on 10 or 12, no REQ-GBN on 9 or 11, no CAP-REORDER", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let w = c.message(true, true, 3072, None);
        emit_all(&c, &mut t, true, &w[..2]); // 6, 7
        c.nak(&mut t, true, w[1].psn + 4, NAK_SEQ); // 8
        t.advance(2_000_000);
        c.emit_request(&mut t, true, &w[2]); // 9
        c.ack(&mut t, true, w[2].psn, 1); // 10
        c.send_or_write(&mut t, true, false, 10, None); // 11, 12
        (t, vec![ex("RSP-ACK-RANGE", &[8, 9])])
    }},
    Scenario { name: "host-capture-ack-ahead", description: "the counterpart of rsp-ack-range-nak, without assume_complete: SEND (4) ACKed (5, MSN 1); a WRITE of two PSNs missing from the capture; its ACK (6, MSN 2) names a PSN past every captured request; the next request (SEND 7) goes beyond it, ACK (8, MSN 3). Capture loss: CAP-GAP on 4 and 7 only (not RSP-ACK-RANGE)", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = cm_conn(&mut t);
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        let w = c.message(true, true, 2048, None);
        c.ack(&mut t, true, w[1].psn, 1); // 6
        c.send_or_write(&mut t, true, false, 10, None); // 7, 8
        (t, vec![ex("CAP-GAP", &[4, 7])])
    }},
    // P_Key isolation.
    Scenario { name: "rsp-pkey", description: "requests with a foreign P_Key answered (assume_complete). CM-opened connection with P_Key 0x8001 in the REQ (1-3): SEND (4, ACK 5), a SEND with P_Key 0x8002 (6) ACKed by the responder (7, MSN 2): RSP-PKEY on 6 and 7; SEND (8, ACK 9). A connection without CM whose first packets carry P_Key 0x8003: WRITE (10, 11, ACK 12), a READ with P_Key 0x8001 (13) answered (14): RSP-PKEY on 13 and 14. The responder must drop a request whose P_Key is not the connection's", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        c.pkey = 0x8001;
        Cm::new(77, (0x1111, 0x2222)).connect(&mut t, &c, 4000); // 1-3
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        c.pkey = 0x8002;
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.pkey = 0x8001;
        c.ack(&mut t, true, s[0].psn, 1); // 7
        c.send_or_write(&mut t, true, false, 10, None); // 8, 9
        let mut d = pkey_conn_no_cm();
        d.send_or_write(&mut t, true, true, 2048, None); // 10, 11, 12
        d.pkey = 0x8001;
        let rd = d.read_request(&mut t, true, 100); // 13
        d.pkey = 0x8003;
        d.read_responses(&mut t, true, rd.psn, 100, &[]); // 14
        (t, vec![ex("RSP-PKEY", &[6, 7]), ex("RSP-PKEY", &[13, 14])])
    }},
    Scenario { name: "clean-pkey-drop", description: "requests with a foreign P_Key dropped silently (assume_complete). CM-opened connection with P_Key 0x8001 (1-3, the REQ announcing Local ACK Timeout 10, 4.194304 ms): SEND (4, ACK 5); a SEND with P_Key 0x8002 (6) gets no response; 5 ms later the requester resends it with P_Key 0x8001 (7), ACK (8, MSN 2). A connection without CM on P_Key 0x8003: WRITE (9, 10, ACK 11); a READ with P_Key 0x8001 (12), no response; 5 ms later resent with P_Key 0x8003 (13), answered (14, MSN 2). Nothing may be reported (the resends differ from 6 and 12 only in the P_Key, which makes them the first the responder may accept)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || {
        let mut t = Trace::new();
        let mut c = conn();
        c.pkey = 0x8001;
        let mut cm = Cm::new(77, (0x1111, 0x2222));
        cm.local_ack_timeout = Some(10);
        cm.connect(&mut t, &c, 4000); // 1-3
        c.send_or_write(&mut t, true, false, 10, None); // 4, 5
        c.pkey = 0x8002;
        let s = c.message(true, false, 10, None);
        c.emit_request(&mut t, true, &s[0]); // 6
        c.pkey = 0x8001;
        t.advance(5_000_000);
        c.emit_request(&mut t, true, &s[0]); // 7
        c.ack(&mut t, true, s[0].psn, 1); // 8
        let mut d = pkey_conn_no_cm();
        d.send_or_write(&mut t, true, true, 2048, None); // 9, 10, 11
        d.pkey = 0x8001;
        let rd = d.read_request(&mut t, true, 100); // 12
        d.pkey = 0x8003;
        t.advance(5_000_000);
        d.emit_request(&mut t, true, &rd); // 13
        d.read_responses(&mut t, true, rd.psn, 100, &[]); // 14
        (t, vec![])
    }},
    Scenario { name: "clean-timing-latencies", description: "timers known to the nanosecond (cli/src/gen/timers.rs, assume_complete): CM (1-3); three SENDs each ACKed 3 us later (4-9); a 3-PSN READ answered 5 us later, 1 us between responses (10-13); a FETCH_ADD ACKed 4 us later (14, 15); a WRITE (16-18) whose FIRST is lost downstream, NAKed 2.5 us after the MIDDLE (19), resent 1.5 us after the NAK (20-22), ACK (23); a SEND (24) RNR NAKed with timer code 14, 1.28 ms (25), retried 1.3 ms later (26), ACK (27). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::latencies(), vec![]) },
    Scenario { name: "clean-timing-timeout-t14", description: "timeout retransmissions with local ACK timeout t = 14 (4.096 us x 2^14 = 67.108864 ms), three retries, constant backoff (assume_complete, --qp-timeout 14: on time, REQ-QP-TIMEOUT stays silent): CM (1-3, the REQ announcing Local ACK Timeout 14); SEND (4) ACKed (5); a WRITE_ONLY (6) with no answer, resent 67.108864 ms after each transmission (7, 8, 9), ACKed 3 us after the third retry (10). Nothing may be reported", assume_complete: true, qp_timeout: Some(14), cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(14, &[timers::ack_timeout(14); 3]), vec![]) },
    Scenario { name: "req-qp-timeout", description: "clean-timing-timeout-t14 with the REQ (1) announcing Local ACK Timeout 16, checked with --qp-timeout 16 (4.096 us x 2^16 = 268.435456 ms, assume_complete): the three 67.108864 ms timeouts of the WRITE_ONLY (6 -> 7, 7 -> 8, 8 -> 9) are earlier than the configured timeout: REQ-QP-TIMEOUT on each; the first retry is also earlier than 0.9 x what the REQ announced: REQ-CM-ACK-TIMEOUT on 1, 6 and 7 (no option needed)", assume_complete: true, qp_timeout: Some(16), cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(16, &[timers::ack_timeout(14); 3]), vec![ex("REQ-QP-TIMEOUT", &[6, 7]), ex("REQ-QP-TIMEOUT", &[7, 8]), ex("REQ-QP-TIMEOUT", &[8, 9]), ex("REQ-CM-ACK-TIMEOUT", &[1, 6, 7])]) },
    Scenario { name: "req-cm-ack-timeout", description: "the REQ (1) announces Local ACK Timeout 14 (67.108864 ms), but the WRITE_ONLY (6) is resent after timeouts of 4.096 us x 2^17 = 536.870912 ms (7, 8, 9; assume_complete, no option): 8x the announced timeout, beyond IBTA's 4x and the 10 % tolerance (295.279001 ms): REQ-CM-ACK-TIMEOUT on the REQ and the first retry (1, 6, 7). Three retries, the REQ's Retry Count: no REQ-CM-RETRY-COUNT", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(14, &[timers::ack_timeout(17); 3]), vec![ex("REQ-CM-ACK-TIMEOUT", &[1, 6, 7])]) },
    Scenario { name: "req-cm-retry-count", description: "the REQ (1) announces Local ACK Timeout 14 and Retry Count 3; the WRITE_ONLY (6) is resent four times, 67.108864 ms apart (7, 8, 9, 10), ACK (11; assume_complete, no option): the fourth retry (9 -> 10) is beyond the Retry Count: REQ-CM-RETRY-COUNT on 1, 9 and 10. The timeouts agree with the REQ: no REQ-CM-ACK-TIMEOUT", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(14, &[timers::ack_timeout(14); 4]), vec![ex("REQ-CM-RETRY-COUNT", &[1, 9, 10])]) },
    Scenario { name: "clean-cm-timeout-4x", description: "the boundary of req-cm-ack-timeout (assume_complete, no option): the REQ (1) announces Local ACK Timeout 14 (67.108864 ms) and the WRITE_ONLY (6) is resent after timeouts of 4.096 us x 2^16 = 268.435456 ms (7, 8, 9), exactly 4x the announced value, the most IBTA C9-141 allows; ACK (10). Nothing may be reported: no REQ-CM-ACK-TIMEOUT, no REQ-CM-RETRY-COUNT (three retries, Retry Count 3)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(14, &[timers::ack_timeout(16); 3]), vec![]) },
    Scenario { name: "req-cm-rnr-retry-count", description: "the REQ (1) and REP (2) announce RNR Retry Count 2; a SEND (4) is RNR NAKed with timer code 14, 1.28 ms (5, 7, 9) and retried 1.3 ms after each NAK (6, 8, 10), ACK (11; assume_complete, no option): the third retry (9 -> 10) is beyond the RNR Retry Count: REQ-CM-RNR-RETRY-COUNT on 1, 9 and 10. Every retry waits out its timer: no REQ-RNR-WAIT", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::rnr_retries(2, 3), vec![ex("REQ-CM-RNR-RETRY-COUNT", &[1, 9, 10])]) },
    Scenario { name: "clean-cm-rnr-retry-count", description: "the boundary of req-cm-rnr-retry-count (assume_complete, no option): the REQ (1) and REP (2) announce RNR Retry Count 2 and the SEND (4) is RNR NAKed and retried twice (5, 6; 7, 8), exactly the count, ACK (9). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::rnr_retries(2, 2), vec![]) },
    Scenario { name: "clean-cm-rnr-retry-forever", description: "RNR Retry Count 7, retry for ever (assume_complete, no option): the REQ (1) and REP (2) announce 7 and the SEND (4) is RNR NAKed and retried ten times (5-24), ACK (25). Nothing may be reported: 7 has no limit", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::rnr_retries(7, 10), vec![]) },
    Scenario { name: "clean-timing-backoff", description: "timeout retransmissions with exponential backoff from t = 12 (16.777216 ms, then 33.554432 and 67.108864 ms; assume_complete): CM (1-3, the REQ announcing Local ACK Timeout 12); SEND (4) ACKed (5); a WRITE_ONLY (6) resent after each timeout (7, 8, 9), ACK (10). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::timeouts(12, &[timers::ack_timeout(12), timers::ack_timeout(13), timers::ack_timeout(14)]), vec![]) },
    Scenario { name: "clean-congestion-pacing", description: "CE marks and CNP pacing known to the nanosecond (cli/src/gen/timers.rs, assume_complete): three CM-opened connections (CM 1-9) 10.9.0.1 QP 0x111 -> 10.9.0.2 QP 0x222, QP 0x113 -> 10.9.0.2 QP 0x223, QP 0x115 -> 10.9.0.4 QP 0x444; four rounds 50 us apart, in each a burst of CE-marked WRITE_ONLYs (4, 3, 2, 1 on the first connection, one on the others, at 0, 20 and 30 us into the round), each answered by a CNP to the sender's QP 4 us after the round's first mark, then an ACK. Per QP the CNPs are 50 us apart, per IP pair 10.9.0.2 -> 10.9.0.1 20 and 30 us in turn, per destination 10.9.0.1 20, 10, 20 us. Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (timers::congestion(), vec![]) },
    Scenario { name: "clean-rnr-timer", description: "clean-timing-latencies checked with --rnr-timer 14 (1.28 ms, assume_complete): the RNR NAK (25) advertises timer code 14, RSP-RNR-TIMER stays silent", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: Some(14), net: NetExpect::NONE, build: || (timers::latencies(), vec![]) },
    Scenario { name: "rsp-rnr-timer", description: "clean-timing-latencies checked with --rnr-timer 16 (2.56 ms, assume_complete): the RNR NAK (25) advertises timer code 14 (1.28 ms), not the configured 16: RSP-RNR-TIMER", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: Some(16), net: NetExpect::NONE, build: || (timers::latencies(), vec![ex("RSP-RNR-TIMER", &[25])]) },
    Scenario { name: "clean-cnp-pacing-qp", description: "clean-congestion-pacing checked with --cnp-min-interval 50us (per QP, mlx5's default mode; assume_complete): every QP's CNPs are exactly 50 us apart, CC-CNP-PACING stays silent", assume_complete: true, qp_timeout: None, cnp_min_interval: Some("50us,qp"), rnr_timer: None, net: NetExpect::NONE, build: || (timers::congestion(), vec![]) },
    Scenario { name: "cc-cnp-pacing", description: "clean-congestion-pacing checked with --cnp-min-interval 15us,dest (assume_complete): 10.9.0.1 receives CNPs 20, 10, 20 us apart in each round (from 10.9.0.2 to QP 0x113, then from 10.9.0.4 to QP 0x115): the four 10 us gaps (frames 17, 20; 28, 31; 38, 41; 47, 50) are CC-CNP-PACING", assume_complete: true, qp_timeout: None, cnp_min_interval: Some("15us,dest"), rnr_timer: None, net: NetExpect::NONE, build: || (timers::congestion(), vec![ex("CC-CNP-PACING", &[17, 20]), ex("CC-CNP-PACING", &[28, 31]), ex("CC-CNP-PACING", &[38, 41]), ex("CC-CNP-PACING", &[47, 50])]) },
    // Wrong verdicts of issue 31, part 5.
    Scenario { name: "req-retx-same-pkey", description: "a packet from another partition takes no part in the requester's sequence (assume_complete): CM-opened connection on P_Key 0x8001 (1-3, Local ACK Timeout 10); SEND (4, ACK 5 MSN 1); a WRITE_FIRST with P_Key 0x8002 (6) at the requester's next PSN, dropped by the responder; the requester's own SEND_ONLYs on that PSN and the next (7, 8), their ACK lost downstream; 5 ms later both resent (9, 10), the first with 5 of its 10 bytes; ACK (11, MSN 3). REQ-RETX-SAME on 7 and 9 only: the original of PSN 9 is the requester's own 7, not the foreign 6 (no REQ-RETX-SAME or REQ-RETX-CAUSE on 6 and 7, no REQ-MSG-SEQ on 6 and 8)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (pkey_foreign_psn(5), vec![ex("REQ-RETX-SAME", &[7, 9])]) },
    Scenario { name: "clean-pkey-foreign-psn", description: "the twin of req-retx-same-pkey with the resend (9) unchanged (assume_complete): a WRITE_FIRST with a foreign P_Key (6) on the PSN of the requester's next SEND_ONLY (7) is dropped and is not the requester's transmission; nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (pkey_foreign_psn(10), vec![]) },
    Scenario { name: "clean-cm-stale-request", description: "a late request of an ended incarnation takes no part in the live one's sequence (assume_complete): two CM incarnations on the same QPNs (1-18 as in clean-cm-reconnect); in the second, a -> b SEND (19, ACK 20 MSN 1), then a WRITE_FIRST of the first incarnation to the same DestQP at its old PSN 1001 (21), which the reset responder QP drops; a -> b SEND (22, ACK 23 MSN 2), WRITE (24, 25, ACK 26 MSN 3); b -> a SEND (27, ACK 28 MSN 1), a SEND_ONLY of the first incarnation at its old PSN 5000 (29), dropped; b -> a SEND (30, ACK 31 MSN 2); DREQ/DREP (32, 33). Nothing may be reported (no REQ-PSN or CAP-GAP on 21, no REQ-RETX-* or REQ-MSG-SEQ on the legal packets after 21 and 29)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (stale_incarnation(false), vec![]) },
    Scenario { name: "req-psn-stale-request", description: "the twin of clean-cm-stale-request with a real PSN skip (assume_complete): the a -> b SEND after the first incarnation's late WRITE_FIRST (21) is one PSN too far (22). REQ-PSN on 19 and 22 only: the skip is judged against the live incarnation's own SEND (19), not the late packet of the ended one (nothing on 21, no REQ-RETX-* or REQ-MSG-SEQ after it)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (stale_incarnation(true), vec![ex("REQ-PSN", &[19, 22])]) },
    Scenario { name: "clean-cm-stale-first", description: "clean-cm-stale-request with the late request first (assume_complete): 1-18 as in clean-cm-reconnect; a WRITE_FIRST of the first incarnation at its old PSN 1001 (19) arrives before any request of the second and is dropped; a -> b SEND at the REP starting PSN (20, ACK 21 MSN 1), WRITE (22, 23, ACK 24 MSN 2); DREQ/DREP (25, 26). Nothing may be reported (no REQ-PSN on 19 against the REP starting PSN, nothing on the legal packets after it)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (stale_incarnation_first(), vec![]) },
    Scenario { name: "rsp-dup-atomic", description: "a duplicate atomic executed again (assume_complete): CM (1-3, Local ACK Timeout 10); FETCH_ADD (4) answered with original value 41 (5, MSN 1), the answer lost downstream; 5 ms later the FETCH_ADD resent (6) and answered with original value 42 (7, MSN 1): the responder must return the result it saved for the original, not execute it again: RSP-DUP-ATOMIC on 5, 6 and 7; SEND (8, ACK 9 MSN 2)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (duplicate_atomic(42), vec![ex("RSP-DUP-ATOMIC", &[5, 6, 7])]) },
    Scenario { name: "clean-dup-atomic", description: "the twin of rsp-dup-atomic: the duplicate FETCH_ADD (6) is answered with the saved original value 41 and the same MSN (7). Nothing may be reported (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (duplicate_atomic(41), vec![]) },
    Scenario { name: "req-psn-skip-stream", description: "a PSN skip mid-stream reported once, on the requester (assume_complete): CM (1-3); SEND (4, ACK 5 MSN 1), SEND (6, ACK 7 MSN 2); the requester skips one PSN: WRITE of three packets (8-10) ACKed (11, MSN 3), READ of 2500 bytes (12) answered (13-15, MSN 4), SEND (16, ACK 17 MSN 5). REQ-PSN on 6 and 8, and nothing on the responder's ACKs and READ responses that follow (no RSP-MSN, RSP-ACK-RANGE, REQ-MSG-SEQ)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (psn_skip_stream(1000, true), vec![ex("REQ-PSN", &[6, 8])]) },
    Scenario { name: "req-psn-skip-wrap", description: "req-psn-skip-stream across the 24-bit PSN wrap (assume_complete): the requester's PSNs start at 0xfffffe, the two SENDs use 0xfffffe and 0xffffff, and the skipped PSN is 0; REQ-PSN on 6 and 8 only", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (psn_skip_stream(0xff_fffe, true), vec![ex("REQ-PSN", &[6, 8])]) },
    Scenario { name: "clean-psn-stream", description: "the twin of req-psn-skip-stream without the skip (assume_complete): SENDs, a WRITE, a READ and a SEND, each acknowledged (4-17). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (psn_skip_stream(1000, false), vec![]) },
    Scenario { name: "clean-psn-stream-wrap", description: "the twin of req-psn-skip-wrap without the skip: the same traffic crossing PSN 2^24 (assume_complete). Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (psn_skip_stream(0xff_fffe, false), vec![]) },
    Scenario { name: "req-read-retry-longer", description: "a READ retried with a longer length, reported once, on the requester (assume_complete): CM (1-3, Local ACK Timeout 10); READ of 3000 bytes, 3 PSNs (4) answered (5-7, MSN 1), the answer lost downstream; 5 ms later the READ re-issued at the same PSN and VA with DMA Length 4000 (8), which the responder re-executes: 4 responses on the READ's PSN and the three after it, the LAST one PSN past the original's range, with the current MSN 1 (9-12); then SEND (13, ACK 14 MSN 2), WRITE (15, 16, ACK 17 MSN 3), READ of 100 bytes (18, answered 19 MSN 4). REQ-READ-RETRY on 4 and 8 only: no RSP-MSN on the LAST (12) or the ACK (14), no CAP-REORDER", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (read_retry_then_traffic(4000), vec![ex("REQ-READ-RETRY", &[4, 8])]) },
    Scenario { name: "req-read-retry-shorter", description: "req-read-retry-longer with the READ re-issued with DMA Length 2000 (8), answered FIRST, LAST (9, 10); SEND (11, 12), WRITE (13-15), READ (16, 17). REQ-READ-RETRY on 4 and 8 only (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (read_retry_then_traffic(2000), vec![ex("REQ-READ-RETRY", &[4, 8])]) },
    Scenario { name: "clean-read-retry-traffic", description: "the twin of req-read-retry-longer: the READ re-issued unchanged (8), answered again on its own PSNs with MSN 1 (9-11); SEND (12, 13), WRITE (14-16), READ (17, 18). Nothing may be reported (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (read_retry_then_traffic(3000), vec![]) },
    Scenario { name: "req-psn-idle-nak", description: "a PSN skip after an idle gap, not a reconnect (assume_complete): traffic without CM (1-10, the last a -> b request the READ of frame 8, MSN 3); 1.5 s of silence; a -> b SEND_ONLY 100 000 PSNs past the expected one (11), which looks like a reconnect without CM, but the responder NAKs the old expected PSN (12, PSN sequence error, MSN 3): its QP was not reset. One incarnation, and the jump is the requester's: REQ-PSN on 8 and 11", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (idle_jump(IdleAnswer::NakOld), vec![ex("REQ-PSN", &[8, 11])]) },
    Scenario { name: "req-psn-idle-msn", description: "req-psn-idle-nak with the responder ACKing the SEND_ONLY (12) with MSN 4, continuing the old MSN 3 (a fresh QP would say 1): its QP was not reset. One incarnation, REQ-PSN on 8 and 11 (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (idle_jump(IdleAnswer::AckOldMsn), vec![ex("REQ-PSN", &[8, 11])]) },
    Scenario { name: "clean-idle-reconnect", description: "the twin of req-psn-idle-nak: after the 1.5 s of silence both QPs restarted; the SEND_ONLY 100 000 PSNs past the old ones (11) is ACKed with MSN 1 (12), as a fresh QP answers. A new incarnation (idle reconnect): nothing may be reported (assume_complete)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (idle_jump(IdleAnswer::Fresh), vec![]) },
    Scenario { name: "clean-read-before-pmtu", description: "a READ sized before the PMTU is known (no CM, no --pmtu): SEND_ONLY (1, ACK 2); READ of 3000 bytes (3) answered FIRST, MIDDLE, LAST (4-6) from which the PMTU 1024 is learnt; the capture ends. The READ consumed PSNs 3..5 of its own: its responses are answers, not PSNs ahead of the capture (no CAP-GAP). Nothing may be reported", assume_complete: false, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NetExpect::NONE, build: || (read_before_pmtu(), vec![]) },
    Scenario { name: "clean-net-config", description: "a CM-opened connection checked against the network configuration it was sent with (--expect-dscp 26 --expect-cnp-dscp 46 --expect-pcp 3, assume_complete): CM REQ, REP, RTU (1-3, UD on QP1 at DSCP 26, judged as RoCE traffic), SEND (4, ACK 5), a CE-marked WRITE (6, ACK 7) and the CNP to its sender QP at DSCP 46 (8), READ (9, responses 10, 11), b -> a SEND (12, ACK 13). a's frames are double-tagged, an 802.1ad S-tag with PCP 3 outside an 802.1Q C-tag with PCP 0: the outermost tag, the one the first switch classifies by, is the one judged; b's carry VLAN 100 with PCP 3. Nothing may be reported", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NET, build: || (net_config(NetFault::None), vec![]) },
    Scenario { name: "net-dscp", description: "clean-net-config with b's traffic class never configured (assume_complete, --expect-dscp 26 --expect-cnp-dscp 46 --expect-pcp 3): everything b sends but its CNP goes at DSCP 0, its CM REP (2), ACKs (5, 7), READ responses (10, 11) and SEND (12): NET-DSCP on each; its CNP (8) at DSCP 46 is NET-CNP-DSCP's to judge, and right", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NET, build: || (net_config(NetFault::Dscp), [2, 5, 7, 10, 11, 12].iter().map(|&f| ex("NET-DSCP", &[f])).collect()) },
    Scenario { name: "net-cnp-dscp", description: "clean-net-config with b's CNP (8) sent at DSCP 5 instead of the configured 46 (assume_complete, --expect-dscp 26 --expect-cnp-dscp 46 --expect-pcp 3): NET-CNP-DSCP on 8, and no NET-DSCP (a CNP is judged against --expect-cnp-dscp only)", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NET, build: || (net_config(NetFault::CnpDscp), vec![ex("NET-CNP-DSCP", &[8])]) },
    Scenario { name: "net-pcp", description: "clean-net-config with b's priority wrong (assume_complete, --expect-dscp 26 --expect-cnp-dscp 46 --expect-pcp 3): b's frames up to its CNP carry VLAN 100 with PCP 0 (REP 2, ACKs 5, 7, CNP 8), then b sends untagged (READ responses 10, 11, SEND 12): NET-PCP on each. a's double-tagged frames, PCP 3 outside and 0 inside, are right", assume_complete: true, qp_timeout: None, cnp_min_interval: None, rnr_timer: None, net: NET, build: || (net_config(NetFault::Pcp), [2, 5, 7, 8, 10, 11, 12].iter().map(|&f| ex("NET-PCP", &[f])).collect()) },
];

impl Scenario {
    /// The capture and its expect file.
    pub fn generate(&self) -> (Trace, ExpectFile) {
        let (t, mut findings) = (self.build)();
        findings.sort();
        let expect = ExpectFile {
            schema: Some(roce_conformance::internal::json::SCHEMA_EXPECT.to_string()),
            description: self.description.to_string(),
            options: ExpectOptions {
                assume_complete: self.assume_complete,
                pmtu: None,
                qp_timeout: self.qp_timeout,
                cnp_min_interval: self.cnp_min_interval.map(str::to_string),
                rnr_timer: self.rnr_timer,
                expect_dscp: self.net.dscp,
                expect_cnp_dscp: self.net.cnp_dscp,
                expect_pcp: self.net.pcp,
            },
            findings,
        };
        (t, expect)
    }
}
