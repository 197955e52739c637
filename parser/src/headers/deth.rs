//! Datagram Extended Transport Header (8 bytes): Q_Key and source QP of UD (and RD) packets.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const QKEY: Range<usize> = 0..4;
    pub const RESERVED: usize = 4;
    pub const SRC_QP: Range<usize> = 5..8;
}

/// Length of a DETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::SRC_QP.end;

header_view!(
    /// A zero-copy view of a DETH (IBTA Vol. 1 §9.3).
    Deth,
    Layer::Deth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Deth<T> {
    /// Q_Key (bytes 0-3): the 32-bit queue key the receiving UD QP checks
    /// ([`GSI_QKEY`](crate::GSI_QKEY) on QP1).
    pub fn qkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::QKEY)
    }
    /// Byte 4, reserved: 0 on the wire (non-zero on RD opcodes is `RdLayoutMismatch`).
    pub fn reserved(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESERVED)
    }
    /// SrcQP (bytes 5-7): the 24-bit source queue pair number.
    pub fn src_qp(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::SRC_QP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Deth<T> {
    /// Writes the Q_Key (bytes 0-3).
    pub fn set_qkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::QKEY, v);
    }
    /// Writes the reserved byte 4.
    pub fn set_reserved(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESERVED, v);
    }
    /// Writes SrcQP (bytes 5-7): the low 24 bits of `v`.
    pub fn set_src_qp(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::SRC_QP, v);
    }
}

/// DETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DethRepr {
    /// Q_Key: the queue key.
    pub qkey: u32,
    /// Byte 4, reserved (should be 0).
    pub reserved: u8,
    /// 24 bits.
    pub src_qp: u32,
}

impl DethRepr {
    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Deth<T>) -> Self {
        DethRepr { qkey: v.qkey(), reserved: v.reserved(), src_qp: v.src_qp() }
    }
    /// Writes every field; SrcQP is clipped to 24 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Deth<T>) {
        v.set_qkey(self.qkey);
        v.set_reserved(self.reserved);
        v.set_src_qp(self.src_qp);
    }
    /// The same header with SrcQP clipped to 24 bits (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.src_qp &= 0x00ff_ffff;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::GSI_QKEY;
    // A CM MAD's DETH: GSI Q_Key, source QP 1.
    const BYTES: [u8; 8] = [0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01];
    #[test]
    fn parse_emit_same_bytes() {
        let r = DethRepr::parse(&Deth::new_checked(&BYTES[..]).unwrap());
        assert_eq!(r, DethRepr { qkey: GSI_QKEY, reserved: 0, src_qp: 1 });
        let mut out = [0u8; 8];
        r.emit(&mut Deth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }
}
