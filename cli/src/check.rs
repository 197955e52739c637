//! `roce-inspect check`: the conformance findings of a capture, grouped by connection.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use roce_conformance::{
    Checker, ConnId, Finding, FrameInfo, Options, Report, RuleCount, Severity, Shard,
};
use roce_parser::Config;
use serde::Serialize;

use crate::filter::{DisplayFilter, Selection};
// The expect file (crate::expect), here where `check` has always had it (fuzz/, tests).
use crate::expect::ExpectOptions;
pub use crate::expect::{
    diff, parse_expect, parse_expect_noting, read_expect, to_expect, valid_pmtu, ExpectError,
    EXPECT_MAX_BYTES, PMTUS,
};
use crate::input::{for_each_step, warn_undecoded, Input, InputError, ReadSummary, Window};
use crate::outfile::{Dash, OutFile};
use crate::output;
use crate::style::Paint;
use crate::threads::Threads;
use roce_analysis::TapStep;

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
    check_file_summary(&path.into(), cfg, opts, Shard::ALL, Threads::ONE)
        .map(|(r, s)| (r, s.warnings))
}

/// [`check_file`] over the host pairs of `shard` (`--shard K/N`), with everything the reading
/// summed up (warnings, undecoded frames); split by host pair over `threads` checkers unless
/// it is one ([`check_file_selected`]).
pub fn check_file_summary(
    input: &Input,
    cfg: &Config,
    opts: Options,
    shard: Shard,
    threads: Threads,
) -> Result<(Report, ReadSummary), InputError> {
    check_file_selected(input, cfg, opts, shard, threads, None)
}

/// [`check_file_summary`] that also tells `selection` (`-Y`, `--conn`) each frame, after
/// the checker took it (crate::filter::Selection: the report is not cut here).
///
/// With more than one thread, on a file, the capture is split by host pair over `threads`
/// checkers (crate::threads::check_sharded) when nothing needs every frame in order (a
/// filter does); if the split cannot give one run's report (a cap reached across host
/// pairs), or it does not apply, one checker on this thread reads the capture.
pub fn check_file_selected(
    input: &Input,
    cfg: &Config,
    opts: Options,
    shard: Shard,
    threads: Threads,
    selection: Option<&mut Selection<'_>>,
) -> Result<(Report, ReadSummary), InputError> {
    if splits(input, &opts, threads) && selection.is_none() {
        if let Some(done) = crate::threads::check_sharded(input, cfg, &opts, shard, threads)? {
            return Ok(done);
        }
        // Nothing was written: check the file again on one thread (docs/threads.md).
    }
    check_one(input, cfg, opts, shard, selection)
}

/// Whether `check` splits the capture by host pair over `threads` workers: a file (read
/// twice if the split has to give up), more than one thread, and options whose rules all
/// stay within a host pair.
fn splits(input: &Input, opts: &Options, threads: Threads) -> bool {
    !threads.is_one()
        && !input.is_stream()
        && input.files().is_none()
        && roce_conformance::can_split(opts)
}

/// [`check_file_selected`] with one checker on this thread (reading ahead on another never
/// made `check` faster: BENCHMARKS.md, "Threads").
fn check_one(
    input: &Input,
    cfg: &Config,
    opts: Options,
    shard: Shard,
    mut selection: Option<&mut Selection<'_>>,
) -> Result<(Report, ReadSummary), InputError> {
    let mut checker = Checker::new(opts);
    let names = tap_names(input);
    let merged = input.files().is_some();
    let summary = for_each_step(input, cfg, None, |step| {
        let d = match step {
            TapStep::Frame(d) => d,
            TapStep::Copy(..) => return None,
            TapStep::Drop(drop) => {
                if drop.in_shard(shard) {
                    drop.report_to(&mut checker, &names);
                }
                return None;
            }
        };
        let f = &d.frame;
        if !shard.owns(d.packet.as_ref().ok()) {
            checker.tick(f.ts_ns);
            return None;
        }
        let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
        match &d.packet {
            Ok(p) => checker.feed(&info, p),
            Err(_) => checker.feed_undecoded(&info),
        }
        if let Some(sel) = selection.as_deref_mut() {
            sel.observe(d, |k| checker.incarnation_of(k));
        }
        connection_fed(merged, &checker)
    })?;
    Ok((checker.finish(), summary.of_shard(shard)))
}

/// The files of a merged input, as the findings name them.
pub(crate) fn tap_names(input: &Input) -> Vec<String> {
    input.files().unwrap_or_default().iter().map(|p| p.display().to_string()).collect()
}

/// For several taps: the connection the checker put the frame just fed in (a drop of that
/// packet found later names it); nothing to look up for one capture.
fn connection_fed<X: Default>(merged: bool, checker: &Checker<X>) -> Option<ConnId> {
    if merged {
        checker.connection_fed()
    } else {
        None
    }
}

/// The members of `check --format json` only the command line has, after the library's
/// (roce_analysis::CheckDocument; docs/json.md, docs/schema/check.schema.json).
#[derive(Serialize)]
struct CheckExtra<'a> {
    /// `-c`, `--frames`: the frames read (absent: all).
    #[serde(skip_serializing_if = "Window::is_all")]
    window: &'a Window,
    /// `-Y`, `--conn`: what the filter selected (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<crate::filter::SelectionJson<'a>>,
}

/// What `check` writes besides the findings themselves: the format, the text view, the
/// annotated copy.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    pub format: Format,
    pub view: TextView,
    /// `--annotate FILE`.
    pub annotate: Option<&'a Path>,
    /// `--shard K/N`: the host pairs judged.
    pub shard: Shard,
    /// `--threads N`: checkers split by host pair (the live view, which prints findings as
    /// they are proven, and a filter use one).
    pub threads: Threads,
    /// `-Y` / `--conn`: only the connections with a frame that matches (crate::filter).
    pub filter: Option<&'a DisplayFilter>,
}

/// Runs the command; returns the exit code (0: no error finding, 1: at least one).
pub fn run(input: &Input, cfg: &Config, opts: Options, how: &Output<'_>) -> Result<u8, InputError> {
    let (format, annotate, shard) = (how.format, how.annotate, how.shard);
    if how.view.live && format == Format::Text && annotate.is_none() {
        return run_live(input, cfg, opts, how);
    }
    let annotate = match annotate {
        Some(out) => Some(annotate_refuses(input, out)?),
        None => None,
    };
    let mut selection = how.filter.map(Selection::new);
    let (mut report, mut summary) =
        check_file_selected(input, cfg, opts, shard, how.threads, selection.as_mut())?;
    if let Some(sel) = &selection {
        sel.retain(&mut report);
    }
    // Several taps: each cited frame's file and number there (text and `taps.frames_cited`).
    if let (Some(files), Some(taps)) = (input.files(), summary.taps.as_mut()) {
        crate::taps::cite(files, taps, report.findings.iter().flat_map(|f| f.frames.clone()))?;
    }
    // `--annotate -`: the capture is standard output, the report is not printed.
    let report_to_stdout = annotate.as_ref().is_none_or(|(_, out)| !out.is_stdout());
    if let Some((file, out)) = annotate {
        write_annotated(file, out, &report)?;
    }
    if !report_to_stdout {
        warn_undecoded(&summary.undecoded);
        for w in &summary.warnings {
            output::warning(w);
        }
        return Ok(u8::from(report.errors > 0));
    }
    warn_undecoded(&summary.undecoded);
    let mut out = crate::output::stdout_buffered();
    let res = match format {
        Format::Json => {
            let extra = CheckExtra {
                window: &input.window,
                selection: selection.as_ref().map(|s| s.json(report.connections.len())),
            };
            let j = roce_analysis::CheckDocument::new(&report, &summary, extra);
            serde_json::to_writer_pretty(&mut out, &j)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        Format::Text => {
            let mut t = text(input, &report, &summary.warnings, &how.view, summary.taps.as_ref());
            if let (Some(taps), false) = (&summary.taps, how.view.quiet) {
                t.push('\n');
                crate::taps::write_text(&mut t, taps);
            }
            if let Some(sel) = &selection {
                let _ = writeln!(t, "\n{}", sel.describe(report.connections.len()));
            }
            out.write_all(t.as_bytes())
        }
    };
    output::written(res.and_then(|()| out.flush()))?;
    Ok(u8::from(report.errors > 0))
}

/// `--annotate OUT` needs a file to read again (returned), and is opened before the check
/// runs (crate::outfile: never the capture, completed only when whole).
fn annotate_refuses<'a>(input: &'a Input, out: &Path) -> Result<(&'a Path, OutFile), InputError> {
    let input = input.twice("--annotate")?;
    Ok((input, OutFile::create("--annotate", out, &[input], Dash::Stdout)?))
}

/// `check --annotate OUT`: the capture again as pcapng, each finding a comment on the frames
/// it cites (crate::annotate); a line on stderr says what was written.
fn write_annotated(input: &Path, out: OutFile, report: &Report) -> Result<(), InputError> {
    let comments = crate::annotate::comments_of(&report.findings);
    let shown = out.path().to_path_buf();
    let w = crate::annotate::annotate_file(input, out, &comments).map_err(InputError)?;
    let simple = if w.simple_not_annotated > 0 {
        format!(
            " ({} cited frames are simple packet blocks, which hold no comment)",
            w.simple_not_annotated
        )
    } else {
        String::new()
    };
    output::note(format_args!(
        "annotated {}: {} frames, {} comments on {} frames{simple}",
        shown_name(&shown),
        w.frames,
        w.comments,
        w.annotated
    ));
    Ok(())
}

/// An output's name in a message: `-` is standard output.
pub fn shown_name(p: &Path) -> String {
    if p == Path::new("-") {
        "standard output".to_string()
    } else {
        p.display().to_string()
    }
}

/// Frame numbers as a list: `4,6,9`.
pub(crate) fn frames(f: &[u64]) -> String {
    let v: Vec<String> = f.iter().map(u64::to_string).collect();
    v.join(",")
}

/// How the text report is shown (`check`'s display options; the JSON report is always whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextView {
    /// Findings listed per rule (the first ones, in capture order); the rest are counted.
    /// `None`: all.
    pub max_per_rule: Option<usize>,
    /// The summary only: the first line and the per-rule counts.
    pub quiet: bool,
    pub paint: Paint,
    /// Findings are printed as they are proven (`-l`, or the capture read from stdin) and
    /// flushed one by one; the report at the end leaves them out.
    pub live: bool,
}

/// `--max-per-rule`'s default: enough to see how a rule fires, few enough that one rule
/// firing on every frame (rdma-nccl2.pcap: 489 PKT-LENGTH) does not bury the others.
pub const DEFAULT_MAX_PER_RULE: usize = 10;

impl Default for TextView {
    fn default() -> Self {
        TextView {
            max_per_rule: Some(DEFAULT_MAX_PER_RULE),
            quiet: false,
            paint: Paint::plain(),
            live: false,
        }
    }
}

/// The severity column of a rule's summary line: what it was reported as.
fn severity_of(c: &RuleCount) -> (Severity, &'static str) {
    match (c.errors, c.warnings) {
        (_, 0) => (Severity::Error, "error"),
        (0, _) => (Severity::Warning, "warning"),
        _ => (Severity::Error, "error+warning"),
    }
}

/// The per-rule summary: one line per rule that fired, in catalog order.
fn rule_summary(t: &mut String, r: &Report, paint: Paint) {
    if r.by_rule.is_empty() {
        return;
    }
    let _ = writeln!(t, "\n{}", paint.heading("Findings by rule"));
    for c in &r.by_rule {
        let (sev, name) = severity_of(c);
        let split = if c.errors > 0 && c.warnings > 0 {
            format!(" ({} errors, {} warnings)", c.errors, c.warnings)
        } else {
            String::new()
        };
        let _ = writeln!(
            t,
            "  {:<17} {} {:<18} {:>6}{split}",
            c.rule,
            paint.severity(sev, format!("{name:<7}")),
            c.side.as_str(),
            c.total()
        );
    }
}

/// The findings listed in detail: the first `max` of each rule.
fn listed(r: &Report, max: Option<usize>) -> Vec<&Finding> {
    let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
    r.findings
        .iter()
        .filter(|f| {
            let n = shown.entry(f.rule).or_default();
            *n += 1;
            max.is_none_or(|m| *n <= m)
        })
        .collect()
}

/// One finding as the text report lists it: `  error   RULE  frames F PSN P: message`
/// (over several taps each frame with its file and number there, when cited).
fn finding_line(
    t: &mut String,
    f: &Finding,
    paint: Paint,
    taps: Option<&roce_analysis::TapsReport>,
) {
    let sev = match f.severity {
        Severity::Error => "error  ",
        Severity::Warning => "warning",
    };
    let psn = f.psn.map_or(String::new(), |p| format!(" PSN {}", p.value()));
    let _ = writeln!(
        t,
        "  {} {:<16} frames {}{psn}: {}",
        paint.severity(f.severity, sev),
        f.rule,
        match taps {
            Some(_) => {
                let v: Vec<String> =
                    f.frames.iter().map(|&n| crate::taps::frame_name(taps, n)).collect();
                v.join(",")
            }
            None => frames(&f.frames),
        },
        f.message
    );
}

/// `check` live: each finding printed and flushed when the checker proves it, with its
/// connection (as named so far), at most `max_per_rule` of each rule.
struct Live<W: Write> {
    out: W,
    paint: Paint,
    max: Option<usize>,
    printed: BTreeMap<&'static str, usize>,
    line: String,
    failed: Option<io::Error>,
}

impl<W: Write> Live<W> {
    fn findings(&mut self, fs: &[Finding]) {
        for f in fs {
            let n = self.printed.entry(f.rule).or_default();
            if self.failed.is_some() || self.max.is_some_and(|m| *n >= m) {
                continue;
            }
            *n += 1;
            self.line.clear();
            finding_line(&mut self.line, f, self.paint, None);
            let conn = f.connection.map_or("capture".to_string(), |c| c.to_string());
            let _ = writeln!(self.line, "      on {conn}");
            let res = self.out.write_all(self.line.as_bytes()).and_then(|()| self.out.flush());
            if let Err(e) = res {
                self.failed = Some(e);
            }
        }
    }

    /// The line counting what was not printed.
    fn not_printed(&self, r: &Report) -> String {
        let more: Vec<String> = r
            .by_rule
            .iter()
            .filter_map(|c| {
                let n = self.printed.get(c.rule).copied().unwrap_or(0) as u64;
                (c.total() > n).then(|| format!("{} more {}", c.total() - n, c.rule))
            })
            .collect();
        if more.is_empty() {
            return String::new();
        }
        format!(
            "  (not printed: {}; --max-per-rule 0 prints every finding kept)\n",
            more.join(", ")
        )
    }
}

/// `check -l` with a filter: a finding is printed when it is proven if its connection is
/// already selected; the others wait here (no more than the report would hold) until the
/// end, when the connections selected later are known. Without a filter, nothing waits.
#[derive(Default)]
struct Held<'f> {
    selection: Option<Selection<'f>>,
    /// Findings of connections not selected (yet).
    waiting: Vec<Finding>,
    /// Findings printed live (the report at the end counts them).
    printed: Vec<Finding>,
}

impl Held<'_> {
    /// The findings to print now.
    fn now(&mut self, taken: Vec<Finding>) -> Vec<Finding> {
        let Some(sel) = &self.selection else { return taken };
        let (now, wait): (Vec<Finding>, Vec<Finding>) =
            taken.into_iter().partition(|f| sel.keeps(f));
        self.waiting.extend(wait);
        self.printed.extend(now.iter().cloned());
        now
    }

    /// At the end: the waiting findings whose connection was selected after all join the
    /// report's own (printed with them), the others are dropped.
    fn finish(&mut self, report: &mut Report) {
        let Some(sel) = &self.selection else { return };
        let mut late: Vec<Finding> = std::mem::take(&mut self.waiting);
        late.retain(|f| sel.keeps(f));
        late.append(&mut report.findings);
        report.findings = late.into_iter().filter(|f| sel.keeps(f)).collect();
    }

    /// Every finding of the run, printed live or at the end (for the counts).
    fn whole(&mut self, at_end: Vec<Finding>) -> Vec<Finding> {
        if self.selection.is_none() {
            return at_end;
        }
        let mut all = std::mem::take(&mut self.printed);
        all.extend(at_end);
        all
    }
}

/// `check -l` (or the capture on stdin): findings as they are proven, then the report
/// without them. Returns the exit code.
fn run_live(
    input: &Input,
    cfg: &Config,
    opts: Options,
    how: &Output<'_>,
) -> Result<u8, InputError> {
    let stdout = io::stdout();
    let mut live = Live {
        out: stdout.lock(),
        paint: how.view.paint,
        max: if how.view.quiet { Some(0) } else { how.view.max_per_rule },
        printed: BTreeMap::new(),
        line: String::new(),
        failed: None,
    };
    let mut checker = Checker::new(opts);
    let mut held = Held { selection: how.filter.map(Selection::new), ..Held::default() };
    let names = tap_names(input);
    let merged = input.files().is_some();
    let summary = for_each_step(input, cfg, None, |step| {
        let d = match step {
            TapStep::Frame(d) => d,
            TapStep::Copy(..) => return None,
            TapStep::Drop(drop) => {
                if drop.in_shard(how.shard) {
                    drop.report_to(&mut checker, &names);
                    live.findings(&held.now(checker.take_findings()));
                }
                return None;
            }
        };
        let f = &d.frame;
        if !how.shard.owns(d.packet.as_ref().ok()) {
            checker.tick(f.ts_ns);
            return None;
        }
        let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
        match &d.packet {
            Ok(p) => checker.feed(&info, p),
            Err(_) => checker.feed_undecoded(&info),
        }
        if let Some(sel) = &mut held.selection {
            sel.observe(d, |k| checker.incarnation_of(k));
        }
        live.findings(&held.now(checker.take_findings()));
        connection_fed(merged, &checker)
    })?
    .of_shard(how.shard);
    let mut report = checker.finish();
    held.finish(&mut report);
    live.findings(&report.findings);
    report.findings = held.whole(std::mem::take(&mut report.findings));
    if let Some(sel) = &held.selection {
        sel.retain(&mut report);
    }
    warn_undecoded(&summary.undecoded);
    let mut end = if how.view.quiet { String::new() } else { live.not_printed(&report) };
    if !end.is_empty() || live.printed.values().any(|&n| n > 0) {
        end.push('\n');
    }
    end.push_str(&text(input, &report, &summary.warnings, &how.view, summary.taps.as_ref()));
    if let (Some(taps), false) = (&summary.taps, how.view.quiet) {
        end.push('\n');
        crate::taps::write_text(&mut end, taps);
    }
    if let Some(sel) = &held.selection {
        let _ = writeln!(end, "\n{}", sel.describe(report.connections.len()));
    }
    let Live { mut out, failed, .. } = live;
    let res = match failed {
        Some(e) => Err(e),
        None => out.write_all(end.as_bytes()).and_then(|()| out.flush()),
    };
    output::written(res)?;
    Ok(u8::from(report.errors > 0))
}

/// The text report: the per-rule summary, findings grouped by connection (at most
/// `view.max_per_rule` of each rule), then how complete each connection's capture looked.
pub fn text(
    input: &Input,
    r: &Report,
    warnings: &[String],
    view: &TextView,
    taps: Option<&roce_analysis::TapsReport>,
) -> String {
    let paint = view.paint;
    let mut t = String::new();
    let errors = format!("{} error(s)", r.errors);
    let warns = format!("{} warning(s)", r.warnings);
    let ib = match (r.ib_frames, r.ib_unmodelled) {
        (0, _) => String::new(),
        (n, 0) => format!(", {n} native InfiniBand"),
        (n, lids) => format!(", {n} native InfiniBand ({lids} between LIDs, not judged)"),
    };
    let _ = writeln!(
        t,
        "{}: {} frames, {} RoCE{ib}; {}, {}{}",
        input,
        r.frames,
        r.roce_frames,
        if r.errors > 0 { paint.severity(Severity::Error, errors) } else { errors },
        if r.warnings > 0 { paint.severity(Severity::Warning, warns) } else { warns },
        if r.suppressed > 0 {
            format!(" ({} more findings counted, not listed)", r.suppressed)
        } else {
            String::new()
        }
    );
    rule_summary(&mut t, r, paint);
    if view.quiet {
        return t;
    }
    let shown = if view.live { Vec::new() } else { listed(r, view.max_per_rule) };
    let mut by_conn: BTreeMap<Option<ConnId>, Vec<&Finding>> = BTreeMap::new();
    for f in &shown {
        by_conn.entry(f.connection).or_default().push(f);
    }
    for (conn, fs) in &by_conn {
        let _ = writeln!(t);
        match conn {
            Some(c) => {
                let _ = writeln!(t, "{}", paint.heading(c));
            }
            None => {
                let _ = writeln!(t, "{}", paint.heading("capture"));
            }
        }
        for f in fs {
            finding_line(&mut t, f, paint, taps);
        }
    }
    let mut shown_of: BTreeMap<&str, u64> = BTreeMap::new();
    for f in &shown {
        *shown_of.entry(f.rule).or_default() += 1;
    }
    let more: Vec<String> = r
        .by_rule
        .iter()
        .filter_map(|c| {
            let n = shown_of.get(c.rule).copied().unwrap_or(0);
            (c.total() > n).then(|| format!("{} more {}", c.total() - n, c.rule))
        })
        .collect();
    if !more.is_empty() && !view.live {
        let _ = writeln!(
            t,
            "\n  (not listed: {}; --max-per-rule 0 lists every finding kept, --format json \
             has them all)",
            more.join(", ")
        );
    }
    if !r.connections.is_empty() {
        let _ = writeln!(t, "\nConnections");
        if r.connections_not_listed > 0 {
            let _ = writeln!(
                t,
                "  ({} more, with fewer packets, counted but not listed)",
                r.connections_not_listed
            );
        }
        let connected = |c: &&roce_conformance::ConnectionReport| {
            matches!(c.info.transport, "RC" | "UC" | "XRC" | "unknown")
        };
        let others = r.connections.iter().filter(|c| !connected(c)).count();
        if others > 0 {
            let _ =
                writeln!(t, "  ({others} UD flows, CM on QP1 among them, listed in --format json)");
        }
        for c in r.connections.iter().filter(connected) {
            let i = &c.info;
            let pmtu = match (i.pmtu, i.pmtu_source) {
                (Some(m), Some(s)) => format!("PMTU {m} ({})", s.as_str()),
                _ => "PMTU unknown".to_string(),
            };
            let paired = i
                .paired_by
                .map_or("one direction".to_string(), |p| format!("paired by {}", p.as_str()));
            let _ = writeln!(
                t,
                "  {}  {}, {paired}, {pmtu}: {} packets, {} retransmitted, {} missing from the capture ({:.1}% complete), frames {}..{}",
                i.connection,
                i.transport,
                i.packets,
                c.retransmissions,
                c.missing_packets,
                c.completeness * 100.0,
                i.first_frame,
                i.last_frame
            );
            if !i.began.why.is_empty() {
                let _ = writeln!(t, "      began: {}", i.began.why);
            }
            if i.ended.how != roce_conformance::EndedBy::CaptureEnd {
                let _ = writeln!(t, "      ended: {}", i.ended.why);
            }
            for why in &c.partly_judged {
                let _ = writeln!(t, "      partly judged: {why}");
            }
        }
    }
    for w in warnings {
        let _ = writeln!(t, "\nwarning: {w}");
    }
    if let Some(line) = input.window.describe() {
        let _ = writeln!(t, "\n{line}");
    }
    t
}

/// `roce-inspect rules --format json`: `{"schema": "roce-inspect/rules/v1", "rules": [{id,
/// severity, side, source, description}]}` in catalog order (docs/json.md).
pub fn list_rules_json() -> String {
    #[derive(Serialize)]
    struct Rules {
        schema: &'static str,
        rules: &'static [roce_conformance::Rule],
    }
    let doc = Rules {
        schema: roce_conformance::internal::json::SCHEMA_RULES,
        rules: roce_conformance::RULES,
    };
    serde_json::to_string_pretty(&doc).map_or_else(|e| format!("{e}\n"), |j| j + "\n")
}

/// `roce-inspect rules`: the catalog.
pub fn list_rules() -> String {
    let mut t = String::new();
    for r in roce_conformance::RULES {
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

/// `check --expect FILE`: exit 0 when the findings are exactly the expected ones, 1 with a
/// diff otherwise.
pub fn run_expect(
    path: &Path,
    expect_path: &Path,
    cfg: &Config,
    mut opts: Options,
) -> Result<u8, InputError> {
    let expected = read_expect(expect_path)?;
    expected.options.apply(&mut opts);
    // Capture warnings were written to stderr as they were found.
    let (report, _) = check_file(path, cfg, opts)?;
    let (text, code) = match diff(&expected, &report) {
        None => (
            format!(
                "{}: {} findings, as expected in {}\n",
                path.display(),
                report.findings.len(),
                expect_path.display()
            ),
            0,
        ),
        Some(d) => (format!("{}: {d}", path.display()), 1),
    };
    output::stdout(text.as_bytes())?;
    Ok(code)
}

/// The first bytes of a capture file: pcap (both byte orders, micro- and nanosecond),
/// pcapng, gzip (a compressed capture).
const CAPTURE_MAGICS: [&[u8]; 6] = [
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\xc3\xd4",
    b"\x4d\x3c\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
    b"\x0a\x0d\x0d\x0a",
    b"\x1f\x8b",
];

/// `--write-expect OUT` does not write over the capture it reads, nor over any file that
/// starts like a capture.
fn refuse_overwrite(input: &Path, out: &Path) -> Result<(), InputError> {
    use std::io::Read as _;
    if input != Path::new("-") && crate::outfile::same_file(input, out) {
        return Err(InputError(format!(
            "--write-expect {}: that is the capture being checked; not overwriting it",
            out.display()
        )));
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(out).and_then(|f| f.take(4).read(&mut head)).unwrap_or(0);
    if let Some(head) = head.get(..n) {
        if n > 0 && CAPTURE_MAGICS.iter().any(|m| head.starts_with(m)) {
            return Err(InputError(format!(
                "--write-expect {}: the file is a capture (pcap, pcapng or gzip); not \
                 overwriting it",
                out.display()
            )));
        }
    }
    Ok(())
}

/// `check --write-expect FILE`: records the findings for review.
pub fn run_write_expect(
    path: &Path,
    out: &Path,
    cfg: &Config,
    opts: Options,
) -> Result<u8, InputError> {
    refuse_overwrite(path, out)?;
    let file = OutFile::create("--write-expect", out, &[path], Dash::Stdout)?;
    let options = ExpectOptions::of(&opts);
    let (report, _) = check_file(path, cfg, opts)?;
    // The file name only: the expect file is committed, the folder is the author's.
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let e = to_expect(&report, options, format!("reviewed findings of {name}"));
    let text = serde_json::to_string_pretty(&e).map_err(|e| InputError(e.to_string()))?;
    let to_stdout = file.is_stdout();
    write_whole(file, (text + "\n").as_bytes())?;
    let line = format!(
        "{}: {} findings written to {}: review them, then commit\n",
        path.display(),
        e.findings.len(),
        shown_name(out)
    );
    // `--write-expect -`: the file is standard output, the line goes to stderr.
    if to_stdout {
        output::note(line.trim_end());
    } else {
        output::stdout(line.as_bytes())?;
    }
    Ok(0)
}

/// Writes `bytes` whole into `f` and completes it (crate::outfile).
pub fn write_whole(mut f: OutFile, bytes: &[u8]) -> Result<(), InputError> {
    f.write_all(bytes).map_err(|e| f.error(e))?;
    f.commit()
}

/// `gen suite`: every scenario's capture and expect file into `dir`.
pub fn write_suite(dir: &Path) -> Result<(), InputError> {
    if dir == Path::new("-") {
        return Err(InputError(
            "gen suite -o -: the suite is a folder of files; give a directory".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    for s in crate::gen::suite::SUITE {
        let (trace, expect) = s.generate();
        let pcap =
            OutFile::create("-o", &dir.join(format!("{}.pcap", s.name)), &[], Dash::Refused)?;
        let mut w = io::BufWriter::new(pcap);
        trace.write_pcap(&mut w).map_err(|e| w.get_ref().error(e))?;
        w.flush().map_err(|e| w.get_ref().error(e))?;
        let (pcap, _) = w.into_parts();
        pcap.commit()?;
        let text = serde_json::to_string_pretty(&expect).map_err(|e| InputError(e.to_string()))?;
        let ej = dir.join(format!("{}.expect.json", s.name));
        write_whole(OutFile::create("-o", &ej, &[], Dash::Refused)?, (text + "\n").as_bytes())?;
    }
    Ok(())
}
