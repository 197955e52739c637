//! The report's timing and congestion section: per connection, the figures `stats` gives in
//! its `timing` and `congestion` objects (ACK, READ, atomic and NAK latencies, RNR waits,
//! timeout retransmissions with the local ACK timeout exponent they imply and what CM
//! negotiated, CE marks, CNPs, ECN-CE to CNP latency, CNP intervals per QP and the sender's
//! rate before and after each CNP), then CNP pacing per IP pair and per destination IP
//! across connections (`stats`' top-level `congestion` object), from `stats`' own
//! pass over the capture, so the page and `stats --format json` cannot disagree.
//!
//! Every figure's cell carries `data-k` (its member in `stats --format json`'s connection
//! object, a dotted path) and `data-v` (its exact value, ns for times), and shows the value
//! as `stats` text writes it.

use std::fmt::Write as _;

use roce_conformance::internal::timing::congestion::{
    CnpScopesJson, Interval, Reactions, REACTIONS_LISTED,
};
use roce_conformance::{Summary, TimingReport};

use super::html::esc;
use crate::stats::Connection;
use crate::timing_text::{duration, rate};

/// Connections with a timing section at most (the busiest first); the rest are counted.
pub const TIMING_SECTIONS: usize = 256;
/// Timeout retransmissions, RNR waits and CNP reactions listed per connection (as `stats`
/// text lists them).
const SHOWN: usize = 8;
/// IP pairs, and destinations, listed in the CNP pacing table.
const SCOPES_SHOWN: usize = 16;

/// Whether `stats` measured anything on the connection.
fn measured(c: &Connection) -> bool {
    let t = &c.timing;
    [
        &t.ack_latency_ns,
        &t.read_latency_ns.first_response,
        &t.read_latency_ns.last_response,
        &t.atomic_latency_ns,
        &t.nak_generation_ns,
        &t.nak_reaction_ns,
    ]
    .iter()
    .any(|s| s.is_some())
        || !t.rnr_waits.is_empty()
        || !t.timeout_retransmissions.is_empty()
        || c.congestion.ce_marked > 0
        || c.congestion.cnps > 0
}

/// Where a figure is written: a table cell, or a span inside a sentence.
#[derive(Clone, Copy)]
enum Place {
    Cell,
    Span,
}

/// The one writer of a figure: the value as text, and the member it is with its exact value
/// (`data-k`, `data-v`).
fn figure(out: &mut String, place: Place, key: &str, v: u64, text: &str) {
    let (open, close) = match place {
        Place::Cell => ("td class=\"n\"", "td"),
        Place::Span => ("span", "span"),
    };
    let _ = write!(out, "<{open} data-k=\"{}\" data-v=\"{v}\">{}</{close}>", esc(key), esc(text));
}

/// A cell of a table.
fn cell(out: &mut String, key: &str, v: u64, text: &str) {
    figure(out, Place::Cell, key, v, text);
}

fn time(out: &mut String, key: &str, ns: u64) {
    cell(out, key, ns, &duration(ns));
}

/// A span inside a sentence.
fn span(key: &str, v: u64, text: &str) -> String {
    let mut s = String::new();
    figure(&mut s, Place::Span, key, v, text);
    s
}

fn summary_row(out: &mut String, label: &str, key: &str, s: Option<&Summary>) {
    let Some(s) = s else { return };
    let _ = write!(out, "<tr><td>{}</td>", esc(label));
    cell(out, &format!("{key}.count"), s.count, &s.count.to_string());
    time(out, &format!("{key}.min"), s.min);
    time(out, &format!("{key}.p50"), s.p50);
    time(out, &format!("{key}.p90"), s.p90);
    time(out, &format!("{key}.p99"), s.p99);
    time(out, &format!("{key}.max"), s.max);
    out.push_str("</tr>\n");
}

/// A CNP interval row: count, min, p50, max (an interval has no p90 or p99).
fn interval_row(out: &mut String, label: &str, key: &str, i: Option<&Interval>) {
    let Some(i) = i else { return };
    let _ = write!(out, "<tr><td>{}</td>", esc(label));
    cell(out, &format!("{key}.count"), i.count, &i.count.to_string());
    time(out, &format!("{key}.min"), i.min);
    time(out, &format!("{key}.p50"), i.p50);
    out.push_str("<td></td><td></td>");
    time(out, &format!("{key}.max"), i.max);
    out.push_str("</tr>\n");
}

fn latencies(out: &mut String, c: &Connection) {
    let t = &c.timing;
    let rows: [(&str, &str, Option<&Summary>); 7] = [
        ("ACK latency", "timing.ack_latency_ns", t.ack_latency_ns.as_ref()),
        (
            "READ first response",
            "timing.read_latency_ns.first_response",
            t.read_latency_ns.first_response.as_ref(),
        ),
        (
            "READ last response",
            "timing.read_latency_ns.last_response",
            t.read_latency_ns.last_response.as_ref(),
        ),
        ("atomic latency", "timing.atomic_latency_ns", t.atomic_latency_ns.as_ref()),
        ("NAK generation", "timing.nak_generation_ns", t.nak_generation_ns.as_ref()),
        ("NAK reaction", "timing.nak_reaction_ns", t.nak_reaction_ns.as_ref()),
        ("ECN-CE to CNP", "congestion.ce_to_cnp_ns", c.congestion.ce_to_cnp_ns.as_ref()),
    ];
    let qp = c.congestion.cnp_interval_ns.qp.as_ref();
    if rows.iter().all(|r| r.2.is_none()) && qp.is_none() {
        return;
    }
    out.push_str("<table class=\"timing\"><thead><tr><th>measurement</th><th>count</th><th>min</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr></thead><tbody>\n");
    for (label, key, s) in rows {
        summary_row(out, label, key, s);
    }
    interval_row(out, "CNP interval (per QP)", "congestion.cnp_interval_ns.qp", qp);
    out.push_str("</tbody></table>\n");
}

fn timeouts(out: &mut String, t: &TimingReport) {
    let n = t.timeout_retransmissions.len() as u64 + t.timeout_retransmissions_not_listed;
    if n == 0 {
        return;
    }
    let _ = writeln!(out, "<p>Timeout retransmissions: {}</p>", n);
    out.push_str("<table class=\"timeouts\"><thead><tr><th>PSN</th><th>retry</th><th>after</th><th>frames</th></tr></thead><tbody>\n");
    for (i, x) in t.timeout_retransmissions.iter().enumerate().take(SHOWN) {
        let k = format!("timing.timeout_retransmissions.{i}");
        out.push_str("<tr>");
        cell(out, &format!("{k}.psn"), u64::from(x.psn.value()), &x.psn.value().to_string());
        cell(out, &format!("{k}.retry"), u64::from(x.retry), &x.retry.to_string());
        time(out, &format!("{k}.measured_ns"), x.measured_ns);
        let _ = writeln!(out, "<td>{}, {}</td></tr>", x.frames[0], x.frames[1]);
    }
    out.push_str("</tbody></table>\n");
    let more = n.saturating_sub(SHOWN as u64);
    if more > 0 {
        let _ = writeln!(out, "<p class=\"muted\">{more} more: `roce-inspect stats --format json` lists the first 32.</p>");
    }
    if let Some(b) = t.backoff {
        let _ = writeln!(out, "<p>Backoff across retries of one PSN: {}</p>", esc(b));
    }
    if let Some(i) = &t.inferred_timeout_exponent {
        let k = "timing.inferred_timeout_exponent";
        let _ = writeln!(
            out,
            "<p>Local ACK timeout consistent with t = {} (4.096 us x 2^t = {}), from {} first retries of {} to {}.</p>",
            span(&format!("{k}.exponent"), u64::from(i.exponent), &i.exponent.to_string()),
            span(&format!("{k}.timeout_ns"), i.timeout_ns, &duration(i.timeout_ns)),
            span(&format!("{k}.first_retries"), i.first_retries, &i.first_retries.to_string()),
            span(&format!("{k}.shortest_ns"), i.shortest_ns, &duration(i.shortest_ns)),
            span(&format!("{k}.longest_ns"), i.longest_ns, &duration(i.longest_ns)),
        );
    }
}

fn rnr_waits(out: &mut String, t: &TimingReport) {
    let n = t.rnr_waits.len() as u64 + t.rnr_waits_not_listed;
    if n == 0 {
        return;
    }
    let _ = writeln!(out, "<p>RNR waits: {n}</p>");
    out.push_str("<table class=\"rnr\"><thead><tr><th>PSN</th><th>advertised</th><th>waited</th><th>frames</th></tr></thead><tbody>\n");
    for (i, w) in t.rnr_waits.iter().enumerate().take(SHOWN) {
        let k = format!("timing.rnr_waits.{i}");
        out.push_str("<tr>");
        cell(out, &format!("{k}.psn"), u64::from(w.psn.value()), &w.psn.value().to_string());
        time(out, &format!("{k}.advertised_ns"), w.advertised_ns);
        time(out, &format!("{k}.waited_ns"), w.waited_ns);
        let _ = writeln!(out, "<td>{}, {}</td></tr>", w.frames[0], w.frames[1]);
    }
    out.push_str("</tbody></table>\n");
}

fn negotiated(out: &mut String, t: &TimingReport) {
    let Some(n) = &t.negotiated else { return };
    if t.timeout_retransmissions.is_empty() && t.rnr_waits.is_empty() {
        return;
    }
    let timeout = n.local_ack_timeout_ns.map_or("none".to_string(), duration);
    let verdict = if n.agrees { "the wire agrees".to_string() } else { n.disagreements.join("; ") };
    let k = "timing.negotiated";
    let _ = writeln!(
        out,
        "<p>CM REQ (frame {}): Local ACK Timeout {} ({}), Retry Count {}, RNR Retry Count {}: {}</p>",
        n.req_frame,
        span(&format!("{k}.local_ack_timeout"), u64::from(n.local_ack_timeout), &n.local_ack_timeout.to_string()),
        esc(&timeout),
        span(&format!("{k}.retry_count"), u64::from(n.retry_count), &n.retry_count.to_string()),
        span(&format!("{k}.rnr_retry_count"), u64::from(n.rnr_retry_count), &n.rnr_retry_count.to_string()),
        esc(&verdict)
    );
}

fn congestion(out: &mut String, c: &Connection) {
    let g = &c.congestion;
    if g.ce_marked == 0 && g.cnps == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "<p>Congestion: {} CE-marked packets, {} CNPs ({} on a flow not paired).</p>",
        span("congestion.ce_marked", g.ce_marked, &g.ce_marked.to_string()),
        span("congestion.cnps", g.cnps, &g.cnps.to_string()),
        span("congestion.cnps_unpaired", g.cnps_unpaired, &g.cnps_unpaired.to_string()),
    );
    reactions(out, &g.rate_before_after_cnp);
}

/// The sender's rate before and after each CNP (its DCQCN reaction): the first [`SHOWN`]
/// of those `stats` lists, then how many more.
fn reactions(out: &mut String, r: &Reactions) {
    if r.reactions == 0 {
        return;
    }
    let k = "congestion.rate_before_after_cnp";
    let _ = writeln!(
        out,
        "<p>Sender rate around CNPs ({}): {} CNPs, slower after {} of them.</p>",
        esc(r.window),
        span(&format!("{k}.reactions"), r.reactions, &r.reactions.to_string()),
        span(&format!("{k}.slowed"), r.slowed, &r.slowed.to_string()),
    );
    out.push_str("<table class=\"rate\"><thead><tr><th>CNP frame</th><th>rate before</th><th>bytes</th><th>over</th><th>rate after</th><th>bytes</th><th>over</th></tr></thead><tbody>\n");
    for (i, x) in r.listed.iter().enumerate().take(SHOWN) {
        let k = format!("{k}.listed.{i}");
        out.push_str("<tr>");
        cell(out, &format!("{k}.cnp_frame"), x.cnp_frame, &x.cnp_frame.to_string());
        cell(out, &format!("{k}.before_bps"), x.before_bps, &rate(x.before_bps));
        cell(out, &format!("{k}.before_bytes"), x.before_bytes, &format!("{} B", x.before_bytes));
        time(out, &format!("{k}.before_ns"), x.before_ns);
        let after =
            if x.after_ns == 0 { "nothing after it".to_string() } else { rate(x.after_bps) };
        cell(out, &format!("{k}.after_bps"), x.after_bps, &after);
        cell(out, &format!("{k}.after_bytes"), x.after_bytes, &format!("{} B", x.after_bytes));
        time(out, &format!("{k}.after_ns"), x.after_ns);
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    let more = r.reactions.saturating_sub(SHOWN.min(r.listed.len()) as u64);
    if more > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">and {more} more CNPs: `roce-inspect stats --format json` lists the first {REACTIONS_LISTED} of a connection.</p>"
        );
    }
}

/// One row of the pacing table: the scope, its CNPs and the intervals between them.
fn pacing_row(out: &mut String, scope: &str, key: &str, cnps: u64, i: Option<&Interval>) {
    let _ = write!(out, "<tr><td>{}</td>", esc(scope));
    cell(out, &format!("{key}.cnps"), cnps, &cnps.to_string());
    match i {
        Some(i) => {
            let key = format!("{key}.cnp_interval_ns");
            cell(out, &format!("{key}.count"), i.count, &i.count.to_string());
            time(out, &format!("{key}.min"), i.min);
            time(out, &format!("{key}.p50"), i.p50);
            time(out, &format!("{key}.max"), i.max);
        }
        None => out.push_str("<td>0</td><td></td><td></td><td></td>"),
    }
    out.push_str("</tr>\n");
}

/// CNP pacing per IP pair (NP -> RP) and per destination IP (RP), across connections: the
/// top-level `congestion` object of `stats --format json` (each cell's `data-k` is a member
/// of that object's document, not of a connection). The first [`SCOPES_SHOWN`] of each,
/// then how many more.
fn scopes(out: &mut String, s: &CnpScopesJson) {
    if s.ip_pairs.is_empty() && s.destinations.is_empty() && s.cnps_not_tracked == 0 {
        return;
    }
    out.push_str(
        "<section class=\"cnp-scopes\" id=\"cnp-pacing\"><h3>CNP pacing across connections</h3>\n",
    );
    out.push_str(
        "<p>The intervals between consecutive CNPs from one notification point address to one \
         reaction point address, and to one reaction point address from any, over the whole \
         capture (as roce-inspect stats gives them, whatever -Y or --conn select).</p>\n",
    );
    out.push_str("<table class=\"pacing\"><thead><tr><th>scope</th><th>CNPs</th><th>intervals</th><th>min</th><th>p50</th><th>max</th></tr></thead><tbody>\n");
    for (i, p) in s.ip_pairs.iter().enumerate().take(SCOPES_SHOWN) {
        let scope = format!("IP pair {} -> {}", p.src, p.dst);
        pacing_row(
            out,
            &scope,
            &format!("congestion.ip_pairs.{i}"),
            p.cnps,
            p.cnp_interval_ns.as_ref(),
        );
    }
    for (i, d) in s.destinations.iter().enumerate().take(SCOPES_SHOWN) {
        let scope = format!("destination {}", d.dst);
        pacing_row(
            out,
            &scope,
            &format!("congestion.destinations.{i}"),
            d.cnps,
            d.cnp_interval_ns.as_ref(),
        );
    }
    out.push_str("</tbody></table>\n");
    let more = |n: usize| n.saturating_sub(SCOPES_SHOWN);
    let (pairs, dests) = (more(s.ip_pairs.len()), more(s.destinations.len()));
    if pairs + dests > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">and {pairs} more IP pairs, {dests} more destinations: `roce-inspect stats` lists them.</p>"
        );
    }
    if s.cnps_not_tracked > 0 {
        let n = s.cnps_not_tracked;
        let _ = writeln!(
            out,
            "<p>{} CNPs of IP pairs or destinations beyond --max-flows not tracked.</p>",
            span("congestion.cnps_not_tracked", n, &n.to_string())
        );
    }
    out.push_str("</section>\n");
}

/// The section: the capture point stated once, then one block per connection with
/// measurements, in `stats`' order, then CNP pacing across connections.
pub fn section(out: &mut String, conns: &[Connection], pacing: &CnpScopesJson) {
    let with: Vec<&Connection> = conns.iter().filter(|c| measured(c)).collect();
    let _ = writeln!(out, "<h2 id=\"timing\">Timing and congestion ({})</h2>", with.len());
    out.push_str(
        "<p>Every time is the capture's clock, at the capture point: a host capture measures \
         what that host saw (on the requester's host an ACK latency is the round trip, on the \
         responder's its own turnaround), a switch mirror the time at the switch. The figures \
         are those of roce-inspect stats (docs/timing.md, docs/congestion.md).</p>\n",
    );
    if with.is_empty() {
        out.push_str("<p>Nothing measured: no ACK-requested packet answered, no READ, atomic, NAK, RNR NAK, timeout, CE mark or CNP.</p>\n");
    }
    for c in with.iter().take(TIMING_SECTIONS) {
        let name = c.info.connection.to_string();
        let _ = writeln!(
            out,
            "<section class=\"timing\" data-conn=\"{}\"><h3>{}</h3>",
            esc(&name),
            esc(&name)
        );
        latencies(out, c);
        rnr_waits(out, &c.timing);
        timeouts(out, &c.timing);
        negotiated(out, &c.timing);
        congestion(out, c);
        out.push_str("</section>\n");
    }
    if with.len() > TIMING_SECTIONS {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} more connections with measurements: `roce-inspect stats` lists them.</p>",
            with.len() - TIMING_SECTIONS
        );
    }
    scopes(out, pacing);
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_conformance::internal::timing::congestion::{DestinationPacing, PairPacing};
    use std::net::{IpAddr, Ipv4Addr};

    fn ip(d: u32) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + d))
    }

    /// 40 IP pairs and 20 destinations: 16 rows of each, the rest counted; the figures
    /// name the top-level members they are.
    #[test]
    fn pacing_table_is_bounded() {
        let i = Interval { count: 2, min: 10_000, p50: 20_000, max: 30_000 };
        let s = CnpScopesJson {
            ip_pairs: (0..40)
                .map(|k| PairPacing {
                    src: ip(k),
                    dst: ip(1000),
                    cnps: 3,
                    cnp_interval_ns: Some(i),
                })
                .collect(),
            destinations: (0..20)
                .map(|k| DestinationPacing { dst: ip(k), cnps: 1, cnp_interval_ns: None })
                .collect(),
            cnps_not_tracked: 5,
        };
        let mut out = String::new();
        scopes(&mut out, &s);
        assert_eq!(out.matches("<tr><td>IP pair ").count(), SCOPES_SHOWN);
        assert_eq!(out.matches("<tr><td>destination ").count(), SCOPES_SHOWN);
        assert!(out.contains("and 24 more IP pairs, 4 more destinations"), "{out}");
        assert!(out.contains(
            "data-k=\"congestion.ip_pairs.15.cnp_interval_ns.p50\" data-v=\"20000\">20 us<"
        ));
        assert!(!out.contains("congestion.ip_pairs.16."));
        assert!(out.contains("data-k=\"congestion.cnps_not_tracked\" data-v=\"5\""));
        // Nothing to say without CNPs.
        let none = CnpScopesJson { ip_pairs: vec![], destinations: vec![], cnps_not_tracked: 0 };
        let mut out = String::new();
        scopes(&mut out, &none);
        assert_eq!(out, "");
    }
}
