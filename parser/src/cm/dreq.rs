//! DREQ (DisconnectRequest, attribute 0x0015): either side ends the connection.
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 Remote
//! QPN/EECN (24 bits), 12 Private Data (220).

use super::{clipped, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the DREQ fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Remote Communication ID: 4 bytes.
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    /// Remote QPN/EECN: 3 bytes.
    pub const REMOTE_QPN_EECN: Range<usize> = 8..11;
    /// Private Data: 220 bytes.
    pub const PRIVATE_DATA: Range<usize> = 12..232;
}

/// Length of the DREQ private data field.
pub const DREQ_PRIVATE_DATA_LEN: usize = 220;

header_view!(
    /// A zero-copy view of a DREQ. `LEN` is the fixed part (12 bytes); the whole message is 232.
    Dreq,
    Layer::Cm,
    12
);

impl<T: AsRef<[u8]>> Dreq<T> {
    /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    /// Remote Communication ID (bytes 4-7): the peer's Local Communication ID.
    pub fn remote_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
    }
    /// Remote QPN/EECN (bytes 8-10): the 24-bit QP (or EE context) of the side the DREQ is
    /// sent to.
    pub fn remote_qpn_eecn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::REMOTE_QPN_EECN)
    }
    /// The private data present (up to 220 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Dreq<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Dreq<T> {
    /// Writes the Local Communication ID.
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    /// Writes the Remote Communication ID.
    pub fn set_remote_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
    }
    /// Writes the Remote QPN/EECN: the low 24 bits of `v`.
    pub fn set_remote_qpn_eecn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::REMOTE_QPN_EECN, v);
    }
    /// Copies up to 220 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// A DREQ as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DreqRepr<'a> {
    /// The sender's Local Communication ID.
    pub local_comm_id: u32,
    /// The receiver's Local Communication ID.
    pub remote_comm_id: u32,
    /// 24 bits: the QP (or EEC) of the side the DREQ is sent to.
    pub remote_qpn_eecn: u32,
    /// Up to 220 bytes.
    pub private_data: &'a [u8],
}

impl<'a> DreqRepr<'a> {
    /// A DREQ without private data.
    pub const fn new(
        local_comm_id: u32,
        remote_comm_id: u32,
        remote_qpn_eecn: u32,
    ) -> DreqRepr<'static> {
        DreqRepr { local_comm_id, remote_comm_id, remote_qpn_eecn, private_data: &[] }
    }

    /// Parses a DREQ view; the fixed part (12 bytes) must be present.
    pub fn parse(v: &Dreq<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Dreq::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Dreq::<&[u8]>::LEN, len));
        }
        Ok(DreqRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            remote_qpn_eecn: v.remote_qpn_eecn(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (private data zero-padded, cut at 220 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Dreq<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_remote_qpn_eecn(self.remote_qpn_eecn);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute DREQ, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Dreq(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_dreq() {
        // read2.pcap frame 15.
        let mut data = [0u8; 232];
        data[..12].copy_from_slice(&[
            0x73, 0xef, 0x75, 0x29, 0xd6, 0x5b, 0x8b, 0x76, 0x00, 0x01, 0x69, 0x00,
        ]);
        let r = DreqRepr::parse(&Dreq::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(
            DreqRepr { private_data: &[], ..r },
            DreqRepr::new(0x73ef_7529, 0xd65b_8b76, 0x169)
        );
        assert_eq!(r.private_data.len(), 220);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Dreq::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        let mut out2 = [0xEEu8; 232];
        DreqRepr::new(0x73ef_7529, 0xd65b_8b76, 0x169)
            .emit(&mut Dreq::new_unchecked(&mut out2[..]));
        assert_eq!(out2, data);
        assert!(DreqRepr::parse(&Dreq::new_unchecked(&data[..11])).is_err());
    }
}
