//! `roce-inspect diagnose`: the verdicts of roce-analysis's [`Diagnosis`] (what went wrong,
//! where it started, the proof), one screen of text or the v1 JSON document
//! (docs/diagnose.md, docs/schema/diagnose.schema.json).

use std::fmt::Write as _;
use std::io::{self, Write};

use roce_analysis::{
    DiagnoseDocument, Diagnosis, Severity, TapStep, TapsReport, Verdict, VerdictKind,
};
use serde::Serialize;
use serde_json::json;

use crate::nic_counters::{NicInput, Reconciliation, RETRY_EXCEEDED};
use roce_conformance::{Options, Shard};
use roce_parser::Config;

use crate::input::{warn_undecoded, Input, InputError};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What `diagnose` reads and how.
pub struct Run<'a> {
    pub input: &'a Input,
    pub cfg: &'a Config,
    pub opts: Options,
    /// Failures within this window after the first one follow it (ns).
    pub window_ns: u64,
    pub threads: crate::threads::Threads,
    pub filter: Option<&'a crate::filter::DisplayFilter>,
    pub format: Format,
    /// `--nic-counters BEFORE AFTER --nic-host IP`: the NIC's word on the verdicts.
    pub nic: Option<&'a NicInput>,
}

/// `diagnose --format json`: the library's document, then the NIC's counters when given.
#[derive(Serialize)]
pub struct Output<'a> {
    #[serde(flatten)]
    pub doc: &'a DiagnoseDocument,
    /// The host's counters against the capture, as `stats --nic-counters` reconciles them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic_counters: Option<&'a Reconciliation>,
}

/// The NIC's retry-exceeded counters against the `retry_exhausted` verdicts of its host's
/// requesters: each such verdict's evidence gets `nic_counter` (`confirms`: the counter
/// rose; `contradicts`: it did not), and the text says it.
fn nic_word(doc: &mut DiagnoseDocument, nic: &NicInput, r: &Reconciliation) -> Vec<String> {
    let host = nic.host.to_string();
    let rows: Vec<_> = r.counters.iter().filter(|c| c.event_id == RETRY_EXCEEDED).collect();
    let delta: u64 = rows.iter().filter_map(|c| c.delta).fold(0, u64::saturating_add);
    let names: Vec<&str> = rows.iter().map(|c| c.counter).collect();
    let mut verdicts = 0u64;
    for v in doc.connections.iter_mut().flat_map(|c| c.verdicts.iter_mut()) {
        if v.verdict != VerdictKind::RetryExhausted
            || v.evidence.get("requester").and_then(|q| q.get("src")).and_then(|s| s.as_str())
                != Some(host.as_str())
        {
            continue;
        }
        verdicts += 1;
        if rows.is_empty() {
            continue;
        }
        let says = if delta > 0 { "confirms" } else { "contradicts" };
        v.evidence
            .insert("nic_counter".into(), json!({"counters": names, "delta": delta, "says": says}));
    }
    let mut lines = Vec::new();
    if rows.is_empty() {
        if verdicts > 0 {
            lines.push(format!(
                "NIC counters of {host}: no retry-exceeded counter in the snapshots (docs/nic-counters.md lists each driver's)"
            ));
        }
        return lines;
    }
    let what = match (verdicts, delta) {
        (0, 0) => "agree: no retry exhausted in the capture, none counted".to_string(),
        (0, d) => format!("{d} counted, none in the capture: another QP, or before or after the capture"),
        (n, 0) => format!("contradict the capture's {n} retry exhausted: the NIC counted none (the snapshots do not span the capture, or they are another port's)"),
        (n, d) if d >= n => format!("confirm the capture's {n} retry exhausted ({d} counted)"),
        (n, d) => format!("confirm {d} of the capture's {n} retry exhausted"),
    };
    lines.push(format!("NIC counters of {host}: {} +{delta}: {what}", names.join(", ")));
    lines
}

/// What [`diagnose`] gives: the document, the filter's selection as a line, and with
/// `--nic-counters` the reconciliation and the NIC's word on the verdicts as lines.
pub struct Diagnosed {
    pub doc: DiagnoseDocument,
    pub selected: Option<String>,
    pub nic: Option<Reconciliation>,
    pub nic_lines: Vec<String>,
}

/// The diagnosis of a capture (the pass, then the verdicts).
pub fn diagnose(run: &Run<'_>) -> Result<Diagnosed, InputError> {
    let mut d = Diagnosis::new(run.opts.clone());
    if let Some(n) = run.nic {
        if run.filter.is_some() || !run.input.window.is_all() {
            return Err(InputError(
                "--nic-counters reconciles the host's counters with the whole capture: not with \
                 -Y/--filter, --conn, -c or --frames"
                    .into(),
            ));
        }
        d.set_nic_host(n.host);
    }
    let mut selection = run.filter.map(crate::filter::Selection::new);
    let summary = if run.input.files().is_some() {
        // Several taps: one merged pass, each packet once, its losses between taps found.
        let names = crate::check::tap_names(run.input);
        crate::input::for_each_step(run.input, run.cfg, None, |step| match step {
            TapStep::Frame(fr) => {
                d.frame(Shard::ALL, fr)?;
                if let Some(sel) = &mut selection {
                    sel.observe(fr, |k| d.incarnation_of(k));
                }
                d.connection_fed()
            }
            TapStep::Copy(..) => None,
            TapStep::Drop(drop) => {
                d.tap_drop(drop, &names);
                None
            }
        })?
    } else {
        crate::threads::for_each_frame_on(
            run.threads,
            run.input,
            run.cfg,
            crate::threads::VerifyOn::ReaderWithPayloads,
            |fr| {
                if d.frame(Shard::ALL, fr).is_none() {
                    return;
                }
                if let Some(sel) = &mut selection {
                    sel.observe(fr, |k| d.incarnation_of(k));
                }
            },
        )?
    };
    warn_undecoded(&summary.undecoded);
    let done = match &selection {
        Some(sel) => d.finish_parts(&summary, run.window_ns, |c| sel.selects(c)),
        None => d.finish_parts(&summary, run.window_ns, |_| true),
    };
    let mut doc = done.document;
    // Several taps: each frame a verdict cites, with its file and number there.
    if let (Some(files), Some(taps)) = (run.input.files(), doc.taps.as_mut()) {
        let verdicts = doc.connections.iter().flat_map(|c| &c.verdicts);
        let setups = doc.setup.iter().flat_map(|s| &s.verdicts);
        let cited = verdicts.chain(setups).flat_map(|v| v.frames.iter().copied());
        crate::taps::cite(files, taps, cited)?;
    }
    let selected = selection.as_ref().map(|s| s.describe(doc.connections.len()));
    let (mut nic_rec, mut nic_lines) = (None, Vec::new());
    if let Some(n) = run.nic {
        let r = n
            .reconcile(&done.connections, done.not_listed, done.nic_host_bad_icrc)
            .map_err(|e| InputError(format!("--nic-counters: {e}")))?;
        nic_lines = nic_word(&mut doc, n, &r);
        nic_rec = Some(r);
    }
    Ok(Diagnosed { doc, selected, nic: nic_rec, nic_lines })
}

/// Runs the command: 1 when a connection failed (a verdict of severity failure), else 0.
pub fn run(run: &Run<'_>) -> Result<u8, InputError> {
    let Diagnosed { doc, selected, nic, nic_lines } = diagnose(run)?;
    let failed = doc
        .connections
        .iter()
        .flat_map(|c| &c.verdicts)
        .chain(doc.setup.iter().flat_map(|s| &s.verdicts))
        .any(|v| v.severity == Severity::Failure);
    let mut out = crate::output::stdout_buffered();
    let res = match run.format {
        Format::Json => serde_json::to_writer_pretty(
            &mut out,
            &Output { doc: &doc, nic_counters: nic.as_ref() },
        )
        .map_err(io::Error::from)
        .and_then(|()| writeln!(out)),
        Format::Text => {
            let mut t = text(run.input, &doc, selected.as_deref());
            for l in &nic_lines {
                let _ = writeln!(t, "\n{l}");
            }
            out.write_all(t.as_bytes())
        }
    };
    crate::output::written(res.and_then(|()| out.flush()))?;
    Ok(u8::from(failed))
}

/// Findings a `protocol_violation` or `bad_packets` verdict prints (JSON has 16).
const FINDINGS_SHOWN: usize = 3;

/// Healthy connections the text lists (the busiest); the others are counted.
const HEALTHY_SHOWN: usize = 5;

fn secs(ns: u64) -> String {
    format!("{}.{:06} s", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

fn tag(s: Severity) -> &'static str {
    match s {
        Severity::Failure => "FAILED  ",
        Severity::Degraded => "DEGRADED",
        Severity::Misconfigured => "CONFIG  ",
        Severity::Ok => "ok      ",
    }
}

/// A verdict's frames (over several taps each with its file and number there).
fn frames(v: &Verdict, taps: Option<&TapsReport>) -> String {
    v.frames.iter().map(|&n| crate::taps::frame_name(taps, n)).collect::<Vec<_>>().join(", ")
}

/// One verdict; its next step once per kind (`told`: the kinds already told).
fn verdict(
    t: &mut String,
    v: &Verdict,
    told: &mut Vec<roce_analysis::VerdictKind>,
    taps: Option<&TapsReport>,
) {
    let _ = writeln!(t, "    {} {}: {}", tag(v.severity), v.verdict.title(), v.summary);
    if v.severity == Severity::Ok {
        return;
    }
    if !v.frames.is_empty() {
        let _ = writeln!(t, "             frames {}", frames(v, taps));
    }
    if let Some(serde_json::Value::Array(found)) = v.evidence.get("findings") {
        for f in found.iter().take(FINDINGS_SHOWN) {
            let frames: Vec<String> = f["frames"]
                .as_array()
                .map(|a| a.iter().map(ToString::to_string).collect())
                .unwrap_or_default();
            let _ = writeln!(
                t,
                "             {} frames {}: {}",
                f["rule"].as_str().unwrap_or("?"),
                frames.join(","),
                f["message"].as_str().unwrap_or("")
            );
        }
    } else if !v.rules.is_empty() {
        let _ = writeln!(t, "             rules {} (check lists the findings)", v.rules.join(", "));
    }
    if !told.contains(&v.verdict) {
        told.push(v.verdict);
        let _ = writeln!(t, "             next: {}", v.next);
    }
}

/// The text report: the headline, the timeline, then each connection with its verdicts
/// (those with a problem first), the setups that failed, the warnings.
pub fn text(input: &Input, doc: &DiagnoseDocument, selected: Option<&str>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "Capture   {input}");
    let ib = match (doc.infiniband_frames, doc.infiniband_unmodelled) {
        (0, _) => String::new(),
        (n, 0) => format!(", {n} native InfiniBand"),
        (n, lids) => format!(", {n} native InfiniBand of which {lids} between LIDs, not judged"),
    };
    let copies = doc.taps.as_ref().map_or(String::new(), |r| {
        let copies: u64 = r.taps.iter().map(|t| t.counts.copies).sum();
        format!(" after {copies} copies at {} taps counted once", r.taps.len())
    });
    let _ = writeln!(
        t,
        "Frames    {}{copies} ({} RoCE{ib}), duration {}, {} connection(s), {} finding(s) (`check` lists them)",
        doc.frames,
        doc.roce_frames,
        secs(doc.duration_ns),
        doc.connections.len() as u64 + doc.connections_not_listed,
        doc.findings
    );
    if let Some(s) = selected {
        let _ = writeln!(t, "{s}");
    }
    let _ = writeln!(t, "\nVerdict   {}", doc.headline);
    if let Some(first) = &doc.timeline.first {
        let _ = writeln!(t, "\nTimeline");
        let _ = writeln!(
            t,
            "  first failure  {}: {} at frame {}",
            first.name,
            first.verdict.title(),
            first.frame
        );
        let n = doc.timeline.followed.len() as u64 + doc.timeline.followed_not_listed;
        if n > 0 {
            let _ = writeln!(
                t,
                "  followed by    {n} failure(s) within {} ({} sharing a host with it)",
                secs(doc.timeline.window_ns),
                doc.timeline.followed_same_host
            );
            for f in doc.timeline.followed.iter().take(10) {
                let _ = writeln!(
                    t,
                    "    +{:>10.3} ms  {}: {} at frame {}",
                    f.after_ns as f64 / 1e6,
                    f.name,
                    f.verdict.title(),
                    f.frame
                );
            }
            if n > 10 {
                let _ = writeln!(t, "    ({} more: --format json lists them)", n - 10);
            }
        }
        if doc.timeline.later > 0 {
            let _ =
                writeln!(t, "  later          {} failure(s) after the window", doc.timeline.later);
        }
    }
    // The connections with a problem first, then the healthy ones.
    let mut order: Vec<_> = doc.connections.iter().collect();
    order.sort_by_key(|c| std::cmp::Reverse(c.worst().map(|v| v.severity)));
    let _ = writeln!(t, "\nConnections ({})", doc.connections.len());
    if doc.connections_not_listed > 0 {
        let _ = writeln!(
            t,
            "  ({} more beyond --max-flows, counted but not diagnosed)",
            doc.connections_not_listed
        );
    }
    let mut told = Vec::new();
    // Healthy ones in a line each, the first HEALTHY_SHOWN: a screen that answers.
    let mut healthy = 0;
    for c in order {
        let ok = c.worst().is_none_or(|v| v.severity == Severity::Ok);
        if ok {
            healthy += 1;
            if healthy > HEALTHY_SHOWN {
                continue;
            }
        }
        let _ = writeln!(
            t,
            "  {}  {}  {} packets, frames {}..{}",
            c.name, c.transport, c.packets, c.first_frame, c.last_frame
        );
        for v in &c.verdicts {
            verdict(&mut t, v, &mut told, doc.taps.as_ref());
        }
    }
    if healthy > HEALTHY_SHOWN {
        let _ = writeln!(
            t,
            "  ({} more healthy connection(s): --format json lists them)",
            healthy - HEALTHY_SHOWN
        );
    }
    if !doc.setup.is_empty() {
        let _ = writeln!(t, "\nCM exchanges that opened no connection ({})", doc.setup.len());
        for s in &doc.setup {
            let _ = writeln!(t, "  {}  ({})", s.connection.a, s.outcome);
            for v in &s.verdicts {
                verdict(&mut t, v, &mut told, doc.taps.as_ref());
            }
        }
    }
    network_line(&mut t, doc);
    if let Some(taps) = &doc.taps {
        t.push('\n');
        crate::taps::write_text(&mut t, taps);
    }
    for w in &doc.warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    t
}

/// One line of the network audit over every direction: DSCP by class, VLAN and PCP, the
/// RoCE and IP versions, TTL (`--format json` has it per direction).
fn network_line(t: &mut String, doc: &DiagnoseDocument) {
    use std::collections::BTreeMap;
    let dirs: Vec<&serde_json::Value> = doc.connections.iter().flat_map(|c| &c.network).collect();
    if dirs.is_empty() {
        return;
    }
    let hist = |class: &str| {
        let mut h: BTreeMap<u64, u64> = BTreeMap::new();
        for d in &dirs {
            let m = &d[class];
            if let (Some(v), Some(n)) = (m["value"].as_u64(), m["packets"].as_u64()) {
                *h.entry(v).or_default() += n;
            }
            if let (Some(v), Some(n)) = (m["other_value"].as_u64(), m["other"].as_u64()) {
                *h.entry(v).or_default() += n;
            }
        }
        let mut v: Vec<(u64, u64)> = h.into_iter().collect();
        v.sort_by_key(|&(d, n)| (std::cmp::Reverse(n), d));
        v.iter().map(|(d, n)| format!("{d} ({n})")).collect::<Vec<_>>().join(", ")
    };
    let mut parts = Vec::new();
    for (class, name) in
        [("dscp_requests", "requests"), ("dscp_responses", "responses"), ("dscp_cnps", "CNPs")]
    {
        let h = hist(class);
        if !h.is_empty() {
            parts.push(format!("{name} at DSCP {h}"));
        }
    }
    let pcp = hist("pcp");
    let untagged: u64 =
        dirs.iter().filter_map(|d| d["untagged"].as_u64()).fold(0, u64::saturating_add);
    parts.push(if pcp.is_empty() {
        "untagged".to_string()
    } else {
        format!("PCP {pcp}, {untagged} untagged")
    });
    let ttl_min = dirs.iter().filter_map(|d| d["ttl"][0].as_u64()).min();
    let ttl_max = dirs.iter().filter_map(|d| d["ttl"][1].as_u64()).max();
    if let (Some(a), Some(b)) = (ttl_min, ttl_max) {
        parts.push(format!("TTL {a}..{b}"));
    }
    let v1 = dirs.iter().filter(|d| d["roce_version"] == 1).count();
    let v6 = dirs.iter().filter(|d| d["ip_version"] == 6).count();
    // Directions without an IP header and not RoCEv1: native InfiniBand (behind a GRH).
    let ib = dirs.iter().filter(|d| d["roce_version"] == 0 && d["ip_version"].is_null()).count();
    let ib = if ib > 0 { format!(", {ib} native InfiniBand") } else { String::new() };
    parts.push(format!(
        "{} direction(s): {} RoCEv2 over IPv4, {} over IPv6, {} RoCEv1{ib}",
        dirs.len(),
        dirs.iter().filter(|d| d["ip_version"] == 4).count(),
        v6,
        v1
    ));
    let _ = writeln!(t, "\nNetwork   {} (--format json: per direction)", parts.join("; "));
}
