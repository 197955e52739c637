//! Seeds: every frame of the real captures, cut to what each target reads, and frames the
//! builder writes for every opcode of the table.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use roce_capture::L2Start;
use roce_parser::*;

use crate::capfile;

/// Seeds by target, deduplicated by content.
#[derive(Default)]
pub struct Seeds {
    pub by_target: BTreeMap<String, BTreeMap<Vec<u8>, String>>,
}

impl Seeds {
    /// Adds `bytes` to `target` under a name starting with `label` (kept if already there).
    pub fn add(&mut self, target: &str, label: &str, bytes: &[u8]) {
        let name = format!("{label}-{:016x}", crate::fnv(bytes));
        self.by_target.entry(target.to_string()).or_default().entry(bytes.to_vec()).or_insert(name);
    }

    /// Writes every seed to `corpus/<target>/<name>`; returns (files, bytes) per target.
    pub fn write(&self, corpus: &Path) -> BTreeMap<String, (usize, usize)> {
        let mut out = BTreeMap::new();
        for (target, seeds) in &self.by_target {
            let dir = corpus.join(target);
            fs::create_dir_all(&dir).expect("create corpus folder");
            let mut bytes = 0;
            for (data, name) in seeds {
                let mut f = fs::File::create(dir.join(name)).expect("create seed");
                f.write_all(data).expect("write seed");
                bytes += data.len();
            }
            out.insert(target.clone(), (seeds.len(), bytes));
        }
        out
    }
}

/// Short file-name-safe name of a capture.
fn short(path: &Path) -> String {
    let stem = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).take(40).collect()
}

/// Frames of a capture handed to the `capture` target (the file cut after them).
const CAPTURE_SEED_FRAMES: u64 = 6;

/// Bytes of frames a capture gives the `conformance` target (its first frames).
const CONFORMANCE_SEED_BYTES: usize = 16 * 1024;

/// Checker options of the `conformance` seeds (see `sequence::options`): 8 flows, 4 findings
/// per rule, PMTU inferred; and 2 flows (eviction), lossless, PMTU 1024; no timer option.
const CONFORMANCE_OPTIONS: [[u8; 2]; 2] = [[0xD7, 0x00], [0x29, 0x00]];
/// The every-opcode sequence also under the timer options: `--qp-timeout 1`,
/// `--cnp-min-interval 1us,qp`, `--rnr-timer 0` (byte 1 = 0x49).
const TIMER_OPTIONS: [u8; 2] = [0xD7, 0x49];

/// Every frame of every capture in `dirs`, cut per target; returns the frames read.
pub fn from_captures(seeds: &mut Seeds, dirs: &[std::path::PathBuf]) -> usize {
    let mut files: Vec<_> = dirs
        .iter()
        .flat_map(|d| fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".pcap") || n.ends_with(".pcapng") || n.ends_with(".gz")
        })
        .collect();
    files.sort();
    let cfg = Config::default();
    let mut total = 0;
    for path in files {
        let label = short(&path);
        let raw = fs::read(&path).expect("read capture");
        let mut cap = match roce_capture::open(&path) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipping {}: {e}", path.display());
                continue;
            }
        };
        let mut cut = None;
        let mut sequence: Vec<Vec<u8>> = Vec::new();
        let mut sequence_bytes = 0;
        let gzip = cap.format().gzip;
        while let Some(frame) = cap.next_frame() {
            let frame = match frame {
                Ok(f) => f,
                Err(e) if e.is_fatal() => break,
                Err(_) => continue,
            };
            total += 1;
            if frame.number == CAPTURE_SEED_FRAMES + 1 && !gzip {
                cut = Some(frame.offset as usize);
            }
            if let L2Start::Infiniband(b) = frame.l2() {
                // ibdump's packets, for the raw half of the `infiniband` target.
                let mut raw = vec![0u8];
                raw.extend_from_slice(b);
                seeds.add("infiniband", &label, &raw);
            }
            let L2Start::Ethernet(b) = frame.l2() else {
                continue;
            };
            seeds.add("ethernet", &label, b);
            seeds.add("ffi", &label, &ffi_seed(b));
            if sequence_bytes + b.len() <= CONFORMANCE_SEED_BYTES {
                sequence_bytes += b.len() + 2;
                sequence.push(b.to_vec());
            }
            seeds.add("icrc", &label, b);
            let Ok(p) = parse_ethernet(b, &cfg) else {
                continue;
            };
            let Some(r) = p.roce else {
                continue;
            };
            match r.version {
                RoceVersion::V2 => {
                    let claimed = p.udp.map_or(0, |u| usize::from(u.len).saturating_sub(8));
                    let end = (r.bth_offset + claimed).min(b.len());
                    let udp_payload = &b[r.bth_offset..end.max(r.bth_offset)];
                    seeds.add("udp_payload", &label, udp_payload);
                    seeds.add("roundtrip", &label, udp_payload);
                }
                RoceVersion::V1 => seeds.add("rocev1", &label, &b[r.bth_offset - 40..]),
                RoceVersion::Infiniband => {}
            }
            if r.mad().is_some() {
                seeds.add("cm_mad", &label, r.payload);
            }
        }
        let head = match cut {
            Some(n) => &raw[..n.min(raw.len())],
            None => &raw[..],
        };
        seeds.add("capture", &label, head);
        if !sequence.is_empty() {
            for opt in CONFORMANCE_OPTIONS {
                seeds.add(
                    "conformance",
                    &label,
                    &roce_fuzz_common::sequence::encode(opt, &sequence),
                );
            }
        }
    }
    total
}

/// Network layers the builder seeds use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    Ipv4,
    Ipv4Vlan,
    Ipv6,
    RoceV1,
}

/// The frame the builder writes for `info` over `net`: distinct non-zero header values, a
/// payload the opcode allows, a UD SEND_ONLY to QP1 carrying a CM REQ MAD.
pub fn builder_frame(info: &OpcodeInfo, net: Net) -> Vec<u8> {
    let network = match net {
        Net::Ipv4 | Net::Ipv4Vlan => Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]),
        Net::Ipv6 => Network::ipv6(
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        ),
        Net::RoceV1 => Network::RoceV1(GrhRepr {
            ipver: 6,
            hoplmt: 1,
            sgid: [0x11; 16],
            dgid: [0x22; 16],
            ..Default::default()
        }),
    };
    let cnp = info.opcode == 0x81;
    let gsi = info.opcode == 0x64;
    let bth = BthRepr {
        opcode: info.opcode,
        pkey: 0xffff,
        becn: cnp,
        dest_qp: if gsi { 1 } else { 0x12 },
        ackreq: !cnp,
        psn: if cnp { 0 } else { 0x100 },
        ..Default::default()
    };
    let mut b = FrameBuilder::new(network, bth);
    if net == Net::Ipv4Vlan {
        b.vlans[0] = Some(VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 100 });
    }
    b.headers = ExtHeaders {
        rdeth: Some(RdethRepr { reserved: 0, eecnxt: 0x21 }),
        deth: Some(DethRepr {
            qkey: if gsi { 0x8001_0000 } else { 0x1111 },
            reserved: 0,
            src_qp: if gsi { 1 } else { 0x22 },
        }),
        xrceth: Some(XrcethRepr { reserved: 0, xrcsrq: 0x33 }),
        reth: Some(RethRepr { va: 0x1000, rkey: 0x44, dma_len: 64 }),
        atomic_eth: Some(AtomicEthRepr { va: 0x2000, rkey: 0x55, swap_add: 1, compare: 2 }),
        aeth: Some(AethRepr::ack(0x1f, 7)),
        atomic_ack_eth: Some(AtomicAckEthRepr { orig: 0x66 }),
        immdt: Some(ImmDtRepr { data: 0x7777 }),
        ieth: Some(IethRepr { rkey: 0x88 }),
        feth: Some(FethRepr { reserved: 0, selectivity: 1, placement: 1 }),
    };
    let mad;
    let payload: Vec<u8> = match info.payload {
        _ if gsi => {
            mad = cm_mad(0x0010, 0);
            mad.to_vec()
        }
        PayloadRule::Empty => Vec::new(),
        PayloadRule::Exactly(n) => vec![0; usize::from(n)],
        PayloadRule::Pmtu => (0..64u8).collect(),
        PayloadRule::OneToPmtu | PayloadRule::ZeroToPmtu => vec![0xab; 5],
    };
    b.payload = &payload;
    let mut out = vec![0; b.buffer_len()];
    b.emit(&mut out).expect("builder");
    out
}

/// A whole CM MAD with Linux's header for `attribute`, the class data filled from `fill`
/// (0: zeros; else a pseudo-random pattern).
pub fn cm_mad(attribute: u16, fill: u64) -> [u8; MAD_LEN] {
    let mut m = [0u8; MAD_LEN];
    let header = MadHeaderRepr::cm(roce_parser::CmAttribute::from_u16(attribute), 0x1234);
    // Emitting ClassPortInfo writes the header and zeros: a header for any attribute.
    CmMessage::ClassPortInfo.emit_mad_with_header(&header, &mut m).expect("emit MAD");
    if fill != 0 {
        let mut x = fill;
        for b in &mut m[24..] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }
    m
}

/// The CM attribute IDs seeded: ClassPortInfo, every CM message, one unknown.
pub const CM_ATTRIBUTES: [u16; 13] = [
    0x0001, 0x0010, 0x0011, 0x0012, 0x0013, 0x0014, 0x0015, 0x0016, 0x0017, 0x0018, 0x0019, 0x001A,
    0x0099,
];

/// The seeds of one opcode for the packet targets: (target, bytes).
pub fn opcode_seeds(info: &OpcodeInfo) -> Vec<(&'static str, Vec<u8>)> {
    let v4 = builder_frame(info, Net::Ipv4);
    let v1 = builder_frame(info, Net::RoceV1);
    let udp = v4[14 + 20 + 8..].to_vec();
    vec![
        ("ethernet", v4.clone()),
        ("ethernet", builder_frame(info, Net::Ipv6)),
        ("ethernet", builder_frame(info, Net::Ipv4Vlan)),
        ("ethernet", v1.clone()),
        ("ffi", ffi_seed(&v4)),
        ("icrc", v4),
        ("icrc", v1.clone()),
        ("udp_payload", udp.clone()),
        ("roundtrip", udp),
        ("rocev1", v1[14..].to_vec()),
    ]
}

/// An `ffi` input: the control byte 0 (the whole frame, EtherType IPv4), then the frame.
pub fn ffi_seed(frame: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(frame.len() + 1);
    v.push(0);
    v.extend_from_slice(frame);
    v
}

/// `expect_file` seeds: the expect files of the generated suite (`pcaps/conformance/`) and of
/// the real captures (`testdata/real-expect/`), those of 16 KiB at most.
pub fn expect_files(seeds: &mut Seeds) {
    for (dir, label) in [("pcaps/conformance", "suite"), ("testdata/real-expect", "real")] {
        let dir = crate::project_root().join(dir);
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".expect.json") else {
                continue;
            };
            // Up to 16 KiB (larger ones slow every mutation); no `.pcap` in a seed's name.
            match fs::read(entry.path()) {
                Ok(bytes) if bytes.len() <= 16 << 10 => {
                    let stem = stem.replace('.', "-");
                    seeds.add("expect_file", &format!("{label}-{stem}"), &bytes);
                }
                _ => {}
            }
        }
    }
}

/// The label of an opcode's seeds.
pub fn opcode_label(info: &OpcodeInfo) -> String {
    format!("builder-{:02x}-{}", info.opcode, info.name)
}

/// Builder seeds: every opcode for the packet targets, every CM attribute for `cm_mad`, and
/// small captures in every container and link type the reader knows.
pub fn from_builder(seeds: &mut Seeds) {
    for info in OPCODES {
        let label = opcode_label(info);
        for (target, bytes) in opcode_seeds(info) {
            seeds.add(target, &label, &bytes);
        }
    }
    for attr in CM_ATTRIBUTES {
        for fill in [0, 0x9E37_79B9_7F4A_7C15] {
            seeds.add("cm_mad", &format!("builder-cm-{attr:04x}"), &cm_mad(attr, fill));
        }
    }
    for (label, bytes) in every_opcode_sequences() {
        seeds.add("conformance", &label, &bytes);
    }
    for (label, bytes) in capture_seeds() {
        seeds.add("capture", &label, &bytes);
    }
    for (label, bytes) in encap_seeds() {
        seeds.add("encap", &label, &bytes);
    }
    for (label, bytes) in infiniband_seeds() {
        seeds.add("infiniband", &label, &bytes);
    }
    for (label, bytes) in merge_seeds() {
        seeds.add("merge", &label, &bytes);
    }
}

/// A capture file cut after its first `frames` frames (whole when it holds no more, or is
/// compressed).
pub fn capture_head(raw: &[u8], frames: u64) -> Vec<u8> {
    let Ok(mut cap) = roce_capture::Capture::from_bytes("seed", raw.to_vec()) else {
        return raw.to_vec();
    };
    if cap.format().gzip {
        return raw.to_vec();
    }
    while let Some(f) = cap.next_frame() {
        match f {
            Ok(f) if f.number == frames + 1 => {
                return raw[..(f.offset as usize).min(raw.len())].to_vec()
            }
            Ok(_) => {}
            Err(e) if e.is_fatal() => break,
            Err(_) => {}
        }
    }
    raw.to_vec()
}

/// `merge` seeds from `pcaps/sample.pcap` and suite captures of `pcaps/conformance/` (their
/// first frames): one to four files with given or estimated offsets, and one capture fed
/// twice (its copy shifted, given or estimated, some records left out).
pub fn merge_seeds() -> Vec<(String, Vec<u8>)> {
    use roce_fuzz_common::multi::MergeInput::{self, Files, Twice};
    let read = |name: &str, frames: u64| {
        let raw = fs::read(crate::project_root().join("pcaps").join(name)).expect("read capture");
        capture_head(&raw, frames)
    };
    let sample = read("sample.pcap", 6);
    let erspan = read("sample-erspan.pcap", 4);
    let gbn = read("conformance/clean-gbn-in-flight.pcap", 8);
    let cnp = read("conformance/cc-cnp.pcap", 6);
    let mix = read("conformance/clean-rc-mix.pcap", 6);
    let dup = read("conformance/rsp-dup.pcap", 6);
    let broken_gbn = broken_first_record(&gbn);
    let broken_cnp = broken_first_record(&cnp);
    // The last record cut 10 bytes short: damage after five frames.
    let cut_sample = sample[..sample.len().saturating_sub(10)].to_vec();
    fn files<'a>(fs: &[&'a Vec<u8>], offsets: &[i64], estimate: bool) -> MergeInput<'a> {
        Files { files: fs.iter().map(|f| &f[..]).collect(), offsets: offsets.to_vec(), estimate }
    }
    fn twice(
        capture: &[u8],
        shift_ns: i64,
        leave_out: Option<u32>,
        estimate: bool,
    ) -> MergeInput<'_> {
        Twice { capture, shift_ns, leave_out, estimate }
    }
    let inputs: Vec<(&str, MergeInput<'_>)> = vec![
        ("merge-files-1-sample", files(&[&sample], &[0], false)),
        ("merge-files-2-sample-gbn", files(&[&sample, &gbn], &[0, 0], false)),
        ("merge-files-2-sample-sample", files(&[&sample, &sample], &[0, 0], false)),
        ("merge-files-2-gbn-offset", files(&[&gbn, &gbn], &[0, -2_000_000], false)),
        (
            "merge-files-3-offsets",
            files(&[&sample, &cnp, &mix], &[0, 2_000_000, -1_000_000], false),
        ),
        ("merge-files-4-estimated", files(&[&gbn, &cnp, &mix, &dup], &[0; 4], true)),
        ("merge-twice-sample-given", twice(&sample, 1_500_000, None, false)),
        ("merge-twice-gbn-estimated", twice(&gbn, -250_000, None, true)),
        ("merge-twice-mix-estimated", twice(&mix, 40_000, None, true)),
        ("merge-twice-sample-left-out", twice(&sample, 3_000_000_000, Some(0b0100_1001), true)),
        ("merge-twice-dup-left-out", twice(&dup, -7, Some(0b10), false)),
        ("merge-twice-erspan", twice(&erspan, 0, None, true)),
        // Damaged taps: a sound header and a broken first record (the file is dropped, the
        // others read on), a record cut short after some frames, every file broken.
        ("merge-files-2-sample-broken-first", files(&[&sample, &broken_gbn], &[0, 0], false)),
        (
            "merge-files-3-broken-first-cut",
            files(&[&broken_cnp, &cut_sample, &mix], &[0, 1_000_000, 0], false),
        ),
        ("merge-files-2-all-broken", files(&[&broken_cnp, &broken_gbn], &[0, 0], false)),
    ];
    inputs
        .into_iter()
        .map(|(label, i)| (label.to_string(), i.encode().expect("a seed input encodes")))
        .collect()
}

/// A pcap file whose first record claims 300,000 bytes, past `MAX_RECORD_LEN` (its header
/// sound): damage that ends the file before its first frame. Other bytes are left as they are.
fn broken_first_record(pcap: &[u8]) -> Vec<u8> {
    let mut out = pcap.to_vec();
    let big_endian =
        matches!(pcap.get(..4), Some([0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d]));
    let len = if big_endian { 300_000u32.to_be_bytes() } else { 300_000u32.to_le_bytes() };
    if out.len() >= 40 {
        out[32..36].copy_from_slice(&len);
        out[36..40].copy_from_slice(&len);
    }
    out
}

/// `infiniband` seeds: native packets from the builder (the raw half: a 0 byte, then the
/// packet), local and routed, for an opcode of each shape (SEND, RDMA WRITE with its RETH,
/// an ACK, a READ response, a UD SEND to QP1 with a CM REQ), and a few inputs of the
/// structured half (a 1 byte, then bytes the fuzzer decodes as an `IbSpec`).
pub fn infiniband_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let lrh = LrhRepr { sl: 1, dlid: 0x0012, slid: 0x000c, ..Default::default() };
    let mut gid = [0u8; 16];
    gid[..2].copy_from_slice(&[0xfe, 0x80]);
    gid[15] = 0x0c;
    let grh = GrhRepr { ipver: 6, hoplmt: 1, sgid: gid, dgid: gid, ..Default::default() };
    let mad = cm_mad(CM_ATTRIBUTES[0], 0);
    for (name, network) in
        [("local", Network::infiniband(lrh)), ("global", Network::Infiniband(lrh, Some(grh)))]
    {
        for (opcode, dest_qp, payload) in [
            (0x04u8, 0x29u32, &b"hello, IB"[..]),
            (0x0a, 0x29, &[0x5a; 64][..]),
            (0x11, 0x29, &[][..]),
            (0x10, 0x29, &[0xa5; 32][..]),
            (0x64, 1, &mad[..]),
        ] {
            let bth = BthRepr { opcode, pkey: 0xffff, dest_qp, psn: 0x1234, ..Default::default() };
            let mut b = FrameBuilder::new(network, bth);
            b.payload = payload;
            if opcode == 0x64 {
                b.headers.deth = Some(DethRepr { qkey: GSI_QKEY, src_qp: 1, ..Default::default() });
            }
            let mut bytes = vec![0u8];
            bytes.extend(roce_fuzz_common::spec::emit(&b).expect("a short IB packet"));
            out.push((format!("builder-ib-{name}-{opcode:02x}"), bytes));
        }
    }
    for fill in [0x00u8, 0x5a, 0xff] {
        let mut bytes = vec![1u8];
        bytes.extend((0..96).map(|i: u8| i.wrapping_mul(31) ^ fill));
        out.push((format!("structured-{fill:02x}"), bytes));
    }
    out
}

/// A tunnel record of `kind` for the `encap` seeds: outer 192.0.2.1 -> 192.0.2.9 (IPv4, or
/// 2001:db8::c000:201 -> ::c000:209), tags 100 and 200 when `flags` asks, the tunnel header
/// as a mirror or an overlay writes it (ERSPAN II session 7, ERSPAN III session 1000 with its
/// platform subheader, VXLAN VNI 0xabcdef, Geneve VNI 0x42 with 8 bytes of options).
pub fn encap_record(kind: EncapKind, flags: u8) -> roce_fuzz_common::spec::TunnelRecord {
    use roce_fuzz_common::spec::TunnelRecord;
    let mut r = TunnelRecord::new(kind, flags, &[0]);
    let b = &mut r.0;
    b[2..4].copy_from_slice(&0x2064u16.to_be_bytes());
    b[4..6].copy_from_slice(&0x00c8u16.to_be_bytes());
    b[6..10].copy_from_slice(&[192, 0, 2, 1]);
    b[10..14].copy_from_slice(&[192, 0, 2, 9]);
    b[14] = 64;
    b[16..18].copy_from_slice(&0xc000u16.to_be_bytes());
    b[19..21].copy_from_slice(&GRE_PROTOCOL_TEB.to_be_bytes());
    b[21..23].copy_from_slice(&0xabcdu16.to_be_bytes());
    b[23..27].copy_from_slice(&0x42u32.to_be_bytes());
    b[27..31].copy_from_slice(&77u32.to_be_bytes());
    let h = &mut b[TunnelRecord::HEADER_AT..];
    let _ = match kind {
        EncapKind::ErspanII => ErspanIIRepr {
            version: 1,
            vlan: 12,
            cos: 5,
            encap_type: 2,
            truncated: false,
            session_id: 7,
            index: 9,
        }
        .emit(h),
        EncapKind::ErspanIII => ErspanIIIRepr {
            version: 2,
            session_id: 1000,
            timestamp: 0xdead_beef,
            sgt: 99,
            hw_id: 5,
            direction: true,
            granularity: 3,
            platform: Some(ErspanPlatform { id: 3, info: 0x0123_4567_89ab }),
            ..Default::default()
        }
        .emit(h),
        EncapKind::Vxlan => VxlanRepr { flags: VxlanRepr::FLAG_I, vni: 0x00ab_cdef }.emit(h),
        EncapKind::Geneve => {
            h[..8].copy_from_slice(&[2, 0x40, 0x65, 0x58, 0, 0, 0x42, 0]);
            Ok(8)
        }
        EncapKind::Gre | EncapKind::ErspanI => Ok(0),
    };
    r
}

/// The Geneve options of the `encap` seeds (one option of 4 data bytes).
const GENEVE_SEED_OPTIONS: [u8; 8] = [0x01, 0x02, 0x80, 0x01, 0xaa, 0xbb, 0xcc, 0xdd];

/// `encap` seeds: builder frames (RC SEND_ONLY over IPv4, IPv6 and a tag, a UD SEND to QP1
/// with its MAD, a CNP, RoCEv1) in every kind of tunnel over IPv4 and IPv6 (with outer tags,
/// GRE key and sequence number), the GRE / Geneve / ERSPAN III kinds carrying IP, two tunnels
/// deep (ERSPAN outside VXLAN or Geneve, GRE over ERSPAN), cut, flipped, with the raw fields
/// (ERSPAN II version 2), three segments, and built inner frames.
pub fn encap_seeds() -> Vec<(String, Vec<u8>)> {
    use roce_fuzz_common::spec::{EncapInput, TunnelRecord as R};
    let op = |o: u8| lookup_opcode(o).expect("table opcode");
    let send4 = builder_frame(op(0x04), Net::Ipv4);
    let send6 = builder_frame(op(0x04), Net::Ipv6);
    let inners = [
        ("send4", send4.clone()),
        ("send6", send6.clone()),
        ("send4vlan", builder_frame(op(0x04), Net::Ipv4Vlan)),
        ("udmad", builder_frame(op(0x64), Net::Ipv4)),
        ("cnp6", builder_frame(op(0x81), Net::Ipv6)),
        ("rocev1", builder_frame(op(0x04), Net::RoceV1)),
    ];
    let kinds = [
        EncapKind::Gre,
        EncapKind::ErspanI,
        EncapKind::ErspanII,
        EncapKind::ErspanIII,
        EncapKind::Vxlan,
        EncapKind::Geneve,
    ];
    let opts = |r: &R| -> &'static [u8] {
        if r.kind() == EncapKind::Geneve {
            &GENEVE_SEED_OPTIONS
        } else {
            &[]
        }
    };
    let input = |control: u8, tunnels: Vec<R>, inner: &[u8]| {
        let options = tunnels.iter().map(opts).collect();
        EncapInput { control, damage_at: 0, xor: 0x40, cuts: [40, 90], tunnels, options, inner }
            .encode()
    };
    let mut out = Vec::new();
    let v6tags = R::IPV6 | R::VLAN0 | R::VLAN1;
    for k in kinds {
        let code = k.code();
        for (fl, flags) in [("v4", 0), ("v6tags", v6tags), ("keyseq", R::GRE_K | R::GRE_S)] {
            out.push((
                format!("builder-encap-{code}-{fl}"),
                input(0, vec![encap_record(k, flags)], &send4),
            ));
        }
        if matches!(k, EncapKind::Gre | EncapKind::Geneve | EncapKind::ErspanIII) {
            // The IP packet as the inner bytes (a raw inner frame is carried as it is).
            for (name, inner) in [("send4", &send4), ("send6", &send6)] {
                let r = encap_record(k, R::INNER_IP);
                let ip = &inner[14..];
                out.push((format!("builder-encap-{code}-ip-{name}"), input(0, vec![r], ip)));
            }
        }
    }
    for (name, inner) in &inners {
        let r = encap_record(EncapKind::ErspanII, R::VLAN1);
        out.push((format!("builder-encap-erspan2-{name}"), input(0, vec![r], inner)));
    }
    let two = [
        ("erspan2-vxlan", EncapKind::ErspanII, 0, EncapKind::Vxlan, 0),
        ("erspan3-geneve", EncapKind::ErspanIII, R::IPV6, EncapKind::Geneve, R::VLAN0),
        ("gre-ip-erspan2", EncapKind::Gre, R::INNER_IP, EncapKind::ErspanII, 0),
        ("geneve-ip-vxlan", EncapKind::Geneve, R::INNER_IP | R::IPV6, EncapKind::Vxlan, 0),
    ];
    for (name, a, fa, b, fb) in two {
        let t = vec![encap_record(a, fa), encap_record(b, fb)];
        out.push((format!("builder-encap-two-{name}"), input(EncapInput::TWO, t, &send4)));
    }
    // Damaged: cut inside the inner frame (damage 1) and a flip in the ERSPAN header (2).
    let erspan = || vec![encap_record(EncapKind::ErspanII, 0)];
    for (name, damage, at) in [("cut", 1u8, 60u16), ("cut-icrc", 1, 124), ("flip", 2, 42)] {
        let mut v = input(damage << EncapInput::DAMAGE_SHIFT, erspan(), &send4);
        v[1..3].copy_from_slice(&at.to_be_bytes());
        out.push((format!("builder-encap-{name}"), v));
    }
    // The raw fields: ERSPAN II version 2 (malformed), GRE version 1.
    let mut bad = encap_record(EncapKind::ErspanII, 0);
    bad.0[R::HEADER_AT] = (bad.0[R::HEADER_AT] & 0x0f) | 0x20;
    out.push((
        "builder-encap-raw-erspan2-v2".into(),
        input(EncapInput::RAW_FIELDS, vec![bad], &send4),
    ));
    let mut gre = encap_record(EncapKind::Gre, 0);
    gre.0[18] = 1;
    out.push(("builder-encap-raw-gre-v1".into(), input(EncapInput::RAW_FIELDS, vec![gre], &send4)));
    // Three segments, ICRC not verified.
    let c = EncapInput::THREE_SEGMENTS | EncapInput::NO_VERIFY;
    out.push((
        "builder-encap-segments".into(),
        input(c, vec![encap_record(EncapKind::Vxlan, 0)], &send6),
    ));
    // Built inner frames: the `arbitrary` input is a captured UDP payload (its first byte the
    // opcode), as the structured targets' seeds are.
    for (name, inner) in [("send4", &send4), ("udmad", &inners[3].1)] {
        let r = encap_record(EncapKind::Geneve, R::IPV6);
        out.push((
            format!("builder-encap-built-{name}"),
            input(EncapInput::BUILT, vec![r], &inner[42..]),
        ));
    }
    out
}

/// Sequences for the checker: every opcode's frame in turn (one QP pair), under each seed
/// option byte.
pub fn every_opcode_sequences() -> Vec<(String, Vec<u8>)> {
    let all: Vec<Vec<u8>> = OPCODES.iter().map(|info| builder_frame(info, Net::Ipv4)).collect();
    CONFORMANCE_OPTIONS
        .iter()
        .chain(std::iter::once(&TIMER_OPTIONS))
        .map(|&opt| {
            ("builder-every-opcode".to_string(), roce_fuzz_common::sequence::encode(opt, &all))
        })
        .collect()
}

/// Small captures of builder frames: pcap (both byte orders, micro/nano), pcapng, gzip, and
/// each link type.
pub fn capture_seeds() -> Vec<(String, Vec<u8>)> {
    let pick = |ops: &[u8], net: Net| -> Vec<Vec<u8>> {
        ops.iter()
            .filter_map(|&op| roce_parser::lookup_opcode(op))
            .map(|info| builder_frame(info, net))
            .collect()
    };
    let eth = pick(&[0x04, 0x06, 0x0c, 0x11, 0x64, 0x81], Net::Ipv4);
    let eth6 = pick(&[0x0a, 0x10, 0x12], Net::Ipv6);
    let v1 = pick(&[0x00, 0x01, 0x02, 0x11], Net::RoceV1);
    let mut out = vec![
        ("builder-pcap-us-le".into(), capfile::pcap(1, false, false, &eth)),
        ("builder-pcap-ns-be".into(), capfile::pcap(1, true, true, &eth6)),
        ("builder-pcap-rocev1".into(), capfile::pcap(1, false, false, &v1)),
        ("builder-pcapng".into(), capfile::pcapng(&eth)),
    ];
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&capfile::pcap(1, false, false, &eth)).expect("gzip");
    out.push(("builder-pcap-gzip".into(), gz.finish().expect("gzip")));
    let wrap = |f: fn(&[u8]) -> Vec<u8>, frames: &[Vec<u8>]| -> Vec<Vec<u8>> {
        frames.iter().map(|x| f(x)).collect()
    };
    let mixed: Vec<Vec<u8>> = eth.iter().chain(&eth6).cloned().collect();
    out.push(("builder-sll".into(), capfile::pcap(113, false, false, &wrap(capfile::sll, &mixed))));
    out.push((
        "builder-sll-rocev1".into(),
        capfile::pcap(113, false, false, &wrap(capfile::sll, &v1)),
    ));
    out.push((
        "builder-sll2".into(),
        capfile::pcap(276, false, false, &wrap(capfile::sll2, &mixed)),
    ));
    out.push((
        "builder-raw".into(),
        capfile::pcap(101, false, false, &wrap(capfile::raw_ip, &mixed)),
    ));
    out.push((
        "builder-ipv4".into(),
        capfile::pcap(228, false, false, &wrap(capfile::raw_ip, &eth)),
    ));
    out.push((
        "builder-ipv6".into(),
        capfile::pcap(229, false, false, &wrap(capfile::raw_ip, &eth6)),
    ));
    out.push((
        "builder-null".into(),
        capfile::pcap(0, false, false, &wrap(|f| capfile::null(f, false), &mixed)),
    ));
    out.push((
        "builder-loop".into(),
        capfile::pcap(108, false, false, &wrap(|f| capfile::null(f, true), &mixed)),
    ));
    out.push(("builder-erf".into(), capfile::pcap(197, false, false, &eth[..1])));
    out
}
