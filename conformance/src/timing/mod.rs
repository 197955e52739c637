//! Timers measured from the wire: how long a responder takes to ACK, answer a READ or an
//! atomic, and NAK a PSN hole; how long a requester takes to react to a NAK, how long it
//! waits after an RNR NAK against what the NAK advertised, and after how long, with which
//! backoff, it retransmits on a timeout, with the local ACK timeout exponent t
//! (IBTA 4.096 us x 2^t) those timeouts are consistent with.
//!
//! Why from the capture: the QP timeout, retry count and RNR timer are set blind (`-u`,
//! `NCCL_IB_TIMEOUT`), and NICs round, clamp or replace them; what the wire shows is what
//! the NIC did. Every time is the capture's clock: a capture on a host measures what that
//! host saw (a requester-side capture sees the ACK latency as the round trip; a
//! responder-side capture sees the responder's own turnaround), and a switch mirror sees
//! the time at the switch.
//!
//! One [`Timing`] per request flow and incarnation (the connection model's flows): it is fed
//! the flow's requests and the responses to them, keeps a bounded window of what is
//! outstanding (the last transmissions, ACK-requested packets, READs and atomics), and adds
//! each measurement to a streaming histogram ([`Quantiles`]). Memory is bounded per flow,
//! whatever the capture's length. The definitions and limits of each measurement are in
//! docs/timing.md.

pub mod congestion;
mod negotiated;
mod quantiles;

use std::collections::VecDeque;

use roce_parser::{rnr_timer_us, AethKind, NakCode, Operation, Position, Roce};
use serde::Serialize;

use crate::psn::Psn;
use crate::FrameInfo;

pub use congestion::{CnpScopes, CongestionJson, CongestionReport, FlowCongestion};
pub use negotiated::{
    ack_timeout_range, compare, rnr_retry_limit, rnr_retry_numbers, Disagreement, Negotiated,
    TOLERANCE_PERCENT,
};
pub use quantiles::{Quantiles, Summary, BUCKETS};

/// IBTA's unit of the local ACK timeout: 4.096 us x 2^t.
pub const ACK_TIMEOUT_UNIT_NS: u64 = 4096;

/// The local ACK timeout a QP attribute `timeout = t` stands for (t = 0: none, `None`).
///
/// ```
/// use roce_conformance::local_ack_timeout_ns;
/// assert_eq!(local_ack_timeout_ns(14), Some(67_108_864));
/// assert_eq!(local_ack_timeout_ns(0), None);
/// ```
pub fn local_ack_timeout_ns(t: u8) -> Option<u64> {
    (1..=31).contains(&t).then(|| ACK_TIMEOUT_UNIT_NS << t)
}

/// The largest exponent t whose timeout 4.096 us x 2^t does not exceed `ns` (IBTA C9-141
/// lets a timer fire between 1x and 4x that value, so t..t-2 are all consistent with it).
pub fn timeout_exponent(ns: u64) -> Option<u8> {
    let units = ns / ACK_TIMEOUT_UNIT_NS;
    (units > 0).then(|| (63 - units.leading_zeros()).min(31) as u8)
}

/// Transmissions remembered per flow (the outstanding window; ACKed ones are dropped).
const TX_WINDOW: usize = 256;
/// ACK-requested packets, READs and atomics awaiting their answer.
const PENDING: usize = 64;
/// RNR waits and timeout retransmissions listed per flow (the rest are counted).
const LISTED: usize = 32;
/// Two consecutive timeouts of one PSN are "constant" within 10 %, "doubling" within 20 %
/// of twice the previous one.
const CONSTANT_TOLERANCE: f64 = 0.10;
const DOUBLING_TOLERANCE: f64 = 0.20;

/// An RNR NAK and the retry that followed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RnrWait {
    /// The RNR NAK, then the retry.
    pub frames: [u64; 2],
    /// The PSN the RNR NAK named, and the retry resent.
    #[serde(serialize_with = "crate::json::psn")]
    pub psn: Psn,
    /// The AETH timer code, in ns (IBTA table 45).
    pub advertised_ns: u64,
    /// From the RNR NAK to the retry.
    pub waited_ns: u64,
}

/// A retransmission after silence: no NAK asked for it, nothing acknowledged its PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeoutRetransmission {
    /// The PSN retransmitted.
    #[serde(serialize_with = "crate::json::psn")]
    pub psn: Psn,
    /// The PSN's previous transmission, then this one.
    pub frames: [u64; 2],
    /// 1 for the first retransmission of the PSN, 2 for the next...
    pub retry: u32,
    /// From the previous transmission to this one.
    pub measured_ns: u64,
}

/// The local ACK timeout exponent the first retransmissions are consistent with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InferredTimeout {
    /// t: the largest exponent with 4.096 us x 2^t <= the shortest first-retry timeout.
    pub exponent: u8,
    /// 4.096 us x 2^t.
    pub timeout_ns: u64,
    /// First retries it rests on (the first-retry timeouts measured), and the shortest.
    pub first_retries: u64,
    /// The shortest first-retry timeout measured.
    pub shortest_ns: u64,
    /// The longest first-retry timeout measured.
    pub longest_ns: u64,
}

/// Counts of the ratio between consecutive timeouts of one PSN.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Backoff {
    constant: u64,
    doubling: u64,
    other: u64,
}

impl Backoff {
    fn add(&mut self, previous: u64, now: u64) {
        let ratio = now as f64 / previous.max(1) as f64;
        if (ratio - 1.0).abs() <= CONSTANT_TOLERANCE {
            self.constant += 1;
        } else if (ratio - 2.0).abs() <= 2.0 * DOUBLING_TOLERANCE {
            self.doubling += 1;
        } else {
            self.other += 1;
        }
    }

    fn pattern(&self) -> Option<&'static str> {
        match (self.constant, self.doubling, self.other) {
            (0, 0, 0) => None,
            (_, 0, 0) => Some("constant"),
            (0, _, 0) => Some("exponential"),
            _ => Some("irregular"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Tx {
    psn: Psn,
    ts: u64,
    frame: u64,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    psn: Psn,
    ts: u64,
    /// A READ's first response was seen.
    answered: bool,
}

#[derive(Debug, Clone, Copy)]
struct Nak {
    ts: u64,
    frame: u64,
    psn: Psn,
    /// RNR NAK: the advertised timer (ns).
    rnr_ns: Option<u64>,
}

/// The timers of one request flow (and its responses).
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// Request with AckReq set to the ACK that covers its PSN (coalesced ACKs count for
    /// every request they cover).
    pub ack_latency: Quantiles,
    /// READ request to the first packet of its response.
    pub read_first_response: Quantiles,
    /// READ request to the last packet of its response.
    pub read_last_response: Quantiles,
    /// Atomic request to its Atomic Acknowledge.
    pub atomic_latency: Quantiles,
    /// The responder's NAK of a PSN hole (PSN sequence error): from the first request
    /// after the hole to the NAK.
    pub nak_generation: Quantiles,
    /// The requester's reaction to a NAK other than RNR: from the NAK to its first
    /// retransmission.
    pub nak_reaction: Quantiles,
    rnr_waits: Vec<RnrWait>,
    rnr_not_listed: u64,
    timeouts: Vec<TimeoutRetransmission>,
    timeouts_not_listed: u64,
    first_retry: Quantiles,
    backoff: Backoff,
    // What is outstanding.
    tx: VecDeque<Tx>,
    ackreq: VecDeque<Pending>,
    reads: VecDeque<Pending>,
    atomics: VecDeque<Pending>,
    last_psn: Option<Psn>,
    acked: Option<Psn>,
    nak: Option<Nak>,
    /// A retransmission run is under way (its later PSNs are not new timeouts).
    replaying: bool,
    /// The PSN of the last timeout, its retry number and measured time.
    chain: Option<(Psn, u32, u64)>,
}

fn push_capped(q: &mut VecDeque<Pending>, p: Pending) {
    if q.len() >= PENDING {
        q.pop_front();
    }
    q.push_back(p);
}

/// A retransmitted packet restarts the wait for its answer.
fn restart(q: &mut VecDeque<Pending>, p: Pending) {
    match q.iter_mut().find(|e| e.psn == p.psn) {
        Some(e) => *e = p,
        None => push_capped(q, p),
    }
}

impl Timing {
    /// A request of the flow, `retransmitted` or not (decided by whoever feeds the timers:
    /// the connection model's [`crate::Observation::retransmitted`] for `stats`, the judged
    /// requester for the checker); the timeout it ends, when it is a timeout retransmission.
    pub fn request(
        &mut self,
        f: &FrameInfo,
        r: &Roce<'_>,
        retransmitted: bool,
    ) -> Option<TimeoutRetransmission> {
        let info = r.info?;
        let psn = Psn::new(r.bth.psn);
        let mut timeout = None;
        if retransmitted {
            timeout = self.retransmission(f, psn);
        } else {
            self.replaying = false;
            self.chain = None;
        }
        let p = Pending { psn, ts: f.ts_ns, answered: false };
        match info.operation {
            Operation::RdmaRead => restart(&mut self.reads, p),
            Operation::CompareSwap | Operation::FetchAdd => restart(&mut self.atomics, p),
            _ if r.bth.ackreq => restart(&mut self.ackreq, p),
            _ => {}
        }
        if self.tx.len() >= TX_WINDOW {
            self.tx.pop_front();
        }
        self.tx.push_back(Tx { psn, ts: f.ts_ns, frame: f.number });
        self.last_psn = Some(psn);
        timeout
    }

    /// A retransmitted request: the reaction to a NAK, the retry after an RNR NAK, the rest
    /// of a retransmission run, or a timeout.
    fn retransmission(&mut self, f: &FrameInfo, psn: Psn) -> Option<TimeoutRetransmission> {
        let ts = f.ts_ns;
        if let Some(nak) = self.nak.take() {
            let waited = ts.saturating_sub(nak.ts);
            match nak.rnr_ns {
                Some(advertised_ns) => {
                    let w = RnrWait {
                        frames: [nak.frame, f.number],
                        psn: nak.psn,
                        advertised_ns,
                        waited_ns: waited,
                    };
                    list(&mut self.rnr_waits, &mut self.rnr_not_listed, w);
                }
                None => self.nak_reaction.record(waited),
            }
            self.replaying = true;
            self.chain = None;
            return None;
        }
        let continues = self.replaying && self.last_psn.is_some_and(|l| psn == l + 1);
        if continues || self.acked.is_some_and(|a| psn <= a) {
            return None;
        }
        let prev = self.tx.iter().rev().find(|t| t.psn == psn).copied()?;
        let measured = ts.saturating_sub(prev.ts);
        let retry = match self.chain {
            Some((p, n, last)) if p == psn => {
                self.backoff.add(last, measured);
                n + 1
            }
            _ => 1,
        };
        if retry == 1 {
            self.first_retry.record(measured);
        }
        self.chain = Some((psn, retry, measured));
        self.replaying = true;
        let t = TimeoutRetransmission {
            psn,
            frames: [prev.frame, f.number],
            retry,
            measured_ns: measured,
        };
        list(&mut self.timeouts, &mut self.timeouts_not_listed, t);
        Some(t)
    }

    /// A response to the flow's requests (ACK, NAK, READ response, atomic ACK).
    pub fn response(&mut self, f: &FrameInfo, r: &Roce<'_>) {
        let Some(info) = r.info else { return };
        let psn = Psn::new(r.bth.psn);
        let ts = f.ts_ns;
        if let Some(aeth) = r.headers.aeth {
            match aeth.kind() {
                AethKind::Ack => {
                    self.acknowledged(psn);
                    while let Some(p) = self.ackreq.front().copied().filter(|p| p.psn <= psn) {
                        self.ack_latency.record(ts.saturating_sub(p.ts));
                        self.ackreq.pop_front();
                    }
                }
                AethKind::Nak if NakCode::from_value(aeth.value()) == NakCode::PsnSequenceError => {
                    // The first packet after the hole at `psn` is psn + 1's last transmission.
                    if let Some(t) = self.tx.iter().rev().find(|t| t.psn == psn + 1) {
                        self.nak_generation.record(ts.saturating_sub(t.ts));
                    }
                    self.acknowledged(psn.back(1));
                    self.nak = Some(Nak { ts, frame: f.number, psn, rnr_ns: None });
                }
                AethKind::RnrNak => {
                    self.acknowledged(psn.back(1));
                    let rnr_ns = u64::from(rnr_timer_us(aeth.value())) * 1000;
                    self.nak = Some(Nak { ts, frame: f.number, psn, rnr_ns: Some(rnr_ns) });
                }
                AethKind::Nak | AethKind::Reserved => {}
            }
        }
        match info.operation {
            Operation::ReadResponse => self.read_response(ts, psn, info.position),
            Operation::AtomicAcknowledge => {
                if let Some(i) = self.atomics.iter().position(|p| p.psn == psn) {
                    if let Some(p) = self.atomics.get(i).copied() {
                        self.atomic_latency.record(ts.saturating_sub(p.ts));
                    }
                    self.atomics.drain(..=i);
                }
            }
            _ => {}
        }
    }

    fn read_response(&mut self, ts: u64, psn: Psn, position: Position) {
        if position.starts_message() {
            if let Some(p) = self.reads.iter_mut().find(|p| p.psn == psn && !p.answered) {
                p.answered = true;
                self.read_first_response.record(ts.saturating_sub(p.ts));
            }
        }
        if position.ends_message() {
            // The READ this answer ends is the latest one at or before its PSN.
            if let Some(i) = self.reads.iter().rposition(|p| p.psn <= psn) {
                if let Some(p) = self.reads.get(i).copied() {
                    self.read_last_response.record(ts.saturating_sub(p.ts));
                }
                self.reads.drain(..=i);
            }
        }
    }

    /// Everything up to `psn` is acknowledged.
    fn acknowledged(&mut self, psn: Psn) {
        if self.acked.is_none_or(|a| a < psn) {
            self.acked = Some(psn);
        }
        while self.tx.front().is_some_and(|t| t.psn <= psn) {
            self.tx.pop_front();
        }
        if self.chain.is_some_and(|(p, _, _)| p <= psn) {
            self.chain = None;
        }
    }

    /// Adds another flow's measurements (the two directions of a connection).
    pub fn merge(&mut self, o: &Timing) {
        self.ack_latency.merge(&o.ack_latency);
        self.read_first_response.merge(&o.read_first_response);
        self.read_last_response.merge(&o.read_last_response);
        self.atomic_latency.merge(&o.atomic_latency);
        self.nak_generation.merge(&o.nak_generation);
        self.nak_reaction.merge(&o.nak_reaction);
        self.first_retry.merge(&o.first_retry);
        for w in &o.rnr_waits {
            list(&mut self.rnr_waits, &mut self.rnr_not_listed, *w);
        }
        self.rnr_not_listed += o.rnr_not_listed;
        for t in &o.timeouts {
            list(&mut self.timeouts, &mut self.timeouts_not_listed, *t);
        }
        self.timeouts_not_listed += o.timeouts_not_listed;
        self.backoff.constant += o.backoff.constant;
        self.backoff.doubling += o.backoff.doubling;
        self.backoff.other += o.backoff.other;
    }

    /// Whether anything was measured.
    pub fn is_empty(&self) -> bool {
        let q = [
            &self.ack_latency,
            &self.read_first_response,
            &self.read_last_response,
            &self.atomic_latency,
            &self.nak_generation,
            &self.nak_reaction,
        ];
        q.iter().all(|q| q.count() == 0) && self.rnr_waits.is_empty() && self.timeouts.is_empty()
    }

    /// Entries held (to prove the state stays bounded).
    pub fn entries(&self) -> usize {
        self.tx.len() + self.ackreq.len() + self.reads.len() + self.atomics.len()
    }

    /// Timeout retransmissions, in capture order (the first [`Self::report`] lists).
    pub fn timeout_retransmissions(&self) -> &[TimeoutRetransmission] {
        &self.timeouts
    }

    /// RNR waits, in capture order (the first [`Self::report`] lists).
    pub fn rnr_waits(&self) -> &[RnrWait] {
        &self.rnr_waits
    }

    /// Drops what only a live connection needs (the requests still outstanding) and the
    /// spare room of every list: for a connection that has ended and is only kept to be
    /// reported. [`Self::report`] gives the same after it.
    pub fn compact(&mut self) {
        for q in [&mut self.ackreq, &mut self.reads, &mut self.atomics] {
            *q = VecDeque::new();
        }
        self.tx = VecDeque::new();
        for q in [
            &mut self.ack_latency,
            &mut self.read_first_response,
            &mut self.read_last_response,
            &mut self.atomic_latency,
            &mut self.nak_generation,
            &mut self.nak_reaction,
            &mut self.first_retry,
        ] {
            q.shrink_to_fit();
        }
        self.rnr_waits.shrink_to_fit();
        self.timeouts.shrink_to_fit();
    }

    /// The measurements as `stats` writes them.
    pub fn report(&self) -> TimingReport {
        let inferred = self.first_retry.summary().and_then(|s| {
            let exponent = timeout_exponent(s.min)?;
            Some(InferredTimeout {
                exponent,
                timeout_ns: ACK_TIMEOUT_UNIT_NS << exponent,
                first_retries: s.count,
                shortest_ns: s.min,
                longest_ns: s.max,
            })
        });
        TimingReport {
            ack_latency_ns: self.ack_latency.summary(),
            read_latency_ns: ReadLatency {
                first_response: self.read_first_response.summary(),
                last_response: self.read_last_response.summary(),
            },
            atomic_latency_ns: self.atomic_latency.summary(),
            nak_generation_ns: self.nak_generation.summary(),
            nak_reaction_ns: self.nak_reaction.summary(),
            rnr_waits: self.rnr_waits.clone(),
            rnr_waits_not_listed: self.rnr_not_listed,
            timeout_retransmissions: self.timeouts.clone(),
            timeout_retransmissions_not_listed: self.timeouts_not_listed,
            backoff: self.backoff.pattern(),
            inferred_timeout_exponent: inferred,
            negotiated: None,
        }
    }
}

fn list<T>(v: &mut Vec<T>, not_listed: &mut u64, item: T) {
    if v.len() < LISTED {
        v.push(item);
    } else {
        *not_listed += 1;
    }
}

/// READ request to its first and to its last response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadLatency {
    /// First response packet (`None`: no READ answered).
    pub first_response: Option<Summary>,
    /// Last response packet.
    pub last_response: Option<Summary>,
}

/// What `stats` reports of a connection's timers (docs/json.md, `timing`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimingReport {
    /// Request with AckReq to the ACK covering it.
    pub ack_latency_ns: Option<Summary>,
    /// READ request to its responses.
    pub read_latency_ns: ReadLatency,
    /// Atomic request to its Atomic Acknowledge.
    pub atomic_latency_ns: Option<Summary>,
    /// First request after a PSN hole to the responder's PSN sequence error NAK.
    pub nak_generation_ns: Option<Summary>,
    /// NAK (other than RNR) to the requester's first retransmission.
    pub nak_reaction_ns: Option<Summary>,
    /// RNR NAKs and the retries after them, the first listed.
    pub rnr_waits: Vec<RnrWait>,
    /// RNR waits beyond the listed ones, counted only.
    pub rnr_waits_not_listed: u64,
    /// Retransmissions after silence (no NAK asked for them), the first listed.
    pub timeout_retransmissions: Vec<TimeoutRetransmission>,
    /// Timeout retransmissions beyond the listed ones, counted only.
    pub timeout_retransmissions_not_listed: u64,
    /// "constant", "exponential" or "irregular" across retries of one PSN (null: no PSN
    /// was retried twice).
    pub backoff: Option<&'static str>,
    /// The local ACK timeout exponent the first retries are consistent with (`None`: no
    /// first retry measured).
    pub inferred_timeout_exponent: Option<InferredTimeout>,
    /// What the connection's CM exchange negotiated against what was measured (null: no
    /// CM exchange captured for it). Set by the consumer, which knows the exchange.
    pub negotiated: Option<Negotiated>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_a_timeout() {
        assert_eq!(timeout_exponent(67_108_864), Some(14));
        assert_eq!(timeout_exponent(67_108_863), Some(13));
        assert_eq!(timeout_exponent(4095), None);
        assert_eq!(timeout_exponent(4096), Some(0));
        assert_eq!(local_ack_timeout_ns(31), Some(4096 << 31));
    }

    #[test]
    fn backoff_patterns() {
        let mut b = Backoff::default();
        b.add(100, 105);
        assert_eq!(b.pattern(), Some("constant"));
        let mut b = Backoff::default();
        b.add(100, 200);
        b.add(200, 390);
        assert_eq!(b.pattern(), Some("exponential"));
        b.add(390, 100);
        assert_eq!(b.pattern(), Some("irregular"));
    }
}
