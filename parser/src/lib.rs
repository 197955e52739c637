//! roce-parser: a zero-copy, `no_std`, panic-free dissector for RoCEv2 and RoCEv1.
//!
//! It takes one frame (Ethernet, or from the IP header or the UDP payload on) and gives a
//! [`Packet`]: the Ethernet, VLAN, IP and UDP fields, and for RoCE the [`Roce`] packet, with
//! the BTH, the extended transport headers the opcode carries (InfiniBand Architecture
//! Specification Vol. 1, chapter 9; the RoCEv2 annex A17), the payload, the ICRC verdict and
//! every [`Problem`] found. Nothing is allocated and no input makes it panic: a damaged frame
//! yields the headers it fully holds, and [`Packet::stop`] says where and why parsing stopped.
//! [`FrameBuilder`] writes frames (correct lengths, pad and ICRC), for tests and fuzzing.
//!
//! ```
//! use roce_parser::headers::BthRepr;
//! use roce_parser::{parse_ethernet, Config, FrameBuilder, IcrcStatus, Network};
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
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

#[cfg(any(feature = "std", test))]
extern crate std;

mod bytes;
pub mod error;
pub mod problems;

pub use error::{Error, ErrorKind, Layer, Result};
pub use problems::{Problem, Problems};
pub mod cm;
pub mod headers;
pub mod opcode;

pub use headers::{ExtHeader, ExtHeaders};
pub use opcode::{OpcodeInfo, Operation, PayloadRule, Position, Role, Transport};
pub mod icrc;
pub mod packet;
mod prefix;
mod psn;
pub mod roce;
pub mod segments;

pub use icrc::IcrcStatus;
pub use packet::{
    parse_ethernet, parse_ethernet_into, parse_ethertype_payload, parse_ip, parse_udp_payload,
    Config, Ecn, EthernetInfo, IpInfo, Packet, UdpInfo, VlanTag, MAX_EXTRA_UDP_PORTS,
    ROCEV2_UDP_PORT,
};
pub use prefix::{parse_ethertype_prefix, parse_prefix, Prefix};
pub use psn::{read_psns, Psn, PSN_MASK};
pub use roce::{Roce, RoceVersion};
pub use segments::{parse_ethernet_segments, SegmentScratch, Segmented};
pub mod builder;
pub use builder::{FrameBuilder, Ipv4Spec, Ipv6Spec, Network};

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
