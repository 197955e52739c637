//! `diagnose`: what went wrong, where it started, and the proof, for the capture and for
//! each connection incarnation.
//!
//! Why a module of its own: every ingredient of an answer is already measured by the pass
//! (the checker's findings, `stats`' counters, timers and congestion, the connection
//! model's lifecycle and CM exchanges), but a user who asks "why did my job die with
//! transport retry counter exceeded" should not have to assemble it from sixty lines of
//! findings. A [`Diagnosis`] is one more consumer of the same pass: it feeds the checker
//! (whose model keeps `stats`' [`FlowStats`] and this module's [`FlowEvidence`] in each
//! flow's slot), and at the end turns what was measured into [`Verdict`]s, each with its
//! evidence (frames, counts, rule IDs, measured values) and what to look at next.
//!
//! The verdicts are one table ([`VERDICTS`]): an ID, a title, a severity, what to look at
//! next. The project's docs/diagnose.md says for each what evidence it needs and what a
//! capture cannot tell. Memory: per flow, a few counters and two short rings (the last
//! requests, the last RETHs); per capture, the timeline keeps the first
//! [`TIMELINE_LISTED`] failures and counts the rest.

use std::collections::BTreeMap;
use std::net::IpAddr;

use roce_conformance::internal::hash::FastHashMap;
use roce_conformance::internal::json::ts_string;
use roce_conformance::internal::{exchange_of, Retained, Seen};
use roce_conformance::{
    BeganBy, Checker, CmExchange, ConnId, ConnectionInfo, EndedBy, FlowKey, Options, Psn, Report,
    Shard, Side,
};
use roce_parser::{AethKind, Ecn, NakCode, Roce};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::event::PacketEvent;
use crate::frame::{Decoded, ReadSummary};
use crate::stats::{Connection, Counters, FlowStats, SlotOf};

/// The `schema` of the `diagnose --format json` document.
pub const SCHEMA_DIAGNOSE: &str = "roce-inspect/diagnose/v1";

/// Failures the timeline lists (the first ones, in time order); beyond, counted.
pub const TIMELINE_LISTED: usize = 100;

/// The cascade window when none is given: failures within it after the first one are
/// listed as following it (a flush cascade after one QP's error).
pub const DEFAULT_CASCADE_WINDOW_NS: u64 = 100_000_000;

/// The Retry Count assumed when no CM exchange of the connection was captured: 7, the
/// default of rdma-cm, perftest and NCCL (`NCCL_IB_RETRY_CNT`).
pub const ASSUMED_RETRY_COUNT: u8 = 7;

/// QPs between two hosts on one UDP source port that make a finding of it.
const ENTROPY_QPS: usize = 4;

/// Frames an item of evidence cites at most.
const FRAMES_CITED: usize = 16;

/// How bad a verdict is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Nothing wrong.
    Ok,
    /// Configured in a way that defeats a mechanism (congestion control), working for now.
    Misconfigured,
    /// Working, but slowed or degraded (loss, congestion, receiver not ready).
    Degraded,
    /// The connection failed (the application saw an error, or never connected).
    Failure,
}

macro_rules! verdicts {
    ($($v:ident => $id:literal, $title:literal, $sev:ident, $next:literal;)*) => {
        /// A verdict's kind (its stable ID is [`VerdictKind::id`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum VerdictKind { $(#[doc = $title] $v,)* }

        /// Every verdict: (kind, ID, title, severity, what to look at next).
        pub const VERDICTS: &[(VerdictKind, &str, &str, Severity, &str)] =
            &[$((VerdictKind::$v, $id, $title, Severity::$sev, $next),)*];

        impl VerdictKind {
            /// The stable ID (`retry_exhausted`, ...): what scripts match.
            pub const fn id(self) -> &'static str { match self { $(VerdictKind::$v => $id,)* } }
            /// The title, as text prints it.
            pub const fn title(self) -> &'static str { match self { $(VerdictKind::$v => $title,)* } }
            /// How bad it is.
            pub const fn severity(self) -> Severity { match self { $(VerdictKind::$v => Severity::$sev,)* } }
            /// What to look at next.
            pub const fn next(self) -> &'static str { match self { $(VerdictKind::$v => $next,)* } }
        }
    };
}

verdicts! {
    ConnectionSetupFailed => "connection_setup_failed", "connection setup failed", Failure,
        "the passive side's listener and its rdma_accept/ibv_modify_qp path (a REJ's reason says which); compare the GIDs and QPNs the CM exchange named with the addresses the QPs use";
    Unanswered => "unanswered", "unanswered", Failure,
        "reachability, not loss: the GID index and route (RoCE v1/v2, IPv4/IPv6, link-local), the VLAN and PFC configuration on both ports, and whether the remote QP reached RTR with this QP's number and PSN";
    RetryExhausted => "retry_exhausted", "retry exhausted", Failure,
        "the application sees IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded): look at what happened to the peer or the path at the first unanswered try (the peer's host, a link flap, a PFC storm); the measured timeout against the QP's configured one says whether the timers are as intended";
    ApplicationError => "application_error", "application error", Failure,
        "the offending request: its R_Key, VA and length against the memory region the peer registered (ibv_reg_mr access flags, bounds), or the operation the peer's QP does not allow";
    ProtocolViolation => "protocol_violation", "transport rules broken", Failure,
        "the side each rule judges (requester or responder): its NIC, firmware or driver; `check` lists every finding with its frames and `report` draws them on the connection's graph, for the bug report";
    NetworkConfiguration => "network_configuration", "network configuration", Misconfigured,
        "the QoS configuration of both hosts and of the switches between them: the QPs' traffic class (rdma_set_option TOS, ibv_modify_qp, NCCL_IB_TC), the NIC's CNP DSCP and priority (mlx5 cnp_dscp, cnp_802p_prio), the PFC priority and trust mode (mlnx_qos --trust dscp), the NIC's UDP source port entropy";
    BadPackets => "bad_packets", "bad packets", Degraded,
        "a bad ICRC on every packet of one sender points at the capture point (a mirror or ibdump that rewrites a header) or a NIC bug, on some packets at the link (cable, optics: the port's symbol and CRC errors); a frame shorter than its IP/UDP length at the capture tool or a truncating mirror";
    ReceiverNotReady => "receiver_not_ready", "receiver not ready", Degraded,
        "the responder posts receives too slowly (its receive queue depth, ibv_post_recv in the application's hot path); the RNR timer it advertises against the waits measured";
    LossyPath => "lossy_path", "lossy path", Degraded,
        "the switch and NIC drop counters on the path (out_of_sequence, rx_discards, PFC pause counters); loss in a lossless RoCE fabric is a PFC or buffer configuration problem";
    Congested => "congested", "congested", Degraded,
        "the congestion point's queue (ECN marking thresholds) and the senders sharing it; CNPs and the rate after them show DCQCN at work";
    CongestionControlNotWorking => "congestion_control_not_working", "congestion control not working", Misconfigured,
        "ECN on the senders (data must leave ECT), the notification point's CNP generation, and the reaction point's rate limiter (DCQCN enabled on the NIC for this priority)";
    Healthy => "healthy", "healthy", Ok,
        "nothing: the figures below are what a working connection shows";
}

impl Serialize for VerdictKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// One verdict on a connection incarnation (or a CM exchange that opened none).
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// What it is.
    pub verdict: VerdictKind,
    /// How bad.
    pub severity: Severity,
    /// One sentence with the measured values.
    pub summary: String,
    /// The frame where it started (the first evidence), when there is one.
    pub frame: Option<u64>,
    /// Its time, as the JSON contract writes times (`"seconds.nanoseconds"`).
    #[serde(serialize_with = "opt_ts")]
    pub ts: Option<u64>,
    /// The frames that prove it (at most 16, the first ones).
    pub frames: Vec<u64>,
    /// The checker's rules whose findings on this connection support it.
    pub rules: Vec<&'static str>,
    /// The measured values, by name (docs/diagnose.md lists them per verdict).
    pub evidence: Map<String, Value>,
    /// What to look at next.
    pub next: &'static str,
}

fn opt_ts<S: serde::Serializer>(ts: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match ts {
        Some(t) => s.serialize_str(&ts_string(*t)),
        None => s.serialize_none(),
    }
}

impl Verdict {
    fn new(kind: VerdictKind, summary: String) -> Self {
        Verdict {
            verdict: kind,
            severity: kind.severity(),
            summary,
            frame: None,
            ts: None,
            frames: Vec::new(),
            rules: Vec::new(),
            evidence: Map::new(),
            next: kind.next(),
        }
    }

    fn at(mut self, frame: u64, ts: u64) -> Self {
        self.frame = Some(frame);
        self.ts = Some(ts);
        self
    }

    fn frames(mut self, frames: impl IntoIterator<Item = u64>) -> Self {
        self.frames = frames.into_iter().filter(|&f| f > 0).take(FRAMES_CITED).collect();
        self.frames.sort_unstable();
        self.frames.dedup();
        self
    }

    fn with(mut self, name: &str, v: Value) -> Self {
        self.evidence.insert(name.to_string(), v);
        self
    }
}

/// A request as remembered for evidence: its PSN, frame and time.
#[derive(Debug, Clone, Copy)]
struct Sent {
    psn: Psn,
    frame: u64,
    ts: u64,
}

/// A request's RETH (WRITE, READ): what an application error names.
#[derive(Debug, Clone, Copy)]
struct RethSent {
    psn: Psn,
    frame: u64,
    opcode: &'static str,
    va: u64,
    rkey: u32,
    dma_len: u32,
}

/// Retries of one PSN: its transmissions after the first, each a run of retransmissions
/// starting at this PSN (a timeout or a NAK sent the requester back to it).
#[derive(Debug, Clone)]
struct Chain {
    psn: Psn,
    /// Transmissions of the PSN (the first one included).
    tries: u32,
    /// Their frames (the first transmission's when still remembered), the first 16.
    frames: Vec<u64>,
    last_frame: u64,
    last_ts: u64,
    /// Time between consecutive tries, ns.
    gaps_ns: Vec<u64>,
    /// The peer sent something on this stream after the last try.
    answered_after: bool,
}

/// A fatal NAK (invalid request, remote access or operational error, invalid RD request).
#[derive(Debug, Clone, Copy)]
struct Fatal {
    frame: u64,
    ts: u64,
    code: NakCode,
    psn: Psn,
    offending: Option<RethSent>,
}

/// What `diagnose` keeps per requester flow, beside `stats`' counters: a few counters
/// inline (read on every request), the last 4 requests and RETHs in a ring allocated at the
/// flow's first request, and what only a flow with retries or NAKs has (the retry chains,
/// the first fatal NAK) allocated when the first comes. Bounded: no list grows with packets.
#[derive(Debug, Default, Clone)]
pub struct FlowEvidence {
    /// (frame, ts) of the first request (frame 0: none yet) and of the last.
    first_request: (u64, u64),
    last_request: (u64, u64),
    requests: u64,
    /// Data requests (not CNPs) by the ECN codepoint they left with: Not-ECT, ECT or CE.
    not_ect: u64,
    ect: u64,
    first_not_ect: u64,
    prev_psn: Option<Psn>,
    rnr_pending: bool,
    answers: u64,
    recent: Option<Box<Recent>>,
    rare: Option<Box<Rare>>,
    net: NetSeen,
}

/// The last requests and RETHs of a flow, in rings.
#[derive(Debug, Default, Clone)]
struct Recent {
    sent: [Option<Sent>; RING],
    sent_at: usize,
    reths: [Option<RethSent>; RING],
    reth_at: usize,
}

/// Requests and RETHs a flow remembers.
const RING: usize = 4;

/// What only a flow with retries or NAKs keeps.
#[derive(Debug, Clone)]
struct Rare {
    chain: Option<Chain>,
    worst: Option<Chain>,
    rnr_chain: Option<Chain>,
    worst_rnr: Option<Chain>,
    fatal: Option<Fatal>,
    fatal_naks: u64,
    /// The first sequence error NAKs' frames (16).
    seq_naks: Vec<u64>,
    first_rnr_nak: Option<(u64, u64)>,
    /// RNR NAKs and PSN sequence error NAKs this requester received.
    rnr_naks: u64,
    seq_error_naks: u64,
}

/// The most frequent-so-far value of a header field over a class of packets: the first
/// value seen, how many packets carried it, how many another (and the first other).
#[derive(Debug, Default, Clone, Copy)]
struct Mode {
    value: u8,
    packets: u64,
    other: u64,
    other_value: u8,
}

impl Mode {
    #[inline]
    fn add(&mut self, v: u8) {
        if self.packets == 0 && self.other == 0 {
            self.value = v;
        }
        if v == self.value {
            self.packets += 1;
        } else {
            if self.other == 0 {
                self.other_value = v;
            }
            self.other += 1;
        }
    }

    fn json(&self) -> Value {
        if self.packets + self.other == 0 {
            return Value::Null;
        }
        let mut m = Map::new();
        m.insert("value".into(), json!(self.value));
        m.insert("packets".into(), json!(self.packets));
        m.insert("other".into(), json!(self.other));
        if self.other > 0 {
            m.insert("other_value".into(), json!(self.other_value));
        }
        Value::Object(m)
    }
}

/// What a flow's own packets carry below the BTH: the audit of "is my configuration
/// applied on the wire" (DSCP and ECN by class, VLAN and PCP, TTL, UDP source port).
#[derive(Debug, Default, Clone)]
struct NetSeen {
    packets: u64,
    roce_v1: u64,
    /// Packets without an IP header: RoCEv1's and native InfiniBand's.
    no_ip: u64,
    ipv6: u64,
    link_local: bool,
    dscp_requests: Mode,
    dscp_responses: Mode,
    dscp_cnps: Mode,
    /// Requests by ECN codepoint: Not-ECT, ECT(1), ECT(0), CE.
    ecn_requests: [u64; 4],
    vid: Option<u16>,
    pcp: Mode,
    untagged: u64,
    ttl_min: u8,
    ttl_max: u8,
    sport: Option<u16>,
    sports_changed: u64,
    fragments: u64,
}

impl NetSeen {
    #[inline]
    fn add(&mut self, ev: &PacketEvent<'_, '_>, r: &Roce<'_>) {
        let Some(p) = ev.packet else { return };
        self.packets += 1;
        if r.version.number() == 1 {
            self.roce_v1 += 1;
        }
        if p.ip.is_none() {
            self.no_ip += 1;
        }
        if let Some(ip) = &p.ip {
            if ip.version == 6 {
                self.ipv6 += 1;
                if let IpAddr::V6(v) = ip.src {
                    self.link_local |= v.segments().first().is_some_and(|s| s & 0xffc0 == 0xfe80);
                }
            }
            let class = match ev.seen() {
                _ if ev.cnp => &mut self.dscp_cnps,
                Some(Seen::Request) => &mut self.dscp_requests,
                _ => &mut self.dscp_responses,
            };
            class.add(ip.dscp);
            if ev.seen() == Some(Seen::Request) && !ev.cnp {
                if let Some(c) = self.ecn_requests.get_mut(usize::from(ip.ecn & 3)) {
                    *c += 1;
                }
            }
            if self.packets == 1 {
                self.ttl_min = ip.ttl;
            }
            self.ttl_min = self.ttl_min.min(ip.ttl);
            self.ttl_max = self.ttl_max.max(ip.ttl);
        }
        if p.eth.is_some() {
            match p.vlans.first().copied().flatten() {
                Some(tag) => {
                    self.vid.get_or_insert(tag.vid);
                    self.pcp.add(tag.pcp);
                }
                None => self.untagged += 1,
            }
        }
        if let Some(u) = &p.udp {
            match self.sport {
                Some(s) if s != u.sport => self.sports_changed += 1,
                Some(_) => {}
                None => self.sport = Some(u.sport),
            }
        }
        if p.problems.contains(roce_parser::Problem::IpFragment) {
            self.fragments += 1;
        }
    }

    fn json(&self, k: &FlowKey) -> Value {
        let [not_ect, ect1, ect0, ce] = self.ecn_requests;
        json!({
            "src": k.src.to_string(),
            "dst": k.dst.to_string(),
            "dest_qp": k.dest_qp,
            "packets": self.packets,
            "roce_version": if self.roce_v1 == self.packets { 1 } else if self.no_ip == 0 { 2 } else { 0 },
            "ip_version": if self.no_ip == self.packets { Value::Null } else if self.ipv6 > 0 { json!(6) } else { json!(4) },
            "link_local": self.link_local,
            "dscp_requests": self.dscp_requests.json(),
            "dscp_responses": self.dscp_responses.json(),
            "dscp_cnps": self.dscp_cnps.json(),
            "ecn_requests": {"not_ect": not_ect, "ect1": ect1, "ect0": ect0, "ce": ce},
            "vlan": self.vid,
            "pcp": self.pcp.json(),
            "untagged": self.untagged,
            "ttl": if self.packets > 0 && self.no_ip < self.packets { json!([self.ttl_min, self.ttl_max]) } else { Value::Null },
            "udp_sport": self.sport,
            "udp_sport_changes": self.sports_changed,
            "ip_fragments": self.fragments,
        })
    }
}

/// What a flow without retries or NAKs has of [`Rare`].
static NO_RARE: Rare = Rare {
    chain: None,
    worst: None,
    rnr_chain: None,
    worst_rnr: None,
    fatal: None,
    fatal_naks: 0,
    seq_naks: Vec::new(),
    first_rnr_nak: None,
    rnr_naks: 0,
    seq_error_naks: 0,
};

fn worse(a: &Option<Chain>, b: &Chain) -> bool {
    a.as_ref().is_none_or(|a| b.tries > a.tries)
}

impl FlowEvidence {
    /// What the packet of `ev` adds to the flow's evidence, in the slot `which` the
    /// counters looked up ([`Counters::add_with`]'s callback: a request in its own flow's
    /// slot, a response in its requester's).
    #[inline]
    pub fn observe(&mut self, ev: &PacketEvent<'_, '_>, which: SlotOf) {
        let Some(r) = ev.roce() else { return };
        match (which, ev.seen()) {
            (SlotOf::Own, Some(Seen::Request)) => {
                self.net.add(ev, r);
                self.request(ev, r);
            }
            (SlotOf::Own, _) => self.net.add(ev, r),
            (SlotOf::Stream, _) => self.response(ev, r),
        }
    }

    fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(|| Box::new(NO_RARE.clone()))
    }

    /// A request of this flow (its own slot).
    #[inline]
    fn request(&mut self, ev: &PacketEvent<'_, '_>, r: &Roce<'_>) {
        let (frame, ts) = (ev.info.number, ev.info.ts_ns);
        let psn = Psn::new(r.bth.psn);
        self.requests += 1;
        if self.first_request.0 == 0 {
            self.first_request = (frame, ts);
        }
        self.last_request = (frame, ts);
        if !ev.cnp {
            match ev.packet.and_then(|p| p.ecn()) {
                Some(Ecn::NotEct) => {
                    self.not_ect += 1;
                    if self.first_not_ect == 0 {
                        self.first_not_ect = frame;
                    }
                }
                Some(_) => self.ect += 1,
                None => {}
            }
        }
        let recent = self.recent.get_or_insert_with(Box::default);
        if let (Some(reth), Some(info)) = (r.headers.reth, r.info) {
            if let Some(slot) = recent.reths.get_mut(recent.reth_at % RING) {
                *slot = Some(RethSent {
                    psn,
                    frame,
                    opcode: info.name,
                    va: reth.va,
                    rkey: reth.rkey,
                    dma_len: reth.dma_len,
                });
            }
            recent.reth_at = recent.reth_at.wrapping_add(1);
        }
        let retransmitted = ev.retransmitted();
        if retransmitted && self.prev_psn.is_none_or(|p| p + 1 != psn) {
            let first = recent.sent.iter().flatten().find(|s| s.psn == psn).copied();
            self.retry(psn, frame, ts, first);
        }
        if !retransmitted {
            let recent = self.recent.get_or_insert_with(Box::default);
            if let Some(slot) = recent.sent.get_mut(recent.sent_at % RING) {
                *slot = Some(Sent { psn, frame, ts });
            }
            recent.sent_at = recent.sent_at.wrapping_add(1);
        }
        self.prev_psn = Some(psn);
    }

    /// A run of retransmissions starting at `psn`: one more try of it, counted against the
    /// Retry Count (or the RNR Retry Count after an RNR NAK).
    #[inline(never)]
    fn retry(&mut self, psn: Psn, frame: u64, ts: u64, first: Option<Sent>) {
        let rnr = std::mem::take(&mut self.rnr_pending);
        let rare = self.rare_mut();
        let (chain, worst) = if rnr {
            (&mut rare.rnr_chain, &mut rare.worst_rnr)
        } else {
            (&mut rare.chain, &mut rare.worst)
        };
        match chain {
            Some(c) if c.psn == psn => {
                c.tries = c.tries.saturating_add(1);
                if c.frames.len() < FRAMES_CITED {
                    c.frames.push(frame);
                }
                if c.gaps_ns.len() < FRAMES_CITED {
                    c.gaps_ns.push(ts.saturating_sub(c.last_ts));
                }
                c.last_frame = frame;
                c.last_ts = ts;
                c.answered_after = false;
            }
            _ => {
                let (frames, gaps) = match first {
                    Some(s) => (vec![s.frame, frame], vec![ts.saturating_sub(s.ts)]),
                    None => (vec![frame], Vec::new()),
                };
                *chain = Some(Chain {
                    psn,
                    tries: 2,
                    frames,
                    last_frame: frame,
                    last_ts: ts,
                    gaps_ns: gaps,
                    answered_after: false,
                });
            }
        }
        if let Some(c) = chain.as_ref() {
            if worse(worst, c) {
                *worst = Some(c.clone());
            }
        }
    }

    /// A response (ACK, NAK, READ response, atomic ACK) to this requester flow: the
    /// stream's slot.
    #[inline]
    fn response(&mut self, ev: &PacketEvent<'_, '_>, r: &Roce<'_>) {
        self.answers += 1;
        let nak = r.headers.aeth.filter(|a| a.kind() != AethKind::Ack);
        if self.rare.is_none() && nak.is_none() {
            return;
        }
        let (frame, ts) = (ev.info.number, ev.info.ts_ns);
        let recent = self.recent.as_deref();
        let rnr_pending = &mut self.rnr_pending;
        let rare = self.rare.get_or_insert_with(|| Box::new(NO_RARE.clone()));
        for c in [&mut rare.chain, &mut rare.rnr_chain].into_iter().flatten() {
            if ts >= c.last_ts {
                c.answered_after = true;
            }
        }
        let Some(aeth) = nak else { return };
        let psn = Psn::new(r.bth.psn);
        match aeth.kind() {
            AethKind::RnrNak => {
                rare.rnr_naks += 1;
                *rnr_pending = true;
                rare.first_rnr_nak.get_or_insert((frame, ts));
            }
            AethKind::Nak => match aeth.nak_code() {
                Some(NakCode::PsnSequenceError) => {
                    rare.seq_error_naks += 1;
                    if rare.seq_naks.len() < FRAMES_CITED {
                        rare.seq_naks.push(frame);
                    }
                }
                Some(code) => {
                    rare.fatal_naks += 1;
                    if rare.fatal.is_none() {
                        // The request the NAK names: the latest RETH at or before its PSN.
                        let offending = recent
                            .iter()
                            .flat_map(|r| r.reths.iter().flatten())
                            .filter(|x| x.psn <= psn)
                            .max_by_key(|x| x.frame)
                            .copied();
                        rare.fatal = Some(Fatal { frame, ts, code, psn, offending });
                    }
                }
                None => {}
            },
            _ => {}
        }
    }
}

/// What `diagnose` keeps in each flow's slot of the model: `stats`' counters and its own
/// evidence.
#[derive(Debug, Default)]
struct Slot {
    stats: FlowStats,
    evidence: FlowEvidence,
}

impl AsMut<FlowStats> for Slot {
    fn as_mut(&mut self) -> &mut FlowStats {
        &mut self.stats
    }
}

/// The pass's diagnosis in progress: one consumer of the pass ([`Diagnosis::frame`] for
/// each decoded frame, in capture order), then [`Diagnosis::finish`].
///
/// ```
/// use roce_analysis::{Diagnosis, Pass};
/// use roce_conformance::{Options, Shard};
/// use roce_parser::Config;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
/// let cap = roce_capture::open(std::path::Path::new(path))?;
/// let cfg = Config::default();
/// let mut diagnosis = Diagnosis::new(Options::default());
/// let summary = Pass::new(&cfg).run(cap, |d| {
///     diagnosis.frame(Shard::ALL, d);
/// })?;
/// let doc = diagnosis.finish(&summary, roce_analysis::DEFAULT_CASCADE_WINDOW_NS);
/// // The sample's go-back-N after a PSN sequence error NAK: a lossy path, nothing failed.
/// assert!(doc.connections.iter().any(|c| c.verdicts.iter().any(|v| v.verdict.id() == "lossy_path")));
/// assert!(doc.timeline.first.is_none());
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub struct Diagnosis {
    checker: Checker<Slot>,
    counters: Counters,
    evidence: Evidence,
}

/// The capture-wide part of a diagnosis, for a caller that runs its own model with
/// [`FlowEvidence`] in its slots (the HTML report): the packets' host pairs and CM times
/// ([`Evidence::observe`]), the ended incarnations' evidence ([`Evidence::ended`]), and
/// the verdicts at the end ([`Evidence::judge`]).
#[derive(Debug)]
pub struct Evidence {
    kept: Retained<Vec<(FlowKey, FlowEvidence)>>,
    /// CM frames' times (frame, ts), for the timeline of setups that failed; bounded.
    cm_times: Vec<(u64, u64)>,
}

/// CM frames whose times are kept.
const CM_TIMES: usize = 10_000;

/// An IPv4-mapped IPv6 address as the IPv4 address it maps.
fn host(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v) => v.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// What a finished pass gives [`Evidence::judge`] beside the evidence.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// `stats`' connections ([`Counters::connections`]) and how many were not listed.
    pub connections: &'a [Connection],
    /// Incarnations beyond the cap.
    pub not_listed: u64,
    /// The model's CM exchanges.
    pub cm: &'a [CmExchange],
    /// The checker's report.
    pub report: &'a Report,
    /// Frames read, RoCE frames, the capture's duration.
    pub frames: u64,
    /// RoCE frames.
    pub roce_frames: u64,
    /// Native InfiniBand frames, and those of them between LIDs (not judged).
    pub infiniband: (u64, u64),
    /// From the first frame to the last, ns.
    pub duration_ns: u64,
    /// The capture's warnings.
    pub warnings: &'a [String],
}

impl Evidence {
    /// Evidence kept for at most `max_flows` ended incarnations (the model's cap).
    pub fn new(max_flows: usize) -> Self {
        Evidence { kept: Retained::new(max_flows), cm_times: Vec::new() }
    }

    /// Every packet the model took: a CM MAD's time.
    #[inline]
    pub fn observe(&mut self, ev: &PacketEvent<'_, '_>) {
        if ev.seen() == Some(Seen::Cm) && self.cm_times.len() < CM_TIMES {
            self.cm_times.push((ev.info.number, ev.info.ts_ns));
        }
    }

    /// An incarnation the model ended, with its directions' evidence.
    pub fn ended(&mut self, info: ConnectionInfo, directions: Vec<(FlowKey, FlowEvidence)>) {
        self.kept.push(info, directions);
    }

    /// The verdicts of the connections `keep` selects (all: `|_| true`), with the failures'
    /// timeline (`window_ns` after the first).
    pub fn judge(
        self,
        m: &Measured<'_>,
        window_ns: u64,
        keep: impl Fn(&ConnId) -> bool,
    ) -> DiagnoseDocument {
        let (cm, report, connections) = (m.cm, m.report, m.connections);
        let (kept, _) = self.kept.into_sorted();
        let mut evidence: FastHashMap<ConnId, Vec<(FlowKey, FlowEvidence)>> =
            FastHashMap::default();
        for (info, dirs) in kept {
            evidence.insert(info.connection, dirs);
        }
        let cm_times = &self.cm_times;
        let cm_ts = |frame: u64| {
            cm_times
                .binary_search_by_key(&frame, |&(f, _)| f)
                .ok()
                .and_then(|i| cm_times.get(i))
                .map(|&(_, t)| t)
        };
        // Per host pair (source, destination; IPv4-mapped addresses as IPv4, so a RoCEv1 GRH
        // and a RoCEv2 IP header name one host alike) the last packet's time, over every
        // direction listed: what `unanswered` asks before it says the peer never answered,
        // not even on a flow the model did not pair. With incarnations not listed, a pair
        // not found is unknown, not silent.
        let mut hosts: FastHashMap<(IpAddr, IpAddr), u64> = FastHashMap::default();
        for d in connections.iter().flat_map(|c| &c.directions) {
            let t = hosts.entry((host(d.src), host(d.dst))).or_default();
            *t = (*t).max(d.last_ts);
        }
        let complete = m.not_listed == 0;
        let heard = |k: &FlowKey, since: u64| match hosts.get(&(host(k.dst), host(k.src))) {
            Some(&t) if t >= since => Some(true),
            _ if !complete => None,
            _ => Some(false),
        };
        // ECMP entropy: per host pair, the UDP source ports of its RC requesters' flows; every
        // QP on one port (4 QPs or more) puts them all on one path through the fabric.
        let mut ports: FastHashMap<(IpAddr, IpAddr), (Option<u16>, usize, bool)> =
            FastHashMap::default();
        for c in connections.iter().filter(|c| matches!(c.info.transport, "RC" | "UC" | "XRC")) {
            for (k, e) in evidence.get(&c.info.connection).map_or(&[][..], Vec::as_slice) {
                let Some(sport) = e.net.sport.filter(|_| e.requests > 0) else { continue };
                let p = ports.entry((host(k.src), host(k.dst))).or_insert((Some(sport), 0, true));
                p.1 += 1;
                p.2 &= p.0 == Some(sport) && e.net.sports_changed == 0;
            }
        }
        let one_port = |k: &FlowKey| -> Option<(u16, usize)> {
            let &(port, qps, same) = ports.get(&(host(k.src), host(k.dst)))?;
            (same && qps >= ENTROPY_QPS).then_some((port?, qps))
        };
        // The QPs the data between an exchange's two hosts uses (the first 8).
        // Built once, looked up per CM exchange (no pass over the connections per exchange):
        // per unordered host pair, the DestQPs its connected transports' requests go to
        // (the first 8), and the (host, QPN) ends that carried requests.
        let pair = |a: IpAddr, b: IpAddr| if a <= b { (a, b) } else { (b, a) };
        let mut data_qps: FastHashMap<(IpAddr, IpAddr), Vec<u32>> = FastHashMap::default();
        let mut carrying: FastHashMap<(IpAddr, u32), ()> = FastHashMap::default();
        for c in connections.iter().filter(|c| c.total.requests > 0) {
            let id = &c.info.connection;
            for (h, q) in [(id.a, id.qpn_a), (id.b, id.qpn_b)] {
                if let Some(q) = q {
                    carrying.insert((h, q), ());
                }
            }
            if !matches!(c.info.transport, "RC" | "UC" | "XRC") {
                continue;
            }
            for d in c.directions.iter().filter(|d| d.stats.requests > 0) {
                let qps = data_qps.entry(pair(d.src, d.dst)).or_default();
                if !qps.contains(&d.dest_qp) && qps.len() < 8 {
                    qps.push(d.dest_qp);
                }
            }
        }
        let data_qps_of = |x: &CmExchange| -> &[u32] {
            data_qps.get(&pair(x.active, x.passive)).map_or(&[][..], Vec::as_slice)
        };
        // The exchanges that opened an incarnation, by their REQ frame (one exchange each).
        let mut used_cm: FastHashMap<u64, ()> = FastHashMap::default();
        let mut out = Vec::with_capacity(connections.len());
        for c in connections {
            let exchange = exchange_of(cm, &c.info);
            if let Some(x) = exchange {
                used_cm.insert(x.req_frame, ());
            }
            if !keep(&c.info.connection) {
                continue;
            }
            let dirs = evidence.get(&c.info.connection).map_or(&[][..], Vec::as_slice);
            let mut verdicts = judge_connection(c, dirs, exchange, report, &heard, &one_port);
            // CM opened it and no request followed: how far the exchange got.
            if let Some(x) = exchange.filter(|_| c.total.requests == 0) {
                let times = (cm_ts(x.req_frame), cm_ts(x.last_frame));
                if let Some(v) = judge_setup(x, false, data_qps_of(x), times) {
                    verdicts.retain(|v| v.verdict != VerdictKind::Healthy);
                    verdicts.insert(0, v);
                }
            }
            out.push(ConnectionDiagnosis::new(c, verdicts, dirs));
        }
        // CM exchanges between hosts whose QPs never carried a packet of their own.
        let mut setup = Vec::new();
        for x in cm.iter().filter(|x| !used_cm.contains_key(&x.req_frame)) {
            // A connection whose data the model paired another way (its QPs in the data).
            let carried = carrying.contains_key(&(x.active, x.active_qpn));
            let connection = ConnId {
                a: x.active,
                qpn_a: Some(x.active_qpn),
                b: x.passive,
                qpn_b: x.passive_qpn,
                incarnation: 0,
            };
            if !keep(&connection) {
                continue;
            }
            let times = (cm_ts(x.req_frame), cm_ts(x.last_frame));
            if let Some(v) = judge_setup(x, carried, data_qps_of(x), times) {
                setup.push(SetupDiagnosis { connection, outcome: x.outcome, verdicts: vec![v] });
            }
        }
        let timeline = Timeline::of(&out, &setup, window_ns);
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        for v in out.iter().flat_map(|c| &c.verdicts).chain(setup.iter().flat_map(|s| &s.verdicts))
        {
            *counts.entry(v.verdict.id()).or_default() += 1;
        }
        let headline = headline(&out, &setup, &timeline);
        DiagnoseDocument {
            schema: SCHEMA_DIAGNOSE,
            frames: m.frames,
            roce_frames: m.roce_frames,
            infiniband_frames: m.infiniband.0,
            infiniband_unmodelled: m.infiniband.1,
            duration_ns: m.duration_ns,
            headline,
            verdicts: counts,
            timeline,
            connections: out,
            connections_not_listed: m.not_listed,
            setup,
            findings: report.errors + report.warnings,
            warnings: m.warnings.to_vec(),
            taps: None,
        }
    }
}

impl Diagnosis {
    /// A diagnosis with the checker's options (its rules, timers and the model's cap).
    pub fn new(opts: Options) -> Self {
        let max_flows = opts.max_flows;
        Diagnosis {
            checker: Checker::with(opts),
            counters: Counters::new(max_flows),
            evidence: Evidence::new(max_flows),
        }
    }

    /// One frame of the pass, when its host pair is in `shard`; the event the model made
    /// of it, for other consumers.
    #[inline]
    pub fn frame<'e, 'a>(
        &mut self,
        shard: Shard,
        d: &'e Decoded<'a>,
    ) -> Option<PacketEvent<'e, 'a>> {
        let ev = crate::feed(&mut self.checker, shard, d)?;
        self.settle();
        self.evidence.observe(&ev);
        self.counters
            .add_with(&mut self.checker, &ev, |slot, which| slot.evidence.observe(&ev, which));
        Some(ev)
    }

    /// Several taps: the connection of the frame just given to [`Diagnosis::frame`], for
    /// [`Taps::attach`](crate::Taps::attach) (a loss found later names it).
    pub fn connection_fed(&self) -> Option<ConnId> {
        self.checker.connection_fed()
    }

    /// Several taps: a packet lost between two of them ([`TapStep::Drop`](crate::TapStep)),
    /// a `CAP-DROP-BETWEEN` finding the `lossy_path` verdict cites; `names` are the files in
    /// merge order.
    pub fn tap_drop(&mut self, drop: &crate::TapDrop, names: &[String]) {
        drop.report_to(&mut self.checker, names);
    }

    /// Counts the bad ICRCs of frames to `host` (`--nic-counters`' host: its NIC's counter
    /// of them is reconciled with [`Diagnosis::finish_parts`]'s count).
    pub fn set_nic_host(&mut self, host: IpAddr) {
        self.counters.nic_host = Some(host);
    }

    /// The incarnation of the connection flow `key` is in now (after [`Diagnosis::frame`]
    /// of its packet): what a display filter's selection remembers.
    pub fn incarnation_of(&self, key: &FlowKey) -> Option<u32> {
        self.checker.incarnation_of(key)
    }

    /// The incarnations the model ended: their counters to `stats`' list, their evidence
    /// kept (the same cap, so both list the same incarnations).
    #[inline]
    fn settle(&mut self) {
        if self.checker.has_ended() || self.checker.has_resumed() {
            self.settle_now();
        }
    }

    #[inline(never)]
    fn settle_now(&mut self) {
        if self.checker.has_ended() {
            for e in self.checker.take_ended() {
                let (mut counted, mut kept) = (Vec::new(), Vec::new());
                for (k, slot) in e.directions {
                    counted.push((k, slot.stats));
                    kept.push((k, slot.evidence));
                }
                self.counters.ended(e.info.clone(), counted);
                self.evidence.ended(e.info, kept);
            }
        }
        if self.checker.has_resumed() {
            for (k, provisional) in self.checker.take_resumed() {
                if let Some(slot) = self.checker.ext_mut(&k) {
                    slot.stats.resume(&provisional.stats);
                }
            }
        }
    }

    /// The end of the capture: every incarnation ended and judged, the verdicts made.
    /// `window_ns`: failures within it after the first are listed as following it.
    pub fn finish(self, summary: &ReadSummary, window_ns: u64) -> DiagnoseDocument {
        self.finish_selected(summary, window_ns, |_| true)
    }

    /// [`Diagnosis::finish`] of the connections `keep` selects (a display filter's
    /// selection; CM exchanges that opened none are kept when `keep` takes their QPs).
    pub fn finish_selected(
        self,
        summary: &ReadSummary,
        window_ns: u64,
        keep: impl Fn(&ConnId) -> bool,
    ) -> DiagnoseDocument {
        self.finish_parts(summary, window_ns, keep).document
    }

    /// [`Diagnosis::finish_selected`], with what `stats` would list beside the document
    /// (for a caller that reconciles a NIC's counters with the same connections).
    pub fn finish_parts(
        mut self,
        summary: &ReadSummary,
        window_ns: u64,
        keep: impl Fn(&ConnId) -> bool,
    ) -> Finished {
        self.checker.end_all();
        self.settle();
        let cm: Vec<CmExchange> = self.checker.cm_exchanges().to_vec();
        let (connections, not_listed) = self.counters.connections(&cm);
        let report = self.checker.finish();
        let m = Measured {
            connections: &connections,
            not_listed,
            cm: &cm,
            report: &report,
            // Several taps: the frames the model took (each packet once), as `stats` and
            // `check` count them; the taps' section counts every frame read.
            frames: if summary.taps.is_some() { report.frames } else { summary.frames },
            roce_frames: self.counters.roce_frames(),
            infiniband: (self.counters.infiniband, self.counters.ib_unmodelled),
            duration_ns: self.counters.duration_ns(),
            warnings: &summary.warnings,
        };
        let mut document = self.evidence.judge(&m, window_ns, keep);
        document.taps = summary.taps.clone();
        Finished {
            document,
            connections,
            not_listed,
            nic_host_bad_icrc: self.counters.nic_host_bad_icrc,
        }
    }
}

/// A finished diagnosis and what `stats` would have listed from the same pass.
#[derive(Debug)]
pub struct Finished {
    /// The document.
    pub document: DiagnoseDocument,
    /// `stats`' connections (every one, whatever the selection).
    pub connections: Vec<Connection>,
    /// Incarnations beyond the cap.
    pub not_listed: u64,
    /// Bad ICRCs of frames to [`Diagnosis::set_nic_host`]'s host.
    pub nic_host_bad_icrc: u64,
}

/// The rules of `report`'s findings on connection `id` (for a verdict's `rules`), those
/// whose ID starts with one of `prefixes` (all with an empty list), and their frames.
fn rules_of(report: &Report, id: &ConnId, wanted: &[&str]) -> (Vec<&'static str>, Vec<u64>) {
    let mut rules = Vec::new();
    let mut frames = Vec::new();
    for f in report.findings.iter().filter(|f| f.connection.as_ref() == Some(id)) {
        if !wanted.is_empty() && !wanted.iter().any(|w| f.rule.starts_with(w)) {
            continue;
        }
        if !rules.contains(&f.rule) {
            rules.push(f.rule);
        }
        if frames.len() < FRAMES_CITED {
            frames.extend(f.frames.iter().take(2));
        }
    }
    (rules, frames)
}

/// The rule of a packet seen at one tap and missing at the next: the loss it proves is the
/// network's (or the mirror's), not the capture's.
const CAP_DROP_BETWEEN: &str = "CAP-DROP-BETWEEN";

/// [`rules_of`] for the capture's own rules (`CAP-*`) but [`CAP_DROP_BETWEEN`].
fn capture_rules(report: &Report, id: &ConnId) -> (Vec<&'static str>, Vec<u64>) {
    let (mut rules, _) = rules_of(report, id, &["CAP-"]);
    rules.retain(|r| *r != CAP_DROP_BETWEEN);
    let mut frames = Vec::new();
    for f in report.findings.iter().filter(|f| f.connection.as_ref() == Some(id)) {
        if rules.contains(&f.rule) && frames.len() < FRAMES_CITED {
            frames.extend(f.frames.iter().take(2));
        }
    }
    (rules, frames)
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// A requester flow as the evidence names it (as `stats`' `directions` do).
fn host_of(k: &FlowKey) -> Value {
    json!({"src": k.src.to_string(), "dst": k.dst.to_string(), "dest_qp": k.dest_qp})
}

/// The verdicts of one incarnation.
fn judge_connection(
    c: &Connection,
    dirs: &[(FlowKey, FlowEvidence)],
    exchange: Option<&CmExchange>,
    report: &Report,
    heard: &dyn Fn(&FlowKey, u64) -> Option<bool>,
    one_port: &dyn Fn(&FlowKey) -> Option<(u16, usize)>,
) -> Vec<Verdict> {
    let id = &c.info.connection;
    let reliable = matches!(c.info.transport, "RC" | "XRC" | "unknown");
    let mut out = Vec::new();
    let stats_of = |k: &FlowKey| {
        c.directions.iter().find(|d| d.src == k.src && d.dst == k.dst && d.dest_qp == k.dest_qp)
    };
    let (retry_count, retry_source) = match exchange {
        Some(x) => (x.retry_count, format!("the CM REQ's Retry Count (frame {})", x.req_frame)),
        None => (ASSUMED_RETRY_COUNT, format!("assumed: no CM exchange captured, {ASSUMED_RETRY_COUNT} is the default of rdma-cm, perftest and NCCL")),
    };
    let cm_state = match (exchange, c.info.began.how) {
        (Some(x), _) => {
            format!("the CM exchange completed ({}, REQ frame {})", x.outcome, x.req_frame)
        }
        (None, BeganBy::Cm) => "a CM exchange opened it (not logged)".to_string(),
        (None, _) => {
            "no CM exchange captured (QPs connected out of band, or before the capture)".to_string()
        }
    };
    let peer_packets: u64 = c.total.packets;
    // Several taps: the packets of this connection lost between two of them.
    let between: Vec<&roce_conformance::Finding> = report
        .findings
        .iter()
        .filter(|f| f.connection.as_ref() == Some(id) && f.rule == CAP_DROP_BETWEEN)
        .collect();
    for (k, e) in dirs {
        if e.requests == 0 {
            continue;
        }
        let own = stats_of(k).map_or(0, |d| d.packets);
        let from_peer = peer_packets.saturating_sub(own);
        // Unanswered: requests and retries, nothing at all from the peer host (on no flow:
        // a capture of one direction only shows no retries, a peer answering on a flow the
        // model did not pair is heard).
        let (first, last) = (e.first_request, e.last_request);
        let retried = e.rare().worst.as_ref().is_some_and(|w| w.tries >= 2);
        if reliable
            && from_peer == 0
            && e.answers == 0
            && retried
            && heard(k, first.1) == Some(false)
        {
            let tries = e.rare().worst.as_ref().map_or(1, |w| w.tries);
            let mut v = Verdict::new(
                VerdictKind::Unanswered,
                format!(
                    "{} requests from {} ({} of them retransmissions; one PSN sent up to {} times) and nothing from {} in {}: {}",
                    e.requests,
                    k.src,
                    stats_of(k).map_or(0, |d| d.stats.retransmissions),
                    tries,
                    k.dst,
                    ms(last.1.saturating_sub(first.1)),
                    cm_state
                ),
            )
            .at(first.0, first.1)
            .frames(
                std::iter::once(first.0)
                    .chain(e.rare().worst.iter().flat_map(|w| w.frames.iter().copied()))
                    .chain(std::iter::once(last.0)),
            )
            .with("requester", host_of(k))
            .with("requests", json!(e.requests))
            .with("most_tries_of_one_psn", json!(tries))
            .with("cm", json!(exchange.map(|x| x.outcome)));
            v.rules = rules_of(report, id, &[]).0;
            out.push(v);
            continue;
        }
        // Retry exhausted: one PSN sent Retry Count + 1 times, then nothing from the peer.
        if reliable {
            if let Some(ch) = e
                .rare()
                .chain
                .as_ref()
                .filter(|ch| ch.tries > u32::from(retry_count) && !ch.answered_after)
            {
                let timing = c.timing.inferred_timeout_exponent.as_ref();
                let negotiated = exchange.map(|x| x.local_ack_timeout);
                let end = match c.info.ended.how {
                    EndedBy::Disconnect => format!("then a DREQ (frame {})", c.info.ended.frame),
                    EndedBy::CaptureEnd => "then silence to the end of the capture".to_string(),
                    _ => format!("then the connection ended ({})", c.info.ended.why),
                };
                let mean_gap = if ch.gaps_ns.is_empty() {
                    0
                } else {
                    u64::try_from(
                        ch.gaps_ns.iter().map(|&g| u128::from(g)).sum::<u128>()
                            / ch.gaps_ns.len() as u128,
                    )
                    .unwrap_or(u64::MAX)
                };
                let mut v = Verdict::new(
                    VerdictKind::RetryExhausted,
                    format!(
                        "PSN {} from {} sent {} times ({} retries; Retry Count {}: {}), {} apart on average, no answer after the last try (frame {}), {}{}",
                        ch.psn.value(),
                        k.src,
                        ch.tries,
                        ch.tries - 1,
                        retry_count,
                        retry_source,
                        ms(mean_gap),
                        ch.last_frame,
                        end,
                        match (timing, negotiated) {
                            (Some(t), Some(n)) => format!("; the retries imply a local ACK timeout exponent of {} ({}), the CM REQ negotiated {} ({})", t.exponent, ms(t.timeout_ns), n, ms(roce_conformance::local_ack_timeout_ns(n).unwrap_or(0))),
                            (Some(t), None) => format!("; the retries imply a local ACK timeout exponent of {} ({})", t.exponent, ms(t.timeout_ns)),
                            _ => String::new(),
                        }
                    ),
                )
                .at(ch.last_frame, ch.last_ts)
                .frames(ch.frames.iter().copied().chain(std::iter::once(c.info.ended.frame)))
                .with("requester", host_of(k))
                .with("psn", json!(ch.psn.value()))
                .with("tries", json!(ch.tries))
                .with("retry_count", json!(retry_count))
                .with("retry_count_source", json!(if exchange.is_some() { "cm" } else { "assumed" }))
                .with("gaps_ns", json!(ch.gaps_ns))
                .with("inferred_timeout_exponent", json!(timing.map(|t| t.exponent)))
                .with("negotiated_local_ack_timeout", json!(negotiated))
                .with("ended", json!(c.info.ended.how));
                v.rules = rules_of(report, id, &["REQ-RETRY", "REQ-QP-TIMEOUT", "REQ-TIMEOUT"]).0;
                out.push(v);
            }
        }
        // Application error: the first fatal NAK and the request it names.
        if let Some(f) = e.rare().fatal {
            let off = f.offending.map(|o| {
                json!({"frame": o.frame, "opcode": o.opcode, "psn": o.psn.value(), "va": format!("0x{:016x}", o.va), "rkey": format!("0x{:08x}", o.rkey), "length": o.dma_len})
            });
            let what = match f.offending {
                Some(o) => format!(
                    " for the {} at frame {} (VA 0x{:016x}, R_Key 0x{:08x}, length {})",
                    o.opcode, o.frame, o.va, o.rkey, o.dma_len
                ),
                None => String::new(),
            };
            let mut v = Verdict::new(
                VerdictKind::ApplicationError,
                format!(
                    "{} NAK from {} at frame {} (PSN {}){what}; {} fatal NAK(s) in all: the responder's QP went to the error state and the requester's work requests complete in error (flush)",
                    f.code.as_str(),
                    k.dst,
                    f.frame,
                    f.psn.value(),
                    e.rare().fatal_naks
                ),
            )
            .at(f.frame, f.ts)
            .frames([f.frame].into_iter().chain(f.offending.map(|o| o.frame)))
            .with("requester", host_of(k))
            .with("nak", json!(f.code.as_str()))
            .with("nak_frame", json!(f.frame))
            .with("psn", json!(f.psn.value()))
            .with("fatal_naks", json!(e.rare().fatal_naks))
            .with("offending_request", off.unwrap_or(Value::Null));
            v.rules = rules_of(report, id, &["RSP-NAK", "REQ-AFTER-FATAL", "RSP-FATAL"]).0;
            out.push(v);
        }
        let Some(d) = stats_of(k) else { continue };
        let s = &d.stats;
        // Receiver not ready: RNR NAKs, the advertised timer against the waits, the retries.
        if e.rare().rnr_naks > 0 {
            let rnr_naks = e.rare().rnr_naks;
            let waits = &c.timing.rnr_waits;
            let advertised = waits.first().map(|w| w.advertised_ns);
            let waited_max = waits.iter().map(|w| w.waited_ns).max();
            let rnr_limit = exchange.map(|x| x.rep_rnr_retry_count.unwrap_or(x.rnr_retry_count));
            let most = e.rare().worst_rnr.as_ref().map_or(0, |w| w.tries.saturating_sub(1));
            let (frame, ts) = e.rare().first_rnr_nak.unwrap_or_default();
            let v = Verdict::new(
                VerdictKind::ReceiverNotReady,
                format!(
                    "{rnr_naks} RNR NAK(s) to {} ({:.1} per 100 requests); advertised timer {}, waits measured up to {}; at most {most} RNR retries of one PSN{}",
                    k.src,
                    rnr_naks as f64 * 100.0 / e.requests.max(1) as f64,
                    advertised.map_or("not measured".to_string(), ms),
                    waited_max.map_or("not measured".to_string(), ms),
                    match rnr_limit {
                        Some(7) => " (RNR Retry Count 7: retry for ever)".to_string(),
                        Some(n) => format!(" against an RNR Retry Count of {n}"),
                        None => String::new(),
                    }
                ),
            )
            .at(frame, ts)
            .frames(waits.iter().flat_map(|w| w.frames))
            .with("requester", host_of(k))
            .with("rnr_naks", json!(rnr_naks))
            .with("advertised_ns", json!(advertised))
            .with("waited_max_ns", json!(waited_max))
            .with("max_rnr_retries", json!(most))
            .with("rnr_retry_count", json!(rnr_limit));
            out.push(v);
        }
        // Lossy path: sequence error NAKs and go-back-N; in the capture or on the wire.
        if e.rare().seq_error_naks > 0 {
            let (cap_rules, cap_frames) = capture_rules(report, id);
            let missing = report
                .connections
                .iter()
                .find(|x| x.info.connection == *id)
                .map_or(0, |x| x.missing_packets);
            let rate = s.retransmissions as f64 * 100.0 / e.requests.max(1) as f64;
            let mut v = Verdict::new(
                VerdictKind::LossyPath,
                format!(
                    "{} PSN sequence error NAK(s) to {}, {} PSNs sent again (go-back-N), {:.2} % of its {} requests{}{}",
                    e.rare().seq_error_naks,
                    k.src,
                    s.retransmissions,
                    rate,
                    e.requests,
                    if missing > 0 || !cap_rules.is_empty() {
                        format!("; {missing} packet(s) missing from the capture as well ({}): part of the loss may be the capture's", cap_rules.join(", "))
                    } else {
                        "; the capture itself is complete here: the loss is on the wire".to_string()
                    },
                    between.first().map_or(String::new(), |f| format!(
                        "; {} packet(s) seen at one tap and missing at the next (CAP-DROP-BETWEEN), the first {}",
                        between.len(),
                        f.message
                    ))
                ),
            )
            .frames(
                e.rare()
                    .seq_naks
                    .iter()
                    .copied()
                    .chain(cap_frames)
                    .chain(between.iter().flat_map(|f| f.frames.iter().copied())),
            )
            .with("requester", host_of(k))
            .with("sequence_error_naks", json!(e.rare().seq_error_naks))
            .with("retransmissions", json!(s.retransmissions))
            .with("requests", json!(e.requests))
            .with("retransmitted_percent", json!((rate * 100.0).round() / 100.0))
            .with("missing_from_capture", json!(missing));
            if !between.is_empty() {
                v = v.with("lost_between_taps", json!(between.len()));
            }
            if let Some(&f) = e.rare().seq_naks.first() {
                v.frame = Some(f);
            }
            v.rules = rules_of(report, id, &["REQ-GBN", "CAP-", "RSP-SEQ"]).0;
            out.push(v);
        }
    }
    // Lost between taps and no sequence error NAK said so: the loss is proven by the taps
    // (seen at one, missing at the next), whether on the path or in the second tap's mirror.
    let lossy = out.iter().any(|v| v.verdict == VerdictKind::LossyPath);
    if let (Some(&first), false) = (between.first(), lossy) {
        let mut v = Verdict::new(
            VerdictKind::LossyPath,
            format!(
                "{} packet(s) seen at one tap and missing at the next, though that tap saw the connection's packets before and after them (CAP-DROP-BETWEEN); the first {}. No PSN sequence error NAK says the responder missed them: lost on the path between those taps (recovered by a timeout), or only by the second tap's mirror",
                between.len(),
                first.message
            ),
        )
        .frames(between.iter().flat_map(|f| f.frames.iter().copied()))
        .with("lost_between_taps", json!(between.len()))
        .with("sequence_error_naks", json!(0));
        v.frame = first.frames.first().copied();
        v.rules = vec![first.rule];
        out.push(v);
    }
    // Congestion control not working: data sent Not-ECT (both directions in one verdict).
    let not_ect: Vec<&(FlowKey, FlowEvidence)> =
        dirs.iter().filter(|(_, e)| reliable && e.not_ect > 0).collect();
    if let Some(first) = not_ect.iter().map(|(_, e)| e.first_not_ect).min() {
        let each: Vec<String> = not_ect
            .iter()
            .map(|(k, e)| format!("{} of {} from {}", e.not_ect, e.not_ect + e.ect, k.src))
            .collect();
        let per: Vec<Value> = not_ect
            .iter()
            .map(|(k, e)| json!({"requester": host_of(k), "not_ect": e.not_ect, "ect": e.ect}))
            .collect();
        out.push(
            Verdict::new(
                VerdictKind::CongestionControlNotWorking,
                format!(
                    "data packets left Not-ECT (ECN 00): {} (first at frame {first}); a congested switch drops them instead of marking them, and no CNP can slow the sender (fine only where no ECN-based congestion control is meant to run, e.g. Soft-RoCE)",
                    each.join(", ")
                ),
            )
            .frames([first])
            .with("cause", json!("not_ect"))
            .with("directions", Value::Array(per)),
        );
    }
    // Congestion, per connection: CE marks, CNPs, the rate after them.
    let cg = &c.congestion;
    if cg.ce_marked > 0 && cg.cnps == 0 {
        out.push(
            Verdict::new(
                VerdictKind::CongestionControlNotWorking,
                format!(
                    "{} packet(s) arrived CE-marked (congestion experienced) and no CNP went back: the notification point does not generate CNPs (DCQCN's NP disabled for this priority?)",
                    cg.ce_marked
                ),
            )
            .with("cause", json!("ce_without_cnp"))
            .with("ce_marked", json!(cg.ce_marked))
            .with("cnps", json!(0)),
        );
    } else if cg.cnps > 0 {
        let r = &cg.rate_before_after_cnp;
        let no_reaction = r.reactions >= 2 && r.slowed == 0;
        if no_reaction {
            out.push(
                Verdict::new(
                    VerdictKind::CongestionControlNotWorking,
                    format!(
                        "{} CNP(s), and after none of the {} measured did the sender's rate drop ({}): the reaction point ignores them",
                        cg.cnps, r.reactions, r.window
                    ),
                )
                .with("cause", json!("cnp_without_reduction"))
                .with("cnps", json!(cg.cnps))
                .with("reactions", json!(r.reactions))
                .with("slowed", json!(r.slowed)),
            );
        }
        let timeouts = c.timing.timeout_retransmissions.len() as u64
            + c.timing.timeout_retransmissions_not_listed;
        out.push(
            Verdict::new(
                VerdictKind::Congested,
                format!(
                    "{} CE-marked packet(s), {} CNP(s); the sender slowed after {} of {} CNPs measured ({}); {} timeout retransmission(s)",
                    cg.ce_marked, cg.cnps, r.slowed, r.reactions, r.window, timeouts
                ),
            )
            .with("ce_marked", json!(cg.ce_marked))
            .with("cnps", json!(cg.cnps))
            .with("reactions", json!(r.reactions))
            .with("slowed", json!(r.slowed))
            .with("timeout_retransmissions", json!(timeouts)),
        );
    }
    // Network configuration: what the user stated (NET-* findings), and what the two
    // directions say of each other.
    let mut causes: Vec<Value> = Vec::new();
    let mut said: Vec<String> = Vec::new();
    let mut cited: Vec<u64> = Vec::new();
    for (k, e) in dirs {
        let n = &e.net;
        let peer = dirs.iter().find(|(p, _)| p.src == k.dst && p.dst == k.src).map(|(_, p)| &p.net);
        if let Some(peer) = peer {
            let (q, a) = (&n.dscp_requests, &peer.dscp_responses);
            if q.packets > 0 && a.packets > 0 && q.value != a.value {
                said.push(format!(
                    "requests from {} ride DSCP {}, the responses and ACKs back from {} DSCP {}",
                    k.src, q.value, k.dst, a.value
                ));
                causes.push(json!({"cause": "dscp_asymmetry", "requester": host_of(k), "requests_dscp": q.value, "responses_dscp": a.value}));
            }
        }
        for (class, m) in [
            ("requests", &n.dscp_requests),
            ("responses", &n.dscp_responses),
            ("CNPs", &n.dscp_cnps),
        ] {
            if m.other > 0 {
                said.push(format!(
                    "{} of {} {class} from {} at DSCP {} (first other), the rest at {}",
                    m.other,
                    m.other + m.packets,
                    k.src,
                    m.other_value,
                    m.value
                ));
                causes.push(json!({"cause": "dscp_mixed", "flow": host_of(k), "class": class, "dscp": m.value, "other_dscp": m.other_value, "other": m.other}));
            }
        }
        if n.pcp.other > 0 || (n.untagged > 0 && n.pcp.packets > 0) {
            said.push(format!(
                "frames from {} at PCP {} ({}), {} at PCP {}, {} untagged",
                k.src, n.pcp.value, n.pcp.packets, n.pcp.other, n.pcp.other_value, n.untagged
            ));
            causes.push(json!({"cause": "pcp_mixed", "flow": host_of(k), "pcp": n.pcp.value, "other": n.pcp.other, "untagged": n.untagged}));
        }
        if let Some((port, qps)) = one_port(k).filter(|_| e.requests > 0) {
            said.push(format!(
                "all {qps} QPs from {} to {} send from UDP source port {port}: ECMP hashes them onto one path (no entropy)",
                k.src, k.dst
            ));
            causes.push(json!({"cause": "udp_sport_entropy", "flow": host_of(k), "udp_sport": port, "qps": qps}));
        }
        if n.fragments > 0 {
            said.push(format!("{} IP fragment(s) carrying RoCE from {} (RoCE must not be fragmented: the path MTU is below the RoCE MTU)", n.fragments, k.src));
            causes.push(
                json!({"cause": "ip_fragments", "flow": host_of(k), "fragments": n.fragments}),
            );
        }
    }
    let (net_rules, net_frames) = rules_of(report, id, &["NET-"]);
    if !net_rules.is_empty() {
        let n = report
            .findings
            .iter()
            .filter(|f| f.connection.as_ref() == Some(id) && f.rule.starts_with("NET-"))
            .count();
        said.push(format!(
            "{n} finding(s) against the configuration stated ({})",
            net_rules.join(", ")
        ));
        causes.push(json!({"cause": "stated", "rules": net_rules, "findings": n}));
        cited.extend(net_frames);
    }
    if !causes.is_empty() {
        let mut v = Verdict::new(VerdictKind::NetworkConfiguration, said.join("; "))
            .frames(cited)
            .with("causes", Value::Array(causes));
        v.rules = net_rules;
        out.push(v);
    }
    // The checker's errors no verdict above explains: bad packets (PKT-*), broken
    // transport rules (the rest).
    let explained: Vec<&str> = out.iter().flat_map(|v| v.rules.iter().copied()).collect();
    let errors = |packet: bool| -> Vec<&roce_conformance::Finding> {
        report
            .findings
            .iter()
            .filter(|f| {
                f.connection.as_ref() == Some(id)
                    && f.severity == roce_conformance::Severity::Error
                    && !matches!(f.side, Side::Capture | Side::Checker)
                    && f.rule.starts_with("PKT-") == packet
                    && !explained.contains(&f.rule)
            })
            .collect()
    };
    for (packet, kind) in [(true, VerdictKind::BadPackets), (false, VerdictKind::ProtocolViolation)]
    {
        let errors = errors(packet);
        let Some(first) = errors.first() else { continue };
        let mut rules: Vec<&'static str> = Vec::new();
        let mut by: Vec<String> = Vec::new();
        for f in &errors {
            if !rules.contains(&f.rule) {
                rules.push(f.rule);
                let n = errors.iter().filter(|g| g.rule == f.rule).count();
                by.push(format!("{} x{n} ({})", f.rule, f.side.as_str()));
            }
        }
        let mut v = Verdict::new(
            kind,
            format!("{} error finding(s) of the checker: {}", errors.len(), by.join(", ")),
        )
        .frames(errors.iter().flat_map(|f| f.frames.iter().copied()))
        .with(
            "findings",
            Value::Array(
                errors
                    .iter()
                    .take(FRAMES_CITED)
                    .map(|f| json!({"rule": f.rule, "side": f.side.as_str(), "frames": f.frames, "message": f.message}))
                    .collect(),
            ),
        );
        v.frame = first.frames.first().copied();
        v.rules = rules;
        out.push(v);
    }
    if !out.iter().any(|v| v.severity >= Severity::Degraded) {
        let t = &c.total;
        let summary = if reliable {
            format!(
                "{} packets, {} messages, {} ACKs, no NAK, no retry exhausted, {} retransmitted PSNs; goodput {:.3} Mb/s over {}",
                t.packets,
                t.messages,
                t.acks,
                t.retransmissions,
                c.goodput_bps / 1e6,
                ms(c.duration_ns)
            )
        } else {
            format!(
                "{} packets, {} messages ({}: nothing is acknowledged); goodput {:.3} Mb/s over {}",
                t.packets,
                t.messages,
                c.info.transport,
                c.goodput_bps / 1e6,
                ms(c.duration_ns)
            )
        };
        out.push(
            Verdict::new(VerdictKind::Healthy, summary)
                .with("packets", json!(t.packets))
                .with("messages", json!(t.messages))
                .with("acks", json!(t.acks))
                .with("retransmissions", json!(t.retransmissions))
                .with("goodput_bps", json!(c.goodput_bps.round())),
        );
    }
    out.sort_by_key(|v| std::cmp::Reverse(v.severity));
    out
}

/// The verdict on a CM exchange that opened no incarnation, when it failed.
fn judge_setup(
    x: &CmExchange,
    carried: bool,
    data_qps: &[u32],
    (req_ts, last_ts): (Option<u64>, Option<u64>),
) -> Option<Verdict> {
    let passive = x.passive_qpn.map_or("?".to_string(), |q| format!("0x{q:06x}"));
    let what = match x.outcome {
        "rejected" => format!(
            "REQ from {} QP 0x{:06x} to {} rejected by a REJ ({}, frame {})",
            x.active,
            x.active_qpn,
            x.passive,
            x.reject_reason.unwrap_or("no reason"),
            x.last_frame
        ),
        "requested" => format!(
            "REQ from {} QP 0x{:06x} to {} sent {} time(s) (frames {}..{}) and never answered by a REP{}",
            x.active,
            x.active_qpn,
            x.passive,
            x.reqs,
            x.first_req_frame,
            x.req_frame,
            if x.mra { " (an MRA asked for more time)" } else { "" }
        ),
        "replied" if !carried => format!(
            "REQ from {} QP 0x{:06x} answered by a REP from {} QP {passive} (frame {}), but no RTU and no data followed",
            x.active, x.active_qpn, x.passive, x.last_frame
        ),
        "established" | "disconnected" if !carried && !data_qps.is_empty() => format!(
            "the CM exchange (REQ frame {}) connected {} QP 0x{:06x} and {} QP {passive}, but the data between these hosts goes to other QPs (DestQP {}): the application sends on QPs it did not connect (a stale QPN, another QP)",
            x.req_frame,
            x.active,
            x.active_qpn,
            x.passive,
            data_qps.iter().map(|q| format!("0x{q:06x}")).collect::<Vec<_>>().join(", ")
        ),
        _ => return None,
    };
    let (frame, ts) = match x.outcome {
        "rejected" | "replied" => (x.last_frame, last_ts),
        _ => (x.first_req_frame, req_ts),
    };
    let mut v = Verdict::new(VerdictKind::ConnectionSetupFailed, what)
        .frames([x.first_req_frame, x.req_frame, x.last_frame])
        .with("outcome", json!(x.outcome))
        .with("reject_reason", json!(x.reject_reason))
        .with("reqs", json!(x.reqs))
        .with("mra", json!(x.mra))
        .with("active", json!(x.active.to_string()))
        .with("active_qpn", json!(x.active_qpn))
        .with("passive", json!(x.passive.to_string()))
        .with("passive_qpn", json!(x.passive_qpn))
        .with("data_dest_qps", json!(data_qps));
    v.frame = Some(frame);
    v.ts = ts;
    Some(v)
}

/// One incarnation's diagnosis.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionDiagnosis {
    /// The connection as `stats` and `check` name it (`{a, qpn_a, b, qpn_b, incarnation}`).
    pub connection: ConnId,
    /// Its name as text prints it.
    pub name: String,
    /// `RC`, `UC`, `UD`, ...
    pub transport: &'static str,
    /// How it began.
    pub began: &'static str,
    /// How it ended.
    pub ended: EndedBy,
    /// Packets, both directions.
    pub packets: u64,
    /// Its first and last frames.
    pub first_frame: u64,
    /// Its last frame.
    pub last_frame: u64,
    /// The verdicts, the worst first (`healthy` alone when nothing is wrong).
    pub verdicts: Vec<Verdict>,
    /// Per direction, what its packets carry below the BTH: RoCE and IP version, DSCP by
    /// class (requests, responses and ACKs, CNPs), requests by ECN codepoint, VLAN and PCP,
    /// TTL, UDP source port, IP fragments (docs/diagnose.md, "The network audit").
    pub network: Vec<Value>,
}

impl ConnectionDiagnosis {
    fn new(c: &Connection, verdicts: Vec<Verdict>, dirs: &[(FlowKey, FlowEvidence)]) -> Self {
        ConnectionDiagnosis {
            network: dirs.iter().map(|(k, e)| e.net.json(k)).collect(),
            connection: c.info.connection,
            name: c.info.connection.to_string(),
            transport: c.info.transport,
            began: match c.info.began.how {
                BeganBy::FirstPackets => "first_packets",
                BeganBy::Cm => "cm",
                BeganBy::IdleReconnect => "idle_reconnect",
                BeganBy::AfterEnd => "after_end",
            },
            ended: c.info.ended.how,
            packets: c.total.packets,
            first_frame: c.info.first_frame,
            last_frame: c.info.last_frame,
            verdicts,
        }
    }

    /// The worst verdict.
    pub fn worst(&self) -> Option<&Verdict> {
        self.verdicts.first()
    }
}

/// A CM exchange that opened no connection, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SetupDiagnosis {
    /// The QPs the exchange named: `a` sent the REQ (`qpn_b` null without a REP;
    /// `incarnation` 0: none began).
    pub connection: ConnId,
    /// The exchange's outcome as `stats` logs it (`requested`, `replied`, `rejected`).
    pub outcome: &'static str,
    /// `connection_setup_failed`, with its evidence.
    pub verdicts: Vec<Verdict>,
}

/// One failure on the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The connection (as in `connections` or `setup`).
    pub connection: ConnId,
    /// Its name as text prints it.
    pub name: String,
    /// The verdict.
    pub verdict: VerdictKind,
    /// Where it happened.
    pub frame: u64,
    /// When.
    #[serde(serialize_with = "roce_conformance::internal::json::ts")]
    pub ts: u64,
    /// After the first failure, ns (0 for the first).
    pub after_ns: u64,
}

/// Which connection failed first, and which failures followed within the window.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// The window after the first failure, ns.
    pub window_ns: u64,
    /// The first failure (null: none).
    pub first: Option<Failure>,
    /// Failures within the window after it, in time order (the first [`TIMELINE_LISTED`]).
    pub followed: Vec<Failure>,
    /// Failures within the window beyond those listed.
    pub followed_not_listed: u64,
    /// Of the failures within the window, those sharing a host with the first.
    pub followed_same_host: u64,
    /// Failures after the window.
    pub later: u64,
}

impl Timeline {
    fn of(conns: &[ConnectionDiagnosis], setup: &[SetupDiagnosis], window_ns: u64) -> Self {
        let mut all: Vec<Failure> = Vec::new();
        let mut push = |id: &ConnId, v: &Verdict| {
            if v.severity != Severity::Failure {
                return;
            }
            let (Some(frame), Some(ts)) = (v.frame, v.ts) else { return };
            all.push(Failure {
                connection: *id,
                name: id.to_string(),
                verdict: v.verdict,
                frame,
                ts,
                after_ns: 0,
            });
        };
        for c in conns {
            // Each connection once: its earliest failure.
            if let Some(v) = c
                .verdicts
                .iter()
                .filter(|v| v.severity == Severity::Failure && v.ts.is_some())
                .min_by_key(|v| (v.ts, v.frame))
            {
                push(&c.connection, v);
            }
        }
        for s in setup {
            for v in &s.verdicts {
                push(&s.connection, v);
            }
        }
        all.sort_by_key(|f| (f.ts, f.frame));
        let mut it = all.into_iter();
        let Some(first) = it.next() else {
            return Timeline {
                window_ns,
                first: None,
                followed: Vec::new(),
                followed_not_listed: 0,
                followed_same_host: 0,
                later: 0,
            };
        };
        let hosts = |c: &ConnId| -> [IpAddr; 2] { [c.a, c.b] };
        let first_hosts = hosts(&first.connection);
        let (mut followed, mut not_listed, mut same, mut later) = (Vec::new(), 0, 0, 0);
        for mut f in it {
            f.after_ns = f.ts.saturating_sub(first.ts);
            if f.after_ns > window_ns {
                later += 1;
                continue;
            }
            if hosts(&f.connection).iter().any(|h| first_hosts.contains(h)) {
                same += 1;
            }
            if followed.len() < TIMELINE_LISTED {
                followed.push(f);
            } else {
                not_listed += 1;
            }
        }
        Timeline {
            window_ns,
            first: Some(first),
            followed,
            followed_not_listed: not_listed,
            followed_same_host: same,
            later,
        }
    }
}

fn headline(conns: &[ConnectionDiagnosis], setup: &[SetupDiagnosis], t: &Timeline) -> String {
    let total = conns.len() + setup.len();
    if total == 0 {
        return "no RoCE connection in the capture".to_string();
    }
    let worst = conns
        .iter()
        .flat_map(|c| &c.verdicts)
        .chain(setup.iter().flat_map(|s| &s.verdicts))
        .map(|v| v.severity)
        .max()
        .unwrap_or(Severity::Ok);
    let count = |k: VerdictKind| {
        conns.iter().filter(|c| c.verdicts.iter().any(|v| v.verdict == k)).count()
            + setup.iter().filter(|s| s.verdicts.iter().any(|v| v.verdict == k)).count()
    };
    let mut parts = Vec::new();
    for &(k, _, title, sev, _) in VERDICTS {
        if sev == Severity::Ok {
            continue;
        }
        let n = count(k);
        if n > 0 {
            parts.push(format!("{title} on {n} of {total}"));
        }
    }
    let mut s = match worst {
        Severity::Ok => format!("healthy: {total} connection(s), nothing wrong found"),
        Severity::Misconfigured => {
            format!("healthy, but {}", parts.join("; "))
        }
        _ => parts.join("; "),
    };
    if let Some(f) = &t.first {
        s.push_str(&format!(
            ". First failure: {} ({}, frame {})",
            f.name,
            f.verdict.title(),
            f.frame
        ));
        let n = t.followed.len() as u64 + t.followed_not_listed;
        if n > 0 {
            s.push_str(&format!(
                "; {n} more failed within {} after it ({} sharing a host with it)",
                ms(t.window_ns),
                t.followed_same_host
            ));
        }
    }
    s
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `diagnose --format json` (`roce-inspect/diagnose/v1`, docs/json.md, docs/schema/).
#[derive(Debug, Serialize)]
pub struct DiagnoseDocument {
    /// Always [`SCHEMA_DIAGNOSE`].
    pub schema: &'static str,
    /// Frames read.
    pub frames: u64,
    /// RoCE frames.
    pub roce_frames: u64,
    /// Native InfiniBand frames (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_frames: u64,
    /// Native InfiniBand frames between LIDs, in no connection: the model does not key by
    /// LID yet (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_unmodelled: u64,
    /// From the first frame's time to the last's, ns.
    pub duration_ns: u64,
    /// One sentence: the verdicts, how many connections each, the first failure.
    pub headline: String,
    /// Verdicts given, by ID: how many connections (and setups) got each.
    pub verdicts: BTreeMap<&'static str, u64>,
    /// Which connection failed first and what followed.
    pub timeline: Timeline,
    /// Each incarnation, the busiest first (as `stats` lists them).
    pub connections: Vec<ConnectionDiagnosis>,
    /// Incarnations beyond the model's cap, counted only.
    pub connections_not_listed: u64,
    /// CM exchanges that opened no connection and failed.
    pub setup: Vec<SetupDiagnosis>,
    /// The checker's findings (errors and warnings) in all: `check` lists them.
    pub findings: u64,
    /// The capture's warnings.
    pub warnings: Vec<String>,
    /// Several captures read as one: the taps, their copies, latency and the packets lost
    /// between them, as `stats` and `check` give it (absent for one capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taps: Option<crate::TapsReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_has_an_id_title_and_next_step() {
        let mut ids: Vec<&str> = VERDICTS.iter().map(|v| v.1).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), VERDICTS.len());
        for &(k, id, title, sev, next) in VERDICTS {
            assert_eq!(k.id(), id);
            assert_eq!(k.title(), title);
            assert_eq!(k.severity(), sev);
            assert!(!next.is_empty());
        }
    }
}
