//! The layout RTU and DREP share (0 Local Comm ID, 4 Remote Comm ID, 8 Private Data (224)):
//! one macro writes the view, the field ranges and the repr of each.

/// `ids_and_private_data!(NAME, ARTICLE, View, Repr, PRIVATE_DATA_LEN)`, in the message's
/// module (which imports what the generated code uses).
macro_rules! ids_and_private_data {
    ($name:literal, $article:literal, $view:ident, $repr:ident, $len:ident) => {
        #[doc = concat!("Byte ranges of the ", $name, " fields, from the start of the MAD data.")]
        pub mod field {
            use core::ops::Range;
            /// Local Communication ID: 4 bytes.
            pub const LOCAL_COMM_ID: Range<usize> = 0..4;
            /// Remote Communication ID: 4 bytes.
            pub const REMOTE_COMM_ID: Range<usize> = 4..8;
            /// Private Data: 224 bytes.
            pub const PRIVATE_DATA: Range<usize> = 8..232;
        }

        #[doc = concat!("Length of the ", $name, " private data field.")]
        pub const $len: usize = 224;

        header_view!(
            #[doc = concat!(
                "A zero-copy view of a", $article, " ", $name,
                ". `LEN` is the fixed part (8 bytes); the whole message is 232."
            )]
            $view,
            Layer::Cm,
            8
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
            /// The private data present (up to 224 bytes).
            pub fn private_data(&self) -> &[u8] {
                clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
            }
        }

        impl<'a> $view<&'a [u8]> {
            /// The private data, borrowed for the buffer's lifetime.
            pub fn private_data_ref(&self) -> &'a [u8] {
                clipped(self.buffer, field::PRIVATE_DATA)
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
            /// Copies up to 224 bytes of `v` and zero-fills the rest of the field.
            pub fn set_private_data(&mut self, v: &[u8]) {
                write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
            }
        }

        #[doc = concat!("A", $article, " ", $name, " as plain values, borrowing its private data.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $repr<'a> {
            /// The sender's Local Communication ID.
            pub local_comm_id: u32,
            /// The receiver's Local Communication ID.
            pub remote_comm_id: u32,
            /// Up to 224 bytes.
            pub private_data: &'a [u8],
        }

        impl<'a> $repr<'a> {
            #[doc = concat!("A", $article, " ", $name, " without private data.")]
            pub const fn new(local_comm_id: u32, remote_comm_id: u32) -> $repr<'static> {
                $repr { local_comm_id, remote_comm_id, private_data: &[] }
            }

            #[doc = concat!("Parses a", $article, " ", $name, " view; the fixed part (8 bytes) must be present.")]
            pub fn parse(v: &$view<&'a [u8]>) -> crate::Result<Self> {
                let len = v.buffer.len();
                if len < $view::<&[u8]>::LEN {
                    return Err(crate::Error::truncated(Layer::Cm, 0, $view::<&[u8]>::LEN, len));
                }
                Ok($repr {
                    local_comm_id: v.local_comm_id(),
                    remote_comm_id: v.remote_comm_id(),
                    private_data: v.private_data_ref(),
                })
            }

            /// Writes the whole 232-byte message (private data zero-padded, cut at 224 bytes).
            pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut $view<T>) {
                zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
                v.set_local_comm_id(self.local_comm_id);
                v.set_remote_comm_id(self.remote_comm_id);
                v.set_private_data(self.private_data);
            }

            /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
            pub const fn buffer_len(&self) -> usize {
                MAD_DATA_LEN
            }

            #[doc = concat!("Writes a whole 256-byte CM MAD (method Send, attribute ", $name, ", transaction ID `tid`).")]
            pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
                super::CmMessage::$view(*self).emit_mad(tid, out)
            }
        }
    };
}
pub(super) use ids_and_private_data;
