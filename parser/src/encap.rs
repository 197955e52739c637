//! Switch-mirror and overlay encapsulations: the outer layers a RoCE frame arrives in when it
//! was captured away from the host (ERSPAN I/II/III, GRE transparent Ethernet bridging, VXLAN,
//! Geneve), taken off before the RoCE parse.
//!
//! Why here, in the parser, and why this way:
//! - A mirror copies the frame unchanged and adds its own Ethernet/IP(/UDP) and tunnel header
//!   outside, so the inner frame is parsed exactly as a frame captured on the host (the same
//!   function, from the inner offset): the same fields, the same problems, its ICRC verified
//!   on the inner packet. [`Packet`]'s `eth`, `vlans`, `ip`, `udp` and `roce` describe the
//!   inner frame; [`Packet::encap`] keeps each tunnel's outer layers, outermost first.
//! - A plain RoCEv2 frame pays nothing: a tunnel is only looked for where a plain frame would
//!   stop anyway (an IP protocol other than UDP, a UDP port other than RoCE's).
//! - What each encapsulation is, how it is recognised and what follows it is one table,
//!   [`ENCAPSULATIONS`] (`encap_table!`); the header layouts are the `mod field`s below.
//! - Nothing is copied: the Geneve options are a slice of the frame, read by
//!   [`GeneveRepr::options`].
//! - A mirror that truncates (ERSPAN's T bit, a short snap length at the switch) cuts the
//!   inner frame: its lengths then promise more than is there, so it is `truncated` and its
//!   ICRC unverifiable, never bad.
//!
//! Layouts (big-endian, fields from the most significant bit): GRE RFC 2784 / RFC 2890; ERSPAN
//! draft-foschiano-erspan-03 (types I, II, III) as Wireshark's packet-erspan.c and Linux's
//! include/net/erspan.h read it; VXLAN RFC 7348; Geneve RFC 8926.

use crate::bytes::*;
use crate::error::{Error, Layer, Result};
use crate::packet::{
    ethernet_at, parse_network, EthernetInfo, IpInfo, Packet, UdpInfo, VlanTag, ETHERTYPE_IPV4,
    ETHERTYPE_IPV6, MAX_VLANS,
};
use crate::problems::Problem;
use crate::segments::Source;

/// IP protocol number of GRE.
pub const IP_PROTOCOL_GRE: u8 = 47;
/// GRE protocol (an EtherType) of transparent Ethernet bridging: an Ethernet frame follows.
pub const GRE_PROTOCOL_TEB: u16 = 0x6558;
/// GRE protocol of ERSPAN types I and II.
pub const GRE_PROTOCOL_ERSPAN: u16 = 0x88be;
/// GRE protocol of ERSPAN type III.
pub const GRE_PROTOCOL_ERSPAN3: u16 = 0x22eb;
/// The IANA UDP port of VXLAN.
pub const VXLAN_UDP_PORT: u16 = 4789;
/// The IANA UDP port of Geneve.
pub const GENEVE_UDP_PORT: u16 = 6081;
/// Tunnels taken off one frame, outermost first (a mirror of overlay traffic has two:
/// ERSPAN outside, VXLAN inside); deeper nesting stops the parse with a message.
pub const MAX_ENCAP: usize = 2;

/// Builds [`EncapKind`], [`ENCAPSULATIONS`] and [`ENCAP_CODES`] from one row per
/// encapsulation.
macro_rules! encap_table {
    ($(
        $(#[$doc:meta])*
        $kind:ident: $code:literal, $name:literal, carried by $carrier:expr, header $hlen:literal;
    )*) => {
        /// An encapsulation the parser takes off (one row of [`ENCAPSULATIONS`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub enum EncapKind {
            $($(#[$doc])* $kind,)*
        }

        /// Every encapsulation: its kind, stable code, name, what carries it and the length of
        /// its own header (the GRE header before it aside; the least, without options).
        pub static ENCAPSULATIONS: &[EncapInfo] = &[
            $(EncapInfo { kind: EncapKind::$kind, code: $code, name: $name, carrier: $carrier, header_len: $hlen },)*
        ];

        /// Every encapsulation's code, in [`ENCAPSULATIONS`]' order (the filter's values of
        /// `encap.kind`).
        pub const ENCAP_CODES: &[&str] = &[$($code),*];

        impl EncapKind {
            /// Its row's position in [`ENCAPSULATIONS`] (and [`ENCAP_CODES`]).
            pub const fn index(self) -> usize {
                self as usize
            }
            /// The stable code (JSON `encap[].kind`, the filter's `encap.kind`, `stats`' keys):
            /// snake case, never reworded.
            pub const fn code(self) -> &'static str {
                match self { $(EncapKind::$kind => $code,)* }
            }
            /// The name a fabric engineer uses.
            pub const fn name(self) -> &'static str {
                match self { $(EncapKind::$kind => $name,)* }
            }
            /// The table's row.
            pub const fn info(self) -> &'static EncapInfo {
                match self {
                    $(EncapKind::$kind => &EncapInfo { kind: EncapKind::$kind, code: $code, name: $name, carrier: $carrier, header_len: $hlen },)*
                }
            }
        }
    };
}

/// What carries an encapsulation's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// A GRE header of this protocol type (ERSPAN I and II share 0x88BE: the GRE sequence
    /// number tells them apart, present for type II).
    Gre(u16),
    /// A UDP datagram to this destination port.
    UdpPort(u16),
}

/// One row of [`ENCAPSULATIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncapInfo {
    /// The encapsulation.
    pub kind: EncapKind,
    /// Its stable code.
    pub code: &'static str,
    /// Its name.
    pub name: &'static str,
    /// What carries it.
    pub carrier: Carrier,
    /// Its own header's length in bytes (without options or ERSPAN III's platform subheader).
    pub header_len: usize,
}

encap_table! {
    /// GRE transparent Ethernet bridging (protocol 0x6558), or GRE carrying IP (0x0800,
    /// 0x86DD): no header of its own after GRE's.
    Gre: "gre", "GRE", carried by Carrier::Gre(GRE_PROTOCOL_TEB), header 0;
    /// ERSPAN type I: GRE 0x88BE without a sequence number, the mirrored frame right after.
    ErspanI: "erspan1", "ERSPAN type I", carried by Carrier::Gre(GRE_PROTOCOL_ERSPAN), header 0;
    /// ERSPAN type II: GRE 0x88BE with a sequence number, an 8-byte header.
    ErspanII: "erspan2", "ERSPAN type II", carried by Carrier::Gre(GRE_PROTOCOL_ERSPAN), header 8;
    /// ERSPAN type III: GRE 0x22EB, a 12-byte header (and an 8-byte platform subheader when O).
    ErspanIII: "erspan3", "ERSPAN type III", carried by Carrier::Gre(GRE_PROTOCOL_ERSPAN3), header 12;
    /// VXLAN: UDP port 4789, an 8-byte header, an Ethernet frame.
    Vxlan: "vxlan", "VXLAN", carried by Carrier::UdpPort(VXLAN_UDP_PORT), header 8;
    /// Geneve: UDP port 6081, an 8-byte header and options, then what its protocol type says.
    Geneve: "geneve", "Geneve", carried by Carrier::UdpPort(GENEVE_UDP_PORT), header 8;
}

impl EncapKind {
    /// The encapsulation a UDP destination port carries, if any.
    #[inline]
    pub fn by_udp_port(port: u16) -> Option<EncapKind> {
        ENCAPSULATIONS.iter().find(|e| e.carrier == Carrier::UdpPort(port)).map(|e| e.kind)
    }
}

/// The GRE header (RFC 2784, with RFC 2890's key and sequence number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GreRepr {
    /// Version (3 bits): 0 for the GRE this parser takes apart.
    pub version: u8,
    /// Protocol type: the EtherType of what follows (0x6558, 0x88BE, 0x22EB, 0x0800, 0x86DD).
    pub protocol: u16,
    /// The checksum, when C is set.
    pub checksum: Option<u16>,
    /// The key, when K is set.
    pub key: Option<u32>,
    /// The sequence number, when S is set.
    pub seq: Option<u32>,
}

mod gre_field {
    pub const C: u16 = 0x8000;
    pub const R: u16 = 0x4000;
    pub const K: u16 = 0x2000;
    pub const S: u16 = 0x1000;
    pub const VERSION: u16 = 0x0007;
    pub const FLAGS: core::ops::Range<usize> = 0..2;
    pub const PROTOCOL: core::ops::Range<usize> = 2..4;
}

impl GreRepr {
    /// The header's length on the wire: 4, and 4 more for each of checksum, key, sequence.
    pub fn len(&self) -> usize {
        4 + [self.checksum.is_some(), self.key.is_some(), self.seq.is_some()]
            .iter()
            .filter(|x| **x)
            .count()
            * 4
    }

    /// Always false (a GRE header has at least 4 bytes); for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Reads a GRE header from the start of `b`; errors name offsets in `b`.
    pub fn parse(b: &[u8]) -> Result<GreRepr> {
        if b.len() < 4 {
            return Err(Error::truncated(Layer::Gre, 0, 4, b.len()));
        }
        let flags = be_u16(b, gre_field::FLAGS);
        let version = (flags & gre_field::VERSION) as u8;
        if version != 0 {
            return Err(Error::malformed(Layer::Gre, 0, "GRE version is not 0"));
        }
        if flags & gre_field::R != 0 {
            return Err(Error::malformed(Layer::Gre, 0, "GRE with routing (RFC 1701) not decoded"));
        }
        let c = flags & gre_field::C != 0;
        let k = flags & gre_field::K != 0;
        let s = flags & gre_field::S != 0;
        let need = 4 + 4 * (usize::from(c) + usize::from(k) + usize::from(s));
        if b.len() < need {
            return Err(Error::truncated(Layer::Gre, 0, need, b.len()));
        }
        let mut at = 4;
        let mut take = |present: bool| {
            let v = present.then(|| be_u32(b, at..at + 4));
            at += 4 * usize::from(present);
            v
        };
        let checksum = take(c).map(|w| (w >> 16) as u16);
        let key = take(k);
        let seq = take(s);
        Ok(GreRepr { version, protocol: be_u16(b, gre_field::PROTOCOL), checksum, key, seq })
    }

    /// Writes the header at the start of `out`; returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let len = self.len();
        let have = out.len();
        let out = out.get_mut(..len).ok_or(Error::buffer_too_small(Layer::Gre, len, have))?;
        let mut flags = u16::from(self.version) & gre_field::VERSION;
        flags |= if self.checksum.is_some() { gre_field::C } else { 0 };
        flags |= if self.key.is_some() { gre_field::K } else { 0 };
        flags |= if self.seq.is_some() { gre_field::S } else { 0 };
        set_be_u16(out, gre_field::FLAGS, flags);
        set_be_u16(out, gre_field::PROTOCOL, self.protocol);
        let mut at = 4;
        let words = [self.checksum.map(|c| u32::from(c) << 16), self.key, self.seq];
        for w in words.into_iter().flatten() {
            set_be_u32(out, at..at + 4, w);
            at += 4;
        }
        Ok(len)
    }
}

/// The first 32-bit word, laid out alike in ERSPAN types II and III: Ver (4), VLAN (12), COS
/// (3), En (II) or BSO (III) (2), T (1), Session ID (10).
struct Word0 {
    version: u8,
    vlan: u16,
    cos: u8,
    two_bits: u8,
    truncated: bool,
    session_id: u16,
}

impl Word0 {
    fn read(w: u32) -> Word0 {
        Word0 {
            version: (w >> 28) as u8,
            vlan: ((w >> 16) & 0x0fff) as u16,
            cos: ((w >> 13) & 7) as u8,
            two_bits: ((w >> 11) & 3) as u8,
            truncated: w & 0x0400 != 0,
            session_id: (w & 0x03ff) as u16,
        }
    }

    fn write(&self) -> u32 {
        (u32::from(self.version & 0xf) << 28)
            | (u32::from(self.vlan & 0x0fff) << 16)
            | (u32::from(self.cos & 7) << 13)
            | (u32::from(self.two_bits & 3) << 11)
            | (u32::from(self.truncated) << 10)
            | u32::from(self.session_id & 0x03ff)
    }
}

/// The ERSPAN type II header (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ErspanIIRepr {
    /// Ver (4 bits): 1.
    pub version: u8,
    /// VLAN (12 bits): the mirrored frame's original VLAN.
    pub vlan: u16,
    /// COS (3 bits): its class of service.
    pub cos: u8,
    /// En (2 bits): how the frame was tagged (0 untagged, 1 ISL, 2 802.1Q, 3 VLAN kept in it).
    pub encap_type: u8,
    /// T: the switch truncated the mirrored frame.
    pub truncated: bool,
    /// Session ID (10 bits): the mirror session.
    pub session_id: u16,
    /// Index (20 bits): the port or module the frame was mirrored at.
    pub index: u32,
}

/// The ERSPAN type III platform-specific subheader (8 bytes, when O is set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ErspanPlatform {
    /// Platf ID (6 bits): which layout the rest has.
    pub id: u8,
    /// The 58 bits after it (platform specific: a port ID, the upper timestamp, ...).
    pub info: u64,
}

/// The ERSPAN type III header (12 bytes, and its platform subheader when O is set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ErspanIIIRepr {
    /// Ver (4 bits): 2.
    pub version: u8,
    /// VLAN (12 bits).
    pub vlan: u16,
    /// COS (3 bits).
    pub cos: u8,
    /// BSO (2 bits): bad/short/oversized frame indication.
    pub bso: u8,
    /// T: the switch truncated the mirrored frame.
    pub truncated: bool,
    /// Session ID (10 bits).
    pub session_id: u16,
    /// Timestamp (32 bits), in the granularity `granularity` says.
    pub timestamp: u32,
    /// SGT (16 bits): the security group tag.
    pub sgt: u16,
    /// P: the frame is an Ethernet PDU (1) or an IP packet.
    pub pdu: bool,
    /// FT (5 bits): frame type (0 Ethernet, 2 IP).
    pub frame_type: u8,
    /// Hw ID (6 bits): the ERSPAN engine.
    pub hw_id: u8,
    /// D: direction, 0 ingress, 1 egress.
    pub direction: bool,
    /// Gra (2 bits): timestamp granularity (0 100 us, 1 100 ns, 2 IEEE 1588, 3 user).
    pub granularity: u8,
    /// The platform-specific subheader, when O is set.
    pub platform: Option<ErspanPlatform>,
}

impl ErspanIIRepr {
    /// The header's length on the wire.
    pub const LEN: usize = 8;

    /// Reads the header from the start of `b`.
    pub fn parse(b: &[u8]) -> Result<ErspanIIRepr> {
        if b.len() < Self::LEN {
            return Err(Error::truncated(Layer::Erspan, 0, Self::LEN, b.len()));
        }
        let w = Word0::read(be_u32(b, 0..4));
        let w1 = be_u32(b, 4..8);
        Ok(ErspanIIRepr {
            version: w.version,
            vlan: w.vlan,
            cos: w.cos,
            encap_type: w.two_bits,
            truncated: w.truncated,
            session_id: w.session_id,
            index: w1 & 0x000f_ffff,
        })
    }

    /// Writes the header; returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let have = out.len();
        let out = out.get_mut(..Self::LEN).ok_or(Error::buffer_too_small(
            Layer::Erspan,
            Self::LEN,
            have,
        ))?;
        let w0 = Word0 {
            version: self.version,
            vlan: self.vlan,
            cos: self.cos,
            two_bits: self.encap_type,
            truncated: self.truncated,
            session_id: self.session_id,
        };
        set_be_u32(out, 0..4, w0.write());
        set_be_u32(out, 4..8, self.index & 0x000f_ffff);
        Ok(Self::LEN)
    }
}

impl ErspanIIIRepr {
    /// The header's length without the platform subheader.
    pub const LEN: usize = 12;
    /// The platform subheader's length.
    pub const PLATFORM_LEN: usize = 8;

    /// The header's length on the wire, the platform subheader included.
    pub fn len(&self) -> usize {
        Self::LEN + if self.platform.is_some() { Self::PLATFORM_LEN } else { 0 }
    }

    /// Always false; for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Reads the header (and its platform subheader) from the start of `b`.
    pub fn parse(b: &[u8]) -> Result<ErspanIIIRepr> {
        if b.len() < Self::LEN {
            return Err(Error::truncated(Layer::Erspan, 0, Self::LEN, b.len()));
        }
        let w = Word0::read(be_u32(b, 0..4));
        let w2 = be_u32(b, 8..12);
        let o = w2 & 1 != 0;
        let platform = if o {
            let need = Self::LEN + Self::PLATFORM_LEN;
            if b.len() < need {
                return Err(Error::truncated(Layer::Erspan, 0, need, b.len()));
            }
            let p = be_u64(b, 12..20);
            Some(ErspanPlatform { id: (p >> 58) as u8, info: p & ((1 << 58) - 1) })
        } else {
            None
        };
        Ok(ErspanIIIRepr {
            version: w.version,
            vlan: w.vlan,
            cos: w.cos,
            bso: w.two_bits,
            truncated: w.truncated,
            session_id: w.session_id,
            timestamp: be_u32(b, 4..8),
            sgt: (w2 >> 16) as u16,
            pdu: w2 & 0x8000 != 0,
            frame_type: ((w2 >> 10) & 0x1f) as u8,
            hw_id: ((w2 >> 4) & 0x3f) as u8,
            direction: w2 & 0x8 != 0,
            granularity: ((w2 >> 1) & 3) as u8,
            platform,
        })
    }

    /// Writes the header (and its platform subheader); returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let len = self.len();
        let have = out.len();
        let out = out.get_mut(..len).ok_or(Error::buffer_too_small(Layer::Erspan, len, have))?;
        let w0 = Word0 {
            version: self.version,
            vlan: self.vlan,
            cos: self.cos,
            two_bits: self.bso,
            truncated: self.truncated,
            session_id: self.session_id,
        }
        .write();
        let w2 = (u32::from(self.sgt) << 16)
            | (u32::from(self.pdu) << 15)
            | (u32::from(self.frame_type & 0x1f) << 10)
            | (u32::from(self.hw_id & 0x3f) << 4)
            | (u32::from(self.direction) << 3)
            | (u32::from(self.granularity & 3) << 1)
            | u32::from(self.platform.is_some());
        set_be_u32(out, 0..4, w0);
        set_be_u32(out, 4..8, self.timestamp);
        set_be_u32(out, 8..12, w2);
        if let Some(p) = self.platform {
            let w = (u64::from(p.id & 0x3f) << 58) | (p.info & ((1 << 58) - 1));
            set_bytes(out, 12..20, &w.to_be_bytes());
        }
        Ok(len)
    }
}

/// The VXLAN header (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct VxlanRepr {
    /// Flags (8 bits): 0x08 (I) when the VNI is valid.
    pub flags: u8,
    /// VNI (24 bits): the VXLAN network identifier.
    pub vni: u32,
}

impl VxlanRepr {
    /// The header's length on the wire.
    pub const LEN: usize = 8;
    /// The I flag: the VNI is valid.
    pub const FLAG_I: u8 = 0x08;

    /// Reads the header from the start of `b`.
    pub fn parse(b: &[u8]) -> Result<VxlanRepr> {
        if b.len() < Self::LEN {
            return Err(Error::truncated(Layer::Vxlan, 0, Self::LEN, b.len()));
        }
        Ok(VxlanRepr { flags: u8_at(b, 0), vni: be_u24(b, 4..7) })
    }

    /// Writes the header; returns its length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let have = out.len();
        let out = out.get_mut(..Self::LEN).ok_or(Error::buffer_too_small(
            Layer::Vxlan,
            Self::LEN,
            have,
        ))?;
        out.fill(0);
        set_u8(out, 0, self.flags);
        set_bytes(out, 4..7, &self.vni.to_be_bytes()[1..]);
        Ok(Self::LEN)
    }
}

/// The Geneve header (8 bytes and its options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GeneveRepr<'a> {
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
    /// The options' bytes (Opt Len x 4), as the frame holds them.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub options: &'a [u8],
}

/// One Geneve option (RFC 8926, 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeneveOption<'a> {
    /// Option class (16 bits).
    pub class: u16,
    /// Type (8 bits); its high bit marks a critical option.
    pub kind: u8,
    /// The option's data (Length x 4 bytes).
    pub data: &'a [u8],
}

impl<'a> GeneveRepr<'a> {
    /// The fixed header's length.
    pub const LEN: usize = 8;

    /// The header's length on the wire, options included.
    pub fn len(&self) -> usize {
        Self::LEN + self.options.len()
    }

    /// Always false; for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Reads the header and its options from the start of `b`.
    pub fn parse(b: &'a [u8]) -> Result<GeneveRepr<'a>> {
        if b.len() < Self::LEN {
            return Err(Error::truncated(Layer::Geneve, 0, Self::LEN, b.len()));
        }
        let b0 = u8_at(b, 0);
        let b1 = u8_at(b, 1);
        let version = b0 >> 6;
        if version != 0 {
            return Err(Error::malformed(Layer::Geneve, 0, "Geneve version is not 0"));
        }
        let opt_len = usize::from(b0 & 0x3f) * 4;
        let options = b.get(Self::LEN..Self::LEN + opt_len).ok_or(Error::truncated(
            Layer::Geneve,
            0,
            Self::LEN + opt_len,
            b.len(),
        ))?;
        Ok(GeneveRepr {
            version,
            oam: b1 & 0x80 != 0,
            critical: b1 & 0x40 != 0,
            protocol: be_u16(b, 2..4),
            vni: be_u24(b, 4..7),
            options,
        })
    }

    /// The options, in order; a last option whose length reaches past the options' bytes is
    /// left out (the walk never reads past them).
    pub fn options(&self) -> impl Iterator<Item = GeneveOption<'a>> + 'a {
        let mut rest = self.options;
        core::iter::from_fn(move || {
            let head = rest.get(..4)?;
            let len = usize::from(u8_at(head, 3) & 0x1f) * 4;
            let data = rest.get(4..4 + len)?;
            let opt = GeneveOption { class: be_u16(head, 0..2), kind: u8_at(head, 2), data };
            rest = rest.get(4 + len..).unwrap_or(&[]);
            Some(opt)
        })
    }

    /// Writes the header and its options; returns its length. The options must be a whole
    /// number of 4-byte words, at most 252 bytes.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let len = self.len();
        if !self.options.len().is_multiple_of(4) || self.options.len() > 63 * 4 {
            return Err(Error::malformed(Layer::Builder, 0, "Geneve options not 0..=63 words"));
        }
        let have = out.len();
        let out = out.get_mut(..len).ok_or(Error::buffer_too_small(Layer::Geneve, len, have))?;
        let words = (self.options.len() / 4) as u8;
        set_u8(out, 0, ((self.version & 3) << 6) | words);
        set_u8(out, 1, (u8::from(self.oam) << 7) | (u8::from(self.critical) << 6));
        set_be_u16(out, 2..4, self.protocol);
        set_bytes(out, 4..7, &self.vni.to_be_bytes()[1..]);
        set_u8(out, 7, 0);
        set_bytes(out, Self::LEN..len, self.options);
        Ok(len)
    }
}

/// A tunnel's own headers: GRE's and, after it or after UDP, the encapsulation's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tunnel<'a> {
    /// GRE: transparent Ethernet bridging, or IP in GRE.
    Gre(GreRepr),
    /// ERSPAN type I (GRE only).
    ErspanI(GreRepr),
    /// ERSPAN type II.
    ErspanII(GreRepr, ErspanIIRepr),
    /// ERSPAN type III.
    ErspanIII(GreRepr, ErspanIIIRepr),
    /// VXLAN (after the outer UDP header).
    Vxlan(VxlanRepr),
    /// Geneve (after the outer UDP header).
    Geneve(GeneveRepr<'a>),
}

impl Tunnel<'_> {
    /// Which encapsulation it is.
    pub fn kind(&self) -> EncapKind {
        match self {
            Tunnel::Gre(_) => EncapKind::Gre,
            Tunnel::ErspanI(_) => EncapKind::ErspanI,
            Tunnel::ErspanII(..) => EncapKind::ErspanII,
            Tunnel::ErspanIII(..) => EncapKind::ErspanIII,
            Tunnel::Vxlan(_) => EncapKind::Vxlan,
            Tunnel::Geneve(_) => EncapKind::Geneve,
        }
    }

    /// The length of the tunnel's headers on the wire (GRE and the encapsulation header), as
    /// [`Tunnel::emit`] writes them.
    pub fn len(&self) -> usize {
        match self {
            Tunnel::Gre(_) | Tunnel::ErspanI(_) => self.wire_gre().map_or(0, |g| g.len()),
            Tunnel::ErspanII(..) => self.wire_gre().map_or(0, |g| g.len()) + ErspanIIRepr::LEN,
            Tunnel::ErspanIII(_, e) => self.wire_gre().map_or(0, |g| g.len()) + e.len(),
            Tunnel::Vxlan(_) => VxlanRepr::LEN,
            Tunnel::Geneve(g) => g.len(),
        }
    }

    /// Never: every tunnel has a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The GRE header as written: the protocol the kind requires (ERSPAN I and II 0x88BE, III
    /// 0x22EB), a sequence number for ERSPAN II and III (what tells II from I, which has
    /// none).
    fn wire_gre(&self) -> Option<GreRepr> {
        match self {
            Tunnel::Gre(g) => Some(*g),
            Tunnel::ErspanI(g) => Some(GreRepr { protocol: GRE_PROTOCOL_ERSPAN, seq: None, ..*g }),
            Tunnel::ErspanII(g, _) => {
                Some(GreRepr { protocol: GRE_PROTOCOL_ERSPAN, seq: g.seq.or(Some(0)), ..*g })
            }
            Tunnel::ErspanIII(g, _) => {
                Some(GreRepr { protocol: GRE_PROTOCOL_ERSPAN3, seq: g.seq.or(Some(0)), ..*g })
            }
            Tunnel::Vxlan(_) | Tunnel::Geneve(_) => None,
        }
    }

    /// Writes the tunnel's headers at the start of `out` ([`Tunnel::len`] bytes; the GRE
    /// header as the kind requires, see `wire_gre`); returns their length.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize> {
        let gre = match self {
            Tunnel::Vxlan(v) => return v.emit(out),
            Tunnel::Geneve(g) => return g.emit(out),
            _ => self.wire_gre().unwrap_or_default(),
        };
        let n = gre.emit(out)?;
        let tail = out.get_mut(n..).unwrap_or(&mut []);
        let m = match self {
            Tunnel::ErspanII(_, e) => e.emit(tail)?,
            Tunnel::ErspanIII(_, e) => e.emit(tail)?,
            _ => 0,
        };
        Ok(n + m)
    }

    /// The GRE header, for the GRE-carried encapsulations.
    pub fn gre(&self) -> Option<&GreRepr> {
        match self {
            Tunnel::Gre(g)
            | Tunnel::ErspanI(g)
            | Tunnel::ErspanII(g, _)
            | Tunnel::ErspanIII(g, _) => Some(g),
            Tunnel::Vxlan(_) | Tunnel::Geneve(_) => None,
        }
    }

    /// The mirror session (ERSPAN II and III), the session a fabric engineer configured.
    pub fn session_id(&self) -> Option<u16> {
        match self {
            Tunnel::ErspanII(_, e) => Some(e.session_id),
            Tunnel::ErspanIII(_, e) => Some(e.session_id),
            _ => None,
        }
    }

    /// Whether the mirror says it truncated the frame (ERSPAN's T bit).
    pub fn truncated(&self) -> bool {
        match self {
            Tunnel::ErspanII(_, e) => e.truncated,
            Tunnel::ErspanIII(_, e) => e.truncated,
            _ => false,
        }
    }

    /// The virtual network (VXLAN and Geneve VNI).
    pub fn vni(&self) -> Option<u32> {
        match self {
            Tunnel::Vxlan(v) => Some(v.vni),
            Tunnel::Geneve(g) => Some(g.vni),
            _ => None,
        }
    }
}

/// One tunnel taken off a frame: the outer layers before it and its own headers. The
/// offsets are in the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encap<'a> {
    /// The outer Ethernet header (`None` when the outer packet started at IP).
    pub eth: Option<EthernetInfo>,
    /// The outer VLAN tags.
    pub vlans: [Option<VlanTag>; MAX_VLANS],
    /// The outer IP header.
    pub ip: Option<IpInfo>,
    /// The outer UDP header (VXLAN, Geneve).
    pub udp: Option<UdpInfo>,
    /// The tunnel's headers.
    pub tunnel: Tunnel<'a>,
    /// Offset of the tunnel's first header (GRE, or VXLAN / Geneve after UDP).
    pub offset: usize,
    /// Offset of the inner frame: its Ethernet header, or its IP header for IP in GRE or
    /// Geneve.
    pub inner_offset: usize,
}

impl Encap<'_> {
    /// Which encapsulation it is.
    pub fn kind(&self) -> EncapKind {
        self.tunnel.kind()
    }
}

/// What follows a tunnel header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inner {
    /// An Ethernet frame.
    Ethernet,
    /// A network packet of this EtherType (IP in GRE or Geneve, ERSPAN III frame type 2).
    Network(u16),
}

/// A tunnel decoded: its headers, where the inner frame starts and what it is.
pub(crate) struct Decoded<'a> {
    pub(crate) tunnel: Tunnel<'a>,
    pub(crate) inner_offset: usize,
    pub(crate) inner: Inner,
}

/// The tunnel in the GRE packet at `off` of `data`: `Ok(None)` when GRE carries nothing
/// [`ENCAPSULATIONS`] lists (nor IP). The one place that tells the GRE-carried kinds apart,
/// for the parse and for [`crate::parse_prefix`].
pub(crate) fn decode_gre(data: &[u8], off: usize) -> Result<Option<Decoded<'_>>> {
    let rest = data.get(off..).unwrap_or(&[]);
    let gre = GreRepr::parse(rest).map_err(|e| e.at(off))?;
    let after = off + gre.len();
    let hdr = data.get(after..).unwrap_or(&[]);
    let (tunnel, hlen, inner) = match gre.protocol {
        GRE_PROTOCOL_TEB => (Tunnel::Gre(gre), 0, Inner::Ethernet),
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => (Tunnel::Gre(gre), 0, Inner::Network(gre.protocol)),
        // Type I has no sequence number; that is all that tells it from type II.
        GRE_PROTOCOL_ERSPAN if gre.seq.is_none() => (Tunnel::ErspanI(gre), 0, Inner::Ethernet),
        GRE_PROTOCOL_ERSPAN => {
            let e = ErspanIIRepr::parse(hdr).map_err(|e| e.at(after))?;
            if e.version != 1 {
                return Err(Error::malformed(
                    Layer::Erspan,
                    after,
                    "ERSPAN type II version is not 1",
                ));
            }
            (Tunnel::ErspanII(gre, e), ErspanIIRepr::LEN, Inner::Ethernet)
        }
        GRE_PROTOCOL_ERSPAN3 => {
            let e = ErspanIIIRepr::parse(hdr).map_err(|e| e.at(after))?;
            if e.version != 2 {
                return Err(Error::malformed(
                    Layer::Erspan,
                    after,
                    "ERSPAN type III version is not 2",
                ));
            }
            // Frame type 2: the mirror sent the IP packet without its Ethernet header.
            let inner = if e.frame_type == 2 {
                Inner::Network(ip_ethertype(data, after + e.len()))
            } else {
                Inner::Ethernet
            };
            (Tunnel::ErspanIII(gre, e), e.len(), inner)
        }
        _ => return Ok(None),
    };
    Ok(Some(Decoded { tunnel, inner_offset: after + hlen, inner }))
}

/// The tunnel in a UDP datagram to a tunnel port ([`EncapKind::by_udp_port`]); `off` is the
/// byte after the UDP header. `Ok(None)` when it carries nothing the parser follows.
pub(crate) fn decode_udp(data: &[u8], kind: EncapKind, off: usize) -> Result<Option<Decoded<'_>>> {
    let rest = data.get(off..).unwrap_or(&[]);
    let (tunnel, hlen, inner) = match kind {
        EncapKind::Vxlan => {
            let v = VxlanRepr::parse(rest).map_err(|e| e.at(off))?;
            (Tunnel::Vxlan(v), VxlanRepr::LEN, Inner::Ethernet)
        }
        EncapKind::Geneve => {
            let g = GeneveRepr::parse(rest).map_err(|e| e.at(off))?;
            let inner = match g.protocol {
                GRE_PROTOCOL_TEB => Inner::Ethernet,
                ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Inner::Network(g.protocol),
                _ => return Ok(None),
            };
            (Tunnel::Geneve(g), g.len(), inner)
        }
        _ => return Ok(None),
    };
    Ok(Some(Decoded { tunnel, inner_offset: off + hlen, inner }))
}

/// An IP packet of protocol GRE whose GRE header is at `off`: takes the tunnel off when GRE
/// carries one of [`ENCAPSULATIONS`] or IP, and parses the inner frame. Any other GRE
/// payload leaves the packet as it is (not RoCE). Out of line: a plain RoCE frame never
/// comes here.
#[inline(never)]
pub(crate) fn gre<S: Source>(p: &mut Packet<'_>, off: usize, cfg: &crate::Config, t: S) {
    match decode_gre(p.data, off) {
        Ok(Some(d)) => enter(p, d, off, cfg, t),
        Ok(None) => {}
        Err(e) => stop(p, e),
    }
}

/// A UDP datagram to a tunnel port ([`EncapKind::by_udp_port`]); `off` is the byte after the
/// UDP header.
#[inline(never)]
pub(crate) fn udp<S: Source>(
    p: &mut Packet<'_>,
    kind: EncapKind,
    off: usize,
    cfg: &crate::Config,
    t: S,
) {
    match decode_udp(p.data, kind, off) {
        Ok(Some(d)) => enter(p, d, off, cfg, t),
        Ok(None) => {}
        Err(e) => stop(p, e),
    }
}

/// The EtherType of the IP packet at `at`, by its version nibble (IPv4 when it is cut).
fn ip_ethertype(data: &[u8], at: usize) -> u16 {
    match data.get(at).map(|b| b >> 4) {
        Some(6) => ETHERTYPE_IPV6,
        _ => ETHERTYPE_IPV4,
    }
}

fn stop(p: &mut Packet<'_>, e: Error) {
    if matches!(e.kind, crate::ErrorKind::Malformed(_)) {
        p.problems.insert(Problem::TunnelMalformed);
    }
    p.stop = Some(e);
}

/// Moves the outer layers into the next [`Packet::encap`] slot and parses the inner frame
/// at `inner_off` as a plain one.
fn enter<'a, S: Source>(p: &mut Packet<'a>, d: Decoded<'a>, off: usize, cfg: &crate::Config, t: S) {
    let Some(slot) = p.encap.iter_mut().find(|s| s.is_none()) else {
        let layer = match d.tunnel.kind() {
            EncapKind::Vxlan => Layer::Vxlan,
            EncapKind::Geneve => Layer::Geneve,
            _ => Layer::Gre,
        };
        return p.stop =
            Some(Error::malformed(layer, off, "tunnels nested deeper than 2: not decoded"));
    };
    *slot = Some(Encap {
        eth: p.eth.take(),
        vlans: core::mem::take(&mut p.vlans),
        ip: p.ip.take(),
        udp: p.udp.take(),
        tunnel: d.tunnel,
        offset: off,
        inner_offset: d.inner_offset,
    });
    match d.inner {
        Inner::Ethernet => ethernet_at(p, d.inner_offset, cfg, t),
        Inner::Network(ethertype) => parse_network(p, ethertype, d.inner_offset, cfg, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gre_flags_and_optional_words() {
        let g = GreRepr {
            protocol: 0x88be,
            checksum: Some(0xabcd),
            key: Some(7),
            seq: Some(9),
            version: 0,
        };
        let mut b = [0u8; 16];
        assert_eq!(g.emit(&mut b).unwrap(), 16);
        assert_eq!(&b[..4], &[0xb0, 0x00, 0x88, 0xbe]);
        assert_eq!(GreRepr::parse(&b).unwrap(), g);
        // The same header cut: the error says how much was needed.
        let e = GreRepr::parse(&b[..10]).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Gre, 16, 10));
        // Version 1 (PPTP) and routing are not taken apart.
        assert!(GreRepr::parse(&[0x00, 0x01, 0x88, 0x0b]).is_err());
        assert!(GreRepr::parse(&[0x40, 0x00, 0x65, 0x58, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn erspan_headers_round_trip_and_match_the_linux_layout() {
        // include/net/erspan.h: Ver 1, VLAN, COS, En, T, Session ID | Reserved, Index.
        let e = ErspanIIRepr {
            version: 1,
            vlan: 0x123,
            cos: 5,
            encap_type: 2,
            truncated: true,
            session_id: 0x3ff,
            index: 0xabcde,
        };
        let mut b = [0u8; 8];
        e.emit(&mut b).unwrap();
        assert_eq!(b, [0x11, 0x23, 0xb7, 0xff, 0x00, 0x0a, 0xbc, 0xde]);
        assert_eq!(ErspanIIRepr::parse(&b).unwrap(), e);
        let e3 = ErspanIIIRepr {
            version: 2,
            vlan: 10,
            cos: 3,
            bso: 1,
            truncated: false,
            session_id: 7,
            timestamp: 0xdeadbeef,
            sgt: 0x1234,
            pdu: true,
            frame_type: 0,
            hw_id: 0x2a,
            direction: true,
            granularity: 3,
            platform: Some(ErspanPlatform { id: 3, info: 0x1_2345_6789 }),
        };
        let mut b = [0u8; 20];
        assert_eq!(e3.emit(&mut b).unwrap(), 20);
        assert_eq!(&b[8..12], &[0x12, 0x34, 0x82, 0xaf]);
        assert_eq!(ErspanIIIRepr::parse(&b).unwrap(), e3);
        assert!(ErspanIIIRepr::parse(&b[..15]).is_err());
    }

    #[test]
    fn geneve_options_are_walked_within_their_bytes() {
        let opts = [0x01, 0x02, 0x80, 0x01, 1, 2, 3, 4, 0x00, 0x05, 0x03, 0x00];
        let g = GeneveRepr {
            protocol: 0x6558,
            vni: 0x00abcd,
            critical: true,
            options: &opts,
            ..Default::default()
        };
        let mut b = [0u8; 20];
        assert_eq!(g.emit(&mut b).unwrap(), 20);
        let back = GeneveRepr::parse(&b).unwrap();
        assert_eq!(back, g);
        let o: std::vec::Vec<_> = back.options().collect();
        assert_eq!(o.len(), 2);
        assert_eq!((o[0].class, o[0].kind, o[0].data), (0x0102, 0x80, &[1u8, 2, 3, 4][..]));
        assert_eq!((o[1].class, o[1].kind, o[1].data.len()), (5, 3, 0));
        // An option claiming more than there is ends the walk.
        let lying = GeneveRepr { options: &[0, 1, 2, 0x1f], ..g };
        assert_eq!(lying.options().count(), 0);
        assert_eq!(VxlanRepr::parse(&[8, 0, 0, 0, 0, 0, 42, 0]).unwrap().vni, 42);
    }

    #[test]
    fn the_table_names_every_kind_once() {
        for (i, e) in ENCAPSULATIONS.iter().enumerate() {
            assert_eq!(e.kind.info().code, e.code);
            assert_eq!((e.kind.index(), ENCAP_CODES[i]), (i, e.code));
            assert!(ENCAPSULATIONS[..i].iter().all(|f| f.code != e.code && f.kind != e.kind));
        }
        assert_eq!(EncapKind::by_udp_port(4789), Some(EncapKind::Vxlan));
        assert_eq!(EncapKind::by_udp_port(6081), Some(EncapKind::Geneve));
        assert_eq!(EncapKind::by_udp_port(4791), None);
    }
}
