//! A Parquet table from a column list of roce-analysis' rows ([`roce_analysis::rows`]: the
//! column lists, and the [`RowGroup`] a row is appended to). The writer fills a row group of
//! [`ROW_GROUP`] rows, column by column, and hands each column of it to the `parquet` crate's
//! low-level column writer in one `write_batch`.
//!
//! Why the low-level writer and not arrow: it needs 28 crates and about 1.5 minutes of clean
//! release build here, arrow (with zstd and snappy) 51 crates and several minutes
//! (BENCHMARKS.md); rows arrive one at a time from the frame loop, so arrow's record batches
//! would only be an extra copy.
//!
//! Why these encodings (BENCHMARKS.md has the figures): integers are DELTA_BINARY_PACKED, not
//! dictionary-encoded. Frame numbers, timestamps and PSNs rise by small steps and the
//! low-cardinality columns (opcodes, ports, flags) have small ranges, so the deltas pack into
//! few bits: `packets.parquet` is 45% smaller than with dictionaries, and the parquet
//! crate's dictionary interner (an ahash and a probe per value) was a quarter of export's
//! instructions (the delta encoder and the strings' dictionaries now cost 30% less).
//! Strings that repeat (addresses, opcode names, statuses) keep their dictionary: an index
//! each. Binary columns (`export --raw`'s frames) are plain, without statistics: frames do not
//! repeat, and a min/max of frame bytes answers no query. Nothing is compressed (no codec
//! crate is built; a codec was not measured).

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use roce_analysis::rows::{Cells, Column, Kind, RowGroup, Values};

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
    /// Writes the buffered rows as one row group and clears the buffers.
    fn write_group(&mut self, group: &mut RowGroup) -> Result<(), InputError> {
        if group.is_empty() {
            return Ok(());
        }
        self.roll_if_full()?;
        let path = &self.path;
        let mut rg = self
            .file
            .next_row_group()
            .map_err(|e| InputError(format!("writing {}: {e}", path.display())))?;
        let mut res = Ok(());
        for (_, column) in group.columns() {
            let mut col = match rg.next_column() {
                Ok(Some(col)) => col,
                Ok(None) => break,
                Err(e) => {
                    res = Err(e.to_string());
                    break;
                }
            };
            let defs = column.defs;
            let r = match column.values {
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
            };
            let r = r.and_then(|_| col.close());
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
/// fills (two sets of buffers take turns: memory is bounded at two row groups).
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
