//! `stats`' counting, a consumer of the pass: per frame (totals, ICRC verdicts, opcodes,
//! problems, CNP pacing) in [`Counters`], per flow in the connection model's slot
//! ([`FlowStats`]: packets, bytes, messages, ACK/NAK kinds, CNPs, ECN-CE marks,
//! retransmissions, the timers and congestion), per ended incarnation in a list bounded by
//! the model's cap. [`Stats`] is the pass `stats` runs (the model alone, no rule judged);
//! `report` and `export` feed [`Counters`] from the checker they run anyway, so one model
//! serves both. Counting allocates only when a new flow appears, never per frame.

use std::net::IpAddr;

use roce_parser::{
    opcode_name, AethKind, EncapKind, IcrcStatus, NakCode, Operation, Packet, Problem, Roce,
    RoceVersion, Role, Transport, ENCAPSULATIONS, ENCAP_CODES,
};

use crate::PacketEvent;
use serde::Serialize;

use roce_conformance::internal::timing::{
    compare, CnpScopes, CongestionJson, CongestionReport, FlowCongestion,
};
use roce_conformance::internal::{exchange_of, Retained, Seen};
use roce_conformance::{
    Checker, CmExchange, ConnectionInfo, FlowKey, FrameInfo, ModelOptions, Options, Timing,
    TimingReport,
};

/// Addresses `--nic-host` counts frames of, for its error (memory stays bounded).
pub const NIC_HOSTS_MAX: usize = 4096;

/// Hosts its error lists.
pub const NIC_HOSTS_SHOWN: usize = 5;

/// Mirror sessions and virtual networks [`TunnelCounts`] keeps apart (memory stays bounded;
/// frames of more are counted, [`TunnelCounts::ids_not_listed`]).
pub const TUNNEL_IDS_MAX: usize = 4096;

/// Frames that arrived in tunnels (switch mirrors, overlays): per encapsulation, and per
/// ERSPAN mirror session and VXLAN / Geneve virtual network. A frame in two tunnels counts
/// under both.
#[derive(Debug, Clone, Default)]
pub struct TunnelCounts {
    /// Frames per kind, in [`ENCAPSULATIONS`]' order.
    kinds: [u64; ENCAP_CODES.len()],
    /// Frames per (kind, session ID or VNI).
    ids: std::collections::BTreeMap<(usize, u32), u64>,
    /// The last (kind, ID) counted and its frames not yet in `ids`: a mirror session's frames
    /// come in runs, and a run costs one map lookup instead of one a frame.
    run: Option<((usize, u32), u64)>,
    /// Frames whose session or VNI was past [`TUNNEL_IDS_MAX`].
    ids_not_listed: u64,
}

/// One encapsulation's frames, for the documents: see [`TunnelCounts::per_kind`].
#[derive(Debug, Clone, Serialize)]
pub struct TunnelCount {
    /// The kind's code (`erspan2`, `vxlan`, ... : the frame JSON's `encap[].kind`).
    pub kind: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Frames that arrived in it.
    pub frames: u64,
    /// ERSPAN II / III: frames per mirror session, by session ID.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<IdCount>,
    /// VXLAN / Geneve: frames per virtual network, by VNI.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vnis: Vec<IdCount>,
}

/// Frames of one mirror session or virtual network.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IdCount {
    /// The ERSPAN session ID or the VNI.
    pub id: u32,
    /// Frames with it.
    pub frames: u64,
}

impl TunnelCounts {
    /// Counts the tunnels of a frame that arrived in one. Out of line: host captures never
    /// come here.
    #[inline(never)]
    pub fn add(&mut self, p: &Packet<'_>) {
        for e in p.tunnels() {
            let k = e.kind().index();
            if let Some(n) = self.kinds.get_mut(k) {
                *n += 1;
            }
            let id = e.tunnel.session_id().map(u32::from).or(e.tunnel.vni());
            if let Some(id) = id {
                match &mut self.run {
                    Some((key, n)) if *key == (k, id) => *n += 1,
                    run => {
                        if let Some((key, n)) = run.replace(((k, id), 1)) {
                            self.flush(key, n);
                        }
                    }
                }
            }
        }
    }

    /// Adds `n` frames of `key` to the map, or to `ids_not_listed` past the cap.
    fn flush(&mut self, key: (usize, u32), n: u64) {
        let room = self.ids.len() < TUNNEL_IDS_MAX;
        match self.ids.get_mut(&key) {
            Some(m) => *m += n,
            None if room => {
                self.ids.insert(key, n);
            }
            None => self.ids_not_listed += n,
        }
    }

    /// Frames whose mirror session or VNI was first seen past [`TUNNEL_IDS_MAX`] of them.
    pub fn ids_not_listed(&self) -> u64 {
        let mut all = self.clone();
        if let Some((key, n)) = all.run.take() {
            all.flush(key, n);
        }
        all.ids_not_listed
    }

    /// Whether no frame arrived in a tunnel.
    pub fn is_empty(&self) -> bool {
        self.kinds.iter().all(|&n| n == 0)
    }

    /// The kinds seen, in [`ENCAPSULATIONS`]' order, with their sessions or VNIs in order.
    pub fn per_kind(&self) -> Vec<TunnelCount> {
        let mut all = self.clone();
        if let Some((key, n)) = all.run.take() {
            all.flush(key, n);
        }
        let mut out = Vec::new();
        for (k, info) in ENCAPSULATIONS.iter().enumerate() {
            let frames = self.kinds.get(k).copied().unwrap_or(0);
            if frames == 0 {
                continue;
            }
            let ids: Vec<IdCount> = all
                .ids
                .range((k, 0)..=(k, u32::MAX))
                .map(|(&(_, id), &frames)| IdCount { id, frames })
                .collect();
            let vni = matches!(info.kind, EncapKind::Vxlan | EncapKind::Geneve);
            let (sessions, vnis) = if vni { (Vec::new(), ids) } else { (ids, Vec::new()) };
            out.push(TunnelCount { kind: info.code, name: info.name, frames, sessions, vnis });
        }
        out
    }
}

/// Counters of one direction.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowStats {
    /// Serialized by the owner ([`Direction`], or the connection's [`ConnectionInfo`]).
    #[serde(skip)]
    pub packets: u64,
    /// Bytes on the wire (frame lengths).
    pub bytes: u64,
    /// Payload bytes (after the transport headers, before the ICRC).
    pub payload_bytes: u64,
    /// Request packets (SEND, WRITE, READ request, atomics), retransmissions included.
    pub requests: u64,
    /// Response packets (ACK, NAK, READ responses, atomic ACKs).
    pub responses: u64,
    /// Request messages completed (LAST or ONLY packets of SEND / WRITE, READ and atomic
    /// requests), retransmissions excluded.
    pub messages: u64,
    /// ACKs (the Acknowledge opcode with an AETH ACK syndrome).
    pub acks: u64,
    /// NAKs, by AETH NAK code.
    pub naks: NakCounts,
    /// RNR NAKs (receiver not ready).
    pub rnr_naks: u64,
    /// CNPs (congestion notification packets) this flow carried.
    pub cnps: u64,
    /// Packets marked ECN-CE (Congestion Experienced) by the network.
    pub ecn_ce: u64,
    /// Request packets whose PSN is not newer than the highest seen before (go-back-N and
    /// timeout retransmissions, duplicated READs).
    pub retransmissions: u64,
    /// The flow's first packet's time, ns since the epoch.
    #[serde(skip)]
    pub first_ts: u64,
    /// The flow's last packet's time, ns since the epoch.
    #[serde(skip)]
    pub last_ts: u64,
    #[serde(skip)]
    transport: Option<Transport>,
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

/// NAKs by the code of their AETH syndrome (IBA Vol. 1, 9.7.5.2.2, table 44).
#[derive(Debug, Clone, Default, Serialize)]
pub struct NakCounts {
    /// Code 0: PSN sequence error (the responder asks for go-back-N from the PSN it names).
    pub psn_sequence_error: u64,
    /// Code 1: invalid request.
    pub invalid_request: u64,
    /// Code 2: remote access error (R_Key, bounds or access rights).
    pub remote_access_error: u64,
    /// Code 3: remote operational error.
    pub remote_operational_error: u64,
    /// Code 4: invalid RD request.
    pub invalid_rd_request: u64,
    /// Reserved codes.
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
    /// NAKs of every code.
    pub fn total(&self) -> u64 {
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
    /// Counts the packet, with what the model decided of it (`ev`).
    #[inline]
    fn add(&mut self, ev: &PacketEvent<'_, '_>, r: &Roce<'_>, ts: u64, len: u32) {
        if self.packets == 0 {
            self.first_ts = ts;
        }
        self.packets += 1;
        self.last_ts = self.last_ts.max(ts);
        self.bytes += u64::from(len);
        self.payload_bytes += r.payload_len as u64;
        self.ecn_ce += u64::from(ev.ecn_ce);
        let Some(info) = r.info else { return };
        self.transport.get_or_insert(info.transport);
        match info.role {
            Role::Congestion => self.cnps += 1,
            Role::Request => {
                self.requests += 1;
                if ev.retransmitted() {
                    self.retransmissions += 1;
                } else {
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
    /// Frames read.
    pub frames: u64,
    /// RoCEv2 frames (over UDP port 4791).
    pub roce_v2: u64,
    /// RoCEv1 frames (EtherType 0x8915).
    pub roce_v1: u64,
    /// Native InfiniBand frames (an LRH, then the same transport).
    pub infiniband: u64,
    /// Native InfiniBand frames without a GRH, not in the connection model (their endpoints
    /// are LIDs).
    pub ib_unmodelled: u64,
    /// Frames no network layer could be decoded from.
    pub undecoded: u64,
    /// Frames that arrived in tunnels, per encapsulation and mirror session.
    pub tunnels: TunnelCounts,
    /// RoCE frames by ICRC verdict: ok, bad, unverifiable, not checked.
    pub icrc: [u64; 4],
    /// `--nic-host`: the bad ICRCs of frames to that host (`rx_icrc_encapsulated`).
    pub nic_host: Option<IpAddr>,
    /// `--nic-host`: the bad ICRCs of frames to that host, as the NIC would count them.
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

/// Which slot [`Counters::add_with`] hands its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotOf {
    /// The packet's own flow's.
    Own,
    /// For a response, the slot of the requester's flow it answers
    /// ([`roce_conformance::Seen::Response`]'s stream).
    Stream,
}

impl Counters {
    /// Counters listing at most `max_flows` ended incarnations (the model's cap).
    pub fn new(max_flows: usize) -> Self {
        Counters {
            frames: 0,
            roce_v2: 0,
            roce_v1: 0,
            infiniband: 0,
            ib_unmodelled: 0,
            undecoded: 0,
            tunnels: TunnelCounts::default(),
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

    /// Counts one frame, once `model` took it ([`crate::feed`], which made `ev`) and the
    /// incarnations it ended were handed to [`Counters::ended`] (and those it resumed merged,
    /// [`FlowStats::resume`]): [`Counters::settle`].
    #[inline]
    pub fn add<X: AsMut<FlowStats> + Default>(
        &mut self,
        model: &mut Checker<X>,
        ev: &PacketEvent<'_, '_>,
    ) {
        self.add_with(model, ev, |_, _| {});
    }

    /// [`Counters::add`], and `then` called with each slot the counters looked up: the
    /// packet's own flow's ([`SlotOf::Own`]), then for a response the requester's flow it
    /// answers ([`SlotOf::Stream`]). Why: a consumer with state of its own in the slot (the
    /// report's series) updates it in the same table lookups, not in lookups of its own (one
    /// lookup of a flow costs about as much as the counters it holds). Returns whether the
    /// stream's slot was found.
    pub fn add_with<X: AsMut<FlowStats> + Default>(
        &mut self,
        model: &mut Checker<X>,
        ev: &PacketEvent<'_, '_>,
        mut then: impl FnMut(&mut X, SlotOf),
    ) -> bool {
        let frame = &ev.info;
        let (number, ts, len) = (frame.number, frame.ts_ns, frame.len);
        self.frames += 1;
        self.first_ts.get_or_insert(ts);
        self.last_ts = self.last_ts.max(ts);
        let Some(p) = ev.packet else {
            self.undecoded += 1;
            return false;
        };
        if p.is_encapsulated() {
            self.tunnels.add(p);
        }
        // Most frames have none: the set's iterator walks the whole problem table.
        if !p.problems.is_empty() {
            for pr in p.problems.iter() {
                if let Some(c) = self.problems.get_mut((pr as u32).trailing_zeros() as usize) {
                    *c += 1;
                }
            }
        }
        let Some(r) = &p.roce else { return false };
        match r.version {
            RoceVersion::V1 => self.roce_v1 += 1,
            RoceVersion::V2 => self.roce_v2 += 1,
            RoceVersion::Infiniband => {
                self.infiniband += 1;
                self.ib_unmodelled += u64::from(r.grh.is_none());
            }
        }
        let i = match r.icrc_status {
            IcrcStatus::Ok => 0,
            IcrcStatus::Bad { .. } => 1,
            IcrcStatus::Unverifiable => 2,
            IcrcStatus::NotChecked => 3,
        };
        if let Some(c) = self.icrc.get_mut(i) {
            *c += 1;
        }
        if i == 1 && self.nic_host.is_some() && self.nic_host == p.ip.map(|ip| ip.dst) {
            self.nic_host_bad_icrc += 1;
        }
        if let Some(host) = self.nic_host {
            self.nic_host_seen(host, p);
        }
        if let Some(c) = self.opcodes.get_mut(usize::from(r.bth.opcode)) {
            *c += 1;
        }
        let Some(obs) = ev.observation else { return false };
        let mut cnp_peer = None;
        if let Some(x) = model.ext_mut(&obs.own) {
            let f = x.as_mut();
            f.add(ev, r, ts, len);
            if obs.seen == Seen::Request {
                f.timing.get_or_insert_with(Box::default).request(frame, r, obs.retransmitted);
            }
            if ev.ecn_ce && !ev.cnp && r.info.is_some() {
                f.congestion.get_or_insert_with(Box::default).ce_mark(number, ts);
            }
            if ev.cnp {
                f.congestion.get_or_insert_with(Box::default).cnp(ts);
            }
            then(x, SlotOf::Own);
            if ev.cnp {
                cnp_peer = Some(model.peer_of(&obs.own));
            }
        }
        if let Some(peer) = cnp_peer {
            self.cnp(model, frame, obs.own, peer);
        }
        if let Seen::Response { stream: Some(s) } = obs.seen {
            if let Some(x) = model.ext_mut(&s) {
                if let Some(t) = &mut x.as_mut().timing {
                    t.response(frame, r);
                }
                then(x, SlotOf::Stream);
                return true;
            }
        }
        false
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
    pub fn nic_host_unseen(&self, input: &dyn std::fmt::Display) -> Option<String> {
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
    pub fn cnp_scopes(&self) -> roce_conformance::internal::timing::congestion::CnpScopesJson {
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

    /// After each [`Checker::feed`] of a model whose flows keep [`FlowStats`] alone (`stats`,
    /// `export`): the incarnations it ended go to the list ([`Counters::ended`]), and an idle
    /// reconnect it undid gives the provisional incarnation's counts back to the old one.
    #[inline(always)]
    pub fn settle(&mut self, model: &mut Checker<FlowStats>) {
        // Tested on every frame, true on few: the work out of line.
        if model.has_ended() || model.has_resumed() {
            self.settle_now(model);
        }
    }

    #[inline(never)]
    fn settle_now(&mut self, model: &mut Checker<FlowStats>) {
        if model.has_ended() {
            for e in model.take_ended() {
                self.ended(e.info, e.directions);
            }
        }
        if model.has_resumed() {
            for (k, provisional) in model.take_resumed() {
                if let Some(f) = model.ext_mut(&k) {
                    f.resume(&provisional);
                }
            }
        }
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

    /// Frames per opcode name, the most frequent first (reserved opcodes added up).
    pub fn opcode_histogram(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = Vec::new();
        for (op, &n) in self.opcodes.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let name = opcode_name(op as u8);
            // Reserved opcodes share a name: add them up.
            match v.iter_mut().find(|(k, _)| *k == name) {
                Some(e) => e.1 += n,
                None => v.push((name, n)),
            }
        }
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    /// Frames with each problem, in the problems' order.
    pub fn problem_counts(&self) -> Vec<(Problem, u64)> {
        Problem::ALL
            .iter()
            .filter_map(|p| {
                let n = *self.problems.get((*p as u32).trailing_zeros() as usize)?;
                (n > 0).then_some((*p, n))
            })
            .collect()
    }

    /// From the first frame's time to the last's, ns.
    pub fn duration_ns(&self) -> u64 {
        self.last_ts.saturating_sub(self.first_ts.unwrap_or(0))
    }

    /// RoCE frames, v1 and v2 (native InfiniBand ones are [`Counters::infiniband`]).
    pub fn roce_frames(&self) -> u64 {
        self.roce_v1 + self.roce_v2
    }
}

/// `stats`' pass: the connection model alone ([`Checker::without_rules`], each flow keeping
/// its [`FlowStats`]) and the [`Counters`] fed from it.
#[derive(Debug)]
pub struct Stats {
    model: Checker<FlowStats>,
    /// What is counted.
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
        let ev = crate::feed_packet(&mut self.model, frame, packet);
        self.settle();
        self.counters.add(&mut self.model, &ev);
    }

    #[inline(always)]
    /// Counts one frame of the pass when its host pair is in `shard` (`--shard K/N`,
    /// `Shard::ALL` for every frame); the event the model made of it, for other consumers.
    pub fn frame<'e, 'a>(
        &mut self,
        shard: roce_conformance::Shard,
        d: &'e crate::Decoded<'a>,
    ) -> Option<PacketEvent<'e, 'a>> {
        let ev = crate::feed(&mut self.model, shard, d)?;
        self.settle();
        self.counters.add(&mut self.model, &ev);
        Some(ev)
    }

    /// The incarnations the model ended go to the list; an idle reconnect undone (the QP was
    /// not reset): the old incarnation counts what the provisional one counted.
    #[inline]
    fn settle(&mut self) {
        self.counters.settle(&mut self.model);
    }

    /// The sizes of what `stats` holds (to prove they stay within the cap): the model's
    /// tables, the ended connections kept for the report, and the CM exchanges listed.
    pub fn state(&self) -> (roce_conformance::ModelStats, usize, usize) {
        (self.model.model_stats(), self.counters.listed_len(), self.model.cm_exchanges().len())
    }

    /// The incarnation of the connection flow `key` is in now (after [`Stats::add`] of its
    /// packet): what a display filter's selection remembers.
    pub fn incarnation_of(&self, key: &FlowKey) -> Option<u32> {
        self.model.incarnation_of(key)
    }

    /// The connection the flow `key` belongs to now, as findings name it (several taps: the
    /// connection a packet lost between them is listed under, [`crate::Taps::attach`]).
    pub fn connection_of(&self, key: &FlowKey) -> roce_conformance::ConnId {
        self.model.connection_of(key)
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
    /// The direction's source address.
    pub src: IpAddr,
    /// The direction's destination address.
    pub dst: IpAddr,
    /// The DestQP its packets carry.
    pub dest_qp: u32,
    /// Its packets.
    pub packets: u64,
    /// Its first packet's time (ns).
    #[serde(serialize_with = "roce_conformance::internal::json::ts")]
    pub first_ts: u64,
    /// Its last packet's time (ns).
    #[serde(serialize_with = "roce_conformance::internal::json::ts")]
    pub last_ts: u64,
    /// The timers of this direction's requests alone (null when it sent none): when both
    /// sides of a connection send requests, which side's timer each measurement is
    /// (docs/timing.md). The connection's `timing` is both directions together.
    pub timing: Option<TimingReport>,
    /// Its counters.
    #[serde(flatten)]
    pub stats: FlowStats,
}

/// A connection incarnation (or a single direction when its partner was not identified):
/// the connection model's description, the same object `check --format json` lists, then
/// the counters of `stats`.
#[derive(Debug, Serialize)]
pub struct Connection {
    /// The incarnation as the connection model describes it.
    #[serde(flatten)]
    pub info: ConnectionInfo,
    /// Both directions' counters together.
    #[serde(flatten)]
    pub total: FlowStats,
    /// From the first packet to the last, ns.
    pub duration_ns: u64,
    /// Payload bits per second of requests that were not retransmissions.
    pub goodput_bps: f64,
    /// The timers measured on the wire, both directions' requesters together (docs/timing.md).
    pub timing: TimingReport,
    /// CE marks, CNPs, ECN-CE -> CNP latency, per-QP CNP pacing and the senders' rates
    /// around CNPs (docs/congestion.md).
    pub congestion: CongestionJson,
    /// Each direction on its own, the first seen first.
    pub directions: Vec<Direction>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_parser::{
        parse_ethernet, BthRepr, Config, ErspanIIRepr, FrameBuilder, GreRepr, Network, Tunnel,
        TunnelBuilder, VxlanRepr,
    };

    fn wrapped(t: Tunnel<'_>) -> Vec<u8> {
        let bth = BthRepr { opcode: 0x04, dest_qp: 7, ..Default::default() };
        let b = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
        let mut inner = vec![0; b.buffer_len()];
        b.emit(&mut inner).unwrap();
        let w = TunnelBuilder::new(Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), t);
        let mut out = vec![0; w.buffer_len(inner.len())];
        w.emit(&inner, &mut out).unwrap();
        out
    }

    /// Runs of one session and interleaved sessions count the same; VNIs are apart from
    /// sessions; past the cap the frames are counted, not listed.
    #[test]
    fn tunnel_counts_per_kind_and_session() {
        let erspan = |s| {
            let e = ErspanIIRepr { version: 1, session_id: s, ..Default::default() };
            wrapped(Tunnel::ErspanII(GreRepr { seq: Some(1), ..Default::default() }, e))
        };
        let frames = [
            erspan(7),
            erspan(7),
            erspan(9),
            erspan(7),
            wrapped(Tunnel::Vxlan(VxlanRepr { flags: 8, vni: 9 })),
        ];
        let mut c = TunnelCounts::default();
        assert!(c.is_empty());
        for f in &frames {
            c.add(&parse_ethernet(f, &Config::default()).unwrap());
        }
        let k = c.per_kind();
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].kind, k[0].frames), ("erspan2", 4));
        let s: Vec<(u32, u64)> = k[0].sessions.iter().map(|i| (i.id, i.frames)).collect();
        assert_eq!(s, [(7, 3), (9, 1)]);
        assert!(k[0].vnis.is_empty());
        assert_eq!(
            (k[1].kind, k[1].frames, k[1].vnis[0].id, k[1].vnis[0].frames),
            ("vxlan", 1, 9, 1)
        );
        // The cap: TUNNEL_IDS_MAX sessions listed (ERSPAN's 10-bit IDs and VNIs together).
        let mut c = TunnelCounts::default();
        for vni in 0..TUNNEL_IDS_MAX as u32 + 3 {
            c.add(
                &parse_ethernet(
                    &wrapped(Tunnel::Vxlan(VxlanRepr { flags: 8, vni })),
                    &Config::default(),
                )
                .unwrap(),
            );
        }
        assert_eq!(c.per_kind()[0].vnis.len(), TUNNEL_IDS_MAX);
        assert_eq!(c.ids_not_listed(), 3);
    }
}
