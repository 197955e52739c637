//! Base Transport Header (12 bytes): opcode, flags, P_Key, DestQP, AckReq, PSN.

use crate::bytes::*;
use crate::error::{Layer, Result};

/// Byte ranges of the BTH fields (docs/wire.md "BTH"): the one place that knows the layout.
mod field {
    use core::ops::Range;
    pub const OPCODE: usize = 0;
    /// SE (7), M (6), PadCnt (5..4), TVer (3..0).
    pub const FLAGS: usize = 1;
    pub const PKEY: Range<usize> = 2..4;
    /// FECN (7), BECN (6), reserved (5..0): the byte the ICRC masks.
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: Range<usize> = 5..8;
    /// AckReq (7), reserved (6..0).
    pub const ACKREQ: usize = 8;
    pub const PSN: Range<usize> = 9..12;
}

/// Length of a BTH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::PSN.end;

header_view!(
    /// A zero-copy view of a BTH (IBTA Vol. 1 §9.2).
    Bth,
    Layer::Bth,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Bth<T> {
    /// OpCode (byte 0): bits 7..5 the transport, 4..0 the operation ([`OPCODES`](crate::OPCODES)).
    pub fn opcode(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::OPCODE)
    }
    /// SE (byte 1 bit 7): solicited event, asks the responder to raise a completion event.
    pub fn se(&self) -> bool {
        u8_at(self.buffer.as_ref(), field::FLAGS) & 0x80 != 0
    }
    /// M (byte 1 bit 6): MigReq, the sender's path migration state (automatic path migration).
    pub fn migreq(&self) -> bool {
        u8_at(self.buffer.as_ref(), field::FLAGS) & 0x40 != 0
    }
    /// PadCnt (byte 1 bits 5..4): pad bytes (0-3) between the payload and the ICRC.
    pub fn padcnt(&self) -> u8 {
        (u8_at(self.buffer.as_ref(), field::FLAGS) >> 4) & 0x3
    }
    /// TVer (byte 1 bits 3..0): transport header version; 0 is the only one defined.
    pub fn tver(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::FLAGS) & 0x0f
    }
    /// P_Key (bytes 2-3): the 16-bit partition key (0xFFFF: default, full membership).
    pub fn pkey(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::PKEY)
    }
    /// FECN (byte 4 bit 7): forward congestion notification (RoCEv2 annex A17); RoCEv2
    /// switches mark the IP ECN field instead, so this is normally clear.
    pub fn fecn(&self) -> bool {
        u8_at(self.buffer.as_ref(), field::FECN_BECN) & 0x80 != 0
    }
    /// BECN (byte 4 bit 6): backward congestion notification, set on CNPs (RoCEv2 annex A17).
    pub fn becn(&self) -> bool {
        u8_at(self.buffer.as_ref(), field::FECN_BECN) & 0x40 != 0
    }
    /// The six reserved bits after FECN/BECN ("resv6").
    pub fn resv6(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::FECN_BECN) & 0x3f
    }
    /// DestQP (bytes 5-7): the 24-bit destination queue pair number.
    pub fn dest_qp(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::DEST_QP)
    }
    /// AckReq (byte 8 bit 7): the requester asks the responder for an ACK of this packet.
    pub fn ackreq(&self) -> bool {
        u8_at(self.buffer.as_ref(), field::ACKREQ) & 0x80 != 0
    }
    /// The seven reserved bits after AckReq ("resv7").
    pub fn resv7(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::ACKREQ) & 0x7f
    }
    /// PSN (bytes 9-11): the 24-bit packet sequence number (wraps at 2^24).
    pub fn psn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::PSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    /// Writes OpCode (byte 0).
    pub fn set_opcode(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::OPCODE, v);
    }
    /// Sets SE, M, PadCnt (low 2 bits) and TVer (low 4 bits) at once.
    pub fn set_flags(&mut self, se: bool, migreq: bool, padcnt: u8, tver: u8) {
        let v = (u8::from(se) << 7) | (u8::from(migreq) << 6) | ((padcnt & 3) << 4) | (tver & 0xf);
        set_u8(self.buffer.as_mut(), field::FLAGS, v);
    }
    /// Writes P_Key (bytes 2-3).
    pub fn set_pkey(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::PKEY, v);
    }
    /// Writes byte 4: FECN, BECN and the six reserved bits (low 6 bits of `resv6`).
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool, resv6: u8) {
        let v = (u8::from(fecn) << 7) | (u8::from(becn) << 6) | (resv6 & 0x3f);
        set_u8(self.buffer.as_mut(), field::FECN_BECN, v);
    }
    /// Writes DestQP (bytes 5-7): the low 24 bits of `v`.
    pub fn set_dest_qp(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::DEST_QP, v);
    }
    /// Writes byte 8: AckReq and the seven reserved bits (low 7 bits of `resv7`).
    pub fn set_ackreq(&mut self, ackreq: bool, resv7: u8) {
        set_u8(self.buffer.as_mut(), field::ACKREQ, (u8::from(ackreq) << 7) | (resv7 & 0x7f));
    }
    /// Writes the PSN (bytes 9-11): the low 24 bits of `v`.
    pub fn set_psn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::PSN, v);
    }
}

/// The BTH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct BthRepr {
    /// OpCode: transport (bits 7..5) and operation (bits 4..0).
    pub opcode: u8,
    /// SE: solicited event.
    pub se: bool,
    /// M: MigReq, the path migration state.
    pub migreq: bool,
    /// 0..=3.
    pub padcnt: u8,
    /// 0..=15; must be 0.
    pub tver: u8,
    /// P_Key: the partition key.
    pub pkey: u16,
    /// FECN: forward congestion notification.
    pub fecn: bool,
    /// BECN: backward congestion notification (set on CNPs).
    pub becn: bool,
    /// Reserved, 0..=0x3f.
    pub resv6: u8,
    /// 24 bits.
    pub dest_qp: u32,
    /// AckReq: an ACK is requested.
    pub ackreq: bool,
    /// Reserved, 0..=0x7f.
    pub resv7: u8,
    /// 24 bits.
    pub psn: u32,
}

impl BthRepr {
    /// Bytes on the wire: 12.
    pub const LEN: usize = HEADER_LEN;

    /// Reads every field of a view (a short view reads zeros: check with `Bth::new_checked`).
    pub fn parse<T: AsRef<[u8]>>(v: &Bth<T>) -> Self {
        BthRepr {
            opcode: v.opcode(),
            se: v.se(),
            migreq: v.migreq(),
            padcnt: v.padcnt(),
            tver: v.tver(),
            pkey: v.pkey(),
            fecn: v.fecn(),
            becn: v.becn(),
            resv6: v.resv6(),
            dest_qp: v.dest_qp(),
            ackreq: v.ackreq(),
            resv7: v.resv7(),
            psn: v.psn(),
        }
    }

    /// Parses from the start of `bytes`.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        Bth::new_checked(bytes).map(|v| Self::parse(&v))
    }

    /// Bytes [`emit`](Self::emit) writes: always [`Self::LEN`], 12.
    pub const fn buffer_len(&self) -> usize {
        Self::LEN
    }

    /// Writes the header; out-of-range values are truncated to their field width.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Bth<T>) {
        v.set_opcode(self.opcode);
        v.set_flags(self.se, self.migreq, self.padcnt, self.tver);
        v.set_pkey(self.pkey);
        v.set_fecn_becn(self.fecn, self.becn, self.resv6);
        v.set_dest_qp(self.dest_qp);
        v.set_ackreq(self.ackreq, self.resv7);
        v.set_psn(self.psn);
    }

    /// The same header with every field clipped to its wire width (what a round trip gives).
    pub fn normalized(mut self) -> Self {
        self.padcnt &= 3;
        self.tver &= 0xf;
        self.resv6 &= 0x3f;
        self.dest_qp &= 0x00ff_ffff;
        self.resv7 &= 0x7f;
        self.psn &= 0x00ff_ffff;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // BTH of docs/wire.md vector V3: an RC ACK with BECN, DestQP 0x11, PSN 5.
    const BYTES: [u8; 12] =
        [0x11, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x05];

    #[test]
    fn deconstruct() {
        let v = Bth::new_checked(&BYTES[..]).unwrap();
        assert_eq!(v.opcode(), 0x11);
        assert!(!v.se() && !v.migreq());
        assert_eq!((v.padcnt(), v.tver(), v.pkey()), (0, 0, 0xffff));
        assert!(!v.fecn() && v.becn());
        assert_eq!((v.dest_qp(), v.ackreq(), v.psn()), (0x11, false, 5));
    }

    #[test]
    fn parse_emit_same_bytes() {
        let repr = BthRepr::parse_bytes(&BYTES).unwrap();
        let mut out = [0u8; 12];
        repr.emit(&mut Bth::new_unchecked(&mut out[..]));
        assert_eq!(out, BYTES);
    }

    #[test]
    fn short_buffer_is_an_error() {
        let e = Bth::new_checked(&BYTES[..11]).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Bth, 12, 11));
    }
}
