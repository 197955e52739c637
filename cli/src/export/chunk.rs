//! Column chunks encoded by our own code, written as pages through the `parquet` crate's page
//! writer and spliced into the row group with `append_column`: INT64 ([`int_chunk`]),
//! BOOLEAN ([`bool_chunk`]) and dictionary-encoded strings ([`dictionary_chunk`]).
//!
//! Why: the crate's column writer handles each value several times (the DELTA_BINARY_PACKED
//! encoder's four passes through a bit writer, a level encoder fed value by value, min/max
//! compared per value, an ahash interner per string): ~4,330 of export's ~9,300
//! instructions per frame. A row group's column is already whole in memory
//! ([`roce_analysis::rows::RowGroup`]), so it is encoded here in one page, in a few tight
//! loops over slices: export went from 9,308 to 6,749 instructions per frame (BENCHMARKS.md,
//! "Export: our own column-chunk encoder"). The files hold the same schema, values, nulls
//! and statistics (chunk min/max/null_count, the page index, the definition-level
//! histogram) as the crate's writer makes; `table.rs`'s tests compare both writers on the
//! same rows. (`next_column_with_factory`, which would hand out the column's page writer,
//! is not public in parquet 60: the pages go to a buffer, then `append_column` copies them.)
//!
//! The format (Parquet spec, Encodings.md): a v1 data page (as the crate's default
//! `PARQUET_1_0` writer makes) holds the definition levels, RLE / bit-packed hybrid with a
//! 4-byte length, then the values. DELTA_BINARY_PACKED: a header (block size, miniblocks per
//! block, value count, first value as zigzag ULEB128), then blocks of [`BLOCK`] deltas, each
//! its min delta (zigzag ULEB128), one bit width per miniblock, and the miniblocks' deltas
//! less the min, bit-packed little-endian; deltas wrap as the spec says (i64::MIN after
//! i64::MAX is a delta of 1). A dictionary column: a PLAIN dictionary page (each value's
//! 4-byte length and bytes) before the data page, whose values are the indices' bit width
//! (one byte) and the indices, RLE / bit-packed hybrid.

use bytes::Bytes;
use parquet::basic::{BoundaryOrder, Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::Result;
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, LevelHistogram, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use roce_conformance::internal::hash::FastHashMap;

/// Deltas per block (the crate's INT64 layout: 4 miniblocks of 64).
const BLOCK: usize = 256;
/// Miniblocks per block.
const MINIBLOCKS: usize = 4;
/// Deltas per miniblock.
const MINI: usize = BLOCK / MINIBLOCKS;

/// Reused buffers: the page body and the chunk's bytes.
#[derive(Default)]
pub struct Scratch {
    body: Vec<u8>,
    chunk: Vec<u8>,
    /// The definition levels 8 to a byte.
    groups: Vec<u8>,
    /// A string column's dictionary indices.
    indices: Vec<u32>,
    /// A string column's dictionary: where each entry starts and ends in the values.
    entries: Vec<(usize, usize)>,
    /// Its short values' indices.
    short: ShortKeys,
}

/// A chunk's bytes and what closing the crate's column writer would return, or nothing when
/// the crate's writer is to write this column (what our code does not encode the same way).
pub type Chunk = Option<(Bytes, ColumnCloseResult)>;

/// What a column chunk's pages hold, for its metadata ([`finish`]).
struct Summary {
    /// Rows (definition levels, or values of a required column).
    rows: usize,
    /// Values present.
    values: usize,
    /// Whether the column is nullable (it then has a definition-level histogram).
    nullable: bool,
    /// The chunk's statistics (min/max, null count).
    statistics: Statistics,
    /// Min and max as the page index holds them (plain bytes), if any value.
    bounds: Option<(Vec<u8>, Vec<u8>)>,
    /// The data page's encoding.
    encoding: Encoding,
    /// Byte array columns: the values' total length.
    unencoded: Option<i64>,
}

/// The rows' definition levels into `body` (a nullable column); the row count. Errors when
/// the levels do not count as many present rows as there are values.
fn levels_into(
    descr: &ColumnDescPtr,
    defs: Option<&[i16]>,
    values: usize,
    groups: &mut Vec<u8>,
    body: &mut Vec<u8>,
) -> Result<usize> {
    let Some(defs) = defs else { return Ok(values) };
    let present = def_levels(defs, groups, body)?;
    if present != values {
        return Err(general(&format!(
            "column {}: {values} values for {present} present rows",
            descr.name()
        )));
    }
    Ok(defs.len())
}

/// How [`one_page_chunk`] writes a column of values of type `T`: its data page's encoding,
/// the statistics' backwards-compatible min/max flag as the crate sets it for the type, and
/// a bound's bytes as the page index holds them.
struct OnePage<T> {
    encoding: Encoding,
    compatible: bool,
    plain: fn(&T) -> Vec<u8>,
}

/// INT64 columns: one DELTA_BINARY_PACKED page.
const INT64_PAGE: OnePage<i64> = OnePage {
    encoding: Encoding::DELTA_BINARY_PACKED,
    compatible: true,
    plain: |v| v.to_le_bytes().to_vec(),
};

/// BOOLEAN columns: one PLAIN page, bit-packed.
const BOOL_PAGE: OnePage<bool> =
    OnePage { encoding: Encoding::PLAIN, compatible: false, plain: |&v| vec![u8::from(v)] };

/// UTF8 columns: one RLE_DICTIONARY page after the dictionary page.
const DICTIONARY_PAGE: OnePage<ByteArray> = OnePage {
    encoding: Encoding::RLE_DICTIONARY,
    compatible: false,
    plain: |v| v.as_ref().to_vec(),
};

/// What an encoder of [`one_page_chunk`] wrote besides the data page's body.
struct Encoded<T> {
    min: Option<T>,
    max: Option<T>,
    /// The dictionary page, for a dictionary-encoded column.
    dictionary: Option<Page>,
    /// Byte array columns: the values' total length.
    unencoded: Option<i64>,
}

impl<T> Encoded<T> {
    /// A page of plain values: their min and max only.
    fn bounds((min, max): (Option<T>, Option<T>)) -> Encoded<T> {
        Encoded { min, max, dictionary: None, unencoded: None }
    }
}

/// A column chunk of one v1 data page (after a dictionary page, for a dictionary-encoded
/// column): the definition levels of a nullable column (`defs`: 0 null, 1 present), then the
/// `count` values, which `encode` writes after them, returning their min and max. The one
/// place the three encoders ([`int_chunk`], [`bool_chunk`], [`dictionary_chunk`]) count the
/// nulls and build the statistics, the page index's bounds and the chunk.
fn one_page_chunk<T>(
    descr: &ColumnDescPtr,
    page: &OnePage<T>,
    count: usize,
    defs: Option<&[i16]>,
    scratch: &mut Scratch,
    encode: impl FnOnce(&mut Vec<u8>) -> Encoded<T>,
) -> Result<Chunk>
where
    Statistics: From<ValueStatistics<T>>,
{
    let mut body = std::mem::take(&mut scratch.body);
    body.clear();
    let rows = levels_into(descr, defs, count, &mut scratch.groups, &mut body)?;
    let Encoded { min, max, dictionary, unencoded } = encode(&mut body);
    let nulls = (rows - count) as u64;
    let bounds = min.as_ref().zip(max.as_ref()).map(|(a, b)| ((page.plain)(a), (page.plain)(b)));
    let statistics = ValueStatistics::<T>::new(min, max, None, Some(nulls), false)
        .with_backwards_compatible_min_max(page.compatible)
        .into();
    let summary = Summary {
        rows,
        values: count,
        nullable: defs.is_some(),
        statistics,
        bounds,
        encoding: page.encoding,
        unencoded,
    };
    finish(descr, dictionary, body, summary, scratch).map(Some)
}

/// An INT64 column of a row group encoded as one DELTA_BINARY_PACKED v1 data page.
/// `defs` are the rows' definition levels of a nullable column (0 null, 1 present).
pub fn int_chunk(
    descr: &ColumnDescPtr,
    values: &[i64],
    defs: Option<&[i16]>,
    scratch: &mut Scratch,
) -> Result<Chunk> {
    one_page_chunk(descr, &INT64_PAGE, values.len(), defs, scratch, |body| {
        Encoded::bounds(delta_binary_packed(values, body).unzip())
    })
}

/// A BOOLEAN column of a row group as one PLAIN v1 data page (the values bit-packed, 1 bit
/// each, as the crate writes them).
pub fn bool_chunk(
    descr: &ColumnDescPtr,
    values: &[bool],
    defs: Option<&[i16]>,
    scratch: &mut Scratch,
) -> Result<Chunk> {
    one_page_chunk(descr, &BOOL_PAGE, values.len(), defs, scratch, |body| {
        let (mut any_true, mut any_false) = (false, false);
        for c in values.chunks(8) {
            let byte = c.iter().enumerate().fold(0u8, |b, (j, &v)| b | (u8::from(v) << j));
            any_true |= byte != 0;
            // A full group of 8 is all true when 0xFF; a partial one when all its bits are set.
            any_false |= byte.count_ones() as usize != c.len();
            body.push(byte);
        }
        Encoded::bounds(match values.len() {
            0 => (None, None),
            _ => (Some(!any_false), Some(any_true)),
        })
    })
}

/// The longest min or max the crate writes untruncated (its default
/// `statistics_truncate_length` and `column_index_truncate_length`); a column with a longer
/// value goes to the crate's writer.
const TRUNCATE: usize = 64;
/// The largest dictionary encoded here (the crate's limit, 1 MiB, is far above any row
/// group's addresses and names; beyond it the crate falls back to plain pages).
const DICTIONARY_LIMIT: usize = 256 * 1024;

/// A dictionary-encoded UTF8 column of a row group: a PLAIN dictionary page (each distinct
/// value once, in order of first appearance) and one RLE_DICTIONARY v1 data page. `bytes`
/// holds the present values back to back, each ending at its `ends`.
///
/// Why not the crate's interner: it hashes every value with ahash and compares its bytes
/// with a probe's; here a short value (at most 15 bytes: addresses, names) is a 128-bit key
/// ([`ShortKeys`]), a value equal to the one before reuses its index, and min/max are taken
/// over the distinct values only (each distinct value appears at least once).
pub fn dictionary_chunk(
    descr: &ColumnDescPtr,
    bytes: &[u8],
    ends: &[usize],
    defs: Option<&[i16]>,
    scratch: &mut Scratch,
) -> Result<Chunk> {
    let mut entries = std::mem::take(&mut scratch.entries);
    let mut indices = std::mem::take(&mut scratch.indices);
    let r = dictionary_chunk_in(descr, bytes, ends, defs, scratch, &mut entries, &mut indices);
    scratch.entries = entries;
    scratch.indices = indices;
    r
}

fn dictionary_chunk_in(
    descr: &ColumnDescPtr,
    bytes: &[u8],
    ends: &[usize],
    defs: Option<&[i16]>,
    scratch: &mut Scratch,
    entries: &mut Vec<(usize, usize)>,
    indices: &mut Vec<u32>,
) -> Result<Chunk> {
    entries.clear();
    indices.clear();
    // Values of at most 15 bytes (addresses, opcode and status names) are looked up by a
    // 128-bit key in `short`; longer ones by their bytes in `long`.
    let short = &mut scratch.short;
    short.clear();
    let mut long: FastHashMap<&[u8], u32> = FastHashMap::default();
    let (mut start, mut last) = (0, None);
    let mut dictionary_bytes = 0;
    for &end in ends {
        let value = bytes.get(start..end).ok_or_else(|| general("a string out of bounds"))?;
        let at = start;
        start = end;
        let key = short_key(bytes, at, value);
        if let (Some(key), Some((before, index))) = (key, last) {
            if key == before {
                indices.push(index);
                continue;
            }
        }
        let found = match key {
            Some(key) => short.get(key),
            None => long.get(value).copied(),
        };
        let index = match found {
            Some(index) => index,
            None => {
                if value.len() > TRUNCATE || dictionary_bytes > DICTIONARY_LIMIT {
                    return Ok(None);
                }
                dictionary_bytes += value.len() + 4;
                let index = entries.len() as u32;
                entries.push((at, end));
                match key {
                    Some(key) => short.insert(key, index),
                    None => {
                        long.insert(value, index);
                    }
                }
                index
            }
        };
        last = key.map(|key| (key, index));
        indices.push(index);
    }
    drop(long);

    let entries = &*entries;
    let indices = &*indices;
    one_page_chunk(descr, &DICTIONARY_PAGE, ends.len(), defs, scratch, |body| {
        let width = 32 - (entries.len().saturating_sub(1) as u32).leading_zeros();
        body.push(width as u8);
        hybrid(indices, width, body);
        let mut dictionary = Vec::with_capacity(dictionary_bytes);
        let (mut min, mut max): (Option<&[u8]>, Option<&[u8]>) = (None, None);
        for &(a, b) in entries {
            let value = &bytes[a..b];
            dictionary.extend_from_slice(&((b - a) as u32).to_le_bytes());
            dictionary.extend_from_slice(value);
            min = Some(min.map_or(value, |m| m.min(value)));
            max = Some(max.map_or(value, |m| m.max(value)));
        }
        Encoded {
            min: min.map(|m| ByteArray::from(m.to_vec())),
            max: max.map(|m| ByteArray::from(m.to_vec())),
            dictionary: Some(Page::DictionaryPage {
                buf: Bytes::from(dictionary),
                num_values: entries.len() as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            }),
            unencoded: Some(ends.last().map_or(0, |&e| e as i64)),
        }
    })
}

/// A value of at most 15 bytes as a 128-bit key: its bytes (little-endian, the rest 0) and
/// its length in the top byte; `None` for a longer value. `at` is where `value` starts in
/// `bytes`: a value with 16 bytes after its start is read in one load and masked.
#[inline(always)]
fn short_key(bytes: &[u8], at: usize, value: &[u8]) -> Option<u128> {
    let len = value.len();
    if len > 15 {
        return None;
    }
    let word = match bytes.get(at..at + 16).and_then(|w| <[u8; 16]>::try_from(w).ok()) {
        Some(w) => {
            u128::from_le_bytes(w) & u128::MAX.checked_shr(128 - 8 * len as u32).unwrap_or(0)
        }
        None => {
            let mut w = [0u8; 16];
            w[..len].copy_from_slice(value);
            u128::from_le_bytes(w)
        }
    };
    Some(word | ((len as u128) << 120))
}

/// Short values' dictionary indices by [`short_key`]: open addressing, linear probing, at
/// most half full. Why not a `HashMap<&[u8], _>`: hashing the bytes and comparing them
/// through `memcmp` was ~120 instructions per string value; a key is one load, a mask, a
/// multiplication and a 128-bit compare.
#[derive(Default)]
pub struct ShortKeys {
    slots: Vec<(u128, u32)>,
    len: usize,
    seed: u64,
}

/// An empty slot's index.
const FREE: u32 = u32::MAX;

impl ShortKeys {
    fn clear(&mut self) {
        if self.seed == 0 {
            // A seed per process, so that a capture cannot be made ahead of time to put its
            // addresses in one chain.
            use std::hash::BuildHasher as _;
            self.seed = std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1;
        }
        if self.slots.is_empty() {
            self.slots = vec![(0, FREE); 256];
        } else {
            self.slots.fill((0, FREE));
        }
        self.len = 0;
    }

    #[inline(always)]
    fn slot(&self, key: u128) -> usize {
        let h = ((key as u64) ^ ((key >> 64) as u64).rotate_left(31)).wrapping_mul(self.seed);
        let h = (h ^ (h >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & (self.slots.len() - 1)
    }

    #[inline]
    fn get(&self, key: u128) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.slot(key);
        loop {
            let (k, index) = *self.slots.get(i)?;
            if index == FREE {
                return None;
            }
            if k == key {
                return Some(index);
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }

    fn insert(&mut self, key: u128, index: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            let grown = vec![(0, FREE); (self.slots.len() * 2).max(256)];
            let old = std::mem::replace(&mut self.slots, grown);
            self.len = 0;
            for (k, i) in old {
                if i != FREE {
                    self.insert(k, i);
                }
            }
        }
        let mut i = self.slot(key);
        while let Some(slot) = self.slots.get_mut(i) {
            if slot.1 == FREE {
                *slot = (key, index);
                self.len += 1;
                return;
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }
}

/// Writes the chunk's pages (a dictionary page if any, then the data page `body`) through
/// the crate's page writer into the scratch buffer; the chunk's bytes and metadata.
fn finish(
    descr: &ColumnDescPtr,
    dictionary: Option<Page>,
    body: Vec<u8>,
    s: Summary,
    scratch: &mut Scratch,
) -> Result<(Bytes, ColumnCloseResult)> {
    let body = Bytes::from(body);
    let size = body.len();
    let page = Page::DataPage {
        buf: body.clone(),
        num_values: u32::try_from(s.rows).map_err(|_| general("too many rows"))?,
        encoding: s.encoding,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    let mut sink = TrackedWrite::new(std::mem::take(&mut scratch.chunk));
    let mut encodings = vec![Encoding::RLE, s.encoding];
    let mut encoding_stats = Vec::with_capacity(2);
    let (dictionary_spec, spec) = {
        let mut pages = SerializedPageWriter::new(&mut sink);
        let dictionary_spec = match dictionary {
            Some(page) => {
                let size = page.buffer().len();
                encodings.push(page.encoding());
                encoding_stats.push(PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: page.encoding(),
                    count: 1,
                });
                Some(pages.write_page(CompressedPage::new(page, size))?)
            }
            None => None,
        };
        let spec = pages.write_page(CompressedPage::new(page, size))?;
        pages.close()?;
        (dictionary_spec, spec)
    };
    encoding_stats.push(PageEncodingStats {
        page_type: PageType::DATA_PAGE,
        encoding: s.encoding,
        count: 1,
    });
    let mut chunk = sink.into_inner()?;
    // The page's buffer again, for the next column (copied if still shared).
    scratch.body = Vec::from(body);

    let nulls = (s.rows - s.values) as i64;
    let histogram = s.nullable.then(|| LevelHistogram::from(vec![nulls, s.values as i64]));
    let mut column_index = ColumnIndexBuilder::new(descr.physical_type());
    match s.bounds {
        Some((min, max)) => column_index.append(false, min, max, nulls, None),
        None => column_index.append(true, vec![], vec![], nulls, None),
    }
    column_index.append_histograms(&None, &histogram);
    // One page: its bounds are trivially in order (the crate says ASCENDING then).
    column_index.set_boundary_order(BoundaryOrder::ASCENDING);
    let mut offset_index = OffsetIndexBuilder::new();
    offset_index.append_row_count(s.rows as i64);
    offset_index.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
    offset_index.append_unencoded_byte_array_data_bytes(s.unencoded);

    let (mut compressed, mut uncompressed) = (spec.compressed_size, spec.uncompressed_size);
    let mut bytes_written = spec.bytes_written;
    if let Some(d) = &dictionary_spec {
        compressed += d.compressed_size;
        uncompressed += d.uncompressed_size;
        bytes_written += d.bytes_written;
    }
    let metadata = ColumnChunkMetaData::builder(descr.clone())
        .set_compression(Compression::UNCOMPRESSED)
        .set_encodings(encodings)
        .set_page_encoding_stats(encoding_stats)
        .set_total_compressed_size(compressed as i64)
        .set_total_uncompressed_size(uncompressed as i64)
        .set_num_values(s.rows as i64)
        .set_data_page_offset(spec.offset as i64)
        .set_dictionary_page_offset(dictionary_spec.map(|d| d.offset as i64))
        .set_statistics(s.statistics)
        .set_unencoded_byte_array_data_bytes(s.unencoded)
        .set_definition_level_histogram(histogram)
        .build()?;
    let bytes = Bytes::copy_from_slice(&chunk);
    chunk.clear();
    scratch.chunk = chunk;
    Ok((
        bytes,
        ColumnCloseResult {
            bytes_written,
            rows_written: s.rows as u64,
            metadata,
            bloom_filter: None,
            column_index: Some(column_index.build()?),
            offset_index: Some(offset_index.build()),
        },
    ))
}

/// Appends dictionary indices of `width` bits RLE / bit-packed hybrid (no length before
/// them, as a data page holds them after their bit width): a stretch of two or more groups
/// of 8 equal indices is one RLE run, the other groups bit-packed runs, the last group padded
/// with 0.
fn hybrid(indices: &[u32], width: u32, out: &mut Vec<u8>) {
    if indices.is_empty() {
        return;
    }
    let value_bytes = width.div_ceil(8) as usize;
    if width == 0 {
        uleb((indices.len() as u64) << 1, out);
        return;
    }
    let groups = indices.len().div_ceil(8);
    let uniform = |g: usize| -> Option<u32> {
        let c = indices.get(g * 8..g * 8 + 8)?;
        c.iter().all(|&x| x == c[0]).then_some(c[0])
    };
    let (mut g, mut packed_from) = (0, 0);
    let mut values = [0u64; 8];
    let mut pack_groups = |from: usize, to: usize, out: &mut Vec<u8>| {
        if from == to {
            return;
        }
        uleb((((to - from) as u64) << 1) | 1, out);
        for c in indices[from * 8..(to * 8).min(indices.len())].chunks(8) {
            values.fill(0);
            for (v, &x) in values.iter_mut().zip(c) {
                *v = u64::from(x);
            }
            pack(&values, width, out);
        }
    };
    while g < groups {
        let Some(v) = uniform(g) else {
            g += 1;
            continue;
        };
        let mut run = 1;
        while uniform(g + run) == Some(v) {
            run += 1;
        }
        if run >= 2 {
            pack_groups(packed_from, g, out);
            uleb(((run * 8) as u64) << 1, out);
            out.extend_from_slice(&v.to_le_bytes()[..value_bytes]);
            packed_from = g + run;
        }
        g += run;
    }
    pack_groups(packed_from, groups, out);
}

fn general(msg: &str) -> parquet::errors::ParquetError {
    parquet::errors::ParquetError::General(msg.into())
}

/// Appends `v` as ULEB128.
#[inline]
fn uleb(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded as ULEB128.
#[inline]
fn zigzag(v: i64, out: &mut Vec<u8>) {
    uleb(((v << 1) ^ (v >> 63)) as u64, out);
}

/// Appends the DELTA_BINARY_PACKED encoding of `values`; their least and greatest, if any
/// (taken in the deltas' loop: a pass of their own was ~100 instructions per frame).
pub fn delta_binary_packed(values: &[i64], out: &mut Vec<u8>) -> Option<(i64, i64)> {
    uleb(BLOCK as u64, out);
    uleb(MINIBLOCKS as u64, out);
    uleb(values.len() as u64, out);
    let first = values.first().copied();
    zigzag(first.unwrap_or(0), out);
    let (mut lo, mut hi) = (first.unwrap_or(0), first.unwrap_or(0));
    // Each block's deltas are values[i] - values[i - 1], i from 1.
    let mut from = 1;
    let mut deltas = [0u64; BLOCK];
    while from < values.len() {
        let to = (from + BLOCK).min(values.len());
        let (now, before) = (&values[from..to], &values[from - 1..to - 1]);
        let n = now.len();
        let mut min = i64::MAX;
        for ((d, &v), &p) in deltas.iter_mut().zip(now).zip(before) {
            let delta = v.wrapping_sub(p);
            *d = delta as u64;
            min = min.min(delta);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        zigzag(min, out);
        let widths_at = out.len();
        out.extend_from_slice(&[0; MINIBLOCKS]);
        for m in 0..MINIBLOCKS {
            let start = m * MINI;
            if start >= n {
                break;
            }
            let end = (start + MINI).min(n);
            let mini = &mut deltas[start..start + MINI];
            let mut any = 0u64;
            for d in &mut mini[..end - start] {
                *d = d.wrapping_sub(min as u64);
                any |= *d;
            }
            // The last miniblock is padded with zeros to its full size.
            mini[end - start..].fill(0);
            let width = 64 - any.leading_zeros();
            out[widths_at + m] = width as u8;
            pack(mini, width, out);
        }
        from = to;
    }
    first.map(|_| (lo, hi))
}

/// Appends `values` (each below 2^width, a multiple of 8 of them) bit-packed little-endian,
/// `width` bits each.
#[inline]
fn pack(values: &[u64], width: u32, out: &mut Vec<u8>) {
    if width == 0 {
        return;
    }
    let mut acc = 0u64;
    let mut bits = 0u32;
    for &v in values {
        acc |= v << bits;
        let total = bits + width;
        if total >= 64 {
            out.extend_from_slice(&acc.to_le_bytes());
            acc = if bits == 0 { 0 } else { v >> (64 - bits) };
            bits = total - 64;
        } else {
            bits = total;
        }
    }
    let rest = bits.div_ceil(8) as usize;
    out.extend_from_slice(&acc.to_le_bytes()[..rest]);
}

/// Appends the definition levels (bit width 1) RLE / bit-packed hybrid, after their length
/// (4 bytes, little-endian), as a v1 data page holds them; returns how many are 1.
///
/// The levels are first packed 8 to a byte (the bit-packed form); then each stretch of two or
/// more bytes all 0 or all 1 becomes one RLE run, the other bytes bit-packed runs. Why bytes:
/// a nullable column is mostly null or mostly present in long stretches, and a byte at a
/// time is an eighth of the comparisons of a level at a time (a level at a time was ~600
/// instructions per frame over the packets table's ~50 nullable columns).
pub fn def_levels(defs: &[i16], groups: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<usize> {
    groups.clear();
    groups.reserve(defs.len().div_ceil(8));
    let mut present = 0;
    // Every level must be 0 or 1 for the multiplication below: the bits of the levels OR'd.
    let mut seen = 0u64;
    let mut chunks = defs.chunks_exact(8);
    for c in &mut chunks {
        let (low, high) = (four(&c[..4]), four(&c[4..]));
        seen |= low | high;
        let byte = gather(low) | (gather(high) << 4);
        present += byte.count_ones() as usize;
        groups.push(byte);
    }
    // The last group, padded with 0; never part of an RLE run (its padding is not a level).
    let tail = chunks.remainder();
    let last = tail.iter().enumerate().fold(0u8, |b, (j, &l)| b | (u8::from(l != 0) << j));
    present += last.count_ones() as usize;
    if seen & !0x0001_0001_0001_0001 != 0 || tail.iter().any(|&l| l as u16 > 1) {
        return Err(general("a definition level other than 0 or 1"));
    }

    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let n = groups.len();
    let (mut i, mut packed_from) = (0, 0);
    while i < n {
        let b = groups[i];
        if b != 0 && b != 0xFF {
            i += 1;
            continue;
        }
        let run = groups[i..].iter().position(|&x| x != b).unwrap_or(n - i);
        if run >= 2 {
            bit_packed(&groups[packed_from..i], out);
            uleb(((run * 8) as u64) << 1, out);
            out.push(b & 1);
            packed_from = i + run;
        }
        i += run;
    }
    if tail.is_empty() {
        bit_packed(&groups[packed_from..], out);
    } else {
        groups.push(last);
        bit_packed(&groups[packed_from..], out);
    }
    let len = u32::try_from(out.len() - at - 4).map_err(|_| general("levels too long"))?;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    Ok(present)
}

/// Four levels (each 0 or 1) as the 16-bit lanes of a word.
#[inline(always)]
fn four(l: &[i16]) -> u64 {
    l.iter().enumerate().fold(0, |w, (j, &x)| w | (u64::from(x as u16) << (16 * j)))
}

/// The low bits of a word's four 16-bit lanes (each 0 or 1) as 4 bits: one multiplication
/// moves lane j's bit (at 16 j) to bit 45 + j (shifts 45, 30, 15, 0; no two of the 16
/// products land on the same bit, so nothing carries into those four).
#[inline(always)]
fn gather(w: u64) -> u8 {
    const M: u64 = (1 << 45) | (1 << 30) | (1 << 15) | 1;
    ((w.wrapping_mul(M) >> 45) & 0xF) as u8
}

/// Appends one bit-packed run (bit width 1) of `bytes`, each 8 levels.
fn bit_packed(bytes: &[u8], out: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    uleb(((bytes.len() as u64) << 1) | 1, out);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uleb_and_zigzag() {
        let mut out = Vec::new();
        uleb(300, &mut out);
        assert_eq!(out, [0xAC, 0x02]);
        out.clear();
        zigzag(-1, &mut out);
        zigzag(1, &mut out);
        zigzag(i64::MIN, &mut out);
        assert_eq!(out[..2], [1, 2]);
        assert_eq!(out.len(), 2 + 10);
    }

    #[test]
    fn pack_widths() {
        for width in [1u32, 3, 7, 8, 13, 31, 33, 63, 64] {
            let mask = if width == 64 { u64::MAX } else { (1 << width) - 1 };
            let values: Vec<u64> =
                (0..64u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask).collect();
            let mut out = Vec::new();
            pack(&values, width, &mut out);
            assert_eq!(out.len(), 64 * width as usize / 8);
            for (i, &v) in values.iter().enumerate() {
                let mut got = 0u64;
                for b in 0..width as usize {
                    let bit = i * width as usize + b;
                    got |= u64::from((out[bit / 8] >> (bit % 8)) & 1) << b;
                }
                assert_eq!(got, v, "width {width} value {i}");
            }
        }
    }

    #[test]
    fn levels_runs() {
        let mut out = Vec::new();
        let defs: Vec<i16> =
            [1, 0, 1].iter().copied().chain([1; 21]).chain([0; 19]).chain([1; 3]).collect();
        assert_eq!(def_levels(&defs, &mut Vec::new(), &mut out).unwrap(), 26);
        // A bit-packed byte (1, 0, then six 1s), RLE 16 ones, RLE 16 zeros, then a
        // bit-packed byte of 3 zeros, 3 ones (and 2 of padding).
        assert_eq!(out[..4], [8, 0, 0, 0]);
        assert_eq!(out[4..], [0b11, 0b1111_1101, 16 << 1, 1, 16 << 1, 0, 0b11, 0b0011_1000]);
        assert!(def_levels(&[0, 1, 2, 0, 0, 0, 0, 0, 1], &mut Vec::new(), &mut out).is_err());
    }

    #[test]
    fn short_keys_are_the_values() {
        let bytes = b"10.0.0.1abcdefghijklmnopqrstuvwxyz";
        let mut keys = ShortKeys::default();
        keys.clear();
        let mut seen = std::collections::HashMap::new();
        for at in 0..bytes.len() {
            for end in at..bytes.len().min(at + 17) {
                let value = &bytes[at..end];
                let key = short_key(bytes, at, value);
                assert_eq!(key.is_some(), value.len() <= 15);
                // The same key as the value alone (read near a buffer's end).
                assert_eq!(key, short_key(value, 0, value));
                if let Some(key) = key {
                    let n = seen.len() as u32;
                    let index = *seen.entry(value.to_vec()).or_insert(n);
                    match keys.get(key) {
                        Some(i) => assert_eq!(i, index),
                        None => keys.insert(key, index),
                    }
                }
            }
        }
        assert_eq!(keys.len, seen.len());
    }

    #[test]
    fn gather_every_nibble() {
        for nibble in 0..16u8 {
            let lanes: Vec<i16> = (0..4).map(|j| i16::from((nibble >> j) & 1)).collect();
            assert_eq!(gather(four(&lanes)), nibble);
        }
    }
}
