//! The CM part of the `-V` tree: every decoded field of the MAD's message.

use std::io::{self, Write};

use roce_parser::{CmMessage, Mad};

pub fn cm_tree(m: &Mad<'_>, out: &mut impl Write) -> io::Result<()> {
    let h = &m.header;
    writeln!(
        out,
        "  MAD: class {} (0x{:02x}) version {}, method {}, status 0x{:04x}, TID 0x{:016x}, attribute 0x{:04x}{}, modifier 0x{:08x}",
        h.mgmt_class.name(),
        h.mgmt_class.to_u8(),
        h.class_version,
        h.method.name(),
        h.status,
        h.transaction_id,
        h.attribute_id,
        h.attribute_name().map(|n| format!(" ({n})")).unwrap_or_default(),
        h.attribute_modifier
    )?;
    let Some(cm) = &m.cm else { return Ok(()) };
    match cm {
        CmMessage::Req(q) => {
            writeln!(out, "  CM REQ: local comm ID 0x{:08x}, service ID 0x{:016x}, local CA GUID 0x{:016x}", q.local_comm_id, q.service_id, q.local_ca_guid)?;
            write!(
                out,
                "    local QPN 0x{:06x}, starting PSN {} (0x{:06x}), transport {}, ",
                q.local_qpn,
                q.starting_psn,
                q.starting_psn,
                q.transport_service_type.name(),
            )?;
            match q.pmtu_bytes() {
                Some(bytes) => write!(out, "path MTU {bytes} bytes")?,
                None => write!(out, "path MTU code {} (reserved)", q.path_mtu)?,
            }
            writeln!(out, ", P_Key 0x{:04x}", q.pkey)?;
            writeln!(
                out,
                "    local Q_Key 0x{:08x}, responder resources {}, initiator depth {}, retry count {}, RNR retry count {}, max CM retries {}",
                q.local_qkey, q.responder_resources, q.initiator_depth, q.retry_count, q.rnr_retry_count, q.max_cm_retries
            )?;
            writeln!(
                out,
                "    CM response timeouts remote {} local {}, end-to-end flow control {}, SRQ {}, local EECN 0x{:06x}, remote EECN 0x{:06x}",
                q.remote_cm_response_timeout,
                q.local_cm_response_timeout,
                u8::from(q.end_to_end_flow_control),
                u8::from(q.srq),
                q.local_eecn,
                q.remote_eecn
            )?;
            for (name, p) in [("primary", &q.primary_path), ("alternate", &q.alternate_path)] {
                if name == "alternate" && p.is_empty() {
                    continue;
                }
                writeln!(
                    out,
                    "    {name} path: {} -> {}, LIDs {} -> {}, flow label 0x{:05x}, traffic class {}, hop limit {}, SL {}, packet rate {}, local ACK timeout {}",
                    p.local_ip(), p.remote_ip(), p.local_lid, p.remote_lid, p.flow_label, p.traffic_class, p.hop_limit, p.sl, p.packet_rate, p.local_ack_timeout
                )?;
            }
            if let (Some(svc), Some(ip)) = (q.rdma_cm_service(), q.rdma_cm_ip_header()) {
                writeln!(
                    out,
                    "    RDMA-CM: port space {}, {}:{} -> {}:{}",
                    svc.port_space.name(),
                    ip.src_ip,
                    ip.src_port,
                    ip.dst_ip,
                    svc.port
                )?;
            }
        }
        CmMessage::Rep(p) => {
            writeln!(out, "  CM REP: local comm ID 0x{:08x}, remote comm ID 0x{:08x}", p.local_comm_id, p.remote_comm_id)?;
            writeln!(
                out,
                "    local QPN 0x{:06x}, starting PSN {} (0x{:06x}), local Q_Key 0x{:08x}, responder resources {}, initiator depth {}",
                p.local_qpn, p.starting_psn, p.starting_psn, p.local_qkey, p.responder_resources, p.initiator_depth
            )?;
            writeln!(
                out,
                "    target ACK delay {}, failover accepted {}, end-to-end flow control {}, RNR retry count {}, SRQ {}, local CA GUID 0x{:016x}",
                p.target_ack_delay,
                p.failover_accepted,
                u8::from(p.end_to_end_flow_control),
                p.rnr_retry_count,
                u8::from(p.srq),
                p.local_ca_guid
            )?;
        }
        CmMessage::Rej(j) => writeln!(
            out,
            "  CM REJ: local comm ID 0x{:08x}, remote comm ID 0x{:08x}, message rejected {}, reason {} ({})",
            j.local_comm_id,
            j.remote_comm_id,
            j.message_rejected.name(),
            j.reason.to_u16(),
            j.reason.name()
        )?,
        CmMessage::Dreq(d) => writeln!(
            out,
            "  CM DREQ: local comm ID 0x{:08x}, remote comm ID 0x{:08x}, remote QPN 0x{:06x}",
            d.local_comm_id, d.remote_comm_id, d.remote_qpn_eecn
        )?,
        CmMessage::Mra(m) => writeln!(
            out,
            "  CM MRA: local comm ID 0x{:08x}, remote comm ID 0x{:08x}, message MRAed {}, service timeout {}",
            m.local_comm_id,
            m.remote_comm_id,
            m.message_mraed.name(),
            m.service_timeout
        )?,
        CmMessage::SidrReq(s) => writeln!(
            out,
            "  CM SIDR_REQ: request ID 0x{:08x}, P_Key 0x{:04x}, service ID 0x{:016x}",
            s.request_id, s.pkey, s.service_id
        )?,
        CmMessage::SidrRep(s) => writeln!(
            out,
            "  CM SIDR_REP: request ID 0x{:08x}, status {}, QPN 0x{:06x}, service ID 0x{:016x}, Q_Key 0x{:08x}",
            s.request_id,
            s.status.name(),
            s.qpn,
            s.service_id,
            s.qkey
        )?,
        other => match other.comm_ids() {
            Some((l, r)) => writeln!(out, "  CM {}: local comm ID 0x{l:08x}, remote comm ID 0x{r:08x}", other.name())?,
            None => writeln!(out, "  CM {}", other.name())?,
        },
    }
    Ok(())
}
