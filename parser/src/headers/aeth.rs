//! ACK Extended Transport Header (4 bytes): the syndrome (ACK, RNR NAK or NAK with its
//! value) and the MSN.

use core::fmt;

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const SYNDROME: usize = 0;
    pub const MSN: Range<usize> = 1..4;
}

/// Length of a AETH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::MSN.end;

header_view!(
    /// A zero-copy view of an AETH (IBTA Vol. 1 §9.3).
    Aeth,
    Layer::Aeth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Aeth<T> {
    /// Syndrome (byte 0): reserved bit 7, kind in bits 6..5, value in bits 4..0.
    pub fn syndrome(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::SYNDROME)
    }
    /// MSN (bytes 1-3): the 24-bit message sequence number, the responder's count of
    /// completed messages.
    pub fn msn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::MSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Aeth<T> {
    /// Writes the syndrome (byte 0).
    pub fn set_syndrome(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::SYNDROME, v);
    }
    /// Writes the MSN (bytes 1-3): the low 24 bits of `v`.
    pub fn set_msn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::MSN, v);
    }
}

/// Syndrome bits 6..5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum AethKind {
    /// 00: ACK; the value is the credit count.
    Ack,
    /// 01: RNR NAK (receiver not ready); the value is the RNR timer code.
    RnrNak,
    /// 10: reserved.
    Reserved,
    /// 11: NAK; the value is the [`NakCode`].
    Nak,
}

impl AethKind {
    /// The names of the JSON contract: "ack", "rnr_nak", "nak", "reserved".
    pub const fn as_str(self) -> &'static str {
        match self {
            AethKind::Ack => "ack",
            AethKind::RnrNak => "rnr_nak",
            AethKind::Reserved => "reserved",
            AethKind::Nak => "nak",
        }
    }
}

/// NAK codes (syndrome value when the kind is NAK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum NakCode {
    /// 0: PSN sequence error; the responder expected another PSN (the AETH's BTH PSN).
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error (R_Key, bounds or access rights).
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5-31: reserved, with the code.
    Reserved(u8),
}

impl NakCode {
    /// The NAK code of syndrome bits 4..0 (`v` is not masked: values from 5 up are `Reserved`).
    pub const fn from_value(v: u8) -> Self {
        match v {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            n => NakCode::Reserved(n),
        }
    }
    /// The code in words, for messages ("PSN sequence error", ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            NakCode::PsnSequenceError => "PSN sequence error",
            NakCode::InvalidRequest => "invalid request",
            NakCode::RemoteAccessError => "remote access error",
            NakCode::RemoteOperationalError => "remote operational error",
            NakCode::InvalidRdRequest => "invalid RD request",
            NakCode::Reserved(_) => "reserved NAK code",
        }
    }
}

/// RNR NAK timer values in microseconds, indexed by the 5-bit timer code (IBTA table 45).
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// The microseconds an RNR NAK timer code stands for.
pub fn rnr_timer_us(code: u8) -> u32 {
    RNR_TIMER_US.get(usize::from(code & 0x1f)).copied().unwrap_or(0)
}

/// AETH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AethRepr {
    /// Syndrome: reserved bit 7, kind (bits 6..5), value (bits 4..0).
    pub syndrome: u8,
    /// 24 bits.
    pub msn: u32,
}

impl AethRepr {
    /// Credit count 0x1F: "invalid credits", what rxe and most NICs send.
    pub const ACK_NO_CREDITS: u8 = 0x1f;

    /// Reads both fields of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &Aeth<T>) -> Self {
        AethRepr { syndrome: v.syndrome(), msn: v.msn() }
    }
    /// Writes both fields; the MSN is clipped to 24 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Aeth<T>) {
        v.set_syndrome(self.syndrome);
        v.set_msn(self.msn);
    }
    /// The same header with the MSN clipped to 24 bits (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.msn &= 0x00ff_ffff;
        self
    }
    /// An ACK with the given credit count.
    pub const fn ack(credits: u8, msn: u32) -> Self {
        AethRepr { syndrome: credits & 0x1f, msn }
    }
    /// An RNR NAK with the given timer code.
    pub const fn rnr_nak(timer: u8, msn: u32) -> Self {
        AethRepr { syndrome: 0x20 | (timer & 0x1f), msn }
    }
    /// A NAK with the given code (0 = PSN sequence error).
    pub const fn nak(code: u8, msn: u32) -> Self {
        AethRepr { syndrome: 0x60 | (code & 0x1f), msn }
    }
    /// The syndrome's kind (bits 6..5): ACK, RNR NAK, NAK or reserved.
    pub const fn kind(&self) -> AethKind {
        match (self.syndrome >> 5) & 3 {
            0 => AethKind::Ack,
            1 => AethKind::RnrNak,
            2 => AethKind::Reserved,
            _ => AethKind::Nak,
        }
    }
    /// Syndrome bits 4..0: credits, RNR timer code, or NAK code.
    pub const fn value(&self) -> u8 {
        self.syndrome & 0x1f
    }
    /// Syndrome bit 7, reserved.
    pub const fn reserved_bit(&self) -> bool {
        self.syndrome & 0x80 != 0
    }
    /// The NAK code when the kind is NAK, else `None`.
    pub const fn nak_code(&self) -> Option<NakCode> {
        match self.kind() {
            AethKind::Nak => Some(NakCode::from_value(self.value())),
            _ => None,
        }
    }
    /// The syndrome in words: "ACK, credits 31", "RNR NAK, 1.28 ms", "NAK: PSN sequence error".
    pub const fn describe(&self) -> AethDescription {
        AethDescription(*self)
    }
}

/// Display helper returned by [`AethRepr::describe`].
#[derive(Debug, Clone, Copy)]
pub struct AethDescription(AethRepr);

impl fmt::Display for AethDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        match a.kind() {
            AethKind::Ack if a.value() == AethRepr::ACK_NO_CREDITS => {
                f.write_str("ACK, credits invalid (0x1F)")
            }
            AethKind::Ack => write!(f, "ACK, credits {}", a.value()),
            AethKind::RnrNak => {
                let us = rnr_timer_us(a.value());
                write!(f, "RNR NAK, {}.{:02} ms", us / 1000, (us % 1000) / 10)
            }
            AethKind::Nak => match NakCode::from_value(a.value()) {
                NakCode::Reserved(n) => write!(f, "NAK: reserved code {n}"),
                c => write!(f, "NAK: {}", c.as_str()),
            },
            AethKind::Reserved => write!(f, "reserved syndrome 0x{:02x}", a.syndrome),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn parse_emit_same_bytes() {
        let bytes = [0x1f, 0x00, 0x00, 0x07];
        let r = AethRepr::parse(&Aeth::new_checked(&bytes[..]).unwrap());
        assert_eq!((r.kind(), r.value(), r.msn), (AethKind::Ack, 0x1f, 7));
        let mut out = [0u8; 4];
        r.emit(&mut Aeth::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }

    #[test]
    fn syndromes_in_words() {
        assert_eq!(AethRepr::nak(0, 1).describe().to_string(), "NAK: PSN sequence error");
        assert_eq!(AethRepr::nak(2, 1).describe().to_string(), "NAK: remote access error");
        assert_eq!(AethRepr::rnr_nak(14, 1).describe().to_string(), "RNR NAK, 1.28 ms");
        assert_eq!(AethRepr::rnr_nak(0, 1).describe().to_string(), "RNR NAK, 655.36 ms");
        assert_eq!(AethRepr::ack(3, 1).describe().to_string(), "ACK, credits 3");
        assert_eq!(AethRepr { syndrome: 0x40, msn: 0 }.kind(), AethKind::Reserved);
    }
}
