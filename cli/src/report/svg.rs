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

use super::bins::Bins;
use super::collect::{CmEvent, Graph, Panel};
use super::html::esc;
use super::series::{Kind, Mark, Pt};

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

/// Time (ns) and unrolled PSN to pixels.
#[derive(Debug, Clone, Copy)]
struct Scale {
    t0: u64,
    t1: u64,
    p0: i64,
    p1: i64,
    top: f64,
}

impl Scale {
    fn x(&self, t: u64) -> f64 {
        let span = self.t1.saturating_sub(self.t0).max(1) as f64;
        LEFT + (t.saturating_sub(self.t0) as f64 / span) * (WIDTH - LEFT - RIGHT)
    }
    fn y(&self, p: i64) -> f64 {
        let span = (self.p1 - self.p0).max(1) as f64;
        self.top + PANEL_H - BOTTOM - ((p - self.p0) as f64 / span) * (PANEL_H - TOP - BOTTOM)
    }
}

/// Time relative to the graph's start, for labels.
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

fn psn_range(p: &Panel, extra: impl Iterator<Item = i64>) -> (i64, i64) {
    let s = &p.series;
    let pts = s.requests.points().iter().chain(s.acks.points()).map(|q| q.psn);
    let marks = s.marks.all().iter().flat_map(|m| [m.psn0, m.psn1]);
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    for v in pts.chain(marks).chain(extra) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return (0, 1);
    }
    let pad = ((hi - lo) / 20).max(1);
    (lo - pad, hi + pad)
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

/// The sequence graph of one connection: a panel per direction that sent anything.
pub fn sequence_graph(
    out: &mut String,
    g: &Graph,
    cm: &[&CmEvent],
    findings: &[FindingMark<'_>],
    id: &str,
) {
    let panels = g.panels.len().max(1);
    let height = PANEL_H * panels as f64;
    let (t0, t1) = time_range(g, cm, findings);
    let name = g.info.connection.to_string();
    let _ = write!(
        out,
        "<svg class=\"seq\" id=\"{id}\" data-conn=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\">\
         <title>Time-sequence graph of {}</title>",
        esc(&name),
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
        let (p0, p1) = psn_range(p, mine.iter().flat_map(|(_, ys)| ys.iter().copied()));
        let sc = Scale { t0, t1, p0, p1, top };
        panel(out, p, &sc, g, cm);
        for (f, ys) in &mine {
            let here: Vec<_> = f.at.iter().filter(|a| a.0 == i).zip(ys).collect();
            if here.is_empty() {
                continue;
            }
            finding_mark(out, f, &here, &sc);
        }
    }
    out.push_str("</svg>");
}

fn panel(out: &mut String, p: &Panel, sc: &Scale, g: &Graph, cm: &[&CmEvent]) {
    let k = &p.key;
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let (y0, y1) = (sc.top + TOP, sc.top + PANEL_H - BOTTOM);
    let _ = write!(
        out,
        "<g class=\"panel\"><text class=\"ptitle\" x=\"{x0}\" y=\"{:.1}\">requests {} -> {} DestQP 0x{:06x}</text>\
         <rect class=\"frame\" x=\"{x0}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        sc.top + 15.0,
        k.src,
        k.dst,
        k.dest_qp,
        x1 - x0,
        y1 - y0
    );
    for i in 0..=4u64 {
        let t = sc.t0 + (sc.t1.saturating_sub(sc.t0)) * i / 4;
        let x = sc.x(t);
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{y1:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text class=\"tl\" x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
            y1 + 4.0,
            y1 + 16.0,
            esc(&rel(t, sc.t0))
        );
        let v = sc.p0 + (sc.p1 - sc.p0) * i as i64 / 4;
        let y = sc.y(v);
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{x0}\" y2=\"{y:.1}\"/>\
             <text class=\"yl\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x0 - 4.0,
            x0 - 6.0,
            y + 3.0,
            v.rem_euclid(1 << 24)
        );
    }
    boundaries(out, g, sc, y0, y1);
    for e in cm {
        let x = sc.x(e.ts);
        let _ = write!(
            out,
            "<g class=\"m-cm\"><title>frame {}: CM {} {} -> {}</title>\
             <line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            e.frame,
            e.name,
            e.src,
            e.dst,
            x + 2.0,
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
    out.push_str("</g>");
}

/// The incarnation's start and end, as dashed lines with why.
fn boundaries(out: &mut String, g: &Graph, sc: &Scale, y0: f64, y1: f64) {
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
             <line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/></g>",
            i.connection.incarnation,
            if class == "m-began" { "began" } else { "ended" },
            esc(&why)
        );
    }
}

fn requests(out: &mut String, pts: &[Pt], seen: u64, sc: &Scale) {
    if pts.is_empty() {
        return;
    }
    let _ = write!(out, "<path class=\"req\" data-n=\"{seen}\" d=\"");
    for q in pts {
        let _ = write!(out, "M{:.1} {:.1}h3", sc.x(q.t) - 1.5, sc.y(q.psn));
    }
    let _ =
        write!(out, "\"><title>{seen} new request packets ({} drawn)</title></path>", pts.len());
}

fn ack_line(out: &mut String, pts: &[Pt], seen: u64, sc: &Scale) {
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
        if let Some(ly) = last_y {
            let _ = write!(out, "{x:.1},{ly:.1} ");
        }
        let _ = write!(out, "{x:.1},{y:.1} ");
        last_y = Some(y);
    }
    let _ = write!(out, "\"><title>ACK line: {seen} ACKs ({} drawn)</title></polyline>", pts.len());
}

fn mark(out: &mut String, m: &Mark, sc: &Scale) {
    let (xa, ya, xb, yb) = (sc.x(m.t0), sc.y(m.psn0), sc.x(m.t1), sc.y(m.psn1));
    let frames = if m.frame0 == m.frame1 {
        format!("frame {}", m.frame0)
    } else {
        format!("frames {}-{}", m.frame0, m.frame1)
    };
    let psn = |v: i64| v.rem_euclid(1 << 24);
    let psns = if m.psn0 == m.psn1 {
        format!("PSN {}", psn(m.psn0))
    } else {
        format!("PSN {}-{}", psn(m.psn0), psn(m.psn1))
    };
    let what = match m.kind {
        Kind::Read | Kind::Atomic => format!("{}: {}", m.kind.label(), m.opcode),
        _ if m.n == 1 => format!("{} {}", m.kind.label(), m.opcode),
        _ => format!("{} {} packets, first {}", m.n, m.kind.label(), m.opcode),
    };
    let _ = write!(
        out,
        "<g class=\"{}\" data-n=\"{}\"><title>{frames}: {what}, {psns}</title>",
        m.kind.class(),
        m.n
    );
    match m.kind {
        Kind::Retx if m.n > 1 => {
            let _ = write!(
                out,
                "<line x1=\"{xa:.1}\" y1=\"{ya:.1}\" x2=\"{xb:.1}\" y2=\"{yb:.1}\"/>\
                 <circle cx=\"{xa:.1}\" cy=\"{ya:.1}\" r=\"2.5\"/>"
            );
        }
        Kind::Retx => {
            let _ = write!(out, "<circle cx=\"{xa:.1}\" cy=\"{ya:.1}\" r=\"2.5\"/>");
        }
        Kind::Read | Kind::Atomic => {
            let _ = write!(
                out,
                "<line x1=\"{xa:.1}\" y1=\"{ya:.1}\" x2=\"{xb:.1}\" y2=\"{yb:.1}\"/>\
                 <rect x=\"{:.1}\" y=\"{:.1}\" width=\"4\" height=\"4\"/>",
                xa - 2.0,
                ya - 2.0
            );
        }
        Kind::Nak | Kind::Rnr | Kind::Fatal => {
            // A triangle pointing down at the PSN the responder expects.
            let _ = write!(out, "<path d=\"M{:.1} {:.1}l5 -9h-10z\"/>", xa, ya - 2.0);
            if xb > xa + 1.0 {
                let _ = write!(
                    out,
                    "<line x1=\"{xa:.1}\" y1=\"{ya:.1}\" x2=\"{xb:.1}\" y2=\"{yb:.1}\"/>"
                );
            }
        }
        Kind::Ce => {
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"3\"/>",
                xa - 1.5,
                ya + 4.0,
                (xb - xa).max(0.0) + 3.0
            );
        }
        Kind::Cnp => {
            let _ = write!(out, "<path d=\"M{xa:.1} {:.1}l4 4l-4 4l-4 -4z\"/>", ya - 12.0);
        }
    }
    out.push_str("</g>");
}

fn finding_mark(out: &mut String, f: &FindingMark<'_>, here: &[(&At, &i64)], sc: &Scale) {
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
    for (a, _) in here {
        let _ = write!(out, "\nframe {} {} PSN {}", a.4, a.3, a.2);
    }
    out.push_str("</title>");
    for (a, y) in here {
        let (x, y) = (sc.x(a.1), sc.y(**y));
        let _ = write!(
            out,
            "<circle class=\"fring\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7\"/>\
             <path d=\"M{:.1} {:.1}l8 8m0 -8l-8 8\"/>",
            x - 4.0,
            y - 4.0
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
}

/// Draws `b`.
pub fn bar_chart(out: &mut String, b: &Bars<'_>) {
    let Bars { class, title, t0, width_ns, bins, series, unit } = *b;
    let h = 130.0;
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, 18.0, h - 22.0);
    let n = bins.len().max(1);
    let max = bins.iter().map(|b| b.iter().sum::<u64>()).max().unwrap_or(0).max(1);
    let _ = write!(
        out,
        "<svg class=\"{class}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {h}\" \
         width=\"{WIDTH}\" height=\"{h}\" role=\"img\"><title>{}</title>\
         <text class=\"ptitle\" x=\"{x0}\" y=\"13\">{}</text>\
         <rect class=\"frame\" x=\"{x0}\" y=\"{y0}\" width=\"{:.1}\" height=\"{:.1}\"/>\
         <text class=\"yl\" x=\"{:.1}\" y=\"{:.1}\">{max}</text><text class=\"yl\" x=\"{:.1}\" y=\"{y1:.1}\">0</text>\
         <text class=\"tl\" x=\"{x0}\" y=\"{:.1}\">0</text><text class=\"tl\" x=\"{x1}\" y=\"{:.1}\">{}</text>",
        esc(title),
        esc(title),
        x1 - x0,
        y1 - y0,
        x0 - 6.0,
        y0 + 8.0,
        x0 - 6.0,
        y1 + 14.0,
        y1 + 14.0,
        esc(&rel(t0 + width_ns * n as u64, t0))
    );
    let bw = (x1 - x0) / n as f64;
    for (i, b) in bins.iter().enumerate() {
        let mut acc = 0u64;
        for ((cls, label), v) in series.iter().zip(b) {
            if *v == 0 {
                continue;
            }
            let ya = y1 - (acc + v) as f64 / max as f64 * (y1 - y0);
            let hh = *v as f64 / max as f64 * (y1 - y0);
            let t = t0 + width_ns * i as u64;
            let _ = write!(
                out,
                "<rect class=\"{cls}\" x=\"{:.1}\" y=\"{ya:.1}\" width=\"{:.1}\" height=\"{hh:.1}\">\
                 <title>{}: {v} {unit} in {}-{}</title></rect>",
                x0 + bw * i as f64,
                (bw - 0.5).max(0.5),
                label,
                esc(&rel(t, t0)),
                esc(&rel(t + width_ns, t0))
            );
            acc += v;
        }
    }
    out.push_str("</svg>");
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
