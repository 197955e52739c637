//! The second, light pass: where the frames the findings cite are (time, flow, PSN, opcode),
//! so each finding is marked on its connection's graph. Only cited frames of graphed
//! connections are decoded, reading stops after the last; memory is bounded by the findings
//! the checker keeps.

use std::collections::BTreeMap;
use std::path::Path;

use roce_conformance::{ConnId, FlowKey};
use roce_parser::Config;

use super::collect::Graph;
use crate::input::{decode, InputError};

/// A cited frame as found.
#[derive(Debug, Clone, Copy)]
pub struct Located {
    pub ts: u64,
    /// The RoCE flow and PSN, when the frame is RoCE.
    pub flow: Option<(FlowKey, u32, &'static str)>,
}

/// Where the cited frames of findings on graphed connections are.
pub fn locate(
    path: &Path,
    cfg: &Config,
    findings: &[roce_conformance::Finding],
    graphs: &[Graph],
) -> Result<BTreeMap<u64, Located>, InputError> {
    let graphed: std::collections::HashSet<ConnId> =
        graphs.iter().map(|g| g.info.connection).collect();
    let mut want: BTreeMap<u64, Option<Located>> = BTreeMap::new();
    for f in findings {
        if f.connection.is_some_and(|c| graphed.contains(&c)) {
            for &n in &f.frames {
                want.insert(n, None);
            }
        }
    }
    if want.is_empty() {
        return Ok(BTreeMap::new());
    }
    let last = want.keys().next_back().copied().unwrap_or(0);
    // Read directly, quietly: the first pass reported the capture's damage already. Only the
    // cited frames are decoded, and reading stops after the last one.
    let mut cap = roce_capture::open(path).map_err(|e| InputError(e.to_string()))?;
    while let Some(next) = cap.next_frame() {
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
        let d = decode(frame, cfg);
        let flow = d.packet.as_ref().ok().and_then(|p| {
            let r = p.roce.as_ref()?;
            Some((FlowKey::of(p, r), r.bth.psn, r.opcode_name()))
        });
        *slot = Some(Located { ts: d.frame.ts_ns, flow });
    }
    Ok(want.into_iter().filter_map(|(n, l)| Some((n, l?))).collect())
}
