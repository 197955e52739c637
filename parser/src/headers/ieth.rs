//! Invalidate Extended Transport Header (4 bytes): the R_Key a SEND_WITH_INVALIDATE revokes.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const RKEY: Range<usize> = 0..4;
}

/// Length of a IETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::RKEY.end;

header_view!(
    /// A zero-copy view of an IETH (IBTA Vol. 1 §9.3).
    Ieth,
    Layer::Ieth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Ieth<T> {
    /// R_Key (bytes 0-3): the remote key the responder invalidates on receipt.
    pub fn rkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::RKEY)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ieth<T> {
    /// Writes the R_Key.
    pub fn set_rkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::RKEY, v);
    }
}

/// IETH as a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct IethRepr {
    /// R_Key to invalidate.
    pub rkey: u32,
}

impl IethRepr {
    /// Reads the field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Ieth<T>) -> Self {
        IethRepr { rkey: v.rkey() }
    }
    /// Writes the field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Ieth<T>) {
        v.set_rkey(self.rkey);
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
        let bytes = [0x00, 0x0a, 0xbc, 0xde];
        let r = IethRepr::parse(&Ieth::new_checked(&bytes[..]).unwrap());
        assert_eq!(r.rkey, 0xabcde);
        let mut out = [0u8; 4];
        r.emit(&mut Ieth::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }
}
