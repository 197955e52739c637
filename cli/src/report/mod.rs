//! `roce-inspect report FILE -o report.html` and `roce-inspect graph FILE --conn NAME -o
//! conn.svg`: the capture's findings and per-connection time–sequence graphs (tcptrace
//! style) as one self-contained HTML page, or one graph as SVG.
//!
//! - [`collect`]: the streaming pass (checker + connection model with a
//!   [`Series`](roce_analysis::series::Series) per flow), what to keep when an incarnation
//!   ends; what a graph is made of, with its decimation and bounds, is in the library:
//!   [`roce_analysis::series`];
//! - [`locate`]: a light second pass placing the frames findings cite;
//! - [`svg`], [`page`], [`html`]: drawing, the page's sections, escaping and the CSP;
//! - [`timers`]: the timing and congestion section (`stats`' figures).
//!
//! Size bound: per graphed connection and direction at most
//! [`POINT_BUDGET`](roce_analysis::series::POINT_BUDGET) x 2 request points and as many ACK
//! points, [`MARK_BUDGET`](roce_analysis::series::MARK_BUDGET) marks (merged beyond, each
//! keeping the packets it stands for), plus its findings (the checker keeps at most
//! `max_findings_per_rule` per rule and connection); 16 graphs by default. See
//! docs/report.md.

pub mod collect;
pub mod html;
pub mod locate;
pub mod page;
pub mod svg;
pub mod timers;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roce_conformance::Options;
use roce_parser::Config;

use crate::filter::DisplayFilter;
use crate::input::{for_each_step, warn_undecoded, Input, InputError};
use crate::outfile::{Dash, OutFile};
use collect::{Collected, Collector, Select};
use locate::Cited;

/// Graphs a report draws by default (`--graphs`).
pub const DEFAULT_GRAPHS: usize = 16;

/// What a report run produced, for the caller's message and tests.
#[derive(Debug)]
pub struct Done {
    pub bytes: usize,
    pub graphs: usize,
    pub findings: usize,
    pub errors: u64,
}

/// What a report or a graph reads: a capture file (with its window, `-c` and `--frames`),
/// how frames are decoded, and the connections it covers (`-Y`, `--conn`: those with a
/// matching frame, judged on all their frames, as `check` does).
#[derive(Clone, Copy)]
pub struct Reading<'a> {
    pub input: &'a Input,
    pub cfg: &'a Config,
    pub filter: Option<&'a DisplayFilter>,
    /// More than one: the capture is read, and its checksums verified, on a thread of its
    /// own (`crate::threads::for_each_frame_ahead`); the frames are collected on this one, in
    /// capture order, as with one.
    pub threads: crate::threads::Threads,
}

impl Reading<'_> {
    /// The file, read twice (its findings, then the frames they cite): not stdin, not an
    /// interface.
    fn file(&self, what: &str) -> Result<&Path, InputError> {
        self.input.twice(what)
    }

    /// What is read: the file, or the files of several taps (each read again to place
    /// the frames findings cite, so none may be stdin: crate::taps::open refuses it).
    fn inputs(&self, what: &str) -> Result<Vec<&Path>, InputError> {
        match self.input.files() {
            Some(files) => Ok(files.iter().map(PathBuf::as_path).collect()),
            None => Ok(vec![self.file(what)?]),
        }
    }

    /// The names the findings give the taps (several files), in merge order.
    fn tap_names(&self) -> Vec<String> {
        crate::check::tap_names(self.input)
    }
}

/// Reads the capture once through the collector (several taps: merged, each packet once,
/// the packets lost between taps as findings).
fn collect(
    r: &Reading<'_>,
    opts: Options,
    select: Select,
) -> Result<(Collected, crate::input::ReadSummary), InputError> {
    let mut c = Collector::new(opts, select, r.filter);
    let summary = if r.input.files().is_some() {
        let names = r.tap_names();
        for_each_step(r.input, r.cfg, None, |step| c.step(step, &names))?
    } else {
        crate::threads::for_each_frame_on(
            r.threads,
            r.input,
            r.cfg,
            crate::threads::VerifyOn::ReaderWithPayloads,
            |d| c.frame(d),
        )?
    };
    warn_undecoded(&summary.undecoded);
    Ok((c.finish(), summary))
}

fn format_of(paths: &[&Path]) -> String {
    let mut formats: Vec<String> = Vec::new();
    for p in paths {
        let f = roce_capture::open(p).map(|c| c.format().to_string()).unwrap_or_default();
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    formats.join(", ")
}

/// Opens `out` for the page or graph of `inputs` (crate::outfile: `-` is stdout, an input
/// is refused, a file appears when complete).
fn open_out(inputs: &[&Path], out: &Path) -> Result<OutFile, InputError> {
    OutFile::create("-o", out, inputs, Dash::Stdout)
}

/// Writes `text` whole into `f` and completes it.
fn write_out(mut f: OutFile, text: &str) -> Result<(), InputError> {
    use std::io::Write as _;
    f.write_all(text.as_bytes()).map_err(|e| f.error(e))?;
    f.commit()
}

/// The whole page for `r`.
pub fn report_html(
    r: &Reading<'_>,
    opts: Options,
    graphs: usize,
) -> Result<(String, Collected), InputError> {
    let paths = r.inputs("report")?;
    let (c, summary) = collect(r, opts, Select::Busiest(graphs))?;
    // Several taps: every cited frame placed, so the findings table names its file.
    let cited = if r.input.files().is_some() { Cited::All } else { Cited::Graphed };
    let located = locate::locate(r, summary.taps.as_ref(), &c.check.findings, &c.graphs, cited)?;
    let meta = match paths.as_slice() {
        [one] => crate::annotate::meta::read_file(one),
        _ => crate::annotate::meta::Meta::default(),
    };
    let file = r.input.to_string();
    let p = page::Page {
        file: &file,
        format: format_of(&paths),
        frames: summary.frames,
        warnings: &summary.warnings,
        window: r.input.window.describe(),
        c: &c,
        located: &located,
        meta: &meta,
        taps: summary.taps.as_ref(),
        tap_names: &r.tap_names(),
    };
    let mut html = String::with_capacity(1 << 16);
    page::render(&p, &mut html);
    Ok((html, c))
}

/// `report FILE -o OUT`.
pub fn run_report(
    r: &Reading<'_>,
    out: &Path,
    opts: Options,
    graphs: usize,
) -> Result<Done, InputError> {
    let f = open_out(&r.inputs("report")?, out)?;
    let (html, c) = report_html(r, opts, graphs)?;
    write_out(f, &html)?;
    Ok(Done {
        bytes: html.len(),
        graphs: c.graphs.len(),
        findings: c.check.findings.len(),
        errors: c.check.errors,
    })
}

/// The standalone SVG of the connection `sel` names (its full name as `stats` and `check`
/// print it, or a part of it that names one connection).
pub fn graph_svg(r: &Reading<'_>, opts: Options, sel: &str) -> Result<String, InputError> {
    r.inputs("graph")?;
    let path = r.input.to_string();
    let (c, summary) = collect(r, opts, Select::Named(sel.to_string()))?;
    let taps = summary.taps.as_ref();
    let names = |v: &mut dyn Iterator<Item = String>| {
        let list: Vec<String> = v.take(20).collect();
        if list.is_empty() {
            return "(none)".to_string();
        }
        list.join("\n  ")
    };
    match c.graphs.len() {
        0 => {
            return Err(InputError(format!(
                "{path}: no RC/UC/XRC connection named '{sel}'; connections:\n  {}",
                names(&mut c.connections.iter().map(|(i, _)| i.connection.to_string()))
            )))
        }
        1 => {}
        n => {
            if let Some(exact) = c.graphs.iter().position(|g| g.info.connection.to_string() == sel)
            {
                return one_svg(r, taps, &c, exact);
            }
            return Err(InputError(format!(
                "{path}: '{sel}' names {} connections{}; give one of:\n  {}",
                n,
                if n > collect::NAMED_MAX { " or more" } else { "" },
                names(&mut c.graphs.iter().map(|g| g.info.connection.to_string()))
            )));
        }
    }
    one_svg(r, taps, &c, 0)
}

fn one_svg(
    r: &Reading<'_>,
    taps: Option<&roce_analysis::TapsReport>,
    c: &Collected,
    i: usize,
) -> Result<String, InputError> {
    let Some(g) = c.graphs.get(i) else {
        return Err(InputError("no graph".into()));
    };
    let only = std::slice::from_ref(g);
    let located = locate::locate(r, taps, &c.check.findings, only, Cited::Graphed)?;
    let marks = page::marks_of(g, &c.check.findings, &located);
    let cm: Vec<&collect::CmEvent> = c
        .cm_events
        .iter()
        .filter(|e| {
            let k = g.info.connection;
            (e.src == k.a && e.dst == k.b) || (e.src == k.b && e.dst == k.a)
        })
        .collect();
    let mut body = String::new();
    svg::sequence_graph(&mut body, g, &cm, &marks, "g1");
    // A standalone file: the XML prolog, and the graph's style inside the <svg>.
    let style: String =
        html::STYLE.lines().filter(|l| l.starts_with("svg")).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(body.len() + 4096);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let cut = body.find('>').map_or(0, |i| i + 1);
    let (open, rest) = body.split_at(cut);
    let _ = writeln!(out, "{open}<style>{}</style>{rest}", style.replace("svg ", ""));
    Ok(out)
}

/// `graph FILE --conn SEL -o OUT`.
pub fn run_graph(r: &Reading<'_>, out: &Path, opts: Options, sel: &str) -> Result<(), InputError> {
    let f = open_out(&r.inputs("graph")?, out)?;
    let svg = graph_svg(r, opts, sel)?;
    write_out(f, &svg)
}
