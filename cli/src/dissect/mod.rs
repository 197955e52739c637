//! `roce-inspect dissect`: every frame, as a summary line, a field tree, or JSON.

pub mod json;
pub mod write;

use std::io::{self, BufWriter, Write};
use std::path::Path;

use roce_parser::Config;

use crate::input::{for_each_frame_until, Decoded, InputError};
use crate::tshark::FrameSelection;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per frame (with -V: the full field tree).
    Text,
    /// One JSON array of frame objects.
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// Which frames to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only RoCE frames whose DestQP is this (or, for UD, whose DETH SrcQP is).
    pub qp: Option<u32>,
    /// Only RoCE frames with this opcode.
    pub opcode: Option<u8>,
    /// Only these frames (`--frames 1-10,15,20-`).
    pub frames: Option<FrameSelection>,
    /// Read at most this many frames (`-c N`, as tshark).
    pub count: Option<u64>,
    /// `-Y EXPR` / `--conn` (crate::filter): with `--qp` and `--opcode`, all must hold.
    pub expr: Option<crate::filter::DisplayFilter>,
}

impl Filter {
    /// The last frame that can be shown: reading stops after it.
    fn last_frame(&self) -> Option<u64> {
        let selected = self.frames.as_ref().and_then(FrameSelection::last);
        match (selected, self.count) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn keeps(&self, d: &Decoded<'_>) -> bool {
        if let Some(r) = &self.frames {
            if !r.contains(d.frame.number) {
                return false;
            }
        }
        if self.expr.as_ref().is_some_and(|e| !e.matches(d)) {
            return false;
        }
        if self.qp.is_none() && self.opcode.is_none() {
            return true;
        }
        let Some(roce) = d.packet.as_ref().ok().and_then(|p| p.roce) else {
            return false;
        };
        if let Some(qp) = self.qp {
            let src = roce.headers.deth.map(|d| d.src_qp);
            if roce.bth.dest_qp != qp && src != Some(qp) {
                return false;
            }
        }
        self.opcode.is_none_or(|op| op == roce.bth.opcode)
    }
}

pub struct Options {
    pub format: Format,
    pub verbose: bool,
    pub filter: Filter,
    pub config: Config,
    /// Colour (bad ICRCs in the summary line).
    pub paint: crate::style::Paint,
    /// Flush after every frame (`-l`, or stdout a pipe).
    pub line_flush: bool,
    /// `-t`: the time column.
    pub time: crate::tshark::TimeFormat,
    /// `-x`: each frame's bytes in hex and ASCII after its text, as tshark.
    pub hex: bool,
    /// `-w FILE`: the kept frames also saved as a capture (`-`: to stdout, instead of text).
    pub write: Option<std::path::PathBuf>,
}

/// The summary line's ICRC word, in the error colour when it is bad.
fn paint_bad_icrc(line: &mut String, paint: crate::style::Paint) {
    const BAD: &str = " ICRC bad";
    if !paint.is_on() {
        return;
    }
    if let Some(i) = line.find(BAD) {
        let coloured = format!(" {}", paint.bad("ICRC bad"));
        line.replace_range(i..i + BAD.len(), &coloured);
    }
}

/// Runs the command, writing to stdout.
pub fn run(path: &Path, opts: &Options) -> Result<(), InputError> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut line = String::with_capacity(256);
    let mut json_buf: Vec<u8> = Vec::with_capacity(1024);
    let mut clock = crate::tshark::Clock::default();
    let mut time = String::with_capacity(32);
    let mut first = true;
    let mut io_err: Option<io::Error> = None;
    let mut writer = match &opts.write {
        Some(name) => Some(write::Writer::create(path, name).map_err(InputError)?),
        None => None,
    };
    let text = !writer.as_ref().is_some_and(write::Writer::to_stdout);
    let mut write_err: Option<String> = None;
    // The JSON array opens with its first frame (or at the end): when the capture cannot be
    // read, nothing is written before the error.
    for_each_frame_until(path, &opts.config, opts.filter.last_frame(), |d| {
        clock.read(d.frame.ts_ns);
        if io_err.is_some() || write_err.is_some() || !opts.filter.keeps(d) {
            return;
        }
        if let Some(w) = writer.as_mut() {
            if let Err(e) = w.frame(d.frame.number) {
                write_err = Some(e);
                return;
            }
        }
        if !text {
            return;
        }
        let res = match opts.format {
            Format::Text if opts.verbose => crate::text::tree(d, &mut out).and_then(|()| {
                line.clear();
                if opts.hex {
                    crate::tshark::hex_dump(d.frame.data, &mut line);
                }
                out.write_all(line.as_bytes())
            }),
            Format::Text => {
                time.clear();
                clock.write(opts.time, d.frame.ts_ns, &mut time);
                crate::text::summary_line(d, &time, &mut line);
                paint_bad_icrc(&mut line, opts.paint);
                line.push('\n');
                if opts.hex {
                    crate::tshark::hex_dump(d.frame.data, &mut line);
                }
                out.write_all(line.as_bytes())
            }
            Format::Jsonl => {
                json_buf.clear();
                json::write_frame(&mut json_buf, d);
                json_buf.push(b'\n');
                out.write_all(&json_buf)
            }
            Format::Json => {
                json_buf.clear();
                json_buf.extend_from_slice(if first { b"[\n" } else { b",\n" });
                first = false;
                json::write_frame(&mut json_buf, d);
                out.write_all(&json_buf)
            }
        };
        let res = if opts.line_flush { res.and_then(|()| out.flush()) } else { res };
        if let Err(e) = res {
            io_err = Some(e);
        }
    })?;
    // The frames saved so far stay saved (flushed) whatever stopped the writing.
    if let Some(w) = writer {
        let finished = w.finish();
        if let Some(e) = write_err.or(finished.err()) {
            return Err(InputError(e));
        }
    }
    if !text {
        return Ok(());
    }
    if opts.format == Format::Json && io_err.is_none() {
        let end: &[u8] = if first { b"[\n]\n" } else { b"\n]\n" };
        if let Err(e) = out.write_all(end) {
            io_err = Some(e);
        }
    }
    let flushed = out.flush();
    // A closed pipe (`| head`) is not an error worth a message.
    crate::output::written(io_err.map_or(flushed, Err))
}
