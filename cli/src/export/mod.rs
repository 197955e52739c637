//! `roce-inspect export FILE -o DIR`: the capture as three Parquet tables for DuckDB, Spark,
//! Trino or pandas (docs/parquet.md): `packets.parquet` (one row per frame), and the
//! checker's report, `connections.parquet` (one row per connection incarnation, with
//! `stats`' counters) and `findings.parquet`.
//!
//! Why Parquet: past one machine, users' tools are columnar (Zeek, Zui, Tenzir and
//! pcap-to-Parquet converters all land packets there); a fabric-wide question (which QPs NAK
//! most, CNP rates per destination) is one SQL query over the exports of many captures or
//! of many `--shard K/N` runs. The schema is a contract like the JSON one: each table is one
//! declarative column list of roce-analysis ([`rows::PACKET_COLUMNS`],
//! [`rows::CONNECTION_COLUMNS`], [`rows::FINDING_COLUMNS`]), which also builds the rows, and
//! docs/parquet.md is generated from them. This module writes them as files.
//!
//! Memory: row groups of `table::ROW_GROUP` rows are written as they fill, and the checker
//! is bounded by `--max-flows`. A Parquet writer keeps each row group's metadata until the
//! footer, so `packets.parquet` holds at most [`ROWS_PER_FILE`] rows (`--rows-per-file`) and
//! the frames after them go on in `packets-000001.parquet`, `packets-000002.parquet`, ...:
//! nothing grows with the capture's length (an endless or bomb input included).
//!
//! `--raw` adds the columns of [`rows::RAW_COLUMNS`] to the packets table (each frame's
//! bytes, its link type, its host pair's hash), for a consumer that replays the frames, such
//! as a checker per host pair in Spark; without it the files are as they were. A row group
//! then also holds its frames' bytes: memory is bounded by `table::ROW_GROUP` frames per row
//! group, and at most 2 row groups exist (the writer's), 8 with threads when the reader
//! builds the rows (`RowsAhead`).

mod chunk;
mod table;

use std::path::{Path, PathBuf};

use roce_analysis::rows::{self, ConnectionRow};
use roce_conformance::internal::hash::FastHashMap;
use roce_conformance::{Checker, ConnId, Options, Shard};
use roce_parser::Config;

use roce_analysis::TapStep;

use crate::input::{warn_undecoded, Input, InputError};
use crate::outfile::{Dash, OutFile, OutSet};
use crate::stats::{Connection, Counters, FlowStats};
use table::TableWriter;

pub use roce_analysis::rows::PacketRow;

/// The file names in the output directory.
pub const PACKETS: &str = "packets.parquet";
pub const CONNECTIONS: &str = "connections.parquet";
pub const FINDINGS: &str = "findings.parquet";

/// The most rows of `packets.parquet` (and of each part after it) by default: 1,024 row
/// groups, some 250 MiB of a real capture, and some 30 MiB of row group metadata held until
/// the footer.
pub const ROWS_PER_FILE: u64 = 1024 * table::ROW_GROUP as u64;

/// The name of part `k` of the packets table (0: `packets.parquet`).
pub fn packets_part(k: usize) -> String {
    if k == 0 {
        PACKETS.to_string()
    } else {
        format!("packets-{k:06}.parquet")
    }
}

/// What the packets table holds beside its rows, and how it is split into files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketFiles {
    /// The most rows of each file (`--rows-per-file`).
    pub rows_per_file: u64,
    /// Whether each row also holds its frame's bytes, link type and host pair's hash
    /// (`--raw`: [`rows::RAW_COLUMNS`]).
    pub raw: bool,
}

/// What `export` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub packets: u64,
    /// Files of the packets table (`packets.parquet` and its parts).
    pub packet_files: usize,
    pub connections: u64,
    pub findings: u64,
    /// Error-severity findings (the exit status, as `check`'s).
    pub errors: u64,
}

/// Exports `input` into the directory `dir` (created when missing): the frames of `shard`,
/// checked with `opts`, and counted as `stats` counts them (connections.parquet's counters),
/// the packets table laid out as `packets` says.
pub fn run(
    input: &Input,
    dir: &Path,
    cfg: &Config,
    opts: Options,
    scope: crate::stats::Scope<'_>,
    packets: PacketFiles,
) -> Result<Written, InputError> {
    let crate::stats::Scope { shard, threads, filter } = scope;
    let fail = |msg: String| InputError(format!("-o {}: {msg}", dir.display()));
    if dir == Path::new("-") {
        return Err(fail(
            "export writes a folder of three tables, not one stream; give a directory".into(),
        ));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(fail("is not a directory; -o takes a directory".into()));
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    let res = export(input, dir, cfg, opts, (shard, threads, filter), packets);
    // A failed export into a folder it made leaves no empty folder behind (an existing one,
    // and the tables it held, are as they were: the new tables were staged).
    if res.is_err() && created {
        let _ = std::fs::remove_dir(dir);
    }
    res
}

/// [`run`] into the directory `dir`, which exists.
fn export(
    input: &Input,
    dir: &Path,
    cfg: &Config,
    opts: Options,
    (shard, threads, filter): (
        Shard,
        crate::threads::Threads,
        Option<&crate::filter::DisplayFilter>,
    ),
    PacketFiles { rows_per_file, raw }: PacketFiles,
) -> Result<Written, InputError> {
    // Every table is opened before the capture is read: one that is an input (`export
    // d/packets.parquet -o d`) is refused before anything is written.
    let reads: Vec<&Path> = match input.files() {
        Some(files) => files.iter().map(PathBuf::as_path).collect(),
        None => vec![input.path().unwrap_or(Path::new(""))],
    };
    let open = |name: &str| OutFile::create("-o", &dir.join(name), &reads, Dash::Refused);
    let (packets_file, conns_file, finds_file) =
        (open(PACKETS)?, open(CONNECTIONS)?, open(FINDINGS)?);
    let groups =
        usize::try_from(rows_per_file.div_ceil(table::ROW_GROUP as u64)).unwrap_or(usize::MAX);
    let part_dir = dir.to_path_buf();
    let part_inputs: Vec<PathBuf> = reads.iter().map(|p| p.to_path_buf()).collect();
    // Several captures read as one: each row also says where its frame comes from.
    let names = crate::check::tap_names(input);
    let merged = input.files().is_some();
    let columns = rows::packet_columns_of(raw, merged);
    let mut out = TableWriter::create(packets_file, "packets", columns, rows::PACKET_UNIQUE)?
        .rolling(groups, move |k| {
            let inputs: Vec<&Path> = part_inputs.iter().map(PathBuf::as_path).collect();
            OutFile::create("-o", &part_dir.join(packets_part(k)), &inputs, Dash::Refused)
        });
    // More than one thread: one encodes the row groups of packets.parquet while the next
    // one fills, and one reads the capture ahead (its copy from the page cache is kernel
    // time the frame loop no longer waits for); the frame loop is the bottleneck
    // (BENCHMARKS.md, "Export: the encoder thread").
    if !threads.is_one() {
        out = out.on_encoder_thread()?;
    }
    let mut pass = FrameLoop {
        shard,
        raw,
        stats: Counters::new(opts.max_flows),
        checker: Checker::with(opts),
        selection: filter.map(crate::filter::Selection::new),
        out,
        failed: None,
    };
    let summary = if merged {
        pass.merged(input, cfg, filter, &names)?
    } else {
        pass.plain(input, cfg, threads)?
    }
    .of_shard(shard);
    let FrameLoop { mut checker, mut stats, selection, out, failed, .. } = pass;
    if let Some(e) = failed {
        return Err(e);
    }
    warn_undecoded(&summary.undecoded);
    let mut tables = OutSet::default();
    let (packets, files) = out.finish()?;
    let packet_files = files.len();
    files.into_iter().for_each(|f| tables.push(f));
    checker.end_all();
    stats.settle(&mut checker);
    let (counted, _) = stats.connections(checker.cm_exchanges());
    let mut report = checker.finish();
    if let Some(sel) = &selection {
        sel.retain(&mut report);
    }
    let counts: FastHashMap<ConnId, &Connection> =
        counted.iter().map(|c| (c.info.connection, c)).collect();
    let mut conns = TableWriter::create(conns_file, "connections", rows::CONNECTION_COLUMNS, &[])?;
    for c in &report.connections {
        let row = ConnectionRow { report: c, counts: counts.get(&c.info.connection).copied() };
        conns.row(|cells| rows::write_connection(&row, cells))?;
    }
    let (connections, files) = conns.finish()?;
    files.into_iter().for_each(|f| tables.push(f));
    let mut finds = TableWriter::create(finds_file, "findings", rows::FINDING_COLUMNS, &[])?;
    for f in &report.findings {
        finds.row(|cells| rows::write_finding(f, cells))?;
    }
    let (findings, files) = finds.finish()?;
    files.into_iter().for_each(|f| tables.push(f));
    // The tables appear together, each complete; then a previous export's packet parts
    // beyond this one's go, or a query over `packets*.parquet` would count them too.
    tables.commit()?;
    remove_stale_parts(dir, packet_files);
    Ok(Written { packets, packet_files, connections, findings, errors: report.errors })
}

/// The frame loop's state: the one connection model (the checker's, each flow keeping
/// `stats`' counters), `-Y`'s selection (the packets that match; the connections, judged
/// whole, they belong to), the packets table, and the first write error, which stops the
/// writing (the frames are still read, so capture warnings are printed) and is returned.
struct FrameLoop<'f> {
    shard: Shard,
    /// `--raw`: each row also holds the frame's bytes.
    raw: bool,
    checker: Checker<FlowStats>,
    stats: Counters,
    selection: Option<crate::filter::Selection<'f>>,
    out: TableWriter,
    failed: Option<InputError>,
}

impl FrameLoop<'_> {
    /// Over one capture: each frame to the model, the counters and the table.
    fn plain(
        &mut self,
        input: &Input,
        cfg: &Config,
        threads: crate::threads::Threads,
    ) -> Result<roce_analysis::ReadSummary, InputError> {
        // Read ahead, every row is the packet's (no -Y): built where it was read.
        if !threads.is_one() && input.files().is_none() && self.selection.is_none() {
            return self.rows_ahead(input, cfg);
        }
        let Self { shard, raw, checker, stats, selection, out, failed } = self;
        let (shard, raw) = (*shard, *raw);
        crate::threads::for_each_frame_on(
            threads,
            input,
            cfg,
            crate::threads::VerifyOn::Loop,
            |d| {
                if failed.is_some() {
                    checker.tick(d.frame.ts_ns);
                    return;
                }
                let Some((incarnation, retransmission)) = judge(checker, stats, shard, d) else {
                    return;
                };
                if !selection.as_mut().is_none_or(|s| s.observe(d, |k| checker.incarnation_of(k))) {
                    return;
                }
                let row = PacketRow { d, incarnation, retransmission };
                let written = out.row(|cells| {
                    rows::write_packet(&row, cells);
                    if raw {
                        rows::write_raw(&row, cells);
                    }
                });
                if let Err(e) = written {
                    *failed = Some(e);
                }
            },
        )
    }

    /// Over one capture read on another thread, which also builds each frame's row
    /// ([`RowsAhead`]) while this one runs the model: this thread gives each row group its
    /// two columns of the model's, `incarnation` and `retransmission`, and hands it to the
    /// writer. Why: this frame loop is `export`'s critical path (the second core reads and
    /// encodes, and had room), and the reader has just parsed the frame with verification
    /// (BENCHMARKS.md, "Export: the rows built on the reader").
    fn rows_ahead(
        &mut self,
        input: &Input,
        cfg: &Config,
    ) -> Result<roce_analysis::ReadSummary, InputError> {
        let Self { shard, raw, checker, stats, out, failed, .. } = self;
        // One full group waits for the frame loop at most: the reader then waits in `send`
        // (the frame loop takes it once it reaches that group's last frame, whose batch has
        // gone out: a batch holds at most `threads::BATCH_FRAMES` frames, fewer than a row
        // group's). Empty groups come back without waiting.
        let (to_loop, from_reader) = std::sync::mpsc::sync_channel(1);
        let (to_reader, spares) = std::sync::mpsc::channel();
        let mut ahead = RowsAhead {
            shard: *shard,
            raw: *raw,
            group: rows::RowGroup::new(rows::packet_columns(*raw), table::ROW_GROUP),
            to_loop: Some(to_loop),
            spares,
        };
        let mut model = ModelColumns {
            from_reader: Some(from_reader),
            to_reader,
            incarnation: Vec::with_capacity(table::ROW_GROUP),
            retransmission: Vec::with_capacity(table::ROW_GROUP),
        };
        let shard = *shard;
        let summary = crate::threads::for_each_frame_ahead_with(input, cfg, &mut ahead, |d| {
            if failed.is_some() {
                checker.tick(d.frame.ts_ns);
                return;
            }
            let Some((incarnation, retransmission)) = judge(checker, stats, shard, d) else {
                return;
            };
            model.incarnation.push(incarnation);
            model.retransmission.push(retransmission);
            if model.incarnation.len() == table::ROW_GROUP {
                if let Err(e) = model.write(out) {
                    // The reader builds no more rows: nothing waits for them.
                    model.from_reader = None;
                    *failed = Some(e);
                }
            }
        })?;
        if failed.is_none() && !model.incarnation.is_empty() {
            if let Err(e) = model.write(out) {
                *failed = Some(e);
            }
        }
        Ok(summary)
    }

    /// Over several captures read as one: each step of the merged pass. A frame for the
    /// model and the table; a copy of a packet another tap saw first, a row of its own
    /// naming that sighting (not for the model); a packet lost between taps, a
    /// CAP-DROP-BETWEEN finding, as `check` reports it.
    fn merged(
        &mut self,
        input: &Input,
        cfg: &Config,
        filter: Option<&crate::filter::DisplayFilter>,
        names: &[String],
    ) -> Result<roce_analysis::ReadSummary, InputError> {
        let Self { shard, raw, checker, stats, selection, out, failed } = self;
        let (shard, raw) = (*shard, *raw);
        let mut recent = Judged::new(input.taps.window_ns);
        crate::input::for_each_step(input, cfg, None, |step| {
            let (d, judged, copy_of, fed) = match step {
                TapStep::Drop(drop) => {
                    if drop.in_shard(shard) {
                        drop.report_to(checker, names);
                    }
                    return None;
                }
                TapStep::Copy(d, of) => {
                    let mine =
                        shard.owns(d.packet.as_ref().ok()) && filter.is_none_or(|f| f.matches(d));
                    if !mine || failed.is_some() {
                        return None;
                    }
                    // A copy is judged as its first sighting was (its incarnation, whether it
                    // was a retransmission): the model saw that one.
                    (d, recent.of(of, d.frame.ts_ns), Some(of), None)
                }
                TapStep::Frame(d) => {
                    if failed.is_some() {
                        checker.tick(d.frame.ts_ns);
                        return None;
                    }
                    let judged = judge(checker, stats, shard, d)?;
                    recent.push(d.frame.number, d.frame.ts_ns, judged);
                    let fed = checker.connection_fed();
                    let sel = selection.as_mut();
                    if !sel.is_none_or(|s| s.observe(d, |k| checker.incarnation_of(k))) {
                        return fed;
                    }
                    (d, judged, None, fed)
                }
            };
            let row = PacketRow { d, incarnation: judged.0, retransmission: judged.1 };
            let file = names.get(d.frame.source as usize).map_or("", String::as_str);
            let source =
                rows::SourceRow { d, source: roce_analysis::FrameSource { file, copy_of } };
            // Through roce-analysis's own copy of the row writer: this crate's plain loop
            // stays the one caller of `write_packet` here, which inlines it
            // (rows::write_packet_from).
            if let Err(e) = out.row(|cells| rows::write_packet_from(&row, &source, raw, cells)) {
                *failed = Some(e);
            }
            fed
        })
    }
}

/// One frame to the model and the counters: its row's `incarnation` and `retransmission`
/// (the checker's verdicts), or `None` for a frame of another shard.
#[inline(always)]
fn judge(
    checker: &mut Checker<FlowStats>,
    stats: &mut Counters,
    shard: Shard,
    d: &roce_analysis::Decoded<'_>,
) -> Option<Judgement> {
    let ev = roce_analysis::feed(checker, shard, d)?;
    stats.settle(checker);
    stats.add(checker, &ev);
    Some((ev.incarnation, ev.observation.and(checker.last_retransmission())))
}

/// The packets table's rows built on the reader thread ([`FrameLoop::rows_ahead`]): each
/// frame the frame loop gives the model (those of the shard), in the same order, the model's
/// columns left null; a full row group goes to the frame loop.
struct RowsAhead {
    shard: Shard,
    raw: bool,
    group: rows::RowGroup,
    /// Gone when the frame loop stopped writing (an error): no more rows are built.
    to_loop: Option<std::sync::mpsc::SyncSender<rows::RowGroup>>,
    /// Row groups written, given back empty.
    spares: std::sync::mpsc::Receiver<rows::RowGroup>,
}

impl crate::threads::Ahead for RowsAhead {
    fn frame(&mut self, d: &roce_analysis::Decoded<'_>) {
        if self.to_loop.is_none() || !self.shard.owns(d.packet.as_ref().ok()) {
            return;
        }
        let row = PacketRow { d, incarnation: None, retransmission: None };
        let raw = self.raw;
        self.group.push(|cells| {
            rows::write_packet(&row, cells);
            if raw {
                rows::write_raw(&row, cells);
            }
        });
        if self.group.len() == table::ROW_GROUP {
            self.send();
        }
    }

    fn end(&mut self) {
        if !self.group.is_empty() {
            self.send();
        }
    }
}

impl RowsAhead {
    /// The group to the frame loop, and an empty one to go on in: one given back, or a new
    /// one. At most 8 exist: this one, one waiting for the frame loop, the writer's own,
    /// one waiting for the encoder, one being encoded, two given back by the encoder and
    /// one on its way back here (5 on 2,000,000 frames, with `--raw` too).
    fn send(&mut self) {
        let spare = self.spares.try_recv().unwrap_or_else(|_| self.group.empty_like());
        let full = std::mem::replace(&mut self.group, spare);
        if self.to_loop.as_ref().is_some_and(|to| to.send(full).is_err()) {
            self.to_loop = None;
        }
    }
}

/// The frame loop's side of [`FrameLoop::rows_ahead`]: the model's two columns of the row
/// group the reader is building, and the channels to it.
struct ModelColumns {
    /// `None` once writing failed (the reader then stops building rows).
    from_reader: Option<std::sync::mpsc::Receiver<rows::RowGroup>>,
    to_reader: std::sync::mpsc::Sender<rows::RowGroup>,
    incarnation: Vec<Option<u32>>,
    retransmission: Vec<Option<bool>>,
}

impl ModelColumns {
    /// The reader's row group of these rows, given the model's columns, to the writer.
    fn write(&mut self, out: &mut TableWriter) -> Result<(), InputError> {
        let bug = |what: &dyn std::fmt::Display| {
            InputError(format!("export: the rows read ahead and the model's {what} (a bug)"))
        };
        // The reader sent the group before the batch of its last frame: it is there.
        let Some(Ok(mut group)) = self.from_reader.as_ref().map(|r| r.recv()) else {
            return Err(bug(&"rows: the reader's ended first"));
        };
        if group.len() != self.incarnation.len() {
            let (ahead, here) = (group.len(), self.incarnation.len());
            return Err(bug(&format!("rows differ: {ahead} rows read ahead for {here}")));
        }
        group.fill_int("incarnation", &self.incarnation).map_err(|e| bug(&e))?;
        group.fill_bool("retransmission", &self.retransmission).map_err(|e| bug(&e))?;
        self.incarnation.clear();
        self.retransmission.clear();
        let spare = out.submit(group)?;
        // The reader may be done: then the group is dropped here.
        let _ = self.to_reader.send(spare);
        Ok(())
    }
}

/// The model's judgement of the first sightings of the last tap window, for their copies'
/// rows: (merged frame, time, (incarnation, retransmission)) in merge order. A copy comes
/// within the window of its first sighting, so older entries go; at most
/// [`Judged::MAX`] (the taps' own bound on sightings held; beyond, the oldest goes and its
/// copies' rows say nothing).
struct Judged {
    window_ns: u64,
    held: std::collections::VecDeque<(u64, u64, Judgement)>,
}

/// A packet row's `incarnation` and `retransmission`.
type Judgement = (Option<u32>, Option<bool>);

impl Judged {
    const MAX: usize = 1 << 20;

    fn new(window_ns: u64) -> Self {
        Judged { window_ns, held: std::collections::VecDeque::new() }
    }

    fn push(&mut self, frame: u64, ts: u64, judged: Judgement) {
        if self.held.len() >= Self::MAX {
            self.held.pop_front();
        }
        self.held.push_back((frame, ts, judged));
    }

    /// The judgement of merged frame `of`, seen at `now` (a copy's time).
    fn of(&mut self, of: u64, now: u64) -> Judgement {
        while self.held.front().is_some_and(|f| f.1.saturating_add(self.window_ns) < now) {
            self.held.pop_front();
        }
        match self.held.binary_search_by_key(&of, |f| f.0) {
            Ok(i) => self.held.get(i).map_or((None, None), |f| f.2),
            Err(_) => (None, None),
        }
    }
}

/// Removes the regular files `packets-NNNNNN.parquet` of `dir` numbered `parts` or more (a
/// previous, longer export's).
fn remove_stale_parts(dir: &Path, parts: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(k) = name
            .to_str()
            .and_then(|n| n.strip_prefix("packets-")?.strip_suffix(".parquet"))
            .filter(|k| k.len() == 6)
            .and_then(|k| k.parse::<usize>().ok())
        else {
            continue;
        };
        if k >= parts && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// docs/parquet.md's tables of columns, generated from the column lists (a test keeps the
/// document equal to it).
pub fn schema_markdown() -> String {
    let mut s = String::new();
    s.push_str("### packets.parquet\n\n");
    s.push_str(&rows::doc_table(rows::PACKET_COLUMNS));
    s.push_str("\n### packets.parquet with `--raw`\n\n");
    s.push_str("After the columns above, in this order:\n\n");
    s.push_str(&rows::doc_table(rows::RAW_COLUMNS));
    s.push_str("\n### packets.parquet of several captures read as one\n\n");
    s.push_str("After the columns above (and `--raw`'s), in this order:\n\n");
    s.push_str(&rows::doc_table(rows::SOURCE_COLUMNS));
    s.push_str("\n### connections.parquet\n\n");
    s.push_str(&rows::doc_table(rows::CONNECTION_COLUMNS));
    s.push_str("\n### findings.parquet\n\n");
    s.push_str(&rows::doc_table(rows::FINDING_COLUMNS));
    s
}
