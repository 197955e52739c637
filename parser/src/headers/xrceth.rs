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
    /// A zero-copy view of an XRCETH.
    Xrceth,
    Layer::Xrceth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Xrceth<T> {
    pub fn reserved(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESERVED)
    }
    pub fn xrcsrq(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::XRCSRQ)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Xrceth<T> {
    pub fn set_reserved(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESERVED, v);
    }
    pub fn set_xrcsrq(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::XRCSRQ, v);
    }
}

/// XRCETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct XrcethRepr {
    pub reserved: u8,
    /// XRC SRQ number, 24 bits.
    pub xrcsrq: u32,
}

impl XrcethRepr {
    pub fn parse<T: AsRef<[u8]>>(v: &Xrceth<T>) -> Self {
        XrcethRepr { reserved: v.reserved(), xrcsrq: v.xrcsrq() }
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Xrceth<T>) {
        v.set_reserved(self.reserved);
        v.set_xrcsrq(self.xrcsrq);
    }
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
