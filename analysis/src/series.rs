//! What a flow's time–sequence graph is made of, gathered while the capture streams past: a
//! [`Series`] per flow, kept in the connection model's slot for it (`Checker<X>`,
//! `Checker::ext_mut`) and fed one [`Sample`] per packet. Ordinary points (new requests,
//! ACKs) are decimated to a fixed budget; marks (retransmissions, NAKs, CNPs, READ spans,
//! ...) are all kept, runs of one kind joined, and past their own budget neighbours merge,
//! the number of packets each mark stands for kept (`n`), so nothing drawn ever disappears.
//! Request payload bytes over time are counted in [`Bins`].
//!
//! Which packet is a request, an ACK, a NAK or a span's response to which flow is the
//! report's collector's choice, in the command line crate (`report::collect`), as are its
//! filter selection and its page.

use std::collections::VecDeque;

pub use crate::bins::Bins;

/// Ordinary points kept per flow for each line (new requests, the ACK line).
pub const POINT_BUDGET: usize = 2000;
/// Marks kept per flow; beyond, neighbours of the same kind merge.
pub const MARK_BUDGET: usize = 1000;
/// READ and atomic requests waiting for their responses, per flow.
const OPEN_SPANS: usize = 64;
/// The longest silences kept per flow (candidates for the graph's folded idle stretches).
pub(crate) const GAPS_KEPT: usize = 32;

/// A PSN made monotonic across the 2^24 wrap: each PSN is placed within ±2^23 of the last.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Unroll {
    last: Option<i64>,
}

impl Unroll {
    /// The unrolled value of `psn` nearest the last one, which it becomes.
    pub(crate) fn unroll(&mut self, psn: u32) -> i64 {
        let u = self.near(psn);
        self.last = Some(u);
        u
    }

    /// The unrolled value of `psn` nearest the last one, without moving.
    pub(crate) fn near(&self, psn: u32) -> i64 {
        let psn = i64::from(psn & 0xff_ffff);
        match self.last {
            None => psn,
            Some(last) => {
                let d = (psn - last).rem_euclid(1 << 24);
                let d = if d >= 1 << 23 { d - (1 << 24) } else { d };
                last + d
            }
        }
    }
}

/// A point: time (ns since the epoch) and unrolled PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pt {
    /// The packet's capture time, nanoseconds since the Unix epoch.
    pub t: u64,
    /// Its PSN, unrolled across the 2^24 wrap (a PSN past the wrap is above those before).
    pub psn: i64,
    /// Its frame number in the capture (1-based).
    pub frame: u64,
}

/// Points kept every `stride`-th; at twice the budget every other one goes and the stride
/// doubles (an even thinning by packet count, bounded memory, O(1) amortised per point).
#[derive(Debug, Clone, Default)]
pub struct Decimated {
    pts: Vec<Pt>,
    stride: u64,
    seen: u64,
}

impl Decimated {
    /// One more point, kept when it falls on the stride.
    pub(crate) fn push(&mut self, p: Pt) {
        if self.stride == 0 {
            self.stride = 1;
        }
        self.seen += 1;
        if !(self.seen - 1).is_multiple_of(self.stride) {
            return;
        }
        self.pts.push(p);
        if self.pts.len() >= 2 * POINT_BUDGET {
            let mut i = 0;
            self.pts.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
        }
    }

    /// The points kept, in arrival order.
    pub fn points(&self) -> &[Pt] {
        &self.pts
    }

    /// Points pushed (kept or not).
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// When a flow's packets were seen: the first and last time, and the 32 longest silences
/// between two of its packets (every packet counts, drawn or thinned out), so a graph folds
/// only stretches in which nothing of the flow happened. O(1) per packet but when a silence
/// longer than the shortest kept one ends (then O(32)).
#[derive(Debug, Clone, Default)]
pub struct Activity {
    span: Option<(u64, u64)>,
    /// Silences (start, end), unordered; `min` is the shortest one's length once full.
    gaps: Vec<(u64, u64)>,
    min: u64,
}

impl Activity {
    /// A packet at `t`.
    pub(crate) fn at(&mut self, t: u64) {
        let Some((first, last)) = self.span else {
            self.span = Some((t, t));
            return;
        };
        if t < last {
            // Out of order: a silence it falls in was not one.
            self.span = Some((first.min(t), last));
            let before = self.gaps.len();
            self.gaps.retain(|&(a, b)| !(a < t && t < b));
            if self.gaps.len() != before {
                self.min = 0;
            }
            return;
        }
        self.span = Some((first, t));
        let len = t - last;
        if len == 0 || (self.gaps.len() == GAPS_KEPT && len <= self.min) {
            return;
        }
        if self.gaps.len() == GAPS_KEPT {
            let shortest = self.gaps.iter().enumerate().min_by_key(|(_, (a, b))| b - a);
            if let Some(i) = shortest.map(|(i, _)| i) {
                self.gaps.swap_remove(i);
            }
        }
        self.gaps.push((last, t));
        if self.gaps.len() == GAPS_KEPT {
            self.min = self.gaps.iter().map(|(a, b)| b - a).min().unwrap_or(0);
        }
    }

    /// The first and last packet's times.
    pub fn span(&self) -> Option<(u64, u64)> {
        self.span
    }

    /// The longest silences, in time order.
    pub fn gaps(&self) -> Vec<(u64, u64)> {
        let mut v = self.gaps.clone();
        v.sort_unstable();
        v
    }
}

/// What a mark shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Request packets sent again (PSN not above the highest sent before).
    Retx,
    /// NAK: PSN sequence error.
    Nak,
    /// RNR NAK.
    Rnr,
    /// NAK with a fatal code (invalid request, remote access or operational error, ...).
    Fatal,
    /// Packets carrying ECN Congestion Experienced.
    Ce,
    /// Congestion Notification Packets (the notification point's answer to CE).
    Cnp,
    /// READ request to its last response.
    Read,
    /// Atomic request to its atomic ACK.
    Atomic,
}

impl Kind {
    /// Every kind, in the order a graph's legend lists them.
    pub const ALL: [Kind; 8] = [
        Kind::Retx,
        Kind::Nak,
        Kind::Rnr,
        Kind::Fatal,
        Kind::Ce,
        Kind::Cnp,
        Kind::Read,
        Kind::Atomic,
    ];

    /// The CSS class of its marks (`m-retx`, ...), which tests count.
    pub fn class(self) -> &'static str {
        match self {
            Kind::Retx => "m-retx",
            Kind::Nak => "m-nak",
            Kind::Rnr => "m-rnr",
            Kind::Fatal => "m-fatal",
            Kind::Ce => "m-ce",
            Kind::Cnp => "m-cnp",
            Kind::Read => "m-read",
            Kind::Atomic => "m-atomic",
        }
    }

    /// What its marks show, in the legend and the marks' tooltips.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Retx => "retransmitted",
            Kind::Nak => "NAK (PSN sequence error)",
            Kind::Rnr => "RNR NAK",
            Kind::Fatal => "fatal NAK",
            Kind::Ce => "ECN-CE",
            Kind::Cnp => "CNP",
            Kind::Read => "READ request -> response",
            Kind::Atomic => "atomic request -> ACK",
        }
    }
}

/// One mark: from (t0, psn0) to (t1, psn1), standing for `n` packets, frames `frame0..=frame1`,
/// the first packet's opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// What it shows.
    pub kind: Kind,
    /// The first packet's time, ns since the epoch.
    pub t0: u64,
    /// The last packet's time (a span's: its last response's).
    pub t1: u64,
    /// The lowest PSN it covers, unrolled.
    pub psn0: i64,
    /// The highest PSN it covers, unrolled (a span's: its last response's).
    pub psn1: i64,
    /// The first packet's frame number.
    pub frame0: u64,
    /// The last packet's frame number.
    pub frame1: u64,
    /// Packets it stands for (a READ or atomic span: its requests).
    pub n: u64,
    /// The first packet's opcode name (`RC_SEND_ONLY`, ...).
    pub opcode: &'static str,
}

/// Marks in arrival order, bounded by merging neighbours.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    v: Vec<Mark>,
}

impl Marks {
    /// A one-packet mark; joins the last mark when it is a run of the same kind with the PSN
    /// next in line (`join`).
    fn push(&mut self, m: Mark, join: bool) {
        if let Some(last) = self.v.last_mut() {
            if join && last.kind == m.kind && m.psn0 == last.psn1 + 1 {
                last.t1 = m.t1;
                last.psn1 = m.psn1;
                last.frame1 = m.frame1;
                last.n += m.n;
                return;
            }
        }
        self.v.push(m);
        if self.v.len() > MARK_BUDGET {
            self.merge();
        }
    }

    /// Halves the marks: each mark takes the next one of its kind when they are adjacent.
    fn merge(&mut self) {
        let mut out: Vec<Mark> = Vec::with_capacity(self.v.len() / 2 + 1);
        let mut pending: Option<Mark> = None;
        for m in self.v.drain(..) {
            match pending.take() {
                None => pending = Some(m),
                Some(p) if p.kind == m.kind => out.push(Mark {
                    t1: m.t1.max(p.t1),
                    psn0: p.psn0.min(m.psn0),
                    psn1: p.psn1.max(m.psn1),
                    frame1: m.frame1,
                    n: p.n + m.n,
                    ..p
                }),
                Some(p) => {
                    out.push(p);
                    pending = Some(m);
                }
            }
        }
        out.extend(pending);
        // Marks of alternating kinds do not merge pairwise: then same kinds merge across.
        if out.len() > MARK_BUDGET {
            out.sort_by_key(|m| (m.kind as u8, m.t0));
            let mut again: Vec<Mark> = Vec::with_capacity(out.len() / 2 + 8);
            let mut open = false;
            for m in out {
                match again.last_mut() {
                    Some(p) if open && p.kind == m.kind => {
                        p.t1 = p.t1.max(m.t1);
                        p.psn0 = p.psn0.min(m.psn0);
                        p.psn1 = p.psn1.max(m.psn1);
                        p.frame1 = p.frame1.max(m.frame1);
                        p.n += m.n;
                        open = false;
                    }
                    _ => {
                        again.push(m);
                        open = true;
                    }
                }
            }
            again.sort_by_key(|m| m.t0);
            out = again;
        }
        self.v = out;
    }

    /// The marks kept; every packet marked is in one of them (`n`).
    pub fn all(&self) -> &[Mark] {
        &self.v
    }

    /// Packets the marks of `kind` stand for.
    pub fn count(&self, kind: Kind) -> u64 {
        self.v.iter().filter(|m| m.kind == kind).map(|m| m.n).sum()
    }
}

/// Counters of a flow for the report's tables (as `stats` counts them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets of the flow, of any kind.
    pub packets: u64,
    /// Request packets it sent, retransmitted ones included.
    pub requests: u64,
    /// Request packets sent again (the connection model's verdict).
    pub retransmitted: u64,
    /// NAKs to its requests other than RNR NAKs (PSN sequence errors and fatal codes).
    pub naks: u64,
    /// RNR NAKs to its requests.
    pub rnr_naks: u64,
    /// CNPs drawn on this flow (the report draws a CNP on the flow whose traffic it slows).
    pub cnps: u64,
    /// ECN-CE packets drawn on this flow (its own, and the responses to its requests).
    pub ecn_ce: u64,
    /// ACKs to its requests counted (the report counts acknowledge packets, not the READ
    /// responses and atomic ACKs it also draws on the ACK line).
    pub acks: u64,
    /// Payload bytes of its new requests.
    pub new_payload: u64,
    /// Payload bytes of its retransmitted requests.
    pub retx_payload: u64,
}

impl Counts {
    /// Adds `o`'s counts to these (one connection's incarnations, or its two directions).
    pub fn merge(&mut self, o: &Counts) {
        self.packets += o.packets;
        self.requests += o.requests;
        self.retransmitted += o.retransmitted;
        self.naks += o.naks;
        self.rnr_naks += o.rnr_naks;
        self.cnps += o.cnps;
        self.ecn_ce += o.ecn_ce;
        self.acks += o.acks;
        self.new_payload += o.new_payload;
        self.retx_payload += o.retx_payload;
    }
}

/// A READ or atomic request waiting for its response.
#[derive(Debug, Clone, Copy)]
struct Open {
    kind: Kind,
    start: Pt,
    last: Option<Pt>,
    opcode: &'static str,
}

/// The graph data of one flow, as requester (its requests; the ACKs, NAKs and READ
/// responses its peer sends back) and as the sender of its own marks (CE, CNP).
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The last PSN, for unrolling the next.
    pub(crate) unroll: Unroll,
    /// New (not retransmitted) request packets, decimated.
    pub requests: Decimated,
    /// ACKs and responses acknowledging its requests, at their PSN (the ACK line), decimated.
    pub acks: Decimated,
    /// Retransmissions, NAKs, CE, CNPs, READ and atomic spans.
    pub marks: Marks,
    /// Its counters, every packet counted (thinned out or not).
    pub counts: Counts,
    /// When its packets were seen (for the idle stretches a graph folds).
    pub activity: Activity,
    /// Bytes per time bin: [new request payload, retransmitted request payload].
    pub bytes: Bins<2>,
    /// The last request was a retransmission (the next one may join its run).
    in_retx_run: bool,
    open: VecDeque<Open>,
}

/// One packet, as the series needs it.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Capture time, nanoseconds since the Unix epoch.
    pub t: u64,
    /// Frame number in the capture (1-based).
    pub frame: u64,
    /// The BTH PSN (24 bits).
    pub psn: u32,
    /// The opcode's name (`RC_RDMA_READ_REQUEST`, ...).
    pub opcode: &'static str,
    /// Payload length, as the packet's lengths announce it (without headers, pad and ICRC).
    pub payload: u64,
}

impl Series {
    fn mark(&mut self, kind: Kind, at: Pt, n: u64, opcode: &'static str, join: bool) {
        let m = Mark {
            kind,
            t0: at.t,
            t1: at.t,
            psn0: at.psn,
            psn1: at.psn,
            frame0: at.frame,
            frame1: at.frame,
            n,
            opcode,
        };
        self.marks.push(m, join);
    }

    fn pt(&mut self, s: &Sample) -> Pt {
        Pt { t: s.t, psn: self.unroll.unroll(s.psn), frame: s.frame }
    }

    /// A packet of this flow (any kind) counted, at `t`.
    pub fn packet(&mut self, t: u64) {
        self.counts.packets += 1;
        self.activity.at(t);
    }

    /// A request packet of this flow: [`Series::packet`] then [`Series::request`], with the
    /// packet's time recorded once (recording the same time twice changes nothing).
    pub fn request_packet(&mut self, s: &Sample, span: Option<Kind>, retransmitted: bool) {
        self.counts.packets += 1;
        self.request(s, span, retransmitted);
    }

    /// A request of this flow, `retransmitted` or not (the connection model's verdict,
    /// `Observation::retransmitted`); `read`/`atomic` open a span to its response.
    pub fn request(&mut self, s: &Sample, span: Option<Kind>, retransmitted: bool) {
        self.activity.at(s.t);
        self.counts.requests += 1;
        let at = self.pt(s);
        if retransmitted {
            self.counts.retransmitted += 1;
            self.counts.retx_payload += s.payload;
            self.bytes.add(s.t, 1, s.payload);
            let join = self.in_retx_run;
            self.mark(Kind::Retx, at, 1, s.opcode, join);
            self.in_retx_run = true;
        } else {
            self.counts.new_payload += s.payload;
            self.bytes.add(s.t, 0, s.payload);
            self.requests.push(at);
            self.in_retx_run = false;
        }
        if let Some(kind) = span {
            if self.open.len() == OPEN_SPANS {
                self.close_oldest();
            }
            self.open.push_back(Open { kind, start: at, last: None, opcode: s.opcode });
        }
    }

    fn close_oldest(&mut self) {
        if let Some(o) = self.open.pop_front() {
            self.close(o);
        }
    }

    fn close(&mut self, o: Open) {
        let end = o.last.unwrap_or(o.start);
        let m = Mark {
            kind: o.kind,
            t0: o.start.t,
            t1: end.t,
            psn0: o.start.psn,
            psn1: end.psn,
            frame0: o.start.frame,
            frame1: end.frame,
            n: 1,
            opcode: o.opcode,
        };
        self.marks.push(m, false);
    }

    /// A packet that answers or marks this flow's requests, at `s.t`: its point, the PSN
    /// placed near the flow's unrolled PSNs (it does not extend them, as a request does).
    fn answer_at(&mut self, s: &Sample) -> Pt {
        self.activity.at(s.t);
        Pt { t: s.t, psn: self.unroll.near(s.psn), frame: s.frame }
    }

    /// An ACK (or a response carrying one) to this flow's requests: the ACK line; `counted`
    /// in [`Counts::acks`] or not.
    pub fn ack(&mut self, s: &Sample, counted: bool) {
        let at = self.answer_at(s);
        self.counts.acks += u64::from(counted);
        self.acks.push(at);
    }

    /// A NAK of `kind` (Nak, Rnr, Fatal) to this flow's requests.
    pub fn nak(&mut self, s: &Sample, kind: Kind) {
        let at = self.answer_at(s);
        match kind {
            Kind::Rnr => self.counts.rnr_naks += 1,
            _ => self.counts.naks += 1,
        }
        self.mark(kind, at, 1, s.opcode, false);
    }

    /// A READ response or atomic ACK: extends (or, when `last`, closes) the open span it
    /// answers, the latest one at or below its PSN.
    pub fn span_response(&mut self, s: &Sample, kind: Kind, last: bool) {
        let at = self.answer_at(s);
        let Some(i) = self.open.iter().rposition(|o| o.kind == kind && o.start.psn <= at.psn)
        else {
            return;
        };
        if let Some(o) = self.open.get_mut(i) {
            o.last = Some(at);
        }
        if last {
            if let Some(o) = self.open.remove(i) {
                self.close(o);
            }
        }
    }

    /// A CE-marked packet or a CNP, drawn at this flow's PSN `s.psn`.
    pub fn congestion(&mut self, s: &Sample, kind: Kind) {
        let at = self.answer_at(s);
        match kind {
            Kind::Cnp => self.counts.cnps += 1,
            _ => self.counts.ecn_ce += 1,
        }
        // A CNP's PSN means nothing: it is drawn at the flow's latest PSN.
        let at = if kind == Kind::Cnp {
            Pt { psn: self.requests.points().last().map_or(at.psn, |p| p.psn), ..at }
        } else {
            at
        };
        self.mark(kind, at, 1, s.opcode, false);
    }

    /// Closes the spans still open (the incarnation ended).
    pub fn end(&mut self) {
        while !self.open.is_empty() {
            self.close_oldest();
        }
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.requests.seen() == 0 && self.acks.seen() == 0 && self.marks.all().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: u64, psn: u32) -> Sample {
        Sample { t, frame: t, psn, opcode: "RC_SEND_ONLY", payload: 10 }
    }

    #[test]
    fn unroll_crosses_the_wrap() {
        let mut u = Unroll::default();
        assert_eq!(u.unroll(0xff_fffe), 0xff_fffe);
        assert_eq!(u.unroll(1), 0x100_0001);
        assert_eq!(u.unroll(0xff_ffff), 0xff_ffff);
    }

    #[test]
    fn retransmission_runs_join_and_count() {
        let mut x = Series::default();
        for p in 0..10 {
            x.request(&s(p as u64, p), None, false);
        }
        for p in 5..10 {
            x.request(&s(100 + p as u64, p), None, true);
        }
        x.request(&s(200, 10), None, false);
        x.request(&s(300, 3), None, true);
        assert_eq!(x.counts.retransmitted, 6);
        assert_eq!(x.marks.all().len(), 2);
        assert_eq!(x.marks.count(Kind::Retx), 6);
    }

    #[test]
    fn activity_keeps_the_longest_silences() {
        let mut a = Activity::default();
        let mut t = 1_000u64;
        for i in 0..1000u64 {
            a.at(t);
            t += if i % 100 == 99 { 1_000_000 + i } else { 10 };
        }
        let g = a.gaps();
        assert_eq!(g.len(), GAPS_KEPT);
        // The nine long silences are all there, each exactly.
        let long: Vec<_> = g.iter().filter(|(x, y)| y - x >= 1_000_000).collect();
        let lens: Vec<u64> = long.iter().map(|(x, y)| y - x).collect();
        assert_eq!(lens, (0..9).map(|k| 1_000_099 + 100 * k).collect::<Vec<_>>(), "{g:?}");
        // A packet out of order inside a silence: that silence is gone.
        let (x, y) = *long[0];
        a.at(x + (y - x) / 2);
        assert!(!a.gaps().contains(&(x, y)));
        assert_eq!(a.span().map(|s| s.0), Some(1_000));
    }

    #[test]
    fn budgets_hold_and_counts_stay() {
        let mut x = Series::default();
        for i in 0..200_000u32 {
            x.request(&s(u64::from(i) * 2, i), None, false);
            if i % 7 == 0 {
                x.nak(&s(u64::from(i) * 2 + 1, i), Kind::Nak);
            }
            if i % 11 == 0 {
                x.congestion(&s(u64::from(i) * 2 + 1, i), Kind::Cnp);
            }
        }
        assert!(x.requests.points().len() < 2 * POINT_BUDGET);
        assert!(x.marks.all().len() <= MARK_BUDGET);
        assert_eq!(x.marks.count(Kind::Nak), x.counts.naks);
        assert_eq!(x.marks.count(Kind::Cnp), x.counts.cnps);
    }
}
