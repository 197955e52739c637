//! Several captures read as one (`stats A B`, `check 'taps/*.pcap'`): the files opened, their
//! clock offsets given or estimated, the merge built (roce_capture::Merge); the options
//! `--tap-window` and `--tap-offset`; the text of the taps' figures.

use std::fmt::Write as _;
use std::path::PathBuf;

use roce_analysis::{TapInfo, TapsReport};
use roce_capture::Merge;
use roce_parser::Config;

use crate::input::{InputError, TapSetup};

/// Opens every file, settles each one's clock offset (given with `--tap-offset`, else
/// estimated from the copies it shares with the first file) and builds the merge
/// ([`roce_analysis::open_taps`]).
pub fn open(
    files: &[PathBuf],
    setup: &TapSetup,
    cfg: &Config,
) -> Result<(Merge, Vec<TapInfo>), InputError> {
    roce_analysis::open_taps(files, setup, cfg).map_err(|e| InputError(e.to_string()))
}

/// Fills `report.frames_cited` with the tap and the number there of each frame of `wanted`
/// ([`roce_analysis::cite_frames`]).
pub fn cite(
    files: &[PathBuf],
    report: &mut TapsReport,
    wanted: impl IntoIterator<Item = u64>,
) -> Result<(), InputError> {
    roce_analysis::cite_frames(files, report, wanted).map_err(|e| InputError(e.to_string()))
}

/// The merge of a pass over `files` again, with the offsets it used
/// ([`roce_analysis::reopen_taps`]).
pub fn reopen(files: &[PathBuf], report: &TapsReport) -> Result<Merge, InputError> {
    roce_analysis::reopen_taps(files, report).map_err(|e| InputError(e.to_string()))
}

/// A frame number as text names it: over several taps, with its file and its number there
/// when the pass cited it ([`cite`]): `39 (a.pcap:20)`.
pub fn frame_name(taps: Option<&TapsReport>, n: u64) -> String {
    let cited = taps.and_then(|r| {
        let i = r.frames_cited.binary_search_by_key(&n, |c| c.frame).ok()?;
        let c = r.frames_cited.get(i)?;
        Some((r.taps.get(c.tap as usize)?.info.file.as_str(), c.source_frame))
    });
    match cited {
        Some((file, k)) => format!("{n} ({file}:{k})"),
        None => n.to_string(),
    }
}

/// `--tap-offset FILE=TIME` ([`roce_analysis::parse_tap_offset`]).
pub fn parse_offset(s: &str) -> Result<(String, i64), String> {
    roce_analysis::parse_tap_offset(s)
}

/// `--tap-window TIME` ([`roce_analysis::parse_tap_window`]).
pub fn parse_window(s: &str) -> Result<u64, String> {
    roce_analysis::parse_tap_window(s)
}

/// Expands the FILE arguments: an argument naming no file and holding `*`, `?` or `[` is a
/// glob pattern (quoted, so the shell left it), replaced by the files it matches in name
/// order; a pattern matching nothing is an error.
pub fn expand(args: Vec<PathBuf>) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let s = a.to_string_lossy();
        if a.exists() || !s.contains(['*', '?', '[']) {
            out.push(a);
            continue;
        }
        let paths = glob::glob(&s).map_err(|e| InputError(format!("{s}: {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
        if found.is_empty() {
            return Err(InputError(format!("{s}: no file matches")));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// The taps' section of `stats` and `check` text.
pub fn write_text(t: &mut String, r: &TapsReport) {
    let _ = writeln!(
        t,
        "Taps ({} files read as one; frames numbered in time order across them; copies \
         within {} us counted once)",
        r.taps.len(),
        r.window_ns as f64 / 1e3
    );
    for (i, tap) in r.taps.iter().enumerate() {
        let offset = match tap.info.offset_from {
            "reference" => "clock: the reference".to_string(),
            "given" => format!("clock {:+} ns (given)", tap.info.offset_ns),
            "estimated" => format!(
                "clock {:+} ns (estimated from {} copies)",
                tap.info.offset_ns, tap.info.offset_copies
            ),
            _ => "clock not estimated (no copy of the first file's packets)".to_string(),
        };
        let _ = writeln!(
            t,
            "  tap {}  {}  {} frames, {} first seen here, {} copies; {offset}",
            i + 1,
            tap.info.file,
            tap.counts.frames,
            tap.counts.first,
            tap.counts.copies
        );
    }
    for p in &r.pairs {
        let _ = write!(t, "  tap {} -> tap {}: {} copies", p.from + 1, p.to + 1, p.copies);
        if let Some(l) = p.latency_ns {
            let _ =
                write!(t, ", one-way latency p50 {} ns, p99 {} ns, max {} ns", l.p50, l.p99, l.max);
        }
        if p.drops > 0 {
            let _ = write!(t, "; {} packet(s) lost between them", p.drops);
        }
        t.push('\n');
    }
    if r.drops > 0 {
        let _ = writeln!(t, "  {} packet(s) lost between taps (CAP-DROP-BETWEEN)", r.drops);
    }
    if r.unconfirmed > 0 {
        let _ = writeln!(
            t,
            "  {} packet(s) missing at a tap that saw no later packet of their connection: not judged",
            r.unconfirmed
        );
    }
}
