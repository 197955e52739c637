//! Atomic ACK Extended Transport Header (8 bytes): the original remote data of an atomic.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const ORIG: Range<usize> = 0..8;
}

/// Length of a AtomicAckETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::ORIG.end;

header_view!(
    /// A zero-copy view of an AtomicAckETH (IBTA Vol. 1 §9.3).
    AtomicAckEth,
    Layer::AtomicAckEth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> AtomicAckEth<T> {
    /// OrigRemDt (bytes 0-7): the value the target held before the atomic.
    pub fn orig(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::ORIG)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AtomicAckEth<T> {
    /// Writes OrigRemDt (bytes 0-7).
    pub fn set_orig(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::ORIG, v);
    }
}

/// AtomicAckETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AtomicAckEthRepr {
    /// Original remote data.
    pub orig: u64,
}

impl AtomicAckEthRepr {
    /// Reads the field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &AtomicAckEth<T>) -> Self {
        AtomicAckEthRepr { orig: v.orig() }
    }
    /// Writes the field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut AtomicAckEth<T>) {
        v.set_orig(self.orig);
    }
    /// The same header: every field is as wide as its Rust type, nothing to clip.
    pub const fn normalized(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_emit_same_bytes() {
        let bytes = [0, 0, 0, 0, 0, 0, 0x01, 0x02];
        let r = AtomicAckEthRepr::parse(&AtomicAckEth::new_checked(&bytes[..]).unwrap());
        assert_eq!(r.orig, 0x102);
        let mut out = [0u8; 8];
        r.emit(&mut AtomicAckEth::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }
}
