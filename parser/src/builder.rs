//! The frame builder: writes a complete Ethernet / \[VLAN\] / IPv4 or IPv6 / UDP / RoCE frame
//! (or a RoCEv1 frame, or a native InfiniBand packet: LRH, \[GRH\], the transport, ICRC and
//! VCRC) with correct lengths, IPv4 checksum, PadCnt, zero pad and CRCs.
//! Tests, fuzzing and the scenario suite make their packets with it. Nothing is allocated:
//! the caller hands an output buffer of at least [`FrameBuilder::buffer_len`] bytes.

use etherparse::{
    EtherType, Ethernet2Header, IpDscp, IpEcn, IpNumber, Ipv4Header, Ipv6FlowLabel, Ipv6Header,
    SingleVlanHeader, UdpHeader, VlanId, VlanPcp,
};

use crate::encap::{EncapKind, Tunnel, IP_PROTOCOL_GRE};
use crate::error::{Error, Layer, Result};
use crate::headers::{Bth, BthRepr, ExtHeaders, Grh, GrhRepr, Lnh, Lrh, LrhRepr};
use crate::icrc::{self, IcrcNetwork};
use crate::opcode;
use crate::packet::ROCEV2_UDP_PORT;
use crate::packet::{VlanTag, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCEV1, MAX_VLANS};
use crate::roce::ICRC_LEN;

/// IPv4 header values (lengths, protocol and checksum are computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Ipv4Spec {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// 6 bits.
    pub dscp: u8,
    /// 2 bits: 0 not ECN-capable, 1/2 ECT, 3 CE.
    pub ecn: u8,
    /// Time to live.
    pub ttl: u8,
    /// Identification (0 in [`Network::ipv4`]).
    pub identification: u16,
    /// DF: don't fragment (set in [`Network::ipv4`], as RoCE NICs send).
    pub dont_fragment: bool,
}

/// IPv6 header values (payload length and next header are computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Ipv6Spec {
    /// Source address (a RoCE GID).
    pub src: [u8; 16],
    /// Destination address (a RoCE GID).
    pub dst: [u8; 16],
    /// DSCP (6 bits) << 2 | ECN (2 bits).
    pub traffic_class: u8,
    /// 20 bits.
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
}

/// The network layer of the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Network {
    /// RoCEv2 over IPv4.
    Ipv4(Ipv4Spec),
    /// RoCEv2 over IPv6.
    Ipv6(Ipv6Spec),
    /// RoCEv1: a GRH (its `paylen` and `nxthdr` are computed) right after the EtherType.
    RoceV1(GrhRepr),
    /// Native InfiniBand: no Ethernet, an LRH (its `lnh` and `pkt_len` are computed), the GRH
    /// when given (a routed packet; `paylen` and `nxthdr` computed), the transport, the ICRC
    /// and the VCRC. The builder's Ethernet, VLAN and UDP fields are unused.
    Infiniband(LrhRepr, Option<GrhRepr>),
}

impl Network {
    /// A plain IPv4 network layer between two addresses (DSCP 26 / ECT(0) as RoCE NICs send).
    pub const fn ipv4(src: [u8; 4], dst: [u8; 4]) -> Self {
        Network::Ipv4(Ipv4Spec {
            src,
            dst,
            dscp: 26,
            ecn: 2,
            ttl: 64,
            identification: 0,
            dont_fragment: true,
        })
    }

    /// A plain IPv6 network layer between two addresses.
    pub const fn ipv6(src: [u8; 16], dst: [u8; 16]) -> Self {
        Network::Ipv6(Ipv6Spec {
            src,
            dst,
            traffic_class: 26 << 2 | 2,
            flow_label: 0,
            hop_limit: 64,
        })
    }

    /// A native InfiniBand packet with this LRH and no GRH.
    pub const fn infiniband(lrh: LrhRepr) -> Self {
        Network::Infiniband(lrh, None)
    }

    const fn len(&self) -> usize {
        match self {
            Network::Ipv4(_) => 20,
            Network::Ipv6(_) | Network::RoceV1(_) => 40,
            Network::Infiniband(_, None) => LrhRepr::LEN,
            Network::Infiniband(_, Some(_)) => LrhRepr::LEN + GrhRepr::LEN,
        }
    }
}

/// Everything needed to write one frame. Build with [`FrameBuilder::new`] and adjust fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameBuilder<'p> {
    /// Destination MAC address.
    pub eth_dst: [u8; 6],
    /// Source MAC address.
    pub eth_src: [u8; 6],
    /// 802.1Q / 802.1ad tags, outermost first.
    pub vlans: [Option<VlanTag>; MAX_VLANS],
    /// IPv4, IPv6 (RoCEv2) or a GRH (RoCEv1).
    pub network: Network,
    /// UDP source port: flow entropy in RoCEv2 (0xC000 from [`FrameBuilder::new`]); unused for
    /// RoCEv1.
    pub udp_sport: u16,
    /// UDP destination port: [`ROCEV2_UDP_PORT`] (4791) from [`FrameBuilder::new`]; unused for
    /// RoCEv1.
    pub udp_dport: u16,
    /// RoCEv2 senders usually leave the UDP checksum 0; the ICRC masks it anyway.
    pub udp_checksum: u16,
    /// The BTH; its PadCnt is replaced by the right value unless `padcnt` overrides it.
    pub bth: BthRepr,
    /// Values for the extended headers the opcode table lists (absent ones are written as
    /// zeros; headers the opcode does not list are ignored).
    pub headers: ExtHeaders,
    /// Bytes after the headers (for opcodes outside the table: everything after the BTH).
    pub payload: &'p [u8],
    /// Forces PadCnt (and the number of pad bytes) instead of computing it.
    pub padcnt: Option<u8>,
    /// Writes this ICRC instead of the correct one (to build bad-ICRC frames).
    pub icrc: Option<u32>,
}

impl<'p> FrameBuilder<'p> {
    /// A frame with default addresses, no VLAN, UDP source port 0xC000 and destination 4791.
    pub fn new(network: Network, bth: BthRepr) -> Self {
        FrameBuilder {
            eth_dst: [0x02, 0, 0, 0, 0, 0x02],
            eth_src: [0x02, 0, 0, 0, 0, 0x01],
            vlans: [None; MAX_VLANS],
            network,
            udp_sport: 0xc000,
            udp_dport: ROCEV2_UDP_PORT,
            udp_checksum: 0,
            bth,
            headers: ExtHeaders::default(),
            payload: &[],
            padcnt: None,
            icrc: None,
        }
    }

    fn header_len(&self) -> usize {
        match opcode::lookup(self.bth.opcode) {
            Some(info) => usize::from(info.header_len),
            None => BthRepr::LEN,
        }
    }

    fn padcnt(&self) -> u8 {
        self.padcnt.unwrap_or((4 - (self.payload.len() % 4) as u8) % 4) & 3
    }

    /// Bytes from the BTH through the ICRC.
    fn transport_len(&self) -> usize {
        self.header_len() + self.payload.len() + usize::from(self.padcnt()) + ICRC_LEN
    }

    fn l2_len(&self) -> usize {
        14 + 4 * self.vlans.iter().flatten().count()
    }

    /// The frame's length in bytes.
    pub fn buffer_len(&self) -> usize {
        match self.network {
            Network::RoceV1(_) => self.l2_len() + self.network.len() + self.transport_len(),
            Network::Infiniband(..) => {
                self.network.len() + self.transport_len() + crate::headers::lrh::VCRC_LEN
            }
            Network::Ipv4(_) | Network::Ipv6(_) => {
                self.l2_len() + self.network.len() + 8 + self.transport_len()
            }
        }
    }

    /// Writes the frame to the start of `out` and returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let total = self.buffer_len();
        let avail = out.len();
        let frame =
            out.get_mut(..total).ok_or(Error::buffer_too_small(Layer::Builder, total, avail))?;
        let transport_len = self.transport_len();
        let too_long = Error::malformed(Layer::Builder, 0, "frame too long for its length fields");
        if let Network::Infiniband(lrh, grh) = self.network {
            return self.emit_infiniband(frame, lrh, grh, transport_len, too_long);
        }

        // L2.
        let first_type = match self.network {
            Network::Ipv4(_) => ETHERTYPE_IPV4,
            Network::Ipv6(_) => ETHERTYPE_IPV6,
            Network::RoceV1(_) => ETHERTYPE_ROCEV1,
            Network::Infiniband(..) => return Err(too_long),
        };
        let mut off = put_l2(frame, self.eth_dst, self.eth_src, &self.vlans, first_type);

        // L3 and L4; remember where the covered headers are for the ICRC.
        let net_off = off;
        match self.network {
            net @ (Network::Ipv4(_) | Network::Ipv6(_)) => {
                let payload = u16::try_from(8 + transport_len).map_err(|_| too_long)?;
                off = put_ip(frame, off, net, payload, IpNumber::UDP).ok_or(too_long)?;
            }
            Network::RoceV1(g) => {
                let mut g = g;
                g.paylen = u16::try_from(transport_len).map_err(|_| too_long)?;
                g.nxthdr = crate::headers::grh::NXTHDR_BTH;
                if let Some(b) = frame.get_mut(off..off + GrhRepr::LEN) {
                    g.emit(&mut Grh::new_unchecked(b));
                }
                off += GrhRepr::LEN;
            }
            Network::Infiniband(..) => return Err(too_long),
        }
        let udp_off = off;
        if !matches!(self.network, Network::RoceV1(_)) {
            let udp = UdpHeader {
                source_port: self.udp_sport,
                destination_port: self.udp_dport,
                length: u16::try_from(8 + transport_len).map_err(|_| too_long)?,
                checksum: self.udp_checksum,
            };
            off = put(frame, off, &udp.to_bytes());
        }

        let bth_off = off;
        off = self.put_transport(frame, off);

        // ICRC over what was just written.
        let value = match self.icrc {
            Some(v) => v,
            None => {
                let net = frame.get(net_off..udp_off).unwrap_or(&[]);
                let net = match self.network {
                    Network::Ipv4(_) => IcrcNetwork::Ipv4(net),
                    Network::Ipv6(_) => IcrcNetwork::Ipv6(net),
                    Network::RoceV1(_) | Network::Infiniband(..) => IcrcNetwork::Grh(net),
                };
                let udp = frame.get(udp_off..bth_off).unwrap_or(&[]);
                icrc::compute_icrc(net, udp, frame.get(bth_off..off).unwrap_or(&[]))
            }
        };
        off = put(frame, off, &value.to_le_bytes());
        debug_assert_eq!(off, total);
        Ok(total)
    }

    /// A native InfiniBand packet into `frame` (exactly its length): LRH, \[GRH\], the
    /// transport, ICRC, VCRC.
    fn emit_infiniband(
        &self,
        frame: &mut [u8],
        mut lrh: LrhRepr,
        grh: Option<GrhRepr>,
        transport_len: usize,
        too_long: Error,
    ) -> Result<usize> {
        let total = frame.len();
        let packet_len = total - crate::headers::lrh::VCRC_LEN;
        lrh.lnh = if grh.is_some() { Lnh::Global } else { Lnh::Local };
        lrh.pkt_len = u16::try_from(packet_len / 4).ok().filter(|&w| w <= 0x7ff).ok_or(too_long)?;
        if let Some(b) = frame.get_mut(..LrhRepr::LEN) {
            lrh.emit(&mut Lrh::new_unchecked(b));
        }
        let mut off = LrhRepr::LEN;
        if let Some(mut g) = grh {
            g.paylen = u16::try_from(transport_len).map_err(|_| too_long)?;
            g.nxthdr = crate::headers::grh::NXTHDR_BTH;
            if let Some(b) = frame.get_mut(off..off + GrhRepr::LEN) {
                g.emit(&mut Grh::new_unchecked(b));
            }
            off += GrhRepr::LEN;
        }
        let bth_off = off;
        off = self.put_transport(frame, off);
        let value = match self.icrc {
            Some(v) => v,
            None => {
                let transport = frame.get(bth_off..off).unwrap_or(&[]);
                match grh {
                    Some(_) => {
                        let g = frame.get(LrhRepr::LEN..bth_off).unwrap_or(&[]);
                        icrc::compute_icrc(IcrcNetwork::Grh(g), &[], transport)
                    }
                    None => {
                        let l = frame.get(..LrhRepr::LEN).unwrap_or(&[]);
                        icrc::compute_icrc(IcrcNetwork::Lrh(l), &[], transport)
                    }
                }
            }
        };
        off = put(frame, off, &value.to_le_bytes());
        let vcrc = icrc::compute_vcrc(frame.get(..off).unwrap_or(&[]));
        off = put(frame, off, &vcrc.to_le_bytes());
        debug_assert_eq!(off, total);
        Ok(total)
    }

    /// The BTH, the opcode's headers, payload and pad at `off`; returns where they end.
    fn put_transport(&self, frame: &mut [u8], mut off: usize) -> usize {
        let mut bth = self.bth;
        bth.padcnt = self.padcnt();
        if let Some(b) = frame.get_mut(off..off + BthRepr::LEN) {
            bth.emit(&mut Bth::new_unchecked(b));
        }
        off += BthRepr::LEN;
        if let Some(info) = opcode::lookup(bth.opcode) {
            for &h in info.headers {
                if let Some(b) = frame.get_mut(off..off + h.len()) {
                    self.headers.emit_one(h, b);
                }
                off += h.len();
            }
        }
        off = put(frame, off, self.payload);
        let pad_end = off + usize::from(bth.padcnt);
        if let Some(p) = frame.get_mut(off..pad_end) {
            p.fill(0);
        }
        pad_end
    }
}

/// Wraps a frame in a tunnel as a switch mirror or an overlay does: outer Ethernet, IPv4 or
/// IPv6, UDP for VXLAN and Geneve, the tunnel's headers, then the inner bytes unchanged (an
/// Ethernet frame, or an IP packet where the tunnel says IP). Lengths and the outer IPv4
/// checksum are computed.
///
/// ```
/// use roce_parser::{parse_ethernet, BthRepr, Config, FrameBuilder, GreRepr, ErspanIIRepr};
/// use roce_parser::{Network, Tunnel, TunnelBuilder, IcrcStatus, EncapKind};
///
/// let bth = BthRepr { opcode: 0x04, dest_qp: 0x12, psn: 7, ..Default::default() };
/// let mut inner = [0u8; 128];
/// let n = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth).emit(&mut inner)?;
/// let erspan = ErspanIIRepr { version: 1, session_id: 7, ..Default::default() };
/// let tunnel = Tunnel::ErspanII(GreRepr { seq: Some(1), ..Default::default() }, erspan);
/// let mirror = TunnelBuilder::new(Network::ipv4([192, 0, 2, 1], [192, 0, 2, 9]), tunnel);
/// let mut buf = [0u8; 256];
/// let len = mirror.emit(&inner[..n], &mut buf)?;
///
/// let p = parse_ethernet(&buf[..len], &Config::default())?;
/// assert_eq!(p.encap_kind(), Some(EncapKind::ErspanII));
/// assert_eq!(p.encap[0].and_then(|e| e.tunnel.session_id()), Some(7));
/// assert_eq!(p.roce.map(|r| (r.bth.psn, r.icrc_status)), Some((7, IcrcStatus::Ok)));
/// # Ok::<(), roce_parser::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelBuilder<'a> {
    /// Outer destination MAC address.
    pub eth_dst: [u8; 6],
    /// Outer source MAC address.
    pub eth_src: [u8; 6],
    /// Outer 802.1Q / 802.1ad tags, outermost first.
    pub vlans: [Option<VlanTag>; MAX_VLANS],
    /// The outer IP header: IPv4 or IPv6 (RoCEv1's GRH is not a tunnel carrier).
    pub network: Network,
    /// Outer UDP source port (VXLAN, Geneve): flow entropy, 0xC000 from [`TunnelBuilder::new`].
    pub udp_sport: u16,
    /// The tunnel's headers.
    pub tunnel: Tunnel<'a>,
}

impl<'a> TunnelBuilder<'a> {
    /// A tunnel between the outer addresses of `network`, with default MAC addresses.
    pub fn new(network: Network, tunnel: Tunnel<'a>) -> Self {
        TunnelBuilder {
            eth_dst: [0x02, 0, 0, 0, 0, 0x12],
            eth_src: [0x02, 0, 0, 0, 0, 0x11],
            vlans: [None; MAX_VLANS],
            network,
            udp_sport: 0xc000,
            tunnel,
        }
    }

    fn carrier_len(&self) -> usize {
        let udp = matches!(self.tunnel.kind(), EncapKind::Vxlan | EncapKind::Geneve);
        14 + 4 * self.vlans.iter().flatten().count() + self.network.len() + if udp { 8 } else { 0 }
    }

    /// The wrapped frame's length for `inner_len` inner bytes.
    pub fn buffer_len(&self, inner_len: usize) -> usize {
        self.carrier_len() + self.tunnel.len() + inner_len
    }

    /// Writes the wrapped frame to the start of `out` and returns its length.
    pub fn emit(&self, inner: &[u8], out: &mut [u8]) -> Result<usize> {
        let total = self.buffer_len(inner.len());
        let avail = out.len();
        let frame =
            out.get_mut(..total).ok_or(Error::buffer_too_small(Layer::Builder, total, avail))?;
        let too_long = Error::malformed(Layer::Builder, 0, "frame too long for its length fields");
        let udp = matches!(self.tunnel.kind(), EncapKind::Vxlan | EncapKind::Geneve);
        let (proto, dport) = match self.tunnel.kind() {
            EncapKind::Vxlan => (IpNumber::UDP, crate::encap::VXLAN_UDP_PORT),
            EncapKind::Geneve => (IpNumber::UDP, crate::encap::GENEVE_UDP_PORT),
            _ => (IpNumber(IP_PROTOCOL_GRE), 0),
        };
        let ethertype = match self.network {
            Network::Ipv4(_) => ETHERTYPE_IPV4,
            Network::Ipv6(_) => ETHERTYPE_IPV6,
            Network::RoceV1(_) | Network::Infiniband(..) => {
                return Err(Error::malformed(Layer::Builder, 0, "a tunnel is carried over IP"))
            }
        };
        let mut off = put_l2(frame, self.eth_dst, self.eth_src, &self.vlans, ethertype);
        let ip_payload = total - off - self.network.len();
        let ip_payload16 = u16::try_from(ip_payload).map_err(|_| too_long)?;
        off = put_ip(frame, off, self.network, ip_payload16, proto).ok_or(too_long)?;
        if udp {
            let h = UdpHeader {
                source_port: self.udp_sport,
                destination_port: dport,
                length: ip_payload16,
                checksum: 0,
            };
            off = put(frame, off, &h.to_bytes());
        }
        off += self.tunnel.emit(frame.get_mut(off..).unwrap_or(&mut []))?;
        off = put(frame, off, inner);
        debug_assert_eq!(off, total);
        Ok(total)
    }
}

/// Writes the IPv4 or IPv6 header of `net` for `payload` bytes of `proto` at `off`; returns
/// the offset after it (`None` for RoCEv1's GRH, which is not an IP header, or a length
/// IPv4 cannot carry).
fn put_ip(
    frame: &mut [u8],
    off: usize,
    net: Network,
    payload: u16,
    proto: IpNumber,
) -> Option<usize> {
    match net {
        Network::Ipv4(s) => {
            let mut ip = Ipv4Header::new(payload, s.ttl, proto, s.src, s.dst).ok()?;
            ip.dscp = IpDscp::try_new(s.dscp & 0x3f).unwrap_or(IpDscp::ZERO);
            ip.ecn = IpEcn::try_new(s.ecn & 3).unwrap_or(IpEcn::ZERO);
            ip.identification = s.identification;
            ip.dont_fragment = s.dont_fragment;
            ip.header_checksum = ip.calc_header_checksum();
            Some(put(frame, off, &ip.to_bytes()))
        }
        Network::Ipv6(s) => {
            let ip = Ipv6Header {
                traffic_class: s.traffic_class,
                flow_label: Ipv6FlowLabel::try_new(s.flow_label & 0xfffff)
                    .unwrap_or(Ipv6FlowLabel::ZERO),
                payload_length: payload,
                next_header: proto,
                hop_limit: s.hop_limit,
                source: s.src,
                destination: s.dst,
            };
            Some(put(frame, off, &ip.to_bytes()))
        }
        Network::RoceV1(_) | Network::Infiniband(..) => None,
    }
}

/// Writes an Ethernet header and its VLAN tags; returns the offset after them.
fn put_l2(
    frame: &mut [u8],
    dst: [u8; 6],
    src: [u8; 6],
    vlans: &[Option<VlanTag>; MAX_VLANS],
    ethertype: u16,
) -> usize {
    let tags: [Option<VlanTag>; MAX_VLANS] = *vlans;
    let mut types = [ethertype; MAX_VLANS + 1];
    let mut n_tags = 0;
    for t in tags.iter().flatten() {
        if let Some(slot) = types.get_mut(n_tags) {
            *slot = t.tpid;
        }
        n_tags += 1;
    }
    if let Some(slot) = types.get_mut(n_tags) {
        *slot = ethertype;
    }
    let eth = Ethernet2Header {
        source: src,
        destination: dst,
        ether_type: EtherType(*types.first().unwrap_or(&ethertype)),
    };
    let mut off = put(frame, 0, &eth.to_bytes());
    for (i, t) in tags.iter().flatten().enumerate() {
        let next = types.get(i + 1).copied().unwrap_or(ethertype);
        let v = SingleVlanHeader {
            pcp: VlanPcp::try_new(t.pcp & 7).unwrap_or(VlanPcp::ZERO),
            drop_eligible_indicator: t.dei,
            vlan_id: VlanId::try_new(t.vid & 0xfff).unwrap_or(VlanId::ZERO),
            ether_type: EtherType(next),
        };
        off = put(frame, off, &v.to_bytes());
    }
    off
}

/// Copies `src` to `buf` at `off`; returns the offset after it. The builder sizes `buf`
/// first, so nothing is ever dropped.
fn put(buf: &mut [u8], off: usize, src: &[u8]) -> usize {
    if let Some(d) = buf.get_mut(off..off + src.len()) {
        d.copy_from_slice(src);
    }
    off + src.len()
}
