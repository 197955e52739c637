//! The v1 JSON documents of `stats` and `check` (the project's docs/json.md, schemas in
//! docs/schema/) as serde types, so that the command line, a Python binding or any other
//! caller writes the same members, in the same order, from the same code. The members only
//! a command line has (the `-c`/`--frames` window, the display filter's selection, the NIC
//! counters' reconciliation) are the caller's: a document carries them as `extra`, written
//! after the library's members (`()` writes none).
//!
//! ```
//! use roce_analysis::{Pass, Stats, StatsDocument};
//! use roce_conformance::{Options, Shard};
//! use roce_parser::Config;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
//! let cap = roce_capture::open(std::path::Path::new(path))?;
//! let cfg = Config::default();
//! let mut stats = Stats::new(Options::default().model());
//! let summary = Pass::new(&cfg).run(cap, |d| {
//!     stats.frame(Shard::ALL, d);
//! })?;
//! let (connections, not_listed) = stats.connections();
//! let doc = StatsDocument::new(&stats, connections, not_listed, &summary, ());
//! let json = serde_json::to_value(&doc).unwrap();
//! assert_eq!(json["schema"], "roce-inspect/stats/v1");
//! assert_eq!(json["frames"], 39);
//! # Ok::<(), roce_capture::CaptureError>(())
//! ```

use std::collections::BTreeMap;

use roce_conformance::internal::timing::congestion::CnpScopesJson;
use roce_conformance::{CmExchange, ConnectionReport, Finding, Report, RuleCount};
use serde::Serialize;

use crate::frame::{ReadSummary, UndecodedGroup};
use crate::stats::{Connection, Stats, TunnelCount};

/// The `schema` of the `stats --format json` document.
pub const SCHEMA_STATS: &str = roce_conformance::internal::json::SCHEMA_STATS;
/// The `schema` of the `check --format json` document.
pub const SCHEMA_CHECK: &str = roce_conformance::internal::json::SCHEMA_CHECK;
/// The `schema` member of a frame document (`dissect --format json|jsonl`, [`crate::write_frame_json`]).
pub const SCHEMA_FRAME: &str = roce_conformance::internal::json::SCHEMA_FRAME;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `stats --format json` (`roce-inspect/stats/v1`): totals, ICRC verdicts, opcodes,
/// problems, the connection incarnations with their counters, timers and congestion, the
/// CM exchanges, CNP pacing across connections and the capture's warnings; then `extra`.
#[derive(Debug, Serialize)]
pub struct StatsDocument<'a, E: Serialize = ()> {
    /// Always [`SCHEMA_STATS`].
    pub schema: &'static str,
    /// Frames read.
    pub frames: u64,
    /// RoCE frames (v1 and v2).
    pub roce_frames: u64,
    /// RoCEv2 frames.
    pub rocev2_frames: u64,
    /// RoCEv1 frames.
    pub rocev1_frames: u64,
    /// Native InfiniBand frames, not counted in `roce_frames` (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_frames: u64,
    /// Native InfiniBand frames without a GRH, left out of the connection model: their
    /// endpoints are LIDs, which it does not key by (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_unmodelled: u64,
    /// Frames no network layer was decoded from.
    pub undecoded_frames: u64,
    /// The undecoded frames by reason and link type (absent when every frame was decoded).
    #[serde(skip_serializing_if = "<[UndecodedGroup]>::is_empty")]
    pub undecoded: &'a [UndecodedGroup],
    /// Frames that arrived in tunnels (switch mirrors, overlays), per encapsulation, with
    /// their mirror sessions or VNIs (absent for a capture taken on the hosts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tunnels: Vec<TunnelCount>,
    /// RoCE and native InfiniBand frames by ICRC verdict.
    pub icrc: IcrcCounts,
    /// Frames per opcode name.
    pub opcodes: BTreeMap<&'static str, u64>,
    /// Frames with each problem, in the problems' order.
    pub problems: Vec<ProblemCount>,
    /// From the first frame's time to the last's, ns.
    pub duration_ns: u64,
    /// The connection incarnations listed, the busiest first.
    pub connections: Vec<Connection>,
    /// Incarnations counted but not listed (beyond the cap).
    #[serde(skip_serializing_if = "is_zero")]
    pub connections_not_listed: u64,
    /// The CM exchanges the model logged.
    pub cm_connections: &'a [CmExchange],
    /// CNP pacing per IP pair and per destination IP, across connections.
    pub congestion: CnpScopesJson,
    /// The capture's warnings.
    pub warnings: &'a [String],
    /// Several captures read as one: the taps, their copies, latency and drops (absent for
    /// one capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taps: Option<&'a crate::TapsReport>,
    /// The caller's members, written last (`()`: none).
    #[serde(flatten)]
    pub extra: E,
}

/// RoCE frames by ICRC verdict.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IcrcCounts {
    /// Verified.
    pub ok: u64,
    /// Wrong.
    pub bad: u64,
    /// Not verifiable (a frame cut short by the snap length).
    pub unverifiable: u64,
    /// Not checked (verification off).
    pub not_checked: u64,
}

/// Frames with one problem.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ProblemCount {
    /// The problem's stable code.
    pub code: &'static str,
    /// What it means.
    pub message: &'static str,
    /// Frames with it.
    pub frames: u64,
}

impl<'a, E: Serialize> StatsDocument<'a, E> {
    /// The document of a finished `stats` pass: `connections` and `not_listed` are what
    /// [`Stats::connections`] returned (the caller may have kept some of them only: a
    /// filter), `summary` what the pass read.
    pub fn new(
        stats: &'a Stats,
        connections: Vec<Connection>,
        not_listed: u64,
        summary: &'a ReadSummary,
        extra: E,
    ) -> Self {
        let c = &stats.counters;
        StatsDocument {
            schema: SCHEMA_STATS,
            frames: c.frames,
            roce_frames: c.roce_frames(),
            rocev2_frames: c.roce_v2,
            rocev1_frames: c.roce_v1,
            infiniband_frames: c.infiniband,
            infiniband_unmodelled: c.ib_unmodelled,
            undecoded_frames: c.undecoded,
            undecoded: &summary.undecoded,
            tunnels: c.tunnels.per_kind(),
            icrc: IcrcCounts {
                ok: c.icrc[0],
                bad: c.icrc[1],
                unverifiable: c.icrc[2],
                not_checked: c.icrc[3],
            },
            opcodes: c.opcode_histogram().into_iter().collect(),
            problems: c
                .problem_counts()
                .into_iter()
                .map(|(p, n)| ProblemCount { code: p.code(), message: p.message(), frames: n })
                .collect(),
            duration_ns: c.duration_ns(),
            connections,
            connections_not_listed: not_listed,
            cm_connections: stats.cm_exchanges(),
            congestion: c.cnp_scopes(),
            warnings: &summary.warnings,
            taps: summary.taps.as_ref(),
            extra,
        }
    }
}

/// `check --format json` (`roce-inspect/check/v1`): the findings, their summary, the
/// connection incarnations judged, the capture's warnings and undecoded frames; then
/// `extra`.
#[derive(Debug, Serialize)]
pub struct CheckDocument<'a, E: Serialize = ()> {
    /// Always [`SCHEMA_CHECK`].
    pub schema: &'static str,
    /// The findings, in the order of the frames that proved them.
    pub findings: &'a [Finding],
    /// Counts.
    pub summary: CheckSummary<'a>,
    /// The connection incarnations judged.
    pub connections: &'a [ConnectionReport],
    /// Incarnations judged but not listed (beyond the cap).
    #[serde(skip_serializing_if = "is_zero")]
    pub connections_not_listed: u64,
    /// The capture's warnings (absent when none).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub capture_warnings: &'a [String],
    /// Frames not decoded, by reason and link type (absent when every frame was decoded).
    #[serde(skip_serializing_if = "<[UndecodedGroup]>::is_empty")]
    pub undecoded: &'a [UndecodedGroup],
    /// Several captures read as one: the taps, their copies, latency and drops (absent for
    /// one capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taps: Option<&'a crate::TapsReport>,
    /// The caller's members, written last (`()`: none).
    #[serde(flatten)]
    pub extra: E,
}

/// The counts of a `check` document.
#[derive(Debug, Serialize)]
pub struct CheckSummary<'a> {
    /// Frames read.
    pub frames: u64,
    /// RoCE frames.
    pub roce_frames: u64,
    /// Native InfiniBand frames (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_frames: u64,
    /// Native InfiniBand frames without a GRH, not judged: their endpoints are LIDs, which
    /// the connection model does not key by (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub infiniband_unmodelled: u64,
    /// Error-severity findings.
    pub errors: u64,
    /// Warning-severity findings.
    pub warnings: u64,
    /// Findings beyond the per-rule limit, counted but not listed.
    pub suppressed: u64,
    /// Findings per rule that fired, listed or not, in catalog order.
    pub by_rule: &'a [RuleCount],
}

impl<'a, E: Serialize> CheckDocument<'a, E> {
    /// The document of a checker's report and what the pass read.
    pub fn new(report: &'a Report, summary: &'a ReadSummary, extra: E) -> Self {
        CheckDocument {
            schema: SCHEMA_CHECK,
            findings: &report.findings,
            summary: CheckSummary {
                frames: report.frames,
                roce_frames: report.roce_frames,
                infiniband_frames: report.ib_frames,
                infiniband_unmodelled: report.ib_unmodelled,
                errors: report.errors,
                warnings: report.warnings,
                suppressed: report.suppressed,
                by_rule: &report.by_rule,
            },
            connections: &report.connections,
            connections_not_listed: report.connections_not_listed,
            capture_warnings: &summary.warnings,
            undecoded: &summary.undecoded,
            taps: summary.taps.as_ref(),
            extra,
        }
    }
}
