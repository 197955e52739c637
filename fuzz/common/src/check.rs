//! Properties every parse must have, whatever the input.

use roce_parser::{
    parse_mad, CmMessage, ExtHeader, IcrcStatus, Mad, Packet, Problem, Problems, RdmaCmIpHeader,
    Roce, MAD_DATA_LEN, MAD_LEN,
};

/// A packet parsed from `data`: offsets inside the input, layers consistent, every message
/// printable.
pub fn packet(p: &Packet<'_>, data: &[u8]) {
    assert_eq!(p.data, data, "Packet::data is not the input");
    if let Some(ip) = p.ip {
        assert!(ip.version == 4 || ip.version == 6, "IP version {}", ip.version);
        assert!(ip.offset + ip.header_len <= data.len(), "IP header past the input");
        assert!(ip.header_len >= 20, "IP header length {}", ip.header_len);
    }
    if let Some(udp) = p.udp {
        assert!(p.ip.is_some(), "UDP without IP");
        assert!(udp.offset + 8 <= data.len(), "UDP header past the input");
    }
    if let Some(r) = &p.roce {
        roce(r, data);
        match r.version {
            roce_parser::RoceVersion::V2 => assert!(p.udp.is_some(), "RoCEv2 without UDP"),
            roce_parser::RoceVersion::V1 => {
                assert!(r.grh.is_some() && p.ip.is_none(), "RoCEv1 without GRH")
            }
            roce_parser::RoceVersion::Infiniband => {
                let lrh = p.lrh.expect("native InfiniBand without an LRH");
                assert!(p.eth.is_none() && p.ip.is_none() && p.udp.is_none(), "IB with Ethernet");
                let global = lrh.lnh == roce_parser::Lnh::Global;
                assert_eq!(r.grh.is_some(), global, "a GRH where LNH says {:?}", lrh.lnh);
                assert_eq!(r.bth_offset, if global { 48 } else { 8 }, "IB BTH offset");
            }
        }
        if matches!(r.icrc_status, IcrcStatus::Bad { .. }) {
            assert!(p.problems.contains(Problem::IcrcBad), "bad ICRC not flagged");
        }
        mad_problems(p.problems, r);
    }
    if let Some(v) = p.vcrc {
        assert!(p.lrh.is_some(), "a VCRC without an LRH");
        let bad = matches!(v.status, IcrcStatus::Bad { .. });
        assert_eq!(bad, p.problems.contains(Problem::VcrcBad), "VCRC verdict against its problem");
        if let (IcrcStatus::Ok | IcrcStatus::Bad { .. }, Some(lrh)) = (v.status, p.lrh) {
            // Verified: the packet and its VCRC are all in the input, and the verdict holds.
            let len = lrh.packet_len();
            assert!(len + 2 <= data.len(), "a VCRC verified past the input");
            let stored = u16::from_le_bytes([data[len], data[len + 1]]);
            assert_eq!(v.stored, Some(stored), "VCRC value");
            let ok = roce_parser::compute_vcrc(&data[..len]) == stored;
            assert_eq!(ok, v.status == IcrcStatus::Ok, "VCRC verdict");
        }
    }
    assert_eq!(p.lrh.is_some(), p.vcrc.is_some(), "an LRH without a VCRC verdict");
    problems(p.problems);
    if let Some(e) = p.stop {
        assert!(!e.to_string().is_empty());
    }
    let _ = p.vlan_count();
}

/// A RoCE packet parsed from `data` (the bytes its `bth_offset` counts from).
pub fn roce(r: &Roce<'_>, data: &[u8]) {
    assert!(r.bth_offset + 12 <= data.len(), "BTH past the input");
    assert_eq!(r.bth.opcode, data[r.bth_offset], "BTH opcode differs from its byte");
    assert!(
        r.payload.len() <= r.payload_len,
        "captured payload {} longer than the announced {}",
        r.payload.len(),
        r.payload_len
    );
    assert!(r.pad.len() <= 3, "pad of {} bytes", r.pad.len());
    assert!(r.bth.padcnt <= 3 && r.bth.tver <= 15);
    assert!(r.bth.dest_qp <= 0xff_ffff && r.bth.psn <= 0xff_ffff);
    assert!(!r.opcode_name().is_empty());
    let _ = r.transport();
    match r.info {
        Some(info) => {
            assert_eq!(info.opcode, r.bth.opcode);
            assert!(r.opaque.is_empty(), "opaque bytes for a table opcode");
            // Present headers: a prefix of the listed ones, in order; nothing else.
            let present = info.headers.iter().take_while(|&&h| r.headers.has(h)).count();
            for (i, &h) in info.headers.iter().enumerate() {
                assert_eq!(r.headers.has(h), i < present, "{} not a prefix", h.name());
            }
            for h in ExtHeader::ALL {
                if !info.headers.contains(&h) {
                    assert!(!r.headers.has(h), "{} not listed for {}", h.name(), info.name);
                }
            }
            if present < info.headers.len() {
                assert!(r.payload.is_empty(), "payload after a missing header");
            }
        }
        None => {
            assert_eq!(r.headers, Default::default(), "headers for an undefined opcode");
            assert!(r.payload.is_empty() && r.pad.is_empty());
        }
    }
    match r.icrc_status {
        IcrcStatus::Ok => assert!(r.icrc.is_some(), "ICRC ok but none captured"),
        IcrcStatus::Bad { computed } => {
            assert!(r.icrc.is_some(), "ICRC bad but none captured");
            assert_ne!(r.icrc, Some(computed), "ICRC bad but equal");
        }
        IcrcStatus::Unverifiable | IcrcStatus::NotChecked => {}
    }
    assert!(!r.icrc_status.as_str().is_empty());
    if let Some(res) = r.mad() {
        assert!(r.is_mad(), "a MAD decoded off QP0 and QP1");
        if let Ok(m) = res {
            mad(&m, r.payload);
        }
    }
}

/// The MAD's problems are in the packet's, and MAD problems come from a MAD only.
pub fn mad_problems(packet: Problems, r: &Roce<'_>) {
    let mad_bits =
        [Problem::MadTruncated, Problem::MadUnknownVersion, Problem::MadUnknownAttribute];
    match r.mad() {
        Some(Ok(m)) => {
            assert_eq!(
                packet.bits() & m.problems.bits(),
                m.problems.bits(),
                "MAD problems missing"
            );
            for b in mad_bits {
                assert_eq!(packet.contains(b), m.problems.contains(b), "{b:?} not the MAD's");
            }
        }
        _ => assert!(!mad_bits.iter().any(|&b| packet.contains(b)), "MAD problem without a MAD"),
    }
}

/// A MAD decoded from `bytes`.
pub fn mad(m: &Mad<'_>, bytes: &[u8]) {
    assert!(m.data.len() <= MAD_DATA_LEN, "MAD data longer than 232");
    assert_eq!(
        m.problems.contains(Problem::MadTruncated),
        bytes.len() < MAD_LEN,
        "MadTruncated flag"
    );
    problems(m.problems);
    let _ = m.cm_attribute();
    assert!(!m.header.mgmt_class.name().is_empty());
    assert!(!m.header.method.name().is_empty());
    if let Some(cm) = &m.cm {
        assert!(!cm.name().is_empty());
        let _ = cm.comm_ids();
        // RDMA-CM's service ID and IP private data.
        match cm {
            CmMessage::Req(req) => {
                if let Some(h) = req.rdma_cm_ip_header() {
                    assert_eq!(RdmaCmIpHeader::parse_bytes(&h.to_bytes()), Ok(h));
                }
                assert!(req.consumer_private_data().len() <= req.private_data.len());
            }
            CmMessage::SidrReq(req) => {
                let _ = req.rdma_cm_ip_header();
                assert!(req.consumer_private_data().len() <= req.private_data.len());
            }
            _ => {}
        }
        // Whole MADs: parse, emit, parse again gives the same message.
        if bytes.len() >= MAD_LEN {
            let mut out = [0u8; MAD_LEN];
            cm.emit_mad_with_header(&m.header, &mut out).expect("a decoded message emits");
            let again = parse_mad(&out).expect("an emitted MAD parses");
            assert_eq!(again.header, m.header, "MAD header round trip");
            assert_eq!(again.cm.as_ref(), Some(cm), "CM message round trip");
        }
    }
}

/// Every problem has a message.
pub fn problems(ps: Problems) {
    for p in ps.iter() {
        assert!(!p.message().is_empty());
        assert!(ps.contains(p));
    }
}

/// The same network-layer parse entered `shift` bytes later (after an Ethernet header): the
/// same layers and values, offsets moved by `shift`.
pub fn same_shifted(full: &Packet<'_>, inner: &Packet<'_>, shift: usize) {
    let ip = |p: &Packet<'_>, s: usize| {
        p.ip.map(|mut i| {
            i.offset -= s;
            i
        })
    };
    assert_eq!(ip(full, shift), ip(inner, 0), "IP differs");
    let udp = |p: &Packet<'_>, s: usize| {
        p.udp.map(|mut u| {
            u.offset -= s;
            u
        })
    };
    assert_eq!(udp(full, shift), udp(inner, 0), "UDP differs");
    fn roce<'a>(p: &Packet<'a>, s: usize) -> Option<Roce<'a>> {
        p.roce.map(|mut r| {
            r.bth_offset -= s;
            r
        })
    }
    assert_eq!(roce(full, shift), roce(inner, 0), "RoCE differs");
    assert_eq!(full.problems, inner.problems, "problems differ");
    // The tunnels, offsets moved; the outermost one's Ethernet header is the one `inner` was
    // entered after.
    fn tunnels<'a>(p: &Packet<'a>, s: usize) -> Vec<roce_parser::Encap<'a>> {
        p.tunnels()
            .enumerate()
            .map(|(i, e)| {
                let mut e = *e;
                e.offset -= s;
                e.inner_offset -= s;
                if let Some(ip) = &mut e.ip {
                    ip.offset -= s;
                }
                if let Some(u) = &mut e.udp {
                    u.offset -= s;
                }
                if i == 0 {
                    e.eth = None;
                    e.vlans = Default::default();
                }
                e
            })
            .collect()
    }
    assert_eq!(tunnels(full, shift), tunnels(inner, 0), "tunnels differ");
    let stop = |p: &Packet<'_>, s: usize| {
        p.stop.map(|mut e| {
            e.offset = e.offset.saturating_sub(s);
            e
        })
    };
    assert_eq!(stop(full, shift), stop(inner, 0), "stop differs");
}
