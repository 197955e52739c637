//! Several capture files opened as one pass: the files checked, each one's clock offset
//! given or estimated ([`estimate_offsets`]), the merge built, and the whole pass over it
//! ([`run_taps`]); the text forms of the options (`2=-1.5ms`, `300us`).
//!
//! Why here and not in the command line: a binding (Python's `stats([a, b])`), a test bench
//! or a C program reads several taps as the command line does, with the same offsets, the
//! same matching and the same report; only the file list and the progress bar are theirs.

use std::fmt;
use std::path::{Path, PathBuf};

use roce_capture::{Capture, CaptureError, Merge};
use roce_conformance::ConnId;
use roce_parser::Config;

use crate::taps::{
    estimate_offsets, run_merged, CitedFrame, TapInfo, TapOptions, TapStep, Taps, TapsReport,
    MAX_TAPS,
};
use crate::{Pass, ReadSummary};

/// How several captures are read as one (`--tap-window`, `--tap-offset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapSetup {
    /// A copy at another tap within this many nanoseconds of the first sighting.
    pub window_ns: u64,
    /// Clock offsets given, by file (its 1-based place in the list, or its name as given):
    /// nanoseconds added to its timestamps. The others are estimated from the copies.
    pub offsets: Vec<(String, i64)>,
}

impl Default for TapSetup {
    fn default() -> Self {
        TapSetup { window_ns: TapOptions::default().window_ns, offsets: Vec::new() }
    }
}

/// Why several captures cannot be read as one.
#[derive(Debug)]
pub enum TapsError {
    /// A file could not be opened or read (the error names it).
    Capture(CaptureError),
    /// The files or the options given cannot be read as one (the message says why).
    Setup(String),
}

impl fmt::Display for TapsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TapsError::Capture(e) => e.fmt(f),
            TapsError::Setup(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for TapsError {}

impl From<CaptureError> for TapsError {
    fn from(e: CaptureError) -> Self {
        TapsError::Capture(e)
    }
}

/// Opens every file, settles each one's clock offset (given in `setup`, else estimated from
/// the copies it shares with the first file) and builds the merge. Each file is opened twice
/// when an offset is estimated (the estimate reads the start of each), so none may be `-`.
pub fn open_taps(
    files: &[PathBuf],
    setup: &TapSetup,
    cfg: &Config,
) -> Result<(Merge, Vec<TapInfo>), TapsError> {
    if files.len() > MAX_TAPS {
        return Err(TapsError::Setup(format!(
            "{} files: at most {MAX_TAPS} captures are read as one",
            files.len()
        )));
    }
    let open_all = || -> Result<Vec<Capture>, TapsError> {
        files
            .iter()
            .map(|p| {
                if p == Path::new("-") {
                    return Err(TapsError::Setup(
                        "'-' (stdin) cannot be one of several captures: each is read twice \
                         (its clock offset is estimated first)"
                            .into(),
                    ));
                }
                Ok(roce_capture::open(p)?)
            })
            .collect()
    };
    let given = given_offsets(files, setup)?;
    let caps = open_all()?;
    let estimated = if given.iter().skip(1).all(Option::is_some) {
        vec![None; files.len()]
    } else {
        estimate_offsets(open_all()?, cfg)
    };
    let base = given.first().copied().flatten().unwrap_or(0);
    let mut infos = Vec::with_capacity(files.len());
    let mut offsets = Vec::with_capacity(files.len());
    for (i, p) in files.iter().enumerate() {
        let file = p.display().to_string();
        let (offset_ns, offset_from, offset_copies) = match (given.get(i).copied().flatten(), i) {
            (Some(o), _) => (o, "given", 0),
            (None, 0) => (0, "reference", 0),
            (None, _) => match estimated.get(i).copied().flatten() {
                Some(e) => (e.offset_ns.saturating_add(base), "estimated", e.copies),
                None => (base, "none", 0),
            },
        };
        offsets.push(offset_ns);
        infos.push(TapInfo { file, offset_ns, offset_from, offset_copies });
    }
    Ok((Merge::new(caps, &offsets), infos))
}

/// The setup's offsets resolved to each file (by its 1-based place or its name as given).
fn given_offsets(files: &[PathBuf], setup: &TapSetup) -> Result<Vec<Option<i64>>, TapsError> {
    let mut out = vec![None; files.len()];
    for (which, ns) in &setup.offsets {
        let at = match which.parse::<usize>() {
            Ok(k) if (1..=files.len()).contains(&k) => k - 1,
            Ok(k) => {
                return Err(TapsError::Setup(format!(
                    "--tap-offset {which}=...: there is no file {k} among the {} given",
                    files.len()
                )))
            }
            Err(_) => files.iter().position(|p| p == Path::new(which)).ok_or_else(|| {
                TapsError::Setup(format!(
                    "--tap-offset {which}=...: {which} is not one of the files given"
                ))
            })?,
        };
        if let Some(slot) = out.get_mut(at) {
            *slot = Some(*ns);
        }
    }
    Ok(out)
}

/// The whole pass over several captures: [`open_taps`], then `pass` over the merge with
/// each step handed to `consume` ([`run_merged`]), the summary's `taps` filled
/// ([`Taps::report`]). `consume` returns, for a [`TapStep::Frame`] it fed to a model, the
/// connection the model put it in.
pub fn run_taps(
    pass: Pass<'_>,
    files: &[PathBuf],
    setup: &TapSetup,
    consume: impl FnMut(TapStep<'_, '_, '_>) -> Option<ConnId>,
) -> Result<ReadSummary, TapsError> {
    let (merge, infos) = open_taps(files, setup, pass.config())?;
    Ok(run_open_taps(pass, merge, infos, setup, consume)?)
}

/// [`run_taps`] over taps already open ([`open_taps`]: a caller that wants the merge's size
/// first, for a progress bar, opens them itself).
pub fn run_open_taps(
    pass: Pass<'_>,
    merge: Merge,
    infos: Vec<TapInfo>,
    setup: &TapSetup,
    consume: impl FnMut(TapStep<'_, '_, '_>) -> Option<ConnId>,
) -> Result<ReadSummary, CaptureError> {
    let opts = TapOptions { window_ns: setup.window_ns, ..TapOptions::default() };
    let mut taps = Taps::new(infos.len(), opts);
    let mut summary = run_merged(pass, merge, &mut taps, consume)?;
    summary.taps = Some(taps.report(infos));
    Ok(summary)
}

/// The merge of a pass over `files` again, with the clock offsets that pass used (its
/// report's): the same frames in the same order under the same numbers, without estimating
/// the offsets a second time.
pub fn reopen_taps(files: &[PathBuf], report: &TapsReport) -> Result<Merge, TapsError> {
    let offsets: Vec<i64> = report.taps.iter().map(|t| t.info.offset_ns).collect();
    let caps = files.iter().map(|p| roce_capture::open(p)).collect::<Result<Vec<Capture>, _>>()?;
    Ok(Merge::new(caps, &offsets))
}

/// Fills `report.frames_cited` with the tap and the number there of each frame of `wanted`
/// (merged numbers, as findings cite them): the files read again ([`reopen_taps`]) up to
/// the last frame wanted, records only (nothing decoded). Memory: the frames wanted.
pub fn cite_frames(
    files: &[PathBuf],
    report: &mut TapsReport,
    wanted: impl IntoIterator<Item = u64>,
) -> Result<(), TapsError> {
    let mut want: Vec<u64> = wanted.into_iter().collect();
    want.sort_unstable();
    want.dedup();
    let Some(&last) = want.last() else { return Ok(()) };
    let mut merge = reopen_taps(files, report)?;
    let mut out = Vec::with_capacity(want.len());
    let mut at = 0;
    // Quietly: the pass reported the files' damage already.
    while let Some(next) = merge.next_frame() {
        let f = match next {
            Ok(f) => f,
            Err(e) if e.is_fatal() => break,
            Err(_) => continue,
        };
        if f.number > last {
            break;
        }
        while want.get(at).is_some_and(|&w| w < f.number) {
            at += 1;
        }
        if want.get(at) == Some(&f.number) {
            out.push(CitedFrame { frame: f.number, tap: f.source, source_frame: f.source_number });
            at += 1;
        }
    }
    report.frames_cited = out;
    Ok(())
}

/// `--tap-offset FILE=TIME`: FILE its place (1-based) or name, TIME a signed number with a
/// unit (ns, us, ms, s; ns when none).
pub fn parse_tap_offset(s: &str) -> Result<(String, i64), String> {
    let (file, time) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("'{s}': expected FILE=TIME, e.g. 2=-1.5ms or b.pcap=300us"))?;
    if file.is_empty() {
        return Err(format!("'{s}': FILE is missing before '='"));
    }
    Ok((file.to_string(), parse_time_ns(time)?))
}

/// `--tap-window TIME` (a unit as [`parse_tap_offset`]'s; positive).
pub fn parse_tap_window(s: &str) -> Result<u64, String> {
    match parse_time_ns(s)? {
        n if n > 0 => Ok(n.unsigned_abs()),
        _ => Err(format!("'{s}': the window must be longer than 0")),
    }
}

/// A signed time with a unit (ns, us, ms, s; ns when none), in nanoseconds.
pub fn parse_time_ns(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or((t, 1.0));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': not a time (a number with ns, us, ms or s)"))?;
    let ns = (v * scale).round();
    if !ns.is_finite() || ns.abs() > 9.0e18 {
        return Err(format!("'{s}': out of range"));
    }
    Ok(ns as i64)
}
