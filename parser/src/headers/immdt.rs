//! Immediate Data header (4 bytes), opaque to the transport.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const DATA: Range<usize> = 0..4;
}

/// Length of a ImmDt on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::DATA.end;

header_view!(
    /// A zero-copy view of an ImmDt (IBTA Vol. 1 §9.3).
    ImmDt,
    Layer::ImmDt,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> ImmDt<T> {
    /// The 4 bytes of immediate data as a big-endian u32 (opaque: only the consumer knows
    /// their meaning).
    pub fn data(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ImmDt<T> {
    /// Writes the immediate data, big-endian.
    pub fn set_data(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::DATA, v);
    }
}

/// ImmDt as a plain value (read big-endian, as Wireshark shows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ImmDtRepr {
    /// Immediate data, handed to the receiver's completion.
    pub data: u32,
}

impl ImmDtRepr {
    /// Reads the field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &ImmDt<T>) -> Self {
        ImmDtRepr { data: v.data() }
    }
    /// Writes the field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut ImmDt<T>) {
        v.set_data(self.data);
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
        let bytes = [0x12, 0x34, 0x56, 0x78];
        let r = ImmDtRepr::parse(&ImmDt::new_checked(&bytes[..]).unwrap());
        assert_eq!(r.data, 0x1234_5678);
        let mut out = [0u8; 4];
        r.emit(&mut ImmDt::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }
}
