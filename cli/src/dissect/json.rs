//! The JSON contract of `dissect --format json|jsonl` (DESIGN.md): borrowed structs
//! serialized straight to the output, no value tree per frame.

use std::fmt;
use std::net::IpAddr;

use roce_parser::headers::AethRepr;
use roce_parser::{IcrcStatus, Packet, Problems, Roce, VlanTag};
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

use crate::input::Decoded;

#[derive(Serialize)]
pub struct FrameJson<'a> {
    pub frame: u64,
    /// Nanoseconds since the epoch.
    pub ts: u64,
    pub caplen: u32,
    pub len: u32,
    pub eth: Option<EthJson>,
    #[serde(skip_serializing_if = "Vlans::is_empty")]
    pub vlan: Vlans,
    pub ip: Option<IpJson>,
    pub udp: Option<UdpJson>,
    pub roce: Option<RoceJson<'a>>,
    /// Why the frame could not be decoded at all (unsupported link type, too short).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

#[derive(Serialize)]
pub struct EthJson {
    #[serde(serialize_with = "mac")]
    pub src: [u8; 6],
    #[serde(serialize_with = "mac")]
    pub dst: [u8; 6],
    pub ethertype: u16,
}

pub struct Vlans([Option<VlanTag>; 2]);

impl Vlans {
    fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
}

impl Serialize for Vlans {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tag {
            tpid: u16,
            pcp: u8,
            dei: bool,
            vid: u16,
        }
        let mut seq = s.serialize_seq(None)?;
        for t in self.0.iter().flatten() {
            seq.serialize_element(&Tag { tpid: t.tpid, pcp: t.pcp, dei: t.dei, vid: t.vid })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
pub struct IpJson {
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_label: Option<u32>,
    pub protocol: u8,
}

#[derive(Serialize)]
pub struct UdpJson {
    pub sport: u16,
    pub dport: u16,
    pub len: u16,
}

#[derive(Serialize)]
pub struct RoceJson<'a> {
    pub version: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grh: Option<GrhJson>,
    pub bth: BthJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdeth: Option<RdethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deth: Option<DethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xrceth: Option<XrcethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reth: Option<RethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atomiceth: Option<AtomicEthJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeth: Option<AethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atomicacketh: Option<AtomicAckEthJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immdt: Option<ImmDtJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ieth: Option<IethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feth: Option<FethJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cm: Option<crate::cm_json::CmJson>,
    pub payload_len: usize,
    pub icrc: IcrcJson,
    pub problems: ProblemList<'a>,
}

#[derive(Serialize)]
pub struct GrhJson {
    pub ipver: u8,
    pub tclass: u8,
    pub flow_label: u32,
    pub paylen: u16,
    pub nxthdr: u8,
    pub hoplmt: u8,
    pub sgid: IpAddr,
    pub dgid: IpAddr,
}

#[derive(Serialize)]
pub struct BthJson {
    pub opcode: u8,
    pub opcode_name: &'static str,
    pub se: bool,
    pub m: bool,
    pub padcnt: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dqpn: u32,
    pub ackreq: bool,
    pub psn: u32,
    /// Reserved bits after FECN/BECN (byte 4) and after AckReq (byte 8).
    pub resv6: u8,
    pub resv7: u8,
}

#[derive(Serialize)]
pub struct RdethJson {
    pub eecnxt: u32,
}
#[derive(Serialize)]
pub struct DethJson {
    pub qkey: u32,
    pub srcqp: u32,
}
#[derive(Serialize)]
pub struct XrcethJson {
    pub xrcsrq: u32,
}
#[derive(Serialize)]
pub struct RethJson {
    pub va: u64,
    pub rkey: u32,
    pub dmalen: u32,
}
#[derive(Serialize)]
pub struct AtomicEthJson {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}
#[derive(Serialize)]
pub struct AethJson {
    pub syndrome: u8,
    pub kind: &'static str,
    pub value: u8,
    pub msn: u32,
}
#[derive(Serialize)]
pub struct AtomicAckEthJson {
    pub orig: u64,
}
#[derive(Serialize)]
pub struct ImmDtJson {
    pub data: u32,
}
#[derive(Serialize)]
pub struct IethJson {
    pub rkey: u32,
}
#[derive(Serialize)]
pub struct FethJson {
    pub selectivity: u8,
    pub placement: u8,
}

#[derive(Serialize)]
pub struct IcrcJson {
    /// As stored: the little-endian u32 of the last four bytes.
    pub value: Option<u32>,
    pub status: &'static str,
    /// The correct value when the stored one is bad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<u32>,
}

/// The frame's problems as strings, plus where parsing stopped, if it did.
pub struct ProblemList<'a> {
    pub problems: Problems,
    pub stop: Option<&'a roce_parser::Error>,
}

impl Serialize for ProblemList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for p in self.problems.iter() {
            seq.serialize_element(p.message())?;
        }
        if let Some(e) = self.stop {
            seq.serialize_element(&Displayed(e))?;
        }
        seq.end()
    }
}

struct Displayed<T>(T);
impl<T: fmt::Display> Serialize for Displayed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// "aa:bb:cc:dd:ee:ff", formatted on the stack and written as one string: through
/// `collect_str` and `{:02x}` it was 17 escaped fragments and ~15% of `dissect --format jsonl`.
fn mac<S: Serializer>(m: &[u8; 6], s: S) -> Result<S::Ok, S::Error> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b':'; 17];
    for (chunk, b) in out.chunks_mut(3).zip(m) {
        if let [hi, lo, ..] = chunk {
            *hi = HEX[usize::from(b >> 4)];
            *lo = HEX[usize::from(b & 0xf)];
        }
    }
    s.serialize_str(std::str::from_utf8(&out).unwrap_or_default())
}

impl AethJson {
    fn new(a: &AethRepr) -> Self {
        AethJson { syndrome: a.syndrome, kind: a.kind().as_str(), value: a.value(), msn: a.msn }
    }
}

pub fn roce_json<'a>(r: &Roce<'a>, p: &'a Packet<'a>) -> RoceJson<'a> {
    let h = &r.headers;
    let b = &r.bth;
    RoceJson {
        version: r.version.number(),
        grh: r.grh.map(|g| GrhJson {
            ipver: g.ipver,
            tclass: g.tclass,
            flow_label: g.flow_label,
            paylen: g.paylen,
            nxthdr: g.nxthdr,
            hoplmt: g.hoplmt,
            sgid: IpAddr::V6(g.sgid_addr()),
            dgid: IpAddr::V6(g.dgid_addr()),
        }),
        bth: BthJson {
            opcode: b.opcode,
            opcode_name: r.opcode_name(),
            se: b.se,
            m: b.migreq,
            padcnt: b.padcnt,
            tver: b.tver,
            pkey: b.pkey,
            fecn: b.fecn,
            becn: b.becn,
            dqpn: b.dest_qp,
            ackreq: b.ackreq,
            psn: b.psn,
            resv6: b.resv6,
            resv7: b.resv7,
        },
        rdeth: h.rdeth.map(|x| RdethJson { eecnxt: x.eecnxt }),
        deth: h.deth.map(|x| DethJson { qkey: x.qkey, srcqp: x.src_qp }),
        xrceth: h.xrceth.map(|x| XrcethJson { xrcsrq: x.xrcsrq }),
        reth: h.reth.map(|x| RethJson { va: x.va, rkey: x.rkey, dmalen: x.dma_len }),
        atomiceth: h.atomic_eth.map(|x| AtomicEthJson {
            va: x.va,
            rkey: x.rkey,
            swap_add: x.swap_add,
            compare: x.compare,
        }),
        aeth: h.aeth.as_ref().map(AethJson::new),
        atomicacketh: h.atomic_ack_eth.map(|x| AtomicAckEthJson { orig: x.orig }),
        immdt: h.immdt.map(|x| ImmDtJson { data: x.data }),
        ieth: h.ieth.map(|x| IethJson { rkey: x.rkey }),
        feth: h.feth.map(|x| FethJson { selectivity: x.selectivity, placement: x.placement }),
        cm: crate::cm_json::cm_json(r),
        payload_len: r.payload_len,
        icrc: IcrcJson {
            value: r.icrc,
            status: r.icrc_status.as_str(),
            expected: match r.icrc_status {
                IcrcStatus::Bad { computed } => Some(computed),
                _ => None,
            },
        },
        problems: ProblemList { problems: crate::input::problems(p), stop: p.stop.as_ref() },
    }
}

pub fn frame_json<'a>(d: &'a Decoded<'a>) -> FrameJson<'a> {
    let f = &d.frame;
    let mut out = FrameJson {
        frame: f.number,
        ts: f.ts_ns,
        caplen: f.caplen,
        len: f.len,
        eth: None,
        vlan: Vlans([None, None]),
        ip: None,
        udp: None,
        roce: None,
        error: None,
    };
    match &d.packet {
        Err(e) => out.error = Some(e),
        Ok(p) => {
            out.eth = p.eth.map(|e| EthJson { src: e.src, dst: e.dst, ethertype: e.ethertype });
            out.vlan = Vlans(p.vlans);
            out.ip = p.ip.map(|ip| IpJson {
                version: ip.version,
                src: ip.src,
                dst: ip.dst,
                dscp: ip.dscp,
                ecn: ip.ecn,
                ttl: ip.ttl,
                flow_label: (ip.version == 6).then_some(ip.flow_label),
                protocol: ip.protocol,
            });
            out.udp = p.udp.map(|u| UdpJson { sport: u.sport, dport: u.dport, len: u.len });
            out.roce = p.roce.as_ref().map(|r| roce_json(r, p));
        }
    }
    out
}
