//! roce-analysis: one pass over a RoCE capture, as a library.
//!
//! A capture is read once and each frame decoded once; the frame record ([`Decoded`]) goes
//! to the consumers the caller chose, in capture order. The connection model is fed once per
//! packet: the [`roce_conformance::Checker`] owns it, and a consumer that keeps state per
//! connection (counters, a graph's series, rows) keeps it in the model's slot for each flow
//! (`Checker<X>`, `Checker::ext_mut`), handed back when the incarnation ends
//! (`Checker::take_ended`). So whether a packet is a request, a response to which stream,
//! which connection and incarnation it belongs to, is decided once for every consumer.
//!
//! ```text
//!  capture bytes ─ roce_capture::Capture::next_frame ─► Frame (number, time, link type)
//!                                                          │ decode (roce_parser, from L2Start)
//!                                                          ▼
//!                                      Decoded { frame, packet | Undecoded }   (Pass::run)
//!                                                          │
//!             Checker<X>::feed ── connection model (Connections::observe: flow, peer,
//!                    │            incarnation, Seen::Request / Response / Cm) ── rules
//!                    │                      │                                     │
//!       X in each flow's slot: counters,    │                               findings
//!       series, rows (ext_mut)              ▼                                     │
//!                    └──────── incarnation ends: take_ended ─► lists, graphs, rows ─► render
//! ```
//!
//! Here today: the pass, the frame record, the model's step ([`feed`], which makes the
//! [`PacketEvent`] every consumer reads: flow, incarnation, retransmitted, ECN-CE, CNP,
//! each decided once), the v1 documents of `stats` and `check` ([`StatsDocument`],
//! [`CheckDocument`]), `stats`' counters ([`Stats`], [`Counters`]) and the rows of
//! `export`'s tables ([`rows`]: the packets, connections and findings tables' columns, held
//! column by column), and the field catalog ([`FIELDS`], [`find_field`]: every decoded
//! field's JSON path, `-V` label, filter name and reader, Parquet column and tshark names,
//! which the display filter reads and the tests hold the other renderers to), the display
//! filter of `-Y EXPR` and `--conn` ([`filter`]: [`filter::DisplayFilter`], parsed once and
//! matched on each frame, and the connections a filter selects, [`filter::Selection`]), the
//! JSON object of one frame that `dissect --format json|jsonl` writes ([`write_frame_json`],
//! by hand for speed, its extended headers' objects made by the catalog from its rows, as
//! their `-V` lines are ([`write_ext_header_tree`]), its CM object through serde), and the report's series ([`series`]:
//! what a flow's time–sequence graph draws, its request points, ACK line and marks,
//! decimated and bounded, its counts and bytes over time), written against `Checker<X>` the
//! same way; the report's collector that drives them and its page stay in the command line
//! crate, as do the command line's options (see the project's CONTRIBUTING.md, "The pass").
//!
//! ```
//! use roce_analysis::Pass;
//! use roce_conformance::{Checker, FrameInfo, Options};
//! use roce_parser::Config;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
//! let cap = roce_capture::open(std::path::Path::new(path))?;
//! let cfg = Config::default();
//! let mut checker = Checker::new(Options::default());
//! Pass::new(&cfg).run(cap, |d| {
//!     let f = &d.frame;
//!     let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
//!     match &d.packet {
//!         Ok(p) => checker.feed(&info, p),
//!         Err(_) => checker.feed_undecoded(&info),
//!     }
//! })?;
//! let report = checker.finish();
//! assert_eq!(report.errors, 0);
//! # Ok::<(), roce_capture::CaptureError>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

mod bins;
mod cm_json;
mod diagnose;
mod documents;
mod event;
mod fields;
pub mod filter;
mod frame;
mod frame_json;
mod pass;
pub mod rows;
pub mod series;
mod stats;
mod tap_files;
mod taps;

pub use diagnose::{
    ConnectionDiagnosis, DiagnoseDocument, Diagnosis, Evidence, Failure, Finished, FlowEvidence,
    Measured, SetupDiagnosis, Severity, Timeline, Verdict, VerdictKind, ASSUMED_RETRY_COUNT,
    DEFAULT_CASCADE_WINDOW_NS, SCHEMA_DIAGNOSE, TIMELINE_LISTED, VERDICTS,
};
pub use documents::{
    CheckDocument, CheckSummary, IcrcCounts, ProblemCount, StatsDocument, SCHEMA_CHECK,
    SCHEMA_FRAME, SCHEMA_STATS,
};
pub use event::{feed, feed_packet, PacketEvent};
pub use fields::{
    find_field, write_ext_header_tree, FieldGet, FieldInfo, FieldKind, FieldValue, FilterField,
    FIELDS, FILTER_FIELDS,
};
pub use frame::{
    count_undecoded, decode, decode_into, Decoded, ReadSummary, Undecoded, UndecodedGroup,
    UNSUPPORTED_LINK_TYPE,
};
pub use frame_json::{write_frame_json, write_frame_json_from, FrameSource};
pub use pass::{Pass, WarningSink, PROGRESS_EVERY};
pub use stats::{
    Connection, Counters, Direction, FlowStats, IdCount, NakCounts, SlotOf, Stats, TunnelCount,
    TunnelCounts, NIC_HOSTS_MAX, NIC_HOSTS_SHOWN, TUNNEL_IDS_MAX,
};
pub use tap_files::{
    cite_frames, open_taps, parse_tap_offset, parse_tap_window, parse_time_ns, reopen_taps,
    run_open_taps, run_taps, TapSetup, TapsError,
};
pub use taps::{
    estimate_offsets, run_merged, CitedFrame, ConnectionPair, ConnectionTaps, Latency,
    OffsetEstimate, PairReport, TapCount, TapDrop, TapFrame, TapInfo, TapOptions, TapReport,
    TapStep, TapVerdict, Taps, TapsReport, CONNECTIONS_LISTED, MAX_TAPS, OFFSET_SAMPLE,
};
