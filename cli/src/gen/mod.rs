//! The traffic generator: RoCE conversations written with the roce-parser builder, as
//! real stacks would put them on the wire, into pcap files. `roce-inspect gen` uses it for
//! the captures under pcaps/ (the sample, benchmark captures, the conformance suite).

pub mod conn;
pub mod diagnose;
pub mod scenarios;
pub mod suite;
pub mod timers;

use std::io::{self, Write};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, PcapError, TsResolution};
use roce_parser::{
    EncapKind, ErspanIIIRepr, ErspanIIRepr, FrameBuilder, GreRepr, Network, Tunnel, TunnelBuilder,
    VxlanRepr, GRE_PROTOCOL_TEB,
};

pub use conn::{Endpoint, RcConn};

/// A small deterministic PRNG (SplitMix64): the same seed gives the same capture on every
/// machine, which is what golden files need.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// A random 24-bit PSN or QPN.
    pub fn u24(&mut self) -> u32 {
        (self.next_u64() & 0x00ff_ffff) as u32
    }
}

/// One generated frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenFrame {
    pub ts_ns: u64,
    pub data: Vec<u8>,
}

/// A capture being generated: frames with timestamps.
#[derive(Debug, Clone)]
pub struct Trace {
    pub frames: Vec<GenFrame>,
    /// Timestamp of the next frame.
    pub now_ns: u64,
    /// Time between consecutive frames unless `advance` says otherwise.
    pub gap_ns: u64,
}

impl Trace {
    /// A trace starting at 2026-01-01 00:00:00 UTC.
    pub fn new() -> Self {
        Trace { frames: Vec::new(), now_ns: 1_767_225_600_000_000_000, gap_ns: 1_000 }
    }

    pub fn advance(&mut self, ns: u64) {
        self.now_ns += ns;
    }

    /// Emits `b` at the current time.
    pub fn push(&mut self, b: &FrameBuilder<'_>) {
        let mut data = vec![0; b.buffer_len()];
        // The builder only fails on a short buffer, which buffer_len rules out.
        if b.emit(&mut data).is_ok() {
            self.push_bytes(data);
        }
    }

    pub fn push_bytes(&mut self, data: Vec<u8>) {
        self.frames.push(GenFrame { ts_ns: self.now_ns, data });
        self.now_ns += self.gap_ns;
    }

    /// Writes a nanosecond pcap (Ethernet).
    pub fn write_pcap(&self, w: impl Write) -> io::Result<()> {
        self.write_pcap_mirrored(w, None)
    }

    /// [`Trace::write_pcap`], each frame as `delivery` hands it over (`gen --mirror`,
    /// `gen --native-ib`).
    pub fn write_pcap_mirrored(&self, w: impl Write, delivery: Option<Delivery>) -> io::Result<()> {
        let mut out = PcapOut::delivered(w, delivery)?;
        for f in &self.frames {
            out.write(f)?;
        }
        out.finish()
    }
}

/// A nanosecond Ethernet pcap written frame by frame, for captures too large to hold
/// (`gen bench`).
pub struct PcapOut<W: Write> {
    writer: PcapWriter<W>,
    delivery: Option<Delivery>,
    wrapped: Vec<u8>,
    /// The native InfiniBand packet before its ERF record (`--native-ib`), kept between frames.
    packet: Vec<u8>,
}

/// How `gen` hands the hosts' frames over: through a switch mirror or an overlay, or as the
/// same traffic on a native InfiniBand fabric.
#[derive(Debug, Clone, Copy)]
pub enum Delivery {
    /// Each frame wrapped as the mirror session or overlay delivers it (`--mirror`).
    Mirror(Mirror),
    /// Each RoCEv2 frame as a native InfiniBand packet on a routed fabric (`--native-ib`):
    /// an LRH (the LIDs the IPv4 addresses' last 16 bits), a GRH whose GIDs are the IP
    /// addresses (IPv4-mapped) and whose traffic class is the IP header's DS field (so ECN
    /// marks stay), the same BTH and everything after it, a new ICRC (as wrong as the
    /// frame's was, if it was) and the VCRC; each in an ERF record as ibdump writes it (link
    /// type 197, record type 21, the record's own timestamp: what Wireshark reads; tshark
    /// 4.0 does not read DLT_INFINIBAND). Frames that are not whole RoCEv2 are left out.
    NativeIb,
}

/// `packet` in an ERF record of type 21 (InfiniBand) into `out`, as ibdump writes one: the
/// timestamp as 32.32 fixed-point seconds (little-endian), flags "varying length", the
/// record length rounded up to 8 bytes (the pad not captured), the wire length the packet's.
pub fn erf_record(ts_ns: u64, packet: &[u8], out: &mut Vec<u8>) {
    let secs = ts_ns / 1_000_000_000;
    let frac = (((ts_ns % 1_000_000_000) << 32) + 500_000_000) / 1_000_000_000;
    let ts = (secs << 32) | frac.min(0xffff_ffff);
    let rlen = (roce_capture::ERF_HEADER_LEN + packet.len()).next_multiple_of(8);
    out.clear();
    out.extend_from_slice(&ts.to_le_bytes());
    out.extend_from_slice(&[21, 0x04]);
    out.extend_from_slice(&u16::try_from(rlen).unwrap_or(u16::MAX).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&u16::try_from(packet.len()).unwrap_or(u16::MAX).to_be_bytes());
    out.extend_from_slice(packet);
}

/// `frame` (Ethernet, RoCEv2) as a native InfiniBand packet into `out` ([`Delivery::NativeIb`]);
/// false, and `out` left empty, for a frame that is not RoCEv2.
pub fn to_native_ib(frame: &[u8], out: &mut Vec<u8>) -> bool {
    use roce_parser::{compute_icrc, compute_vcrc, ip_to_gid, IcrcNetwork, Lnh, Lrh, LrhRepr};
    use roce_parser::{Grh, GrhRepr, ICRC_LEN, NXTHDR_BTH};
    out.clear();
    let Ok(p) = roce_parser::parse_ethernet(frame, &roce_parser::Config::default()) else {
        return false;
    };
    let (Some(r), Some(ip), Some(udp)) = (p.roce, p.ip, p.udp) else { return false };
    let claimed = usize::from(udp.len).saturating_sub(8);
    let Some(transport) = frame.get(r.bth_offset..r.bth_offset + claimed.saturating_sub(ICRC_LEN))
    else {
        return false;
    };
    let lid = |a: std::net::IpAddr| match a {
        std::net::IpAddr::V4(v) => u16::from_be_bytes([v.octets()[2], v.octets()[3]]),
        std::net::IpAddr::V6(v) => v.segments()[7],
    };
    let packet_len = LrhRepr::LEN + GrhRepr::LEN + transport.len() + ICRC_LEN;
    let Ok(pkt_len) = u16::try_from(packet_len / 4) else { return false };
    let lrh = LrhRepr {
        lnh: Lnh::Global,
        dlid: lid(ip.dst),
        slid: lid(ip.src),
        pkt_len,
        ..LrhRepr::default()
    };
    let grh = GrhRepr {
        ipver: 6,
        tclass: ip.dscp << 2 | ip.ecn,
        flow_label: 0,
        paylen: (transport.len() + ICRC_LEN) as u16,
        nxthdr: NXTHDR_BTH,
        hoplmt: ip.ttl,
        sgid: ip_to_gid(ip.src),
        dgid: ip_to_gid(ip.dst),
    };
    out.resize(LrhRepr::LEN + GrhRepr::LEN, 0);
    lrh.emit(&mut Lrh::new_unchecked(&mut out[..LrhRepr::LEN]));
    grh.emit(&mut Grh::new_unchecked(&mut out[LrhRepr::LEN..]));
    out.extend_from_slice(transport);
    // A frame sent with a wrong ICRC keeps it wrong by as much.
    let wrong_by = match (r.icrc, r.icrc_status) {
        (Some(stored), roce_parser::IcrcStatus::Bad { computed }) => stored ^ computed,
        _ => 0,
    };
    let icrc = compute_icrc(IcrcNetwork::Grh(&out[LrhRepr::LEN..][..GrhRepr::LEN]), &[], transport)
        ^ wrong_by;
    out.extend_from_slice(&icrc.to_le_bytes());
    let vcrc = compute_vcrc(out);
    out.extend_from_slice(&vcrc.to_le_bytes());
    true
}

/// A switch mirror session or overlay that `gen --mirror` delivers the frames through: each
/// frame wrapped in `kind` (ERSPAN with session `id`, GRE with key `id`, VXLAN or Geneve with
/// VNI `id`), from 192.0.2.1 (the switch, the VTEP) to 192.0.2.2 (the collector), the GRE
/// sequence number and the ERSPAN index counting the frames.
#[derive(Debug, Clone, Copy)]
pub struct Mirror {
    /// The encapsulation.
    pub kind: EncapKind,
    /// The ERSPAN session, GRE key or VNI.
    pub id: u32,
    /// Frames wrapped so far.
    pub count: u32,
}

impl Mirror {
    /// Wraps `frame` into `out` (cleared first).
    pub fn wrap(&mut self, frame: &[u8], out: &mut Vec<u8>) {
        let n = self.count;
        self.count = self.count.wrapping_add(1);
        let seq = GreRepr { seq: Some(n), ..GreRepr::default() };
        let session = (self.id & 0x3ff) as u16;
        let tunnel = match self.kind {
            EncapKind::Gre => {
                Tunnel::Gre(GreRepr { protocol: GRE_PROTOCOL_TEB, key: Some(self.id), ..seq })
            }
            EncapKind::ErspanI => Tunnel::ErspanI(GreRepr::default()),
            EncapKind::ErspanII => Tunnel::ErspanII(
                seq,
                ErspanIIRepr {
                    version: 1,
                    session_id: session,
                    index: n & 0xf_ffff,
                    ..Default::default()
                },
            ),
            EncapKind::ErspanIII => Tunnel::ErspanIII(
                seq,
                ErspanIIIRepr {
                    version: 2,
                    session_id: session,
                    timestamp: n,
                    ..Default::default()
                },
            ),
            EncapKind::Vxlan => {
                Tunnel::Vxlan(VxlanRepr { flags: VxlanRepr::FLAG_I, vni: self.id & 0xff_ffff })
            }
            EncapKind::Geneve => Tunnel::Geneve(roce_parser::GeneveRepr {
                protocol: GRE_PROTOCOL_TEB,
                vni: self.id & 0xff_ffff,
                ..Default::default()
            }),
        };
        let mut b = TunnelBuilder::new(Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), tunnel);
        // Flow entropy for the overlays, as a VTEP hashes the inner frame.
        b.udp_sport = 0xc000 | (n as u16 & 0x3fff);
        out.clear();
        out.resize(b.buffer_len(frame.len()), 0);
        // The buffer is the builder's length: emit fails only on a frame too long for the
        // outer IP length, which leaves it unwrapped.
        match b.emit(frame, out) {
            Ok(len) => out.truncate(len),
            Err(_) => {
                out.clear();
                out.extend_from_slice(frame);
            }
        }
    }
}

/// The I/O error itself: pcap-file's wrapper displays as "Error reading bytes", even when
/// writing.
fn io_error(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => io::Error::other(other),
    }
}

impl<W: Write> PcapOut<W> {
    /// Writes the file header (Ethernet).
    pub fn new(w: W) -> io::Result<Self> {
        PcapOut::delivered(w, None)
    }

    /// Writes the file header of the frames as `delivery` hands them over (Ethernet, or
    /// InfiniBand for [`Delivery::NativeIb`]).
    pub fn delivered(w: W, delivery: Option<Delivery>) -> io::Result<Self> {
        let datalink = match delivery {
            Some(Delivery::NativeIb) => DataLink::from(197u32),
            _ => DataLink::ETHERNET,
        };
        let header = PcapHeader {
            datalink,
            ts_resolution: TsResolution::NanoSecond,
            snaplen: 65535,
            ..Default::default()
        };
        Ok(PcapOut {
            writer: PcapWriter::with_header(w, header).map_err(io_error)?,
            delivery,
            wrapped: Vec::new(),
            packet: Vec::new(),
        })
    }

    pub fn write(&mut self, f: &GenFrame) -> io::Result<()> {
        let data = match &mut self.delivery {
            Some(Delivery::Mirror(m)) => {
                m.wrap(&f.data, &mut self.wrapped);
                &self.wrapped[..]
            }
            Some(Delivery::NativeIb) => {
                if !to_native_ib(&f.data, &mut self.packet) {
                    return Ok(());
                }
                erf_record(f.ts_ns, &self.packet, &mut self.wrapped);
                &self.wrapped[..]
            }
            None => &f.data[..],
        };
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let pkt = PcapPacket::new(Duration::from_nanos(f.ts_ns), len, data);
        self.writer.write_packet(&pkt).map(drop).map_err(io_error)
    }

    /// Flushes what is buffered.
    pub fn finish(self) -> io::Result<()> {
        self.writer.into_writer().flush()
    }
}

impl Default for Trace {
    fn default() -> Self {
        Self::new()
    }
}
