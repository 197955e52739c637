//! Where capture bytes come from: a file, stdin, or memory, optionally gzip-compressed.
//!
//! Everything is read through one large window buffer (`BUF_SIZE`), refilled with big `read`
//! calls: no syscall per frame, no allocation per frame, and frames are handed out as slices of
//! the window (zero-copy). A memory map was not used because it needs `unsafe` (the design keeps
//! unsafe code to the ffi crate) and because a file truncated under a map kills the process with
//! SIGBUS; one copy from the page cache costs a few ns per frame (see the measurement in
//! `mod.rs`). gzip is decompressed as a stream into the same window, so memory stays flat.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;

/// Size of the read window: large enough that a refill (one `read` syscall) serves thousands
/// of frames, small enough to stay in the CPU caches between the copy and the parse.
pub(crate) const BUF_SIZE: usize = 1 << 20;

/// Size of a lent window ([`Source::lend`]): the reader thread of `--threads` hands each one
/// to other threads whole, so several exist at once; 256 KiB keeps eight of them within one
/// core's L2 and a batch of usual frames under a few thousand frames.
pub(crate) const LENT_SIZE: usize = 1 << 18;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A byte stream with a refillable window over it.
pub(crate) struct Source {
    /// The window; `buf[pos..end]` holds bytes not yet consumed.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Offset in the (decompressed) stream of `buf[0]`.
    base: u64,
    /// Where more bytes come from; `None` once the end was reached or for in-memory input.
    reader: Option<Box<dyn Read + Send>>,
    /// Total size of what `read_counter` counts (file size), when known.
    total: Option<u64>,
    /// Bytes of the underlying (compressed) file consumed so far, for gzip progress.
    read_counter: Option<Arc<AtomicU64>>,
    gzip: bool,
    /// Lending ([`Source::lend`]): a refill moves on to `spare` (or a new buffer) and keeps
    /// the filled window whole in `retired`, instead of moving its tail to the front.
    lending: bool,
    spare: Option<Vec<u8>>,
    retired: Option<Vec<u8>>,
}

impl Source {
    /// Opens a path; `-` is stdin. The file is not read yet beyond the gzip check.
    pub(crate) fn open(path: &Path) -> io::Result<Source> {
        if path.as_os_str() == "-" {
            let stdin: Box<dyn Read + Send> = Box::new(io::stdin());
            return Source::from_reader(stdin, None);
        }
        let file = File::open(path)?;
        let meta = file.metadata()?;
        // Pipes and character devices (e.g. `<(zcat x.gz)`) report a length of 0: unknown.
        let total = (meta.is_file()).then_some(meta.len());
        Source::from_reader(Box::new(file), total)
    }

    /// Wraps bytes already in memory; no copy unless they are gzip-compressed.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Source {
        let total = Some(bytes.len() as u64);
        if bytes.starts_with(&GZIP_MAGIC) {
            let counter = Arc::new(AtomicU64::new(0));
            let counted = Counting { inner: Cursor::new(bytes), counter: Arc::clone(&counter) };
            return Source {
                buf: Vec::new(),
                pos: 0,
                end: 0,
                base: 0,
                reader: Some(Box::new(MultiGzDecoder::new(counted))),
                total,
                read_counter: Some(counter),
                gzip: true,
                lending: false,
                spare: None,
                retired: None,
            };
        }
        let end = bytes.len();
        Source {
            buf: bytes,
            pos: 0,
            end,
            base: 0,
            reader: None,
            total,
            read_counter: None,
            gzip: false,
            lending: false,
            spare: None,
            retired: None,
        }
    }

    /// Reads the first two bytes to decide whether the stream is gzip, then puts them back
    /// in front of the rest (stdin cannot seek).
    pub(crate) fn from_reader(
        mut raw: Box<dyn Read + Send>,
        total: Option<u64>,
    ) -> io::Result<Source> {
        let mut head = [0u8; 2];
        let n = read_full(&mut raw, &mut head)?;
        let prefix = Cursor::new(head.get(..n).unwrap_or_default().to_vec());
        let chained = prefix.chain(raw);
        let counter = Arc::new(AtomicU64::new(0));
        let counted = Counting { inner: chained, counter: Arc::clone(&counter) };
        let gzip = n == 2 && head == GZIP_MAGIC;
        let reader: Box<dyn Read + Send> =
            if gzip { Box::new(MultiGzDecoder::new(counted)) } else { Box::new(counted) };
        Ok(Source {
            buf: Vec::new(),
            pos: 0,
            end: 0,
            base: 0,
            reader: Some(reader),
            total,
            read_counter: Some(counter),
            gzip,
            lending: false,
            spare: None,
            retired: None,
        })
    }

    /// The bytes not consumed yet (at least what the last `ensure` asked for, unless at end).
    #[inline]
    pub(crate) fn avail(&self) -> &[u8] {
        self.buf.get(self.pos..self.end).unwrap_or_default()
    }

    /// Offset in the (decompressed) stream of the first byte of `avail()`.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Marks `n` bytes of `avail()` consumed.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.end);
    }

    /// Consumes `n` bytes and returns the window index where they start, for `window_slice`
    /// (valid until the next `ensure`).
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) -> usize {
        let at = self.pos;
        self.consume(n);
        at
    }

    /// `len` bytes of the window from index `at` (as returned by `advance`); empty when out
    /// of range, which the readers rule out before advancing.
    #[inline]
    pub(crate) fn window_slice(&self, at: usize, len: usize) -> &[u8] {
        self.buf.get(at..at.saturating_add(len)).unwrap_or_default()
    }

    /// Makes at least `n` bytes available if the stream has them; returns how many are
    /// available (fewer than `n` only at the end of the stream).
    #[inline]
    pub(crate) fn ensure(&mut self, n: usize) -> io::Result<usize> {
        let have = self.end - self.pos;
        if have >= n || self.reader.is_none() {
            return Ok(have);
        }
        self.refill(n)
    }

    #[cold]
    fn refill(&mut self, n: usize) -> io::Result<usize> {
        self.retire(n);
        // Move the unconsumed tail (less than one record) to the front.
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        let want = n.max(if self.lending { LENT_SIZE } else { BUF_SIZE });
        if self.buf.is_empty() {
            // Zeroed allocation: fresh zero pages from the OS, touched only as data arrives,
            // so a small file does not pay for clearing the whole window.
            self.buf = vec![0; want];
        } else if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.end < n {
            let Some(reader) = self.reader.as_mut() else {
                break;
            };
            let Some(space) = self.buf.get_mut(self.end..) else {
                break;
            };
            match reader.read(space) {
                Ok(0) => {
                    self.reader = None;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.reader = None;
                    return Err(e);
                }
            }
        }
        Ok(self.end - self.pos)
    }

    /// While lending, when frames were handed out of this window and none is retired: keeps
    /// it whole as the retired window and moves the unconsumed tail to the front of the next
    /// one (at least `n` bytes long). (With a window already retired, this one holds no frame
    /// handed out since: a refill reuses it in place.)
    pub(crate) fn retire(&mut self, n: usize) {
        if self.pos == 0 || !self.lending || self.retired.is_some() {
            return;
        }
        let mut next = self.spare.take().unwrap_or_default();
        let tail = self.end - self.pos;
        if next.len() < tail.max(n).max(LENT_SIZE) {
            next.resize(tail.max(n).max(LENT_SIZE), 0);
        }
        if let (Some(to), Some(from)) = (next.get_mut(..tail), self.buf.get(self.pos..self.end)) {
            to.copy_from_slice(from);
        }
        self.retired = Some(std::mem::replace(&mut self.buf, next));
        self.base += self.pos as u64;
        self.end = tail;
        self.pos = 0;
    }

    /// Lends windows from now on: `buf` is the next window to read into (its length is kept,
    /// its bytes overwritten). A refill keeps the filled window whole until
    /// [`Source::take_retired`] takes it, so the slices handed out of it stay valid there.
    pub(crate) fn lend(&mut self, buf: Vec<u8>) {
        self.lending = true;
        self.spare = Some(buf);
    }

    /// The window the last refill moved on from, holding (from index 0) the bytes handed
    /// out of it; `None` when there was no refill since the last call.
    pub(crate) fn take_retired(&mut self) -> Option<Vec<u8>> {
        self.retired.take()
    }

    /// The current window, taken whole (the source reads nothing more): at the end of
    /// lending, for the frames handed out of it.
    pub(crate) fn take_window(&mut self) -> Vec<u8> {
        self.reader = None;
        self.base += self.end as u64;
        (self.pos, self.end) = (0, 0);
        std::mem::take(&mut self.buf)
    }

    /// Whether the input was gzip-compressed.
    pub(crate) fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Size of the input file (compressed size for gzip), when known.
    pub(crate) fn bytes_total(&self) -> Option<u64> {
        self.total
    }

    /// How far into the input file reading has got (compressed bytes for gzip), to compare
    /// with `bytes_total`.
    pub(crate) fn bytes_read(&self) -> u64 {
        match (&self.read_counter, self.gzip) {
            (Some(counter), true) => counter.load(Ordering::Relaxed),
            _ => self.offset(),
        }
    }
}

/// Counts bytes read from the underlying file, so gzip progress can be shown against the
/// compressed size. Counted per `read` call, not per frame.
struct Counting<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads until `buf` is full or the stream ends; returns the count read.
fn read_full(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while let Some(rest) = buf.get_mut(n..) {
        if rest.is_empty() {
            break;
        }
        match reader.read(rest) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
