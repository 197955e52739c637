//! RTU (ReadyToUse, attribute 0x0014): the active side confirms the connection.
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 Private Data
//! (224).

use super::{clipped, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the RTU fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    pub const PRIVATE_DATA: Range<usize> = 8..232;
}

/// Length of the RTU private data field.
pub const RTU_PRIVATE_DATA_LEN: usize = 224;

header_view!(
    /// A zero-copy view of an RTU. `LEN` is the fixed part (8 bytes); the whole message is 232.
    Rtu,
    Layer::Cm,
    8
);

impl<T: AsRef<[u8]>> Rtu<T> {
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    pub fn remote_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
    }
    /// The private data present (up to 224 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Rtu<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Rtu<T> {
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    pub fn set_remote_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
    }
    /// Copies up to 224 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// An RTU as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RtuRepr<'a> {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// Up to 224 bytes.
    pub private_data: &'a [u8],
}

impl<'a> RtuRepr<'a> {
    /// An RTU without private data.
    pub const fn new(local_comm_id: u32, remote_comm_id: u32) -> RtuRepr<'static> {
        RtuRepr { local_comm_id, remote_comm_id, private_data: &[] }
    }

    /// Parses an RTU view; the fixed part (8 bytes) must be present.
    pub fn parse(v: &Rtu<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Rtu::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Rtu::<&[u8]>::LEN, len));
        }
        Ok(RtuRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (private data zero-padded, cut at 224 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Rtu<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_private_data(self.private_data);
    }

    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute RTU, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Rtu(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_rtu() {
        // read2.pcap frame 6.
        let mut data = [0u8; 232];
        data[..8].copy_from_slice(&[0x73, 0xef, 0x75, 0x29, 0xd6, 0x5b, 0x8b, 0x76]);
        data[8] = 0x42;
        let r = RtuRepr::parse(&Rtu::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!((r.local_comm_id, r.remote_comm_id), (0x73ef_7529, 0xd65b_8b76));
        assert_eq!(r.private_data.len(), 224);
        assert_eq!(r.private_data[0], 0x42);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Rtu::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(RtuRepr::parse(&Rtu::new_unchecked(&data[..7])).is_err());
        let new = RtuRepr::new(0x73ef_7529, 0xd65b_8b76);
        let mut out2 = [0u8; 232];
        new.emit(&mut Rtu::new_unchecked(&mut out2[..]));
        assert_eq!(out2[..8], data[..8]);
        assert!(out2[8..].iter().all(|&b| b == 0));
    }
}
