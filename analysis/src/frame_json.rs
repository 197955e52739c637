//! The JSON contract of `dissect --format json|jsonl` (docs/json.md, schema
//! docs/schema/frame.schema.json), written by hand: one
//! function per object below, keys in contract order, straight into a reusable buffer. With
//! serde_json (derived structs) 60% of `dissect --format jsonl` went to escaping the
//! constant keys byte by byte and to ~200 small writes per frame (BENCHMARKS.md); here keys
//! are literals, integers go through itoa and only strings that come from data are escaped.
//! The CM object, rare and wide, is still serialized by serde (`crate::cm_json`). The
//! extended transport headers' objects are written by code the field catalog makes from its
//! rows (`crate::fields`), with the same `Obj`.
//!
//! Public as [`crate::write_frame_json`]: `dissect --format json|jsonl` writes each frame
//! with it, and so can any other user of the library.

use std::io::Write;
use std::net::IpAddr;

use roce_conformance::internal::json::{write_hex64, write_ts, SCHEMA_FRAME};
use roce_parser::{
    Encap, Error, EthernetInfo, IcrcStatus, IpInfo, Packet, Roce, Tunnel, UdpInfo, VlanTag,
};

use crate::{Decoded, Undecoded};

/// A JSON object being written: commas between members, `close` writes the brace. The
/// extended headers' objects are written with it by the field catalog
/// (`crate::fields::write_ext_headers_json`).
pub(crate) struct Obj<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Obj<'o> {
    #[inline(always)]
    pub(crate) fn open(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, empty: true }
    }

    /// Writes `"key":`; `key` is a literal of the contract (nothing to escape).
    #[inline(always)]
    fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    #[inline(always)]
    pub(crate) fn int(&mut self, key: &str, v: impl JsonInt) -> &mut Self {
        let out = self.key(key);
        match v.small() {
            Some(n) if n < 10 => out.push(b'0' + n),
            Some(n) => out.extend_from_slice(&[b'0' + n / 10, b'0' + n % 10]),
            None => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        }
        self
    }

    #[inline(always)]
    fn opt_int(&mut self, key: &str, v: Option<impl JsonInt>) -> &mut Self {
        match v {
            Some(v) => self.int(key, v),
            None => {
                self.key(key).extend_from_slice(b"null");
                self
            }
        }
    }

    /// A 64-bit identifier as a `"0x…"` string (the JSON contract: exact in every reader).
    #[inline(always)]
    pub(crate) fn hex64(&mut self, key: &str, v: u64) -> &mut Self {
        write_hex64(self.key(key), v);
        self
    }

    /// A timestamp in ns since the epoch as a `"SECONDS.NANOSECONDS"` string.
    #[inline(always)]
    fn ts(&mut self, key: &str, ns: u64) -> &mut Self {
        write_ts(self.key(key), ns);
        self
    }

    #[inline(always)]
    pub(crate) fn bool(&mut self, key: &str, v: bool) -> &mut Self {
        self.key(key).extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    #[inline(always)]
    pub(crate) fn str(&mut self, key: &str, v: &str) -> &mut Self {
        string(self.key(key), v);
        self
    }

    #[inline(always)]
    fn ip(&mut self, key: &str, v: IpAddr) -> &mut Self {
        let out = self.key(key);
        out.push(b'"');
        match v {
            // Dotted quad by hand: through `Display` it was a fifth of `dissect`'s time.
            IpAddr::V4(a) => {
                let mut buf = itoa::Buffer::new();
                for (i, octet) in a.octets().into_iter().enumerate() {
                    if i > 0 {
                        out.push(b'.');
                    }
                    out.extend_from_slice(buf.format(octet).as_bytes());
                }
            }
            // Writing into a Vec cannot fail.
            IpAddr::V6(a) => {
                let _ = write!(out, "{a}");
            }
        }
        out.push(b'"');
        self
    }

    /// A member whose value `f` writes (an object, an array, null).
    #[inline(always)]
    pub(crate) fn with(&mut self, key: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        f(self.key(key));
        self
    }

    #[inline(always)]
    pub(crate) fn close(&mut self) {
        self.out.push(b'}');
    }
}

/// An integer of the JSON contract. Most of a frame's integers are below 100 (IP version,
/// DSCP, ECN, TTL, flags, pad counts, opcodes): those are written as one or two digits,
/// the others through itoa, whose digits are copied with a call to `memcpy` of their length.
/// That saved 3% of `dissect --format jsonl`'s instructions (BENCHMARKS.md).
pub(crate) trait JsonInt: itoa::Integer + Copy {
    /// The value, when it is in 0..100.
    fn small(self) -> Option<u8>;
}

macro_rules! json_ints {
    ($($t:ty),*) => {$(
        impl JsonInt for $t {
            #[inline(always)]
            fn small(self) -> Option<u8> {
                u8::try_from(self).ok().filter(|&n| n < 100)
            }
        }
    )*};
}
json_ints!(u8, u16, u32, u64, usize, i64);

/// A JSON string, escaped as serde_json escapes (quote, backslash, control characters).
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(hex_digit(b >> 4));
            out.push(hex_digit(b));
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// The lowercase hex digit of the low four bits of `n`.
#[inline(always)]
fn hex_digit(n: u8) -> u8 {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // `n & 0xf` is below 16: the `get` cannot miss (no indexing: the crate denies it).
    HEX.get(usize::from(n & 0xf)).copied().unwrap_or(b'0')
}

/// "aa:bb:cc:dd:ee:ff", built on the stack and appended at once (a push per character
/// checks the vector's capacity 19 times).
fn mac(out: &mut Vec<u8>, m: &[u8; 6]) {
    let mut text = *b"\"00:00:00:00:00:00\"";
    for (octet, digits) in m.iter().zip(text.chunks_exact_mut(3).map(|c| c.iter_mut().skip(1))) {
        for (d, n) in digits.zip([octet >> 4, *octet]) {
            *d = hex_digit(n);
        }
    }
    out.extend_from_slice(&text);
}

/// Appends the JSON object of one frame to `out`: the object of `dissect --format
/// json|jsonl`, the contract of docs/json.md (schema docs/schema/frame.schema.json,
/// `"schema": "roce-inspect/frame/v1"`), keys in the contract's order, on one line. Nothing
/// else is written: no newline after the object (JSON Lines adds it, a JSON array its
/// commas), and `out` is not cleared first.
///
/// ```
/// use roce_analysis::{write_frame_json, Pass};
/// use roce_parser::Config;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
/// let cap = roce_capture::open(std::path::Path::new(path))?;
/// let mut first = Vec::new();
/// Pass::new(&Config::default()).run(cap, |d| {
///     if d.frame.number == 1 {
///         write_frame_json(&mut first, d);
///     }
/// })?;
/// assert!(!first.ends_with(b"\n"));
/// let json: serde_json::Value = serde_json::from_slice(&first).unwrap();
/// assert_eq!(json["frame"], 1);
/// assert_eq!(json["roce"]["bth"]["opcode_name"].as_str().map(str::is_empty), Some(false));
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub fn write_frame_json(out: &mut Vec<u8>, d: &Decoded<'_>) {
    write_frame(out, d, None);
}

/// Where a frame of several captures read as one comes from (`dissect A.pcap B.pcap`): the
/// frame's file and, when the frame is a copy of a packet another tap saw first, that
/// sighting's frame number in the merge. The frame's own number in its file and its tap
/// (the file's place in the list, from 1) are the frame record's
/// ([`roce_capture::Frame::source_number`], [`roce_capture::Frame::source`]).
#[derive(Clone, Copy, Debug)]
pub struct FrameSource<'n> {
    /// The file, as given.
    pub file: &'n str,
    /// The merge's number of the frame this one is a copy of, if it is one.
    pub copy_of: Option<u64>,
}

/// [`write_frame_json`] for a frame of several captures read as one: the same object with a
/// `source` member after `frame` (`{"file", "tap", "frame", "copy_of"?}`: the frame's file,
/// its place in the list from 1, its number in that file, and the merge's number of the
/// frame it is a copy of), `frame` being its number in the merge.
///
/// ```
/// use roce_analysis::{write_frame_json, write_frame_json_from, FrameSource, Pass};
/// use roce_parser::Config;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
/// let cap = roce_capture::open(std::path::Path::new(path))?;
/// let (mut plain, mut from) = (Vec::new(), Vec::new());
/// Pass::new(&Config::default()).run(cap, |d| {
///     if d.frame.number == 2 {
///         write_frame_json(&mut plain, d);
///         let source = FrameSource { file: "tap \"2\".pcap", copy_of: Some(1) };
///         write_frame_json_from(&mut from, d, source);
///     }
/// })?;
/// let mut from: serde_json::Value = serde_json::from_slice(&from).unwrap();
/// let source = from.as_object_mut().unwrap().remove("source").unwrap();
/// assert_eq!(source["file"], "tap \"2\".pcap");
/// assert_eq!((source["tap"].as_u64(), source["frame"].as_u64()), (Some(1), Some(2)));
/// assert_eq!(source["copy_of"], 1);
/// assert_eq!(from, serde_json::from_slice::<serde_json::Value>(&plain).unwrap());
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub fn write_frame_json_from(out: &mut Vec<u8>, d: &Decoded<'_>, source: FrameSource<'_>) {
    write_frame(out, d, Some(source));
}

fn write_frame(out: &mut Vec<u8>, d: &Decoded<'_>, source: Option<FrameSource<'_>>) {
    let f = &d.frame;
    let mut o = Obj::open(out);
    o.str("schema", SCHEMA_FRAME);
    o.int("frame", f.number);
    if let Some(s) = source {
        o.with("source", |out| {
            let mut s_o = Obj::open(out);
            s_o.str("file", s.file).int("tap", u64::from(f.source) + 1);
            s_o.int("frame", f.source_number).opt_int("copy_of", s.copy_of).close();
        });
    }
    o.ts("ts", f.ts_ns).int("caplen", f.caplen).int("len", f.len);
    let p = d.packet.as_ref().ok();
    // A frame that arrived in tunnels (a switch mirror, an overlay): each tunnel's outer
    // layers and headers, outermost first; the members after it describe the inner frame.
    if let Some(p) = p.filter(|p| p.is_encapsulated()) {
        o.with("encap", |out| {
            out.push(b'[');
            for (i, e) in p.tunnels().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_encap(out, e);
            }
            out.push(b']');
        });
    }
    // A native InfiniBand packet: its LRH (instead of Ethernet, IP and UDP) and its VCRC.
    if let Some(l) = p.and_then(|p| p.lrh) {
        o.with("lrh", |out| {
            let mut l_o = Obj::open(out);
            l_o.int("vl", l.vl).int("lver", l.lver).int("sl", l.sl).int("resv2", l.resv2);
            l_o.int("lnh", l.lnh.bits()).str("lnh_name", l.lnh.as_str());
            l_o.int("dlid", l.dlid).int("resv5", l.resv5).int("pktlen", l.pkt_len);
            l_o.int("slid", l.slid).close();
        });
    }
    if let Some(v) = p.and_then(|p| p.vcrc) {
        o.with("vcrc", |out| {
            let mut v_o = Obj::open(out);
            v_o.opt_int("value", v.stored).str("status", v.status.as_str());
            if let IcrcStatus::Bad { computed } = v.status {
                v_o.int("expected", computed);
            }
            v_o.close();
        });
    }
    write_l2_l4(
        &mut o,
        p.and_then(|p| p.eth),
        p.map_or(&[][..], |p| &p.vlans[..]),
        p.and_then(|p| p.ip),
        p.and_then(|p| p.udp),
    );
    o.with("roce", |out| match p.and_then(|p| p.roce.as_ref()) {
        Some(r) => write_roce(out, r),
        None => out.extend_from_slice(b"null"),
    });
    // Every frame: what was found wrong (codes and sentences), and where decoding stopped
    // when it stopped early (the error of a frame whose outermost layer failed, or the
    // layer after which a decoded packet could not be followed further).
    o.with("problems", |out| write_problems(out, p));
    let stop = match &d.packet {
        Ok(p) => p.stop.as_ref(),
        Err(Undecoded::Ethernet(e))
        | Err(Undecoded::Infiniband(e))
        | Err(Undecoded::Network { stop: Some(e), .. }) => Some(e),
        Err(_) => None,
    };
    o.with("stop", |out| match stop {
        Some(e) => write_stop(out, e),
        None => out.extend_from_slice(b"null"),
    });
    // A frame the parser could not be handed (link layer) or that holds no network layer
    // it decodes: the reason (a short stable phrase) and the message in full.
    o.with("undecoded", |out| match &d.packet {
        Err(u) => {
            let mut u_o = Obj::open(out);
            u_o.str("reason", u.reason()).str("message", &u.to_string()).close();
        }
        Ok(_) => out.extend_from_slice(b"null"),
    });
    o.close();
}

/// The `eth`, `vlan`, `ip` and `udp` members: of the frame, or of a tunnel's outer packet.
fn write_l2_l4(
    o: &mut Obj<'_>,
    eth: Option<EthernetInfo>,
    vlans: &[Option<VlanTag>],
    ip: Option<IpInfo>,
    udp: Option<UdpInfo>,
) {
    o.with("eth", |out| match eth {
        Some(e) => {
            let mut e_o = Obj::open(out);
            e_o.with("src", |out| mac(out, &e.src)).with("dst", |out| mac(out, &e.dst));
            e_o.int("ethertype", e.ethertype).close();
        }
        None => out.extend_from_slice(b"null"),
    });
    o.with("vlan", |out| {
        out.push(b'[');
        for (i, t) in vlans.iter().flatten().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let mut t_o = Obj::open(out);
            t_o.int("tpid", t.tpid).int("pcp", t.pcp).bool("dei", t.dei).int("vid", t.vid);
            t_o.close();
        }
        out.push(b']');
    });
    o.with("ip", |out| match ip {
        Some(ip) => {
            let mut i_o = Obj::open(out);
            i_o.int("version", ip.version).ip("src", ip.src).ip("dst", ip.dst);
            i_o.int("dscp", ip.dscp).int("ecn", ip.ecn).int("ttl", ip.ttl);
            if ip.version == 6 {
                i_o.int("flow_label", ip.flow_label);
            }
            i_o.int("protocol", ip.protocol).close();
        }
        None => out.extend_from_slice(b"null"),
    });
    o.with("udp", |out| match udp {
        Some(u) => {
            Obj::open(out).int("sport", u.sport).int("dport", u.dport).int("len", u.len).close()
        }
        None => out.extend_from_slice(b"null"),
    });
}

/// One element of `encap`: the kind, the outer packet's layers, the tunnel's headers and
/// where they and the inner frame start.
fn write_encap(out: &mut Vec<u8>, e: &Encap<'_>) {
    let mut o = Obj::open(out);
    o.str("kind", e.kind().code()).str("name", e.kind().name());
    write_l2_l4(&mut o, e.eth, &e.vlans, e.ip, e.udp);
    if let Some(g) = e.tunnel.gre() {
        o.with("gre", |out| {
            let mut g_o = Obj::open(out);
            g_o.int("version", g.version).int("protocol", g.protocol);
            g_o.opt_int("checksum", g.checksum).opt_int("key", g.key).opt_int("seq", g.seq);
            g_o.close();
        });
    }
    match &e.tunnel {
        Tunnel::ErspanII(_, x) => o.with("erspan", |out| {
            let mut x_o = Obj::open(out);
            x_o.int("version", x.version).int("vlan", x.vlan).int("cos", x.cos);
            x_o.int("encap_type", x.encap_type).bool("truncated", x.truncated);
            x_o.int("session_id", x.session_id).int("index", x.index).close();
        }),
        Tunnel::ErspanIII(_, x) => o.with("erspan", |out| {
            let mut x_o = Obj::open(out);
            x_o.int("version", x.version).int("vlan", x.vlan).int("cos", x.cos);
            x_o.int("bso", x.bso).bool("truncated", x.truncated);
            x_o.int("session_id", x.session_id).int("timestamp", x.timestamp).int("sgt", x.sgt);
            x_o.bool("pdu", x.pdu).int("frame_type", x.frame_type).int("hw_id", x.hw_id);
            x_o.bool("direction", x.direction).int("granularity", x.granularity);
            x_o.with("platform", |out| match x.platform {
                Some(pl) => Obj::open(out).int("id", pl.id).hex64("info", pl.info).close(),
                None => out.extend_from_slice(b"null"),
            });
            x_o.close();
        }),
        Tunnel::Vxlan(x) => o.with("vxlan", |out| {
            Obj::open(out).int("flags", x.flags).int("vni", x.vni).close();
        }),
        Tunnel::Geneve(x) => o.with("geneve", |out| {
            let mut x_o = Obj::open(out);
            x_o.int("version", x.version).bool("oam", x.oam).bool("critical", x.critical);
            x_o.int("protocol", x.protocol).int("vni", x.vni);
            x_o.with("options", |out| {
                out.push(b'[');
                for (i, opt) in x.options().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    let mut p_o = Obj::open(out);
                    p_o.int("class", opt.class).int("type", opt.kind);
                    p_o.with("data", |out| {
                        out.push(b'"');
                        for &b in opt.data {
                            out.push(hex_digit(b >> 4));
                            out.push(hex_digit(b));
                        }
                        out.push(b'"');
                    });
                    p_o.close();
                }
                out.push(b']');
            });
            x_o.close();
        }),
        Tunnel::Gre(_) | Tunnel::ErspanI(_) => &mut o,
    };
    o.int("offset", e.offset).int("inner_offset", e.inner_offset).close();
}

fn write_roce(out: &mut Vec<u8>, r: &Roce<'_>) {
    let b = &r.bth;
    let mut o = Obj::open(out);
    o.int("version", r.version.number());
    if let Some(g) = r.grh {
        o.with("grh", |out| {
            let mut g_o = Obj::open(out);
            g_o.int("ipver", g.ipver).int("tclass", g.tclass).int("flow_label", g.flow_label);
            g_o.int("paylen", g.paylen).int("nxthdr", g.nxthdr).int("hoplmt", g.hoplmt);
            g_o.ip("sgid", IpAddr::V6(g.sgid_addr())).ip("dgid", IpAddr::V6(g.dgid_addr()));
            g_o.close();
        });
    }
    o.with("bth", |out| {
        let mut b_o = Obj::open(out);
        b_o.int("opcode", b.opcode).str("opcode_name", r.opcode_name()).bool("se", b.se);
        b_o.bool("migreq", b.migreq).int("padcnt", b.padcnt).int("tver", b.tver);
        b_o.int("pkey", b.pkey).bool("fecn", b.fecn).bool("becn", b.becn);
        b_o.int("dest_qp", b.dest_qp);
        b_o.bool("ackreq", b.ackreq).int("psn", b.psn).int("resv6", b.resv6).int("resv7", b.resv7);
        b_o.close();
    });
    crate::fields::write_ext_headers_json(&mut o, &r.headers);
    if let Some(cm) = crate::cm_json::cm_json(r) {
        // Writing into a Vec cannot fail.
        o.with("cm", |out| {
            let _ = serde_json::to_writer(out, &cm);
        });
    }
    o.int("payload_len", r.payload_len);
    o.with("icrc", |out| {
        let mut i_o = Obj::open(out);
        i_o.opt_int("value", r.icrc).str("status", r.icrc_status.as_str());
        if let IcrcStatus::Bad { computed } = r.icrc_status {
            i_o.int("expected", computed);
        }
        i_o.close();
    });
    o.close();
}

/// The packet's problems as `[{"code", "message"}]` (empty when the frame did not decode).
fn write_problems(out: &mut Vec<u8>, p: Option<&Packet<'_>>) {
    out.push(b'[');
    for (i, pr) in p.map(|p| p.problems).unwrap_or_default().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        Obj::open(out).str("code", pr.code()).str("message", pr.message()).close();
    }
    out.push(b']');
}

/// Where decoding stopped: `{"layer", "kind", "offset", "needed", "available", "message"}`.
fn write_stop(out: &mut Vec<u8>, e: &Error) {
    let mut o = Obj::open(out);
    o.str("layer", e.layer.name()).str("kind", e.kind.code()).int("offset", e.offset);
    o.int("needed", e.needed).int("available", e.available).str("message", &e.to_string());
    o.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings are escaped exactly as serde_json escapes them.
    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all_bytes = String::new();
        for c in (0u8..0x80).map(char::from) {
            all_bytes.push(c);
        }
        for s in [
            "",
            "plain",
            "quote \" and \\ back",
            "tab\tnl\ncr\r",
            "\u{1}\u{1f}\u{7f}",
            "é ✓ 𝄞",
            &all_bytes,
        ] {
            let mut out = Vec::new();
            string(&mut out, s);
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    /// Objects: members in order, commas between them, nothing else.
    #[test]
    fn objects_are_written_in_member_order() {
        let mut out = Vec::new();
        let mut o = Obj::open(&mut out);
        o.int("a", 1u8).bool("b", false).opt_int("c", None::<u32>).str("d", "x");
        o.ip("e", "10.0.0.255".parse().unwrap()).ip("f", "fe80::1".parse().unwrap());
        o.with("g", |out| Obj::open(out).int("h", u64::MAX).close());
        o.close();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":1,"b":false,"c":null,"d":"x","e":"10.0.0.255","f":"fe80::1","g":{"h":18446744073709551615}}"#
        );
    }

    /// Integers of every type and size, the small ones written digit by digit included,
    /// are the numbers serde_json writes.
    #[test]
    fn integers_are_written_as_serde_json_writes_them() {
        fn one(v: impl JsonInt + serde::Serialize) {
            let mut out = Vec::new();
            let mut o = Obj::open(&mut out);
            o.int("v", v);
            o.close();
            let want = format!("{{\"v\":{}}}", serde_json::to_string(&v).unwrap());
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        for n in (0u64..1_100).chain([9_999, 10_000, u64::from(u32::MAX), u64::MAX]) {
            one(n);
            one(n as usize);
            one(n as u32);
            one(n as u16);
            one(n as u8);
            one(n as i64);
        }
        for n in [-1i64, -9, -10, -99, -100, i64::MIN] {
            one(n);
        }
    }

    /// MAC addresses: lowercase hex pairs with colons, as `format!` writes them.
    #[test]
    fn macs_are_lowercase_hex_pairs() {
        for m in [[0u8; 6], [0xff; 6], [0x02, 0x00, 0x0a, 0xb0, 0xc9, 0x1f], [1, 2, 3, 4, 5, 6]] {
            let mut out = b"x".to_vec();
            mac(&mut out, &m);
            let want = format!(
                "x\"{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}\"",
                m[0], m[1], m[2], m[3], m[4], m[5]
            );
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
