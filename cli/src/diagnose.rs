//! `roce-inspect diagnose`: the verdicts of roce-analysis's [`Diagnosis`] (what went wrong,
//! where it started, the proof), one screen of text or the v1 JSON document
//! (docs/diagnose.md, docs/schema/diagnose.schema.json).

use std::fmt::Write as _;
use std::io::{self, Write};

use roce_analysis::{DiagnoseDocument, Diagnosis, Severity, Verdict};
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
}

/// The diagnosis of a capture (the pass, then the verdicts).
pub fn diagnose(run: &Run<'_>) -> Result<(DiagnoseDocument, Option<String>), InputError> {
    let mut d = Diagnosis::new(run.opts.clone());
    let mut selection = run.filter.map(crate::filter::Selection::new);
    let summary = crate::threads::for_each_frame_on(run.threads, run.input, run.cfg, |fr| {
        if d.frame(Shard::ALL, fr).is_none() {
            return;
        }
        if let Some(sel) = &mut selection {
            sel.observe(fr, |k| d.incarnation_of(k));
        }
    })?;
    warn_undecoded(&summary.undecoded);
    let doc = match &selection {
        Some(sel) => d.finish_selected(&summary, run.window_ns, |c| sel.selects(c)),
        None => d.finish(&summary, run.window_ns),
    };
    let selected = selection.as_ref().map(|s| s.describe(doc.connections.len()));
    Ok((doc, selected))
}

/// Runs the command: 1 when a connection failed (a verdict of severity failure), else 0.
pub fn run(run: &Run<'_>) -> Result<u8, InputError> {
    let (doc, selected) = diagnose(run)?;
    let failed = doc
        .connections
        .iter()
        .flat_map(|c| &c.verdicts)
        .chain(doc.setup.iter().flat_map(|s| &s.verdicts))
        .any(|v| v.severity == Severity::Failure);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let res = match run.format {
        Format::Json => serde_json::to_writer_pretty(&mut out, &doc)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out)),
        Format::Text => out.write_all(text(run.input, &doc, selected.as_deref()).as_bytes()),
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

fn frames(v: &Verdict) -> String {
    v.frames.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// One verdict; its next step once per kind (`told`: the kinds already told).
fn verdict(t: &mut String, v: &Verdict, told: &mut Vec<roce_analysis::VerdictKind>) {
    let _ = writeln!(t, "    {} {}: {}", tag(v.severity), v.verdict.title(), v.summary);
    if v.severity == Severity::Ok {
        return;
    }
    if !v.frames.is_empty() {
        let _ = writeln!(t, "             frames {}", frames(v));
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
    let _ = writeln!(
        t,
        "Frames    {} ({} RoCE), duration {}, {} connection(s), {} finding(s) (`check` lists them)",
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
            verdict(&mut t, v, &mut told);
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
                verdict(&mut t, v, &mut told);
            }
        }
    }
    for w in &doc.warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    t
}
