//! Several captures read as one (`stats A B`, `check 'taps/*.pcap'`): the files opened, their
//! clock offsets given or estimated, the merge built (roce_capture::Merge); the options
//! `--tap-window` and `--tap-offset`; the text of the taps' figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roce_analysis::{estimate_offsets, CitedFrame, TapInfo, TapsReport};
use roce_capture::{Capture, Merge};
use roce_parser::Config;

use crate::input::{InputError, TapSetup};

/// Opens every file, settles each one's clock offset (given with `--tap-offset`, else
/// estimated from the copies it shares with the first file) and builds the merge.
pub fn open(
    files: &[PathBuf],
    setup: &TapSetup,
    cfg: &Config,
) -> Result<(Merge, Vec<TapInfo>), InputError> {
    if files.len() > roce_analysis::MAX_TAPS {
        return Err(InputError(format!(
            "{} files: at most {} captures are read as one",
            files.len(),
            roce_analysis::MAX_TAPS
        )));
    }
    let open_all = || -> Result<Vec<Capture>, InputError> {
        files
            .iter()
            .map(|p| {
                if p == Path::new("-") {
                    return Err(InputError(
                        "'-' (stdin) cannot be one of several captures: each is read twice \
                         (its clock offset is estimated first)"
                            .into(),
                    ));
                }
                roce_capture::open(p).map_err(|e| InputError(e.to_string()))
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

/// The merge of a pass over `files` again, with the clock offsets that pass used (its
/// report's): the same frames in the same order under the same numbers, without estimating
/// the offsets a second time.
pub fn reopen(files: &[PathBuf], report: &TapsReport) -> Result<Merge, InputError> {
    let offsets: Vec<i64> = report.taps.iter().map(|t| t.info.offset_ns).collect();
    let caps = files
        .iter()
        .map(|p| roce_capture::open(p).map_err(|e| InputError(e.to_string())))
        .collect::<Result<Vec<Capture>, InputError>>()?;
    Ok(Merge::new(caps, &offsets))
}

/// Fills `report.frames_cited` with the tap and the number there of each frame of `wanted`
/// (merged numbers, as findings cite them): the files read again ([`reopen`]) up to the last
/// frame wanted, records only (nothing decoded). Memory: the frames wanted.
pub fn cite(
    files: &[PathBuf],
    report: &mut TapsReport,
    wanted: impl IntoIterator<Item = u64>,
) -> Result<(), InputError> {
    let mut want: Vec<u64> = wanted.into_iter().collect();
    want.sort_unstable();
    want.dedup();
    let Some(&last) = want.last() else { return Ok(()) };
    let mut merge = reopen(files, report)?;
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

/// `--tap-offset` resolved to each file (by its 1-based place or its name as given).
fn given_offsets(files: &[PathBuf], setup: &TapSetup) -> Result<Vec<Option<i64>>, InputError> {
    let mut out = vec![None; files.len()];
    for (which, ns) in &setup.offsets {
        let at = match which.parse::<usize>() {
            Ok(k) if (1..=files.len()).contains(&k) => k - 1,
            Ok(k) => {
                return Err(InputError(format!(
                    "--tap-offset {which}=...: there is no file {k} among the {} given",
                    files.len()
                )))
            }
            Err(_) => files.iter().position(|p| p == Path::new(which)).ok_or_else(|| {
                InputError(format!(
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

/// `--tap-offset FILE=TIME`: FILE its place (1-based) or name, TIME a signed number with a
/// unit (ns, us, ms, s; ns when none).
pub fn parse_offset(s: &str) -> Result<(String, i64), String> {
    let (file, time) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("'{s}': expected FILE=TIME, e.g. 2=-1.5ms or b.pcap=300us"))?;
    if file.is_empty() {
        return Err(format!("'{s}': FILE is missing before '='"));
    }
    Ok((file.to_string(), parse_signed_ns(time)?))
}

/// `--tap-window TIME` (a unit as `--tap-offset`'s; positive).
pub fn parse_window(s: &str) -> Result<u64, String> {
    match parse_signed_ns(s)? {
        n if n > 0 => Ok(n.unsigned_abs()),
        _ => Err(format!("'{s}': the window must be longer than 0")),
    }
}

fn parse_signed_ns(s: &str) -> Result<i64, String> {
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
