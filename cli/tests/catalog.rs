//! The field catalog (`roce_analysis::FIELDS`) against what the commands write. Over a
//! capture generated from the opcode table (every opcode, every extended header, IPv4 with
//! a VLAN tag, IPv6 with two, RoCEv1, a bad ICRC, a cut frame, a runt) and the shipped
//! captures (pcaps/, with the CM exchanges of pcaps/conformance), each test fails when a
//! renderer and the catalog disagree on a field:
//!
//! - every member `dissect --format jsonl` writes is a catalog row, and every row is written
//!   on some frame (`json_members_are_the_catalog`);
//! - the rows are the members of docs/schema/frame.schema.json (`schema_is_the_catalog`);
//! - `dissect -T fields -e` of every filter row writes the value the JSON holds, and `-Y` of
//!   every header row selects the frames whose JSON has it (`filter_reads_what_json_writes`);
//! - each row's label is in the `dissect -V` tree of every frame that has the field
//!   (`text_tree_shows_every_labelled_field`);
//! - the packets table's columns are the rows' columns (`parquet_columns_are_the_catalog`);
//! - each row's C member is in ffi/include/roce_parser.h's `roce_packet`, and the members of
//!   the C struct of each RoCE header are its rows' (`c_structs_are_the_catalog`).
//!
//! The tshark names of the rows are checked by cli/tests/tshark.rs (`check_catalog`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use roce_analysis::{FieldKind, FIELDS, FILTER_FIELDS};
use roce_inspect::internal::gen::Trace;
use roce_parser::{BthRepr, ExtHeaders, GrhRepr, LrhRepr};
use roce_parser::{FrameBuilder, Ipv4Spec, Ipv6Spec, Network, VlanTag};
use roce_parser::{PayloadRule, OPCODES};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The network layers the generated frames take in turn.
fn networks(k: u8) -> [(Network, [Option<VlanTag>; 2]); 4] {
    let tag = |tpid, vid| Some(VlanTag { tpid, pcp: 5, dei: true, vid });
    let v6 = |last: u8| {
        let mut a = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last];
        a[8] = k;
        a
    };
    let gid = |last| {
        let mut g = v6(last);
        g[..2].copy_from_slice(&[0xfe, 0x80]);
        g
    };
    [
        (
            Network::Ipv4(Ipv4Spec {
                src: [10, 0, k, 1],
                dst: [10, 0, k, 2],
                dscp: 26,
                ecn: 3,
                ttl: 63,
                identification: 0x1234,
                dont_fragment: true,
            }),
            [tag(0x8100, 100 + u16::from(k)), None],
        ),
        (
            Network::Ipv6(Ipv6Spec {
                src: v6(1),
                dst: v6(2),
                traffic_class: 0x6a,
                flow_label: 0xabcde,
                hop_limit: 62,
            }),
            [tag(0x88a8, 7), tag(0x8100, 200)],
        ),
        (Network::ipv4([192, 168, k, 1], [192, 168, k, 2]), [None, None]),
        (
            Network::RoceV1(GrhRepr {
                ipver: 6,
                tclass: 0x28,
                flow_label: 0x12345,
                paylen: 0,
                nxthdr: 0x1b,
                hoplmt: 64,
                sgid: gid(3),
                dgid: gid(4),
            }),
            [None, None],
        ),
    ]
}

/// The generated capture: every opcode of the table over each network layer, each header
/// the opcode carries filled from a byte pattern (through the header table, so a new header
/// is here without a line of this test), then a bad ICRC, a frame cut inside the BTH and a
/// runt.
fn generated() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let mut t = Trace::new();
        let pattern: Vec<u8> = (0u8..64).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
        let payload: Vec<u8> = (0u8..=255).collect();
        for (k, info) in OPCODES.iter().enumerate() {
            let k = k as u8;
            let mut headers = ExtHeaders::default();
            for &h in info.headers {
                let from = usize::from(k) % 8;
                headers.parse_one(h, &pattern[from..]).unwrap();
            }
            let n = match info.payload {
                PayloadRule::Empty => 0,
                PayloadRule::Pmtu => 256,
                PayloadRule::OneToPmtu | PayloadRule::ZeroToPmtu => 5,
                PayloadRule::Exactly(n) => usize::from(n),
            };
            let body = if info.opcode == 0x81 { &[0u8; 16][..n] } else { &payload[..n] };
            for (network, vlans) in networks(k) {
                let bth = BthRepr {
                    opcode: info.opcode,
                    se: k.is_multiple_of(2),
                    migreq: true,
                    padcnt: 0,
                    tver: 0,
                    pkey: 0xffff - u16::from(k),
                    fecn: k.is_multiple_of(3),
                    becn: k % 3 == 1,
                    resv6: 0,
                    dest_qp: 0x1200 + u32::from(k),
                    ackreq: k % 2 == 1,
                    resv7: 0,
                    psn: 0x00ff_fff0 + u32::from(k % 16),
                };
                let mut b = FrameBuilder::new(network, bth);
                b.vlans = vlans;
                b.eth_src = [0x02, 0, 0, 0, 0x01, k];
                b.headers = headers;
                b.payload = body;
                t.push(&b);
            }
        }
        let mut b = FrameBuilder::new(
            Network::ipv4([10, 9, 9, 1], [10, 9, 9, 2]),
            BthRepr { opcode: 0x04, resv6: 0x15, resv7: 0x2a, dest_qp: 0x99, ..BthRepr::default() },
        );
        b.payload = &payload[..12];
        b.icrc = Some(0xdead_beef);
        t.push(&b);
        let mut cut = vec![0; b.buffer_len()];
        b.emit(&mut cut).unwrap();
        cut.truncate(14 + 20 + 8 + 6);
        t.push_bytes(cut);
        t.push_bytes(vec![0x02; 10]);
        for frame in tunnelled(&payload) {
            t.push_bytes(frame);
        }
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog-every-header.pcap");
        t.write_pcap(std::fs::File::create(&path).unwrap()).unwrap();
        path
    })
}

/// A RoCE frame in every tunnel, with every optional header: ERSPAN I, II (outer QinQ),
/// III with the platform subheader and GRE checksum and key over IPv6, GRE-TEB, VXLAN,
/// Geneve with options, and ERSPAN II around VXLAN (two tunnels).
fn tunnelled(payload: &[u8]) -> Vec<Vec<u8>> {
    use roce_parser::{ErspanIIIRepr, ErspanIIRepr, ErspanPlatform, GeneveRepr, GreRepr};
    use roce_parser::{Tunnel, TunnelBuilder, VxlanRepr, GRE_PROTOCOL_TEB};
    let bth =
        BthRepr { opcode: 0x04, dest_qp: 0x4242, psn: 17, pkey: 0xffff, ..BthRepr::default() };
    let mut b = FrameBuilder::new(Network::ipv4([10, 8, 8, 1], [10, 8, 8, 2]), bth);
    b.payload = &payload[..9];
    let mut inner = vec![0; b.buffer_len()];
    b.emit(&mut inner).unwrap();
    let v4 = Network::ipv4([192, 0, 2, 1], [192, 0, 2, 200]);
    let v6 =
        Network::ipv6([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0x20; 16]);
    let gre = GreRepr::default();
    let erspan2 = ErspanIIRepr {
        version: 1,
        vlan: 12,
        cos: 5,
        encap_type: 3,
        session_id: 7,
        index: 99,
        ..Default::default()
    };
    let tunnels = [
        (Tunnel::ErspanI(gre), v4, false),
        (Tunnel::ErspanII(GreRepr { seq: Some(5), ..gre }, erspan2), v4, true),
        (
            Tunnel::ErspanIII(
                GreRepr { checksum: Some(0x1234), key: Some(0xabcd), seq: Some(6), ..gre },
                ErspanIIIRepr {
                    version: 2,
                    vlan: 30,
                    cos: 2,
                    bso: 1,
                    truncated: true,
                    session_id: 1001,
                    timestamp: 123_456,
                    sgt: 77,
                    pdu: false,
                    frame_type: 0,
                    hw_id: 9,
                    direction: true,
                    granularity: 3,
                    platform: Some(ErspanPlatform { id: 3, info: 0x0102_0304_0506 }),
                },
            ),
            v6,
            false,
        ),
        (Tunnel::Gre(GreRepr { protocol: GRE_PROTOCOL_TEB, key: Some(1), ..gre }), v4, false),
        (Tunnel::Vxlan(VxlanRepr { flags: VxlanRepr::FLAG_I, vni: 5000 }), v4, false),
        (
            Tunnel::Geneve(GeneveRepr {
                protocol: GRE_PROTOCOL_TEB,
                vni: 77,
                critical: true,
                options: &[0x01, 0x02, 0x80, 0x01, 0xaa, 0xbb, 0xcc, 0xdd],
                ..Default::default()
            }),
            v6,
            false,
        ),
    ];
    let wrap = |t: Tunnel<'_>, net: Network, qinq: bool, inner: &[u8]| {
        let mut w = TunnelBuilder::new(net, t);
        if qinq {
            w.vlans = [
                Some(VlanTag { tpid: 0x88a8, pcp: 1, dei: true, vid: 100 }),
                Some(VlanTag { tpid: 0x8100, pcp: 2, dei: false, vid: 200 }),
            ];
        }
        let mut out = vec![0; w.buffer_len(inner.len())];
        w.emit(inner, &mut out).unwrap();
        out
    };
    let mut out: Vec<Vec<u8>> = tunnels.iter().map(|&(t, n, q)| wrap(t, n, q, &inner)).collect();
    let vxlan = wrap(tunnels[4].0, v4, false, &inner);
    out.push(wrap(tunnels[1].0, v4, false, &vxlan));
    out
}

/// A pcap file of link type `link_type` holding `frames` (1 s apart).
fn write_pcap(path: &Path, link_type: u32, frames: &[Vec<u8>]) {
    let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&link_type.to_le_bytes());
    for (i, b) in frames.iter().enumerate() {
        f.extend_from_slice(&(1_700_000_000 + i as u32).to_le_bytes());
        f.extend_from_slice(&0u32.to_le_bytes());
        f.extend_from_slice(&(b.len() as u32).to_le_bytes());
        f.extend_from_slice(&(b.len() as u32).to_le_bytes());
        f.extend_from_slice(b);
    }
    std::fs::write(path, f).unwrap();
}

/// A native InfiniBand capture (DLT_INFINIBAND, 247): every opcode of the table without and
/// with a GRH, then a packet with a bad VCRC, one with a bad ICRC and one cut short.
fn native_ib() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let payload: Vec<u8> = (0u8..=255).collect();
        let lrh = LrhRepr { vl: 2, sl: 5, dlid: 0x0012, slid: 0x000c, ..Default::default() };
        let mut gid = [0u8; 16];
        gid[..2].copy_from_slice(&[0xfe, 0x80]);
        gid[15] = 0x0c;
        let grh = GrhRepr {
            ipver: 6,
            tclass: 3,
            flow_label: 7,
            hoplmt: 1,
            sgid: gid,
            dgid: [0x20; 16],
            ..Default::default()
        };
        let mut out = Vec::new();
        let emit = |b: &FrameBuilder<'_>| {
            let mut v = vec![0; b.buffer_len()];
            b.emit(&mut v).unwrap();
            v
        };
        for info in OPCODES {
            let n = match info.payload {
                PayloadRule::Empty => 0,
                PayloadRule::Pmtu => 256,
                PayloadRule::OneToPmtu | PayloadRule::ZeroToPmtu => 5,
                PayloadRule::Exactly(n) => usize::from(n),
            };
            for network in [Network::infiniband(lrh), Network::Infiniband(lrh, Some(grh))] {
                let bth = BthRepr {
                    opcode: info.opcode,
                    pkey: 0xffff,
                    dest_qp: 0x29,
                    psn: 77,
                    ..BthRepr::default()
                };
                let mut b = FrameBuilder::new(network, bth);
                b.payload = &payload[..n];
                out.push(emit(&b));
            }
        }
        let bth = BthRepr { opcode: 0x04, dest_qp: 0x29, psn: 78, ..BthRepr::default() };
        let mut b = FrameBuilder::new(Network::infiniband(lrh), bth);
        b.payload = &payload[..8];
        let mut bad_vcrc = emit(&b);
        *bad_vcrc.last_mut().unwrap() ^= 0x40;
        out.push(bad_vcrc);
        b.icrc = Some(0xdead_beef);
        out.push(emit(&b));
        let mut cut = emit(&b);
        cut.truncate(20);
        out.push(cut);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog-native-ib.pcap");
        write_pcap(&path, 247, &out);
        path
    })
}

/// The inputs: the generated captures, pcaps/sample.pcap and pcaps/conformance/*.pcap, each
/// alone, and the sample read twice as two taps (each frame's `source`, every second frame a
/// copy).
fn captures() -> Vec<Vec<PathBuf>> {
    let sample = root().join("pcaps/sample.pcap");
    let mut v = vec![
        vec![generated().to_path_buf()],
        vec![native_ib().to_path_buf()],
        vec![sample.clone()],
    ];
    let mut conf: Vec<PathBuf> = std::fs::read_dir(root().join("pcaps/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    conf.sort();
    v.extend(conf.into_iter().map(|p| vec![p]));
    v.push(vec![sample.clone(), sample]);
    v
}

/// The input's files, as the messages name them.
fn name(files: &[PathBuf]) -> String {
    files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ")
}

/// The files as arguments.
fn args(files: &[PathBuf]) -> Vec<&str> {
    files.iter().map(|p| p.to_str().unwrap()).collect()
}

/// The frame objects of `dissect --format jsonl` over the files.
fn frames(files: &[PathBuf]) -> Vec<Value> {
    run(&[&["dissect", "--format", "jsonl"][..], &args(files)].concat())
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every member path of a frame object: arrays add no segment (`vlan.vid`), the CM object
/// is one member (its members are the CM document's). Null members are left out.
fn member_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if v.is_null() {
                    continue;
                }
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                if path != "roce.cm" {
                    member_paths(v, &path, out);
                }
                if !matches!(v, Value::Array(a) if a.is_empty()) {
                    out.insert(path);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| member_paths(v, prefix, out)),
        _ => {}
    }
}

/// The values at `path` (through arrays), nulls left out.
fn values_at<'v>(v: &'v Value, path: &str) -> Vec<&'v Value> {
    let mut here = vec![v];
    for seg in path.split('.') {
        let mut next = Vec::new();
        for v in here {
            match v.get(seg) {
                Some(Value::Array(a)) => next.extend(a.iter()),
                Some(Value::Null) | None => {}
                Some(v) => next.push(v),
            }
        }
        here = next;
    }
    here
}

#[test]
fn json_members_are_the_catalog() {
    let rows: BTreeSet<&str> = FIELDS.iter().map(|f| f.path).collect();
    let mut seen = BTreeSet::new();
    for cap in captures() {
        for (i, frame) in frames(&cap).iter().enumerate() {
            let mut paths = BTreeSet::new();
            member_paths(frame, "", &mut paths);
            for p in &paths {
                assert!(
                    rows.contains(p.as_str()),
                    "{} frame {}: JSON member {p} is not a row of roce_analysis::FIELDS",
                    name(&cap),
                    i + 1
                );
            }
            seen.extend(paths);
        }
    }
    let unseen: Vec<&&str> = rows.iter().filter(|r| !seen.contains(**r)).collect();
    assert!(unseen.is_empty(), "catalog rows no frame's JSON has: {unseen:?}");
}

/// The member paths docs/schema/frame.schema.json allows, `$ref`s followed, arrays adding
/// no segment, the CM object one member.
fn schema_paths(node: &Value, schema: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Some(r) = node.get("$ref").and_then(Value::as_str) {
        let target = schema.pointer(r.trim_start_matches('#')).unwrap();
        return schema_paths(target, schema, prefix, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for n in node.get(key).and_then(Value::as_array).into_iter().flatten() {
            schema_paths(n, schema, prefix, out);
        }
    }
    if let Some(items) = node.get("items") {
        schema_paths(items, schema, prefix, out);
    }
    for (k, n) in node.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        if path != "roce.cm" {
            schema_paths(n, schema, &path, out);
        }
        out.insert(path);
    }
}

#[test]
fn schema_is_the_catalog() {
    let text = std::fs::read_to_string(root().join("docs/schema/frame.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut paths = BTreeSet::new();
    schema_paths(&schema, &schema, "", &mut paths);
    let rows: BTreeSet<String> = FIELDS.iter().map(|f| f.path.to_string()).collect();
    let not_in_schema: Vec<&String> = rows.difference(&paths).collect();
    let not_in_catalog: Vec<&String> = paths.difference(&rows).collect();
    assert!(not_in_schema.is_empty(), "rows frame.schema.json lacks: {not_in_schema:?}");
    assert!(not_in_catalog.is_empty(), "schema members with no row: {not_in_catalog:?}");
}

/// A value as `-T fields` writes it: addresses compared as addresses (a GID that maps an
/// IPv4 address is that address), the rest as text.
fn cell(kind: FieldKind, s: &str) -> String {
    match kind {
        FieldKind::Ip => match s.parse::<IpAddr>().unwrap() {
            IpAddr::V6(a) => a.to_ipv4_mapped().map_or(IpAddr::V6(a), IpAddr::V4).to_string(),
            a => a.to_string(),
        },
        _ => s.to_string(),
    }
}

fn json_cell(kind: FieldKind, v: &Value) -> String {
    match v {
        Value::String(s) => cell(kind, s),
        v => v.to_string(),
    }
}

#[test]
fn filter_reads_what_json_writes() {
    let valued: Vec<_> = FILTER_FIELDS.iter().filter(|f| f.kind != FieldKind::Object).collect();
    let files = self::args;
    let mut args = vec!["dissect", "-T", "fields"];
    for f in &valued {
        args.extend(["-e", f.name]);
    }
    let mut compared = BTreeSet::new();
    for cap in captures() {
        let p = name(&cap);
        let json = frames(&cap);
        let fields = run(&[&args[..], &files(&cap)].concat());
        assert_eq!(fields.lines().count(), json.len(), "{p}");
        for (line, frame) in fields.lines().zip(&json) {
            for (f, got) in valued.iter().zip(line.split('\t')) {
                let want: Vec<String> =
                    values_at(frame, f.path).iter().map(|v| json_cell(f.kind, v)).collect();
                let got: Vec<String> = if got.is_empty() {
                    Vec::new()
                } else {
                    got.split(',').map(|s| cell(f.kind, s)).collect()
                };
                assert_eq!(
                    got, want,
                    "{p} frame {}: -e {} against JSON {}",
                    frame["frame"], f.name, f.path
                );
                if !want.is_empty() {
                    compared.insert(f.name);
                }
            }
        }
    }
    let never: Vec<&str> =
        valued.iter().map(|f| f.name).filter(|n| !compared.contains(n)).collect();
    assert!(never.is_empty(), "filter fields no frame has: {never:?}");

    // Headers: `-Y NAME` selects the frames whose JSON has the member.
    let cm = root().join("pcaps/conformance/clean-cm-reconnect.pcap");
    for cap in [generated(), root().join("pcaps/sample.pcap").as_path(), cm.as_path()] {
        let p = cap.to_str().unwrap();
        let json = frames(&[cap.to_path_buf()]);
        for f in FILTER_FIELDS.iter().filter(|f| f.kind == FieldKind::Object) {
            let got = run(&["dissect", "-Y", f.name, "-T", "fields", "-e", "frame", p]);
            let want: String = json
                .iter()
                .filter(|frame| {
                    let mut paths = BTreeSet::new();
                    member_paths(frame, "", &mut paths);
                    paths.contains(f.path)
                })
                .map(|frame| format!("{}\n", frame["frame"]))
                .collect();
            assert_eq!(got, want, "{p}: -Y {}", f.name);
        }
    }
}

/// The `dissect -V` tree of each frame, by frame number (a frame of several taps opens
/// with a line of its own saying where it comes from: one block with the tree).
fn trees(files: &[PathBuf]) -> BTreeMap<u64, String> {
    let text = run(&[&["dissect", "-V"][..], &args(files)].concat());
    let mut out = BTreeMap::new();
    let mut current: Option<(u64, String)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Frame ") {
            let n = rest.split(':').next().unwrap().parse().unwrap();
            if current.as_ref().is_none_or(|(c, _)| *c != n) {
                out.extend(current.take());
                current = Some((n, String::new()));
            }
        }
        if let Some((_, block)) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    out.extend(current);
    out
}

#[test]
fn text_tree_shows_every_labelled_field() {
    let mut shown = BTreeSet::new();
    for cap in captures() {
        let trees = trees(&cap);
        for frame in frames(&cap) {
            let n = frame["frame"].as_u64().unwrap();
            let tree = &trees[&n];
            let mut paths = BTreeSet::new();
            member_paths(&frame, "", &mut paths);
            for f in FIELDS.iter().filter(|f| paths.contains(f.path)) {
                let Some(label) = f.label else { continue };
                assert!(
                    label.split('|').any(|l| tree.contains(l)),
                    "{} frame {n}: {} ({label:?}) is not in the -V tree:\n{tree}",
                    name(&cap),
                    f.path
                );
                shown.insert(f.path);
            }
        }
    }
    let never: Vec<&str> = FIELDS
        .iter()
        .filter(|f| f.label.is_some() && !shown.contains(f.path))
        .map(|f| f.path)
        .collect();
    assert!(never.is_empty(), "labelled rows no frame has: {never:?}");
}

#[test]
fn parquet_columns_are_the_catalog() {
    use roce_analysis::rows::{PACKET_COLUMNS, PACKET_UNIQUE, SOURCE_COLUMNS};
    // What the checker says of a packet, not a field of the frame.
    const JUDGED: [&str; 2] = ["retransmission", "incarnation"];
    // With several captures read as one, the source columns follow the others.
    let columns: BTreeSet<&str> = PACKET_COLUMNS
        .iter()
        .chain(SOURCE_COLUMNS)
        .map(|c| c.name)
        .filter(|c| !JUDGED.contains(c))
        .collect();
    let rows: BTreeSet<&str> = FIELDS.iter().filter_map(|f| f.column).collect();
    assert_eq!(columns, rows, "packets.parquet's columns against the catalog's");
    assert_eq!(PACKET_COLUMNS.iter().filter(|c| JUDGED.contains(&c.name)).count(), JUDGED.len());
    // The 64-bit fields are the hex strings written without a dictionary.
    let hex: BTreeSet<&str> =
        FIELDS.iter().filter(|f| f.kind == FieldKind::Hex64).filter_map(|f| f.column).collect();
    assert_eq!(PACKET_UNIQUE.iter().copied().collect::<BTreeSet<_>>(), hex);
}

/// The `typedef struct NAME { ... } NAME;` blocks of the C header: each struct's members, a
/// member's type when it is a struct (`struct roce_vlan vlans[2]` is `vlans` of `roce_vlan`).
fn c_structs(header: &str) -> BTreeMap<String, BTreeMap<String, Option<String>>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, BTreeMap<String, Option<String>>)> = None;
    for line in header.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("typedef struct ") {
            current = Some((rest.trim_end_matches(" {").to_string(), BTreeMap::new()));
        } else if line.starts_with('}') {
            out.extend(current.take());
        } else if let Some((_, members)) = current.as_mut() {
            let Some(decl) = line.strip_suffix(';') else { continue };
            let words: Vec<&str> = decl.split_whitespace().collect();
            let Some(name) = words.last() else { continue };
            let name = name.split('[').next().unwrap().to_string();
            let ty = (words.first() == Some(&"struct")).then(|| words[1].to_string());
            members.insert(name, ty);
        }
    }
    out
}

#[test]
fn c_structs_are_the_catalog() {
    let header = std::fs::read_to_string(root().join("ffi/include/roce_parser.h")).unwrap();
    let structs = c_structs(&header);
    let packet = &structs["roce_packet"];
    // Each row's member is in roce_packet.
    for f in FIELDS {
        let Some(c) = f.c else { continue };
        let mut here = packet;
        let mut segs = c.split('.').peekable();
        while let Some(seg) = segs.next() {
            let ty = here.get(seg).unwrap_or_else(|| panic!("{}: C has no {c}", f.path));
            if segs.peek().is_some() {
                here = &structs
                    [ty.as_ref().unwrap_or_else(|| panic!("{}: {seg} is no struct", f.path))];
            }
        }
    }
    // Each RoCE header of the catalog (`roce.<key>`) is a struct of roce_packet whose members
    // are its rows, and back.
    const NOT_IN_C: [&str; 1] = ["roce.bth.opcode_name"];
    let headers = FIELDS.iter().filter(|f| f.kind == FieldKind::Object);
    let mut matched = 0;
    for h in headers.filter_map(|h| h.path.strip_prefix("roce.").map(|k| (h, k))) {
        let (h, key) = h;
        let Some((member, ty)) = packet
            .iter()
            .find(|(m, ty)| ty.is_some() && m.replace('_', "") == key)
            .map(|(m, ty)| (m, ty.as_ref().unwrap()))
        else {
            continue;
        };
        matched += 1;
        let prefix = format!("{}.", h.path);
        let rows: BTreeSet<String> = FIELDS
            .iter()
            .filter(|f| f.path.starts_with(&prefix) && !NOT_IN_C.contains(&f.path))
            .map(|f| f.c.unwrap_or_else(|| panic!("{}: no C member in the catalog", f.path)))
            .map(str::to_string)
            .collect();
        let c: BTreeSet<String> = structs[ty]
            .keys()
            .filter(|m| !matches!(m.as_str(), "present" | "reserved"))
            .map(|m| format!("{member}.{m}"))
            .collect();
        assert_eq!(rows, c, "{}: the catalog's C members against struct {ty}", h.path);
    }
    // grh, bth and every extended header.
    assert_eq!(matched, 2 + roce_parser::ExtHeader::ALL.len());
}
