//! `read_batches()`: the packets table of `export` (`roce_analysis::rows`, the columns of
//! packets.parquet with their names, types and values) in batches of rows, handed to Python
//! as Arrow buffers (validity bitmap, values, string offsets) that pyarrow wraps without a
//! per-value step (`pa.Array.from_buffers`), or as lists without pyarrow.
//!
//! With pyarrow, a batch's integer columns whose every row is present (most of them) are not
//! copied at all: their values already lie in the row group as Arrow lays them out (64-bit
//! little-endian, one per row), so Python is handed their address and the row group itself,
//! lent ([`Lease`]), which pyarrow's `foreign_buffer` keeps alive as its base; the row group
//! goes back to the reading thread when the last array using it is gone.
//!
//! The connection model runs only when a column needs it (`incarnation`, `retransmission`:
//! the checker's words on the packet); without them a batch is the parse and the rows alone.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use roce_analysis::filter::DisplayFilter;
use roce_analysis::rows::{self, Column, ColumnValues, Kind, PacketRow, RowGroup, Values};
use roce_analysis::{decode_into, Decoded};
use roce_capture::{Capture, Frame, Warnings};
use roce_conformance::{Checker, Shard};
use roce_parser::{Config, Packet};

use crate::options::{self, Takes};

/// The columns whose values come from the connection model.
const MODEL_COLUMNS: &[&str] = &["incarnation", "retransmission"];

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Int => "int64",
        Kind::Bool => "bool",
        Kind::Str => "string",
        Kind::Bytes => "binary",
    }
}

fn describe(py: Python<'_>, cols: &[Column]) -> PyResult<Py<PyList>> {
    let items: Vec<Bound<'_, PyTuple>> = cols
        .iter()
        .map(|c| {
            PyTuple::new(
                py,
                [
                    c.name.into_pyobject(py)?.into_any(),
                    kind_name(c.kind).into_pyobject(py)?.into_any(),
                    pyo3::types::PyBool::new(py, c.nullable).to_owned().into_any(),
                    c.doc.into_pyobject(py)?.into_any(),
                ],
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

/// The packets table's columns: (name, type, nullable, meaning), in file order; with `raw`,
/// `export --raw`'s after them.
#[pyfunction]
#[pyo3(signature = (raw = false))]
pub fn packet_columns(py: Python<'_>, raw: bool) -> PyResult<Py<PyList>> {
    describe(py, rows::packet_columns(raw))
}

/// The findings table's columns: (name, type, nullable, meaning), in file order.
#[pyfunction]
pub fn finding_columns(py: Python<'_>) -> PyResult<Py<PyList>> {
    describe(py, rows::FINDING_COLUMNS)
}

/// Arrow's validity bitmap of a nullable column (bit `i` set when row `i` is present), or
/// `None` for a required one.
fn validity<'py>(
    py: Python<'py>,
    defs: Option<&[i16]>,
    n: usize,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let Some(defs) = defs else { return Ok(None) };
    PyBytes::new_with(py, n.div_ceil(8), |bits| {
        for (byte, rows) in bits.iter_mut().zip(defs.chunks(8)) {
            *byte = rows.iter().enumerate().fold(0u8, |b, (j, &d)| b | (u8::from(d == 1) << j));
        }
        Ok(())
    })
    .map(Some)
}

/// An integer column as Arrow's little-endian values buffer: the present values spread over
/// their rows, a null row 0. A required column is one copy.
fn int_values<'py>(
    py: Python<'py>,
    vals: &[i64],
    defs: Option<&[i16]>,
    n: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, n * 8, |out| {
        let slots = out.chunks_exact_mut(8);
        match defs {
            None => slots.zip(vals).for_each(|(c, x)| c.copy_from_slice(&x.to_le_bytes())),
            Some(defs) => {
                let mut it = vals.iter();
                for (c, _) in slots.zip(defs).filter(|(_, &d)| d == 1) {
                    if let Some(x) = it.next() {
                        c.copy_from_slice(&x.to_le_bytes());
                    }
                }
            }
        }
        Ok(())
    })
}

/// A boolean column as Arrow's values bitmap (a null row false).
fn bool_values<'py>(
    py: Python<'py>,
    vals: &[bool],
    defs: Option<&[i16]>,
    n: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, n.div_ceil(8), |bits| {
        let mut it = vals.iter();
        for i in 0..n {
            let present = defs.is_none_or(|d| d.get(i) == Some(&1));
            if present && it.next().copied().unwrap_or(false) {
                if let Some(b) = bits.get_mut(i / 8) {
                    *b |= 1 << (i % 8);
                }
            }
        }
        Ok(())
    })
}

/// A string or binary column (the present values back to back in `bytes`, each ending at its
/// `ends`) as Arrow's 32-bit offsets and data buffers, a null row an empty value.
fn offsets_of<'py>(
    py: Python<'py>,
    bytes: &[u8],
    ends: &[usize],
    defs: Option<&[i16]>,
    n: usize,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let total = ends.last().copied().unwrap_or(0);
    if i32::try_from(total).is_err() {
        return Err(crate::OptionError::new_err(
            "batch_size: a column's values passed 2 GiB in one batch; use a smaller batch_size",
        ));
    }
    let offsets = PyBytes::new_with(py, (n + 1) * 4, |out| {
        let mut slots = out.chunks_exact_mut(4);
        if let Some(first) = slots.next() {
            first.copy_from_slice(&0i32.to_le_bytes());
        }
        let mut it = ends.iter();
        let mut at = 0usize;
        for (i, c) in slots.enumerate() {
            if defs.is_none_or(|d| d.get(i) == Some(&1)) {
                at = it.next().copied().unwrap_or(at);
            }
            // Below 2 GiB: checked above.
            c.copy_from_slice(&(at as i32).to_le_bytes());
        }
        Ok(())
    })?;
    Ok((offsets, PyBytes::new(py, bytes.get(..total).unwrap_or(bytes))))
}

/// One column of a batch as Arrow buffers: (name, type, validity or None, values, offsets
/// or None). Null rows hold zeros (ints), false (bools) or an empty value.
pub(crate) fn arrow_column<'py>(
    py: Python<'py>,
    col: &Column,
    v: &ColumnValues<'_>,
    n: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let none = || py.None().into_bound(py);
    // A nullable column whose every row is present (the BTH's in a capture of RoCE only)
    // needs no bitmap, and its values are copied as a required column's are.
    let present = match &v.values {
        Values::Int(x) => x.len(),
        Values::Bool(x) => x.len(),
        Values::Str(x) => x.len(),
        Values::Bytes(x) => x.len(),
    };
    let v = &ColumnValues { values: v.values, defs: v.defs.filter(|_| present != n) };
    let (data, offsets) = match &v.values {
        Values::Int(vals) => (int_values(py, vals, v.defs, n)?, None),
        Values::Bool(vals) => (bool_values(py, vals, v.defs, n)?, None),
        Values::Str(s) => {
            let (o, d) = offsets_of(py, s.bytes, s.ends, v.defs, n)?;
            (d, Some(o))
        }
        Values::Bytes(b) => {
            let (o, d) = offsets_of(py, b.bytes, b.ends, v.defs, n)?;
            (d, Some(o))
        }
    };
    PyTuple::new(
        py,
        [
            col.name.into_pyobject(py)?.into_any(),
            kind_name(col.kind).into_pyobject(py)?.into_any(),
            validity(py, v.defs, n)?.map_or_else(none, Bound::into_any),
            data.into_any(),
            offsets.map_or_else(none, Bound::into_any),
        ],
    )
}

/// What the reading thread hands over: a batch of rows (and the warnings of its frames),
/// or the end of the capture, or the error that ends it before its first frame.
enum Handed<T = RowGroup> {
    Rows(Box<T>, Vec<String>),
    End(Vec<String>),
    Failed(roce_capture::CaptureError, Vec<String>),
}

/// Where [`Filler::fill`] puts each frame it keeps.
trait Keep {
    /// How many frames it holds.
    fn held(&self) -> usize;
    /// Keeps a frame and what the checker said of it.
    fn keep(
        &mut self,
        d: &Decoded<'_>,
        incarnation: Option<u32>,
        retransmission: Option<bool>,
        raw: bool,
    );
}

impl Keep for RowGroup {
    fn held(&self) -> usize {
        self.len()
    }

    #[inline]
    fn keep(
        &mut self,
        d: &Decoded<'_>,
        incarnation: Option<u32>,
        retransmission: Option<bool>,
        raw: bool,
    ) {
        let row = PacketRow { d, incarnation, retransmission };
        self.push(|cells| {
            rows::write_packet(&row, cells);
            if raw {
                rows::write_raw(&row, cells);
            }
        });
    }
}

/// Frames the checker has judged, copied out of the capture's buffer with its words on each
/// (`incarnation`, `retransmission`), for the thread that writes their rows.
#[derive(Default)]
struct Judged {
    data: Vec<u8>,
    /// Each frame's record (its `data` empty), where its bytes end in `data`, its verdicts.
    frames: Vec<(Frame<'static>, usize, Option<u32>, Option<bool>)>,
}

impl Keep for Judged {
    fn held(&self) -> usize {
        self.frames.len()
    }

    #[inline]
    fn keep(
        &mut self,
        d: &Decoded<'_>,
        incarnation: Option<u32>,
        retransmission: Option<bool>,
        _raw: bool,
    ) {
        self.data.extend_from_slice(d.frame.data);
        let meta = Frame { data: &[], ..d.frame };
        self.frames.push((meta, self.data.len(), incarnation, retransmission));
    }
}

impl Judged {
    /// Their rows: each frame decoded again (from its copy) and written with its verdicts.
    fn write_rows(&self, cfg: &Config, raw: bool, rows: &mut RowGroup) {
        let mut start = 0;
        for &(meta, end, incarnation, retransmission) in &self.frames {
            let data = self.data.get(start..end).unwrap_or_default();
            start = end;
            let mut d = Decoded { frame: Frame { data, ..meta }, packet: Ok(Packet::default()) };
            decode_into(&mut d, cfg);
            rows.keep(&d, incarnation, retransmission, raw);
        }
    }
}

/// The reading side of `read_batches()`: the capture, the parse, the model and the rows.
/// It runs on a thread of its own, so that the next batch is read while Python converts and
/// uses this one (two cores: measured in BENCHMARKS.md), never more than two batches ahead.
struct Filler {
    cap: Capture,
    cfg: Config,
    filter: Option<DisplayFilter>,
    shard: Shard,
    checker: Option<Checker>,
    raw: bool,
    batch_size: usize,
    warnings: Warnings,
}

impl Filler {
    /// Reads batches until the capture ends or the receiver is gone; `spare` hands back
    /// the row groups Python is done with.
    fn run<T: Keep>(
        mut self,
        out: SyncSender<Handed<T>>,
        spare: Receiver<Box<T>>,
        make: impl Fn() -> T,
        clear: impl Fn(&mut T),
    ) {
        loop {
            let mut rows = spare.try_recv().unwrap_or_else(|_| Box::new(make()));
            clear(&mut rows);
            let (more, mut warnings) = self.fill(&mut *rows);
            match more {
                Err(e) => {
                    let _ = out.send(Handed::Failed(e, warnings));
                    return;
                }
                Ok(more) => {
                    if rows.held() > 0
                        && out.send(Handed::Rows(rows, std::mem::take(&mut warnings))).is_err()
                    {
                        return; // The iterator is gone.
                    }
                    if !more {
                        let _ = out.send(Handed::End(warnings));
                        return;
                    }
                }
            }
        }
    }

    /// Reads frames into `rows` until a batch is full (then `Ok(true)`) or the capture ends
    /// (`Ok(false)`); the warnings to give. Damage before the first frame is the error.
    fn fill(
        &mut self,
        rows: &mut impl Keep,
    ) -> (Result<bool, roce_capture::CaptureError>, Vec<String>) {
        let mut warnings = Vec::new();
        while rows.held() < self.batch_size {
            let Some(next) = self.cap.next_frame() else {
                warnings.extend(self.warnings.omitted().map(|o| o.to_string()));
                return (Ok(false), warnings);
            };
            match next {
                Ok(frame) => {
                    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                    decode_into(&mut d, &self.cfg);
                    let (mut incarnation, mut retransmission) = (None, None);
                    if let Some(checker) = self.checker.as_mut() {
                        let Some(ev) = roce_analysis::feed(checker, self.shard, &d) else {
                            continue;
                        };
                        incarnation = ev.incarnation;
                        retransmission = ev.observation.and(checker.last_retransmission());
                    } else if !self.shard.owns(d.packet.as_ref().ok()) {
                        continue;
                    }
                    if self.filter.as_ref().is_some_and(|f| !f.matches(&d)) {
                        continue;
                    }
                    rows.keep(&d, incarnation, retransmission, self.raw);
                }
                Err(e) => {
                    if e.nothing_read() && e.is_fatal() {
                        return (Err(e), warnings);
                    }
                    if let Some(e) = self.warnings.add(e) {
                        warnings.push(e.to_string());
                    }
                }
            }
        }
        (Ok(true), warnings)
    }
}

/// A batch's row group lent to Python: the base object of the `pyarrow.foreign_buffer`s
/// made of its integer columns (the addresses `__next__` hands out point into it). It is
/// never changed while lent; when Python lets go of it (the last array made from it is
/// gone), the row group goes back to the reading thread for a later batch, or is freed.
#[pyclass(frozen, module = "roce_inspect._native")]
pub struct Lease {
    rows: std::sync::Mutex<Option<Box<RowGroup>>>,
    spare: SyncSender<Box<RowGroup>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let rows = self.rows.get_mut().ok().and_then(Option::take);
        if let Some(rows) = rows {
            // None lost if the reading thread is gone or already has two.
            let _ = self.spare.try_send(rows);
        }
    }
}

/// Whether a column of `n` rows can be lent as it lies: integers, one per row (a required
/// column, or a nullable one whose every row is present), on a little-endian machine (Arrow's
/// byte order).
fn lendable(v: &ColumnValues<'_>, n: usize) -> Option<(usize, usize)> {
    match v.values {
        Values::Int(vals) if cfg!(target_endian = "little") && vals.len() == n && n > 0 => {
            Some((vals.as_ptr() as usize, std::mem::size_of_val(vals)))
        }
        _ => None,
    }
}

/// `read_batches()`'s iterator: each `__next__` takes the next batch of up to `batch_size`
/// frames (those the filter keeps) from the reading thread and returns (rows, [column
/// buffers]) of the columns asked for.
#[pyclass(unsendable, module = "roce_inspect._native")]
pub struct BatchReader {
    batches: Option<Receiver<Handed>>,
    spare: SyncSender<Box<RowGroup>>,
    /// Indexes into `packet_columns(raw)` of the columns returned.
    wanted: Vec<usize>,
    given: Vec<String>,
    /// Whether integer columns are lent ([`Lease`]) rather than copied into `bytes`.
    lend: bool,
}

#[pymethods]
impl BatchReader {
    #[new]
    #[pyo3(signature = (source, columns = None, batch_size = 65536, raw = false, lend = false, **options))]
    fn new(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
        batch_size: usize,
        raw: bool,
        lend: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let all = rows::packet_columns(raw);
        let o = options::parse(Takes::Batches, options)?;
        if batch_size == 0 || batch_size > 16 * 1024 * 1024 {
            return Err(crate::OptionError::new_err(format!(
                "batch_size: {batch_size} is out of range (1..=16777216)"
            )));
        }
        let wanted: Vec<usize> = match &columns {
            None => (0..all.len()).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    all.iter().position(|c| c.name == n).ok_or_else(|| {
                        let hint = if !raw && rows::RAW_COLUMNS.iter().any(|c| c.name == n) {
                            " (it is one of raw=True's columns)"
                        } else {
                            ""
                        };
                        crate::OptionError::new_err(format!(
                            "columns: {n:?} is not a column of the packets table{hint} (roce_inspect.packet_columns() lists them)"
                        ))
                    })
                })
                .collect::<PyResult<_>>()?,
        };
        let model =
            wanted.iter().any(|&i| all.get(i).is_some_and(|c| MODEL_COLUMNS.contains(&c.name)));
        let (cap, _) = crate::frames::open(py, source)?;
        let filler = Filler {
            cap,
            cfg: o.cfg,
            filter: o.filter,
            shard: o.shard,
            checker: model.then(|| Checker::new(o.check)),
            raw,
            batch_size,
            warnings: Warnings::default(),
        };
        let (out, batches) = sync_channel(1);
        let (spare, spares) = sync_channel::<Box<RowGroup>>(2);
        let capacity = batch_size.min(65536);
        let thread = |name: &str| std::thread::Builder::new().name(format!("roce-inspect-{name}"));
        let started = if filler.checker.is_none() {
            // One thread reads, parses and writes the rows.
            thread("batches").spawn(move || {
                filler.run(out, spares, || RowGroup::new(all, capacity), RowGroup::clear)
            })
        } else {
            // With the connection model, two: one reads, parses and judges (the checker,
            // frame after frame), the other parses again and writes the rows, so the two
            // halves run on two cores (BENCHMARKS.md).
            let cfg = filler.cfg;
            // The checker's words read here (incarnation, retransmission) do not depend on
            // the ICRC or the IPv4 checksum (those reach its findings only, unused here): the
            // judging thread skips verifying, the rows thread verifies for the rows. A
            // filter may ask for a verdict (`icrc.status`), so with one both verify.
            let mut filler = filler;
            if filler.filter.is_none() {
                filler.cfg.verify = false;
            }
            let (judged_out, judged) = sync_channel::<Handed<Judged>>(1);
            let (judged_spare, judged_spares) = sync_channel::<Box<Judged>>(2);
            let clear = |j: &mut Judged| {
                j.data.clear();
                j.frames.clear();
            };
            thread("judge")
                .spawn(move || filler.run(judged_out, judged_spares, Judged::default, clear))
                .and_then(|_| {
                    thread("rows").spawn(move || {
                        for handed in judged {
                            let (next, last) = match handed {
                                Handed::Rows(j, w) => {
                                    let mut rows = spares
                                        .try_recv()
                                        .unwrap_or_else(|_| Box::new(RowGroup::new(all, capacity)));
                                    rows.clear();
                                    j.write_rows(&cfg, raw, &mut rows);
                                    let _ = judged_spare.try_send(j);
                                    (Handed::Rows(rows, w), false)
                                }
                                Handed::End(w) => (Handed::End(w), true),
                                Handed::Failed(e, w) => (Handed::Failed(e, w), true),
                            };
                            if out.send(next).is_err() || last {
                                return;
                            }
                        }
                    })
                })
        };
        started.map_err(|e| {
            pyo3::exceptions::PyRuntimeError::new_err(format!(
                "cannot start the reading thread: {e}"
            ))
        })?;
        // A lent batch keeps its whole row group alive: only worth it when most of the
        // table is asked for (a batch of a few columns kept by the caller would hold them all).
        let lend = lend && wanted.len() * 2 >= all.len();
        Ok(BatchReader { batches: Some(batches), spare, wanted, given: Vec::new(), lend })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[allow(clippy::type_complexity)]
    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<(usize, Bound<'py, PyList>, Bound<'py, PyAny>)>> {
        let Some(batches) = self.batches.take() else { return Ok(None) };
        // Waiting for the reading thread without the GIL.
        let (batches, handed) = py.detach(move || {
            let handed = batches.recv();
            (batches, handed)
        });
        self.batches = Some(batches);
        let (rows, warnings, failed) = match handed {
            Ok(Handed::Rows(rows, w)) => (Some(rows), w, None),
            Ok(Handed::End(w)) => (None, w, None),
            Ok(Handed::Failed(e, w)) => (None, w, Some(e)),
            // The thread ended without a word: it panicked (a bug), or the capture ended.
            Err(_) => (None, Vec::new(), None),
        };
        if rows.is_none() {
            self.batches = None;
        }
        for w in warnings {
            crate::frames::warn(py, &w)?;
            self.given.push(w);
        }
        if let Some(e) = failed {
            return Err(crate::capture_error(py, &e));
        }
        let Some(rows) = rows else { return Ok(None) };
        let n = rows.len();
        let out = PyList::empty(py);
        let mut lent = false;
        {
            let cols: Vec<(&'static Column, ColumnValues<'_>)> = rows.columns().collect();
            for &i in &self.wanted {
                let Some((c, v)) = cols.get(i) else { continue };
                match lendable(v, n).filter(|_| self.lend) {
                    Some((address, len)) => {
                        lent = true;
                        let none = || py.None().into_bound(py);
                        out.append(PyTuple::new(
                            py,
                            [
                                c.name.into_pyobject(py)?.into_any(),
                                kind_name(c.kind).into_pyobject(py)?.into_any(),
                                none(),
                                (address, len).into_pyobject(py)?.into_any(),
                                none(),
                            ],
                        )?)?;
                    }
                    None => out.append(arrow_column(py, c, v, n)?)?,
                }
            }
        }
        if !lent {
            // Its buffers go back to the reading thread (none lost if it is gone or has two).
            let _ = self.spare.try_send(rows);
            return Ok(Some((n, out, py.None().into_bound(py))));
        }
        let lease = Lease { rows: std::sync::Mutex::new(Some(rows)), spare: self.spare.clone() };
        Ok(Some((n, out, Bound::new(py, lease)?.into_any())))
    }

    /// The warnings given so far (damage after the first frame), as text.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.given.clone()
    }
}
