//! Several captures read as one, in time order: a k-way merge of their frame streams.
//!
//! Why: the traffic of one job is mirrored at several switch ports, or captured on both
//! hosts, so the same fabric is seen in several files. [`Merge`] hands out the frames of all
//! of them by timestamp (as `mergecap` orders them), numbered in that order (the numbers a
//! merged capture written with `-w` has), each still saying which file it came from and what
//! number it has there ([`Frame::source`], [`Frame::source_number`]).
//!
//! Memory is one read window per file and a heap of one entry per file: bounded by the number
//! of files, never by their length. No frame is copied: each file's next frame stays in that
//! file's window until it is handed out (a capture's window holds the frame it last
//! returned), and only its time and place are kept beside it.
//!
//! Each file may be given a clock offset, added to its timestamps before they are compared
//! (taps whose clocks differ): the frames handed out carry the corrected time. Within one
//! file the order is the file's own, even where its timestamps go backwards; between files,
//! equal times go in the order the files were given.
//!
//! Damage is handed out where the merge meets it: right after the damaged file's last good
//! frame (or before any frame, for damage in a file's first record), naming the file, its
//! frame and byte offset. Damage a file reads on past (a skipped block, a warning) is handed
//! out as it is. Damage that ends a file ([`CaptureError::is_fatal`] for the file alone) ends
//! only that file: it is dropped, and the other files are read on to their ends, their frames
//! in the order they would have without it. Such an error is handed out once, as
//! [`Effect::Dropped`](crate::Effect::Dropped) (not fatal) when anything follows it; when
//! nothing does (every other file is read to its end or dropped already, as for a merge of
//! one file), it stays fatal, and the merge ends with it. So a merge's error is fatal exactly when it is the last thing
//! the merge hands out, as a capture's is; and one for which `nothing_read()` is also true
//! means that no file gave a frame.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::capture::{Capture, Frame};
use crate::error::CaptureError;
use crate::link::LinkType;

/// What the pass reads frames from: one [`Capture`], or a [`Merge`] of several.
pub trait ReadFrames {
    /// The next frame, an error naming the damage (a warning unless `is_fatal()`), or
    /// `None` at the end: as [`Capture::next_frame`].
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>>;
    /// Bytes read so far, for a progress bar ([`Capture::bytes_read`]).
    fn bytes_read(&self) -> u64;
    /// Bytes in all, when known ([`Capture::bytes_total`]).
    fn bytes_total(&self) -> Option<u64>;
}

impl ReadFrames for Capture {
    #[inline]
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        Capture::next_frame(self)
    }
    fn bytes_read(&self) -> u64 {
        Capture::bytes_read(self)
    }
    fn bytes_total(&self) -> Option<u64> {
        Capture::bytes_total(self)
    }
}

/// The frame a file holds ready: its scalars (the data stays in the file's window).
#[derive(Clone, Copy)]
struct Head {
    number: u64,
    ts_ns: u64,
    caplen: u32,
    len: u32,
    link_type: LinkType,
    interface: u32,
    offset: u64,
}

/// Several captures read as one, in time order (see the module's documentation).
///
/// ```
/// use roce_capture::{Capture, Merge};
///
/// // Two pcap files of one Ethernet frame each, at 2 s and at 1 s.
/// let pcap = |sec: u8| {
///     let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
///     f.extend_from_slice(&[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
///     f.extend_from_slice(&[sec, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 14, 0, 0, 0]);
///     f.extend_from_slice(&[0x02; 12]);
///     f.extend_from_slice(&[0x08, 0x00]);
///     f
/// };
/// let a = Capture::from_bytes("a.pcap", pcap(2))?;
/// let b = Capture::from_bytes("b.pcap", pcap(1))?;
/// let mut merge = Merge::new(vec![a, b], &[0, 0]);
/// let mut seen = Vec::new();
/// while let Some(frame) = merge.next_frame() {
///     let f = frame?;
///     seen.push((f.number, f.source, f.source_number, f.ts_ns));
/// }
/// // In time order, numbered in it; each frame says which file and which frame there.
/// assert_eq!(seen, [(1, 1, 1, 1_000_000_000), (2, 0, 1, 2_000_000_000)]);
/// assert_eq!(merge.name(1), "b.pcap");
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub struct Merge {
    caps: Vec<Capture>,
    offsets: Vec<i64>,
    heads: Vec<Option<Head>>,
    /// (corrected time, file) of every file with a frame ready, earliest on top.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// Files whose next frame is still to be read (every file at the start; the file of the
    /// frame handed out last, after). Reading stops at an error a file reads on past, which is
    /// handed out first: the same file is read on at the next call.
    pending: Vec<u32>,
    /// The error that ended a file (dropped from `pending`), held until the other pending
    /// files are read: then it is known whether anything follows it (it is handed out as
    /// dropped) or the merge ends with it (handed out as it is, fatal). At most one.
    ended: Option<CaptureError>,
    numbered: u64,
}

impl Merge {
    /// The captures, in the order given (a frame's [`Frame::source`] indexes it), with a clock
    /// offset in nanoseconds for each (added to its timestamps; missing ones are 0).
    pub fn new(caps: Vec<Capture>, offsets_ns: &[i64]) -> Merge {
        let n = caps.len();
        let offsets = (0..n).map(|i| offsets_ns.get(i).copied().unwrap_or(0)).collect();
        // Read in reverse so that `pop` takes the first file first.
        let pending = (0..n).rev().filter_map(|i| u32::try_from(i).ok()).collect();
        Merge {
            caps,
            offsets,
            heads: vec![None; n],
            heap: BinaryHeap::with_capacity(n),
            pending,
            ended: None,
            numbered: 0,
        }
    }

    /// The name of capture `source` (as given to [`crate::open`]), `""` when there is none.
    pub fn name(&self, source: u32) -> &str {
        self.caps.get(source as usize).map_or("", Capture::name)
    }

    /// The captures, in the order given.
    pub fn captures(&self) -> &[Capture] {
        &self.caps
    }

    /// The clock offset added to capture `source`'s timestamps.
    pub fn offset_ns(&self, source: u32) -> i64 {
        self.offsets.get(source as usize).copied().unwrap_or(0)
    }

    /// The next frame of all the captures by time (numbered in that order), an error of one
    /// of them (it names its file), or `None` when every file is read. A file whose damage
    /// ends it is dropped and the others are read on: its error is not fatal then, unless
    /// nothing follows it (see the module's documentation).
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        while let Some(&i) = self.pending.last() {
            let at = i as usize;
            let offset = self.offsets.get(at).copied().unwrap_or(0);
            let Some(cap) = self.caps.get_mut(at) else {
                self.pending.pop();
                continue;
            };
            match cap.next_frame() {
                Some(Ok(f)) => {
                    let ts = shift(f.ts_ns, offset);
                    let head = Head {
                        number: f.number,
                        ts_ns: ts,
                        caplen: f.caplen,
                        len: f.len,
                        link_type: f.link_type,
                        interface: f.interface,
                        offset: f.offset,
                    };
                    if let Some(slot) = self.heads.get_mut(at) {
                        *slot = Some(head);
                    }
                    self.heap.push(Reverse((ts, i)));
                    self.pending.pop();
                }
                Some(Err(e)) if e.is_fatal() => {
                    // The file ends here (its reader stays ended): dropped. Whether the merge
                    // ends with it is known once the other pending files are read.
                    self.pending.pop();
                    if let Some(earlier) = self.ended.replace(e) {
                        // The error just met follows it: not the end.
                        return Some(Err(earlier.dropped()));
                    }
                }
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    self.pending.pop();
                }
            }
        }
        if let Some(e) = self.ended.take() {
            // Every file is read up to its next frame: a frame ready follows the error, or
            // nothing does and the merge ends with it.
            return Some(Err(if self.heap.is_empty() { e } else { e.dropped() }));
        }
        let Reverse((_, i)) = self.heap.pop()?;
        self.pending.push(i);
        let head = self.heads.get_mut(i as usize)?.take()?;
        let cap = self.caps.get(i as usize)?;
        self.numbered += 1;
        Some(Ok(Frame {
            number: self.numbered,
            source: i,
            source_number: head.number,
            ts_ns: head.ts_ns,
            caplen: head.caplen,
            len: head.len,
            link_type: head.link_type,
            interface: head.interface,
            offset: head.offset,
            data: cap.last_frame_data(head.caplen),
        }))
    }

    /// Bytes read from every file so far.
    pub fn bytes_read(&self) -> u64 {
        self.caps.iter().map(Capture::bytes_read).sum()
    }

    /// Bytes of every file, when each one's size is known.
    pub fn bytes_total(&self) -> Option<u64> {
        self.caps.iter().map(Capture::bytes_total).sum()
    }
}

impl ReadFrames for Merge {
    #[inline]
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        Merge::next_frame(self)
    }
    fn bytes_read(&self) -> u64 {
        Merge::bytes_read(self)
    }
    fn bytes_total(&self) -> Option<u64> {
        Merge::bytes_total(self)
    }
}

/// `ts + offset`, held to the range of a timestamp.
fn shift(ts: u64, offset: i64) -> u64 {
    if offset >= 0 {
        ts.saturating_add(offset.unsigned_abs())
    } else {
        ts.saturating_sub(offset.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Effect, ErrorKind};

    /// A pcap file (nanosecond magic) with one 60-byte frame per time, its first byte `tag`.
    fn pcap(times: &[u64], tag: u8) -> Vec<u8> {
        let mut f = vec![0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        f.extend_from_slice(&[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
        for (k, t) in times.iter().enumerate() {
            let sec = u32::try_from(t / 1_000_000_000).unwrap();
            let ns = u32::try_from(t % 1_000_000_000).unwrap();
            f.extend_from_slice(&sec.to_le_bytes());
            f.extend_from_slice(&ns.to_le_bytes());
            f.extend_from_slice(&60u32.to_le_bytes());
            f.extend_from_slice(&60u32.to_le_bytes());
            let mut data = [0u8; 60];
            data[0] = tag;
            data[1] = u8::try_from(k).unwrap();
            f.extend_from_slice(&data);
        }
        f
    }

    fn read(mut m: Merge) -> Vec<(u64, u32, u64, u64, u8, u8)> {
        let mut out = Vec::new();
        while let Some(f) = m.next_frame() {
            let f = f.unwrap();
            assert_eq!(f.data.len(), 60);
            out.push((f.number, f.source, f.source_number, f.ts_ns, f.data[0], f.data[1]));
        }
        out
    }

    #[test]
    fn interleaves_by_time_and_keeps_each_files_order() {
        let a = Capture::from_bytes("a", pcap(&[10, 30, 30, 50, 5], 0xa)).unwrap();
        let b = Capture::from_bytes("b", pcap(&[20, 30, 40], 0xb)).unwrap();
        let got = read(Merge::new(vec![a, b], &[]));
        let order: Vec<(u32, u64)> = got.iter().map(|g| (g.1, g.2)).collect();
        // Equal times: the first file first; a's time going back (5) stays in a's order.
        assert_eq!(order, [(0, 1), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3), (0, 4), (0, 5)]);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
        // Each frame's bytes are its own file's frame.
        for g in &got {
            assert_eq!((g.4, u64::from(g.5) + 1), (if g.1 == 0 { 0xa } else { 0xb }, g.2));
        }
    }

    #[test]
    fn offsets_correct_the_clocks() {
        let a = Capture::from_bytes("a", pcap(&[1_000, 2_000], 1)).unwrap();
        let b = Capture::from_bytes("b", pcap(&[1_500_500, 1_501_500], 2)).unwrap();
        let got = read(Merge::new(vec![a, b], &[0, -1_500_000]));
        let seen: Vec<(u32, u64)> = got.iter().map(|g| (g.1, g.3)).collect();
        assert_eq!(seen, [(1, 500), (0, 1_000), (1, 1_500), (0, 2_000)]);
    }

    #[test]
    fn one_capture_merged_is_the_capture() {
        let times = [7, 3, 9, 9, 12];
        let got = read(Merge::new(vec![Capture::from_bytes("a", pcap(&times, 1)).unwrap()], &[]));
        let mut alone = Capture::from_bytes("a", pcap(&times, 1)).unwrap();
        let mut k = 0;
        while let Some(f) = alone.next_frame() {
            let f = f.unwrap();
            let g = got[k];
            assert_eq!((g.0, g.1, g.2, g.3), (f.number, f.source, f.source_number, f.ts_ns));
            k += 1;
        }
        assert_eq!(k, got.len());
    }

    #[test]
    fn damage_in_one_file_is_handed_out_and_the_others_read_on() {
        let a = Capture::from_bytes("a", pcap(&[10, 20, 30], 1)).unwrap();
        // b's second record claims more bytes than the file holds: cut short.
        let mut bb = pcap(&[15, 25], 2);
        bb.truncate(bb.len() - 10);
        let b = Capture::from_bytes("b.pcap", bb).unwrap();
        let empty = Capture::from_bytes("empty", pcap(&[], 3)).unwrap();
        let mut m = Merge::new(vec![a, b, empty], &[]);
        let (mut frames, mut errors) = (Vec::new(), Vec::new());
        while let Some(f) = m.next_frame() {
            match f {
                Ok(f) => frames.push((f.source, f.source_number)),
                Err(e) => errors.push(e.to_string()),
            }
        }
        assert_eq!(frames, [(0, 1), (1, 1), (0, 2), (0, 3)]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("b.pcap"), "{}", errors[0]);
        assert_eq!(m.name(1), "b.pcap");
    }

    /// A pcap file of `times` whose first record claims 300,000 bytes: beyond the snap
    /// length and `MAX_RECORD_LEN`, damage that ends the file before its first frame.
    fn broken_first_record(times: &[u64], tag: u8) -> Vec<u8> {
        let mut f = pcap(times, tag);
        f[32..36].copy_from_slice(&300_000u32.to_le_bytes());
        f[36..40].copy_from_slice(&300_000u32.to_le_bytes());
        f
    }

    /// Everything a merge hands out: frames as (file, number there), errors as they are.
    fn read_all(m: &mut Merge) -> (Vec<(u32, u64)>, Vec<CaptureError>, Vec<bool>) {
        let (mut frames, mut errors, mut order) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(f) = m.next_frame() {
            match f {
                Ok(f) => {
                    frames.push((f.source, f.source_number));
                    order.push(true);
                }
                Err(e) => {
                    errors.push(e);
                    order.push(false);
                }
            }
        }
        assert!(m.next_frame().is_none(), "the merge restarted after its end");
        (frames, errors, order)
    }

    #[test]
    fn a_file_broken_before_its_first_frame_is_a_warning_and_the_others_read_on() {
        // The real bytes: b's header is sound, its first record is not.
        let b_bytes = broken_first_record(&[15, 25], 2);
        let mut alone = Capture::from_bytes("b.pcap", b_bytes.clone()).unwrap();
        let e = alone.next_frame().unwrap().unwrap_err();
        assert!(e.is_fatal() && e.nothing_read(), "b alone: {e}");
        assert!(alone.next_frame().is_none());

        let a = Capture::from_bytes("a.pcap", pcap(&[10, 20, 30], 1)).unwrap();
        let b = Capture::from_bytes("b.pcap", b_bytes).unwrap();
        let mut m = Merge::new(vec![a, b], &[]);
        let (frames, errors, order) = read_all(&mut m);
        // Every frame of a, in its order, numbered 1..3 in the merge.
        assert_eq!(frames, [(0, 1), (0, 2), (0, 3)]);
        // b's damage once, before any frame (where it is met), not fatal: the read went on.
        assert_eq!(order, [false, true, true, true]);
        assert_eq!(errors.len(), 1);
        let e = &errors[0];
        assert_eq!((e.effect(), e.is_fatal(), e.nothing_read()), (Effect::Dropped, false, true));
        assert_eq!((e.file(), e.frame(), e.offset()), ("b.pcap", Some(1), 24));
        assert!(matches!(e.kind(), ErrorKind::RecordTooLong { caplen: 300_000 }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with("b.pcap: frame 1 at byte offset 24: record length 300000"),
            "{text}"
        );
        assert!(
            text.ends_with("; the rest of this file is left out, the other captures are read on"),
            "{text}"
        );

        // The same with the damaged file first: a's frames all the same.
        let a = Capture::from_bytes("a.pcap", pcap(&[10, 20, 30], 1)).unwrap();
        let b = Capture::from_bytes("b.pcap", broken_first_record(&[15, 25], 2)).unwrap();
        let (frames, errors, order) = read_all(&mut Merge::new(vec![b, a], &[]));
        assert_eq!(frames, [(1, 1), (1, 2), (1, 3)]);
        assert_eq!(order, [false, true, true, true]);
        assert_eq!(errors.iter().map(CaptureError::effect).collect::<Vec<_>>(), [Effect::Dropped]);
    }

    #[test]
    fn fatal_damage_after_frames_drops_the_file_and_the_others_read_on() {
        let a = Capture::from_bytes("a", pcap(&[10, 20, 30, 40], 1)).unwrap();
        // b's second record claims more bytes than the file holds: b ends after frame 1.
        let mut bb = pcap(&[15, 25, 35], 2);
        bb.truncate(bb.len() - 86);
        let b = Capture::from_bytes("b.pcap", bb).unwrap();
        let (frames, errors, order) = read_all(&mut Merge::new(vec![a, b], &[]));
        assert_eq!(frames, [(0, 1), (1, 1), (0, 2), (0, 3), (0, 4)]);
        // Met when b's next record is read, right after b's frame 1 is handed out.
        assert_eq!(order, [true, true, false, true, true, true]);
        let e = &errors[0];
        assert_eq!(
            (e.effect(), e.file(), e.frame(), e.nothing_read()),
            (Effect::Dropped, "b.pcap", Some(2), false)
        );
    }

    #[test]
    fn fatal_damage_that_nothing_follows_stays_fatal() {
        // Every file broken before its first frame: the first met is dropped, the last ends
        // the merge (nothing could be read: fatal, nothing read, as one broken capture's).
        let a = Capture::from_bytes("a", broken_first_record(&[10], 1)).unwrap();
        let b = Capture::from_bytes("b", broken_first_record(&[20], 2)).unwrap();
        let (frames, errors, _) = read_all(&mut Merge::new(vec![a, b], &[]));
        assert!(frames.is_empty());
        let said: Vec<_> =
            errors.iter().map(|e| (e.file(), e.effect(), e.nothing_read())).collect();
        assert_eq!(said, [("a", Effect::Dropped, true), ("b", Effect::Fatal, true)]);

        // A broken file and an empty one: nothing follows the damage either.
        let a = Capture::from_bytes("a", broken_first_record(&[10], 1)).unwrap();
        let empty = Capture::from_bytes("empty", pcap(&[], 3)).unwrap();
        let (frames, errors, _) = read_all(&mut Merge::new(vec![a, empty], &[]));
        assert!(frames.is_empty());
        assert_eq!(errors.iter().map(CaptureError::effect).collect::<Vec<_>>(), [Effect::Fatal]);

        // One file: its errors as the capture alone gives them.
        let a = Capture::from_bytes("a", broken_first_record(&[10], 1)).unwrap();
        let (_, errors, _) = read_all(&mut Merge::new(vec![a], &[]));
        assert_eq!(errors.iter().map(CaptureError::effect).collect::<Vec<_>>(), [Effect::Fatal]);

        // The last file to end does so with damage after its frames, the others done: fatal.
        let a = Capture::from_bytes("a", pcap(&[10], 1)).unwrap();
        let mut bb = pcap(&[15, 25], 2);
        bb.truncate(bb.len() - 10);
        let b = Capture::from_bytes("b", bb).unwrap();
        let (frames, errors, order) = read_all(&mut Merge::new(vec![a, b], &[]));
        assert_eq!(frames, [(0, 1), (1, 1)]);
        assert_eq!(order, [true, true, false]);
        assert_eq!((errors[0].effect(), errors[0].nothing_read()), (Effect::Fatal, false));
    }
}
