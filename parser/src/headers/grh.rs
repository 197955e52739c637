//! Global Route Header (40 bytes, IPv6-shaped): the network header of RoCEv1.

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the fields: the one place that knows the layout.
mod field {
    use core::ops::Range;
    /// IPVer (4), TClass (8), Flow Label (20).
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    pub const PAYLEN: Range<usize> = 4..6;
    pub const NXTHDR: usize = 6;
    pub const HOPLMT: usize = 7;
    pub const SGID: Range<usize> = 8..24;
    pub const DGID: Range<usize> = 24..40;
}

/// GRH next header value announcing a BTH.
pub const NXTHDR_BTH: u8 = 0x1b;

/// Length of a GRH on the wire: where its last field ends.
pub const HEADER_LEN: usize = field::DGID.end;

header_view!(
    /// A zero-copy view of a GRH (IBTA Vol. 1 §8.3; RoCEv1 carries it after EtherType 0x8915).
    Grh,
    Layer::Grh,
    HEADER_LEN
);

fn gid(b: &[u8], r: core::ops::Range<usize>) -> [u8; 16] {
    b.get(r).and_then(|s| <[u8; 16]>::try_from(s).ok()).unwrap_or([0; 16])
}

impl<T: AsRef<[u8]>> Grh<T> {
    fn word0(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::VER_TC_FLOW)
    }
    /// IPVer (bits 31..28 of word 0): 6, as in IPv6.
    pub fn ipver(&self) -> u8 {
        (self.word0() >> 28) as u8
    }
    /// TClass (bits 27..20): the 8-bit traffic class.
    pub fn tclass(&self) -> u8 {
        ((self.word0() >> 20) & 0xff) as u8
    }
    /// Flow Label (bits 19..0): 20 bits.
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000f_ffff
    }
    /// Bytes after the GRH: BTH to ICRC.
    pub fn paylen(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::PAYLEN)
    }
    /// NxtHdr (byte 6): 0x1B ([`NXTHDR_BTH`]) when a BTH follows.
    pub fn nxthdr(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NXTHDR)
    }
    /// HopLmt (byte 7): the hop limit.
    pub fn hoplmt(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::HOPLMT)
    }
    /// SGID (bytes 8-23): the 128-bit source GID.
    pub fn sgid(&self) -> [u8; 16] {
        gid(self.buffer.as_ref(), field::SGID)
    }
    /// DGID (bytes 24-39): the 128-bit destination GID.
    pub fn dgid(&self) -> [u8; 16] {
        gid(self.buffer.as_ref(), field::DGID)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Grh<T> {
    /// Writes word 0: IPVer (low 4 bits), TClass and Flow Label (low 20 bits).
    pub fn set_ver_tc_flow(&mut self, ipver: u8, tclass: u8, flow_label: u32) {
        let w = (u32::from(ipver & 0xf) << 28) | (u32::from(tclass) << 20) | (flow_label & 0xfffff);
        set_be_u32(self.buffer.as_mut(), field::VER_TC_FLOW, w);
    }
    /// Writes PayLen (bytes 4-5).
    pub fn set_paylen(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::PAYLEN, v);
    }
    /// Writes NxtHdr (byte 6).
    pub fn set_nxthdr(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::NXTHDR, v);
    }
    /// Writes HopLmt (byte 7).
    pub fn set_hoplmt(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::HOPLMT, v);
    }
    /// Writes the SGID (bytes 8-23).
    pub fn set_sgid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), field::SGID, &v);
    }
    /// Writes the DGID (bytes 24-39).
    pub fn set_dgid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), field::DGID, &v);
    }
}

/// GRH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GrhRepr {
    /// IPVer: 4 bits, 6 on the wire.
    pub ipver: u8,
    /// TClass: the traffic class.
    pub tclass: u8,
    /// 20 bits.
    pub flow_label: u32,
    /// PayLen: bytes after the GRH, BTH to ICRC inclusive.
    pub paylen: u16,
    /// NxtHdr: 0x1B ([`NXTHDR_BTH`]) for a BTH.
    pub nxthdr: u8,
    /// HopLmt: the hop limit.
    pub hoplmt: u8,
    /// SGID: the source GID, as on the wire.
    pub sgid: [u8; 16],
    /// DGID: the destination GID, as on the wire.
    pub dgid: [u8; 16],
}

impl GrhRepr {
    /// Bytes on the wire: 40.
    pub const LEN: usize = HEADER_LEN;
    /// Reads every field of a view (a short view reads zeros: check with `Grh::new_checked`).
    pub fn parse<T: AsRef<[u8]>>(v: &Grh<T>) -> Self {
        GrhRepr {
            ipver: v.ipver(),
            tclass: v.tclass(),
            flow_label: v.flow_label(),
            paylen: v.paylen(),
            nxthdr: v.nxthdr(),
            hoplmt: v.hoplmt(),
            sgid: v.sgid(),
            dgid: v.dgid(),
        }
    }
    /// Writes the header; IPVer and Flow Label are clipped to 4 and 20 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Grh<T>) {
        v.set_ver_tc_flow(self.ipver, self.tclass, self.flow_label);
        v.set_paylen(self.paylen);
        v.set_nxthdr(self.nxthdr);
        v.set_hoplmt(self.hoplmt);
        v.set_sgid(self.sgid);
        v.set_dgid(self.dgid);
    }
    /// The SGID as an IPv6 address (RoCE GIDs are IPv6 or IPv4-mapped addresses).
    pub fn sgid_addr(&self) -> core::net::Ipv6Addr {
        core::net::Ipv6Addr::from(self.sgid)
    }
    /// The DGID as an IPv6 address.
    pub fn dgid_addr(&self) -> core::net::Ipv6Addr {
        core::net::Ipv6Addr::from(self.dgid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_emit_same_bytes() {
        let mut bytes = [0u8; 40];
        bytes[..8].copy_from_slice(&[0x60, 0x20, 0x00, 0x01, 0x00, 0x1c, 0x1b, 0x01]);
        bytes[8] = 0xfe;
        bytes[9] = 0x80;
        bytes[23] = 1;
        bytes[24] = 0xfe;
        bytes[25] = 0x80;
        bytes[39] = 2;
        let r = GrhRepr::parse(&Grh::new_checked(&bytes[..]).unwrap());
        assert_eq!(
            (r.ipver, r.tclass, r.flow_label, r.paylen, r.nxthdr, r.hoplmt),
            (6, 2, 1, 28, 0x1b, 1)
        );
        assert_eq!(r.sgid_addr().segments()[7], 1);
        let mut out = [0u8; 40];
        r.emit(&mut Grh::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
    }
}
