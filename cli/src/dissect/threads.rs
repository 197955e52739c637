//! `dissect --threads N`: workers decode and format whole batches of frames into byte
//! buffers, and this thread writes the buffers in batch order, so the output is the
//! single-thread run's byte for byte. Frames read ahead and output waiting to be written are
//! both bounded by the batches in flight (`crate::threads::IN_FLIGHT`): a worker that runs ahead
//! of a slow one waits for a free batch, the writer holds at most that many out of order.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;
use std::thread;

use roce_parser::Packet;

use super::{write_end, write_frame, Options, Scratch};
use crate::input::{decode_into, Decoded, Input, InputError};
use crate::threads::{channels, join, read_batches, Batch, IN_FLIGHT};
use crate::tshark::Clock;

/// Runs `dissect` on `opts.threads` workers besides the reader and this writer.
pub(super) fn run(input: &Input, opts: &Options) -> Result<(), InputError> {
    let (reader_ends, consumer) = channels();
    let (done_tx, done_rx) = mpsc::sync_channel::<(u64, Batch)>(IN_FLIGHT);
    let last = opts.filter.last_frame();
    let work = Mutex::new(consumer.full);
    let work = &work;
    thread::scope(|s| {
        let reader = s.spawn(move || read_batches(input, last, reader_ends));
        for _ in 0..opts.threads.get() {
            let done = done_tx.clone();
            s.spawn(move || format_batches(work, opts, &done));
        }
        drop(done_tx);
        let stdout = io::stdout();
        let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
        let json = opts.format == super::Format::Json;
        let opening = super::opening(opts);
        let (first, io_err) =
            write_in_order(done_rx, consumer.empty, json, opening.as_bytes(), &mut out);
        // Reading ended (or stopped once the writer hung up): its damage is reported as in
        // the single-thread run, and nothing is written after a capture that cannot be read.
        join(reader)?;
        let res = match io_err {
            Some(e) => Err(e),
            None => write_end(opts, first, &mut out).and_then(|()| out.flush()),
        };
        crate::output::written(res)
    })
}

/// Writes the batches' output in batch order and gives the batches back to the reader.
/// Returns whether no frame was written (the JSON array is still to open) and the write
/// error that stopped it, if one did (the receiver is then dropped: workers and reader stop).
fn write_in_order(
    done: Receiver<(u64, Batch)>,
    empty: SyncSender<Batch>,
    json: bool,
    opening: &[u8],
    out: &mut impl Write,
) -> (bool, Option<io::Error>) {
    let mut pending: BTreeMap<u64, Batch> = BTreeMap::new();
    let mut next = 0u64;
    let mut first = true;
    for (seq, batch) in done.iter() {
        pending.insert(seq, batch);
        while let Some(b) = pending.remove(&next) {
            next += 1;
            // Workers write every JSON frame as ",\n{...}": the first one written opens the
            // array instead (both prefixes are two bytes).
            let bytes = match b.out.get(2..) {
                Some(rest) if json && first && b.out.starts_with(b",\n") => {
                    out.write_all(b"[\n").and_then(|()| out.write_all(rest))
                }
                // `-E header=y`: the header line before the first frame's.
                _ if first && !b.out.is_empty() => {
                    out.write_all(opening).and_then(|()| out.write_all(&b.out))
                }
                _ => out.write_all(&b.out),
            };
            first &= b.out.is_empty();
            if let Err(e) = bytes {
                return (first, Some(e));
            }
            // At most IN_FLIGHT batches exist, so there is always room.
            let _ = empty.try_send(b);
        }
    }
    (first, None)
}

/// A worker: takes batches until the reader is done, formats each into its `out`.
fn format_batches(
    work: &Mutex<Receiver<(u64, Batch)>>,
    opts: &Options,
    done: &SyncSender<(u64, Batch)>,
) {
    let mut scratch = Scratch::default();
    loop {
        let next = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, mut batch)) = next else { return };
        format_batch(&mut batch, opts, &mut scratch);
        if done.send((seq, batch)).is_err() {
            return;
        }
    }
}

/// Decodes and formats a batch's kept frames, as the single-thread loop does frame by frame.
fn format_batch(batch: &mut Batch, opts: &Options, scratch: &mut Scratch) {
    let mut out = std::mem::take(&mut batch.out);
    out.clear();
    let mut clock = Clock::default();
    if let Some((first_ts, prev_ts)) = batch.before {
        clock.read(first_ts);
        clock.read(prev_ts);
    }
    let mut first = false;
    for i in 0..batch.len() {
        let mut d = Decoded { frame: batch.frame(i), packet: Ok(Packet::default()) };
        decode_into(&mut d, &opts.config);
        clock.read(d.frame.ts_ns);
        if !opts.filter.keeps(&d) {
            continue;
        }
        // Writing to a Vec cannot fail.
        let _ = write_frame(&d, None, opts, &mut clock, scratch, &mut first, &mut out);
    }
    batch.out = out;
}
