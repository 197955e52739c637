//! LAP (LoadAlternatePath, attribute 0x0019) and APR (AlternatePathResponse, attribute
//! 0x001A): recognised, with their communication IDs decoded (0 Local Comm ID, 4 Remote Comm
//! ID); the rest of the message (the alternate path, the APR status) is not decoded.

use super::zero_fill;
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the decoded LAP/APR fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Remote Communication ID: 4 bytes.
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
}

/// How many bytes of a LAP or APR this crate decodes.
pub const COMM_IDS_LEN: usize = 8;

macro_rules! comm_ids_message {
    ($(#[$vm:meta])* $view:ident, $(#[$rm:meta])* $repr:ident, $variant:ident) => {
        header_view!(
            $(#[$vm])*
            $view,
            Layer::Cm,
            COMM_IDS_LEN
        );

        impl<T: AsRef<[u8]>> $view<T> {
            /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
            pub fn local_comm_id(&self) -> u32 {
                be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
            }
            /// Remote Communication ID (bytes 4-7): the peer's Local Communication ID.
            pub fn remote_comm_id(&self) -> u32 {
                be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            /// Writes the Local Communication ID.
            pub fn set_local_comm_id(&mut self, v: u32) {
                set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
            }
            /// Writes the Remote Communication ID.
            pub fn set_remote_comm_id(&mut self, v: u32) {
                set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
            }
        }

        $(#[$rm])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $repr {
            /// The sender's Local Communication ID.
            pub local_comm_id: u32,
            /// The receiver's Local Communication ID.
            pub remote_comm_id: u32,
        }

        impl $repr {
            /// Parses the communication IDs; the first 8 bytes must be present.
            pub fn parse<T: AsRef<[u8]>>(v: &$view<T>) -> crate::Result<Self> {
                let len = v.buffer.as_ref().len();
                if len < COMM_IDS_LEN {
                    return Err(crate::Error::truncated(Layer::Cm, 0, COMM_IDS_LEN, len));
                }
                Ok($repr {
                    local_comm_id: v.local_comm_id(),
                    remote_comm_id: v.remote_comm_id(),
                })
            }

            /// Writes the whole 232-byte message: the communication IDs, zeros after them.
            pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut $view<T>) {
                zero_fill(v.buffer.as_mut(), 0..super::MAD_DATA_LEN);
                v.set_local_comm_id(self.local_comm_id);
                v.set_remote_comm_id(self.remote_comm_id);
            }

            /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
            pub const fn buffer_len(&self) -> usize {
                super::MAD_DATA_LEN
            }

            /// Writes a whole 256-byte CM MAD (method Send, transaction ID `tid`).
            pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
                super::CmMessage::$variant(*self).emit_mad(tid, out)
            }
        }
    };
}

comm_ids_message!(
    /// A zero-copy view of a LAP (its communication IDs).
    Lap,
    /// A LAP's communication IDs.
    LapRepr,
    Lap
);

comm_ids_message!(
    /// A zero-copy view of an APR (its communication IDs).
    Apr,
    /// An APR's communication IDs.
    AprRepr,
    Apr
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_ids_parse_and_emit() {
        let data = [0, 0, 0, 5, 0, 0, 0, 6, 0xAA];
        let l = LapRepr::parse(&Lap::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(l, LapRepr { local_comm_id: 5, remote_comm_id: 6 });
        let a = AprRepr::parse(&Apr::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(a, AprRepr { local_comm_id: 5, remote_comm_id: 6 });
        let mut out = [0xEEu8; 232];
        l.emit(&mut Lap::new_unchecked(&mut out[..]));
        assert_eq!(out[..8], data[..8]);
        assert!(out[8..].iter().all(|&b| b == 0));
        assert!(LapRepr::parse(&Lap::new_unchecked(&data[..7])).is_err());
    }
}
