//! The graphs as SVG, written by hand.
//!
//! Why not plotters (the project's plotting anchor, in the tree through criterion): measured
//! on plotters-svg 0.3.7's source (`src/svg.rs`), its `SVGBackend` writes primitives only;
//! no element can get a `<title>` child (the hover text every mark needs), a class (what the
//! page's style, legend and tests select on) or a `data-` attribute (the packets a merged
//! mark stands for): the only `<title>`/class in that file is a test's chart caption. Each
//! point is one `<circle cx=".." cy=".." r=".." opacity=".." fill=".." stroke=".."
//! stroke-width=".."/>` (~85 bytes); a point here is ~14 bytes of one shared `<path>`, so
//! the same size bound holds ~6x more points. What is drawn is simple (points, lines, a few
//! shapes, axes): a few hundred lines here against a dependency that cannot say what is
//! needed.

use std::fmt::Write as _;

use roce_analysis::series::{Bins, Kind, Mark, Pt};

use super::collect::{CmEvent, Graph, Panel};
use super::html::esc;

/// A cited frame in a graph: (panel index, time, PSN, opcode, frame number).
pub type At = (usize, u64, u32, &'static str, u64);

/// A finding drawn on a graph: its rule, severity, message and where its frames are.
#[derive(Debug, Clone)]
pub struct FindingMark<'a> {
    pub rule: &'a str,
    pub severity: &'a str,
    pub message: &'a str,
    pub frames: &'a [u64],
    /// Per cited frame found in this graph.
    pub at: Vec<At>,
}

pub const WIDTH: f64 = 960.0;
const PANEL_H: f64 = 300.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 44.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 34.0;

/// An idle stretch (no packet of the connection, no CM message, no cited frame) is folded
/// when it lasts at least this long...
pub const FOLD_MIN_NS: u64 = 1_000;
/// ... and at least this many times the median spacing of the packets the graph draws...
pub const FOLD_TYPICAL: u64 = 10;
/// ... a stretch of PSNs no packet used, when it is at least this many PSNs...
pub const FOLD_MIN_PSN: f64 = 64.0;
/// ... and (both) when it is more than 1/`FOLD_RATIO` of what is left unfolded: active
/// periods and PSN ranges fill the plot.
pub const FOLD_RATIO: f64 = 8.0;
/// The time kept beside a fold (at most a fiftieth of it): an instant between two folds is
/// drawn in the middle of its room.
const FOLD_MARGIN_NS: f64 = 20_000.0;
/// Folds per axis at most (the longest stretches first).
pub const MAX_FOLDS: usize = 12;
/// The room a fold takes on an axis (pixels).
const FOLD_PX: f64 = 18.0;
/// 1/`EQUAL` of an axis' room is shared equally among its active ranges, the rest in
/// proportion to their lengths or weights.
const EQUAL: f64 = 5.0;

/// An axis: breakpoints (pixel, value), values increasing, linear in between; a fold is the
/// piece between an active range's end and the next one's start, `FOLD_PX` long whatever
/// it holds. Part of the room is shared equally among the active ranges (`EQUAL`), the
/// rest in proportion to their lengths (or weights), so a short burst between two folds
/// still has room.
#[derive(Debug, Clone)]
pub struct Axis {
    pts: Vec<(f64, f64)>,
    /// Folded stretches (values), in order.
    pub folds: Vec<(f64, f64)>,
}

impl Axis {
    /// The axis over [lo, hi] from pixel `from` to pixel `to` (`to` < `from` for a y axis),
    /// with `folds` (disjoint, in order, inside the range).
    pub fn new(lo: f64, hi: f64, folds: Vec<(f64, f64)>, from: f64, to: f64) -> Self {
        Self::weighted(lo, hi, folds, (from, to), &[], 0.5)
    }

    /// As [`Axis::new`] over pixels (from, to), the room of each active range in proportion
    /// to `weights` (one per range, e.g. what is drawn in it) rather than to its length, and
    /// `margin` (in values) kept beside each fold.
    pub fn weighted(
        lo: f64,
        hi: f64,
        folds: Vec<(f64, f64)>,
        (from, to): (f64, f64),
        weights: &[f64],
        margin: f64,
    ) -> Self {
        let hi = hi.max(lo);
        let dir = if to < from { -1.0 } else { 1.0 };
        let room = (to - from).abs();
        let mut active = Vec::with_capacity(folds.len() + 1);
        let mut at = lo;
        // Each fold gives `margin` (at most a fiftieth of its length) to the ranges beside
        // it: a range of one instant (or one PSN) has a middle to be drawn at.
        for &(a, b) in &folds {
            let m = margin.min((b - a) / 50.0);
            active.push((at, a + m));
            at = b - m;
        }
        active.push((at, hi));
        let n = active.len() as f64;
        let avail = (room - FOLD_PX * folds.len() as f64).max(n);
        let by_weight = weights.len() == active.len() && weights.iter().sum::<f64>() > 0.0;
        let total: f64 =
            if by_weight { weights.iter().sum() } else { active.iter().map(|(a, b)| b - a).sum() };
        let mut pts = Vec::with_capacity(2 * active.len());
        let mut px = from;
        for (i, &(a, b)) in active.iter().enumerate() {
            let w = if by_weight { weights.get(i).copied().unwrap_or(0.0) } else { b - a };
            let share = if total > 0.0 { w / total } else { 1.0 / n };
            pts.push((px, a));
            px += dir * (avail / n / EQUAL + avail * (1.0 - 1.0 / EQUAL) * share);
            if i + 1 == active.len() {
                px = to;
            }
            pts.push((px, b));
            px += dir * FOLD_PX;
        }
        Axis { pts, folds }
    }

    /// The pixel of value `v`.
    pub fn px(&self, v: f64) -> f64 {
        let j = self.pts.partition_point(|p| p.1 <= v);
        match (j.checked_sub(1).and_then(|i| self.pts.get(i)), self.pts.get(j)) {
            (Some(&(xa, va)), Some(&(xb, vb))) if vb > va => {
                xa + (xb - xa) * ((v - va) / (vb - va))
            }
            (Some(&(xa, _)), _) => xa,
            (None, _) => self.pts.first().map_or(0.0, |p| p.0),
        }
    }

    /// The breakpoints as the page's script reads them ("px,v px,v ...").
    fn attr(&self) -> String {
        let mut s = String::new();
        for &(x, v) in &self.pts {
            let x = Px(x);
            let _ = write!(s, "{x:.3},{v} ");
        }
        s.pop();
        s
    }

    /// The active ranges: (pixel from, pixel to, value from, value to).
    fn active(&self) -> impl Iterator<Item = (f64, f64, f64, f64)> + '_ {
        self.pts.chunks_exact(2).map(|c| match c {
            [(pa, va), (pb, vb)] => (*pa, *pb, *va, *vb),
            _ => (0.0, 0.0, 0.0, 0.0),
        })
    }

    /// Where ticks go: in each active range, round values (`step` of about one per
    /// `per_px` pixels of it; one at its value when it has one), none closer than `gap`
    /// pixels to the one before. (pixel, value, the step). The page's script ticks the same
    /// way over a zoomed view.
    fn ticks(&self, per_px: f64, gap: f64, step: fn(f64, f64) -> f64) -> Vec<(f64, f64, f64)> {
        let mut out: Vec<(f64, f64, f64)> = Vec::new();
        for (pa, pb, va, vb) in self.active() {
            let n = ((pb - pa).abs() / per_px).floor() + 1.0;
            if vb <= va {
                // One value: its tick, labelled as the axis' range is (step 0).
                let px = self.px(va);
                if out.last().is_none_or(|l| (l.0 - px).abs() >= gap) {
                    out.push((px, va, 0.0));
                }
                continue;
            }
            let st = step(vb - va, n);
            let mut v = (va / st).ceil() * st;
            while v <= vb {
                let px = self.px(v);
                if out.last().is_none_or(|l| (l.0 - px).abs() >= gap) {
                    out.push((px, v, st));
                }
                v += st;
            }
        }
        out
    }
}

/// A round step (1, 2 or 5 times a power of ten) of about `span / n`, at least `min`.
fn nice(span: f64, n: f64, min: f64) -> f64 {
    let raw = (span / n).max(min);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * p
}

/// The longest of `pieces` to fold, in order: the longest first while each is at least
/// `min` and more than 1/[`FOLD_RATIO`] of what `span` leaves unfolded with it, at most
/// [`MAX_FOLDS`].
fn choose_folds(mut pieces: Vec<(f64, f64)>, span: f64, min: f64) -> Vec<(f64, f64)> {
    pieces.sort_by(|a, b| (b.1 - b.0).total_cmp(&(a.1 - a.0)));
    let (mut sum, mut keep) = (0.0, 0usize);
    for (k, (a, b)) in pieces.iter().enumerate().take(MAX_FOLDS) {
        let len = b - a;
        if len < min {
            break;
        }
        sum += len;
        if len * FOLD_RATIO > span - sum {
            keep = k + 1;
        }
    }
    pieces.truncate(keep);
    pieces.sort_by(|a, b| a.0.total_cmp(&b.0));
    pieces
}

/// The time axis of a graph: from `t0` (ns since the epoch) to `t1`, values in ns since
/// `t0`.
#[derive(Debug, Clone)]
pub struct TimeAxis {
    pub t0: u64,
    pub t1: u64,
    pub axis: Axis,
}

impl TimeAxis {
    /// The axis over [t0, t1] with `folds`; each active period's room in proportion to what
    /// is drawn in it (`drawn`: the times of the points, marks and cited frames, sorted), so
    /// sparse packets each have room, dense traffic stays linear in time, and a period of CM
    /// messages only has the equal share (`EQUAL`).
    pub fn new(t0: u64, t1: u64, folds: &[(u64, u64)], drawn: &[u64]) -> Self {
        let t1 = t1.max(t0);
        let rel: Vec<(f64, f64)> =
            folds.iter().map(|(a, b)| ((a - t0) as f64, (b - t0) as f64)).collect();
        let mut weights = Vec::with_capacity(folds.len() + 1);
        let mut from = t0;
        for &(a, b) in folds.iter().chain([(t1, t1)].iter()) {
            let n = drawn.partition_point(|&t| t <= a) - drawn.partition_point(|&t| t < from);
            weights.push(n as f64);
            from = b;
        }
        let room = (LEFT, WIDTH - RIGHT);
        let axis = Axis::weighted(0.0, (t1 - t0) as f64, rel, room, &weights, FOLD_MARGIN_NS);
        TimeAxis { t0, t1, axis }
    }

    /// The x of time `t` (ns since the epoch).
    pub fn x(&self, t: u64) -> f64 {
        self.axis.px(t.saturating_sub(self.t0) as f64)
    }
}

impl Axis {
    /// The pixels a fold is drawn over (the room between the ranges beside it).
    fn fold_px(&self, i: usize) -> (f64, f64) {
        let a = self.pts.get(2 * i + 1).map_or(0.0, |p| p.0);
        let b = self.pts.get(2 * i + 2).map_or(a, |p| p.0);
        (a, b)
    }
}

/// Intervals in both sorted lists of disjoint intervals.
fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while let (Some(&(a0, a1)), Some(&(b0, b1))) = (a.get(i), b.get(j)) {
        let (lo, hi) = (a0.max(b0), a1.min(b1));
        if lo < hi {
            out.push((lo, hi));
        }
        if a1 < b1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The idle stretches of `g` over [t0, t1] to fold: when no panel's flow sent anything
/// (its longest silences, series::Activity) and no other event (`events`: CM messages,
/// cited frames, the incarnation's bounds) falls; the longest first while each is at least
/// `min` ns (or [`FOLD_MIN_NS`] before the first packet drawn or after the last, `data`: CM
/// set-up and tear-down) and more than 1/[`FOLD_RATIO`] of the time left unfolded, at most
/// [`MAX_FOLDS`]. In time order.
pub fn folds(
    g: &Graph,
    events: &mut Vec<u64>,
    (t0, t1): (u64, u64),
    min: u64,
    data: Option<(u64, u64)>,
) -> Vec<(u64, u64)> {
    if t1 <= t0 {
        return Vec::new();
    }
    let mut idle = vec![(t0, t1)];
    for p in &g.panels {
        let a = &p.series.activity;
        let Some((first, last)) = a.span() else { continue };
        let mut quiet = vec![(t0, first.max(t0))];
        quiet.extend(a.gaps());
        quiet.push((last.min(t1), t1));
        quiet.retain(|(x, y)| x < y);
        idle = intersect(&idle, &quiet);
    }
    events.sort_unstable();
    events.dedup();
    let mut pieces = Vec::new();
    for (a, b) in idle {
        let mut from = a;
        let k = events.partition_point(|&e| e <= a);
        for &e in events.get(k..).unwrap_or(&[]).iter().take_while(|&&e| e < b) {
            pieces.push((from, e));
            from = e;
        }
        pieces.push((from, b));
    }
    let outside = |a: u64, b: u64| data.is_none_or(|(lo, hi)| b <= lo || a >= hi);
    pieces.retain(|&(a, b)| b - a >= if outside(a, b) { FOLD_MIN_NS } else { min });
    let rel: Vec<(f64, f64)> =
        pieces.iter().map(|&(a, b)| ((a - t0) as f64, (b - t0) as f64)).collect();
    choose_folds(rel, (t1 - t0) as f64, FOLD_MIN_NS as f64)
        .into_iter()
        .map(|(a, b)| (t0 + a as u64, t0 + b as u64))
        .collect()
}

/// Time axis and unrolled PSN to pixels, in a panel whose PSNs count from `base`.
#[derive(Debug, Clone)]
struct Scale<'a> {
    axis: &'a TimeAxis,
    /// The PSN axis: values relative to `base`.
    psns: Axis,
    base: i64,
    /// What `base` is, for the axis title.
    what: &'static str,
    top: f64,
}

impl Scale<'_> {
    fn x(&self, t: u64) -> f64 {
        self.axis.x(t)
    }
    fn y(&self, p: i64) -> f64 {
        self.psns.px((p - self.base) as f64)
    }
    /// The PSN as the capture has it, and relative to the panel's first.
    fn psn(&self, v: i64) -> String {
        let mut s = String::with_capacity(24);
        self.push_psn(&mut s, v);
        s
    }
    /// [`Scale::psn`], appended to `out`: "PSN (+delta)", or "(-delta)" below the first.
    fn push_psn(&self, out: &mut String, v: i64) {
        let d = v - self.base;
        push_int(out, v.rem_euclid(1 << 24));
        out.push_str(if d < 0 { " (" } else { " (+" });
        push_int(out, d);
        out.push(')');
    }
}

/// A time for an axis showing `span` ns: the unit of the time (or of the span, when larger),
/// digits enough to tell ticks a quarter of the span apart (the page's script formats the
/// same way).
fn fmt_t(ns: f64, span: f64) -> String {
    let big = span.max(ns.abs());
    let (div, unit) = if big >= 1e9 {
        (1e9, "s")
    } else if big >= 1e6 {
        (1e6, "ms")
    } else if big >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    let step = (span / div / 4.0).max(1e-9);
    let digits = (1.0 - step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{:.*} {unit}", digits, ns / div)
}

/// Time relative to a chart's start, for the bar charts' labels.
fn rel(t: u64, t0: u64) -> String {
    let d = t.saturating_sub(t0);
    if d >= 1_000_000_000 {
        format!("{:.3} s", d as f64 / 1e9)
    } else if d >= 1_000_000 {
        format!("{:.3} ms", d as f64 / 1e6)
    } else {
        format!("{:.1} µs", d as f64 / 1e3)
    }
}

/// A duration as a whole, for folds and labels.
fn dur(d: u64) -> String {
    fmt_t(d as f64, d as f64)
}

/// The PSN axis of a panel (values relative to `base`) from pixel `bottom` up to `top`: what
/// it draws (`extra`: its findings' PSNs), stretches of a [`FOLD_MIN_PSN`] or more PSNs
/// that nothing drawn uses folded as idle time is, a twentieth of the rest added above and
/// below (one PSN when it draws one).
fn psn_axis(p: &Panel, extra: &[i64], base: i64, bottom: f64, top: f64) -> Axis {
    let s = &p.series;
    let pts = s.requests.points().iter().chain(s.acks.points()).map(|q| q.psn);
    let marks = s.marks.all().iter().flat_map(|m| [m.psn0, m.psn1]);
    let mut v: Vec<f64> =
        pts.chain(marks).chain(extra.iter().copied()).map(|x| (x - base) as f64).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let (Some(&lo), Some(&hi)) = (v.first(), v.last()) else {
        return Axis::new(-1.0, 1.0, Vec::new(), bottom, top);
    };
    let gaps: Vec<(f64, f64)> =
        v.windows(2).filter_map(|w| w.first().zip(w.get(1))).map(|(a, b)| (*a, *b)).collect();
    let folds = choose_folds(gaps, hi - lo, FOLD_MIN_PSN);
    let active = hi - lo - folds.iter().map(|(a, b)| b - a).sum::<f64>();
    let pad = if active > 0.0 { active / 20.0 } else { 1.0 };
    Axis::new(lo - pad, hi + pad, folds, bottom, top)
}

/// The panel's first PSN, which its axis counts from: its first request's (a series keeps
/// its first point), else the lowest it shows; and which it is.
fn base_psn(p: &Panel, extra: &[i64]) -> (i64, &'static str) {
    if let Some(q) = p.series.requests.points().first() {
        return (q.psn, "the first request's PSN");
    }
    let s = &p.series;
    let lowest = s.acks.points().iter().map(|q| q.psn);
    let lowest = lowest.chain(s.marks.all().iter().map(|m| m.psn0)).chain(extra.iter().copied());
    (lowest.min().unwrap_or(0), "the lowest PSN shown")
}

/// The unrolled value of `psn` in a panel at time `t`: next to the request drawn nearest in
/// time (PSNs are unrolled per flow as they stream; a cited frame is placed the same way).
fn unroll_at(p: &Panel, t: u64, psn: u32) -> i64 {
    let pts = p.series.requests.points();
    let i = pts.partition_point(|q| q.t < t).min(pts.len().saturating_sub(1));
    let base = pts.get(i).map_or(i64::from(psn), |q| q.psn);
    let d = (i64::from(psn) - base).rem_euclid(1 << 24);
    base + if d >= 1 << 23 { d - (1 << 24) } else { d }
}

/// The time range a connection's graph spans: its packets, CM messages and cited frames.
pub fn time_range(g: &Graph, cm: &[&CmEvent], findings: &[FindingMark<'_>]) -> (u64, u64) {
    let mut t0 = g.info.first_ts;
    let mut t1 = g.info.last_ts;
    for e in cm {
        t0 = t0.min(e.ts);
        t1 = t1.max(e.ts);
    }
    for f in findings {
        for a in &f.at {
            t0 = t0.min(a.1);
            t1 = t1.max(a.1);
        }
    }
    (t0, t1)
}

/// The time axis of a connection's graph: its range, its idle stretches folded.
pub fn time_axis(g: &Graph, cm: &[&CmEvent], findings: &[FindingMark<'_>]) -> TimeAxis {
    let (t0, t1) = time_range(g, cm, findings);
    let mut events: Vec<u64> = cm.iter().map(|e| e.ts).collect();
    events.extend(findings.iter().flat_map(|f| f.at.iter().map(|a| a.1)));
    events.extend([g.info.first_ts, g.info.last_ts]);
    for p in &g.panels {
        events.extend(p.series.marks.all().iter().flat_map(|m| [m.t0, m.t1]));
    }
    // The room goes to the connection's packets and findings; CM messages and the
    // incarnation's bounds have the share every active period has.
    let mut drawn: Vec<u64> = findings.iter().flat_map(|f| f.at.iter().map(|a| a.1)).collect();
    for p in &g.panels {
        let s = &p.series;
        drawn.extend(s.requests.points().iter().chain(s.acks.points()).map(|q| q.t));
        drawn.extend(s.marks.all().iter().map(|m| m.t0));
    }
    drawn.sort_unstable();
    // A silence is idle when long against the usual spacing of the packets drawn (CM
    // messages, sparse by nature, only when there is nothing else): steady packets a
    // microsecond apart are not each folded.
    let gaps = |v: &[u64]| -> Vec<u64> {
        v.windows(2)
            .filter_map(|w| w.first().zip(w.get(1)))
            .map(|(a, b)| b - a)
            .filter(|&d| d > 0)
            .collect()
    };
    let mut spacing = gaps(&drawn);
    if spacing.is_empty() {
        let mut all: Vec<u64> = drawn.iter().chain(events.iter()).copied().collect();
        all.sort_unstable();
        spacing = gaps(&all);
    }
    let typical = if spacing.is_empty() {
        0
    } else {
        let mid = spacing.len() / 2;
        *spacing.select_nth_unstable(mid).1
    };
    let min = FOLD_MIN_NS.max(typical.saturating_mul(FOLD_TYPICAL));
    let data = drawn.first().zip(drawn.last()).map(|(a, b)| (*a, *b));
    let folds = folds(g, &mut events, (t0, t1), min, data);
    TimeAxis::new(t0, t1, &folds, &drawn)
}

/// The sequence graph of one connection: a panel per direction that sent anything. The
/// page's script zooms it (`data-t0`, `data-tx`: the time axis; each panel's `data-p`: its
/// PSN axis); without it, it is the whole graph, as drawn.
pub fn sequence_graph(
    out: &mut String,
    g: &Graph,
    cm: &[&CmEvent],
    findings: &[FindingMark<'_>],
    id: &str,
) {
    let panels = g.panels.len().max(1);
    let height = PANEL_H * panels as f64;
    let axis = time_axis(g, cm, findings);
    let name = g.info.connection.to_string();
    let _ = write!(
        out,
        "<svg class=\"seq\" id=\"{id}\" data-conn=\"{}\" data-t0=\"{}\" data-tx=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" role=\"img\">\
         <title>Time-sequence graph of {}</title>",
        esc(&name),
        axis.t0,
        axis.axis.attr(),
        esc(&name)
    );
    for (i, p) in g.panels.iter().enumerate() {
        let top = PANEL_H * i as f64;
        let mine: Vec<(&FindingMark<'_>, Vec<i64>)> = findings
            .iter()
            .map(|f| {
                let ys = f.at.iter().filter(|a| a.0 == i).map(|a| unroll_at(p, a.1, a.2)).collect();
                (f, ys)
            })
            .collect();
        let extra: Vec<i64> = mine.iter().flat_map(|(_, ys)| ys.iter().copied()).collect();
        let (base, what) = base_psn(p, &extra);
        let psns = psn_axis(p, &extra, base, top + PANEL_H - BOTTOM, top + TOP);
        let sc = Scale { axis: &axis, psns, base, what, top };
        panel(out, p, &sc, g, cm, &mine, i);
    }
    out.push_str("</svg>");
}

#[allow(clippy::too_many_arguments)]
fn panel(
    out: &mut String,
    p: &Panel,
    sc: &Scale<'_>,
    g: &Graph,
    cm: &[&CmEvent],
    findings: &[(&FindingMark<'_>, Vec<i64>)],
    index: usize,
) {
    let k = &p.key;
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let (y0, y1) = (sc.top + TOP, sc.top + PANEL_H - BOTTOM);
    let _ = write!(
        out,
        "<g class=\"panel\" data-p=\"{}\">\
         <text class=\"ptitle\" x=\"{x0}\" y=\"{:.1}\">requests {} -> {} DestQP 0x{:06x}</text>\
         <text class=\"ytitle\" x=\"{x1}\" y=\"{:.1}\">PSN - {} ({})</text>\
         <rect class=\"frame\" x=\"{x0}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        sc.psns.attr(),
        sc.top + 15.0,
        k.src,
        k.dst,
        k.dest_qp,
        sc.top + 15.0,
        sc.base.rem_euclid(1 << 24),
        sc.what,
        x1 - x0,
        y1 - y0
    );
    ticks(out, &sc.axis.axis, &sc.psns, x0, y1);
    open_plot(out, x0, y0, x1, y1);
    // Each fold's length is written in it, but where it would cover the one before (its
    // hover text has it).
    let mut written = f64::NEG_INFINITY;
    for (i, &(a, b)) in sc.axis.axis.folds.iter().enumerate() {
        let (xa, xb) = sc.axis.axis.fold_px(i);
        let len = dur((b - a) as u64);
        let _ = write!(
            out,
            "<g class=\"fold\"><title>folded: no packet for {len}</title>\
             <rect x=\"{xa:.3}\" y=\"{y0:.1}\" width=\"{:.3}\" height=\"{:.1}\"/>",
            xb - xa,
            y1 - y0,
        );
        let mid = (xa + xb) / 2.0;
        if mid - written >= 44.0 {
            let _ = write!(out, "<text x=\"{mid:.3}\" y=\"{:.1}\">{len}</text>", y1 - 4.0);
            written = mid;
        }
        out.push_str("</g>");
    }
    for (i, &(a, b)) in sc.psns.folds.iter().enumerate() {
        let (ya, yb) = sc.psns.fold_px(i);
        let _ = write!(
            out,
            "<g class=\"fold\"><title>folded: no PSN used from {} to {} ({} PSNs)</title>\
             <rect x=\"{x0}\" y=\"{yb:.3}\" width=\"{:.1}\" height=\"{:.3}\"/>\
             <text class=\"yf\" x=\"{:.1}\" y=\"{:.3}\">{} PSNs</text></g>",
            sc.psn(sc.base + a as i64),
            sc.psn(sc.base + b as i64),
            b - a,
            x1 - x0,
            ya - yb,
            x0 + 40.0,
            (ya + yb) / 2.0 + 3.0,
            b - a
        );
    }
    boundaries(out, g, sc, y0, y1);
    for e in cm {
        let x = sc.x(e.ts);
        let _ = write!(
            out,
            "<g class=\"m-cm\"><title>frame {}: CM {} {} -> {}</title>\
             <line x1=\"{x:.3}\" y1=\"{y0:.1}\" x2=\"{x:.3}\" y2=\"{y1:.1}\"/>\
             <text x=\"{x:.3}\" dx=\"2\" y=\"{:.1}\">{}</text></g>",
            e.frame,
            e.name,
            e.src,
            e.dst,
            y0 + 10.0,
            e.name
        );
    }
    // READ and atomic spans under the requests; the other marks on top (hover).
    let span = |m: &&Mark| matches!(m.kind, Kind::Read | Kind::Atomic);
    for m in p.series.marks.all().iter().filter(span) {
        mark(out, m, sc);
    }
    requests(out, p.series.requests.points(), p.series.requests.seen(), sc);
    ack_line(out, p.series.acks.points(), p.series.acks.seen(), sc);
    for m in p.series.marks.all().iter().filter(|m| !span(m)) {
        mark(out, m, sc);
    }
    for (f, ys) in findings {
        let here: Vec<_> = f.at.iter().filter(|a| a.0 == index).zip(ys).collect();
        if !here.is_empty() {
            finding_mark(out, f, &here, sc);
        }
    }
    out.push_str("</svg></g>");
}

/// The axes' ticks and labels: round times and values (PSNs relative, counts) in each
/// active range ([`Axis::ticks`]). The page's script writes them again, the same way, for a
/// zoomed view.
/// Opens a panel's plot: a nested `<svg>` over `x0..x1`, `y0..y1` that clips what is drawn
/// in it (the zoom script moves its viewBox).
fn open_plot(out: &mut String, x0: f64, y0: f64, x1: f64, y1: f64) {
    let _ = write!(
        out,
        "<svg class=\"plot\" x=\"{x0}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
         viewBox=\"{x0} {y0:.1} {:.1} {:.1}\">",
        x1 - x0,
        y1 - y0,
        x1 - x0,
        y1 - y0
    );
}

fn ticks(out: &mut String, xs: &Axis, ys: &Axis, x0: f64, y1: f64) {
    out.push_str("<g class=\"axis\">");
    for (x, v, st) in xs.ticks(120.0, 70.0, |span, n| nice(span, n, 1.0)) {
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{y1:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text class=\"tl\" x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
            y1 + 4.0,
            y1 + 16.0,
            esc(&fmt_t(v, if st > 0.0 { st * 4.0 } else { v }))
        );
    }
    for (y, v, _) in ys.ticks(40.0, 14.0, |span, n| nice(span, n, 1.0)) {
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{x0}\" y2=\"{y:.1}\"/>\
             <text class=\"yl\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x0 - 4.0,
            x0 - 6.0,
            y + 3.0,
            v.round() as i64
        );
    }
    out.push_str("</g>");
}

/// The incarnation's start and end, as dashed lines with why.
fn boundaries(out: &mut String, g: &Graph, sc: &Scale<'_>, y0: f64, y1: f64) {
    let i = &g.info;
    let began =
        if i.began.why.is_empty() { "first packet".to_string() } else { i.began.why.clone() };
    let ended =
        if i.ended.why.is_empty() { "end of capture".to_string() } else { i.ended.why.clone() };
    for (class, t, frame, why) in
        [("m-began", i.first_ts, i.first_frame, began), ("m-ended", i.last_ts, i.last_frame, ended)]
    {
        let x = sc.x(t);
        let _ = write!(
            out,
            "<g class=\"{class}\"><title>incarnation {} {}: frame {frame}: {}</title>\
             <line x1=\"{x:.3}\" y1=\"{y0:.1}\" x2=\"{x:.3}\" y2=\"{y1:.1}\"/></g>",
            i.connection.incarnation,
            if class == "m-began" { "began" } else { "ended" },
            esc(&why)
        );
    }
}

/// A coordinate as `{:.N}` writes an `f64` (N up to 3), without core's exact-decimal
/// machinery for the usual case: the value scaled by 10^N, rounded to an integer and written
/// with itoa. Why: the sequence graphs write some ten coordinates per mark and point, and
/// core's exact formatting (Grisu, then Dragon for what Grisu cannot decide) was three fifths
/// of the page's rendering (BENCHMARKS.md). The output is the same: the scaled value is at
/// most 1e9, so it is within 1.2e-7 of the exact product, and a value that close to a
/// rounding boundary (within 1e-6 of half a unit) goes to core's formatting, as does any
/// other width, flag or precision.
#[derive(Debug, Clone, Copy)]
struct Px(f64);

impl std::fmt::Display for Px {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SCALE: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];
        const UNIT: [u64; 4] = [1, 10, 100, 1000];
        let v = self.0;
        let plain = f.width().is_none() && !f.sign_plus() && !f.alternate();
        let p = match f.precision() {
            Some(p) if p <= 3 && plain => p,
            _ => return std::fmt::Display::fmt(&v, f),
        };
        let (Some(&scale), Some(&unit)) = (SCALE.get(p), UNIT.get(p)) else {
            return std::fmt::Display::fmt(&v, f);
        };
        let y = v.abs() * scale;
        if !y.is_finite() || y >= 1e9 {
            return std::fmt::Display::fmt(&v, f);
        }
        let floor = y.floor();
        let frac = y - floor;
        if (frac - 0.5).abs() < 1e-6 {
            return std::fmt::Display::fmt(&v, f);
        }
        let r = floor as u64 + u64::from(frac > 0.5);
        if v.is_sign_negative() {
            f.write_str("-")?;
        }
        let mut b = itoa::Buffer::new();
        f.write_str(b.format(r / unit))?;
        if p > 0 {
            let d = r % unit + unit; // a leading 1 keeps the decimals' zeros
            let mut b = itoa::Buffer::new();
            let digits = b.format(d);
            f.write_str(".")?;
            f.write_str(digits.get(1..).unwrap_or(""))?;
        }
        Ok(())
    }
}

/// Appends `v` as `{:.p}` writes it (p up to 3), as [`Px`] does, without the formatting
/// machinery: the sequence graphs' points and marks write some 470,000 coordinates on a
/// 2,000,000-frame capture, and `write!` with `Px` cost 350 instructions each, a third of
/// the page (BENCHMARKS.md). A value [`Px`] leaves to core goes to core here too.
fn push_px(out: &mut String, v: f64, p: usize) {
    const SCALE: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];
    const UNIT: [u64; 4] = [1, 10, 100, 1000];
    let (Some(&scale), Some(&unit)) = (SCALE.get(p), UNIT.get(p)) else {
        let _ = write!(out, "{v:.p$}");
        return;
    };
    let y = v.abs() * scale;
    let floor = y.floor();
    let frac = y - floor;
    if !y.is_finite() || y >= 1e9 || (frac - 0.5).abs() < 1e-6 {
        let _ = write!(out, "{v:.p$}");
        return;
    }
    let r = floor as u64 + u64::from(frac > 0.5);
    if v.is_sign_negative() {
        out.push('-');
    }
    let mut b = itoa::Buffer::new();
    out.push_str(b.format(r / unit));
    if p > 0 {
        let d = r % unit + unit; // a leading 1 keeps the decimals' zeros
        out.push('.');
        out.push_str(b.format(d).get(1..).unwrap_or(""));
    }
}

/// Appends an integer (itoa; `write!` would go through the formatting machinery).
fn push_int(out: &mut String, v: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(v));
}

fn requests(out: &mut String, pts: &[Pt], seen: u64, sc: &Scale<'_>) {
    if pts.is_empty() {
        return;
    }
    let _ = write!(out, "<path class=\"req\" data-n=\"{seen}\" d=\"");
    for q in pts {
        out.push('M');
        push_px(out, sc.x(q.t), 3);
        out.push(' ');
        push_px(out, sc.y(q.psn), 2);
        out.push_str("m-1.5 0h3");
    }
    let (a, b) = (pts.first().map_or(0, |q| q.psn), pts.last().map_or(0, |q| q.psn));
    let _ = write!(
        out,
        "\"><title>{seen} new request packets ({} drawn), PSN {} to {}</title></path>",
        pts.len(),
        sc.psn(a),
        sc.psn(b)
    );
}

fn ack_line(out: &mut String, pts: &[Pt], seen: u64, sc: &Scale<'_>) {
    if pts.is_empty() {
        return;
    }
    let _ = write!(out, "<polyline class=\"ack\" data-n=\"{seen}\" points=\"");
    // A step line: the cumulative ACK holds until the next one.
    let mut best = i64::MIN;
    let mut last_y: Option<f64> = None;
    for q in pts {
        best = best.max(q.psn);
        let (x, y) = (sc.x(q.t), sc.y(best));
        for y in last_y.into_iter().chain([y]) {
            push_px(out, x, 3);
            out.push(',');
            push_px(out, y, 2);
            out.push(' ');
        }
        last_y = Some(y);
    }
    let _ = write!(
        out,
        "\"><title>ACK line: {seen} ACKs ({} drawn), up to PSN {}</title></polyline>",
        pts.len(),
        sc.psn(best)
    );
}

fn mark(out: &mut String, m: &Mark, sc: &Scale<'_>) {
    let (xa, ya, xb, yb) = (sc.x(m.t0), sc.y(m.psn0), sc.x(m.t1), sc.y(m.psn1));
    let far = xb > xa + 1.0;
    // Written piece by piece (push_px, push_int): a mark's `format!`s and `write!`s were
    // 11,000 instructions each (BENCHMARKS.md).
    out.push_str("<g class=\"");
    out.push_str(m.kind.class());
    out.push_str("\" data-n=\"");
    push_int(out, m.n);
    out.push_str("\"><title>");
    if m.frame0 == m.frame1 {
        out.push_str("frame ");
        push_int(out, m.frame0);
    } else {
        out.push_str("frames ");
        push_int(out, m.frame0);
        out.push('-');
        push_int(out, m.frame1);
    }
    out.push_str(": ");
    match m.kind {
        Kind::Read | Kind::Atomic => {
            out.push_str(m.kind.label());
            out.push_str(": ");
        }
        _ if m.n == 1 => {
            out.push_str(m.kind.label());
            out.push(' ');
        }
        _ => {
            push_int(out, m.n);
            out.push(' ');
            out.push_str(m.kind.label());
            out.push_str(" packets, first ");
        }
    }
    out.push_str(m.opcode);
    out.push_str(", PSN ");
    sc.push_psn(out, m.psn0);
    if m.psn0 != m.psn1 {
        out.push_str(" to ");
        sc.push_psn(out, m.psn1);
    }
    out.push_str("</title>");
    // Shapes: absolute points (M, x1, cx) are placed by the axes, relative steps (l, h, v)
    // keep their size when the page's script zooms.
    let at = |out: &mut String, pre: &str, x: f64, mid: &str, y: f64| {
        out.push_str(pre);
        push_px(out, x, 3);
        out.push_str(mid);
        push_px(out, y, 2);
    };
    let line = |out: &mut String| {
        at(out, "<line x1=\"", xa, "\" y1=\"", ya);
        at(out, "\" x2=\"", xb, "\" y2=\"", yb);
        out.push_str("\"/>");
    };
    match m.kind {
        Kind::Retx if m.n > 1 => {
            line(out);
            at(out, "<circle cx=\"", xa, "\" cy=\"", ya);
            out.push_str("\" r=\"2.5\"/>");
        }
        Kind::Retx => {
            at(out, "<circle cx=\"", xa, "\" cy=\"", ya);
            out.push_str("\" r=\"2.5\"/>");
        }
        Kind::Read | Kind::Atomic => {
            line(out);
            at(out, "<path d=\"M", xa, " ", ya);
            out.push_str("m-2 -2h4v4h-4z\"/>");
        }
        Kind::Nak | Kind::Rnr | Kind::Fatal => {
            // A triangle pointing down at the PSN the responder expects.
            at(out, "<path d=\"M", xa, " ", ya);
            out.push_str("m0 -2l5 -9h-10z\"/>");
            if far {
                line(out);
            }
        }
        Kind::Ce => {
            // A bar under the PSN, from the first marked packet to the last (square caps
            // give a lone packet its width).
            at(out, "<path d=\"M", xa, " ", ya);
            at(out, "m0 5.5L", xb, " ", ya + 5.5);
            out.push_str("\"/>");
        }
        Kind::Cnp => {
            at(out, "<path d=\"M", xa, " ", ya);
            out.push_str("m0 -12l4 4l-4 4l-4 -4z\"/>");
        }
    }
    out.push_str("</g>");
}

fn finding_mark(out: &mut String, f: &FindingMark<'_>, here: &[(&At, &i64)], sc: &Scale<'_>) {
    let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
    let _ = write!(
        out,
        "<g class=\"m-finding sev-{}\" data-rule=\"{}\"><title>{} {}, frames {}: {}",
        esc(f.severity),
        esc(f.rule),
        esc(f.rule),
        esc(f.severity),
        frames.join(","),
        esc(f.message)
    );
    for (a, y) in here {
        let _ = write!(out, "\nframe {} {} PSN {}", a.4, a.3, sc.psn(**y));
    }
    out.push_str("</title>");
    for (a, y) in here {
        let (x, y) = (Px(sc.x(a.1)), Px(sc.y(**y)));
        let _ = write!(
            out,
            "<circle class=\"fring\" cx=\"{x:.3}\" cy=\"{y:.2}\" r=\"7\"/>\
             <path d=\"M{x:.3} {y:.2}m-4 -4l8 8m0 -8l-8 8\"/>"
        );
    }
    out.push_str("</g>");
}

/// A bar chart: per time bin, stacked bars of `series` (class, label).
pub struct Bars<'a> {
    pub class: &'a str,
    pub title: &'a str,
    pub t0: u64,
    pub width_ns: u64,
    pub bins: &'a [Vec<u64>],
    pub series: &'a [(&'a str, &'a str)],
    pub unit: &'a str,
    /// The time axis of the graph it goes with (its folds, its zoom: `data-of`, that
    /// graph's id); none: linear in time, zoomed on its own (`id`).
    pub axis: Option<(&'a TimeAxis, &'a str)>,
    /// Its own id when it has no graph.
    pub id: &'a str,
}

/// Draws `b`: a panel and plot as a sequence graph's, so the page's script zooms it.
pub fn bar_chart(out: &mut String, b: &Bars<'_>) {
    let Bars { class, title, t0, width_ns, bins, series, unit, axis, id } = *b;
    let h = 130.0;
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, 18.0, h - 22.0);
    let n = bins.len().max(1);
    let max = bins.iter().map(|b| b.iter().sum::<u64>()).max().unwrap_or(0).max(1);
    let linear;
    let (tx, link) = match axis {
        Some((a, of)) => (a, format!("data-of=\"{}\"", esc(of))),
        None => {
            linear = TimeAxis::new(t0, t0 + width_ns * n as u64, &[], &[]);
            (&linear, format!("id=\"{}\"", esc(id)))
        }
    };
    let ys = Axis::new(0.0, max as f64, Vec::new(), y1, y0);
    let _ = write!(
        out,
        "<svg class=\"{class}\" {link} data-t0=\"{}\" data-tx=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {h}\" \
         width=\"{WIDTH}\" height=\"{h}\" role=\"img\"><title>{}</title>\
         <g class=\"panel\" data-p=\"{}\"><text class=\"ptitle\" x=\"{x0}\" y=\"13\">{}</text>\
         <rect class=\"frame\" x=\"{x0}\" y=\"{y0}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        tx.t0,
        tx.axis.attr(),
        esc(title),
        ys.attr(),
        esc(title),
        x1 - x0,
        y1 - y0,
    );
    ticks(out, &tx.axis, &ys, x0, y1);
    open_plot(out, x0, y0, x1, y1);
    for (i, b) in bins.iter().enumerate() {
        let mut acc = 0u64;
        let t = t0 + width_ns * i as u64;
        let (xa, xb) = (tx.x(t), tx.x(t + width_ns));
        for ((cls, label), v) in series.iter().zip(b) {
            if *v == 0 {
                continue;
            }
            let ya = ys.px((acc + v) as f64);
            let hh = Px(ys.px(acc as f64) - ya);
            let (x, ya, w) = (Px(xa), Px(ya), Px((xb - xa - 0.5).max(0.5)));
            let _ = write!(
                out,
                "<rect class=\"{cls}\" x=\"{x:.3}\" y=\"{ya:.2}\" width=\"{w:.3}\" height=\"{hh:.2}\">\
                 <title>{}: {v} {unit} in {}-{}</title></rect>",
                label,
                esc(&rel(t, t0)),
                esc(&rel(t + width_ns, t0))
            );
            acc += v;
        }
    }
    out.push_str("</svg></g></svg>");
}

/// Bins of a graph's panels on one grid of `n` bins over [t0, t1] (each source bin counted
/// where its middle falls).
pub fn regrid<const K: usize>(
    src: &[&Bins<K>],
    t0: u64,
    t1: u64,
    n: usize,
) -> (u64, Vec<Vec<u64>>) {
    let width = (t1.saturating_sub(t0) / n as u64).max(1) + 1;
    let mut out = vec![vec![0u64; K]; n];
    for b in src {
        for (i, vals) in b.values().iter().enumerate() {
            let mid = b.origin() + b.width_ns() * i as u64 + b.width_ns() / 2;
            let j = ((mid.saturating_sub(t0)) / width).min(n as u64 - 1) as usize;
            if let Some(o) = out.get_mut(j) {
                for (acc, v) in o.iter_mut().zip(vals) {
                    *acc += v;
                }
            }
        }
    }
    (width, out)
}

#[cfg(test)]
mod tests {
    /// The most one connection's sequence graph may take (two panels, every budget full: see
    /// docs/report.md, "Size and memory bounds").
    const GRAPH_BYTES_MAX: usize = 700_000;

    /// `Px` writes what core's `{:.N}` writes, digit for digit: on a sweep of coordinates
    /// (pixel-sized and larger, negative ones, exact halves and values a hair beside them,
    /// where a scaled product's rounding could go either way), zeros of both signs, and the
    /// values it leaves to core (NaN, the infinities, beyond 1e9).
    #[test]
    fn px_writes_what_core_writes() {
        let mut values = vec![0.0, -0.0, 0.5, 1.5, 2.5, 0.0005, 0.0015, 1.0005, 2.675, 1e9, 1e12];
        values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 1e-300]);
        for i in 0..200_000u32 {
            let x = f64::from(i) / 7.0 * 0.013;
            values.extend([x, -x, x * 977.0, f64::from(i) / 2000.0, f64::from(i) * 0.0005]);
            values.push(f64::from_bits((f64::from(i) * 0.001).to_bits() + 1));
        }
        for v in values {
            for (got, want) in [
                (format!("{:.0}", Px(v)), format!("{v:.0}")),
                (format!("{:.1}", Px(v)), format!("{v:.1}")),
                (format!("{:.2}", Px(v)), format!("{v:.2}")),
                (format!("{:.3}", Px(v)), format!("{v:.3}")),
                (format!("{:.4}", Px(v)), format!("{v:.4}")),
                (format!("{:8.2}", Px(v)), format!("{v:8.2}")),
                (format!("{}", Px(v)), format!("{v}")),
            ] {
                assert_eq!(got, want, "{v:e}");
            }
            for p in 0..=4 {
                let mut got = String::from("x");
                push_px(&mut got, v, p);
                assert_eq!(got, format!("x{v:.p$}"), "{v:e} {p}");
            }
        }
    }

    use super::*;
    use roce_analysis::series::{Counts, Sample, Series};
    use roce_conformance::{BeganBy, Boundary, ConnId, ConnectionInfo, EndedBy, FlowKey};
    use std::net::{IpAddr, Ipv4Addr};

    fn info(first_ts: u64, last_ts: u64) -> ConnectionInfo {
        let (a, b) =
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
        ConnectionInfo {
            connection: ConnId { a, qpn_a: Some(0x11), b, qpn_b: Some(0x22), incarnation: 1 },
            transport: "RC",
            paired_by: None,
            pmtu: None,
            pmtu_source: None,
            pkey: None,
            pkey_source: None,
            began: Boundary { how: BeganBy::FirstPackets, frame: 1, why: String::new() },
            ended: Boundary { how: EndedBy::CaptureEnd, frame: 0, why: String::new() },
            packets: 0,
            first_frame: 1,
            last_frame: 1,
            first_ts,
            last_ts,
        }
    }

    fn graph(series: Vec<Series>, first_ts: u64, last_ts: u64) -> Graph {
        let (a, b) =
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
        let panels = series
            .into_iter()
            .enumerate()
            .map(|(i, series)| Panel {
                key: if i == 0 {
                    FlowKey { src: a, dst: b, dest_qp: 0x22 }
                } else {
                    FlowKey { src: b, dst: a, dest_qp: 0x11 }
                },
                series,
            })
            .collect();
        Graph { info: info(first_ts, last_ts), panels, counts: Counts::default() }
    }

    fn sample(t: u64, psn: u32) -> Sample {
        Sample { t, frame: t, psn, opcode: "RC_SEND_ONLY", payload: 64 }
    }

    /// Ten million requests (and as many ACKs, a retransmission run and a NAK every 1,000,
    /// a CNP every 997) in each direction of one connection: its graph stays within
    /// [`GRAPH_BYTES_MAX`], every point budget full.
    #[test]
    fn ten_million_points_stay_within_the_budget() {
        let mut panels = Vec::new();
        for _ in 0..2 {
            let mut s = Series::default();
            for i in 0..10_000_000u32 {
                let t = u64::from(i) * 100;
                s.request(&sample(t, i & 0xff_ffff), None, false);
                s.ack(&sample(t + 50, i & 0xff_ffff), true);
                if i % 1000 == 999 {
                    s.nak(&sample(t + 60, (i - 5) & 0xff_ffff), Kind::Nak);
                    for k in (1..=5).rev() {
                        s.request(&sample(t + 70, (i - k) & 0xff_ffff), None, true);
                    }
                }
                if i % 997 == 0 {
                    s.congestion(&sample(t + 80, i & 0xff_ffff), Kind::Cnp);
                }
            }
            s.end();
            assert_eq!(s.requests.seen(), 10_000_000);
            panels.push(s);
        }
        let g = graph(panels, 0, 1_000_000_000);
        let mut out = String::new();
        sequence_graph(&mut out, &g, &[], &[], "g1");
        println!("a graph of 2 x 10,000,000 requests: {} bytes", out.len());
        assert!(out.len() <= GRAPH_BYTES_MAX, "{} bytes", out.len());
        assert!(out.len() > GRAPH_BYTES_MAX / 3, "{} bytes: the budgets were not full?", out.len());
    }

    /// A connection whose last packet comes 9 s after a 3 ms burst: the silence is folded,
    /// the burst fills the width but the fold and the last instant's room.
    #[test]
    fn an_idle_stretch_is_folded() {
        let mut s = Series::default();
        for i in 0..300u32 {
            s.request(&sample(1_000_000_000 + u64::from(i) * 10_000, 100 + i), None, false);
        }
        s.request(&sample(10_000_000_000, 400), None, false);
        let g = graph(vec![s], 1_000_000_000, 10_000_000_000);
        let axis = time_axis(&g, &[], &[]);
        assert_eq!(axis.axis.folds.len(), 1, "{:?}", axis.axis.folds);
        let (a, b) = axis.axis.folds[0];
        assert_eq!(((a as u64), (b as u64)), (2_990_000, 9_000_000_000));
        // The burst: from the left edge to past 80% of the width.
        let burst_end = axis.x(1_000_000_000 + 2_990_000);
        assert!((axis.x(1_000_000_000) - LEFT).abs() < 1e-9);
        assert!(burst_end > LEFT + 0.8 * (WIDTH - LEFT - RIGHT), "{burst_end}");
        assert!((axis.x(10_000_000_000) - (WIDTH - RIGHT)).abs() < 1e-9);
        // Times keep their order across the fold.
        assert!(axis.x(5_000_000_000) > burst_end && axis.x(5_000_000_000) < WIDTH - RIGHT);
    }

    /// Traffic with no long silence is not folded, and its axis is linear in time.
    #[test]
    fn steady_traffic_is_not_folded() {
        let mut s = Series::default();
        for i in 0..10_000u32 {
            s.request(&sample(u64::from(i) * 1_000_000, i), None, false);
        }
        let g = graph(vec![s], 0, 9_999_000_000);
        let axis = time_axis(&g, &[], &[]);
        assert!(axis.axis.folds.is_empty());
        let mid = axis.x(4_999_500_000);
        assert!((mid - (LEFT + WIDTH - RIGHT) / 2.0).abs() < 0.01, "{mid}");
    }

    /// A stray PSN far from the rest (a bad ACK) folds the PSN axis: the rest keeps its room.
    #[test]
    fn a_far_psn_folds_the_psn_axis() {
        let mut s = Series::default();
        for i in 0..100u32 {
            s.request(&sample(u64::from(i) * 1_000, 1_000_000 + i), None, false);
        }
        let (a, b) =
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
        let p = Panel { key: FlowKey { src: a, dst: b, dest_qp: 0x22 }, series: s };
        let base = 1_000_000;
        let axis = psn_axis(&p, &[base - 900_000], base, 300.0, 0.0);
        assert_eq!(axis.folds.len(), 1);
        // The 100 requests take more than a third of the height.
        let (y0, y99) = (axis.px(0.0), axis.px(99.0));
        assert!(y0 - y99 > 100.0, "{y0} {y99}");
    }
}
