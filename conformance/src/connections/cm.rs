//! CM exchanges: REQs waiting for their REP, the communication IDs of open connections
//! (DREQ, DREP and REJ name a connection by them, not by QPN), and the log of every exchange
//! with its outcome (what `stats` lists). Every table is bounded: the oldest pending entry
//! goes first; the log keeps the first exchanges up to its cap and counts the rest.
//!
//! A communication ID is unique per CM agent, not across the fabric: pending REQs and open
//! connections are keyed by the host pair and the ID ([`CommKey`]), so two pairs of hosts
//! that happen to pick the same ID never disturb each other, and the model stays one of
//! independent host pairs (what `--shard` and `check --threads` split on).

use std::collections::VecDeque;
use std::net::IpAddr;

use roce_parser::{CmMessage, RepRepr, ReqRepr, Transport, TransportServiceType};
use serde::Serialize;

use super::{BeganBy, ConnectionInfo, FlowKey};
use crate::hash::FastHashMap;
use crate::psn::Psn;

/// A REQ waiting for its REP.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingReq {
    pub(crate) comm_id: u32,
    pub(crate) frame: u64,
    pub(crate) active: IpAddr,
    pub(crate) passive: IpAddr,
    pub(crate) qpn: u32,
    pub(crate) starting_psn: Psn,
    pub(crate) pmtu: Option<u32>,
    pub(crate) transport: Transport,
    pub(crate) pkey: u16,
}

/// One CM exchange, as REQ / REP / RTU / REJ / DREQ / DREP describe it.
#[derive(Debug, Clone, Serialize)]
pub struct CmExchange {
    /// The side that sent the REQ.
    pub active: IpAddr,
    /// The side that answered it.
    pub passive: IpAddr,
    /// The REQ's Local QPN: the DestQP of the passive side's packets.
    pub active_qpn: u32,
    /// The REP's Local QPN: the DestQP of the active side's packets (`None`: no REP).
    pub passive_qpn: Option<u32>,
    /// REQ Starting PSN: the PSN the active side expects to receive first.
    #[serde(serialize_with = "crate::json::psn")]
    pub req_starting_psn: Psn,
    /// REP Starting PSN: the PSN the passive side expects to receive first.
    #[serde(serialize_with = "crate::json::psn_or_null")]
    pub rep_starting_psn: Option<Psn>,
    /// The path MTU in bytes the REQ named (`None`: a reserved code).
    pub pmtu: Option<u16>,
    /// The REQ's path MTU code (1..5 give `pmtu`; others are reserved).
    #[serde(skip)]
    pub pmtu_code: u8,
    /// The REQ's transport service type (`RC`, `UC`, ...).
    pub transport: &'static str,
    /// "requested", "replied", "established", "rejected", "disconnected".
    pub outcome: &'static str,
    /// Why the REJ refused it, when it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reject_reason: Option<&'static str>,
    /// Frames of the REQ and of the last CM message.
    pub req_frame: u64,
    /// The frame of the exchange's last CM message.
    pub last_frame: u64,
    /// The REQ's primary path Local ACK Timeout (exponent t: 4.096 us x 2^t), Retry Count
    /// and RNR Retry Count (7: infinite), and the REP's RNR Retry Count.
    pub local_ack_timeout: u8,
    /// The REQ's Retry Count.
    pub retry_count: u8,
    /// The REQ's RNR Retry Count (7: infinite).
    pub rnr_retry_count: u8,
    /// The REP's RNR Retry Count (`None`: no REP captured).
    pub rep_rnr_retry_count: Option<u8>,
    /// REQs of this exchange seen (a retried REQ, same communication ID from the same side,
    /// counts again); not in the JSON of `stats` (what `diagnose` reads).
    #[serde(skip)]
    pub reqs: u32,
    /// The frame of the first of those REQs.
    #[serde(skip)]
    pub first_req_frame: u64,
    /// An MRA (message receipt acknowledgement: the peer asked for more time) was seen.
    #[serde(skip)]
    pub mra: bool,
}

/// The CM exchange that opened an incarnation: the last REQ at or before the frame that
/// began it, between its two QPs (`None` when CM did not open it, or its exchange was not
/// logged).
pub fn exchange_of<'c>(cm: &'c [CmExchange], info: &ConnectionInfo) -> Option<&'c CmExchange> {
    if info.began.how != BeganBy::Cm {
        return None;
    }
    let c = &info.connection;
    let (qa, qb) = (c.qpn_a?, c.qpn_b?);
    let opened = |x: &&CmExchange| {
        let forward = x.active == c.a && x.active_qpn == qa && x.passive == c.b;
        let reverse = x.active == c.b && x.active_qpn == qb && x.passive == c.a;
        x.req_frame <= info.began.frame
            && ((forward && x.passive_qpn == Some(qb)) || (reverse && x.passive_qpn == Some(qa)))
    };
    cm.iter().rev().find(opened)
}

/// A communication ID between two hosts (the unordered pair, the smaller address first).
type CommKey = (IpAddr, IpAddr, u32);

fn comm_key(a: IpAddr, b: IpAddr, id: u32) -> CommKey {
    if a <= b {
        (a, b, id)
    } else {
        (b, a, id)
    }
}

/// CM state of the model.
#[derive(Debug)]
pub struct CmTracker {
    cap: usize,
    log_cap: usize,
    log: Vec<CmExchange>,
    /// Communication ID (the active side's from the REQ, the passive side's from the REP) ->
    /// index in the log.
    log_ids: FastHashMap<u32, usize>,
    pub(crate) not_logged: u64,
    pending: FastHashMap<CommKey, PendingReq>,
    pending_order: VecDeque<CommKey>,
    /// Communication ID (either side's) -> the flow to the passive side.
    open: FastHashMap<CommKey, FlowKey>,
    open_order: VecDeque<CommKey>,
    /// The most entries `pending` and `open` held at once (what a split run sums to tell
    /// whether one run would have reached the caps).
    pub(crate) peaks: (usize, usize),
}

impl CmTracker {
    pub(crate) fn new(cap: usize, log_cap: usize) -> Self {
        CmTracker {
            cap: cap.max(1),
            log_cap: log_cap.max(1),
            log: Vec::new(),
            log_ids: FastHashMap::default(),
            not_logged: 0,
            pending: FastHashMap::default(),
            pending_order: VecDeque::new(),
            open: FastHashMap::default(),
            open_order: VecDeque::new(),
            peaks: (0, 0),
        }
    }

    /// The caps of the pending REQs and of the open connections' IDs.
    pub(crate) fn caps(&self) -> (usize, usize) {
        (self.cap, 2 * self.cap)
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }

    pub(crate) fn exchanges(&self) -> &[CmExchange] {
        &self.log
    }

    /// Records a CM message in the exchange log.
    pub(crate) fn log(&mut self, frame: u64, src: IpAddr, dst: IpAddr, m: &CmMessage<'_>) {
        match m {
            CmMessage::Req(q) => {
                // A retried REQ (same comm ID from the same side) updates the entry.
                let retry = self
                    .log_ids
                    .get(&q.local_comm_id)
                    .copied()
                    .filter(|&i| self.log.get(i).is_some_and(|c| c.active == src));
                let c = CmExchange {
                    active: src,
                    passive: dst,
                    active_qpn: q.local_qpn,
                    passive_qpn: None,
                    req_starting_psn: Psn::new(q.starting_psn),
                    rep_starting_psn: None,
                    pmtu: q.pmtu_bytes(),
                    pmtu_code: q.path_mtu,
                    transport: q.transport_service_type.name(),
                    outcome: "requested",
                    reject_reason: None,
                    req_frame: frame,
                    last_frame: frame,
                    local_ack_timeout: q.primary_path.local_ack_timeout,
                    retry_count: q.retry_count,
                    rnr_retry_count: q.rnr_retry_count,
                    rep_rnr_retry_count: None,
                    reqs: 1,
                    first_req_frame: frame,
                    mra: false,
                };
                let full = self.log.len() >= self.log_cap;
                match retry.and_then(|i| self.log.get_mut(i)) {
                    Some(old) => {
                        let (reqs, first, mra) = (old.reqs, old.first_req_frame, old.mra);
                        *old = CmExchange {
                            reqs: reqs.saturating_add(1),
                            first_req_frame: first,
                            mra,
                            ..c
                        };
                    }
                    None if full => self.not_logged += 1,
                    None => {
                        self.log_ids.insert(q.local_comm_id, self.log.len());
                        self.log.push(c);
                    }
                }
            }
            other => {
                let Some((local, remote)) = other.comm_ids() else { return };
                let Some(&i) = self.log_ids.get(&remote).or_else(|| self.log_ids.get(&local))
                else {
                    return;
                };
                let Some(c) = self.log.get_mut(i) else { return };
                c.last_frame = frame;
                match other {
                    CmMessage::Rep(p) => {
                        c.passive_qpn = Some(p.local_qpn);
                        c.rep_starting_psn = Some(Psn::new(p.starting_psn));
                        c.rep_rnr_retry_count = Some(p.rnr_retry_count);
                        c.outcome = "replied";
                        if self.log_ids.len() < 2 * self.log_cap {
                            self.log_ids.insert(p.local_comm_id, i);
                        }
                    }
                    CmMessage::Rtu(_) => c.outcome = "established",
                    CmMessage::Rej(j) => {
                        c.outcome = "rejected";
                        c.reject_reason = Some(j.reason.name());
                    }
                    CmMessage::Dreq(_) | CmMessage::Drep(_) => c.outcome = "disconnected",
                    CmMessage::Mra(_) => c.mra = true,
                    _ => {}
                }
            }
        }
    }

    pub(crate) fn request(&mut self, frame: u64, src: IpAddr, dst: IpAddr, q: &ReqRepr<'_>) {
        while self.pending.len() >= self.cap {
            let Some(old) = self.pending_order.pop_front() else { break };
            self.pending.remove(&old);
        }
        if self.pending_order.len() > 2 * self.cap {
            let pending = &self.pending;
            self.pending_order.retain(|id| pending.contains_key(id));
        }
        let key = comm_key(src, dst, q.local_comm_id);
        self.pending_order.push_back(key);
        let transport = match q.transport_service_type {
            TransportServiceType::Uc => Transport::Uc,
            TransportServiceType::Xrc => Transport::Xrc,
            _ => Transport::Rc,
        };
        self.pending.insert(
            key,
            PendingReq {
                comm_id: q.local_comm_id,
                frame,
                active: src,
                passive: dst,
                qpn: q.local_qpn,
                starting_psn: Psn::new(q.starting_psn),
                pmtu: q.pmtu_bytes().map(u32::from),
                transport,
                pkey: q.pkey,
            },
        );
        self.peaks.0 = self.peaks.0.max(self.pending.len());
    }

    /// The REQ a REP from `src` to `dst` answers.
    pub(crate) fn reply(
        &mut self,
        src: IpAddr,
        dst: IpAddr,
        p: &RepRepr<'_>,
    ) -> Option<PendingReq> {
        let key = comm_key(src, dst, p.remote_comm_id);
        let req = self.pending.get(&key)?;
        if req.active != dst || req.passive != src {
            return None;
        }
        self.pending.remove(&key)
    }

    /// A REJ between `a` and `b`: the REQ it names will get no REP.
    pub(crate) fn rejected(&mut self, a: IpAddr, b: IpAddr, req_comm_id: u32) {
        self.pending.remove(&comm_key(a, b, req_comm_id));
    }

    /// Remembers an open connection by both communication IDs.
    pub(crate) fn opened(&mut self, (active, passive): (u32, u32), to_passive: FlowKey) {
        let (a, b) = (to_passive.src, to_passive.dst);
        while self.open.len() + 2 > 2 * self.cap {
            let Some(old) = self.open_order.pop_front() else { break };
            self.open.remove(&old);
        }
        if self.open_order.len() > 4 * self.cap {
            let open = &self.open;
            self.open_order.retain(|id| open.contains_key(id));
        }
        for id in [active, passive] {
            let key = comm_key(a, b, id);
            self.open.insert(key, to_passive);
            self.open_order.push_back(key);
        }
        self.peaks.1 = self.peaks.1.max(self.open.len());
    }

    /// The connection a DREQ, DREP or REJ between `a` and `b` names.
    pub(crate) fn lookup(&self, a: IpAddr, b: IpAddr, local: u32, remote: u32) -> Option<FlowKey> {
        let open = |id| self.open.get(&comm_key(a, b, id));
        open(local).or_else(|| open(remote)).copied()
    }

    /// Forgets a connection of `flow`'s hosts that ended.
    pub(crate) fn forget(&mut self, flow: &FlowKey, ids: Option<(u32, u32)>) {
        if let Some((a, p)) = ids {
            self.open.remove(&comm_key(flow.src, flow.dst, a));
            self.open.remove(&comm_key(flow.src, flow.dst, p));
        }
    }
}
