//! Structure-aware inputs, decoded from the fuzzer's bytes through `arbitrary`: an opcode and
//! field values for every header, so every header path is reached, not only what random
//! bytes happen to hit.
//!
//! The first field of [`UdpSpec`] and [`FrameSpec`] is the opcode, one byte: a seed that
//! starts with a BTH (a captured UDP payload, or one the builder wrote) decodes to a packet of
//! that opcode, which is how the seeds give every opcode of the table to these targets.

use arbitrary::{Arbitrary, Unstructured};
use roce_parser::*;

/// Damage done to a built packet before it is parsed again.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// None: the parse must give back every field.
    None,
    /// Keep only the first `n % (len + 1)` bytes.
    Truncate(u16),
    /// XOR the byte at `at % len` with `xor`.
    Flip { at: u16, xor: u8 },
    /// Append `n` bytes (0xA5).
    Extend(u8),
}

impl Damage {
    /// Applies the damage to `bytes`; returns whether anything changed.
    pub fn apply(self, bytes: &mut Vec<u8>) -> bool {
        match self {
            Damage::None => false,
            Damage::Truncate(n) => {
                let keep = usize::from(n) % (bytes.len() + 1);
                let changed = keep < bytes.len();
                bytes.truncate(keep);
                changed
            }
            Damage::Flip { at, xor } => {
                if bytes.is_empty() || xor == 0 {
                    return false;
                }
                let at = usize::from(at) % bytes.len();
                bytes[at] ^= xor;
                true
            }
            Damage::Extend(n) => {
                bytes.extend(std::iter::repeat_n(0xA5, usize::from(n)));
                n > 0
            }
        }
    }
}

/// A RoCEv2 UDP payload (BTH to ICRC), built and parsed again.
#[derive(Arbitrary, Clone, Debug)]
pub struct UdpSpec<'a> {
    pub opcode: u8,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    /// Forces PadCnt (and the pad length) instead of the builder's value.
    pub padcnt: Option<u8>,
    pub damage: Damage,
    pub payload: &'a [u8],
}

/// A VLAN tag, limited to what the parser takes for a tag.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct VlanSpec {
    /// 0x8100, 0x88a8 or 0x9100, by this value modulo 3.
    pub tpid: u8,
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

impl VlanSpec {
    pub fn tag(self) -> VlanTag {
        VlanTag {
            tpid: [0x8100, 0x88a8, 0x9100][usize::from(self.tpid % 3)],
            pcp: self.pcp & 7,
            dei: self.dei,
            vid: self.vid & 0xfff,
        }
    }
}

/// A whole frame for the builder: every field of every owned struct it takes.
#[derive(Arbitrary, Clone, Debug)]
pub struct FrameSpec<'a> {
    pub opcode: u8,
    pub network: Network,
    pub vlans: [Option<VlanSpec>; 2],
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    pub udp_sport: u16,
    /// RoCEv2 on this port (the parser is configured with it), 4791 when `None`.
    pub udp_dport: Option<u16>,
    pub udp_checksum: u16,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    pub padcnt: Option<u8>,
    /// Writes this ICRC instead of the right one.
    pub icrc: Option<u32>,
    pub payload: &'a [u8],
}

/// Decodes the structured input the way libFuzzer's `fuzz_target!(|x: T| ..)` would.
pub fn decode<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}

/// The extended headers a parse of `info` gives back when the builder was handed `given`:
/// each listed header, its fields cut to their wire width (absent ones were written as zeros);
/// headers the opcode does not list are absent.
pub fn expected_headers(info: Option<&OpcodeInfo>, given: &ExtHeaders) -> ExtHeaders {
    match info {
        Some(info) => given.as_written(info.headers).normalized(),
        None => ExtHeaders::default(),
    }
}

/// The PadCnt the builder writes for `payload_len` bytes, or the forced one.
pub fn effective_padcnt(forced: Option<u8>, payload_len: usize) -> u8 {
    forced.unwrap_or(((4 - payload_len % 4) % 4) as u8) & 3
}

/// Builds the frame of a builder; `None` when the builder refuses (a frame too long for its
/// length fields).
pub fn emit(b: &FrameBuilder<'_>) -> Option<Vec<u8>> {
    let mut out = vec![0u8; b.buffer_len()];
    let n = b.emit(&mut out).ok()?;
    assert_eq!(n, out.len(), "builder: emitted length differs from buffer_len");
    Some(out)
}

/// The name of any opcode, for messages.
pub fn opname(op: u8) -> &'static str {
    opcode_name(op)
}

/// The input of the `encap` target: a frame wrapped in one or two tunnels, byte by byte (no
/// `arbitrary`, so that seeds are written by [`EncapInput::encode`] and a capture's frame can
/// be the inner one as it is).
///
/// Layout: [`EncapInput::HEADER`] bytes (control, damage, cuts), then one or two tunnel
/// records of [`TunnelRecord::LEN`] bytes (outermost first), then the options of each Geneve
/// tunnel (its Opt Len x 4 bytes, outermost first, as many as there are), then the inner frame:
/// the rest of the bytes as they are, or (control bit [`EncapInput::BUILT`]) a [`BuiltInner`]
/// decoded through `arbitrary` and written by `FrameBuilder`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncapInput<'a> {
    /// Control byte: [`EncapInput::TWO`], [`EncapInput::RAW_FIELDS`], ...
    pub control: u8,
    /// Cut length or flipped offset (by the damage bits), modulo the wrapped frame's length.
    pub damage_at: u16,
    /// The XOR of a flip (0 means 0x80).
    pub xor: u8,
    /// The segment cuts, modulo the wrapped length + 1 (the second with [`EncapInput::THREE_SEGMENTS`]).
    pub cuts: [u16; 2],
    /// The tunnels, outermost first (1 or 2).
    pub tunnels: Vec<TunnelRecord>,
    /// The Geneve options, per tunnel (empty for the other kinds).
    pub options: Vec<&'a [u8]>,
    /// The inner frame's bytes (raw, or the `arbitrary` input of a [`BuiltInner`]).
    pub inner: &'a [u8],
}

/// One tunnel of an [`EncapInput`]: which, its outer layers and its header fields as bytes.
///
/// Byte 0: the kind, modulo 6, in [`ENCAPSULATIONS`]' order (GRE, ERSPAN I, II, III, VXLAN,
/// Geneve). Byte 1: flags ([`TunnelRecord::IPV6`], `VLAN0`, `VLAN1`, `INNER_IP`, `GRE_C`,
/// `GRE_K`, `GRE_S`, `TPID`). Bytes 2-5: two VLAN TCIs. 6-9 / 10-13: the outer source and
/// destination (IPv4, or the last 4 bytes of 2001:db8::/96). 14: TTL or hop limit. 15: DSCP
/// and ECN (IPv6 traffic class). 16-17: outer UDP source port. 18: GRE version, 19-20: GRE
/// protocol (both used as they are only with `RAW_FIELDS`), 21-22 GRE checksum, 23-26 key,
/// 27-30 sequence number. 31-50: the tunnel header as on the wire, read by its own parser
/// (ERSPAN II: 8 bytes, ERSPAN III: 12 and the platform subheader, VXLAN 8, Geneve 8: its Opt
/// Len says how many option bytes follow the records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunnelRecord(pub [u8; TunnelRecord::LEN]);

impl TunnelRecord {
    /// Bytes of a record.
    pub const LEN: usize = 51;
    /// Flag: the outer network is IPv6 (else IPv4).
    pub const IPV6: u8 = 0x01;
    /// Flag: an outer 802.1ad tag (TCI at bytes 2-3).
    pub const VLAN0: u8 = 0x02;
    /// Flag: an outer 802.1Q tag (TCI at bytes 4-5).
    pub const VLAN1: u8 = 0x04;
    /// Flag: GRE and Geneve carry the IP packet, not the Ethernet frame (ERSPAN III: frame
    /// type 2).
    pub const INNER_IP: u8 = 0x08;
    /// Flag: a GRE checksum word.
    pub const GRE_C: u8 = 0x10;
    /// Flag: a GRE key.
    pub const GRE_K: u8 = 0x20;
    /// Flag: a GRE sequence number (ERSPAN II always has one).
    pub const GRE_S: u8 = 0x40;
    /// Flag: the tags' TPIDs are 0x9100 / 0x88a8 instead of 0x88a8 / 0x8100.
    pub const TPID: u8 = 0x80;
    /// Where the tunnel header's bytes start.
    pub const HEADER_AT: usize = 31;

    /// A record of `kind` with `flags`, the other bytes from `fill` (a seed's pattern).
    pub fn new(kind: EncapKind, flags: u8, fill: &[u8]) -> Self {
        let mut r = [0u8; Self::LEN];
        for (i, b) in r.iter_mut().enumerate() {
            *b = fill.get(i % fill.len().max(1)).copied().unwrap_or(0);
        }
        r[0] = ENCAPSULATIONS.iter().position(|e| e.kind == kind).unwrap_or(0) as u8;
        r[1] = flags;
        TunnelRecord(r)
    }

    /// The kind this record builds.
    pub fn kind(&self) -> EncapKind {
        ENCAPSULATIONS[usize::from(self.0[0]) % ENCAPSULATIONS.len()].kind
    }

    fn flag(&self, f: u8) -> bool {
        self.0[1] & f != 0
    }

    fn be16(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.0[at], self.0[at + 1]])
    }

    fn be32(&self, at: usize) -> u32 {
        u32::from_be_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }

    /// The tunnel header's bytes (31-50).
    pub fn header(&self) -> &[u8] {
        &self.0[Self::HEADER_AT..]
    }

    /// Whether the tunnel carries the IP packet rather than the Ethernet frame, as built.
    pub fn carries_ip(&self, raw_fields: bool) -> bool {
        match self.kind() {
            EncapKind::Gre => {
                if raw_fields {
                    matches!(self.be16(19), ETHERTYPE_IPV4 | ETHERTYPE_IPV6)
                } else {
                    self.flag(Self::INNER_IP)
                }
            }
            EncapKind::Geneve => {
                let protocol = u16::from_be_bytes([self.header()[2], self.header()[3]]);
                if raw_fields {
                    matches!(protocol, ETHERTYPE_IPV4 | ETHERTYPE_IPV6)
                } else {
                    self.flag(Self::INNER_IP)
                }
            }
            EncapKind::ErspanIII => {
                if raw_fields {
                    (self.header()[10] >> 2) & 0x1f == 2
                } else {
                    self.flag(Self::INNER_IP)
                }
            }
            _ => false,
        }
    }

    /// The GRE header: C/K/S by the flags, version and protocol as given with `raw_fields`,
    /// else 0 and `protocol`.
    fn gre(&self, raw_fields: bool, protocol: u16) -> GreRepr {
        GreRepr {
            version: if raw_fields { self.0[18] & 7 } else { 0 },
            protocol: if raw_fields { self.be16(19) } else { protocol },
            checksum: self.flag(Self::GRE_C).then(|| self.be16(21)),
            key: self.flag(Self::GRE_K).then(|| self.be32(23)),
            seq: self.flag(Self::GRE_S).then(|| self.be32(27)),
        }
    }

    /// The tunnel's headers. `inner_ethertype` is what GRE and Geneve announce when they carry
    /// IP (from the carried packet's version nibble); `options` the Geneve options.
    pub fn tunnel<'o>(
        &self,
        raw_fields: bool,
        inner_ethertype: u16,
        options: &'o [u8],
    ) -> Tunnel<'o> {
        let carried = if self.carries_ip(raw_fields) { inner_ethertype } else { GRE_PROTOCOL_TEB };
        let h = self.header();
        match self.kind() {
            EncapKind::Gre => Tunnel::Gre(self.gre(raw_fields, carried)),
            // `TunnelBuilder` sizes the frame by the `GreRepr` it is given (`Tunnel::len`) but
            // writes ERSPAN I without and ERSPAN II with a sequence number (`Tunnel::emit`):
            // given another, its frame is 4 bytes off (a debug assertion; in release the inner
            // frame is left out or misplaced). Here it gets what it writes.
            EncapKind::ErspanI => {
                Tunnel::ErspanI(GreRepr { seq: None, ..self.gre(raw_fields, GRE_PROTOCOL_ERSPAN) })
            }
            EncapKind::ErspanII => {
                let mut e = ErspanIIRepr::parse(h).unwrap_or_default();
                if !raw_fields {
                    e.version = 1;
                }
                let g = self.gre(raw_fields, GRE_PROTOCOL_ERSPAN);
                Tunnel::ErspanII(GreRepr { seq: g.seq.or(Some(self.be32(27))), ..g }, e)
            }
            EncapKind::ErspanIII => {
                let mut e = ErspanIIIRepr::parse(h).unwrap_or_default();
                if !raw_fields {
                    e.version = 2;
                    let ip = self.flag(Self::INNER_IP);
                    e.frame_type = match (ip, e.frame_type) {
                        (true, _) => 2,
                        (false, 2) => 0,
                        (false, ft) => ft,
                    };
                }
                Tunnel::ErspanIII(self.gre(raw_fields, GRE_PROTOCOL_ERSPAN3), e)
            }
            EncapKind::Vxlan => Tunnel::Vxlan(VxlanRepr::parse(h).unwrap_or_default()),
            EncapKind::Geneve => Tunnel::Geneve(GeneveRepr {
                version: if raw_fields { h[0] >> 6 } else { 0 },
                oam: h[1] & 0x80 != 0,
                critical: h[1] & 0x40 != 0,
                protocol: if raw_fields { u16::from_be_bytes([h[2], h[3]]) } else { carried },
                vni: u32::from_be_bytes([0, h[4], h[5], h[6]]),
                options,
            }),
        }
    }

    /// Geneve option bytes this record asks for (its Opt Len x 4; 0 for the other kinds).
    pub fn options_len(&self) -> usize {
        match self.kind() {
            EncapKind::Geneve => usize::from(self.header()[0] & 0x3f) * 4,
            _ => 0,
        }
    }

    /// The builder of this tunnel around its inner bytes.
    pub fn builder<'o>(&self, tunnel: Tunnel<'o>) -> TunnelBuilder<'o> {
        let src = [self.0[6], self.0[7], self.0[8], self.0[9]];
        let dst = [self.0[10], self.0[11], self.0[12], self.0[13]];
        let network = if self.flag(Self::IPV6) {
            let v6 = |a: [u8; 4]| {
                let mut x = [0u8; 16];
                x[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
                x[12..].copy_from_slice(&a);
                x
            };
            let mut s = Network::ipv6(v6(src), v6(dst));
            if let Network::Ipv6(spec) = &mut s {
                spec.hop_limit = self.0[14];
                spec.traffic_class = self.0[15];
                spec.flow_label = u32::from(self.be16(16));
            }
            s
        } else {
            let mut s = Network::ipv4(src, dst);
            if let Network::Ipv4(spec) = &mut s {
                spec.ttl = self.0[14];
                spec.dscp = self.0[15] >> 2;
                spec.ecn = self.0[15] & 3;
                spec.identification = self.be16(16);
            }
            s
        };
        let mut b = TunnelBuilder::new(network, tunnel);
        b.udp_sport = self.be16(16);
        let (t0, t1) = if self.flag(Self::TPID) { (0x9100, 0x88a8) } else { (0x88a8, 0x8100) };
        let tag = |tpid: u16, tci: u16| VlanTag {
            tpid,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0xfff,
        };
        let mut n = 0;
        for (present, tpid, tci) in
            [(self.flag(Self::VLAN0), t0, self.be16(2)), (self.flag(Self::VLAN1), t1, self.be16(4))]
        {
            if present {
                b.vlans[n] = Some(tag(tpid, tci));
                n += 1;
            }
        }
        b
    }
}

/// An inner frame the builder writes (control bit [`EncapInput::BUILT`]): a RoCE packet of
/// any opcode, network and headers, with its right ICRC.
#[derive(Arbitrary, Clone, Debug)]
pub struct BuiltInner<'a> {
    pub opcode: u8,
    pub network: Network,
    pub vlan: Option<VlanSpec>,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    pub payload: &'a [u8],
}

impl<'a> EncapInput<'a> {
    /// Bytes before the first tunnel record.
    pub const HEADER: usize = 8;
    /// Control: two tunnels (else one).
    pub const TWO: u8 = 0x01;
    /// Control: the tunnels' versions and protocols as the records give them (the decoders
    /// may then refuse or not recognise a tunnel), not the values they take.
    pub const RAW_FIELDS: u8 = 0x02;
    /// Control: the ICRC (and the IPv4 checksum) not verified.
    pub const NO_VERIFY: u8 = 0x04;
    /// Control: damage, 2 bits: 0 none, 1 cut the wrapped frame at `damage_at`, 2 flip the
    /// byte at `damage_at`, 3 none.
    pub const DAMAGE_SHIFT: u8 = 3;
    /// Control: three segments (else two).
    pub const THREE_SEGMENTS: u8 = 0x20;
    /// Control: the inner frame is built (a [`BuiltInner`]), not taken as it is.
    pub const BUILT: u8 = 0x40;

    /// Reads an input; `None` below [`EncapInput::HEADER`] bytes. Missing record bytes are 0.
    pub fn decode(data: &'a [u8]) -> Option<Self> {
        let head = data.get(..Self::HEADER)?;
        let control = head[0];
        let n = if control & Self::TWO != 0 { 2 } else { 1 };
        let mut rest = &data[Self::HEADER..];
        let mut tunnels = Vec::with_capacity(n);
        for _ in 0..n {
            let mut r = [0u8; TunnelRecord::LEN];
            let take = rest.len().min(TunnelRecord::LEN);
            r[..take].copy_from_slice(&rest[..take]);
            rest = &rest[take..];
            tunnels.push(TunnelRecord(r));
        }
        let mut options = Vec::with_capacity(n);
        for t in &tunnels {
            let take = t.options_len().min(rest.len()) / 4 * 4;
            options.push(&rest[..take]);
            rest = &rest[take..];
        }
        Some(EncapInput {
            control,
            damage_at: u16::from_be_bytes([head[1], head[2]]),
            xor: head[3],
            cuts: [u16::from_be_bytes([head[4], head[5]]), u16::from_be_bytes([head[6], head[7]])],
            tunnels,
            options,
            inner: rest,
        })
    }

    /// The bytes [`EncapInput::decode`] reads back as `self` (the options are written as
    /// given: make them the length the records ask for).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = vec![self.control];
        v.extend_from_slice(&self.damage_at.to_be_bytes());
        v.push(self.xor);
        v.extend_from_slice(&self.cuts[0].to_be_bytes());
        v.extend_from_slice(&self.cuts[1].to_be_bytes());
        for t in &self.tunnels {
            v.extend_from_slice(&t.0);
        }
        for o in &self.options {
            v.extend_from_slice(o);
        }
        v.extend_from_slice(self.inner);
        v
    }

    /// Builds the wrapped frame: the inner frame (built, or as given), then each tunnel from
    /// the innermost out (a tunnel that carries IP gets the packet without its Ethernet header
    /// and tags, when their length is known: a built frame, a tunnel's). `None` when a
    /// builder refuses (a frame too long for its length fields, a built inner frame that does
    /// not decode).
    pub fn wrap(&self) -> Option<Wrapped> {
        let raw_fields = self.raw_fields();
        // `l2`: the length of the payload's Ethernet header and tags, when known.
        let (mut payload, mut l2) = if self.control & Self::BUILT != 0 {
            let b = decode::<BuiltInner>(self.inner)?;
            // A mirror carries Ethernet frames: native InfiniBand is the `infiniband` target's.
            if matches!(b.network, Network::Infiniband(..)) {
                return None;
            }
            let bth = BthRepr { opcode: b.opcode, ..b.bth.normalized() };
            let mut fb = FrameBuilder::new(b.network, bth);
            fb.vlans[0] = b.vlan.map(VlanSpec::tag);
            fb.headers = b.headers;
            fb.payload = b.payload;
            (emit(&fb)?, Some(14 + 4 * usize::from(b.vlan.is_some())))
        } else {
            (self.inner.to_vec(), None)
        };
        let mut innermost: Option<(Vec<u8>, Option<u16>)> = None;
        let mut kinds = Vec::new();
        for (i, rec) in self.tunnels.iter().enumerate().rev() {
            let carries_ip = rec.carries_ip(raw_fields);
            let carried: Vec<u8> = match (carries_ip, l2) {
                (true, Some(n)) => payload.get(n..).unwrap_or_default().to_vec(),
                _ => payload.clone(),
            };
            let ethertype = ip_ethertype(&carried);
            let tunnel = rec.tunnel(raw_fields, ethertype, self.options.get(i).copied()?);
            let b = rec.builder(tunnel);
            let mut out = vec![0u8; b.buffer_len(carried.len())];
            let n = b.emit(&carried, &mut out).ok()?;
            assert_eq!(n, out.len(), "TunnelBuilder: emitted length differs from buffer_len");
            if innermost.is_none() {
                // How the parser enters it: GRE and Geneve by the protocol they announce,
                // ERSPAN III frame type 2 by the version nibble (the same rule here).
                let how = carries_ip.then_some(match tunnel {
                    Tunnel::Gre(g) => g.protocol,
                    Tunnel::Geneve(g) => g.protocol,
                    _ => ethertype,
                });
                innermost = Some((carried, how));
            }
            kinds.push(rec.kind());
            l2 = Some(14 + 4 * b.vlans.iter().flatten().count());
            payload = out;
        }
        kinds.reverse();
        let (inner, enter) = innermost?;
        Some(Wrapped { frame: payload, kinds, inner, enter })
    }

    pub fn raw_fields(&self) -> bool {
        self.control & Self::RAW_FIELDS != 0
    }

    pub fn damage(&self) -> u8 {
        (self.control >> Self::DAMAGE_SHIFT) & 3
    }
}

/// A wrapped frame ([`EncapInput::wrap`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    /// The frame, outermost Ethernet header first.
    pub frame: Vec<u8>,
    /// The tunnels built, outermost first.
    pub kinds: Vec<EncapKind>,
    /// What the innermost tunnel carries (at the end of `frame`).
    pub inner: Vec<u8>,
    /// How the parser enters it: `None` as an Ethernet frame, else as the packet of this
    /// EtherType.
    pub enter: Option<u16>,
}

/// The EtherType the parser takes an IP packet for when a tunnel does not say (ERSPAN III
/// frame type 2), and the one these inputs announce in GRE and Geneve: by the version nibble,
/// IPv6 for 6, IPv4 otherwise (and for an empty packet).
pub fn ip_ethertype(packet: &[u8]) -> u16 {
    match packet.first().map(|b| b >> 4) {
        Some(6) => ETHERTYPE_IPV6,
        _ => ETHERTYPE_IPV4,
    }
}
