//! FLUSH Extended Transport Header (4 bytes, IBTA 1.5): selectivity level and placement type.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    /// 26 reserved bits, then Selectivity Level (bits 5..4) and Placement Type (bits 3..0).
    pub const WORD: Range<usize> = 0..4;
}

/// Length of a FETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::WORD.end;

header_view!(
    /// A zero-copy view of a FETH (IBTA Vol. 1 annex A19, memory placement extensions).
    Feth,
    Layer::Feth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Feth<T> {
    fn word(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::WORD)
    }
    /// The 26 reserved bits.
    pub fn reserved(&self) -> u32 {
        self.word() >> 6
    }
    /// Selectivity Level (bits 5..4): what to flush, the RETH's range (0) or the whole
    /// memory region (1) (IBTA annex A19, §A19.4.1.2).
    pub fn selectivity(&self) -> u8 {
        ((self.word() >> 4) & 0x3) as u8
    }
    /// Placement Type (bits 3..0): flags, global visibility (bit 0) and persistence (bit 1)
    /// (§A19.4.1.1).
    pub fn placement(&self) -> u8 {
        (self.word() & 0xf) as u8
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Feth<T> {
    /// Writes the word: reserved (low 26 bits), selectivity (2 bits) and placement (4 bits).
    pub fn set_fields(&mut self, reserved: u32, selectivity: u8, placement: u8) {
        let w = ((reserved & 0x03ff_ffff) << 6)
            | (u32::from(selectivity & 0x3) << 4)
            | u32::from(placement & 0xf);
        set_be_u32(self.buffer.as_mut(), field::WORD, w);
    }
}

/// FETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct FethRepr {
    /// 26 bits.
    pub reserved: u32,
    /// 2 bits.
    pub selectivity: u8,
    /// 4 bits.
    pub placement: u8,
}

impl FethRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Feth<T>) -> Self {
        FethRepr { reserved: v.reserved(), selectivity: v.selectivity(), placement: v.placement() }
    }
    /// Writes every field, each clipped to its width.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Feth<T>) {
        v.set_fields(self.reserved, self.selectivity, self.placement);
    }
    /// The same header with every field clipped to its wire width (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.reserved &= 0x03ff_ffff;
        self.selectivity &= 3;
        self.placement &= 0xf;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_emit_same_bytes() {
        let bytes = [0x00, 0x00, 0x00, 0x12];
        let r = FethRepr::parse(&Feth::new_checked(&bytes[..]).unwrap());
        assert_eq!(r, FethRepr { reserved: 0, selectivity: 1, placement: 2 });
        let mut out = [0u8; 4];
        r.emit(&mut Feth::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }
}
