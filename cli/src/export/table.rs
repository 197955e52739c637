//! A Parquet table from a declarative column list: each [`Column`] says its name, type,
//! whether it may be null, what it means (docs/parquet.md is generated from the lists) and how
//! to read its value from a row. The writer buffers [`ROW_GROUP`] rows, column by column, and
//! hands each row group to the `parquet` crate's low-level column writers.
//!
//! Why the low-level writer and not arrow: it needs 28 crates and about 1.5 minutes of clean
//! release build here, arrow (with zstd and snappy) 51 crates and several minutes
//! (BENCHMARKS.md); rows arrive one at a time from the frame loop, so arrow's record batches
//! would only be an extra copy. Values are written uncompressed with dictionary encoding
//! (the parquet default): strings that repeat (addresses, opcode names, statuses) cost an index
//! each, and no compression codec crate is built.

use std::fs::File;
use std::io::BufWriter;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use roce_conformance::hash::FastHashMap;

use crate::input::InputError;

/// Rows per row group: large enough for good encoding, small enough that a table's buffers
/// stay a few tens of MB whatever the capture's length.
pub const ROW_GROUP: usize = 64 * 1024;

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

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Bool(bool),
    /// A string the program holds (names, codes).
    Static(&'static str),
    Text(String),
    /// An address, written in its usual text form.
    Ip(IpAddr),
}

impl Value {
    pub fn int(v: impl Into<i64>) -> Value {
        Value::Int(v.into())
    }

    /// A u64 beyond i64 (never in practice: frame numbers, byte counts) is clamped.
    pub fn uint(v: u64) -> Value {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }

    pub fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
        v.map_or(Value::Null, f)
    }
}

/// A column of a table whose rows are read by `G` (a function of the row).
#[derive(Debug, Clone, Copy)]
pub struct Column<G> {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    pub doc: &'static str,
    pub get: G,
}

/// The Parquet schema of a column list (`message NAME { ... }`).
pub fn schema_text<G>(table: &str, cols: &[Column<G>]) -> String {
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
pub fn doc_table<G>(cols: &[Column<G>]) -> String {
    let mut s = String::from("| column | type | null | meaning |\n|---|---|---|---|\n");
    for c in cols {
        let null = if c.nullable { "yes" } else { "no" };
        s.push_str(&format!("| `{}` | {} | {null} | {} |\n", c.name, c.kind.doc_name(), c.doc));
    }
    s
}

enum Data {
    Int(Vec<i64>),
    Bool(Vec<bool>),
    Str(Vec<ByteArray>),
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
            Kind::Str => Data::Str(Vec::with_capacity(ROW_GROUP)),
        };
        Buf { data, defs: Vec::with_capacity(if nullable { ROW_GROUP } else { 0 }), nullable }
    }

    #[inline]
    fn push(&mut self, v: Value, ips: &mut IpStrings) {
        let present = match (&mut self.data, v) {
            (_, Value::Null) => false,
            (Data::Int(d), Value::Int(i)) => {
                d.push(i);
                true
            }
            (Data::Bool(d), Value::Bool(b)) => {
                d.push(b);
                true
            }
            (Data::Str(d), Value::Static(s)) => {
                d.push(ByteArray::from(Bytes::from_static(s.as_bytes())));
                true
            }
            (Data::Str(d), Value::Text(s)) => {
                d.push(ByteArray::from(s.into_bytes()));
                true
            }
            (Data::Str(d), Value::Ip(a)) => {
                d.push(ips.get(a));
                true
            }
            // A value of another type than its column's: a bug in a column list (the tests
            // write every list over every capture of pcaps/); written as null, never a panic.
            _ => false,
        };
        if self.nullable {
            self.defs.push(i16::from(present));
        } else if !present {
            // A required column must have a value in every row.
            match &mut self.data {
                Data::Int(d) => d.push(0),
                Data::Bool(d) => d.push(false),
                Data::Str(d) => d.push(ByteArray::from(Bytes::new())),
            }
        }
    }

    fn clear(&mut self) {
        match &mut self.data {
            Data::Int(d) => d.clear(),
            Data::Bool(d) => d.clear(),
            Data::Str(d) => d.clear(),
        }
        self.defs.clear();
    }
}

/// Addresses formatted once each (a capture has few hosts and millions of frames).
#[derive(Default)]
struct IpStrings(FastHashMap<IpAddr, ByteArray>);

impl IpStrings {
    fn get(&mut self, a: IpAddr) -> ByteArray {
        if self.0.len() > 65_536 {
            self.0.clear();
        }
        self.0.entry(a).or_insert_with(|| ByteArray::from(a.to_string().into_bytes())).clone()
    }
}

/// A Parquet file being written, one row at a time.
pub struct TableWriter {
    path: PathBuf,
    bufs: Vec<Buf>,
    rows: usize,
    written: u64,
    ips: IpStrings,
    file: SerializedFileWriter<BufWriter<File>>,
}

impl TableWriter {
    /// Creates `path` for a table of `cols`; the columns named in `plain` hold values that do
    /// not repeat (no dictionary).
    pub fn create<G>(
        path: &Path,
        table: &str,
        cols: &[Column<G>],
        plain: &[&str],
    ) -> Result<Self, InputError> {
        let err = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
        let schema = parse_message_type(&schema_text(table, cols)).map_err(|e| err(&e))?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_created_by(format!("roce-inspect {}", crate::version()));
        // No dictionary for the columns whose values do not repeat: it cost a hash per
        // value for nothing (the others repeat, and their dictionaries make the file 4x
        // smaller than plain encoding).
        for name in plain {
            props = props.set_column_dictionary_enabled(ColumnPath::from(*name), false);
        }
        let props = props.build();
        let file = File::create(path).map_err(|e| err(&format!("cannot create: {e}")))?;
        let file =
            SerializedFileWriter::new(BufWriter::new(file), Arc::new(schema), Arc::new(props))
                .map_err(|e| err(&e))?;
        Ok(TableWriter {
            path: path.to_path_buf(),
            bufs: cols.iter().map(|c| Buf::new(c.kind, c.nullable)).collect(),
            rows: 0,
            written: 0,
            ips: IpStrings::default(),
            file,
        })
    }

    /// Appends one row: its values in the column list's order.
    #[inline]
    pub fn row(&mut self, values: impl Iterator<Item = Value>) -> Result<(), InputError> {
        for (b, v) in self.bufs.iter_mut().zip(values) {
            b.push(v, &mut self.ips);
        }
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn error(&self, e: impl std::fmt::Display) -> InputError {
        InputError(format!("writing {}: {e}", self.path.display()))
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<(), InputError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut rg = self.file.next_row_group().map_err(|e| InputError(e.to_string()))?;
        let mut res = Ok(());
        for b in &self.bufs {
            let Some(mut col) = rg.next_column().map_err(|e| InputError(e.to_string()))? else {
                break;
            };
            let defs = b.nullable.then_some(b.defs.as_slice());
            let r = match &b.data {
                Data::Int(d) => col.typed::<Int64Type>().write_batch(d, defs, None),
                Data::Bool(d) => col.typed::<BoolType>().write_batch(d, defs, None),
                Data::Str(d) => col.typed::<ByteArrayType>().write_batch(d, defs, None),
            };
            let r = r.and_then(|_| col.close());
            if let Err(e) = r {
                res = Err(e.to_string());
                break;
            }
        }
        let closed = rg.close().map(|_| ()).map_err(|e| e.to_string());
        res.and(closed).map_err(|e| self.error(e))?;
        self.written += self.rows as u64;
        self.rows = 0;
        for b in &mut self.bufs {
            b.clear();
        }
        Ok(())
    }

    /// Writes what is buffered and the footer; returns the rows written.
    pub fn finish(mut self) -> Result<u64, InputError> {
        self.flush()?;
        let path = self.path.clone();
        let w = self.written;
        self.file
            .into_inner()
            .map_err(|e| InputError(format!("writing {}: {e}", path.display())))
            .and_then(|mut bw| {
                use std::io::Write as _;
                bw.flush().map_err(|e| InputError(format!("writing {}: {e}", path.display())))
            })?;
        Ok(w)
    }
}
