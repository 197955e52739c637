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
    /// A zero-copy view of a GRH.
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
    pub fn ipver(&self) -> u8 {
        (self.word0() >> 28) as u8
    }
    pub fn tclass(&self) -> u8 {
        ((self.word0() >> 20) & 0xff) as u8
    }
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000f_ffff
    }
    /// Bytes after the GRH: BTH to ICRC.
    pub fn paylen(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::PAYLEN)
    }
    pub fn nxthdr(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::NXTHDR)
    }
    pub fn hoplmt(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::HOPLMT)
    }
    pub fn sgid(&self) -> [u8; 16] {
        gid(self.buffer.as_ref(), field::SGID)
    }
    pub fn dgid(&self) -> [u8; 16] {
        gid(self.buffer.as_ref(), field::DGID)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Grh<T> {
    pub fn set_ver_tc_flow(&mut self, ipver: u8, tclass: u8, flow_label: u32) {
        let w = (u32::from(ipver & 0xf) << 28) | (u32::from(tclass) << 20) | (flow_label & 0xfffff);
        set_be_u32(self.buffer.as_mut(), field::VER_TC_FLOW, w);
    }
    pub fn set_paylen(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::PAYLEN, v);
    }
    pub fn set_nxthdr(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::NXTHDR, v);
    }
    pub fn set_hoplmt(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::HOPLMT, v);
    }
    pub fn set_sgid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), field::SGID, &v);
    }
    pub fn set_dgid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), field::DGID, &v);
    }
}

/// GRH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct GrhRepr {
    pub ipver: u8,
    pub tclass: u8,
    /// 20 bits.
    pub flow_label: u32,
    pub paylen: u16,
    pub nxthdr: u8,
    pub hoplmt: u8,
    pub sgid: [u8; 16],
    pub dgid: [u8; 16],
}

impl GrhRepr {
    pub const LEN: usize = HEADER_LEN;
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
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Grh<T>) {
        v.set_ver_tc_flow(self.ipver, self.tclass, self.flow_label);
        v.set_paylen(self.paylen);
        v.set_nxthdr(self.nxthdr);
        v.set_hoplmt(self.hoplmt);
        v.set_sgid(self.sgid);
        v.set_dgid(self.dgid);
    }
    pub fn sgid_addr(&self) -> core::net::Ipv6Addr {
        core::net::Ipv6Addr::from(self.sgid)
    }
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
