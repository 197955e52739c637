//! `roce-inspect check`: the conformance findings of a capture, grouped by connection.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use roce_conformance::{Checker, ConnId, Finding, FrameInfo, Options, Report, Severity};
use roce_parser::Config;
use serde::Serialize;

use crate::input::{for_each_frame, InputError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Runs the checker over a capture; returns the report and the capture warnings.
pub fn check_file(
    path: &Path,
    cfg: &Config,
    opts: Options,
) -> Result<(Report, Vec<String>), InputError> {
    let mut checker = Checker::new(opts);
    let mut findings: Vec<Finding> = Vec::new();
    let summary = for_each_frame(path, cfg, |d| {
        let f = &d.frame;
        let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
        match &d.packet {
            Ok(p) => checker.feed(&info, p),
            Err(_) => checker.feed_undecoded(&info),
        }
        findings.append(&mut checker.take_findings());
    })?;
    let mut report = checker.finish();
    findings.append(&mut report.findings);
    for f in &mut findings {
        f.connection = f.connection.map(|c| report.canonical(c));
    }
    report.findings = findings;
    Ok((report, summary.warnings))
}

#[derive(Serialize)]
struct JsonOut<'a> {
    findings: &'a [Finding],
    summary: Summary,
    connections: &'a [roce_conformance::ConnectionReport],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    capture_warnings: &'a [String],
}

#[derive(Serialize)]
struct Summary {
    frames: u64,
    roce_frames: u64,
    errors: u64,
    warnings: u64,
    suppressed: u64,
}

/// Runs the command; returns the exit code (0: no error finding, 1: at least one).
pub fn run(path: &Path, format: Format, cfg: &Config, opts: Options) -> Result<u8, InputError> {
    let (report, warnings) = check_file(path, cfg, opts)?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let res = match format {
        Format::Json => {
            let j = JsonOut {
                findings: &report.findings,
                summary: Summary {
                    frames: report.frames,
                    roce_frames: report.roce_frames,
                    errors: report.errors,
                    warnings: report.warnings,
                    suppressed: report.suppressed,
                },
                connections: &report.connections,
                capture_warnings: &warnings,
            };
            serde_json::to_writer_pretty(&mut out, &j)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        Format::Text => out.write_all(text(path, &report, &warnings).as_bytes()),
    };
    if let Err(e) = res {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(InputError(format!("writing output: {e}")));
        }
    }
    Ok(u8::from(report.errors > 0))
}

fn frames(f: &[u64]) -> String {
    let v: Vec<String> = f.iter().map(u64::to_string).collect();
    v.join(",")
}

/// The text report: findings grouped by connection, then how complete each connection's
/// capture looked.
pub fn text(path: &Path, r: &Report, warnings: &[String]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{}: {} frames, {} RoCE; {} error(s), {} warning(s){}",
        path.display(),
        r.frames,
        r.roce_frames,
        r.errors,
        r.warnings,
        if r.suppressed > 0 {
            format!(" ({} more findings counted, not listed)", r.suppressed)
        } else {
            String::new()
        }
    );
    let mut by_conn: BTreeMap<Option<ConnId>, Vec<&Finding>> = BTreeMap::new();
    for f in &r.findings {
        by_conn.entry(f.connection).or_default().push(f);
    }
    for (conn, fs) in &by_conn {
        let _ = writeln!(t);
        match conn {
            Some(c) => {
                let _ = writeln!(t, "{c}");
            }
            None => {
                let _ = writeln!(t, "capture");
            }
        }
        for f in fs {
            let sev = match f.severity {
                Severity::Error => "error  ",
                Severity::Warning => "warning",
            };
            let psn = f.psn.map_or(String::new(), |p| format!(" PSN {p}"));
            let _ = writeln!(
                t,
                "  {sev} {:<16} frames {}{psn}: {}",
                f.rule,
                frames(&f.frames),
                f.message
            );
        }
    }
    if !r.connections.is_empty() {
        let _ = writeln!(t, "\nConnections");
        for c in &r.connections {
            let pmtu = match (c.pmtu, c.pmtu_source) {
                (Some(m), Some(s)) => format!(
                    "PMTU {m} ({})",
                    serde_json::to_string(&s).unwrap_or_default().trim_matches('"')
                ),
                _ => "PMTU unknown".to_string(),
            };
            let paired = c.paired_by.map_or("one direction".to_string(), |p| {
                format!(
                    "paired by {}",
                    serde_json::to_string(&p).unwrap_or_default().trim_matches('"')
                )
            });
            let _ = writeln!(
                t,
                "  {}  {}, {paired}, {pmtu}: {} packets, {} retransmitted, {} missing from the capture ({:.1}% complete), frames {}..{}",
                c.connection,
                c.transport,
                c.packets,
                c.retransmissions,
                c.missing_packets,
                c.completeness * 100.0,
                c.first_frame,
                c.last_frame
            );
            for why in &c.partly_judged {
                let _ = writeln!(t, "      partly judged: {why}");
            }
        }
    }
    for w in warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    t
}

/// `roce-inspect rules`: the catalog.
pub fn list_rules() -> String {
    let mut t = String::new();
    for r in roce_conformance::rules::ALL {
        let _ = writeln!(
            t,
            "{:<17} {:<8} {:<10} {}  [{}]",
            r.id,
            r.severity.as_str(),
            r.side.as_str(),
            r.description,
            r.source
        );
    }
    t
}
