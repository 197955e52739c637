//! Link types and the step from a captured frame to what the packet parser reads.
//!
//! The parser starts at an Ethernet header, at a network-layer header when it is told the
//! EtherType, or at the LRH of a native InfiniBand packet. Every supported link type maps to
//! one of those three; anything else is refused with a message naming the link type, since
//! guessing would report garbage as RoCE.
//!
//! ERF (link type 197, Endace's Extensible Record Format, which ibdump writes for InfiniBand)
//! carries a record header of its own in every frame: 16 bytes (timestamp, record type,
//! flags, record and wire lengths), extension headers of 8 bytes each when the type's top bit
//! says so (each one's top bit announcing the next), then for Ethernet records two bytes of
//! offset and pad before the frame. The record type says what follows: Ethernet (2, and the
//! colored variants 11, 16, 20), InfiniBand (21, 25), IPv4 (22), IPv6 (23); other types
//! (padding, metadata, ATM, HDLC) are refused by name.

use std::fmt;

/// A capture's link type (LINKTYPE_* values of the pcap and pcapng formats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkType {
    /// 0: BSD loopback, a 4-byte address family in the capturing host's byte order.
    Null,
    /// 1: Ethernet II.
    Ethernet,
    /// 12: raw IP as some platforms (OpenBSD DLT_RAW) write it.
    Raw12,
    /// 14: raw IP as some platforms (BSD/OS DLT_RAW) write it.
    Raw14,
    /// 101: raw IPv4 or IPv6, told apart by the version nibble.
    Raw,
    /// 108: OpenBSD loopback, a 4-byte address family in network byte order.
    Loop,
    /// 113: Linux cooked capture v1 (16-byte header).
    LinuxSll,
    /// 197: Endace ERF records (ibdump's native InfiniBand; Ethernet and IP records too).
    Erf,
    /// 228: raw IPv4.
    Ipv4,
    /// 229: raw IPv6.
    Ipv6,
    /// 247: native InfiniBand, from the LRH on.
    Infiniband,
    /// 276: Linux cooked capture v2 (20-byte header).
    LinuxSll2,
    /// Any other link type, by number.
    Other(u32),
}

impl LinkType {
    /// The link type a pcap header or IDB names.
    pub fn from_code(code: u32) -> LinkType {
        match code {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            12 => LinkType::Raw12,
            14 => LinkType::Raw14,
            101 => LinkType::Raw,
            108 => LinkType::Loop,
            113 => LinkType::LinuxSll,
            197 => LinkType::Erf,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            247 => LinkType::Infiniband,
            276 => LinkType::LinuxSll2,
            n => LinkType::Other(n),
        }
    }

    /// The LINKTYPE_* number.
    pub fn code(self) -> u32 {
        match self {
            LinkType::Null => 0,
            LinkType::Ethernet => 1,
            LinkType::Raw12 => 12,
            LinkType::Raw14 => 14,
            LinkType::Raw => 101,
            LinkType::Loop => 108,
            LinkType::LinuxSll => 113,
            LinkType::Erf => 197,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::Infiniband => 247,
            LinkType::LinuxSll2 => 276,
            LinkType::Other(n) => n,
        }
    }

    /// Short name for messages, as Wireshark and tcpdump call it.
    pub fn name(self) -> &'static str {
        match self {
            LinkType::Null => "null/loopback",
            LinkType::Ethernet => "Ethernet",
            LinkType::Raw12 | LinkType::Raw14 | LinkType::Raw => "raw IP",
            LinkType::Loop => "OpenBSD loopback",
            LinkType::LinuxSll => "Linux cooked (SLL)",
            LinkType::Erf => "ERF",
            LinkType::Ipv4 => "raw IPv4",
            LinkType::Ipv6 => "raw IPv6",
            LinkType::Infiniband => "InfiniBand",
            LinkType::LinuxSll2 => "Linux cooked v2 (SLL2)",
            LinkType::Other(n) => other_name(n),
        }
    }

    /// Whether `l2_start` can hand frames of this link type to the packet parser.
    pub fn is_supported(self) -> bool {
        !matches!(self, LinkType::Other(_))
    }
}

/// Names of a few link types users are likely to feed by mistake.
fn other_name(code: u32) -> &'static str {
    match code {
        6 => "IEEE 802.5 Token Ring",
        9 => "PPP",
        50 => "PPP over HDLC",
        104 => "Cisco HDLC",
        105 => "IEEE 802.11",
        127 => "IEEE 802.11 radiotap",
        147..=162 => "user-defined",
        192 => "PPI",
        220 => "Linux USB",
        _ => "unknown",
    }
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "link type {} ({})", self.code(), self.name())
    }
}

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// EtherType of RoCEv1 (InfiniBand GRH directly over Ethernet); may follow an SLL header.
pub const ETHERTYPE_ROCEV1: u16 = 0x8915;

/// Where the packet parser should start on a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L2Start<'a> {
    /// The frame starts with an Ethernet header.
    Ethernet(&'a [u8]),
    /// The frame's link header was removed: `data` starts at the network layer named by
    /// `ethertype` (0x0800 IPv4, 0x86DD IPv6, 0x8915 RoCEv1, ...).
    Network {
        /// EtherType of the network-layer header `data` starts with.
        ethertype: u16,
        /// The frame from the network-layer header on.
        data: &'a [u8],
    },
    /// A native InfiniBand packet: `data` starts at its LRH (`roce_parser::parse_infiniband`).
    Infiniband(&'a [u8]),
    /// The frame cannot be handed to the parser; the reason says why.
    Unsupported(L2Error),
}

/// Why a frame could not be handed to the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum L2Error {
    /// The link type itself is not supported.
    LinkType(LinkType),
    /// The frame is shorter than its link-layer header.
    Truncated {
        /// The frame's link type.
        link_type: LinkType,
        /// Bytes of the link-layer header (1 for raw IP: the version byte).
        needed: usize,
        /// Bytes the frame has.
        available: usize,
    },
    /// A null/loopback header names an address family that is neither IPv4 nor IPv6.
    AddressFamily {
        /// The frame's link type (null or loop).
        link_type: LinkType,
        /// The header's address family (a BSD `AF_*` value), as read in either byte order.
        family: u32,
    },
    /// A raw IP frame whose version nibble is neither 4 nor 6.
    IpVersion {
        /// The frame's raw IP link type.
        link_type: LinkType,
        /// The top nibble of the first byte.
        version: u8,
    },
    /// An ERF record of a type that holds no Ethernet, IP or InfiniBand packet (padding,
    /// metadata, ATM, HDLC, ...).
    ErfType {
        /// The record type (its low 7 bits).
        record_type: u8,
    },
}

impl fmt::Display for L2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            L2Error::LinkType(lt) => write!(
                f,
                "{lt} is not supported: roce-inspect reads Ethernet, Linux cooked (SLL, SLL2), raw IP, null/loopback, InfiniBand and ERF captures"
            ),
            L2Error::Truncated { link_type, needed, available } => write!(
                f,
                "frame of {available} bytes is shorter than its {} header ({needed} bytes)",
                link_type.name()
            ),
            L2Error::AddressFamily { link_type, family } => write!(
                f,
                "{} header names address family {family}, neither IPv4 nor IPv6",
                link_type.name()
            ),
            L2Error::IpVersion { link_type, version } => {
                write!(f, "{} frame has IP version {version}, neither 4 nor 6", link_type.name())
            }
            L2Error::ErfType { record_type } => write!(
                f,
                "ERF record of type {record_type} ({}) holds no Ethernet, IP or InfiniBand packet",
                erf_type_name(record_type)
            ),
        }
    }
}

impl std::error::Error for L2Error {}

/// Turns a frame of the given link type into the parser's starting point, stripping the
/// link header where there is one (SLL 16 bytes, SLL2 20, null/loop 4) and naming the
/// EtherType the link header (or, for raw IP, the version nibble) implies.
#[inline]
pub fn l2_start(link_type: LinkType, frame: &[u8]) -> L2Start<'_> {
    match link_type {
        LinkType::Ethernet => L2Start::Ethernet(frame),
        LinkType::LinuxSll => {
            // pkttype(2) hatype(2) halen(2) addr(8) protocol(2)
            with_header::<16>(link_type, frame, |h| u16::from_be_bytes([h[14], h[15]]))
        }
        LinkType::LinuxSll2 => {
            // protocol(2) reserved(2) ifindex(4) hatype(2) pkttype(1) halen(1) addr(8)
            with_header::<20>(link_type, frame, |h| u16::from_be_bytes([h[0], h[1]]))
        }
        LinkType::Raw | LinkType::Raw12 | LinkType::Raw14 => match frame.first().map(|b| b >> 4) {
            Some(4) => L2Start::Network { ethertype: ETHERTYPE_IPV4, data: frame },
            Some(6) => L2Start::Network { ethertype: ETHERTYPE_IPV6, data: frame },
            Some(version) => L2Start::Unsupported(L2Error::IpVersion { link_type, version }),
            None => L2Start::Unsupported(L2Error::Truncated { link_type, needed: 1, available: 0 }),
        },
        LinkType::Ipv4 => L2Start::Network { ethertype: ETHERTYPE_IPV4, data: frame },
        LinkType::Ipv6 => L2Start::Network { ethertype: ETHERTYPE_IPV6, data: frame },
        LinkType::Null | LinkType::Loop => null_start(link_type, frame),
        LinkType::Infiniband => L2Start::Infiniband(frame),
        LinkType::Erf => erf_start(frame),
        LinkType::Other(_) => L2Start::Unsupported(L2Error::LinkType(link_type)),
    }
}

/// The ERF record header's length.
pub const ERF_HEADER_LEN: usize = 16;
/// An ERF extension header's length.
const ERF_EXT_LEN: usize = 8;
/// Extension headers walked before a record is called damaged (real records have one or two).
const ERF_EXT_MAX: usize = 16;

/// The timestamp of an ERF record in nanoseconds since the Unix epoch: a little-endian
/// 32.32 fixed-point count of seconds, the fraction rounded to the nearest nanosecond (as
/// libpcap and Wireshark read it); `None` for a record shorter than its header.
pub(crate) fn erf_ts_ns(record: &[u8]) -> Option<u64> {
    if record.len() < ERF_HEADER_LEN {
        return None;
    }
    let ts = u64::from_le_bytes(*record.first_chunk::<8>()?);
    let frac = (ts & 0xffff_ffff) * 1_000_000_000;
    let ns = (frac + ((frac & 0x8000_0000) << 1)) >> 32;
    (ts >> 32).checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Names of the ERF record types (Endace's list, as Wireshark and libpcap carry it).
fn erf_type_name(t: u8) -> &'static str {
    match t {
        0 => "legacy",
        1 | 10 | 15 | 17 | 19 => "HDLC/PoS",
        2 | 11 | 16 | 20 => "Ethernet",
        3 | 4 | 7 | 9 | 12 | 18 => "ATM/AAL",
        5 | 6 | 8 => "multichannel",
        13 | 14 => "flow counter",
        21 => "InfiniBand",
        22 => "IPv4",
        23 => "IPv6",
        24 => "raw link",
        25 => "InfiniBand link",
        27 => "metadata",
        48 => "padding",
        _ => "unknown",
    }
}

/// An ERF record: its header and extension headers skipped, the packet handed on by the
/// record type. The record's own length (`rlen`) bounds the packet where it is shorter than
/// the frame; the pcap record's length bounds it otherwise.
fn erf_start(frame: &[u8]) -> L2Start<'_> {
    let truncated = |needed: usize| {
        L2Start::Unsupported(L2Error::Truncated {
            link_type: LinkType::Erf,
            needed,
            available: frame.len(),
        })
    };
    let Some((header, _)) = frame.split_first_chunk::<ERF_HEADER_LEN>() else {
        return truncated(ERF_HEADER_LEN);
    };
    let record_type = header[8] & 0x7f;
    let rlen = usize::from(u16::from_be_bytes([header[10], header[11]]));
    let mut at = ERF_HEADER_LEN;
    let mut more = header[8] & 0x80 != 0;
    let mut walked = 0;
    while more {
        let Some(ext) = frame.get(at) else { return truncated(at + ERF_EXT_LEN) };
        if frame.len() < at + ERF_EXT_LEN || walked == ERF_EXT_MAX {
            return truncated(at + ERF_EXT_LEN);
        }
        more = ext & 0x80 != 0;
        at += ERF_EXT_LEN;
        walked += 1;
    }
    // Bytes past `rlen` belong to no record (a writer's slack); a record longer than the
    // frame was cut by the snap length, which the parser reports.
    let end = if rlen >= at { rlen.min(frame.len()) } else { frame.len() };
    let body = frame.get(at..end).unwrap_or(&[]);
    match record_type {
        // Ethernet records: an offset byte and a pad byte before the frame.
        2 | 11 | 16 | 20 => match body.get(2..) {
            Some(eth) => L2Start::Ethernet(eth),
            None => truncated(at + 2),
        },
        21 | 25 => L2Start::Infiniband(body),
        22 => L2Start::Network { ethertype: ETHERTYPE_IPV4, data: body },
        23 => L2Start::Network { ethertype: ETHERTYPE_IPV6, data: body },
        _ => L2Start::Unsupported(L2Error::ErfType { record_type }),
    }
}

/// Splits a fixed-size link header off `frame` and reads the EtherType from it.
#[inline]
fn with_header<const N: usize>(
    link_type: LinkType,
    frame: &[u8],
    ethertype: impl Fn(&[u8; N]) -> u16,
) -> L2Start<'_> {
    match frame.split_first_chunk::<N>() {
        Some((header, data)) => L2Start::Network { ethertype: ethertype(header), data },
        None => L2Start::Unsupported(L2Error::Truncated {
            link_type,
            needed: N,
            available: frame.len(),
        }),
    }
}

/// Null (host byte order) and loop (network byte order) headers: a 4-byte address family.
/// Writers get the byte order wrong often enough that both are accepted: the family values
/// are small, so a value with high bits set is a byte-swapped one.
fn null_start(link_type: LinkType, frame: &[u8]) -> L2Start<'_> {
    let Some((header, data)) = frame.split_first_chunk::<4>() else {
        return L2Start::Unsupported(L2Error::Truncated {
            link_type,
            needed: 4,
            available: frame.len(),
        });
    };
    let mut family = u32::from_le_bytes(*header);
    if family & 0xFFFF_0000 != 0 {
        family = family.swap_bytes();
    }
    match family {
        // AF_INET everywhere.
        2 => L2Start::Network { ethertype: ETHERTYPE_IPV4, data },
        // AF_INET6: NetBSD/OpenBSD 24, FreeBSD 28, macOS 30.
        24 | 28 | 30 => L2Start::Network { ethertype: ETHERTYPE_IPV6, data },
        _ => L2Start::Unsupported(L2Error::AddressFamily { link_type, family }),
    }
}
