//! The report's sections, in page order: summary, findings, capture-wide bins, one graph per
//! graphed connection, timing and congestion per connection, the other connections.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use roce_analysis::series::Kind;
use roce_analysis::TapsReport;
use roce_conformance::{ConnectionReport, Finding, Severity};

use super::collect::{CmEvent, Collected, Graph, WIDE_BAD_ICRC, WIDE_CE, WIDE_CNP, WIDE_NAK};
use super::html::{esc, row};
use super::locate::Located;
use super::svg::{self, FindingMark};
use crate::annotate::meta::Meta;

/// Findings rows listed at most; the rest are counted (all are in `check --format json`).
pub const FINDING_ROWS: usize = 5000;
/// Connections listed at most in the table of connections not graphed.
pub const CONNECTION_ROWS: usize = 1000;
/// Bins of the per-connection byte charts.
const BYTE_BINS: usize = 96;

pub struct Page<'a> {
    pub file: &'a str,
    pub format: String,
    pub frames: u64,
    pub warnings: &'a [String],
    /// `-c`, `--frames`: the frames read, as a line of text.
    pub window: Option<String>,
    pub c: &'a Collected,
    pub located: &'a BTreeMap<u64, Located>,
    pub meta: &'a Meta,
    /// Several captures read as one: the taps' figures (absent for one capture).
    pub taps: Option<&'a TapsReport>,
    /// The taps' files, in merge order (empty for one capture).
    pub tap_names: &'a [String],
}

impl Page<'_> {
    /// A cited frame as the page names it: its number, and over several taps the file and
    /// number it has there (`39 (b.pcap:19)`).
    fn frame_name(&self, n: u64) -> String {
        match self.located.get(&n).and_then(|l| l.source) {
            Some((tap, k)) => {
                let file = self.tap_names.get(tap as usize).map_or("?", String::as_str);
                format!("{n} ({file}:{k})")
            }
            None => n.to_string(),
        }
    }
}

fn sev(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn dur(ns: u64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

pub fn render(p: &Page<'_>, out: &mut String) {
    super::html::head(out, &format!("roce-inspect report: {}", p.file));
    let _ = writeln!(out, "<h1>RoCE report: {}</h1>", esc(p.file));
    diagnosis(p, out);
    summary(p, out);
    taps(p, out);
    metadata(p.meta, out);
    findings(p, out);
    wide(p, out);
    graphs(p, out);
    super::timers::section(out, &p.c.timers, &p.c.cnp_pacing);
    others(p, out);
    let _ = write!(
        out,
        "<p class=\"muted\">Made by roce-inspect {}. How to read the graphs: docs/report.md.</p>",
        esc(crate::version())
    );
    super::html::tail(out);
}

/// `diagnose`'s verdicts (docs/diagnose.md): the headline, the first failure and those that
/// followed, and each connection with a problem, its verdicts and what to look at next.
fn diagnosis(p: &Page<'_>, out: &mut String) {
    use roce_analysis::Severity as S;
    let d = &p.c.diagnosis;
    out.push_str("<h2 id=\"diagnosis\">Diagnosis</h2>\n");
    let _ = writeln!(out, "<p class=\"headline\">{}</p>", esc(&d.headline));
    let problems: Vec<_> = d
        .connections
        .iter()
        .map(|c| (c.name.as_str(), &c.verdicts))
        .chain(d.setup.iter().map(|s| ("", &s.verdicts)))
        .filter(|(_, v)| v.iter().any(|v| v.severity > S::Ok))
        .collect();
    if problems.is_empty() {
        return;
    }
    out.push_str("<table class=\"diagnosis\"><thead><tr><th>connection</th><th>verdict</th><th>what was measured</th><th>frames</th></tr></thead><tbody>\n");
    let mut told = Vec::new();
    let mut shown = 0;
    for (name, verdicts) in &problems {
        for v in verdicts.iter().filter(|v| v.severity > S::Ok) {
            shown += 1;
            if shown > DIAGNOSIS_ROWS {
                continue;
            }
            let frames: Vec<String> = v.frames.iter().map(u64::to_string).collect();
            let class = match v.severity {
                S::Failure => " class=\"error\"",
                S::Degraded | S::Misconfigured => " class=\"warning\"",
                S::Ok => "",
            };
            let mut what = v.summary.clone();
            if !told.contains(&v.verdict) {
                told.push(v.verdict);
                what.push_str(&format!(" Next: {}.", v.next));
            }
            row(out, class, &[name, v.verdict.title(), &what, &frames.join(", ")]);
        }
    }
    out.push_str("</tbody></table>\n");
    if shown > DIAGNOSIS_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} more verdicts: <code>roce-inspect diagnose --format json</code> lists them.</p>",
            shown - DIAGNOSIS_ROWS
        );
    }
}

/// Verdicts the page's diagnosis lists.
const DIAGNOSIS_ROWS: usize = 50;

fn summary(p: &Page<'_>, out: &mut String) {
    let c = p.c;
    let r = &c.check;
    let duration = c.first_ts.map_or(0, |f| c.last_ts.saturating_sub(f));
    out.push_str("<h2 id=\"summary\">Capture</h2>\n<table class=\"summary\">\n");
    let icrc = format!(
        "{} ok, {} bad, {} unverifiable, {} not checked",
        c.icrc[0], c.icrc[1], c.icrc[2], c.icrc[3]
    );
    let lines: [(&str, String); 8] = [
        (if p.taps.is_some() { "files" } else { "file" }, p.file.to_string()),
        ("format", p.format.clone()),
        (
            "frames",
            match p.taps {
                Some(t) => format!(
                    "{} read at {} taps, {} after their copies are counted once",
                    p.frames,
                    t.taps.len(),
                    r.frames
                ),
                None => p.frames.to_string(),
            },
        ),
        ("RoCE frames", r.roce_frames.to_string()),
        ("ICRC", icrc),
        ("duration", dur(duration)),
        (
            "findings",
            format!(
                "{} error(s), {} warning(s), {} counted beyond the per-rule cap",
                r.errors, r.warnings, r.suppressed
            ),
        ),
        (
            "connections",
            format!(
                "{} listed, {} graphed, {} not listed",
                c.connections.len(),
                c.graphs.len(),
                c.connections_not_listed
            ),
        ),
    ];
    for (k, v) in &lines {
        row(out, "", &[k, v]);
    }
    out.push_str("</table>\n");
    // -c / --frames, -Y / --conn: what the page covers.
    for line in p.window.iter().chain(&c.selected) {
        let _ = writeln!(out, "<p class=\"muted\">{}</p>", esc(line));
    }
    for w in p.warnings {
        let _ = writeln!(out, "<p class=\"warning\">capture warning: {}</p>", esc(w));
    }
}

/// Drops the taps section lists (the JSON of `stats` and `check` lists up to 1,000).
const TAP_DROP_ROWS: usize = 100;

/// Several taps: each tap's file, clock and frames; per pair of taps the copies, their
/// one-way latency and the packets lost between them; the first of those packets.
fn taps(p: &Page<'_>, out: &mut String) {
    let Some(r) = p.taps else { return };
    let _ = writeln!(
        out,
        "<h2 id=\"taps\">Taps ({} captures read as one)</h2>\n<p class=\"muted\">Frames are numbered in time order across the files, on the clocks corrected by each tap's offset; a packet seen at another tap within {} us of its first sighting is a copy, counted once (docs/taps.md).</p>",
        r.taps.len(),
        r.window_ns as f64 / 1e3
    );
    out.push_str("<table class=\"taps\"><thead><tr><th>tap</th><th>file</th><th>frames</th><th>first seen here</th><th>copies</th><th>clock offset</th></tr></thead><tbody>\n");
    for (i, t) in r.taps.iter().enumerate() {
        let clock = match t.info.offset_from {
            "reference" => "the reference".to_string(),
            "given" => format!("{:+} ns (given)", t.info.offset_ns),
            "estimated" => {
                format!(
                    "{:+} ns (estimated from {} copies)",
                    t.info.offset_ns, t.info.offset_copies
                )
            }
            _ => "not estimated (no copy of the first file's packets)".to_string(),
        };
        row(
            out,
            "",
            &[
                &(i + 1).to_string(),
                &t.info.file,
                &t.counts.frames.to_string(),
                &t.counts.first.to_string(),
                &t.counts.copies.to_string(),
                &clock,
            ],
        );
    }
    out.push_str("</tbody></table>\n");
    if !r.pairs.is_empty() {
        out.push_str("<table class=\"taps\"><thead><tr><th>from tap</th><th>to tap</th><th>copies</th><th>one-way latency min / p50 / p99 / max (ns)</th><th>lost between</th></tr></thead><tbody>\n");
        for pair in &r.pairs {
            let latency = pair.latency_ns.map_or_else(String::new, |l| {
                format!("{} / {} / {} / {}", l.min, l.p50, l.p99, l.max)
            });
            let class = if pair.drops > 0 { " class=\"warning\"" } else { "" };
            row(
                out,
                class,
                &[
                    &(pair.from + 1).to_string(),
                    &(pair.to + 1).to_string(),
                    &pair.copies.to_string(),
                    &latency,
                    &pair.drops.to_string(),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if r.drops_listed.is_empty() {
        let _ = writeln!(out, "<p>No packet lost between taps.</p>");
    } else {
        let _ = writeln!(
            out,
            "<p>{} packet(s) lost between taps (each a CAP-DROP-BETWEEN finding):</p>",
            r.drops
        );
        out.push_str("<table class=\"taps\"><thead><tr><th>connection</th><th>PSN</th><th>last seen at</th><th>missing at</th><th>frames</th></tr></thead><tbody>\n");
        for d in r.drops_listed.iter().take(TAP_DROP_ROWS) {
            let tap = |t: u32| p.tap_names.get(t as usize).map_or("?", String::as_str);
            let conn = d.connection.map_or_else(String::new, |c| c.to_string());
            let frames = [d.first_frame, d.last_frame];
            let frames: Vec<String> = if frames[0] == frames[1] {
                vec![p.frame_name(frames[0])]
            } else {
                frames.iter().map(|&n| p.frame_name(n)).collect()
            };
            row(
                out,
                "",
                &[
                    &conn,
                    &d.psn.to_string(),
                    tap(d.last_seen),
                    tap(d.missing_at),
                    &frames.join(", "),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
        if r.drops_listed.len() > TAP_DROP_ROWS {
            let _ = writeln!(
                out,
                "<p class=\"muted\">{} more: <code>roce-inspect check --format json</code> lists them.</p>",
                r.drops_listed.len() - TAP_DROP_ROWS
            );
        }
    }
    if r.unconfirmed > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} packet(s) missing at a tap that saw no later packet of their connection: not judged.</p>",
            r.unconfirmed
        );
    }
}

fn metadata(m: &Meta, out: &mut String) {
    if m.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"metadata\">pcapng metadata</h2>\n<table class=\"meta\">\n");
    for (i, s) in m.sections.iter().enumerate() {
        for (k, v) in s {
            row(out, "", &[&format!("section {i}"), k, v]);
        }
    }
    for (i, (section, opts)) in m.interfaces.iter().enumerate() {
        for (k, v) in opts {
            row(out, "", &[&format!("interface {i} (section {section})"), k, v]);
        }
    }
    for (frame, text) in &m.comments {
        row(out, "", &[&format!("frame {frame}"), "comment", text]);
    }
    out.push_str("</table>\n");
    if m.comments_not_listed > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} more packet comments not listed.</p>",
            m.comments_not_listed
        );
    }
}

fn conn_name(f: &Finding) -> String {
    f.connection.map_or_else(|| "capture".to_string(), |c| c.to_string())
}

fn findings(p: &Page<'_>, out: &mut String) {
    let fs = &p.c.check.findings;
    let _ = writeln!(out, "<h2 id=\"findings\">Findings ({})</h2>", fs.len());
    if fs.is_empty() {
        out.push_str("<p>No finding: every rule checked held.</p>\n");
        return;
    }
    let rules: std::collections::BTreeSet<&str> = fs.iter().map(|f| f.rule).collect();
    let conns: std::collections::BTreeSet<String> = fs.iter().map(conn_name).collect();
    out.push_str("<p>Filter: <select id=\"frule\"><option value=\"\">every rule</option>");
    for r in &rules {
        let _ = write!(out, "<option>{}</option>", esc(r));
    }
    out.push_str("</select> <select id=\"fconn\"><option value=\"\">every connection</option>");
    for c in &conns {
        let _ = write!(out, "<option>{}</option>", esc(c));
    }
    out.push_str("</select> (click a column to sort)</p>\n<div class=\"scroll\"><table id=\"ftable\"><thead><tr><th>rule</th><th>severity</th><th>side</th><th>frames</th><th>PSN</th><th>connection</th><th>message</th></tr></thead><tbody>\n");
    for f in fs.iter().take(FINDING_ROWS) {
        let side = roce_conformance::find_rule(f.rule).map_or("", |r| r.side.as_str());
        let frames: Vec<String> = f.frames.iter().map(|&n| p.frame_name(n)).collect();
        let conn = conn_name(f);
        let attrs = format!(
            " class=\"{}\" data-rule=\"{}\" data-conn=\"{}\"",
            sev(f.severity),
            esc(f.rule),
            esc(&conn)
        );
        let psn = f.psn.map(|v| v.value().to_string()).unwrap_or_default();
        row(
            out,
            &attrs,
            &[f.rule, sev(f.severity), side, &frames.join(","), &psn, &conn, &f.message],
        );
    }
    out.push_str("</tbody></table></div>\n");
    if fs.len() > FINDING_ROWS {
        let _ = writeln!(out, "<p class=\"muted\">{} more findings: `roce-inspect check --format json` lists them.</p>", fs.len() - FINDING_ROWS);
    }
}

fn wide(p: &Page<'_>, out: &mut String) {
    let w = &p.c.wide;
    out.push_str("<h2 id=\"capture-bins\">Over the capture</h2>\n");
    if w.values().is_empty() {
        out.push_str("<p>No NAK, CNP, ECN-CE mark or bad ICRC.</p>\n");
        return;
    }
    let t0 = p.c.first_ts.unwrap_or(0);
    let (width, bins) = svg::regrid(&[w], t0, p.c.last_ts, BYTE_BINS);
    let series =
        [("w-nak", "NAKs"), ("w-cnp", "CNPs"), ("w-ce", "ECN-CE marks"), ("w-icrc", "bad ICRCs")];
    let totals = format!(
        "NAKs {}, CNPs {}, ECN-CE {}, bad ICRC {} per bin of {}",
        w.total(WIDE_NAK),
        w.total(WIDE_CNP),
        w.total(WIDE_CE),
        w.total(WIDE_BAD_ICRC),
        dur(width)
    );
    svg::bar_chart(
        out,
        &svg::Bars {
            class: "wide",
            title: &totals,
            t0,
            width_ns: width,
            bins: &bins,
            series: &series,
            unit: "",
            axis: None,
            id: "wide",
        },
    );
    legend(out, &series);
}

fn legend(out: &mut String, items: &[(&str, &str)]) {
    out.push_str("<p class=\"legend\">");
    for (cls, label) in items {
        let _ = write!(out, "<span><svg class=\"sw\" width=\"10\" height=\"10\"><rect class=\"{cls}\" width=\"10\" height=\"10\"/></svg>{label}</span>");
    }
    out.push_str("</p>\n");
}

/// The CM messages between the connection's two hosts within its incarnation: from the last
/// REQ at or before its start to its end.
fn cm_of<'a>(g: &Graph, cm: &'a [CmEvent]) -> Vec<&'a CmEvent> {
    let c = g.info.connection;
    let lo = g.info.began.frame.min(g.info.first_frame);
    let hi = g.info.ended.frame.max(g.info.last_frame);
    let between: Vec<&CmEvent> = cm
        .iter()
        .filter(|e| (e.src == c.a && e.dst == c.b) || (e.src == c.b && e.dst == c.a))
        .collect();
    let start = between
        .iter()
        .rposition(|e| e.frame <= lo && e.name == "REQ")
        .map_or(lo, |i| between.get(i).map_or(lo, |e| e.frame));
    between
        .into_iter()
        .filter(|e| e.frame >= start && (e.frame <= hi || g.info.ended.frame == 0))
        .collect()
}

/// The findings of a graphed connection, with where their frames are drawn.
pub fn marks_of<'a>(
    g: &Graph,
    fs: &'a [Finding],
    located: &BTreeMap<u64, Located>,
) -> Vec<FindingMark<'a>> {
    fs.iter()
        .filter(|f| f.connection == Some(g.info.connection))
        .map(|f| {
            let at = f
                .frames
                .iter()
                .filter_map(|n| {
                    let l = located.get(n)?;
                    let (key, psn, op) = l.flow?;
                    // A response (ACK, READ response, atomic ACK) is drawn in its requester's
                    // panel, as the collector draws it; a request in its own.
                    let own = g.panels.iter().position(|p| p.key == key);
                    let back =
                        g.panels.iter().position(|p| p.key.src == key.dst && p.key.dst == key.src);
                    let response = op.contains("ACKNOWLEDGE") || op.contains("READ_RESPONSE");
                    let panel = if response { back.or(own) } else { own.or(back) }.unwrap_or(0);
                    Some((panel, l.ts, psn, op, *n))
                })
                .collect();
            FindingMark {
                rule: f.rule,
                severity: sev(f.severity),
                message: &f.message,
                frames: &f.frames,
                at,
            }
        })
        .collect()
}

fn integrity(r: Option<&ConnectionReport>) -> String {
    match r {
        None => String::new(),
        Some(r) => {
            let mut s = format!(
                "capture {:.1}% complete ({} packets missing), {} retransmissions judged",
                r.completeness * 100.0,
                r.missing_packets,
                r.retransmissions
            );
            for why in &r.partly_judged {
                let _ = write!(s, "; partly judged: {why}");
            }
            s
        }
    }
}

fn graphs(p: &Page<'_>, out: &mut String) {
    let c = p.c;
    let _ = writeln!(out, "<h2 id=\"graphs\">Connections graphed ({})</h2>", c.graphs.len());
    if c.graphs.is_empty() {
        out.push_str("<p>No RC, UC or XRC connection to graph.</p>\n");
        return;
    }
    let legend_items: Vec<(&str, &str)> = [("req", "new request"), ("ack", "ACK line")]
        .into_iter()
        .chain(Kind::ALL.iter().map(|k| (k.class(), k.label())))
        .chain([
            ("m-finding", "finding"),
            ("m-cm", "CM message"),
            ("m-began", "incarnation start/end"),
        ])
        .collect();
    out.push_str("<p class=\"legend\">");
    for (cls, label) in &legend_items {
        let _ = write!(out, "<span class=\"lg\" data-k=\"{cls}\">{label}</span>");
    }
    out.push_str("</p>\n<p class=\"muted\">Hover a mark for its frames, opcode and PSN.</p>\n");
    if c.cm_not_kept > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} CM messages after the capture's first {} are not drawn.</p>",
            c.cm_not_kept,
            super::collect::CM_EVENTS_MAX
        );
    }
    for (i, g) in c.graphs.iter().enumerate() {
        let name = g.info.connection.to_string();
        let k = &g.counts;
        let _ = writeln!(
            out,
            "<section class=\"conn\" data-conn=\"{}\"><h3>{}</h3>\n<p>{}, {} packets, frames {}-{}, {} requests, {} retransmitted, {} NAKs, {} RNR NAKs, {} CNPs, {} ECN-CE; {}</p>",
            esc(&name),
            esc(&name),
            esc(g.info.transport),
            g.info.packets,
            g.info.first_frame,
            g.info.last_frame,
            k.requests,
            k.retransmitted,
            k.naks,
            k.rnr_naks,
            k.cnps,
            k.ecn_ce,
            esc(&integrity(c.check.connections.iter().find(|r| r.info.connection == g.info.connection)))
        );
        let marks = marks_of(g, &c.check.findings, p.located);
        let cm = cm_of(g, &c.cm_events);
        let id = format!("g{}", i + 1);
        svg::sequence_graph(out, g, &cm, &marks, &id);
        let bins: Vec<_> = g.panels.iter().map(|p| &p.series.bytes).collect();
        // On the graph's time axis (its folds; zoomed with it).
        let axis = svg::time_axis(g, &cm, &marks);
        let (t0, t1) = (axis.t0, axis.t1);
        let (width, grid) = svg::regrid(&bins, t0, t1, BYTE_BINS);
        let title = format!(
            "request payload bytes per {}: new (goodput) {} B, retransmitted {} B",
            dur(width),
            k.new_payload,
            k.retx_payload
        );
        let series = [("b-new", "new"), ("b-retx", "retransmitted")];
        svg::bar_chart(
            out,
            &svg::Bars {
                class: "bytes",
                title: &title,
                t0,
                width_ns: width,
                bins: &grid,
                series: &series,
                unit: "bytes",
                axis: Some((&axis, &id)),
                id: "",
            },
        );
        out.push_str("</section>\n");
    }
}

fn others(p: &Page<'_>, out: &mut String) {
    let c = p.c;
    let graphed: std::collections::HashSet<_> =
        c.graphs.iter().map(|g| g.info.connection).collect();
    let rest: Vec<_> =
        c.connections.iter().filter(|(i, _)| !graphed.contains(&i.connection)).collect();
    let _ = writeln!(
        out,
        "<h2 id=\"others\">Other connections ({})</h2>",
        rest.len() as u64 + c.connections_not_listed
    );
    if rest.is_empty() {
        return;
    }
    out.push_str("<div class=\"scroll\"><table id=\"otable\"><thead><tr><th>connection</th><th>transport</th><th>packets</th><th>requests</th><th>retransmitted</th><th>NAKs</th><th>RNR NAKs</th><th>CNPs</th><th>ECN-CE</th><th>frames</th><th>capture complete</th></tr></thead><tbody>\n");
    let complete: std::collections::HashMap<_, f64> =
        c.check.connections.iter().map(|r| (r.info.connection, r.completeness)).collect();
    for (info, k) in rest.iter().take(CONNECTION_ROWS) {
        let cells = [
            info.connection.to_string(),
            info.transport.to_string(),
            info.packets.to_string(),
            k.requests.to_string(),
            k.retransmitted.to_string(),
            k.naks.to_string(),
            k.rnr_naks.to_string(),
            k.cnps.to_string(),
            k.ecn_ce.to_string(),
            format!("{}-{}", info.first_frame, info.last_frame),
            complete.get(&info.connection).map_or(String::new(), |v| format!("{:.1}%", v * 100.0)),
        ];
        let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
        row(out, "", &refs);
    }
    out.push_str("</tbody></table></div>\n");
    let more = rest.len().saturating_sub(CONNECTION_ROWS) as u64 + c.connections_not_listed;
    if more > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{more} more connections, with fewer packets, not listed.</p>"
        );
    }
}
