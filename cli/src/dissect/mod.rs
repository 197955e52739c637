//! `roce-inspect dissect`: every frame, as a summary line, a field tree, or JSON (each
//! frame's object written by `roce_analysis::write_frame_json`).

pub mod fields;
mod threads;
pub mod write;

use std::io::{self, BufWriter, Write};
use std::path::Path;

use roce_parser::Config;

use roce_analysis::{FrameSource, TapStep};

use crate::input::{for_each_step, read_frames, Decoded, Input, InputError};
use crate::tshark::Window;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per frame (with -V: the full field tree).
    Text,
    /// One JSON array of frame objects.
    Json,
    /// One JSON object per line.
    Jsonl,
    /// The values of the `-e` fields, one line per frame (tshark -T fields).
    Fields,
}

/// Which frames to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only RoCE frames whose DestQP is this (or, for UD, whose DETH SrcQP is).
    pub qp: Option<u32>,
    /// Only RoCE frames with this opcode.
    pub opcode: Option<u8>,
    /// `--frames 1-10,15,20-` and `-c N`: only these frames are shown (reading stops after
    /// the last; the frames before it are read, for `-t r` and `-t d`).
    pub window: Window,
    /// `-Y EXPR` / `--conn` (crate::filter): with `--qp` and `--opcode`, all must hold.
    pub expr: Option<crate::filter::DisplayFilter>,
}

impl Filter {
    /// The last frame that can be shown: reading stops after it.
    fn last_frame(&self) -> Option<u64> {
        self.window.last()
    }

    fn keeps(&self, d: &Decoded<'_>) -> bool {
        if !self.window.contains(d.frame.number) {
            return false;
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
    /// `-w FILE`: the kept frames saved as a capture (`-`: to stdout), instead of the text.
    pub write: Option<std::path::PathBuf>,
    /// `-P` with `-w FILE`: the text too, as tshark -P.
    pub print: bool,
    /// `--threads N` (1: the single-thread path).
    pub threads: crate::threads::Threads,
    /// `-T fields -e ...`: the columns (with `Format::Fields`).
    pub fields: Option<fields::Fields>,
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

/// Reused buffers for formatting frames.
#[derive(Default)]
struct Scratch {
    line: String,
    json: Vec<u8>,
    time: String,
}

/// Writes one kept frame in `opts`' format to `out`; `first` says whether it opens the JSON
/// array (and is cleared). `clock` has read the frame already.
fn write_frame(
    d: &Decoded<'_>,
    source: Option<FrameSource<'_>>,
    opts: &Options,
    clock: &mut crate::tshark::Clock,
    s: &mut Scratch,
    first: &mut bool,
    out: &mut impl Write,
) -> io::Result<()> {
    match opts.format {
        Format::Text if opts.verbose => {
            if let Some(src) = source {
                s.line.clear();
                source_text(d, src, &mut s.line);
                writeln!(out, "Frame {}: from{}", d.frame.number, s.line)?;
            }
            crate::text::tree(d, &mut *out)
        }
        .and_then(|()| {
            s.line.clear();
            if opts.hex {
                crate::tshark::hex_dump(d.frame.data, &mut s.line);
            }
            out.write_all(s.line.as_bytes())
        }),
        Format::Text => {
            s.time.clear();
            clock.write(opts.time, d.frame.ts_ns, &mut s.time);
            crate::text::summary_line(d, &s.time, &mut s.line);
            if let Some(src) = source {
                // After the merge's number: `file:frame` (and a copy's first sighting).
                let at = s.line.len() - s.line.trim_start().len();
                let at = at + s.line[at..].find(' ').unwrap_or(0);
                let mut label = String::new();
                source_text(d, src, &mut label);
                s.line.insert_str(at, &label);
            }
            paint_bad_icrc(&mut s.line, opts.paint);
            s.line.push('\n');
            if opts.hex {
                crate::tshark::hex_dump(d.frame.data, &mut s.line);
            }
            out.write_all(s.line.as_bytes())
        }
        Format::Jsonl => {
            s.json.clear();
            frame_json(&mut s.json, d, source);
            s.json.push(b'\n');
            out.write_all(&s.json)
        }
        Format::Json => {
            s.json.clear();
            s.json.extend_from_slice(if *first { b"[\n" } else { b",\n" });
            *first = false;
            frame_json(&mut s.json, d, source);
            out.write_all(&s.json)
        }
        Format::Fields => {
            s.line.clear();
            if let Some(f) = &opts.fields {
                if std::mem::take(first) {
                    f.header(&mut s.line);
                }
                f.line(d, source, &mut s.line);
            }
            out.write_all(s.line.as_bytes())
        }
    }
}

/// One frame's JSON object, with its `source` when several captures are read as one.
fn frame_json(out: &mut Vec<u8>, d: &Decoded<'_>, source: Option<FrameSource<'_>>) {
    match source {
        Some(src) => roce_analysis::write_frame_json_from(out, d, src),
        None => roce_analysis::write_frame_json(out, d),
    }
}

/// ` FILE:FRAME` (the frame's file and its number there), and ` (copy of N)` for a copy of
/// a packet another tap saw first (N its number in the merge).
fn source_text(d: &Decoded<'_>, src: FrameSource<'_>, line: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(line, " {}:{}", src.file, d.frame.source_number);
    if let Some(n) = src.copy_of {
        let _ = write!(line, " (copy of {n})");
    }
}

/// What opens the output, written before the first frame's (or at the end when there is
/// none): the `-T fields -E header=y` line.
fn opening(opts: &Options) -> String {
    let mut s = String::new();
    if let (Format::Fields, Some(f)) = (opts.format, &opts.fields) {
        f.header(&mut s);
    }
    s
}

/// The end of the output: the JSON array's close (opening it when no frame was written).
fn write_end(opts: &Options, first: bool, out: &mut impl Write) -> io::Result<()> {
    if opts.format == Format::Fields && first {
        return out.write_all(opening(opts).as_bytes());
    }
    if opts.format != Format::Json {
        return Ok(());
    }
    out.write_all(if first { b"[\n]\n" } else { b"\n]\n" })
}

/// Runs the command, writing to stdout: on `opts.threads` threads (`dissect::threads`) unless
/// that is one, or the frames are also saved (`-w`), or each frame is flushed as it is read
/// (`-l`, a live capture on stdin), where batches would hold frames back.
pub fn run(input: &Input, opts: &Options) -> Result<(), InputError> {
    if let Some(files) = input.files() {
        return run_taps(input, files, opts);
    }
    if !opts.threads.is_one() && opts.write.is_none() && !opts.line_flush {
        return threads::run(input, opts);
    }
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut scratch = Scratch::default();
    let mut clock = crate::tshark::Clock::default();
    let mut first = true;
    let mut io_err: Option<io::Error> = None;
    // `-w`: the capture is read once, its bytes tapped for the record copier (write.rs).
    let (cap, mut writer) = match &opts.write {
        Some(name) => {
            let (cap, tap) = input.open_tapped()?;
            let read = input.path().unwrap_or(Path::new(""));
            (cap, Some(write::Writer::create(tap, name, read).map_err(InputError)?))
        }
        None => (input.open()?, None),
    };
    let text = writer.is_none() || opts.print;
    let mut write_err: Option<String> = None;
    // The JSON array opens with its first frame (or at the end): when the capture cannot be
    // read, nothing is written before the error.
    let last = opts.filter.last_frame();
    read_frames(cap, &input.window, &opts.config, last, |d| {
        clock.read(d.frame.ts_ns);
        if io_err.is_some() || write_err.is_some() {
            return;
        }
        let keep = opts.filter.keeps(d);
        if let Some(w) = writer.as_mut() {
            // `-w - | head`: stdout is closed, nothing more can be written.
            if w.closed() {
                return;
            }
            if let Err(e) = w.pass(d.frame.number, keep) {
                write_err = Some(e);
                return;
            }
        }
        if !text || !keep {
            return;
        }
        let res = write_frame(d, None, opts, &mut clock, &mut scratch, &mut first, &mut out);
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
    end_text(opts, first, io_err, &mut out)
}

/// Closes the text output (the JSON array's end) and flushes it; the first write error, if
/// any, is the outcome. A closed pipe (`| head`) is not an error worth a message.
fn end_text(
    opts: &Options,
    first: bool,
    mut io_err: Option<io::Error>,
    out: &mut impl Write,
) -> Result<(), InputError> {
    if io_err.is_none() {
        if let Err(e) = write_end(opts, first, out) {
            io_err = Some(e);
        }
    }
    let flushed = out.flush();
    crate::output::written(io_err.map_or(flushed, Err))
}

/// [`run`] over several captures read as one, in time order (docs/taps.md): every frame of
/// every file is shown, numbered in the merge, with its file and its number there; a copy of
/// a packet another tap saw first says which frame it copies. One thread. `-w` writes the
/// frames kept as one pcapng ([`write::MergedWriter`]).
fn run_taps(input: &Input, files: &[std::path::PathBuf], opts: &Options) -> Result<(), InputError> {
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let mut writer = match &opts.write {
        Some(name) => Some(write::MergedWriter::create(name, files).map_err(InputError)?),
        None => None,
    };
    let text = writer.is_none() || opts.print;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut scratch = Scratch::default();
    let mut clock = crate::tshark::Clock::default();
    let mut first = true;
    let mut io_err: Option<io::Error> = None;
    let last = opts.filter.last_frame();
    for_each_step(input, &opts.config, last, |step| {
        let (d, copy_of) = match step {
            TapStep::Frame(d) => (d, None),
            TapStep::Copy(d, of) => (d, Some(of)),
            TapStep::Drop(_) => return None,
        };
        clock.read(d.frame.ts_ns);
        if io_err.is_some() || !opts.filter.keeps(d) {
            return None;
        }
        if let Some(w) = writer.as_mut() {
            w.frame(d, copy_of);
        }
        if !text {
            return None;
        }
        let file = names.get(d.frame.source as usize).map_or("?", String::as_str);
        let source = Some(FrameSource { file, copy_of });
        let res = write_frame(d, source, opts, &mut clock, &mut scratch, &mut first, &mut out);
        let res = if opts.line_flush { res.and_then(|()| out.flush()) } else { res };
        if let Err(e) = res {
            io_err = Some(e);
        }
        None
    })?;
    // The frames saved so far stay saved (flushed) whatever stopped the writing.
    if let Some(w) = writer {
        w.finish().map_err(InputError)?;
    }
    if !text {
        return Ok(());
    }
    end_text(opts, first, io_err, &mut out)
}
