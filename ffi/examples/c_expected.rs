//! Writes what the Rust API (roce_parser itself, not the C interface) decodes from the docs/wire.md
//! vectors and from every frame of the given captures, one line per parse, in the text format
//! that `ffi/tests/check.c` prints from `roce_packet`. The C test compares the two, field by
//! field. Run by `ffi/tests/run-c-tests.sh`:
//!
//! ```sh
//! cargo run --release -p roce-parser-ffi --example c_expected -- OUT.txt CAPTURE...
//! ```
//!
//! Per input, the parses ("modes") are, in order:
//! - `F` the frame (`parse_ethernet`, default config); `N` the same without verification;
//! - `H` the first half of the frame (captures) or `T<k>` every prefix of k bytes (vectors);
//! - `P` (vectors) RoCEv2 expected on UDP port 4792 instead;
//! - `I` from the IP header (`parse_ip`), when `F` found one;
//! - `E` after the EtherType (`parse_ethertype_payload`), when `F` found no VLAN tag;
//! - `U` the UDP payload clipped to the UDP length (`parse_udp_payload`), when `F` found
//!   RoCEv2;
//! - `M` the MAD (`cm::parse_mad` of the captured payload), when `F` found a UD SEND to QP1:
//!   checked against the MAD the frame parser decoded (`Roce::mad`), then written out.
#![allow(clippy::print_stdout)]

mod common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use common::hex;
use roce_parser::{
    parse_ethernet, parse_ethertype_payload, parse_ip, parse_udp_payload, AethKind, Config, Error,
    EthernetInfo, IcrcStatus, IpInfo, Packet, Problems, Roce, UdpInfo, VlanTag,
};

/// Everything one parse gave, from whichever entry point.
struct View<'a> {
    data: &'a [u8],
    status: i32,
    eth: Option<EthernetInfo>,
    vlans: [Option<VlanTag>; 2],
    ip: Option<IpInfo>,
    udp: Option<UdpInfo>,
    roce: Option<Roce<'a>>,
    problems: Problems,
    stop: Option<Error>,
}

fn error_status(e: &Error) -> i32 {
    match e.kind {
        roce_parser::ErrorKind::Truncated => -2,
        _ => -3,
    }
}

impl<'a> View<'a> {
    fn empty(data: &'a [u8]) -> Self {
        View {
            data,
            status: 0,
            eth: None,
            vlans: [None; 2],
            ip: None,
            udp: None,
            roce: None,
            problems: Problems::NONE,
            stop: None,
        }
    }

    fn of_packet(data: &'a [u8], r: Result<Packet<'a>, Error>) -> Self {
        match r {
            Ok(p) => View {
                data,
                status: match (&p.roce, &p.stop) {
                    (Some(_), _) => 0,
                    (None, Some(e)) => error_status(e),
                    (None, None) => -4,
                },
                eth: p.eth,
                vlans: p.vlans,
                ip: p.ip,
                udp: p.udp,
                roce: p.roce,
                problems: p.problems,
                stop: p.stop,
            },
            Err(e) => View { status: error_status(&e), stop: Some(e), ..View::empty(data) },
        }
    }

    fn of_udp(data: &'a [u8], r: Result<(Roce<'a>, Problems), Error>) -> Self {
        match r {
            Ok((roce, problems)) => View { roce: Some(roce), problems, ..View::empty(data) },
            Err(e) => View { status: error_status(&e), stop: Some(e), ..View::empty(data) },
        }
    }
}

fn fnv(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn hexs(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn addr16(a: std::net::IpAddr) -> [u8; 16] {
    match a {
        std::net::IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        std::net::IpAddr::V6(v) => v.octets(),
    }
}

/// Offset of `sub` in `data` when it is a non-empty part of it, else `fallback`, clamped.
fn offset(data: &[u8], sub: &[u8], fallback: usize) -> usize {
    let off =
        if sub.is_empty() { fallback } else { sub.as_ptr() as usize - data.as_ptr() as usize };
    off.min(data.len())
}

fn b(v: bool) -> u8 {
    u8::from(v)
}

/// One line, in exactly the format of `print_packet` in check.c.
fn line(tag: &str, v: &View<'_>) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = write!(w, "{tag} st={}", v.status);
    match &v.eth {
        Some(e) => {
            let n = v.vlans.iter().flatten().count();
            let _ = write!(
                w,
                " eth=1 emac={}-{} et={:04x} vl={n}",
                hexs(&e.dst),
                hexs(&e.src),
                e.ethertype
            );
        }
        None => w.push_str(" eth=0 emac=000000000000-000000000000 et=0000 vl=0"),
    }
    for (i, t) in v.vlans.iter().enumerate() {
        let t = t.unwrap_or_default();
        let _ = write!(w, " v{i}={:04x}:{}:{}:{}", t.tpid, t.pcp, b(t.dei), t.vid);
    }
    match &v.ip {
        Some(ip) => {
            let _ = write!(
                w,
                " ip=1 ipv={} isrc={} idst={} dscp={} ecn={} ttl={} proto={} ipid={} fl={} \
                 ioff={} ihl={} iext={} itot={}",
                ip.version,
                hexs(&addr16(ip.src)),
                hexs(&addr16(ip.dst)),
                ip.dscp,
                ip.ecn,
                ip.ttl,
                ip.protocol,
                ip.identification,
                ip.flow_label,
                ip.offset,
                ip.header_len,
                ip.ext_len,
                ip.total_len
            );
        }
        None => {
            let z = hexs(&[0; 16]);
            let _ = write!(
                w,
                " ip=0 ipv=0 isrc={z} idst={z} dscp=0 ecn=0 ttl=0 proto=0 ipid=0 fl=0 ioff=0 \
                 ihl=0 iext=0 itot=0"
            );
        }
    }
    match &v.udp {
        Some(u) => {
            let _ = write!(
                w,
                " udp=1 sp={} dp={} ul={} uck={:04x} uoff={}",
                u.sport, u.dport, u.len, u.checksum, u.offset
            );
        }
        None => w.push_str(" udp=0 sp=0 dp=0 ul=0 uck=0000 uoff=0"),
    }
    let grh = v.roce.and_then(|r| r.grh);
    match grh {
        Some(g) => {
            let _ = write!(
                w,
                " grh=1 gv={} gtc={} gnh={} ghop={} gpl={} gfl={} sgid={} dgid={}",
                g.ipver,
                g.tclass,
                g.nxthdr,
                g.hoplmt,
                g.paylen,
                g.flow_label,
                hexs(&g.sgid),
                hexs(&g.dgid)
            );
        }
        None => {
            let z = hexs(&[0; 16]);
            let _ = write!(w, " grh=0 gv=0 gtc=0 gnh=0 ghop=0 gpl=0 gfl=0 sgid={z} dgid={z}");
        }
    }
    let Some(r) = &v.roce else {
        w.push_str(
            " rv=0 known=0 op=00 name=- se=0 m=0 pc=0 tv=0 fe=0 be=0 ar=0 pk=0000 r6=0 r7=0 \
             qp=000000 psn=000000 rdeth=0:0:0 deth=0:0:00000000:0 xrceth=0:0:0 \
             reth=0:0000000000000000:00000000:0 \
             atomiceth=0:0000000000000000:00000000:0000000000000000:0000000000000000 \
             aeth=0:00:0:0:0 atomicack=0:0000000000000000 immdt=0:00000000 ieth=0:00000000 \
             feth=0:0:0:0 bo=0 hl=0 po=0 pl=0 pcap=0 pfnv=811c9dc5 pad=0 oo=0 ol=0 \
             ofnv=811c9dc5 icp=0 ic=00000000 is=0 icc=00000000",
        );
        tail(w, v);
        return s;
    };
    let t = &r.bth;
    let _ = write!(
        w,
        " rv={} known={} op={:02x} name={} se={} m={} pc={} tv={} fe={} be={} ar={} pk={:04x} \
         r6={} r7={} qp={:06x} psn={:06x}",
        r.version.number(),
        b(r.info.is_some()),
        t.opcode,
        r.opcode_name(),
        b(t.se),
        b(t.migreq),
        t.padcnt,
        t.tver,
        b(t.fecn),
        b(t.becn),
        b(t.ackreq),
        t.pkey,
        t.resv6,
        t.resv7,
        t.dest_qp,
        t.psn
    );
    let h = &r.headers;
    let x = h.rdeth.unwrap_or_default();
    let _ = write!(w, " rdeth={}:{}:{}", b(h.rdeth.is_some()), x.reserved, x.eecnxt);
    let x = h.deth.unwrap_or_default();
    let _ = write!(w, " deth={}:{}:{:08x}:{}", b(h.deth.is_some()), x.reserved, x.qkey, x.src_qp);
    let x = h.xrceth.unwrap_or_default();
    let _ = write!(w, " xrceth={}:{}:{}", b(h.xrceth.is_some()), x.reserved, x.xrcsrq);
    let x = h.reth.unwrap_or_default();
    let _ = write!(w, " reth={}:{:016x}:{:08x}:{}", b(h.reth.is_some()), x.va, x.rkey, x.dma_len);
    let x = h.atomic_eth.unwrap_or_default();
    let _ = write!(
        w,
        " atomiceth={}:{:016x}:{:08x}:{:016x}:{:016x}",
        b(h.atomic_eth.is_some()),
        x.va,
        x.rkey,
        x.swap_add,
        x.compare
    );
    match h.aeth {
        Some(a) => {
            let kind = match a.kind() {
                AethKind::Ack => 0,
                AethKind::RnrNak => 1,
                AethKind::Reserved => 2,
                AethKind::Nak => 3,
            };
            let _ = write!(w, " aeth=1:{:02x}:{kind}:{}:{}", a.syndrome, a.value(), a.msn);
        }
        None => w.push_str(" aeth=0:00:0:0:0"),
    }
    let x = h.atomic_ack_eth.unwrap_or_default();
    let _ = write!(w, " atomicack={}:{:016x}", b(h.atomic_ack_eth.is_some()), x.orig);
    let x = h.immdt.unwrap_or_default();
    let _ = write!(w, " immdt={}:{:08x}", b(h.immdt.is_some()), x.data);
    let x = h.ieth.unwrap_or_default();
    let _ = write!(w, " ieth={}:{:08x}", b(h.ieth.is_some()), x.rkey);
    let x = h.feth.unwrap_or_default();
    let _ =
        write!(w, " feth={}:{}:{}:{}", b(h.feth.is_some()), x.selectivity, x.placement, x.reserved);
    let hl = r.info.map_or(12, |i| usize::from(i.header_len));
    let _ = write!(
        w,
        " bo={} hl={hl} po={} pl={} pcap={} pfnv={:08x} pad={} oo={} ol={} ofnv={:08x}",
        r.bth_offset,
        offset(v.data, r.payload, r.bth_offset + hl),
        r.payload_len,
        r.payload.len(),
        fnv(r.payload),
        r.pad.len(),
        offset(v.data, r.opaque, r.bth_offset + 12),
        r.opaque.len(),
        fnv(r.opaque)
    );
    let (is, icc) = match r.icrc_status {
        IcrcStatus::NotChecked => (0, 0),
        IcrcStatus::Ok => (1, 0),
        IcrcStatus::Bad { computed } => (2, computed),
        IcrcStatus::Unverifiable => (3, 0),
    };
    let _ = write!(
        w,
        " icp={} ic={:08x} is={is} icc={icc:08x}",
        b(r.icrc.is_some()),
        r.icrc.unwrap_or(0)
    );
    tail(w, v);
    s
}

fn tail(w: &mut String, v: &View<'_>) {
    let _ = write!(w, " pr={:08x}", v.problems.bits());
    match &v.stop {
        Some(e) => {
            let _ = write!(
                w,
                " stop={} sl={} so={} sn={} sa={}",
                error_status(e),
                e.layer.name().replace(' ', "_"),
                e.offset,
                e.needed,
                e.available
            );
        }
        None => w.push_str(" stop=0 sl=none so=0 sn=0 sa=0"),
    }
}

fn pd_off(mad: &[u8], sub: &[u8]) -> String {
    format!("{}+{}", if sub.is_empty() { 0 } else { offset(mad, sub, 0) }, sub.len())
}

fn path_str(p: &roce_parser::CmPath) -> String {
    format!(
        "{:x},{:x},{},{},{:x},{},{},{},{},{},{}",
        p.local_lid,
        p.remote_lid,
        hexs(&p.local_gid),
        hexs(&p.remote_gid),
        p.flow_label,
        p.packet_rate,
        p.traffic_class,
        p.hop_limit,
        p.sl,
        b(p.subnet_local),
        p.local_ack_timeout
    )
}

fn rdma_str(
    sid: Option<roce_parser::RdmaCmServiceId>,
    ip: Option<roce_parser::RdmaCmIpHeader>,
) -> String {
    let (sp, ps, dp) = sid.map_or((0, 0, 0), |s| (1, s.port_space.to_u8(), s.port));
    let (ipp, v, iv, spt, si, di) = ip.map_or((0, 0, 0, 0, [0u8; 16], [0u8; 16]), |h| {
        (1, h.version, h.ip_version, h.src_port, addr16(h.src_ip), addr16(h.dst_ip))
    });
    format!(" rc={sp},{ps:x},{dp},{ipp},{v},{iv},{spt},{},{}", hexs(&si), hexs(&di))
}

/// The `M` line: what `roce_parse_mad` gives for `mad`, from `cm::parse_mad`.
fn mad_line(mad: &[u8], m: Result<roce_parser::Mad<'_>, Error>) -> String {
    use roce_parser::{CmAttribute as A, CmMessage as C};
    let m = match m {
        Ok(m) => m,
        Err(_) => return format!("M st=-2 len={}", mad.len()),
    };
    let h = &m.header;
    let kind = match m.cm_attribute() {
        None => 0,
        Some(a) => match a {
            A::ClassPortInfo => 1,
            A::Req => 2,
            A::Mra => 3,
            A::Rej => 4,
            A::Rep => 5,
            A::Rtu => 6,
            A::Dreq => 7,
            A::Drep => 8,
            A::SidrReq => 9,
            A::SidrRep => 10,
            A::Lap => 11,
            A::Apr => 12,
            A::Unknown(_) => 255,
        },
    };
    let dec = matches!(m.cm, Some(c) if !matches!(c, C::Unknown(_)));
    let mut w = format!(
        "M st=0 len={} hdr={},{:x},{},{:x},{:x},{:x},{:x},{:x},{:x},{:x} pr={:08x} kind={kind} dec={} dl={}",
        mad.len(),
        h.base_version,
        h.mgmt_class.to_u8(),
        h.class_version,
        h.method.to_u8(),
        h.status,
        h.class_specific,
        h.transaction_id,
        h.attribute_id,
        h.reserved,
        h.attribute_modifier,
        m.problems.bits(),
        b(dec),
        m.data.len()
    );
    let _ = match m.cm {
        Some(C::Req(r)) => write!(
            w,
            " req={:x},{:x},{:x},{:x},{:x},{:x},{:x},{:x},{},{},{},{},{},{},{},{},{:x},{},{},{},{},{} pp={} ap={} pd={}{}",
            r.local_comm_id,
            r.local_qkey,
            r.service_id,
            r.local_ca_guid,
            r.local_qpn,
            r.local_eecn,
            r.remote_eecn,
            r.starting_psn,
            r.responder_resources,
            r.initiator_depth,
            r.remote_cm_response_timeout,
            r.transport_service_type.to_bits(),
            b(r.end_to_end_flow_control),
            r.local_cm_response_timeout,
            r.retry_count,
            r.path_mtu,
            r.pkey,
            b(r.rdc_exists),
            r.rnr_retry_count,
            r.max_cm_retries,
            b(r.srq),
            r.extended_transport_type,
            path_str(&r.primary_path),
            path_str(&r.alternate_path),
            pd_off(mad, r.private_data),
            rdma_str(r.rdma_cm_service(), r.rdma_cm_ip_header())
        ),
        Some(C::Rep(r)) => write!(
            w,
            " rep={:x},{:x},{:x},{:x},{:x},{:x},{:x},{},{},{},{},{},{},{} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            r.local_qkey,
            r.local_qpn,
            r.local_eecn,
            r.starting_psn,
            r.local_ca_guid,
            r.responder_resources,
            r.initiator_depth,
            r.target_ack_delay,
            r.failover_accepted,
            b(r.end_to_end_flow_control),
            r.rnr_retry_count,
            b(r.srq),
            pd_off(mad, r.private_data)
        ),
        Some(C::Rtu(r)) => write!(
            w,
            " rtu={:x},{:x} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            pd_off(mad, r.private_data)
        ),
        Some(C::Drep(r)) => write!(
            w,
            " drep={:x},{:x} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            pd_off(mad, r.private_data)
        ),
        Some(C::Rej(r)) => write!(
            w,
            " rej={:x},{:x},{},{},{} ari={} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            r.message_rejected.to_bits(),
            r.reject_info_length,
            r.reason.to_u16(),
            pd_off(mad, r.ari),
            pd_off(mad, r.private_data)
        ),
        Some(C::Mra(r)) => write!(
            w,
            " mra={:x},{:x},{},{} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            r.message_mraed.to_bits(),
            r.service_timeout,
            pd_off(mad, r.private_data)
        ),
        Some(C::Dreq(r)) => write!(
            w,
            " dreq={:x},{:x},{:x} pd={}",
            r.local_comm_id,
            r.remote_comm_id,
            r.remote_qpn_eecn,
            pd_off(mad, r.private_data)
        ),
        Some(C::SidrReq(r)) => write!(
            w,
            " sreq={:x},{:x},{:x} pd={}{}",
            r.request_id,
            r.pkey,
            r.service_id,
            pd_off(mad, r.private_data),
            rdma_str(r.rdma_cm_service(), r.rdma_cm_ip_header())
        ),
        Some(C::SidrRep(r)) => write!(
            w,
            " srep={:x},{},{},{:x},{:x},{:x} ai={} pd={}",
            r.request_id,
            r.status.to_u8(),
            r.additional_info_length,
            r.qpn,
            r.qkey,
            r.service_id,
            pd_off(mad, r.additional_info),
            pd_off(mad, r.private_data)
        ),
        Some(C::Lap(r)) => write!(w, " lap={:x},{:x}", r.local_comm_id, r.remote_comm_id),
        Some(C::Apr(r)) => write!(w, " apr={:x},{:x}", r.local_comm_id, r.remote_comm_id),
        Some(C::ClassPortInfo) | Some(C::Unknown(_)) | None => Ok(()),
    };
    w
}

/// Every mode for one input (`vector`: the SPEC vectors get T<k> and P instead of H).
fn modes(out: &mut Vec<String>, frame: &[u8], vector: bool) {
    let cfg = Config::default();
    let noverify = Config { verify: false, ..cfg };
    let full = parse_ethernet(frame, &cfg);
    out.push(line("F", &View::of_packet(frame, full)));
    out.push(line("N", &View::of_packet(frame, parse_ethernet(frame, &noverify))));
    if vector {
        for k in 0..frame.len() {
            let pre = frame.get(..k).unwrap_or_default();
            out.push(line(&format!("T{k}"), &View::of_packet(pre, parse_ethernet(pre, &cfg))));
        }
        let port = Config { udp_port: 4792, ..cfg };
        out.push(line("P", &View::of_packet(frame, parse_ethernet(frame, &port))));
    } else {
        let half = frame.get(..frame.len() / 2).unwrap_or_default();
        out.push(line("H", &View::of_packet(half, parse_ethernet(half, &cfg))));
    }
    let Ok(p) = full else { return };
    if let Some(r) = &p.roce {
        if r.is_gsi_mad() {
            let m = roce_parser::parse_mad(r.payload);
            if m != r.mad().unwrap_or(m) {
                out.push("M the frame parser's MAD differs from parse_mad".to_string());
            }
            out.push(mad_line(r.payload, m));
        }
    }
    if let Some(ip) = p.ip {
        let d = frame.get(ip.offset..).unwrap_or_default();
        out.push(line("I", &View::of_packet(d, parse_ip(d, &cfg))));
    }
    if let Some(eth) = p.eth {
        if p.vlan_count() == 0 && frame.len() >= 14 {
            let d = frame.get(14..).unwrap_or_default();
            let pk = parse_ethertype_payload(eth.ethertype, d, &cfg);
            out.push(line("E", &View::of_packet(d, Ok(pk))));
        }
    }
    if let (Some(r), Some(u)) = (p.roce, p.udp) {
        if r.version.number() == 2 && u.len >= 8 {
            let start = u.offset + 8;
            let end = (u.offset + usize::from(u.len)).min(frame.len());
            if start <= end {
                let d = frame.get(start..end).unwrap_or_default();
                out.push(line("U", &View::of_udp(d, parse_udp_payload(d, &cfg))));
            }
        }
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out_path, captures)) = args.split_first() else {
        return Err("usage: c_expected OUT.txt [CAPTURE...]".into());
    };
    let mut lines = vec!["roce-parser-ffi expected v1".to_string()];
    for (name, h) in common::VECTORS {
        lines.push(format!("vector {name}"));
        modes(&mut lines, &hex(h)?, true);
    }
    let mut frames = 0usize;
    for path in captures {
        lines.push(format!("file {path}"));
        let mut n = 0usize;
        common::for_each_frame(Path::new(path), |lt, frame| {
            n += 1;
            if lt == 1 {
                lines.push(format!("frame {n} len={} lt={lt}", frame.len()));
                modes(&mut lines, frame, false);
            } else {
                lines.push(format!("frame {n} len={} lt={lt} skip", frame.len()));
            }
        })?;
        frames += n;
    }
    lines.push(format!("end frames={frames}"));
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(out_path).map_err(|e| format!("{out_path}: {e}"))?,
    );
    for l in &lines {
        writeln!(f, "{l}").map_err(|e| e.to_string())?;
    }
    f.flush().map_err(|e| e.to_string())?;
    println!(
        "c_expected: {} lines for {} vectors and {frames} frames of {} captures -> {out_path}",
        lines.len(),
        common::VECTORS.len(),
        captures.len()
    );
    Ok(())
}
