//! `roce-inspect stats`: totals, ICRC counts, the opcode histogram, and per connection
//! packets, bytes, messages, ACK/NAK kinds, CNPs, ECN-CE marks and retransmissions. Counting
//! allocates only when a new flow appears, never per frame.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::net::IpAddr;

use roce_parser::headers::{AethKind, NakCode};
use roce_parser::opcode::{self, Operation, Role, Transport};
use roce_parser::{Config, IcrcStatus, Packet, Problem, Roce};
use serde::Serialize;

use roce_conformance::timing::{
    compare, CnpScopes, CongestionJson, CongestionReport, FlowCongestion,
};
use roce_conformance::{
    exchange_of, Checker, CmExchange, ConnectionInfo, EndedBy, FlowKey, FrameInfo, ModelOptions,
    Options, Psn, Retained, Seen, Shard, Timing, TimingReport,
};

use crate::input::{warn_undecoded, Input, InputError, UndecodedGroup, Window};
use crate::nic_counters::{NicInput, Reconciliation};

/// Counters of one direction.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowStats {
    /// Serialized by the owner ([`Direction`], or the connection's [`ConnectionInfo`]).
    #[serde(skip)]
    pub packets: u64,
    /// Bytes on the wire (frame lengths).
    pub bytes: u64,
    pub payload_bytes: u64,
    pub requests: u64,
    pub responses: u64,
    /// Request messages completed (LAST or ONLY packets of SEND / WRITE, READ and atomic
    /// requests), retransmissions excluded.
    pub messages: u64,
    pub acks: u64,
    pub naks: NakCounts,
    pub rnr_naks: u64,
    pub cnps: u64,
    pub ecn_ce: u64,
    /// Request packets whose PSN is not newer than the highest seen before (go-back-N and
    /// timeout retransmissions, duplicated READs).
    pub retransmissions: u64,
    #[serde(skip)]
    pub first_ts: u64,
    #[serde(skip)]
    pub last_ts: u64,
    #[serde(skip)]
    transport: Option<Transport>,
    #[serde(skip)]
    max_req_psn: Option<Psn>,
    /// Payload of requests that were not retransmissions (for goodput).
    #[serde(skip)]
    new_payload: u64,
    /// The timers of this flow's requests and their responses (the connection's `timing`),
    /// from its first request on. Boxed: flows move (table growth, ended incarnations) and a
    /// flow that sends no request pays nothing.
    #[serde(skip)]
    pub timing: Option<Box<Timing>>,
    /// CE marks on this flow and CNPs to or from it (the connection's `congestion`), from
    /// its first CE mark or CNP on; boxed for the same reason as `timing`.
    #[serde(skip)]
    pub congestion: Option<Box<FlowCongestion>>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NakCounts {
    pub psn_sequence_error: u64,
    pub invalid_request: u64,
    pub remote_access_error: u64,
    pub remote_operational_error: u64,
    pub invalid_rd_request: u64,
    pub reserved: u64,
}

impl NakCounts {
    fn add(&mut self, code: NakCode) {
        let c = match code {
            NakCode::PsnSequenceError => &mut self.psn_sequence_error,
            NakCode::InvalidRequest => &mut self.invalid_request,
            NakCode::RemoteAccessError => &mut self.remote_access_error,
            NakCode::RemoteOperationalError => &mut self.remote_operational_error,
            NakCode::InvalidRdRequest => &mut self.invalid_rd_request,
            NakCode::Reserved(_) => &mut self.reserved,
        };
        *c += 1;
    }
    fn total(&self) -> u64 {
        self.psn_sequence_error
            + self.invalid_request
            + self.remote_access_error
            + self.remote_operational_error
            + self.invalid_rd_request
            + self.reserved
    }
    fn merge(&mut self, o: &NakCounts) {
        self.psn_sequence_error += o.psn_sequence_error;
        self.invalid_request += o.invalid_request;
        self.remote_access_error += o.remote_access_error;
        self.remote_operational_error += o.remote_operational_error;
        self.invalid_rd_request += o.invalid_rd_request;
        self.reserved += o.reserved;
    }
}

impl FlowStats {
    /// Counts the packet; true when it is a CE-marked request or response.
    fn add(&mut self, p: &Packet<'_>, r: &Roce<'_>, ts: u64, len: u32) -> bool {
        if self.packets == 0 {
            self.first_ts = ts;
        }
        self.packets += 1;
        self.last_ts = self.last_ts.max(ts);
        self.bytes += u64::from(len);
        self.payload_bytes += r.payload_len as u64;
        let ce = p.ip.map_or(r.grh.is_some_and(|g| g.tclass & 3 == 3), |ip| ip.ecn == 3);
        self.ecn_ce += u64::from(ce);
        let Some(info) = r.info else { return false };
        self.transport.get_or_insert(info.transport);
        let psn = Psn::new(r.bth.psn);
        match info.role {
            Role::Congestion => self.cnps += 1,
            Role::Request => {
                self.requests += 1;
                let retx = self.max_req_psn.is_some_and(|m| psn <= m);
                if retx {
                    self.retransmissions += 1;
                } else {
                    self.max_req_psn = Some(psn);
                    self.new_payload += r.payload_len as u64;
                    if info.position.ends_message() {
                        self.messages += 1;
                    }
                }
            }
            Role::Response => {
                self.responses += 1;
                if let Some(a) = r.headers.aeth {
                    match a.kind() {
                        AethKind::Ack if info.operation == Operation::Acknowledge => self.acks += 1,
                        AethKind::Ack => {}
                        AethKind::RnrNak => self.rnr_naks += 1,
                        AethKind::Nak => self.naks.add(NakCode::from_value(a.value())),
                        AethKind::Reserved => {}
                    }
                }
            }
        }
        ce && info.role != Role::Congestion
    }

    /// An idle reconnect undone (the QP was not reset): this flow, the old incarnation's,
    /// counts what the provisional one (`o`) counted.
    pub fn resume(&mut self, o: &FlowStats) {
        self.merge(o);
    }

    fn merge(&mut self, o: &FlowStats) {
        if o.packets == 0 {
            return;
        }
        if self.packets == 0 || o.first_ts < self.first_ts {
            self.first_ts = o.first_ts;
        }
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.payload_bytes += o.payload_bytes;
        self.requests += o.requests;
        self.responses += o.responses;
        self.messages += o.messages;
        self.acks += o.acks;
        self.naks.merge(&o.naks);
        self.rnr_naks += o.rnr_naks;
        self.cnps += o.cnps;
        self.ecn_ce += o.ecn_ce;
        self.retransmissions += o.retransmissions;
        self.last_ts = self.last_ts.max(o.last_ts);
        self.new_payload += o.new_payload;
        if let Some(t) = &o.timing {
            self.timing.get_or_insert_with(Box::default).merge(t);
        }
    }
}

/// What `stats` counts, a consumer of the connection model: per frame (totals, ICRC, opcodes,
/// problems, CNP pacing) here, per flow in the model's slot ([`FlowStats`], kept by a
/// [`Checker`] beside its own state, one model for every consumer of the pass), per ended
/// incarnation in a list bounded by the cap. [`Stats`] is `stats`' own pass; `report` and
/// `export` feed a `Counters` from their checker.
#[derive(Debug)]
pub struct Counters {
    pub frames: u64,
    pub roce_v2: u64,
    pub roce_v1: u64,
    pub undecoded: u64,
    pub icrc: [u64; 4],
    /// `--nic-host`: the bad ICRCs of frames to that host (`rx_icrc_encapsulated`).
    pub nic_host: Option<IpAddr>,
    pub nic_host_bad_icrc: u64,
    /// `--nic-host`: the RoCE frames from or to that host.
    pub nic_host_frames: u64,
    /// `--nic-host`: the RoCE frames of each address seen (source or destination), at most
    /// [`NIC_HOSTS_MAX`] addresses; for the error naming the hosts when it saw none.
    nic_hosts: std::collections::HashMap<IpAddr, u64>,
    opcodes: Vec<u64>,
    problems: [u64; 32],
    listed: Retained<Vec<(FlowKey, FlowStats)>>,
    /// CNP pacing per IP pair and per destination, across connections.
    cnp_scopes: CnpScopes,
    first_ts: Option<u64>,
    last_ts: u64,
}

impl AsMut<FlowStats> for FlowStats {
    fn as_mut(&mut self) -> &mut FlowStats {
        self
    }
}

impl Counters {
    /// Counters listing at most `max_flows` ended incarnations (the model's cap).
    pub fn new(max_flows: usize) -> Self {
        Counters {
            frames: 0,
            roce_v2: 0,
            roce_v1: 0,
            undecoded: 0,
            icrc: [0; 4],
            nic_host: None,
            nic_host_bad_icrc: 0,
            nic_host_frames: 0,
            nic_hosts: std::collections::HashMap::new(),
            opcodes: vec![0; 256],
            problems: [0; 32],
            listed: Retained::new(max_flows),
            cnp_scopes: CnpScopes::new(max_flows),
            first_ts: None,
            last_ts: 0,
        }
    }

    /// Counts one frame, once `model` took it ([`Checker::feed`]) and the incarnations it
    /// ended were handed to [`Counters::ended`] (and those it resumed merged,
    /// [`FlowStats::resume`]).
    pub fn add<X: AsMut<FlowStats> + Default>(
        &mut self,
        model: &mut Checker<X>,
        frame: &FrameInfo,
        packet: Option<&Packet<'_>>,
    ) {
        let (number, ts, len) = (frame.number, frame.ts_ns, frame.len);
        self.frames += 1;
        self.first_ts.get_or_insert(ts);
        self.last_ts = self.last_ts.max(ts);
        let Some(p) = packet else {
            self.undecoded += 1;
            return;
        };
        for pr in p.problems.iter() {
            if let Some(c) = self.problems.get_mut((pr as u32).trailing_zeros() as usize) {
                *c += 1;
            }
        }
        let Some(r) = &p.roce else { return };
        match r.version.number() {
            1 => self.roce_v1 += 1,
            _ => self.roce_v2 += 1,
        }
        let i = match r.icrc_status {
            IcrcStatus::Ok => 0,
            IcrcStatus::Bad { .. } => 1,
            IcrcStatus::Unverifiable => 2,
            IcrcStatus::NotChecked => 3,
        };
        self.icrc[i] += 1;
        if i == 1 && self.nic_host.is_some() && self.nic_host == p.ip.map(|ip| ip.dst) {
            self.nic_host_bad_icrc += 1;
        }
        if let Some(host) = self.nic_host {
            self.nic_host_seen(host, p);
        }
        if let Some(c) = self.opcodes.get_mut(usize::from(r.bth.opcode)) {
            *c += 1;
        }
        let Some(obs) = model.last_observation() else { return };
        let mut cnp_peer = None;
        if let Some(f) = model.ext_mut(&obs.own).map(AsMut::as_mut) {
            let ce = f.add(p, r, ts, len);
            if obs.seen == Seen::Request {
                f.timing.get_or_insert_with(Box::default).request(frame, r);
            }
            if ce {
                f.congestion.get_or_insert_with(Box::default).ce_mark(number, ts);
            }
            if r.info.is_some_and(|i| i.role == Role::Congestion) {
                f.congestion.get_or_insert_with(Box::default).cnp(ts);
                cnp_peer = Some(model.peer_of(&obs.own));
            }
        }
        if let Some(peer) = cnp_peer {
            self.cnp(model, frame, obs.own, peer);
        }
        if let Seen::Response { stream: Some(s) } = obs.seen {
            if let Some(f) = model.ext_mut(&s).map(AsMut::as_mut) {
                if let Some(t) = &mut f.timing {
                    t.response(frame, r);
                }
            }
        }
    }

    /// `--nic-host`: counts a RoCE frame for the host and for the addresses it names.
    fn nic_host_seen(&mut self, host: IpAddr, p: &Packet<'_>) {
        let Some((src, dst)) = roce_conformance::host_pair(p) else { return };
        if src == host || dst == host {
            self.nic_host_frames += 1;
        }
        for a in [src, dst] {
            let room = self.nic_hosts.len() < NIC_HOSTS_MAX;
            match self.nic_hosts.get_mut(&a) {
                Some(n) => *n += 1,
                None if room => {
                    self.nic_hosts.insert(a, 1);
                }
                None => {}
            }
        }
    }

    /// `--nic-host` gave a host with no RoCE frame in the capture: the error that names it and
    /// the hosts seen (the busiest [`NIC_HOSTS_SHOWN`], then a count).
    pub fn nic_host_unseen(&self, input: &Input) -> Option<String> {
        let host = self.nic_host?;
        if self.nic_host_frames > 0 {
            return None;
        }
        let mut seen: Vec<(&IpAddr, &u64)> = self.nic_hosts.iter().collect();
        seen.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = seen
            .iter()
            .take(NIC_HOSTS_SHOWN)
            .map(|(a, n)| format!("{a} ({n} frame{})", if **n == 1 { "" } else { "s" }))
            .collect();
        let hosts = match seen.len() {
            0 => "no RoCE traffic at all".to_string(),
            n if n > NIC_HOSTS_SHOWN => {
                let more = if n >= NIC_HOSTS_MAX { "at least " } else { "" };
                format!("hosts seen: {} and {more}{} more", listed.join(", "), n - NIC_HOSTS_SHOWN)
            }
            _ => format!("hosts seen: {}", listed.join(", ")),
        };
        Some(format!(
            "--nic-host {host}: no RoCE traffic from or to it in {input}, nothing to set its \
             counters against ({hosts})"
        ))
    }

    /// A CNP on flow `own` (NP -> RP, DestQP = the RP's QP): the pacing scopes, and the
    /// marked flow (`own`'s peer, whose sender the CNP is for) pairs its first CE mark with it.
    fn cnp<X: AsMut<FlowStats> + Default>(
        &mut self,
        model: &mut Checker<X>,
        frame: &FrameInfo,
        own: FlowKey,
        peer: Option<FlowKey>,
    ) {
        self.cnp_scopes.cnp(frame.number, frame.ts_ns, own.src, own.dst);
        let marked = peer.and_then(|k| model.ext_mut(&k)).map(AsMut::as_mut);
        match marked {
            Some(m) => {
                let (bytes, first) = (m.bytes, m.first_ts);
                let c = m.congestion.get_or_insert_with(Box::default);
                c.cnp_to_sender(frame.number, frame.ts_ns, bytes, first);
            }
            None => {
                if let Some(f) = model.ext_mut(&own).map(AsMut::as_mut) {
                    f.congestion.get_or_insert_with(Box::default).cnp_unpaired();
                }
            }
        }
    }

    /// The top-level `congestion` object: CNP pacing per IP pair and per destination.
    pub fn cnp_scopes(&self) -> roce_conformance::timing::congestion::CnpScopesJson {
        self.cnp_scopes.json()
    }

    /// An incarnation the model ended, with the counters of its directions: listed (within
    /// the cap), what only a live flow needs dropped.
    pub fn ended(&mut self, info: ConnectionInfo, mut directions: Vec<(FlowKey, FlowStats)>) {
        // Kept only to be reported: what a live flow needs goes (BENCHMARKS.md, "Bounds").
        for (_, d) in directions.iter_mut() {
            if let Some(t) = d.timing.as_mut() {
                t.compact();
            }
        }
        self.listed.push(info, directions);
    }

    /// Ended incarnations listed now.
    pub fn listed_len(&self) -> usize {
        self.listed.len()
    }

    /// The connection incarnations, the busiest first, and how many were not listed: every
    /// incarnation must have been ended ([`Checker::end_all`]) and handed to
    /// [`Counters::ended`]; `cm` is the model's CM exchanges (the `negotiated` timers).
    pub fn connections(&mut self, cm: &[CmExchange]) -> (Vec<Connection>, u64) {
        let listed = std::mem::replace(&mut self.listed, Retained::new(1));
        let (listed, not_listed) = listed.into_sorted();
        let mut out: Vec<Connection> = listed
            .into_iter()
            .map(|(info, dirs)| {
                let mut total = FlowStats::default();
                for (_, d) in &dirs {
                    total.merge(d);
                }
                let duration_ns = total.last_ts.saturating_sub(total.first_ts);
                let goodput_bps = if duration_ns > 0 {
                    total.new_payload as f64 * 8e9 / duration_ns as f64
                } else {
                    0.0
                };
                let mut timing = total
                    .timing
                    .as_deref()
                    .map_or_else(|| Timing::default().report(), Timing::report);
                timing.negotiated = exchange_of(cm, &info).map(|x| compare(&timing, x));
                let congestion = dirs
                    .iter()
                    .filter_map(|(_, d)| Some(d.congestion.as_deref()?.report(d.bytes, d.last_ts)))
                    .fold(CongestionReport::default(), |a, b| a.merged(&b))
                    .json(total.ecn_ce, total.cnps);
                Connection {
                    timing,
                    congestion,
                    info,
                    total,
                    duration_ns,
                    goodput_bps,
                    directions: dirs
                        .into_iter()
                        .map(|(k, stats)| Direction {
                            src: k.src,
                            dst: k.dst,
                            dest_qp: k.dest_qp,
                            packets: stats.packets,
                            first_ts: stats.first_ts,
                            last_ts: stats.last_ts,
                            timing: stats.timing.as_deref().map(Timing::report),
                            stats,
                        })
                        .collect(),
                }
            })
            .collect();
        out.sort_by_key(|c| (std::cmp::Reverse(c.total.packets), c.info.first_frame));
        (out, not_listed)
    }

    fn opcode_histogram(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = Vec::new();
        for (op, &n) in self.opcodes.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let name = opcode::name(op as u8);
            // Reserved opcodes share a name: add them up.
            match v.iter_mut().find(|(k, _)| *k == name) {
                Some(e) => e.1 += n,
                None => v.push((name, n)),
            }
        }
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    fn problem_counts(&self) -> Vec<(Problem, u64)> {
        Problem::ALL
            .iter()
            .filter_map(|p| {
                let n = *self.problems.get((*p as u32).trailing_zeros() as usize)?;
                (n > 0).then_some((*p, n))
            })
            .collect()
    }

    pub fn roce_frames(&self) -> u64 {
        self.roce_v1 + self.roce_v2
    }
}

/// `stats`' pass: the connection model alone ([`Checker::without_rules`], each flow keeping
/// its [`FlowStats`]) and the [`Counters`] fed from it.
#[derive(Debug)]
pub struct Stats {
    model: Checker<FlowStats>,
    pub counters: Counters,
}

impl Stats {
    /// Counting with the model's options (`--max-flows`, `--pmtu`, reconnect idle time).
    pub fn new(model: ModelOptions) -> Self {
        let opts = Options {
            max_flows: model.max_flows,
            pmtu: model.pmtu,
            reconnect_idle_ns: model.reconnect_idle_ns,
            ..Options::default()
        };
        Stats { model: Checker::without_rules(opts), counters: Counters::new(model.max_flows) }
    }

    /// Counts one frame.
    pub fn add(
        &mut self,
        number: u64,
        ts: u64,
        len: u32,
        caplen: u32,
        packet: Option<&Packet<'_>>,
    ) {
        let frame = FrameInfo { number, ts_ns: ts, caplen, len };
        match packet {
            Some(p) => self.model.feed(&frame, p),
            None => self.model.feed_undecoded(&frame),
        }
        self.settle();
        self.counters.add(&mut self.model, &frame, packet);
    }

    /// The incarnations the model ended go to the list; an idle reconnect undone (the QP was
    /// not reset): the old incarnation counts what the provisional one counted.
    fn settle(&mut self) {
        if self.model.has_ended() {
            for e in self.model.take_ended() {
                self.counters.ended(e.info, e.directions);
            }
        }
        for (k, provisional) in self.model.take_resumed() {
            if let Some(f) = self.model.ext_mut(&k) {
                f.resume(&provisional);
            }
        }
    }

    /// The sizes of what `stats` holds (to prove they stay within the cap): the model's
    /// tables, the ended connections kept for the report, and the CM exchanges listed.
    pub fn state(&self) -> (roce_conformance::ModelStats, usize, usize) {
        (self.model.model_stats(), self.counters.listed_len(), self.model.cm_exchanges().len())
    }

    /// The incarnation of the connection flow `key` is in now (after [`Stats::add`] of its
    /// packet): what a filter's [`crate::filter::Selection`] remembers.
    pub fn incarnation_of(&self, key: &FlowKey) -> Option<u32> {
        self.model.incarnation_of(key)
    }

    /// The CM exchanges the model logged.
    pub fn cm_exchanges(&self) -> &[CmExchange] {
        self.model.cm_exchanges()
    }

    /// The connection incarnations, the busiest first, and how many were not listed.
    pub fn connections(&mut self) -> (Vec<Connection>, u64) {
        self.model.end_all();
        self.settle();
        self.counters.connections(self.model.cm_exchanges())
    }
}

/// One direction inside a connection.
#[derive(Debug, Serialize)]
pub struct Direction {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dest_qp: u32,
    pub packets: u64,
    #[serde(serialize_with = "roce_conformance::json::ts")]
    pub first_ts: u64,
    #[serde(serialize_with = "roce_conformance::json::ts")]
    pub last_ts: u64,
    /// The timers of this direction's requests alone (null when it sent none): when both
    /// sides of a connection send requests, which side's timer each measurement is
    /// (docs/timing.md). The connection's `timing` is both directions together.
    pub timing: Option<TimingReport>,
    #[serde(flatten)]
    pub stats: FlowStats,
}

/// A connection incarnation (or a single direction when its partner was not identified):
/// the connection model's description, the same object `check --format json` lists, then
/// the counters of `stats`.
#[derive(Debug, Serialize)]
pub struct Connection {
    #[serde(flatten)]
    pub info: ConnectionInfo,
    #[serde(flatten)]
    pub total: FlowStats,
    pub duration_ns: u64,
    /// Payload bits per second of requests that were not retransmissions.
    pub goodput_bps: f64,
    /// The timers measured on the wire, both directions' requesters together (docs/timing.md).
    pub timing: TimingReport,
    /// CE marks, CNPs, ECN-CE -> CNP latency, per-QP CNP pacing and the senders' rates
    /// around CNPs (docs/congestion.md).
    pub congestion: CongestionJson,
    pub directions: Vec<Direction>,
}

/// `stats --format json` (docs/json.md, docs/schema/stats.schema.json).
#[derive(Serialize)]
struct StatsJson<'a> {
    schema: &'static str,
    frames: u64,
    roce_frames: u64,
    rocev2_frames: u64,
    rocev1_frames: u64,
    undecoded_frames: u64,
    /// The undecoded frames by reason and link type (absent when every frame was decoded).
    #[serde(skip_serializing_if = "<[UndecodedGroup]>::is_empty")]
    undecoded: &'a [UndecodedGroup],
    icrc: IcrcCounts,
    opcodes: BTreeMap<&'static str, u64>,
    /// Frames with each problem, in the problems' order.
    problems: Vec<ProblemCount>,
    duration_ns: u64,
    connections: Vec<Connection>,
    #[serde(skip_serializing_if = "is_zero")]
    connections_not_listed: u64,
    cm_connections: &'a [CmExchange],
    /// CNP pacing per IP pair and per destination IP, across connections.
    congestion: roce_conformance::timing::congestion::CnpScopesJson,
    warnings: &'a [String],
    /// `--nic-counters`: the host's counter deltas against the capture (docs/nic-counters.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    nic_counters: Option<&'a Reconciliation>,
    /// `-c`, `--frames`: the frames read (absent: all).
    #[serde(skip_serializing_if = "Window::is_all")]
    window: &'a Window,
    /// `-Y`, `--conn`: what the filter selected (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<crate::filter::SelectionJson<'a>>,
}

#[derive(Serialize)]
struct ProblemCount {
    code: &'static str,
    message: &'static str,
    frames: u64,
}

#[derive(Serialize)]
struct IcrcCounts {
    ok: u64,
    bad: u64,
    unverifiable: u64,
    not_checked: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Addresses `--nic-host` counts frames of, for its error (memory stays bounded).
const NIC_HOSTS_MAX: usize = 4096;

/// Hosts its error lists.
const NIC_HOSTS_SHOWN: usize = 5;

/// Which part of the capture `stats` counts, and on how many threads.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// `--shard K/N`: the host pairs of this shard.
    pub shard: Shard,
    /// `--threads N`.
    pub threads: crate::threads::Threads,
    /// `-Y` / `--conn`: the connections listed (the capture's totals stay whole).
    pub filter: Option<&'a crate::filter::DisplayFilter>,
}

/// Runs the command.
pub fn run(
    input: &Input,
    format: Format,
    cfg: &Config,
    model: ModelOptions,
    nic: Option<&NicInput>,
    scope: Scope<'_>,
) -> Result<(), InputError> {
    let Scope { shard, threads, filter } = scope;
    if (filter.is_some() || !input.window.is_all()) && nic.is_some() {
        return Err(InputError(
            "--nic-counters reconciles the host's counters with the whole capture: not with \
             -Y/--filter, --conn, -c or --frames"
                .into(),
        ));
    }
    let mut stats = Stats::new(model);
    stats.counters.nic_host = nic.map(|n| n.host);
    let mut selection = filter.map(crate::filter::Selection::new);
    let summary = crate::threads::for_each_frame_on(threads, input, cfg, |d| {
        if !shard.owns(d.packet.as_ref().ok()) {
            return;
        }
        let f = &d.frame;
        stats.add(f.number, f.ts_ns, f.len, f.caplen, d.packet.as_ref().ok());
        if let Some(sel) = &mut selection {
            sel.observe(d, |k| stats.incarnation_of(k));
        }
    })?
    .of_shard(shard);
    warn_undecoded(&summary.undecoded);
    if let Some(e) = stats.counters.nic_host_unseen(input) {
        let shard = if shard.is_all() {
            String::new()
        } else {
            format!(" (in the host pairs of --shard {}/{})", shard.index(), shard.count())
        };
        return Err(InputError(format!("{e}{shard}")));
    }
    let (mut connections, not_listed) = stats.connections();
    if let Some(sel) = &selection {
        connections.retain(|c| sel.selects(&c.info.connection));
    }
    let selected = selection.as_ref().map(|s| s.describe(connections.len()));
    let connections_listed = connections.len();
    let nic = nic
        .map(|n| n.reconcile(&connections, not_listed, stats.counters.nic_host_bad_icrc))
        .transpose()
        .map_err(|e| InputError(format!("--nic-counters: {e}")))?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let res = match format {
        Format::Json => {
            let j = StatsJson {
                schema: roce_conformance::json::SCHEMA_STATS,
                frames: stats.counters.frames,
                roce_frames: stats.counters.roce_frames(),
                rocev2_frames: stats.counters.roce_v2,
                rocev1_frames: stats.counters.roce_v1,
                undecoded_frames: stats.counters.undecoded,
                undecoded: &summary.undecoded,
                icrc: IcrcCounts {
                    ok: stats.counters.icrc[0],
                    bad: stats.counters.icrc[1],
                    unverifiable: stats.counters.icrc[2],
                    not_checked: stats.counters.icrc[3],
                },
                opcodes: stats.counters.opcode_histogram().into_iter().collect(),
                problems: stats
                    .counters
                    .problem_counts()
                    .into_iter()
                    .map(|(p, n)| ProblemCount { code: p.code(), message: p.message(), frames: n })
                    .collect(),
                duration_ns: stats
                    .counters
                    .last_ts
                    .saturating_sub(stats.counters.first_ts.unwrap_or(0)),
                connections,
                connections_not_listed: not_listed,
                cm_connections: stats.cm_exchanges(),
                congestion: stats.counters.cnp_scopes(),
                warnings: &summary.warnings,
                nic_counters: nic.as_ref(),
                window: &input.window,
                selection: selection.as_ref().map(|s| s.json(connections_listed)),
            };
            serde_json::to_writer_pretty(&mut out, &j)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        Format::Text => {
            let (conns, warnings) = (&connections, &summary.warnings);
            let mut t =
                text_report(input, &stats, conns, not_listed, warnings, selected.as_deref());
            if let Some(r) = &nic {
                crate::nic_counters::write_text(&mut t, r);
            }
            out.write_all(t.as_bytes())
        }
    };
    crate::output::written(res.and_then(|()| out.flush()))
}

fn secs(ns: u64) -> String {
    format!("{}.{:06} s", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

fn text_report(
    input: &Input,
    s: &Stats,
    conns: &[Connection],
    not_listed: u64,
    warnings: &[String],
    selected: Option<&str>,
) -> String {
    let mut t = String::new();
    let dur = s.counters.last_ts.saturating_sub(s.counters.first_ts.unwrap_or(0));
    let _ = writeln!(t, "Capture   {input}");
    let _ = writeln!(
        t,
        "Frames    {} ({} RoCE: {} RoCEv2, {} RoCEv1; {} not decoded), duration {}",
        s.counters.frames,
        s.counters.roce_frames(),
        s.counters.roce_v2,
        s.counters.roce_v1,
        s.counters.undecoded,
        secs(dur)
    );
    let _ = writeln!(
        t,
        "ICRC      {} ok, {} bad, {} unverifiable",
        s.counters.icrc[0], s.counters.icrc[1], s.counters.icrc[2]
    );
    let _ = writeln!(t, "\nOpcodes");
    for (name, n) in s.counters.opcode_histogram() {
        let _ = writeln!(t, "  {name:<40} {n:>10}");
    }
    let problems = s.counters.problem_counts();
    if !problems.is_empty() {
        let _ = writeln!(t, "\nProblems (frames)");
        for (p, n) in problems {
            let _ = writeln!(t, "  {:<70} {n:>8}", p.message());
        }
    }
    if let Some(line) = input.window.describe() {
        let _ = writeln!(t, "\n{line}");
    }
    if let Some(line) = selected {
        let _ = writeln!(t, "\n{line}");
    }
    let _ = writeln!(t, "\nConnections ({})", conns.len());
    if not_listed > 0 {
        let _ = writeln!(t, "  ({not_listed} more, with fewer packets, counted but not listed)");
    }
    for c in conns {
        let c_info = &c.info;
        let how = c_info
            .paired_by
            .map_or("one direction seen".to_string(), |h| format!("paired by {}", h.as_str()));
        let _ = writeln!(t, "  {}  {}  ({how})", c_info.connection, c_info.transport);
        if !c_info.began.why.is_empty() {
            let _ = writeln!(t, "    began: {}", c_info.began.why);
        }
        if c_info.ended.how != EndedBy::CaptureEnd {
            let _ = writeln!(t, "    ended: {}", c_info.ended.why);
        }
        let x = &c.total;
        let _ = writeln!(
            t,
            "    {} packets, {} bytes, {} payload bytes, {} messages, {} ACKs, {} NAKs, {} RNR NAKs, {} CNPs, {} ECN-CE, {} retransmitted PSNs",
            x.packets,
            x.bytes,
            x.payload_bytes,
            x.messages,
            x.acks,
            x.naks.total(),
            x.rnr_naks,
            x.cnps,
            x.ecn_ce,
            x.retransmissions
        );
        if x.naks.total() > 0 {
            let n = &x.naks;
            let _ = writeln!(
                t,
                "    NAKs: {} PSN sequence error, {} invalid request, {} remote access error, {} remote operational error, {} other",
                n.psn_sequence_error,
                n.invalid_request,
                n.remote_access_error,
                n.remote_operational_error,
                n.invalid_rd_request + n.reserved
            );
        }
        let _ = writeln!(
            t,
            "    duration {}, goodput {:.3} Mb/s",
            secs(c.duration_ns),
            c.goodput_bps / 1e6
        );
        crate::timing_text::write(&mut t, &c.timing);
        crate::timing_text::write_by_requester(&mut t, &c.directions);
        crate::timing_text::write_congestion(&mut t, &c.congestion);
    }
    crate::timing_text::write_cnp_scopes(&mut t, &s.counters.cnp_scopes());
    let cm = s.cm_exchanges();
    if !cm.is_empty() {
        let _ = writeln!(t, "\nCM connections ({})", cm.len());
        for c in cm {
            let pq = c.passive_qpn.map_or("?".to_string(), |q| format!("0x{q:06x}"));
            let ppsn = c.rep_starting_psn.map_or("?".to_string(), |q| q.to_string());
            let _ = writeln!(
                t,
                "  {} QP 0x{:06x} (start PSN {}) -> {} QP {pq} (start PSN {ppsn}), {}, PMTU {}, {}{}  [frames {}..{}]",
                c.active,
                c.active_qpn,
                c.req_starting_psn,
                c.passive,
                c.transport,
                c.pmtu.map_or_else(|| format!("code {} (reserved)", c.pmtu_code), |m| m.to_string()),
                c.outcome,
                c.reject_reason.map_or(String::new(), |r| format!(" ({r})")),
                c.req_frame,
                c.last_frame
            );
        }
    }
    for w in warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    t
}
