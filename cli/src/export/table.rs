//! A Parquet table from a declarative column list. [`table!`] takes one line per column (its
//! name, type, whether it may be null, what it means, and how to read it from a row) and makes
//! both the column list (docs/parquet.md is generated from it) and the function that appends a
//! row: each value goes straight into its column's typed buffer, with no per-value enum, call
//! through a pointer or allocation. The writer buffers [`ROW_GROUP`] rows, column by column,
//! and hands each column of a row group to the `parquet` crate's low-level column writer in
//! one `write_batch`.
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
//! each. Nothing is compressed (no codec crate is built; a codec was not measured).

use std::io::BufWriter;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use roce_conformance::internal::hash::FastHashMap;

use crate::input::InputError;
use crate::outfile::OutFile;

/// Rows per row group. The rows are filled one at a time into 59 columns (about 120 buffers
/// with the null levels), so the group's buffers should stay in the cache: with 65,536 rows
/// (37 MB) the frame loop spent a quarter more CPU than with 8,192 (4.7 MB), for a file 4.6%
/// smaller (BENCHMARKS.md, "Export: row groups of 8,192 rows"). Memory is bounded by it.
pub const ROW_GROUP: usize = 8 * 1024;

/// A column's Parquet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// INT64 (every integer: frame numbers, lengths, PSNs, QPNs, counters).
    Int,
    /// BOOLEAN.
    Bool,
    /// BYTE_ARRAY annotated UTF8 (STRING in DuckDB and Spark).
    Str,
}

impl Kind {
    fn schema(self) -> &'static str {
        match self {
            Kind::Int => "INT64",
            Kind::Bool => "BOOLEAN",
            Kind::Str => "BYTE_ARRAY",
        }
    }

    /// The type as docs/parquet.md names it (DuckDB's and Spark's names).
    pub fn doc_name(self) -> &'static str {
        match self {
            Kind::Int => "INT64 (BIGINT)",
            Kind::Bool => "BOOLEAN",
            Kind::Str => "STRING (UTF8)",
        }
    }
}

/// A column of a table (what [`table!`] lists).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    pub doc: &'static str,
}

/// The Parquet schema of a column list (`message NAME { ... }`).
pub fn schema_text(table: &str, cols: &[Column]) -> String {
    let mut s = format!("message {table} {{\n");
    for c in cols {
        let rep = if c.nullable { "OPTIONAL" } else { "REQUIRED" };
        let ann = if c.kind == Kind::Str { " (UTF8)" } else { "" };
        s.push_str(&format!("  {rep} {} {}{ann};\n", c.kind.schema(), c.name));
    }
    s.push('}');
    s
}

/// The Markdown table of a column list (docs/parquet.md).
pub fn doc_table(cols: &[Column]) -> String {
    let mut s = String::from("| column | type | null | meaning |\n|---|---|---|---|\n");
    for c in cols {
        let null = if c.nullable { "yes" } else { "no" };
        s.push_str(&format!("| `{}` | {} | {null} | {} |\n", c.name, c.kind.doc_name(), c.doc));
    }
    s
}

/// A table: its column list and how a row of `R` is appended.
///
/// ```text
/// table! { /// doc
///     pub PACKETS, write_packet(PacketRow<'_, '_>) {
///         "frame" Int false "Frame number" => |r| r.d.frame.number;
///         ...
///     }
/// }
/// ```
///
/// A getter returns the column's value: for `Int` an integer or an `Option` of one, for
/// `Bool` a `bool` or `Option<bool>`, for `Str` anything [`StrCell`] (a `&'static str`, an
/// address, a [`Hex`], a `String`, or an `Option` of them); `None` is null.
macro_rules! table {
    ($(#[$m:meta])* $vis:vis $list:ident, $write:ident($row:ty) {
        $($name:literal $kind:ident $null:literal $doc:literal => $get:expr;)*
    }) => {
        $(#[$m])*
        $vis static $list: &[$crate::export::table::Column] = &[$($crate::export::table::Column {
            name: $name,
            kind: $crate::export::table::Kind::$kind,
            nullable: $null,
            doc: $doc,
        }),*];

        /// Appends one row to the table's buffers, its values in the column list's order.
        #[inline]
        $vis fn $write(row: &$row, cells: &mut $crate::export::table::Cells<'_>) {
            $( $crate::export::table::put!($kind, cells, $crate::export::table::read(row, $get)); )*
        }
    };
}
pub(crate) use table;

/// The typed append of one value (a column's `Kind` picks the buffer's method).
macro_rules! put {
    (Int, $c:expr, $v:expr) => {
        $c.int($v)
    };
    (Bool, $c:expr, $v:expr) => {
        $c.bool($v)
    };
    (Str, $c:expr, $v:expr) => {
        $c.str($v)
    };
}
pub(crate) use put;

/// Applies a getter (a closure whose argument type comes from here).
#[inline(always)]
pub fn read<'r, R: ?Sized, T>(row: &'r R, get: impl FnOnce(&'r R) -> T) -> T {
    get(row)
}

/// A value of an INT64 column.
pub trait IntCell {
    fn int(self) -> Option<i64>;
}

macro_rules! int_cells {
    ($($t:ty),*) => {$(
        impl IntCell for $t {
            #[inline(always)]
            fn int(self) -> Option<i64> {
                Some(i64::from(self))
            }
        }
        impl IntCell for Option<$t> {
            #[inline(always)]
            fn int(self) -> Option<i64> {
                self.map(i64::from)
            }
        }
    )*};
}
int_cells!(u8, u16, u32, i64);

/// A u64 beyond i64 (never in practice: frame numbers, byte counts) is clamped.
impl IntCell for u64 {
    #[inline(always)]
    fn int(self) -> Option<i64> {
        Some(i64::try_from(self).unwrap_or(i64::MAX))
    }
}

impl IntCell for Option<u64> {
    #[inline(always)]
    fn int(self) -> Option<i64> {
        self.and_then(IntCell::int)
    }
}

/// A value of a BOOLEAN column.
pub trait BoolCell {
    fn bool(self) -> Option<bool>;
}

impl BoolCell for bool {
    #[inline(always)]
    fn bool(self) -> Option<bool> {
        Some(self)
    }
}

impl BoolCell for Option<bool> {
    #[inline(always)]
    fn bool(self) -> Option<bool> {
        self
    }
}

/// A 64-bit value written as `0x` and 16 hex digits (virtual addresses, atomic operands: JSON
/// writes them as such strings for exactness).
#[derive(Debug, Clone, Copy)]
pub struct Hex(pub u64);

/// A value of a STRING column: appends its UTF-8 bytes to `out`; `false` for null.
pub trait StrCell {
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool;
}

impl StrCell for &str {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        out.extend_from_slice(self.as_bytes());
        true
    }
}

impl StrCell for String {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        out.extend_from_slice(self.as_bytes());
        true
    }
}

impl StrCell for IpAddr {
    #[inline]
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool {
        out.extend_from_slice(ips.get(self));
        true
    }
}

impl StrCell for Hex {
    #[inline]
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        out.extend_from_slice(b"0x");
        for shift in (0..16).rev() {
            let nibble = ((self.0 >> (shift * 4)) & 0xf) as usize;
            out.push(DIGITS.get(nibble).copied().unwrap_or(b'0'));
        }
        true
    }
}

impl<T: StrCell> StrCell for Option<T> {
    #[inline]
    fn put(self, out: &mut Vec<u8>, ips: &mut IpStrings) -> bool {
        self.is_some_and(|v| v.put(out, ips))
    }
}

/// A list written comma-separated, built without allocating (problem codes, frame lists);
/// an empty list is null.
pub struct Joined<I>(pub I);

impl<I, T> StrCell for Joined<I>
where
    I: Iterator<Item = T>,
    T: std::fmt::Display,
{
    fn put(self, out: &mut Vec<u8>, _: &mut IpStrings) -> bool {
        use std::io::Write as _;
        let start = out.len();
        for (i, v) in self.0.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{v}");
        }
        out.len() > start
    }
}

enum Data {
    Int(Vec<i64>),
    Bool(Vec<bool>),
    /// The row group's strings back to back, and where each ends.
    Str {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

/// One column's values of the row group being filled.
struct Buf {
    data: Data,
    /// Definition levels (1 present, 0 null); only for nullable columns.
    defs: Vec<i16>,
    nullable: bool,
}

impl Buf {
    fn new(kind: Kind, nullable: bool) -> Self {
        let data = match kind {
            Kind::Int => Data::Int(Vec::with_capacity(ROW_GROUP)),
            Kind::Bool => Data::Bool(Vec::with_capacity(ROW_GROUP)),
            Kind::Str => Data::Str { bytes: Vec::new(), ends: Vec::with_capacity(ROW_GROUP) },
        };
        Buf { data, defs: Vec::with_capacity(if nullable { ROW_GROUP } else { 0 }), nullable }
    }

    /// Records whether the row's value was present; a required column gets its type's
    /// default when it was not (`fill`), as every row needs a value there.
    #[inline(always)]
    fn level(&mut self, present: bool, fill: impl FnOnce(&mut Data)) {
        if self.nullable {
            self.defs.push(i16::from(present));
        } else if !present {
            fill(&mut self.data);
        }
    }

    /// An empty buffer for the same column.
    fn empty_like(&self) -> Buf {
        let kind = match self.data {
            Data::Int(_) => Kind::Int,
            Data::Bool(_) => Kind::Bool,
            Data::Str { .. } => Kind::Str,
        };
        Buf::new(kind, self.nullable)
    }

    fn clear(&mut self) {
        match &mut self.data {
            Data::Int(d) => d.clear(),
            Data::Bool(d) => d.clear(),
            Data::Str { bytes, ends } => {
                bytes.clear();
                ends.clear();
            }
        }
        self.defs.clear();
    }
}

/// Addresses formatted once each (a capture has few hosts and millions of frames).
#[derive(Default)]
pub struct IpStrings(FastHashMap<IpAddr, String>);

impl IpStrings {
    fn get(&mut self, a: IpAddr) -> &[u8] {
        if self.0.len() > 65_536 {
            self.0.clear();
        }
        self.0.entry(a).or_insert_with(|| a.to_string()).as_bytes()
    }
}

/// The cells of the row being appended, column after column (what a table's write function
/// fills). A value of another type than its column's cannot be written: [`table!`] picks the
/// method from the column's `Kind`.
pub struct Cells<'w> {
    bufs: std::slice::IterMut<'w, Buf>,
    ips: &'w mut IpStrings,
}

impl Cells<'_> {
    #[inline(always)]
    pub fn int(&mut self, v: impl IntCell) {
        let Some(b) = self.bufs.next() else { return };
        let v = v.int();
        if let (Data::Int(d), Some(i)) = (&mut b.data, v) {
            d.push(i);
        }
        b.level(v.is_some(), |d| {
            if let Data::Int(d) = d {
                d.push(0);
            }
        });
    }

    #[inline(always)]
    pub fn bool(&mut self, v: impl BoolCell) {
        let Some(b) = self.bufs.next() else { return };
        let v = v.bool();
        if let (Data::Bool(d), Some(x)) = (&mut b.data, v) {
            d.push(x);
        }
        b.level(v.is_some(), |d| {
            if let Data::Bool(d) = d {
                d.push(false);
            }
        });
    }

    #[inline(always)]
    pub fn str(&mut self, v: impl StrCell) {
        let Some(b) = self.bufs.next() else { return };
        let present = match &mut b.data {
            Data::Str { bytes, ends } => {
                let start = bytes.len();
                let present = v.put(bytes, self.ips);
                if present || !b.nullable {
                    ends.push(bytes.len());
                } else {
                    bytes.truncate(start);
                }
                present
            }
            _ => false,
        };
        // A required string column's missing value is the empty string, pushed above.
        b.level(present, |_| {});
    }
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
    /// Writes `rows` buffered rows as one row group and clears the buffers.
    fn write_group(&mut self, bufs: &mut [Buf], rows: usize) -> Result<(), InputError> {
        if rows == 0 {
            return Ok(());
        }
        self.roll_if_full()?;
        let path = &self.path;
        let mut rg = self
            .file
            .next_row_group()
            .map_err(|e| InputError(format!("writing {}: {e}", path.display())))?;
        let mut res = Ok(());
        for b in bufs.iter_mut() {
            let col = match rg.next_column() {
                Ok(Some(col)) => col,
                Ok(None) => break,
                Err(e) => {
                    res = Err(e.to_string());
                    break;
                }
            };
            let mut col = col;
            let defs = b.nullable.then_some(b.defs.as_slice());
            let r = match &mut b.data {
                Data::Int(d) => col.typed::<Int64Type>().write_batch(d, defs, None),
                Data::Bool(d) => col.typed::<BoolType>().write_batch(d, defs, None),
                Data::Str { bytes, ends } => {
                    // One allocation for the row group's strings; each value is a slice of it.
                    let all = Bytes::from(std::mem::take(bytes));
                    let mut start = 0;
                    let values: Vec<ByteArray> = ends
                        .iter()
                        .map(|&end| {
                            let v = ByteArray::from(all.slice(start..end.max(start)));
                            start = end.max(start);
                            v
                        })
                        .collect();
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
        self.written += rows as u64;
        self.groups += 1;
        for b in bufs.iter_mut() {
            b.clear();
        }
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

/// A row group handed to the encoder thread: the column buffers and the rows they hold.
type Group = (Vec<Buf>, usize);

/// Where full row groups go: encoded here, or on an encoder thread while the next group
/// fills (two sets of buffers take turns: memory is bounded at two row groups).
enum Sink {
    Here(Box<Encoder>),
    Thread {
        to: std::sync::mpsc::SyncSender<Group>,
        back: std::sync::mpsc::Receiver<Vec<Buf>>,
        encoder: std::thread::JoinHandle<Result<(u64, Vec<OutFile>), InputError>>,
    },
    /// The encoder thread stopped on an error, which was returned.
    Stopped,
}

/// A Parquet file being written, one row at a time.
pub struct TableWriter {
    path: PathBuf,
    bufs: Vec<Buf>,
    rows: usize,
    ips: IpStrings,
    sink: Sink,
}

impl TableWriter {
    /// Writes a table of `cols` into `file`; the string columns named in `plain` hold values
    /// that do not repeat (no dictionary).
    pub fn create(
        file: OutFile,
        table: &str,
        cols: &[Column],
        plain: &[&str],
    ) -> Result<Self, InputError> {
        let path = file.path().to_path_buf();
        let err = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
        let schema = parse_message_type(&schema_text(table, cols)).map_err(|e| err(&e))?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
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
                Kind::Str | Kind::Bool => {}
            }
        }
        let (schema, props) = (Arc::new(schema), Arc::new(props.build()));
        let file =
            SerializedFileWriter::new(BufWriter::new(file), schema, props).map_err(|e| err(&e))?;
        Ok(TableWriter {
            path: path.clone(),
            bufs: cols.iter().map(|c| Buf::new(c.kind, c.nullable)).collect(),
            rows: 0,
            ips: IpStrings::default(),
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
        let spare: Vec<Buf> = self.bufs.iter().map(Buf::empty_like).collect();
        let (to, groups) = std::sync::mpsc::sync_channel::<Group>(1);
        let (give_back, back) = std::sync::mpsc::sync_channel::<Vec<Buf>>(2);
        // Room for two: this cannot fail.
        let _ = give_back.send(spare);
        let encoder = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || {
                for (mut bufs, rows) in groups {
                    enc.write_group(&mut bufs, rows)?;
                    // The writer may be gone (it stopped on an error): nothing to give back to.
                    let _ = give_back.send(bufs);
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
        write(&mut Cells { bufs: self.bufs.iter_mut(), ips: &mut self.ips });
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn error(&self, e: impl std::fmt::Display) -> InputError {
        InputError(format!("writing {}: {e}", self.path.display()))
    }

    /// Writes the buffered rows as one row group (or hands them to the encoder thread).
    fn flush(&mut self) -> Result<(), InputError> {
        let rows = std::mem::take(&mut self.rows);
        match &mut self.sink {
            Sink::Here(enc) => enc.write_group(&mut self.bufs, rows),
            Sink::Stopped => Err(self.error("the encoder thread stopped")),
            Sink::Thread { to, back, .. } => {
                if rows == 0 {
                    return Ok(());
                }
                // A closed channel means the encoder thread stopped on an error: `finish`
                // (or the next flush, through `stopped`) returns it.
                let Ok(spare) = back.recv() else { return self.stopped() };
                let full = std::mem::replace(&mut self.bufs, spare);
                if to.send((full, rows)).is_err() {
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
    use super::*;

    fn cell(v: impl StrCell) -> Option<String> {
        let mut out = Vec::new();
        v.put(&mut out, &mut IpStrings::default()).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn string_cells_write_their_text_or_null() {
        assert_eq!(cell(Hex(0x1234_abcd)), Some("0x000000001234abcd".into()));
        assert_eq!(cell(Hex(u64::MAX)), Some("0xffffffffffffffff".into()));
        assert_eq!(cell(Joined([3u64, 5, 8].iter())), Some("3,5,8".into()));
        assert_eq!(cell(Joined(std::iter::empty::<u64>())), None);
        assert_eq!(cell(None::<&'static str>), None);
        let ip: IpAddr = "fe80::1".parse().unwrap();
        assert_eq!(cell(Some(ip)), Some("fe80::1".into()));
        assert_eq!(1u32.int(), Some(1));
        assert_eq!(u64::MAX.int(), Some(i64::MAX));
        assert_eq!(None::<u16>.int(), None);
    }
}
