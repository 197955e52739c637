//! DREP (DisconnectReply, attribute 0x0016): the answer to a DREQ.
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 Private Data
//! (224).

use super::{clipped, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the DREP fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    pub const PRIVATE_DATA: Range<usize> = 8..232;
}

/// Length of the DREP private data field.
pub const DREP_PRIVATE_DATA_LEN: usize = 224;

header_view!(
    /// A zero-copy view of a DREP. `LEN` is the fixed part (8 bytes); the whole message is 232.
    Drep,
    Layer::Cm,
    8
);

impl<T: AsRef<[u8]>> Drep<T> {
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

impl<'a> Drep<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Drep<T> {
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

/// A DREP as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DrepRepr<'a> {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// Up to 224 bytes.
    pub private_data: &'a [u8],
}

impl<'a> DrepRepr<'a> {
    /// A DREP without private data.
    pub const fn new(local_comm_id: u32, remote_comm_id: u32) -> DrepRepr<'static> {
        DrepRepr { local_comm_id, remote_comm_id, private_data: &[] }
    }

    /// Parses a DREP view; the fixed part (8 bytes) must be present.
    pub fn parse(v: &Drep<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Drep::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Drep::<&[u8]>::LEN, len));
        }
        Ok(DrepRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (private data zero-padded, cut at 224 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Drep<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_private_data(self.private_data);
    }

    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute DREP, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Drep(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_drep() {
        // read2.pcap frame 16.
        let mut data = [0u8; 232];
        data[..8].copy_from_slice(&[0xd6, 0x5b, 0x8b, 0x76, 0x73, 0xef, 0x75, 0x29]);
        data[8] = 0x42;
        let r = DrepRepr::parse(&Drep::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!((r.local_comm_id, r.remote_comm_id), (0xd65b_8b76, 0x73ef_7529));
        assert_eq!(r.private_data.len(), 224);
        assert_eq!(r.private_data[0], 0x42);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Drep::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(DrepRepr::parse(&Drep::new_unchecked(&data[..7])).is_err());
        let new = DrepRepr::new(0xd65b_8b76, 0x73ef_7529);
        let mut out2 = [0u8; 232];
        new.emit(&mut Drep::new_unchecked(&mut out2[..]));
        assert_eq!(out2[..8], data[..8]);
        assert!(out2[8..].iter().all(|&b| b == 0));
    }
}
