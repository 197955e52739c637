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
    /// frame handed out last, after). Reading stops at an error, which is handed out first:
    /// the same file is read on at the next call.
    pending: Vec<u32>,
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
    /// of them (it names its file; reading goes on unless the file cannot be read further,
    /// and the other files are read on in any case), or `None` when every file is read.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        while let Some(&i) = self.pending.last() {
            let at = i as usize;
            let offset = self.offsets.get(at).copied().unwrap_or(0);
            let cap = self.caps.get_mut(at)?;
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
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    self.pending.pop();
                }
            }
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
}
