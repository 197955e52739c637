//! REJ (ConnectReject, attribute 0x0012): the answer to a REQ (or REP) that fails.
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 (mask 0xC0) Message
//! Rejected (0 REQ, 1 REP, 2 other), 9 (mask 0xFE) Reject Info Length, 10 Reason (u16), 12 ARI (72),
//! 84 Private Data (148).

use super::{bits, clipped, set_bits, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the REJ fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Remote Communication ID: 4 bytes.
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    /// Byte 8: Message Rejected in the top 2 bits.
    pub const MESSAGE_REJECTED: usize = 8;
    /// Message Rejected: bits 7..6 of byte 8.
    pub const MESSAGE_REJECTED_MASK: u8 = 0xC0;
    /// Byte 9: Reject Info Length in the top 7 bits.
    pub const REJECT_INFO_LENGTH: usize = 9;
    /// Reject Info Length: bits 7..1 of byte 9.
    pub const REJECT_INFO_LENGTH_MASK: u8 = 0xFE;
    /// Reason: 2 bytes.
    pub const REASON: Range<usize> = 10..12;
    /// ARI, additional reject information: 72 bytes.
    pub const ARI: Range<usize> = 12..84;
    /// Private Data: 148 bytes.
    pub const PRIVATE_DATA: Range<usize> = 84..232;
}

/// Length of the REJ additional reject information (ARI) field.
pub const REJ_ARI_LEN: usize = 72;
/// Length of the REJ private data field.
pub const REJ_PRIVATE_DATA_LEN: usize = 148;

/// Which message a REJ rejects or an MRA acknowledges (2 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum MessageRef {
    /// 0
    Req,
    /// 1
    Rep,
    /// 2: "other" in a REJ, LAP in an MRA.
    Other,
    /// 3: reserved.
    Reserved,
}

impl MessageRef {
    /// From the 2-bit field (higher bits ignored).
    pub const fn from_bits(v: u8) -> Self {
        match v & 3 {
            0 => MessageRef::Req,
            1 => MessageRef::Rep,
            2 => MessageRef::Other,
            _ => MessageRef::Reserved,
        }
    }
    /// The 2-bit field value.
    pub const fn to_bits(self) -> u8 {
        match self {
            MessageRef::Req => 0,
            MessageRef::Rep => 1,
            MessageRef::Other => 2,
            MessageRef::Reserved => 3,
        }
    }
    /// "REQ", "REP", "other" or "reserved".
    pub const fn name(self) -> &'static str {
        match self {
            MessageRef::Req => "REQ",
            MessageRef::Rep => "REP",
            MessageRef::Other => "other",
            MessageRef::Reserved => "reserved",
        }
    }
}

macro_rules! reasons {
    ($($(#[$doc:meta])* $name:ident = $v:expr, $text:expr;)*) => {
        /// REJ reason (IBTA table 112, Linux `enum ib_cm_rej_reason`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum RejectReason {
            $(
                #[doc = concat!(stringify!($v), ": ", $text, ".")]
                $(#[$doc])*
                $name,
            )*
            /// Any other reason number.
            Other(u16),
        }

        impl RejectReason {
            /// The reason of a Reason value (every value maps to a variant).
            pub const fn from_u16(v: u16) -> Self {
                match v {
                    $($v => RejectReason::$name,)*
                    _ => RejectReason::Other(v),
                }
            }
            /// The Reason value (the inverse of [`from_u16`](Self::from_u16)).
            pub const fn to_u16(self) -> u16 {
                match self {
                    $(RejectReason::$name => $v,)*
                    RejectReason::Other(v) => v,
                }
            }
            /// What the reason means, in words.
            pub const fn name(self) -> &'static str {
                match self {
                    $(RejectReason::$name => $text,)*
                    RejectReason::Other(_) => "unknown reason",
                }
            }
        }
    };
}

reasons! {
    NoQp = 1, "no QP available";
    NoEec = 2, "no EEC available";
    NoResources = 3, "no resources available";
    Timeout = 4, "timeout";
    Unsupported = 5, "unsupported request";
    InvalidCommId = 6, "invalid communication ID";
    InvalidCommInstance = 7, "invalid communication instance";
    InvalidServiceId = 8, "invalid service ID";
    InvalidTransportType = 9, "invalid transport service type";
    StaleConnection = 10, "stale connection";
    RdcNotExist = 11, "RDC does not exist";
    InvalidPrimaryGid = 12, "invalid primary GID";
    InvalidPrimaryLid = 13, "invalid primary LID";
    InvalidPrimarySl = 14, "invalid primary SL";
    InvalidPrimaryTrafficClass = 15, "invalid primary traffic class";
    InvalidPrimaryHopLimit = 16, "invalid primary hop limit";
    InvalidPrimaryPacketRate = 17, "invalid primary packet rate";
    InvalidAltGid = 18, "invalid alternate GID";
    InvalidAltLid = 19, "invalid alternate LID";
    InvalidAltSl = 20, "invalid alternate SL";
    InvalidAltTrafficClass = 21, "invalid alternate traffic class";
    InvalidAltHopLimit = 22, "invalid alternate hop limit";
    InvalidAltPacketRate = 23, "invalid alternate packet rate";
    PortCmRedirect = 24, "port CM redirect";
    PortRedirect = 25, "port redirect";
    InvalidMtu = 26, "invalid path MTU";
    InsufficientRespResources = 27, "insufficient responder resources";
    /// What `rdma_reject` sends.
    ConsumerDefined = 28, "consumer defined";
    InvalidRnrRetry = 29, "invalid RNR retry count";
    DuplicateLocalCommId = 30, "duplicate local communication ID";
    InvalidClassVersion = 31, "invalid class version";
    InvalidFlowLabel = 32, "invalid primary flow label";
    InvalidAltFlowLabel = 33, "invalid alternate flow label";
    VendorOptionNotSupported = 35, "vendor option not supported";
}

header_view!(
    /// A zero-copy view of a REJ. `LEN` is the fixed part (84 bytes, up to the private data);
    /// the whole message is 232.
    Rej,
    Layer::Cm,
    84
);

impl<T: AsRef<[u8]>> Rej<T> {
    /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    /// Remote Communication ID (bytes 4-7): the peer's Local Communication ID.
    pub fn remote_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
    }
    /// Message Rejected (byte 8 bits 7..6): REQ, REP or other.
    pub fn message_rejected(&self) -> MessageRef {
        MessageRef::from_bits(bits(
            self.buffer.as_ref(),
            field::MESSAGE_REJECTED,
            field::MESSAGE_REJECTED_MASK,
        ))
    }
    /// Reject Info Length (byte 9 bits 7..1): how many ARI bytes are meaningful.
    pub fn reject_info_length(&self) -> u8 {
        bits(self.buffer.as_ref(), field::REJECT_INFO_LENGTH, field::REJECT_INFO_LENGTH_MASK)
    }
    /// Reason (bytes 10-11): why the message was rejected.
    pub fn reason(&self) -> RejectReason {
        RejectReason::from_u16(be_u16(self.buffer.as_ref(), field::REASON))
    }
    /// The whole 72-byte ARI field (fewer bytes when the buffer is short).
    pub fn ari(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::ARI)
    }
    /// The private data present (up to 148 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Rej<&'a [u8]> {
    /// The ARI field, borrowed for the buffer's lifetime.
    pub fn ari_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::ARI)
    }
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Rej<T> {
    /// Writes the Local Communication ID.
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    /// Writes the Remote Communication ID.
    pub fn set_remote_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
    }
    /// Writes Message Rejected (byte 8 bits 7..6), keeping the other bits.
    pub fn set_message_rejected(&mut self, v: MessageRef) {
        let b = self.buffer.as_mut();
        set_bits(b, field::MESSAGE_REJECTED, field::MESSAGE_REJECTED_MASK, v.to_bits());
    }
    /// Writes Reject Info Length (low 7 bits of `v`, to byte 9 bits 7..1).
    pub fn set_reject_info_length(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::REJECT_INFO_LENGTH, field::REJECT_INFO_LENGTH_MASK, v);
    }
    /// Writes the Reason (bytes 10-11).
    pub fn set_reason(&mut self, v: RejectReason) {
        set_be_u16(self.buffer.as_mut(), field::REASON, v.to_u16());
    }
    /// Copies up to 72 bytes of `v` into the ARI and zero-fills the rest of the field.
    pub fn set_ari(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::ARI, v);
    }
    /// Copies up to 148 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// A REJ as plain values, borrowing its ARI and private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RejRepr<'a> {
    /// The sender's Local Communication ID.
    pub local_comm_id: u32,
    /// The receiver's Local Communication ID.
    pub remote_comm_id: u32,
    /// Which message is rejected.
    pub message_rejected: MessageRef,
    /// 7 bits: how many ARI bytes are meaningful.
    pub reject_info_length: u8,
    /// Why.
    pub reason: RejectReason,
    /// The whole ARI field as on the wire (72 bytes when parsed from a whole MAD); see
    /// [`RejRepr::additional_reject_info`] for the meaningful part.
    pub ari: &'a [u8],
    /// Up to 148 bytes.
    pub private_data: &'a [u8],
}

impl<'a> RejRepr<'a> {
    /// A REJ without ARI or private data.
    pub const fn new(
        local_comm_id: u32,
        remote_comm_id: u32,
        message_rejected: MessageRef,
        reason: RejectReason,
    ) -> RejRepr<'static> {
        RejRepr {
            local_comm_id,
            remote_comm_id,
            message_rejected,
            reject_info_length: 0,
            reason,
            ari: &[],
            private_data: &[],
        }
    }

    /// Parses a REJ view; the fixed part (84 bytes, ARI included) must be present.
    pub fn parse(v: &Rej<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Rej::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Rej::<&[u8]>::LEN, len));
        }
        Ok(RejRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            message_rejected: v.message_rejected(),
            reject_info_length: v.reject_info_length(),
            reason: v.reason(),
            ari: v.ari_ref(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (ARI and private data zero-padded and cut at their
    /// field lengths).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Rej<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_message_rejected(self.message_rejected);
        v.set_reject_info_length(self.reject_info_length);
        v.set_reason(self.reason);
        v.set_ari(self.ari);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// The first `reject_info_length` bytes of the ARI (as many as are present).
    pub fn additional_reject_info(&self) -> &'a [u8] {
        let n = usize::from(self.reject_info_length).min(self.ari.len());
        self.ari.get(..n).unwrap_or(&[])
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute REJ, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Rej(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_rej() {
        // A REJ of a REQ, reason 28 (consumer defined), 3 bytes of ARI, private data "hi".
        let mut data = [0u8; 232];
        data[..12].copy_from_slice(&[
            0x00, 0x00, 0x00, 0x00, 0x73, 0xef, 0x75, 0x29, 0x00, 0x06, 0x00, 0x1c,
        ]);
        data[12..15].copy_from_slice(&[1, 2, 3]);
        data[84..86].copy_from_slice(b"hi");
        let r = RejRepr::parse(&Rej::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(r.local_comm_id, 0);
        assert_eq!(r.remote_comm_id, 0x73ef_7529);
        assert_eq!(r.message_rejected, MessageRef::Req);
        assert_eq!(r.reject_info_length, 3);
        assert_eq!(r.reason, RejectReason::ConsumerDefined);
        assert_eq!(r.reason.name(), "consumer defined");
        assert_eq!(r.ari.len(), 72);
        assert_eq!(r.additional_reject_info(), &[1, 2, 3]);
        assert_eq!(&r.private_data[..3], b"hi\0");
        assert_eq!(r.private_data.len(), 148);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Rej::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(RejRepr::parse(&Rej::new_unchecked(&data[..83])).is_err());
    }

    #[test]
    fn message_rejected_bits() {
        let mut out = [0u8; 232];
        let r = RejRepr {
            reject_info_length: 0x7F,
            ..RejRepr::new(1, 2, MessageRef::Other, RejectReason::Other(34))
        };
        r.emit(&mut Rej::new_unchecked(&mut out[..]));
        assert_eq!([out[8], out[9], out[10], out[11]], [0x80, 0xFE, 0, 34]);
        let back = RejRepr::parse(&Rej::new_unchecked(&out[..])).unwrap();
        assert_eq!(back.message_rejected, MessageRef::Other);
        assert_eq!(back.reject_info_length, 0x7F);
        assert_eq!(back.additional_reject_info().len(), 72);
        assert_eq!(back.reason, RejectReason::Other(34));
    }

    #[test]
    fn reasons_round_trip_and_have_names() {
        for v in 0..=64u16 {
            let r = RejectReason::from_u16(v);
            assert_eq!(r.to_u16(), v);
            let known = matches!(v, 1..=33 | 35);
            assert_eq!(!matches!(r, RejectReason::Other(_)), known, "{v}");
        }
        assert_eq!(RejectReason::from_u16(1), RejectReason::NoQp);
        assert_eq!(RejectReason::from_u16(26), RejectReason::InvalidMtu);
        assert_eq!(RejectReason::from_u16(31).name(), "invalid class version");
        for v in 0..4 {
            assert_eq!(MessageRef::from_bits(v).to_bits(), v);
        }
    }
}
