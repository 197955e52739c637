//! RDMA Extended Transport Header (16 bytes): remote VA, R_Key and DMA length of a WRITE,
//! READ, FLUSH or ATOMIC_WRITE.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const VA: Range<usize> = 0..8;
    pub const RKEY: Range<usize> = 8..12;
    pub const DMA_LEN: Range<usize> = 12..16;
}

/// Length of a RETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::DMA_LEN.end;

header_view!(
    /// A zero-copy view of a RETH (IBTA Vol. 1 §9.3).
    Reth,
    Layer::Reth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Reth<T> {
    /// VA (bytes 0-7): the 64-bit virtual address of the remote buffer.
    pub fn va(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::VA)
    }
    /// R_Key (bytes 8-11): the remote key that grants access to the buffer.
    pub fn rkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::RKEY)
    }
    /// DMALen (bytes 12-15): length of the whole RDMA operation in bytes (not of this packet).
    pub fn dma_len(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::DMA_LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Reth<T> {
    /// Writes the VA (bytes 0-7).
    pub fn set_va(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::VA, v);
    }
    /// Writes the R_Key (bytes 8-11).
    pub fn set_rkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::RKEY, v);
    }
    /// Writes DMALen (bytes 12-15).
    pub fn set_dma_len(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::DMA_LEN, v);
    }
}

/// RETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RethRepr {
    /// VA: virtual address of the remote buffer.
    pub va: u64,
    /// R_Key: remote key of the buffer.
    pub rkey: u32,
    /// DMALen: bytes of the whole operation.
    pub dma_len: u32,
}

impl RethRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Reth<T>) -> Self {
        RethRepr { va: v.va(), rkey: v.rkey(), dma_len: v.dma_len() }
    }
    /// Writes every field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Reth<T>) {
        v.set_va(self.va);
        v.set_rkey(self.rkey);
        v.set_dma_len(self.dma_len);
    }
    /// The same header: every field is as wide as its Rust type, nothing to clip.
    pub const fn normalized(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const BYTES: [u8; 16] = [
        0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x70, 0x00, 0x00, 0x01, 0x23, 0x45, 0x00, 0x00, 0x10,
        0x00,
    ];
    #[test]
    fn parse_emit_same_bytes() {
        let r = RethRepr::parse(&Reth::new_checked(&BYTES[..]).unwrap());
        assert_eq!(r, RethRepr { va: 0x7f12_3456_7000, rkey: 0x12345, dma_len: 4096 });
        let mut out = [0u8; 16];
        r.emit(&mut Reth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }
}
