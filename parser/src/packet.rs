//! Whole frames: Ethernet (with 802.1Q / 802.1ad tags), IPv4 / IPv6 and UDP through
//! etherparse, then RoCEv2 on the configured UDP port or RoCEv1 on EtherType 0x8915; and
//! native InfiniBand packets (LRH, the GRH when LNH says so, then the same transport) with
//! [`parse_infiniband`].
//!
//! Parsing is lax, like etherparse's `LaxSlicedPacket`: a truncated frame still yields
//! every header it fully holds, `stop` says where and why parsing ended, and `problems`
//! collects what is wrong without stopping.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{
    checksum::Sum16BitWords, err, Ethernet2HeaderSlice, IpNumber, Ipv4HeaderSlice,
    Ipv6ExtensionsSlice, Ipv6HeaderSlice, SingleVlanHeaderSlice, UdpHeaderSlice,
};

use crate::encap::{self, Encap, EncapKind, IP_PROTOCOL_GRE, MAX_ENCAP};
use crate::error::{Error, Layer, Result};
use crate::headers::lrh::VCRC_LEN;
use crate::headers::{BthRepr, Grh, GrhRepr, Lnh, Lrh, LrhRepr};
use crate::icrc::{self, IcrcNetwork, IcrcStatus};
use crate::problems::{Problem, Problems};
use crate::roce::{parse_transport, Framing, Roce, RoceVersion};
use crate::segments::{Source, Whole};

/// The IANA port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// The EtherType of RoCEv1.
pub const ETHERTYPE_ROCEV1: u16 = 0x8915;
/// The EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// The EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// VLAN tags recorded in [`Packet::vlans`]; deeper stacks are skipped.
pub const MAX_VLANS: usize = 2;
/// VLAN tags walked before the frame is called malformed.
pub(crate) const VLAN_LIMIT: usize = 8;

/// Ports that [`Config::extra_udp_ports`] can hold besides [`Config::udp_port`].
pub const MAX_EXTRA_UDP_PORTS: usize = 3;

/// How to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// UDP destination port that marks RoCEv2 (4791 unless a lab uses another).
    pub udp_port: u16,
    /// More UDP destination ports that also mark RoCEv2 (as Wireshark's "Decode As" adds a
    /// port beside 4791); 0 is no port (UDP port 0 is reserved). A fixed array so that the
    /// configuration stays `Copy` and allocation-free (no_std).
    pub extra_udp_ports: [u16; MAX_EXTRA_UDP_PORTS],
    /// Verify the ICRC (and the IPv4 header checksum).
    pub verify: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            udp_port: ROCEV2_UDP_PORT,
            extra_udp_ports: [0; MAX_EXTRA_UDP_PORTS],
            verify: true,
        }
    }
}

impl Config {
    /// Whether UDP destination port `port` carries RoCEv2 under this configuration.
    ///
    /// ```
    /// use roce_parser::Config;
    /// let cfg = Config { udp_port: 4791, extra_udp_ports: [4792, 0, 0], ..Config::default() };
    /// assert!(cfg.is_rocev2_port(4791) && cfg.is_rocev2_port(4792));
    /// assert!(!cfg.is_rocev2_port(0) && !cfg.is_rocev2_port(4793));
    /// ```
    pub fn is_rocev2_port(&self, port: u16) -> bool {
        port == self.udp_port || (port != 0 && self.extra_udp_ports.contains(&port))
    }
}

/// Ethernet II header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetInfo {
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// The EtherType after any VLAN tags.
    pub ethertype: u16,
}

/// One 802.1Q / 802.1ad tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VlanTag {
    /// The TPID that announced the tag (0x8100, 0x88a8, 0x9100).
    pub tpid: u16,
    /// PCP: the 3-bit priority code point (the PFC priority on lossless RoCE fabrics).
    pub pcp: u8,
    /// DEI: drop eligible indicator.
    pub dei: bool,
    /// VID: the 12-bit VLAN identifier.
    pub vid: u16,
}

/// The ECN codepoint of a traffic class (RFC 3168, section 5): the two low bits of the IPv4
/// TOS, the IPv6 traffic class, or RoCEv1's GRH TClass. A switch whose queue fills marks an
/// ECN-capable packet CE instead of dropping it; the receiving NIC answers with a CNP and the
/// sender slows down (RoCEv2 annex A17.9, DCQCN).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// 0b00: Not-ECT, the sender does not take part (a congested switch drops it).
    NotEct,
    /// 0b01: ECT(1), ECN-capable transport.
    Ect1,
    /// 0b10: ECT(0), ECN-capable transport (what RoCE NICs send).
    Ect0,
    /// 0b11: CE, congestion experienced on the way.
    Ce,
}

impl Ecn {
    /// The codepoint of a traffic class's two low bits (the higher bits are ignored).
    pub const fn from_bits(traffic_class: u8) -> Ecn {
        match traffic_class & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }

    /// RFC 3168's name: `Not-ECT`, `ECT(1)`, `ECT(0)`, `CE`.
    pub const fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "Not-ECT",
            Ecn::Ect1 => "ECT(1)",
            Ecn::Ect0 => "ECT(0)",
            Ecn::Ce => "CE",
        }
    }
}

/// IPv4 or IPv6 header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    /// 4 or 6.
    pub version: u8,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// DSCP: the 6-bit differentiated services code point (RoCE traffic class).
    pub dscp: u8,
    /// ECN: 2 bits, 0 not ECN-capable, 1/2 ECT, 3 CE (congestion experienced; CE marks
    /// are what make the receiver send CNPs).
    pub ecn: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// IPv6 flow label.
    pub flow_label: u32,
    /// IPv4 identification.
    pub identification: u16,
    /// Protocol / next header after any IPv6 extension headers.
    pub protocol: u8,
    /// Offset of the IP header in the input.
    pub offset: usize,
    /// IPv4 header with options, or the 40-byte IPv6 header.
    pub header_len: usize,
    /// IPv6 extension headers.
    pub ext_len: usize,
    /// Total length the header announces (IPv4 total length, IPv6 40 + payload length).
    pub total_len: usize,
}

/// UDP header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpInfo {
    /// Source port: flow entropy for RoCEv2, not checked.
    pub sport: u16,
    /// Destination port: 4791 (or a configured port) for RoCEv2.
    pub dport: u16,
    /// Length field: header plus payload, in bytes.
    pub len: u16,
    /// Checksum field as sent (RoCEv2 senders usually leave it 0; not verified).
    pub checksum: u16,
    /// Offset of the UDP header in the input.
    pub offset: usize,
}

/// A parsed frame. Every layer present in the frame is `Some`. The default is an empty packet
/// (no bytes, no layer), a slot for [`parse_ethernet_into`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet<'a> {
    /// The bytes handed to the parser.
    pub data: &'a [u8],
    /// The Ethernet header; `None` when parsing started past it (`parse_ip`, ...).
    pub eth: Option<EthernetInfo>,
    /// The first [`MAX_VLANS`] VLAN tags, outermost first.
    pub vlans: [Option<VlanTag>; MAX_VLANS],
    /// The IP header; `None` for RoCEv1 and non-IP frames.
    pub ip: Option<IpInfo>,
    /// The UDP header, for any UDP packet (RoCEv2 or not).
    pub udp: Option<UdpInfo>,
    /// The tunnels taken off the frame (switch mirrors, overlays), outermost first; `eth`,
    /// `vlans`, `ip` and `udp` above then describe the inner frame. All `None` for a frame
    /// captured on the host.
    pub encap: [Option<Encap<'a>>; MAX_ENCAP],
    /// The LRH of a native InfiniBand packet ([`parse_infiniband`]); `None` for RoCE.
    pub lrh: Option<LrhRepr>,
    /// The VCRC closing a native InfiniBand packet and its verdict; `None` for RoCE.
    pub vcrc: Option<Vcrc>,
    /// The RoCE packet, when the frame is RoCEv2 or RoCEv1; for native InfiniBand, the
    /// transport after the LRH (and GRH), which is the same.
    pub roce: Option<Roce<'a>>,
    /// Everything found wrong, across layers.
    pub problems: Problems,
    /// Where lax parsing stopped early (a truncated or malformed header), if it did.
    pub stop: Option<Error>,
}

impl<'a> Packet<'a> {
    /// The packet's ECN codepoint: its IP header's, or for RoCEv1 (no IP header) its GRH
    /// TClass's; `None` when it has neither. The one place that says whether a packet is
    /// ECN-CE for the checker, the counters and the report.
    pub fn ecn(&self) -> Option<Ecn> {
        match (&self.ip, &self.roce) {
            (Some(ip), _) => Some(Ecn::from_bits(ip.ecn)),
            (None, Some(r)) => r.grh.map(|g| Ecn::from_bits(g.tclass)),
            (None, None) => None,
        }
    }

    /// Whether the packet is marked CE (congestion experienced): [`Packet::ecn`] is
    /// [`Ecn::Ce`].
    #[inline]
    pub fn ecn_ce(&self) -> bool {
        self.ecn() == Some(Ecn::Ce)
    }

    fn new(data: &'a [u8]) -> Self {
        Packet {
            data,
            eth: None,
            vlans: [None; MAX_VLANS],
            ip: None,
            udp: None,
            encap: [None; MAX_ENCAP],
            lrh: None,
            vcrc: None,
            roce: None,
            problems: Problems::NONE,
            stop: None,
        }
    }

    /// The number of VLAN tags recorded.
    pub fn vlan_count(&self) -> usize {
        self.vlans.iter().flatten().count()
    }

    /// The tunnels taken off the frame, outermost first (none for a frame captured on the host).
    pub fn tunnels(&self) -> impl Iterator<Item = &Encap<'a>> {
        self.encap.iter().flatten()
    }

    /// Whether the frame arrived in a tunnel.
    #[inline]
    pub fn is_encapsulated(&self) -> bool {
        self.encap[0].is_some()
    }

    /// The innermost tunnel's kind, if the frame arrived in one.
    pub fn encap_kind(&self) -> Option<EncapKind> {
        self.tunnels().last().map(Encap::kind)
    }
}

/// The VCRC of a native InfiniBand packet: the 2 bytes after the ICRC, and whether they
/// match the packet (LRH through ICRC, as sent on the last link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vcrc {
    /// The VCRC as stored (little-endian), if captured.
    pub stored: Option<u16>,
    /// The verdict: ok, bad (with the VCRC the packet should carry, in `computed`'s low 16
    /// bits), unverifiable (the packet is cut short, or PktLen is below the LRH), or not
    /// checked (verification off).
    pub status: IcrcStatus,
}

/// What verification ([`Config::verify`]) found in one packet: the ICRC's and the VCRC's
/// verdicts and the problems they and the IPv4 header checksum raised. Nothing else in a
/// packet depends on verification, so a packet parsed without it and given these equals
/// the packet parsed with it.
///
/// Why: the checksums are the one part of parsing that reads every byte of a frame (the
/// ICRC covers the payload). A program that reads a capture on one thread and models it on
/// another can verify on the reader, where the bytes were just copied, hand the verdicts
/// over with the frame, and parse again on the other thread without verifying: that thread
/// then reads the headers only. [`Checksums::with_payload_crc`] adds the payload's CRC-32,
/// for a thread that compares payloads: it then reads no payload byte.
///
/// ```
/// use roce_parser::{parse_ethernet, BthRepr, Checksums, Config, FrameBuilder, Network, Problem};
///
/// let bth = BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x12, psn: 7, ..Default::default() };
/// let mut builder = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
/// builder.payload = b"payload";
/// let mut buf = [0u8; 128];
/// let len = builder.emit(&mut buf)?;
/// buf[len - 1] ^= 0xff; // the ICRC damaged
///
/// // The reading thread verifies ...
/// let verified = parse_ethernet(&buf[..len], &Config::default())?;
/// assert!(verified.problems.contains(Problem::IcrcBad));
/// let checksums = Checksums::of(&verified);
/// // ... the modelling thread parses without verifying, and is given the verdicts.
/// let mut p = parse_ethernet(&buf[..len], &Config { verify: false, ..Config::default() })?;
/// assert!(!p.problems.contains(Problem::IcrcBad));
/// checksums.apply(&mut p);
/// assert_eq!(p, verified);
/// # Ok::<(), roce_parser::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Checksums {
    icrc: Option<IcrcStatus>,
    vcrc: Option<IcrcStatus>,
    problems: Problems,
    payload_crc: Option<u32>,
}

impl Checksums {
    /// The problems only verification raises.
    const PROBLEMS: Problems = Problems::from_bits(
        Problem::IcrcBad as u32 | Problem::VcrcBad as u32 | Problem::Ipv4Checksum as u32,
    );

    /// What verification found in `p`, a packet parsed with [`Config::verify`] on.
    pub fn of(p: &Packet<'_>) -> Checksums {
        Checksums {
            icrc: p.roce.as_ref().map(|r| r.icrc_status),
            vcrc: p.vcrc.map(|v| v.status),
            problems: Problems::from_bits(p.problems.bits() & Self::PROBLEMS.bits()),
            payload_crc: None,
        }
    }

    /// These and the CRC-32 of `p`'s payload ([`Roce::payload_crc32`]), for a packet whose
    /// payload the thread given it compares (a request, for the checker's REQ-RETX-SAME):
    /// that thread then does not read the payload at all.
    ///
    /// ```
    /// use roce_parser::{parse_ethernet, BthRepr, Checksums, Config, FrameBuilder, Network};
    ///
    /// let bth = BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x12, psn: 7, ..Default::default() };
    /// let mut builder = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
    /// builder.payload = b"payload";
    /// let mut buf = [0u8; 128];
    /// let len = builder.emit(&mut buf)?;
    /// let verified = parse_ethernet(&buf[..len], &Config::default())?;
    /// let mut p = parse_ethernet(&buf[..len], &Config { verify: false, ..Config::default() })?;
    /// Checksums::of(&verified).with_payload_crc(&verified).apply(&mut p);
    /// assert_eq!(p, verified);
    /// assert_eq!(p.roce.unwrap().payload_crc32(), verified.roce.unwrap().payload_crc32());
    /// # Ok::<(), roce_parser::Error>(())
    /// ```
    pub fn with_payload_crc(self, p: &Packet<'_>) -> Checksums {
        Checksums { payload_crc: p.roce.as_ref().map(Roce::payload_crc32), ..self }
    }

    /// Gives `p`, the same bytes parsed with [`Config::verify`] off, what verification found.
    pub fn apply(self, p: &mut Packet<'_>) {
        if let (Some(r), Some(status)) = (&mut p.roce, self.icrc) {
            r.icrc_status = status;
        }
        if let (Some(r), Some(crc)) = (&mut p.roce, self.payload_crc) {
            r.payload_crc = crate::roce::PayloadCrc(Some(crc));
        }
        if let (Some(v), Some(status)) = (&mut p.vcrc, self.vcrc) {
            v.status = status;
        }
        p.problems.union(self.problems);
    }
}

/// Parses a native InfiniBand packet, as ibdump or an ERF capture holds it: the LRH
/// (IBTA Vol. 1 §7.7), the GRH when LNH is "IBA global", then the BTH and everything after it
/// as for RoCE, with the ICRC over InfiniBand's invariant fields and the VCRC after it. The
/// LRH's PktLen gives the packet's length (bytes after the VCRC, such as a capture record's
/// padding, are ignored). A packet of another transport (LNH raw or IPv6) yields its LRH only.
/// Fails only when the LRH itself is incomplete.
///
/// ```
/// use roce_parser::{parse_infiniband, BthRepr, Config, FrameBuilder, IcrcStatus, LrhRepr};
/// use roce_parser::{Network, RoceVersion};
///
/// let lrh = LrhRepr { sl: 0, dlid: 2, slid: 1, ..Default::default() };
/// let bth = BthRepr { opcode: 0x04, dest_qp: 0x12, psn: 7, ..Default::default() };
/// let mut builder = FrameBuilder::new(Network::infiniband(lrh), bth);
/// builder.payload = b"hello";
/// let mut buf = [0u8; 64];
/// let len = builder.emit(&mut buf)?;
///
/// let p = parse_infiniband(&buf[..len], &Config::default())?;
/// assert_eq!(p.lrh.map(|l| (l.slid, l.dlid, l.packet_len())), Some((1, 2, len - 2)));
/// assert_eq!(p.vcrc.map(|v| v.status), Some(IcrcStatus::Ok));
/// let r = p.roce.expect("LNH IBA local: a BTH follows");
/// assert_eq!((r.version, r.bth.psn, r.payload), (RoceVersion::Infiniband, 7, &b"hello"[..]));
/// assert_eq!(r.icrc_status, IcrcStatus::Ok);
/// # Ok::<(), roce_parser::Error>(())
/// ```
#[inline]
pub fn parse_infiniband<'a>(packet: &'a [u8], cfg: &Config) -> Result<Packet<'a>> {
    let mut p = Packet::new(packet);
    infiniband_into(packet, cfg, &mut p)?;
    Ok(p)
}

/// [`parse_infiniband`] in place, as [`parse_ethernet_into`]. On error `out` is left empty.
pub fn parse_infiniband_into<'a>(
    packet: &'a [u8],
    cfg: &Config,
    out: &mut Packet<'a>,
) -> Result<()> {
    *out = Packet::new(packet);
    infiniband_into(packet, cfg, out)
}

fn infiniband_into<'a>(data: &'a [u8], cfg: &Config, p: &mut Packet<'a>) -> Result<()> {
    let lrh = LrhRepr::parse(&Lrh::new_checked(data)?);
    p.lrh = Some(lrh);
    p.problems.flag(lrh.reserved_set(), Problem::ReservedBits);
    // PktLen counts the LRH through the ICRC; the VCRC follows.
    let len = lrh.packet_len();
    let stored =
        data.get(len..).and_then(|s| s.first_chunk::<VCRC_LEN>()).map(|b| u16::from_le_bytes(*b));
    let status = match (cfg.verify, stored) {
        (false, _) => IcrcStatus::NotChecked,
        (true, None) => IcrcStatus::Unverifiable,
        _ if len < LrhRepr::LEN => IcrcStatus::Unverifiable,
        (true, Some(v)) => {
            let computed = icrc::compute_vcrc(data.get(..len).unwrap_or(data));
            if computed == v {
                IcrcStatus::Ok
            } else {
                IcrcStatus::Bad { computed: u32::from(computed) }
            }
        }
    };
    p.problems.flag(matches!(status, IcrcStatus::Bad { .. }), Problem::VcrcBad);
    p.problems.flag(data.len() < len + VCRC_LEN, Problem::Truncated);
    p.vcrc = Some(Vcrc { stored, status });
    let lrh_bytes = data.get(..LrhRepr::LEN).unwrap_or(data);
    match lrh.lnh {
        Lnh::Local => {
            let f = Framing {
                version: RoceVersion::Infiniband,
                grh: None,
                icrc_net: Some((IcrcNetwork::Lrh(lrh_bytes), &[])),
                icrc_span: Some(data),
                base: LrhRepr::LEN,
                claimed_len: len.saturating_sub(LrhRepr::LEN),
                verify_icrc: cfg.verify,
            };
            transport(p, LrhRepr::LEN, &f, Whole);
        }
        Lnh::Global => {
            let off = LrhRepr::LEN;
            let rest = data.get(off..).unwrap_or(&[]);
            let grh = match Grh::new_checked(rest) {
                Ok(g) => GrhRepr::parse(&g),
                Err(e) => {
                    p.problems.flag(data.len() < len, Problem::Truncated);
                    p.stop = Some(e.at(off));
                    return Ok(());
                }
            };
            p.problems.flag(grh.nxthdr != crate::headers::grh::NXTHDR_BTH, Problem::GrhNextHeader);
            let f = Framing {
                version: RoceVersion::Infiniband,
                grh: Some(grh),
                icrc_net: Some((IcrcNetwork::Grh(rest.get(..GrhRepr::LEN).unwrap_or(rest)), &[])),
                icrc_span: Some(rest),
                base: off + GrhRepr::LEN,
                claimed_len: len.saturating_sub(off + GrhRepr::LEN),
                verify_icrc: cfg.verify,
            };
            transport(p, off + GrhRepr::LEN, &f, Whole);
        }
        // Another transport's packet (raw, or IPv6 over InfiniBand): the LRH is all we read.
        Lnh::Raw | Lnh::Ipv6 => {}
    }
    Ok(())
}

/// Parses an Ethernet II frame. Fails only when the Ethernet header itself is incomplete.
///
/// A `Packet` is about 500 bytes: returning it costs a copy (about 10 ns, an eighth of the
/// parse; `#[inline]` lets the caller's optimizer drop it where it can). Loops over millions
/// of frames use [`parse_ethernet_into`], which fills one in place.
#[inline]
pub fn parse_ethernet<'a>(frame: &'a [u8], cfg: &Config) -> Result<Packet<'a>> {
    let eth = ethernet_header(frame)?;
    let mut p = Packet::new(frame);
    ethernet_into(&mut p, &eth, 0, cfg, Whole);
    Ok(p)
}

/// [`parse_ethernet`] in place: `out` is reset to describe `frame` (every layer `None`) and
/// filled with what the frame holds, without building the packet elsewhere and copying it.
/// On error `out` is left empty.
///
/// ```
/// # use roce_parser::{parse_ethernet_into, Config, Packet};
/// # let frames: Vec<Vec<u8>> = Vec::new();
/// let cfg = Config::default();
/// for frame in &frames {
///     let mut p = Packet::default();
///     if parse_ethernet_into(frame, &cfg, &mut p).is_ok() {
///         // use p
///     }
/// }
/// ```
pub fn parse_ethernet_into<'a>(frame: &'a [u8], cfg: &Config, out: &mut Packet<'a>) -> Result<()> {
    *out = Packet::new(frame);
    let eth = ethernet_header(frame)?;
    ethernet_into(out, &eth, 0, cfg, Whole);
    Ok(())
}

/// [`parse_ethernet_into`] over the first bytes of a frame held in segments (`t`): `head` is
/// the frame's start, `t.len` its whole length.
pub(crate) fn parse_ethernet_head<'a, S: Source>(
    head: &'a [u8],
    cfg: &Config,
    out: &mut Packet<'a>,
    t: S,
) -> Result<()> {
    *out = Packet::new(head);
    let eth = ethernet_header(head)?;
    ethernet_into(out, &eth, 0, cfg, t);
    Ok(())
}

#[inline]
fn ethernet_header(frame: &[u8]) -> Result<Ethernet2HeaderSlice<'_>> {
    Ethernet2HeaderSlice::from_slice(frame)
        .map_err(|e| Error::truncated(Layer::Ethernet, 0, e.required_len, e.len))
}

/// The Ethernet frame inside a tunnel, at `off` in the frame.
pub(crate) fn ethernet_at<S: Source>(p: &mut Packet<'_>, off: usize, cfg: &Config, t: S) {
    let rest = p.data.get(off..).unwrap_or(&[]);
    match Ethernet2HeaderSlice::from_slice(rest) {
        Ok(eth) => ethernet_into(p, &eth, off, cfg, t),
        Err(e) => p.stop = Some(Error::truncated(Layer::Ethernet, off, e.required_len, e.len)),
    }
}

/// The Ethernet header `eth` at `base` in the frame, its VLAN tags and what they carry.
#[inline]
fn ethernet_into<S: Source>(
    p: &mut Packet<'_>,
    eth: &Ethernet2HeaderSlice<'_>,
    base: usize,
    cfg: &Config,
    t: S,
) {
    let frame = p.data;
    let mut ethertype = eth.ether_type().0;
    let mut off = base + eth.slice().len();
    let mut tags = 0;
    while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
        let rest = frame.get(off..).unwrap_or(&[]);
        let vlan = match SingleVlanHeaderSlice::from_slice(rest) {
            Ok(v) => v,
            Err(e) => {
                p.stop = Some(Error::truncated(Layer::Vlan, off, e.required_len, e.len));
                p.eth = Some(EthernetInfo { dst: eth.destination(), src: eth.source(), ethertype });
                return;
            }
        };
        if let Some(slot) = p.vlans.get_mut(tags) {
            *slot = Some(VlanTag {
                tpid: ethertype,
                pcp: vlan.priority_code_point().value(),
                dei: vlan.drop_eligible_indicator(),
                vid: vlan.vlan_identifier().value(),
            });
        }
        tags += 1;
        ethertype = vlan.ether_type().0;
        off += vlan.slice().len();
        if tags > VLAN_LIMIT {
            p.problems.insert(Problem::TooManyVlanTags);
            p.stop = Some(Error::malformed(Layer::Vlan, off, "more than 8 stacked VLAN tags"));
            break;
        }
    }
    p.eth = Some(EthernetInfo { dst: eth.destination(), src: eth.source(), ethertype });
    if p.stop.is_none() {
        parse_network(p, ethertype, off, cfg, t);
    }
}

/// Parses what follows an EtherType (for link types such as Linux cooked capture that give
/// the EtherType without an Ethernet header): IPv4, IPv6 or RoCEv1; anything else is kept as
/// a packet with no layer decoded.
pub fn parse_ethertype_payload<'a>(ethertype: u16, data: &'a [u8], cfg: &Config) -> Packet<'a> {
    let mut p = Packet::new(data);
    parse_network(&mut p, ethertype, 0, cfg, Whole);
    p
}

/// Parses an IP packet (IPv4 or IPv6 by its version nibble), for captures without Ethernet.
pub fn parse_ip<'a>(packet: &'a [u8], cfg: &Config) -> Result<Packet<'a>> {
    let ethertype = match packet.first().map(|b| b >> 4) {
        Some(4) => ETHERTYPE_IPV4,
        Some(6) => ETHERTYPE_IPV6,
        Some(_) => return Err(Error::malformed(Layer::Ipv4, 0, "IP version is neither 4 nor 6")),
        None => return Err(Error::truncated(Layer::Ipv4, 0, 20, 0)),
    };
    Ok(parse_ethertype_payload(ethertype, packet, cfg))
}

/// Parses a UDP payload that starts with the BTH, for stacks that already stripped L2-L4.
/// The whole slice is taken as the packet (BTH to ICRC). The ICRC cannot be verified
/// without the IP and UDP headers: its status is `NotChecked`.
pub fn parse_udp_payload<'a>(payload: &'a [u8], cfg: &Config) -> Result<(Roce<'a>, Problems)> {
    let mut problems = Problems::NONE;
    let f = Framing {
        version: RoceVersion::V2,
        grh: None,
        icrc_net: None,
        icrc_span: None,
        base: 0,
        claimed_len: payload.len(),
        verify_icrc: cfg.verify,
    };
    let mut slot = None;
    parse_transport(payload, &f, &mut problems, &mut slot, Whole)?;
    match slot {
        Some(roce) => Ok((roce, problems)),
        // parse_transport fills the slot whenever it returns Ok.
        None => Err(Error::truncated(Layer::Bth, 0, BthRepr::LEN, payload.len())),
    }
}

pub(crate) fn parse_network<'a, S: Source>(
    p: &mut Packet<'a>,
    ethertype: u16,
    off: usize,
    cfg: &Config,
    t: S,
) {
    match ethertype {
        ETHERTYPE_IPV4 => parse_ipv4(p, off, cfg, t),
        ETHERTYPE_IPV6 => parse_ipv6(p, off, cfg, t),
        ETHERTYPE_ROCEV1 => parse_rocev1(p, off, cfg, t),
        _ => {}
    }
}

fn parse_ipv4<'a, S: Source>(p: &mut Packet<'a>, off: usize, cfg: &Config, t: S) {
    let data = p.data;
    let rest = data.get(off..).unwrap_or(&[]);
    let ip = match Ipv4HeaderSlice::from_slice(rest) {
        Ok(ip) => ip,
        Err(e) => {
            p.stop = Some(match &e {
                err::ipv4::HeaderSliceError::Content(
                    err::ipv4::HeaderError::HeaderLengthSmallerThanHeader { .. },
                ) => {
                    p.problems.insert(Problem::IpHeaderLength);
                    Error::malformed(Layer::Ipv4, off, "header length (IHL) below 5")
                }
                err::ipv4::HeaderSliceError::Content(
                    err::ipv4::HeaderError::UnexpectedVersion { .. },
                ) => Error::malformed(Layer::Ipv4, off, "IP version is not 4"),
                _ => ip_error(e, Layer::Ipv4, off),
            });
            return;
        }
    };
    let hlen = ip.slice().len();
    let total = usize::from(ip.total_len());
    p.ip = Some(IpInfo {
        version: 4,
        src: IpAddr::V4(Ipv4Addr::from(ip.source())),
        dst: IpAddr::V4(Ipv4Addr::from(ip.destination())),
        dscp: ip.dcp().value(),
        ecn: ip.ecn().value(),
        ttl: ip.ttl(),
        flow_label: 0,
        identification: ip.identification(),
        protocol: ip.protocol().0,
        offset: off,
        header_len: hlen,
        ext_len: 0,
        total_len: total,
    });
    if cfg.verify {
        let sum = Sum16BitWords::new().add_slice(ip.slice()).ones_complement();
        p.problems.flag(sum != 0, Problem::Ipv4Checksum);
    }
    if total < hlen {
        p.problems.insert(Problem::IpLengthMismatch);
        p.stop = Some(Error::malformed(Layer::Ipv4, off, "total length shorter than the header"));
        return;
    }
    p.problems.flag(t.rest_len(rest, off) < total, Problem::Truncated);
    if ip.is_fragmenting_payload() {
        p.problems.insert(Problem::IpFragment);
        if ip.fragments_offset().value() != 0 {
            return;
        }
    }
    if ip.protocol() == IpNumber::UDP {
        let net = IcrcNetwork::Ipv4(ip.slice());
        // IP header, UDP header and BTH lie back to back from `off`.
        parse_udp(p, off + hlen, total - hlen, net, data.get(off..), cfg, t);
    } else if ip.protocol().0 == IP_PROTOCOL_GRE {
        encap::gre(p, off + hlen, cfg, t);
    }
}

fn parse_ipv6<'a, S: Source>(p: &mut Packet<'a>, off: usize, cfg: &Config, t: S) {
    let data = p.data;
    let rest = data.get(off..).unwrap_or(&[]);
    let ip = match Ipv6HeaderSlice::from_slice(rest) {
        Ok(ip) => ip,
        Err(e) => {
            p.stop = Some(ip_error(e, Layer::Ipv6, off));
            return;
        }
    };
    let payload_len = usize::from(ip.payload_length());
    let after = rest.get(40..).unwrap_or(&[]);
    // Extensions are walked within what the payload length allows and the frame holds.
    let ext_area = after.get(..payload_len.min(after.len())).unwrap_or(after);
    // UDP right after the fixed header (the RoCE case) has no extension to walk: skip
    // etherparse's walker, an out-of-line call per IPv6 frame.
    let (exts, next, ext_err) = if ip.next_header() == IpNumber::UDP {
        (None, IpNumber::UDP, None)
    } else {
        let (exts, next, _, err) = Ipv6ExtensionsSlice::from_slice_lax(ip.next_header(), ext_area);
        (Some(exts), next, err)
    };
    let ext_len = exts.as_ref().map_or(0, |e| e.slice().len());
    p.ip = Some(IpInfo {
        version: 6,
        src: IpAddr::V6(Ipv6Addr::from(ip.source())),
        dst: IpAddr::V6(Ipv6Addr::from(ip.destination())),
        dscp: ip.dscp().value(),
        ecn: ip.ecn().value(),
        ttl: ip.hop_limit(),
        flow_label: ip.flow_label().value(),
        identification: 0,
        protocol: next.0,
        offset: off,
        header_len: 40,
        ext_len,
        total_len: 40 + payload_len,
    });
    p.problems.flag(t.rest_len(rest, off) < 40 + payload_len, Problem::Truncated);
    if let Some((e, _)) = ext_err {
        p.problems.insert(Problem::Ipv6ExtensionChain);
        p.stop = Some(match e {
            err::ipv6_exts::HeaderSliceError::Len(l) => Error::truncated(
                Layer::Ipv6Extensions,
                off + 40 + l.layer_start_offset,
                l.required_len,
                l.len,
            ),
            err::ipv6_exts::HeaderSliceError::Content(_) => Error::malformed(
                Layer::Ipv6Extensions,
                off + 40,
                "extension header out of order or malformed",
            ),
        });
        return;
    }
    if exts.is_some_and(|e| e.is_fragmenting_payload()) {
        p.problems.insert(Problem::IpFragment);
        return;
    }
    if is_ipv6_extension(next.0) {
        // A header etherparse does not walk (Mobility, HIP, Shim6, experimental): what
        // follows it is not known.
        p.problems.insert(Problem::Ipv6ExtensionChain);
        p.stop = Some(Error::malformed(
            Layer::Ipv6Extensions,
            off + 40 + ext_len,
            "extension header the parser does not walk",
        ));
        return;
    }
    if next == IpNumber::UDP {
        let net = IcrcNetwork::Ipv6(ip.slice());
        // The ICRC skips extension headers: with them, the headers it covers are apart.
        let span = if ext_len == 0 { data.get(off..) } else { None };
        parse_udp(p, off + 40 + ext_len, payload_len.saturating_sub(ext_len), net, span, cfg, t);
    } else if next.0 == IP_PROTOCOL_GRE {
        encap::gre(p, off + 40 + ext_len, cfg, t);
    }
}

/// IPv6 extension header numbers (RFC 7045's list) that etherparse's walk does not follow.
const fn is_ipv6_extension(n: u8) -> bool {
    matches!(n, 135 | 139 | 140 | 253 | 254)
}

pub(crate) fn ip_error<E: IpSliceError>(e: E, layer: Layer, off: usize) -> Error {
    match e.len_error() {
        Some((needed, available)) => Error::truncated(layer, off, needed, available),
        None => Error::malformed(layer, off, "bad version or header length"),
    }
}

/// etherparse's IPv4 and IPv6 header errors, seen the same way.
pub(crate) trait IpSliceError {
    fn len_error(&self) -> Option<(usize, usize)>;
}

impl IpSliceError for err::ipv4::HeaderSliceError {
    fn len_error(&self) -> Option<(usize, usize)> {
        match self {
            err::ipv4::HeaderSliceError::Len(l) => Some((l.required_len, l.len)),
            err::ipv4::HeaderSliceError::Content(_) => None,
        }
    }
}

impl IpSliceError for err::ipv6::HeaderSliceError {
    fn len_error(&self) -> Option<(usize, usize)> {
        match self {
            err::ipv6::HeaderSliceError::Len(l) => Some((l.required_len, l.len)),
            err::ipv6::HeaderSliceError::Content(_) => None,
        }
    }
}

/// `ip_payload_len` is what the IP header says follows it (after IPv6 extensions).
#[inline(always)]
fn parse_udp<'a, S: Source>(
    p: &mut Packet<'a>,
    off: usize,
    ip_payload_len: usize,
    net: IcrcNetwork<'a>,
    span: Option<&'a [u8]>,
    cfg: &Config,
    t: S,
) {
    let data = p.data;
    let rest = data.get(off..).unwrap_or(&[]);
    let udp = match UdpHeaderSlice::from_slice(rest) {
        Ok(u) => u,
        Err(e) => {
            p.stop = Some(Error::truncated(Layer::Udp, off, e.required_len, e.len));
            return;
        }
    };
    let len = udp.length();
    p.udp = Some(UdpInfo {
        sport: udp.source_port(),
        dport: udp.destination_port(),
        len,
        checksum: udp.checksum(),
        offset: off,
    });
    p.problems.flag(usize::from(len) != ip_payload_len, Problem::UdpLengthMismatch);
    if !cfg.is_rocev2_port(udp.destination_port()) {
        if let Some(kind) = EncapKind::by_udp_port(udp.destination_port()) {
            encap::udp(p, kind, off + 8, cfg, t);
        }
        return;
    }
    if usize::from(len) < 8 {
        p.problems.insert(Problem::ShortForBth);
        p.stop = Some(Error::malformed(Layer::Udp, off, "UDP length below 8"));
        return;
    }
    // A UDP length beyond the IP payload is a length disagreement (UdpLengthMismatch), not
    // a capture cut: the packet ends where the IP payload does.
    let udp_len = if usize::from(len) > ip_payload_len && ip_payload_len >= 8 {
        ip_payload_len
    } else {
        usize::from(len)
    };
    let f = Framing {
        version: RoceVersion::V2,
        grh: None,
        icrc_net: Some((net, udp.slice())),
        icrc_span: span,
        base: off + 8,
        claimed_len: udp_len - 8,
        verify_icrc: cfg.verify,
    };
    p.problems.flag(udp_len - 8 < BthRepr::LEN, Problem::ShortForBth);
    transport(p, off + 8, &f, t);
}

fn parse_rocev1<'a, S: Source>(p: &mut Packet<'a>, off: usize, cfg: &Config, t: S) {
    let data = p.data;
    let rest = data.get(off..).unwrap_or(&[]);
    let grh_view = match Grh::new_checked(rest) {
        Ok(g) => g,
        Err(e) => {
            p.stop = Some(e.at(off));
            return;
        }
    };
    let grh = GrhRepr::parse(&grh_view);
    p.problems.flag(grh.nxthdr != crate::headers::grh::NXTHDR_BTH, Problem::GrhNextHeader);
    let grh_bytes = rest.get(..GrhRepr::LEN).unwrap_or(rest);
    let f = Framing {
        version: RoceVersion::V1,
        grh: Some(grh),
        icrc_net: Some((IcrcNetwork::Grh(grh_bytes), &[])),
        icrc_span: Some(rest),
        base: off + GrhRepr::LEN,
        claimed_len: usize::from(grh.paylen),
        verify_icrc: cfg.verify,
    };
    transport(p, off + GrhRepr::LEN, &f, t);
}

#[inline(always)]
fn transport<'a, S: Source>(p: &mut Packet<'a>, bth_off: usize, f: &Framing<'a>, t: S) {
    let data = p.data;
    let seg = data.get(bth_off..).unwrap_or(&[]);
    match parse_transport(seg, f, &mut p.problems, &mut p.roce, t) {
        Ok(stop) => p.stop = stop,
        Err(e) => {
            p.problems.flag(t.rest_len(seg, bth_off) < f.claimed_len, Problem::Truncated);
            p.stop = Some(e);
        }
    }
}
