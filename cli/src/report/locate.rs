//! The second, light pass: where the frames the findings cite are (time, flow, PSN, opcode,
//! and over several taps the file and frame number each came from), so each finding is
//! marked on its connection's graph and named in the findings table. Only cited frames are
//! decoded, reading stops after the last; memory is bounded by the findings the checker
//! keeps. Several taps are merged again as the first pass merged them (the same files, the
//! offsets it used: crate::taps::reopen), so the merged numbers agree.

use std::collections::BTreeMap;

use roce_capture::ReadFrames;
use roce_conformance::{ConnId, FlowKey};

use super::collect::Graph;
use super::Reading;
use crate::input::{decode, InputError};

/// A cited frame as found.
#[derive(Debug, Clone, Copy)]
pub struct Located {
    pub ts: u64,
    /// The RoCE flow and PSN, when the frame is RoCE.
    pub flow: Option<(FlowKey, u32, &'static str)>,
    /// Several taps: the tap (an index into the files) and the frame's number in its file.
    pub source: Option<(u32, u64)>,
}

/// Which findings' frames to place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cited {
    /// Those of findings on the graphed connections (their marks).
    Graphed,
    /// Every finding's (several taps: the table names each frame's file).
    All,
}

/// Where the cited frames of findings (`which`) are.
pub fn locate(
    r: &Reading<'_>,
    taps: Option<&roce_analysis::TapsReport>,
    findings: &[roce_conformance::Finding],
    graphs: &[Graph],
    which: Cited,
) -> Result<BTreeMap<u64, Located>, InputError> {
    let graphed: std::collections::HashSet<ConnId> =
        graphs.iter().map(|g| g.info.connection).collect();
    let mut want: BTreeMap<u64, Option<Located>> = BTreeMap::new();
    for f in findings {
        if which == Cited::All || f.connection.is_some_and(|c| graphed.contains(&c)) {
            for &n in &f.frames {
                want.insert(n, None);
            }
        }
    }
    if want.is_empty() {
        return Ok(BTreeMap::new());
    }
    // Several files: the merge again, with the offsets the pass used (its taps report,
    // which every merged pass has).
    match (r.input.files(), taps) {
        (Some(files), Some(taps)) => {
            let merge = crate::taps::reopen(files, taps)?;
            scan(merge, r, &mut want, true);
        }
        (Some(_), None) => {}
        (None, _) => {
            let path = r.file("report")?;
            let cap = roce_capture::open(path).map_err(|e| InputError(e.to_string()))?;
            scan(cap, r, &mut want, false);
        }
    }
    Ok(want.into_iter().filter_map(|(n, l)| Some((n, l?))).collect())
}

/// Reads `frames` up to the last wanted one, directly and quietly: the first pass reported
/// the capture's damage already.
fn scan(
    mut frames: impl ReadFrames,
    r: &Reading<'_>,
    want: &mut BTreeMap<u64, Option<Located>>,
    merged: bool,
) {
    let last = want.keys().next_back().copied().unwrap_or(0);
    while let Some(next) = frames.next_frame() {
        let frame = match next {
            Ok(f) => f,
            Err(e) if e.is_fatal() => break,
            Err(_) => continue,
        };
        let n = frame.number;
        if n > last {
            break;
        }
        let Some(slot) = want.get_mut(&n) else { continue };
        let source = merged.then_some((frame.source, frame.source_number));
        let d = decode(frame, r.cfg);
        let flow = d.packet.as_ref().ok().and_then(|p| {
            let roce = p.roce.as_ref()?;
            Some((FlowKey::of(p, roce), roce.bth.psn, roce.opcode_name()))
        });
        *slot = Some(Located { ts: d.frame.ts_ns, flow, source });
    }
}
