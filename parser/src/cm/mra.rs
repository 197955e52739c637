//! MRA (MsgRcptAck, attribute 0x0011): "got your message, the answer will take a while".
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 (mask 0xC0) Message
//! MRAed (0 REQ, 1 REP, 2 LAP), 9 (mask 0xF8) Service Timeout, 10 Private Data (222).

use super::rej::MessageRef;
use super::{bits, clipped, set_bits, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the MRA fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Remote Communication ID: 4 bytes.
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    /// Byte 8: Message MRAed in the top 2 bits.
    pub const MESSAGE_MRAED: usize = 8;
    /// Message MRAed: bits 7..6 of byte 8.
    pub const MESSAGE_MRAED_MASK: u8 = 0xC0;
    /// Byte 9: Service Timeout in the top 5 bits.
    pub const SERVICE_TIMEOUT: usize = 9;
    /// Service Timeout: bits 7..3 of byte 9.
    pub const SERVICE_TIMEOUT_MASK: u8 = 0xF8;
    /// Private Data: 222 bytes.
    pub const PRIVATE_DATA: Range<usize> = 10..232;
}

/// Length of the MRA private data field.
pub const MRA_PRIVATE_DATA_LEN: usize = 222;

header_view!(
    /// A zero-copy view of an MRA. `LEN` is the fixed part (10 bytes); the whole message is 232.
    Mra,
    Layer::Cm,
    10
);

impl<T: AsRef<[u8]>> Mra<T> {
    /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    /// Remote Communication ID (bytes 4-7): the peer's Local Communication ID.
    pub fn remote_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
    }
    /// `MessageRef::Other` means LAP here.
    pub fn message_mraed(&self) -> MessageRef {
        MessageRef::from_bits(bits(
            self.buffer.as_ref(),
            field::MESSAGE_MRAED,
            field::MESSAGE_MRAED_MASK,
        ))
    }
    /// Service Timeout (byte 9 bits 7..3): how long the sender needs before it answers,
    /// 4.096 us * 2^n.
    pub fn service_timeout(&self) -> u8 {
        bits(self.buffer.as_ref(), field::SERVICE_TIMEOUT, field::SERVICE_TIMEOUT_MASK)
    }
    /// The private data present (up to 222 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Mra<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Mra<T> {
    /// Writes the Local Communication ID.
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    /// Writes the Remote Communication ID.
    pub fn set_remote_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
    }
    /// Writes Message MRAed (byte 8 bits 7..6), keeping the other bits.
    pub fn set_message_mraed(&mut self, v: MessageRef) {
        let b = self.buffer.as_mut();
        set_bits(b, field::MESSAGE_MRAED, field::MESSAGE_MRAED_MASK, v.to_bits());
    }
    /// Writes Service Timeout (low 5 bits of `v`, to byte 9 bits 7..3).
    pub fn set_service_timeout(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::SERVICE_TIMEOUT, field::SERVICE_TIMEOUT_MASK, v);
    }
    /// Copies up to 222 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// An MRA as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MraRepr<'a> {
    /// The sender's Local Communication ID.
    pub local_comm_id: u32,
    /// The receiver's Local Communication ID.
    pub remote_comm_id: u32,
    /// `MessageRef::Other` means LAP here.
    pub message_mraed: MessageRef,
    /// 5 bits (4.096 us * 2^n).
    pub service_timeout: u8,
    /// Up to 222 bytes.
    pub private_data: &'a [u8],
}

impl<'a> MraRepr<'a> {
    /// Parses an MRA view; the fixed part (10 bytes) must be present.
    pub fn parse(v: &Mra<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Mra::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Mra::<&[u8]>::LEN, len));
        }
        Ok(MraRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            message_mraed: v.message_mraed(),
            service_timeout: v.service_timeout(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (private data zero-padded, cut at 222 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Mra<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_message_mraed(self.message_mraed);
        v.set_service_timeout(self.service_timeout);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute MRA, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Mra(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_mra() {
        // An MRA of a REP, service timeout 20.
        let mut data = [0u8; 232];
        data[..10].copy_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2, 0x40, 20 << 3]);
        data[10] = 0x99;
        let r = MraRepr::parse(&Mra::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!((r.local_comm_id, r.remote_comm_id), (1, 2));
        assert_eq!(r.message_mraed, MessageRef::Rep);
        assert_eq!(r.service_timeout, 20);
        assert_eq!(r.private_data.len(), 222);
        assert_eq!(r.private_data[0], 0x99);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Mra::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(MraRepr::parse(&Mra::new_unchecked(&data[..9])).is_err());
    }
}
