//! roce-parser: a zero-copy, `no_std`, panic-free dissector for RoCEv2 and RoCEv1.
#![no_std]
#![forbid(unsafe_code)]
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
pub mod roce;
pub mod segments;

pub use icrc::IcrcStatus;
pub use packet::{
    parse_ethernet, parse_ethernet_into, parse_ethertype_payload, parse_ip, parse_udp_payload,
    Config, EthernetInfo, IpInfo, Packet, UdpInfo, VlanTag, MAX_EXTRA_UDP_PORTS, ROCEV2_UDP_PORT,
};
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
