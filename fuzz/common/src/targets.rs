//! The fuzz targets. Each takes the fuzzer's bytes and records what it reached.

use roce_capture::{Capture, Effect, L2Start, Warnings};
use roce_parser::*;

use crate::icrc_ref::{self, Net};
use crate::spec::{self, FrameSpec, UdpSpec, VlanSpec};
use crate::{check, Reach};

/// A whole Ethernet frame: `parse_ethernet`, then the same bytes entered after the Ethernet
/// header (`parse_ethertype_payload`, and `parse_ip` for IP) must give the same layers, and
/// with verification off the same packet with the ICRC not checked.
pub fn ethernet(data: &[u8], reach: &mut Reach) {
    let cfg = Config::default();
    let p = match parse_ethernet(data, &cfg) {
        Ok(p) => p,
        Err(_) => {
            assert!(data.len() < 14, "parse_ethernet failed on a whole header");
            return;
        }
    };
    check::packet(&p, data);
    if let Some(r) = &p.roce {
        reach.roce(r);
    }
    // The frame's own Ethernet header: the outermost tunnel's when the frame arrived in one
    // (the packet's `eth` is then the inner frame's, absent for IP in GRE or an inner frame
    // cut short).
    let (eth, tags) = match p.encap[0] {
        Some(e) => (e.eth, e.vlans.iter().flatten().count()),
        None => (p.eth, p.vlan_count()),
    };
    let eth = eth.expect("parse_ethernet gave no Ethernet info");

    // Untagged: the network layer entered directly.
    let untagged = tags == 0
        && !matches!(eth.ethertype, 0x8100 | 0x88a8 | 0x9100)
        && data.get(12..14) == Some(&eth.ethertype.to_be_bytes()[..]);
    if untagged {
        let inner = &data[14..];
        let q = parse_ethertype_payload(eth.ethertype, inner, &cfg);
        check::packet(&q, inner);
        check::same_shifted(&p, &q, 14);
        let version = inner.first().map(|b| b >> 4);
        if (eth.ethertype == ETHERTYPE_IPV4 && version == Some(4))
            || (eth.ethertype == ETHERTYPE_IPV6 && version == Some(6))
        {
            let q = parse_ip(inner, &cfg).expect("parse_ip refused an IP packet");
            check::same_shifted(&p, &q, 14);
        }
    }

    // Verification off: the same packet, nothing verified.
    let quiet = Config { verify: false, ..cfg };
    let n = parse_ethernet(data, &quiet).expect("parse_ethernet without verification");
    let mut expect = p;
    if let Some(r) = &mut expect.roce {
        r.icrc_status = IcrcStatus::NotChecked;
    }
    let mut verified_only = Problems::NONE;
    verified_only.insert(Problem::IcrcBad);
    verified_only.insert(Problem::Ipv4Checksum);
    let unverified = Problems::from_bits(p.problems.bits() & !verified_only.bits());
    expect.problems = unverified;
    assert_eq!(n, expect, "verification changed more than the ICRC and checksum");
    // Verified on one thread, parsed without verifying on another (the command line's
    // reader): the verdicts handed over make the same packet.
    let mut handed = n;
    Checksums::of(&p).with_payload_crc(&p).apply(&mut handed);
    assert_eq!(handed, p, "Checksums: the verdicts handed over are not the verified packet");
    // The payload's CRC-32 handed over is the one of the payload the packet holds.
    let crc = |q: &roce_parser::Packet<'_>| q.roce.map(|r| r.payload_crc32());
    assert_eq!(crc(&handed), crc(&n), "Checksums: a payload CRC-32 not of this payload");
}

/// The UDP payload from the BTH on, two ways: the bytes as they are (`parse_udp_payload`),
/// and, structure-aware, the bytes decoded as a [`UdpSpec`] (opcode, every header's fields,
/// payload, PadCnt, damage), built, and parsed again: undamaged, every field must survive.
pub fn udp_payload(data: &[u8], reach: &mut Reach) {
    let cfg = Config::default();
    match parse_udp_payload(data, &cfg) {
        Ok((r, problems)) => {
            check::roce(&r, data);
            check::problems(problems);
            // No room for an ICRC after the BTH: nothing to check (ShortForIcrc).
            let want =
                if data.len() < 16 { IcrcStatus::Unverifiable } else { IcrcStatus::NotChecked };
            assert_eq!(r.icrc_status, want, "ICRC status without IP and UDP");
            reach.roce(&r);
        }
        Err(_) => assert!(data.len() < 12, "parse_udp_payload failed with a whole BTH"),
    }

    let Some(s) = spec::decode::<UdpSpec>(data) else {
        return;
    };
    let bth = BthRepr { opcode: s.opcode, ..s.bth.normalized() };
    let mut b = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
    b.headers = s.headers;
    b.payload = s.payload;
    b.padcnt = s.padcnt;
    let Some(frame) = spec::emit(&b) else {
        return;
    };
    let built = &frame[14 + 20 + 8..];
    let mut bytes = built.to_vec();
    let damaged = s.damage.apply(&mut bytes);
    let res = parse_udp_payload(&bytes, &cfg);
    if damaged {
        match &res {
            Ok((r, _)) => {
                check::roce(r, &bytes);
                reach.roce(r);
            }
            Err(_) => assert!(bytes.len() < 12),
        }
        return;
    }
    let (r, problems) = res.expect("a built UDP payload parses");
    check::roce(&r, &bytes);
    let padcnt = spec::effective_padcnt(s.padcnt, s.payload.len());
    same_transport(&r, bth, padcnt, &s.headers, s.payload);
    let stored = u32::from_le_bytes(built[built.len() - 4..].try_into().unwrap());
    assert_eq!(r.icrc, Some(stored), "ICRC");
    assert_eq!(r.icrc_status, IcrcStatus::NotChecked);
    allowed_problems(problems, r.info, &r, s.padcnt.is_some(), false);
    reach.roce(&r);
}

/// RoCEv1: the bytes after the EtherType 0x8915 (GRH, BTH, ...), entered directly and inside
/// an Ethernet frame: the same packet.
pub fn rocev1(data: &[u8], reach: &mut Reach) {
    let cfg = Config::default();
    let q = parse_ethertype_payload(ETHERTYPE_ROCEV1, data, &cfg);
    check::packet(&q, data);
    assert!(q.eth.is_none() && q.ip.is_none() && q.udp.is_none());
    match &q.roce {
        Some(r) => {
            assert_eq!(r.version, RoceVersion::V1);
            assert_eq!(r.bth_offset, 40);
            reach.roce(r);
        }
        None => assert!(q.stop.is_some(), "no RoCE packet and no reason"),
    }
    let mut frame = Vec::with_capacity(14 + data.len());
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x89, 0x15]);
    frame.extend_from_slice(data);
    let p = parse_ethernet(&frame, &cfg).expect("a whole Ethernet header");
    check::same_shifted(&p, &q, 14);
}

/// Build -> parse over arbitrary owned structs ([`FrameSpec`]: network layer, VLAN tags,
/// addresses, ports, BTH, every extended header, payload, PadCnt, ICRC): every field the
/// builder was given comes back from `parse_ethernet`.
pub fn roundtrip(data: &[u8], reach: &mut Reach) {
    let Some(s) = spec::decode::<FrameSpec>(data) else {
        return;
    };
    if matches!(s.network, Network::Infiniband(..)) {
        // No Ethernet: the `infiniband` target builds and parses native packets.
        return;
    }
    let bth = BthRepr { opcode: s.opcode, ..s.bth.normalized() };
    let mut b = FrameBuilder::new(s.network, bth);
    b.vlans = s.vlans.map(|v| v.map(VlanSpec::tag));
    b.eth_dst = s.eth_dst;
    b.eth_src = s.eth_src;
    b.udp_sport = s.udp_sport;
    b.udp_dport = s.udp_dport.unwrap_or(ROCEV2_UDP_PORT);
    b.udp_checksum = s.udp_checksum;
    b.headers = s.headers;
    b.payload = s.payload;
    b.padcnt = s.padcnt;
    b.icrc = s.icrc;
    let Some(frame) = spec::emit(&b) else {
        assert!(b.buffer_len() > 65_000, "the builder refused a short frame");
        return;
    };
    let cfg = Config { udp_port: b.udp_dport, verify: true, ..Config::default() };
    let p = parse_ethernet(&frame, &cfg).expect("a built frame parses");
    check::packet(&p, &frame);
    assert_eq!(p.stop, None, "a built frame stops early");

    let eth = p.eth.expect("Ethernet");
    assert_eq!((eth.dst, eth.src), (s.eth_dst, s.eth_src), "MAC addresses");
    let mut vlans = [None; 2];
    for (slot, t) in vlans.iter_mut().zip(b.vlans.iter().flatten()) {
        *slot = Some(*t);
    }
    assert_eq!(p.vlans, vlans, "VLAN tags");

    let padcnt = spec::effective_padcnt(s.padcnt, s.payload.len());
    let info = lookup_opcode(s.opcode);
    let hl = info.map_or(12, |i| usize::from(i.header_len));
    let transport_len = hl + s.payload.len() + usize::from(padcnt) + 4;
    let r = p.roce.expect("a built frame has its RoCE packet");
    match s.network {
        Network::Ipv4(v) => {
            let ip = p.ip.expect("IPv4");
            assert_eq!(ip.version, 4);
            assert_eq!(ip.src, core::net::IpAddr::from(v.src));
            assert_eq!(ip.dst, core::net::IpAddr::from(v.dst));
            assert_eq!(
                (ip.dscp, ip.ecn, ip.ttl, ip.identification),
                (v.dscp & 0x3f, v.ecn & 3, v.ttl, v.identification),
                "IPv4 fields"
            );
            assert_eq!((ip.protocol, ip.header_len), (17, 20));
            assert_eq!(ip.total_len, 20 + 8 + transport_len);
        }
        Network::Ipv6(v) => {
            let ip = p.ip.expect("IPv6");
            assert_eq!(ip.version, 6);
            assert_eq!(ip.src, core::net::IpAddr::from(v.src));
            assert_eq!(ip.dst, core::net::IpAddr::from(v.dst));
            assert_eq!(
                (ip.dscp << 2 | ip.ecn, ip.flow_label, ip.ttl),
                (v.traffic_class, v.flow_label & 0xfffff, v.hop_limit),
                "IPv6 fields"
            );
            assert_eq!((ip.protocol, ip.ext_len), (17, 0));
            assert_eq!(ip.total_len, 40 + 8 + transport_len);
        }
        Network::Infiniband(..) => unreachable!("returned above"),
        Network::RoceV1(g) => {
            assert!(p.ip.is_none() && p.udp.is_none());
            assert_eq!(r.version, RoceVersion::V1);
            let got = r.grh.expect("GRH");
            let mut want = g;
            want.ipver &= 0xf;
            want.flow_label &= 0xfffff;
            want.paylen = transport_len as u16;
            want.nxthdr = 0x1b;
            assert_eq!(got, want, "GRH fields");
        }
    }
    if !matches!(s.network, Network::RoceV1(_)) {
        assert_eq!(r.version, RoceVersion::V2);
        let udp = p.udp.expect("UDP");
        assert_eq!(
            (udp.sport, udp.dport, udp.checksum, usize::from(udp.len)),
            (s.udp_sport, b.udp_dport, s.udp_checksum, 8 + transport_len),
            "UDP fields"
        );
    }
    same_transport(&r, bth, padcnt, &s.headers, s.payload);
    match s.icrc {
        None => assert_eq!(r.icrc_status, IcrcStatus::Ok, "built ICRC"),
        Some(v) => {
            assert_eq!(r.icrc, Some(v), "forced ICRC");
            assert!(matches!(r.icrc_status, IcrcStatus::Ok | IcrcStatus::Bad { .. }));
        }
    }
    allowed_problems(p.problems, info, &r, s.padcnt.is_some(), s.icrc.is_some());
    reach.roce(&r);
}

/// ICRC verification against [`icrc_ref`] (a bytewise CRC-32 and the recipe done the plain
/// way): for a frame, the covered bytes are located here from the lengths in the frame and the
/// parser's verdict must match; and `compute_icrc` on header slices cut from the input must
/// equal the reference.
pub fn icrc(data: &[u8], reach: &mut Reach) {
    icrc_slices(data);
    let Ok(p) = parse_ethernet(data, &Config::default()) else {
        return;
    };
    let Some(r) = &p.roce else {
        return;
    };
    reach.roce(r);
    let (net, ip, udp, claimed): (Net, &[u8], &[u8], usize) = match r.version {
        RoceVersion::V2 => {
            let ipi = p.ip.expect("RoCEv2 has IP");
            let u = p.udp.expect("RoCEv2 has UDP");
            let ver = data[ipi.offset] >> 4;
            let (net, ip_len) = match ver {
                4 => (Net::Ipv4, usize::from(data[ipi.offset] & 0x0f) * 4),
                6 => (Net::Ipv6, 40),
                v => panic!("RoCEv2 over IP version {v}"),
            };
            assert_eq!(ip_len, ipi.header_len, "IP header length");
            let udp = &data[u.offset..u.offset + 8];
            let len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
            assert_eq!(u.offset + 8, r.bth_offset, "BTH right after UDP");
            // A UDP length beyond the IP payload: the packet ends where the IP payload does.
            let ip_payload = ipi.total_len - ipi.header_len - ipi.ext_len;
            let len = if len > ip_payload && ip_payload >= 8 { ip_payload } else { len };
            let claimed = len.checked_sub(8).expect("RoCE with a UDP length below 8");
            (net, &data[ipi.offset..ipi.offset + ip_len], udp, claimed)
        }
        RoceVersion::Infiniband => unreachable!("parse_ethernet gives no native InfiniBand"),
        RoceVersion::V1 => {
            let g = r.bth_offset - 40;
            let grh = &data[g..g + 40];
            let paylen = usize::from(u16::from_be_bytes([grh[4], grh[5]]));
            (Net::Ipv6, grh, &[][..], paylen)
        }
    };
    let start = r.bth_offset;
    let end = start + claimed;
    // No room for an ICRC after the BTH (ShortForIcrc), or not captured.
    if claimed < 16 || end > data.len() {
        assert_eq!(r.icrc_status, IcrcStatus::Unverifiable, "ICRC not in the frame");
        return;
    }
    let stored = u32::from_le_bytes(data[end - 4..end].try_into().unwrap());
    assert_eq!(r.icrc, Some(stored), "stored ICRC");
    let want = icrc_ref::icrc(net, ip, udp, &data[start..end - 4]);
    match r.icrc_status {
        IcrcStatus::Ok => assert_eq!(want, stored, "ICRC ok but the reference differs"),
        IcrcStatus::Bad { computed } => {
            assert_eq!(computed, want, "computed ICRC differs from the reference");
            assert_ne!(want, stored, "ICRC bad but the reference matches");
        }
        s => panic!("ICRC {s:?} on a packet that holds its ICRC"),
    }
}

/// `compute_icrc` against the reference on slices of the input: byte 0 picks IPv4 (with
/// 0..10 option words), IPv6 or GRH; then the IP header, the UDP header (RoCEv2) and the
/// transport bytes follow.
fn icrc_slices(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let (net, ip_len, udp_len) = match sel % 3 {
        0 => (Net::Ipv4, 20 + 4 * usize::from((sel / 3) % 11), 8),
        1 => (Net::Ipv6, 40, 8),
        _ => (Net::Ipv6, 40, 0),
    };
    if rest.len() < ip_len + udp_len {
        return;
    }
    let (ip, rest) = rest.split_at(ip_len);
    let (udp, transport) = rest.split_at(udp_len);
    let n = match (sel % 3, net) {
        (0, _) => IcrcNetwork::Ipv4(ip),
        (1, _) => IcrcNetwork::Ipv6(ip),
        _ => IcrcNetwork::Grh(ip),
    };
    assert_eq!(
        compute_icrc(n, udp, transport),
        icrc_ref::icrc(net, ip, udp, transport),
        "icrc::compute differs from the reference"
    );
}

/// A structured CM input: a header (or Linux's CM header for the message) and a message.
#[derive(arbitrary::Arbitrary, Debug)]
pub struct CmSpec<'a> {
    /// Use the header Linux sends for the message (else `header` as given).
    pub linux_header: bool,
    pub tid: u64,
    pub header: MadHeaderRepr,
    pub message: CmMessage<'a>,
}

/// CM MAD decoding: the bytes as a MAD (`parse_mad`; whole MADs must survive parse -> emit ->
/// parse), and structure-aware, the bytes decoded as a [`CmSpec`], emitted, parsed: every
/// field the message wrote comes back.
pub fn cm_mad(data: &[u8], reach: &mut Reach) {
    match parse_mad(data) {
        Ok(m) => {
            check::mad(&m, data);
            reach.mad(&m);
        }
        Err(_) => assert!(data.len() < 24, "parse_mad failed with a whole header"),
    }
    let Some(s) = spec::decode::<CmSpec>(data) else {
        return;
    };
    let header =
        if s.linux_header { MadHeaderRepr::cm(s.message.attribute(), s.tid) } else { s.header };
    let mut b1 = [0u8; MAD_LEN];
    if s.message.emit_mad_with_header(&header, &mut b1).is_err() {
        assert!(s.message.check_lengths().is_err(), "emit_mad refused a message whose lengths fit");
        return;
    }
    let m1 = parse_mad(&b1).expect("an emitted MAD parses");
    check::mad(&m1, &b1);
    let is_cm =
        header.base_version == 1 && header.mgmt_class == MgmtClass::Cm && header.class_version == 2;
    // The header names the message (an `Unknown(id)` whose id is a CM message's is not one).
    if is_cm && CmAttribute::from_u16(header.attribute_id) == s.message.attribute() {
        let got = m1.cm.expect("a whole CM MAD decodes");
        assert_eq!(got.attribute(), s.message.attribute());
        let mut b2 = [0u8; MAD_LEN];
        got.emit_mad_with_header(&m1.header, &mut b2).expect("a decoded message emits");
        assert_eq!(b1, b2, "a field the message wrote did not survive parsing");
        reach.mad(&m1);
    }
}

/// Frames read before a capture is taken to loop.
const CAPTURE_STEP_LIMIT: u64 = 10_000_000;

/// The pcap / pcapng reader (gzip too) over the bytes as a file: it ends, numbers frames in
/// order, hands out frames of their captured length, stays ended after a fatal error, hands
/// out the frame a warning names right after it; `Warnings` stays bounded; every frame is
/// parsed from where its link type says.
pub fn capture(data: &[u8], reach: &mut Reach) {
    let mut cap = match Capture::from_bytes("fuzz", data.to_vec()) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let _ = cap.format().to_string();
    let _ = cap.name();
    let cfg = Config::default();
    let mut steps = 0u64;
    let mut last = 0u64;
    let mut fatal = false;
    let mut frames = 0u64;
    // A warning loses nothing: the frame it names comes next (after any other warning).
    let mut warned: Option<u64> = None;
    let mut warnings = Warnings::new(2);
    let mut plain: Vec<LentItem> = Vec::new();
    while let Some(item) = cap.next_frame() {
        plain.push(item.as_ref().map(|f| (f.number, f.data.to_vec())).map_err(|e| e.to_string()));
        assert!(!fatal, "a frame after a fatal error");
        steps += 1;
        assert!(steps <= CAPTURE_STEP_LIMIT, "the capture reader does not end");
        match item {
            Ok(f) => {
                assert!(f.number > last, "frame numbers not increasing");
                if let Some(n) = warned.take() {
                    assert_eq!(f.number, n, "the frame after a warning is not the one it names");
                }
                last = f.number;
                assert_eq!(f.caplen as usize, f.data.len(), "caplen");
                frames += 1;
                reach.frames += 1;
                match f.l2() {
                    L2Start::Ethernet(b) => {
                        if let Ok(p) = parse_ethernet(b, &cfg) {
                            check::packet(&p, b);
                            if let Some(r) = &p.roce {
                                reach.roce(r);
                            }
                        }
                    }
                    L2Start::Network { ethertype, data } => {
                        let p = parse_ethertype_payload(ethertype, data, &cfg);
                        check::packet(&p, data);
                        if let Some(r) = &p.roce {
                            reach.roce(r);
                        }
                    }
                    L2Start::Infiniband(b) => {
                        if let Ok(p) = parse_infiniband(b, &cfg) {
                            check::packet(&p, b);
                            if let Some(r) = &p.roce {
                                reach.roce(r);
                            }
                        }
                    }
                    L2Start::Unsupported(e) => assert!(!e.to_string().is_empty()),
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                fatal = e.is_fatal();
                if e.effect() == Effect::Warning {
                    assert!(e.frame().is_some(), "a warning names no frame");
                    assert!(warned.is_none() || warned == e.frame(), "a warning's frame was lost");
                    warned = e.frame();
                } else {
                    assert!(warned.is_none(), "damage after a warning");
                }
                warnings.add(e);
                assert!(warnings.kept().len() <= 2 * 32, "warnings kept without bound");
            }
        }
    }
    assert!(warned.is_none(), "the frame a warning names never came");
    assert!(cap.next_frame().is_none(), "the reader restarted after its end");
    for i in cap.interfaces() {
        let _ = i.resolution.to_string();
    }
    assert_eq!(cap.frames_read(), frames, "frames_read");
    if let Some(total) = cap.bytes_total() {
        assert!(cap.bytes_read() <= total, "read more than the input");
    }
    lent_read_is_the_plain_read(data, &plain);
}

/// A frame (number, bytes) or an error's message, as a capture read gives them.
type LentItem = std::result::Result<(u64, Vec<u8>), String>;

/// The capture read again with its windows lent (`--threads`, `Capture::lend_window`): the
/// same frames and errors in the same order, each frame's bytes at the index
/// `last_frame_at` gave, in the window retired after it (or the last one); at most two
/// windows held back before they are lent again, as batches in flight are.
fn lent_read_is_the_plain_read(data: &[u8], plain: &[LentItem]) {
    let Ok(mut cap) = Capture::from_bytes("fuzz", data.to_vec()) else { return };
    cap.lend_window(Vec::new());
    let mut got: Vec<LentItem> = Vec::new();
    // (index in `got`, where in its window, length) of frames whose window is still open.
    let mut pending: Vec<(usize, usize, usize)> = Vec::new();
    let mut held: Vec<Vec<u8>> = Vec::new();
    fn settle(got: &mut [LentItem], pending: &mut Vec<(usize, usize, usize)>, window: &[u8]) {
        for (i, at, len) in pending.drain(..) {
            let bytes = window.get(at..at + len).expect("a lent frame outside its window");
            if let Some(Ok((_, d))) = got.get_mut(i) {
                *d = bytes.to_vec();
            }
        }
    }
    let mut steps = 0u64;
    loop {
        steps += 1;
        assert!(steps <= CAPTURE_STEP_LIMIT + 1, "the lending reader does not end");
        let next = cap
            .next_frame()
            .map(|r| r.map(|f| (f.number, f.data.len())).map_err(|e| e.to_string()));
        if let Some(window) = cap.take_retired_window() {
            settle(&mut got, &mut pending, &window);
            held.push(window);
            let again = if held.len() > 2 { held.remove(0) } else { Vec::new() };
            cap.lend_window(again);
        }
        match next {
            None => break,
            Some(Ok((n, len))) => {
                pending.push((got.len(), cap.last_frame_at(), len));
                got.push(Ok((n, Vec::new())));
            }
            Some(Err(e)) => got.push(Err(e)),
        }
    }
    let window = cap.take_window();
    settle(&mut got, &mut pending, &window);
    assert!(got == plain, "the lent windows do not hold the frames of a plain read");
}

/// The transport fields of a parse of a built packet: the BTH (PadCnt as written), the
/// opcode's headers, payload and pad; for undefined opcodes everything after the BTH is opaque.
fn same_transport(r: &Roce<'_>, bth: BthRepr, padcnt: u8, given: &ExtHeaders, payload: &[u8]) {
    let info = lookup_opcode(bth.opcode);
    let mut want = bth;
    want.padcnt = padcnt;
    assert_eq!(r.bth, want, "BTH");
    assert_eq!(r.info, info, "opcode row");
    assert_eq!(
        r.headers,
        spec::expected_headers(info, given),
        "extended headers of {}",
        spec::opname(bth.opcode)
    );
    let pad = vec![0u8; usize::from(padcnt)];
    if info.is_some() {
        assert_eq!(r.payload, payload, "payload");
        assert_eq!(r.payload_len, payload.len(), "payload length");
        assert_eq!(r.pad, &pad[..], "pad");
        assert!(r.opaque.is_empty());
    } else {
        let mut opaque = payload.to_vec();
        opaque.extend_from_slice(&pad);
        assert_eq!(r.opaque, &opaque[..], "opaque bytes of an undefined opcode");
        assert!(r.payload.is_empty());
    }
}

/// Only the problems the generated values explain: reserved bits and TVer, the opcode's own
/// rules (payload where none belongs, CNP and ATOMIC_WRITE lengths, QP1 Q_Key, RD layout),
/// undefined opcodes, a forced PadCnt or ICRC, and the MAD's own problems when the packet is a
/// UD SEND to QP1 (its payload is the generated bytes).
fn allowed_problems(
    problems: Problems,
    info: Option<&OpcodeInfo>,
    r: &Roce<'_>,
    forced_padcnt: bool,
    forced_icrc: bool,
) {
    let mut allowed = Problems::NONE;
    for p in [
        Problem::TverNonZero,
        Problem::ReservedBits,
        Problem::RdLayoutMismatch,
        Problem::Qp1QKey,
        Problem::CnpBecnClear,
        Problem::CnpPsnNonZero,
        Problem::CnpLength,
        Problem::UnexpectedPayload,
        Problem::AtomicWriteLength,
    ] {
        allowed.insert(p);
    }
    if info.is_none() {
        allowed.insert(Problem::ReservedOpcode);
        allowed.insert(Problem::VendorOpcode);
    }
    if forced_padcnt {
        allowed.insert(Problem::PadCntInconsistent);
    }
    if forced_icrc {
        allowed.insert(Problem::IcrcBad);
    }
    if let Some(Ok(m)) = r.mad() {
        allowed.union(m.problems);
    }
    let extra = problems.bits() & !allowed.bits();
    assert_eq!(
        extra,
        0,
        "unexplained problems: {:?}",
        Problems::from_bits(extra).iter().collect::<Vec<_>>()
    );
}

/// State the checker may hold per tracked flow: 8 PSNs in the pairing index; requests and
/// READs remembered by the requester model (64 + 16) and the responder model (256 + 16),
/// and, on a CM-opened flow or under `--qp-timeout`, the timers' window (256 transmissions,
/// 3 x 64 requests awaiting their answer) (conformance/src/lib.rs INDEXED, requester.rs,
/// responder.rs, timing/mod.rs).
const PAIRING_PER_FLOW: usize = 8;
const REQUESTS_PER_FLOW: usize = 64 + 16 + 256 + 16 + 256 + 3 * 64;
/// Findings counters per flow: one per (connection, rule) a flow can be named in, under its
/// unpaired and paired names; generous.
const COUNTERS_PER_FLOW: usize = 2 * 64;

/// Congestion state per flow: 3 maps capped at the flow cap, and CE bursts waiting for a CNP
/// (64 per host pair) for as many host pairs as flows (conformance/src/congestion.rs).
const CONGESTION_PER_FLOW: usize = 3 + 64;

/// The conformance checker fed an arbitrary packet sequence ([`crate::sequence`]): no panic,
/// and the state stays bounded by the number of flows it may track, whatever the sequence.
/// An Ethernet frame as the capture reader would hand it over: captured whole.
fn ethernet_record(number: u64, ts_ns: u64, data: &[u8]) -> roce_capture::Frame<'_> {
    roce_capture::Frame {
        number,
        source: 0,
        source_number: number,
        ts_ns,
        caplen: data.len() as u32,
        len: data.len() as u32,
        link_type: roce_capture::LinkType::Ethernet,
        interface: 0,
        offset: 0,
        data,
    }
}

pub fn conformance(data: &[u8], reach: &mut Reach) {
    use roce_conformance::{Checker, FrameInfo};
    if data.is_empty() {
        return;
    }
    let opts = crate::sequence::options(crate::sequence::option_bytes(data));
    let max_flows = opts.max_flows;
    // `diagnose` on the same frames: one more consumer of the pass, with its own model.
    let mut diagnosis = roce_analysis::Diagnosis::new(opts.clone());
    let mut checker = Checker::new(opts);
    let cfg = Config::default();
    let mut ts: u64 = 1_700_000_000_000_000_000;
    let mut number = 0u64;
    let mut built;
    for (structured, rec) in crate::sequence::records(data) {
        let frame: &[u8] = if structured {
            match crate::sequence::build(rec) {
                Some((f, step)) => {
                    ts = ts.saturating_add_signed(step);
                    built = f;
                    &built
                }
                None => continue,
            }
        } else {
            ts += 1000;
            rec
        };
        number += 1;
        let info =
            FrameInfo { number, ts_ns: ts, caplen: frame.len() as u32, len: frame.len() as u32 };
        match parse_ethernet(frame, &cfg) {
            Ok(p) => {
                if let Some(r) = &p.roce {
                    reach.roce(r);
                }
                checker.feed(&info, &p);
            }
            Err(_) => checker.feed_undecoded(&info),
        }
        let record = ethernet_record(number, ts, frame);
        diagnosis.frame(roce_conformance::Shard::ALL, &roce_analysis::decode(record, &cfg));
        for f in checker.take_findings() {
            assert!(!f.rule.is_empty() && !f.message.is_empty());
            assert!(
                f.frames.iter().all(|&n| n <= number),
                "{} names a frame not fed yet: {:?}",
                f.rule,
                f.frames
            );
        }
        let s = checker.state();
        assert!(s.flows <= max_flows, "{} flows tracked, limit {max_flows}", s.flows);
        assert!(
            s.pairing_index <= PAIRING_PER_FLOW * max_flows,
            "pairing index of {} entries with {max_flows} flows",
            s.pairing_index
        );
        assert!(s.lru_queue <= 2 * s.flows + 1025, "LRU queue of {}", s.lru_queue);
        assert!(s.cm_pending <= 4096, "{} CM REQs pending", s.cm_pending);
        assert!(
            s.listed_connections < 2 * max_flows.max(1),
            "{} ended connections held with a cap of {max_flows}",
            s.listed_connections
        );
        assert!(
            s.remembered_requests <= REQUESTS_PER_FLOW * max_flows,
            "{} requests remembered with {max_flows} flows",
            s.remembered_requests
        );
        assert!(
            s.congestion <= CONGESTION_PER_FLOW * (max_flows + 1),
            "{} congestion entries with at most {max_flows} flows: the checker's memory grows \
             with the host pairs and QPs seen, not the live flows",
            s.congestion
        );
        assert!(
            s.finding_counters <= COUNTERS_PER_FLOW * max_flows + 64,
            "{} finding counters with at most {max_flows} flows: the checker's memory grows \
             with the connections seen, not the live ones",
            s.finding_counters
        );
    }
    let report = checker.finish();
    assert_eq!(report.frames, number, "frames counted");
    assert!(report.roce_frames <= number);
    for f in &report.findings {
        assert!(f.frames.iter().all(|&n| n <= number), "{} frames", f.rule);
    }
    assert!(report.connections.len() <= max_flows.max(1));
    for c in &report.connections {
        let i = &c.info;
        assert!(i.last_frame <= number && i.first_frame <= i.last_frame, "{i:?}");
        assert!(i.connection.incarnation >= 1);
        assert!((0.0..=1.0).contains(&c.completeness), "completeness {}", c.completeness);
    }
    assert!(report.state.flows <= max_flows);
    // The diagnosis: every connection listed has a verdict, every frame cited was fed, the
    // counts are the verdicts given, the timeline bounded, and the document serialises.
    let summary = roce_analysis::ReadSummary { frames: number, ..Default::default() };
    let doc = diagnosis.finish(&summary, roce_analysis::DEFAULT_CASCADE_WINDOW_NS);
    assert!(doc.connections.len() <= max_flows.max(1) + max_flows / 4 + 1);
    let mut given = 0u64;
    for c in &doc.connections {
        assert!(!c.verdicts.is_empty(), "{} has no verdict", c.name);
        for v in &c.verdicts {
            given += 1;
            assert!(!v.summary.is_empty() && !v.next.is_empty());
            assert!(
                v.frames.iter().all(|&f| f >= 1 && f <= number),
                "{:?} cites {:?}",
                v.verdict,
                v.frames
            );
            assert!(v.frames.len() <= 16);
        }
    }
    given += doc.setup.iter().map(|s| s.verdicts.len() as u64).sum::<u64>();
    assert_eq!(doc.verdicts.values().sum::<u64>(), given, "verdicts counted");
    assert!(doc.timeline.followed.len() <= roce_analysis::TIMELINE_LISTED);
    if let Some(f) = &doc.timeline.first {
        assert!(f.frame >= 1 && f.frame <= number);
        assert!(doc
            .timeline
            .followed
            .iter()
            .all(|g| g.ts >= f.ts && g.after_ns <= doc.timeline.window_ns));
    }
    assert!(serde_json::to_vec(&doc).is_ok());
}

/// `--shard K/N` against the single run, on the same generated frame sequences as
/// [`conformance`]: N checkers (2 to 4, from the first byte), each fed the frames of its
/// shard (`Shard::owns`) and ticked by the others', find together exactly what one checker
/// fed every frame finds (as a multiset), and list the same connections, whenever no run
/// evicted a connection or suppressed a finding (the cap is per process: beyond it the
/// shards legitimately keep more). And `check --threads N`'s split: N shard checkers
/// (`Checker::for_shard`, ticked with the capture's clock before each of their frames),
/// merged by `merge_shards`, give exactly the one checker's report (findings in the same
/// order, counts, per-rule totals, connections listed and not) whenever the merge does not
/// refuse; it refuses only when a table of the one run got near its cap.
pub fn sharded_checker(data: &[u8], reach: &mut Reach) {
    use roce_conformance::{merge_shards, Checker, Finding, FrameInfo, Report, Shard};
    let Some(&opt) = data.first() else {
        return;
    };
    let mut opts = crate::sequence::options(crate::sequence::option_bytes(data));
    // CNP pacing per destination IP spans host pairs, so shards (by host pair) do not judge
    // it as one run does (docs/congestion.md): here that scope is narrowed to the IP pair.
    if let Some(p) = &mut opts.cnp_min_interval {
        if p.scope == roce_conformance::CnpScope::Dest {
            p.scope = roce_conformance::CnpScope::Pair;
        }
    }
    let count = 2 + u32::from(opt >> 6) % 3;
    let mut whole = Checker::new(opts.clone());
    let mut shards: Vec<(Shard, Checker)> = (0..count)
        .filter_map(|k| Shard::new(k, count))
        .map(|s| (s, Checker::new(opts.clone())))
        .collect();
    let mut split: Vec<Checker> = (0..count).map(|_| Checker::for_shard(opts.clone())).collect();
    let mut clock = 0u64;
    let cfg = Config::default();
    let mut ts: u64 = 1_700_000_000_000_000_000;
    let mut number = 0u64;
    let mut built;
    for (structured, rec) in crate::sequence::records(data) {
        let frame: &[u8] = if structured {
            match crate::sequence::build(rec) {
                Some((f, step)) => {
                    ts = ts.saturating_add_signed(step);
                    built = f;
                    &built
                }
                None => continue,
            }
        } else {
            ts += 1000;
            rec
        };
        number += 1;
        let info =
            FrameInfo { number, ts_ns: ts, caplen: frame.len() as u32, len: frame.len() as u32 };
        let parsed = parse_ethernet(frame, &cfg);
        let packet = parsed.as_ref().ok();
        if let Some(r) = packet.and_then(|p| p.roce.as_ref()) {
            reach.roce(r);
        }
        let owners = shards.iter().filter(|(s, _)| s.owns(packet)).count();
        assert_eq!(owners, 1, "frame {number} belongs to {owners} shards");
        for c in std::iter::once(&mut whole)
            .chain(shards.iter_mut().filter_map(|(s, c)| s.owns(packet).then_some(c)))
        {
            match packet {
                Some(p) => c.feed(&info, p),
                None => c.feed_undecoded(&info),
            }
        }
        for (s, c) in &mut shards {
            if !s.owns(packet) {
                c.tick(ts);
            }
        }
        let k = Shard::of_frame(packet, count) as usize;
        let c = &mut split[k];
        c.tick(clock);
        clock = clock.max(ts);
        match packet {
            Some(p) => c.feed_shard(&info, p),
            None => c.feed_undecoded(&info),
        }
    }
    let whole = whole.finish();
    let merged = merge_shards(
        &opts,
        split
            .into_iter()
            .map(|mut c| {
                c.tick(clock);
                c.finish_shard()
            })
            .collect(),
    );
    if let Ok(m) = &merged {
        let said = |r: &Report| {
            serde_json::to_string(&(
                &r.findings,
                &r.connections,
                r.connections_not_listed,
                (r.frames, r.roce_frames, r.errors, r.warnings, r.suppressed),
                &r.by_rule,
            ))
            .expect("a report serializes")
        };
        assert_eq!(said(m), said(&whole), "the merged shards differ from the single run");
    }
    let parts: Vec<Report> = shards.into_iter().map(|(_, c)| c.finish()).collect();
    assert_eq!(parts.iter().map(|r| r.frames).sum::<u64>(), whole.frames, "frames over the shards");
    let capped =
        |r: &Report| r.state.evicted > 0 || r.suppressed > 0 || r.connections_not_listed > 0;
    if capped(&whole) || parts.iter().any(capped) {
        return;
    }
    let key = |f: &Finding| {
        (f.frames.clone(), f.rule, f.psn.map(|p| p.value()), f.connection, f.message.clone())
    };
    // CAP-TIME is one finding per capture; each shard reports the steps back it saw on its own
    // frames, so the union splits it (a known limit of --shard, docs/parquet.md): compare
    // whether it fired, and every other finding exactly.
    let cap_time = |f: &&Finding| f.rule == "CAP-TIME";
    assert_eq!(
        whole.findings.iter().any(|f| cap_time(&f)),
        parts.iter().any(|r| r.findings.iter().any(|f| cap_time(&f))),
        "CAP-TIME in the single run and in no shard, or the other way round"
    );
    let mut want: Vec<_> = whole.findings.iter().filter(|f| !cap_time(f)).map(key).collect();
    let mut got: Vec<_> =
        parts.iter().flat_map(|r| r.findings.iter().filter(|f| !cap_time(f)).map(key)).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "the shards' findings differ from the single run's");
    assert_eq!(parts.iter().map(|r| r.errors).sum::<u64>(), whole.errors);
    let conn = |c: &roce_conformance::ConnectionReport| {
        (
            c.info.first_frame,
            c.info.connection,
            c.info.packets,
            c.info.last_frame,
            c.retransmissions,
            c.missing_packets,
        )
    };
    let mut want: Vec<_> = whole.connections.iter().map(conn).collect();
    let mut got: Vec<_> = parts.iter().flat_map(|r| r.connections.iter().map(conn)).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "the shards' connections differ from the single run's");
}

/// The expect-file reader of `roce-inspect check --expect` (`roce_inspect::internal::check::parse_expect`)
/// on arbitrary bytes: it never panics; an error says something, and a JSON error's position
/// is 1-based; what it accepts names only catalog rules and a valid PMTU, has every finding's
/// frames nonzero, strictly increasing and not empty (out of order or repeated frames are
/// normalised, with a note naming the finding, iff the input's were), survives
/// write -> parse unchanged (with and without a UTF-8 BOM) and without a note, and compares
/// with a report (`diff` against an empty one: a difference iff the file expects findings).
pub fn expect_file(data: &[u8], _reach: &mut Reach) {
    use roce_inspect::internal::check::{diff, parse_expect, parse_expect_noting, valid_pmtu};
    let (e, notes) = match parse_expect_noting(data) {
        Ok(e) => e,
        Err(err) => {
            assert!(!err.message.is_empty() && !err.to_string().is_empty());
            if let Some((line, _)) = err.position {
                assert!(line >= 1, "line {line} of a JSON error");
            }
            return;
        }
    };
    if let Some(m) = e.options.pmtu {
        assert_eq!(valid_pmtu(m), Ok(m), "PMTU {m} accepted");
    }
    for f in &e.findings {
        assert!(
            roce_conformance::RULES.iter().any(|r| r.id == f.rule),
            "rule {:?} accepted",
            f.rule
        );
        assert!(
            f.frames.first().is_some_and(|&first| first > 0)
                && f.frames.windows(2).all(|w| w[0] < w[1]),
            "frames {:?} accepted",
            f.frames
        );
    }
    // The input's own findings, as JSON: a note iff some finding's frames were not sorted
    // and unique (the notes are for those only).
    let raw: Option<Vec<Vec<u64>>> = serde_json::from_slice::<serde_json::Value>(
        data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data),
    )
    .ok()
    .and_then(|v| {
        v.get("findings")?
            .as_array()?
            .iter()
            .map(|f| f.get("frames")?.as_array()?.iter().map(serde_json::Value::as_u64).collect())
            .collect()
    });
    if let Some(raw) = raw {
        let unsorted = raw.iter().filter(|f| !f.windows(2).all(|w| w[0] < w[1])).count();
        assert_eq!(notes.is_empty(), unsorted == 0, "notes {notes:?} for {unsorted} findings");
        assert!(notes.len() <= 11, "{} notes", notes.len());
        for (n, (i, _)) in notes
            .iter()
            .zip(raw.iter().enumerate().filter(|(_, f)| !f.windows(2).all(|w| w[0] < w[1])))
        {
            if !n.starts_with("...") {
                assert!(n.starts_with(&format!("findings[{i}] (")), "note {n:?} for findings[{i}]");
            }
        }
    }
    let written = serde_json::to_vec_pretty(&e).expect("an expect file serializes");
    let (again, again_notes) = parse_expect_noting(&written).expect("a written expect file parses");
    assert_eq!(again, e, "write -> parse changed the expect file");
    assert!(again_notes.is_empty(), "a written expect file was normalised: {again_notes:?}");
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(&written);
    assert_eq!(parse_expect(&bom).as_ref(), Ok(&e), "a BOM changed the expect file");
    let empty = roce_conformance::Checker::new(roce_conformance::Options::default()).finish();
    let d = diff(&e, &empty);
    assert_eq!(d.is_some(), !e.findings.is_empty(), "diff against no findings");
}

/// What the `ffi` target compares with the Rust API: status, (RoCE version, opcode, PSN, QPN,
/// ICRC status) of a RoCE packet, problem bits.
type FfiSummary = (i32, Option<(RoceVersion, u8, u32, u32, IcrcStatus)>, u32);

/// The C ABI of roce-parser-ffi (`roce_parse_frame`, `roce_parse_frame_opts`,
/// `roce_parse_ip_opts`, `roce_parse_ethertype`, `roce_parse_udp_payload`) on the bytes after
/// byte 0, which picks a length shorter than the buffer (bit 7: up to 63 bytes less) and the
/// EtherType for `roce_parse_ethertype`. Every call writes into one output struct reused
/// across calls (first filled with 0xa5 bytes, never cleared), and must agree with the Rust
/// API on the same length of bytes (status, RoCE version, opcode, PSN, QPN, problems, ICRC
/// status) and with the same call into a fresh struct and on an exact-size copy of the bytes
/// (AddressSanitizer catches a read past `len`); offsets stay within `len`; NULL and
/// misaligned arguments are refused; the name functions give C strings.
pub fn ffi(data: &[u8], reach: &mut Reach) {
    use core::ffi::CStr;
    use core::mem::MaybeUninit;
    use roce_parser_ffi as c;
    // The status codes as the functions return them.
    const ROCE_OK: i32 = c::roce_status::ROCE_OK.code();
    const ROCE_ERR_NULL: i32 = c::roce_status::ROCE_ERR_NULL.code();
    const ROCE_ERR_TRUNCATED: i32 = c::roce_status::ROCE_ERR_TRUNCATED.code();
    const ROCE_ERR_MALFORMED: i32 = c::roce_status::ROCE_ERR_MALFORMED.code();
    const ROCE_ERR_NOT_ROCE: i32 = c::roce_status::ROCE_ERR_NOT_ROCE.code();
    const ROCE_ERR_INVALID_ARG: i32 = c::roce_status::ROCE_ERR_INVALID_ARG.code();

    let Some((&ctl, buf)) = data.split_first() else {
        return;
    };
    let len =
        if ctl & 0x80 != 0 { buf.len().saturating_sub(usize::from(ctl & 0x3f)) } else { buf.len() };
    let exact = buf[..len].to_vec();
    let ethertype = match ctl & 0x30 {
        0x00 => ETHERTYPE_IPV4,
        0x10 => ETHERTYPE_IPV6,
        0x20 => ETHERTYPE_ROCEV1,
        _ => u16::from_be_bytes([ctl, ctl.rotate_left(3)]),
    };

    // The reused output struct: garbage before the first call (every call writes all of it).
    let mut slot = MaybeUninit::<c::roce_packet>::uninit();
    // SAFETY: writing bytes into the struct's own memory.
    unsafe { slot.as_mut_ptr().write_bytes(0xa5, 1) };
    let out = slot.as_mut_ptr();
    let skip = c::roce_options { udp_port: 0, skip_icrc: 1 };
    let port = c::roce_options { udp_port: u16::from(ctl) << 8 | 0xb7, skip_icrc: 0 };

    // (name, status, the struct after the call) for each entry point, on `buf` with `len`.
    let mut calls: Vec<(&str, i32, c::roce_packet)> = Vec::new();
    type Entry<'a> = dyn Fn(*const u8, usize, *mut c::roce_packet) -> i32 + 'a;
    let entries: [(&str, &Entry); 6] = [
        // SAFETY (each): `p` points to `n` readable bytes, `o` to one writable roce_packet.
        ("frame", &|p, n, o| unsafe { c::roce_parse_frame(p, n, o) }),
        ("frame_opts skip", &|p, n, o| unsafe { c::roce_parse_frame_opts(p, n, &skip, o) }),
        ("frame_opts port", &|p, n, o| unsafe { c::roce_parse_frame_opts(p, n, &port, o) }),
        ("ip", &|p, n, o| unsafe { c::roce_parse_ip_opts(p, n, core::ptr::null(), o) }),
        ("ethertype", &|p, n, o| unsafe {
            c::roce_parse_ethertype(ethertype, p, n, core::ptr::null(), o)
        }),
        ("udp_payload", &|p, n, o| unsafe { c::roce_parse_udp_payload(p, n, o) }),
    ];
    for (name, f) in entries {
        let status = f(buf.as_ptr(), len, out);
        // SAFETY: the call wrote the whole struct (status checked below: never NULL/INVALID).
        let reused = unsafe { slot.assume_init_read() };
        let mut fresh = c::roce_packet::default();
        let status_fresh = f(exact.as_ptr(), exact.len(), &mut fresh);
        assert_eq!(status, status_fresh, "{name}: status with a reused struct / exact copy");
        assert_eq!(
            reused, fresh,
            "{name}: a reused struct or the bytes past len changed the result"
        );
        assert!(
            matches!(status, ROCE_OK | ROCE_ERR_TRUNCATED | ROCE_ERR_MALFORMED | ROCE_ERR_NOT_ROCE),
            "{name}: status {status}"
        );
        calls.push((name, status, reused));
    }

    // roce_parse_frame_segments: the frame in 2 and 3 exact-size pieces (cut where the control
    // byte and the length say) gives roce_parse_frame's struct.
    let frame_struct = calls.first().map(|c| (c.1, c.2));
    let cut1 = usize::from(ctl) % (exact.len() + 1);
    let cut2 = cut1 + (exact.len() - cut1) / 2;
    for cuts in [&[cut1][..], &[cut1, cut2][..]] {
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain([exact.len()].iter()) {
            pieces.push(exact[at..cut].to_vec());
            at = cut;
        }
        let table: Vec<c::roce_segment> =
            pieces.iter().map(|p| c::roce_segment { data: p.as_ptr(), len: p.len() }).collect();
        // SAFETY: every segment points to `len` readable bytes; `out` to one roce_packet.
        let status = unsafe {
            c::roce_parse_frame_segments(table.as_ptr(), table.len(), core::ptr::null(), out)
        };
        // SAFETY: the call wrote the whole struct (`out` is valid and aligned).
        let got = unsafe { slot.assume_init_read() };
        assert_eq!(Some((status, got)), frame_struct, "segments {cuts:?} against roce_parse_frame");
    }

    // The Rust API on the same bytes, entry point by entry point.
    let cfg = Config::default();
    let from_packet = |p: &Packet<'_>| -> FfiSummary {
        let status = match (&p.roce, &p.stop) {
            (Some(_), _) => ROCE_OK,
            (None, Some(e)) if e.kind == ErrorKind::Truncated => ROCE_ERR_TRUNCATED,
            (None, Some(_)) => ROCE_ERR_MALFORMED,
            (None, None) => ROCE_ERR_NOT_ROCE,
        };
        let r = p
            .roce
            .as_ref()
            .map(|r| (r.version, r.bth.opcode, r.bth.psn, r.bth.dest_qp, r.icrc_status));
        (status, r, p.problems.bits())
    };
    let from_error = |e: &Error| {
        let s =
            if e.kind == ErrorKind::Truncated { ROCE_ERR_TRUNCATED } else { ROCE_ERR_MALFORMED };
        (s, None, 0)
    };
    let frame_with = |cfg: &Config| match parse_ethernet(&exact, cfg) {
        Ok(p) => from_packet(&p),
        Err(e) => from_error(&e),
    };
    if let Some(r) = parse_ethernet(&exact, &cfg).ok().and_then(|p| p.roce) {
        reach.roce(&r);
    }
    let want = [
        frame_with(&cfg),
        frame_with(&Config { verify: false, ..cfg }),
        frame_with(&Config { udp_port: port.udp_port, ..cfg }),
        match parse_ip(&exact, &cfg) {
            Ok(p) => from_packet(&p),
            Err(e) => from_error(&e),
        },
        from_packet(&parse_ethertype_payload(ethertype, &exact, &cfg)),
        match parse_udp_payload(&exact, &cfg) {
            Ok((r, problems)) => (
                ROCE_OK,
                Some((r.version, r.bth.opcode, r.bth.psn, r.bth.dest_qp, r.icrc_status)),
                problems.bits(),
            ),
            Err(e) => from_error(&e),
        },
    ];
    for ((name, status, got), (want_status, want_roce, want_problems)) in calls.iter().zip(want) {
        assert_eq!(*status, want_status, "{name}: status against the Rust API");
        assert_eq!(got.problems, want_problems, "{name}: problems against the Rust API");
        match want_roce {
            Some((version, opcode, psn, qpn, icrc)) => {
                assert_eq!(got.roce_version, version.number(), "{name}: RoCE version");
                assert_eq!(
                    (got.bth.opcode, got.bth.psn, got.bth.dest_qp),
                    (opcode, psn, qpn),
                    "{name}: opcode, PSN, QPN against the Rust API"
                );
                let code = match icrc {
                    IcrcStatus::NotChecked => c::ROCE_ICRC_NOT_CHECKED,
                    IcrcStatus::Ok => c::ROCE_ICRC_OK,
                    IcrcStatus::Bad { .. } => c::ROCE_ICRC_BAD,
                    IcrcStatus::Unverifiable => c::ROCE_ICRC_UNVERIFIABLE,
                };
                assert_eq!(got.icrc_status, code, "{name}: ICRC status");
                assert!(got.bth_offset + 12 <= len, "{name}: BTH past len");
                // SAFETY: returns a static NUL-terminated string.
                let op = unsafe { CStr::from_ptr(c::roce_opcode_name(got.bth.opcode)) };
                assert!(!op.to_bytes().is_empty(), "{name}: opcode name");
            }
            None => assert_eq!(got.roce_version, 0, "{name}: RoCE version without RoCE"),
        }
        assert!(
            got.payload_offset + got.payload_captured + got.pad_captured <= len,
            "{name}: payload past len"
        );
        assert!(got.opaque_offset + got.opaque_len <= len, "{name}: opaque bytes past len");
        assert!(got.stop_offset <= len, "{name}: stop offset past len");
        assert_eq!(got.problems & !c::ROCE_PROBLEM_ALL, 0, "{name}: unknown problem bits");
        for bit in (0..32).map(|i| 1u32 << i).filter(|b| got.problems & b != 0) {
            // SAFETY: returns a static NUL-terminated string.
            let s = unsafe { CStr::from_ptr(c::roce_problem_str(bit)) };
            assert_ne!(s.to_bytes(), b"unknown problem", "{name}: problem bit {bit:#x}");
        }
        // SAFETY: returns a static NUL-terminated string.
        let layer = unsafe { CStr::from_ptr(c::roce_layer_name(got.stop_layer)) };
        assert!(!layer.to_bytes().is_empty());
        // SAFETY: returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(c::roce_status_str(*status)) };
        assert_ne!(s.to_bytes(), b"unknown status", "{name}: status string");
    }

    // Unusable arguments are refused, and leave nothing written but the zeroed struct.
    let mut fresh = c::roce_packet::default();
    // SAFETY: NULL input (refused before any read), a valid output struct.
    assert_eq!(unsafe { c::roce_parse_frame(core::ptr::null(), len, &mut fresh) }, ROCE_ERR_NULL);
    // SAFETY: a valid input, NULL output (refused before any write).
    assert_eq!(
        unsafe { c::roce_parse_frame(buf.as_ptr(), len, core::ptr::null_mut()) },
        ROCE_ERR_NULL
    );
    // A misaligned output pointer: refused before any write.
    let mut room = vec![0u8; core::mem::size_of::<c::roce_packet>() + 16];
    let base = room.as_mut_ptr();
    let misaligned = (0..16)
        // SAFETY: offsets inside `room`.
        .map(|i| unsafe { base.add(i) })
        .find(|p| !(*p as usize).is_multiple_of(core::mem::align_of::<c::roce_packet>()));
    if let Some(p) = misaligned {
        // SAFETY: a valid input; the output pointer is refused as misaligned, never written.
        let s = unsafe { c::roce_parse_frame(buf.as_ptr(), len, p.cast()) };
        assert_eq!(s, ROCE_ERR_INVALID_ARG, "misaligned output accepted");
        assert!(room.iter().all(|&b| b == 0), "a refused output was written");
    }

    // The CM entry point: the input as a MAD, against the Rust decode.
    let mut m = c::roce_mad::default();
    // SAFETY: `exact` holds `exact.len()` readable bytes; `m` is one writable roce_mad.
    let st = unsafe { c::roce_parse_mad(exact.as_ptr(), exact.len(), &mut m) };
    match roce_parser::parse_mad(&exact) {
        Err(_) => {
            assert_eq!(st, ROCE_ERR_TRUNCATED, "roce_parse_mad status");
            assert_eq!(m, c::roce_mad::default(), "roce_parse_mad wrote after an error");
        }
        Ok(mad) => {
            assert_eq!(st, ROCE_OK, "roce_parse_mad status");
            assert_eq!(m.problems, mad.problems.bits(), "roce_parse_mad problems");
            assert_eq!(m.data_len, mad.data.len(), "roce_parse_mad data_len");
            let n = exact.len().min(256);
            for (o, l) in [
                (m.req.private_data_offset, m.req.private_data_len),
                (m.rep.private_data_offset, m.rep.private_data_len),
                (m.rej.ari_offset, m.rej.ari_len),
                (m.rej.private_data_offset, m.rej.private_data_len),
                (m.sidr_rep.additional_info_offset, m.sidr_rep.additional_info_len),
                (m.sidr_rep.private_data_offset, m.sidr_rep.private_data_len),
            ] {
                assert!(o <= n && l <= n - o, "roce_parse_mad span {o}+{l} past {n}");
            }
        }
    }
}

/// `check --annotate`'s writer: a capture the reader takes without any error or warning,
/// annotated (a comment with markup and a long one on some frames) and read again, gives the
/// same frames (time, lengths, link type, interface, bytes) and carries every comment; a
/// capture the writer refuses is one it cannot copy whole, never a panic.
pub fn annotate(data: &[u8], _reach: &mut Reach) {
    type Frames = Vec<(u64, u32, u32, u32, u32, Vec<u8>)>;
    fn read(bytes: &[u8]) -> Option<Frames> {
        let mut cap = Capture::from_bytes("fuzz", bytes.to_vec()).ok()?;
        let mut v = Vec::new();
        while let Some(f) = cap.next_frame() {
            let f = f.ok()?;
            v.push((f.ts_ns, f.caplen, f.len, f.link_type.code(), f.interface, f.data.to_vec()));
        }
        Some(v)
    }
    let mut comments = std::collections::BTreeMap::new();
    for n in (1..=64u64).filter(|n| n % 3 == 1) {
        let long = "x".repeat(usize::from(data.first().copied().unwrap_or(0)) * 300);
        comments.insert(n, vec![format!("REQ-GBN error: <frame {n}> & \"quotes\""), long]);
    }
    let mut out = Vec::new();
    let written = roce_inspect::internal::annotate::annotate(data, &mut out, &comments);
    let Some(before) = read(data) else { return };
    // Gzip is undone by the file opener, not by the writer.
    if data.starts_with(&[0x1f, 0x8b]) {
        return;
    }
    let w = match written {
        Ok(w) => w,
        Err(e) => {
            assert!(!e.is_empty());
            return;
        }
    };
    let after = read(&out).expect("the annotated capture does not read back");
    assert_eq!(w.frames, before.len() as u64, "frames written");
    assert_eq!(before, after, "frames changed by the annotation");
    let cited = comments.keys().filter(|&&n| n <= w.frames).count() as u64;
    assert_eq!(w.annotated + w.simple_not_annotated, cited, "frames annotated");
    // Each comment on the frame it names, as the pcapng metadata reader (which numbers the
    // packet blocks itself) reads it back: a block counted wrongly moves every comment after it.
    // (Not when the input carries such a comment itself.)
    let mark = "REQ-GBN error: <frame ";
    let own = roce_inspect::internal::annotate::meta::read(data);
    let meta = roce_inspect::internal::annotate::meta::read(out.as_slice());
    if meta.comments_not_listed == 0 && !own.comments.iter().any(|(_, c)| c.contains(mark)) {
        let ours: Vec<u64> = meta
            .comments
            .iter()
            .filter(|(_, c)| c.starts_with(mark))
            .map(|(n, c)| {
                assert_eq!(
                    c,
                    &format!("REQ-GBN error: <frame {n}> & \"quotes\""),
                    "comment on frame {n}"
                );
                *n
            })
            .collect();
        assert_eq!(ours.len() as u64, w.annotated, "comments read back");
    }
}

/// A frame in segments. Byte 0: the number of cuts (low 3 bits, 0..7) and whether the ICRC is
/// verified (bit 3 clear); bytes 1..=2*cuts: the cuts, 16-bit big-endian offsets modulo the
/// frame's length + 1, sorted (so segments may be empty); then the frame.
/// - `parse_ethernet_segments` must give what `parse_ethernet` gives on the joined frame
///   (every layer, problem, stop and error; payload, pad and opaque lengths and bytes), or
///   `BufferTooSmall` for a frame longer than `SEGMENT_HEAD_MAX`;
/// - `roce_parse_frame_segments`, each segment in its own exact-size heap copy (a read past a
///   segment is an AddressSanitizer error), must give the struct `roce_parse_frame_opts`
///   gives on the joined frame.
pub fn segments(data: &[u8], reach: &mut Reach) {
    use roce_parser_ffi as c;
    let Some((&ctl, rest)) = data.split_first() else { return };
    let ncuts = usize::from(ctl & 7);
    let Some((cut_bytes, frame)) = rest.split_at_checked(2 * ncuts) else { return };
    let mut cuts: Vec<usize> = cut_bytes
        .chunks_exact(2)
        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])) % (frame.len() + 1))
        .collect();
    cuts.sort_unstable();
    let cfg = Config { verify: ctl & 8 == 0, ..Config::default() };
    let mut segs: Vec<Vec<u8>> = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain([frame.len()].iter()) {
        segs.push(frame[at..cut].to_vec());
        at = cut;
    }
    segmented_is_contiguous(frame, &segs, &cfg, reach);

    // The C form, each segment in its own exact-size allocation.
    let opts = c::roce_options { udp_port: 0, skip_icrc: u8::from(ctl & 8 != 0) };
    c_segmented_is_contiguous(frame, &segs, opts);
}

/// `parse_ethernet_segments` over `segs` (the pieces of `frame`, end to end) gives what
/// `parse_ethernet` gives on `frame` (or `BufferTooSmall` only past `SEGMENT_HEAD_MAX`).
fn segmented_is_contiguous(frame: &[u8], segs: &[Vec<u8>], cfg: &Config, reach: &mut Reach) {
    use roce_parser::SEGMENT_HEAD_MAX;
    let slices: Vec<&[u8]> = segs.iter().map(|s| s.as_slice()).collect();
    let mut scratch = SegmentScratch::default();
    let got = parse_ethernet_segments(&slices, cfg, &mut scratch);
    match (parse_ethernet(frame, cfg), got) {
        (Err(w), Err(g)) => assert_eq!(w, g, "error"),
        (Ok(_), Err(g)) if g.kind == ErrorKind::BufferTooSmall => {
            assert!(
                frame.len() > SEGMENT_HEAD_MAX,
                "BufferTooSmall on a {}-byte frame",
                frame.len()
            )
        }
        (Ok(w), Ok(g)) => {
            if let Some(r) = &w.roce {
                reach.roce(r);
            }
            assert_eq!(g.len, frame.len());
            let mut gp = g.packet;
            assert!(frame.starts_with(gp.data), "the head is not the frame's start");
            gp.data = w.data;
            if let (Some(wr), Some(gr)) = (&w.roce, &mut gp.roce) {
                for (gs, ws) in [(gr.payload, wr.payload), (gr.pad, wr.pad), (gr.opaque, wr.opaque)]
                {
                    assert!(gs.is_empty() || gs == ws, "a slice of the head differs");
                }
                assert_eq!(gr.payload_captured(), wr.payload.len());
                assert_eq!(gr.pad_captured(), wr.pad.len());
                assert_eq!(gr.opaque_captured(), wr.opaque.len());
                let joined: Vec<u8> = g.payload_pieces().flatten().copied().collect();
                assert_eq!(joined, wr.payload, "payload pieces");
                gr.payload = wr.payload;
                gr.pad = wr.pad;
                gr.opaque = wr.opaque;
            }
            assert_eq!(gp, w, "segmented parse against the contiguous one");
        }
        (w, g) => panic!("contiguous {w:?}, segmented {g:?}"),
    }
}

/// `roce_parse_frame_segments` over `segs`, each in its own allocation, gives the struct
/// `roce_parse_frame_opts` gives on `frame` (an exact-size copy); returns that struct.
fn c_segmented_is_contiguous(
    frame: &[u8],
    segs: &[Vec<u8>],
    opts: roce_parser_ffi::roce_options,
) -> (i32, roce_parser_ffi::roce_packet) {
    use roce_parser_ffi as c;
    let table: Vec<c::roce_segment> =
        segs.iter().map(|s| c::roce_segment { data: s.as_ptr(), len: s.len() }).collect();
    let exact = frame.to_vec();
    let mut want = c::roce_packet::default();
    let mut got = c::roce_packet::default();
    // SAFETY: `exact` holds `exact.len()` bytes and every segment `len` bytes; the outputs are
    // valid structs.
    let (ws, gs) = unsafe {
        (
            c::roce_parse_frame_opts(exact.as_ptr(), exact.len(), &opts, &mut want),
            c::roce_parse_frame_segments(table.as_ptr(), table.len(), &opts, &mut got),
        )
    };
    assert_eq!(ws, gs, "C status, segments against contiguous");
    assert_eq!(want, got, "C struct, segments against contiguous");
    (ws, want)
}

/// Tunnels ([`spec::EncapInput`]): an inner frame (the input's bytes, or one `FrameBuilder`
/// writes) wrapped by `TunnelBuilder` in one or two tunnels of any kind (outer IPv4 or IPv6,
/// 0-2 outer tags, every header field from the input), then possibly cut or flipped.
/// `parse_ethernet` never panics and its packet is consistent; uncut and unflipped, with the
/// decoders' versions and protocols, the tunnels are the ones built, outermost first, at their
/// offsets, and the inner packet is the plain parse of the inner frame (every layer, problem,
/// stop, the payload), offsets moved; the segmented parse (2 or 3 segments) is the contiguous
/// one, from Rust and from C; `parse_prefix`'s host pair is the parse's IP (or GRH) pair
/// whenever it gives one, after as many tunnels; a cut never turns an ICRC bad; the C struct's
/// tunnels are the packet's.
pub fn encap(data: &[u8], reach: &mut Reach) {
    use roce_parser_ffi as c;
    use spec::EncapInput;
    let Some(input) = EncapInput::decode(data) else { return };
    let raw_fields = input.raw_fields();
    let Some(spec::Wrapped { frame: wrapped, kinds, inner: inner_bytes, enter }) = input.wrap()
    else {
        return;
    };

    let verify = input.control & EncapInput::NO_VERIFY == 0;
    let cfg = Config { verify, ..Config::default() };
    let whole = parse_ethernet(&wrapped, &cfg).expect("a wrapped frame has its Ethernet header");
    check::packet(&whole, &wrapped);

    // Uncut, with the decoders' fields: the tunnels built, and the plain inner parse.
    if !raw_fields {
        let shift = wrapped.len() - inner_bytes.len();
        let plain = match enter {
            None => parse_ethernet(&inner_bytes, &cfg),
            Some(et) => Ok(parse_ethertype_payload(et, &inner_bytes, &cfg)),
        };
        same_as_plain(&whole, &plain, &kinds, shift);
    }

    // The frame as damaged.
    let mut frame = wrapped.clone();
    match input.damage() {
        1 if !frame.is_empty() => frame.truncate(usize::from(input.damage_at) % frame.len()),
        2 if !frame.is_empty() => {
            let at = usize::from(input.damage_at) % frame.len();
            frame[at] ^= if input.xor == 0 { 0x80 } else { input.xor };
        }
        _ => {}
    }
    let p = match parse_ethernet(&frame, &cfg) {
        Ok(p) => p,
        Err(_) => {
            assert!(frame.len() < 14, "parse_ethernet failed on a whole header");
            assert!(parse_prefix(&frame).is_err(), "a prefix without an Ethernet header");
            return;
        }
    };
    check::packet(&p, &frame);
    if let Some(r) = &p.roce {
        reach.roce(r);
    }
    if input.damage() == 1 {
        // A cut (a mirror's snap length): the ICRC never turns bad.
        let was_bad = whole.roce.is_some_and(|r| matches!(r.icrc_status, IcrcStatus::Bad { .. }));
        if let Some(r) = &p.roce {
            assert!(
                was_bad || !matches!(r.icrc_status, IcrcStatus::Bad { .. }),
                "a cut at {} of {} made the ICRC bad",
                frame.len(),
                wrapped.len()
            );
        }
    }

    // The prefix places the frame as the parse does.
    if let Ok(Some(pr)) = parse_prefix(&frame) {
        let grh = p.roce.and_then(|r| r.grh);
        if let Some(ip) = p.ip {
            assert_eq!(pr.host_pair(), (ip.src, ip.dst), "prefix host pair against the parse's IP");
            assert_eq!(pr.network_offset, ip.offset, "prefix network offset");
            assert_eq!(pr.tunnels, p.tunnels().count(), "prefix tunnels against the parse's");
        } else if let Some(g) = grh {
            let pair = (core::net::IpAddr::V6(g.sgid_addr()), core::net::IpAddr::V6(g.dgid_addr()));
            assert_eq!(pr.host_pair(), pair, "prefix host pair against the parse's GRH");
        } else {
            // RoCEv1's parse keeps the GRH only with a whole BTH after it.
            assert_eq!(pr.ethertype, ETHERTYPE_ROCEV1, "a prefix where the parse has no IP");
        }
    }

    // In segments, from Rust and from C.
    let mut cuts: Vec<usize> = input.cuts
        [..if input.control & EncapInput::THREE_SEGMENTS != 0 { 2 } else { 1 }]
        .iter()
        .map(|&c| usize::from(c) % (frame.len() + 1))
        .collect();
    cuts.sort_unstable();
    let mut segs: Vec<Vec<u8>> = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain([frame.len()].iter()) {
        segs.push(frame[at..cut].to_vec());
        at = cut;
    }
    segmented_is_contiguous(&frame, &segs, &cfg, reach);
    let opts = c::roce_options { udp_port: 0, skip_icrc: u8::from(!verify) };
    let (_, cp) = c_segmented_is_contiguous(&frame, &segs, opts);
    c_tunnels_are_the_packets(&cp, &p, frame.len());
}

/// The inner packet of `wrapped` (tunnels `kinds` built around it) is `plain`, the parse of
/// the inner bytes alone, `shift` bytes later; the tunnels are the ones built, then the
/// inner frame's own (when it held one), outermost first.
fn same_as_plain(
    wrapped: &Packet<'_>,
    plain: &Result<Packet<'_>>,
    kinds: &[EncapKind],
    shift: usize,
) {
    let got: Vec<EncapKind> = wrapped.tunnels().map(Encap::kind).collect();
    let plain = match plain {
        Ok(p) => p,
        Err(e) => {
            // The inner frame lacks its Ethernet header: the parse stops there.
            assert_eq!(got, kinds, "tunnels built");
            assert_eq!(wrapped.stop, Some(e.at(shift)), "stop in the inner frame");
            assert!(wrapped.roce.is_none() && wrapped.eth.is_none() && wrapped.ip.is_none());
            return;
        }
    };
    let mut want = kinds.to_vec();
    want.extend(plain.tunnels().map(Encap::kind));
    if want.len() > MAX_ENCAP {
        // The inner frame's own tunnel is one too many: the parse stops at it.
        assert_eq!(got, want[..MAX_ENCAP], "tunnels up to the limit");
        assert!(wrapped.roce.is_none(), "RoCE past {} tunnels", MAX_ENCAP + 1);
        assert!(matches!(wrapped.stop.map(|e| e.kind), Some(ErrorKind::Malformed(_))));
        return;
    }
    assert_eq!(got, want, "tunnels built, outermost first");
    for (i, e) in wrapped.tunnels().enumerate().take(kinds.len()) {
        assert!(e.inner_offset <= shift && e.offset < e.inner_offset, "tunnel {i} offsets");
    }
    if let Some(last) = wrapped.tunnels().nth(kinds.len() - 1) {
        assert_eq!(last.inner_offset, shift, "the innermost built tunnel's inner offset");
    }
    fn shifted_encap<'a>(e: &Encap<'a>, shift: usize) -> Encap<'a> {
        let mut e = *e;
        e.offset += shift;
        e.inner_offset += shift;
        if let Some(ip) = &mut e.ip {
            ip.offset += shift;
        }
        if let Some(u) = &mut e.udp {
            u.offset += shift;
        }
        e
    }
    for (w, p) in wrapped.tunnels().skip(kinds.len()).zip(plain.tunnels()) {
        assert_eq!(*w, shifted_encap(p, shift), "the inner frame's own tunnel");
    }
    assert_eq!(wrapped.eth, plain.eth, "inner Ethernet");
    assert_eq!(wrapped.vlans, plain.vlans, "inner VLAN tags");
    let ip = plain.ip.map(|mut i| {
        i.offset += shift;
        i
    });
    assert_eq!(wrapped.ip, ip, "inner IP");
    let udp = plain.udp.map(|mut u| {
        u.offset += shift;
        u
    });
    assert_eq!(wrapped.udp, udp, "inner UDP");
    let roce = plain.roce.map(|mut r| {
        r.bth_offset += shift;
        r
    });
    assert_eq!(wrapped.roce, roce, "inner RoCE packet (BTH, headers, payload, ICRC)");
    assert_eq!(wrapped.problems, plain.problems, "problems");
    assert_eq!(wrapped.stop, plain.stop.map(|e| e.at(shift)), "stop");
}

/// The C struct's tunnels are the packet's: kinds, offsets, outer layers' presence, the
/// headers' key fields, Geneve options inside the input.
fn c_tunnels_are_the_packets(cp: &roce_parser_ffi::roce_packet, p: &Packet<'_>, len: usize) {
    use roce_parser_ffi as c;
    assert_eq!(usize::from(cp.tunnel_count), p.tunnels().count(), "C tunnel_count");
    for (i, t) in cp.tunnels.iter().enumerate() {
        let Some(e) = p.encap[i] else {
            assert_eq!(*t, c::roce_tunnel::default(), "C tunnel slot {i} past the count");
            continue;
        };
        // SAFETY: roce_encap_name returns a static NUL-terminated string, never NULL.
        let name = unsafe { core::ffi::CStr::from_ptr(c::roce_encap_name(t.kind)) };
        assert_eq!(name.to_str(), Ok(e.kind().code()), "C tunnel {i} kind");
        assert_eq!((t.offset, t.inner_offset), (e.offset, e.inner_offset), "C tunnel {i} offsets");
        assert_eq!(t.eth.present, e.eth.is_some());
        assert_eq!(usize::from(t.eth.vlan_count), e.vlans.iter().flatten().count());
        assert_eq!((t.ip.present, t.ip.offset), (e.ip.is_some(), e.ip.map_or(0, |x| x.offset)));
        assert_eq!((t.udp.present, t.udp.offset), (e.udp.is_some(), e.udp.map_or(0, |x| x.offset)));
        assert_eq!(t.gre.present, e.tunnel.gre().is_some());
        assert_eq!(t.gre.protocol, e.tunnel.gre().map_or(0, |g| g.protocol));
        assert_eq!(t.gre.seq_present, e.tunnel.gre().is_some_and(|g| g.seq.is_some()));
        assert_eq!(t.erspan.present, e.tunnel.session_id().is_some(), "C ERSPAN {i}");
        assert_eq!(t.erspan.session_id, e.tunnel.session_id().unwrap_or(0));
        assert_eq!(t.erspan.truncated, e.tunnel.truncated());
        let vni = if t.vxlan.present { t.vxlan.vni } else { t.geneve.vni };
        assert_eq!(Some(vni).filter(|_| t.vxlan.present || t.geneve.present), e.tunnel.vni());
        if let Tunnel::Geneve(g) = e.tunnel {
            assert_eq!(t.geneve.options_len, g.options.len());
            assert!(
                t.geneve.options_offset + t.geneve.options_len <= len,
                "options past the input"
            );
        } else {
            assert_eq!((t.geneve.options_offset, t.geneve.options_len), (0, 0));
        }
    }
}

/// `dissect --frames LIST`: `roce_inspect::internal::tshark::FrameSelection::parse` never panics; an
/// error has a message; an accepted list selects exactly the frames of a naive reading of
/// its items (checked on frames 0..=300 and around every bound), frame 0 never, and `last()`
/// is the largest selected frame (none for an open range), after which nothing is selected.
pub fn frame_list(data: &[u8], _reach: &mut Reach) {
    use roce_inspect::internal::tshark::FrameSelection;
    let Ok(text) = std::str::from_utf8(data) else { return };
    let sel = match FrameSelection::parse(text) {
        Ok(sel) => sel,
        Err(why) => {
            assert!(!why.is_empty());
            return;
        }
    };
    let items: Vec<(u64, u64)> = text
        .split(',')
        .map(|item| {
            let item = item.trim();
            let num = |t: &str| t.trim().parse::<u64>().expect("an accepted list's numbers parse");
            match item.split_once('-') {
                Some((a, "")) => (num(a), u64::MAX),
                Some((a, b)) => (num(a), num(b)),
                None => (num(item), num(item)),
            }
        })
        .collect();
    let naive = |n: u64| items.iter().any(|&(a, b)| a <= n && n <= b);
    let mut probes: Vec<u64> = (0..=300).collect();
    for &(a, b) in &items {
        assert!(a >= 1 && a <= b, "accepted item {a}-{b}");
        probes.extend([a - 1, a, a.saturating_add(1), b - 1, b, b.saturating_add(1)]);
    }
    for n in probes {
        assert_eq!(sel.contains(n), naive(n), "frame {n} of {text:?}");
    }
    let max = items.iter().map(|&(_, b)| b).max().expect("an accepted list has an item");
    match sel.last() {
        None => assert_eq!(max, u64::MAX, "{text:?}"),
        Some(l) => {
            assert_eq!(l, max, "{text:?}");
            assert!(sel.contains(l) && !sel.contains(l + 1));
        }
    }
}

/// `--tap-offset FILE=TIME` and `--tap-window TIME` (`roce_inspect::internal::taps::parse_offset`,
/// `parse_window`, clap's value parsers for them: `roce_analysis::parse_tap_offset`,
/// `parse_tap_window`, whose TIME grammar Python's `tap_offset` / `tap_window` read too) on
/// the input as text (read lossily: the command line hands them strings only). Never a panic. An accepted window is longer than
/// 0 and reads back from `<ns>ns`. An accepted offset's FILE is not empty and is the text
/// before the input's last `=` (a name may hold `=`, a TIME not), its TIME read alone as a
/// window gives the same nanoseconds when positive (one grammar for both), and `<FILE>=<ns>ns`
/// reads back as the same pair. A refusal says something and quotes the input: the whole
/// argument, or for an offset's TIME that TIME (clap's message quotes the whole argument
/// before it).
pub fn tap_options(data: &[u8], _reach: &mut Reach) {
    use roce_inspect::internal::taps::{parse_offset, parse_window};
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;
    let quoted = |msg: &str, what: &str| msg.contains(&format!("'{what}'"));
    match parse_window(s) {
        Ok(ns) => {
            assert!(ns > 0, "window {ns} ns from {s:?}");
            assert_eq!(parse_window(&format!("{ns}ns")), Ok(ns), "window {ns} ns from {s:?}");
        }
        Err(msg) => {
            assert!(!msg.is_empty(), "an empty refusal of the window {s:?}");
            assert!(quoted(&msg, s), "the refusal of the window {s:?} does not quote it: {msg}");
        }
    }
    let time = s.rsplit_once('=').map(|(_, t)| t);
    match parse_offset(s) {
        Ok((file, ns)) => {
            assert!(!file.is_empty(), "an offset for no file from {s:?}");
            assert_eq!(s.rsplit_once('=').map(|(f, _)| f), Some(file.as_str()), "FILE of {s:?}");
            if let Some(t) = time {
                match parse_window(t) {
                    Ok(w) => assert_eq!(i64::try_from(w), Ok(ns), "TIME {t:?} as a window"),
                    Err(_) => assert!(ns <= 0, "TIME {t:?}: offset {ns} ns, refused as a window"),
                }
            }
            let again = format!("{file}={ns}ns");
            assert_eq!(parse_offset(&again), Ok((file.clone(), ns)), "{s:?} written as {again:?}");
        }
        Err(msg) => {
            assert!(!msg.is_empty(), "an empty refusal of the offset {s:?}");
            assert!(
                quoted(&msg, s) || time.is_some_and(|t| quoted(&msg, t)),
                "the refusal of the offset {s:?} quotes neither it nor its TIME: {msg}"
            );
        }
    }
}

/// `stats --nic-counters` snapshot files: `Snapshot::parse` never panics; an error has a
/// message and, when it names a line, one of the input's lines; an accepted snapshot holds
/// no more counters than the input has lines, each name and value read back from its line
/// (`name value` or `name: value`), and reconciling it with itself agrees or is not counted.
pub fn nic_counters(data: &[u8], _reach: &mut Reach) {
    use roce_inspect::internal::nic_counters::{reconcile, HostCounts, Snapshot, Verdict};
    let snap = match Snapshot::parse(data) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.message.is_empty());
            if let Some(l) = e.line {
                assert!(l >= 1 && l <= data.split(|&b| b == b'\n').count(), "line {l}");
            }
            return;
        }
    };
    let text = std::str::from_utf8(data).expect("accepted input is UTF-8");
    // Each counter has a token of its own: `name:value` (sysfs through grep), `name value`
    // on a line, or a pair of an `rdma statistic` line.
    assert!(snap.len() <= text.split_whitespace().count());
    let rows = reconcile(&snap, &snap, &HostCounts::default()).expect("same names");
    for r in rows {
        assert_eq!(r.delta, Some(0));
        assert_eq!(snap.get(r.counter), Some(r.before));
        assert!(matches!(r.verdict, Verdict::Agree | Verdict::NotInCapture), "{r:?}");
    }
}

/// `-Y EXPR` (roce_inspect::internal::filter): the bytes before the first NUL are the expression, the
/// rest a frame (Ethernet). Parsing never panics (nor overflows the stack: depth and size
/// are bounded); an error has a message and a column within the expression (1 to its length
/// in characters + 1). An accepted filter evaluates without panicking, the same on its own
/// text parsed again, and `!( )` of it (when within the bounds) is its negation, `( ) || ( )`
/// and `( ) && ( )` of it itself.
pub fn filter(data: &[u8], _reach: &mut Reach) {
    use roce_inspect::internal::filter::{DisplayFilter, MAX_LEN};
    let (expr, frame) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(expr) else { return };
    let f = match DisplayFilter::parse(text) {
        Ok(f) => f,
        Err(e) => {
            assert!(!e.message().is_empty());
            let chars = text.chars().count();
            assert!(
                e.column() >= 1 && e.column() <= chars.max(MAX_LEN) + 1,
                "column {} of {chars}",
                e.column()
            );
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let frame = ethernet_record(1, 0, frame);
    let d = roce_inspect::internal::input::decode(frame, &roce_parser::Config::default());
    let m = f.matches(&d);
    let again = DisplayFilter::parse(f.text()).expect("a filter's own text parses");
    assert_eq!(again.matches(&d), m);
    if let Ok(not) = DisplayFilter::parse(&format!("!({text}\n)")) {
        assert_eq!(not.matches(&d), !m, "!({text})");
    }
    for join in ["||", "&&"] {
        if let Ok(twice) = DisplayFilter::parse(&format!("({text}\n) {join} ({text}\n)")) {
            assert_eq!(twice.matches(&d), m, "({text}) {join} ({text})");
        }
    }
}

/// `dissect -w` over hostile bytes: the capture is read through the tap
/// (roce_inspect::internal::tap) and the strict record copier walks the tapped bytes in step, saving
/// the first frame and every third. Never a panic; an error is a message. When the capture
/// reads with no warning and the copy succeeds, the saved capture (in the input's own
/// container, so nothing is converted) holds exactly the frames kept: timestamps, lengths,
/// link type and bytes.
pub fn write_capture(data: &[u8], _reach: &mut Reach) {
    use std::cell::RefCell;
    use std::rc::Rc;

    use roce_capture::Frame;
    use roce_inspect::internal::dissect::write::Writer;

    struct Shared(Rc<RefCell<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    /// What a saved frame must keep: timestamp, captured and wire length, link type,
    /// interface, bytes.
    type Kept = (u64, u32, u32, u32, u32, Vec<u8>);
    fn kept(f: &Frame<'_>) -> Kept {
        (f.ts_ns, f.caplen, f.len, f.link_type.code(), f.interface, f.data.to_vec())
    }

    let pcapng = data.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]);
    let name = std::path::Path::new(if pcapng { "fuzz.pcapng" } else { "fuzz.pcap" });
    let (tee, tap) = roce_inspect::internal::tap::tee(std::io::Cursor::new(data.to_vec()));
    let Ok(mut cap) = Capture::from_reader("fuzz", tee) else { return };
    let out = Rc::new(RefCell::new(Vec::new()));
    let sink = Shared(Rc::clone(&out));
    let mut w = match Writer::with_output(tap, name, move |_| Ok(Box::new(sink))) {
        Ok(w) => w,
        Err(e) => {
            assert!(!e.is_empty());
            return;
        }
    };
    let (mut want, mut clean, mut failed) = (Vec::new(), true, false);
    let mut steps = 0u64;
    while let Some(item) = cap.next_frame() {
        steps += 1;
        assert!(steps <= CAPTURE_STEP_LIMIT, "the capture reader does not end");
        match item {
            Ok(f) => {
                let keep = f.number % 3 == 1;
                if !failed {
                    if let Err(e) = w.pass(f.number, keep) {
                        assert!(!e.is_empty());
                        failed = true;
                    }
                }
                if keep {
                    want.push(kept(&f));
                }
            }
            Err(_) => clean = false,
        }
    }
    let finished = w.finish();
    if failed || !clean || finished.is_err() || data.starts_with(&[0x1f, 0x8b]) {
        return;
    }
    let bytes = out.borrow().clone();
    let mut back = Capture::from_bytes("written", bytes.clone()).expect("the saved capture opens");
    let mut saved = Vec::new();
    while let Some(f) = back.next_frame() {
        saved.push(kept(&f.expect("the saved capture reads without warnings")));
    }
    assert!(saved == want, "the saved frames are not the frames kept");
    output_file(data, &bytes);
}

/// The output path of every writer (roce_inspect::internal::outfile) on the saved capture: the input
/// is `data` in a private folder; the output is chosen by the input's last byte (the input
/// itself, a hard link or a symbolic link to it, an existing file, a new name, a name made
/// of the input's bytes, a folder) and completed or dropped. An output that is the input is
/// refused and the input keeps its bytes; a completed file holds exactly what was written;
/// a dropped one leaves the name as it was; no temporary file is ever left.
fn output_file(data: &[u8], written: &[u8]) {
    use roce_inspect::internal::outfile::{Dash, OutFile};
    use std::io::Write as _;
    let ctl = data.last().copied().unwrap_or(0);
    // A folder of its own per call (the corpus replay runs targets on several threads).
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("roce-fuzz-outfile-{}-{call}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a private folder");
    let input = dir.join("in.pcap");
    std::fs::write(&input, data).expect("the input");
    let old = b"an earlier output".to_vec();
    // A name of the input's bytes (printable ASCII, no '/'), up to 40 of them.
    let odd: String = data
        .iter()
        .rev()
        .take(40)
        .map(|&b| b as char)
        .filter(|c| c.is_ascii_graphic() && *c != '/')
        .collect();
    let (out, is_input, existed) = match ctl % 7 {
        0 => (input.clone(), true, true),
        1 => {
            let l = dir.join("hard.pcap");
            std::fs::hard_link(&input, &l).expect("hard link");
            (l, true, true)
        }
        2 => {
            let l = dir.join("soft.pcap");
            std::os::unix::fs::symlink(&input, &l).expect("symlink");
            (l, true, true)
        }
        3 => {
            let o = dir.join("old.pcap");
            std::fs::write(&o, &old).expect("old output");
            (o, false, true)
        }
        4 => (dir.clone(), false, true),
        5 if !odd.is_empty() && odd != "." && odd != ".." => {
            let is_in = odd == "in.pcap";
            (dir.join(odd), is_in, is_in)
        }
        _ => (dir.join("new.pcap"), false, false),
    };
    let before: Vec<String> = names(&dir);
    match OutFile::create("-w", &out, &[&input], Dash::Stdout) {
        Err(e) => {
            assert!(!e.0.is_empty());
            assert!(is_input || out == dir, "refused {out:?}: {e}");
        }
        Ok(mut f) => {
            assert!(!is_input, "{out:?} is the input and was accepted");
            f.write_all(written).expect("a write to a private folder");
            if ctl & 0x80 == 0 {
                f.commit().expect("completed");
                assert_eq!(std::fs::read(&out).expect("the output"), written, "{out:?}");
            } else {
                drop(f);
                let now = std::fs::read(&out).ok();
                assert_eq!(now, existed.then(|| old.clone()), "{out:?} after a dropped output");
            }
        }
    }
    assert_eq!(std::fs::read(&input).expect("the input"), data, "the input changed");
    let after = names(&dir);
    assert!(
        after.iter().all(|n| !n.ends_with(".roce-inspect-tmp")),
        "a temporary file left: {after:?}"
    );
    assert!(after.len() <= before.len() + 1, "{before:?} -> {after:?}");
    let _ = std::fs::remove_dir_all(&dir);

    fn names(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    }
}

/// A native InfiniBand packet for [`infiniband`]'s structured half: the LRH and GRH fields,
/// the transport, and how the packet is then damaged.
#[derive(arbitrary::Arbitrary, Debug)]
pub struct IbSpec<'a> {
    pub lrh: LrhRepr,
    pub grh: Option<GrhRepr>,
    pub opcode: u8,
    pub bth: BthRepr,
    pub headers: ExtHeaders,
    pub icrc: Option<u32>,
    /// Cut the packet to this many bytes (modulo its length + 1).
    pub cut: Option<u16>,
    /// Flip these bits of this byte (modulo the packet's length).
    pub flip: Option<(u16, u8)>,
    /// ERF extension headers around the record (0 to 3).
    pub erf_exts: u8,
    pub payload: &'a [u8],
}

/// Native InfiniBand (LRH, GRH when LNH says so, the transport, ICRC and VCRC). The first
/// byte chooses the half. Raw: the rest parsed as a packet from its LRH, checked as every
/// packet is (`check::packet`: the VCRC verdict recomputed), the C interface's
/// `roce_parse_infiniband` against it, its ICRC against the plain
/// reference recipe (`icrc_ref`), its prefix against the parse's GIDs, and the same bytes in
/// an ERF record handed over unchanged. Structured ([`IbSpec`]): the builder's packet parses
/// back field by field with both CRCs ok; cut short, neither CRC is ever bad; one flipped bit
/// in the bytes before the VCRC makes the VCRC bad, and the ICRC bad exactly when the bit is
/// one the ICRC covers.
pub fn infiniband(data: &[u8], reach: &mut Reach) {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 0 {
        ib_raw(rest, mode >> 1, reach);
    } else if let Some(s) = spec::decode::<IbSpec>(rest) {
        ib_built(&s, reach);
    }
}

fn ib_raw(data: &[u8], erf_exts: u8, reach: &mut Reach) {
    let cfg = Config::default();
    let p = match parse_infiniband(data, &cfg) {
        Ok(p) => p,
        Err(e) => {
            assert!(data.len() < 8, "parse_infiniband failed on a whole LRH: {e}");
            assert_eq!(e.layer, Layer::Lrh);
            assert!(parse_infiniband_prefix(data).is_err());
            return;
        }
    };
    check::packet(&p, data);
    let lrh = p.lrh.expect("an LRH");
    // Verified on one thread, parsed without verifying on another: the same packet.
    {
        let quiet = Config { verify: false, ..cfg };
        let mut handed =
            parse_infiniband(data, &quiet).expect("parse_infiniband without verification");
        Checksums::of(&p).with_payload_crc(&p).apply(&mut handed);
        assert_eq!(handed, p, "Checksums: the verdicts handed over are not the verified IB packet");
        let crc = |q: &roce_parser::Packet<'_>| q.roce.map(|r| r.payload_crc32());
        let own = parse_infiniband(data, &quiet).expect("parse_infiniband without verification");
        assert_eq!(crc(&handed), crc(&own), "Checksums: a payload CRC-32 not of this payload");
    }
    // The C interface gives the same packet.
    {
        use roce_parser_ffi as c;
        let mut out = c::roce_packet::default();
        let st = c::parse_infiniband_into(data, c::roce_options::default(), &mut out);
        let l = out.lrh;
        assert!(l.present, "C: no LRH");
        assert_eq!(
            (l.vl, l.sl, l.lnh, l.dlid, l.slid, l.pkt_len),
            (lrh.vl, lrh.sl, lrh.lnh.bits(), lrh.dlid, lrh.slid, lrh.pkt_len),
            "C LRH"
        );
        let v = p.vcrc.expect("a VCRC verdict");
        assert_eq!((l.vcrc_present, l.vcrc), (v.stored.is_some(), v.stored.unwrap_or(0)), "C VCRC");
        assert_eq!(out.problems, p.problems.bits(), "C problems");
        match &p.roce {
            Some(r) => {
                assert_eq!(st, c::roce_status::ROCE_OK as i32, "C status");
                assert_eq!(out.roce_version, c::ROCE_VERSION_INFINIBAND);
                assert_eq!(
                    (out.bth.psn, out.bth.dest_qp, out.bth_offset),
                    (r.bth.psn, r.bth.dest_qp, r.bth_offset),
                    "C BTH"
                );
                assert_eq!(out.grh.present, r.grh.is_some(), "C GRH");
            }
            None => assert_eq!(out.roce_version, 0, "C: a packet the parse has not"),
        }
    }
    if let Some(r) = &p.roce {
        reach.roce(r);
        // The ICRC against the reference, where the packet holds it.
        let len = lrh.packet_len();
        let icrc_at = len.checked_sub(4).filter(|&at| at >= r.bth_offset + 12);
        if let (Some(at), true) = (icrc_at, len <= data.len()) {
            let stored = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
            let want = match r.grh {
                Some(_) => icrc_ref::icrc(Net::Ipv6, &data[8..48], &[], &data[48..at]),
                None => icrc_ref::icrc_ib_local(&data[..8], &data[8..at]),
            };
            match r.icrc_status {
                IcrcStatus::Ok => assert_eq!(want, stored, "IB ICRC ok, the reference differs"),
                IcrcStatus::Bad { computed } => {
                    assert_eq!(computed, want, "IB ICRC computed against the reference");
                    assert_ne!(want, stored, "IB ICRC bad, the reference matches");
                }
                s => panic!("an IB ICRC in the input not verified: {s:?}"),
            }
        } else {
            assert!(!matches!(r.icrc_status, IcrcStatus::Ok | IcrcStatus::Bad { .. }));
        }
    }
    if let Some(v) = p.vcrc.filter(|v| v.status == IcrcStatus::Ok) {
        let len = lrh.packet_len();
        assert_eq!(Some(icrc_ref::vcrc(&data[..len])), v.stored, "VCRC against the reference");
    }
    // The prefix: the GRH's GIDs where the parse has them, none without a GRH.
    match parse_infiniband_prefix(data) {
        Ok(Some(pr)) => {
            assert_eq!(lrh.lnh, Lnh::Global);
            if let Some(g) = p.roce.and_then(|r| r.grh) {
                let pair =
                    (core::net::IpAddr::V6(g.sgid_addr()), core::net::IpAddr::V6(g.dgid_addr()));
                assert_eq!(pr.host_pair(), pair, "IB prefix against the parse's GRH");
            }
        }
        Ok(None) => assert_ne!(lrh.lnh, Lnh::Global, "no prefix for a routed packet"),
        Err(e) => {
            assert_eq!(lrh.lnh, Lnh::Global, "a prefix error without a GRH: {e}");
            assert!(data.len() < 48 && p.roce.is_none());
        }
    }
    // The same bytes in an ERF record (InfiniBand type, 0 to 3 extension headers).
    let exts = usize::from(erf_exts % 4);
    let record = erf_record(data, exts);
    match roce_capture::l2_start(roce_capture::LinkType::Erf, &record) {
        roce_capture::L2Start::Infiniband(b) => assert_eq!(b, data, "ERF handed other bytes"),
        other => panic!("an ERF InfiniBand record gave {other:?}"),
    }
}

/// `packet` in an ERF record of type 21 with `exts` extension headers.
fn erf_record(packet: &[u8], exts: usize) -> Vec<u8> {
    let rlen = u16::try_from(16 + 8 * exts + packet.len()).unwrap_or(u16::MAX);
    let mut r = vec![0x11; 8];
    r.push(21 | if exts > 0 { 0x80 } else { 0 });
    r.push(0);
    r.extend_from_slice(&rlen.to_be_bytes());
    r.extend_from_slice(&[0, 0]);
    r.extend_from_slice(&(packet.len() as u16).to_be_bytes());
    for i in 0..exts {
        r.push(if i + 1 < exts { 0x85 } else { 0x05 });
        r.extend_from_slice(&[0; 7]);
    }
    r.extend_from_slice(packet);
    r
}

fn ib_built(s: &IbSpec<'_>, reach: &mut Reach) {
    let bth = BthRepr { opcode: s.opcode, ..s.bth.normalized() };
    let mut b = FrameBuilder::new(Network::Infiniband(s.lrh, s.grh), bth);
    b.headers = s.headers;
    b.payload = s.payload;
    b.icrc = s.icrc;
    let Some(packet) = spec::emit(&b) else {
        assert!(b.buffer_len() > 8188, "the builder refused a packet PktLen can hold");
        return;
    };
    let cfg = Config::default();
    let p = parse_infiniband(&packet, &cfg).expect("a built packet parses");
    check::packet(&p, &packet);
    assert_eq!(p.stop, None, "a built packet stops early");
    let got = p.lrh.expect("LRH");
    let want = LrhRepr {
        vl: s.lrh.vl & 0xf,
        lver: s.lrh.lver & 0xf,
        sl: s.lrh.sl & 0xf,
        resv2: s.lrh.resv2 & 3,
        lnh: if s.grh.is_some() { Lnh::Global } else { Lnh::Local },
        resv5: s.lrh.resv5 & 0x1f,
        pkt_len: ((packet.len() - VCRC_LEN) / 4) as u16,
        ..s.lrh
    };
    assert_eq!(got, want, "LRH fields");
    let r = p.roce.expect("a built packet has its transport");
    reach.roce(&r);
    assert_eq!(r.version, RoceVersion::Infiniband);
    assert_eq!(r.grh.map(|g| (g.sgid, g.dgid)), s.grh.map(|g| (g.sgid, g.dgid)), "GIDs");
    let padcnt = spec::effective_padcnt(None, s.payload.len());
    same_transport(&r, bth, padcnt, &s.headers, s.payload);
    assert_eq!(p.vcrc.map(|v| v.status), Some(IcrcStatus::Ok), "built VCRC");
    let icrc_forced = s.icrc.is_some();
    if !icrc_forced {
        assert_eq!(r.icrc_status, IcrcStatus::Ok, "built ICRC");
    }
    let was_bad = matches!(r.icrc_status, IcrcStatus::Bad { .. });

    // Cut short (a snap length): neither CRC turns bad.
    if let Some(cut) = s.cut {
        let n = usize::from(cut) % (packet.len() + 1);
        if let Ok(c) = parse_infiniband(&packet[..n], &cfg) {
            check::packet(&c, &packet[..n]);
            let vcrc = c.vcrc.map(|v| v.status);
            if n < packet.len() {
                assert_eq!(vcrc, Some(IcrcStatus::Unverifiable), "a cut at {n} verified the VCRC");
            }
            if let Some(cr) = c.roce {
                assert!(was_bad || !matches!(cr.icrc_status, IcrcStatus::Bad { .. }), "cut at {n}");
            }
        }
    }
    // One flipped bit before the VCRC: the VCRC always sees it; the ICRC sees it unless the
    // bit is one of the variant fields (VL, the LRH behind a GRH, the GRH's traffic class,
    // flow label and hop limit, BTH byte 4).
    if let Some((at, bits)) = s.flip {
        let vcrc_at = packet.len() - VCRC_LEN;
        let at = usize::from(at) % vcrc_at;
        let bits = if bits == 0 { 1 } else { bits };
        let mut f = packet.clone();
        f[at] ^= bits;
        let Ok(q) = parse_infiniband(&f, &cfg) else { unreachable!("a whole LRH") };
        check::packet(&q, &f);
        if q.lrh.map(|l| l.packet_len()) != Some(vcrc_at) || q.lrh.map(|l| l.lnh) != Some(got.lnh) {
            // PktLen or LNH hit: another packet altogether (checked as raw input above).
            return;
        }
        assert!(matches!(q.vcrc.map(|v| v.status), Some(IcrcStatus::Bad { .. })), "flip at {at}");
        let global = s.grh.is_some();
        let bth_at = if global { 48 } else { 8 };
        let variant = match at {
            // Behind a GRH the whole LRH counts as ones; without one, only the VL nibble.
            0 => global || bits & 0x0f == 0,
            1..=7 => global,
            _ if global && at == 8 => bits & 0xf0 == 0,
            _ if global && (9..=11).contains(&at) => true,
            _ if global && at == 15 => true,
            _ => at == bth_at + 4,
        };
        if let (false, Some(qr), false) = (icrc_forced, q.roce, at == 1 && bits & 3 != 0) {
            let bad = matches!(qr.icrc_status, IcrcStatus::Bad { .. });
            assert_eq!(bad, !variant, "flip {bits:#04x} at {at}: ICRC {:?}", qr.icrc_status);
        }
    }
}

/// A frame of a capture read alone: what the merge must hand out for it (the time before
/// the file's clock offset).
#[derive(Clone, Debug, PartialEq, Eq)]
struct AloneFrame {
    number: u64,
    ts_ns: u64,
    caplen: u32,
    len: u32,
    link_type: roce_capture::LinkType,
    interface: u32,
    offset: u64,
    data: Vec<u8>,
}

/// What a capture read alone hands out: a frame, or an error (its message, what the reader
/// did, whether no frame came before it).
#[derive(Clone, Debug, PartialEq, Eq)]
enum AloneItem {
    Frame(AloneFrame),
    Error { text: String, effect: Effect, nothing_read: bool },
}

impl AloneItem {
    fn frame(&self) -> Option<&AloneFrame> {
        match self {
            AloneItem::Frame(f) => Some(f),
            AloneItem::Error { .. } => None,
        }
    }
}

/// One file of a merge: its name, its bytes, and what it gives read alone.
struct TapFile {
    name: String,
    bytes: Vec<u8>,
    items: Vec<AloneItem>,
}

impl TapFile {
    /// The file read alone; `None` when `Capture::from_bytes` refuses it (left out of the
    /// merge, as the command line refuses it).
    fn open(name: String, bytes: Vec<u8>) -> Option<TapFile> {
        let mut cap = match Capture::from_bytes(&name, bytes.clone()) {
            Ok(c) => c,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return None;
            }
        };
        let mut items = Vec::new();
        while let Some(item) = cap.next_frame() {
            assert!((items.len() as u64) < CAPTURE_STEP_LIMIT, "the capture reader does not end");
            items.push(match item {
                Ok(f) => AloneItem::Frame(AloneFrame {
                    number: f.number,
                    ts_ns: f.ts_ns,
                    caplen: f.caplen,
                    len: f.len,
                    link_type: f.link_type,
                    interface: f.interface,
                    offset: f.offset,
                    data: f.data.to_vec(),
                }),
                Err(e) => {
                    assert_ne!(e.effect(), Effect::Dropped, "a capture alone dropped: {e}");
                    AloneItem::Error {
                        text: e.to_string(),
                        effect: e.effect(),
                        nothing_read: e.nothing_read(),
                    }
                }
            });
        }
        Some(TapFile { name, bytes, items })
    }

    fn capture(&self) -> Capture {
        Capture::from_bytes(&self.name, self.bytes.clone()).expect("opened once already")
    }

    fn frames(&self) -> impl Iterator<Item = &AloneFrame> {
        self.items.iter().filter_map(AloneItem::frame)
    }

    /// Whether the file read alone ends with damage (before any frame or after some): the
    /// merge drops it there.
    fn damaged(&self) -> bool {
        matches!(self.items.last(), Some(AloneItem::Error { effect: Effect::Fatal, .. }))
    }
}

/// Several captures read as one (`roce_capture::Merge`) and the taps stage over them
/// (`roce_analysis::run_merged`), against each capture read alone. The input
/// ([`crate::multi::MergeInput`]): 1 to 4 capture files with clock offsets (given or
/// estimated), or one capture fed twice, the copy's clock shifted and some of its records
/// left out.
///
/// The merge: every file's frames and errors, each file's in its own order and nothing else
/// (number in the file, time plus the offset, lengths, link type, interface, offset, bytes;
/// the error's message, file, frame, offset and whether no frame of its file came before),
/// numbered 1..N; each frame handed out is the earliest (time, file) of the frames every
/// file holds ready (so the merged times never go back when no file's do), a file's error
/// only while no frame of it is ready. Damage that ends a file alone (fatal, before its first
/// frame or after some) ends only that file: handed out once, where it is met, naming the
/// file; nothing of the file after it; the other files read to their ends, so the merged
/// frames are exactly the k-way merge of the frames each file gives alone (a damaged file's
/// up to its damage), and the frames of the others are exactly those of a merge without the
/// damaged file. That error is not fatal (`Effect::Dropped`, its message the file's with a
/// note added) when anything follows it, and fatal (as it is) when the merge ends with it: a
/// merge's error is fatal exactly when it is the last thing handed out. The taps: every
/// frame is one step, a Frame or a Copy of an earlier Frame at another tap (same host pair,
/// DestQP, PSN, opcode and payload length; within the window); a drop names a Frame, the tap
/// that saw it last and one that did not, with the connection attached to it; the pass ends
/// with an error only when no file gave a frame (the merge's last, fatal error); the
/// report's counts are the steps' and it serialises. The same capture twice, nothing left
/// out, the offset given or estimated (an estimate is exactly the shift): file 0's frames are
/// the Frames (its RoCE frames all of them), file 1's the copies (but frames the taps cannot
/// key), no drop.
pub fn merge(data: &[u8], reach: &mut Reach) {
    use crate::multi::MergeInput;
    let Some(input) = MergeInput::decode(data) else { return };
    match input {
        MergeInput::Files { files, offsets, estimate } => {
            let mut given = Vec::new();
            let mut taps = Vec::new();
            for (i, (f, o)) in files.iter().zip(&offsets).enumerate() {
                if let Some(t) = TapFile::open(format!("tap{i}.pcap"), f.to_vec()) {
                    taps.push(t);
                    given.push(*o);
                }
            }
            if taps.is_empty() {
                return;
            }
            let (offsets, infos) = tap_offsets(&taps, &given, estimate);
            merge_checks(&taps, &offsets, infos, reach);
        }
        MergeInput::Twice { capture, shift_ns, leave_out, estimate } => {
            merge_twice(capture, shift_ns, leave_out, estimate, reach);
        }
    }
}

/// The clock offsets of the files, given or estimated (as the command line settles them:
/// an estimate for every file after the first, 0 where there is none), and the taps as the
/// report names them.
fn tap_offsets(
    taps: &[TapFile],
    given: &[i64],
    estimate: bool,
) -> (Vec<i64>, Vec<roce_analysis::TapInfo>) {
    use roce_analysis::{estimate_offsets, OffsetEstimate, TapInfo};
    let info = |t: &TapFile, offset_ns: i64, offset_from: &'static str, copies: u64| TapInfo {
        file: t.name.clone(),
        offset_ns,
        offset_from,
        offset_copies: copies,
    };
    if !estimate {
        let infos = taps.iter().zip(given).map(|(t, &o)| info(t, o, "given", 0)).collect();
        return (given.to_vec(), infos);
    }
    let est = estimate_offsets(taps.iter().map(TapFile::capture).collect(), &Config::default());
    assert_eq!(est.len(), taps.len(), "an estimate per file");
    assert_eq!(
        est.first().copied().flatten(),
        Some(OffsetEstimate { offset_ns: 0, copies: 0, both_directions: true }),
        "the first file is the reference"
    );
    let mut offsets = Vec::with_capacity(taps.len());
    let mut infos = Vec::with_capacity(taps.len());
    for (i, (t, e)) in taps.iter().zip(&est).enumerate() {
        match (i, e) {
            (0, _) => {
                offsets.push(0);
                infos.push(info(t, 0, "reference", 0));
            }
            (_, Some(e)) => {
                assert!(e.copies > 0, "an estimate from no copy");
                offsets.push(e.offset_ns);
                infos.push(info(t, e.offset_ns, "estimated", e.copies));
            }
            (_, None) => {
                offsets.push(0);
                infos.push(info(t, 0, "none", 0));
            }
        }
    }
    (offsets, infos)
}

/// One capture as file 0 and again as file 1, its times moved by `shift_ns` (held so that no
/// time leaves the range) and the records `leave_out` names left out, both written by
/// [`crate::multi::pcapng`]; the offset of file 1 is `-shift_ns`, given or estimated.
fn merge_twice(
    capture: &[u8],
    shift_ns: i64,
    leave_out: Option<u32>,
    estimate: bool,
    reach: &mut Reach,
) {
    use crate::multi::{pcapng, writable, WriteFrame};
    let Some(input) = TapFile::open("input".into(), capture.to_vec()) else { return };
    let frames: Vec<&AloneFrame> = input.frames().filter(|f| writable(f.link_type)).collect();
    let lo = frames.iter().map(|f| f.ts_ns).min().unwrap_or(0);
    let hi = frames.iter().map(|f| f.ts_ns).max().unwrap_or(0);
    let shift = i128::from(shift_ns).clamp(-i128::from(lo), i128::from(u64::MAX - hi));
    let shift = i64::try_from(shift).expect("within the given shift");
    fn write(f: &AloneFrame, ts_ns: u64) -> WriteFrame<'_> {
        WriteFrame { ts_ns, link_type: f.link_type, len: f.len, data: &f.data }
    }
    let file0: Vec<WriteFrame<'_>> = frames.iter().map(|f| write(f, f.ts_ns)).collect();
    let file1: Vec<WriteFrame<'_>> = frames
        .iter()
        .enumerate()
        .filter(|(k, _)| leave_out.is_none_or(|m| (m >> (k % 32)) & 1 == 0))
        .map(|(_, f)| write(f, f.ts_ns.saturating_add_signed(shift)))
        .collect();
    let open = |name: &str, w: &[WriteFrame<'_>]| {
        let t = TapFile::open(name.into(), pcapng(w)).expect("a written capture opens");
        // The writer is sound: the file gives back what was written, without error.
        let got: Vec<(u64, roce_capture::LinkType, u32, &[u8])> = t
            .items
            .iter()
            .map(|i| i.frame().expect("a written capture reads without error"))
            .map(|f| (f.ts_ns, f.link_type, f.len, &f.data[..]))
            .collect();
        let want: Vec<(u64, roce_capture::LinkType, u32, &[u8])> = w
            .iter()
            .map(|f| (f.ts_ns, f.link_type, f.len.max(f.data.len() as u32), f.data))
            .collect();
        assert!(got == want, "the written capture reads back other frames");
        t
    };
    let taps = [open("tap0.pcapng", &file0), open("tap1.pcapng", &file1)];
    let (mut offsets, mut infos) = tap_offsets(&taps, &[0, -shift], estimate);
    if estimate {
        // Every packet file 1 shares with file 0 is `shift` later: the estimate is exact.
        if infos[1].offset_from == "estimated" {
            assert_eq!(offsets[1], -shift, "the offset estimated for a copy shifted by {shift} ns");
        }
        offsets[1] = -shift;
        infos[1].offset_ns = -shift;
    }
    let whole = file1.len() == file0.len();
    let steps = merge_checks(&taps, &offsets, infos, reach);
    // The same capture twice: file 0's frames are the first sightings, file 1's their copies
    // (frames the taps cannot key, RoCE without addresses, pass twice), no drop. Checked for
    // a capture in time order, or one whose packets are all distinct: where its times go back
    // by more than the window and a packet comes again, a sighting can be settled before its
    // copy in the other file comes (the merge hands that file's frames out later), and the
    // copy is then a first sighting (docs/taps.md, "Limits"; README, "Crashes found").
    let in_order = file0.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns);
    let mut keys: Vec<TapKey> =
        steps.frames.iter().filter(|s| s.source == 0).filter_map(|s| s.key).collect();
    keys.sort_unstable();
    let distinct = keys.windows(2).all(|w| w[0] != w[1]);
    if !whole || !(in_order || distinct) {
        return;
    }
    let cfg = Config::default();
    let mut roce_alone = 0u64;
    roce_analysis::Pass::new(&cfg)
        .run(taps[0].capture(), |d| {
            roce_alone += u64::from(d.packet.as_ref().is_ok_and(|p| p.roce.is_some()));
        })
        .expect("a written capture reads");
    let mut roce_first = 0u64;
    for s in &steps.frames {
        match (s.source, s.copy_of, s.key) {
            (0, Some(of), _) => panic!("frame {} of file 0 taken for a copy of {of}", s.number),
            (0, None, _) => roce_first += u64::from(s.roce),
            (_, None, Some(_)) => {
                panic!("frame {} of the copy (its frame {}) not matched", s.number, s.source_number)
            }
            (_, Some(of), None) => panic!("frame {} without a key a copy of {of}", s.number),
            _ => {}
        }
    }
    assert_eq!(roce_first, roce_alone, "RoCE frames first seen against file 0 read alone");
    assert_eq!(steps.drops, 0, "a drop between two taps that saw the same packets");
}

/// What the taps can tell a packet by (`roce_analysis::Taps` matches copies on these): a
/// RoCE packet by its host pair (the IP addresses, a GRH's GIDs, or for native InfiniBand
/// without a GRH its LIDs), DestQP, PSN, opcode and payload length; another IP packet by its
/// addresses, any other frame by its length (each also by a hash of its last bytes, not
/// compared here). `None` only for RoCE without addresses nor LIDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TapKey {
    Roce {
        src: std::net::IpAddr,
        dst: std::net::IpAddr,
        dest_qp: u32,
        psn: u32,
        opcode: u8,
        payload_len: usize,
    },
    Ip {
        src: std::net::IpAddr,
        dst: std::net::IpAddr,
    },
    Frame {
        len: u32,
    },
}

fn tap_key(d: &roce_analysis::Decoded<'_>) -> Option<TapKey> {
    let p = d.packet.as_ref().ok();
    let Some((p, r)) = p.and_then(|p| p.roce.as_ref().map(|r| (p, r))) else {
        return Some(match p.and_then(|p| p.ip) {
            Some(ip) => TapKey::Ip { src: ip.src, dst: ip.dst },
            None => TapKey::Frame { len: d.frame.len },
        });
    };
    // Native InfiniBand without a GRH: its LIDs, as `fe80::ffff:0:LID`.
    let lid =
        |l: u16| std::net::IpAddr::V6(std::net::Ipv6Addr::new(0xfe80, 0, 0, 0, 0xffff, 0, 0, l));
    let (src, dst) = match (roce_conformance::host_pair(p), p.lrh) {
        (Some(pair), _) => pair,
        (None, Some(l)) => (lid(l.slid), lid(l.dlid)),
        (None, None) => return None,
    };
    Some(TapKey::Roce {
        src,
        dst,
        dest_qp: r.bth.dest_qp,
        psn: r.bth.psn,
        opcode: r.bth.opcode,
        payload_len: r.payload_len,
    })
}

/// A frame step of the taps pass: the frame, its key, whether it is RoCE, the connection
/// handed back for it, and for a copy the first sighting's number.
struct TapStepFrame {
    number: u64,
    source: u32,
    source_number: u64,
    ts_ns: u64,
    key: Option<TapKey>,
    roce: bool,
    conn: Option<roce_conformance::ConnId>,
    copy_of: Option<u64>,
}

/// The steps of a taps pass.
#[derive(Default)]
struct TapSteps {
    frames: Vec<TapStepFrame>,
    drops: u64,
}

/// The k-way merge of the frames each file gives alone, written plainly: (file, number there)
/// in the order of the earliest (time plus offset, file) of the files' next frames.
fn reference_merge(taps: &[TapFile], offsets: &[i64]) -> Vec<(u32, u64)> {
    let frames: Vec<Vec<&AloneFrame>> = taps.iter().map(|t| t.frames().collect()).collect();
    let mut next = vec![0usize; taps.len()];
    let mut out = Vec::new();
    loop {
        let mut best: Option<(u64, usize)> = None;
        for (j, fs) in frames.iter().enumerate() {
            if let Some(f) = fs.get(next[j]) {
                let key = (f.ts_ns.saturating_add_signed(offsets[j]), j);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        let Some((_, j)) = best else { return out };
        out.push((j as u32, frames[j][next[j]].number));
        next[j] += 1;
    }
}

/// The checks every merge input gets (see [`merge`]); returns the taps pass's steps.
fn merge_checks(
    taps: &[TapFile],
    offsets: &[i64],
    infos: Vec<roce_analysis::TapInfo>,
    reach: &mut Reach,
) -> TapSteps {
    use roce_analysis::{run_merged, Pass, TapOptions, TapStep, Taps};
    use roce_capture::Merge;
    let n = taps.len();
    assert_eq!(offsets.len(), n);
    let shifted = |s: usize, f: &AloneFrame| f.ts_ns.saturating_add_signed(offsets[s]);

    // The merge against the files read alone.
    let mut m = Merge::new(taps.iter().map(TapFile::capture).collect(), offsets);
    assert_eq!(m.captures().len(), n);
    for (i, t) in taps.iter().enumerate() {
        assert_eq!(m.name(i as u32), t.name, "name of file {i}");
        assert_eq!(m.offset_ns(i as u32), offsets[i], "offset of file {i}");
    }
    let total: usize = taps.iter().map(|t| t.items.len()).sum();
    let mut at = vec![0usize; n];
    // (source, source number, time) of each merged frame, by number.
    let mut merged: Vec<(u32, u64, u64)> = Vec::new();
    // The first error that ends a pass: its message and the frames before it.
    let mut ending: Option<(String, usize)> = None;
    let mut steps = 0usize;
    // What the merge handed out last was a fatal error (nothing may follow), a dropped
    // file's error (something must follow).
    let mut after_fatal: Option<String> = None;
    let mut after_dropped: Option<String> = None;
    // The files whose damage ended them, and the effect the merge gave it.
    let mut ended: Vec<Option<Effect>> = vec![None; n];
    while let Some(item) = m.next_frame() {
        steps += 1;
        assert!(steps <= total, "the merge hands out more than its files hold");
        if let Some(text) = &after_fatal {
            let what = match &item {
                Ok(f) => format!("frame {} of file {}", f.source_number, f.source),
                Err(e) => format!("the error {e}"),
            };
            panic!("the merge handed out {what} after its fatal error {text}");
        }
        after_dropped = None;
        match item {
            Ok(f) => {
                let s = f.source as usize;
                assert!(s < n, "frame of file {s} of {n}");
                assert_eq!(f.number, merged.len() as u64 + 1, "merge numbers not 1..N");
                if let Some(effect) = ended[s] {
                    panic!("frame {} of file {s} after its damage ({effect:?})", f.source_number);
                }
                let Some(AloneItem::Frame(a)) = taps[s].items.get(at[s]) else {
                    panic!(
                        "frame {} of file {s} where it holds {:?}",
                        f.source_number,
                        taps[s].items.get(at[s])
                    )
                };
                assert_eq!(f.source_number, a.number, "file {s}: frame out of its order");
                assert_eq!(f.ts_ns, shifted(s, a), "file {s} frame {}: time", a.number);
                assert_eq!(
                    (f.caplen, f.len, f.link_type, f.interface, f.offset),
                    (a.caplen, a.len, a.link_type, a.interface, a.offset),
                    "file {s} frame {}",
                    a.number
                );
                assert!(f.data == &a.data[..], "file {s} frame {}: other bytes", a.number);
                // The earliest of the frames every file holds ready.
                for (j, t) in taps.iter().enumerate().filter(|&(j, _)| j != s) {
                    match t.items.get(at[j]) {
                        None => {}
                        Some(AloneItem::Frame(g)) => assert!(
                            (shifted(j, g), j) > (f.ts_ns, s),
                            "file {s} frame {} (at {}) before file {j} frame {} (at {})",
                            a.number,
                            f.ts_ns,
                            g.number,
                            shifted(j, g)
                        ),
                        Some(AloneItem::Error { text, .. }) => {
                            panic!("a frame handed out while file {j} is to report: {text}")
                        }
                    }
                }
                at[s] += 1;
                merged.push((f.source, f.source_number, f.ts_ns));
                reach.frames += 1;
            }
            Err(e) => {
                let text = e.to_string();
                let effect = e.effect();
                // The file's message read alone; a dropped file's with a note after it.
                let same = |alone: &str| match effect {
                    Effect::Dropped => text.strip_prefix(alone).is_some_and(|r| !r.is_empty()),
                    _ => text == alone,
                };
                let mut whose = (0..n).filter(|&j| {
                    matches!(taps[j].items.get(at[j]), Some(AloneItem::Error { text: t, .. }) if same(t))
                });
                let Some(j) = whose.next() else { panic!("an error no file gives next: {text}") };
                assert!(whose.next().is_none(), "an error of two files: {text}");
                let Some(AloneItem::Error { effect: alone, nothing_read, .. }) =
                    taps[j].items.get(at[j])
                else {
                    unreachable!()
                };
                let name = &taps[j].name;
                assert_eq!(e.file(), name, "{text}: not its file's name");
                assert!(text.starts_with(name.as_str()), "{text}: does not name {name}");
                assert_eq!(e.nothing_read(), *nothing_read, "{text}: frames of its file before");
                match (alone, effect) {
                    (Effect::Fatal, Effect::Fatal) => after_fatal = Some(text.clone()),
                    (Effect::Fatal, Effect::Dropped) => after_dropped = Some(text.clone()),
                    (a, b) => assert_eq!(a, &b, "{text}: the merge changed what the reader did"),
                }
                if alone == &Effect::Fatal {
                    assert_eq!(at[j] + 1, taps[j].items.len(), "{text}: file {j} read on alone");
                    ended[j] = Some(effect);
                }
                if e.nothing_read() && e.is_fatal() && ending.is_none() {
                    ending = Some((text, merged.len()));
                }
                at[j] += 1;
            }
        }
    }
    if let Some(text) = after_dropped {
        panic!("the merge ended with a dropped file's error (nothing follows it: fatal): {text}");
    }
    assert!(m.next_frame().is_none(), "the merge restarted after its end");
    for (j, t) in taps.iter().enumerate() {
        assert_eq!(at[j], t.items.len(), "file {j}: not everything handed out");
        assert_eq!(ended[j].is_some(), t.damaged(), "file {j}: its damage handed out");
    }
    // The merged frames are the k-way merge of each file's frames read alone (a damaged
    // file's up to its damage): healthy files lose nothing, a damaged one gives nothing past it.
    let reference = reference_merge(taps, offsets);
    let got: Vec<(u32, u64)> = merged.iter().map(|&(s, k, _)| (s, k)).collect();
    assert!(got == reference, "merged {got:?}, the files' frames merge as {reference:?}");
    // A pass fails only when the merge's last thing is the fatal damage of a file before
    // its first frame: no file gave a frame.
    if let Some((text, _)) = &ending {
        assert!(merged.is_empty(), "the pass ends at {text} after {} frames", merged.len());
    }
    // The frames of the other files are those of a merge without a damaged file.
    for j in (0..n).filter(|&j| n > 1 && taps[j].damaged()) {
        let others: Vec<usize> = (0..n).filter(|&k| k != j).collect();
        let caps = others.iter().map(|&k| taps[k].capture()).collect();
        let offs: Vec<i64> = others.iter().map(|&k| offsets[k]).collect();
        let mut without = Merge::new(caps, &offs);
        let mut alone_frames = Vec::new();
        while let Some(item) = without.next_frame() {
            if let Ok(f) = item {
                alone_frames.push((others[f.source as usize] as u32, f.source_number, f.ts_ns));
            }
        }
        let kept: Vec<(u32, u64, u64)> =
            merged.iter().copied().filter(|&(s, _, _)| s as usize != j).collect();
        assert!(kept == alone_frames, "without file {j}: {alone_frames:?}, with it {kept:?}");
    }
    if let Some(total) = m.bytes_total() {
        assert!(m.bytes_read() <= total, "read more than the files");
    }
    let in_order = |j: usize| {
        let ts: Vec<u64> = taps[j].frames().map(|f| shifted(j, f)).collect();
        ts.windows(2).all(|w| w[0] <= w[1])
    };
    if (0..n).all(in_order) {
        assert!(merged.windows(2).all(|w| w[0].2 <= w[1].2), "merged times go back");
    }
    drop(m);

    // The taps stage over the same merge.
    let cfg = Config::default();
    let opts = TapOptions::default();
    let mut stage = Taps::new(n, opts);
    let names: Vec<String> = taps.iter().map(|t| t.name.clone()).collect();
    let mut out = TapSteps::default();
    let merge = Merge::new(taps.iter().map(TapFile::capture).collect(), offsets);
    let read = run_merged(Pass::new(&cfg), merge, &mut stage, |step| match step {
        TapStep::Frame(d) | TapStep::Copy(d, _) => {
            let f = &d.frame;
            let number = out.frames.len() as u64 + 1;
            assert_eq!(f.number, number, "a step skipped or repeated");
            let want = merged.get(out.frames.len()).copied();
            assert_eq!(
                Some((f.source, f.source_number, f.ts_ns)),
                want,
                "step {number}: not the merged frame"
            );
            let key = tap_key(d);
            let roce = d.packet.as_ref().is_ok_and(|p| p.roce.is_some());
            if let Ok(p) = &d.packet {
                if let Some(r) = &p.roce {
                    reach.roce(r);
                }
            }
            let mut conn = None;
            let copy_of = match step {
                TapStep::Copy(_, of) => {
                    assert!(of >= 1 && of < number, "frame {number} a copy of frame {of}");
                    let first = &out.frames[(of - 1) as usize];
                    assert_eq!(first.copy_of, None, "frame {number} a copy of the copy {of}");
                    assert_ne!(
                        first.source, f.source,
                        "frame {number} a copy of {of} at the same tap"
                    );
                    assert!(
                        key.is_some() && key == first.key,
                        "frame {number}: a copy of another packet ({of})"
                    );
                    assert!(
                        f.ts_ns <= first.ts_ns.saturating_add(opts.window_ns),
                        "frame {number}: a copy of {of} past the window"
                    );
                    Some(of)
                }
                _ => {
                    if let Some(TapKey::Roce { src, dst, dest_qp, .. }) = key {
                        conn = Some(roce_conformance::ConnId {
                            a: src,
                            qpn_a: None,
                            b: dst,
                            qpn_b: Some(dest_qp),
                            incarnation: u32::try_from(number).unwrap_or(u32::MAX),
                        });
                    }
                    None
                }
            };
            out.frames.push(TapStepFrame {
                number,
                source: f.source,
                source_number: f.source_number,
                ts_ns: f.ts_ns,
                key,
                roce,
                conn,
                copy_of,
            });
            conn
        }
        TapStep::Drop(drop) => {
            out.drops += 1;
            let seen = out.frames.len() as u64;
            let (first, last) = (drop.first_frame, drop.last_frame);
            assert!(
                (1..=seen).contains(&first) && (1..=seen).contains(&last),
                "drop of frames {first}, {last} of {seen}"
            );
            let f = &out.frames[(first - 1) as usize];
            assert_eq!(f.copy_of, None, "a drop's first frame {first} is a copy");
            let Some(TapKey::Roce { dest_qp, psn, opcode, .. }) = f.key else {
                panic!("a drop of frame {first}, not a RoCE packet with addresses")
            };
            assert_eq!(
                (drop.flow.dest_qp, drop.psn, drop.opcode),
                (dest_qp, psn, opcode),
                "drop of frame {first}"
            );
            assert_eq!(drop.connection, f.conn, "drop of frame {first}: its connection");
            assert_eq!(
                (drop.first_source.number, drop.first_source.tap, drop.first_source.source_number),
                (first, f.source, f.source_number),
                "drop of frame {first}"
            );
            let l = &out.frames[(last - 1) as usize];
            assert!(
                last == first || l.copy_of == Some(first),
                "drop of frame {first}: last seen in frame {last}"
            );
            assert_eq!(
                (drop.last_seen, drop.last_source.number),
                (l.source, last),
                "drop of frame {first}"
            );
            let missing = drop.missing_at;
            assert!(
                (missing as usize) < n && missing != drop.last_seen,
                "drop of frame {first} missing at tap {missing}"
            );
            assert!(
                !out.frames.iter().any(|c| c.copy_of == Some(first) && c.source == missing),
                "drop of frame {first}: tap {missing} saw it"
            );
            let text = drop.message(&names);
            assert!(text.contains(&names[missing as usize]), "{text}");
            None
        }
    });
    let frames_before = match (&read, &ending) {
        // (Damage that ends a pass comes before any frame: see above.)
        (Ok(summary), None) => {
            assert_eq!(summary.frames, merged.len() as u64, "frames the pass read");
            merged.len()
        }
        (Err(e), Some((text, before))) => {
            assert_eq!(&e.to_string(), text, "the pass ended with another error");
            *before
        }
        (Ok(_), Some((text, _))) => panic!("the pass read on past {text}"),
        (Err(e), None) => panic!("the pass failed: {e}"),
    };
    assert_eq!(out.frames.len(), frames_before, "frames and copies against the merged frames");

    let report = stage.report(infos);
    serde_json::to_string(&report).expect("the taps report serialises");
    assert_eq!(report.taps.len(), n, "a report per tap");
    let copies = out.frames.iter().filter(|s| s.copy_of.is_some()).count() as u64;
    let firsts = out.frames.len() as u64 - copies;
    for (i, t) in report.taps.iter().enumerate() {
        let c = t.counts;
        let here = out.frames.iter().filter(|s| s.source as usize == i).count() as u64;
        assert_eq!(c.frames, here, "tap {i}: frames");
        assert_eq!(c.first + c.copies, c.frames, "tap {i}: first and copies");
    }
    assert_eq!(report.taps.iter().map(|t| t.counts.copies).sum::<u64>(), copies, "copies");
    assert_eq!(report.taps.iter().map(|t| t.counts.first).sum::<u64>(), firsts, "first sightings");
    if read.is_ok() {
        let roce_copies = out
            .frames
            .iter()
            .filter(|s| s.copy_of.is_some() && matches!(s.key, Some(TapKey::Roce { .. })))
            .count() as u64;
        assert_eq!(
            report.pairs.iter().map(|p| p.copies).sum::<u64>(),
            roce_copies,
            "copies per pair"
        );
        assert_eq!(report.drops, out.drops, "drops");
        assert_eq!(report.pairs.iter().map(|p| p.drops).sum::<u64>(), out.drops, "drops per pair");
        assert!(report.drops_listed.len() as u64 <= out.drops, "drops listed");
    }
    out
}
