//! `--threads N`: reading a capture on one thread while others work on what was read.
//!
//! Why batches: handing frames one at a time to another thread costs more than parsing them
//! (a channel operation is ~100 ns, a frame's parse ~100-200 ns). A batch is the frames of
//! one of the capture reader's read windows (256 KiB, some 600 frames of 400 bytes), and it
//! owns that window: the capture lends its windows ([`roce_capture::Capture::lend_window`]),
//! so when reading moves on to the next window the filled one goes out whole with the
//! records of its frames ([`Batch`]). A batch comes back to the reader when its frames were
//! used, and its window is read into again, so at most [`IN_FLIGHT`] batches exist and
//! memory is bounded (a few MiB) whatever the capture's length.
//!
//! No frame is copied: a [`roce_capture::Frame`] borrows the reader's window, and the window
//! itself changes hands. (Until 2026-12-02 the reader copied every frame into a batch of
//! 2,048; the copy was 5% of `check --threads 2`'s CPU time, BENCHMARKS.md.)
//!
//! What runs where: the reader thread does everything [`crate::input::for_each_frame_until`]
//! does before the parser (open, decompress, the record format, capture warnings on stderr,
//! the progress bar), with the same messages for the same damage: a capture that cannot be
//! read at all is the same [`InputError`], and the frames before damage are kept. The parse
//! (a [`roce_parser::Packet`] borrows its frame) happens on the thread that uses the frame.
//! [`for_each_frame_ahead`] can also have the reader verify each frame's checksums (the ICRC,
//! the VCRC, the IPv4 header's: the one part of parsing that reads every byte, the
//! payload included) and hand the verdicts over with the batch ([`roce_parser::Checksums`]);
//! the thread that uses the frame parses it without verifying and is given them, so it reads
//! the headers only, and its packet is the verified one (BENCHMARKS.md, "the reader
//! verifies"). [`for_each_frame_ahead_with`] also gives each frame so parsed to work done on
//! the reader ([`Ahead`]): `export` builds the packets table's rows there.
//! `dissect` formats batches on several workers and writes them in batch order
//! (`dissect::threads`); `check` splits the frames by host pair over N checkers and merges
//! their reports into the single run's ([`check_sharded`], `shards.rs`); `stats` and
//! `export` parse and count on the calling thread, in capture order, from the batches
//! ([`for_each_frame_ahead`]): their state (one connection model) is the single-thread
//! run's by construction.
//!
//! `--threads 1` is exactly the single-thread code path (no thread, no copy).

mod batch;
mod shards;

pub use batch::{Batch, FrameMeta};
pub use shards::check_sharded;

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;

use roce_capture::Warnings;
use roce_parser::{Checksums, Config, Packet, Role};

use crate::input::{
    count_undecoded, decode_into, progress_bar, Decoded, Input, InputError, ReadSummary,
};

/// Batches that exist at once (being read, queued, worked on, or waiting to be written).
pub const IN_FLIGHT: usize = 8;

/// The most frames in a batch: a window of frames smaller than 64 bytes on average goes out
/// before it is full (`roce_capture::Capture::retire_window`). Real frames (some 600 in a
/// window) never reach it; a bomb of 16-byte records would put 16,000 in one, and
/// `dissect --threads`' text of a batch with them (BENCHMARKS.md, "Bounds").
pub const BATCH_FRAMES: usize = 4096;

/// `--threads N` is capped at this many threads per core ([`Threads::max`]): past that, more
/// threads only add memory and start-up time (a thread's stack, a checker each for
/// `check`), and 2^32-1 of them took minutes before a frame was read.
pub const THREADS_PER_CORE: u32 = 4;

/// How many threads a command may use (`--threads N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads(u32);

impl Threads {
    /// One thread: the single-thread code path.
    pub const ONE: Threads = Threads(1);

    /// `n` threads, at least one.
    pub fn new(n: u32) -> Threads {
        Threads(n.max(1))
    }

    /// Every core the process may use (`std::thread::available_parallelism`), 1 when that is
    /// not known.
    pub fn all_cores() -> Threads {
        Threads(thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1)))
    }

    /// The most threads a command uses: [`THREADS_PER_CORE`] times the cores the process may
    /// use (`std::thread::available_parallelism`, 1 when that is not known).
    pub fn max() -> u32 {
        Threads::all_cores().0.saturating_mul(THREADS_PER_CORE)
    }

    /// At most [`Threads::max`]; with the note to print when it was more, e.g.
    /// `--threads 4294967295 is more than this machine can use: 8 threads (4 x 2 cores)`.
    pub fn capped(self) -> (Threads, Option<String>) {
        let max = Threads::max();
        if self.0 <= max {
            return (self, None);
        }
        let note = format!(
            "--threads {} is more than this machine can use: {max} threads ({THREADS_PER_CORE} x \
             {} cores)",
            self.0,
            Threads::all_cores().0
        );
        (Threads(max), Some(note))
    }

    /// The number of threads.
    pub fn get(self) -> u32 {
        self.0
    }

    /// Whether this is the single-thread path.
    pub fn is_one(self) -> bool {
        self.0 == 1
    }
}

impl std::str::FromStr for Threads {
    type Err = String;

    fn from_str(s: &str) -> Result<Threads, String> {
        match s.parse::<u32>() {
            Ok(0) => Err("--threads must be at least 1".to_string()),
            Ok(n) => Ok(Threads(n)),
            Err(e) => Err(format!("'{s}' is not a number of threads: {e}")),
        }
    }
}

/// What the reader thread hands over: a batch, or its frames are over.
pub(crate) type BatchResult = Result<ReadSummary, InputError>;

/// The reader's ends of the channels: batches go out on `full`, come back on `empty`.
/// With `route`, each frame's shard goes into its batch's `out` as the frame is read (from
/// the bytes just copied, still in this core's cache: `check`'s split).
pub(crate) struct ReaderEnds<'a> {
    pub full: SyncSender<(u64, Batch)>,
    pub empty: Receiver<Batch>,
    pub route: Option<shards::Router>,
    /// With `verify`, each frame is parsed as this configuration says and its checksums'
    /// verdicts go into its batch's `checksums` ([`for_each_frame_ahead`]).
    pub verify: Option<Config>,
    /// With `ahead` (and `verify`), each frame so parsed is given to it too.
    pub ahead: Option<&'a mut (dyn Ahead + Send)>,
    /// With `verify`: each request's checksums also carry its payload's CRC-32, for the
    /// checker's digest (`Checksums::with_payload_crc`).
    pub payload_crcs: bool,
}

/// Work on the reader thread: each frame it parsed (with verification, as the frame loop's
/// configuration says), given as it is read, in capture order, before its batch goes out.
/// What a command builds from a packet alone, beside its frame loop, which runs the
/// connection model on the other thread: `export` builds the packets table's rows here
/// ([`for_each_frame_ahead_with`]).
pub trait Ahead {
    /// A frame read (every frame the frame loop is given, in the same order).
    fn frame(&mut self, d: &Decoded<'_>);
    /// The capture is read to its end (or to the last frame asked for); not called when
    /// reading failed or the frame loop hung up.
    fn end(&mut self);
}

/// The consumer's ends: batches in order of reading on `full`, returned on `empty`.
pub(crate) struct ConsumerEnds {
    pub full: Receiver<(u64, Batch)>,
    pub empty: SyncSender<Batch>,
}

/// The two channels between the reader and whoever uses its batches.
pub(crate) fn channels<'a>() -> (ReaderEnds<'a>, ConsumerEnds) {
    let (full_tx, full_rx) = mpsc::sync_channel(IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::sync_channel(IN_FLIGHT);
    (
        ReaderEnds {
            full: full_tx,
            empty: empty_rx,
            route: None,
            verify: None,
            ahead: None,
            payload_crcs: false,
        },
        ConsumerEnds { full: full_rx, empty: empty_tx },
    )
}

/// The reader thread's loop: reads `input` up to frame `last`, in batches numbered from 0.
/// Returns how reading ended, as [`crate::input::for_each_frame_until`] would (except the
/// undecoded frames, which the parsing side counts). Stops early, without an error, when the
/// consumer hangs up (a closed stdout).
pub(crate) fn read_batches(
    input: &Input,
    last: Option<u64>,
    mut ends: ReaderEnds<'_>,
) -> BatchResult {
    let mut cap = input.open()?;
    // Batches own the capture's windows: no frame is copied (`Capture::lend_window`).
    cap.lend_window(Vec::new());
    let window = &input.window;
    let last = window.last_or(last);
    let progress = progress_bar(cap.bytes_total());
    let mut summary = ReadSummary::default();
    let mut warnings = Warnings::default();
    let mut made = 0usize;
    let mut seq = 0u64;
    let mut batch = Batch::default();
    let mut hung_up = false;
    loop {
        // What the frame says, taken before the capture is asked for its windows.
        // (At the end too: reading may have moved on to a window only to find nothing.)
        let next = match cap.next_frame() {
            None => None,
            Some(Ok(frame)) => {
                let shard = ends.route.as_mut().map(|r| r.shard_of(&frame));
                let (ahead, crcs) = (&mut ends.ahead, ends.payload_crcs);
                let sums = ends.verify.filter(|_| window.contains(frame.number)).map(|cfg| {
                    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                    decode_into(&mut d, &cfg);
                    if let Some(a) = ahead {
                        a.frame(&d);
                    }
                    d.packet.as_ref().map_or(Checksums::default(), |p| checksums_of(p, crcs))
                });
                Some(Ok((FrameMeta::of(&frame), shard, sums)))
            }
            Some(Err(e)) => Some(Err(e)),
        };
        if let Some(full) = cap.take_retired_window() {
            // Reading moved on to a new window: the batch's frames are all in this one.
            if batch.is_empty() {
                cap.lend_window(full);
            } else {
                batch.set_window(full);
                let Some(mut fresh) = next_empty(&ends, &mut made) else {
                    hung_up = true;
                    break;
                };
                cap.lend_window(fresh.take_window());
                let last_ts = batch.metas().last().map_or(0, |m| m.ts_ns);
                let first_ts = batch.before.map_or(batch.metas()[0].ts_ns, |(first, _)| first);
                fresh.before = Some((first_ts, last_ts));
                let full = std::mem::replace(&mut batch, fresh);
                if ends.full.send((seq, full)).is_err() {
                    hung_up = true;
                    break;
                }
                seq += 1;
                if let Some(pb) = &progress {
                    pb.set_position(cap.bytes_read());
                }
            }
        }
        let Some(next) = next else { break };
        match next {
            Ok((meta, shard, sums)) => {
                let number = meta.number;
                if !window.contains(number) {
                    if last.is_some_and(|l| number >= l) {
                        break;
                    }
                    continue;
                }
                summary.frames += 1;
                batch.push_meta(meta.at(cap.last_frame_at()));
                if let Some(k) = shard {
                    batch.out.push(k);
                }
                if let Some(sums) = sums {
                    batch.checksums.push(sums);
                }
                // A window of tiny frames goes out early: what a batch makes per frame
                // (dissect's text) stays bounded by BATCH_FRAMES, not by how small the
                // frames are.
                if batch.len() >= BATCH_FRAMES {
                    cap.retire_window();
                }
                if last.is_some_and(|l| number >= l) {
                    break;
                }
            }
            Err(e) => {
                if e.nothing_read() && e.is_fatal() {
                    if let Some(pb) = &progress {
                        pb.finish_and_clear();
                    }
                    warnings.omitted().for_each(crate::output::warning);
                    return Err(InputError(e.to_string()));
                }
                if let Some(e) = warnings.add(e) {
                    crate::output::warning(e);
                }
            }
        }
    }
    if !hung_up {
        if let Some(a) = ends.ahead {
            a.end();
        }
    }
    if !hung_up && !batch.is_empty() {
        batch.set_window(cap.take_window());
        let _ = ends.full.send((seq, batch));
    }
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    summary.warnings = warnings.kept().iter().map(ToString::to_string).collect();
    for omitted in warnings.omitted() {
        crate::output::warning(&omitted as &dyn std::fmt::Display);
        summary.warnings.push(omitted.to_string());
    }
    Ok(summary)
}

/// What the reader hands over of a packet it parsed: the checksums' verdicts, and with
/// `payload_crcs` a request's payload CRC-32 (what the checker digests of every request, so
/// the frame loop reads no payload).
fn checksums_of(p: &Packet<'_>, payload_crcs: bool) -> Checksums {
    let sums = Checksums::of(p);
    let request = p.roce.as_ref().and_then(|r| r.info).is_some_and(|i| i.role == Role::Request);
    if payload_crcs && request {
        sums.with_payload_crc(p)
    } else {
        sums
    }
}

/// A batch to fill: a new one while fewer than [`IN_FLIGHT`] exist, else one given back
/// (`None` when the consumer hung up).
fn next_empty(ends: &ReaderEnds, made: &mut usize) -> Option<Batch> {
    if *made + 1 < IN_FLIGHT {
        *made += 1;
        return Some(Batch::default());
    }
    let mut b = ends.empty.recv().ok()?;
    b.clear();
    Some(b)
}

/// Where the checksums of a capture read ahead are verified ([`for_each_frame_ahead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyOn {
    /// On the reader thread, the verdicts handed over with the batch: for a command whose
    /// frame loop is its critical path and leaves the reader's core room (`stats`,
    /// `diagnose`, `report`, `graph`: 0.69-0.77x the wall time of verifying in the loop).
    Reader,
    /// [`VerifyOn::Reader`], and each request's payload CRC-32 computed there too, for a
    /// frame loop whose checker judges (the requester's digest: `diagnose`, `report`,
    /// `graph`; `stats`' model does not judge).
    ReaderWithPayloads,
    /// In the frame loop, as with one thread: `export -Y`, whose second core encodes the
    /// Parquet row groups (verifying on the reader measured no faster there, and cost 7 %
    /// more CPU time). Without `-Y`, `export`'s reader parses each frame anyway, to build
    /// its row ([`for_each_frame_ahead_with`]).
    Loop,
}

/// [`crate::input::for_each_frame`] on `threads`: the single-thread loop for one, else
/// [`for_each_frame_ahead`].
pub fn for_each_frame_on(
    threads: Threads,
    input: &Input,
    cfg: &Config,
    verify_on: VerifyOn,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    // Several files are one merged pass (their copies matched in time order): one thread.
    if threads.is_one() || input.files().is_some() {
        crate::input::for_each_frame(input, cfg, f)
    } else {
        for_each_frame_ahead(input, cfg, None, verify_on, f)
    }
}

/// [`crate::input::for_each_frame_until`] with the reading on a thread of its own, `f` called
/// on this thread with every frame in capture order: the same frames, decoded the same way,
/// the same summary and the same errors. The checksums are verified where `verify_on` says.
pub fn for_each_frame_ahead(
    input: &Input,
    cfg: &Config,
    last: Option<u64>,
    verify_on: VerifyOn,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    let (mut reader_ends, consumer) = channels();
    // On the reader: this thread parses without verifying and is given the verdicts.
    if verify_on != VerifyOn::Loop && cfg.verify {
        reader_ends.verify = Some(*cfg);
        reader_ends.payload_crcs = verify_on == VerifyOn::ReaderWithPayloads;
    }
    ahead_loop(input, cfg, last, reader_ends, consumer, f)
}

/// [`for_each_frame_ahead`] with work on the reader thread: `ahead` is given each frame as
/// the reader parses it (verified there, as for [`VerifyOn::Reader`]), `f` the same frames on
/// this thread, in the same order.
pub fn for_each_frame_ahead_with(
    input: &Input,
    cfg: &Config,
    ahead: &mut (dyn Ahead + Send),
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    let (mut reader_ends, consumer) = channels();
    reader_ends.verify = Some(*cfg);
    reader_ends.ahead = Some(ahead);
    reader_ends.payload_crcs = true;
    ahead_loop(input, cfg, None, reader_ends, consumer, f)
}

/// The frame loop of [`for_each_frame_ahead`]: the reader on a scoped thread, `f` here.
fn ahead_loop(
    input: &Input,
    cfg: &Config,
    last: Option<u64>,
    reader_ends: ReaderEnds<'_>,
    consumer: ConsumerEnds,
    mut f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    // A frame the reader parsed is parsed here without verifying, and given its verdicts.
    let here = if reader_ends.verify.is_some() { Config { verify: false, ..*cfg } } else { *cfg };
    thread::scope(|s| {
        let reader = s.spawn(move || read_batches(input, last, reader_ends));
        let mut undecoded = Vec::new();
        for (_, batch) in consumer.full.iter() {
            for i in 0..batch.len() {
                let mut d = Decoded { frame: batch.frame(i), packet: Ok(Packet::default()) };
                decode_into(&mut d, &here);
                if let (Ok(p), Some(sums)) = (&mut d.packet, batch.checksums.get(i)) {
                    sums.apply(p);
                }
                if let Err(why) = &d.packet {
                    count_undecoded(&mut undecoded, &d.frame, why);
                }
                f(&d);
            }
            // The reader may have stopped (`last`): then nobody takes it back.
            let _ = consumer.empty.try_send(batch);
        }
        let mut summary = join(reader)?;
        summary.undecoded = undecoded;
        Ok(summary)
    })
}

/// The reader thread's result; a panic there is passed on (it is a bug, not bad input).
pub(crate) fn join(h: thread::ScopedJoinHandle<'_, BatchResult>) -> BatchResult {
    match h.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
