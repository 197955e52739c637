//! Per-packet rules (PKT-*): what one packet shows on its own, from the parser's problems.

use roce_parser::{IcrcStatus, Packet, Position, Problem, Roce};

use crate::connections::ConnId;
use crate::finding::Judge;
use crate::psn::Psn;
use crate::rules::{self, Severity};
use crate::FrameInfo;

pub(crate) fn check(
    f: &FrameInfo,
    p: &Packet<'_>,
    r: &Roce<'_>,
    conn: Option<ConnId>,
    judge: &mut Judge,
) {
    let frames = [f.number];
    let psn = Some(Psn::new(r.bth.psn));
    let has = |x: Problem| p.problems.contains(x);
    let snapped = f.caplen < f.len;

    match r.icrc_status {
        IcrcStatus::Bad { computed } => judge.report(&rules::PKT_ICRC, &frames, conn, psn, || {
            format!(
                "ICRC 0x{:08x} does not match the recomputed 0x{computed:08x}: a receiver drops this packet",
                r.icrc.unwrap_or(0)
            )
        }),
        IcrcStatus::Unverifiable if snapped => {
            judge.report(&rules::CAP_TRUNCATED, &frames, conn, psn, || {
                format!("frame captured with {} of its {} bytes (snap length): ICRC not verified", f.caplen, f.len)
            })
        }
        _ => {}
    }
    if has(Problem::TverNonZero) {
        judge.report(&rules::PKT_TVER, &frames, conn, psn, || {
            format!("BTH TVer is {}, must be 0", r.bth.tver)
        });
    }

    // Mellanox DC reuses the RD opcodes with its own headers: decoding it as RD would report
    // nonsense lengths and reserved bits, so say what it is once and judge nothing else.
    if has(Problem::RdLayoutMismatch) {
        judge.report_as(&rules::PKT_OPCODE, Severity::Warning, &frames, conn, psn, || {
            format!(
                "opcode 0x{:02x} ({}) does not fit the RD layout: likely Mellanox DC traffic, not judged further",
                r.bth.opcode,
                r.opcode_name()
            )
        });
        return;
    }
    if has(Problem::ReservedOpcode) {
        judge.report(&rules::PKT_OPCODE, &frames, conn, psn, || {
            format!("opcode 0x{:02x} is reserved for {}", r.bth.opcode, r.transport().as_str())
        });
    }
    if has(Problem::VendorOpcode) {
        judge.report_as(&rules::PKT_OPCODE, Severity::Warning, &frames, conn, psn, || {
            format!("opcode 0x{:02x} is manufacturer-specific", r.bth.opcode)
        });
    }

    let truncated_on_wire = has(Problem::Truncated) && !snapped;
    for (bad, what) in [
        (
            truncated_on_wire,
            "frame is shorter than its IP/UDP length (captured length = wire length)",
        ),
        (has(Problem::UdpLengthMismatch), "UDP length disagrees with the IP payload length"),
        (has(Problem::IpLengthMismatch), "IP total length disagrees with the frame"),
        (has(Problem::ShortForOpcode), "packet too short for the headers its opcode implies"),
        (has(Problem::ShortForIcrc), "no room for the ICRC after the BTH"),
        (has(Problem::UnexpectedPayload), "payload present where the opcode carries none"),
        (has(Problem::AtomicWriteLength), "ATOMIC_WRITE payload is not 8 bytes"),
    ] {
        if bad {
            judge.report(&rules::PKT_LENGTH, &frames, conn, psn, || {
                format!("{}: {what} (payload {} bytes)", r.opcode_name(), r.payload_len)
            });
        }
    }

    if has(Problem::PadCntInconsistent) {
        judge.report(&rules::PKT_PAD, &frames, conn, psn, || {
            format!(
                "PadCnt {} does not pad the {}-byte payload to a multiple of 4",
                r.bth.padcnt, r.payload_len
            )
        });
    }
    if let Some(info) = r.info {
        let mid = matches!(info.position, Position::First | Position::Middle);
        if mid && r.bth.padcnt != 0 {
            judge.report(&rules::PKT_PAD, &frames, conn, psn, || {
                format!(
                    "{} carries PadCnt {}: only a message's last or only packet may be padded",
                    info.name, r.bth.padcnt
                )
            });
        }
    }
    if has(Problem::PadNonZero) {
        judge.report_as(&rules::PKT_PAD, Severity::Warning, &frames, conn, psn, || {
            "pad bytes are not zero".into()
        });
    }
    if has(Problem::ReservedBits) {
        judge.report(&rules::PKT_RESERVED, &frames, conn, psn, || {
            format!("{}: reserved bits set ({})", r.opcode_name(), reserved_detail(r))
        });
    }
    if has(Problem::CnpLength) {
        judge.report(&rules::PKT_CNP, &frames, conn, psn, || {
            format!("CNP carries {} bytes after the BTH instead of 16", r.payload_len)
        });
    }
    if has(Problem::CnpBecnClear) {
        judge.report_as(&rules::PKT_CNP, Severity::Warning, &frames, conn, psn, || {
            "CNP without BECN set".into()
        });
    }
    if has(Problem::CnpPsnNonZero) {
        judge.report_as(&rules::PKT_CNP, Severity::Warning, &frames, conn, psn, || {
            format!("CNP with PSN {} instead of 0", r.bth.psn)
        });
    }
    if has(Problem::Qp1QKey) {
        let qkey = r.headers.deth.map_or(0, |d| d.qkey);
        judge.report(&rules::PKT_UD_QKEY, &frames, conn, psn, || {
            format!("UD packet to QP1 with Q_Key 0x{qkey:08x} instead of 0x80010000")
        });
    }
}

/// Which reserved field is not zero.
fn reserved_detail(r: &Roce<'_>) -> String {
    let mut v: Vec<String> = Vec::new();
    if r.bth.resv6 != 0 {
        v.push(format!("BTH byte 4 reserved bits 0x{:02x}", r.bth.resv6));
    }
    if r.bth.resv7 != 0 {
        v.push(format!("BTH byte 8 reserved bits 0x{:02x}", r.bth.resv7));
    }
    let h = &r.headers;
    if h.aeth.is_some_and(|a| a.reserved_bit()) {
        v.push("AETH syndrome bit 7".into());
    }
    for (name, byte) in [
        ("RDETH", h.rdeth.map(|x| x.reserved)),
        ("DETH", h.deth.map(|x| x.reserved)),
        ("XRCETH", h.xrceth.map(|x| x.reserved)),
    ] {
        if let Some(b) = byte.filter(|b| *b != 0) {
            v.push(format!("{name} reserved byte 0x{b:02x}"));
        }
    }
    if let Some(fe) = h.feth.filter(|f| f.reserved != 0) {
        v.push(format!("FETH reserved 0x{:07x}", fe.reserved));
    }
    if r.info.is_some_and(|i| i.name == "CNP") && r.payload.iter().any(|&b| b != 0) {
        v.push("CNP reserved bytes".into());
    }
    v.join(", ")
}
