//! RDMA-CM (IP addressing over CM), Linux `drivers/infiniband/core/cma.c`:
//!
//! - Service ID = 0x0000000001 (5 bytes), port space (1 byte: TCP 0x06, UDP 0x11, IB 0x3F),
//!   destination port (2 bytes).
//! - With that prefix, REQ and SIDR_REQ private data start with a 36-byte header: version
//!   (0x00), IP version in the high nibble (4 or 6), source port, source IP (16 bytes),
//!   destination IP (16 bytes). An IPv4 address is 12 zero bytes then the 4 address bytes
//!   (not IPv4-mapped).

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::bytes::*;
use crate::error::{Error, Layer, Result};

/// The top 40 bits of every RDMA-CM service ID.
pub const RDMA_CM_SERVICE_ID_PREFIX: u64 = 0x00_0000_0001;
/// Length of the RDMA-CM IP private-data header.
pub const RDMA_CM_IP_HEADER_LEN: usize = 36;

/// Byte ranges of the RDMA-CM IP private-data header.
pub mod field {
    use core::ops::Range;
    /// Version: 1 byte.
    pub const VERSION: usize = 0;
    /// IP version in the high nibble.
    pub const IP_VERSION: usize = 1;
    /// Source port: 2 bytes.
    pub const SRC_PORT: Range<usize> = 2..4;
    /// Source IP: 16 bytes.
    pub const SRC_IP: Range<usize> = 4..20;
    /// Destination IP: 16 bytes.
    pub const DST_IP: Range<usize> = 20..36;
}

/// The RDMA-CM port space (the service ID byte after the prefix; Linux `enum rdma_ucm_port_space`
/// low byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum PortSpace {
    /// 0x02 (RDMA_PS_IPOIB = 0x0002: Linux never puts it under the 0x01 prefix).
    IpoIb,
    /// 0x06 (RDMA_PS_TCP = 0x0106): RC connections.
    Tcp,
    /// 0x11 (RDMA_PS_UDP = 0x0111): UD.
    Udp,
    /// 0x3F (RDMA_PS_IB = 0x013F): any QP type.
    Ib,
    /// Any other byte.
    Other(u8),
}

impl PortSpace {
    /// The port space of the service ID's byte 5 (every value maps to a variant).
    pub const fn from_u8(v: u8) -> Self {
        match v {
            0x02 => PortSpace::IpoIb,
            0x06 => PortSpace::Tcp,
            0x11 => PortSpace::Udp,
            0x3F => PortSpace::Ib,
            _ => PortSpace::Other(v),
        }
    }
    /// The port-space byte (the inverse of [`from_u8`](Self::from_u8)).
    pub const fn to_u8(self) -> u8 {
        match self {
            PortSpace::IpoIb => 0x02,
            PortSpace::Tcp => 0x06,
            PortSpace::Udp => 0x11,
            PortSpace::Ib => 0x3F,
            PortSpace::Other(v) => v,
        }
    }
    /// The name Linux gives it ("TCP", "UDP", "IB", "IPOIB").
    pub const fn name(self) -> &'static str {
        match self {
            PortSpace::IpoIb => "IPOIB",
            PortSpace::Tcp => "TCP",
            PortSpace::Udp => "UDP",
            PortSpace::Ib => "IB",
            PortSpace::Other(_) => "unknown port space",
        }
    }
}

/// The service ID of an RDMA-CM listener: prefix, `port_space`, `port`.
pub const fn service_id(port_space: PortSpace, port: u16) -> u64 {
    (RDMA_CM_SERVICE_ID_PREFIX << 24) | ((port_space.to_u8() as u64) << 16) | port as u64
}

/// An RDMA-CM service ID taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RdmaCmServiceId {
    /// The port space (service ID bits 23..16): which `rdma_cm` socket kind listens.
    pub port_space: PortSpace,
    /// The destination (listening) port.
    pub port: u16,
}

impl RdmaCmServiceId {
    /// `Some` when the top 40 bits are the RDMA-CM prefix 0x0000000001.
    pub const fn from_service_id(sid: u64) -> Option<Self> {
        if sid >> 24 != RDMA_CM_SERVICE_ID_PREFIX {
            return None;
        }
        Some(RdmaCmServiceId {
            port_space: PortSpace::from_u8((sid >> 16) as u8),
            port: sid as u16,
        })
    }

    /// The 64-bit service ID again (the inverse of [`from_service_id`](Self::from_service_id)).
    pub const fn service_id(&self) -> u64 {
        service_id(self.port_space, self.port)
    }
}

header_view!(
    /// A zero-copy view of the RDMA-CM IP private-data header (36 bytes).
    RdmaCmHeader,
    Layer::Cm,
    RDMA_CM_IP_HEADER_LEN
);

impl<T: AsRef<[u8]>> RdmaCmHeader<T> {
    /// Version (byte 0): 0 for Linux RDMA-CM.
    pub fn version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::VERSION)
    }
    /// The high nibble of byte 1 (4 or 6).
    pub fn ip_version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::IP_VERSION) >> 4
    }
    /// Source port (bytes 2-3): the active side's port.
    pub fn src_port(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::SRC_PORT)
    }
    /// The raw 16-byte source address field.
    pub fn src_ip_field(&self) -> [u8; 16] {
        addr_field(self.buffer.as_ref(), field::SRC_IP)
    }
    /// The raw 16-byte destination address field.
    pub fn dst_ip_field(&self) -> [u8; 16] {
        addr_field(self.buffer.as_ref(), field::DST_IP)
    }
    /// The source address read per the IP version (`None` unless it is 4 or 6).
    pub fn src_ip(&self) -> Option<IpAddr> {
        field_to_ip(self.ip_version(), self.src_ip_field())
    }
    /// The destination address read per the IP version (`None` unless it is 4 or 6).
    pub fn dst_ip(&self) -> Option<IpAddr> {
        field_to_ip(self.ip_version(), self.dst_ip_field())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RdmaCmHeader<T> {
    /// Writes the version (byte 0).
    pub fn set_version(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::VERSION, v);
    }
    /// Writes `v` to the high nibble of byte 1 (the low nibble becomes 0).
    pub fn set_ip_version(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::IP_VERSION, v << 4);
    }
    /// Writes the source port (bytes 2-3).
    pub fn set_src_port(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::SRC_PORT, v);
    }
    /// Writes the source address field (bytes 4-19), IPv4 as 12 zero bytes and the address.
    pub fn set_src_ip(&mut self, v: IpAddr) {
        set_bytes(self.buffer.as_mut(), field::SRC_IP, &ip_to_field(v));
    }
    /// Writes the destination address field (bytes 20-35), IPv4 as for the source.
    pub fn set_dst_ip(&mut self, v: IpAddr) {
        set_bytes(self.buffer.as_mut(), field::DST_IP, &ip_to_field(v));
    }
}

fn addr_field(b: &[u8], r: core::ops::Range<usize>) -> [u8; 16] {
    b.get(r).and_then(|s| <[u8; 16]>::try_from(s).ok()).unwrap_or([0; 16])
}

fn field_to_ip(ip_version: u8, f: [u8; 16]) -> Option<IpAddr> {
    match ip_version {
        4 => {
            let [.., a, b, c, d] = f;
            Some(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
        }
        6 => Some(IpAddr::V6(Ipv6Addr::from(f))),
        _ => None,
    }
}

/// An address as RDMA-CM writes it: IPv4 as 12 zero bytes then the address, IPv6 as is.
pub fn ip_to_field(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d]
        }
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The RDMA-CM IP private-data header as plain values. For IP version 4 the addresses are the
/// last 4 bytes of their fields (the 12 bytes before them are written as zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RdmaCmIpHeader {
    /// 0x00 (Linux CMA_VERSION).
    pub version: u8,
    /// 4 or 6.
    pub ip_version: u8,
    /// The active side's port.
    pub src_port: u16,
    /// The active side's address.
    pub src_ip: IpAddr,
    /// The address the active side connects to.
    pub dst_ip: IpAddr,
}

impl RdmaCmIpHeader {
    /// Bytes on the wire: 36.
    pub const LEN: usize = RDMA_CM_IP_HEADER_LEN;

    /// The header the active side of a connection from `src` to `dst_ip` sends (version 0, IP
    /// version from `src`).
    pub const fn new(src: SocketAddr, dst_ip: IpAddr) -> Self {
        RdmaCmIpHeader {
            version: 0,
            ip_version: if src.is_ipv4() { 4 } else { 6 },
            src_port: src.port(),
            src_ip: src.ip(),
            dst_ip,
        }
    }

    /// Parses a view; errors (malformed, `Layer::Cm`) when the IP version is neither 4 nor 6.
    pub fn parse<T: AsRef<[u8]>>(v: &RdmaCmHeader<T>) -> Result<Self> {
        match (v.src_ip(), v.dst_ip()) {
            (Some(src_ip), Some(dst_ip)) => Ok(RdmaCmIpHeader {
                version: v.version(),
                ip_version: v.ip_version(),
                src_port: v.src_port(),
                src_ip,
                dst_ip,
            }),
            _ => Err(Error::malformed(
                Layer::Cm,
                field::IP_VERSION,
                "RDMA-CM header IP version is neither 4 nor 6",
            )),
        }
    }

    /// Parses the start of a private data field (at least 36 bytes).
    pub fn parse_bytes(private_data: &[u8]) -> Result<Self> {
        Self::parse(&RdmaCmHeader::new_checked(private_data)?)
    }

    /// Writes every field to a view (the IP version as given, not from the addresses).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut RdmaCmHeader<T>) {
        v.set_version(self.version);
        v.set_ip_version(self.ip_version);
        v.set_src_port(self.src_port);
        v.set_src_ip(self.src_ip);
        v.set_dst_ip(self.dst_ip);
    }

    /// The 36 header bytes, ready to be the start of a REQ's private data.
    pub fn to_bytes(&self) -> [u8; RDMA_CM_IP_HEADER_LEN] {
        let mut b = [0u8; RDMA_CM_IP_HEADER_LEN];
        self.emit(&mut RdmaCmHeader::new_unchecked(&mut b[..]));
        b
    }

    /// Bytes [`emit`](Self::emit) writes: 36.
    pub const fn buffer_len(&self) -> usize {
        RDMA_CM_IP_HEADER_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The RDMA-CM header of the REQ in read2.pcap (private data bytes 0..36).
    const READ2: [u8; 36] = [
        0x00, 0x40, 0xc7, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xac, 0x11, 0xf2, 0x2f, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xac, 0x11, 0xf2, 0x38,
    ];

    #[test]
    fn parse_emit_ipv4_header() {
        let h = RdmaCmIpHeader::parse_bytes(&READ2).unwrap();
        let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(172, 17, 242, 47)), 0xc7fe);
        let dst = IpAddr::V4(Ipv4Addr::new(172, 17, 242, 56));
        assert_eq!(h, RdmaCmIpHeader::new(src, dst));
        assert_eq!(h.to_bytes(), READ2);
        assert_eq!(h.buffer_len(), 36);
    }

    #[test]
    fn ipv6_header_round_trips() {
        let src = SocketAddr::new(IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1)), 4000);
        let dst = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2));
        let h = RdmaCmIpHeader::new(src, dst);
        let b = h.to_bytes();
        assert_eq!(b[1], 0x60);
        assert_eq!(RdmaCmIpHeader::parse_bytes(&b).unwrap(), h);
    }

    #[test]
    fn bad_ip_version_and_short_header_are_errors() {
        let mut b = READ2;
        b[1] = 0x50;
        assert!(RdmaCmIpHeader::parse_bytes(&b).is_err());
        let e = RdmaCmIpHeader::parse_bytes(&READ2[..35]).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Cm, 36, 35));
    }

    #[test]
    fn service_ids() {
        assert_eq!(service_id(PortSpace::Tcp, 0x3039), 0x0000_0000_0106_3039);
        assert_eq!(service_id(PortSpace::Udp, 1), 0x0000_0000_0111_0001);
        assert_eq!(service_id(PortSpace::Ib, 2), 0x0000_0000_013F_0002);
        let s = RdmaCmServiceId::from_service_id(0x0000_0000_0106_3039).unwrap();
        assert_eq!((s.port_space, s.port), (PortSpace::Tcp, 12345));
        assert_eq!(s.port_space.name(), "TCP");
        assert_eq!(s.service_id(), 0x0000_0000_0106_3039);
        assert!(RdmaCmServiceId::from_service_id(0x0000_0000_0002_3039).is_none());
        assert!(RdmaCmServiceId::from_service_id(0x1000_0000_0106_3039).is_none());
        for v in 0..=255u8 {
            assert_eq!(PortSpace::from_u8(v).to_u8(), v);
        }
    }
}
