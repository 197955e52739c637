//! Local Route Header (8 bytes): the link header of native InfiniBand, where RoCE has
//! Ethernet, IP and UDP (IBTA Vol. 1 §7.7). Its Link Next Header field says what follows:
//! a GRH (LNH 3, "IBA global"), the BTH (LNH 2, "IBA local"), or a packet of another
//! transport (raw IPv6 or raw), which the parser does not decode.
//!
//! The LRH is rewritten hop by hop (the VL by every switch, both LIDs by routers), so the
//! ICRC covers it with the VL set to ones, or not at all behind a GRH; the VCRC, which
//! closes the packet after the ICRC, covers it as sent on the last link (`crate::icrc`).

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    /// VL (4 bits), LVer (4 bits).
    pub const VL_LVER: usize = 0;
    /// SL (4 bits), reserved (2 bits), LNH (2 bits).
    pub const SL_LNH: usize = 1;
    pub const DLID: Range<usize> = 2..4;
    /// Reserved (5 bits), PktLen (11 bits).
    pub const PKTLEN: Range<usize> = 4..6;
    pub const SLID: Range<usize> = 6..8;
}

/// Length of an LRH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::SLID.end;

/// Length of the VCRC, after the ICRC.
pub const VCRC_LEN: usize = 2;

/// Link Next Header: what follows the LRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Lnh {
    /// 0: a raw packet of a non-IBA transport.
    Raw,
    /// 1: a raw IPv6 packet (non-IBA transport).
    Ipv6,
    /// 2: IBA local: the BTH follows.
    Local,
    /// 3: IBA global: a GRH, then the BTH.
    Global,
}

impl Lnh {
    /// The field's 2 bits.
    pub const fn from_bits(bits: u8) -> Lnh {
        match bits & 3 {
            0 => Lnh::Raw,
            1 => Lnh::Ipv6,
            2 => Lnh::Local,
            _ => Lnh::Global,
        }
    }

    /// The field's value, 0 to 3.
    pub const fn bits(self) -> u8 {
        match self {
            Lnh::Raw => 0,
            Lnh::Ipv6 => 1,
            Lnh::Local => 2,
            Lnh::Global => 3,
        }
    }

    /// "raw", "ipv6", "iba_local", "iba_global".
    pub const fn as_str(self) -> &'static str {
        match self {
            Lnh::Raw => "raw",
            Lnh::Ipv6 => "ipv6",
            Lnh::Local => "iba_local",
            Lnh::Global => "iba_global",
        }
    }
}

header_view!(
    /// A zero-copy view of an LRH (IBTA Vol. 1 §7.7): the first 8 bytes of a native
    /// InfiniBand packet.
    Lrh,
    Layer::Lrh,
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Lrh<T> {
    /// VL (bits 7..4 of byte 0): the virtual lane; 15 is VL15, subnet management's.
    pub fn vl(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::VL_LVER) >> 4
    }
    /// LVer (bits 3..0 of byte 0): the link version, 0.
    pub fn lver(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::VL_LVER) & 0xf
    }
    /// SL (bits 7..4 of byte 1): the service level.
    pub fn sl(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::SL_LNH) >> 4
    }
    /// The two reserved bits of byte 1 (bits 3..2).
    pub fn resv2(&self) -> u8 {
        (u8_at(self.buffer.as_ref(), field::SL_LNH) >> 2) & 3
    }
    /// LNH (bits 1..0 of byte 1): what follows.
    pub fn lnh(&self) -> Lnh {
        Lnh::from_bits(u8_at(self.buffer.as_ref(), field::SL_LNH))
    }
    /// DLID (bytes 2-3): the destination local identifier.
    pub fn dlid(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::DLID)
    }
    /// The five reserved bits before PktLen.
    pub fn resv5(&self) -> u8 {
        (be_u16(self.buffer.as_ref(), field::PKTLEN) >> 11) as u8
    }
    /// PktLen (11 bits): the packet's length in 4-byte words, from the LRH through the ICRC
    /// (the VCRC not counted).
    pub fn pkt_len(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::PKTLEN) & 0x07ff
    }
    /// SLID (bytes 6-7): the source local identifier.
    pub fn slid(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::SLID)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Lrh<T> {
    /// Writes byte 0: VL and LVer (low 4 bits of each).
    pub fn set_vl_lver(&mut self, vl: u8, lver: u8) {
        set_u8(self.buffer.as_mut(), field::VL_LVER, (vl << 4) | (lver & 0xf));
    }
    /// Writes byte 1: SL, the reserved bits and LNH (each clipped to its width).
    pub fn set_sl_lnh(&mut self, sl: u8, resv2: u8, lnh: Lnh) {
        set_u8(self.buffer.as_mut(), field::SL_LNH, (sl << 4) | ((resv2 & 3) << 2) | lnh.bits());
    }
    /// Writes the DLID.
    pub fn set_dlid(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::DLID, v);
    }
    /// Writes the reserved bits and PktLen (clipped to 5 and 11 bits).
    pub fn set_pkt_len(&mut self, resv5: u8, pkt_len: u16) {
        let w = (u16::from(resv5 & 0x1f) << 11) | (pkt_len & 0x07ff);
        set_be_u16(self.buffer.as_mut(), field::PKTLEN, w);
    }
    /// Writes the SLID.
    pub fn set_slid(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::SLID, v);
    }
}

/// LRH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LrhRepr {
    /// VL: the virtual lane (4 bits).
    pub vl: u8,
    /// LVer: the link version (4 bits), 0.
    pub lver: u8,
    /// SL: the service level (4 bits).
    pub sl: u8,
    /// The reserved bits between SL and LNH (2 bits).
    pub resv2: u8,
    /// LNH: what follows.
    pub lnh: Lnh,
    /// DLID: the destination LID.
    pub dlid: u16,
    /// The reserved bits before PktLen (5 bits).
    pub resv5: u8,
    /// PktLen: LRH through ICRC, in 4-byte words (11 bits).
    pub pkt_len: u16,
    /// SLID: the source LID.
    pub slid: u16,
}

impl Default for LrhRepr {
    /// VL 0, SL 0, LNH IBA local, both LIDs 0 (a builder sets PktLen).
    fn default() -> Self {
        LrhRepr {
            vl: 0,
            lver: 0,
            sl: 0,
            resv2: 0,
            lnh: Lnh::Local,
            dlid: 0,
            resv5: 0,
            pkt_len: 0,
            slid: 0,
        }
    }
}

impl LrhRepr {
    /// Bytes on the wire: 8.
    pub const LEN: usize = HEADER_LEN;
    /// Reads every field of a view (a short view reads zeros: check with `Lrh::new_checked`).
    pub fn parse<T: AsRef<[u8]>>(v: &Lrh<T>) -> Self {
        LrhRepr {
            vl: v.vl(),
            lver: v.lver(),
            sl: v.sl(),
            resv2: v.resv2(),
            lnh: v.lnh(),
            dlid: v.dlid(),
            resv5: v.resv5(),
            pkt_len: v.pkt_len(),
            slid: v.slid(),
        }
    }
    /// Writes the header; each field is clipped to its width.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Lrh<T>) {
        v.set_vl_lver(self.vl, self.lver);
        v.set_sl_lnh(self.sl, self.resv2, self.lnh);
        v.set_dlid(self.dlid);
        v.set_pkt_len(self.resv5, self.pkt_len);
        v.set_slid(self.slid);
    }
    /// The packet's length in bytes that PktLen announces: LRH through ICRC.
    pub const fn packet_len(&self) -> usize {
        self.pkt_len as usize * 4
    }
    /// Whether a reserved field or LVer is not zero.
    pub const fn reserved_set(&self) -> bool {
        self.resv2 != 0 || self.resv5 != 0 || self.lver != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_at_their_bits() {
        // VL 15, LVer 0, SL 3, LNH 2, DLID 0x0001, PktLen 0x2a1 words, SLID 0xc002.
        let b = [0xf0, 0x32, 0x00, 0x01, 0x02, 0xa1, 0xc0, 0x02];
        let r = LrhRepr::parse(&Lrh::new_checked(&b[..]).unwrap());
        assert_eq!((r.vl, r.lver, r.sl, r.lnh), (15, 0, 3, Lnh::Local));
        assert_eq!((r.dlid, r.pkt_len, r.slid, r.resv5, r.resv2), (1, 0x2a1, 0xc002, 0, 0));
        assert_eq!(r.packet_len(), 0x2a1 * 4);
        let mut out = [0u8; 8];
        r.emit(&mut Lrh::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Lrh::new_checked(&b[..7]).is_err());
        let all = [0xff; 8];
        let r = LrhRepr::parse(&Lrh::new_unchecked(&all[..]));
        assert_eq!((r.lnh, r.resv2, r.resv5, r.pkt_len), (Lnh::Global, 3, 0x1f, 0x7ff));
        assert!(r.reserved_set());
    }
}
