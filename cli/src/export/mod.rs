//! `roce-inspect export FILE -o DIR`: the capture as three Parquet tables for DuckDB, Spark,
//! Trino or pandas (docs/parquet.md): `packets.parquet` (one row per frame), and the
//! checker's report, `connections.parquet` (one row per connection incarnation, with
//! `stats`' counters) and `findings.parquet`.
//!
//! Why Parquet: past one machine, users' tools are columnar (Zeek, Zui, Tenzir and
//! pcap-to-Parquet converters all land packets there); a fabric-wide question (which QPs NAK
//! most, CNP rates per destination) is one SQL query over the exports of many captures or
//! of many `--shard K/N` runs. The schema is a contract like the JSON one: each table is one
//! declarative column list ([`packets::COLUMNS`], [`reports::CONNECTION_COLUMNS`],
//! [`reports::FINDING_COLUMNS`], each made by `table!`) and docs/parquet.md is generated from
//! them.
//!
//! Memory: row groups of [`table::ROW_GROUP`] rows are written as they fill, and the checker
//! is bounded by `--max-flows`; nothing grows with the capture's length.

mod packets;
mod reports;
mod table;

use std::path::Path;

use roce_conformance::hash::FastHashMap;
use roce_conformance::{Checker, ConnId, FlowKey, FrameInfo, Options, Shard};
use roce_parser::Config;

use crate::input::{warn_undecoded, Input, InputError};
use crate::outfile::{Dash, OutFile, OutSet};
use crate::stats::{Connection, Stats};
use reports::ConnectionRow;
use table::TableWriter;

pub use packets::PacketRow;

/// The file names in the output directory.
pub const PACKETS: &str = "packets.parquet";
pub const CONNECTIONS: &str = "connections.parquet";
pub const FINDINGS: &str = "findings.parquet";

/// What `export` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub packets: u64,
    pub connections: u64,
    pub findings: u64,
    /// Error-severity findings (the exit status, as `check`'s).
    pub errors: u64,
}

/// Exports `input` into the directory `dir` (created when missing): the frames of `shard`,
/// checked with `opts`, and counted as `stats` counts them (connections.parquet's counters).
pub fn run(
    input: &Input,
    dir: &Path,
    cfg: &Config,
    opts: Options,
    shard: Shard,
    threads: crate::threads::Threads,
    filter: Option<&crate::filter::DisplayFilter>,
) -> Result<Written, InputError> {
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
    let res = export(input, dir, cfg, opts, (shard, threads, filter));
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
) -> Result<Written, InputError> {
    // Every table is opened before the capture is read: one that is an input (`export
    // d/packets.parquet -o d`) is refused before anything is written.
    let read = input.path().unwrap_or(Path::new(""));
    let open = |name: &str| OutFile::create("-o", &dir.join(name), &[read], Dash::Refused);
    let (packets_file, conns_file, finds_file) =
        (open(PACKETS)?, open(CONNECTIONS)?, open(FINDINGS)?);
    let mut out = TableWriter::create(packets_file, "packets", packets::COLUMNS, packets::UNIQUE)?;
    // More than one thread: one encodes the row groups of packets.parquet while the next
    // one fills, and one reads the capture ahead (its copy from the page cache is kernel
    // time the frame loop no longer waits for); the frame loop is the bottleneck
    // (BENCHMARKS.md, "Export: the encoder thread").
    if !threads.is_one() {
        out = out.on_encoder_thread()?;
    }
    let mut stats = Stats::new(opts.model());
    let mut checker = Checker::new(opts);
    // `-Y`: the packets that match; the connections (judged whole) they belong to.
    let mut selection = filter.map(crate::filter::Selection::new);
    // The first write error stops the writing (the frames are still read, so capture
    // warnings are printed) and is returned.
    let mut failed: Option<InputError> = None;
    let summary = crate::threads::for_each_frame_on(threads, input, cfg, |d| {
        let packet = d.packet.as_ref().ok();
        let f = &d.frame;
        if failed.is_some() || !shard.owns(packet) {
            checker.tick(f.ts_ns);
            return;
        }
        let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
        stats.add(f.number, f.ts_ns, f.len, f.caplen, packet);
        let (incarnation, retransmission) = match packet {
            Some(p) => {
                checker.feed(&info, p);
                let inc = p.roce.as_ref().and_then(|r| checker.incarnation_of(&FlowKey::of(p, r)));
                (inc, checker.last_retransmission())
            }
            None => {
                checker.feed_undecoded(&info);
                (None, None)
            }
        };
        if !selection.as_mut().is_none_or(|s| s.observe(d, |k| checker.incarnation_of(k))) {
            return;
        }
        let row = PacketRow { d, incarnation, retransmission };
        if let Err(e) = out.row(|cells| packets::write_row(&row, cells)) {
            failed = Some(e);
        }
    })?
    .of_shard(shard);
    if let Some(e) = failed {
        return Err(e);
    }
    warn_undecoded(&summary.undecoded);
    let mut tables = OutSet::default();
    let (packets, file) = out.finish()?;
    tables.push(file);
    let mut report = checker.finish();
    if let Some(sel) = &selection {
        sel.retain(&mut report);
    }
    let (counted, _) = stats.connections();
    let counts: FastHashMap<ConnId, &Connection> =
        counted.iter().map(|c| (c.info.connection, c)).collect();
    let mut conns =
        TableWriter::create(conns_file, "connections", reports::CONNECTION_COLUMNS, &[])?;
    for c in &report.connections {
        let row = ConnectionRow { report: c, counts: counts.get(&c.info.connection).copied() };
        conns.row(|cells| reports::write_connection(&row, cells))?;
    }
    let (connections, file) = conns.finish()?;
    tables.push(file);
    let mut finds = TableWriter::create(finds_file, "findings", reports::FINDING_COLUMNS, &[])?;
    for f in &report.findings {
        finds.row(|cells| reports::write_finding(f, cells))?;
    }
    let (findings, file) = finds.finish()?;
    tables.push(file);
    // The three tables appear together, each complete.
    tables.commit()?;
    Ok(Written { packets, connections, findings, errors: report.errors })
}

/// docs/parquet.md's tables of columns, generated from the column lists (a test keeps the
/// document equal to it).
pub fn schema_markdown() -> String {
    let mut s = String::new();
    s.push_str("### packets.parquet\n\n");
    s.push_str(&table::doc_table(packets::COLUMNS));
    s.push_str("\n### connections.parquet\n\n");
    s.push_str(&table::doc_table(reports::CONNECTION_COLUMNS));
    s.push_str("\n### findings.parquet\n\n");
    s.push_str(&table::doc_table(reports::FINDING_COLUMNS));
    s
}
