//! `roce-inspect check`: the conformance findings of a capture, grouped by connection.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use roce_conformance::{Checker, ConnId, Finding, FrameInfo, Options, Report, Severity};
use roce_parser::Config;
use serde::Serialize;

use crate::gen::suite::{ExpectFile, ExpectOptions, Expected};
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

/// Reads an expect file.
pub fn read_expect(path: &Path) -> Result<ExpectFile, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| InputError(format!("{}: not an expect file: {e}", path.display())))
}

/// The findings of a report as an expect file (for review, then commit).
pub fn to_expect(report: &Report, options: ExpectOptions, description: String) -> ExpectFile {
    let mut findings: Vec<Expected> = report
        .findings
        .iter()
        .map(|f| Expected { rule: f.rule.to_string(), frames: f.frames.clone() })
        .collect();
    findings.sort();
    ExpectFile { description, options, findings }
}

/// Compares actual findings with expected ones; `None` when they agree, else a readable diff.
pub fn diff(expected: &ExpectFile, report: &Report) -> Option<String> {
    let mut want: Vec<&Expected> = expected.findings.iter().collect();
    let mut unexpected: Vec<&Finding> = Vec::new();
    for f in &report.findings {
        match want.iter().position(|e| e.rule == f.rule && e.frames == f.frames) {
            Some(i) => {
                want.swap_remove(i);
            }
            None => unexpected.push(f),
        }
    }
    if want.is_empty() && unexpected.is_empty() {
        return None;
    }
    let mut t = String::new();
    let _ = writeln!(
        t,
        "findings differ from the expected ones ({} expected, {} found):",
        expected.findings.len(),
        report.findings.len()
    );
    let mut missing: Vec<&&Expected> = want.iter().collect();
    missing.sort();
    for e in missing {
        let _ = writeln!(t, "  - missing     {:<17} frames {}", e.rule, frames(&e.frames));
    }
    for f in unexpected {
        let _ = writeln!(
            t,
            "  + unexpected  {:<17} frames {}: {}",
            f.rule,
            frames(&f.frames),
            f.message
        );
    }
    Some(t)
}

/// `check --expect FILE`: exit 0 when the findings are exactly the expected ones, 1 with a
/// diff otherwise.
pub fn run_expect(
    path: &Path,
    expect_path: &Path,
    cfg: &Config,
    mut opts: Options,
) -> Result<u8, InputError> {
    let expected = read_expect(expect_path)?;
    opts.assume_complete |= expected.options.assume_complete;
    if opts.pmtu.is_none() {
        opts.pmtu = expected.options.pmtu;
    }
    let (report, warnings) = check_file(path, cfg, opts)?;
    for w in warnings {
        eprintln!("roce-inspect: warning: {w}");
    }
    match diff(&expected, &report) {
        None => {
            println!(
                "{}: {} findings, as expected in {}",
                path.display(),
                report.findings.len(),
                expect_path.display()
            );
            Ok(0)
        }
        Some(d) => {
            print!("{}: {d}", path.display());
            Ok(1)
        }
    }
}

/// `check --write-expect FILE`: records the findings for review.
pub fn run_write_expect(
    path: &Path,
    out: &Path,
    cfg: &Config,
    opts: Options,
) -> Result<u8, InputError> {
    let options = ExpectOptions { assume_complete: opts.assume_complete, pmtu: opts.pmtu };
    let (report, _) = check_file(path, cfg, opts)?;
    let e = to_expect(&report, options, format!("reviewed findings of {}", path.display()));
    let text = serde_json::to_string_pretty(&e).map_err(|e| InputError(e.to_string()))?;
    std::fs::write(out, text + "\n").map_err(|e| InputError(format!("{}: {e}", out.display())))?;
    println!(
        "{}: {} findings written to {}: review them, then commit",
        path.display(),
        e.findings.len(),
        out.display()
    );
    Ok(0)
}

/// `gen suite`: every scenario's capture and expect file into `dir`.
pub fn write_suite(dir: &Path) -> Result<(), InputError> {
    std::fs::create_dir_all(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    for s in crate::gen::suite::SUITE {
        let (trace, expect) = s.generate();
        let pcap = dir.join(format!("{}.pcap", s.name));
        let file = std::fs::File::create(&pcap)
            .map_err(|e| InputError(format!("{}: {e}", pcap.display())))?;
        trace
            .write_pcap(std::io::BufWriter::new(file))
            .map_err(|e| InputError(format!("{}: {e}", pcap.display())))?;
        let text = serde_json::to_string_pretty(&expect).map_err(|e| InputError(e.to_string()))?;
        let ej = dir.join(format!("{}.expect.json", s.name));
        std::fs::write(&ej, text + "\n")
            .map_err(|e| InputError(format!("{}: {e}", ej.display())))?;
    }
    Ok(())
}
