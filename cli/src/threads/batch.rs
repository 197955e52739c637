//! A batch of frames that owns its bytes: one of the capture reader's windows, lent whole
//! ([`roce_capture::Capture::lend_window`]), and one record per frame saying where its data
//! lies in it. Both are reused when the batch comes back to the reader: no copy of a frame,
//! no allocation per frame, none per batch once the buffers have grown.

use roce_capture::{Frame, LinkType};

/// What a [`Frame`] says besides its bytes, and where they are in the batch's buffer.
#[derive(Debug, Clone, Copy)]
pub struct FrameMeta {
    pub number: u64,
    pub ts_ns: u64,
    pub caplen: u32,
    pub len: u32,
    pub link_type: LinkType,
    pub interface: u32,
    pub offset: u64,
    /// The frame's bytes: `bytes[start..end]`.
    start: usize,
    end: usize,
}

impl FrameMeta {
    /// What `frame` says besides its bytes; [`FrameMeta::at`] says where they are.
    #[inline]
    pub fn of(frame: &Frame<'_>) -> FrameMeta {
        FrameMeta {
            number: frame.number,
            ts_ns: frame.ts_ns,
            caplen: frame.caplen,
            len: frame.len,
            link_type: frame.link_type,
            interface: frame.interface,
            offset: frame.offset,
            start: 0,
            end: frame.data.len(),
        }
    }

    /// The record with the frame's data at `at` in its window.
    #[inline]
    pub fn at(self, at: usize) -> FrameMeta {
        FrameMeta { start: at, end: at + (self.end - self.start), ..self }
    }
}

/// Frames read ahead, with their bytes; `out` is scratch for whoever turns them into text.
#[derive(Debug, Default)]
pub struct Batch {
    bytes: Vec<u8>,
    frames: Vec<FrameMeta>,
    /// The batch's output (`dissect`: the formatted frames, written in batch order; `check`:
    /// each frame's shard, one byte per frame).
    pub out: Vec<u8>,
    /// The timestamps of the capture's first frame and of the frame read just before this
    /// batch (`None` in the first batch): what `dissect -t r` and `-t d` need from before.
    pub before: Option<(u64, u64)>,
    /// Each frame's checksums as the reader verified them, when it was asked to
    /// (`ReaderEnds::verify`; empty otherwise).
    pub checksums: Vec<roce_parser::Checksums>,
}

impl Batch {
    /// Appends `frame`, whose data is at `at` in the window the batch will be given
    /// ([`Batch::set_window`]).
    #[inline]
    pub fn push(&mut self, frame: &Frame<'_>, at: usize) {
        self.push_meta(FrameMeta::of(frame).at(at));
    }

    /// Appends a frame's record ([`FrameMeta::of`], placed with [`FrameMeta::at`]).
    #[inline]
    pub fn push_meta(&mut self, meta: FrameMeta) {
        self.frames.push(meta);
    }

    /// Gives the batch the window its frames' data is in.
    pub fn set_window(&mut self, window: Vec<u8>) {
        self.bytes = window;
    }

    /// Takes the batch's window (to read into again), leaving it none.
    pub fn take_window(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }

    /// The number of frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether the batch holds no frame.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frames' records, in capture order.
    pub fn metas(&self) -> &[FrameMeta] {
        &self.frames
    }

    /// Frame `i` of the batch (0-based), as the capture reader gave it.
    ///
    /// # Panics
    /// When `i >= self.len()`, or when its window is not the one its frames were read into.
    pub fn frame(&self, i: usize) -> Frame<'_> {
        let m = &self.frames[i];
        Frame {
            number: m.number,
            source: 0,
            source_number: m.number,
            ts_ns: m.ts_ns,
            caplen: m.caplen,
            len: m.len,
            link_type: m.link_type,
            interface: m.interface,
            offset: m.offset,
            data: &self.bytes[m.start..m.end],
        }
    }

    /// Empties the batch, keeping its buffers (the window keeps its length: it is read
    /// into again, and clearing it would cost a write of every byte).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.out.clear();
        self.checksums.clear();
        self.before = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_as_pushed() {
        let mut window = vec![0u8; 100];
        window[..3].copy_from_slice(&[1, 2, 3]);
        window[10..80].fill(9);
        let (a, b) = (window[..3].to_vec(), window[10..80].to_vec());
        let mut batch = Batch::default();
        for (n, data, at) in [(1u64, &a[..], 0), (2, &b[..], 10)] {
            batch.push(
                &Frame {
                    number: n,
                    source: 0,
                    source_number: n,
                    ts_ns: n * 10,
                    caplen: data.len() as u32,
                    len: 100,
                    link_type: LinkType::Ethernet,
                    interface: 0,
                    offset: 24 + n,
                    data,
                },
                at,
            );
        }
        batch.set_window(window);
        assert_eq!(batch.len(), 2);
        let f = batch.frame(1);
        assert_eq!((f.number, f.ts_ns, f.caplen, f.len, f.offset), (2, 20, 70, 100, 26));
        assert_eq!(f.data, &b[..]);
        assert_eq!(batch.frame(0).data, &a[..]);
        batch.clear();
        assert!(batch.is_empty());
        assert_eq!(batch.take_window().len(), 100);
    }
}
