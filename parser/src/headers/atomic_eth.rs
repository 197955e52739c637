//! Atomic Extended Transport Header (28 bytes): VA, R_Key, swap/add and compare data of a
//! COMPARE_SWAP or FETCH_ADD.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const VA: Range<usize> = 0..8;
    pub const RKEY: Range<usize> = 8..12;
    pub const SWAP_ADD: Range<usize> = 12..20;
    pub const COMPARE: Range<usize> = 20..28;
}

/// Length of a AtomicETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::COMPARE.end;

header_view!(
    /// A zero-copy view of an AtomicETH (IBTA Vol. 1 §9.3).
    AtomicEth,
    Layer::AtomicEth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> AtomicEth<T> {
    /// VA (bytes 0-7): the 64-bit virtual address of the 8-byte target.
    pub fn va(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::VA)
    }
    /// R_Key (bytes 8-11): the remote key that grants access to the target.
    pub fn rkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::RKEY)
    }
    /// SwapDt/AddDt (bytes 12-19): the value to swap in (COMPARE_SWAP) or to add (FETCH_ADD).
    pub fn swap_add(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::SWAP_ADD)
    }
    /// CmpDt (bytes 20-27): the value to compare with (COMPARE_SWAP; unused by FETCH_ADD).
    pub fn compare(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::COMPARE)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AtomicEth<T> {
    /// Writes the VA (bytes 0-7).
    pub fn set_va(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::VA, v);
    }
    /// Writes the R_Key (bytes 8-11).
    pub fn set_rkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::RKEY, v);
    }
    /// Writes the swap or add data (bytes 12-19).
    pub fn set_swap_add(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::SWAP_ADD, v);
    }
    /// Writes the compare data (bytes 20-27).
    pub fn set_compare(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::COMPARE, v);
    }
}

/// AtomicETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AtomicEthRepr {
    /// VA: virtual address of the target.
    pub va: u64,
    /// R_Key: remote key of the target.
    pub rkey: u32,
    /// Swap (COMPARE_SWAP) or add (FETCH_ADD) data.
    pub swap_add: u64,
    /// Compare data (COMPARE_SWAP).
    pub compare: u64,
}

impl AtomicEthRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &AtomicEth<T>) -> Self {
        AtomicEthRepr { va: v.va(), rkey: v.rkey(), swap_add: v.swap_add(), compare: v.compare() }
    }
    /// Writes every field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut AtomicEth<T>) {
        v.set_va(self.va);
        v.set_rkey(self.rkey);
        v.set_swap_add(self.swap_add);
        v.set_compare(self.compare);
    }
    /// The same header: every field is as wide as its Rust type, nothing to clip.
    pub const fn normalized(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const BYTES: [u8; 28] = [
        0, 0, 0, 0, 0, 0, 0x10, 0x08, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
        0, 0, 0, 7,
    ];
    #[test]
    fn parse_emit_same_bytes() {
        let r = AtomicEthRepr::parse(&AtomicEth::new_checked(&BYTES[..]).unwrap());
        assert_eq!(r, AtomicEthRepr { va: 0x1008, rkey: 0xdeadbeef, swap_add: 1, compare: 7 });
        let mut out = [0u8; 28];
        r.emit(&mut AtomicEth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }
}
