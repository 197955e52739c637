//! The packets table (`packets.parquet`): one row per frame, every frame of the capture (or of the shard), the
//! columns of `dissect --format json` flattened. A column's name is the JSON member's path with
//! `_` for `.` and without `roce.` (`roce.bth.psn` is `bth_psn`, `ip.src` is `ip_src`); what
//! JSON writes as a string for exactness (timestamps, 64-bit addresses) is an INT64 of
//! nanoseconds or a `0x…` string.
//!
//! `export --raw` adds [`RAW_COLUMNS`] after them, for a consumer that replays the frames
//! (a checker per host pair in Spark): the frame's bytes, its link type and its host pair's
//! hash, the one `--shard K/N` splits by ([`roce_conformance::host_pair_hash`]).

use std::net::IpAddr;
use std::sync::OnceLock;

use roce_conformance::{host_pair, host_pair_hash};
use roce_parser::{IcrcStatus, Packet, Roce, Tunnel};

use super::{table, Column, Hex, Joined};
use crate::Decoded;

/// What a packet row is read from: the pass's frame record and what the checker said of it.
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)]
pub struct PacketRow<'r, 'a> {
    /// The frame, decoded.
    pub d: &'r Decoded<'a>,
    /// The connection incarnation of the packet's flow (RoCE packets the model placed).
    pub incarnation: Option<u32>,
    /// Whether the checker judged the packet a retransmitted request.
    pub retransmission: Option<bool>,
}

impl<'a> PacketRow<'_, 'a> {
    fn p(&self) -> Option<&Packet<'a>> {
        self.d.packet.as_ref().ok()
    }
    fn r(&self) -> Option<&Roce<'a>> {
        self.p().and_then(|p| p.roce.as_ref())
    }
}

/// The string columns whose values (nearly) never repeat: written without a dictionary.
pub const PACKET_UNIQUE: &[&str] =
    &["reth_va", "atomiceth_va", "atomiceth_swap_add", "atomiceth_compare", "atomicacketh_orig"];

table! {
    /// The columns of the packets table (`packets.parquet`), in file order.
    pub PACKET_COLUMNS, write_packet(PacketRow<'_, '_>) {
        "frame" Int false "Frame number, 1-based as in Wireshark (the JSON `frame`)" => |r| r.d.frame.number;
        "ts_ns" Int false "Capture timestamp, nanoseconds since the Unix epoch (JSON `ts` as a number)" => |r| r.d.frame.ts_ns;
        "caplen" Int false "Bytes captured" => |r| r.d.frame.caplen;
        "len" Int false "Bytes on the wire" => |r| r.d.frame.len;
        "encap_kind" Str true "The tunnels the frame arrived in (a switch mirror, an overlay), outermost first, comma-separated codes (gre, erspan1, erspan2, erspan3, vxlan, geneve: the JSON `encap[].kind`); null for a frame captured on the host. The other columns describe the inner frame" => |r| r.p().filter(|p| p.is_encapsulated()).map(|p| Joined(p.tunnels().map(|e| e.kind().code())));
        "encap_ip_src" Str true "The outermost tunnel's outer source address (the mirroring switch, the VTEP)" => |r| r.p().and_then(|p| p.encap[0]).and_then(|e| e.ip).map(|i| i.src);
        "encap_ip_dst" Str true "The outermost tunnel's outer destination address (the collector, the VTEP)" => |r| r.p().and_then(|p| p.encap[0]).and_then(|e| e.ip).map(|i| i.dst);
        "encap_erspan_session_id" Int true "ERSPAN II/III: the mirror session (the first tunnel that has one)" => |r| r.p().and_then(|p| p.tunnels().find_map(|e| e.tunnel.session_id()));
        "encap_vxlan_vni" Int true "VXLAN: the VNI (the first VXLAN tunnel)" => |r| r.p().and_then(|p| p.tunnels().find_map(|e| match e.tunnel { Tunnel::Vxlan(x) => Some(x.vni), _ => None }));
        "encap_geneve_vni" Int true "Geneve: the VNI (the first Geneve tunnel)" => |r| r.p().and_then(|p| p.tunnels().find_map(|e| match e.tunnel { Tunnel::Geneve(x) => Some(x.vni), _ => None }));
        "lrh_vl" Int true "Native InfiniBand: the LRH's virtual lane; null for RoCE" => |r| r.p().and_then(|p| p.lrh).map(|l| l.vl);
        "lrh_sl" Int true "Native InfiniBand: the LRH's service level" => |r| r.p().and_then(|p| p.lrh).map(|l| l.sl);
        "lrh_dlid" Int true "Native InfiniBand: the destination LID" => |r| r.p().and_then(|p| p.lrh).map(|l| l.dlid);
        "lrh_slid" Int true "Native InfiniBand: the source LID" => |r| r.p().and_then(|p| p.lrh).map(|l| l.slid);
        "eth_ethertype" Int true "EtherType after the VLAN tags" => |r| r.p().and_then(|p| p.eth).map(|e| e.ethertype);
        "vlan_vid" Int true "VLAN ID of the outer tag" => |r| r.p().and_then(|p| p.vlans.first().copied().flatten()).map(|t| t.vid);
        "vlan_pcp" Int true "Priority (PCP) of the outer tag" => |r| r.p().and_then(|p| p.vlans.first().copied().flatten()).map(|t| t.pcp);
        "ip_version" Int true "4 or 6" => |r| r.p().and_then(|p| p.ip).map(|i| i.version);
        "ip_src" Str true "Source address" => |r| r.p().and_then(|p| p.ip).map(|i| i.src);
        "ip_dst" Str true "Destination address" => |r| r.p().and_then(|p| p.ip).map(|i| i.dst);
        "ip_dscp" Int true "DSCP" => |r| r.p().and_then(|p| p.ip).map(|i| i.dscp);
        "ip_ecn" Int true "ECN bits (3: CE)" => |r| r.p().and_then(|p| p.ip).map(|i| i.ecn);
        "ip_ttl" Int true "TTL / hop limit" => |r| r.p().and_then(|p| p.ip).map(|i| i.ttl);
        "udp_sport" Int true "UDP source port (flow entropy, not an identity)" => |r| r.p().and_then(|p| p.udp).map(|u| u.sport);
        "udp_dport" Int true "UDP destination port (4791 for RoCEv2)" => |r| r.p().and_then(|p| p.udp).map(|u| u.dport);
        "version" Int true "RoCE version (1 or 2); null when the frame is not RoCE" => |r| r.r().map(|x| x.version.number());
        "grh_sgid" Str true "RoCEv1: the GRH's source GID" => |r| r.r().and_then(|x| x.grh).map(|g| IpAddr::from(g.sgid_addr()));
        "grh_dgid" Str true "RoCEv1: the GRH's destination GID" => |r| r.r().and_then(|x| x.grh).map(|g| IpAddr::from(g.dgid_addr()));
        "bth_opcode" Int true "BTH opcode" => |r| r.r().map(|x| x.bth.opcode);
        "bth_opcode_name" Str true "Opcode name (RC_SEND_ONLY, RC_ACKNOWLEDGE, CNP, ...)" => |r| r.r().map(|x| x.opcode_name());
        "bth_se" Bool true "Solicited event" => |r| r.r().map(|x| x.bth.se);
        "bth_migreq" Bool true "MigReq" => |r| r.r().map(|x| x.bth.migreq);
        "bth_padcnt" Int true "Pad count" => |r| r.r().map(|x| x.bth.padcnt);
        "bth_tver" Int true "Transport header version" => |r| r.r().map(|x| x.bth.tver);
        "bth_pkey" Int true "P_Key" => |r| r.r().map(|x| x.bth.pkey);
        "bth_fecn" Bool true "FECN" => |r| r.r().map(|x| x.bth.fecn);
        "bth_becn" Bool true "BECN" => |r| r.r().map(|x| x.bth.becn);
        "bth_dest_qp" Int true "DestQP" => |r| r.r().map(|x| x.bth.dest_qp);
        "bth_ackreq" Bool true "AckReq" => |r| r.r().map(|x| x.bth.ackreq);
        "bth_psn" Int true "PSN" => |r| r.r().map(|x| x.bth.psn);
        "bth_resv6" Int true "BTH reserved bits after MigReq" => |r| r.r().map(|x| x.bth.resv6);
        "bth_resv7" Int true "BTH reserved byte before the PSN" => |r| r.r().map(|x| x.bth.resv7);
        "rdeth_eecnxt" Int true "RDETH: EE context" => |r| r.r().and_then(|x| x.headers.rdeth).map(|h| h.eecnxt);
        "deth_qkey" Int true "DETH: Q_Key" => |r| r.r().and_then(|x| x.headers.deth).map(|h| h.qkey);
        "deth_src_qp" Int true "DETH: source QP" => |r| r.r().and_then(|x| x.headers.deth).map(|h| h.src_qp);
        "xrceth_xrcsrq" Int true "XRCETH: XRC SRQ" => |r| r.r().and_then(|x| x.headers.xrceth).map(|h| h.xrcsrq);
        "reth_va" Str true "RETH: virtual address, `0x` and 16 hex digits" => |r| r.r().and_then(|x| x.headers.reth).map(|h| Hex(h.va));
        "reth_rkey" Int true "RETH: R_Key" => |r| r.r().and_then(|x| x.headers.reth).map(|h| h.rkey);
        "reth_dma_len" Int true "RETH: DMA length" => |r| r.r().and_then(|x| x.headers.reth).map(|h| h.dma_len);
        "atomiceth_va" Str true "AtomicETH: virtual address (hex)" => |r| r.r().and_then(|x| x.headers.atomic_eth).map(|h| Hex(h.va));
        "atomiceth_rkey" Int true "AtomicETH: R_Key" => |r| r.r().and_then(|x| x.headers.atomic_eth).map(|h| h.rkey);
        "atomiceth_swap_add" Str true "AtomicETH: swap or add data (hex)" => |r| r.r().and_then(|x| x.headers.atomic_eth).map(|h| Hex(h.swap_add));
        "atomiceth_compare" Str true "AtomicETH: compare data (hex)" => |r| r.r().and_then(|x| x.headers.atomic_eth).map(|h| Hex(h.compare));
        "aeth_syndrome" Int true "AETH: syndrome byte" => |r| r.r().and_then(|x| x.headers.aeth).map(|h| h.syndrome);
        "aeth_kind" Str true "AETH: ack, rnr_nak, nak or reserved (the JSON `aeth.kind`)" => |r| r.r().and_then(|x| x.headers.aeth).map(|h| h.kind().as_str());
        "aeth_value" Int true "AETH: the syndrome's value (credit count, RNR timer or NAK code)" => |r| r.r().and_then(|x| x.headers.aeth).map(|h| h.value());
        "aeth_msn" Int true "AETH: MSN" => |r| r.r().and_then(|x| x.headers.aeth).map(|h| h.msn);
        "atomicacketh_orig" Str true "AtomicAckETH: original remote data (hex)" => |r| r.r().and_then(|x| x.headers.atomic_ack_eth).map(|h| Hex(h.orig));
        "immdt_data" Int true "ImmDt: immediate data" => |r| r.r().and_then(|x| x.headers.immdt).map(|h| h.data);
        "ieth_rkey" Int true "IETH: the R_Key to invalidate" => |r| r.r().and_then(|x| x.headers.ieth).map(|h| h.rkey);
        "feth_selectivity" Int true "FETH: selectivity level" => |r| r.r().and_then(|x| x.headers.feth).map(|h| h.selectivity);
        "feth_placement" Int true "FETH: placement type" => |r| r.r().and_then(|x| x.headers.feth).map(|h| h.placement);
        "payload_len" Int true "Payload bytes after the transport headers (pad and ICRC excluded)" => |r| r.r().map(|x| x.payload_len as u64);
        "icrc_value" Int true "ICRC carried by the frame; null when cut off" => |r| r.r().and_then(|x| x.icrc);
        "icrc_status" Str true "ok, bad, unverifiable or not_checked (the JSON `icrc.status`)" => |r| r.r().map(|x| x.icrc_status.as_str());
        "icrc_expected" Int true "The ICRC computed over the frame, when it differs from the carried one" => |r| match r.r().map(|x| x.icrc_status) {
            Some(IcrcStatus::Bad { computed }) => Some(computed),
            _ => None,
        };
        "vcrc_status" Str true "Native InfiniBand: the VCRC's ok, bad, unverifiable or not_checked (the JSON `vcrc.status`); null for RoCE" => |r| r.p().and_then(|p| p.vcrc).map(|v| v.status.as_str());
        "problems" Str true "The problem codes of the frame, comma-separated in the problems' order (JSON `problems[].code`); null when none" => |r| r.p().filter(|p| !p.problems.is_empty()).map(|p| Joined(p.problems.iter().map(|pr| pr.code())));
        "undecoded" Str true "Why no network layer was decoded (the JSON `undecoded.reason`); null when decoded" => |r| match &r.d.packet {
            Err(u) => Some(u.reason()),
            Ok(_) => None,
        };
        "retransmission" Bool true "A request the checker judged retransmitted (PSN not newer than its stream's highest, modulo 2^24); null for what is not a request of a judged stream" => |r| r.retransmission;
        "incarnation" Int true "Incarnation of the packet's connection (with `ip_dst` and `bth_dest_qp`, the key into connections.parquet); null for frames outside the connection model" => |r| r.incarnation;
    }
}

table! {
    /// The columns `export --raw` adds to the packets table, after [`PACKET_COLUMNS`]
    /// ([`packet_columns`]).
    pub RAW_COLUMNS, write_raw(PacketRow<'_, '_>) {
        "raw" Bytes false "The frame's bytes as captured (`caplen` bytes, from the link-layer header on)" => |r| r.d.frame.data;
        "link_type" Int false "The link type of the frame's interface (LINKTYPE_* number: 1 Ethernet, 113 Linux cooked, 101 raw IP, ...): what `raw` starts with" => |r| r.d.frame.link_type.code();
        "host_pair" Int true "The 64-bit hash of the frame's unordered address pair that `--shard K/N` splits by (section Sharding: the shard is this hash, taken as unsigned, modulo N), as a signed INT64 of the same 64 bits; the IP header's addresses, or RoCEv1's GIDs; null for a frame with neither (not IP, not decoded)" => |r| r.p().and_then(host_pair).map(|(a, b)| host_pair_hash(a, b) as i64);
    }
}

/// What the source columns of a packet row are read from: a frame of several captures read
/// as one, and where it comes from ([`crate::FrameSource`]: its file, the frame it copies).
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)]
pub struct SourceRow<'r, 'a> {
    /// The frame, decoded.
    pub d: &'r Decoded<'a>,
    /// Its file and, for a copy, the merged frame of its packet's first sighting.
    pub source: crate::FrameSource<'r>,
}

table! {
    /// The columns `export` adds to the packets table when it reads several captures as one
    /// (taps, docs/taps.md), after the others ([`packet_columns_of`]): where each frame
    /// comes from, the JSON `source` member.
    pub SOURCE_COLUMNS, write_source(SourceRow<'_, '_>) {
        "source_file" Str false "The frame's capture file, as given (the JSON `source.file`); `frame` is then the frame's number in the merge, in time order across the files" => |r| r.source.file;
        "source_tap" Int false "The file's place in the list given, from 1 (the JSON `source.tap`)" => |r| u64::from(r.d.frame.source) + 1;
        "source_frame" Int false "The frame's number in its own file (the JSON `source.frame`)" => |r| r.d.frame.source_number;
        "source_copy_of" Int true "For a copy of a packet another tap saw first, the `frame` of that first sighting; null for a first sighting (the JSON `source.copy_of`). The connection model sees first sightings only: a copy's `retransmission` and `incarnation` are its first sighting's" => |r| r.source.copy_of;
    }
}

/// A row of the packets table of several captures read as one: [`write_packet`], with
/// `raw` [`write_raw`], then [`write_source`] (the columns of [`packet_columns_of`]`(raw,
/// true)`). Not inlined into its caller, on purpose: a program's plain loop then stays the
/// one caller of [`write_packet`] that inlines it (two callers cost `export` of a plain
/// capture 2.5-3.6 % more instructions, callgrind).
pub fn write_packet_from(
    row: &PacketRow<'_, '_>,
    source: &SourceRow<'_, '_>,
    raw: bool,
    cells: &mut super::Cells<'_>,
) {
    write_packet(row, cells);
    if raw {
        write_raw(row, cells);
    }
    write_source(source, cells);
}

/// The packets table's columns for a capture read alone ([`packet_columns`]) or several
/// read as one (`taps`: [`SOURCE_COLUMNS`] after the others).
pub fn packet_columns_of(raw: bool, taps: bool) -> &'static [Column] {
    static WITH_SOURCE: OnceLock<Vec<Column>> = OnceLock::new();
    static WITH_RAW_SOURCE: OnceLock<Vec<Column>> = OnceLock::new();
    match (raw, taps) {
        (_, false) => packet_columns(raw),
        (false, true) => WITH_SOURCE
            .get_or_init(|| PACKET_COLUMNS.iter().chain(SOURCE_COLUMNS).copied().collect()),
        (true, true) => WITH_RAW_SOURCE.get_or_init(|| {
            PACKET_COLUMNS.iter().chain(RAW_COLUMNS).chain(SOURCE_COLUMNS).copied().collect()
        }),
    }
}

/// The packets table's columns: [`PACKET_COLUMNS`], and with `raw` (`export --raw`)
/// [`RAW_COLUMNS`] after them. A row of the longer list is [`write_packet`] then
/// [`write_raw`]:
///
/// ```
/// use roce_analysis::rows::{packet_columns, write_packet, write_raw, PacketRow, RowGroup};
/// use roce_analysis::Pass;
/// use roce_parser::Config;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
/// let cap = roce_capture::open(std::path::Path::new(path))?;
/// let mut rows = RowGroup::new(packet_columns(true), 1024);
/// Pass::new(&Config::default()).run(cap, |d| {
///     let row = PacketRow { d, incarnation: None, retransmission: None };
///     rows.push(|cells| {
///         write_packet(&row, cells);
///         write_raw(&row, cells);
///     });
/// })?;
/// let names: Vec<&str> = rows.column_list().iter().map(|c| c.name).collect();
/// assert_eq!(names[names.len() - 3..], ["raw", "link_type", "host_pair"]);
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub fn packet_columns(raw: bool) -> &'static [Column] {
    static WITH_RAW: OnceLock<Vec<Column>> = OnceLock::new();
    if !raw {
        return PACKET_COLUMNS;
    }
    WITH_RAW.get_or_init(|| PACKET_COLUMNS.iter().chain(RAW_COLUMNS).copied().collect())
}
