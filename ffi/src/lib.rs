//! roce-parser-ffi: roce-parser behind a C ABI.
//!
//! The parser crate is `forbid(unsafe_code)`; the only unsafe code of the project is here, at
//! the boundary, and it does three things only: turn a caller's pointer and length into a
//! slice, read a caller's options struct, and write the caller's output struct. Each of these
//! checks for null (answered by [`ROCE_ERR_NULL`]), for misalignment and impossible lengths
//! (answered by [`ROCE_ERR_INVALID_ARG`]) before touching memory. Everything else is safe
//! code converting [`roce_parser::Packet`] into the plain C structs below.
//!
//! No function allocates or keeps state between calls, and the only global state read is the
//! standard library's cache of CPU features (for the SIMD CRC): every call can run on any
//! thread, concurrently with any other call on other output structs. Nothing here
//! panics (the crate denies `unwrap`, `expect`, `panic!` and slice indexing, as the parser
//! does); should a panic ever happen, `extern "C"` functions abort the process rather than
//! unwind into C.
//!
//! The header `include/roce_parser.h` is generated from this file by cbindgen (see
//! `tests/header.rs`); the doc comments below are the header's documentation.
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, CStr};
use core::net::IpAddr;

use roce_parser::{
    opcode_name_with_nul, Config, Encap, EncapKind, Error, ErrorKind, EthernetInfo, GeneveRepr,
    IcrcStatus, IpInfo, Layer, Packet, Problem, Problems, Roce, SegmentScratch, Tunnel, UdpInfo,
    VlanTag, ROCEV2_UDP_PORT,
};

// ---------------------------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------------------------

/// The status codes the parse functions return (as `int`). `ROCE_OK` is 0, everything else
/// is negative; `ROCE_ERR_NOT_ROCE` is not an error in the frame and can be told apart from
/// the errors. `roce_status_str()` describes each.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roce_status {
    /// A RoCE packet was found: `out->roce_version` is 1 or 2 and the BTH is decoded. The
    /// packet may still be damaged: look at `out->problems` and `out->stop`.
    ROCE_OK = 0,
    /// A required pointer (the input or `out`) is NULL. `out`, when not NULL, is zeroed.
    ROCE_ERR_NULL = -1,
    /// The input ends inside a header before the BTH could be decoded (an empty input, a
    /// short Ethernet/IP/UDP header, a BTH cut short). `out` holds every layer that was
    /// complete and `out->stop` says where parsing stopped.
    ROCE_ERR_TRUNCATED = -2,
    /// A header below the BTH holds values it cannot be parsed with (IP version neither 4 nor
    /// 6, IPv4 total length shorter than its header, UDP length below 8, ...). `out` holds
    /// every layer decoded before it and `out->stop` says where.
    ROCE_ERR_MALFORMED = -3,
    /// Not an error in the frame: it parsed cleanly but carries no RoCE (ARP, TCP, UDP to
    /// another port, an IP fragment). `out` holds the layers decoded (Ethernet, IP, UDP).
    ROCE_ERR_NOT_ROCE = -4,
    /// An argument is unusable although not NULL: a pointer not aligned for its type, or a
    /// length above `PTRDIFF_MAX`. `out`, when usable, is zeroed.
    ROCE_ERR_INVALID_ARG = -5,
}

impl roce_status {
    /// The status as the C functions return it.
    pub const fn code(self) -> c_int {
        self as c_int
    }
}

// The codes as `int`, for this file (not `pub`: cbindgen exports the enum, not these).
pub(crate) const ROCE_OK: c_int = roce_status::ROCE_OK.code();
pub(crate) const ROCE_ERR_NULL: c_int = roce_status::ROCE_ERR_NULL.code();
pub(crate) const ROCE_ERR_TRUNCATED: c_int = roce_status::ROCE_ERR_TRUNCATED.code();
pub(crate) const ROCE_ERR_MALFORMED: c_int = roce_status::ROCE_ERR_MALFORMED.code();
pub(crate) const ROCE_ERR_NOT_ROCE: c_int = roce_status::ROCE_ERR_NOT_ROCE.code();
pub(crate) const ROCE_ERR_INVALID_ARG: c_int = roce_status::ROCE_ERR_INVALID_ARG.code();

// ---------------------------------------------------------------------------------------------
// ICRC status, AETH kinds, versions
// ---------------------------------------------------------------------------------------------

/// `icrc_status`: not verified (verification disabled by `skip_icrc`, no RoCE packet, or the
/// UDP-payload entry point, which lacks the IP and UDP headers the ICRC covers).
pub const ROCE_ICRC_NOT_CHECKED: u8 = 0;
/// `icrc_status`: the stored ICRC equals the recomputed one.
pub const ROCE_ICRC_OK: u8 = 1;
/// `icrc_status`: the stored ICRC differs; `icrc_computed` is what it should be.
pub const ROCE_ICRC_BAD: u8 = 2;
/// `icrc_status`: the frame is shorter than its lengths say (snap length, damage), so there is
/// nothing to verify.
pub const ROCE_ICRC_UNVERIFIABLE: u8 = 3;

/// `aeth.kind`: ACK (syndrome bits 6..5 = 00); `aeth.value` is the credit count.
pub const ROCE_AETH_ACK: u8 = 0;
/// `aeth.kind`: RNR NAK (01); `aeth.value` is the RNR timer code.
pub const ROCE_AETH_RNR_NAK: u8 = 1;
/// `aeth.kind`: reserved (10).
pub const ROCE_AETH_RESERVED: u8 = 2;
/// `aeth.kind`: NAK (11); `aeth.value` is the NAK code (0 PSN sequence error, 1 invalid
/// request, 2 remote access error, 3 remote operational error, 4 invalid RD request).
pub const ROCE_AETH_NAK: u8 = 3;

/// The UDP destination port of RoCEv2, used when `roce_options.udp_port` is 0.
pub const ROCE_V2_UDP_PORT: u16 = 4791;

/// The layout version of the structs in this header. Compare with `roce_parser_abi_version()`
/// when loading the shared library: a mismatch means the header and the library disagree.
/// 2: `roce_packet` ends with `tunnel_count` and `tunnels` (version 1 had neither).
/// 3: `roce_packet` ends with `lrh` (native InfiniBand, `roce_parse_infiniband`).
pub const ROCE_PARSER_ABI_VERSION: u32 = 3;

/// `roce_packet.roce_version` of a native InfiniBand packet (`roce_parse_infiniband`): not
/// RoCE, the same transport after an LRH (and a GRH when routed).
pub const ROCE_VERSION_INFINIBAND: u8 = 3;

/// The length of `roce_packet.tunnels`: tunnels taken off one frame (a deeper one stops the
/// parse, `ROCE_ERR_MALFORMED` at its layer).
pub const ROCE_PARSER_MAX_TUNNELS: usize = 2;

// ---------------------------------------------------------------------------------------------
// Problems (bits of roce_packet.problems; the same bits as roce_parser::Problem)
// ---------------------------------------------------------------------------------------------

/// BTH TVer is not 0.
pub const ROCE_PROBLEM_TVER_NONZERO: u32 = 1 << 0;
/// PadCnt does not bring payload + pad to a multiple of 4 bytes.
pub const ROCE_PROBLEM_PADCNT_INCONSISTENT: u32 = 1 << 1;
/// Pad bytes are not zero.
pub const ROCE_PROBLEM_PAD_NONZERO: u32 = 1 << 2;
/// The opcode carries no payload but the packet has some.
pub const ROCE_PROBLEM_UNEXPECTED_PAYLOAD: u32 = 1 << 3;
/// ATOMIC_WRITE with a payload other than 8 bytes.
pub const ROCE_PROBLEM_ATOMIC_WRITE_LENGTH: u32 = 1 << 4;
/// UDP length disagrees with the IP payload length.
pub const ROCE_PROBLEM_UDP_LENGTH_MISMATCH: u32 = 1 << 5;
/// IP length disagrees with the frame.
pub const ROCE_PROBLEM_IP_LENGTH_MISMATCH: u32 = 1 << 6;
/// The frame ends before its lengths say it does (snap length or damage).
pub const ROCE_PROBLEM_TRUNCATED: u32 = 1 << 7;
/// Reserved bits are set (BTH, AETH, RDETH, DETH, XRCETH, FETH, CNP).
pub const ROCE_PROBLEM_RESERVED_BITS: u32 = 1 << 8;
/// Opcode reserved by the IBTA for its transport (decoded to the BTH only).
pub const ROCE_PROBLEM_RESERVED_OPCODE: u32 = 1 << 9;
/// Opcode in the manufacturer-specific range 0xC0-0xFF (decoded to the BTH only).
pub const ROCE_PROBLEM_VENDOR_OPCODE: u32 = 1 << 10;
/// The packet is too short for the headers its opcode implies.
pub const ROCE_PROBLEM_SHORT_FOR_OPCODE: u32 = 1 << 11;
/// A CNP whose body is not 16 bytes.
pub const ROCE_PROBLEM_CNP_LENGTH: u32 = 1 << 12;
/// A CNP without BECN.
pub const ROCE_PROBLEM_CNP_BECN_CLEAR: u32 = 1 << 13;
/// A CNP with a PSN other than 0.
pub const ROCE_PROBLEM_CNP_PSN_NONZERO: u32 = 1 << 14;
/// RD-range opcode whose headers do not fit the RD layout (Mellanox DC reuses the range).
pub const ROCE_PROBLEM_RD_LAYOUT_MISMATCH: u32 = 1 << 15;
/// A UD packet to QP1 without the GSI Q_Key 0x80010000.
pub const ROCE_PROBLEM_QP1_QKEY: u32 = 1 << 16;
/// IPv4 header checksum wrong.
pub const ROCE_PROBLEM_IPV4_CHECKSUM: u32 = 1 << 17;
/// IP fragment: RoCE must not be fragmented.
pub const ROCE_PROBLEM_IP_FRAGMENT: u32 = 1 << 18;
/// The MAD of a UD SEND to QP1 is shorter than 256 bytes (the parser decodes the MAD of every
/// UD SEND to QP1; its problems are the packet's).
pub const ROCE_PROBLEM_MAD_TRUNCATED: u32 = 1 << 19;
/// The MAD's base or class version is not one we know (UD SEND to QP1).
pub const ROCE_PROBLEM_MAD_UNKNOWN_VERSION: u32 = 1 << 20;
/// A CM MAD with an attribute ID that is not a CM message (UD SEND to QP1).
pub const ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE: u32 = 1 << 21;
/// The ICRC does not match the recomputed value.
pub const ROCE_PROBLEM_ICRC_BAD: u32 = 1 << 22;
/// The RoCEv1 GRH next header is not 0x1B (BTH).
pub const ROCE_PROBLEM_GRH_NEXT_HEADER: u32 = 1 << 23;
/// A packet to the RoCE UDP port whose UDP length leaves no room for a 12-byte BTH.
pub const ROCE_PROBLEM_SHORT_FOR_BTH: u32 = 1 << 24;
/// A RoCE packet with no room for the 4-byte ICRC after its BTH: the ICRC is not checked.
pub const ROCE_PROBLEM_SHORT_FOR_ICRC: u32 = 1 << 25;
/// An IPv4 header whose IHL is below 5 (20 bytes): not decoded further.
pub const ROCE_PROBLEM_IP_HEADER_LENGTH: u32 = 1 << 26;
/// More stacked VLAN tags than the parser walks (8): not decoded further.
pub const ROCE_PROBLEM_TOO_MANY_VLAN_TAGS: u32 = 1 << 27;
/// An IPv6 extension header chain the parser could not follow to its end (malformed, cut
/// short, or holding a header it does not walk): not decoded further.
pub const ROCE_PROBLEM_IPV6_EXTENSION_CHAIN: u32 = 1 << 28;
/// A tunnel header (GRE, ERSPAN, VXLAN, Geneve) that cannot be right (a GRE version other
/// than 0 or with routing, an ERSPAN version its GRE protocol does not carry, a Geneve version
/// other than 0): the inner frame is not decoded (`stop` is `ROCE_ERR_MALFORMED` at the
/// tunnel's layer). A tunnel header cut short is a truncation, not this problem.
pub const ROCE_PROBLEM_TUNNEL_MALFORMED: u32 = 1 << 29;
/// The VCRC closing a native InfiniBand packet does not match it: the packet was damaged on
/// the last link (`vcrc_status` is `ROCE_ICRC_BAD`).
pub const ROCE_PROBLEM_VCRC_BAD: u32 = 1 << 30;
/// Every problem bit this version knows (other bits are never set).
pub const ROCE_PROBLEM_ALL: u32 = 0x7fff_ffff;

// ---------------------------------------------------------------------------------------------
// Layers (roce_packet.stop_layer)
// ---------------------------------------------------------------------------------------------

/// `stop_layer`: parsing did not stop early.
pub const ROCE_LAYER_NONE: u8 = 0;
/// `stop_layer`: Ethernet header.
pub const ROCE_LAYER_ETHERNET: u8 = 1;
/// `stop_layer`: an 802.1Q / 802.1ad tag.
pub const ROCE_LAYER_VLAN: u8 = 2;
/// `stop_layer`: IPv4 header.
pub const ROCE_LAYER_IPV4: u8 = 3;
/// `stop_layer`: IPv6 header.
pub const ROCE_LAYER_IPV6: u8 = 4;
/// `stop_layer`: IPv6 extension headers.
pub const ROCE_LAYER_IPV6_EXTENSIONS: u8 = 5;
/// `stop_layer`: UDP header.
pub const ROCE_LAYER_UDP: u8 = 6;
/// `stop_layer`: RoCEv1 GRH.
pub const ROCE_LAYER_GRH: u8 = 7;
/// `stop_layer`: BTH.
pub const ROCE_LAYER_BTH: u8 = 8;
/// `stop_layer`: RDETH.
pub const ROCE_LAYER_RDETH: u8 = 9;
/// `stop_layer`: DETH.
pub const ROCE_LAYER_DETH: u8 = 10;
/// `stop_layer`: XRCETH.
pub const ROCE_LAYER_XRCETH: u8 = 11;
/// `stop_layer`: RETH.
pub const ROCE_LAYER_RETH: u8 = 12;
/// `stop_layer`: AtomicETH.
pub const ROCE_LAYER_ATOMIC_ETH: u8 = 13;
/// `stop_layer`: AETH.
pub const ROCE_LAYER_AETH: u8 = 14;
/// `stop_layer`: AtomicAckETH.
pub const ROCE_LAYER_ATOMIC_ACK_ETH: u8 = 15;
/// `stop_layer`: ImmDt.
pub const ROCE_LAYER_IMMDT: u8 = 16;
/// `stop_layer`: IETH.
pub const ROCE_LAYER_IETH: u8 = 17;
/// `stop_layer`: FETH.
pub const ROCE_LAYER_FETH: u8 = 18;
/// `stop_layer`: a GRE header (of a tunnel: GRE, ERSPAN).
pub const ROCE_LAYER_GRE: u8 = 19;
/// `stop_layer`: an ERSPAN type II or III header.
pub const ROCE_LAYER_ERSPAN: u8 = 20;
/// `stop_layer`: a VXLAN header.
pub const ROCE_LAYER_VXLAN: u8 = 21;
/// `stop_layer`: a Geneve header.
pub const ROCE_LAYER_GENEVE: u8 = 22;
/// `stop_layer`: the LRH of a native InfiniBand packet.
pub const ROCE_LAYER_LRH: u8 = 23;
/// `stop_layer`: a layer this header version does not name.
pub const ROCE_LAYER_OTHER: u8 = 255;

// ---------------------------------------------------------------------------------------------
// Encapsulations (roce_tunnel.kind; the order of roce_parser::ENCAPSULATIONS)
// ---------------------------------------------------------------------------------------------

/// `roce_tunnel.kind`: no tunnel (the slots past `roce_packet.tunnel_count`).
pub const ROCE_ENCAP_NONE: u8 = 0;
/// GRE transparent Ethernet bridging (protocol 0x6558), or IP in GRE (0x0800, 0x86DD).
pub const ROCE_ENCAP_GRE: u8 = 1;
/// ERSPAN type I: GRE 0x88BE without a sequence number, the mirrored frame right after.
pub const ROCE_ENCAP_ERSPAN1: u8 = 2;
/// ERSPAN type II: GRE 0x88BE with a sequence number, an 8-byte header (`erspan`).
pub const ROCE_ENCAP_ERSPAN2: u8 = 3;
/// ERSPAN type III: GRE 0x22EB, a 12-byte header and its optional platform subheader
/// (`erspan`).
pub const ROCE_ENCAP_ERSPAN3: u8 = 4;
/// VXLAN: UDP port 4789, an 8-byte header (`vxlan`), an Ethernet frame.
pub const ROCE_ENCAP_VXLAN: u8 = 5;
/// Geneve: UDP port 6081, an 8-byte header and options (`geneve`).
pub const ROCE_ENCAP_GENEVE: u8 = 6;

// ---------------------------------------------------------------------------------------------
// Structs
// ---------------------------------------------------------------------------------------------

/// Parse options. A zero-initialized struct (`roce_options o = {0};`) means the defaults:
/// RoCEv2 on UDP port 4791, ICRC (and IPv4 header checksum) verified.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_options {
    /// UDP destination port that marks RoCEv2; 0 means 4791 (`ROCE_V2_UDP_PORT`).
    pub udp_port: u16,
    /// Non-zero: do not verify the ICRC nor the IPv4 header checksum (`icrc_status` is then
    /// `ROCE_ICRC_NOT_CHECKED`).
    pub skip_icrc: u8,
}

/// One piece of a frame held in several (`roce_parse_frame_segments`): a DPDK mbuf's data
/// (`rte_pktmbuf_mtod(m, const uint8_t *)`, `m->data_len`), an iovec.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct roce_segment {
    /// The segment's bytes; may be NULL when `len` is 0.
    pub data: *const u8,
    /// Its length in bytes (0 allowed).
    pub len: usize,
}

/// One 802.1Q / 802.1ad tag.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_vlan {
    /// The TPID that announced the tag (0x8100, 0x88a8, 0x9100).
    pub tpid: u16,
    /// Priority code point, 0..7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..4095.
    pub vid: u16,
}

/// Ethernet II header (absent for `roce_parse_ip`, `roce_parse_udp_payload`,
/// `roce_parse_ethertype`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_eth {
    /// The header was decoded; every other field is 0 when false.
    pub present: bool,
    /// Number of VLAN tags recorded in `vlans` (0..2; deeper stacks are skipped).
    pub vlan_count: u8,
    /// The EtherType after any VLAN tags (0x0800 IPv4, 0x86dd IPv6, 0x8915 RoCEv1).
    pub ethertype: u16,
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// The first `vlan_count` tags, outermost first.
    pub vlans: [roce_vlan; 2],
}

/// IPv4 or IPv6 header (RoCEv2). RoCEv1 has a GRH instead (`roce_packet.grh`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_ip {
    /// The header was decoded; every other field is 0 when false.
    pub present: bool,
    /// 4 or 6.
    pub version: u8,
    /// DSCP, 0..63.
    pub dscp: u8,
    /// ECN, 0..3 (3 = CE, congestion experienced).
    pub ecn: u8,
    /// TTL (IPv4) or hop limit (IPv6).
    pub ttl: u8,
    /// IPv4 protocol or IPv6 next header after any extension headers (17 = UDP).
    pub protocol: u8,
    /// IPv4 identification (0 for IPv6).
    pub identification: u16,
    /// IPv6 flow label (0 for IPv4).
    pub flow_label: u32,
    /// Source address in network byte order. IPv6: the 16 bytes. IPv4: IPv4-mapped
    /// (`::ffff:a.b.c.d`), so the four IPv4 bytes are `src + 12`.
    pub src: [u8; 16],
    /// Destination address, as `src`.
    pub dst: [u8; 16],
    /// Offset of the IP header in the input.
    pub offset: usize,
    /// IPv4 header length with options, or 40 for IPv6.
    pub header_len: usize,
    /// Length of the IPv6 extension headers (0 for IPv4).
    pub ext_len: usize,
    /// Length the header announces: IPv4 total length, IPv6 40 + payload length.
    pub total_len: usize,
}

/// UDP header (RoCEv2).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_udp {
    /// The header was decoded; every other field is 0 when false.
    pub present: bool,
    /// Source port (flow entropy for RoCEv2: not meaningful).
    pub sport: u16,
    /// Destination port (4791 for RoCEv2).
    pub dport: u16,
    /// UDP length (header included).
    pub len: u16,
    /// UDP checksum as stored (RoCEv2 senders usually leave it 0).
    pub checksum: u16,
    /// Offset of the UDP header in the input.
    pub offset: usize,
}

/// Global Route Header (40 bytes, IPv6-shaped) of RoCEv1 and of routed native InfiniBand.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_grh {
    /// The header was decoded (RoCEv1, and native InfiniBand with LNH 3); every other field
    /// is 0 when false.
    pub present: bool,
    /// IP version field (6).
    pub ipver: u8,
    /// Traffic class.
    pub tclass: u8,
    /// Next header (0x1B = BTH).
    pub nxthdr: u8,
    /// Hop limit.
    pub hoplmt: u8,
    /// Payload length (BTH to ICRC).
    pub paylen: u16,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination GID.
    pub dgid: [u8; 16],
}

/// Local Route Header of a native InfiniBand packet (8 bytes), and the VCRC after its ICRC.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_lrh {
    /// The header was decoded (`roce_parse_infiniband` only); every other field is 0 when
    /// false.
    pub present: bool,
    /// Virtual lane (4 bits).
    pub vl: u8,
    /// Link version (4 bits).
    pub lver: u8,
    /// Service level (4 bits).
    pub sl: u8,
    /// The 2 reserved bits between SL and LNH.
    pub resv2: u8,
    /// Link next header: 0 raw, 1 IPv6, 2 IBA local (a BTH follows), 3 IBA global (a GRH).
    pub lnh: u8,
    /// The 5 reserved bits before PktLen.
    pub resv5: u8,
    /// `ROCE_ICRC_NOT_CHECKED`, `ROCE_ICRC_OK`, `ROCE_ICRC_BAD` or `ROCE_ICRC_UNVERIFIABLE`:
    /// the VCRC's verdict.
    pub vcrc_status: u8,
    /// Destination LID.
    pub dlid: u16,
    /// Source LID.
    pub slid: u16,
    /// PktLen: LRH through ICRC in 4-byte words (11 bits).
    pub pkt_len: u16,
    /// The VCRC was captured.
    pub vcrc_present: bool,
    /// The VCRC as stored (little-endian u16 after the ICRC).
    pub vcrc: u16,
    /// With `vcrc_status == ROCE_ICRC_BAD`: the VCRC the packet should carry; 0 otherwise.
    pub vcrc_computed: u16,
}

/// Base Transport Header (12 bytes). Valid when `roce_packet.roce_version` is not 0.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_bth {
    /// OpCode: bits 7..5 the transport, 4..0 the operation. Name: `roce_opcode_name()`.
    pub opcode: u8,
    /// Solicited event.
    pub se: bool,
    /// MigReq.
    pub m: bool,
    /// Pad bytes before the ICRC, 0..3.
    pub padcnt: u8,
    /// Transport header version, 0..15; must be 0.
    pub tver: u8,
    /// FECN.
    pub fecn: bool,
    /// BECN (set in CNPs).
    pub becn: bool,
    /// AckReq.
    pub ackreq: bool,
    /// Partition key.
    pub pkey: u16,
    /// The six reserved bits after FECN/BECN.
    pub resv6: u8,
    /// The seven reserved bits after AckReq.
    pub resv7: u8,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

/// RDETH (RD; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_rdeth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Reserved byte.
    pub reserved: u8,
    /// EE context (24 bits).
    pub eecnxt: u32,
}

/// DETH (UD, RD requests; 8 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_deth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Reserved byte.
    pub reserved: u8,
    /// Q_Key (0x80010000 for GSI, QP1).
    pub qkey: u32,
    /// Source QP (24 bits).
    pub src_qp: u32,
}

/// XRCETH (XRC requests; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_xrceth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Reserved byte.
    pub reserved: u8,
    /// XRC SRQ number (24 bits).
    pub xrcsrq: u32,
}

/// RETH (RDMA WRITE first/only, READ request, FLUSH, ATOMIC_WRITE; 16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_reth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Remote key.
    pub rkey: u32,
    /// DMA length.
    pub dma_len: u32,
    /// Virtual address.
    pub va: u64,
}

/// AtomicETH (COMPARE_SWAP, FETCH_ADD; 28 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_atomic_eth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Remote key.
    pub rkey: u32,
    /// Virtual address.
    pub va: u64,
    /// Swap (COMPARE_SWAP) or add (FETCH_ADD) data.
    pub swap_add: u64,
    /// Compare data.
    pub compare: u64,
}

/// AETH (ACK, NAK, read responses; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_aeth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// The syndrome byte as on the wire.
    pub syndrome: u8,
    /// Syndrome bits 6..5: `ROCE_AETH_ACK`, `ROCE_AETH_RNR_NAK`, `ROCE_AETH_RESERVED`,
    /// `ROCE_AETH_NAK`.
    pub kind: u8,
    /// Syndrome bits 4..0: credit count (ACK), timer code (RNR NAK) or NAK code (NAK).
    pub value: u8,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

/// AtomicAckETH (ATOMIC_ACKNOWLEDGE; 8 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_atomic_ack_eth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Original remote data.
    pub orig: u64,
}

/// ImmDt (..._WITH_IMMEDIATE; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_immdt {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Immediate data, as a big-endian number.
    pub data: u32,
}

/// IETH (SEND ..._WITH_INVALIDATE; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_ieth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// R_Key to invalidate.
    pub rkey: u32,
}

/// FETH (FLUSH; 4 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_feth {
    /// The header is in the packet; its fields are 0 when false.
    pub present: bool,
    /// Selectivity level (bits 5..4).
    pub selectivity: u8,
    /// Placement type (bits 3..0).
    pub placement: u8,
    /// The 26 reserved bits.
    pub reserved: u32,
}

/// A tunnel's GRE header (RFC 2784 / 2890): GRE and the ERSPAN kinds.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_gre {
    /// The tunnel has a GRE header; every other field is 0 when false.
    pub present: bool,
    /// Protocol type: the EtherType of what follows (0x6558, 0x88BE, 0x22EB, 0x0800, 0x86DD).
    pub protocol: u16,
    /// The C bit: `checksum` was in the header.
    pub checksum_present: bool,
    /// The checksum as stored.
    pub checksum: u16,
    /// The K bit: `key` was in the header.
    pub key_present: bool,
    /// The key.
    pub key: u32,
    /// The S bit: `seq` was in the header (always for ERSPAN II: what tells it from type I).
    pub seq_present: bool,
    /// The sequence number.
    pub seq: u32,
}

/// An ERSPAN type II or III header (`ROCE_ENCAP_ERSPAN2`, `ROCE_ENCAP_ERSPAN3`; type I has
/// none). Fields of the other type are 0.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_erspan {
    /// The tunnel has an ERSPAN II or III header; every other field is 0 when false.
    pub present: bool,
    /// Ver (4 bits): 1 for type II, 2 for type III.
    pub version: u8,
    /// VLAN (12 bits): the mirrored frame's original VLAN.
    pub vlan: u16,
    /// COS (3 bits): its class of service.
    pub cos: u8,
    /// Type II: En (2 bits), how the frame was tagged (0 untagged, 1 ISL, 2 802.1Q, 3 kept).
    pub encap_type: u8,
    /// Type III: BSO (2 bits), bad/short/oversized frame indication.
    pub bso: u8,
    /// T: the switch truncated the mirrored frame (a cut inner frame's ICRC is unverifiable,
    /// never bad).
    pub truncated: bool,
    /// Session ID (10 bits): the mirror session.
    pub session_id: u16,
    /// Type II: Index (20 bits), the port or module the frame was mirrored at.
    pub index: u32,
    /// Type III: timestamp (32 bits), in the unit `granularity` says.
    pub timestamp: u32,
    /// Type III: SGT (16 bits), the security group tag.
    pub sgt: u16,
    /// Type III: P, the frame is an Ethernet PDU.
    pub pdu: bool,
    /// Type III: FT (5 bits), frame type (0 Ethernet, 2 IP: no inner Ethernet header).
    pub frame_type: u8,
    /// Type III: Hw ID (6 bits), the ERSPAN engine.
    pub hw_id: u8,
    /// Type III: D, direction (false ingress, true egress).
    pub direction: bool,
    /// Type III: Gra (2 bits), timestamp granularity (0 100 us, 1 100 ns, 2 IEEE 1588, 3 user).
    pub granularity: u8,
    /// Type III: the O bit, the platform-specific subheader follows (`platform_id`,
    /// `platform_info`).
    pub platform_present: bool,
    /// Type III: Platf ID (6 bits).
    pub platform_id: u8,
    /// Type III: the 58 platform-specific bits after the platform ID.
    pub platform_info: u64,
}

/// A VXLAN header (RFC 7348; `ROCE_ENCAP_VXLAN`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_vxlan {
    /// The tunnel is VXLAN; every other field is 0 when false.
    pub present: bool,
    /// Flags (8 bits): 0x08 (I) when the VNI is valid.
    pub flags: u8,
    /// VNI (24 bits): the VXLAN network identifier.
    pub vni: u32,
}

/// A Geneve header (RFC 8926; `ROCE_ENCAP_GENEVE`). The options are offsets into the input,
/// never pointers: `input + options_offset`, `options_len` bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_geneve {
    /// The tunnel is Geneve; every other field is 0 when false.
    pub present: bool,
    /// Ver (2 bits): 0.
    pub version: u8,
    /// O: an OAM packet.
    pub oam: bool,
    /// C: a critical option is present.
    pub critical: bool,
    /// Protocol type: what follows the options (0x6558 Ethernet, 0x0800 IPv4, 0x86DD IPv6).
    pub protocol: u16,
    /// VNI (24 bits): the virtual network identifier.
    pub vni: u32,
    /// Offset of the options in the input (right after the 8-byte header).
    pub options_offset: usize,
    /// Length of the options (Opt Len x 4 bytes, all in the input).
    pub options_len: usize,
}

/// One tunnel taken off the frame (a switch mirror, an overlay): its outer layers and its own
/// headers. `roce_packet.tunnels` holds `tunnel_count` of them, outermost first; the rest of
/// `roce_packet` (`eth`, `ip`, `udp`, the RoCE fields) describes the inner frame, parsed as a
/// plain one. Only the struct of the tunnel's kind is filled (`gre` for the GRE and ERSPAN
/// kinds, also `erspan` for ERSPAN II and III, `vxlan`, `geneve`); the others are 0.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_tunnel {
    /// A `ROCE_ENCAP_*` value (`roce_encap_name()`); `ROCE_ENCAP_NONE` for an unused slot.
    pub kind: u8,
    /// The outer Ethernet header and VLAN tags (absent when the outer packet started at IP:
    /// `roce_parse_ip`, or the inner tunnel of an IP-in-GRE packet).
    pub eth: roce_eth,
    /// The outer IP header.
    pub ip: roce_ip,
    /// The outer UDP header (VXLAN, Geneve).
    pub udp: roce_udp,
    /// The GRE header (GRE, ERSPAN I, II, III).
    pub gre: roce_gre,
    /// The ERSPAN II / III header.
    pub erspan: roce_erspan,
    /// The VXLAN header.
    pub vxlan: roce_vxlan,
    /// The Geneve header.
    pub geneve: roce_geneve,
    /// Offset of the tunnel's first header in the input (GRE, or VXLAN / Geneve after UDP).
    pub offset: usize,
    /// Offset of the inner frame: its Ethernet header, or its IP header for IP in GRE or
    /// Geneve and ERSPAN III frame type 2.
    pub inner_offset: usize,
}

/// Everything decoded from one input. Every call writes the whole struct (fields of absent
/// layers are 0), so it can be reused across calls without clearing. It holds offsets into the
/// caller's buffer, never pointers: it stays valid after the buffer is freed, and the payload
/// is `buffer + payload_offset`, `payload_captured` bytes long. For a frame that arrived in a
/// tunnel (`tunnel_count` > 0: ERSPAN, GRE, VXLAN, Geneve), `eth`, `ip`, `udp` and the RoCE
/// fields describe the inner frame and `tunnels` the outer layers; offsets always count from
/// the start of the input.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_packet {
    /// 0: no RoCE packet; 1: RoCEv1 (EtherType 0x8915, GRH); 2: RoCEv2 (UDP); 3
    /// (`ROCE_VERSION_INFINIBAND`): a native InfiniBand packet (`roce_parse_infiniband`).
    pub roce_version: u8,
    /// The opcode is in the IBTA table; false for reserved and vendor opcodes, whose bytes
    /// after the BTH are left undecoded (`opaque_offset`, `opaque_len`).
    pub opcode_known: bool,
    /// `ROCE_ICRC_NOT_CHECKED`, `ROCE_ICRC_OK`, `ROCE_ICRC_BAD` or `ROCE_ICRC_UNVERIFIABLE`.
    pub icrc_status: u8,
    /// The ICRC was captured (the packet's lengths reach it and the frame holds it).
    pub icrc_present: bool,
    /// The ICRC as stored: the little-endian u32 of the packet's last four bytes.
    pub icrc: u32,
    /// With `ROCE_ICRC_BAD`: the ICRC the packet should carry; 0 otherwise.
    pub icrc_computed: u32,
    /// Everything found wrong, across layers: a mask of `ROCE_PROBLEM_*` bits
    /// (`roce_problem_str()` describes each bit). Parsing goes on past problems.
    pub problems: u32,
    /// Ethernet header and VLAN tags.
    pub eth: roce_eth,
    /// IPv4 / IPv6 header (RoCEv2).
    pub ip: roce_ip,
    /// UDP header (RoCEv2).
    pub udp: roce_udp,
    /// Global route header (RoCEv1).
    pub grh: roce_grh,
    /// Base transport header.
    pub bth: roce_bth,
    /// RDETH.
    pub rdeth: roce_rdeth,
    /// DETH.
    pub deth: roce_deth,
    /// XRCETH.
    pub xrceth: roce_xrceth,
    /// RETH.
    pub reth: roce_reth,
    /// AtomicETH.
    pub atomic_eth: roce_atomic_eth,
    /// AETH.
    pub aeth: roce_aeth,
    /// AtomicAckETH.
    pub atomic_ack_eth: roce_atomic_ack_eth,
    /// ImmDt.
    pub immdt: roce_immdt,
    /// IETH.
    pub ieth: roce_ieth,
    /// FETH.
    pub feth: roce_feth,
    /// Offset of the BTH in the input.
    pub bth_offset: usize,
    /// Bytes from the start of the BTH to the payload, as the opcode table gives it (12 for
    /// opcodes outside the table).
    pub header_len: usize,
    /// Offset of the payload in the input: `bth_offset + header_len`, clamped to the input
    /// length when the input ends before the payload. Always
    /// `payload_offset + payload_captured <= len`.
    pub payload_offset: usize,
    /// Payload length the packet's lengths announce (UDP or GRH length minus headers, pad and
    /// ICRC); 0 when those lengths are too short even for the headers.
    pub payload_len: usize,
    /// Payload bytes present in the input at `payload_offset` (below `payload_len` when the
    /// frame is truncated). Only these bytes may be read.
    pub payload_captured: usize,
    /// Pad bytes present in the input, right after the payload.
    pub pad_captured: usize,
    /// For opcodes outside the table: offset of the undecoded bytes after the BTH (clamped
    /// to the input length). Always `opaque_offset + opaque_len <= len`.
    pub opaque_offset: usize,
    /// For opcodes outside the table: number of undecoded bytes (up to the ICRC).
    pub opaque_len: usize,
    /// Where lax parsing stopped early: 0 if it did not, else `ROCE_ERR_TRUNCATED` or
    /// `ROCE_ERR_MALFORMED`. With `ROCE_OK` this means an extended header is cut short: the
    /// headers before it are decoded.
    pub stop: i32,
    /// The layer where parsing stopped: a `ROCE_LAYER_*` value (`roce_layer_name()`).
    pub stop_layer: u8,
    /// Offset of the layer where parsing stopped.
    pub stop_offset: usize,
    /// Bytes that layer needed (0 when not a length problem).
    pub stop_needed: usize,
    /// Bytes available from `stop_offset` (0 when not a length problem).
    pub stop_available: usize,
    /// Tunnels taken off the frame, 0..2 (`ROCE_PARSER_MAX_TUNNELS`): the first
    /// `tunnel_count` entries of `tunnels` are filled, the others are zero. 0 for a frame
    /// captured on the host.
    pub tunnel_count: u8,
    /// The tunnels, outermost first (a mirror of overlay traffic: ERSPAN, then VXLAN).
    pub tunnels: [roce_tunnel; ROCE_PARSER_MAX_TUNNELS],
    /// The LRH and VCRC of a native InfiniBand packet (`roce_parse_infiniband`); `grh`
    /// holds its GRH when LNH is 3. Zero for RoCE.
    pub lrh: roce_lrh,
}

// ---------------------------------------------------------------------------------------------
// Conversion (safe code)
// ---------------------------------------------------------------------------------------------

fn status_of_error(e: &Error) -> c_int {
    match e.kind {
        ErrorKind::Truncated => ROCE_ERR_TRUNCATED,
        _ => ROCE_ERR_MALFORMED,
    }
}

fn layer_code(l: Layer) -> u8 {
    match l {
        Layer::Ethernet => ROCE_LAYER_ETHERNET,
        Layer::Vlan => ROCE_LAYER_VLAN,
        Layer::Ipv4 => ROCE_LAYER_IPV4,
        Layer::Ipv6 => ROCE_LAYER_IPV6,
        Layer::Ipv6Extensions => ROCE_LAYER_IPV6_EXTENSIONS,
        Layer::Udp => ROCE_LAYER_UDP,
        Layer::Grh => ROCE_LAYER_GRH,
        Layer::Bth => ROCE_LAYER_BTH,
        Layer::Rdeth => ROCE_LAYER_RDETH,
        Layer::Deth => ROCE_LAYER_DETH,
        Layer::Xrceth => ROCE_LAYER_XRCETH,
        Layer::Reth => ROCE_LAYER_RETH,
        Layer::AtomicEth => ROCE_LAYER_ATOMIC_ETH,
        Layer::Aeth => ROCE_LAYER_AETH,
        Layer::AtomicAckEth => ROCE_LAYER_ATOMIC_ACK_ETH,
        Layer::ImmDt => ROCE_LAYER_IMMDT,
        Layer::Ieth => ROCE_LAYER_IETH,
        Layer::Feth => ROCE_LAYER_FETH,
        Layer::Gre => ROCE_LAYER_GRE,
        Layer::Erspan => ROCE_LAYER_ERSPAN,
        Layer::Vxlan => ROCE_LAYER_VXLAN,
        Layer::Geneve => ROCE_LAYER_GENEVE,
        Layer::Lrh => ROCE_LAYER_LRH,
        _ => ROCE_LAYER_OTHER,
    }
}

fn set_stop(out: &mut roce_packet, e: &Error) {
    out.stop = status_of_error(e);
    out.stop_layer = layer_code(e.layer);
    out.stop_offset = e.offset;
    out.stop_needed = e.needed;
    out.stop_available = e.available;
}

fn ip16(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

fn icrc_code(s: IcrcStatus) -> (u8, u32) {
    match s {
        IcrcStatus::NotChecked => (ROCE_ICRC_NOT_CHECKED, 0),
        IcrcStatus::Ok => (ROCE_ICRC_OK, 0),
        IcrcStatus::Bad { computed } => (ROCE_ICRC_BAD, computed),
        IcrcStatus::Unverifiable => (ROCE_ICRC_UNVERIFIABLE, 0),
    }
}

/// Fills the RoCE part of `out` (which must be zeroed) from `r`, parsed from an input of
/// `len` bytes.
#[inline]
fn fill_roce(out: &mut roce_packet, len: usize, r: &Roce<'_>, problems: Problems) {
    out.roce_version = match r.version {
        roce_parser::RoceVersion::Infiniband => ROCE_VERSION_INFINIBAND,
        v => v.number(),
    };
    out.opcode_known = r.info.is_some();
    let (status, computed) = icrc_code(r.icrc_status);
    out.icrc_status = status;
    out.icrc_computed = computed;
    out.icrc_present = r.icrc.is_some();
    out.icrc = r.icrc.unwrap_or(0);
    out.problems = problems.bits();
    if let Some(g) = &r.grh {
        out.grh = roce_grh {
            present: true,
            ipver: g.ipver,
            tclass: g.tclass,
            nxthdr: g.nxthdr,
            hoplmt: g.hoplmt,
            paylen: g.paylen,
            flow_label: g.flow_label,
            sgid: g.sgid,
            dgid: g.dgid,
        };
    }
    let b = &r.bth;
    out.bth = roce_bth {
        opcode: b.opcode,
        se: b.se,
        m: b.migreq,
        padcnt: b.padcnt,
        tver: b.tver,
        fecn: b.fecn,
        becn: b.becn,
        ackreq: b.ackreq,
        pkey: b.pkey,
        resv6: b.resv6,
        resv7: b.resv7,
        dest_qp: b.dest_qp,
        psn: b.psn,
    };
    let h = &r.headers;
    if let Some(x) = h.rdeth {
        out.rdeth = roce_rdeth { present: true, reserved: x.reserved, eecnxt: x.eecnxt };
    }
    if let Some(x) = h.deth {
        out.deth =
            roce_deth { present: true, reserved: x.reserved, qkey: x.qkey, src_qp: x.src_qp };
    }
    if let Some(x) = h.xrceth {
        out.xrceth = roce_xrceth { present: true, reserved: x.reserved, xrcsrq: x.xrcsrq };
    }
    if let Some(x) = h.reth {
        out.reth = roce_reth { present: true, rkey: x.rkey, dma_len: x.dma_len, va: x.va };
    }
    if let Some(x) = h.atomic_eth {
        out.atomic_eth = roce_atomic_eth {
            present: true,
            rkey: x.rkey,
            va: x.va,
            swap_add: x.swap_add,
            compare: x.compare,
        };
    }
    if let Some(x) = h.aeth {
        out.aeth = roce_aeth {
            present: true,
            syndrome: x.syndrome,
            kind: (x.syndrome >> 5) & 3,
            value: x.value(),
            msn: x.msn,
        };
    }
    if let Some(x) = h.atomic_ack_eth {
        out.atomic_ack_eth = roce_atomic_ack_eth { present: true, orig: x.orig };
    }
    if let Some(x) = h.immdt {
        out.immdt = roce_immdt { present: true, data: x.data };
    }
    if let Some(x) = h.ieth {
        out.ieth = roce_ieth { present: true, rkey: x.rkey };
    }
    if let Some(x) = h.feth {
        out.feth = roce_feth {
            present: true,
            selectivity: x.selectivity,
            placement: x.placement,
            reserved: x.reserved,
        };
    }
    let hl = r.header_len();
    out.bth_offset = r.bth_offset;
    out.header_len = hl;
    // The payload (when captured) starts right after the headers, the opaque bytes right
    // after the BTH. Offsets are clamped to the input, so `buffer + offset` is always a valid
    // C pointer.
    out.payload_offset = (r.bth_offset + hl).min(len);
    out.payload_len = r.payload_len;
    out.payload_captured = r.payload_captured();
    out.pad_captured = r.pad_captured();
    out.opaque_offset = (r.bth_offset + 12).min(len);
    out.opaque_len = r.opaque_captured();
}

/// Fills `out` (zeroed) from an Ethernet header and its VLAN tags.
#[inline]
fn fill_eth(out: &mut roce_eth, eth: &EthernetInfo, vlans: &[Option<VlanTag>]) {
    out.present = true;
    out.dst = eth.dst;
    out.src = eth.src;
    out.ethertype = eth.ethertype;
    let mut n = 0u8;
    for (slot, tag) in out.vlans.iter_mut().zip(vlans.iter().flatten()) {
        *slot = roce_vlan { tpid: tag.tpid, pcp: tag.pcp, dei: tag.dei, vid: tag.vid };
        n += 1;
    }
    out.vlan_count = n;
}

#[inline]
fn ip_of(ip: &IpInfo) -> roce_ip {
    roce_ip {
        present: true,
        version: ip.version,
        dscp: ip.dscp,
        ecn: ip.ecn,
        ttl: ip.ttl,
        protocol: ip.protocol,
        identification: ip.identification,
        flow_label: ip.flow_label,
        src: ip16(ip.src),
        dst: ip16(ip.dst),
        offset: ip.offset,
        header_len: ip.header_len,
        ext_len: ip.ext_len,
        total_len: ip.total_len,
    }
}

#[inline]
fn udp_of(udp: &UdpInfo) -> roce_udp {
    roce_udp {
        present: true,
        sport: udp.sport,
        dport: udp.dport,
        len: udp.len,
        checksum: udp.checksum,
        offset: udp.offset,
    }
}

/// The `ROCE_ENCAP_*` value of a kind. Exhaustive: a new kind in the parser's table fails
/// the build here until it has its constant.
fn encap_code(k: EncapKind) -> u8 {
    match k {
        EncapKind::Gre => ROCE_ENCAP_GRE,
        EncapKind::ErspanI => ROCE_ENCAP_ERSPAN1,
        EncapKind::ErspanII => ROCE_ENCAP_ERSPAN2,
        EncapKind::ErspanIII => ROCE_ENCAP_ERSPAN3,
        EncapKind::Vxlan => ROCE_ENCAP_VXLAN,
        EncapKind::Geneve => ROCE_ENCAP_GENEVE,
    }
}

/// One tunnel of a packet, as C sees it.
fn tunnel_of(e: &Encap<'_>) -> roce_tunnel {
    let mut t = roce_tunnel {
        kind: encap_code(e.kind()),
        offset: e.offset,
        inner_offset: e.inner_offset,
        ..roce_tunnel::default()
    };
    if let Some(eth) = &e.eth {
        fill_eth(&mut t.eth, eth, &e.vlans);
    }
    if let Some(ip) = &e.ip {
        t.ip = ip_of(ip);
    }
    if let Some(udp) = &e.udp {
        t.udp = udp_of(udp);
    }
    if let Some(g) = e.tunnel.gre() {
        t.gre = roce_gre {
            present: true,
            protocol: g.protocol,
            checksum_present: g.checksum.is_some(),
            checksum: g.checksum.unwrap_or(0),
            key_present: g.key.is_some(),
            key: g.key.unwrap_or(0),
            seq_present: g.seq.is_some(),
            seq: g.seq.unwrap_or(0),
        };
    }
    match &e.tunnel {
        Tunnel::Gre(_) | Tunnel::ErspanI(_) => {}
        Tunnel::ErspanII(_, x) => {
            t.erspan = roce_erspan {
                present: true,
                version: x.version,
                vlan: x.vlan,
                cos: x.cos,
                encap_type: x.encap_type,
                truncated: x.truncated,
                session_id: x.session_id,
                index: x.index,
                ..roce_erspan::default()
            };
        }
        Tunnel::ErspanIII(_, x) => {
            t.erspan = roce_erspan {
                present: true,
                version: x.version,
                vlan: x.vlan,
                cos: x.cos,
                bso: x.bso,
                truncated: x.truncated,
                session_id: x.session_id,
                timestamp: x.timestamp,
                sgt: x.sgt,
                pdu: x.pdu,
                frame_type: x.frame_type,
                hw_id: x.hw_id,
                direction: x.direction,
                granularity: x.granularity,
                platform_present: x.platform.is_some(),
                platform_id: x.platform.map_or(0, |p| p.id),
                platform_info: x.platform.map_or(0, |p| p.info),
                ..roce_erspan::default()
            };
        }
        Tunnel::Vxlan(v) => t.vxlan = roce_vxlan { present: true, flags: v.flags, vni: v.vni },
        Tunnel::Geneve(g) => {
            t.geneve = roce_geneve {
                present: true,
                version: g.version,
                oam: g.oam,
                critical: g.critical,
                protocol: g.protocol,
                vni: g.vni,
                // The options follow the fixed header, at the tunnel's offset: the same
                // number whether the packet's bytes are the frame or a segmented parse's head.
                options_offset: e.offset + GeneveRepr::LEN,
                options_len: g.options.len(),
            };
        }
    }
    t
}

/// Fills `out.tunnels` (zeroed) and `out.tunnel_count` from the packet's tunnels. Out of
/// line: a frame captured on the host never comes here.
#[inline(never)]
fn fill_tunnels(out: &mut roce_packet, p: &Packet<'_>) {
    const { assert!(ROCE_PARSER_MAX_TUNNELS == roce_parser::MAX_ENCAP) };
    let mut n = 0u8;
    for (slot, e) in out.tunnels.iter_mut().zip(p.tunnels()) {
        *slot = tunnel_of(e);
        n += 1;
    }
    out.tunnel_count = n;
}

/// Fills `out` (which must be zeroed) from a packet parsed from `len` bytes and returns the
/// status.
#[inline]
fn fill_packet(out: &mut roce_packet, p: &Packet<'_>, len: usize) -> c_int {
    if let Some(eth) = &p.eth {
        fill_eth(&mut out.eth, eth, &p.vlans);
    }
    if let Some(ip) = &p.ip {
        out.ip = ip_of(ip);
    }
    if let Some(udp) = &p.udp {
        out.udp = udp_of(udp);
    }
    if p.is_encapsulated() {
        fill_tunnels(out, p);
    }
    if let Some(l) = &p.lrh {
        let (vcrc_status, computed) =
            p.vcrc.map_or((ROCE_ICRC_NOT_CHECKED, 0), |v| icrc_code(v.status));
        out.lrh = roce_lrh {
            present: true,
            vl: l.vl,
            lver: l.lver,
            sl: l.sl,
            resv2: l.resv2,
            lnh: l.lnh.bits(),
            resv5: l.resv5,
            vcrc_status,
            dlid: l.dlid,
            slid: l.slid,
            pkt_len: l.pkt_len,
            vcrc_present: p.vcrc.is_some_and(|v| v.stored.is_some()),
            vcrc: p.vcrc.and_then(|v| v.stored).unwrap_or(0),
            vcrc_computed: computed as u16,
        };
    }
    if let Some(r) = &p.roce {
        fill_roce(out, len, r, p.problems);
    }
    out.problems = p.problems.bits();
    if let Some(e) = &p.stop {
        set_stop(out, e);
    }
    match (&p.roce, &p.stop) {
        (Some(_), _) => ROCE_OK,
        (None, Some(e)) => status_of_error(e),
        (None, None) => ROCE_ERR_NOT_ROCE,
    }
}

/// Fills `out` (zeroed) for an error returned before any layer was decoded.
fn fill_error(out: &mut roce_packet, e: &Error) -> c_int {
    set_stop(out, e);
    status_of_error(e)
}

fn config_of(o: roce_options) -> Config {
    Config {
        udp_port: if o.udp_port == 0 { ROCEV2_UDP_PORT } else { o.udp_port },
        verify: o.skip_icrc == 0,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The safe core of each entry point: what the C functions call once the pointers are checked.
// Public so that Rust tests and benchmarks can measure the conversion without the boundary.
// ---------------------------------------------------------------------------------------------

/// Safe form of `roce_parse_frame_opts`: parses an Ethernet frame into `out`.
pub fn parse_frame_into(frame: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    *out = roce_packet::default();
    frame_into_zeroed(frame, opts, out)
}

/// Safe form of `roce_parse_ip_opts`: parses an IPv4 or IPv6 packet into `out`.
pub fn parse_ip_into(packet: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    *out = roce_packet::default();
    ip_into_zeroed(packet, opts, out)
}

/// Safe form of `roce_parse_ethertype`: parses what follows an EtherType into `out`.
pub fn parse_ethertype_into(
    ethertype: u16,
    data: &[u8],
    opts: roce_options,
    out: &mut roce_packet,
) -> c_int {
    *out = roce_packet::default();
    ethertype_into_zeroed(ethertype, data, opts, out)
}

/// Safe form of `roce_parse_udp_payload`: parses a UDP payload (BTH to ICRC) into `out`.
pub fn parse_udp_payload_into(payload: &[u8], out: &mut roce_packet) -> c_int {
    *out = roce_packet::default();
    udp_payload_into_zeroed(payload, out)
}

// The same, into an `out` already zeroed (the C entry points zero it once, at the boundary).
// The parse result is matched by reference: moving the `Packet` out would copy it.

#[inline]
fn frame_into_zeroed(frame: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    // In place: `parse_ethernet` returns the packet by value, a copy of ~500 bytes per frame.
    let mut p = roce_parser::Packet::default();
    match roce_parser::parse_ethernet_into(frame, &config_of(opts), &mut p) {
        Ok(()) => fill_packet(out, &p, frame.len()),
        Err(e) => fill_error(out, &e),
    }
}

/// Safe form of `roce_parse_frame_segments`: parses an Ethernet frame given as consecutive
/// segments into `out`, with the result `parse_frame_into` gives for their concatenation.
pub fn parse_frame_segments_into(
    segs: &[&[u8]],
    opts: roce_options,
    out: &mut roce_packet,
) -> c_int {
    *out = roce_packet::default();
    frame_segments_into_zeroed(segs, opts, out)
}

fn frame_segments_into_zeroed(segs: &[&[u8]], opts: roce_options, out: &mut roce_packet) -> c_int {
    // One segment (an unchained mbuf): the contiguous parse, without the 2.5 KiB scratch.
    if let [one] = segs {
        return frame_into_zeroed(one, opts, out);
    }
    let cfg = config_of(opts);
    let mut scratch = SegmentScratch::default();
    match roce_parser::parse_ethernet_segments(segs, &cfg, &mut scratch) {
        Ok(s) => fill_packet(out, &s.packet, s.len),
        // Headers past the first 2 KiB (long IPv6 extension chains): join the segments.
        Err(e) if e.kind == ErrorKind::BufferTooSmall => {
            let joined: Vec<u8> = segs.concat();
            frame_into_zeroed(&joined, opts, out)
        }
        Err(e) => fill_error(out, &e),
    }
}

#[inline]
fn infiniband_into_zeroed(packet: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    let mut p = roce_parser::Packet::default();
    match roce_parser::parse_infiniband_into(packet, &config_of(opts), &mut p) {
        Ok(()) => fill_packet(out, &p, packet.len()),
        Err(e) => fill_error(out, &e),
    }
}

/// Safe form of `roce_parse_infiniband_opts`: parses a native InfiniBand packet into `out`.
pub fn parse_infiniband_into(packet: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    *out = roce_packet::default();
    infiniband_into_zeroed(packet, opts, out)
}

fn ip_into_zeroed(packet: &[u8], opts: roce_options, out: &mut roce_packet) -> c_int {
    match &roce_parser::parse_ip(packet, &config_of(opts)) {
        Ok(p) => fill_packet(out, p, packet.len()),
        Err(e) => fill_error(out, e),
    }
}

#[inline]
fn ethertype_into_zeroed(
    ethertype: u16,
    data: &[u8],
    opts: roce_options,
    out: &mut roce_packet,
) -> c_int {
    let p = roce_parser::parse_ethertype_payload(ethertype, data, &config_of(opts));
    fill_packet(out, &p, data.len())
}

#[inline]
fn udp_payload_into_zeroed(payload: &[u8], out: &mut roce_packet) -> c_int {
    match &roce_parser::parse_udp_payload(payload, &Config::default()) {
        Ok((r, problems)) => {
            fill_roce(out, payload.len(), r, *problems);
            ROCE_OK
        }
        Err(e) => fill_error(out, e),
    }
}

// ---------------------------------------------------------------------------------------------
// The boundary: the only unsafe code of the project.
// ---------------------------------------------------------------------------------------------

/// The output struct behind `out`, zeroed, or the status to return.
///
/// # Safety
/// `out` must be NULL or valid for writes of a `roce_packet`, and no other reference to that
/// memory may be used while the returned one lives.
unsafe fn output<'a>(out: *mut roce_packet) -> Result<&'a mut roce_packet, c_int> {
    if out.is_null() {
        return Err(ROCE_ERR_NULL);
    }
    if !out.is_aligned() {
        return Err(ROCE_ERR_INVALID_ARG);
    }
    // SAFETY: `out` is non-null and aligned, and the caller guarantees it is valid for
    // writes of a `roce_packet`. The memory may be uninitialized, so it is written whole
    // (never read) before a reference to it is made. All-zero bytes are a valid
    // `roce_packet`, equal to `roce_packet::default()`: every field is an integer, a `bool`
    // (0 is `false`) or an array or struct of those (`zeroed_is_default` in tests/api.rs).
    // A memset is cheaper than building the default value and copying it.
    unsafe {
        out.write_bytes(0, 1);
        Ok(&mut *out)
    }
}

/// The caller's bytes as a slice, or the status to return.
///
/// # Safety
/// `ptr` must be NULL or valid for reads of `len` bytes that nobody writes during the call.
unsafe fn input<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], c_int> {
    if ptr.is_null() {
        return Err(ROCE_ERR_NULL);
    }
    if len > isize::MAX as usize {
        return Err(ROCE_ERR_INVALID_ARG);
    }
    // SAFETY: `ptr` is non-null (and `u8` needs no alignment), `len` fits `isize`, and the
    // caller guarantees `len` readable bytes that stay unchanged while the slice lives, which
    // is the duration of this call.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The caller's options, or the defaults for NULL.
///
/// # Safety
/// `opts` must be NULL or valid for reads of a `roce_options`.
unsafe fn options(opts: *const roce_options) -> Result<roce_options, c_int> {
    if opts.is_null() {
        return Ok(roce_options::default());
    }
    if !opts.is_aligned() {
        return Err(ROCE_ERR_INVALID_ARG);
    }
    // SAFETY: non-null, aligned, and valid for reads by the caller's contract; every bit
    // pattern is a valid `roce_options` (two integers), so reading it cannot be undefined.
    Ok(unsafe { opts.read() })
}

/// Checks the three pointers of an entry point, then runs `parse` on safe values (with `out`
/// zeroed).
///
/// # Safety
/// As [`output`], [`input`] and [`options`].
unsafe fn call(
    data: *const u8,
    len: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
    parse: impl FnOnce(&[u8], roce_options, &mut roce_packet) -> c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    let out = match unsafe { output(out) } {
        Ok(o) => o,
        Err(code) => return code,
    };
    // SAFETY: forwarded from the caller.
    let opts = match unsafe { options(opts) } {
        Ok(o) => o,
        Err(code) => return code,
    };
    // SAFETY: forwarded from the caller.
    match unsafe { input(data, len) } {
        Ok(data) => parse(data, opts, out),
        Err(code) => code,
    }
}

/// Parses an Ethernet II frame (802.1Q / 802.1ad tags, IPv4 / IPv6 / UDP 4791 for RoCEv2,
/// EtherType 0x8915 for RoCEv1) with the default options: UDP port 4791, ICRC verified.
///
/// Returns `ROCE_OK` when a RoCE packet was decoded, `ROCE_ERR_NOT_ROCE` for a clean frame
/// without RoCE, `ROCE_ERR_TRUNCATED` / `ROCE_ERR_MALFORMED` when the frame ends or breaks
/// below the BTH, `ROCE_ERR_NULL` / `ROCE_ERR_INVALID_ARG` for unusable arguments. Unless
/// `out` is NULL or misaligned, `*out` is completely written in every case.
///
/// # Safety
/// `frame` must be NULL or point to `len` readable bytes, unchanged during the call (`len` may
/// be 0). `out` must be NULL or point to writable memory for one `roce_packet` (it need not be
/// initialized) that does not overlap the frame. No other thread may use `*out` during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_frame(
    frame: *const u8,
    len: usize,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(frame, len, core::ptr::null(), out, frame_into_zeroed) }
}

/// `roce_parse_frame` with options (`opts` may be NULL for the defaults), e.g. RoCEv2 on
/// another UDP port, or no ICRC verification.
///
/// # Safety
/// As `roce_parse_frame`; `opts` must be NULL or point to a readable `roce_options`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_frame_opts(
    frame: *const u8,
    len: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(frame, len, opts, out, frame_into_zeroed) }
}

/// Parses a native InfiniBand packet from its LRH (ibdump's ERF records after their header,
/// DLT_INFINIBAND captures, an HCA's raw packets): the LRH and VCRC in `out->lrh`, the GRH in
/// `out->grh` when LNH is 3, then the BTH and everything after it as `roce_parse_frame`
/// decodes them (`roce_version` is `ROCE_VERSION_INFINIBAND`); the ICRC over InfiniBand's
/// invariant fields. Returns as `roce_parse_frame`; an input shorter than the LRH is
/// `ROCE_ERR_TRUNCATED`, a packet of another transport (LNH 0 or 1) `ROCE_ERR_NOT_ROCE`
/// with `out->lrh` filled.
///
/// # Safety
/// As `roce_parse_frame`, with `packet` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_infiniband(
    packet: *const u8,
    len: usize,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(packet, len, core::ptr::null(), out, infiniband_into_zeroed) }
}

/// `roce_parse_infiniband` with options (`opts` may be NULL for the defaults; `udp_port` is
/// not used).
///
/// # Safety
/// As `roce_parse_frame_opts`, with `packet` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_infiniband_opts(
    packet: *const u8,
    len: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(packet, len, opts, out, infiniband_into_zeroed) }
}

/// Parses an IP packet (IPv4 or IPv6 by its version nibble), for captures and stacks without
/// an Ethernet header. `out->eth.present` is false; offsets count from the IP header.
/// Returns as `roce_parse_frame`; an empty input is `ROCE_ERR_TRUNCATED`, a version nibble
/// other than 4 or 6 is `ROCE_ERR_MALFORMED`.
///
/// # Safety
/// As `roce_parse_frame`, with `packet` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_ip(
    packet: *const u8,
    len: usize,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(packet, len, core::ptr::null(), out, ip_into_zeroed) }
}

/// `roce_parse_ip` with options (`opts` may be NULL for the defaults).
///
/// # Safety
/// As `roce_parse_frame_opts`, with `packet` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_ip_opts(
    packet: *const u8,
    len: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(packet, len, opts, out, ip_into_zeroed) }
}

/// Parses what follows an EtherType, for link types that give the EtherType without an
/// Ethernet header (Linux cooked capture): 0x0800 IPv4, 0x86dd IPv6, 0x8915 RoCEv1; any other
/// EtherType gives `ROCE_ERR_NOT_ROCE`. `opts` may be NULL for the defaults.
///
/// # Safety
/// As `roce_parse_frame_opts`, with `data` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_ethertype(
    ethertype: u16,
    data: *const u8,
    len: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe { call(data, len, opts, out, |d, o, out| ethertype_into_zeroed(ethertype, d, o, out)) }
}

/// Parses a UDP payload that starts with the BTH and ends with the ICRC, for stacks that
/// already stripped L2-L4 (the whole input is taken as the packet: strip Ethernet padding
/// first). The ICRC cannot be verified without the IP and UDP headers: `icrc_status` is
/// `ROCE_ICRC_NOT_CHECKED` (or `ROCE_ICRC_UNVERIFIABLE` below 4 bytes after the BTH).
/// Returns `ROCE_OK`, or `ROCE_ERR_TRUNCATED` when the input is shorter than a BTH.
///
/// # Safety
/// As `roce_parse_frame`, with `payload` for `frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_udp_payload(
    payload: *const u8,
    len: usize,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: the caller's contract is this function's.
    unsafe {
        call(payload, len, core::ptr::null(), out, |d, _, out| udp_payload_into_zeroed(d, out))
    }
}

/// Segments handled on the stack; longer chains are gathered in a heap array.
const STACK_SEGMENTS: usize = 16;

/// Parses an Ethernet frame held in `count` consecutive segments (a DPDK mbuf chain, an
/// iovec) where they lie, with the result `roce_parse_frame_opts` gives for the frame they
/// make end to end: the same struct, offsets counted from the frame's first byte. Nothing is
/// copied but headers that straddle a segment boundary (to the stack) and, for a CM MAD that
/// does, its 256 bytes; the ICRC is computed across the segments.
///
/// Returns as `roce_parse_frame_opts`; also `ROCE_ERR_NULL` when `segs` is NULL or a
/// segment of non-zero length has a NULL `data`, `ROCE_ERR_INVALID_ARG` when `segs` is
/// misaligned or the lengths add up past `PTRDIFF_MAX`. `count == 0` is an empty frame
/// (`ROCE_ERR_TRUNCATED`). `opts` may be NULL (the defaults).
///
/// # Safety
/// `segs` must be NULL or point to `count` readable `roce_segment`s, each with `data` NULL or
/// pointing to `len` readable bytes; none of it may change during the call. `out` as for
/// `roce_parse_frame`.
#[no_mangle]
pub unsafe extern "C" fn roce_parse_frame_segments(
    segs: *const roce_segment,
    count: usize,
    opts: *const roce_options,
    out: *mut roce_packet,
) -> c_int {
    // SAFETY: forwarded from the caller.
    let out = match unsafe { output(out) } {
        Ok(o) => o,
        Err(code) => return code,
    };
    // SAFETY: forwarded from the caller.
    let opts = match unsafe { options(opts) } {
        Ok(o) => o,
        Err(code) => return code,
    };
    if segs.is_null() {
        return ROCE_ERR_NULL;
    }
    if !segs.is_aligned() || count > isize::MAX as usize / core::mem::size_of::<roce_segment>() {
        return ROCE_ERR_INVALID_ARG;
    }
    // SAFETY: non-null, aligned, and the caller guarantees `count` readable segments that do
    // not change during the call; the size fits `isize` (checked above).
    let table = unsafe { core::slice::from_raw_parts(segs, count) };
    let mut total = 0usize;
    for s in table {
        if s.data.is_null() && s.len != 0 {
            return ROCE_ERR_NULL;
        }
        total = match total.checked_add(s.len) {
            Some(t) if t <= isize::MAX as usize => t,
            _ => return ROCE_ERR_INVALID_ARG,
        };
    }
    let slice = |s: &roce_segment| -> &[u8] {
        if s.len == 0 {
            &[]
        } else {
            // SAFETY: `data` is non-null (checked above) and points to `len` readable bytes
            // unchanged during the call (the caller's contract); `len` fits `isize`.
            unsafe { core::slice::from_raw_parts(s.data, s.len) }
        }
    };
    if count <= STACK_SEGMENTS {
        let mut arr: [&[u8]; STACK_SEGMENTS] = [&[]; STACK_SEGMENTS];
        for (slot, s) in arr.iter_mut().zip(table) {
            *slot = slice(s);
        }
        frame_segments_into_zeroed(arr.get(..count).unwrap_or(&[]), opts, out)
    } else {
        let v: Vec<&[u8]> = table.iter().map(slice).collect();
        frame_segments_into_zeroed(&v, opts, out)
    }
}

// ---------------------------------------------------------------------------------------------
// Strings and versions: static NUL-terminated strings, never freed, never NULL.
// ---------------------------------------------------------------------------------------------

/// A `&'static CStr` of a `const` `&str` expression, built at compile time (the string must
/// hold no NUL byte, or the build fails). Lets the C interface hand out the parser's own
/// strings without a second copy of them here.
macro_rules! const_cstr {
    ($s:expr) => {{
        const S: &str = $s;
        const N: usize = S.len() + 1;
        const B: [u8; N] = nul_terminated::<N>(S);
        const C: &CStr = match CStr::from_bytes_with_nul(&B) {
            Ok(c) => c,
            #[allow(clippy::panic)] // evaluated by the compiler: a build error, never at run time
            Err(_) => panic!("string holds a NUL byte"),
        };
        C
    }};
}

/// `s` followed by a NUL byte, as an array of `N` = `s.len() + 1` bytes.
#[allow(clippy::indexing_slicing)] // const evaluation: out of range fails the build
const fn nul_terminated<const N: usize>(s: &str) -> [u8; N] {
    let b = s.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < b.len() {
        out[i] = b[i];
        i += 1;
    }
    out
}

/// A one-line description of a status code returned by the parse functions ("ok",
/// "truncated", ...); "unknown status" for other values.
#[no_mangle]
pub extern "C" fn roce_status_str(status: c_int) -> *const c_char {
    let s: &CStr = match status {
        ROCE_OK => c"ok",
        ROCE_ERR_NULL => c"null pointer argument",
        ROCE_ERR_TRUNCATED => c"input truncated before the BTH",
        ROCE_ERR_MALFORMED => c"malformed header below the BTH",
        ROCE_ERR_NOT_ROCE => c"not a RoCE packet",
        ROCE_ERR_INVALID_ARG => c"invalid argument (misaligned pointer or length too large)",
        _ => c"unknown status",
    };
    s.as_ptr()
}

/// The opcode's name from the parser's opcode table, prefixed by its transport
/// ("RC_SEND_ONLY", "UD_SEND_ONLY", "CNP"); "RC_RESERVED", "UC_RESERVED", ... for reserved
/// opcodes and "VENDOR_SPECIFIC" for 0xC0-0xFF. Never NULL.
#[no_mangle]
pub extern "C" fn roce_opcode_name(opcode: u8) -> *const c_char {
    opcode_name_with_nul(opcode).as_ptr().cast()
}

/// The parser's description of one problem bit (`ROCE_PROBLEM_*`); "unknown problem" when
/// `bit` is not exactly one known bit. Never NULL.
#[no_mangle]
pub extern "C" fn roce_problem_str(bit: u32) -> *const c_char {
    match Problem::ALL.iter().find(|p| **p as u32 == bit) {
        Some(p) => problem_cstrs(*p).1.as_ptr(),
        None => c"unknown problem".as_ptr(),
    }
}

/// The stable code of one problem bit: "pad_nonzero" for `ROCE_PROBLEM_PAD_NONZERO`, the
/// constant's suffix in lower case, and the `problems[].code` of the JSON output; "unknown"
/// when `bit` is not exactly one known bit. Never NULL. Match on codes (or bits), never on
/// `roce_problem_str()`'s text, which may be reworded.
#[no_mangle]
pub extern "C" fn roce_problem_code(bit: u32) -> *const c_char {
    match Problem::ALL.iter().find(|p| **p as u32 == bit) {
        Some(p) => problem_cstrs(*p).0.as_ptr(),
        None => c"unknown".as_ptr(),
    }
}

/// The code and the description of a problem, as C strings: one list of the problems.
fn problem_cstrs(p: Problem) -> (&'static CStr, &'static CStr) {
    macro_rules! both {
        ($($v:ident)*) => {
            match p {
                $(Problem::$v => {
                    (const_cstr!(Problem::$v.code()), const_cstr!(Problem::$v.message()))
                })*
            }
        };
    }
    both!(
        TverNonZero PadCntInconsistent PadNonZero UnexpectedPayload AtomicWriteLength
        UdpLengthMismatch IpLengthMismatch Truncated ReservedBits ReservedOpcode VendorOpcode
        ShortForOpcode CnpLength CnpBecnClear CnpPsnNonZero RdLayoutMismatch Qp1QKey
        Ipv4Checksum IpFragment MadTruncated MadUnknownVersion MadUnknownAttribute IcrcBad
        GrhNextHeader ShortForBth ShortForIcrc IpHeaderLength TooManyVlanTags Ipv6ExtensionChain
        TunnelMalformed VcrcBad
    )
}

/// The name of a `ROCE_LAYER_*` value ("IPv4", "BTH", "AETH", ...); "none" for
/// `ROCE_LAYER_NONE`, "unknown layer" for other values. Never NULL.
#[no_mangle]
pub extern "C" fn roce_layer_name(layer: u8) -> *const c_char {
    macro_rules! names {
        ($($code:ident => $l:ident,)*) => {
            match layer {
                ROCE_LAYER_NONE => c"none",
                $($code => const_cstr!(Layer::$l.name()),)*
                _ => c"unknown layer",
            }
        };
    }
    let s: &CStr = names!(
        ROCE_LAYER_ETHERNET => Ethernet,
        ROCE_LAYER_VLAN => Vlan,
        ROCE_LAYER_IPV4 => Ipv4,
        ROCE_LAYER_IPV6 => Ipv6,
        ROCE_LAYER_IPV6_EXTENSIONS => Ipv6Extensions,
        ROCE_LAYER_UDP => Udp,
        ROCE_LAYER_GRH => Grh,
        ROCE_LAYER_BTH => Bth,
        ROCE_LAYER_RDETH => Rdeth,
        ROCE_LAYER_DETH => Deth,
        ROCE_LAYER_XRCETH => Xrceth,
        ROCE_LAYER_RETH => Reth,
        ROCE_LAYER_ATOMIC_ETH => AtomicEth,
        ROCE_LAYER_AETH => Aeth,
        ROCE_LAYER_ATOMIC_ACK_ETH => AtomicAckEth,
        ROCE_LAYER_IMMDT => ImmDt,
        ROCE_LAYER_IETH => Ieth,
        ROCE_LAYER_FETH => Feth,
        ROCE_LAYER_GRE => Gre,
        ROCE_LAYER_ERSPAN => Erspan,
        ROCE_LAYER_VXLAN => Vxlan,
        ROCE_LAYER_GENEVE => Geneve,
        ROCE_LAYER_LRH => Lrh,
    );
    s.as_ptr()
}

/// The stable code of a `ROCE_ENCAP_*` value ("gre", "erspan1", "erspan2", "erspan3",
/// "vxlan", "geneve": the parser's `EncapKind::code()`, never reworded); "none" for
/// `ROCE_ENCAP_NONE`, "unknown encapsulation" for other values. Never NULL.
#[no_mangle]
pub extern "C" fn roce_encap_name(kind: u8) -> *const c_char {
    macro_rules! names {
        ($($code:ident => $k:ident,)*) => {
            match kind {
                ROCE_ENCAP_NONE => c"none",
                $($code => const_cstr!(EncapKind::$k.code()),)*
                _ => c"unknown encapsulation",
            }
        };
    }
    let s: &CStr = names!(
        ROCE_ENCAP_GRE => Gre,
        ROCE_ENCAP_ERSPAN1 => ErspanI,
        ROCE_ENCAP_ERSPAN2 => ErspanII,
        ROCE_ENCAP_ERSPAN3 => ErspanIII,
        ROCE_ENCAP_VXLAN => Vxlan,
        ROCE_ENCAP_GENEVE => Geneve,
    );
    s.as_ptr()
}

/// The library version, "MAJOR.MINOR.PATCH" (the roce-parser-ffi crate version).
#[no_mangle]
pub extern "C" fn roce_parser_version() -> *const c_char {
    const_cstr!(env!("CARGO_PKG_VERSION")).as_ptr()
}

/// `ROCE_PARSER_ABI_VERSION` of the library: compare with the header's constant to detect
/// a header and a shared library that disagree on struct layouts.
#[no_mangle]
pub extern "C" fn roce_parser_abi_version() -> u32 {
    ROCE_PARSER_ABI_VERSION
}

/// `sizeof(roce_packet)` as the library sees it: another check against a stale header.
#[no_mangle]
pub extern "C" fn roce_packet_size() -> usize {
    core::mem::size_of::<roce_packet>()
}

// ---------------------------------------------------------------------------------------------
// CM MADs
// ---------------------------------------------------------------------------------------------

/// `roce_mad.cm_kind`: the MAD is not of the CM class (0x07).
pub const ROCE_CM_NONE: u8 = 0;
/// ClassPortInfo (attribute 0x0001): recognised, not decoded.
pub const ROCE_CM_CLASS_PORT_INFO: u8 = 1;
/// REQ (0x0010): `roce_mad.req`.
pub const ROCE_CM_REQ: u8 = 2;
/// MRA (0x0011): `roce_mad.mra`.
pub const ROCE_CM_MRA: u8 = 3;
/// REJ (0x0012): `roce_mad.rej`.
pub const ROCE_CM_REJ: u8 = 4;
/// REP (0x0013): `roce_mad.rep`.
pub const ROCE_CM_REP: u8 = 5;
/// RTU (0x0014): `roce_mad.rtu`.
pub const ROCE_CM_RTU: u8 = 6;
/// DREQ (0x0015): `roce_mad.dreq`.
pub const ROCE_CM_DREQ: u8 = 7;
/// DREP (0x0016): `roce_mad.drep`.
pub const ROCE_CM_DREP: u8 = 8;
/// SIDR_REQ (0x0017): `roce_mad.sidr_req`.
pub const ROCE_CM_SIDR_REQ: u8 = 9;
/// SIDR_REP (0x0018): `roce_mad.sidr_rep`.
pub const ROCE_CM_SIDR_REP: u8 = 10;
/// LAP (0x0019): `roce_mad.lap` (communication IDs only).
pub const ROCE_CM_LAP: u8 = 11;
/// APR (0x001A): `roce_mad.apr` (communication IDs only).
pub const ROCE_CM_APR: u8 = 12;
/// A CM attribute ID that is not a CM message (`ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE`).
pub const ROCE_CM_UNKNOWN: u8 = 255;

/// The 24-byte MAD header.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_mad_header {
    /// Base version.
    pub base_version: u8,
    /// 0x07 for CM.
    pub mgmt_class: u8,
    /// Class version.
    pub class_version: u8,
    /// Method.
    pub method: u8,
    /// Status.
    pub status: u16,
    /// Class specific.
    pub class_specific: u16,
    /// Transaction id.
    pub transaction_id: u64,
    /// Attribute id.
    pub attribute_id: u16,
    /// Reserved.
    pub reserved: u16,
    /// Attribute modifier.
    pub attribute_modifier: u32,
}

/// A path of a REQ.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_path {
    /// Local lid.
    pub local_lid: u16,
    /// Remote lid.
    pub remote_lid: u16,
    /// Local gid.
    pub local_gid: [u8; 16],
    /// Remote gid.
    pub remote_gid: [u8; 16],
    /// 20 bits.
    pub flow_label: u32,
    /// Packet rate.
    pub packet_rate: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Sl.
    pub sl: u8,
    /// Subnet local.
    pub subnet_local: bool,
    /// Local ack timeout.
    pub local_ack_timeout: u8,
}

/// RDMA-CM: the service ID taken apart and the IP header at the start of the private data.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_rdma_cm {
    /// The service ID has the RDMA-CM prefix: `port_space` and `dst_port` are set.
    pub service_present: bool,
    /// 0x02 TCP, 0x06 IPoIB, 0x11 UDP, 0x13 IB (or any other value).
    pub port_space: u8,
    /// The destination (listening) port, from the service ID.
    pub dst_port: u16,
    /// The private data holds the RDMA-CM IP header (REQ and SIDR_REQ to an RDMA-CM service).
    pub ip_present: bool,
    /// The header's version byte.
    pub version: u8,
    /// 4 or 6.
    pub ip_version: u8,
    /// Src port.
    pub src_port: u16,
    /// 16 bytes; IPv4 as IPv4-mapped IPv6 (`::ffff:a.b.c.d`).
    pub src_ip: [u8; 16],
    /// Dst ip.
    pub dst_ip: [u8; 16],
}

/// REQ.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_req {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Local qkey.
    pub local_qkey: u32,
    /// Service id.
    pub service_id: u64,
    /// Local ca guid.
    pub local_ca_guid: u64,
    /// Local qpn.
    pub local_qpn: u32,
    /// Local eecn.
    pub local_eecn: u32,
    /// Remote eecn.
    pub remote_eecn: u32,
    /// Starting psn.
    pub starting_psn: u32,
    /// Responder resources.
    pub responder_resources: u8,
    /// Initiator depth.
    pub initiator_depth: u8,
    /// Remote cm response timeout.
    pub remote_cm_response_timeout: u8,
    /// 0 RC, 1 UC, 3 XRC (the 2-bit field).
    pub transport_service_type: u8,
    /// End to end flow control.
    pub end_to_end_flow_control: bool,
    /// Local cm response timeout.
    pub local_cm_response_timeout: u8,
    /// Retry count.
    pub retry_count: u8,
    /// Path mtu.
    pub path_mtu: u8,
    /// Pkey.
    pub pkey: u16,
    /// Rdc exists.
    pub rdc_exists: bool,
    /// Rnr retry count.
    pub rnr_retry_count: u8,
    /// Max cm retries.
    pub max_cm_retries: u8,
    /// Srq.
    pub srq: bool,
    /// Extended transport type.
    pub extended_transport_type: u8,
    /// Primary path.
    pub primary_path: roce_cm_path,
    /// Alternate path.
    pub alternate_path: roce_cm_path,
    /// Offset of the private data in the MAD (present bytes only: cut by truncation).
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
    /// Rdma cm.
    pub rdma_cm: roce_rdma_cm,
}

/// REP.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_rep {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
    /// Local qkey.
    pub local_qkey: u32,
    /// Local qpn.
    pub local_qpn: u32,
    /// Local eecn.
    pub local_eecn: u32,
    /// Starting psn.
    pub starting_psn: u32,
    /// Local ca guid.
    pub local_ca_guid: u64,
    /// Responder resources.
    pub responder_resources: u8,
    /// Initiator depth.
    pub initiator_depth: u8,
    /// Target ack delay.
    pub target_ack_delay: u8,
    /// Failover accepted.
    pub failover_accepted: u8,
    /// End to end flow control.
    pub end_to_end_flow_control: bool,
    /// Rnr retry count.
    pub rnr_retry_count: u8,
    /// Srq.
    pub srq: bool,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// RTU and DREP: the communication IDs and private data.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_ids_data {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// REJ.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_rej {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 other, 3 reserved.
    pub message_rejected: u8,
    /// Reject info length.
    pub reject_info_length: u8,
    /// Reason.
    pub reason: u16,
    /// The additional rejection information (offset in the MAD, bytes present).
    pub ari_offset: usize,
    /// Ari len.
    pub ari_len: usize,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// MRA.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_mra {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 LAP, 3 reserved.
    pub message_mraed: u8,
    /// Service timeout.
    pub service_timeout: u8,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// DREQ.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_dreq {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
    /// Remote qpn eecn.
    pub remote_qpn_eecn: u32,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// SIDR_REQ.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_sidr_req {
    /// Request id.
    pub request_id: u32,
    /// Pkey.
    pub pkey: u16,
    /// Service id.
    pub service_id: u64,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
    /// Rdma cm.
    pub rdma_cm: roce_rdma_cm,
}

/// SIDR_REP.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_sidr_rep {
    /// Request id.
    pub request_id: u32,
    /// Status.
    pub status: u8,
    /// Additional info length.
    pub additional_info_length: u8,
    /// Qpn.
    pub qpn: u32,
    /// Qkey.
    pub qkey: u32,
    /// Service id.
    pub service_id: u64,
    /// Additional info offset.
    pub additional_info_offset: usize,
    /// Additional info len.
    pub additional_info_len: usize,
    /// Private data offset.
    pub private_data_offset: usize,
    /// Private data len.
    pub private_data_len: usize,
}

/// LAP and APR: communication IDs only.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_cm_ids {
    /// Local comm id.
    pub local_comm_id: u32,
    /// Remote comm id.
    pub remote_comm_id: u32,
}

/// A decoded MAD (`roce_parse_mad`). Plain values only: offsets count from the MAD's first
/// byte, into the caller's buffer. Only the struct named by `cm_kind` is filled (and only
/// when `cm_decoded`); the others are zero.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct roce_mad {
    /// Header.
    pub header: roce_mad_header,
    /// `ROCE_PROBLEM_MAD_TRUNCATED`, `ROCE_PROBLEM_MAD_UNKNOWN_VERSION`,
    /// `ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE` (the bits the packet's `problems` gets too).
    pub problems: u32,
    /// `ROCE_CM_*` from the attribute ID when the class is CM; `ROCE_CM_NONE` otherwise.
    pub cm_kind: u8,
    /// The message's fixed fields were all present and the versions known: its struct is
    /// filled (always true for ClassPortInfo, false for an unknown attribute).
    pub cm_decoded: bool,
    /// Class data bytes present after the header (up to 232), at offset 24.
    pub data_len: usize,
    /// Req.
    pub req: roce_cm_req,
    /// Rep.
    pub rep: roce_cm_rep,
    /// Rtu.
    pub rtu: roce_cm_ids_data,
    /// Rej.
    pub rej: roce_cm_rej,
    /// Mra.
    pub mra: roce_cm_mra,
    /// Dreq.
    pub dreq: roce_cm_dreq,
    /// Drep.
    pub drep: roce_cm_ids_data,
    /// Sidr req.
    pub sidr_req: roce_cm_sidr_req,
    /// Sidr rep.
    pub sidr_rep: roce_cm_sidr_rep,
    /// Lap.
    pub lap: roce_cm_ids,
    /// Apr.
    pub apr: roce_cm_ids,
}

/// Offset of `sub` in `mad` (0 for an empty `sub`).
fn sub_offset(mad: &[u8], sub: &[u8]) -> usize {
    if sub.is_empty() {
        return 0;
    }
    (sub.as_ptr() as usize).wrapping_sub(mad.as_ptr() as usize)
}

fn cm_kind_of(a: roce_parser::CmAttribute) -> u8 {
    use roce_parser::CmAttribute as A;
    match a {
        A::ClassPortInfo => ROCE_CM_CLASS_PORT_INFO,
        A::Req => ROCE_CM_REQ,
        A::Mra => ROCE_CM_MRA,
        A::Rej => ROCE_CM_REJ,
        A::Rep => ROCE_CM_REP,
        A::Rtu => ROCE_CM_RTU,
        A::Dreq => ROCE_CM_DREQ,
        A::Drep => ROCE_CM_DREP,
        A::SidrReq => ROCE_CM_SIDR_REQ,
        A::SidrRep => ROCE_CM_SIDR_REP,
        A::Lap => ROCE_CM_LAP,
        A::Apr => ROCE_CM_APR,
        A::Unknown(_) => ROCE_CM_UNKNOWN,
    }
}

fn cm_path(p: &roce_parser::CmPath) -> roce_cm_path {
    roce_cm_path {
        local_lid: p.local_lid,
        remote_lid: p.remote_lid,
        local_gid: p.local_gid,
        remote_gid: p.remote_gid,
        flow_label: p.flow_label,
        packet_rate: p.packet_rate,
        traffic_class: p.traffic_class,
        hop_limit: p.hop_limit,
        sl: p.sl,
        subnet_local: p.subnet_local,
        local_ack_timeout: p.local_ack_timeout,
    }
}

fn rdma_cm(
    sid: Option<roce_parser::RdmaCmServiceId>,
    ip: Option<roce_parser::RdmaCmIpHeader>,
) -> roce_rdma_cm {
    let mut o = roce_rdma_cm::default();
    if let Some(s) = sid {
        o.service_present = true;
        o.port_space = s.port_space.to_u8();
        o.dst_port = s.port;
    }
    if let Some(h) = ip {
        o.ip_present = true;
        o.version = h.version;
        o.ip_version = h.ip_version;
        o.src_port = h.src_port;
        o.src_ip = ip16(h.src_ip);
        o.dst_ip = ip16(h.dst_ip);
    }
    o
}

/// Fills `out` (zeroed) from the MAD `mad`; the status to return.
fn mad_into_zeroed(mad: &[u8], out: &mut roce_mad) -> c_int {
    use roce_parser::CmMessage as M;
    let m = match roce_parser::parse_mad(mad) {
        Ok(m) => m,
        Err(_) => return ROCE_ERR_TRUNCATED,
    };
    let h = &m.header;
    out.header = roce_mad_header {
        base_version: h.base_version,
        mgmt_class: h.mgmt_class.to_u8(),
        class_version: h.class_version,
        method: h.method.to_u8(),
        status: h.status,
        class_specific: h.class_specific,
        transaction_id: h.transaction_id,
        attribute_id: h.attribute_id,
        reserved: h.reserved,
        attribute_modifier: h.attribute_modifier,
    };
    out.problems = m.problems.bits();
    out.cm_kind = m.cm_attribute().map_or(ROCE_CM_NONE, cm_kind_of);
    out.data_len = m.data.len();
    let pd = |s: &[u8]| (sub_offset(mad, s), s.len());
    out.cm_decoded = matches!(m.cm, Some(c) if !matches!(c, M::Unknown(_)));
    match m.cm {
        Some(M::Req(r)) => {
            let (po, pl) = pd(r.private_data);
            out.req = roce_cm_req {
                local_comm_id: r.local_comm_id,
                local_qkey: r.local_qkey,
                service_id: r.service_id,
                local_ca_guid: r.local_ca_guid,
                local_qpn: r.local_qpn,
                local_eecn: r.local_eecn,
                remote_eecn: r.remote_eecn,
                starting_psn: r.starting_psn,
                responder_resources: r.responder_resources,
                initiator_depth: r.initiator_depth,
                remote_cm_response_timeout: r.remote_cm_response_timeout,
                transport_service_type: r.transport_service_type.to_bits(),
                end_to_end_flow_control: r.end_to_end_flow_control,
                local_cm_response_timeout: r.local_cm_response_timeout,
                retry_count: r.retry_count,
                path_mtu: r.path_mtu,
                pkey: r.pkey,
                rdc_exists: r.rdc_exists,
                rnr_retry_count: r.rnr_retry_count,
                max_cm_retries: r.max_cm_retries,
                srq: r.srq,
                extended_transport_type: r.extended_transport_type,
                primary_path: cm_path(&r.primary_path),
                alternate_path: cm_path(&r.alternate_path),
                private_data_offset: po,
                private_data_len: pl,
                rdma_cm: rdma_cm(r.rdma_cm_service(), r.rdma_cm_ip_header()),
            };
        }
        Some(M::Rep(r)) => {
            let (po, pl) = pd(r.private_data);
            out.rep = roce_cm_rep {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                local_qkey: r.local_qkey,
                local_qpn: r.local_qpn,
                local_eecn: r.local_eecn,
                starting_psn: r.starting_psn,
                local_ca_guid: r.local_ca_guid,
                responder_resources: r.responder_resources,
                initiator_depth: r.initiator_depth,
                target_ack_delay: r.target_ack_delay,
                failover_accepted: r.failover_accepted,
                end_to_end_flow_control: r.end_to_end_flow_control,
                rnr_retry_count: r.rnr_retry_count,
                srq: r.srq,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Rtu(r)) => {
            let (po, pl) = pd(r.private_data);
            out.rtu = roce_cm_ids_data {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Drep(r)) => {
            let (po, pl) = pd(r.private_data);
            out.drep = roce_cm_ids_data {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Rej(r)) => {
            let (po, pl) = pd(r.private_data);
            let (ao, al) = pd(r.ari);
            out.rej = roce_cm_rej {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                message_rejected: r.message_rejected.to_bits(),
                reject_info_length: r.reject_info_length,
                reason: r.reason.to_u16(),
                ari_offset: ao,
                ari_len: al,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Mra(r)) => {
            let (po, pl) = pd(r.private_data);
            out.mra = roce_cm_mra {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                message_mraed: r.message_mraed.to_bits(),
                service_timeout: r.service_timeout,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Dreq(r)) => {
            let (po, pl) = pd(r.private_data);
            out.dreq = roce_cm_dreq {
                local_comm_id: r.local_comm_id,
                remote_comm_id: r.remote_comm_id,
                remote_qpn_eecn: r.remote_qpn_eecn,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::SidrReq(r)) => {
            let (po, pl) = pd(r.private_data);
            out.sidr_req = roce_cm_sidr_req {
                request_id: r.request_id,
                pkey: r.pkey,
                service_id: r.service_id,
                private_data_offset: po,
                private_data_len: pl,
                rdma_cm: rdma_cm(r.rdma_cm_service(), r.rdma_cm_ip_header()),
            };
        }
        Some(M::SidrRep(r)) => {
            let (po, pl) = pd(r.private_data);
            let (ao, al) = pd(r.additional_info);
            out.sidr_rep = roce_cm_sidr_rep {
                request_id: r.request_id,
                status: r.status.to_u8(),
                additional_info_length: r.additional_info_length,
                qpn: r.qpn,
                qkey: r.qkey,
                service_id: r.service_id,
                additional_info_offset: ao,
                additional_info_len: al,
                private_data_offset: po,
                private_data_len: pl,
            };
        }
        Some(M::Lap(r)) => {
            out.lap =
                roce_cm_ids { local_comm_id: r.local_comm_id, remote_comm_id: r.remote_comm_id };
        }
        Some(M::Apr(r)) => {
            out.apr =
                roce_cm_ids { local_comm_id: r.local_comm_id, remote_comm_id: r.remote_comm_id };
        }
        Some(M::ClassPortInfo) | Some(M::Unknown(_)) | None => {}
    }
    ROCE_OK
}

/// Decodes a MAD: the UD payload of a packet to QP1 (`buffer + payload_offset`,
/// `payload_captured` bytes of a `roce_packet`; bytes past 256 are ignored), with the same
/// validation as the Rust `parse_mad`: the header, the CM message of a CM-class MAD and the
/// problems in `out->problems`. A C++ connection manager can check `out->problems` and
/// `out->cm_decoded` before it uses the message.
///
/// Returns `ROCE_OK` when the 24-byte header is present (a MAD shorter than 256 bytes has
/// `ROCE_PROBLEM_MAD_TRUNCATED`; its message is decoded when its fixed fields are present,
/// the private data cut to what is there), `ROCE_ERR_TRUNCATED` below 24 bytes (`*out` all
/// zero), `ROCE_ERR_NULL` / `ROCE_ERR_INVALID_ARG` as `roce_parse_frame`.
/// Unless `out` is NULL or misaligned, `*out` is completely written in every case.
///
/// # Safety
/// `mad` must be NULL or point to `len` readable bytes, unchanged during the call. `out` must
/// be NULL or point to writable memory for one `roce_mad` (it need not be initialized).
#[no_mangle]
pub unsafe extern "C" fn roce_parse_mad(mad: *const u8, len: usize, out: *mut roce_mad) -> c_int {
    if out.is_null() {
        return ROCE_ERR_NULL;
    }
    if !out.is_aligned() {
        return ROCE_ERR_INVALID_ARG;
    }
    // SAFETY: `out` is non-null and aligned, and the caller guarantees it is valid for writes
    // of a `roce_mad`. It is written whole (all-zero bytes are a valid `roce_mad`, equal to
    // its default: integers, `bool`s and arrays and structs of those) before a reference to
    // it is made.
    let out = unsafe {
        out.write_bytes(0, 1);
        &mut *out
    };
    // SAFETY: forwarded from the caller.
    match unsafe { input(mad, len) } {
        Ok(m) => mad_into_zeroed(m, out),
        Err(code) => code,
    }
}

/// `sizeof(roce_mad)` as the library was built, to check against the header.
#[no_mangle]
pub extern "C" fn roce_mad_size() -> usize {
    core::mem::size_of::<roce_mad>()
}
