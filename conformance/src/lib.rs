//! roce-conformance: replays RoCE packets through a reference model of the InfiniBand
//! reliable transport and reports, with frame numbers, which side broke which rule.
//!
//! The [`Checker`] is streaming: feed it `(frame, packet)` in capture order, take the
//! findings proved so far with [`Checker::take_findings`], and call [`Checker::finish`] at
//! the end for what only the end can prove and a per-connection report. It knows nothing
//! of files or output formats. Memory grows with the live connections (capped, least
//! recently used evicted and reported), never with the number of packets.
//!
//! ## Connections
//! A *flow* is one direction to one QP: (source address, destination address, DestQP). Its
//! requests form a requester stream; the responses to them travel in the reverse flow. The
//! two flows of a connection are paired:
//! - from CM: a REQ / REP pair (matched by communication IDs) names both QPNs, the starting
//!   PSNs (which cross over: see CM.md) and the PMTU — exact;
//! - otherwise from the PSNs responses echo: a response B -> A with PSN p belongs to the
//!   A -> B flow that recently sent a request with PSN p (initial PSNs are random 24-bit
//!   numbers, so one flow matches; when two do, nothing is paired). The UDP source port is
//!   never used.
//!
//! PMTU comes from CM, else from `Options::pmtu`, else from the first FIRST or MIDDLE
//! packet (request or READ response), whose payload is exactly one PMTU.

#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

mod congestion;
pub mod finding;
pub mod hash;
mod packet_rules;
pub mod psn;
pub mod requester;
pub mod responder;
pub mod rules;

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr};

use roce_parser::cm::{CmMessage, TransportServiceType};
use roce_parser::headers::NakCode;
use roce_parser::opcode::{Position, Role, Transport};
use roce_parser::{Packet, Roce};
use serde::Serialize;

use congestion::Congestion;
use finding::Sink;
pub use finding::{ConnId, Finding};
use hash::FastHashMap;
use requester::{Ctx, Requester};
use responder::Responder;
pub use rules::{Rule, RuleSet, Severity};

/// Where a frame sits in the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInfo {
    /// 1-based frame number.
    pub number: u64,
    /// Nanoseconds since the epoch.
    pub ts_ns: u64,
    /// Bytes captured.
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
}

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    /// The capture is known to be lossless (a mirror with counters checked, or generated
    /// traffic): PSN gaps are judged as requester faults, not capture loss.
    pub assume_complete: bool,
    /// How long a response may precede its request in a host capture (transmit and
    /// receive reordered) before it counts against the responder.
    pub reorder_window_ns: u64,
    /// Silence on a stream after which a retransmission counts as a timeout retry.
    pub retx_timeout_ns: u64,
    /// Connections (flows) tracked at once; the least recently used is evicted beyond it.
    pub max_flows: usize,
    /// PMTU to assume when CM did not announce one.
    pub pmtu: Option<u32>,
    pub rules: RuleSet,
    /// Findings kept per (connection, rule); the rest are counted only.
    pub max_findings_per_rule: u32,
    /// A CE-marked packet needs a CNP to its sender QP within this time before or after it.
    pub cnp_window_ns: u64,
    /// An AckReq packet unacknowledged for this long before the capture ends is reported.
    pub ack_timeout_ns: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            assume_complete: false,
            reorder_window_ns: 500_000,
            retx_timeout_ns: 1_000_000,
            max_flows: 65_536,
            pmtu: None,
            rules: RuleSet::default(),
            max_findings_per_rule: 100,
            cnp_window_ns: 1_000_000,
            ack_timeout_ns: 100_000_000,
        }
    }
}

/// Where a connection's PMTU came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PmtuSource {
    Cm,
    Option,
    Inferred,
}

/// How the two directions were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairedBy {
    Cm,
    Psn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct FlowKey {
    src: IpAddr,
    dst: IpAddr,
    dqpn: u32,
}

/// One direction to one QP.
#[derive(Debug, Clone)]
struct Flow {
    req: Requester,
    /// The responder's answers to `req`'s requests.
    rsp: Responder,
    /// Frame of a fatal NAK (invalid request, remote access or operational error) this flow
    /// carried: its sender's QP is in error and must send nothing more.
    fatal: Option<(u64, bool)>,
    /// The reverse flow (responses to this flow's requests travel there).
    peer: Option<FlowKey>,
    paired_by: Option<PairedBy>,
    pmtu: Option<(u32, PmtuSource)>,
    transport: Option<Transport>,
    packets: u64,
    first_frame: u64,
    last_frame: u64,
    /// Recent request PSNs registered in the pairing index while unpaired.
    indexed: VecDeque<u32>,
    stamp: u64,
}

const INDEXED: usize = 8;
/// How far below a response's PSN pairing looks for the request it answers.
const PAIR_LOOKBACK: u32 = 4;

impl Flow {
    fn new(frame: u64) -> Self {
        Flow {
            req: Requester::default(),
            rsp: Responder::default(),
            fatal: None,
            peer: None,
            paired_by: None,
            pmtu: None,
            transport: None,
            packets: 0,
            first_frame: frame,
            last_frame: frame,
            indexed: VecDeque::new(),
            stamp: 0,
        }
    }
}

/// A REQ waiting for its REP.
#[derive(Debug, Clone, Copy)]
struct PendingReq {
    active: IpAddr,
    passive: IpAddr,
    qpn: u32,
    starting_psn: u32,
    pmtu: Option<u32>,
    transport: TransportServiceType,
}

const CM_PENDING: usize = 4096;

/// The checker's own accounting of its state, to prove it stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StateStats {
    pub flows: usize,
    pub pairing_index: usize,
    pub lru_queue: usize,
    pub cm_pending: usize,
    pub finding_counters: usize,
    /// Requests and READs remembered across all flows.
    pub remembered_requests: usize,
    /// CE bursts waiting for a CNP, CNP times and CE senders remembered.
    pub congestion: usize,
    pub evicted: u64,
}

/// One connection in the final report.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionReport {
    pub connection: ConnId,
    pub transport: &'static str,
    pub paired_by: Option<PairedBy>,
    pub pmtu: Option<u32>,
    pub pmtu_source: Option<PmtuSource>,
    pub packets: u64,
    pub retransmissions: u64,
    /// Packets known to be missing from the capture (PSN gaps, ACKs of uncaptured requests).
    pub missing_packets: u64,
    /// How complete the capture of this connection looked, 0..1.
    pub completeness: f64,
    /// Why parts were not judged, when they were not.
    pub partly_judged: Vec<&'static str>,
    pub first_frame: u64,
    pub last_frame: u64,
}

/// The end of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Names a connection had before its two directions were paired -> its final name.
    #[serde(skip)]
    pub aliases: HashMap<ConnId, ConnId>,
    pub findings: Vec<Finding>,
    pub connections: Vec<ConnectionReport>,
    pub frames: u64,
    pub roce_frames: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Findings counted but not kept (beyond the per-rule cap).
    pub suppressed: u64,
    pub state: StateStats,
}

/// The streaming checker.
#[derive(Debug)]
pub struct Checker {
    opts: Options,
    sink: Sink,
    flows: FastHashMap<FlowKey, Flow>,
    /// (requester src, requester dst, PSN) -> the unpaired flow that sent it.
    pairing: PairingIndex,
    lru: VecDeque<(FlowKey, u64)>,
    stamp: u64,
    cm_pending: FastHashMap<u32, PendingReq>,
    cm_order: VecDeque<u32>,
    evicted: u64,
    frames: u64,
    roce_frames: u64,
    last_ts: u64,
    congestion: Congestion,
}

impl Checker {
    pub fn new(opts: Options) -> Self {
        let sink =
            Sink::new(opts.rules.clone(), opts.max_findings_per_rule, 4 * opts.max_flows.max(1));
        Checker {
            opts,
            sink,
            flows: FastHashMap::default(),
            pairing: FastHashMap::default(),
            lru: VecDeque::new(),
            stamp: 0,
            cm_pending: FastHashMap::default(),
            cm_order: VecDeque::new(),
            evicted: 0,
            frames: 0,
            roce_frames: 0,
            last_ts: 0,
            congestion: Congestion::default(),
        }
    }

    /// Findings proved since the last call.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        self.sink.take()
    }

    /// The checker's own state, for tests and diagnostics.
    pub fn state(&self) -> StateStats {
        StateStats {
            flows: self.flows.len(),
            pairing_index: self.pairing.len(),
            lru_queue: self.lru.len(),
            cm_pending: self.cm_pending.len(),
            finding_counters: self.sink.tracked(),
            remembered_requests: self
                .flows
                .values()
                .map(|f| f.req.entries() + f.rsp.entries())
                .sum(),
            congestion: self.congestion.entries(),
            evicted: self.evicted,
        }
    }

    fn conn_id(&self, key: &FlowKey) -> ConnId {
        let peer = self.flows.get(key).and_then(|f| f.peer);
        conn_id(key, peer.map(|p| p.dqpn))
    }

    /// Counts a frame that could not be decoded at all (unsupported link type, ...).
    pub fn feed_undecoded(&mut self, f: &FrameInfo) {
        self.frames += 1;
        self.check_time(f);
    }

    fn check_time(&mut self, f: &FrameInfo) {
        if f.ts_ns < self.last_ts {
            let back = self.last_ts - f.ts_ns;
            self.sink.report(&rules::CAP_TIME, None, &[f.number], None, None, || {
                format!("timestamp goes back by {back} ns from the previous frame")
            });
        }
        self.last_ts = self.last_ts.max(f.ts_ns);
    }

    /// Feeds one frame (RoCE or not) in capture order.
    pub fn feed(&mut self, f: &FrameInfo, p: &Packet<'_>) {
        self.frames += 1;
        self.check_time(f);
        let Some(r) = &p.roce else { return };
        self.roce_frames += 1;
        let (src, dst) = addresses(p, r);
        let key = FlowKey { src, dst, dqpn: r.bth.dest_qp };
        let conn = Some(self.conn_id(&key));
        packet_rules::check(f, p, r, conn, &mut self.sink);
        if let Some(Ok(mad)) = r.mad() {
            if let Some(m) = mad.cm {
                self.cm(f.number, src, dst, &m);
            }
            return;
        }
        let Some(info) = r.info else { return };
        if info.role == Role::Congestion {
            let (w, cap) = (self.opts.cnp_window_ns, self.opts.max_flows);
            self.congestion.cnp(
                f.number,
                f.ts_ns,
                src,
                dst,
                r.bth.dest_qp,
                conn,
                w,
                cap,
                &mut self.sink,
            );
            return;
        }
        let ce = p.ip.map_or(r.grh.is_some_and(|g| g.tclass & 3 == 3), |ip| ip.ecn == 3);
        if ce {
            let sender = match r.headers.deth {
                Some(d) => Some(d.src_qp),
                None => self.flows.get(&key).and_then(|fl| fl.peer).map(|pk| pk.dqpn),
            };
            let (w, cap) = (self.opts.cnp_window_ns, self.opts.max_flows);
            self.congestion.mark(f.number, f.ts_ns, src, dst, sender, conn, w, cap, &mut self.sink);
        }
        if !matches!(info.transport, Transport::Rc | Transport::Uc | Transport::Xrc) {
            return;
        }
        self.after_fatal_nak(f, key, r);
        match info.role {
            Role::Request => self.request(f, key, r, info),
            Role::Response => self.response(f, key, r, info),
            Role::Congestion => {}
        }
    }

    /// RSP-NAK-ERROR: a QP that sent a fatal NAK sends nothing more.
    fn after_fatal_nak(&mut self, f: &FrameInfo, key: FlowKey, r: &Roce<'_>) {
        let conn = Some(self.conn_id(&key));
        let Some(flow) = self.flows.get_mut(&key) else { return };
        if let Some((nak_frame, reported)) = flow.fatal {
            if !reported {
                flow.fatal = Some((nak_frame, true));
                let name = r.opcode_name();
                self.sink.report(&rules::RSP_NAK_ERROR, None, &[nak_frame, f.number], conn, Some(r.bth.psn), || {
                    format!("{name} sent after the fatal NAK in frame {nak_frame}: the QP is in the error state and must stay silent")
                });
            }
        }
    }

    /// [`Self::touch`] for a packet of the flow: counts it and learns the transport.
    fn touch_packet(
        &mut self,
        key: FlowKey,
        frame: u64,
        info: &roce_parser::OpcodeInfo,
    ) -> &mut Flow {
        let flow = self.touch(key, frame);
        flow.packets += 1;
        flow.transport.get_or_insert(info.transport);
        flow
    }

    fn touch(&mut self, key: FlowKey, frame: u64) -> &mut Flow {
        self.stamp += 1;
        let stamp = self.stamp;
        self.lru.push_back((key, stamp));
        if !self.flows.contains_key(&key) && self.flows.len() >= self.opts.max_flows {
            self.evict_one(frame);
        }
        if self.lru.len() > 2 * self.flows.len() + 1024 {
            let flows = &self.flows;
            self.lru.retain(|(k, s)| flows.get(k).is_some_and(|f| f.stamp == *s) || *s == stamp);
        }
        let flow = self.flows.entry(key).or_insert_with(|| Flow::new(frame));
        flow.stamp = stamp;
        flow.last_frame = frame;
        flow
    }

    fn evict_one(&mut self, frame: u64) {
        while let Some((k, s)) = self.lru.pop_front() {
            if self.flows.get(&k).is_some_and(|f| f.stamp == s) {
                let id = self.conn_id(&k);
                if let Some(flow) = self.flows.remove(&k) {
                    for psn in flow.indexed {
                        unindex(&mut self.pairing, &k, psn);
                    }
                    if let Some(peer) = flow.peer.and_then(|p| self.flows.get_mut(&p)) {
                        peer.peer = None;
                    }
                    self.evicted += 1;
                    self.sink.forget(&id);
                    let max = self.opts.max_flows;
                    self.sink.report(&rules::CAP_EVICT, None, &[flow.last_frame, frame], None, None, || {
                        format!(
                            "state of {id} evicted to stay within {max} tracked flows: later findings on it start from scratch"
                        )
                    });
                }
                return;
            }
        }
    }

    fn pmtu_of(&self, key: &FlowKey) -> Option<u32> {
        self.flows.get(key).and_then(|f| f.pmtu).map(|p| p.0).or(self.opts.pmtu)
    }

    /// Learns the PMTU from a FIRST or MIDDLE payload when nothing better is known.
    fn infer_pmtu(&mut self, key: &FlowKey, r: &Roce<'_>, pos: Position) {
        if !matches!(pos, Position::First | Position::Middle) || self.opts.pmtu.is_some() {
            return;
        }
        let len = r.payload_len as u32;
        if !matches!(len, 256 | 512 | 1024 | 2048 | 4096) {
            return;
        }
        let peer = match self.flows.get_mut(key) {
            Some(f) if f.pmtu.is_none() => {
                f.pmtu = Some((len, PmtuSource::Inferred));
                f.peer
            }
            _ => return,
        };
        if let Some(pf) = peer.and_then(|p| self.flows.get_mut(&p)) {
            pf.pmtu.get_or_insert((len, PmtuSource::Inferred));
        }
    }

    fn request(
        &mut self,
        f: &FrameInfo,
        key: FlowKey,
        r: &Roce<'_>,
        info: &roce_parser::OpcodeInfo,
    ) {
        let flow = self.touch_packet(key, f.number, info);
        let unpaired = flow.peer.is_none();
        if unpaired {
            flow.indexed.push_back(r.bth.psn);
            let old = (flow.indexed.len() > INDEXED).then(|| flow.indexed.pop_front()).flatten();
            if let Some(old) = old {
                unindex(&mut self.pairing, &key, old);
            }
            self.pairing.insert((key.src, key.dst, r.bth.psn), key);
        }
        self.infer_pmtu(&key, r, info.position);
        let ctx =
            Ctx { conn: Some(self.conn_id(&key)), pmtu: self.pmtu_of(&key), opts: &self.opts };
        if let Some(flow) = self.flows.get_mut(&key) {
            let seen = flow.req.on_request(&ctx, f, r, info, &mut self.sink);
            flow.rsp.on_request(f, r, info, seen);
        }
    }

    fn response(
        &mut self,
        f: &FrameInfo,
        key: FlowKey,
        r: &Roce<'_>,
        info: &roce_parser::OpcodeInfo,
    ) {
        let flow = self.touch_packet(key, f.number, info);
        let mut peer = flow.peer;
        if peer.is_none() {
            // Responses B -> A answer the A -> B flow that sent this PSN, or, when the
            // capture reordered a response before its request, one of the PSNs just before.
            let found = (0..=PAIR_LOOKBACK).find_map(|back| {
                let psn = psn::add(r.bth.psn, (1 << 24) - back);
                self.pairing.get(&(key.dst, key.src, psn)).copied()
            });
            if let Some(cand) = found {
                if self.flows.get(&cand).is_some_and(|c| c.peer.is_none()) {
                    self.pair(key, cand, PairedBy::Psn);
                    peer = Some(cand);
                }
            }
        }
        let Some(req_key) = peer else { return };
        if !self.flows.contains_key(&req_key) {
            return;
        }
        self.infer_pmtu(&req_key, r, info.position);
        let ctx = Ctx {
            conn: Some(self.conn_id(&req_key)),
            pmtu: self.pmtu_of(&req_key),
            opts: &self.opts,
        };
        if let Some(flow) = self.flows.get_mut(&req_key) {
            let max = flow.req.max_psn();
            flow.req.on_response(&ctx, f, r, info, &mut self.sink);
            if max.is_some() {
                flow.rsp.on_response(&ctx, f, r, info, max, &mut self.sink);
            }
        }
        // A fatal NAK puts the responder's QP in the error state: this flow must go silent.
        let fatal = r.headers.aeth.and_then(|a| a.nak_code()).is_some_and(|c| {
            matches!(
                c,
                NakCode::InvalidRequest
                    | NakCode::RemoteAccessError
                    | NakCode::RemoteOperationalError
            )
        });
        if fatal {
            if let Some(flow) = self.flows.get_mut(&key) {
                flow.fatal.get_or_insert((f.number, false));
            }
        }
    }

    /// Makes `x` and `y` the two directions of one connection.
    fn pair(&mut self, x: FlowKey, y: FlowKey, how: PairedBy) {
        let pmtu =
            self.flows.get(&x).and_then(|f| f.pmtu).or(self.flows.get(&y).and_then(|f| f.pmtu));
        for (k, other) in [(x, y), (y, x)] {
            if let Some(f) = self.flows.get_mut(&k) {
                f.peer = Some(other);
                f.paired_by = Some(how);
                if f.pmtu.is_none() {
                    f.pmtu = pmtu;
                }
                for psn in f.indexed.drain(..) {
                    unindex(&mut self.pairing, &k, psn);
                }
            }
        }
    }

    fn cm(&mut self, frame: u64, src: IpAddr, dst: IpAddr, m: &CmMessage<'_>) {
        match m {
            CmMessage::Req(q) => {
                if self.cm_pending.len() >= CM_PENDING {
                    if let Some(old) = self.cm_order.pop_front() {
                        self.cm_pending.remove(&old);
                    }
                }
                self.cm_order.push_back(q.local_comm_id);
                self.cm_pending.insert(
                    q.local_comm_id,
                    PendingReq {
                        active: src,
                        passive: dst,
                        qpn: q.local_qpn,
                        starting_psn: q.starting_psn,
                        pmtu: q.pmtu_bytes().map(u32::from),
                        transport: q.transport_service_type,
                    },
                );
            }
            CmMessage::Rep(p) => {
                let Some(req) = self.cm_pending.remove(&p.remote_comm_id) else { return };
                if req.active != dst || req.passive != src {
                    return;
                }
                let to_passive = FlowKey { src: req.active, dst: req.passive, dqpn: p.local_qpn };
                let to_active = FlowKey { src: req.passive, dst: req.active, dqpn: req.qpn };
                let transport = match req.transport {
                    TransportServiceType::Uc => Transport::Uc,
                    TransportServiceType::Xrc => Transport::Xrc,
                    _ => Transport::Rc,
                };
                // Starting PSNs cross over (CM.md): each side announces what it expects.
                for (k, first) in [(to_passive, p.starting_psn), (to_active, req.starting_psn)] {
                    let flow = self.touch(k, frame);
                    flow.transport.get_or_insert(transport);
                    if let Some(m) = req.pmtu {
                        flow.pmtu = Some((m, PmtuSource::Cm));
                    }
                    flow.req.expect_first_psn(first);
                }
                self.pair(to_passive, to_active, PairedBy::Cm);
            }
            _ => {}
        }
    }

    /// Ends the run: pending evidence becomes findings; the report per connection.
    pub fn finish(mut self) -> Report {
        let mut keys: Vec<FlowKey> = self.flows.keys().copied().collect();
        keys.sort();
        for k in &keys {
            let ctx = Ctx { conn: Some(self.conn_id(k)), pmtu: self.pmtu_of(k), opts: &self.opts };
            if let Some(f) = self.flows.get_mut(k) {
                f.req.finish(&ctx, &mut self.sink);
                if f.peer.is_some() {
                    f.rsp.finish(&ctx, self.last_ts, &mut self.sink);
                }
            }
        }
        self.congestion.finish(self.last_ts, self.opts.cnp_window_ns, &mut self.sink);
        let mut conns: Vec<ConnectionReport> = Vec::new();
        let mut seen: Vec<FlowKey> = Vec::new();
        for k in &keys {
            if seen.contains(k) {
                continue;
            }
            let Some(f) = self.flows.get(k) else { continue };
            let mut group = vec![(k, f)];
            seen.push(*k);
            if let Some(pk) = f.peer {
                if let Some(pf) = self.flows.get(&pk) {
                    group.push((self.flows.get_key_value(&pk).map_or(k, |(kk, _)| kk), pf));
                    seen.push(pk);
                }
            }
            let packets: u64 = group.iter().map(|(_, f)| f.packets).sum();
            let missing: u64 = group.iter().map(|(_, f)| f.req.missing).sum();
            let mut partly: Vec<&'static str> =
                group.iter().filter_map(|(_, f)| f.req.partly).collect();
            if f.peer.is_none() && f.transport != Some(Transport::Uc) {
                partly.push("the other direction was not identified: responses not judged");
            }
            partly.dedup();
            conns.push(ConnectionReport {
                connection: self.conn_id(k),
                transport: f.transport.map_or("unknown", Transport::as_str),
                paired_by: f.paired_by,
                pmtu: f.pmtu.map(|p| p.0).or(self.opts.pmtu),
                pmtu_source: f.pmtu.map(|p| p.1).or(self.opts.pmtu.map(|_| PmtuSource::Option)),
                packets,
                retransmissions: group.iter().map(|(_, f)| f.req.retransmissions).sum(),
                missing_packets: missing,
                completeness: if packets + missing == 0 {
                    1.0
                } else {
                    packets as f64 / (packets + missing) as f64
                },
                partly_judged: partly,
                first_frame: group
                    .iter()
                    .map(|(_, f)| f.first_frame)
                    .filter(|&x| x > 0)
                    .min()
                    .unwrap_or(0),
                last_frame: group.iter().map(|(_, f)| f.last_frame).max().unwrap_or(0),
            });
        }
        let mut aliases = HashMap::new();
        for (k, f) in &self.flows {
            if let Some(p) = f.peer {
                aliases.insert(conn_id(k, None), conn_id(k, Some(p.dqpn)));
            }
        }
        let state = self.state();
        Report {
            aliases,
            findings: self.sink.take(),
            connections: conns,
            frames: self.frames,
            roce_frames: self.roce_frames,
            errors: self.sink.errors,
            warnings: self.sink.warnings,
            suppressed: self.sink.suppressed,
            state,
        }
    }
}

impl Report {
    /// The final name of a connection named in a finding (findings reported before the two
    /// directions were paired name only one QPN).
    pub fn canonical(&self, id: ConnId) -> ConnId {
        self.aliases.get(&id).copied().unwrap_or(id)
    }
}

fn addresses(p: &Packet<'_>, r: &Roce<'_>) -> (IpAddr, IpAddr) {
    match (p.ip, r.grh) {
        (Some(ip), _) => (ip.src, ip.dst),
        (None, Some(g)) => (IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr())),
        (None, None) => (IpAddr::V6(Ipv6Addr::UNSPECIFIED), IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
    }
}

/// The connection a flow belongs to, named the same way from both directions.
fn conn_id(k: &FlowKey, peer_qpn: Option<u32>) -> ConnId {
    let fwd = ConnId { a: k.src, qpn_a: peer_qpn, b: k.dst, qpn_b: Some(k.dqpn) };
    let rev = ConnId { a: k.dst, qpn_a: Some(k.dqpn), b: k.src, qpn_b: peer_qpn };
    if peer_qpn.is_some() && (rev.a, rev.qpn_a) < (fwd.a, fwd.qpn_a) {
        rev
    } else {
        fwd
    }
}

/// The PSN index for pairing by echo: which unpaired flow recently sent a PSN.
type PairingIndex = FastHashMap<(IpAddr, IpAddr, u32), FlowKey>;

/// Forgets that `key` sent `psn`, unless another flow of the same hosts has claimed that PSN
/// since (the index keeps the latest sender).
fn unindex(pairing: &mut PairingIndex, key: &FlowKey, psn: u32) {
    if let std::collections::hash_map::Entry::Occupied(e) = pairing.entry((key.src, key.dst, psn)) {
        if e.get() == key {
            e.remove();
        }
    }
}
