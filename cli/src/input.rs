//! The frame loop every command shares: open the capture, hand each frame's packet to the
//! command, show progress on a terminal, and turn capture damage into warnings (frames read
//! before it are kept; the first 20 of each kind printed, the rest counted) or, when nothing
//! could be read, into exit code 2.

use std::fmt;
use std::fs::File;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
pub use roce_analysis::{
    count_undecoded, decode, decode_into, Decoded, ReadSummary, Undecoded, UndecodedGroup,
    UNSUPPORTED_LINK_TYPE,
};
use roce_analysis::{Pass, TapStep};
use roce_parser::Config;

use roce_capture::Capture;

pub use crate::tshark::Window;

/// What a command reads: where its frames come from ([`Source`]), and which of them it
/// reads (`-c`, `--frames`: [`Window`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub source: Source,
    /// The frames outside the window are as if the capture did not hold them (`stats`,
    /// `check`, `export`, `report`, `graph`; `dissect` keeps its window in its filter).
    pub window: Window,
    /// Several files ([`Source::Files`]): how their copies are matched and their clocks set.
    pub taps: TapSetup,
}

/// How several captures are read as one (`--tap-window`, `--tap-offset`).
pub use roce_analysis::TapSetup;

/// Where frames come from: a capture file (`-` for stdin) or, with the `live` feature, a
/// network interface (`-i IFACE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A capture file, or `-` for stdin.
    File(PathBuf),
    /// Several capture files (taps) read as one, in time order, the copies of a packet seen
    /// at several of them counted once (roce_analysis::run_merged).
    Files(Vec<PathBuf>),
    /// A capture file still being written (`check --follow`): read until SIGINT or SIGTERM,
    /// waiting at its end for more.
    Follow(PathBuf),
    /// A network interface, captured through libpcap until `-a` or SIGINT stops it.
    #[cfg(feature = "live")]
    Interface(crate::live::LiveOptions),
}

impl Input {
    /// Every frame of `source`.
    pub fn new(source: Source) -> Input {
        Input { source, window: Window::default(), taps: TapSetup::default() }
    }

    /// The files, when several are read as one.
    pub fn files(&self) -> Option<&[PathBuf]> {
        match &self.source {
            Source::Files(f) => Some(f),
            _ => None,
        }
    }

    /// The capture file, if the input is one (`-` included).
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::File(p) => Some(p),
            Source::Follow(_) | Source::Files(_) => None,
            #[cfg(feature = "live")]
            Source::Interface(_) => None,
        }
    }

    /// The file for a command that reads its input twice (`check --annotate`, `report`),
    /// or why it cannot: `what` names the option.
    pub fn twice(&self, what: &str) -> Result<&Path, InputError> {
        match self.path() {
            Some(p) if p != Path::new("-") => Ok(p),
            _ => Err(InputError(format!(
                "{what} reads the capture a second time: give a file, not {}",
                match &self.source {
                    Source::File(_) => "'-' (stdin)".to_string(),
                    Source::Files(f) => format!("{} files", f.len()),
                    Source::Follow(_) => "one followed as it grows (--follow)".to_string(),
                    #[cfg(feature = "live")]
                    Source::Interface(_) => format!("a live interface ({self})"),
                }
            ))),
        }
    }

    /// Whether frames arrive as they happen (stdin, an interface): read once, and the
    /// output is flushed as it is made.
    pub fn is_stream(&self) -> bool {
        if self.files().is_some() {
            return false;
        }
        self.path().is_none_or(|p| p == Path::new("-"))
    }

    /// Opens the capture. For an interface, the libpcap capture starts now, on its own
    /// thread, and its frames reach the returned reader as a pcap stream (one reader for
    /// files and interfaces: the same damage checks and frame numbering).
    pub fn open(&self) -> Result<Capture, InputError> {
        match &self.source {
            Source::File(p) => roce_capture::open(p).map_err(|e| InputError(e.to_string())),
            Source::Files(f) => Err(InputError(format!(
                "{} files: read them with for_each_frame (the merged pass)",
                f.len()
            ))),
            Source::Follow(p) => crate::follow::open(p),
            #[cfg(feature = "live")]
            Source::Interface(o) => crate::live::start(o),
        }
    }

    /// [`Input::open`], with a copy of every byte the capture reads kept for a second reader
    /// ([`crate::tap`]): a capture read once, stdin and interfaces included, and its records
    /// copied byte for byte (`dissect -w`).
    pub fn open_tapped(&self) -> Result<(Capture, crate::tap::Tap), InputError> {
        let (name, raw, total): (String, Box<dyn Read + Send>, Option<u64>) = match &self.source {
            Source::File(p) if p == Path::new("-") => {
                ("-".into(), Box::new(std::io::stdin()), None)
            }
            Source::File(p) => {
                let name = p.display().to_string();
                let file = File::open(p).map_err(|e| InputError(format!("{name}: {e}")))?;
                let meta = file.metadata().map_err(|e| InputError(format!("{name}: {e}")))?;
                (name, Box::new(file), meta.is_file().then_some(meta.len()))
            }
            Source::Follow(p) => {
                let (name, r) = crate::follow::stream(p)?;
                (name, Box::new(r), None)
            }
            Source::Files(f) => {
                return Err(InputError(format!("{} files: give one capture here", f.len())))
            }
            #[cfg(feature = "live")]
            Source::Interface(o) => {
                let (name, r) = crate::live::stream(o)?;
                (name, Box::new(r), None)
            }
        };
        let (tee, tap) = crate::tap::tee(raw);
        let cap = Capture::from_reader_with_len(&name, tee, total)
            .map_err(|e| InputError(e.to_string()))?;
        Ok((cap, tap))
    }
}

impl From<&Path> for Input {
    fn from(p: &Path) -> Input {
        Input::new(Source::File(p.to_path_buf()))
    }
}

/// The file's name as given, or `interface NAME`: the first word of reports.
impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::File(p) | Source::Follow(p) => write!(f, "{}", p.display()),
            Source::Files(files) => {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                write!(f, "{}", names.join(" + "))
            }
            #[cfg(feature = "live")]
            Source::Interface(o) => write!(f, "interface {}", o.interface),
        }
    }
}

/// One warning per group of frames roce-capture could not hand to the parser (an
/// unsupported link type, link headers cut short), not one per frame.
pub fn warn_undecoded(groups: &[UndecodedGroup]) {
    for g in groups.iter().filter(|g| g.is_link()) {
        warn(g);
    }
}

/// Why a command could not read its input (exit code 2).
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads every frame of `input` ("-" for stdin) and calls `f` with it, decoded. Damage after
/// the first frame is reported on stderr and reading goes on where the format allows; an
/// unreadable file or damage before any frame is an `InputError`.
pub fn for_each_frame(
    input: &Input,
    cfg: &Config,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    for_each_frame_until(input, cfg, None, f)
}

/// [`for_each_frame`] that stops reading after frame number `last` (`dissect --frames 1-10`,
/// `-c 10`): the rest of the capture is not read at all.
pub fn for_each_frame_until(
    input: &Input,
    cfg: &Config,
    last: Option<u64>,
    mut f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    if input.files().is_some() {
        return for_each_step(input, cfg, last, |step| {
            if let TapStep::Frame(d) = step {
                f(d)
            }
            None
        });
    }
    let cap = input.open()?;
    read_frames(cap, &input.window, cfg, last, f)
}

/// [`for_each_frame_until`] for a command that also takes what only several captures give:
/// the copies (not for the model) and the packets lost between taps. For one capture every
/// frame is a [`TapStep::Frame`].
pub fn for_each_step(
    input: &Input,
    cfg: &Config,
    last: Option<u64>,
    mut f: impl FnMut(TapStep<'_, '_, '_>) -> Option<roce_conformance::ConnId>,
) -> Result<ReadSummary, InputError> {
    let Some(files) = input.files() else {
        let cap = input.open()?;
        return read_frames(cap, &input.window, cfg, last, |d| {
            f(TapStep::Frame(d));
        });
    };
    let (merge, infos) = crate::taps::open(files, &input.taps, cfg)?;
    with_pass(merge.bytes_total(), &input.window, cfg, last, |pass| {
        roce_analysis::run_open_taps(pass, merge, infos, &input.taps, f)
    })
}

/// The pass over the frames of `window` up to `last` ([`roce_analysis::Pass`]), with a
/// progress bar on a terminal (for `total` bytes) and the warnings on stderr, handed to
/// `run`: the one place the command line sets a pass up, for one capture or several.
fn with_pass(
    total: Option<u64>,
    window: &Window,
    cfg: &Config,
    last: Option<u64>,
    run: impl FnOnce(Pass<'_>) -> Result<ReadSummary, roce_capture::CaptureError>,
) -> Result<ReadSummary, InputError> {
    let last = window.last_or(last);
    let progress = progress_bar(total);
    let contains = |n: u64| window.contains(n);
    let mut warn_on = |w: &dyn fmt::Display| warn(w);
    let mut tick = |bytes: u64| {
        if let Some(pb) = &progress {
            pb.set_position(bytes);
        }
    };
    let pass = Pass::new(cfg).frames(&contains, last).on_warning(&mut warn_on);
    let pass = if progress.is_some() { pass.on_progress(&mut tick) } else { pass };
    let read = run(pass);
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    read.map_err(|e| InputError(e.to_string()))
}

/// The frame loop of [`for_each_frame_until`] over a capture already open: the frames of
/// `window` up to `last` ([`roce_analysis::Pass`]), with a progress bar on a terminal and the
/// warnings on stderr.
pub(crate) fn read_frames(
    cap: impl roce_capture::ReadFrames,
    window: &Window,
    cfg: &Config,
    last: Option<u64>,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    with_pass(cap.bytes_total(), window, cfg, last, |pass| pass.run(cap, f))
}

fn warn(e: &dyn fmt::Display) {
    crate::output::warning(e);
}

/// A byte-based progress bar on stderr, only when stderr is a terminal and the input is a
/// file large enough to be worth it.
pub(crate) fn progress_bar(total: Option<u64>) -> Option<ProgressBar> {
    let total = total?;
    if total < 64 << 20 || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.enable_steady_tick(Duration::from_millis(200));
    Some(pb)
}
