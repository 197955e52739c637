//! `roce_inspect._native`: the Rust half of the `roce_inspect` Python package.
//!
//! It binds the library the command line uses, not the command line: the pass
//! (`roce_analysis::Pass`), the frame document's writer (`roce_analysis::write_frame_json`),
//! the documents of `stats` and `check` (`roce_analysis::StatsDocument`, `CheckDocument`),
//! the packets table's columns (`roce_analysis::rows`), the checker
//! (`roce_conformance::Checker`). So every dict is the v1 JSON contract (docs/json.md) and
//! every batch the Parquet packets table's columns, from the same code as the CLI's.
//!
//! What Python sees is shaped in `pysrc/roce_inspect/` (keyword arguments, pyarrow, Spark);
//! this module keeps to bytes in, documents and column buffers out. Input bytes never panic
//! the interpreter (the parser is panic-free; a Rust panic here would become a Python
//! `PanicException`, and the fuzz corpus test feeds every file of it through). The GIL is
//! released while a capture is read: `stats` and `check` run without it, `read_batches`
//! fills its batches on a thread of its own (`batches.rs`).

#![forbid(unsafe_code)]

mod batches;
mod checker;
mod frames;
mod options;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _native,
    CaptureError,
    PyException,
    "A capture that cannot be read: `file`, `frame` (None before the first) and `offset` (the byte offset in the file) say where."
);
create_exception!(
    _native,
    OptionError,
    PyValueError,
    "An option that is not one, or a value it does not take (the name and the reason in the message)."
);

/// A `CaptureError` carrying the file, frame and offset of `e`.
pub(crate) fn capture_error(py: Python<'_>, e: &roce_capture::CaptureError) -> PyErr {
    let err = CaptureError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("file", e.file());
    let _ = v.setattr("frame", e.frame());
    let _ = v.setattr("offset", e.offset());
    let _ = v.setattr("kind", e.kind().name());
    err
}

/// A file that cannot be opened as a `CaptureError` (offset 0, no frame).
pub(crate) fn open_error(py: Python<'_>, file: &str, msg: String) -> PyErr {
    let err = CaptureError::new_err(format!("{file}: {msg}"));
    let v = err.value(py);
    let _ = v.setattr("file", file);
    let _ = v.setattr("frame", py.None());
    let _ = v.setattr("offset", 0u64);
    let _ = v.setattr("kind", "open");
    err
}

/// `json.loads` of a document the library wrote.
pub(crate) fn loads<'py>(py: Python<'py>, json: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (pyo3::types::PyBytes::new(py, json),))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CaptureError", py.get_type::<CaptureError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add("CaptureWarning", py.get_type::<frames::CaptureWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_FRAME", roce_analysis::SCHEMA_FRAME)?;
    m.add("SCHEMA_STATS", roce_analysis::SCHEMA_STATS)?;
    m.add("SCHEMA_CHECK", roce_analysis::SCHEMA_CHECK)?;
    m.add_function(wrap_pyfunction!(frames::parse, m)?)?;
    m.add_function(wrap_pyfunction!(frames::parse_udp_payload, m)?)?;
    m.add_class::<frames::Reader>()?;
    m.add_class::<batches::BatchReader>()?;
    m.add_class::<batches::Lease>()?;
    m.add_function(wrap_pyfunction!(batches::packet_columns, m)?)?;
    m.add_function(wrap_pyfunction!(batches::finding_columns, m)?)?;
    m.add_function(wrap_pyfunction!(checker::stats, m)?)?;
    m.add_function(wrap_pyfunction!(checker::check, m)?)?;
    m.add_class::<checker::StreamChecker>()?;
    m.add_function(wrap_pyfunction!(checker::check_group, m)?)?;
    Ok(())
}
