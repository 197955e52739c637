//! XRC Extended Transport Header (4 bytes): the XRC SRQ a request is for.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const RESERVED: usize = 0;
    pub const XRCSRQ: Range<usize> = 1..4;
}

/// Length of a XRCETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::XRCSRQ.end;

header_view!(
    /// A zero-copy view of an XRCETH (the XRC transport of IBTA Vol. 1).
    Xrceth,
    Layer::Xrceth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Xrceth<T> {
    /// Byte 0, reserved (non-zero is `ReservedBits`).
    pub fn reserved(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESERVED)
    }
    /// XRCSRQ (bytes 1-3): the 24-bit number of the XRC shared receive queue the request
    /// is for.
    pub fn xrcsrq(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::XRCSRQ)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Xrceth<T> {
    /// Writes the reserved byte 0.
    pub fn set_reserved(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESERVED, v);
    }
    /// Writes XRCSRQ (bytes 1-3): the low 24 bits of `v`.
    pub fn set_xrcsrq(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::XRCSRQ, v);
    }
}

/// XRCETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct XrcethRepr {
    /// Byte 0, reserved (should be 0).
    pub reserved: u8,
    /// XRC SRQ number, 24 bits.
    pub xrcsrq: u32,
}

impl XrcethRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Xrceth<T>) -> Self {
        XrcethRepr { reserved: v.reserved(), xrcsrq: v.xrcsrq() }
    }
    /// Writes every field; XRCSRQ is clipped to 24 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Xrceth<T>) {
        v.set_reserved(self.reserved);
        v.set_xrcsrq(self.xrcsrq);
    }
    /// The same header with XRCSRQ clipped to 24 bits (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.xrcsrq &= 0x00ff_ffff;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const BYTES: [u8; 4] = [0x00, 0x00, 0x02, 0x9a];
    #[test]
    fn parse_emit_same_bytes() {
        let r = XrcethRepr::parse(&Xrceth::new_checked(&BYTES[..]).unwrap());
        assert_eq!(r.xrcsrq, 0x29a);
        let mut out = [0u8; 4];
        r.emit(&mut Xrceth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }
}
