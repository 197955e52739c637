//! Several capture points at once: the copies of one packet seen at several taps recognised
//! and counted once, the one-way latency between taps, where a packet was lost, and each
//! tap's clock offset.
//!
//! Why: a job's traffic is mirrored at several switch ports, so one packet appears in two or
//! three captures. Fed to the connection model as they are, the copies look like
//! retransmissions (the same PSN again), reorders and gaps. [`Taps`] sits between the
//! decoded frame and the model: a frame that is a copy of a packet another tap saw is
//! counted here and not handed on, so the model sees each packet once (the first tap's).
//!
//! A copy is recognised by what the network does not change on the way: the host pair (IP
//! addresses, or a RoCEv1 GRH's GIDs), DestQP, PSN, opcode and the payload length the
//! headers announce, seen at another tap within a time window after the first sighting (the
//! taps' clocks corrected first, [`estimate_offsets`]). The same packet again at the *same*
//! tap is not a copy but a retransmission, and starts a sighting of its own; identical
//! packets in a row (CNPs) are matched first in, first out.
//!
//! A sighting whose window has passed without a tap that sees its connection (that tap saw
//! the flow's packets sent before this one and after it) is a packet lost between the last
//! tap that saw it and that tap: the finding `CAP-DROP-BETWEEN`, citing the frames at each
//! tap. Without a later packet at the silent tap nothing is judged (its capture may have
//! ended).
//!
//! Memory: the sightings of one window (capped, [`TapOptions::max_sightings`]: beyond it the
//! oldest is settled early and counted), one record per flow (capped like the model's
//! flows) and one latency histogram per pair of taps: bounded by the traffic of a window and
//! the live flows, never by the length of the captures.

use std::collections::VecDeque;
use std::fmt;
use std::net::IpAddr;

use hdrhistogram::Histogram;
use roce_conformance::internal::hash::FastHashMap;
use roce_conformance::{host_pair, Checker, ConnId, FlowKey};
use serde::Serialize;

use crate::frame::Decoded;

/// Taps are told apart in a 64-bit mask: at most this many files are merged.
pub const MAX_TAPS: usize = 64;

/// How copies are matched.
#[derive(Debug, Clone, Copy)]
pub struct TapOptions {
    /// A copy must appear within this many nanoseconds of the packet's first sighting
    /// (after the clock offsets are applied): `--tap-window`, default 1 ms.
    pub window_ns: u64,
    /// Sightings held at most (the packets of one window); beyond, the oldest is settled
    /// before its window has passed and counted ([`TapsReport::settled_early`]).
    pub max_sightings: usize,
    /// Flows followed at most (for the drop judgement and the per-connection figures);
    /// beyond, new flows are not followed and counted.
    pub max_flows: usize,
    /// Drops reported at most in [`TapsReport::drops`] (all are counted).
    pub max_drops_listed: usize,
}

impl Default for TapOptions {
    fn default() -> Self {
        TapOptions {
            window_ns: 1_000_000,
            max_sightings: 1 << 20,
            max_flows: 100_000,
            max_drops_listed: 1_000,
        }
    }
}

/// What a packet is, whichever tap saw it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct PacketKey {
    flow: FlowKey,
    psn: u32,
    opcode: u8,
    payload_len: u32,
    /// A RoCE packet (the drop judgement and the latencies are made on these only); other
    /// frames are matched by their addresses (IP) or length (no IP) and a hash of their
    /// last bytes.
    roce: bool,
}

impl PacketKey {
    fn of(d: &Decoded<'_>) -> Option<PacketKey> {
        let data = d.frame.data;
        let tail = data.get(data.len().saturating_sub(TAIL)..).unwrap_or_default();
        let p = d.packet.as_ref().ok();
        let Some(r) = p.and_then(|p| p.roce.as_ref()) else {
            // Not RoCE: an IP packet by its addresses and last bytes; a frame without IP
            // (ARP, LLDP: not routed, the same bytes at each tap) by its length and last bytes.
            let unspecified = IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED);
            let (src, dst, len) = match p.and_then(|p| p.ip) {
                Some(ip) => (ip.src, ip.dst, 0),
                None => (unspecified, unspecified, d.frame.len),
            };
            return Some(PacketKey {
                flow: FlowKey { src, dst, dest_qp: u32::MAX },
                psn: fnv32(tail),
                opcode: 0,
                payload_len: len,
                roce: false,
            });
        };
        let p = p?;
        // Native InfiniBand without a GRH: the LIDs are the endpoints (the copies are matched
        // and judged; the model does not take these packets).
        let (src, dst) = match (host_pair(p), p.lrh) {
            (Some(pair), _) => pair,
            (None, Some(l)) => (lid_addr(l.slid), lid_addr(l.dlid)),
            (None, None) => return None,
        };
        Some(PacketKey {
            flow: FlowKey { src, dst, dest_qp: r.bth.dest_qp },
            psn: r.bth.psn,
            opcode: r.bth.opcode,
            payload_len: u32::try_from(r.payload_len).unwrap_or(u32::MAX),
            roce: true,
        })
    }
}

/// A LID as the address of a taps key: `fe80::ffff:0:LID`, an address no GID or IP of
/// RoCE traffic takes (link-local, with a reserved interface ID).
fn lid_addr(lid: u16) -> IpAddr {
    IpAddr::V6(std::net::Ipv6Addr::new(0xfe80, 0, 0, 0, 0xffff, 0, 0, lid))
}

/// Whether an address of a taps key is a LID ([`lid_addr`]).
fn is_lid(a: IpAddr) -> bool {
    matches!(a, IpAddr::V6(v) if v.segments().starts_with(&[0xfe80, 0, 0, 0, 0xffff, 0]))
}

/// Bytes at the end of a frame that are not RoCE hashed to tell its copies.
const TAIL: usize = 32;

fn fnv32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

/// One tap's view of a frame: which tap, when, and its numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TapFrame {
    /// The tap (the file's index in the merge).
    pub tap: u32,
    /// Its time, the tap's clock corrected.
    pub ts_ns: u64,
    /// The frame's number in the merge.
    pub number: u64,
    /// The frame's number in its own file.
    pub source_number: u64,
}

impl TapFrame {
    fn of(d: &Decoded<'_>) -> TapFrame {
        TapFrame {
            tap: d.frame.source,
            ts_ns: d.frame.ts_ns,
            number: d.frame.number,
            source_number: d.frame.source_number,
        }
    }
}

/// One packet's sightings at the taps.
#[derive(Clone, Copy)]
struct Sighting {
    psn: u32,
    opcode: u8,
    first: TapFrame,
    /// The tap that saw it last (downstream-most), so far.
    last: TapFrame,
    /// The taps that saw it.
    mask: u64,
    /// The connection the model put the packet in ([`Taps::attach`]).
    conn: Option<ConnId>,
}

/// A live sighting in the slab: the sighting, its key, and the next older live sighting of
/// the same key ([`NONE`] when none): a chain from the newest, which `live` points at.
#[derive(Clone, Copy)]
struct Slot {
    sighting: Sighting,
    key: PacketKey,
    older: u32,
}

/// No slot.
const NONE: u32 = u32::MAX;

/// A tap's packets of one flow: what the drop judgement asks of a silent tap.
#[derive(Clone, Copy, Default)]
struct FlowAtTap {
    /// The earliest and the latest first-sighting time of the flow's packets this tap saw.
    first_origin: u64,
    last_origin: u64,
    seen: bool,
}

/// A flow's record: per tap what it saw, per pair the copies' figures.
struct FlowTaps {
    at: Vec<FlowAtTap>,
    /// Sightings settled without a tap that had seen the flow before: judged when that tap
    /// sees a later packet of the flow (at most [`PENDING_PER_FLOW`]).
    pending: Vec<(Sighting, u32)>,
    /// The pairs of taps (first, copy) with copies or drops, few per flow: a flow usually
    /// crosses two or three taps, so a short list, not one entry per pair of taps.
    pairs: Vec<FlowPair>,
    drops: u64,
}

/// The entry of pair `pair` (`first * taps + copy`) in a flow's short list, added if new.
fn pair_entry(pairs: &mut Vec<FlowPair>, pair: usize) -> Option<&mut FlowPair> {
    let pair = u32::try_from(pair).ok()?;
    let at = match pairs.iter().position(|p| p.pair == pair) {
        Some(at) => at,
        None => {
            pairs.push(FlowPair { pair, ..FlowPair::default() });
            pairs.len() - 1
        }
    };
    pairs.get_mut(at)
}

const PENDING_PER_FLOW: usize = 16;

#[derive(Clone, Default)]
struct FlowPair {
    /// `first * taps + copy`.
    pair: u32,
    copies: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// The copies' latencies, for the connection's p50 and p99.
    sketch: Sketch,
    drops: u64,
}

/// One connection's latencies between two taps, counted in log-linear buckets: exact below
/// 16 ns, then 8 buckets per power of two, so a quantile is within 1/16 of the latency (the
/// bucket's middle, held within the smallest and largest seen). Kept sparse, a short sorted
/// list of (bucket, count): a connection's copies fall in a few buckets (a latency that
/// varies by 2x spans 8), so a flow pays bytes for the buckets it uses, not a histogram of
/// the whole range (the pair of taps' overall figures have that, `Histogram`, one per pair).
#[derive(Clone, Default)]
struct Sketch {
    buckets: Vec<(u16, u32)>,
}

impl Sketch {
    fn bucket(v: u64) -> u16 {
        if v < 16 {
            return v as u16;
        }
        let e = 63 - v.leading_zeros(); // 4..=63
        let sub = (v >> (e - 3)) & 7;
        (16 + (e - 4) * 8 + sub as u32) as u16
    }

    /// The bucket's lowest value and its width.
    fn range(b: u16) -> (u64, u64) {
        if b < 16 {
            return (u64::from(b), 1);
        }
        let (e, sub) = (u32::from(b - 16) / 8 + 4, u64::from(b - 16) % 8);
        ((8 + sub) << (e - 3), 1 << (e - 3))
    }

    fn add(&mut self, v: u64) {
        let b = Self::bucket(v);
        match self.buckets.binary_search_by_key(&b, |x| x.0) {
            Ok(i) => {
                if let Some(x) = self.buckets.get_mut(i) {
                    x.1 = x.1.saturating_add(1);
                }
            }
            Err(i) => self.buckets.insert(i, (b, 1)),
        }
    }

    /// The `q` quantile (0 < q <= 1) of `total` values within [`lo`, `hi`].
    fn quantile(&self, q: f64, total: u64, lo: u64, hi: u64) -> Option<u64> {
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for &(b, n) in &self.buckets {
            seen += u64::from(n);
            if seen >= rank {
                let (low, width) = Self::range(b);
                return Some((low + width / 2).clamp(lo, hi));
            }
        }
        Some(hi)
    }
}

/// A packet lost between two taps (a `CAP-DROP-BETWEEN` finding).
#[derive(Clone, Debug, Serialize)]
pub struct TapDrop {
    /// The flow the packet belongs to.
    #[serde(skip)]
    pub flow: FlowKey,
    /// Its connection, as the model named it when the packet was first seen
    /// ([`Taps::attach`]).
    pub connection: Option<ConnId>,
    /// Native InfiniBand between LIDs (no GRH): `flow`'s addresses stand for the LIDs, and
    /// the model has no connection for it.
    #[serde(skip)]
    pub between_lids: bool,
    /// Its PSN.
    pub psn: u32,
    /// Its opcode.
    pub opcode: u8,
    /// The tap that saw it last (the drop is after it).
    #[serde(rename = "last_seen_tap")]
    pub last_seen: u32,
    /// The tap that did not see it, though it saw the flow's packets before and after.
    #[serde(rename = "missing_at_tap")]
    pub missing_at: u32,
    /// The frame (merge number) at the first tap that saw it.
    pub first_frame: u64,
    /// The frame at the last tap that saw it.
    pub last_frame: u64,
    /// Their numbers in their own files.
    #[serde(skip)]
    pub first_source: TapFrame,
    #[serde(skip)]
    /// The last tap's sighting.
    pub last_source: TapFrame,
}

/// Whether a frame goes on to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapVerdict {
    /// The first sighting of a packet (or a frame the taps do not match: not RoCE, native
    /// InfiniBand without a GRH): the model takes it.
    First,
    /// A copy of a packet another tap saw first (that frame's merge number): counted here,
    /// the model does not see it.
    Copy {
        /// The first sighting's frame number in the merge.
        of: u64,
    },
}

/// The taps stage of a pass over several captures (see the module's documentation).
pub struct Taps {
    opts: TapOptions,
    n: usize,
    /// Each packet with live sightings: its newest sighting's slot.
    live: FastHashMap<PacketKey, u32>,
    /// The live sightings (and free slots, `free`): no allocation per packet.
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Live sightings in order of first sighting: (window end, slot).
    order: VecDeque<(u64, u32)>,
    held: usize,
    flows: FastHashMap<FlowKey, FlowTaps>,
    /// Per pair of taps, made at its first copy: a copy comes within the window, so the
    /// histogram's range is the window's (about 330 KiB at 1 ms and 3 significant digits).
    hist: Vec<Option<Histogram<u64>>>,
    /// Drops per pair of taps (last that saw it, silent one): `last * taps + silent`.
    pair_drops: Vec<u64>,
    per_tap: Vec<TapCount>,
    drops: Vec<TapDrop>,
    drops_total: u64,
    unconfirmed: u64,
    settled_early: u64,
    flows_not_followed: u64,
    new_drops: Vec<TapDrop>,
    /// The slot of the sighting the last [`Taps::observe`] opened, for [`Taps::attach`].
    last_new: u32,
}

/// One tap's counts.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TapCount {
    /// Frames the tap's file held (read).
    pub frames: u64,
    /// Packets it saw first (handed to the model; frames the taps do not match included).
    pub first: u64,
    /// Packets that were copies of another tap's (not handed on).
    pub copies: u64,
}

impl Taps {
    /// The stage for `taps` captures (at most [`MAX_TAPS`]; more are treated as the last).
    pub fn new(taps: usize, opts: TapOptions) -> Taps {
        let n = taps.clamp(1, MAX_TAPS);
        let hist = (0..n * n).map(|_| None).collect();
        Taps {
            opts,
            n,
            live: FastHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
            held: 0,
            flows: FastHashMap::default(),
            hist,
            pair_drops: vec![0; n * n],
            per_tap: vec![TapCount::default(); n],
            drops: Vec::new(),
            drops_total: 0,
            unconfirmed: 0,
            settled_early: 0,
            flows_not_followed: 0,
            new_drops: Vec::new(),
            last_new: NONE,
        }
    }

    fn tap_of(&self, source: u32) -> usize {
        (source as usize).min(self.n - 1)
    }

    /// Takes a frame of the merge, in merge order: whether the model should see it.
    pub fn observe(&mut self, d: &Decoded<'_>) -> TapVerdict {
        self.last_new = NONE;
        let tap = self.tap_of(d.frame.source);
        if let Some(c) = self.per_tap.get_mut(tap) {
            c.frames += 1;
        }
        self.settle_until(d.frame.ts_ns);
        let Some(key) = PacketKey::of(d) else {
            if let Some(c) = self.per_tap.get_mut(tap) {
                c.first += 1;
            }
            return TapVerdict::First;
        };
        let mut here = TapFrame::of(d);
        here.tap = tap as u32;
        let bit = 1u64 << tap;
        let window = self.opts.window_ns;
        // The latest live sighting of this packet that this tap has not seen: a copy. The
        // latest, not the oldest: a packet lost before this tap and sent again is seen here
        // as the copy of its retransmission, not of the lost original.
        let newest = self.live.get(&key).copied().unwrap_or(NONE);
        let mut at = newest;
        let mut found = NONE;
        while let Some(slot) = self.slots.get(at as usize) {
            let s = &slot.sighting;
            // Within the window either side: in merge order a frame comes after the frames
            // before it in time, but a file whose clock goes back hands out earlier times.
            if s.mask & bit == 0 && here.ts_ns.abs_diff(s.first.ts_ns) <= window {
                found = at;
                break;
            }
            at = slot.older;
        }
        if let Some(s) = self.slots.get_mut(found as usize).map(|slot| &mut slot.sighting) {
            s.mask |= bit;
            if here.ts_ns >= s.last.ts_ns {
                s.last = here;
            }
            let first = s.first;
            if let Some(c) = self.per_tap.get_mut(tap) {
                c.copies += 1;
            }
            if !key.roce {
                return TapVerdict::Copy { of: first.number };
            }
            let latency = here.ts_ns.saturating_sub(first.ts_ns);
            let pair = first.tap as usize * self.n + tap;
            let range = window.max(2);
            if let Some(slot) = self.hist.get_mut(pair) {
                if slot.is_none() {
                    *slot = Histogram::new_with_bounds(1, range, 3).ok();
                }
                if let Some(h) = slot {
                    h.saturating_record(latency);
                }
            }
            self.flow_saw(&key.flow, tap, first.ts_ns, Some((pair, latency)));
            return TapVerdict::Copy { of: first.number };
        }
        if self.held >= self.opts.max_sightings {
            self.settle_oldest();
            self.settled_early += 1;
        }
        let sighting = Sighting {
            psn: key.psn,
            opcode: key.opcode,
            first: here,
            last: here,
            mask: bit,
            conn: None,
        };
        // The key's chain as it stands now (settling above may have ended it), read and
        // extended in one look in the table.
        let entry = self.live.entry(key);
        let older = match &entry {
            std::collections::hash_map::Entry::Occupied(e) => *e.get(),
            std::collections::hash_map::Entry::Vacant(_) => NONE,
        };
        let slot = Slot { sighting, key, older };
        let at = match self.free.pop() {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i as usize) {
                    *s = slot;
                }
                i
            }
            None => {
                self.slots.push(slot);
                u32::try_from(self.slots.len() - 1).unwrap_or(NONE)
            }
        };
        entry.insert_entry(at);
        self.order.push_back((here.ts_ns.saturating_add(window), at));
        self.last_new = at;
        self.held += 1;
        if let Some(c) = self.per_tap.get_mut(tap) {
            c.first += 1;
        }
        if key.roce {
            self.flow_saw(&key.flow, tap, here.ts_ns, None);
        }
        TapVerdict::First
    }

    /// Records that `tap` saw a packet of `flow` first sighted at `origin`; judges the
    /// flow's pending sightings this later packet confirms.
    fn flow_saw(&mut self, flow: &FlowKey, tap: usize, origin: u64, copy: Option<(usize, u64)>) {
        let n = self.n;
        if self.flows.len() >= self.opts.max_flows && !self.flows.contains_key(flow) {
            self.flows_not_followed += 1;
            return;
        }
        let f = self.flows.entry(*flow).or_insert_with(|| FlowTaps {
            at: vec![FlowAtTap::default(); n],
            pending: Vec::new(),
            pairs: Vec::new(),
            drops: 0,
        });
        if let Some(a) = f.at.get_mut(tap) {
            if !a.seen {
                *a = FlowAtTap { first_origin: origin, last_origin: origin, seen: true };
            } else {
                a.first_origin = a.first_origin.min(origin);
                a.last_origin = a.last_origin.max(origin);
            }
        }
        if let Some((pair, latency)) = copy {
            if let Some(p) = pair_entry(&mut f.pairs, pair) {
                p.min_ns = if p.copies == 0 { latency } else { p.min_ns.min(latency) };
                p.copies += 1;
                p.sum_ns += u128::from(latency);
                p.max_ns = p.max_ns.max(latency);
                p.sketch.add(latency);
            }
        }
        if f.pending.is_empty() {
            return;
        }
        let mut confirmed = Vec::new();
        f.pending.retain(|(s, silent)| {
            if *silent as usize == tap && origin > s.first.ts_ns {
                confirmed.push((*s, *silent));
                false
            } else {
                true
            }
        });
        for (s, silent) in confirmed {
            self.drop_found(flow, s, silent);
        }
    }

    /// Names the connection the model put the frame the last [`Taps::observe`] took as a
    /// packet's first sighting in: a drop found later cites the connection the packet was in
    /// then (it may have ended since).
    pub fn attach(&mut self, conn: ConnId) {
        let at = std::mem::replace(&mut self.last_new, NONE);
        if let Some(slot) = self.slots.get_mut(at as usize) {
            slot.sighting.conn = Some(conn);
        }
    }

    /// Settles every sighting whose window ended before `now`.
    fn settle_until(&mut self, now: u64) {
        while let Some(&(end, _)) = self.order.front() {
            if end >= now {
                break;
            }
            self.settle_oldest();
        }
    }

    /// Settles the oldest live sighting: the last of its key's chain (a key's sightings are
    /// opened in time order), unlinked and its slot freed, then judged.
    fn settle_oldest(&mut self) {
        let Some((_, at)) = self.order.pop_front() else { return };
        let Some(&Slot { sighting, key, older }) = self.slots.get(at as usize) else { return };
        let newest = self.live.get(&key).copied().unwrap_or(NONE);
        if newest == at {
            if older == NONE {
                self.live.remove(&key);
            } else {
                self.live.insert(key, older);
            }
        } else {
            // Find the newer neighbour and cut the chain after it (chains are short: one
            // sighting per retransmission within a window).
            let mut i = newest;
            while let Some(slot) = self.slots.get_mut(i as usize) {
                if slot.older == at {
                    slot.older = older;
                    break;
                }
                i = slot.older;
            }
        }
        self.free.push(at);
        self.held = self.held.saturating_sub(1);
        // Seen at every tap: nothing to judge (the common case: no flow lookup).
        let all = if self.n >= 64 { u64::MAX } else { (1u64 << self.n) - 1 };
        if sighting.mask != all && key.roce {
            self.judge(&key, sighting);
        }
    }

    /// A sighting whose window passed: every tap that follows the flow and did not see it.
    fn judge(&mut self, key: &PacketKey, s: Sighting) {
        let Some(f) = self.flows.get_mut(&key.flow) else { return };
        let mut found = Vec::new();
        for (t, a) in f.at.iter().enumerate() {
            if s.mask & (1u64 << t) != 0 || !a.seen || a.first_origin >= s.first.ts_ns {
                continue;
            }
            let silent = t as u32;
            if a.last_origin > s.first.ts_ns {
                found.push((s, silent));
            } else if f.pending.len() < PENDING_PER_FLOW {
                f.pending.push((s, silent));
            } else {
                self.unconfirmed += 1;
            }
        }
        for (s, silent) in found {
            self.drop_found(&key.flow, s, silent);
        }
    }

    fn drop_found(&mut self, flow: &FlowKey, s: Sighting, silent: u32) {
        self.drops_total += 1;
        if let Some(f) = self.flows.get_mut(flow) {
            f.drops += 1;
            let pair = s.last.tap as usize * self.n + silent as usize;
            if let Some(p) = pair_entry(&mut f.pairs, pair) {
                p.drops += 1;
            }
        }
        if let Some(d) = self.pair_drops.get_mut(s.last.tap as usize * self.n + silent as usize) {
            *d += 1;
        }
        let d = TapDrop {
            flow: *flow,
            connection: s.conn,
            between_lids: is_lid(flow.src),
            psn: s.psn,
            opcode: s.opcode,
            last_seen: s.last.tap,
            missing_at: silent,
            first_frame: s.first.number,
            last_frame: s.last.number,
            first_source: s.first,
            last_source: s.last,
        };
        self.new_drops.push(d);
    }
}

impl Taps {
    /// Packets found lost between two taps since the last call (each also kept for the
    /// report, up to [`TapOptions::max_drops_listed`]): the caller reports them as
    /// `CAP-DROP-BETWEEN` findings.
    pub fn take_drops(&mut self) -> Vec<TapDrop> {
        let new = std::mem::take(&mut self.new_drops);
        let room = self.opts.max_drops_listed.saturating_sub(self.drops.len());
        self.drops.extend(new.iter().take(room).cloned());
        new
    }

    /// Settles every sighting still open (the captures ended): the drops this finds come
    /// from the next [`Taps::take_drops`]. Sightings waiting for a later packet at a silent
    /// tap stay unjudged and are counted ([`TapsReport::unconfirmed`]).
    pub fn end(&mut self) {
        while !self.order.is_empty() {
            self.settle_oldest();
        }
        for f in self.flows.values_mut() {
            self.unconfirmed += f.pending.len() as u64;
            f.pending.clear();
        }
    }

    /// The figures of the run: per tap, per pair of taps, per connection (the busiest
    /// [`CONNECTIONS_LISTED`]), the drops. `taps` names the files and their clock offsets,
    /// in merge order.
    pub fn report(&self, taps: Vec<TapInfo>) -> TapsReport {
        let n = self.n;
        let taps = taps
            .into_iter()
            .enumerate()
            .map(|(i, info)| TapReport {
                info,
                counts: self.per_tap.get(i).copied().unwrap_or_default(),
            })
            .collect();
        let mut pairs = Vec::new();
        for (i, h) in self.hist.iter().enumerate() {
            let (from, to) = ((i / n) as u32, (i % n) as u32);
            let drops = self.pair_drops.get(i).copied().unwrap_or(0);
            let h = h.as_ref().filter(|h| !h.is_empty());
            if h.is_none() && drops == 0 {
                continue;
            }
            pairs.push(PairReport {
                from,
                to,
                copies: h.map_or(0, |h| h.len()),
                latency_ns: h.map(|h| Latency {
                    min: h.min(),
                    p50: h.value_at_quantile(0.5),
                    p99: h.value_at_quantile(0.99),
                    max: h.max(),
                }),
                drops,
            });
        }
        let mut connections: Vec<ConnectionTaps> = self
            .flows
            .iter()
            .filter(|(_, f)| !f.pairs.is_empty())
            .map(|(k, f)| ConnectionTaps {
                src: k.src,
                dst: k.dst,
                dest_qp: k.dest_qp,
                drops: f.drops,
                pairs: f
                    .pairs
                    .iter()
                    .map(|p| ConnectionPair {
                        from: p.pair / n as u32,
                        to: p.pair % n as u32,
                        copies: p.copies,
                        latency_mean_ns: (p.copies > 0).then(|| {
                            u64::try_from(p.sum_ns / u128::from(p.copies)).unwrap_or(u64::MAX)
                        }),
                        latency_p50_ns: p.sketch.quantile(0.5, p.copies, p.min_ns, p.max_ns),
                        latency_p99_ns: p.sketch.quantile(0.99, p.copies, p.min_ns, p.max_ns),
                        latency_max_ns: (p.copies > 0).then_some(p.max_ns),
                        drops: p.drops,
                    })
                    .collect(),
            })
            .collect();
        let connections_total = connections.len() as u64;
        connections.sort_by(|a, b| {
            let busy = |c: &ConnectionTaps| c.pairs.iter().map(|p| p.copies + p.drops).sum::<u64>();
            (b.drops, busy(b))
                .cmp(&(a.drops, busy(a)))
                .then_with(|| (a.src, a.dst, a.dest_qp).cmp(&(b.src, b.dst, b.dest_qp)))
        });
        connections.truncate(CONNECTIONS_LISTED);
        TapsReport {
            window_ns: self.opts.window_ns,
            taps,
            pairs,
            connections_not_listed: connections_total - connections.len() as u64,
            connections,
            drops: self.drops_total,
            drops_listed: self.drops.clone(),
            unconfirmed: self.unconfirmed,
            settled_early: self.settled_early,
            flows_not_followed: self.flows_not_followed,
            frames_cited: Vec::new(),
        }
    }
}

/// Connections listed in [`TapsReport::connections`] at most (those with drops first, then
/// the busiest).
pub const CONNECTIONS_LISTED: usize = 100;

impl fmt::Debug for Taps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Taps").field("taps", &self.n).field("held", &self.held).finish()
    }
}

/// A tap as the report names it: its file and its clock's offset.
#[derive(Clone, Debug, Serialize)]
pub struct TapInfo {
    /// The capture file.
    pub file: String,
    /// Nanoseconds added to its timestamps before the merge.
    pub offset_ns: i64,
    /// Where the offset comes from: `reference` (the first file), `given` (`--tap-offset`),
    /// `estimated` (from the copies, [`estimate_offsets`]) or `none` (no copies to estimate
    /// from: 0).
    pub offset_from: &'static str,
    /// Copies the estimate was made from.
    pub offset_copies: u64,
}

/// One tap in the report.
#[derive(Clone, Debug, Serialize)]
pub struct TapReport {
    /// File and offset.
    #[serde(flatten)]
    pub info: TapInfo,
    /// Its frames.
    #[serde(flatten)]
    pub counts: TapCount,
}

/// One-way latency between two taps (the copy's time less the first sighting's).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Latency {
    /// Smallest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

/// A pair of taps: packets seen first at `from` and copied at `to`.
#[derive(Clone, Debug, Serialize)]
pub struct PairReport {
    /// The tap that saw the packets first.
    pub from: u32,
    /// The tap that saw them after.
    pub to: u32,
    /// Copies matched.
    pub copies: u64,
    /// Their latency, in nanoseconds (3 significant digits; min and max exact).
    pub latency_ns: Option<Latency>,
    /// Packets last seen at `from` and lost before `to`.
    pub drops: u64,
}

/// One connection's figures per pair of taps.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectionTaps {
    /// The packets' sender.
    pub src: IpAddr,
    /// Their receiver.
    pub dst: IpAddr,
    /// Their DestQP.
    pub dest_qp: u32,
    /// Its packets lost between taps.
    pub drops: u64,
    /// Per pair of taps.
    pub pairs: Vec<ConnectionPair>,
}

/// A connection's copies and drops between two taps.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectionPair {
    /// The tap that saw the packets first (or last, for drops).
    pub from: u32,
    /// The other tap.
    pub to: u32,
    /// Copies matched.
    pub copies: u64,
    /// Mean latency of the copies.
    pub latency_mean_ns: Option<u64>,
    /// Median latency of the copies (within 1/16 of it: a log-linear sketch per connection).
    pub latency_p50_ns: Option<u64>,
    /// 99th percentile of the copies' latency (within 1/16, as the median).
    pub latency_p99_ns: Option<u64>,
    /// Largest latency of the copies.
    pub latency_max_ns: Option<u64>,
    /// Packets lost between the two.
    pub drops: u64,
}

/// What `stats` shows of several taps (JSON `taps`).
#[derive(Clone, Debug, Serialize)]
pub struct TapsReport {
    /// The matching window, nanoseconds.
    pub window_ns: u64,
    /// Each tap, in the order the files were given.
    pub taps: Vec<TapReport>,
    /// Each pair of taps with copies or drops.
    pub pairs: Vec<PairReport>,
    /// Connections with copies or drops (see [`CONNECTIONS_LISTED`]).
    pub connections: Vec<ConnectionTaps>,
    /// Connections beyond the list.
    pub connections_not_listed: u64,
    /// Packets lost between taps.
    pub drops: u64,
    /// The first of them.
    pub drops_listed: Vec<TapDrop>,
    /// Packets missing at a tap that saw no later packet of their flow: not judged.
    pub unconfirmed: u64,
    /// Sightings settled before their window passed (more than
    /// [`TapOptions::max_sightings`] at once).
    pub settled_early: u64,
    /// RoCE packets of flows beyond [`TapOptions::max_flows`], not followed.
    pub flows_not_followed: u64,
    /// The frames the findings (or verdicts) cite, each with the tap and the number it has
    /// there, in merged order: filled by the caller after the pass (a second read of the
    /// merge, [`CitedFrame`]); absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames_cited: Vec<CitedFrame>,
}

/// A frame of a merged pass as its own file numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CitedFrame {
    /// Its number in the merge (what findings cite).
    pub frame: u64,
    /// The tap it was read from (an index into [`TapsReport::taps`]).
    pub tap: u32,
    /// Its number in that tap's file.
    pub source_frame: u64,
}

/// A tap's clock offset estimated from the copies it shares with the first file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetEstimate {
    /// Nanoseconds to add to the tap's timestamps (0 for the first file).
    pub offset_ns: i64,
    /// Copies matched with the first file.
    pub copies: u64,
    /// Whether both directions of some host pair were matched, so the one-way latency
    /// cancels out (as NTP assumes: the same latency both ways); if not, the offset also
    /// holds the latency of the one direction seen.
    pub both_directions: bool,
}

/// Packets read from the start of each file to estimate the offsets.
pub const OFFSET_SAMPLE: usize = 1 << 16;

/// Estimates each file's clock offset against the first's from the packets they share
/// (matched as [`Taps`] matches copies), over the first [`OFFSET_SAMPLE`] RoCE packets of
/// each: per host pair, the median difference each way; the offset is their mean (the
/// latency cancels), the median over host pairs; where no host pair is matched both ways,
/// the median difference. `None` for a file with no packet in common with the first.
pub fn estimate_offsets(
    caps: Vec<roce_capture::Capture>,
    cfg: &roce_parser::Config,
) -> Vec<Option<OffsetEstimate>> {
    let mut caps = caps.into_iter();
    let Some(first) = caps.next() else { return Vec::new() };
    // The first file's packets: time, and whether the key came more than once (ambiguous).
    let mut reference: FastHashMap<PacketKey, (u64, bool)> = FastHashMap::default();
    sample(first, cfg, |key, ts| {
        reference.entry(key).and_modify(|e| e.1 = true).or_insert((ts, false));
    });
    let mut out = vec![Some(OffsetEstimate { offset_ns: 0, copies: 0, both_directions: true })];
    for cap in caps {
        // Per host pair (low, high address) and direction: the differences.
        let mut diffs: FastHashMap<(IpAddr, IpAddr, bool), Vec<i64>> = FastHashMap::default();
        let mut copies = 0u64;
        sample(cap, cfg, |key, ts| {
            let Some(&(t0, false)) = reference.get(&key) else { return };
            let d = i64::try_from(i128::from(ts) - i128::from(t0)).unwrap_or(0);
            let (a, b) = (key.flow.src, key.flow.dst);
            let up = a <= b;
            let (lo, hi) = if up { (a, b) } else { (b, a) };
            diffs.entry((lo, hi, up)).or_default().push(d);
            copies += 1;
        });
        if copies == 0 {
            out.push(None);
            continue;
        }
        let mut both = Vec::new();
        let mut all = Vec::new();
        for ((lo, hi, up), v) in &diffs {
            all.extend_from_slice(v);
            if *up {
                if let Some(back) = diffs.get(&(*lo, *hi, false)) {
                    let (f, b) = (median(v.clone()), median(back.clone()));
                    both.push(f / 2 + b / 2 + (f % 2 + b % 2) / 2);
                }
            }
        }
        let both_directions = !both.is_empty();
        let est = if both_directions { median(both) } else { median(all) };
        out.push(Some(OffsetEstimate { offset_ns: est.saturating_neg(), copies, both_directions }));
    }
    out
}

/// The RoCE packets of the first [`OFFSET_SAMPLE`] of a capture, each key once per file
/// (a key again is a retransmission: ambiguous, left out).
fn sample(
    cap: roce_capture::Capture,
    cfg: &roce_parser::Config,
    mut f: impl FnMut(PacketKey, u64),
) {
    let mut seen: FastHashMap<PacketKey, bool> = FastHashMap::default();
    seen.reserve(OFFSET_SAMPLE);
    let mut first: Vec<(PacketKey, u64)> = Vec::with_capacity(OFFSET_SAMPLE);
    // The key needs no ICRC verdict: the sample is parsed without verifying it.
    let cfg = roce_parser::Config { verify: false, ..*cfg };
    // Read until the sample is full, not to the end: damage is skipped as the pass skips it
    // (the pass over the file reports it).
    let mut cap = cap;
    while first.len() < OFFSET_SAMPLE {
        let Some(next) = cap.next_frame() else { break };
        let Ok(frame) = next else { continue };
        let d = crate::decode(frame, &cfg);
        if let Some(key) = PacketKey::of(&d).filter(|k| k.roce) {
            match seen.get_mut(&key) {
                Some(again) => *again = true,
                None => {
                    seen.insert(key, false);
                    first.push((key, d.frame.ts_ns));
                }
            }
        }
    }
    for (key, ts) in first {
        if seen.get(&key) == Some(&false) {
            f(key, ts);
        }
    }
}

fn median(mut v: Vec<i64>) -> i64 {
    if v.is_empty() {
        return 0;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    *m
}

/// What a pass over several taps hands on ([`run_merged`]).
pub enum TapStep<'s, 'd, 'a> {
    /// A frame the model takes: a packet's first sighting, or a frame the taps do not match.
    Frame(&'d Decoded<'a>),
    /// A copy of a packet another tap saw first (that frame's merge number): for a consumer
    /// that shows every frame (`dissect`); the model must not take it.
    Copy(&'d Decoded<'a>, u64),
    /// A packet found lost between two taps (report it as `CAP-DROP-BETWEEN`).
    Drop(&'s TapDrop),
}

/// The pass over several captures: `merge` read by `pass` in time order, each frame through
/// `taps` ([`Taps::observe`]), every step handed to `consume` in order (a drop as soon as
/// its window has passed, before the frame that passed it). `consume` returns, for a
/// [`TapStep::Frame`] it fed to a model, the connection the model put it in
/// ([`Taps::attach`]), or `None`. The summary's `taps` is `None`: the caller makes it with
/// [`Taps::report`], naming the files.
pub fn run_merged(
    pass: crate::Pass<'_>,
    merge: roce_capture::Merge,
    taps: &mut Taps,
    mut consume: impl FnMut(TapStep<'_, '_, '_>) -> Option<ConnId>,
) -> Result<crate::ReadSummary, roce_capture::CaptureError> {
    let summary = pass.run(merge, |d| {
        let verdict = taps.observe(d);
        for drop in taps.take_drops() {
            consume(TapStep::Drop(&drop));
        }
        match verdict {
            TapVerdict::First => {
                if let Some(conn) = consume(TapStep::Frame(d)) {
                    taps.attach(conn);
                }
            }
            TapVerdict::Copy { of } => {
                consume(TapStep::Copy(d, of));
            }
        }
    })?;
    taps.end();
    for drop in taps.take_drops() {
        consume(TapStep::Drop(&drop));
    }
    Ok(summary)
}

impl TapDrop {
    /// Whether the loss belongs to `shard`: its host pair's (a packet between LIDs, which
    /// has none, is shard 0's, as its frames are), so that the shards of a run report each
    /// loss once.
    pub fn in_shard(&self, shard: roce_conformance::Shard) -> bool {
        let pair = (!self.between_lids).then_some((self.flow.src, self.flow.dst));
        shard.is_all()
            || pair.map_or(0, |(a, b)| roce_conformance::Shard::of_pair(a, b, shard.count()))
                == shard.index()
    }

    /// Reports the loss to `checker` as a `CAP-DROP-BETWEEN` finding citing the frames of
    /// its first and last sightings, on the connection the packet was first seen in (or the
    /// one the model gives its flow now), with [`TapDrop::message`]'s sentence: what every
    /// consumer of a merged pass (`check`, `report`, `diagnose`) does with a
    /// [`TapStep::Drop`].
    pub fn report_to<X: Default>(&self, checker: &mut Checker<X>, names: &[String]) {
        let connection = match self.connection {
            Some(c) => Some(c),
            None if self.between_lids => None,
            None => Some(checker.connection_of(&self.flow)),
        };
        let both = [self.first_frame, self.last_frame];
        let frames = if both[0] == both[1] { &both[..1] } else { &both[..] };
        checker.report_external(
            &roce_conformance::internal::rules::CAP_DROP_BETWEEN,
            connection,
            frames,
            Some(roce_conformance::Psn::new(self.psn)),
            || self.message(names),
        );
    }

    /// The finding's sentence, naming the files (`names`, in merge order) and each frame's
    /// number in its own file.
    pub fn message(&self, names: &[String]) -> String {
        let name = |t: u32| names.get(t as usize).map_or("?", String::as_str);
        let op = roce_parser::opcode_name(self.opcode);
        let (first, last) = (self.first_source, self.last_source);
        let seen = if first.tap == last.tap {
            format!("seen at {}:{}", name(first.tap), first.source_number)
        } else {
            format!(
                "seen at {}:{} and last at {}:{}",
                name(first.tap),
                first.source_number,
                name(last.tap),
                last.source_number
            )
        };
        format!(
            "PSN {} ({op}) to QP 0x{:06x} {seen}, not at {}, which saw the connection's packets before and after it: lost between {} and {}",
            self.psn,
            self.flow.dest_qp,
            name(self.missing_at),
            name(self.last_seen),
            name(self.missing_at),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::Sketch;

    /// Every value falls in a bucket whose range holds it, buckets grow with the value, and
    /// a bucket is at most 1/8 of its lowest value wide.
    #[test]
    fn a_value_is_in_its_bucket() {
        let mut values: Vec<u64> = (0..5000).collect();
        for e in 4..64 {
            let p = 1u64 << e;
            values.extend([p - 1, p, p + 1, p + p / 3, p.saturating_mul(2).saturating_sub(1)]);
        }
        values.push(u64::MAX);
        let mut last = 0;
        values.sort_unstable();
        for v in values {
            let b = Sketch::bucket(v);
            let (low, width) = Sketch::range(b);
            assert!(low <= v && v - low < width, "{v}: bucket {b} [{low}, +{width})");
            assert!(b >= last, "{v}: bucket {b} after {last}");
            assert!(v < 16 || width * 8 <= low, "{v}: width {width} of {low}");
            last = b;
        }
    }

    /// p50 and p99 of a skewed set of latencies against the exact ones: within 1/16.
    #[test]
    fn quantiles_are_within_a_sixteenth() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut v = Vec::new();
        let mut s = Sketch::default();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Most near 1.5 us, a tail up to ~400 us.
            let lat = 1_200 + x % 600 + if x.is_multiple_of(97) { x % 400_000 } else { 0 };
            v.push(lat);
            s.add(lat);
        }
        v.sort_unstable();
        let (lo, hi) = (v[0], v[v.len() - 1]);
        for q in [0.5, 0.99, 0.999, 1.0] {
            let exact = v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
            let got = s.quantile(q, v.len() as u64, lo, hi).unwrap();
            let err = got.abs_diff(exact) as f64 / exact as f64;
            assert!(err <= 1.0 / 16.0, "q {q}: {got} against {exact}");
        }
        assert!(s.buckets.len() < 80, "{} buckets", s.buckets.len());
        assert_eq!(Sketch::default().quantile(0.5, 0, 0, 0), None);
    }
}
