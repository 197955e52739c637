//! `packets.parquet`: one row per frame, every frame of the capture (or of the shard), the
//! columns of `dissect --format json` flattened. A column's name is the JSON member's path with
//! `_` for `.` and without `roce.` (`roce.bth.psn` is `bth_psn`, `ip.src` is `ip_src`); what
//! JSON writes as a string for exactness (timestamps, 64-bit addresses) is an INT64 of
//! nanoseconds or a `0x…` string.

use roce_parser::{IcrcStatus, Packet, Roce};

use super::table::{Column, Kind, Value};
use crate::input::Decoded;

/// What a packet row is read from.
pub struct PacketRow<'r, 'a> {
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

/// The columns whose values (nearly) never repeat: written without a dictionary.
pub const UNIQUE: &[&str] =
    &["frame", "ts_ns", "bth_psn", "icrc_value", "icrc_expected", "aeth_msn"];

/// Reads one column of a packet row.
pub type Get = for<'x, 'r, 'a> fn(&'x PacketRow<'r, 'a>) -> Value;

use Value as V;

fn hex(v: u64) -> Value {
    V::Text(format!("0x{v:016x}"))
}

fn problems(r: &PacketRow<'_, '_>) -> Value {
    let Some(p) = r.p() else { return V::Null };
    if p.problems.iter().next().is_none() {
        return V::Null;
    }
    let codes: Vec<&str> = p.problems.iter().map(|pr| pr.code()).collect();
    V::Text(codes.join(","))
}

macro_rules! columns {
    ($($name:literal $kind:ident $null:literal $doc:literal => $get:expr;)*) => {
        /// The columns of `packets.parquet`, in file order.
        pub static COLUMNS: &[Column<Get>] = &[$(Column {
            name: $name, kind: Kind::$kind, nullable: $null, doc: $doc, get: $get,
        }),*];
    };
}

columns! {
    "frame" Int false "Frame number, 1-based as in Wireshark (the JSON `frame`)" => |r| V::uint(r.d.frame.number);
    "ts_ns" Int false "Capture timestamp, nanoseconds since the Unix epoch (JSON `ts` as a number)" => |r| V::uint(r.d.frame.ts_ns);
    "caplen" Int false "Bytes captured" => |r| V::int(r.d.frame.caplen);
    "len" Int false "Bytes on the wire" => |r| V::int(r.d.frame.len);
    "eth_ethertype" Int true "EtherType after the VLAN tags" => |r| V::opt(r.p().and_then(|p| p.eth), |e| V::int(e.ethertype));
    "vlan_vid" Int true "VLAN ID of the outer tag" => |r| V::opt(r.p().and_then(|p| p.vlans.first().copied().flatten()), |t| V::int(t.vid));
    "vlan_pcp" Int true "Priority (PCP) of the outer tag" => |r| V::opt(r.p().and_then(|p| p.vlans.first().copied().flatten()), |t| V::int(t.pcp));
    "ip_version" Int true "4 or 6" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::int(i.version));
    "ip_src" Str true "Source address" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::Ip(i.src));
    "ip_dst" Str true "Destination address" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::Ip(i.dst));
    "ip_dscp" Int true "DSCP" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::int(i.dscp));
    "ip_ecn" Int true "ECN bits (3: CE)" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::int(i.ecn));
    "ip_ttl" Int true "TTL / hop limit" => |r| V::opt(r.p().and_then(|p| p.ip), |i| V::int(i.ttl));
    "udp_sport" Int true "UDP source port (flow entropy, not an identity)" => |r| V::opt(r.p().and_then(|p| p.udp), |u| V::int(u.sport));
    "udp_dport" Int true "UDP destination port (4791 for RoCEv2)" => |r| V::opt(r.p().and_then(|p| p.udp), |u| V::int(u.dport));
    "version" Int true "RoCE version (1 or 2); null when the frame is not RoCE" => |r| V::opt(r.r(), |x| V::int(x.version.number()));
    "grh_sgid" Str true "RoCEv1: the GRH's source GID" => |r| V::opt(r.r().and_then(|x| x.grh), |g| V::Ip(g.sgid_addr().into()));
    "grh_dgid" Str true "RoCEv1: the GRH's destination GID" => |r| V::opt(r.r().and_then(|x| x.grh), |g| V::Ip(g.dgid_addr().into()));
    "bth_opcode" Int true "BTH opcode" => |r| V::opt(r.r(), |x| V::int(x.bth.opcode));
    "bth_opcode_name" Str true "Opcode name (RC_SEND_ONLY, RC_ACKNOWLEDGE, CNP, ...)" => |r| V::opt(r.r(), |x| V::Static(x.opcode_name()));
    "bth_se" Bool true "Solicited event" => |r| V::opt(r.r(), |x| V::Bool(x.bth.se));
    "bth_migreq" Bool true "MigReq" => |r| V::opt(r.r(), |x| V::Bool(x.bth.migreq));
    "bth_padcnt" Int true "Pad count" => |r| V::opt(r.r(), |x| V::int(x.bth.padcnt));
    "bth_tver" Int true "Transport header version" => |r| V::opt(r.r(), |x| V::int(x.bth.tver));
    "bth_pkey" Int true "P_Key" => |r| V::opt(r.r(), |x| V::int(x.bth.pkey));
    "bth_fecn" Bool true "FECN" => |r| V::opt(r.r(), |x| V::Bool(x.bth.fecn));
    "bth_becn" Bool true "BECN" => |r| V::opt(r.r(), |x| V::Bool(x.bth.becn));
    "bth_dest_qp" Int true "DestQP" => |r| V::opt(r.r(), |x| V::int(x.bth.dest_qp));
    "bth_ackreq" Bool true "AckReq" => |r| V::opt(r.r(), |x| V::Bool(x.bth.ackreq));
    "bth_psn" Int true "PSN" => |r| V::opt(r.r(), |x| V::int(x.bth.psn));
    "bth_resv6" Int true "BTH reserved bits after MigReq" => |r| V::opt(r.r(), |x| V::int(x.bth.resv6));
    "bth_resv7" Int true "BTH reserved byte before the PSN" => |r| V::opt(r.r(), |x| V::int(x.bth.resv7));
    "rdeth_eecnxt" Int true "RDETH: EE context" => |r| V::opt(r.r().and_then(|x| x.headers.rdeth), |h| V::int(h.eecnxt));
    "deth_qkey" Int true "DETH: Q_Key" => |r| V::opt(r.r().and_then(|x| x.headers.deth), |h| V::int(h.qkey));
    "deth_src_qp" Int true "DETH: source QP" => |r| V::opt(r.r().and_then(|x| x.headers.deth), |h| V::int(h.src_qp));
    "xrceth_xrcsrq" Int true "XRCETH: XRC SRQ" => |r| V::opt(r.r().and_then(|x| x.headers.xrceth), |h| V::int(h.xrcsrq));
    "reth_va" Str true "RETH: virtual address, `0x` and 16 hex digits" => |r| V::opt(r.r().and_then(|x| x.headers.reth), |h| hex(h.va));
    "reth_rkey" Int true "RETH: R_Key" => |r| V::opt(r.r().and_then(|x| x.headers.reth), |h| V::int(h.rkey));
    "reth_dma_len" Int true "RETH: DMA length" => |r| V::opt(r.r().and_then(|x| x.headers.reth), |h| V::int(h.dma_len));
    "atomiceth_va" Str true "AtomicETH: virtual address (hex)" => |r| V::opt(r.r().and_then(|x| x.headers.atomic_eth), |h| hex(h.va));
    "atomiceth_rkey" Int true "AtomicETH: R_Key" => |r| V::opt(r.r().and_then(|x| x.headers.atomic_eth), |h| V::int(h.rkey));
    "atomiceth_swap_add" Str true "AtomicETH: swap or add data (hex)" => |r| V::opt(r.r().and_then(|x| x.headers.atomic_eth), |h| hex(h.swap_add));
    "atomiceth_compare" Str true "AtomicETH: compare data (hex)" => |r| V::opt(r.r().and_then(|x| x.headers.atomic_eth), |h| hex(h.compare));
    "aeth_syndrome" Int true "AETH: syndrome byte" => |r| V::opt(r.r().and_then(|x| x.headers.aeth), |h| V::int(h.syndrome));
    "aeth_kind" Str true "AETH: ack, rnr_nak, nak or reserved (the JSON `aeth.kind`)" => |r| V::opt(r.r().and_then(|x| x.headers.aeth), |h| V::Static(h.kind().as_str()));
    "aeth_value" Int true "AETH: the syndrome's value (credit count, RNR timer or NAK code)" => |r| V::opt(r.r().and_then(|x| x.headers.aeth), |h| V::int(h.value()));
    "aeth_msn" Int true "AETH: MSN" => |r| V::opt(r.r().and_then(|x| x.headers.aeth), |h| V::int(h.msn));
    "atomicacketh_orig" Str true "AtomicAckETH: original remote data (hex)" => |r| V::opt(r.r().and_then(|x| x.headers.atomic_ack_eth), |h| hex(h.orig));
    "immdt_data" Int true "ImmDt: immediate data" => |r| V::opt(r.r().and_then(|x| x.headers.immdt), |h| V::int(h.data));
    "ieth_rkey" Int true "IETH: the R_Key to invalidate" => |r| V::opt(r.r().and_then(|x| x.headers.ieth), |h| V::int(h.rkey));
    "feth_selectivity" Int true "FETH: selectivity level" => |r| V::opt(r.r().and_then(|x| x.headers.feth), |h| V::int(h.selectivity));
    "feth_placement" Int true "FETH: placement type" => |r| V::opt(r.r().and_then(|x| x.headers.feth), |h| V::int(h.placement));
    "payload_len" Int true "Payload bytes after the transport headers (pad and ICRC excluded)" => |r| V::opt(r.r(), |x| V::uint(x.payload_len as u64));
    "icrc_value" Int true "ICRC carried by the frame; null when cut off" => |r| V::opt(r.r().and_then(|x| x.icrc), V::int);
    "icrc_status" Str true "ok, bad, unverifiable or not_checked (the JSON `icrc.status`)" => |r| V::opt(r.r(), |x| V::Static(x.icrc_status.as_str()));
    "icrc_expected" Int true "The ICRC computed over the frame, when it differs from the carried one" => |r| match r.r().map(|x| x.icrc_status) {
        Some(IcrcStatus::Bad { computed }) => V::int(computed),
        _ => V::Null,
    };
    "problems" Str true "The problem codes of the frame, comma-separated in the problems' order (JSON `problems[].code`); null when none" => problems;
    "undecoded" Str true "Why no network layer was decoded (the JSON `undecoded.reason`); null when decoded" => |r| match &r.d.packet {
        Err(u) => V::Static(u.reason()),
        Ok(_) => V::Null,
    };
    "retransmission" Bool true "A request the checker judged retransmitted (PSN not newer than its stream's highest, modulo 2^24); null for what is not a request of a judged stream" => |r| V::opt(r.retransmission, V::Bool);
    "incarnation" Int true "Incarnation of the packet's connection (with `ip_dst` and `bth_dest_qp`, the key into connections.parquet); null for frames outside the connection model" => |r| V::opt(r.incarnation, V::int);
}
