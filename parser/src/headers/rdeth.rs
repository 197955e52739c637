//! Reliable Datagram Extended Transport Header (4 bytes): the EE-context of an RD packet.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const RESERVED: usize = 0;
    pub const EECNXT: Range<usize> = 1..4;
}

/// Length of a RDETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::EECNXT.end;

header_view!(
    /// A zero-copy view of an RDETH (IBTA Vol. 1 §9.3).
    Rdeth,
    Layer::Rdeth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Rdeth<T> {
    /// Byte 0, reserved: 0 for RD (non-zero is `RdLayoutMismatch`).
    pub fn reserved(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESERVED)
    }
    /// EECnxt (bytes 1-3): the 24-bit end-to-end context number.
    pub fn eecnxt(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::EECNXT)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Rdeth<T> {
    /// Writes the reserved byte 0.
    pub fn set_reserved(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESERVED, v);
    }
    /// Writes EECnxt (bytes 1-3): the low 24 bits of `v`.
    pub fn set_eecnxt(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::EECNXT, v);
    }
}

/// RDETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RdethRepr {
    /// Byte 0, reserved (should be 0).
    pub reserved: u8,
    /// EE-Context, 24 bits.
    pub eecnxt: u32,
}

impl RdethRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Rdeth<T>) -> Self {
        RdethRepr { reserved: v.reserved(), eecnxt: v.eecnxt() }
    }
    /// Writes every field; EECnxt is clipped to 24 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Rdeth<T>) {
        v.set_reserved(self.reserved);
        v.set_eecnxt(self.eecnxt);
    }
    /// The same header with EECnxt clipped to 24 bits (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.eecnxt &= 0x00ff_ffff;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const BYTES: [u8; 4] = [0x00, 0x12, 0x34, 0x56];
    #[test]
    fn parse_emit_same_bytes() {
        let r = RdethRepr::parse(&Rdeth::new_checked(&BYTES[..]).unwrap());
        assert_eq!(r, RdethRepr { reserved: 0, eecnxt: 0x123456 });
        let mut out = [0u8; 4];
        r.emit(&mut Rdeth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }
}
