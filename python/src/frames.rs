//! `parse()`, `parse_udp_payload()` and `read()`: frames as the frame documents of
//! `dissect --format jsonl` (`roce_analysis::write_frame_json`, parsed by Python's `json`).

use std::io::Read;

use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use roce_analysis::filter::DisplayFilter;
use roce_analysis::{decode, decode_into, write_frame_json, Decoded};
use roce_capture::{Capture, Frame, LinkType, Warnings};
use roce_parser::{Config, Packet};

use crate::options::{self, Takes};

pyo3::create_exception!(
    _native,
    CaptureWarning,
    PyUserWarning,
    "Damage in a capture after its first frame: reading went on, the frames before are kept."
);

/// A frame record of bytes handed in by the caller (no capture file around them).
pub(crate) fn frame_of(
    data: &[u8],
    ts_ns: u64,
    number: u64,
    len: Option<u32>,
    link_type: u32,
) -> PyResult<Frame<'_>> {
    let caplen = u32::try_from(data.len())
        .map_err(|_| crate::OptionError::new_err("frame: longer than 4 GiB"))?;
    let len = len.unwrap_or(caplen);
    if len < caplen {
        return Err(crate::OptionError::new_err(format!(
            "len: {len} is less than the {caplen} bytes given (len is the length on the wire)"
        )));
    }
    Ok(Frame {
        number,
        source: 0,
        source_number: number,
        ts_ns,
        caplen,
        len,
        link_type: LinkType::from_code(link_type),
        interface: 0,
        offset: 0,
        data,
    })
}

fn document<'py>(
    py: Python<'py>,
    d: &Decoded<'_>,
    buf: &mut Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    buf.clear();
    write_frame_json(buf, d);
    crate::loads(py, buf)
}

/// One frame (from its link-layer header, Ethernet by default) as a frame document: the
/// dict of one `dissect --format jsonl` line (docs/json.md).
#[pyfunction]
#[pyo3(signature = (frame, port = None, *, link_type = 1, ts_ns = 0, number = 1, len = None))]
pub fn parse<'py>(
    py: Python<'py>,
    frame: &[u8],
    port: Option<&Bound<'py, PyAny>>,
    link_type: u32,
    ts_ns: u64,
    number: u64,
    len: Option<u32>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = config(py, port)?;
    let d = decode(frame_of(frame, ts_ns, number, len, link_type)?, &cfg);
    document(py, &d, &mut Vec::new())
}

/// The parser's configuration of a `port` argument (None: 4791).
fn config(py: Python<'_>, port: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
    let Some(port) = port else { return Ok(Config::default()) };
    let kw = PyDict::new(py);
    kw.set_item("port", port)?;
    Ok(options::parse(Takes::Frames, Some(&kw))?.cfg)
}

/// A RoCEv2 UDP payload (from the BTH to the ICRC) as a frame document whose `eth`, `ip`
/// and `udp` are null. Without the IP header the ICRC is not computed (it covers the IP and UDP headers): its
/// status is `not_checked`.
#[pyfunction]
#[pyo3(signature = (payload, *, ts_ns = 0, number = 1))]
pub fn parse_udp_payload<'py>(
    py: Python<'py>,
    payload: &[u8],
    ts_ns: u64,
    number: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = Config::default();
    // The frame record names the payload itself (link type "raw", never decoded from it).
    let frame = frame_of(payload, ts_ns, number, None, 0)?;
    let mut packet = Packet { data: payload, ..Packet::default() };
    match roce_parser::parse_udp_payload(payload, &cfg) {
        Ok((roce, problems)) => {
            packet.roce = Some(roce);
            packet.problems = problems;
        }
        Err(e) => packet.stop = Some(e),
    }
    let d = Decoded { frame, packet: Ok(packet) };
    document(py, &d, &mut Vec::new())
}

/// A Python file object (anything with `read(n)` returning bytes) as a `Read`.
struct PyFile(Py<PyAny>);

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let got = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let got = got.bind(py);
            let bytes = got.cast::<PyBytes>().map_err(|_| {
                std::io::Error::other("the file's read() did not return bytes (open it with 'rb')")
            })?;
            let b = bytes.as_bytes();
            let n = b.len().min(buf.len());
            buf[..n].copy_from_slice(&b[..n]);
            Ok(n)
        })
    }
}

/// Opens a path (str or os.PathLike) or a binary file object as a capture.
pub(crate) fn open(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<(Capture, String)> {
    if source.hasattr("read")? && !source.is_instance_of::<PyString>() {
        let name = source
            .getattr("name")
            .ok()
            .and_then(|n| n.extract::<String>().ok())
            .unwrap_or_else(|| "<file>".to_string());
        let cap = Capture::from_reader(&name, PyFile(source.clone().unbind()))
            .map_err(|e| crate::capture_error(py, &e))?;
        return Ok((cap, name));
    }
    let path = path_of(py, source)?;
    let name = path.display().to_string();
    if path.is_dir() {
        return Err(crate::open_error(py, &name, "is a directory, not a capture".into()));
    }
    let cap = roce_capture::open(&path).map_err(|e| crate::capture_error(py, &e))?;
    Ok((cap, name))
}

/// `os.fspath(source)` as a path.
pub(crate) fn path_of(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<std::path::PathBuf> {
    let p = py.import("os")?.call_method1("fspath", (source,)).map_err(|_| {
        crate::OptionError::new_err(format!(
            "expected a path (str or os.PathLike) or a binary file object, got {}",
            source.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    p.extract::<std::path::PathBuf>()
}

/// Warns (Python's `warnings`, category `CaptureWarning`) of damage after the first frame.
pub(crate) fn warn(py: Python<'_>, msg: &str) -> PyResult<()> {
    let cat = py.get_type::<CaptureWarning>();
    let msg = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
    PyErr::warn(py, &cat, &msg, 1)
}

/// `read()`'s iterator: each frame (that the filter keeps) as a frame document.
#[pyclass(unsendable, module = "roce_inspect._native")]
pub struct Reader {
    cap: Option<Capture>,
    cfg: Config,
    filter: Option<DisplayFilter>,
    warnings: Warnings,
    /// Every warning given, as text (`Reader.warnings`).
    given: Vec<String>,
    buf: Vec<u8>,
    name: String,
}

#[pymethods]
impl Reader {
    #[new]
    #[pyo3(signature = (source, **options))]
    fn new(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let o = options::parse(Takes::Frames, options)?;
        let (cap, name) = open(py, source)?;
        Ok(Reader {
            cap: Some(cap),
            cfg: o.cfg,
            filter: o.filter,
            warnings: Warnings::default(),
            given: Vec::new(),
            buf: Vec::with_capacity(4096),
            name,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        loop {
            let Some(cap) = self.cap.as_mut() else { return Ok(None) };
            match cap.next_frame() {
                None => {
                    self.cap = None;
                    let omitted: Vec<String> =
                        self.warnings.omitted().map(|o| o.to_string()).collect();
                    for w in omitted {
                        warn(py, &w)?;
                        self.given.push(w);
                    }
                    return Ok(None);
                }
                Some(Ok(frame)) => {
                    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                    decode_into(&mut d, &self.cfg);
                    if self.filter.as_ref().is_some_and(|f| !f.matches(&d)) {
                        continue;
                    }
                    return document(py, &d, &mut self.buf).map(Some);
                }
                Some(Err(e)) => {
                    if e.nothing_read() && e.is_fatal() {
                        self.cap = None;
                        return Err(crate::capture_error(py, &e));
                    }
                    if let Some(e) = self.warnings.add(e) {
                        let text = e.to_string();
                        warn(py, &text)?;
                        self.given.push(text);
                    }
                }
            }
        }
    }

    /// The capture's name (its path, or the file object's `name`).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The warnings given so far (damage after the first frame), as text.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.given.clone()
    }
}
