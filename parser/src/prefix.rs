//! A cheap decode of a frame's first headers: the Ethernet header and its VLAN tags, then the
//! network header (IPv4, IPv6, or RoCEv1's GRH) as far as its addresses, through the same
//! etherparse slices and the same rules as [`crate::parse_ethernet`], but nothing after it:
//! no checksum, no transport. A tunnel (GRE, ERSPAN, VXLAN, Geneve: [`crate::ENCAPSULATIONS`])
//! is followed to the inner frame, through the parser's own decoders, so a mirrored or
//! overlaid packet is placed by its inner hosts. What a reader that only places frames needs (the host
//! pair that splits a capture over threads), at a fraction of a whole parse.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{Ethernet2HeaderSlice, Ipv4HeaderSlice, Ipv6HeaderSlice, SingleVlanHeaderSlice};

use crate::encap::{
    self, EncapKind, Inner, GENEVE_UDP_PORT, IP_PROTOCOL_GRE, MAX_ENCAP, VXLAN_UDP_PORT,
};
use crate::error::{Error, Layer, Result};
use crate::headers::{Grh, Lnh, Lrh, LrhRepr};
use crate::packet::{ip_error, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCEV1, VLAN_LIMIT};

/// The network header of a frame, decoded as far as its addresses: what
/// [`parse_prefix`] and [`parse_ethertype_prefix`] give.
///
/// The addresses are the ones [`crate::parse_ethernet`] reports for the same bytes: the IP
/// header's ([`crate::Packet::ip`]), or for RoCEv1 the GRH's SGID and DGID read as IPv6
/// addresses ([`crate::headers::GrhRepr::sgid_addr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The EtherType after any VLAN tags: 0x0800 (IPv4), 0x86dd (IPv6) or 0x8915 (RoCEv1);
    /// 0 for a native InfiniBand packet ([`parse_infiniband_prefix`]).
    pub ethertype: u16,
    /// VLAN tags walked before the network header (0 when the input starts at it).
    pub vlan_tags: usize,
    /// Offset of the network header (IP or GRH) in the input.
    pub network_offset: usize,
    /// Length of the network header: the IPv4 header with its options, or 40 (the IPv6 fixed
    /// header, the GRH).
    pub network_len: usize,
    /// Source address: the IP source, or the GRH's SGID.
    pub src: IpAddr,
    /// Destination address: the IP destination, or the GRH's DGID.
    pub dst: IpAddr,
    /// Tunnels followed to reach this header (0 for a frame captured on the host).
    pub tunnels: usize,
}

impl Prefix {
    /// The addresses as (source, destination): the host pair a capture is split by.
    #[inline]
    pub fn host_pair(&self) -> (IpAddr, IpAddr) {
        (self.src, self.dst)
    }
}

/// The prefix of an Ethernet II frame (with up to 8 stacked 802.1Q / 802.1ad tags, as
/// [`crate::parse_ethernet`] walks them).
///
/// `Ok(None)` when the EtherType carries none of IPv4, IPv6 and RoCEv1 (ARP, LLDP, PFC
/// pause frames, ...), also inside a tunnel (the parse then has no IP layer either); `Err` when a header the parser would read is cut short or malformed,
/// with the layer and offset, as [`crate::Packet::stop`] would say.
///
/// ```
/// use core::net::{IpAddr, Ipv4Addr};
/// use roce_parser::{parse_prefix, BthRepr, FrameBuilder, Network, VlanTag};
///
/// let net = Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
/// let mut builder = FrameBuilder::new(net, BthRepr { opcode: 0x04, ..Default::default() });
/// builder.vlans[0] = Some(VlanTag { tpid: 0x8100, vid: 100, ..Default::default() });
/// let mut buf = [0u8; 128];
/// let len = builder.emit(&mut buf)?;
///
/// let prefix = parse_prefix(&buf[..len])?.expect("an IPv4 frame");
/// let (a, b) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
/// assert_eq!(prefix.host_pair(), (a, b));
/// assert_eq!((prefix.vlan_tags, prefix.network_offset, prefix.network_len), (1, 18, 20));
///
/// // Cut inside the IPv4 header: the error says where.
/// let cut = parse_prefix(&buf[..30]).unwrap_err();
/// assert_eq!((cut.layer, cut.offset), (roce_parser::Layer::Ipv4, 18));
/// # Ok::<(), roce_parser::Error>(())
/// ```
#[inline(always)]
pub fn parse_prefix(frame: &[u8]) -> Result<Option<Prefix>> {
    ethernet(frame, 0, 0)
}

#[inline(always)]
fn ethernet(frame: &[u8], start: usize, tunnels: usize) -> Result<Option<Prefix>> {
    let eth = Ethernet2HeaderSlice::from_slice(frame.get(start..).unwrap_or(&[]))
        .map_err(|e| Error::truncated(Layer::Ethernet, start, e.required_len, e.len))?;
    let mut ethertype = eth.ether_type().0;
    let mut off = start + eth.slice().len();
    let mut tags = 0;
    while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
        let rest = frame.get(off..).unwrap_or(&[]);
        let vlan = SingleVlanHeaderSlice::from_slice(rest)
            .map_err(|e| Error::truncated(Layer::Vlan, off, e.required_len, e.len))?;
        tags += 1;
        ethertype = vlan.ether_type().0;
        off += vlan.slice().len();
        if tags > VLAN_LIMIT {
            return Err(Error::malformed(Layer::Vlan, off, "more than 8 stacked VLAN tags"));
        }
    }
    network(frame, ethertype, off, tags, tunnels)
}

/// The prefix of what follows an EtherType (for link types, such as Linux cooked capture,
/// that give the EtherType without an Ethernet header): the network header starts `data`.
/// `Ok(None)` and `Err` as for [`parse_prefix`].
///
/// ```
/// use roce_parser::parse_ethertype_prefix;
///
/// // An IPv6 header from fe80::1 to fe80::2 (the rest of the packet does not matter).
/// let mut ip = [0u8; 40];
/// ip[0] = 0x60;
/// ip[8..10].copy_from_slice(&[0xfe, 0x80]);
/// ip[23] = 1;
/// ip[24..26].copy_from_slice(&[0xfe, 0x80]);
/// ip[39] = 2;
/// let prefix = parse_ethertype_prefix(0x86dd, &ip)?.expect("IPv6");
/// assert_eq!(prefix.src, "fe80::1".parse::<core::net::IpAddr>().unwrap());
/// assert_eq!(prefix.dst, "fe80::2".parse::<core::net::IpAddr>().unwrap());
/// // ARP carries no network header the parser reads.
/// assert_eq!(parse_ethertype_prefix(0x0806, &ip)?, None);
/// # Ok::<(), roce_parser::Error>(())
/// ```
#[inline(always)]
pub fn parse_ethertype_prefix(ethertype: u16, data: &[u8]) -> Result<Option<Prefix>> {
    network(data, ethertype, 0, 0, 0)
}

/// The prefix of a native InfiniBand packet ([`crate::parse_infiniband`]'s input): for a
/// routed packet (LNH "IBA global") the GRH's SGID and DGID, as the parse reports them
/// (`ethertype` is then 0, `network_offset` 8); `Ok(None)` for a packet without a GRH, whose
/// endpoints are LIDs, not addresses. `Err` when the LRH, or the GRH it announces, is cut
/// short.
pub fn parse_infiniband_prefix(packet: &[u8]) -> Result<Option<Prefix>> {
    let lrh = Lrh::new_checked(packet)?;
    if lrh.lnh() != Lnh::Global {
        return Ok(None);
    }
    let off = LrhRepr::LEN;
    let grh = Grh::new_checked(packet.get(off..).unwrap_or(&[])).map_err(|e| e.at(off))?;
    let (src, dst) = (Ipv6Addr::from(grh.sgid()), Ipv6Addr::from(grh.dgid()));
    Ok(Some(Prefix {
        ethertype: 0,
        vlan_tags: 0,
        network_offset: off,
        network_len: Grh::<&[u8]>::LEN,
        src: IpAddr::V6(src),
        dst: IpAddr::V6(dst),
        tunnels: 0,
    }))
}

/// The network header of `ethertype` at `off` in the input, after `vlan_tags` tags, and
/// the tunnel it carries if any. Inlined into its callers: the prefix is then built once, in
/// place (as a call it cost the router some 40 instructions per frame of copies).
#[inline(always)]
fn network(
    frame: &[u8],
    ethertype: u16,
    off: usize,
    vlan_tags: usize,
    tunnels: usize,
) -> Result<Option<Prefix>> {
    let rest = frame.get(off..).unwrap_or(&[]);
    let prefix = |network_len, src, dst| Prefix {
        ethertype,
        vlan_tags,
        network_offset: off,
        network_len,
        src,
        dst,
        tunnels,
    };
    Ok(Some(match ethertype {
        ETHERTYPE_IPV4 => {
            let ip =
                Ipv4HeaderSlice::from_slice(rest).map_err(|e| ip_error(e, Layer::Ipv4, off))?;
            // A later fragment holds no tunnel header, and a total length shorter than the
            // header stops the parse there: the tunnel is followed as the parse follows it.
            let l4 = off + ip.slice().len();
            let whole = usize::from(ip.total_len()) >= ip.slice().len();
            if whole
                && ip.fragments_offset().value() == 0
                && carrier(frame, ip.protocol().0, l4, tunnels)
            {
                if let Some(inner) = tunnel(frame, ip.protocol().0, l4, tunnels)? {
                    return Ok(inner);
                }
            }
            let (src, dst) = (Ipv4Addr::from(ip.source()), Ipv4Addr::from(ip.destination()));
            prefix(ip.slice().len(), IpAddr::V4(src), IpAddr::V4(dst))
        }
        ETHERTYPE_IPV6 => {
            let ip =
                Ipv6HeaderSlice::from_slice(rest).map_err(|e| ip_error(e, Layer::Ipv6, off))?;
            let l4 = off + ip.slice().len();
            if carrier(frame, ip.next_header().0, l4, tunnels) {
                if let Some(inner) = tunnel(frame, ip.next_header().0, l4, tunnels)? {
                    return Ok(inner);
                }
            }
            let (src, dst) = (Ipv6Addr::from(ip.source()), Ipv6Addr::from(ip.destination()));
            prefix(ip.slice().len(), IpAddr::V6(src), IpAddr::V6(dst))
        }
        ETHERTYPE_ROCEV1 => {
            let grh = Grh::new_checked(rest).map_err(|e| e.at(off))?;
            let (src, dst) = (Ipv6Addr::from(grh.sgid()), Ipv6Addr::from(grh.dgid()));
            prefix(Grh::<&[u8]>::LEN, IpAddr::V6(src), IpAddr::V6(dst))
        }
        _ => return Ok(None),
    }))
}

/// Whether the IP payload at `l4` (of IP protocol `protocol`) may be a tunnel to follow:
/// GRE, or UDP to a tunnel port. A plain RoCE frame pays a read of its UDP port here.
#[inline(always)]
fn carrier(frame: &[u8], protocol: u8, l4: usize, tunnels: usize) -> bool {
    tunnels < MAX_ENCAP
        && match protocol {
            IP_PROTOCOL_GRE => true,
            IP_PROTOCOL_UDP => frame
                .get(l4 + 2..l4 + 4)
                .and_then(|b| <[u8; 2]>::try_from(b).ok())
                .is_some_and(|b| matches!(u16::from_be_bytes(b), VXLAN_UDP_PORT | GENEVE_UDP_PORT)),
            _ => false,
        }
}

const IP_PROTOCOL_UDP: u8 = 17;

/// The inner frame's prefix when the IP payload at `l4` (of IP protocol `protocol`) is a
/// tunnel: `Ok(Some(None))` when its inner frame has no network header (ARP in a VXLAN, as
/// the parse sees it: no IP layer); `Ok(None)` when it is no tunnel the parse takes off (the
/// outer header is the answer). Out of line: only a tunnel's carrier (GRE, UDP to a tunnel
/// port) comes here.
#[inline(never)]
fn tunnel(frame: &[u8], protocol: u8, l4: usize, tunnels: usize) -> Result<Option<Option<Prefix>>> {
    let decoded = if protocol == IP_PROTOCOL_GRE {
        encap::decode_gre(frame, l4)
    } else {
        let dport = frame.get(l4 + 2..l4 + 4).and_then(|b| <[u8; 2]>::try_from(b).ok());
        match dport.map(u16::from_be_bytes).and_then(EncapKind::by_udp_port) {
            Some(kind) => encap::decode_udp(frame, kind, l4 + 8),
            None => return Ok(None),
        }
    };
    // A tunnel header the parse cannot take apart leaves the outer layers as the packet's.
    let Ok(Some(d)) = decoded else { return Ok(None) };
    match d.inner {
        Inner::Ethernet => ethernet(frame, d.inner_offset, tunnels + 1).map(Some),
        Inner::Network(ethertype) => {
            network(frame, ethertype, d.inner_offset, 0, tunnels + 1).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::{BthRepr, GrhRepr};
    use crate::{parse_ethernet, Config, FrameBuilder, Network, VlanTag};

    /// The addresses the whole parse reports, where it reports any: the IP header's, or
    /// the GRH's (which the parse keeps only with the transport after it).
    fn parsed_pair(frame: &[u8]) -> Option<(IpAddr, IpAddr)> {
        let p = parse_ethernet(frame, &Config::default()).ok()?;
        if let Some(ip) = p.ip {
            return Some((ip.src, ip.dst));
        }
        let g = p.roce?.grh?;
        Some((IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr())))
    }

    #[test]
    fn the_prefix_has_the_parsers_addresses_over_ipv4_ipv6_and_rocev1() {
        let v6 = |last: u8| {
            let mut a = [0u8; 16];
            a[0] = 0xfe;
            a[1] = 0x80;
            a[15] = last;
            a
        };
        let nets = [
            Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]),
            Network::ipv6(v6(1), v6(2)),
            Network::RoceV1(GrhRepr { ipver: 6, sgid: v6(3), dgid: v6(4), ..Default::default() }),
        ];
        for net in nets {
            for vlan in [None, Some(VlanTag { tpid: 0x8100, vid: 7, ..Default::default() })] {
                let mut b = FrameBuilder::new(net, BthRepr { opcode: 0x04, ..Default::default() });
                b.vlans[0] = vlan;
                let mut buf = [0u8; 256];
                let len = b.emit(&mut buf).unwrap();
                let frame = &buf[..len];
                let prefix = parse_prefix(frame).unwrap().unwrap();
                assert_eq!(Some(prefix.host_pair()), parsed_pair(frame), "{net:?}");
                assert_eq!(prefix.vlan_tags, usize::from(vlan.is_some()));
                // Every cut of the frame: the addresses exactly when the network header is
                // whole, as the parse has them over IP (RoCEv1's parse keeps the GRH only
                // with a whole BTH after it).
                let end = prefix.network_offset + prefix.network_len;
                for cut in 0..len {
                    let got = parse_prefix(&frame[..cut]).ok().flatten().map(|p| p.host_pair());
                    let whole = (cut >= end).then_some(prefix.host_pair());
                    assert_eq!(got, whole, "{net:?} cut at {cut}");
                    if !matches!(net, Network::RoceV1(_)) {
                        assert_eq!(got, parsed_pair(&frame[..cut]), "{net:?} cut at {cut}");
                    }
                }
            }
        }
    }

    #[test]
    fn errors_name_the_layer_and_offset() {
        let e = parse_prefix(&[0u8; 10]).unwrap_err();
        assert_eq!((e.layer, e.offset, e.needed, e.available), (Layer::Ethernet, 0, 14, 10));
        // Nine 802.1Q tags: one more than the parser walks.
        let mut f = [0u8; 14 + 9 * 4 + 20];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        for t in 0..9 {
            let at = 14 + t * 4 + 2;
            f[at..at + 2].copy_from_slice(&[0x81, 0x00]);
        }
        let e = parse_prefix(&f).unwrap_err();
        assert_eq!((e.layer, e.offset), (Layer::Vlan, 14 + 9 * 4));
        // IPv4 with a header length (IHL) below 5.
        let mut ip = [0u8; 20];
        ip[0] = 0x44;
        let e = parse_ethertype_prefix(ETHERTYPE_IPV4, &ip).unwrap_err();
        assert_eq!(e.layer, Layer::Ipv4);
        assert_eq!(parse_ethertype_prefix(0x88cc, &ip).unwrap(), None);
    }
}
