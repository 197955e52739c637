//! Congestion measured from the wire: CE-marked packets, the CNPs the notification point
//! (NP, the receiver of marked data) sends back, how long after a CE mark the CNP left, how
//! closely CNPs are paced (per QP, per IP pair, per destination IP: the three pacing modes
//! Lumina's CNP check models), and what the reaction point (RP, the sender) did to its rate
//! around each CNP (its DCQCN reaction).
//!
//! Why: DCQCN misbehaviour shows as CNPs that come late, come too often, or change nothing,
//! and the NIC's configuration (`min_time_between_cnps`, the CNP pacing mode) is invisible
//! from the host. The wire shows what the NP and the RP did, on the capture's clock.
//!
//! Pairing: a CE-marked packet travels on a flow (src -> dst, DestQP = dst's QP); the NP
//! answers with a CNP whose DestQP is the QP that sent the marked packet, so the CNP travels
//! on the reverse flow of the connection (dst -> src, DestQP = src's QP), the flow the
//! connection model calls the marked flow's `peer`. The *first* CE-marked packet of a flow
//! since the previous CNP to its sender QP is paired with the next CNP to that QP
//! ([`FlowCongestion::ce_mark`], [`FlowCongestion::cnp_to_sender`]); the marks between are
//! covered by the same CNP (NPs send at most one CNP per pacing interval). A CNP whose flow
//! has no known peer is counted as unpaired.
//!
//! Rate: the RP's bytes on the wire (frame lengths) of its marked flow, over the interval
//! between CNPs: for CNP k, *before* is from CNP k-1 (the first: from the flow's first
//! packet) to CNP k, *after* is from CNP k to CNP k+1 (the last: to the flow's last packet).
//! The first [`REACTIONS_LISTED`] CNPs of a flow are listed; all are summarised.

use std::net::IpAddr;

use serde::Serialize;

use super::{Quantiles, Summary};
use crate::hash::FastHashMap;

/// CNP reactions listed per flow (and per connection); the rest are counted.
pub const REACTIONS_LISTED: usize = 16;

/// The window of [`Reaction`]: stated in the JSON so that a reader knows what "rate" means.
pub const RATE_WINDOW: &str = "interval between CNPs";

/// The sender's rate around one CNP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reaction {
    /// The CNP's frame.
    pub cnp_frame: u64,
    /// Bytes on the wire (frame lengths) of the sender's marked flow from the previous CNP
    /// (or its first packet) to this one.
    pub before_bytes: u64,
    /// Length of that interval.
    pub before_ns: u64,
    /// Bytes of the flow from this CNP to the next (or to its last packet).
    pub after_bytes: u64,
    /// Length of that interval (0: nothing after the CNP).
    pub after_ns: u64,
    /// bits per second (0 when the interval is empty).
    pub before_bps: u64,
    /// The rate after the CNP, bits per second.
    pub after_bps: u64,
}

impl Reaction {
    /// The sender sent slower after the CNP than before it.
    pub fn slowed(&self) -> bool {
        self.after_ns > 0 && self.after_bps < self.before_bps
    }
}

fn bps(bytes: u64, ns: u64) -> u64 {
    if ns == 0 {
        return 0;
    }
    let b = u128::from(bytes) * 8 * 1_000_000_000 / u128::from(ns);
    u64::try_from(b).unwrap_or(u64::MAX)
}

/// A reaction whose *after* interval is still open.
#[derive(Debug, Clone, Copy)]
struct Open {
    cnp_frame: u64,
    cnp_ts: u64,
    /// The flow's byte count at the CNP.
    bytes_at: u64,
    before_bytes: u64,
    before_ns: u64,
}

impl Open {
    fn close(&self, bytes_now: u64, now: u64) -> Reaction {
        let after_bytes = bytes_now.saturating_sub(self.bytes_at);
        let after_ns = now.saturating_sub(self.cnp_ts);
        Reaction {
            cnp_frame: self.cnp_frame,
            before_bytes: self.before_bytes,
            before_ns: self.before_ns,
            after_bytes,
            after_ns,
            before_bps: bps(self.before_bytes, self.before_ns),
            after_bps: bps(after_bytes, after_ns),
        }
    }
}

/// Every CNP reaction of a flow (or a connection): the first listed, all summarised.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Reactions {
    /// What "rate" is measured over ([`RATE_WINDOW`]).
    pub window: &'static str,
    /// CNPs whose before and after rates were measured.
    pub reactions: u64,
    /// Of those, the CNPs after which the sender's rate was lower than before (a CNP with
    /// nothing after it, `after_ns` 0, is not counted).
    pub slowed: u64,
    /// The first [`REACTIONS_LISTED`] reactions.
    pub listed: Vec<Reaction>,
    /// Reactions beyond the listed ones, counted (and summarised) only.
    pub not_listed: u64,
}

impl Reactions {
    fn push(&mut self, r: Reaction) {
        self.window = RATE_WINDOW;
        self.reactions += 1;
        self.slowed += u64::from(r.slowed());
        if self.listed.len() < REACTIONS_LISTED {
            self.listed.push(r);
        } else {
            self.not_listed += 1;
        }
    }

    fn merge(&mut self, o: &Reactions) {
        for r in &o.listed {
            self.push(*r);
        }
        self.reactions += o.not_listed;
        self.not_listed += o.not_listed;
        // The slowed among `o`'s unlisted reactions.
        let listed_slowed = o.listed.iter().filter(|r| r.slowed()).count();
        self.slowed += o.slowed.saturating_sub(listed_slowed as u64);
    }
}

/// min / p50 / max of the intervals between CNPs (ns), with how many intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// Intervals measured (CNPs less one).
    pub count: u64,
    /// The shortest interval.
    pub min: u64,
    /// The median interval (within 1/16 of the value).
    pub p50: u64,
    /// The longest interval.
    pub max: u64,
}

impl Interval {
    fn of(q: &Quantiles) -> Option<Interval> {
        q.summary().map(|s: Summary| Interval {
            count: s.count,
            min: s.min,
            p50: s.p50,
            max: s.max,
        })
    }
}

/// The congestion state of one flow and incarnation, in both of its roles: the flow that
/// carries CE-marked packets (and whose sender reacts to CNPs), and the flow that carries
/// CNPs to its DestQP.
///
/// ```
/// use roce_conformance::FlowCongestion;
/// let (mut data, mut cnps) = (FlowCongestion::default(), FlowCongestion::default());
/// data.ce_mark(4, 10_000);
/// data.ce_mark(5, 11_000); // covered by the same CNP
/// cnps.cnp(12_000);
/// data.cnp_to_sender(6, 12_000, 2_048, 0);
/// let r = data.report(2_048, 12_000).merged(&cnps.report(0, 0)).json(2, 1);
/// assert_eq!(r.ce_to_cnp_ns.unwrap().max, 2_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct FlowCongestion {
    /// The first CE mark (frame, ts) since the last CNP to this flow's sender.
    ce_pending: Option<(u64, u64)>,
    ce_to_cnp: Quantiles,
    open: Option<Open>,
    reactions: Reactions,
    /// CNPs carried by this flow: the last one's time and the intervals between them.
    last_cnp: Option<u64>,
    cnp_interval: Quantiles,
    cnps_unpaired: u64,
}

impl FlowCongestion {
    /// A CE-marked packet on this flow.
    pub fn ce_mark(&mut self, frame: u64, ts: u64) {
        self.ce_pending.get_or_insert((frame, ts));
    }

    /// A CNP carried by this flow (to its DestQP): the per-QP pacing interval.
    pub fn cnp(&mut self, ts: u64) {
        if let Some(prev) = self.last_cnp {
            self.cnp_interval.record(ts.saturating_sub(prev));
        }
        self.last_cnp = Some(ts);
    }

    /// A CNP carried by this flow whose reverse flow (the marked one) is not known.
    pub fn cnp_unpaired(&mut self) {
        self.cnps_unpaired += 1;
    }

    /// A CNP to this flow's sender QP (carried by the reverse flow) at `ts`, frame `frame`;
    /// `bytes` is this flow's byte count so far, `first_ts` its first packet's time.
    pub fn cnp_to_sender(&mut self, frame: u64, ts: u64, bytes: u64, first_ts: u64) {
        if let Some((_, ce_ts)) = self.ce_pending.take() {
            self.ce_to_cnp.record(ts.saturating_sub(ce_ts));
        }
        let (since_bytes, since_ts) = self.open.map_or((0, first_ts), |o| (o.bytes_at, o.cnp_ts));
        if let Some(o) = self.open.take() {
            self.reactions.push(o.close(bytes, ts));
        }
        self.open = Some(Open {
            cnp_frame: frame,
            cnp_ts: ts,
            bytes_at: bytes,
            before_bytes: bytes.saturating_sub(since_bytes),
            before_ns: ts.saturating_sub(since_ts),
        });
    }

    /// What was measured; the last CNP's *after* interval ends at this flow's last packet
    /// (`bytes` and `last_ts`: the flow's totals).
    pub fn report(&self, bytes: u64, last_ts: u64) -> CongestionReport {
        let mut reactions = self.reactions.clone();
        if let Some(o) = self.open {
            reactions.push(o.close(bytes, last_ts.max(o.cnp_ts)));
        }
        CongestionReport {
            ce_to_cnp: self.ce_to_cnp.clone(),
            cnp_interval: self.cnp_interval.clone(),
            cnps_unpaired: self.cnps_unpaired,
            reactions,
        }
    }

    /// Heap entries held (to prove the state stays bounded).
    pub fn entries(&self) -> usize {
        self.ce_to_cnp.buckets() + self.cnp_interval.buckets() + self.reactions.listed.len()
    }
}

/// A flow's or a connection's congestion measurements, mergeable (both directions of a
/// connection).
#[derive(Debug, Clone, Default)]
pub struct CongestionReport {
    ce_to_cnp: Quantiles,
    cnp_interval: Quantiles,
    cnps_unpaired: u64,
    reactions: Reactions,
}

impl CongestionReport {
    /// Both together.
    #[must_use]
    pub fn merged(mut self, o: &CongestionReport) -> CongestionReport {
        self.ce_to_cnp.merge(&o.ce_to_cnp);
        self.cnp_interval.merge(&o.cnp_interval);
        self.cnps_unpaired += o.cnps_unpaired;
        self.reactions.merge(&o.reactions);
        self
    }

    /// The JSON object (docs/json.md `congestion`), with the connection's counters.
    pub fn json(&self, ce_marked: u64, cnps: u64) -> CongestionJson {
        let mut rate = self.reactions.clone();
        rate.window = RATE_WINDOW;
        CongestionJson {
            ce_marked,
            cnps,
            cnps_unpaired: self.cnps_unpaired,
            ce_to_cnp_ns: self.ce_to_cnp.summary(),
            cnp_interval_ns: QpInterval { qp: Interval::of(&self.cnp_interval) },
            rate_before_after_cnp: rate,
        }
    }
}

/// Per QP pacing of one connection (the IP pair and destination scopes span connections:
/// [`CnpScopes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QpInterval {
    /// Intervals between consecutive CNPs to the same QP (`None`: fewer than two CNPs).
    pub qp: Option<Interval>,
}

/// A connection's `congestion` object in `stats --format json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CongestionJson {
    /// Packets of the connection whose IP header carried ECN Congestion Experienced (CE).
    pub ce_marked: u64,
    /// CNPs of the connection (BTH opcode 0x81).
    pub cnps: u64,
    /// CNPs on a flow whose reverse (marked) flow the model had not paired.
    pub cnps_unpaired: u64,
    /// First CE mark since the previous CNP to its sender QP, to the next CNP to that QP.
    pub ce_to_cnp_ns: Option<Summary>,
    /// Intervals between the connection's CNPs, per QP.
    pub cnp_interval_ns: QpInterval,
    /// The RP's rate before and after each CNP.
    pub rate_before_after_cnp: Reactions,
}

#[derive(Debug, Clone, Default)]
struct Scope {
    cnps: u64,
    first_frame: u64,
    last_ts: u64,
    intervals: Quantiles,
}

impl Scope {
    fn cnp(&mut self, frame: u64, ts: u64) {
        if self.cnps == 0 {
            self.first_frame = frame;
        } else {
            self.intervals.record(ts.saturating_sub(self.last_ts));
        }
        self.cnps += 1;
        self.last_ts = ts;
    }
}

/// CNP pacing across connections: per IP pair (NP -> RP) and per destination IP (RP), the
/// intervals between consecutive CNPs. Bounded: at most `cap` pairs and `cap` destinations
/// (`stats` passes `--max-flows`); CNPs of a pair or destination first seen beyond the cap
/// are counted in `cnps_not_tracked`, never stored.
///
/// ```
/// use roce_conformance::CnpScopes;
/// let (np, rp) = ("10.0.0.2".parse().unwrap(), "10.0.0.1".parse().unwrap());
/// let mut s = CnpScopes::new(16);
/// s.cnp(7, 1_000, np, rp);
/// s.cnp(9, 51_000, np, rp);
/// let j = s.json();
/// assert_eq!(j.ip_pairs[0].cnp_interval_ns.unwrap().min, 50_000);
/// ```
#[derive(Debug, Clone)]
pub struct CnpScopes {
    cap: usize,
    pairs: FastHashMap<(IpAddr, IpAddr), Scope>,
    destinations: FastHashMap<IpAddr, Scope>,
    not_tracked: u64,
}

impl CnpScopes {
    /// At most `cap` IP pairs and `cap` destinations are tracked.
    pub fn new(cap: usize) -> Self {
        CnpScopes {
            cap: cap.max(1),
            pairs: FastHashMap::default(),
            destinations: FastHashMap::default(),
            not_tracked: 0,
        }
    }

    /// A CNP from `src` (the NP) to `dst` (the RP).
    pub fn cnp(&mut self, frame: u64, ts: u64, src: IpAddr, dst: IpAddr) {
        let cap = self.cap;
        let mut tracked = true;
        let pairs_full = self.pairs.len() >= cap;
        match self.pairs.get_mut(&(src, dst)) {
            Some(s) => s.cnp(frame, ts),
            None if !pairs_full => self.pairs.entry((src, dst)).or_default().cnp(frame, ts),
            None => tracked = false,
        }
        let dests_full = self.destinations.len() >= cap;
        match self.destinations.get_mut(&dst) {
            Some(s) => s.cnp(frame, ts),
            None if !dests_full => self.destinations.entry(dst).or_default().cnp(frame, ts),
            None => tracked = false,
        }
        self.not_tracked += u64::from(!tracked);
    }

    /// Entries held (pairs + destinations).
    pub fn entries(&self) -> usize {
        self.pairs.len() + self.destinations.len()
    }

    /// The top-level `congestion` object of `stats --format json`, in order of first CNP.
    pub fn json(&self) -> CnpScopesJson {
        let mut ip_pairs: Vec<(u64, PairPacing)> = self
            .pairs
            .iter()
            .map(|(&(src, dst), s)| {
                let p = PairPacing {
                    src,
                    dst,
                    cnps: s.cnps,
                    cnp_interval_ns: Interval::of(&s.intervals),
                };
                (s.first_frame, p)
            })
            .collect();
        ip_pairs.sort_by_key(|(f, _)| *f);
        let mut destinations: Vec<(u64, DestinationPacing)> = self
            .destinations
            .iter()
            .map(|(&dst, s)| {
                let d = DestinationPacing {
                    dst,
                    cnps: s.cnps,
                    cnp_interval_ns: Interval::of(&s.intervals),
                };
                (s.first_frame, d)
            })
            .collect();
        destinations.sort_by_key(|(f, _)| *f);
        CnpScopesJson {
            ip_pairs: ip_pairs.into_iter().map(|(_, p)| p).collect(),
            destinations: destinations.into_iter().map(|(_, d)| d).collect(),
            cnps_not_tracked: self.not_tracked,
        }
    }
}

/// CNPs from one NP address to one RP address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairPacing {
    /// The NP (the CNPs' source address).
    pub src: IpAddr,
    /// The RP (the CNPs' destination address).
    pub dst: IpAddr,
    /// CNPs counted between them.
    pub cnps: u64,
    /// Intervals between consecutive CNPs (`None`: fewer than two).
    pub cnp_interval_ns: Option<Interval>,
}

/// CNPs to one RP address, from any NP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DestinationPacing {
    /// The RP.
    pub dst: IpAddr,
    /// CNPs counted to it.
    pub cnps: u64,
    /// Intervals between consecutive CNPs (`None`: fewer than two).
    pub cnp_interval_ns: Option<Interval>,
}

/// `stats --format json`'s top-level `congestion` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CnpScopesJson {
    /// One per (NP, RP) address pair, in order of first CNP.
    pub ip_pairs: Vec<PairPacing>,
    /// One per RP address, in order of first CNP.
    pub destinations: Vec<DestinationPacing>,
    /// CNPs of pairs or destinations first seen beyond the cap: counted, not paced.
    pub cnps_not_tracked: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reactions_before_and_after() {
        let mut d = FlowCongestion::default();
        // 1000 bytes from t=0 to the first CNP at 10 us, 500 bytes to the second at 20 us,
        // 100 bytes to the flow's end at 30 us.
        d.ce_mark(1, 2_000);
        d.cnp_to_sender(3, 10_000, 1_000, 0);
        d.ce_mark(4, 15_000);
        d.cnp_to_sender(5, 20_000, 1_500, 0);
        let r = d.report(1_600, 30_000).json(2, 0);
        let l = &r.rate_before_after_cnp.listed;
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].before_bytes, l[0].before_ns, l[0].after_bytes, l[0].after_ns),
            (1_000, 10_000, 500, 10_000)
        );
        assert_eq!((l[1].before_bytes, l[1].after_bytes, l[1].after_ns), (500, 100, 10_000));
        assert_eq!(l[0].before_bps, 800_000_000);
        assert_eq!(r.rate_before_after_cnp.slowed, 2);
        let c = r.ce_to_cnp_ns.unwrap();
        assert_eq!((c.count, c.min, c.max), (2, 5_000, 8_000));
    }

    #[test]
    fn listed_reactions_are_bounded_and_merge_keeps_counts() {
        let mut d = FlowCongestion::default();
        for k in 0..40u64 {
            d.cnp_to_sender(k, k * 1_000, k * 100, 0);
        }
        let r = d.report(4_000, 40_000);
        let j = r.json(0, 0);
        assert_eq!(j.rate_before_after_cnp.reactions, 40);
        assert_eq!(j.rate_before_after_cnp.listed.len(), REACTIONS_LISTED);
        assert_eq!(j.rate_before_after_cnp.not_listed, 40 - REACTIONS_LISTED as u64);
        let m = CongestionReport::default().merged(&r).merged(&r).json(0, 0);
        assert_eq!(m.rate_before_after_cnp.reactions, 80);
        assert_eq!(m.rate_before_after_cnp.listed.len(), REACTIONS_LISTED);
        assert_eq!(m.rate_before_after_cnp.slowed, 2 * j.rate_before_after_cnp.slowed);
    }

    #[test]
    fn scopes_are_capped() {
        let ip = |d| IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, d));
        let mut s = CnpScopes::new(2);
        for d in 1..=5 {
            s.cnp(u64::from(d), 0, ip(100), ip(d));
        }
        assert_eq!(s.entries(), 4);
        assert_eq!(s.json().cnps_not_tracked, 3);
        s.cnp(9, 7_000, ip(100), ip(1));
        assert_eq!(s.json().destinations[0].cnp_interval_ns.unwrap().min, 7_000);
    }
}
