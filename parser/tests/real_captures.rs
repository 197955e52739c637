#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Every frame of every real capture (ROCE_INSPECT_REAL_CAPTURES): RoCEv2 / RoCEv1 counts and
//! ICRC ok / bad / unverifiable counts must equal the ground truth in that folder's README;
//! and the CM MADs of one of them, field by field.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use roce_parser::*;

#[path = "../../testdata/real.rs"]
mod real;
use real::{ground_truth, real_dir};

#[path = "../../testdata/pcap_frames.rs"]
mod pcap_frames;
use pcap_frames::for_each_frame;

#[test]
fn counts_match_the_readme() {
    let Some(dir) = real_dir() else { return };
    let truth = ground_truth(&dir);
    assert!(truth.len() >= 20, "README table not found");
    let cfg = Config::default();
    for (name, expect) in truth {
        let mut got = [0u64; 6];
        for_each_frame(&dir.join(&name), |lt, frame| {
            got[0] += 1;
            if lt != 1 {
                // Only Ethernet frames (link type 1) are parsed.
                return;
            }
            let Ok(p) = parse_ethernet(frame, &cfg) else {
                return;
            };
            let Some(r) = p.roce else { return };
            match r.version {
                RoceVersion::V2 => got[1] += 1,
                RoceVersion::V1 => got[2] += 1,
                RoceVersion::Infiniband => panic!("{name}: an Ethernet frame as native IB"),
            }
            match r.icrc_status {
                IcrcStatus::Ok => got[3] += 1,
                IcrcStatus::Bad { .. } => got[4] += 1,
                IcrcStatus::Unverifiable => got[5] += 1,
                IcrcStatus::NotChecked => panic!("{name}: ICRC not checked"),
            }
        })
        .unwrap();
        assert_eq!(got, expect, "{name}: [frames, RoCEv2, RoCEv1, ICRC ok, bad, unverifiable]");
    }
}

/// A real capture with an rdma_cm connection set up and torn down.
const READ2: &str = "magnate3_linux-riscv-dev_read2.pcap";

/// The CM MADs of a capture: (frame number, IPv4 src, IPv4 dst, MAD bytes).
fn cm_mads(path: &Path) -> Vec<(usize, Ipv4Addr, Ipv4Addr, Vec<u8>)> {
    let mut out = Vec::new();
    let mut n = 0;
    for_each_frame(path, |linktype, f| {
        n += 1;
        assert_eq!(linktype, 1, "Ethernet");
        // Ethernet / IPv4 / UDP to 4791 / BTH opcode 0x64 to QP1.
        if f.len() < 14 + 20 + 8 + 20 || f[12..14] != [0x08, 0x00] || f[23] != 17 {
            return;
        }
        let ihl = usize::from(f[14] & 0x0f) * 4;
        let udp = &f[14 + ihl..];
        if udp[2..4] != [0x12, 0xb7] {
            return;
        }
        let bth = &udp[8..];
        let dest_qp = u32::from_be_bytes([0, bth[5], bth[6], bth[7]]);
        if bth[0] != 0x64 || dest_qp != QP1 {
            return;
        }
        let deth_qkey = u32::from_be_bytes(bth[12..16].try_into().unwrap());
        assert_eq!(deth_qkey, GSI_QKEY, "frame {n}");
        let src = Ipv4Addr::new(f[26], f[27], f[28], f[29]);
        let dst = Ipv4Addr::new(f[30], f[31], f[32], f[33]);
        // The MAD starts after BTH 12 + DETH 8; the ICRC (4) follows its 256 bytes.
        out.push((n, src, dst, bth[20..].to_vec()));
    })
    .unwrap();
    out
}

/// Real data: the five CM MADs of read2.pcap (rdma_cm over rxe). Every value below was
/// confirmed with tshark 4.0 (`tshark -r read2.pcap -Y infiniband.mad -T fields -e
/// infiniband.cm.req.localqpn ...`), except the REQ primary packet rate: tshark 4.0 shows 0
/// where byte 91 of the REQ holds 0x07 (6-bit field [3F] per Linux ibta_vol1_c12.h and
/// docs/wire.md), and the DREQ remote QPN, which tshark 4.0 does not decode.
#[test]
fn read2_pcap_cm_mads() {
    let Some(dir) = real_dir() else { return };
    let mads = cm_mads(&dir.join(READ2));
    let attrs: Vec<(usize, CmAttribute)> = mads
        .iter()
        .map(|(n, _, _, m)| (*n, parse_mad(m).unwrap().cm.unwrap().attribute()))
        .collect();
    assert_eq!(
        attrs,
        [
            (4, CmAttribute::Req),
            (5, CmAttribute::Rep),
            (6, CmAttribute::Rtu),
            (15, CmAttribute::Dreq),
            (16, CmAttribute::Drep),
        ]
    );
    let names: Vec<&str> = attrs.iter().map(|(_, a)| a.long_name()).collect();
    assert_eq!(
        names,
        ["ConnectRequest", "ConnectReply", "ReadyToUse", "DisconnectRequest", "DisconnectReply"]
    );

    let mut decoded = Vec::new();
    for (n, src, dst, bytes) in &mads {
        let mad = parse_mad(bytes).unwrap();
        // The payload holds MAD + ICRC: 260 bytes; the MAD itself is whole.
        assert_eq!(bytes.len(), 260);
        assert!(mad.problems.is_empty(), "frame {n}: {}", mad.problems);
        assert_eq!(mad.header.mgmt_class, MgmtClass::Cm);
        assert_eq!(mad.header.method, Method::Send);
        assert_eq!(mad.header.transaction_id, 0x0000_000b_2975_ef73);
        decoded.push((*src, *dst, mad.cm.unwrap()));
        // Parse -> emit gives the capture's bytes back.
        let mut out = [0u8; 256];
        mad.cm.unwrap().emit_mad_with_header(&mad.header, &mut out).unwrap();
        assert_eq!(out[..], bytes[..256], "frame {n}");
    }

    let (src, dst, CmMessage::Req(req)) = decoded[0] else { panic!() };
    assert_eq!(req.local_comm_id, 0x73ef_7529);
    assert_eq!(req.service_id, 0x0000_0000_0106_3039);
    let svc = req.rdma_cm_service().unwrap();
    assert_eq!((svc.port_space, svc.port), (PortSpace::Tcp, 0x3039));
    assert_eq!(req.local_ca_guid, 0x08c0_eb03_00da_e2e6);
    assert_eq!(req.local_qpn, 0x000139);
    assert_ne!(req.local_qpn, 0);
    assert_eq!(req.starting_psn, 0xf045d0);
    assert_eq!(req.path_mtu, 3);
    let pmtu = req.pmtu_bytes().unwrap();
    assert!((256..=4096).contains(&pmtu));
    assert_eq!(pmtu, 1024);
    assert_eq!(req.transport_service_type, TransportServiceType::Rc);
    assert_eq!((req.responder_resources, req.initiator_depth), (3, 3));
    assert_eq!((req.remote_cm_response_timeout, req.local_cm_response_timeout), (22, 22));
    assert_eq!((req.retry_count, req.rnr_retry_count, req.max_cm_retries), (3, 0, 15));
    assert_eq!(req.pkey, 0xffff);
    assert_eq!(req.primary_path.local_ip(), IpAddr::V4(src));
    assert_eq!(req.primary_path.remote_ip(), IpAddr::V4(dst));
    assert_eq!(req.primary_path.hop_limit, 0x40);
    assert_eq!(req.primary_path.local_ack_timeout, 0x13);
    assert_eq!(req.primary_path.packet_rate, 7);
    assert!(req.alternate_path.is_empty());
    let ip = req.rdma_cm_ip_header().unwrap();
    assert_eq!(ip.ip_version, 4);
    assert_eq!(ip.src_port, 0xc7fe);
    assert_eq!(ip.src_ip, IpAddr::V4(src));
    assert_eq!(ip.dst_ip, IpAddr::V4(dst));
    assert_eq!(src, Ipv4Addr::new(172, 17, 242, 47));
    assert_eq!(dst, Ipv4Addr::new(172, 17, 242, 56));

    let (rsrc, rdst, CmMessage::Rep(rep)) = decoded[1] else { panic!() };
    assert_eq!((rsrc, rdst), (dst, src));
    assert_eq!(rep.local_comm_id, 0xd65b_8b76);
    assert_eq!(rep.remote_comm_id, req.local_comm_id);
    assert_eq!(rep.local_qpn, 0x000169);
    assert_eq!(rep.starting_psn, 0x6af7e4);
    assert_eq!(rep.target_ack_delay, 0x10);
    assert_eq!(rep.failover_accepted, 0);
    assert!(!rep.end_to_end_flow_control);
    assert_eq!(rep.rnr_retry_count, 0);
    assert!(!rep.srq);
    assert_eq!(rep.local_ca_guid, 0x08c0_eb03_00da_e2ca);

    assert_eq!(decoded[2].2.comm_ids(), Some((0x73ef_7529, 0xd65b_8b76)));
    let CmMessage::Dreq(dreq) = decoded[3].2 else { panic!() };
    assert_eq!((dreq.local_comm_id, dreq.remote_comm_id), (0x73ef_7529, 0xd65b_8b76));
    assert_eq!(dreq.remote_qpn_eecn, rep.local_qpn);
    assert_eq!(decoded[4].2.comm_ids(), Some((0xd65b_8b76, 0x73ef_7529)));
}

/// The two native InfiniBand captures among the real ones (ibdump's ERF records, link type
/// 197): every packet decoded from its LRH, its ICRC and VCRC verified.
#[test]
fn native_infiniband_erf_captures() {
    let Some(dir) = real_dir() else { return };
    let cfg = Config::default();
    let mut total = 0;
    for (name, frames) in [
        ("magnate3_linux-riscv-dev_ib2.pcap", 127),
        ("srinivaskoritala_rdma-softroce-demo_infiniband.pcap", 43),
    ] {
        let (mut n, mut icrc_ok, mut vcrc_ok, mut global) = (0, 0, 0, 0);
        for_each_frame(&dir.join(name), |lt, rec| {
            n += 1;
            assert_eq!(lt, 197, "{name}: ERF");
            // The ERF record header: 16 bytes, type 21 (InfiniBand), no extension header.
            assert_eq!(rec[8], 21, "{name} frame {n}: ERF type");
            let p = parse_infiniband(&rec[16..], &cfg).unwrap();
            let lrh = p.lrh.unwrap();
            let r = p.roce.unwrap_or_else(|| panic!("{name} frame {n}: no BTH"));
            assert_eq!(r.version, RoceVersion::Infiniband);
            assert!(p.problems.is_empty(), "{name} frame {n}: {}", p.problems);
            icrc_ok += usize::from(r.icrc_status == IcrcStatus::Ok);
            vcrc_ok += usize::from(p.vcrc.map(|v| v.status) == Some(IcrcStatus::Ok));
            global += usize::from(lrh.lnh == Lnh::Global);
            // The packet as PktLen says, and its VCRC: the record holds no more (but pad).
            assert!(lrh.packet_len() + VCRC_LEN <= rec.len() - 16);
        })
        .unwrap();
        assert_eq!((n, icrc_ok, vcrc_ok), (frames, frames, frames), "{name}");
        if name.starts_with("magnate3") {
            // ib2 holds routed packets (a GRH, LNH 3): the ICRC without the LRH.
            assert!(global > 0, "{name}: no GRH");
        }
        total += n;
    }
    assert_eq!(total, 170);
}
