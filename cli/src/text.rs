//! Human-readable output: the one-line frame summary and the `-V` field tree.

use std::fmt::{self, Write as _};
use std::io::{self, Write};

use roce_parser::{
    Encap, EthernetInfo, IcrcStatus, IpInfo, MgmtClass, Packet, Roce, RoceVersion, Tunnel, UdpInfo,
    VlanTag,
};

use crate::input::Decoded;

/// A MAC address as aa:bb:cc:dd:ee:ff.
pub struct Mac(pub [u8; 6]);

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

/// "src -> dst" at the highest layer known: IP, GRH GIDs, or MAC.
fn endpoints(p: &Packet<'_>, out: &mut String) {
    if let Some(ip) = p.ip {
        let _ = write!(out, "{} -> {}", ip.src, ip.dst);
    } else if let Some(g) = p.roce.and_then(|r| r.grh) {
        let _ = write!(out, "{} -> {}", g.sgid_addr(), g.dgid_addr());
    } else if let Some(l) = p.lrh {
        let _ = write!(out, "LID {} -> LID {}", l.slid, l.dlid);
    } else if let Some(e) = p.eth {
        let _ = write!(out, "{} -> {}", Mac(e.src), Mac(e.dst));
    } else {
        out.push('-');
    }
}

/// BTH flags and marks worth a glance: A(ckReq), SE, M, FECN, BECN, ECN-CE.
fn flags(p: &Packet<'_>, r: &Roce<'_>, out: &mut String) {
    let b = &r.bth;
    let ce = p.ecn_ce();
    for (on, name) in [
        (b.ackreq, "A"),
        (b.se, "SE"),
        (b.migreq, "M"),
        (b.fecn, "FECN"),
        (b.becn, "BECN"),
        (ce, "ECN-CE"),
    ] {
        if on {
            if !out.ends_with('[') {
                out.push(' ');
            }
            out.push_str(name);
        }
    }
}

/// The AETH syndrome in words, e.g. "NAK: PSN sequence error", "RNR NAK, 1.28 ms".
pub fn aeth_words(r: &Roce<'_>) -> Option<String> {
    r.headers.aeth.map(|a| a.describe().to_string())
}

/// Writes the one-line summary of a frame. `t0` is the first frame's timestamp.
pub fn summary_line(d: &Decoded<'_>, time: &str, line: &mut String) {
    line.clear();
    let f = &d.frame;
    let _ = write!(line, "{:>7} {time} ", f.number);
    let p = match &d.packet {
        Ok(p) => p,
        Err(e) => {
            let _ = write!(line, "{} bytes, not decoded: {e}", f.caplen);
            return;
        }
    };
    endpoints(p, line);
    line.push_str("  ");
    let Some(r) = &p.roce else {
        non_roce(p, line);
        let _ = write!(line, "  len {}", f.len);
        via(p, line);
        reasons(p, line);
        return;
    };
    let _ = write!(
        line,
        "{}{} QP 0x{:06x} PSN {}",
        match r.version {
            RoceVersion::V1 => "RoCEv1 ",
            RoceVersion::V2 => "",
            RoceVersion::Infiniband => "IB ",
        },
        r.opcode_name(),
        r.bth.dest_qp,
        r.bth.psn
    );
    line.push_str(" [");
    flags(p, r, line);
    line.push(']');
    if let Some(words) = aeth_words(r) {
        let _ = write!(line, " {words} MSN {}", r.headers.aeth.map_or(0, |a| a.msn));
    }
    if let Some(m) = r.mad().and_then(Result::ok) {
        if let Some(cm) = m.cm {
            let _ = write!(line, " CM {}", cm.name());
        } else if let Some(a) = m.header.attribute_name() {
            // Subnet management (QP0) and administration (QP1): "SMP Get SMInfo".
            let class = match m.header.mgmt_class {
                MgmtClass::SubnAdm => "SA",
                _ => "SMP",
            };
            let _ = write!(line, " {class} {} {a}", m.header.method.name());
        }
    }
    let _ = write!(line, " len {} ICRC {}", r.payload_len, r.icrc_status.as_str());
    if let Some(v) = p.vcrc {
        let _ = write!(line, " VCRC {}", v.status.as_str());
    }
    via(p, line);
    reasons(p, line);
}

/// " via erspan2 session 7": the tunnels a frame arrived in, innermost last.
fn via(p: &Packet<'_>, line: &mut String) {
    for (i, e) in p.tunnels().enumerate() {
        line.push_str(if i == 0 { " via " } else { " in " });
        line.push_str(e.kind().code());
        if let Some(s) = e.tunnel.session_id() {
            let _ = write!(line, " session {s}");
        }
        if let Some(v) = e.tunnel.vni() {
            let _ = write!(line, " VNI {v}");
        }
    }
}

/// " ! problems ! where parsing stopped", when there are any.
fn reasons(p: &Packet<'_>, line: &mut String) {
    if !p.problems.is_empty() {
        let _ = write!(line, " ! {}", p.problems);
    }
    if let Some(e) = &p.stop {
        let _ = write!(line, " ! {e}");
    }
}

fn non_roce(p: &Packet<'_>, line: &mut String) {
    match (p.ip, p.udp) {
        (_, Some(u)) => {
            let _ = write!(line, "UDP {} -> {}", u.sport, u.dport);
        }
        (Some(ip), None) => {
            let name = match ip.protocol {
                6 => "TCP",
                1 => "ICMP",
                58 => "ICMPv6",
                2 => "IGMP",
                _ => "IP",
            };
            let _ = write!(line, "IPv{} {name} (protocol {})", ip.version, ip.protocol);
        }
        (None, None) => {
            let Some(et) = p.eth.map(|e| e.ethertype) else {
                line.push_str("no network layer decoded");
                return;
            };
            let name = match et {
                0x0806 => "ARP",
                0x88cc => "LLDP",
                0x8808 => "Ethernet PAUSE/PFC",
                _ => "Ethernet",
            };
            let _ = write!(line, "{name} (EtherType 0x{et:04x})");
        }
    }
}

/// Writes the full field tree of a frame (`dissect -V`).
pub fn tree(d: &Decoded<'_>, out: &mut impl Write) -> io::Result<()> {
    let f = &d.frame;
    writeln!(
        out,
        "Frame {}: {} bytes on wire, {} captured, time {}.{:09}, link {}",
        f.number,
        f.len,
        f.caplen,
        f.ts_ns / 1_000_000_000,
        f.ts_ns % 1_000_000_000,
        f.link_type.name()
    )?;
    let p = match &d.packet {
        Ok(p) => p,
        Err(e) => return writeln!(out, "  not decoded: {e}\n"),
    };
    for (i, e) in p.tunnels().enumerate() {
        tunnel_tree(i + 1, e, out)?;
    }
    if let Some(l) = p.lrh {
        writeln!(
            out,
            "  LRH: SLID {} -> DLID {}, VL {}, SL {}, LNH {} ({}), PktLen {} (words), LVer {}, reserved {}/{}",
            l.slid,
            l.dlid,
            l.vl,
            l.sl,
            l.lnh.bits(),
            l.lnh.as_str(),
            l.pkt_len,
            l.lver,
            l.resv2,
            l.resv5
        )?;
    }
    layers_tree("  ", p.eth, &p.vlans, p.ip, p.udp, out)?;
    if let Some(r) = &p.roce {
        roce_tree(p, r, out)?;
    } else {
        for pr in p.problems.iter() {
            writeln!(out, "  Problem: {pr}")?;
        }
    }
    match p.vcrc.map(|v| (v.stored, v.status)) {
        Some((Some(v), IcrcStatus::Bad { computed })) => {
            writeln!(out, "  VCRC: 0x{v:04x} bad (should be 0x{computed:04x})")?
        }
        Some((Some(v), s)) => writeln!(out, "  VCRC: 0x{v:04x} {}", s.as_str())?,
        Some((None, s)) => writeln!(out, "  VCRC: not captured, {}", s.as_str())?,
        None => {}
    }
    if let Some(e) = &p.stop {
        writeln!(out, "  Stopped: {e}")?;
    }
    writeln!(out)
}

/// The Ethernet, VLAN, IP and UDP lines: of the frame, or (`indent` deeper, "Outer ") of a
/// tunnel's outer packet.
fn layers_tree(
    indent: &str,
    eth: Option<EthernetInfo>,
    vlans: &[Option<VlanTag>],
    ip: Option<IpInfo>,
    udp: Option<UdpInfo>,
    out: &mut impl Write,
) -> io::Result<()> {
    if let Some(e) = eth {
        writeln!(
            out,
            "{indent}Ethernet: {} -> {}, EtherType 0x{:04x}",
            Mac(e.src),
            Mac(e.dst),
            e.ethertype
        )?;
    }
    for v in vlans.iter().flatten() {
        writeln!(
            out,
            "{indent}VLAN (TPID 0x{:04x}): ID {}, PCP {}, DEI {}",
            v.tpid,
            v.vid,
            v.pcp,
            u8::from(v.dei)
        )?;
    }
    if let Some(ip) = ip {
        let ecn = ["Not-ECT", "ECT(1)", "ECT(0)", "CE"][usize::from(ip.ecn & 3)];
        write!(
            out,
            "{indent}IPv{}: {} -> {}, DSCP {}, ECN {} ({ecn}), ",
            ip.version, ip.src, ip.dst, ip.dscp, ip.ecn
        )?;
        if ip.version == 4 {
            writeln!(
                out,
                "TTL {}, ID 0x{:04x}, total length {}",
                ip.ttl, ip.identification, ip.total_len
            )?;
        } else {
            writeln!(
                out,
                "hop limit {}, flow label 0x{:05x}, payload length {}",
                ip.ttl,
                ip.flow_label,
                ip.total_len - 40
            )?;
        }
    }
    if let Some(u) = udp {
        writeln!(
            out,
            "{indent}UDP: {} -> {}, length {}, checksum 0x{:04x}",
            u.sport, u.dport, u.len, u.checksum
        )?;
    }
    Ok(())
}

/// One tunnel taken off the frame: its outer layers, its headers, where the inner frame is.
fn tunnel_tree(n: usize, e: &Encap<'_>, out: &mut impl Write) -> io::Result<()> {
    write!(out, "  Tunnel {n}: {}", e.kind().name())?;
    if let Some(s) = e.tunnel.session_id() {
        write!(out, ", session {s}")?;
    }
    if let Some(v) = e.tunnel.vni() {
        write!(out, ", VNI {v}")?;
    }
    writeln!(out, ", inner frame at offset {}", e.inner_offset)?;
    layers_tree("    Outer ", e.eth, &e.vlans, e.ip, e.udp, out)?;
    let opt = |v: Option<u32>| v.map_or_else(|| "none".to_string(), |v| format!("0x{v:08x}"));
    if let Some(g) = e.tunnel.gre() {
        writeln!(
            out,
            "    GRE: version {}, protocol 0x{:04x}, checksum {}, key {}, sequence {}",
            g.version,
            g.protocol,
            g.checksum.map_or_else(|| "none".to_string(), |c| format!("0x{c:04x}")),
            opt(g.key),
            g.seq.map_or_else(|| "none".to_string(), |s| s.to_string()),
        )?;
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    match &e.tunnel {
        Tunnel::ErspanII(_, x) => writeln!(
            out,
            "    ERSPAN: version {}, session {}, VLAN {}, COS {}, encapsulation type {}, truncated {}, index {}",
            x.version, x.session_id, x.vlan, x.cos, x.encap_type, yes(x.truncated), x.index
        )?,
        Tunnel::ErspanIII(_, x) => {
            writeln!(
                out,
                "    ERSPAN: version {}, session {}, VLAN {}, COS {}, BSO {}, truncated {}, timestamp {} (granularity {}), SGT {}, PDU {}, frame type {}, hardware ID {}, direction {}",
                x.version,
                x.session_id,
                x.vlan,
                x.cos,
                x.bso,
                yes(x.truncated),
                x.timestamp,
                x.granularity,
                x.sgt,
                yes(x.pdu),
                x.frame_type,
                x.hw_id,
                if x.direction { "egress" } else { "ingress" }
            )?;
            if let Some(pl) = x.platform {
                writeln!(out, "    ERSPAN platform: ID {}, info 0x{:014x}", pl.id, pl.info)?;
            }
        }
        Tunnel::Vxlan(x) => writeln!(out, "    VXLAN: flags 0x{:02x}, VNI {}", x.flags, x.vni)?,
        Tunnel::Geneve(x) => {
            writeln!(
                out,
                "    Geneve: version {}, OAM {}, critical {}, protocol 0x{:04x}, VNI {}",
                x.version,
                yes(x.oam),
                yes(x.critical),
                x.protocol,
                x.vni
            )?;
            for o in x.options() {
                write!(out, "    Geneve option: class 0x{:04x}, type 0x{:02x}, data ", o.class, o.kind)?;
                for b in o.data {
                    write!(out, "{b:02x}")?;
                }
                writeln!(out)?;
            }
        }
        Tunnel::Gre(_) | Tunnel::ErspanI(_) => {}
    }
    Ok(())
}

fn roce_tree(p: &Packet<'_>, r: &Roce<'_>, out: &mut impl Write) -> io::Result<()> {
    if let Some(g) = r.grh {
        writeln!(
            out,
            "  GRH: {} -> {}, traffic class 0x{:02x}, flow label 0x{:05x}, payload length {}, next header 0x{:02x}, hop limit {}",
            g.sgid_addr(), g.dgid_addr(), g.tclass, g.flow_label, g.paylen, g.nxthdr, g.hoplmt
        )?;
    }
    let b = &r.bth;
    writeln!(
        out,
        "  {} BTH: {} (opcode 0x{:02x})",
        match r.version {
            RoceVersion::V1 => "RoCEv1",
            RoceVersion::V2 => "RoCEv2",
            RoceVersion::Infiniband => "InfiniBand",
        },
        r.opcode_name(),
        b.opcode
    )?;
    writeln!(
        out,
        "    SE {}, MigReq {}, PadCnt {}, TVer {}, P_Key 0x{:04x}",
        u8::from(b.se),
        u8::from(b.migreq),
        b.padcnt,
        b.tver,
        b.pkey
    )?;
    writeln!(
        out,
        "    FECN {}, BECN {}, DestQP 0x{:06x}, AckReq {}, PSN {} (0x{:06x})",
        u8::from(b.fecn),
        u8::from(b.becn),
        b.dest_qp,
        u8::from(b.ackreq),
        b.psn,
        b.psn
    )?;
    if b.resv6 != 0 || b.resv7 != 0 {
        writeln!(
            out,
            "    reserved: byte 4 bits 0x{:02x}, byte 8 bits 0x{:02x}",
            b.resv6, b.resv7
        )?;
    }
    // The extended headers in wire order: the opcode's list (no opcode row, no headers).
    for &which in r.info.map_or(&[][..], |i| i.headers) {
        roce_analysis::write_ext_header_tree(out, &r.headers, which)?;
    }
    if let Some(Ok(m)) = r.mad() {
        crate::cm_text::cm_tree(&m, out)?;
    }
    if r.info.is_none() {
        writeln!(
            out,
            "  Opaque: {} bytes after the BTH (opcode not in the table)",
            r.opaque.len()
        )?;
    }
    writeln!(
        out,
        "  Payload: {} bytes ({} captured), pad {} bytes",
        r.payload_len,
        r.payload.len(),
        r.bth.padcnt
    )?;
    match (r.icrc, r.icrc_status) {
        (Some(v), IcrcStatus::Bad { computed }) => {
            writeln!(out, "  ICRC: 0x{v:08x} bad (should be 0x{computed:08x})")?
        }
        (Some(v), s) => writeln!(out, "  ICRC: 0x{v:08x} {}", s.as_str())?,
        (None, s) => writeln!(out, "  ICRC: not captured, {}", s.as_str())?,
    }
    for pr in p.problems.iter() {
        writeln!(out, "  Problem: {pr}")?;
    }
    Ok(())
}
