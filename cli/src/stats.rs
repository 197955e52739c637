//! `roce-inspect stats`: totals, ICRC counts, the opcode histogram, and per connection
//! packets, bytes, messages, ACK/NAK kinds, CNPs, ECN-CE marks and retransmissions. Counting
//! allocates only when a new flow appears, never per frame.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv6Addr};
use std::path::Path;

use roce_parser::cm::CmMessage;
use roce_parser::headers::{AethKind, NakCode};
use roce_parser::opcode::{self, Operation, Role, Transport};
use roce_parser::{Config, IcrcStatus, Packet, Problem, Roce};
use serde::Serialize;

use roce_conformance::hash::FastHashMap;

use crate::input::{for_each_frame, InputError};

/// PSN arithmetic modulo 2^24: is `a` strictly before `b`?
/// (The checker's PSN arithmetic, one implementation for the whole project.)
pub fn psn_before(a: u32, b: u32) -> bool {
    roce_conformance::psn::before(a, b)
}

/// One direction of traffic to one QP: source and destination address and DestQP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dqpn: u32,
}

/// Counters of one direction.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowStats {
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
    pub retransmitted_psns: u64,
    pub first_ts: u64,
    pub last_ts: u64,
    #[serde(skip)]
    transport: Option<Transport>,
    #[serde(skip)]
    max_req_psn: Option<u32>,
    #[serde(skip)]
    first_req_psn: Option<u32>,
    #[serde(skip)]
    first_resp_psn: Option<u32>,
    /// Payload of requests that were not retransmissions (for goodput).
    #[serde(skip)]
    new_payload: u64,
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
    fn add(&mut self, p: &Packet<'_>, r: &Roce<'_>, ts: u64, len: u32) {
        if self.packets == 0 {
            self.first_ts = ts;
        }
        self.packets += 1;
        self.last_ts = self.last_ts.max(ts);
        self.bytes += u64::from(len);
        self.payload_bytes += r.payload_len as u64;
        let ce = p.ip.map_or(r.grh.is_some_and(|g| g.tclass & 3 == 3), |ip| ip.ecn == 3);
        self.ecn_ce += u64::from(ce);
        let Some(info) = r.info else { return };
        self.transport.get_or_insert(info.transport);
        let psn = r.bth.psn;
        match info.role {
            Role::Congestion => self.cnps += 1,
            Role::Request => {
                self.requests += 1;
                self.first_req_psn.get_or_insert(psn);
                let retx = self.max_req_psn.is_some_and(|m| !psn_before(m, psn));
                if retx {
                    self.retransmitted_psns += 1;
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
                self.first_resp_psn.get_or_insert(psn);
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
        self.retransmitted_psns += o.retransmitted_psns;
        self.last_ts = self.last_ts.max(o.last_ts);
        self.new_payload += o.new_payload;
    }
}

/// A connection opened by CM, as REQ / REP / RTU / REJ / DREQ / DREP describe it.
#[derive(Debug, Clone, Serialize)]
pub struct CmConnection {
    pub active: IpAddr,
    pub passive: IpAddr,
    pub active_qpn: u32,
    pub passive_qpn: Option<u32>,
    /// REQ Starting PSN: the PSN the active side expects to receive first.
    pub req_starting_psn: u32,
    /// REP Starting PSN: the PSN the passive side expects to receive first.
    pub rep_starting_psn: Option<u32>,
    pub pmtu: Option<u16>,
    pub transport: &'static str,
    /// "requested", "replied", "established", "rejected", "disconnected".
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reject_reason: Option<&'static str>,
    /// Frames of the REQ and of the last CM message.
    pub req_frame: u64,
    pub last_frame: u64,
    #[serde(skip)]
    active_comm_id: u32,
    #[serde(skip)]
    passive_comm_id: Option<u32>,
}

/// Everything `stats` counts.
#[derive(Debug, Default)]
pub struct Stats {
    pub frames: u64,
    pub roce_v2: u64,
    pub roce_v1: u64,
    pub undecoded: u64,
    pub icrc: [u64; 4],
    opcodes: Vec<u64>,
    problems: [u64; 32],
    /// Fx-hashed (roce_conformance::hash): SipHash over the flow key was 16% of stats.
    flows: FastHashMap<FlowKey, FlowStats>,
    cm: Vec<CmConnection>,
    first_ts: Option<u64>,
    last_ts: u64,
}

fn addr_of(p: &Packet<'_>, r: &Roce<'_>) -> (IpAddr, IpAddr) {
    match (p.ip, r.grh) {
        (Some(ip), _) => (ip.src, ip.dst),
        (None, Some(g)) => (IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr())),
        (None, None) => (IpAddr::V6(Ipv6Addr::UNSPECIFIED), IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
    }
}

impl Stats {
    pub fn new() -> Self {
        Stats { opcodes: vec![0; 256], ..Default::default() }
    }

    /// Counts one frame.
    pub fn add(&mut self, number: u64, ts: u64, len: u32, packet: Option<&Packet<'_>>) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts);
        self.last_ts = self.last_ts.max(ts);
        let Some(p) = packet else {
            self.undecoded += 1;
            return;
        };
        for pr in crate::input::problems(p).iter() {
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
        if let Some(c) = self.opcodes.get_mut(usize::from(r.bth.opcode)) {
            *c += 1;
        }
        let (src, dst) = addr_of(p, r);
        let key = FlowKey { src, dst, dqpn: r.bth.dest_qp };
        self.flows.entry(key).or_default().add(p, r, ts, len);
        if let Some(Ok(mad)) = r.mad() {
            if let Some(m) = mad.cm {
                self.cm_message(number, src, dst, &m);
            }
        }
    }

    fn cm_message(&mut self, frame: u64, src: IpAddr, dst: IpAddr, m: &CmMessage<'_>) {
        match m {
            CmMessage::Req(q) => {
                // A retried REQ (same comm ID from the same side) updates the entry.
                self.cm.retain(|c| !(c.active_comm_id == q.local_comm_id && c.active == src));
                self.cm.push(CmConnection {
                    active: src,
                    passive: dst,
                    active_qpn: q.local_qpn,
                    passive_qpn: None,
                    req_starting_psn: q.starting_psn,
                    rep_starting_psn: None,
                    pmtu: q.pmtu_bytes(),
                    transport: q.transport_service_type.name(),
                    outcome: "requested",
                    reject_reason: None,
                    req_frame: frame,
                    last_frame: frame,
                    active_comm_id: q.local_comm_id,
                    passive_comm_id: None,
                });
            }
            other => {
                let Some((local, remote)) = other.comm_ids() else {
                    return;
                };
                let Some(c) = self.cm.iter_mut().rev().find(|c| {
                    c.active_comm_id == local
                        || c.active_comm_id == remote
                        || c.passive_comm_id == Some(local)
                }) else {
                    return;
                };
                c.last_frame = frame;
                match other {
                    CmMessage::Rep(p) => {
                        c.passive_qpn = Some(p.local_qpn);
                        c.rep_starting_psn = Some(p.starting_psn);
                        c.passive_comm_id = Some(p.local_comm_id);
                        c.outcome = "replied";
                    }
                    CmMessage::Rtu(_) => c.outcome = "established",
                    CmMessage::Rej(j) => {
                        c.outcome = "rejected";
                        c.reject_reason = Some(j.reason.name());
                    }
                    CmMessage::Dreq(_) | CmMessage::Drep(_) => c.outcome = "disconnected",
                    _ => {}
                }
            }
        }
    }

    /// Groups flows into connections: the two directions of a QP pair are joined when CM
    /// named both QPNs, or when responses in one direction echo the PSNs of requests in the
    /// other (see RULES.md "Pairing without CM").
    pub fn connections(&self) -> Vec<Connection> {
        let mut keys: Vec<&FlowKey> = self.flows.keys().collect();
        keys.sort();
        let mut partner: HashMap<FlowKey, (FlowKey, &'static str)> = HashMap::new();
        for c in &self.cm {
            if let Some(pq) = c.passive_qpn {
                let to_passive = FlowKey { src: c.active, dst: c.passive, dqpn: pq };
                let to_active = FlowKey { src: c.passive, dst: c.active, dqpn: c.active_qpn };
                partner.insert(to_passive, (to_active, "cm"));
                partner.insert(to_active, (to_passive, "cm"));
            }
        }
        for k in &keys {
            let f = &self.flows[*k];
            let Some(resp_psn) = f.first_resp_psn else {
                continue;
            };
            if partner.contains_key(*k) {
                continue;
            }
            // Responses B -> A to QP x answer requests A -> B: find the reverse flow whose
            // request PSN window holds the response PSN.
            let found = keys.iter().find(|o| {
                o.src == k.dst && o.dst == k.src && !partner.contains_key(**o) && {
                    let g = &self.flows[**o];
                    match (g.first_req_psn, g.max_req_psn) {
                        (Some(lo), Some(hi)) => {
                            !psn_before(resp_psn, lo) && !psn_before(hi, resp_psn)
                        }
                        _ => false,
                    }
                }
            });
            if let Some(o) = found {
                partner.insert(**k, (**o, "psn"));
                partner.insert(**o, (**k, "psn"));
            }
        }
        let mut done: Vec<FlowKey> = Vec::new();
        let mut out = Vec::new();
        for k in keys {
            if done.contains(k) {
                continue;
            }
            let mut conn = Connection {
                a: k.src,
                b: k.dst,
                qpn_a: None,
                qpn_b: Some(k.dqpn),
                transport: self.flows[k].transport.map_or("unknown", Transport::as_str),
                paired_by: None,
                total: FlowStats::default(),
                duration_ns: 0,
                goodput_bps: 0.0,
                directions: vec![Direction::new(k, &self.flows[k])],
            };
            done.push(*k);
            if let Some((o, how)) = partner.get(k) {
                if let Some(f) = self.flows.get(o) {
                    conn.qpn_a = Some(o.dqpn);
                    conn.paired_by = Some(how);
                    if conn.transport == "unknown" {
                        conn.transport = f.transport.map_or("unknown", Transport::as_str);
                    }
                    conn.directions.push(Direction::new(o, f));
                    done.push(*o);
                }
            }
            for d in &conn.directions {
                conn.total.merge(&self.flows[&d.key]);
            }
            conn.duration_ns = conn.total.last_ts.saturating_sub(conn.total.first_ts);
            if conn.duration_ns > 0 {
                conn.goodput_bps = conn.total.new_payload as f64 * 8e9 / conn.duration_ns as f64;
            }
            out.push(conn);
        }
        out.sort_by_key(|c| std::cmp::Reverse(c.total.packets));
        out
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

    fn problem_counts(&self) -> Vec<(&'static str, u64)> {
        Problem::ALL
            .iter()
            .filter_map(|p| {
                let n = *self.problems.get((*p as u32).trailing_zeros() as usize)?;
                (n > 0).then_some((p.message(), n))
            })
            .collect()
    }

    pub fn roce_frames(&self) -> u64 {
        self.roce_v1 + self.roce_v2
    }
}

/// One direction inside a connection.
#[derive(Debug, Serialize)]
pub struct Direction {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dqpn: u32,
    #[serde(flatten)]
    pub stats: FlowStats,
    #[serde(skip)]
    key: FlowKey,
}

impl Direction {
    fn new(k: &FlowKey, f: &FlowStats) -> Self {
        Direction { src: k.src, dst: k.dst, dqpn: k.dqpn, stats: f.clone(), key: *k }
    }
}

/// A QP pair (or a single direction when its partner was not seen or not identified).
#[derive(Debug, Serialize)]
pub struct Connection {
    /// The side that sent the first direction listed.
    pub a: IpAddr,
    pub b: IpAddr,
    /// QPN on side a (the DestQP of b -> a traffic), when paired.
    pub qpn_a: Option<u32>,
    pub qpn_b: Option<u32>,
    pub transport: &'static str,
    /// "cm" (REQ/REP named both QPNs), "psn" (responses echo request PSNs), or null.
    pub paired_by: Option<&'static str>,
    #[serde(flatten)]
    pub total: FlowStats,
    pub duration_ns: u64,
    /// Payload bits per second of requests that were not retransmissions.
    pub goodput_bps: f64,
    pub directions: Vec<Direction>,
}

/// `stats --format json`.
#[derive(Serialize)]
struct StatsJson<'a> {
    frames: u64,
    roce_frames: u64,
    rocev2_frames: u64,
    rocev1_frames: u64,
    undecoded_frames: u64,
    icrc: IcrcCounts,
    opcodes: BTreeMap<&'static str, u64>,
    problems: BTreeMap<&'static str, u64>,
    duration_ns: u64,
    connections: Vec<Connection>,
    cm_connections: &'a [CmConnection],
    warnings: &'a [String],
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

/// Runs the command.
pub fn run(path: &Path, format: Format, cfg: &Config) -> Result<(), InputError> {
    let mut stats = Stats::new();
    let summary = for_each_frame(path, cfg, |d| {
        stats.add(d.frame.number, d.frame.ts_ns, d.frame.len, d.packet.as_ref().ok());
    })?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let res = match format {
        Format::Json => {
            let j = StatsJson {
                frames: stats.frames,
                roce_frames: stats.roce_frames(),
                rocev2_frames: stats.roce_v2,
                rocev1_frames: stats.roce_v1,
                undecoded_frames: stats.undecoded,
                icrc: IcrcCounts {
                    ok: stats.icrc[0],
                    bad: stats.icrc[1],
                    unverifiable: stats.icrc[2],
                    not_checked: stats.icrc[3],
                },
                opcodes: stats.opcode_histogram().into_iter().collect(),
                problems: stats.problem_counts().into_iter().collect(),
                duration_ns: stats.last_ts.saturating_sub(stats.first_ts.unwrap_or(0)),
                connections: stats.connections(),
                cm_connections: &stats.cm,
                warnings: &summary.warnings,
            };
            serde_json::to_writer_pretty(&mut out, &j)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        Format::Text => out.write_all(text_report(path, &stats, &summary.warnings).as_bytes()),
    };
    match res {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(InputError(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

fn secs(ns: u64) -> String {
    format!("{}.{:06} s", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

fn text_report(path: &Path, s: &Stats, warnings: &[String]) -> String {
    let mut t = String::new();
    let dur = s.last_ts.saturating_sub(s.first_ts.unwrap_or(0));
    let _ = writeln!(t, "Capture   {}", path.display());
    let _ = writeln!(
        t,
        "Frames    {} ({} RoCE: {} RoCEv2, {} RoCEv1; {} not decoded), duration {}",
        s.frames,
        s.roce_frames(),
        s.roce_v2,
        s.roce_v1,
        s.undecoded,
        secs(dur)
    );
    let _ =
        writeln!(t, "ICRC      {} ok, {} bad, {} unverifiable", s.icrc[0], s.icrc[1], s.icrc[2]);
    let _ = writeln!(t, "\nOpcodes");
    for (name, n) in s.opcode_histogram() {
        let _ = writeln!(t, "  {name:<40} {n:>10}");
    }
    let problems = s.problem_counts();
    if !problems.is_empty() {
        let _ = writeln!(t, "\nProblems (frames)");
        for (name, n) in problems {
            let _ = writeln!(t, "  {name:<70} {n:>8}");
        }
    }
    let conns = s.connections();
    let _ = writeln!(t, "\nConnections ({})", conns.len());
    for c in &conns {
        let qa = c.qpn_a.map_or("?".to_string(), |q| format!("0x{q:06x}"));
        let qb = c.qpn_b.map_or("?".to_string(), |q| format!("0x{q:06x}"));
        let how =
            c.paired_by.map_or("one direction seen".to_string(), |h| format!("paired by {h}"));
        let _ = writeln!(t, "  {} QP {qa} <-> {} QP {qb}  {}  ({how})", c.a, c.b, c.transport);
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
            x.retransmitted_psns
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
    }
    if !s.cm.is_empty() {
        let _ = writeln!(t, "\nCM connections ({})", s.cm.len());
        for c in &s.cm {
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
                c.pmtu.map_or("?".to_string(), |m| m.to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psn_order_wraps() {
        assert!(psn_before(1, 2));
        assert!(!psn_before(2, 2));
        assert!(psn_before(0xff_ffff, 0));
        assert!(!psn_before(0, 0xff_ffff));
    }
}
