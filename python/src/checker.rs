//! `stats()`, `check()`, the streaming `Checker` and the per-group check of
//! `roce_inspect.spark.check`: the library's pass and documents (`roce_analysis::Pass`,
//! `StatsDocument`, `CheckDocument`, `filter::Selection`), written as the command line writes
//! them with the same options, so `check(path)` is `check --format json` member for member.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde::Serialize;

use roce_analysis::filter::{Selection, SelectionJson};
use roce_analysis::rows::{self, RowGroup};
use roce_analysis::{
    cite_frames, count_undecoded, decode, run_taps, CheckDocument, Pass, ReadSummary, Stats,
    StatsDocument, TapStep, TapsError,
};
use roce_capture::Capture;
use roce_conformance::{Checker, Finding, FrameInfo, Options, Report, Shard};
use roce_parser::Config;
use std::path::PathBuf;

use crate::options::{self, Takes};

/// What `stats --format json` and `check --format json` write after the library's members
/// when a filter was given (the command line's `selection`; a binding reads no `-c` window).
#[derive(Serialize)]
struct Selected<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<SelectionJson<'a>>,
}

fn to_json<T: Serialize>(doc: &T) -> PyResult<Vec<u8>> {
    serde_json::to_vec(doc).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Runs `f` without the GIL, turning a capture error into a `CaptureError` and taps that
/// cannot be read as one (an offset for no file, `-` among them) into an `OptionError`.
fn pass<T: Send>(py: Python<'_>, f: impl Send + FnOnce() -> Result<T, TapsError>) -> PyResult<T> {
    py.detach(f).map_err(|e| match e {
        TapsError::Capture(e) => crate::capture_error(py, &e),
        TapsError::Setup(s) => {
            crate::OptionError::new_err(s.replacen("--tap-offset", "tap_offset", 1))
        }
    })
}

/// What `stats()` and `check()` read: one capture (a path or a binary file object, opened
/// here), or several taps' files (a list or tuple of two or more paths, opened in the pass).
enum Source {
    One(Box<Capture>),
    Taps(Vec<PathBuf>),
}

impl Source {
    fn open(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Source> {
        if !(source.is_instance_of::<PyList>() || source.is_instance_of::<PyTuple>()) {
            return Ok(Source::One(Box::new(crate::frames::open(py, source)?.0)));
        }
        let items: Vec<Bound<'_, PyAny>> = source.try_iter()?.collect::<PyResult<_>>()?;
        if let [one] = items.as_slice() {
            return Ok(Source::One(Box::new(crate::frames::open(py, one)?.0)));
        }
        if items.is_empty() {
            return Err(crate::OptionError::new_err(
                "source: an empty list; give a capture, or a list of several taps' captures",
            ));
        }
        let mut files = Vec::with_capacity(items.len());
        for p in &items {
            let path = crate::frames::path_of(py, p)?;
            if path.is_dir() {
                let name = path.display().to_string();
                return Err(crate::open_error(py, &name, "is a directory, not a capture".into()));
            }
            files.push(path);
        }
        Ok(Source::Taps(files))
    }
}

/// `stats --format json` of a capture, as a dict.
#[pyfunction]
#[pyo3(signature = (source, **options))]
pub fn stats<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let o = options::parse(Takes::Stats, options)?;
    let source = Source::open(py, source)?;
    let model = o.model();
    let (cfg, shard, filter, setup) = (o.cfg, o.shard, o.filter, o.taps);
    let json = pass(py, move || {
        let mut stats = Stats::new(model);
        let mut selection = filter.as_ref().map(Selection::new);
        let summary = match source {
            Source::One(cap) => Pass::new(&cfg).run(*cap, |d| {
                if stats.frame(shard, d).is_none() {
                    return;
                }
                if let Some(sel) = &mut selection {
                    sel.observe(d, |k| stats.incarnation_of(k));
                }
            })?,
            // Several taps: as the command line, each packet's connection handed to the
            // taps, so that a loss between them is listed under it.
            Source::Taps(files) => run_taps(Pass::new(&cfg), &files, &setup, |step| {
                let TapStep::Frame(d) = step else { return None };
                let own = stats.frame(shard, d)?.observation.map(|o| o.own);
                if let Some(sel) = &mut selection {
                    sel.observe(d, |k| stats.incarnation_of(k));
                }
                own.map(|k| stats.connection_of(&k))
            })?,
        }
        .of_shard(shard);
        let (mut connections, not_listed) = stats.connections();
        if let Some(sel) = &selection {
            connections.retain(|c| sel.selects(&c.info.connection));
        }
        let listed = connections.len();
        let extra = Selected { selection: selection.as_ref().map(|s| s.json(listed)) };
        let doc = StatsDocument::new(&stats, connections, not_listed, &summary, extra);
        Ok(serde_json::to_vec(&doc).unwrap_or_default())
    })?;
    crate::loads(py, &json)
}

/// `check --format json` of a capture, as a dict.
#[pyfunction]
#[pyo3(signature = (source, **options))]
pub fn check<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let o = options::parse(Takes::Check, options)?;
    let source = Source::open(py, source)?;
    let (cfg, shard, filter, opts, setup) = (o.cfg, o.shard, o.filter, o.check, o.taps);
    let json = pass(py, move || {
        let mut checker = Checker::new(opts);
        let mut selection = filter.as_ref().map(Selection::new);
        let files = match &source {
            Source::Taps(files) => files.clone(),
            Source::One(_) => Vec::new(),
        };
        let summary = match source {
            Source::One(cap) => Pass::new(&cfg).run(*cap, |d| {
                if roce_analysis::feed(&mut checker, shard, d).is_none() {
                    return;
                }
                if let Some(sel) = selection.as_mut() {
                    sel.observe(d, |k| checker.incarnation_of(k));
                }
            })?,
            // Several taps: as the command line, copies left to the taps, losses between
            // taps as findings (each in its host pair's shard), each packet's connection
            // handed back.
            Source::Taps(_) => {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                run_taps(Pass::new(&cfg), &files, &setup, |step| {
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
                    roce_analysis::feed(&mut checker, shard, d)?;
                    if let Some(sel) = selection.as_mut() {
                        sel.observe(d, |k| checker.incarnation_of(k));
                    }
                    checker.connection_fed()
                })?
            }
        };
        let mut summary = summary.of_shard(shard);
        let mut report = checker.finish();
        if let Some(sel) = &selection {
            sel.retain(&mut report);
        }
        // Several taps: each cited frame's file and number there (`taps.frames_cited`).
        if let Some(taps) = summary.taps.as_mut() {
            cite_frames(&files, taps, report.findings.iter().flat_map(|f| f.frames.clone()))?;
        }
        let extra =
            Selected { selection: selection.as_ref().map(|s| s.json(report.connections.len())) };
        Ok(serde_json::to_vec(&CheckDocument::new(&report, &summary, extra)).unwrap_or_default())
    })?;
    crate::loads(py, &json)
}

/// The findings as dicts (the `findings` members of `check --format json`).
fn findings_list<'py>(py: Python<'py>, fs: &[Finding]) -> PyResult<Bound<'py, PyAny>> {
    crate::loads(py, &to_json(&fs)?)
}

/// A checker fed frame by frame: a test that makes its own traffic, or a live source.
#[pyclass(unsendable, module = "roce_inspect._native", name = "Checker")]
pub struct StreamChecker {
    checker: Option<Checker>,
    cfg: Config,
    summary: ReadSummary,
    /// Findings already handed out by `findings()` (the report at the end lists them too).
    taken: Vec<Finding>,
    /// The number the next frame gets when `feed` is not told one.
    next: u64,
}

#[pymethods]
impl StreamChecker {
    #[new]
    #[pyo3(signature = (**options))]
    fn new(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let o = options::parse(Takes::Check, options)?;
        if o.filter.is_some() || !o.shard.is_all() {
            return Err(crate::OptionError::new_err(
                "Checker() judges every frame it is fed: filter, conn and shard are options of check()",
            ));
        }
        Ok(StreamChecker {
            checker: Some(Checker::new(o.check)),
            cfg: o.cfg,
            summary: ReadSummary::default(),
            taken: Vec::new(),
            next: 1,
        })
    }

    /// Feeds one frame (from its link-layer header; Ethernet unless `link_type` says), in
    /// capture order. `number` defaults to one more than the last frame fed, `len` (the
    /// length on the wire) to the bytes given.
    #[pyo3(signature = (frame, ts_ns, *, number = None, len = None, link_type = 1))]
    fn feed(
        &mut self,
        frame: &[u8],
        ts_ns: u64,
        number: Option<u64>,
        len: Option<u32>,
        link_type: u32,
    ) -> PyResult<()> {
        let n = number.unwrap_or(self.next);
        if n < self.next {
            return Err(crate::OptionError::new_err(format!(
                "number: frame {n} after frame {}: frames are fed in capture order",
                self.next - 1
            )));
        }
        let checker = self.checker.as_mut().ok_or_else(finished)?;
        let d = decode(crate::frames::frame_of(frame, ts_ns, n, len, link_type)?, &self.cfg);
        self.summary.frames += 1;
        if let Err(why) = &d.packet {
            count_undecoded(&mut self.summary.undecoded, &d.frame, why);
        }
        roce_analysis::feed(checker, Shard::ALL, &d);
        self.next = n + 1;
        Ok(())
    }

    /// The capture's clock passed `ts_ns` without a frame for this checker.
    fn tick(&mut self, ts_ns: u64) -> PyResult<()> {
        self.checker.as_mut().ok_or_else(finished)?.tick(ts_ns);
        Ok(())
    }

    /// The findings proven since the last call (each once), as dicts; `finish()` lists
    /// them all again.
    fn findings<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let new = self.checker.as_mut().ok_or_else(finished)?.take_findings();
        let out = findings_list(py, &new)?;
        self.taken.extend(new);
        Ok(out)
    }

    /// Ends the capture: the `check --format json` document of every frame fed.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let checker = self.checker.take().ok_or_else(finished)?;
        // A finding handed out before its connection's two directions were paired named it
        // with the peer's QPN unknown: the report names it as `check` does.
        let mut all = std::mem::take(&mut self.taken);
        for f in &mut all {
            f.connection = f.connection.map(|c| checker.canonical(c));
        }
        let mut report: Report = checker.finish();
        all.append(&mut report.findings);
        report.findings = all;
        crate::loads(py, &to_json(&CheckDocument::new(&report, &self.summary, ()))?)
    }
}

fn finished() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("this Checker is finished: make a new one")
}

/// One host pair's frames (or several's), in capture order, judged by a checker of its own
/// (`roce_conformance::Checker::for_shard`): the findings as the findings table's columns
/// plus `order`, the byte key that puts every group's findings in one run's order
/// (`roce_inspect.spark.check` sorts by it). `end_ns` is the capture's last timestamp.
#[pyfunction]
#[pyo3(signature = (frames, numbers, ts_ns, lens, link_types, end_ns, **options))]
#[allow(clippy::too_many_arguments)]
pub fn check_group<'py>(
    py: Python<'py>,
    frames: Vec<Vec<u8>>,
    numbers: Vec<u64>,
    ts_ns: Vec<u64>,
    lens: Vec<u32>,
    link_types: Vec<u32>,
    end_ns: u64,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<(usize, Bound<'py, PyList>)> {
    let o = options::parse(Takes::Check, options)?;
    let n = frames.len();
    if [numbers.len(), ts_ns.len(), lens.len(), link_types.len()].iter().any(|&l| l != n) {
        return Err(crate::OptionError::new_err(
            "frames, numbers, ts_ns, lens and link_types differ in length",
        ));
    }
    let (cfg, opts): (Config, Options) = (o.cfg, o.check);
    let (mut rows, keys) = py.detach(|| -> PyResult<(RowGroup, Vec<Vec<u8>>)> {
        let mut checker = Checker::for_shard(opts);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| numbers[i]);
        for i in order {
            let f = crate::frames::frame_of(
                &frames[i],
                ts_ns[i],
                numbers[i],
                Some(lens[i]),
                link_types[i],
            )?;
            let d = decode(f, &cfg);
            let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
            match &d.packet {
                Ok(p) => checker.feed_shard(&info, p),
                Err(_) => checker.feed_undecoded(&info),
            }
        }
        checker.tick(end_ns);
        let shard = checker.finish_shard();
        let keys = shard.order_keys();
        let mut rows = RowGroup::new(rows::FINDING_COLUMNS, shard.report().findings.len().max(1));
        for f in &shard.report().findings {
            rows.push(|cells| rows::write_finding(f, cells));
        }
        Ok((rows, keys))
    })?;
    let len = rows.len();
    let out = PyList::empty(py);
    for (c, v) in rows.columns() {
        out.append(crate::batches::arrow_column(py, c, &v, len)?)?;
    }
    let keys: Vec<Bound<'_, PyBytes>> = keys.iter().map(|k| PyBytes::new(py, k)).collect();
    out.append(("order", "binary", py.None(), PyList::new(py, keys)?, py.None()))?;
    rows.clear();
    Ok((len, out))
}
