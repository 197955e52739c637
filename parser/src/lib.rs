//! roce-parser: a zero-copy, `no_std`, panic-free dissector for RoCEv2, RoCEv1 and native
//! InfiniBand.
//!
//! It takes one frame (Ethernet, or from the IP header or the UDP payload on, or a native
//! InfiniBand packet from its LRH) and gives a
//! [`Packet`]: the Ethernet, VLAN, IP and UDP fields, and for RoCE the [`Roce`] packet, with
//! the BTH, the extended transport headers the opcode carries (InfiniBand Architecture
//! Specification Vol. 1, chapter 9; the RoCEv2 annex A17), the payload, the ICRC verdict and
//! every [`Problem`] found. Nothing is allocated and no input makes it panic: a damaged frame
//! yields the headers it fully holds, and [`Packet::stop`] says where and why parsing stopped.
//! [`FrameBuilder`] writes frames (correct lengths, pad and ICRC), for tests and fuzzing.
//!
//! ```
//! use roce_parser::{parse_ethernet, BthRepr, Config, FrameBuilder, IcrcStatus, Network};
//!
//! // An RC SEND_ONLY (opcode 0x04) of 5 bytes to QP 0x12 at PSN 100, over IPv4.
//! let bth = BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x12, psn: 100, ..Default::default() };
//! let mut builder = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
//! builder.payload = b"hello";
//! let mut buf = [0u8; 128];
//! let len = builder.emit(&mut buf)?;
//!
//! let packet = parse_ethernet(&buf[..len], &Config::default())?;
//! let roce = packet.roce.expect("UDP destination port 4791: RoCEv2");
//! assert_eq!(roce.opcode_name(), "RC_SEND_ONLY");
//! assert_eq!((roce.bth.dest_qp, roce.bth.psn), (0x12, 100));
//! assert_eq!(roce.payload, b"hello");
//! // 5 payload bytes and 3 of pad: payload plus pad is a multiple of 4.
//! assert_eq!(roce.bth.padcnt, 3);
//! assert_eq!(roce.icrc_status, IcrcStatus::Ok);
//! assert!(packet.problems.is_empty());
//!
//! // One bit flipped in the payload (before the 3 pad bytes and the 4-byte ICRC): the
//! // ICRC no longer matches, and the status says what it should have been.
//! buf[len - 8] ^= 1;
//! let packet = parse_ethernet(&buf[..len], &Config::default())?;
//! let roce = packet.roce.expect("still RoCEv2");
//! assert_eq!(roce.payload, b"helln");
//! assert!(matches!(roce.icrc_status, IcrcStatus::Bad { .. }));
//! # Ok::<(), roce_parser::Error>(())
//! ```
//!
//! # What is where
//!
//! Everything is at the crate root.
//!
//! - Parsing: [`parse_ethernet`], [`parse_ethernet_into`] (into a [`Packet`] you reuse),
//!   [`parse_ip`], [`parse_ethertype_payload`] and [`parse_udp_payload`], set up by a
//!   [`Config`] (the RoCEv2 UDP ports, ICRC verification; [`Checksums`] carries what
//!   verification found from a thread that verified to one that parsed without it); frames held in pieces (a DPDK mbuf
//!   chain, an iovec) with [`parse_ethernet_segments`] and a [`SegmentScratch`], without
//!   joining them; a frame's first headers only, cheaply, with [`parse_prefix`] and
//!   [`parse_ethertype_prefix`]. Native InfiniBand with [`parse_infiniband`] (and
//!   [`parse_infiniband_into`], [`parse_infiniband_prefix`]): the LRH ([`Lrh`], [`LrhRepr`],
//!   [`Lnh`]), the GRH when LNH says so, the same transport, the ICRC over InfiniBand's
//!   invariant fields and the VCRC ([`Packet::vcrc`], [`compute_vcrc`]).
//! - What a parse gives: the [`Packet`] ([`EthernetInfo`], [`VlanTag`], [`IpInfo`], [`Ecn`],
//!   [`UdpInfo`]) and its [`Roce`] ([`RoceVersion`], [`IcrcStatus`]); the [`Problems`] that did
//!   not stop parsing (a bit set of [`Problem`]s) and the [`Error`] that did ([`ErrorKind`], at a
//!   [`Layer`] and an offset).
//! - Headers, each as a zero-copy view over bytes (`Bth<T>`, `Reth<T>`, ...: getters, and
//!   setters when `T: AsMut<[u8]>`) and a repr of plain values (`BthRepr`, `RethRepr`, ...:
//!   `parse`, `emit`, `LEN`, the header's length on the wire): [`Bth`], [`Grh`], and the
//!   extended transport headers of [`ExtHeader::ALL`] ([`Rdeth`], [`Deth`], [`Xrceth`],
//!   [`Reth`], [`AtomicEth`], [`Aeth`], [`AtomicAckEth`], [`ImmDt`], [`Ieth`], [`Feth`]),
//!   which a packet holds in its [`ExtHeaders`]. The AETH's syndrome is an [`AethKind`]
//!   ([`NakCode`], [`rnr_timer_us`]).
//! - The opcode table, the one place that knows each BTH opcode: [`OPCODES`],
//!   [`lookup_opcode`], [`opcode_name`]; an [`OpcodeInfo`] gives the opcode's [`Transport`],
//!   [`Operation`], [`Position`], [`Role`], extended headers in wire order, header length and
//!   [`PayloadRule`].
//! - The ICRC over an [`IcrcNetwork`]: [`compute_icrc_span`] (the parser's, one pass over the
//!   frame) and [`compute_icrc`] (for headers that are not back to back in memory).
//! - Tunnels (switch mirrors and overlays), taken off before the RoCE parse: ERSPAN I, II and
//!   III, GRE, VXLAN and Geneve, one table ([`ENCAPSULATIONS`], [`EncapKind`]); a packet's
//!   [`Packet::encap`] keeps each tunnel's outer layers ([`Encap`], [`Tunnel`]: [`GreRepr`],
//!   [`ErspanIIRepr`], [`ErspanIIIRepr`], [`VxlanRepr`], [`GeneveRepr`]) and the rest of the
//!   packet describes the inner frame, parsed as a plain one.
//! - PSNs: [`Psn`], 24 bits whose order and arithmetic wrap, and [`read_psns`].
//! - Connection management, below.
//! - Building frames: [`FrameBuilder`] over a [`Network`] ([`Ipv4Spec`], [`Ipv6Spec`]); wrapping
//!   them as a mirror or an overlay does with [`TunnelBuilder`].
//!
//! # Connection management
//!
//! RC connections are set up (IBTA Vol. 1 chapter 12) by CM MADs sent as UD SEND_ONLY
//! (opcode 0x64) to DestQP 1 ([`QP1`]) with the DETH Q_Key 0x80010000 ([`GSI_QKEY`]). The UD
//! payload is one 256-byte MAD ([`MAD_LEN`]): a 24-byte header ([`MadHeader`]) and 232 bytes of
//! class data ([`MAD_DATA_LEN`]), which for the CM class (0x07, class version 2) is one message
//! chosen by the attribute ID ([`CmAttribute`]): [`Req`], [`Rep`], [`Rtu`], [`Rej`], [`Mra`],
//! [`Dreq`], [`Drep`], [`SidrReq`], [`SidrRep`], [`Lap`] and [`Apr`] (communication IDs only).
//! [`RdmaCmServiceId`] and [`RdmaCmIpHeader`] take apart the RDMA-CM service ID and the IP
//! header RDMA-CM puts at the start of REQ private data.
//!
//! Each message has a zero-copy view over the MAD data (`Req<T>`, ...) with getters and (for
//! `T: AsMut<[u8]>`) setters, and a `...Repr` of plain values with `parse`, `emit` and
//! `buffer_len`. Reprs borrow their private data (`&'a [u8]`), so nothing allocates.
//!
//! [`parse_mad`] is the entry point; the frame parser calls it for every UD SEND to QP1
//! ([`Roce::mad`]). It fails only when the 24-byte MAD header is missing and otherwise
//! reports [`Problem`]s:
//! - `MadTruncated` when the MAD is shorter than 256 bytes. A CM message is still decoded when
//!   its fixed fields (everything before the private data) are all present, with the private
//!   data (and REJ ARI / SIDR_REP additional info, which belong to the fixed part) cut to what
//!   is there; otherwise `cm` is `None`.
//! - `MadUnknownVersion` when the base version is not 1, or the CM class version is not 2:
//!   the header is decoded, the body is not (`cm` is `None`).
//! - `MadUnknownAttribute` for a CM attribute ID that is not a CM message
//!   (`cm` is `Some(CmMessage::Unknown(id))`).
//!
//! MADs of other classes are decoded to the header (the class is named by [`MgmtClass`]).
//!
//! To build MADs, every repr has `emit_mad(tid, out)` (and [`CmMessage::emit_mad`] /
//! [`CmMessage::emit_mad_with_header`]) writing a whole zero-padded 256-byte MAD. Templates:
//! [`ReqRepr::rdma_cm`], [`RepRepr::reply_to`], [`RtuRepr::new`], [`DreqRepr::new`],
//! [`DrepRepr::new`], [`RejRepr::new`], [`RdmaCmIpHeader::new`].
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

#[cfg(any(feature = "std", test))]
extern crate std;

mod builder;
mod bytes;
mod cm;
mod encap;
mod error;
mod headers;
mod icrc;
mod opcode;
mod packet;
mod prefix;
mod problems;
mod psn;
mod roce;
mod segments;

pub use builder::{FrameBuilder, Ipv4Spec, Ipv6Spec, Network, TunnelBuilder};
pub use cm::{
    drep::DREP_PRIVATE_DATA_LEN,
    dreq::DREQ_PRIVATE_DATA_LEN,
    mra::MRA_PRIVATE_DATA_LEN,
    rdma_cm::{service_id as rdma_cm_service_id, RDMA_CM_IP_HEADER_LEN, RDMA_CM_SERVICE_ID_PREFIX},
    rej::{REJ_ARI_LEN, REJ_PRIVATE_DATA_LEN},
    rep::REP_PRIVATE_DATA_LEN,
    req::REQ_PRIVATE_DATA_LEN,
    rtu::RTU_PRIVATE_DATA_LEN,
    sidr::{SIDR_REP_ADDITIONAL_INFO_LEN, SIDR_REP_PRIVATE_DATA_LEN, SIDR_REQ_PRIVATE_DATA_LEN},
};
pub use cm::{
    gid_to_ip, ip_to_gid, mtu_bytes, mtu_code, parse_mad, Apr, AprRepr, CmAttribute, CmMessage,
    CmPath, CmPathView, Drep, DrepRepr, Dreq, DreqRepr, Lap, LapRepr, Mad, MadHeader,
    MadHeaderRepr, MessageRef, Method, MgmtClass, Mra, MraRepr, PortSpace, RdmaCmHeader,
    RdmaCmIpHeader, RdmaCmServiceId, Rej, RejRepr, RejectReason, Rep, RepRepr, Req, ReqRepr, Rtu,
    RtuRepr, SidrRep, SidrRepRepr, SidrReq, SidrReqRepr, SidrStatus, TransportServiceType,
    CM_CLASS_VERSION, GSI_QKEY, MAD_BASE_VERSION, MAD_DATA_LEN, MAD_HEADER_LEN, MAD_LEN, QP1,
};
pub use encap::{
    Carrier, Encap, EncapInfo, EncapKind, ErspanIIIRepr, ErspanIIRepr, ErspanPlatform,
    GeneveOption, GeneveRepr, GreRepr, Tunnel, VxlanRepr, ENCAPSULATIONS, ENCAP_CODES,
    GENEVE_UDP_PORT, GRE_PROTOCOL_ERSPAN, GRE_PROTOCOL_ERSPAN3, GRE_PROTOCOL_TEB, IP_PROTOCOL_GRE,
    MAX_ENCAP, VXLAN_UDP_PORT,
};
pub use error::{Error, ErrorKind, Layer, Result};
pub use headers::{
    aeth::{rnr_timer_us, AethDescription, RNR_TIMER_US},
    grh::NXTHDR_BTH,
    lrh::VCRC_LEN,
    AethKind, Bth, BthRepr, ExtHeader, ExtHeaders, Grh, GrhRepr, Lnh, Lrh, LrhRepr, NakCode,
};
pub use icrc::{compute_icrc, compute_icrc_span, compute_vcrc, IcrcNetwork, IcrcStatus, VCRC};
pub use opcode::{
    lookup as lookup_opcode, name as opcode_name, name_with_nul as opcode_name_with_nul,
    OpcodeInfo, Operation, PayloadRule, Position, Role, Transport, OPCODES,
};
pub use packet::{
    parse_ethernet, parse_ethernet_into, parse_ethertype_payload, parse_infiniband,
    parse_infiniband_into, parse_ip, parse_udp_payload, Checksums, Config, Ecn, EthernetInfo,
    IpInfo, Packet, UdpInfo, Vcrc, VlanTag, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCEV1,
    MAX_EXTRA_UDP_PORTS, MAX_VLANS, ROCEV2_UDP_PORT,
};
pub use prefix::{parse_ethertype_prefix, parse_infiniband_prefix, parse_prefix, Prefix};
pub use problems::{Problem, Problems};
pub use psn::{read_psns, Psn, PSN_MASK};
pub use roce::{Roce, RoceVersion, CNP_BODY_LEN, ICRC_LEN};
pub use segments::{
    parse_ethernet_segments, Pieces, SegmentScratch, Segmented, SEGMENT_HEAD_MAX, SEGMENT_HEAD_MIN,
};

/// Re-exports, from the rows of `ext_header_table!` (`headers/mod.rs`), every extended
/// header's view and repr at the crate root: a new row needs no line here.
macro_rules! reexport_ext_headers {
    ($(
        $(#[$doc:meta])*
        $slot:ident: $view:ident, $repr:ident, $name:literal, reserved: |$h:pat_param| $reserved:expr;
    )*) => {
        pub use headers::{$($view, $repr,)*};
    };
}
headers::ext_header_table!(reexport_ext_headers);

/// The cargo features this build of the crate was compiled with ("std", "serde",
/// "arbitrary"), for version banners such as `roce-inspect --version`.
pub const FEATURES: &[&str] = &[
    #[cfg(feature = "std")]
    "std",
    #[cfg(feature = "serde")]
    "serde",
    #[cfg(feature = "arbitrary")]
    "arbitrary",
];
