//! A batch of frames that owns its bytes: one buffer for all the frames' data and one record
//! per frame, both reused when the batch comes back to the reader (no allocation per frame,
//! none per batch once the buffers have grown).

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
}

impl Batch {
    /// Appends a copy of `frame`.
    pub fn push(&mut self, frame: &Frame<'_>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(frame.data);
        self.frames.push(FrameMeta {
            number: frame.number,
            ts_ns: frame.ts_ns,
            caplen: frame.caplen,
            len: frame.len,
            link_type: frame.link_type,
            interface: frame.interface,
            offset: frame.offset,
            start,
            end: self.bytes.len(),
        });
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
    /// When `i >= self.len()`.
    pub fn frame(&self, i: usize) -> Frame<'_> {
        let m = &self.frames[i];
        Frame {
            number: m.number,
            ts_ns: m.ts_ns,
            caplen: m.caplen,
            len: m.len,
            link_type: m.link_type,
            interface: m.interface,
            offset: m.offset,
            data: &self.bytes[m.start..m.end],
        }
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
        self.out.clear();
        self.before = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_as_pushed() {
        let a = [1u8, 2, 3];
        let b = [9u8; 70];
        let mut batch = Batch::default();
        for (n, data) in [(1u64, &a[..]), (2, &b[..])] {
            batch.push(&Frame {
                number: n,
                ts_ns: n * 10,
                caplen: data.len() as u32,
                len: 100,
                link_type: LinkType::Ethernet,
                interface: 0,
                offset: 24 + n,
                data,
            });
        }
        assert_eq!(batch.len(), 2);
        let f = batch.frame(1);
        assert_eq!((f.number, f.ts_ns, f.caplen, f.len, f.offset), (2, 20, 70, 100, 26));
        assert_eq!(f.data, &b[..]);
        assert_eq!(batch.frame(0).data, &a[..]);
        batch.clear();
        assert!(batch.is_empty());
    }
}
