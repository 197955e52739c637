//! `roce-inspect dissect` proved against tshark, field by field, on every capture: the real
//! ones (ROCE_INSPECT_REAL_CAPTURES), the project's own under pcaps/, and captures generated here
//! with the roce-parser builder from a fixed seed (every opcode of the table eight times, over
//! IPv4, IPv6, an 802.1Q tag, QinQ and RoCEv1; twice over UDP port 18515; RoCE from low
//! source ports; CM exchanges and CM messages with random values in every field).
//!
//! For each capture, `tshark -T fields` (RPC-over-RDMA disabled, `-d udp.port==N,infiniband`
//! for another port) and `roce-inspect dissect --format jsonl` are compared per frame on every
//! field both decode: frame lengths and time, Ethernet, VLAN (802.1Q and 802.1ad), IPv4 / IPv6,
//! UDP, GRH, BTH (reserved bits too), RDETH, DETH, RETH, AtomicETH (tshark files its VA and
//! R_Key under `infiniband.reth.*`), AETH (syndrome, its type and value, MSN), AtomicAckETH,
//! ImmDt, IETH, the ICRC, the payload length, and the CM MAD header and REQ / REP / RTU / REJ /
//! DREQ / DREP fields.
//!
//! Conversions, stated once: tshark prints the ICRC as the big-endian u32 of the last four
//! bytes, ours (`icrc.value`) is the little-endian one, so tshark's = ours byte-swapped;
//! tshark's `data.len` = our `payload_len` + PadCnt (it counts the pad), compared when the
//! payload reaches tshark's data dissector; the REQ path MTU is tshark's code (1 = 256 ...
//! 5 = 4096) where we give bytes; GIDs are compared as IPv6 addresses (IPv4 ones mapped);
//! BTH byte 4 (FECN, BECN, 6 reserved bits) is tshark's first `infiniband.reserved`; our IPv6
//! `protocol` is the one after any extension headers.
//!
//! Where tshark 4.0 is wrong, the frame is classified by rule, with the reason, from the short
//! list in [`Fault`]; everything else must agree exactly. Native InfiniBand captures (ERF link
//! type 197, an LRH instead of Ethernet / IP) are compared as well: the LRH, the VCRC (tshark's
//! is ours byte-swapped, as the ICRC), the GRH, BTH and everything after, with tshark's frame
//! lengths less the ERF record header (which tshark takes as a pseudo-header). The
//! test prints, per capture, the frames and fields compared, the tshark faults by reason and
//! how long each tool took, then the count of every field compared.
//!
//! A second test checks, on the same captures, the CM starting-PSN crossover of docs/wire.md against
//! the RC traffic that follows each REQ / REP pair (it needs no tshark).
//!
//! Without tshark the comparison skips with a note, except under CI=true, where it fails; the
//! same for the real captures. `ROCE_TSHARK_KEEP=1` keeps the generated captures and prints
//! where they are; `ROCE_TSHARK_DUMP=FILE` writes every disagreement, explained or not, there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use roce_inspect::internal::gen::{conn, Endpoint, RcConn, Rng, Trace};
use roce_parser::*;
use serde_json::Value;

#[path = "../../testdata/real.rs"]
mod real;
use real::real_dir;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");
const ROCE_PORT: u16 = 4791;
/// The port of the generated capture on another UDP port (perftest's default port).
const OTHER_PORT: u16 = 18515;
const SEED: u64 = 0x7e57_5ba2_4c0d_e001;

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// tshark's version line, or None (after a note) when it is not installed outside CI.
fn tshark_version() -> Option<String> {
    match Command::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => {
            let v = String::from_utf8_lossy(&o.stdout);
            Some(v.lines().next().unwrap_or("").to_string())
        }
        _ if ci() => panic!("tshark is missing: .ci/run must install the Debian package tshark"),
        _ => {
            eprintln!("note: tshark not found, skipping the tshark comparison");
            None
        }
    }
}

/// A scratch directory for generated captures, removed on drop unless ROCE_TSHARK_KEEP is set.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("roce-inspect-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("ROCE_TSHARK_KEEP").is_some() {
            eprintln!("generated captures kept in {}", self.0.display());
        } else {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// One capture to compare.
struct Cap {
    name: String,
    path: PathBuf,
    /// UDP destination port of RoCEv2 in this capture.
    port: u16,
}

/// The captures (pcap, pcapng, plain or gzip) under `dir`, its subfolders too, by name.
fn captures_in(dir: &Path, prefix: &str) -> Vec<Cap> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let n = path.file_name().unwrap().to_string_lossy().into_owned();
            let n = n.strip_suffix(".gz").unwrap_or(&n);
            if n.ends_with(".pcap") || n.ends_with(".pcapng") {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push(Cap { name: format!("{prefix}{rel}"), path, port: ROCE_PORT });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every capture: the real ones (when ROCE_INSPECT_REAL_CAPTURES is set), pcaps/, and the
/// generated ones.
fn all_captures(scratch: &Path) -> Vec<Cap> {
    let mut caps = Vec::new();
    if let Some(dir) = real_dir() {
        caps.extend(captures_in(&dir, "real/"));
    }
    caps.extend(captures_in(&project_root().join("pcaps"), "pcaps/"));
    caps.extend(generate(scratch));
    caps
}

// ---------------------------------------------------------------------------------------------
// Generated captures
// ---------------------------------------------------------------------------------------------

fn write(t: &Trace, dir: &Path, name: &str, port: u16) -> Cap {
    let path = dir.join(name);
    t.write_pcap(fs::File::create(&path).unwrap()).unwrap();
    Cap { name: format!("generated/{name}"), path, port }
}

fn generate(dir: &Path) -> Vec<Cap> {
    let mut rng = Rng::new(SEED);
    vec![
        write(&gen_opcodes(&mut rng, ROCE_PORT, 8), dir, "opcodes.pcap", ROCE_PORT),
        write(&gen_opcodes(&mut rng, OTHER_PORT, 2), dir, "opcodes_port18515.pcap", OTHER_PORT),
        write(&gen_source_ports(&mut rng), dir, "source_ports.pcap", ROCE_PORT),
        write(&gen_cm(&mut rng), dir, "cm.pcap", ROCE_PORT),
    ]
}

fn bit(rng: &mut Rng) -> bool {
    rng.below(2) == 1
}

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

fn ipv4(rng: &mut Rng) -> [u8; 4] {
    [10, rng.below(256) as u8, rng.below(256) as u8, 1 + rng.below(254) as u8]
}

fn ipv6(rng: &mut Rng) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    for b in &mut a[4..] {
        *b = rng.next_u64() as u8;
    }
    a
}

fn vlan(rng: &mut Rng, tpid: u16) -> VlanTag {
    VlanTag { tpid, pcp: rng.below(8) as u8, dei: bit(rng), vid: 1 + rng.below(4094) as u16 }
}

/// Network layers the generated frames use, in turn.
#[derive(Clone, Copy, Debug)]
enum Net {
    V4,
    V6,
    V4Vlan,
    V6QinQ,
    RoceV1,
}

const NETS: [Net; 5] = [Net::V4, Net::V6, Net::V4Vlan, Net::V6QinQ, Net::RoceV1];

fn network(rng: &mut Rng, net: Net) -> (Network, [Option<VlanTag>; 2]) {
    let v4 = |rng: &mut Rng| {
        Network::Ipv4(Ipv4Spec {
            src: ipv4(rng),
            dst: ipv4(rng),
            dscp: rng.below(64) as u8,
            ecn: rng.below(4) as u8,
            ttl: 1 + rng.below(255) as u8,
            identification: rng.next_u64() as u16,
            dont_fragment: bit(rng),
        })
    };
    let v6 = |rng: &mut Rng| {
        Network::Ipv6(Ipv6Spec {
            src: ipv6(rng),
            dst: ipv6(rng),
            traffic_class: rng.next_u64() as u8,
            flow_label: (rng.next_u64() & 0xf_ffff) as u32,
            hop_limit: 1 + rng.below(255) as u8,
        })
    };
    match net {
        Net::V4 => (v4(rng), [None, None]),
        Net::V6 => (v6(rng), [None, None]),
        Net::V4Vlan => (v4(rng), [Some(vlan(rng, 0x8100)), None]),
        Net::V6QinQ => (v6(rng), [Some(vlan(rng, 0x88a8)), Some(vlan(rng, 0x8100))]),
        Net::RoceV1 => {
            let mut sgid = ipv6(rng);
            let mut dgid = ipv6(rng);
            sgid[..2].copy_from_slice(&[0xfe, 0x80]);
            dgid[..2].copy_from_slice(&[0xfe, 0x80]);
            let grh = GrhRepr {
                ipver: 6,
                tclass: rng.next_u64() as u8,
                flow_label: (rng.next_u64() & 0xf_ffff) as u32,
                paylen: 0,
                nxthdr: 0x1b,
                hoplmt: 1 + rng.below(255) as u8,
                sgid,
                dgid,
            };
            (Network::RoceV1(grh), [None, None])
        }
    }
}

/// Random values for every extended header the opcode carries (reserved fields zero).
fn random_headers(rng: &mut Rng, info: &OpcodeInfo) -> ExtHeaders {
    let mut h = ExtHeaders::default();
    for eh in info.headers {
        match eh {
            ExtHeader::Rdeth => h.rdeth = Some(RdethRepr { reserved: 0, eecnxt: rng.u24() }),
            ExtHeader::Deth => {
                let qkey = if bit(rng) { rng.next_u64() as u32 } else { 0x1111_1111 };
                h.deth = Some(DethRepr { qkey, reserved: 0, src_qp: rng.u24() });
            }
            ExtHeader::Xrceth => h.xrceth = Some(XrcethRepr { reserved: 0, xrcsrq: rng.u24() }),
            ExtHeader::Reth => {
                h.reth = Some(RethRepr {
                    va: rng.next_u64(),
                    rkey: rng.next_u64() as u32,
                    dma_len: rng.next_u64() as u32,
                });
            }
            ExtHeader::AtomicEth => {
                h.atomic_eth = Some(AtomicEthRepr {
                    va: rng.next_u64(),
                    rkey: rng.next_u64() as u32,
                    swap_add: rng.next_u64(),
                    compare: rng.next_u64(),
                });
            }
            ExtHeader::Aeth => {
                h.aeth = Some(AethRepr { syndrome: rng.next_u64() as u8, msn: rng.u24() });
            }
            ExtHeader::AtomicAckEth => {
                h.atomic_ack_eth = Some(AtomicAckEthRepr { orig: rng.next_u64() })
            }
            ExtHeader::ImmDt => h.immdt = Some(ImmDtRepr { data: rng.next_u64() as u32 }),
            ExtHeader::Ieth => h.ieth = Some(IethRepr { rkey: rng.next_u64() as u32 }),
            ExtHeader::Feth => {
                h.feth = Some(FethRepr {
                    reserved: 0,
                    selectivity: rng.below(4) as u8,
                    placement: rng.below(16) as u8,
                });
            }
        }
    }
    h
}

/// A payload length the opcode allows: PMTU-sized for FIRST / MIDDLE, 0 or 1 to 300 bytes
/// (every PadCnt) for LAST / ONLY.
fn payload_len(rng: &mut Rng, info: &OpcodeInfo) -> usize {
    match info.payload {
        PayloadRule::Empty => 0,
        PayloadRule::Pmtu => [256, 512, 1024][rng.below(3) as usize],
        PayloadRule::OneToPmtu => 1 + rng.below(300) as usize,
        PayloadRule::ZeroToPmtu => rng.below(301) as usize,
        PayloadRule::Exactly(n) => usize::from(n),
    }
}

/// Random BTH values: flags, P_Key, DestQP, PSN; now and then a non-zero TVer or reserved
/// bits (decoded all the same by both tools).
fn random_bth(rng: &mut Rng, opcode: u8) -> BthRepr {
    let mut dest_qp = rng.u24();
    if dest_qp == 1 {
        dest_qp = 2; // QP1 would make the payload a MAD
    }
    BthRepr {
        opcode,
        se: bit(rng),
        migreq: bit(rng),
        padcnt: 0,
        tver: if rng.below(8) == 0 { 1 + rng.below(15) as u8 } else { 0 },
        pkey: rng.next_u64() as u16,
        fecn: bit(rng),
        becn: bit(rng),
        resv6: if rng.below(8) == 0 { rng.below(64) as u8 } else { 0 },
        dest_qp,
        ackreq: bit(rng),
        resv7: if rng.below(8) == 0 { rng.below(128) as u8 } else { 0 },
        psn: rng.u24(),
    }
}

/// Emits one frame over `net` with UDP ports `(source, destination)`, random MACs.
fn push(
    t: &mut Trace,
    rng: &mut Rng,
    net: Net,
    (sport, port): (u16, u16),
    bth: BthRepr,
    headers: ExtHeaders,
    payload: &[u8],
) {
    let (network, vlans) = network(rng, net);
    let mut b = FrameBuilder::new(network, bth);
    b.eth_src = [0x02, 0, 0, 0, 0x01, rng.next_u64() as u8];
    b.eth_dst = [0x02, 0, 0, 0, 0x02, rng.next_u64() as u8];
    b.vlans = vlans;
    b.udp_sport = sport;
    b.udp_dport = port;
    b.headers = headers;
    b.payload = payload;
    t.push(&b);
}

/// A flow-entropy source port as NICs pick them, in the range tshark does not misread.
fn entropy_port(rng: &mut Rng) -> u16 {
    0xc000 | rng.below(0x4000) as u16
}

/// `per_opcode` frames of every opcode of the table, the network layers in turn, random values.
fn gen_opcodes(rng: &mut Rng, port: u16, per_opcode: usize) -> Trace {
    let mut t = Trace::new();
    for info in OPCODES {
        for k in 0..per_opcode {
            // RoCEv1 has no UDP port: the other-port capture keeps to IPv4 and IPv6.
            let net = if port == ROCE_PORT { NETS[k % NETS.len()] } else { NETS[k % 2] };
            let bth = random_bth(rng, info.opcode);
            let headers = random_headers(rng, info);
            let n = payload_len(rng, info);
            let payload = if info.opcode == 0x81 { vec![0; n] } else { bytes(rng, n) };
            let sport = entropy_port(rng);
            push(&mut t, rng, net, (sport, port), bth, headers, &payload);
        }
    }
    t
}

/// RoCE frames from well-known low UDP source ports: tshark tries the lower port first and
/// takes some of them for DNS, TFTP, NTP, ... (the random-source-port fault, made on purpose).
fn gen_source_ports(rng: &mut Rng) -> Trace {
    let mut t = Trace::new();
    for sport in [53u16, 67, 69, 123, 137, 161, 500, 514, 1900, 4790, 5353, 0xc000, 0xffff] {
        for opcode in [0x04u8, 0x11] {
            let info = lookup_opcode(opcode).unwrap();
            let bth = random_bth(rng, opcode);
            let headers = random_headers(rng, info);
            let n = payload_len(rng, info);
            let payload = bytes(rng, n);
            push(&mut t, rng, Net::V4, (sport, ROCE_PORT), bth, headers, &payload);
        }
    }
    t
}

fn gid(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    }
}

fn random_path(rng: &mut Rng, local: IpAddr, remote: IpAddr) -> roce_parser::CmPath {
    roce_parser::CmPath {
        local_lid: rng.next_u64() as u16,
        remote_lid: rng.next_u64() as u16,
        local_gid: gid(local),
        remote_gid: gid(remote),
        flow_label: (rng.next_u64() & 0xf_ffff) as u32,
        packet_rate: rng.below(64) as u8,
        traffic_class: rng.next_u64() as u8,
        hop_limit: rng.next_u64() as u8,
        sl: rng.below(16) as u8,
        subnet_local: bit(rng),
        local_ack_timeout: rng.below(32) as u8,
    }
}

fn random_ip(rng: &mut Rng, v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(ipv6(rng)))
    } else {
        IpAddr::V4(Ipv4Addr::from(ipv4(rng)))
    }
}

/// A UD SEND to QP1 carrying `msg` as a MAD, between two random hosts.
fn push_mad(t: &mut Trace, rng: &mut Rng, v6: bool, msg: &CmMessage<'_>) {
    let mut mad = [0u8; MAD_LEN];
    msg.emit_mad(rng.next_u64(), &mut mad).unwrap();
    let a = Endpoint::new(random_ip(rng, v6), 1);
    let b = Endpoint::new(random_ip(rng, v6), 1);
    let mut bth =
        BthRepr { opcode: 0x64, pkey: 0xffff, dest_qp: 1, psn: rng.u24(), ..Default::default() };
    bth.migreq = true;
    let headers = ExtHeaders {
        deth: Some(DethRepr { qkey: GSI_QKEY, reserved: 0, src_qp: 1 }),
        ..Default::default()
    };
    t.push(&conn::frame(&a, &b, bth, headers, &mad, 2));
}

/// CM as RDMA-CM runs it (REQ, REP, RTU, traffic both ways, DREQ, DREP) over IPv4 and IPv6,
/// then CM messages with random values in every field.
fn gen_cm(rng: &mut Rng) -> Trace {
    let mut t = Trace::new();
    for (k, v6) in [false, true].into_iter().enumerate() {
        let a = Endpoint::new(random_ip(rng, v6), rng.u24());
        let b = Endpoint::new(random_ip(rng, v6), rng.u24());
        let mut c = RcConn::new(a, b, 1024, rng.u24(), rng.u24());
        if k == 1 {
            c = c.uc();
        }
        let mut cm = conn::Cm::new(rng.next_u64(), (rng.next_u64() as u32, rng.next_u64() as u32));
        cm.connect(&mut t, &c, 7471 + k as u16);
        c.send_or_write(&mut t, true, false, 3000, Some(0x1234_5678));
        c.send_or_write(&mut t, false, true, 700, None);
        if k == 0 {
            c.read(&mut t, true, 2500);
            c.atomic(&mut t, false, true);
        }
        cm.disconnect(&mut t, &c);
    }
    for k in 0..6 {
        let v6 = k % 2 == 1;
        let (src, dst) = (random_ip(rng, v6), random_ip(rng, v6));
        let rdma = k < 4;
        let pd = if rdma {
            let mut pd = RdmaCmIpHeader::new(SocketAddr::new(src, rng.next_u64() as u16), dst)
                .to_bytes()
                .to_vec();
            pd.extend(bytes(rng, 56));
            pd
        } else {
            bytes(rng, 92)
        };
        let space = [PortSpace::Tcp, PortSpace::Udp, PortSpace::Ib, PortSpace::Tcp][k % 4];
        let service_id =
            if rdma { rdma_cm_service_id(space, rng.next_u64() as u16) } else { rng.next_u64() };
        let alternate = if k % 3 == 0 {
            roce_parser::CmPath {
                local_lid: 0,
                remote_lid: 0,
                local_gid: [0; 16],
                remote_gid: [0; 16],
                ..random_path(rng, src, dst)
            }
        } else {
            random_path(rng, dst, src)
        };
        let req = ReqRepr {
            local_comm_id: rng.next_u64() as u32,
            service_id,
            local_ca_guid: rng.next_u64(),
            local_qkey: rng.next_u64() as u32,
            local_qpn: rng.u24(),
            responder_resources: rng.next_u64() as u8,
            local_eecn: rng.u24(),
            initiator_depth: rng.next_u64() as u8,
            remote_eecn: rng.u24(),
            remote_cm_response_timeout: rng.below(32) as u8,
            transport_service_type: [
                roce_parser::TransportServiceType::Rc,
                roce_parser::TransportServiceType::Uc,
                roce_parser::TransportServiceType::Xrc,
            ][k % 3],
            end_to_end_flow_control: bit(rng),
            starting_psn: rng.u24(),
            local_cm_response_timeout: rng.below(32) as u8,
            retry_count: rng.below(8) as u8,
            pkey: rng.next_u64() as u16,
            path_mtu: 1 + rng.below(5) as u8,
            rdc_exists: bit(rng),
            rnr_retry_count: rng.below(8) as u8,
            max_cm_retries: rng.below(16) as u8,
            srq: bit(rng),
            extended_transport_type: if k % 3 == 2 { 1 } else { 0 },
            primary_path: random_path(rng, src, dst),
            alternate_path: alternate,
            private_data: &pd,
        };
        push_mad(&mut t, rng, v6, &CmMessage::Req(req));
        let rep_pd = bytes(rng, 196);
        let rep = RepRepr {
            local_comm_id: rng.next_u64() as u32,
            remote_comm_id: req.local_comm_id,
            local_qkey: rng.next_u64() as u32,
            local_qpn: rng.u24(),
            local_eecn: rng.u24(),
            starting_psn: rng.u24(),
            responder_resources: rng.next_u64() as u8,
            initiator_depth: rng.next_u64() as u8,
            target_ack_delay: rng.below(32) as u8,
            failover_accepted: rng.below(3) as u8,
            end_to_end_flow_control: bit(rng),
            rnr_retry_count: rng.below(8) as u8,
            srq: bit(rng),
            local_ca_guid: rng.next_u64(),
            private_data: &rep_pd,
        };
        push_mad(&mut t, rng, v6, &CmMessage::Rep(rep));
        let ids = (rng.next_u64() as u32, rng.next_u64() as u32);
        push_mad(&mut t, rng, v6, &CmMessage::Rtu(RtuRepr::new(ids.0, ids.1)));
        let ari = bytes(rng, 72);
        let rej_pd = bytes(rng, 148);
        let rej = RejRepr {
            local_comm_id: ids.1,
            remote_comm_id: ids.0,
            message_rejected: MessageRef::from_bits(rng.below(3) as u8),
            reject_info_length: rng.below(72) as u8,
            reason: RejectReason::from_u16(1 + rng.below(35) as u16),
            ari: &ari,
            private_data: &rej_pd,
        };
        push_mad(&mut t, rng, v6, &CmMessage::Rej(rej));
        let mra = MraRepr {
            local_comm_id: ids.0,
            remote_comm_id: ids.1,
            message_mraed: MessageRef::from_bits(rng.below(3) as u8),
            service_timeout: rng.below(32) as u8,
            private_data: &[],
        };
        push_mad(&mut t, rng, v6, &CmMessage::Mra(mra));
        let remote_qpn = rng.u24();
        push_mad(&mut t, rng, v6, &CmMessage::Dreq(DreqRepr::new(ids.0, ids.1, remote_qpn)));
        push_mad(&mut t, rng, v6, &CmMessage::Drep(DrepRepr::new(ids.1, ids.0)));
    }
    t
}

// ---------------------------------------------------------------------------------------------
// Running the two tools
// ---------------------------------------------------------------------------------------------

/// Every tshark field the comparison reads, in `-e` order.
const TSHARK_FIELDS: &[&str] = &[
    "frame.number",
    "frame.protocols",
    "_ws.malformed",
    "frame.len",
    "frame.cap_len",
    "frame.time_epoch",
    "infiniband.lrh.vl",
    "infiniband.lrh.lver",
    "infiniband.lrh.sl",
    "infiniband.lrh.reserved2",
    "infiniband.lrh.lnh",
    "infiniband.lrh.dlid",
    "infiniband.lrh.reserved5",
    "infiniband.lrh.pktlen",
    "infiniband.lrh.slid",
    "infiniband.variant.crc",
    "eth.src",
    "eth.dst",
    "eth.type",
    "eth.len",
    "ieee8021ad.priority",
    "ieee8021ad.dei",
    "ieee8021ad.id",
    "ieee8021ah.etype",
    "vlan.priority",
    "vlan.dei",
    "vlan.id",
    "vlan.etype",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.ttl",
    "ip.proto",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "ipv6.hlim",
    "ipv6.flow",
    "ipv6.nxt",
    "ipv6.hopopts.nxt",
    "ipv6.dstopts.nxt",
    "ipv6.routing.nxt",
    "ipv6.fraghdr.nxt",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "infiniband.grh.ipver",
    "infiniband.grh.tclass",
    "infiniband.grh.flowlabel",
    "infiniband.grh.paylen",
    "infiniband.grh.nxthdr",
    "infiniband.grh.hoplmt",
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.reserved",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.reserved7",
    "infiniband.bth.psn",
    "infiniband.rdeth.eecnxt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.syndrome.opcode",
    "infiniband.aeth.syndrome.credit_count",
    "infiniband.aeth.syndrome.timer",
    "infiniband.aeth.syndrome.error_code",
    "infiniband.aeth.syndrome.reserved_value",
    "infiniband.aeth.msn",
    "infiniband.atomicacketh.origremdt",
    "infiniband.immdt",
    "infiniband.ieth",
    "infiniband.invariant.crc",
    "infiniband.vendor",
    "data.len",
    "infiniband.mad.baseversion",
    "infiniband.mad.mgmtclass",
    "infiniband.mad.classversion",
    "infiniband.mad.method",
    "infiniband.mad.status",
    "infiniband.mad.classspecific",
    "infiniband.mad.transactionid",
    "infiniband.mad.attributeid",
    "infiniband.mad.attributemodifier",
    "infiniband.cm.req",
    "infiniband.cm.req.serviceid",
    "infiniband.cm.req.serviceid.protocol",
    "infiniband.cm.req.serviceid.dport",
    "infiniband.cm.req.localcaguid",
    "infiniband.cm.req.localqkey",
    "infiniband.cm.req.localqpn",
    "infiniband.cm.req.responderres",
    "infiniband.cm.req.localeecn",
    "infiniband.cm.req.remoteeecn",
    "infiniband.cm.req.rdcexist",
    "infiniband.cm.req.ext_transport",
    "infiniband.cm.req.initdepth",
    "infiniband.cm.req.remoteresptout",
    "infiniband.cm.req.transpsvctype",
    "infiniband.cm.req.e2eflowctrl",
    "infiniband.cm.req.startpsn",
    "infiniband.cm.req.localresptout",
    "infiniband.cm.req.retrcount",
    "infiniband.cm.req.pkey",
    "infiniband.cm.req.pppmtu",
    "infiniband.cm.req.rnrretrcount",
    "infiniband.cm.req.maxcmretr",
    "infiniband.cm.req.srq",
    "infiniband.cm.req.prim_locallid",
    "infiniband.cm.req.prim_remotelid",
    "infiniband.cm.req.prim_localgid",
    "infiniband.cm.req.prim_remotegid",
    "infiniband.cm.req.prim_localgid_ipv4",
    "infiniband.cm.req.prim_remotegid_ipv4",
    "infiniband.cm.req.prim_flowlabel",
    "infiniband.cm.req.prim_pktrate",
    "infiniband.cm.req.prim_tfcclass",
    "infiniband.cm.req.prim_hoplim",
    "infiniband.cm.req.prim_sl",
    "infiniband.cm.req.prim_subnetlocal",
    "infiniband.cm.req.prim_localacktout",
    "infiniband.cm.req.alt_locallid",
    "infiniband.cm.req.alt_remotelid",
    "infiniband.cm.req.alt_localgid",
    "infiniband.cm.req.alt_remotegid",
    "infiniband.cm.req.alt_flowlabel",
    "infiniband.cm.req.alt_pktrate",
    "infiniband.cm.req.alt_tfcclass",
    "infiniband.cm.req.alt_hoplim",
    "infiniband.cm.req.alt_sl",
    "infiniband.cm.req.alt_subnetlocal",
    "infiniband.cm.req.alt_localacktout",
    "infiniband.cm.req.ip_cm.ipv",
    "infiniband.cm.req.ip_cm.sport",
    "infiniband.cm.req.ip_cm.sip4",
    "infiniband.cm.req.ip_cm.dip4",
    "infiniband.cm.req.ip_cm.sip6",
    "infiniband.cm.req.ip_cm.dip6",
    "infiniband.cm.rep",
    "infiniband.cm.rep.remotecommid",
    "infiniband.cm.rep.localqkey",
    "infiniband.cm.rep.localqpn",
    "infiniband.cm.rep.localeecn",
    "infiniband.cm.rep.startpsn",
    "infiniband.cm.rep.respres",
    "infiniband.cm.rep.initdepth",
    "infiniband.cm.rep.tgtackdelay",
    "infiniband.cm.rep.failoveracc",
    "infiniband.cm.rep.e2eflowctrl",
    "infiniband.cm.rep.rnrretrcount",
    "infiniband.cm.rep.srq",
    "infiniband.cm.rep.localcaguid",
    "infiniband.cm.rtu.localcommid",
    "infiniband.cm.rtu.remotecommid",
    "infiniband.cm.rej.localcommid",
    "infiniband.cm.rej.remotecommid",
    "infiniband.cm.rej.msgrej",
    "infiniband.cm.rej.rejinfolen",
    "infiniband.cm.rej.reason",
    "infiniband.cm.dreq.localcommid",
    "infiniband.cm.dreq.remotecommid",
    "infiniband.cm.req.remoteqpneecn",
    "infiniband.cm.drsp.localcommid",
    "infiniband.cm.drsp.remotecommid",
];

/// Separates the occurrences of a field that appears more than once in a frame.
const AGGREGATOR: char = ';';

/// One tshark line: every field's occurrences, indexed like TSHARK_FIELDS.
type Row = Vec<Vec<String>>;

struct Runs {
    tshark: Vec<Row>,
    tshark_time: Duration,
    ours: Vec<Value>,
    ours_time: Duration,
}

fn run_tshark(cap: &Cap) -> (Vec<Row>, Duration) {
    let start = Instant::now();
    let mut cmd = Command::new("tshark");
    cmd.arg("-n").arg("-r").arg(&cap.path);
    cmd.args(["--disable-protocol", "rpcordma", "-T", "fields", "-E", "header=n"]);
    cmd.args(["-E", "separator=/t", "-E", "occurrence=a", "-E", "quote=n"]);
    cmd.arg("-E").arg(format!("aggregator={AGGREGATOR}"));
    if cap.port != ROCE_PORT {
        cmd.arg("-d").arg(format!("udp.port=={},infiniband", cap.port));
    }
    for f in TSHARK_FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        cap.name,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows = text
        .lines()
        .map(|line| {
            let cols: Vec<Vec<String>> = line
                .split('\t')
                .map(|c| {
                    if c.is_empty() {
                        Vec::new()
                    } else {
                        c.split(AGGREGATOR).map(str::to_string).collect()
                    }
                })
                .collect();
            assert_eq!(cols.len(), TSHARK_FIELDS.len(), "tshark line of {}: {line}", cap.name);
            cols
        })
        .collect();
    (rows, elapsed)
}

fn run_ours(cap: &Cap) -> (Vec<Value>, Duration) {
    let start = Instant::now();
    let mut cmd = Command::new(BIN);
    cmd.args(["dissect", "--format", "jsonl"]).arg(&cap.path);
    if cap.port != ROCE_PORT {
        cmd.args(["--port", &cap.port.to_string()]);
    }
    let out = cmd.output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "roce-inspect dissect failed on {}: {}",
        cap.name,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let frames = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (frames, elapsed)
}

/// Both tools on one capture, one after the other, each timed.
fn run_both(cap: &Cap) -> Runs {
    let (tshark, tshark_time) = run_tshark(cap);
    let (ours, ours_time) = run_ours(cap);
    Runs { tshark, tshark_time, ours, ours_time }
}

/// `f` over every capture, on as many threads as there are cores; results in capture order.
fn par_map<T: Send>(caps: &[Cap], f: impl Fn(&Cap) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<std::sync::Mutex<Option<T>>> =
        caps.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(cap) = caps.get(i) else { break };
                *out[i].lock().unwrap() = Some(f(cap));
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap().unwrap()).collect()
}

fn ours_only(cap: &Cap) -> Vec<Value> {
    run_ours(cap).0
}

// ---------------------------------------------------------------------------------------------
// Values and their normalisation
// ---------------------------------------------------------------------------------------------

/// A field value as both tools give it, normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
enum V {
    N(u64),
    S(String),
}

impl fmt::Display for V {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            V::N(n) if *n > 9 => write!(f, "{n} ({n:#x})"),
            V::N(n) => write!(f, "{n}"),
            V::S(s) => write!(f, "{s}"),
        }
    }
}

/// A tshark number: hex with 0x, else decimal; booleans as 1 / 0.
fn t_num(s: &str) -> Option<V> {
    let n = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()?
    } else {
        match s {
            "True" => 1,
            "False" => 0,
            _ => s.parse().ok()?,
        }
    };
    Some(V::N(n))
}

/// A tshark byte string (ImmDt, IETH: FT_BYTES) as a big-endian number.
fn t_bytes_num(s: &str) -> Option<V> {
    let h: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (h.len() <= 16 && !h.is_empty()).then(|| u64::from_str_radix(&h, 16).ok().map(V::N))?
}

/// An address: IPv4 stays IPv4, IPv6 is printed canonically.
fn t_ip(s: &str) -> Option<V> {
    s.parse::<IpAddr>().ok().map(|a| V::S(a.to_string()))
}

/// A GID: IPv4 becomes IPv4-mapped IPv6; FT_BYTES hex (32 digits) is read as 16 bytes.
fn t_gid(s: &str) -> Option<V> {
    if let Ok(a) = s.parse::<IpAddr>() {
        return Some(gid_v(a));
    }
    let h: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    if h.len() != 32 {
        return None;
    }
    let n = u128::from_str_radix(&h, 16).ok()?;
    Some(V::S(Ipv6Addr::from(n).to_string()))
}

fn gid_v(a: IpAddr) -> V {
    let v6 = match a {
        IpAddr::V4(v) => v.to_ipv6_mapped(),
        IpAddr::V6(v) => v,
    };
    V::S(v6.to_string())
}

fn t_mac(s: &str) -> Option<V> {
    Some(V::S(s.to_ascii_lowercase()))
}

/// A JSON number, boolean or `"0x…"` 64-bit identifier (the JSON contract) as a number.
fn j_num(v: &Value) -> Option<V> {
    j_u64(v).map(V::N)
}

fn j_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::Bool(b) => Some(u64::from(*b)),
        Value::String(s) if s.len() == 18 => u64::from_str_radix(s.strip_prefix("0x")?, 16).ok(),
        _ => None,
    }
}

fn j_ip(v: &Value) -> Option<V> {
    v.as_str()?.parse::<IpAddr>().ok().map(|a| V::S(a.to_string()))
}

fn j_gid(v: &Value) -> Option<V> {
    v.as_str()?.parse::<IpAddr>().ok().map(gid_v)
}

fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for k in path.split('.') {
        cur = cur.get(k)?;
        if cur.is_null() {
            return None;
        }
    }
    Some(cur)
}

fn num_at(v: &Value, path: &str) -> Option<u64> {
    at(v, path).and_then(j_u64)
}

fn str_at<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// Known tshark faults
// ---------------------------------------------------------------------------------------------

/// Where tshark 4.0 is wrong, by rule. A disagreement is excused only when its frame and field
/// fit one of these exactly; the frame is then counted under the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Fault {
    /// Opcode 0x81: tshark knows no CNP. It decodes the BTH, then shows the rest as an
    /// "unknown header sequence" (no ICRC, no payload).
    Cnp,
    /// Opcodes 0x40-0x5F: tshark mis-parses the RD range (RDETH / DETH at the wrong offsets,
    /// ACK and RESYNC without their RDETH, atomics malformed); Mellanox DC reuses the range
    /// with headers of its own. The BTH agrees; everything after it is excused.
    RdRange,
    /// FLUSH (0x1C, 0xBC) and ATOMIC_WRITE (0x1D, 0xBD), IBTA 1.5: unknown to tshark 4.0,
    /// which decodes the BTH and shows the rest as an unknown header sequence.
    Ibta15,
    /// Reserved and manufacturer-specific opcodes (outside the table): both tools decode the
    /// BTH only, but tshark shows all the rest as unknown data where we read the ICRC, which
    /// every RoCE packet ends with, whatever its opcode.
    UnknownOpcode,
    /// A MAD (UD to QP1) of a management class tshark 4.0 has no layout for (e.g. the reserved
    /// class 0): tshark decodes the MAD header, then throws "Malformed Packet" and shows no
    /// ICRC.
    MadMalformed,
    /// XRC (0xA0-0xBF): tshark 4.0 names the opcodes but has no header layout for any of them
    /// (no XRCETH, not even for responses); it decodes the BTH and shows the rest as an
    /// unknown header sequence.
    Xrc,
    /// UDP destination port 4791 (or the capture's port) but tshark took the frame for another
    /// UDP protocol, picked by the random source port, and decoded no InfiniBand at all; we
    /// decode it (opcode of the table, ICRC ok).
    SourcePort,
    /// A frame shorter than its IP / UDP lengths (truncated, captured length = wire length):
    /// tshark takes the last four captured bytes, payload, for the ICRC and counts only the
    /// captured payload; we report the ICRC as not captured and the payload length the
    /// headers give.
    Truncated,
    /// tshark 4.0 misreads two fields of each CM REQ path: the Flow Label from 3 bytes instead
    /// of 4 (our value >> 8) and the Packet Rate from the Flow Label's first byte (bits 5..0 of
    /// REQ path byte 36 instead of 39).
    CmPathFields,
}

impl Fault {
    fn reason(self) -> &'static str {
        match self {
            Fault::Cnp => "CNP (0x81) unknown to tshark 4.0: BTH only, no ICRC, no payload",
            Fault::RdRange => "RD/DC opcode range 0x40-0x5F mis-parsed by tshark after the BTH",
            Fault::Ibta15 => "FLUSH / ATOMIC_WRITE (IBTA 1.5) unknown to tshark 4.0: BTH only",
            Fault::UnknownOpcode => {
                "reserved / vendor opcode: tshark shows everything after the BTH as unknown data, no ICRC"
            }
            Fault::MadMalformed => {
                "MAD of a class tshark 4.0 cannot decode: Malformed Packet after the MAD header, no ICRC"
            }
            Fault::Xrc => "XRC (0xA0-0xBF): tshark 4.0 has no XRC header layouts: BTH only",
            Fault::SourcePort => "random UDP source port: tshark picked another protocol, decoded no InfiniBand",
            Fault::Truncated => "truncated frame: tshark reads payload bytes as the ICRC and counts the captured payload only",
            Fault::CmPathFields => "tshark 4.0 misreads the CM REQ path Flow Label (3 bytes) and Packet Rate (wrong byte)",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

/// One disagreement: a field both should decode, with each tool's value ("-" for none).
#[derive(Clone, Debug)]
struct Diff {
    field: String,
    ours: Option<V>,
    tshark: Option<String>,
}

impl Diff {
    fn tshark_missing(&self) -> bool {
        self.tshark.is_none()
    }
}

struct Disagreement {
    capture: String,
    frame: u64,
    field: String,
    ours: String,
    tshark: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frame {}: {}: ours {}, tshark {}",
            self.capture, self.frame, self.field, self.ours, self.tshark
        )
    }
}

/// Counts for one capture.
#[derive(Default)]
struct Stats {
    frames: u64,
    /// Frames with at least one field compared.
    frames_compared: u64,
    fields: u64,
    /// Frames where tshark decoded InfiniBand.
    ib_frames: u64,
    faults: BTreeMap<Fault, u64>,
    /// Protocols tshark picked on the SourcePort frames.
    source_port_protocols: BTreeMap<String, u64>,
    /// Native InfiniBand frames (ERF): compared from their LRH on.
    native_ib: u64,
    cm_messages: u64,
    payload_taken: u64,
    /// Per field (our name): (compared, agreed).
    by_field: BTreeMap<String, (u64, u64)>,
    /// Our field name -> the tshark fields it was compared with.
    mapping: BTreeMap<String, BTreeSet<String>>,
    disagreements: Vec<Disagreement>,
    /// The disagreements a fault explains, for ROCE_TSHARK_DUMP.
    excused: Vec<(Fault, Disagreement)>,
}

/// Compares the fields of one frame.
struct Cmp<'a> {
    row: &'a Row,
    idx: &'a HashMap<&'static str, usize>,
    fields: u64,
    /// Fields compared, by our name.
    names: Vec<String>,
    diffs: Vec<Diff>,
    /// Our field name -> the tshark fields it was compared with (docs/json.md's table).
    mapping: &'a mut BTreeMap<String, BTreeSet<String>>,
}

/// Which occurrences of a tshark field count.
#[derive(Clone, Copy)]
enum Occ {
    /// Every occurrence must equal ours (tshark repeats some fields, e.g. ImmDt).
    All,
    /// The first (the outer header when tshark decodes an inner one too, as in ICMP errors).
    First,
}

impl<'a> Cmp<'a> {
    fn t(&self, field: &str) -> &'a [String] {
        let i = *self.idx.get(field).unwrap_or_else(|| panic!("{field} is not in TSHARK_FIELDS"));
        &self.row[i]
    }

    fn has(&self, field: &str) -> bool {
        !self.t(field).is_empty()
    }

    /// Compares `ours` with tshark's `tfield` parsed by `parse`; `name` is how the report names
    /// the field. Nothing is counted when neither tool has the field.
    fn cmp(
        &mut self,
        name: &str,
        tfield: &str,
        ours: Option<V>,
        parse: fn(&str) -> Option<V>,
        occ: Occ,
    ) {
        let ts = self.t(tfield);
        let ts: &[String] = match occ {
            Occ::All => ts,
            Occ::First => ts.get(..1).unwrap_or(&[]),
        };
        if ours.is_none() && ts.is_empty() {
            return;
        }
        self.fields += 1;
        self.names.push(name.to_string());
        self.map(name, tfield);
        let agree = ours.is_some() && !ts.is_empty() && ts.iter().all(|s| parse(s) == ours);
        if !agree {
            self.diffs.push(Diff {
                field: name.to_string(),
                ours,
                tshark: (!ts.is_empty()).then(|| ts.join(";")),
            });
        }
    }

    /// Compares a whole list (VLAN tags, outermost first): tshark's the occurrences of
    /// `tfields` one field after the other, numbers.
    fn cmp_list(&mut self, name: &str, tfields: &[&str], ours: Vec<V>) {
        let ts: Vec<String> = tfields.iter().flat_map(|f| self.t(f).iter().cloned()).collect();
        self.cmp_values(name, &tfields.join(", "), ts, ours);
    }

    /// Records that our `name` was compared with tshark's `tfield`.
    fn map(&mut self, name: &str, tfield: &str) {
        if !self.mapping.get(name).is_some_and(|s| s.contains(tfield)) {
            self.mapping.entry(name.to_string()).or_default().insert(tfield.to_string());
        }
    }

    /// Compares tshark's numbers `ts` with `ours`, in order.
    fn cmp_values(&mut self, name: &str, tfields: &str, ts: Vec<String>, ours: Vec<V>) {
        if ours.is_empty() && ts.is_empty() {
            return;
        }
        self.fields += 1;
        self.names.push(name.to_string());
        self.map(name, tfields);
        let parsed: Vec<Option<V>> = ts.iter().map(|s| t_num(s)).collect();
        let ours_opt: Vec<Option<V>> = ours.iter().cloned().map(Some).collect();
        if parsed != ours_opt {
            let show = |v: &[V]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(";");
            self.diffs.push(Diff {
                field: name.to_string(),
                ours: (!ours.is_empty()).then(|| V::S(show(&ours))),
                tshark: (!ts.is_empty()).then(|| ts.join(";")),
            });
        }
    }

    /// `ours` from the frame's JSON at `path` (a number or boolean).
    fn num(&mut self, name: &str, tfield: &str, o: &Value, path: &str) {
        let ours = at(o, path).and_then(j_num);
        self.cmp(name, tfield, ours, t_num, Occ::All);
    }
}

/// tshark's opcode, or ours.
fn frame_opcode(c: &Cmp<'_>, o: &Value) -> Option<u64> {
    num_at(o, "roce.bth.opcode")
        .or_else(|| c.t("infiniband.bth.opcode").first().and_then(|s| s.parse().ok()))
}

fn compare_frame(c: &mut Cmp<'_>, o: &Value) {
    // The frame. tshark takes an ERF record's header as a pseudo-header, outside the frame's
    // lengths: the native InfiniBand captures' records have no extension header, so tshark's
    // lengths are ours less the 16-byte record header.
    let lrh = at(o, "lrh");
    let erf =
        if lrh.is_some() && c.t("frame.protocols").first().is_some_and(|p| p.starts_with("erf")) {
            roce_capture::ERF_HEADER_LEN as u64
        } else {
            0
        };
    let less = |v: Option<V>| match v {
        Some(V::N(n)) => Some(V::N(n - erf)),
        v => v,
    };
    c.cmp("frame.len", "frame.len", less(at(o, "len").and_then(j_num)), t_num, Occ::All);
    c.cmp("frame.caplen", "frame.cap_len", less(at(o, "caplen").and_then(j_num)), t_num, Occ::All);
    // Native InfiniBand: the LRH, and the VCRC (tshark's = ours byte-swapped, as the ICRC).
    if let Some(l) = lrh {
        c.num("lrh.vl", "infiniband.lrh.vl", l, "vl");
        c.num("lrh.lver", "infiniband.lrh.lver", l, "lver");
        c.num("lrh.sl", "infiniband.lrh.sl", l, "sl");
        c.num("lrh.resv2", "infiniband.lrh.reserved2", l, "resv2");
        c.num("lrh.lnh", "infiniband.lrh.lnh", l, "lnh");
        c.num("lrh.dlid", "infiniband.lrh.dlid", l, "dlid");
        c.num("lrh.resv5", "infiniband.lrh.reserved5", l, "resv5");
        c.num("lrh.pktlen", "infiniband.lrh.pktlen", l, "pktlen");
        c.num("lrh.slid", "infiniband.lrh.slid", l, "slid");
        let vcrc = num_at(o, "vcrc.value").map(|v| V::N(u64::from((v as u16).swap_bytes())));
        c.cmp("vcrc.value", "infiniband.variant.crc", vcrc, t_num, Occ::All);
    }
    // Both write decimal seconds with nine digits (ours as a string: the JSON contract).
    let ts = str_at(o, "ts").map(|s| V::S(s.to_string()));
    c.cmp("frame.ts", "frame.time_epoch", ts, |s| Some(V::S(s.to_string())), Occ::First);

    // A frame from a switch mirror or an overlay: tshark's first occurrences are the
    // outermost tunnel's layers, compared with ours (`encap[0]`); the inner frame's are
    // compared with the plain capture's by cli/tests/encap.rs, and with tshark's there too.
    // The VLAN lists and the EtherType chain, which tshark gives for every layer at once,
    // are compared on frames captured on the host only.
    let tunnelled = o.get("encap").is_some();
    {
        let outer;
        let o = match o.get("encap").and_then(|e| e.get(0)) {
            Some(e) => {
                outer = e.clone();
                &outer
            }
            None => o,
        };
        // Ethernet and VLAN tags. Our `eth.ethertype` is the type after the tags.
        if let Some(eth) = at(o, "eth") {
            c.cmp(
                "eth.src",
                "eth.src",
                eth.get("src").and_then(Value::as_str).map(|s| V::S(s.to_string())),
                t_mac,
                Occ::First,
            );
            c.cmp(
                "eth.dst",
                "eth.dst",
                eth.get("dst").and_then(Value::as_str).map(|s| V::S(s.to_string())),
                t_mac,
                Occ::First,
            );
            if !tunnelled {
                let tags = at(o, "vlan").and_then(Value::as_array).cloned().unwrap_or_default();
                let get = |k: &str| {
                    tags.iter().filter_map(|t| t.get(k).and_then(j_num)).collect::<Vec<_>>()
                };
                // tshark files an 802.1ad (S-)tag under ieee8021ad, an 802.1Q tag under vlan; the
                // S-tag is the outer one.
                c.cmp_list("vlan.pcp", &["ieee8021ad.priority", "vlan.priority"], get("pcp"));
                c.cmp_list("vlan.dei", &["ieee8021ad.dei", "vlan.dei"], get("dei"));
                c.cmp_list("vlan.vid", &["ieee8021ad.id", "vlan.id"], get("vid"));
                // The EtherType chain: the tags' TPIDs, then our `ethertype` (the type after the tags);
                // tshark's: eth.type (eth.len for an 802.3 length), then each tag's type field.
                let mut ours: Vec<V> =
                    tags.iter().filter_map(|t| t.get("tpid").and_then(j_num)).collect();
                ours.extend(eth.get("ethertype").and_then(j_num));
                let eth_type = c.t("eth.type").first().or_else(|| c.t("eth.len").first()).cloned();
                let mut chain: Vec<String> = eth_type.into_iter().collect();
                chain.extend(c.t("ieee8021ah.etype").iter().cloned());
                chain.extend(c.t("vlan.etype").iter().cloned());
                c.cmp_values(
                    "eth.type+vlan.tpid",
                    "eth.type (eth.len), ieee8021ah.etype, vlan.etype",
                    chain,
                    ours,
                );
            }
        }

        // IP and UDP (the outer headers: first occurrences).
        match num_at(o, "ip.version") {
            Some(4) => {
                c.cmp("ip.src", "ip.src", at(o, "ip.src").and_then(j_ip), t_ip, Occ::First);
                c.cmp("ip.dst", "ip.dst", at(o, "ip.dst").and_then(j_ip), t_ip, Occ::First);
                c.cmp(
                    "ip.dscp",
                    "ip.dsfield.dscp",
                    at(o, "ip.dscp").and_then(j_num),
                    t_num,
                    Occ::First,
                );
                c.cmp(
                    "ip.ecn",
                    "ip.dsfield.ecn",
                    at(o, "ip.ecn").and_then(j_num),
                    t_num,
                    Occ::First,
                );
                c.cmp("ip.ttl", "ip.ttl", at(o, "ip.ttl").and_then(j_num), t_num, Occ::First);
                c.cmp(
                    "ip.protocol",
                    "ip.proto",
                    at(o, "ip.protocol").and_then(j_num),
                    t_num,
                    Occ::First,
                );
            }
            Some(6) => {
                c.cmp("ip.src", "ipv6.src", at(o, "ip.src").and_then(j_ip), t_ip, Occ::First);
                c.cmp("ip.dst", "ipv6.dst", at(o, "ip.dst").and_then(j_ip), t_ip, Occ::First);
                c.cmp(
                    "ip.dscp",
                    "ipv6.tclass.dscp",
                    at(o, "ip.dscp").and_then(j_num),
                    t_num,
                    Occ::First,
                );
                c.cmp(
                    "ip.ecn",
                    "ipv6.tclass.ecn",
                    at(o, "ip.ecn").and_then(j_num),
                    t_num,
                    Occ::First,
                );
                c.cmp("ip.ttl", "ipv6.hlim", at(o, "ip.ttl").and_then(j_num), t_num, Occ::First);
                c.cmp(
                    "ip.flow_label",
                    "ipv6.flow",
                    at(o, "ip.flow_label").and_then(j_num),
                    t_num,
                    Occ::First,
                );
                // Our protocol is the one after any extension headers: tshark's first next-header
                // value, along the fixed header and the extension headers, that is not one.
                let chain = [
                    "ipv6.nxt",
                    "ipv6.hopopts.nxt",
                    "ipv6.dstopts.nxt",
                    "ipv6.routing.nxt",
                    "ipv6.fraghdr.nxt",
                ];
                let upper = chain
                    .iter()
                    .filter_map(|f| c.t(f).first())
                    .find(|v| !matches!(v.as_str(), "0" | "43" | "44" | "60"))
                    .cloned();
                let ours = at(o, "ip.protocol").and_then(j_num);
                c.cmp_values(
                "ip.protocol",
                "the first of ipv6.nxt, ipv6.{hopopts,dstopts,routing,fraghdr}.nxt that is no extension header",
                upper.into_iter().collect(),
                ours.into_iter().collect(),
            );
            }
            _ => {}
        }
        if at(o, "udp").is_some() {
            c.cmp(
                "udp.sport",
                "udp.srcport",
                at(o, "udp.sport").and_then(j_num),
                t_num,
                Occ::First,
            );
            c.cmp(
                "udp.dport",
                "udp.dstport",
                at(o, "udp.dport").and_then(j_num),
                t_num,
                Occ::First,
            );
            c.cmp("udp.len", "udp.length", at(o, "udp.len").and_then(j_num), t_num, Occ::First);
        }
    }

    let roce = at(o, "roce");
    let r = roce.unwrap_or(&Value::Null);
    // Frames neither tool takes for InfiniBand have nothing more to compare.
    if roce.is_none() && !c.has("infiniband.bth.opcode") {
        return;
    }

    // GRH (RoCEv1).
    c.num("grh.ipver", "infiniband.grh.ipver", r, "grh.ipver");
    c.num("grh.tclass", "infiniband.grh.tclass", r, "grh.tclass");
    c.num("grh.flow_label", "infiniband.grh.flowlabel", r, "grh.flow_label");
    c.num("grh.paylen", "infiniband.grh.paylen", r, "grh.paylen");
    c.num("grh.nxthdr", "infiniband.grh.nxthdr", r, "grh.nxthdr");
    c.num("grh.hoplmt", "infiniband.grh.hoplmt", r, "grh.hoplmt");
    c.cmp("grh.sgid", "infiniband.grh.sgid", at(r, "grh.sgid").and_then(j_ip), t_ip, Occ::All);
    c.cmp("grh.dgid", "infiniband.grh.dgid", at(r, "grh.dgid").and_then(j_ip), t_ip, Occ::All);

    // BTH.
    c.num("bth.opcode", "infiniband.bth.opcode", r, "bth.opcode");
    c.num("bth.se", "infiniband.bth.se", r, "bth.se");
    c.num("bth.migreq", "infiniband.bth.m", r, "bth.migreq");
    c.num("bth.padcnt", "infiniband.bth.padcnt", r, "bth.padcnt");
    c.num("bth.tver", "infiniband.bth.tver", r, "bth.tver");
    c.num("bth.pkey", "infiniband.bth.p_key", r, "bth.pkey");
    // BTH byte 4 (FECN, BECN, 6 reserved bits): tshark shows it as its first "reserved".
    let byte4 = at(r, "bth").map(|b| {
        let f = num_at(b, "fecn").unwrap_or(0);
        let be = num_at(b, "becn").unwrap_or(0);
        V::N(f << 7 | be << 6 | num_at(b, "resv6").unwrap_or(0))
    });
    c.cmp(
        "bth.fecn+becn+resv6",
        "infiniband.reserved",
        byte4,
        |s| u8::from_str_radix(s, 16).ok().map(|b| V::N(u64::from(b))),
        Occ::First,
    );
    c.num("bth.dest_qp", "infiniband.bth.destqp", r, "bth.dest_qp");
    c.num("bth.ackreq", "infiniband.bth.a", r, "bth.ackreq");
    c.num("bth.resv7", "infiniband.bth.reserved7", r, "bth.resv7");
    c.num("bth.psn", "infiniband.bth.psn", r, "bth.psn");

    // Extended headers.
    c.num("rdeth.eecnxt", "infiniband.rdeth.eecnxt", r, "rdeth.eecnxt");
    c.num("deth.qkey", "infiniband.deth.q_key", r, "deth.qkey");
    c.num("deth.src_qp", "infiniband.deth.srcqp", r, "deth.src_qp");
    // tshark files the AtomicETH VA and R_Key under the RETH fields.
    let (va, rkey) = if at(r, "atomiceth").is_some() {
        ("atomiceth.va", "atomiceth.rkey")
    } else {
        ("reth.va", "reth.rkey")
    };
    c.num(va, "infiniband.reth.va", r, va);
    c.num(rkey, "infiniband.reth.r_key", r, rkey);
    c.num("reth.dma_len", "infiniband.reth.dmalen", r, "reth.dma_len");
    c.num("atomiceth.swap_add", "infiniband.atomiceth.swapdt", r, "atomiceth.swap_add");
    c.num("atomiceth.compare", "infiniband.atomiceth.cmpdt", r, "atomiceth.compare");
    c.num("aeth.syndrome", "infiniband.aeth.syndrome", r, "aeth.syndrome");
    c.num("aeth.msn", "infiniband.aeth.msn", r, "aeth.msn");
    // The syndrome's type (bits 6..5) and value (bits 4..0: credits, RNR timer, NAK code or
    // reserved, in one of four tshark fields).
    let kind = match str_at(r, "aeth.kind") {
        Some("ack") => Some(0),
        Some("rnr_nak") => Some(1),
        Some("reserved") => Some(2),
        Some("nak") => Some(3),
        _ => None,
    };
    c.cmp("aeth.kind", "infiniband.aeth.syndrome.opcode", kind.map(V::N), t_num, Occ::All);
    let value: Vec<String> = ["credit_count", "timer", "error_code", "reserved_value"]
        .iter()
        .flat_map(|f| c.t(&format!("infiniband.aeth.syndrome.{f}")).iter().cloned())
        .collect();
    let ours = at(r, "aeth.value").and_then(j_num);
    c.cmp_values(
        "aeth.value",
        "infiniband.aeth.syndrome.{credit_count,timer,error_code,reserved_value}",
        value,
        ours.into_iter().collect(),
    );
    c.num("atomicacketh.orig", "infiniband.atomicacketh.origremdt", r, "atomicacketh.orig");
    c.cmp(
        "immdt.data",
        "infiniband.immdt",
        at(r, "immdt.data").and_then(j_num),
        t_bytes_num,
        Occ::All,
    );
    c.cmp(
        "ieth.rkey",
        "infiniband.ieth",
        at(r, "ieth.rkey").and_then(j_num),
        t_bytes_num,
        Occ::All,
    );

    // ICRC: tshark's is ours byte-swapped (big- vs little-endian read of the last 4 bytes).
    let icrc = num_at(r, "icrc.value").map(|v| V::N(u64::from((v as u32).swap_bytes())));
    c.cmp("icrc.value", "infiniband.invariant.crc", icrc, t_num, Occ::All);

    // Payload: tshark's data.len holds payload and pad, when the payload reaches the data
    // dissector (not a MAD, not taken by another dissector).
    let after_ib: Vec<&str> = c
        .t("frame.protocols")
        .first()
        .map(|p| p.split(':').skip_while(|x| *x != "infiniband").skip(1).collect())
        .unwrap_or_default();
    let taken = after_ib.iter().any(|p| *p != "data");
    let ib =
        c.t("frame.protocols").first().is_some_and(|p| p.split(':').any(|x| x == "infiniband"));
    if at(r, "cm").is_none() && !taken && (ib || roce.is_some() && !c.has("data.len")) {
        let total = num_at(r, "payload_len")
            .zip(num_at(r, "bth.padcnt"))
            .map(|(p, pad)| p + pad)
            .filter(|n| *n > 0)
            .map(V::N);
        c.cmp("payload_len+pad", "data.len", total, t_num, Occ::All);
    }

    compare_cm(c, r);
}

/// MAD header class / method / attribute codes of our names (only those we name exactly).
fn class_code(name: &str) -> Option<u64> {
    Some(match name {
        "SubnAdm" => 0x03,
        "PerfMgmt" => 0x04,
        "CM" => 0x07,
        _ => return None,
    })
}

fn method_code(name: &str) -> Option<u64> {
    Some(match name {
        "Get" => 0x01,
        "Set" => 0x02,
        "Send" => 0x03,
        "Trap" => 0x05,
        "Report" => 0x06,
        "GetResp" => 0x81,
        "ReportResp" => 0x86,
        _ => return None,
    })
}

fn attribute_code(name: &str) -> Option<u64> {
    Some(match name {
        "ClassPortInfo" => 0x01,
        "REQ" => 0x10,
        "MRA" => 0x11,
        "REJ" => 0x12,
        "REP" => 0x13,
        "RTU" => 0x14,
        "DREQ" => 0x15,
        "DREP" => 0x16,
        "SIDR_REQ" => 0x17,
        "SIDR_REP" => 0x18,
        "LAP" => 0x19,
        "APR" => 0x1a,
        _ => return None,
    })
}

fn compare_cm(c: &mut Cmp<'_>, r: &Value) {
    let Some(cm) = at(r, "cm") else {
        // tshark decoding CM where we do not would show up here.
        for f in ["infiniband.cm.req", "infiniband.cm.rep", "infiniband.mad.attributeid"] {
            c.cmp("cm (tshark decodes a MAD)", f, None, t_num, Occ::All);
        }
        return;
    };
    // The MAD header, by its codes (the names are checked against them where we name them).
    let code = |f: fn(&str) -> Option<u64>, k: &str| {
        cm.get(k).and_then(Value::as_str).and_then(f).map(V::N)
    };
    if let (Some(named), Some(raw)) = (code(class_code, "class"), num_at(cm, "class_code")) {
        assert_eq!(named, V::N(raw), "class name and code disagree: {cm}");
    }
    if let (Some(named), Some(raw)) = (code(method_code, "method"), num_at(cm, "method_code")) {
        assert_eq!(named, V::N(raw), "method name and code disagree: {cm}");
    }
    if let (Some(named), Some(raw)) =
        (code(attribute_code, "attribute"), num_at(cm, "attribute_id"))
    {
        assert_eq!(named, V::N(raw), "attribute name and ID disagree: {cm}");
    }
    c.num("cm.base_version", "infiniband.mad.baseversion", cm, "base_version");
    c.num("cm.class_code", "infiniband.mad.mgmtclass", cm, "class_code");
    c.num("cm.class_version", "infiniband.mad.classversion", cm, "class_version");
    c.num("cm.method_code", "infiniband.mad.method", cm, "method_code");
    c.num("cm.status", "infiniband.mad.status", cm, "status");
    c.num("cm.class_specific", "infiniband.mad.classspecific", cm, "class_specific");
    c.num("cm.transaction_id", "infiniband.mad.transactionid", cm, "transaction_id");
    c.num("cm.attribute_id", "infiniband.mad.attributeid", cm, "attribute_id");
    c.num("cm.attribute_modifier", "infiniband.mad.attributemodifier", cm, "attribute_modifier");
    let n = |c: &mut Cmp<'_>, name: &str, tf: &str, path: &str| {
        c.cmp(&format!("cm.{name}"), tf, at(cm, path).and_then(j_num), t_num, Occ::All);
    };
    match str_at(cm, "attribute") {
        Some("REQ") => {
            n(c, "local_comm_id", "infiniband.cm.req", "local_comm_id");
            // tshark shows an RDMA-CM service ID split (protocol, port), any other whole.
            let sid = num_at(cm, "service_id");
            if c.has("infiniband.cm.req.serviceid.protocol")
                || c.has("infiniband.cm.req.serviceid.dport")
            {
                c.cmp(
                    "cm.service_id>>16&0xff",
                    "infiniband.cm.req.serviceid.protocol",
                    sid.map(|s| V::N(s >> 16 & 0xff)),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    "cm.service_id&0xffff",
                    "infiniband.cm.req.serviceid.dport",
                    sid.map(|s| V::N(s & 0xffff)),
                    t_num,
                    Occ::All,
                );
            } else {
                c.cmp(
                    "cm.service_id",
                    "infiniband.cm.req.serviceid",
                    sid.map(V::N),
                    t_num,
                    Occ::All,
                );
            }
            n(c, "local_ca_guid", "infiniband.cm.req.localcaguid", "local_ca_guid");
            n(c, "local_qkey", "infiniband.cm.req.localqkey", "local_qkey");
            n(c, "local_qpn", "infiniband.cm.req.localqpn", "local_qpn");
            n(c, "responder_resources", "infiniband.cm.req.responderres", "responder_resources");
            n(c, "initiator_depth", "infiniband.cm.req.initdepth", "initiator_depth");
            n(c, "local_eecn", "infiniband.cm.req.localeecn", "local_eecn");
            n(c, "remote_eecn", "infiniband.cm.req.remoteeecn", "remote_eecn");
            n(c, "rdc_exists", "infiniband.cm.req.rdcexist", "rdc_exists");
            n(
                c,
                "extended_transport_type",
                "infiniband.cm.req.ext_transport",
                "extended_transport_type",
            );
            n(
                c,
                "remote_cm_response_timeout",
                "infiniband.cm.req.remoteresptout",
                "remote_cm_response_timeout",
            );
            let tst = match str_at(cm, "transport") {
                Some("RC") => Some(0),
                Some("UC") => Some(1),
                Some("RD") => Some(2),
                Some("XRC") => Some(3),
                _ => None,
            };
            if let Some(v) = tst {
                c.cmp(
                    "cm.transport",
                    "infiniband.cm.req.transpsvctype",
                    Some(V::N(v)),
                    t_num,
                    Occ::All,
                );
            }
            n(
                c,
                "end_to_end_flow_control",
                "infiniband.cm.req.e2eflowctrl",
                "end_to_end_flow_control",
            );
            n(c, "starting_psn", "infiniband.cm.req.startpsn", "starting_psn");
            n(
                c,
                "local_cm_response_timeout",
                "infiniband.cm.req.localresptout",
                "local_cm_response_timeout",
            );
            n(c, "retry_count", "infiniband.cm.req.retrcount", "retry_count");
            n(c, "pkey", "infiniband.cm.req.pkey", "pkey");
            // Our path MTU is in bytes, tshark's the code (1 = 256 ... 5 = 4096).
            if let Some(bytes) = num_at(cm, "pmtu") {
                let code = u64::from(bytes.trailing_zeros()) - 7;
                c.cmp(
                    "cm.pmtu(code)",
                    "infiniband.cm.req.pppmtu",
                    Some(V::N(code)),
                    t_num,
                    Occ::All,
                );
            }
            n(c, "rnr_retry_count", "infiniband.cm.req.rnrretrcount", "rnr_retry_count");
            n(c, "max_cm_retries", "infiniband.cm.req.maxcmretr", "max_cm_retries");
            n(c, "srq", "infiniband.cm.req.srq", "srq");
            for (p, t) in [("primary_path", "prim"), ("alternate_path", "alt")] {
                let path = at(cm, p);
                let empty = path.is_none();
                let pn = |k: &str| match path {
                    Some(x) => x.get(k).and_then(j_num),
                    None => Some(V::N(0)),
                };
                c.cmp(
                    &format!("cm.{p}.local_lid"),
                    &format!("infiniband.cm.req.{t}_locallid"),
                    pn("local_lid"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.remote_lid"),
                    &format!("infiniband.cm.req.{t}_remotelid"),
                    pn("remote_lid"),
                    t_num,
                    Occ::All,
                );
                for (k, tk) in [("local_gid", "localgid"), ("remote_gid", "remotegid")] {
                    let ours = match path {
                        Some(x) => x.get(k).and_then(j_gid),
                        None => Some(V::S(Ipv6Addr::UNSPECIFIED.to_string())),
                    };
                    let v4 = format!("infiniband.cm.req.{t}_{tk}_ipv4");
                    let tf = if t == "prim" && c.has(&v4) {
                        v4
                    } else {
                        format!("infiniband.cm.req.{t}_{tk}")
                    };
                    c.cmp(&format!("cm.{p}.{k}"), &tf, ours, t_gid, Occ::All);
                }
                if empty {
                    continue;
                }
                c.cmp(
                    &format!("cm.{p}.flow_label"),
                    &format!("infiniband.cm.req.{t}_flowlabel"),
                    pn("flow_label"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.packet_rate"),
                    &format!("infiniband.cm.req.{t}_pktrate"),
                    pn("packet_rate"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.traffic_class"),
                    &format!("infiniband.cm.req.{t}_tfcclass"),
                    pn("traffic_class"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.hop_limit"),
                    &format!("infiniband.cm.req.{t}_hoplim"),
                    pn("hop_limit"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.sl"),
                    &format!("infiniband.cm.req.{t}_sl"),
                    pn("sl"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.subnet_local"),
                    &format!("infiniband.cm.req.{t}_subnetlocal"),
                    pn("subnet_local"),
                    t_num,
                    Occ::All,
                );
                c.cmp(
                    &format!("cm.{p}.local_ack_timeout"),
                    &format!("infiniband.cm.req.{t}_localacktout"),
                    pn("local_ack_timeout"),
                    t_num,
                    Occ::All,
                );
            }
            if let Some(ip) = at(cm, "ip") {
                n(c, "ip.version", "infiniband.cm.req.ip_cm.ipv", "ip.version");
                n(c, "ip.sport", "infiniband.cm.req.ip_cm.sport", "ip.sport");
                let v6 = num_at(ip, "version") == Some(6);
                let (s, d) = if v6 { ("sip6", "dip6") } else { ("sip4", "dip4") };
                c.cmp(
                    "cm.ip.src",
                    &format!("infiniband.cm.req.ip_cm.{s}"),
                    ip.get("src").and_then(j_ip),
                    t_ip,
                    Occ::All,
                );
                c.cmp(
                    "cm.ip.dst",
                    &format!("infiniband.cm.req.ip_cm.{d}"),
                    ip.get("dst").and_then(j_ip),
                    t_ip,
                    Occ::All,
                );
            } else {
                c.cmp("cm.ip.version", "infiniband.cm.req.ip_cm.ipv", None, t_num, Occ::All);
            }
        }
        Some("REP") => {
            n(c, "local_comm_id", "infiniband.cm.rep", "local_comm_id");
            n(c, "remote_comm_id", "infiniband.cm.rep.remotecommid", "remote_comm_id");
            n(c, "local_qkey", "infiniband.cm.rep.localqkey", "local_qkey");
            n(c, "local_qpn", "infiniband.cm.rep.localqpn", "local_qpn");
            n(c, "local_eecn", "infiniband.cm.rep.localeecn", "local_eecn");
            n(c, "starting_psn", "infiniband.cm.rep.startpsn", "starting_psn");
            n(c, "responder_resources", "infiniband.cm.rep.respres", "responder_resources");
            n(c, "initiator_depth", "infiniband.cm.rep.initdepth", "initiator_depth");
            n(c, "target_ack_delay", "infiniband.cm.rep.tgtackdelay", "target_ack_delay");
            n(c, "failover_accepted", "infiniband.cm.rep.failoveracc", "failover_accepted");
            n(
                c,
                "end_to_end_flow_control",
                "infiniband.cm.rep.e2eflowctrl",
                "end_to_end_flow_control",
            );
            n(c, "rnr_retry_count", "infiniband.cm.rep.rnrretrcount", "rnr_retry_count");
            n(c, "srq", "infiniband.cm.rep.srq", "srq");
            n(c, "local_ca_guid", "infiniband.cm.rep.localcaguid", "local_ca_guid");
        }
        Some("RTU") => {
            n(c, "local_comm_id", "infiniband.cm.rtu.localcommid", "local_comm_id");
            n(c, "remote_comm_id", "infiniband.cm.rtu.remotecommid", "remote_comm_id");
        }
        Some("REJ") => {
            n(c, "local_comm_id", "infiniband.cm.rej.localcommid", "local_comm_id");
            n(c, "remote_comm_id", "infiniband.cm.rej.remotecommid", "remote_comm_id");
            let m = match str_at(cm, "message_rejected") {
                Some("REQ") => Some(0),
                Some("REP") => Some(1),
                Some("other") => Some(2),
                Some("reserved") => Some(3),
                _ => None,
            };
            c.cmp("cm.message_rejected", "infiniband.cm.rej.msgrej", m.map(V::N), t_num, Occ::All);
            n(c, "reason", "infiniband.cm.rej.reason", "reason.number");
            n(c, "reject_info_length", "infiniband.cm.rej.rejinfolen", "reject_info_length");
        }
        Some("DREQ") => {
            n(c, "local_comm_id", "infiniband.cm.dreq.localcommid", "local_comm_id");
            n(c, "remote_comm_id", "infiniband.cm.dreq.remotecommid", "remote_comm_id");
            n(c, "remote_qpn", "infiniband.cm.req.remoteqpneecn", "remote_qpn");
        }
        Some("DREP") => {
            n(c, "local_comm_id", "infiniband.cm.drsp.localcommid", "local_comm_id");
            n(c, "remote_comm_id", "infiniband.cm.drsp.remotecommid", "remote_comm_id");
        }
        _ => {}
    }
}

/// Whether the frame is a CM message whose fields tshark decodes.
fn is_compared_cm(o: &Value) -> bool {
    matches!(str_at(o, "roce.cm.attribute"), Some("REQ" | "REP" | "RTU" | "REJ" | "DREQ" | "DREP"))
}

/// Whether tshark stopped after the BTH: it shows an unknown header sequence holding all the
/// rest, extended headers, payload, pad and ICRC, whose last four bytes are our ICRC.
fn stops_after_bth(c: &Cmp<'_>, o: &Value, r: &Value) -> bool {
    let Some(vendor) = c.t("infiniband.vendor").last() else { return false };
    let Some(op) = num_at(r, "bth.opcode") else { return false };
    let hl = lookup_opcode(op as u8).map_or(12, |i| u64::from(i.header_len));
    // Native InfiniBand: the VCRC follows the ICRC, and tshark's unknown data takes it too.
    let vcrc = num_at(o, "vcrc.value").map(|v| format!("{:04x}", (v as u16).swap_bytes()));
    let rest = hl - 12
        + num_at(r, "payload_len").unwrap_or(0)
        + num_at(r, "bth.padcnt").unwrap_or(0)
        + 4
        + if vcrc.is_some() { 2 } else { 0 };
    let icrc = num_at(r, "icrc.value").map(|v| format!("{:08x}", (v as u32).swap_bytes()));
    let tail = icrc.map(|i| i + vcrc.as_deref().unwrap_or(""));
    vendor.len() as u64 == 2 * rest && tail.is_some_and(|t| vendor.ends_with(&t))
}

/// The fault that explains `d` on this frame, if one does.
fn classify(c: &Cmp<'_>, o: &Value, port: u16, d: &Diff) -> Option<Fault> {
    let l2_l4 = ["frame.", "eth.", "vlan.", "ip.", "udp."].iter().any(|p| d.field.starts_with(p));
    if l2_l4 {
        return None;
    }
    let r = at(o, "roce")?;
    // tshark decoded no InfiniBand on a RoCEv2 frame we decode: the source-port misfire.
    if !c.has("infiniband.bth.opcode") {
        let ours_ok = num_at(r, "version") == Some(2)
            && num_at(o, "udp.dport") == Some(u64::from(port))
            && num_at(r, "bth.opcode").and_then(|op| lookup_opcode(op as u8)).is_some()
            && str_at(r, "icrc.status") == Some("ok");
        return (ours_ok && d.tshark_missing()).then_some(Fault::SourcePort);
    }
    let bth = d.field.starts_with("bth.") || d.field.starts_with("grh.");
    if bth {
        return None;
    }
    let op = frame_opcode(c, o)?;
    let unknown_rest = d.tshark_missing() && stops_after_bth(c, o, r);
    match op {
        0x81 if unknown_rest => return Some(Fault::Cnp),
        0x1c | 0x1d | 0xbc | 0xbd if unknown_rest => return Some(Fault::Ibta15),
        0xa0..=0xbf if unknown_rest => return Some(Fault::Xrc),
        0x40..=0x5f => return Some(Fault::RdRange),
        _ if unknown_rest && lookup_opcode(op as u8).is_none() => {
            return Some(Fault::UnknownOpcode)
        }
        _ => {}
    }
    if at(r, "cm").is_some() && c.has("_ws.malformed") && d.tshark_missing() {
        return Some(Fault::MadMalformed);
    }
    // Truncated: we give no ICRC (not captured) where tshark reads one from the payload, and
    // the payload length of the headers where tshark counts the captured bytes less four.
    let truncated = str_at(r, "icrc.status") == Some("unverifiable")
        && num_at(o, "caplen") == num_at(o, "len")
        && (at(o, "problems")
            .and_then(Value::as_array)
            .is_some_and(|p| p.iter().any(|x| x["code"] == "truncated"))
            || str_at(o, "stop.kind") == Some("truncated"));
    if truncated {
        match d.field.as_str() {
            "icrc.value" if d.ours.is_none() && d.tshark.is_some() => {
                return Some(Fault::Truncated)
            }
            "payload_len+pad" => {
                // tshark's data.len = what was captured after the headers, less four bytes.
                let vlans = at(o, "vlan").and_then(Value::as_array).map_or(0, Vec::len) as u64;
                let ip = if num_at(o, "ip.version") == Some(6) { 40 } else { 20 };
                let hl = lookup_opcode(num_at(r, "bth.opcode")? as u8)
                    .map_or(12, |i| u64::from(i.header_len));
                let captured = num_at(o, "caplen")?.checked_sub(14 + 4 * vlans + ip + 8 + hl)?;
                let t = t_num(d.tshark.as_deref()?)?;
                return (t == V::N(captured.saturating_sub(4))).then_some(Fault::Truncated);
            }
            _ => {}
        }
    }
    // The CM REQ path fields tshark misreads: its values must be exactly what its reads give.
    if let Some(p) = d
        .field
        .strip_prefix("cm.")
        .and_then(|f| f.strip_suffix(".flow_label").or_else(|| f.strip_suffix(".packet_rate")))
    {
        let flow = num_at(r, &format!("cm.{p}.flow_label"))?;
        let expect = if d.field.ends_with(".flow_label") { flow >> 8 } else { flow >> 12 & 0x3f };
        let t = t_num(d.tshark.as_deref()?)?;
        return (t == V::N(expect)).then_some(Fault::CmPathFields);
    }
    None
}

fn compare_capture(cap: &Cap, runs: &Runs, idx: &HashMap<&'static str, usize>) -> Stats {
    let mut st = Stats { frames: runs.ours.len() as u64, ..Default::default() };
    if runs.tshark.len() != runs.ours.len() {
        st.disagreements.push(Disagreement {
            capture: cap.name.clone(),
            frame: 0,
            field: "frame count".into(),
            ours: runs.ours.len().to_string(),
            tshark: runs.tshark.len().to_string(),
        });
    }
    for (row, o) in runs.tshark.iter().zip(&runs.ours) {
        let frame = num_at(o, "frame").unwrap_or(0);
        let mut c = Cmp {
            row,
            idx,
            fields: 0,
            names: Vec::new(),
            diffs: Vec::new(),
            mapping: &mut st.mapping,
        };
        let tframe = c.t("frame.number").first().cloned().unwrap_or_default();
        assert_eq!(tframe, frame.to_string(), "{}: frames out of step", cap.name);
        if c.has("infiniband.bth.opcode") {
            st.ib_frames += 1;
        }
        if at(o, "lrh").is_some() {
            st.native_ib += 1;
        }
        compare_frame(&mut c, o);
        st.fields += c.fields;
        for n in &c.names {
            let e = st.by_field.entry(n.clone()).or_default();
            e.0 += 1;
            if !c.diffs.iter().any(|d| d.field == *n) {
                e.1 += 1;
            }
        }
        if c.fields > 0 {
            st.frames_compared += 1;
        }
        if is_compared_cm(o) && c.has("infiniband.mad.attributeid") {
            st.cm_messages += 1;
        }
        let after: Vec<&str> = c
            .t("frame.protocols")
            .first()
            .map(|p| p.split(':').skip_while(|x| *x != "infiniband").skip(1).collect())
            .unwrap_or_default();
        if after.iter().any(|p| *p != "data") && at(o, "roce.cm").is_none() {
            st.payload_taken += 1;
        }
        let mut faults: Vec<Fault> = Vec::new();
        for d in &c.diffs {
            let dis = Disagreement {
                capture: cap.name.clone(),
                frame,
                field: d.field.clone(),
                ours: d.ours.as_ref().map_or("-".into(), ToString::to_string),
                tshark: d.tshark.clone().unwrap_or_else(|| "-".into()),
            };
            match classify(&c, o, cap.port, d) {
                Some(f) => {
                    if !faults.contains(&f) {
                        faults.push(f);
                    }
                    st.excused.push((f, dis));
                }
                None => st.disagreements.push(dis),
            }
        }
        for f in faults {
            *st.faults.entry(f).or_default() += 1;
            if f == Fault::SourcePort {
                let proto = c
                    .t("frame.protocols")
                    .first()
                    .and_then(|p| p.split(':').skip_while(|x| *x != "udp").nth(1))
                    .unwrap_or("?")
                    .to_string();
                *st.source_port_protocols.entry(proto).or_default() += 1;
            }
        }
    }
    st
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

#[test]
fn dissect_agrees_with_tshark_on_every_capture() {
    let Some(version) = tshark_version() else { return };
    let scratch = Scratch::new("tshark");
    let caps = all_captures(&scratch.0);
    let idx: HashMap<&'static str, usize> =
        TSHARK_FIELDS.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    println!("{version}; {} captures", caps.len());

    let wall = Instant::now();
    let results = par_map(&caps, |cap| {
        let runs = run_both(cap);
        (compare_capture(cap, &runs, &idx), runs.tshark_time, runs.ours_time)
    });
    let wall = wall.elapsed();

    let mut total = Stats::default();
    let (mut t_tshark, mut t_ours) = (Duration::ZERO, Duration::ZERO);
    let mut failures: Vec<Disagreement> = Vec::new();
    let mut excused: Vec<(Fault, Disagreement)> = Vec::new();
    for (cap, (st, tshark_time, ours_time)) in caps.iter().zip(results) {
        t_tshark += tshark_time;
        t_ours += ours_time;
        let mut line = format!(
            "{:<62} {:>5} frames, {:>5} compared ({:>5} InfiniBand per tshark), {:>6} fields, tshark {}, roce-inspect {}",
            cap.name,
            st.frames,
            st.frames_compared,
            st.ib_frames,
            st.fields,
            secs(tshark_time),
            secs(ours_time)
        );
        if st.cm_messages > 0 {
            line += &format!(", {} CM messages", st.cm_messages);
        }
        if st.native_ib > 0 {
            line += &format!(", {} of them native InfiniBand (ERF)", st.native_ib);
        }
        if st.payload_taken > 0 {
            line += &format!(", {} payloads taken by another tshark dissector", st.payload_taken);
        }
        println!("{line}");
        for (f, n) in &st.faults {
            let mut s = format!("    tshark fault, {n} frames: {}", f.reason());
            if *f == Fault::SourcePort {
                s += &format!(" {:?}", st.source_port_protocols);
            }
            println!("{s}");
        }
        if !st.disagreements.is_empty() {
            println!("    {} DISAGREEMENTS", st.disagreements.len());
        }
        total.frames += st.frames;
        total.frames_compared += st.frames_compared;
        total.ib_frames += st.ib_frames;
        total.fields += st.fields;
        total.native_ib += st.native_ib;
        total.cm_messages += st.cm_messages;
        for (f, n) in st.faults {
            *total.faults.entry(f).or_default() += n;
        }
        for (k, (n, a)) in st.by_field {
            let e = total.by_field.entry(k).or_default();
            e.0 += n;
            e.1 += a;
        }
        for (k, v) in st.mapping {
            total.mapping.entry(k).or_default().extend(v);
        }
        failures.extend(st.disagreements);
        excused.extend(st.excused);
    }
    println!("Fields compared (agreed/compared, over all captures; faults excuse the rest):");
    let cells: Vec<String> =
        total.by_field.iter().map(|(k, (n, a))| format!("{k} {a}/{n}")).collect();
    for chunk in cells.chunks(4) {
        println!("  {}", chunk.join(", "));
    }
    println!(
        "TOTAL: {} captures, {} frames, {} compared, {} fields, {} CM messages; tshark {}, roce-inspect {} (summed over captures), {} wall",
        caps.len(),
        total.frames,
        total.frames_compared,
        total.fields,
        total.cm_messages,
        secs(t_tshark),
        secs(t_ours),
        secs(wall)
    );
    for (f, n) in &total.faults {
        println!("  tshark fault, {n} frames: {}", f.reason());
    }
    if total.native_ib > 0 {
        println!(
            "  native InfiniBand (ERF) frames compared from their LRH on: {}",
            total.native_ib
        );
    }
    check_mapping_table(&total.mapping);
    check_catalog(&total.mapping);
    if let Some(path) = std::env::var_os("ROCE_TSHARK_DUMP") {
        let mut all: Vec<String> = failures.iter().map(|d| format!("UNEXPLAINED {d}")).collect();
        all.extend(excused.iter().map(|(f, d)| format!("{f:?} {d}")));
        fs::write(path, all.join("\n")).unwrap();
    }
    if !failures.is_empty() {
        let mut by_field: BTreeMap<&str, u64> = BTreeMap::new();
        for d in &failures {
            *by_field.entry(&d.field).or_default() += 1;
        }
        let first: Vec<String> = failures.iter().take(40).map(ToString::to_string).collect();
        panic!(
            "{} disagreements with tshark outside its known faults (by field: {by_field:?}); the first:\n{}",
            failures.len(),
            first.join("\n")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// CM starting PSNs against the traffic that follows (docs/wire.md)
// ---------------------------------------------------------------------------------------------

/// Source or destination address of a frame: the IP one, or the GRH's for RoCEv1 and routed
/// InfiniBand, or the LRH's LID for native InfiniBand between LIDs.
fn l3(o: &Value, dir: &str) -> Option<String> {
    at(o, &format!("ip.{dir}"))
        .or_else(|| at(o, &format!("roce.grh.{}gid", &dir[..1])))
        .and_then(j_ip)
        .map(|v| v.to_string())
        .or_else(|| num_at(o, &format!("lrh.{}lid", &dir[..1])).map(|lid| format!("LID {lid}")))
}

/// An RC or UC request (the packets whose PSNs the starting PSNs announce).
fn is_rc_uc_request(o: &Value) -> bool {
    num_at(o, "roce.bth.opcode").and_then(|op| lookup_opcode(op as u8)).is_some_and(|i| {
        i.role == Role::Request && matches!(i.transport, Transport::Rc | Transport::Uc)
    })
}

#[derive(Default)]
struct Crossover {
    pairs: u64,
    sides_checked: u64,
    sides_without_traffic: u64,
    failures: Vec<String>,
}

/// For each REQ / REP pair (REP remote comm ID = REQ local comm ID): the first RC/UC request
/// to the passive QP (DestQP = REP local QPN, sent to the REP's sender) carries the REP's
/// starting PSN, the first to the active QP (DestQP = REQ local QPN, sent to the REQ's sender)
/// the REQ's.
fn crossover(name: &str, frames: &[Value]) -> Crossover {
    let mut out = Crossover::default();
    let reqs: Vec<&Value> =
        frames.iter().filter(|o| str_at(o, "roce.cm.attribute") == Some("REQ")).collect();
    for rep in frames.iter().filter(|o| str_at(o, "roce.cm.attribute") == Some("REP")) {
        let rep_frame = num_at(rep, "frame").unwrap();
        let Some(req) = reqs.iter().rev().find(|q| {
            num_at(q, "frame").unwrap() < rep_frame
                && num_at(q, "roce.cm.local_comm_id") == num_at(rep, "roce.cm.remote_comm_id")
        }) else {
            continue;
        };
        out.pairs += 1;
        let sides = [
            (
                "passive",
                num_at(rep, "roce.cm.local_qpn"),
                l3(rep, "src"),
                num_at(rep, "roce.cm.starting_psn"),
                "REP",
            ),
            (
                "active",
                num_at(req, "roce.cm.local_qpn"),
                l3(req, "src"),
                num_at(req, "roce.cm.starting_psn"),
                "REQ",
            ),
        ];
        let req_frame = num_at(req, "frame").unwrap();
        for (side, qpn, host, psn, msg) in sides {
            let to_side = |o: &&Value| {
                is_rc_uc_request(o) && num_at(o, "roce.bth.dest_qp") == qpn && l3(o, "dst") == host
            };
            // A request at a PSN this DestQP was already sent before the REQ, other than the
            // starting PSN, is a late packet of an ended incarnation of a reused QP number
            // (clean-cm-stale-first), not the first request of the connection the REQ/REP
            // sets up.
            let earlier: BTreeSet<Option<u64>> = frames
                .iter()
                .filter(|o| num_at(o, "frame").unwrap() < req_frame)
                .filter(to_side)
                .map(|o| num_at(o, "roce.bth.psn"))
                .collect();
            let first = frames.iter().filter(to_side).find(|o| {
                num_at(o, "frame").unwrap() > rep_frame
                    && (num_at(o, "roce.bth.psn") == psn
                        || !earlier.contains(&num_at(o, "roce.bth.psn")))
            });
            match first {
                None => out.sides_without_traffic += 1,
                Some(f) => {
                    out.sides_checked += 1;
                    if num_at(f, "roce.bth.psn") != psn {
                        out.failures.push(format!(
                            "{name}: REQ frame {} / REP frame {rep_frame}: first request to the {side} QP {:#x} (frame {}) has PSN {:?}, the {msg} starting PSN is {:?}",
                            num_at(req, "frame").unwrap(),
                            qpn.unwrap_or(0),
                            num_at(f, "frame").unwrap(),
                            num_at(f, "roce.bth.psn"),
                            psn
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Whether the capture is a conformance scenario whose expect file (`NAME.expect.json` beside
/// it) lists findings: traffic broken on purpose.
fn expects_findings(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    let stem = name.split('.').next().unwrap_or("");
    let Ok(text) = fs::read_to_string(path.with_file_name(format!("{stem}.expect.json"))) else {
        return false;
    };
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v.get("findings").and_then(Value::as_array).is_some_and(|f| !f.is_empty())
}

#[test]
fn cm_starting_psns_cross_over_on_the_traffic_that_follows() {
    let scratch = Scratch::new("crossover");
    let caps = all_captures(&scratch.0);
    let mut total = Crossover::default();
    for cap in &caps {
        let frames = ours_only(cap);
        let x = crossover(&cap.name, &frames);
        if x.pairs > 0 {
            println!(
                "{:<62} {} REQ/REP pairs, {} sides checked against the first request, {} sides without captured requests",
                cap.name, x.pairs, x.sides_checked, x.sides_without_traffic
            );
        }
        total.pairs += x.pairs;
        total.sides_checked += x.sides_checked;
        total.sides_without_traffic += x.sides_without_traffic;
        if expects_findings(&cap.path) {
            // A conformance scenario built to break rules may break this one on purpose.
            for f in &x.failures {
                println!("    note (scenario with expected findings): {f}");
            }
        } else {
            total.failures.extend(x.failures);
        }
    }
    println!(
        "TOTAL: {} REQ/REP pairs, {} sides checked, {} without captured requests",
        total.pairs, total.sides_checked, total.sides_without_traffic
    );
    assert!(
        total.failures.is_empty(),
        "starting PSNs do not cross over:\n{}",
        total.failures.join("\n")
    );
    // The real captures hold the CM exchanges (their skip was reported by all_captures).
    if real::configured().is_ok_and(|d| d.is_some()) {
        assert!(total.pairs >= 10 && total.sides_checked >= 10, "too few CM exchanges checked");
    }
}

/// The JSON path of a name the comparisons use (`frame.len` is `len`, `bth.psn` is
/// `roce.bth.psn`).
fn json_path(ours: &str) -> String {
    let frame_level = ["eth.", "vlan.", "ip.", "udp.", "lrh.", "vcrc."];
    if let Some(member) = ours.strip_prefix("frame.") {
        member.to_string()
    } else if frame_level.iter().any(|p| ours.starts_with(p)) {
        ours.to_string()
    } else {
        format!("roce.{ours}")
    }
}

/// The field catalog's tshark names (`roce_analysis::FIELDS`) are the comparisons this test
/// makes: each name of a row is asked of tshark and the row is compared, and a field compared
/// under its own name is a row that names its tshark fields.
fn check_catalog(mapping: &BTreeMap<String, BTreeSet<String>>) {
    let compared: BTreeMap<String, &BTreeSet<String>> =
        mapping.iter().map(|(ours, theirs)| (json_path(ours), theirs)).collect();
    for f in roce_analysis::FIELDS.iter().filter(|f| !f.tshark.is_empty()) {
        for t in f.tshark {
            assert!(TSHARK_FIELDS.contains(t), "{}: {t} is not in TSHARK_FIELDS", f.path);
        }
        assert!(
            compared.contains_key(f.path),
            "{}: the catalog names tshark fields {:?} but nothing compares them",
            f.path,
            f.tshark
        );
    }
    for (path, theirs) in &compared {
        if let Some(f) = roce_analysis::FIELDS.iter().find(|f| f.path == path) {
            assert!(
                !f.tshark.is_empty(),
                "{path} is compared with tshark's {theirs:?}: name them in its catalog row"
            );
        }
    }
}

/// docs/json.md's table of our field names and tshark's is the list of comparisons this
/// test made, so it cannot drift: regenerate with `ROCE_INSPECT_BLESS=1`.
fn check_mapping_table(mapping: &BTreeMap<String, BTreeSet<String>>) {
    const BEGIN: &str = "<!-- tshark-map:begin (generated by cli/tests/tshark.rs) -->\n";
    const END: &str = "<!-- tshark-map:end -->";
    let mut table = String::from("| roce-inspect | tshark 4.0 |\n|---|---|\n");
    for (ours, theirs) in mapping {
        let name = json_path(ours);
        let theirs: Vec<String> = theirs.iter().map(|t| format!("`{t}`")).collect();
        table += &format!("| `{name}` | {} |\n", theirs.join(" or "));
    }
    let path = project_root().join("docs/json.md");
    let doc = fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/json.md lacks the markers {BEGIN:?} .. {END:?}");
    };
    let current = &doc[b + BEGIN.len()..e];
    if !real::configured().is_ok_and(|d| d.is_some()) {
        // Some rows are proven only by the real captures (tshark decodes their MADs): without
        // them, every comparison made here must still be in the table, and the table is not
        // rewritten.
        let missing: Vec<&str> = table.lines().filter(|l| !current.contains(l)).collect();
        assert!(
            missing.is_empty(),
            "docs/json.md's tshark table lacks comparisons this test made (bless with the real \
             captures: ROCE_INSPECT_REAL_CAPTURES=... ROCE_INSPECT_BLESS=1):\n{}",
            missing.join("\n")
        );
        println!("note: tshark table compared as a subset (the real captures are not configured)");
        return;
    }
    if current != table {
        if std::env::var_os("ROCE_INSPECT_BLESS").is_some() {
            fs::write(&path, format!("{}{table}{}", &doc[..b + BEGIN.len()], &doc[e..])).unwrap();
        } else {
            panic!(
                "docs/json.md's tshark table is not what this test compares: regenerate it with \
                 ROCE_INSPECT_BLESS=1 cargo test -p roce-inspect --test tshark\n{table}"
            );
        }
    }
}
