//! The rows of `export`'s tables, a consumer of the pass: the packets table (one row per
//! frame, [`PACKET_COLUMNS`], appended by [`write_packet`] from a [`PacketRow`]), the
//! connections table (one row per connection incarnation, [`CONNECTION_COLUMNS`]) and the
//! findings table ([`FINDING_COLUMNS`]). The command line writes them as Parquet
//! (`roce-inspect export`, docs/parquet.md is generated from these lists); a binding (Python,
//! Spark, C) gets the same columns, with the same names, types and values, from here.
//!
//! A table's rows are held column by column in a [`RowGroup`]: for each column its present
//! values back to back and, for a nullable column, a definition level per row (1 present, 0
//! null), the layout a Parquet column chunk is written from. An Arrow array of a column is its
//! values spread over the rows whose level is 1 (the levels are its validity), a string
//! column's values are the UTF-8 bytes and where each ends ([`Strings`]), a binary column's
//! the same of any bytes ([`Binaries`]).
//!
//! `export --raw` adds [`RAW_COLUMNS`] after the packets table's columns (the frame's bytes,
//! its link type, its host pair's hash): a group of [`packet_columns`]`(true)` gets each row
//! from [`write_packet`] and then [`write_raw`].
//!
//! ```
//! use roce_analysis::rows::{write_packet, PacketRow, RowGroup, Values, PACKET_COLUMNS};
//! use roce_analysis::Pass;
//! use roce_parser::Config;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
//! let cap = roce_capture::open(std::path::Path::new(path))?;
//! let mut rows = RowGroup::new(PACKET_COLUMNS, 1024);
//! Pass::new(&Config::default()).run(cap, |d| {
//!     // `incarnation` and `retransmission` are the checker's (roce_conformance::Checker);
//!     // without one they are null.
//!     let row = PacketRow { d, incarnation: None, retransmission: None };
//!     rows.push(|cells| write_packet(&row, cells));
//! })?;
//! let (frame, values) = rows.columns().next().unwrap();
//! assert_eq!(frame.name, "frame");
//! let Values::Int(numbers) = values.values else { unreachable!() };
//! assert_eq!(numbers.first(), Some(&1));
//! assert_eq!(numbers.len(), rows.len());
//! # Ok::<(), roce_capture::CaptureError>(())
//! ```

mod cells;
mod packets;
mod reports;

pub use cells::{BoolCell, BytesCell, Cells, Hex, IntCell, IpStrings, Joined, StrCell};
pub use packets::{
    packet_columns, packet_columns_of, write_packet, write_packet_from, write_raw, write_source,
    PacketRow, SourceRow, PACKET_COLUMNS, PACKET_UNIQUE, RAW_COLUMNS, SOURCE_COLUMNS,
};
pub use reports::{
    write_connection, write_finding, ConnectionRow, CONNECTION_COLUMNS, FINDING_COLUMNS,
};

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A 64-bit signed integer (Parquet INT64, Arrow Int64): frame numbers, lengths, PSNs,
    /// QPNs, counters.
    Int,
    /// A boolean (Parquet BOOLEAN, Arrow Boolean).
    Bool,
    /// A UTF-8 string (Parquet BYTE_ARRAY annotated UTF8, Arrow Utf8).
    Str,
    /// Bytes (Parquet BYTE_ARRAY without annotation, Arrow Binary, Spark BinaryType, DuckDB
    /// BLOB): a frame as captured.
    Bytes,
}

impl Kind {
    /// The type as docs/parquet.md names it (DuckDB's and Spark's names).
    pub fn doc_name(self) -> &'static str {
        match self {
            Kind::Int => "INT64 (BIGINT)",
            Kind::Bool => "BOOLEAN",
            Kind::Str => "STRING (UTF8)",
            Kind::Bytes => "BINARY (BLOB)",
        }
    }
}

/// A column of a table (one line of its `table!` list).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// The column's name in the file.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Whether a row may have no value there (null).
    pub nullable: bool,
    /// What it means (docs/parquet.md).
    pub doc: &'static str,
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
/// address, a [`Hex`], a `String`, or an `Option` of them), for `Bytes` a `&[u8]` or an
/// `Option` of one ([`BytesCell`]); `None` is null. The cell's method
/// is picked here from the column's type and nullability, so a row is appended with no
/// per-value enum or call through a pointer.
macro_rules! table {
    ($(#[$m:meta])* $vis:vis $list:ident, $write:ident($row:ty) {
        $($name:literal $kind:ident $null:tt $doc:literal => $get:expr;)*
    }) => {
        $(#[$m])*
        $vis static $list: &[$crate::rows::Column] = &[$($crate::rows::Column {
            name: $name,
            kind: $crate::rows::Kind::$kind,
            nullable: $null,
            doc: $doc,
        }),*];

        /// Appends one row to a [`RowGroup`](crate::rows::RowGroup) of this table (made with
        /// its column list), its values in the column list's order.
        #[inline]
        $vis fn $write(row: &$row, cells: &mut $crate::rows::Cells<'_>) {
            $( $crate::rows::put!($kind, $null, cells, $crate::rows::read(row, $get)); )*
        }
    };
}
pub(crate) use table;

/// The typed append of one value (a column's `Kind` and nullability pick the method).
macro_rules! put {
    (Int, true, $c:expr, $v:expr) => {
        $c.int($v)
    };
    (Int, false, $c:expr, $v:expr) => {
        $c.int_required($v)
    };
    (Bool, true, $c:expr, $v:expr) => {
        $c.bool($v)
    };
    (Bool, false, $c:expr, $v:expr) => {
        $c.bool_required($v)
    };
    (Str, true, $c:expr, $v:expr) => {
        $c.str($v)
    };
    (Str, false, $c:expr, $v:expr) => {
        $c.str_required($v)
    };
    (Bytes, true, $c:expr, $v:expr) => {
        $c.bytes($v)
    };
    (Bytes, false, $c:expr, $v:expr) => {
        $c.bytes_required($v)
    };
}
pub(crate) use put;

/// Applies a getter (a closure whose argument type comes from here).
#[inline(always)]
pub(crate) fn read<'r, R: ?Sized, T>(row: &'r R, get: impl FnOnce(&'r R) -> T) -> T {
    get(row)
}

/// The present values of an integer column.
#[derive(Debug, Clone, Default)]
pub(crate) struct IntColumn {
    pub(crate) values: Vec<i64>,
    pub(crate) defs: Vec<i16>,
}

/// The present values of a boolean column.
#[derive(Debug, Clone, Default)]
pub(crate) struct BoolColumn {
    pub(crate) values: Vec<bool>,
    pub(crate) defs: Vec<i16>,
}

/// The present values of a string or binary column, back to back, and where each ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct StrColumn {
    pub(crate) bytes: Vec<u8>,
    pub(crate) ends: Vec<usize>,
    pub(crate) defs: Vec<i16>,
}

/// The present strings of a string column: `bytes` holds them back to back, `ends[i]` is
/// where string `i` ends (it starts where string `i - 1` ends, the first at 0).
#[derive(Debug, Clone, Copy)]
pub struct Strings<'a> {
    /// The strings' UTF-8 bytes, back to back.
    pub bytes: &'a [u8],
    /// Where each ends in `bytes`.
    pub ends: &'a [usize],
}

impl<'a> Strings<'a> {
    /// The strings, in row order.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        let bytes = self.bytes;
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let s = bytes.get(start..end).unwrap_or_default();
            start = end.max(start);
            // Every value was appended as a `&str` or an ASCII formatting.
            std::str::from_utf8(s).unwrap_or_default()
        })
    }

    /// How many strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The present values of a binary column: `bytes` holds them back to back, `ends[i]` is
/// where value `i` ends (it starts where value `i - 1` ends, the first at 0).
#[derive(Debug, Clone, Copy)]
pub struct Binaries<'a> {
    /// The values' bytes, back to back.
    pub bytes: &'a [u8],
    /// Where each ends in `bytes`.
    pub ends: &'a [usize],
}

impl<'a> Binaries<'a> {
    /// The values, in row order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let bytes = self.bytes;
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let v = bytes.get(start..end).unwrap_or_default();
            start = end.max(start);
            v
        })
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The present values of one column of a [`RowGroup`].
#[derive(Debug, Clone, Copy)]
pub enum Values<'a> {
    /// An integer column's.
    Int(&'a [i64]),
    /// A boolean column's.
    Bool(&'a [bool]),
    /// A string column's.
    Str(Strings<'a>),
    /// A binary column's.
    Bytes(Binaries<'a>),
}

/// One column of a [`RowGroup`]: its present values and, for a nullable column, each row's
/// definition level (1 present, 0 null; `None` for a required column, every row present).
#[derive(Debug, Clone, Copy)]
pub struct ColumnValues<'a> {
    /// The present values, in row order.
    pub values: Values<'a>,
    /// One level per row, for a nullable column.
    pub defs: Option<&'a [i16]>,
}

/// Gives a column's `rows` rows, all null so far (`values` empty, `defs` 0), the values
/// `cells` holds (`None` stays null): [`RowGroup::fill_int`], [`RowGroup::fill_bool`].
fn fill<T>(
    column: &str,
    c: Option<(&mut Vec<T>, &mut [i16])>,
    rows: usize,
    cells: impl Iterator<Item = Option<T>>,
) -> Result<(), FillError> {
    let Some((values, defs)) = c else { return Err(FillError::new(column, "no such column")) };
    if !values.is_empty() {
        return Err(FillError::new(column, "a row already has a value"));
    }
    for (v, d) in cells.zip(defs.iter_mut()).take(rows) {
        if let Some(x) = v {
            values.push(x);
            *d = 1;
        }
    }
    Ok(())
}

/// The levels of a nullable column's first `rows` rows.
fn levels(nullable: bool, defs: &[i16], rows: usize) -> Option<&[i16]> {
    nullable.then(|| defs.get(..rows).unwrap_or(defs))
}

/// Why [`RowGroup::fill_int`] or [`RowGroup::fill_bool`] refused: the group is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FillError {
    /// The column named.
    pub column: String,
    /// What is wrong: no such column, not a nullable column of that type, not one value per
    /// row, or a row already has a value.
    pub why: &'static str,
}

impl FillError {
    fn new(column: &str, why: &'static str) -> Self {
        FillError { column: column.to_string(), why }
    }
}

impl std::fmt::Display for FillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "column {}: {}", self.column, self.why)
    }
}

impl std::error::Error for FillError {}

/// Rows of one table (up to the capacity it was made with, a Parquet row group), held
/// column by column. Appending a row allocates nothing until the capacity is reached (a
/// string or binary column's bytes excepted, which grow with the values).
#[derive(Debug, Clone)]
pub struct RowGroup {
    columns: &'static [Column],
    /// For each column in `columns`' order: its kind's list and the index in it.
    order: Vec<(Kind, usize)>,
    ints: Vec<IntColumn>,
    bools: Vec<BoolColumn>,
    strs: Vec<StrColumn>,
    bins: Vec<StrColumn>,
    rows: usize,
    capacity: usize,
    ips: IpStrings,
}

impl RowGroup {
    /// An empty group of the table `columns` ([`PACKET_COLUMNS`], ...), room made for
    /// `capacity` rows.
    pub fn new(columns: &'static [Column], capacity: usize) -> Self {
        let mut g = RowGroup {
            columns,
            order: Vec::with_capacity(columns.len()),
            ints: Vec::new(),
            bools: Vec::new(),
            strs: Vec::new(),
            bins: Vec::new(),
            rows: 0,
            capacity,
            ips: IpStrings::default(),
        };
        for c in columns {
            let defs = vec![0; if c.nullable { capacity } else { 0 }];
            let at = match c.kind {
                Kind::Int => {
                    g.ints.push(IntColumn { values: Vec::with_capacity(capacity), defs });
                    g.ints.len() - 1
                }
                Kind::Bool => {
                    g.bools.push(BoolColumn { values: Vec::with_capacity(capacity), defs });
                    g.bools.len() - 1
                }
                Kind::Str => {
                    g.strs.push(StrColumn {
                        bytes: Vec::new(),
                        ends: Vec::with_capacity(capacity),
                        defs,
                    });
                    g.strs.len() - 1
                }
                Kind::Bytes => {
                    g.bins.push(StrColumn {
                        bytes: Vec::new(),
                        ends: Vec::with_capacity(capacity),
                        defs,
                    });
                    g.bins.len() - 1
                }
            };
            g.order.push((c.kind, at));
        }
        g
    }

    /// An empty group of the same table and capacity.
    pub fn empty_like(&self) -> Self {
        RowGroup::new(self.columns, self.capacity)
    }

    /// The table's columns.
    pub fn column_list(&self) -> &'static [Column] {
        self.columns
    }

    /// Appends one row: `write` fills its cells (a table's write function, such as
    /// [`write_packet`], for the table this group was made for).
    #[inline]
    pub fn push(&mut self, write: impl FnOnce(&mut Cells<'_>)) {
        let row = self.rows;
        // Past the capacity the levels grow (a caller that does not flush at the capacity).
        if row >= self.capacity {
            self.grow();
        }
        write(&mut Cells::new(
            &mut self.ints,
            &mut self.bools,
            &mut self.strs,
            &mut self.bins,
            &mut self.ips,
            row,
        ));
        self.rows += 1;
    }

    /// Room for as many rows again (the levels are per row, written in place).
    #[cold]
    fn grow(&mut self) {
        self.capacity = (self.capacity * 2).max(1);
        let n = self.capacity;
        for (c, &(kind, at)) in self.columns.iter().zip(&self.order) {
            let defs = match kind {
                Kind::Int => self.ints.get_mut(at).map(|x| &mut x.defs),
                Kind::Bool => self.bools.get_mut(at).map(|x| &mut x.defs),
                Kind::Str => self.strs.get_mut(at).map(|x| &mut x.defs),
                Kind::Bytes => self.bins.get_mut(at).map(|x| &mut x.defs),
            };
            if let (true, Some(defs)) = (c.nullable, defs) {
                defs.resize(n, 0);
            }
        }
    }

    /// The rows appended.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was appended.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Each column and its values, in the table's order.
    pub fn columns(&self) -> impl Iterator<Item = (&'static Column, ColumnValues<'_>)> + '_ {
        let rows = self.rows;
        self.columns.iter().zip(&self.order).filter_map(move |(c, &(kind, at))| {
            let nullable = c.nullable;
            let (values, defs) = match kind {
                Kind::Int => self
                    .ints
                    .get(at)
                    .map(|x| (Values::Int(&x.values), levels(nullable, &x.defs, rows)))?,
                Kind::Bool => self
                    .bools
                    .get(at)
                    .map(|x| (Values::Bool(&x.values), levels(nullable, &x.defs, rows)))?,
                Kind::Str => self.strs.get(at).map(|x| {
                    (
                        Values::Str(Strings { bytes: &x.bytes, ends: &x.ends }),
                        levels(nullable, &x.defs, rows),
                    )
                })?,
                Kind::Bytes => self.bins.get(at).map(|x| {
                    (
                        Values::Bytes(Binaries { bytes: &x.bytes, ends: &x.ends }),
                        levels(nullable, &x.defs, rows),
                    )
                })?,
            };
            Some((c, ColumnValues { values, defs }))
        })
    }

    /// Gives an integer column whose rows were all appended null its values, one per row
    /// (`None` stays null): the group is then what appending each row with its value would
    /// have made. For a column known elsewhere than where the rows are built: `export` builds
    /// the packets table's rows on the thread that reads the capture, and the connection
    /// model, on another, knows each row's `incarnation` and `retransmission`.
    ///
    /// ```
    /// use roce_analysis::rows::{write_packet, PacketRow, RowGroup, Values, PACKET_COLUMNS};
    /// use roce_analysis::Pass;
    /// use roce_parser::Config;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
    /// let cap = roce_capture::open(std::path::Path::new(path))?;
    /// let mut rows = RowGroup::new(PACKET_COLUMNS, 1024);
    /// Pass::new(&Config::default()).run(cap, |d| {
    ///     let row = PacketRow { d, incarnation: None, retransmission: None };
    ///     rows.push(|cells| write_packet(&row, cells));
    /// })?;
    /// // Later, elsewhere: every frame is of the first incarnation.
    /// rows.fill_int("incarnation", &vec![Some(1u32); rows.len()]).unwrap();
    /// let (_, col) = rows.columns().find(|(c, _)| c.name == "incarnation").unwrap();
    /// assert!(matches!(col.values, Values::Int(v) if v.len() == rows.len()));
    /// assert!(rows.fill_int("incarnation", &vec![Some(1u32); rows.len()]).is_err(), "filled");
    /// # Ok::<(), roce_capture::CaptureError>(())
    /// ```
    pub fn fill_int<V: IntCell + Copy>(
        &mut self,
        column: &str,
        values: &[V],
    ) -> Result<(), FillError> {
        let (rows, at) = (self.rows, self.fillable(column, Kind::Int, values.len())?);
        let c = self.ints.get_mut(at).map(|c| (&mut c.values, c.defs.as_mut_slice()));
        fill(column, c, rows, values.iter().map(|v| v.int()))
    }

    /// [`RowGroup::fill_int`] for a boolean column.
    pub fn fill_bool<V: BoolCell + Copy>(
        &mut self,
        column: &str,
        values: &[V],
    ) -> Result<(), FillError> {
        let (rows, at) = (self.rows, self.fillable(column, Kind::Bool, values.len())?);
        let c = self.bools.get_mut(at).map(|c| (&mut c.values, c.defs.as_mut_slice()));
        fill(column, c, rows, values.iter().map(|v| v.bool()))
    }

    /// Where nullable column `column` of type `kind` is in its kind's list, given `values`
    /// values for it (one per row).
    fn fillable(&self, column: &str, kind: Kind, values: usize) -> Result<usize, FillError> {
        let Some((c, &(k, at))) =
            self.columns.iter().zip(&self.order).find(|(c, _)| c.name == column)
        else {
            return Err(FillError::new(column, "no such column"));
        };
        if k != kind || !c.nullable {
            return Err(FillError::new(column, "not a nullable column of that type"));
        }
        if values != self.rows {
            return Err(FillError::new(column, "not one value per row"));
        }
        Ok(at)
    }

    /// Removes every row (the buffers keep their room).
    pub fn clear(&mut self) {
        let rows = self.rows;
        let zero = |defs: &mut Vec<i16>| {
            if let Some(d) = defs.get_mut(..rows) {
                d.fill(0);
            } else {
                defs.fill(0);
            }
        };
        for c in &mut self.ints {
            c.values.clear();
            zero(&mut c.defs);
        }
        for c in &mut self.bools {
            c.values.clear();
            zero(&mut c.defs);
        }
        for c in self.strs.iter_mut().chain(&mut self.bins) {
            c.bytes.clear();
            c.ends.clear();
            zero(&mut c.defs);
        }
        self.rows = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pass;
    use roce_parser::Config;

    const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");

    /// The packets table of pcaps/sample.pcap in a group made for `capacity` rows.
    fn sample(capacity: usize) -> RowGroup {
        sample_of(false, capacity)
    }

    /// The same with `raw`: `export --raw`'s columns too.
    fn sample_of(raw: bool, capacity: usize) -> RowGroup {
        let cap = roce_capture::open(std::path::Path::new(SAMPLE)).unwrap();
        let mut rows = RowGroup::new(packet_columns(raw), capacity);
        Pass::new(&Config::default())
            .run(cap, |d| {
                let row = PacketRow { d, incarnation: None, retransmission: None };
                rows.push(|cells| {
                    write_packet(&row, cells);
                    if raw {
                        write_raw(&row, cells);
                    }
                });
            })
            .unwrap();
        rows
    }

    /// Each column as text: its levels and its values, for comparing two groups.
    fn dump(rows: &RowGroup) -> Vec<String> {
        rows.columns()
            .map(|(c, v)| {
                let values = match v.values {
                    Values::Int(x) => format!("{x:?}"),
                    Values::Bool(x) => format!("{x:?}"),
                    Values::Str(s) => format!("{:?}", s.iter().collect::<Vec<_>>()),
                    Values::Bytes(b) => format!("{:?}", b.iter().collect::<Vec<_>>()),
                };
                format!("{} {:?} {values}", c.name, v.defs)
            })
            .collect()
    }

    #[test]
    fn a_column_holds_one_value_per_present_level() {
        let rows = sample(1024);
        assert_eq!(rows.len(), 39);
        assert_eq!(rows.columns().count(), PACKET_COLUMNS.len());
        for (c, v) in rows.columns() {
            let n = match v.values {
                Values::Int(x) => x.len(),
                Values::Bool(x) => x.len(),
                Values::Str(s) => s.len(),
                Values::Bytes(b) => b.len(),
            };
            match v.defs {
                Some(defs) => {
                    assert!(c.nullable, "{}", c.name);
                    assert_eq!(defs.len(), rows.len(), "{}", c.name);
                    assert!(defs.iter().all(|&l| l == 0 || l == 1), "{}", c.name);
                    let present = defs.iter().filter(|&&l| l == 1).count();
                    assert_eq!(present, n, "{}", c.name);
                }
                None => assert_eq!(n, rows.len(), "{} is required: a value per row", c.name),
            }
        }
        let (frame, v) = rows.columns().next().unwrap();
        assert_eq!(frame.name, "frame");
        let Values::Int(numbers) = v.values else { panic!("frame is an integer column") };
        assert_eq!(numbers, (1..=39).collect::<Vec<i64>>());
        // Every frame of the sample has its addresses (dissect's `ip.src`: frame 1's is
        // 10.0.0.1) and an opcode name.
        let col = |name: &str| rows.columns().find(|(c, _)| c.name == name).unwrap().1;
        let Values::Str(src) = col("ip_src").values else { panic!("ip_src is a string") };
        assert_eq!(src.len(), 39);
        assert_eq!(src.iter().next(), Some("10.0.0.1"));
        assert!(src.iter().all(|a| a.parse::<std::net::IpAddr>().is_ok()));
        let Values::Str(names) = col("bth_opcode_name").values else { panic!("a string") };
        assert!(
            names.iter().any(|n| n == "RC_SEND_ONLY"),
            "{:?}",
            names.iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_group_past_its_capacity_and_a_cleared_group_hold_the_same_rows() {
        let want = dump(&sample(1024));
        assert_eq!(dump(&sample(4)), want);
        assert_eq!(dump(&sample(0)), want);
        let mut again = sample(1024);
        again.clear();
        assert!(again.is_empty());
        assert!(again.columns().all(|(_, v)| v.defs.is_none_or(|d| d.is_empty())));
        let cap = roce_capture::open(std::path::Path::new(SAMPLE)).unwrap();
        Pass::new(&Config::default())
            .run(cap, |d| {
                let row = PacketRow { d, incarnation: None, retransmission: None };
                again.push(|cells| write_packet(&row, cells));
            })
            .unwrap();
        assert_eq!(dump(&again), want);
    }

    /// A value of the model's columns for frame `n` (some null, some not).
    fn model_of(n: u64) -> (Option<u32>, Option<bool>) {
        let incarnation = (!n.is_multiple_of(5)).then_some((n % 3) as u32 + 1);
        let retransmission = (n % 4 != 1).then_some(n.is_multiple_of(2));
        (incarnation, retransmission)
    }

    #[test]
    fn columns_filled_later_make_the_group_appending_them_would() {
        let cap = |_| roce_capture::open(std::path::Path::new(SAMPLE)).unwrap();
        let mut whole = RowGroup::new(packet_columns(true), 16);
        let mut later = RowGroup::new(packet_columns(true), 16);
        let mut model = Vec::new();
        Pass::new(&Config::default())
            .run(cap(()), |d| {
                let (incarnation, retransmission) = model_of(d.frame.number);
                model.push((incarnation, retransmission));
                let row = PacketRow { d, incarnation, retransmission };
                whole.push(|cells| {
                    write_packet(&row, cells);
                    write_raw(&row, cells);
                });
                let row = PacketRow { d, incarnation: None, retransmission: None };
                later.push(|cells| {
                    write_packet(&row, cells);
                    write_raw(&row, cells);
                });
            })
            .unwrap();
        assert_ne!(dump(&later), dump(&whole));
        let incarnations: Vec<Option<u32>> = model.iter().map(|m| m.0).collect();
        let retransmissions: Vec<Option<bool>> = model.iter().map(|m| m.1).collect();
        // Refused, the group unchanged: another column's type, a required column, no such
        // column, a value short.
        let before = dump(&later);
        let refused = |e: Result<(), FillError>| e.unwrap_err().why;
        assert_eq!(
            refused(later.fill_bool("incarnation", &retransmissions)),
            "not a nullable column of that type"
        );
        assert_eq!(
            refused(later.fill_int("frame", &incarnations)),
            "not a nullable column of that type"
        );
        assert_eq!(refused(later.fill_int("incarnations", &incarnations)), "no such column");
        assert_eq!(
            refused(later.fill_int("incarnation", &incarnations[1..])),
            "not one value per row"
        );
        assert_eq!(dump(&later), before);
        later.fill_int("incarnation", &incarnations).unwrap();
        later.fill_bool("retransmission", &retransmissions).unwrap();
        assert_eq!(dump(&later), dump(&whole));
        let twice = later.fill_int("incarnation", &incarnations).unwrap_err();
        assert_eq!(twice.to_string(), "column incarnation: a row already has a value");
        // A cleared group is filled again the same way.
        later.clear();
        Pass::new(&Config::default())
            .run(cap(()), |d| {
                let row = PacketRow { d, incarnation: None, retransmission: None };
                later.push(|cells| {
                    write_packet(&row, cells);
                    write_raw(&row, cells);
                });
            })
            .unwrap();
        later.fill_int("incarnation", &incarnations).unwrap();
        later.fill_bool("retransmission", &retransmissions).unwrap();
        assert_eq!(dump(&later), dump(&whole));
    }

    #[test]
    fn raw_columns_hold_each_frames_bytes_after_the_packet_columns() {
        let mut cap = roce_capture::open(std::path::Path::new(SAMPLE)).unwrap();
        let mut frames = Vec::new();
        while let Some(f) = cap.next_frame() {
            frames.push(f.unwrap().data.to_vec());
        }
        let rows = sample_of(true, 1024);
        assert_eq!(rows.column_list().len(), PACKET_COLUMNS.len() + RAW_COLUMNS.len());
        let plain = dump(&sample(1024));
        let all = dump(&rows);
        assert_eq!(all[..plain.len()], plain[..], "the packet columns come first, unchanged");
        let col = |name: &str| rows.columns().find(|(c, _)| c.name == name).unwrap().1;
        let Values::Bytes(raw) = col("raw").values else { panic!("raw is a binary column") };
        assert!(col("raw").defs.is_none(), "raw is required");
        assert_eq!(raw.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), frames);
        let Values::Int(links) = col("link_type").values else { panic!("an integer column") };
        assert_eq!(links, vec![1; frames.len()]);
        // Every frame of the sample is IP: a hash each, 10.0.0.1 with 10.0.0.2 the pinned one.
        let Values::Int(pairs) = col("host_pair").values else { panic!("an integer column") };
        assert_eq!(pairs.len(), frames.len());
        assert_eq!(pairs.first(), Some(&(0x4537_6971_daba_9929u64 as i64)));
        // Past the capacity and after a clear, the same rows.
        assert_eq!(dump(&sample_of(true, 3)), all);
        assert_eq!(Kind::Bytes.doc_name(), "BINARY (BLOB)");
    }
}
