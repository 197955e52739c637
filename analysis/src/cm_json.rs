//! `roce.cm` in the JSON output: the MAD of a UD SEND to QP1, with the CM fields the
//! conformance checker and users need. 64-bit identifiers (transaction ID, service ID, CA
//! GUID) are `"0x…"` strings, as everywhere in the JSON contract (docs/json.md).

use std::net::IpAddr;

use roce_conformance::internal::json::hex64;
use roce_parser::{CmMessage, CmPath, Mad, Roce};
use serde::Serialize;

#[derive(Serialize)]
pub struct CmJson {
    /// Management class name ("CM", "SubnAdm", ...).
    pub class: &'static str,
    pub method: &'static str,
    #[serde(serialize_with = "hex64")]
    pub transaction_id: u64,
    /// The MAD header as on the wire (the names above lose unknown codes).
    pub base_version: u8,
    pub class_code: u8,
    pub class_version: u8,
    pub method_code: u8,
    pub status: u16,
    pub class_specific: u16,
    pub attribute_id: u16,
    pub attribute_modifier: u32,
    /// "REQ", "REP", "RTU", ... (for CM MADs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_comm_id: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_comm_id: Option<u32>,
    #[serde(flatten)]
    pub body: Option<Body>,
}

#[derive(Serialize)]
#[serde(untagged)]
pub enum Body {
    Req(Box<ReqJson>),
    Rep(RepJson),
    Rej(RejJson),
    Mra(MraJson),
    Dreq(DreqJson),
    SidrReq(SidrReqJson),
    SidrRep(SidrRepJson),
}

#[derive(Serialize)]
pub struct ReqJson {
    pub local_qpn: u32,
    pub starting_psn: u32,
    /// Bytes, 256 to 4096 (None for a reserved code).
    pub pmtu: Option<u16>,
    /// The 4-bit path MTU code of the REQ (1 = 256 ... 5 = 4096; others are reserved).
    pub pmtu_code: u8,
    pub transport: &'static str,
    #[serde(serialize_with = "hex64")]
    pub service_id: u64,
    pub pkey: u16,
    pub retry_count: u8,
    pub rnr_retry_count: u8,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub local_qkey: u32,
    #[serde(serialize_with = "hex64")]
    pub local_ca_guid: u64,
    pub local_eecn: u32,
    pub remote_eecn: u32,
    pub rdc_exists: bool,
    pub extended_transport_type: u8,
    pub remote_cm_response_timeout: u8,
    pub local_cm_response_timeout: u8,
    pub max_cm_retries: u8,
    pub end_to_end_flow_control: bool,
    pub srq: bool,
    pub primary_path: PathJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alternate_path: Option<PathJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<RdmaCmIpJson>,
}

#[derive(Serialize)]
pub struct PathJson {
    pub local_gid: IpAddr,
    pub remote_gid: IpAddr,
    pub local_lid: u16,
    pub remote_lid: u16,
    pub flow_label: u32,
    pub traffic_class: u8,
    pub hop_limit: u8,
    pub sl: u8,
    pub subnet_local: bool,
    pub packet_rate: u8,
    pub local_ack_timeout: u8,
}

impl PathJson {
    fn new(p: &CmPath) -> Self {
        PathJson {
            local_gid: p.local_ip(),
            remote_gid: p.remote_ip(),
            local_lid: p.local_lid,
            remote_lid: p.remote_lid,
            flow_label: p.flow_label,
            traffic_class: p.traffic_class,
            hop_limit: p.hop_limit,
            sl: p.sl,
            subnet_local: p.subnet_local,
            packet_rate: p.packet_rate,
            local_ack_timeout: p.local_ack_timeout,
        }
    }
}

#[derive(Serialize)]
pub struct RdmaCmIpJson {
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub port_space: &'static str,
}

#[derive(Serialize)]
pub struct RepJson {
    pub local_qpn: u32,
    pub starting_psn: u32,
    pub local_qkey: u32,
    pub local_eecn: u32,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub target_ack_delay: u8,
    pub failover_accepted: u8,
    pub end_to_end_flow_control: bool,
    pub rnr_retry_count: u8,
    pub srq: bool,
    #[serde(serialize_with = "hex64")]
    pub local_ca_guid: u64,
}

#[derive(Serialize)]
pub struct ReasonJson {
    pub number: u16,
    pub name: &'static str,
}

#[derive(Serialize)]
pub struct RejJson {
    pub reason: ReasonJson,
    pub message_rejected: &'static str,
    pub reject_info_length: u8,
}

#[derive(Serialize)]
pub struct MraJson {
    pub message_mraed: &'static str,
    pub service_timeout: u8,
}

#[derive(Serialize)]
pub struct DreqJson {
    pub remote_qpn: u32,
}

#[derive(Serialize)]
pub struct SidrReqJson {
    pub request_id: u32,
    pub pkey: u16,
    #[serde(serialize_with = "hex64")]
    pub service_id: u64,
}

#[derive(Serialize)]
pub struct SidrRepJson {
    pub request_id: u32,
    pub status: &'static str,
    pub qpn: u32,
    #[serde(serialize_with = "hex64")]
    pub service_id: u64,
    pub qkey: u32,
}

/// The `cm` object of a packet, when it is a MAD to QP1 whose header could be read.
pub fn cm_json(r: &Roce<'_>) -> Option<CmJson> {
    let mad: Mad<'_> = r.mad()?.ok()?;
    let msg = mad.cm.as_ref();
    let ids = msg.and_then(CmMessage::comm_ids);
    Some(CmJson {
        class: mad.header.mgmt_class.name(),
        method: mad.header.method.name(),
        transaction_id: mad.header.transaction_id,
        base_version: mad.header.base_version,
        class_code: mad.header.mgmt_class.to_u8(),
        class_version: mad.header.class_version,
        method_code: mad.header.method.to_u8(),
        status: mad.header.status,
        class_specific: mad.header.class_specific,
        attribute_id: mad.header.attribute_id,
        attribute_modifier: mad.header.attribute_modifier,
        attribute: msg.map(CmMessage::name).or(mad.header.attribute_name()),
        local_comm_id: ids.map(|i| i.0),
        remote_comm_id: ids
            .and_then(|i| msg.is_some_and(|m| !matches!(m, CmMessage::Req(_))).then_some(i.1)),
        body: msg.and_then(body),
    })
}

fn body(m: &CmMessage<'_>) -> Option<Body> {
    Some(match m {
        CmMessage::Req(q) => {
            let ip = q.rdma_cm_ip_header().map(|h| {
                let svc = q.rdma_cm_service();
                RdmaCmIpJson {
                    version: h.ip_version,
                    src: h.src_ip,
                    dst: h.dst_ip,
                    sport: h.src_port,
                    dport: svc.map_or(0, |s| s.port),
                    port_space: svc.map_or("unknown", |s| s.port_space.name()),
                }
            });
            Body::Req(Box::new(ReqJson {
                local_qpn: q.local_qpn,
                starting_psn: q.starting_psn,
                pmtu: q.pmtu_bytes(),
                pmtu_code: q.path_mtu,
                transport: q.transport_service_type.name(),
                service_id: q.service_id,
                pkey: q.pkey,
                retry_count: q.retry_count,
                rnr_retry_count: q.rnr_retry_count,
                responder_resources: q.responder_resources,
                initiator_depth: q.initiator_depth,
                local_qkey: q.local_qkey,
                local_ca_guid: q.local_ca_guid,
                local_eecn: q.local_eecn,
                remote_eecn: q.remote_eecn,
                rdc_exists: q.rdc_exists,
                extended_transport_type: q.extended_transport_type,
                remote_cm_response_timeout: q.remote_cm_response_timeout,
                local_cm_response_timeout: q.local_cm_response_timeout,
                max_cm_retries: q.max_cm_retries,
                end_to_end_flow_control: q.end_to_end_flow_control,
                srq: q.srq,
                primary_path: PathJson::new(&q.primary_path),
                alternate_path: (!q.alternate_path.is_empty())
                    .then(|| PathJson::new(&q.alternate_path)),
                ip,
            }))
        }
        CmMessage::Rep(p) => Body::Rep(RepJson {
            local_qpn: p.local_qpn,
            starting_psn: p.starting_psn,
            local_qkey: p.local_qkey,
            local_eecn: p.local_eecn,
            responder_resources: p.responder_resources,
            initiator_depth: p.initiator_depth,
            target_ack_delay: p.target_ack_delay,
            failover_accepted: p.failover_accepted,
            end_to_end_flow_control: p.end_to_end_flow_control,
            rnr_retry_count: p.rnr_retry_count,
            srq: p.srq,
            local_ca_guid: p.local_ca_guid,
        }),
        CmMessage::Rej(j) => Body::Rej(RejJson {
            reason: ReasonJson { number: j.reason.to_u16(), name: j.reason.name() },
            message_rejected: j.message_rejected.name(),
            reject_info_length: j.reject_info_length,
        }),
        CmMessage::Mra(m) => Body::Mra(MraJson {
            message_mraed: m.message_mraed.name(),
            service_timeout: m.service_timeout,
        }),
        CmMessage::Dreq(d) => Body::Dreq(DreqJson { remote_qpn: d.remote_qpn_eecn }),
        CmMessage::SidrReq(s) => Body::SidrReq(SidrReqJson {
            request_id: s.request_id,
            pkey: s.pkey,
            service_id: s.service_id,
        }),
        CmMessage::SidrRep(s) => Body::SidrRep(SidrRepJson {
            request_id: s.request_id,
            status: s.status.name(),
            qpn: s.qpn,
            service_id: s.service_id,
            qkey: s.qkey,
        }),
        _ => return None,
    })
}
