//! A Parquet table from a column list of roce-analysis' rows ([`roce_analysis::rows`]: the
//! column lists, and the [`RowGroup`] a row is appended to). The writer fills a row group of
//! [`ROW_GROUP`] rows, column by column, and encodes each column of it as a column chunk.
//!
//! Who encodes what, and why: the INT64, BOOLEAN and dictionary-encoded string columns are
//! encoded by our own code ([`super::chunk`]: one page per chunk, its statistics and page
//! index), written as pages through the `parquet` crate's page writer and spliced into the
//! row group with `append_column`. The crate's column writer handles each value several
//! times (a delta encoder in four passes, a level encoder fed value by value, min/max per
//! value, an ahash interner per string) and was ~4,330 of export's ~9,300 instructions per
//! frame; ours, on a row group's column already whole in memory, brought export from 9,308
//! to 6,749 instructions per frame (BENCHMARKS.md, "Export: our own column-chunk encoder").
//! The files hold the same schema, rows, nulls and statistics as the crate's writer made;
//! the tests below compare both writers on the same rows. The crate's column writer still
//! writes the plain string columns (values that do not repeat), the binary ones (`export
//! --raw`) and a string column with a value longer than 64 bytes (whose min/max the crate
//! truncates): rare or cheap enough not to need our own.
//!
//! Why the low-level writer and not arrow: it needs 28 crates and about 1.5 minutes of clean
//! release build here, arrow (with zstd and snappy) 51 crates and several minutes
//! (BENCHMARKS.md); rows arrive one at a time from the frame loop, so arrow's record batches
//! would only be an extra copy.
//!
//! Why these encodings (BENCHMARKS.md has the figures): integers are DELTA_BINARY_PACKED, not
//! dictionary-encoded. Frame numbers, timestamps and PSNs rise by small steps and the
//! low-cardinality columns (opcodes, ports, flags) have small ranges, so the deltas pack into
//! few bits: `packets.parquet` is 45% smaller than with dictionaries. Strings that repeat
//! (addresses, opcode names, statuses) keep their dictionary: an index each. Binary columns
//! (`export --raw`'s frames) are plain, without statistics: frames do not repeat, and a
//! min/max of frame bytes answers no query. Nothing is compressed (no codec crate is built;
//! a codec was not measured).

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use roce_analysis::rows::{Cells, Column, Kind, RowGroup, Values};

use super::chunk;
use crate::input::InputError;
use crate::outfile::OutFile;

/// Rows per row group. The rows are filled one at a time into 59 columns (about 120 buffers
/// with the null levels), so the group's buffers should stay in the cache: with 65,536 rows
/// (37 MB) the frame loop spent a quarter more CPU than with 8,192 (4.7 MB), for a file 4.6%
/// smaller (BENCHMARKS.md, "Export: row groups of 8,192 rows"). Memory is bounded by it.
pub const ROW_GROUP: usize = 8 * 1024;

/// A column type's Parquet physical type.
fn physical(kind: Kind) -> &'static str {
    match kind {
        Kind::Int => "INT64",
        Kind::Bool => "BOOLEAN",
        Kind::Str | Kind::Bytes => "BYTE_ARRAY",
    }
}

/// The Parquet schema of a column list (`message NAME { ... }`).
pub fn schema_text(table: &str, cols: &[Column]) -> String {
    let mut s = format!("message {table} {{\n");
    for c in cols {
        let rep = if c.nullable { "OPTIONAL" } else { "REQUIRED" };
        let ann = if c.kind == Kind::Str { " (UTF8)" } else { "" };
        s.push_str(&format!("  {rep} {} {}{ann};\n", physical(c.kind), c.name));
    }
    s.push('}');
    s
}

/// The Parquet file itself: the row groups go in as they fill, into the next part file
/// when one holds its most ([`TableWriter::rolling`]).
struct Encoder {
    path: PathBuf,
    file: SerializedFileWriter<BufWriter<OutFile>>,
    written: u64,
    /// Row groups in the current file.
    groups: usize,
    /// The part files completed before the current one.
    parts: Vec<OutFile>,
    roll: Option<Roll>,
    /// Our encoder's reused buffers.
    scratch: chunk::Scratch,
}

#[cfg(test)]
thread_local! {
    /// Tests: this thread's encoders write every column through the crate's column writer, as
    /// before our encoder ([`Encoder::write_group`]): the reference the tests compare with.
    static CRATE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How a table goes on in a new file ([`TableWriter::rolling`]).
struct Roll {
    max_groups: usize,
    schema: parquet::schema::types::TypePtr,
    props: parquet::file::properties::WriterPropertiesPtr,
    /// Opens part `k` (1, 2, ...).
    open: Box<dyn FnMut(usize) -> Result<OutFile, InputError> + Send>,
}

impl Encoder {
    /// Writes the buffered rows as one row group and clears the buffers: the INT64, BOOLEAN
    /// and dictionary-encoded string columns encoded by our own code ([`chunk`]), the others
    /// (plain strings, binary) by the crate's column writer.
    fn write_group(&mut self, group: &mut RowGroup) -> Result<(), InputError> {
        #[cfg(test)]
        let crate_only = CRATE_ONLY.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let crate_only = false;
        if group.is_empty() {
            return Ok(());
        }
        self.roll_if_full()?;
        let path = &self.path;
        let schema = self.file.schema_descr().columns().to_vec();
        let props = self.file.properties().clone();
        let scratch = &mut self.scratch;
        let mut rg = self
            .file
            .next_row_group()
            .map_err(|e| InputError(format!("writing {}: {e}", path.display())))?;
        let mut res = Ok(());
        for ((_, column), descr) in group.columns().zip(&schema) {
            let defs = column.defs;
            let ours = match column.values {
                // The tests' reference: every column through the crate's column writer.
                _ if crate_only => Ok(None),
                Values::Int(d) => chunk::int_chunk(descr, d, defs, scratch),
                Values::Bool(d) => chunk::bool_chunk(descr, d, defs, scratch),
                Values::Str(s) if props.dictionary_enabled(descr.path()) => {
                    chunk::dictionary_chunk(descr, s.bytes, s.ends, defs, scratch)
                }
                Values::Str(_) | Values::Bytes(_) => Ok(None),
            };
            let r = match ours {
                Ok(Some((bytes, close))) => rg.append_column(&bytes, close),
                Ok(None) => crate_column(&mut rg, column.values, defs),
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                res = Err(e.to_string());
                break;
            }
        }
        let closed = rg.close().map(|_| ()).map_err(|e| e.to_string());
        res.and(closed).map_err(|e| InputError(format!("writing {}: {e}", path.display())))?;
        self.written += group.len() as u64;
        self.groups += 1;
        group.clear();
        Ok(())
    }

    /// The current file holds its most row groups: its footer is written and the next part
    /// file opened.
    fn roll_if_full(&mut self) -> Result<(), InputError> {
        let Some(roll) = self.roll.as_mut() else { return Ok(()) };
        if self.groups < roll.max_groups {
            return Ok(());
        }
        let next = (roll.open)(self.parts.len() + 1)?;
        let path = next.path().to_path_buf();
        let file = SerializedFileWriter::new(
            BufWriter::new(next),
            Arc::clone(&roll.schema),
            Arc::clone(&roll.props),
        )
        .map_err(|e| InputError(format!("writing {}: {e}", path.display())))?;
        let full = std::mem::replace(&mut self.file, file);
        let done = close(full, &self.path)?;
        self.parts.push(done);
        self.path = path;
        self.groups = 0;
        Ok(())
    }

    /// Writes the footer; returns the rows written and the files (the parts in order), to be
    /// completed by the caller (crate::outfile) with the other tables.
    fn finish(self) -> Result<(u64, Vec<OutFile>), InputError> {
        let mut parts = self.parts;
        parts.push(close(self.file, &self.path)?);
        Ok((self.written, parts))
    }
}

/// The next column of `rg` written by the crate's column writer, in one `write_batch`.
fn crate_column<W: std::io::Write + Send>(
    rg: &mut SerializedRowGroupWriter<'_, W>,
    values: Values<'_>,
    defs: Option<&[i16]>,
) -> parquet::errors::Result<()> {
    let Some(mut col) = rg.next_column()? else { return Ok(()) };
    match values {
        Values::Int(d) => col.typed::<Int64Type>().write_batch(d, defs, None),
        Values::Bool(d) => col.typed::<BoolType>().write_batch(d, defs, None),
        Values::Str(strings) => {
            let values = byte_arrays(strings.bytes, strings.ends);
            col.typed::<ByteArrayType>().write_batch(&values, defs, None)
        }
        Values::Bytes(binaries) => {
            let values = byte_arrays(binaries.bytes, binaries.ends);
            col.typed::<ByteArrayType>().write_batch(&values, defs, None)
        }
    }?;
    col.close()
}

/// The values of a string or binary column (back to back in `bytes`, each ending at its
/// `ends`): one copy of the row group's bytes, each value a slice of it.
fn byte_arrays(bytes: &[u8], ends: &[usize]) -> Vec<ByteArray> {
    let all = Bytes::copy_from_slice(bytes);
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let v = ByteArray::from(all.slice(start..end.max(start)));
            start = end.max(start);
            v
        })
        .collect()
}

/// Writes a file's footer and flushes it; the file, not yet completed.
fn close(
    file: SerializedFileWriter<BufWriter<OutFile>>,
    path: &Path,
) -> Result<OutFile, InputError> {
    let werr = |e: &dyn std::fmt::Display| InputError(format!("writing {}: {e}", path.display()));
    let mut bw = file.into_inner().map_err(|e| werr(&e))?;
    use std::io::Write as _;
    bw.flush().map_err(|e| werr(&e))?;
    Ok(bw.into_parts().0)
}

/// Where full row groups go: encoded here, or on an encoder thread while the next group
/// fills (two sets of buffers take turns: the writer holds at most two row groups; a group
/// built elsewhere, `TableWriter::submit`, takes the place of one).
enum Sink {
    Here(Box<Encoder>),
    Thread {
        to: std::sync::mpsc::SyncSender<RowGroup>,
        back: std::sync::mpsc::Receiver<RowGroup>,
        encoder: std::thread::JoinHandle<Result<(u64, Vec<OutFile>), InputError>>,
    },
    /// The encoder thread stopped on an error, which was returned.
    Stopped,
}

/// A Parquet file being written, one row at a time.
pub struct TableWriter {
    path: PathBuf,
    group: RowGroup,
    sink: Sink,
}

impl TableWriter {
    /// Writes a table of `cols` into `file`; the string columns named in `plain` hold values
    /// that do not repeat (no dictionary).
    pub fn create(
        file: OutFile,
        table: &str,
        cols: &'static [Column],
        plain: &[&str],
    ) -> Result<Self, InputError> {
        let path = file.path().to_path_buf();
        let err = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
        let schema = parse_message_type(&schema_text(table, cols)).map_err(|e| err(&e))?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            // A row group's column in one mini-batch (the default, 1,024, splits it in 8;
            // the pages and the file are the same).
            .set_write_batch_size(ROW_GROUP)
            .set_created_by(format!("roce-inspect {}", crate::version()));
        for c in cols {
            let path = ColumnPath::from(c.name);
            match c.kind {
                Kind::Int => {
                    props = props
                        .set_column_dictionary_enabled(path.clone(), false)
                        .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
                }
                Kind::Str if plain.contains(&c.name) => {
                    props = props.set_column_dictionary_enabled(path, false);
                }
                Kind::Bytes => {
                    props = props
                        .set_column_dictionary_enabled(path.clone(), false)
                        .set_column_statistics_enabled(path, EnabledStatistics::None);
                }
                Kind::Str | Kind::Bool => {}
            }
        }
        let (schema, props) = (Arc::new(schema), Arc::new(props.build()));
        let file =
            SerializedFileWriter::new(BufWriter::new(file), schema, props).map_err(|e| err(&e))?;
        Ok(TableWriter {
            path: path.clone(),
            group: RowGroup::new(cols, ROW_GROUP),
            sink: Sink::Here(Box::new(Encoder {
                path: path.clone(),
                file,
                written: 0,
                groups: 0,
                parts: Vec::new(),
                roll: None,
                scratch: chunk::Scratch::default(),
            })),
        })
    }

    /// Goes on in a new file, opened by `open(k)` for part k = 1, 2, ..., when one holds
    /// `max_groups` row groups (call before [`TableWriter::on_encoder_thread`]). Why: a
    /// Parquet writer keeps every row group's metadata until the footer (some 30 KiB per
    /// group of the packets table), so one file of an endless capture would grow without
    /// bound; parts bound it.
    pub fn rolling(
        mut self,
        max_groups: usize,
        open: impl FnMut(usize) -> Result<OutFile, InputError> + Send + 'static,
    ) -> Self {
        if let Sink::Here(enc) = &mut self.sink {
            enc.roll = Some(Roll {
                max_groups: max_groups.max(1),
                schema: enc.file.schema_descr().root_schema_ptr(),
                props: enc.file.properties().clone(),
                open: Box::new(open),
            });
        }
        self
    }

    /// Encodes the row groups on a thread of their own (`export --threads 2` and more): the
    /// rows of the next group are built while the last one is encoded. The file is the same
    /// byte for byte.
    pub fn on_encoder_thread(mut self) -> Result<Self, InputError> {
        let mut enc = match std::mem::replace(&mut self.sink, Sink::Stopped) {
            Sink::Here(enc) => enc,
            // Already on a thread (or stopped): as it was.
            other => {
                self.sink = other;
                return Ok(self);
            }
        };
        let spare = self.group.empty_like();
        let (to, groups) = std::sync::mpsc::sync_channel::<RowGroup>(1);
        let (give_back, back) = std::sync::mpsc::sync_channel::<RowGroup>(2);
        // Room for two: this cannot fail.
        let _ = give_back.send(spare);
        let encoder = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || {
                for mut group in groups {
                    enc.write_group(&mut group)?;
                    // The writer may be gone (it stopped on an error): nothing to give back to.
                    let _ = give_back.send(group);
                }
                enc.finish()
            })
            .map_err(|e| self.error(format!("cannot start the encoder thread: {e}")))?;
        self.sink = Sink::Thread { to, back, encoder };
        Ok(self)
    }

    /// Appends one row: `write` fills its cells (a table's write function).
    #[inline]
    pub fn row(&mut self, write: impl FnOnce(&mut Cells<'_>)) -> Result<(), InputError> {
        self.group.push(write);
        if self.group.len() == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes `group`, rows of this writer's table built elsewhere (`export`'s reader
    /// thread), as the next row group, after any row appended here. Returns an empty group of
    /// the table to build the next one in (the encoder's buffers come back this way: the
    /// groups in use stay bounded).
    pub fn submit(&mut self, group: RowGroup) -> Result<RowGroup, InputError> {
        self.flush()?;
        let own = std::mem::replace(&mut self.group, group);
        let sent = self.flush();
        // After the flush `group` holds an empty group: the one given back by the encoder
        // thread, or the one just written here.
        let spare = std::mem::replace(&mut self.group, own);
        sent.map(|()| spare)
    }

    fn error(&self, e: impl std::fmt::Display) -> InputError {
        InputError(format!("writing {}: {e}", self.path.display()))
    }

    /// Writes the buffered rows as one row group (or hands them to the encoder thread).
    fn flush(&mut self) -> Result<(), InputError> {
        match &mut self.sink {
            Sink::Here(enc) => enc.write_group(&mut self.group),
            Sink::Stopped => Err(self.error("the encoder thread stopped")),
            Sink::Thread { to, back, .. } => {
                if self.group.is_empty() {
                    return Ok(());
                }
                // A closed channel means the encoder thread stopped on an error: `finish`
                // (or the next flush, through `stopped`) returns it.
                let Ok(spare) = back.recv() else { return self.stopped() };
                let full = std::mem::replace(&mut self.group, spare);
                if to.send(full).is_err() {
                    return self.stopped();
                }
                Ok(())
            }
        }
    }

    /// The encoder thread has stopped: its error.
    fn stopped(&mut self) -> Result<(), InputError> {
        let Sink::Thread { encoder, to, .. } = std::mem::replace(&mut self.sink, Sink::Stopped)
        else {
            return Err(self.error("the encoder thread stopped"));
        };
        drop(to);
        match encoder.join() {
            Ok(Err(e)) => Err(e),
            Ok(Ok(_)) => Err(self.error("the encoder thread ended early")),
            Err(_) => Err(self.error("the encoder thread panicked")),
        }
    }

    /// Writes what is buffered and the footer; returns the rows written and the file, not
    /// yet completed (crate::outfile::OutSet completes the tables together).
    pub fn finish(mut self) -> Result<(u64, Vec<OutFile>), InputError> {
        self.flush()?;
        match self.sink {
            Sink::Here(enc) => enc.finish(),
            Sink::Stopped => Err(InputError(format!(
                "writing {}: the encoder thread stopped",
                self.path.display()
            ))),
            Sink::Thread { to, back, encoder } => {
                drop(to);
                drop(back);
                match encoder.join() {
                    Ok(r) => r,
                    Err(_) => Err(InputError(format!(
                        "writing {}: the encoder thread panicked",
                        self.path.display()
                    ))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Our encoder against the crate's column writer, on the same rows: the files read back
    //! through the crate's reader must hold the same schema, rows, values, nulls, chunk
    //! statistics, definition-level histograms and page index.

    use std::fs::File;
    use std::path::{Path, PathBuf};

    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::serialized_reader::ReadOptionsBuilder;
    use roce_analysis::rows::{Cells, Column, Kind};

    use super::{TableWriter, CRATE_ONLY};
    use crate::outfile::{Dash, OutFile};

    /// A fresh directory under the system's temporary one.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("roce-inspect-encoder-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Runs `f` with this thread's encoders writing through the crate (`true`) or ours.
    fn with_crate<T>(crate_only: bool, f: impl FnOnce() -> T) -> T {
        CRATE_ONLY.with(|c| c.set(crate_only));
        let r = f();
        CRATE_ONLY.with(|c| c.set(false));
        r
    }

    /// Asserts that two Parquet files hold the same content (all but page layout and bytes).
    fn assert_same_content(ours: &Path, theirs: &Path) {
        let open = |p: &Path| {
            let options = ReadOptionsBuilder::new().with_page_index().build();
            SerializedFileReader::new_with_options(File::open(p).unwrap(), options)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        };
        let (a, b) = (open(ours), open(theirs));
        let (ma, mb) = (a.metadata(), b.metadata());
        let what = ours.display();
        assert_eq!(ma.file_metadata().schema(), mb.file_metadata().schema(), "{what}");
        assert_eq!(ma.file_metadata().num_rows(), mb.file_metadata().num_rows(), "{what}");
        assert_eq!(ma.num_row_groups(), mb.num_row_groups(), "{what}");
        for (g, (ga, gb)) in ma.row_groups().iter().zip(mb.row_groups()).enumerate() {
            assert_eq!(ga.num_rows(), gb.num_rows(), "{what} group {g}");
            for (c, (ca, cb)) in ga.columns().iter().zip(gb.columns()).enumerate() {
                let at = format!("{what} group {g} column {}", ca.column_path());
                assert_eq!(ca.column_descr(), cb.column_descr(), "{at}");
                assert_eq!(ca.statistics(), cb.statistics(), "{at}");
                assert_eq!(ca.num_values(), cb.num_values(), "{at}");
                assert_eq!(ca.compression(), cb.compression(), "{at}");
                assert_eq!(ca.encodings_mask(), cb.encodings_mask(), "{at}");
                assert_eq!(ca.page_encoding_stats(), cb.page_encoding_stats(), "{at}");
                assert_eq!(
                    ca.definition_level_histogram(),
                    cb.definition_level_histogram(),
                    "{at}"
                );
                assert_eq!(
                    ca.repetition_level_histogram(),
                    cb.repetition_level_histogram(),
                    "{at}"
                );
                let index = |m: &parquet::file::metadata::ParquetMetaData| {
                    let pages = m.page_index().expect("a page index");
                    let column = pages.column_index(g, c).cloned();
                    let rows: Option<Vec<i64>> = pages
                        .offset_index(g, c)
                        .map(|o| o.page_locations.iter().map(|l| l.first_row_index).collect());
                    (column, rows)
                };
                assert_eq!(index(ma), index(mb), "{at}: page index");
            }
        }
        let rows = |r: &SerializedFileReader<File>| -> Vec<parquet::record::Row> {
            r.get_row_iter(None).unwrap().map(|row| row.unwrap()).collect()
        };
        let (ra, rb) = (rows(&a), rows(&b));
        assert_eq!(ra.len(), rb.len(), "{what}");
        for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
            assert_eq!(x, y, "{what} row {i}");
        }
    }

    /// Exports `capture` with one thread through both writers; compares the three tables.
    /// Exports `capture` through both writers and compares the tables; whether any file's
    /// bytes differ.
    fn compare_exports(capture: &Path, name: &str, raw: bool, rows_per_file: u64) -> bool {
        let dir = temp_dir(name);
        let export = |crate_only: bool| {
            let out = dir.join(if crate_only { "crate" } else { "ours" });
            with_crate(crate_only, || {
                let scope = crate::stats::Scope {
                    shard: roce_conformance::Shard::ALL,
                    threads: crate::threads::Threads::ONE,
                    filter: None,
                };
                super::super::run(
                    &capture.into(),
                    &out,
                    &roce_parser::Config::default(),
                    roce_conformance::Options::default(),
                    scope,
                    super::super::PacketFiles { rows_per_file, raw },
                )
                .unwrap_or_else(|e| panic!("{}: {e}", capture.display()))
            });
            out
        };
        let (ours, theirs) = (export(false), export(true));
        let mut names: Vec<_> = std::fs::read_dir(&theirs)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".parquet"))
            .collect();
        names.sort();
        assert!(names.len() >= 3, "{names:?}");
        let mut bytes_differ = false;
        for n in names {
            let (a, b) = (ours.join(&n), theirs.join(&n));
            assert_same_content(&a, &b);
            bytes_differ |= std::fs::read(&a).unwrap() != std::fs::read(&b).unwrap();
        }
        let _ = std::fs::remove_dir_all(&dir);
        bytes_differ
    }

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn real_exports_hold_the_same_content() {
        let mut captures: Vec<PathBuf> = ["sample.pcap", "sample-erspan.pcap", "sample-ib.pcap"]
            .iter()
            .map(|n| root().join("pcaps").join(n))
            .collect();
        let mut conformance: Vec<PathBuf> = std::fs::read_dir(root().join("pcaps/conformance"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
            .collect();
        conformance.sort();
        captures.extend(conformance);
        for (i, capture) in captures.iter().enumerate() {
            compare_exports(capture, &format!("pcap{i}"), i % 2 == 0, u64::MAX);
        }
    }

    #[test]
    fn generated_capture_of_several_row_groups_holds_the_same_content() {
        // 20,003 frames: two full row groups and one not a multiple of 128 rows; in parts.
        let dir = temp_dir("bench");
        let capture = dir.join("bench.pcap");
        let file = std::io::BufWriter::new(File::create(&capture).unwrap());
        crate::gen::scenarios::bench(file, 7, 20_003, 16, None).unwrap();
        // The two writers lay the pages out differently: equal bytes would mean the
        // reference was our encoder again (the switch the tests set had no effect).
        assert!(compare_exports(&capture, "bench-out", false, u64::MAX));
        compare_exports(&capture, "bench-parts", true, 16_384);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A table of every type our encoder writes: integers, booleans, dictionary strings,
    /// nullable and required, and a plain string column (the crate's).
    static MIXED: &[Column] = &[
        Column { name: "a", kind: Kind::Int, nullable: true, doc: "" },
        Column { name: "b", kind: Kind::Int, nullable: false, doc: "" },
        Column { name: "c", kind: Kind::Int, nullable: true, doc: "" },
        Column { name: "d", kind: Kind::Bool, nullable: true, doc: "" },
        Column { name: "e", kind: Kind::Bool, nullable: false, doc: "" },
        Column { name: "f", kind: Kind::Str, nullable: true, doc: "" },
        Column { name: "g", kind: Kind::Str, nullable: false, doc: "" },
        Column { name: "h", kind: Kind::Str, nullable: true, doc: "" },
    ];

    /// Writes `n` rows of `row(i)` through both writers; compares the files.
    fn compare_rows(name: &str, n: usize, row: impl Fn(usize, &mut Cells<'_>)) {
        let dir = temp_dir(name);
        let write = |crate_only: bool| {
            let path = dir.join(if crate_only { "crate.parquet" } else { "ours.parquet" });
            with_crate(crate_only, || {
                let file = OutFile::create("-o", &path, &[], Dash::Refused).unwrap();
                let mut w = TableWriter::create(file, "mixed", MIXED, &["h"]).unwrap();
                for i in 0..n {
                    w.row(|cells| row(i, cells)).unwrap();
                }
                let (written, files) = w.finish().unwrap();
                assert_eq!(written, n as u64);
                for f in files {
                    f.commit().unwrap();
                }
            });
            path
        };
        let (ours, theirs) = (write(false), write(true));
        assert_same_content(&ours, &theirs);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A reproducible pseudo-random sequence (xorshift64*).
    fn random(i: usize) -> u64 {
        let mut x = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Fills the boolean and string cells of row `i` of [`MIXED`] from `b` and `s`.
    fn rest(c: &mut Cells<'_>, b: Option<bool>, s: Option<String>) {
        c.bool(b);
        c.bool_required(b.unwrap_or(true));
        c.str(s.clone());
        c.str_required(s.clone().unwrap_or_default());
        c.str(s);
    }

    #[test]
    fn edge_cases_hold_the_same_content() {
        // Empty: no row group.
        compare_rows("empty", 0, |_, _| unreachable!());
        // One row; a single value in each column.
        compare_rows("one", 1, |_, c| {
            c.int(Some(-5i64));
            c.int_required(i64::MAX);
            c.int(None::<i64>);
            rest(c, Some(false), Some("x".into()));
        });
        // All-null columns, required columns constant.
        compare_rows("nulls", 1000, |_, c| {
            c.int(None::<i64>);
            c.int_required(0i64);
            c.int(None::<i64>);
            rest(c, None, None);
        });
        // Extremes: deltas that overflow both ways; empty strings, long ones (beyond what
        // the statistics keep whole: the crate's writer takes that column), non-ASCII.
        let extremes = [i64::MIN, i64::MAX, 0, -1, i64::MIN, i64::MIN + 1, i64::MAX, 1];
        compare_rows("extremes", 300, |i, c| {
            let v = extremes[i % extremes.len()];
            c.int((i % 3 != 0).then_some(v));
            c.int_required(v.wrapping_mul(i as i64));
            c.int(Some(extremes[(i / 7) % extremes.len()]));
            let s = match i % 4 {
                0 => String::new(),
                1 => "é".repeat(i % 50),
                2 => "z".repeat(40 + i % 30),
                _ => format!("{}", i % 9),
            };
            rest(c, (i % 5 != 0).then_some(i % 2 == 0), Some(s));
        });
        // A full row group and more, not a multiple of 128: random values and nulls, runs of
        // nulls of every length, slowly rising values, strings from few to many distinct.
        compare_rows("random", 3 * super::ROW_GROUP + 1001, |i, c| {
            let r = random(i);
            c.int((!r.is_multiple_of(5)).then_some((r >> 20) as i64 - (1 << 40)));
            c.int_required(i as i64 * 1000 + (r % 17) as i64);
            let run = (i / (1 + i % 37)) % 3 == 0;
            c.int(run.then_some((r % 3) as i64 - 1));
            let s = match (i / 1000) % 3 {
                0 => format!("10.0.0.{}", r % 64),
                1 => format!("{r:x}"),
                _ => "same".to_string(),
            };
            rest(c, run.then_some(r.is_multiple_of(7)), (!r.is_multiple_of(11)).then_some(s));
        });
    }
}
