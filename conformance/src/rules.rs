//! The rule catalog (docs/rules.md): every rule the checker can report, with a stable ID, its
//! severity, the side it judges, where it comes from, and one line saying what it checks.
//! IDs never change once released: users filter and suppress by them.

use serde::Serialize;

/// How strong a finding is: a spec violation, or a vendor-dependent or heuristic one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Vendor-dependent or heuristic: worth a look, not proof of a spec violation.
    Warning,
    /// A spec violation the wire proves.
    Error,
}

impl Severity {
    /// The name used in JSON and text output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Whom a rule judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The capture itself (loss, reordering, time), not a NIC.
    Capture,
    /// Whoever sent the packet.
    Sender,
    /// The QP sending requests (PSN order, go-back-N after a NAK, retries).
    Requester,
    /// The QP answering them (ACK/NAK, AETH syndrome and MSN, READ responses).
    Responder,
    /// The receiver of CE-marked packets, which owes the sender CNPs (DCQCN notification point).
    NotificationPoint,
    /// The checker's own limits (state evicted).
    Checker,
}

impl Side {
    /// The name used in JSON and text output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Side::Capture => "capture",
            Side::Sender => "sender",
            Side::Requester => "requester",
            Side::Responder => "responder",
            Side::NotificationPoint => "notification point",
            Side::Checker => "checker",
        }
    }
}

/// One rule of the catalog (docs/rules.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable ID, e.g. `REQ-GBN`: never changes once released.
    pub id: &'static str,
    /// The severity its findings carry (a few rules also report a warning form).
    pub severity: Severity,
    /// Whom it judges.
    pub side: Side,
    /// Where the rule comes from: an IBTA section, a driver source file, a tool's check.
    pub source: &'static str,
    /// One line saying what it checks.
    pub description: &'static str,
}

macro_rules! rules {
    ($($name:ident = $id:literal, $sev:ident, $side:ident, $source:literal, $desc:literal;)*) => {
        $(#[doc = concat!("`", $id, "` (", $source, "): ", $desc, ".")]
        pub const $name: Rule = Rule {
            id: $id,
            severity: Severity::$sev,
            side: Side::$side,
            source: $source,
            description: $desc,
        };)*
        /// Every rule, in report order.
        pub const ALL: &[Rule] = &[$($name,)*];
    };
}

rules! {
    CAP_GAP = "CAP-GAP", Warning, Capture, "Lumina integrity check",
        "packets missing from the capture: PSNs skipped with no NAK and no retransmission, or acknowledged without ever being captured";
    CAP_REORDER = "CAP-REORDER", Warning, Capture, "host capture behaviour",
        "a response captured before the request it answers (within the reorder window)";
    CAP_TIME = "CAP-TIME", Warning, Capture, "capture file",
        "timestamps going backwards (one finding per capture: how many steps back, the first and the worst)";
    CAP_TRUNCATED = "CAP-TRUNCATED", Warning, Capture, "capture file",
        "frame cut by the capture's snap length: its ICRC cannot be verified";
    CAP_DROP_BETWEEN = "CAP-DROP-BETWEEN", Warning, Capture, "several capture points (taps)",
        "a packet seen at one tap and not at another that saw its connection's packets before and after it: lost between the two";
    CAP_EVICT = "CAP-EVICT", Warning, Checker, "checker limits",
        "connection state evicted (not used recently: CLOCK) because more flows than --max-flows were live";
    PKT_ICRC = "PKT-ICRC", Error, Sender, "IBTA A17; rxe_icrc.c",
        "ICRC matches the recomputed value";
    PKT_TVER = "PKT-TVER", Error, Sender, "rxe_recv.c",
        "BTH TVer is 0";
    PKT_OPCODE = "PKT-OPCODE", Error, Sender, "IBTA 9.2",
        "opcode defined for its transport (reserved ones flagged; vendor range and Mellanox DC are warnings)";
    PKT_LENGTH = "PKT-LENGTH", Error, Sender, "IBTA 9.2; rxe_hdr.h",
        "UDP/IP lengths consistent with the frame; long enough for the opcode's headers; no payload where the opcode has none; ATOMIC_WRITE payload exactly 8";
    PKT_PAD = "PKT-PAD", Error, Sender, "IBTA 9.2.2",
        "PadCnt = (-payload_len) & 3, non-zero only on a message's last/only packet; pad bytes zero";
    PKT_RESERVED = "PKT-RESERVED", Warning, Sender, "IBTA 9.2",
        "reserved bits zero (BTH resv6/resv7, AETH bit 7, RDETH/DETH/XRCETH reserved byte, FETH)";
    PKT_CNP = "PKT-CNP", Error, Sender, "IBTA A17",
        "CNP has 16 payload bytes (BECN set and PSN 0 are reported as warnings)";
    PKT_UD_QKEY = "PKT-UD-QKEY", Error, Sender, "IBTA 13.x",
        "UD to QP1 uses Q_Key 0x80010000";
    REQ_PSN = "REQ-PSN", Error, Requester, "rxe_req.c",
        "each new packet's PSN = previous + 1; a READ of n bytes consumes max(1, ceil(n / PMTU)) PSNs (UC too)";
    REQ_MSG_SEQ = "REQ-MSG-SEQ", Error, Requester, "IBTA 9.4; rxe_resp.c",
        "FIRST, MIDDLE..., LAST, or ONLY; messages never interleave; no MIDDLE/LAST without FIRST (UC too)";
    REQ_LENGTH = "REQ-LENGTH", Error, Requester, "C9-92 area; rxe_resp.c",
        "FIRST and MIDDLE carry exactly PMTU; LAST 1..PMTU; ONLY 0..PMTU (UC, UD too)";
    REQ_DMALEN = "REQ-DMALEN", Error, Requester, "C9-92, C9-94",
        "bytes of a WRITE message = RETH DMA Length; DMA Length <= 2^31";
    REQ_ATOMIC_ALIGN = "REQ-ATOMIC-ALIGN", Error, Requester, "IBTA 9.4.5",
        "atomic VA 8-byte aligned";
    REQ_RETX_SAME = "REQ-RETX-SAME", Error, Requester, "IBTA 9.7.5",
        "a retransmitted PSN repeats the original's opcode, length and headers";
    REQ_GBN = "REQ-GBN", Error, Requester, "rxe_req.c; Lumina",
        "after a NAK \"PSN sequence error\" naming PSN e, the requester resends from e, in order (go-back-N)";
    REQ_READ_RETRY = "REQ-READ-RETRY", Error, Requester, "rxe_req.c",
        "a re-issued READ starts inside the original's PSN range; its VA advances by (k - first) * PMTU and its end address is unchanged";
    REQ_RNR_WAIT = "REQ-RNR-WAIT", Error, Requester, "IBTA 9.7.5.2.8",
        "after an RNR NAK, no retransmission before its timer expires";
    REQ_RETX_CAUSE = "REQ-RETX-CAUSE", Warning, Requester, "Lumina",
        "a retransmission is explained by a NAK, an implicit NAK, or a timeout gap";
    REQ_QP_TIMEOUT = "REQ-QP-TIMEOUT", Warning, Requester, "IBTA C9-140, C9-141; --qp-timeout",
        "with --qp-timeout T: no timeout retransmission earlier than the local ACK timeout 4.096 us x 2^T (less 10 %)";
    REQ_CM_ACK_TIMEOUT = "REQ-CM-ACK-TIMEOUT", Warning, Requester, "IBTA 12.7.34 (REQ Local ACK Timeout); C9-140, C9-141",
        "when the connection's CM REQ was captured: first timeout retransmissions come 1x to 4x its Local ACK Timeout 4.096 us x 2^t after the last transmission (10 % tolerance: 0.9x to 4.4x)";
    REQ_CM_RETRY_COUNT = "REQ-CM-RETRY-COUNT", Warning, Requester, "IBTA 12.7.38 (REQ Retry Count); C9-141",
        "when the connection's CM REQ was captured: no PSN is retransmitted after timeouts more times than its Retry Count";
    REQ_CM_RNR_RETRY_COUNT = "REQ-CM-RNR-RETRY-COUNT", Warning, Requester, "IBTA 12.7 (REQ and REP RNR Retry Count); 9.7.5.2.8",
        "when the connection's CM REQ was captured: no PSN is retried after RNR NAKs more times than the RNR Retry Count (the larger of the REQ's and the REP's; 7 is for ever)";
    RSP_ACK_RANGE = "RSP-ACK-RANGE", Error, Responder, "IBTA 9.7.5",
        "an ACK/NAK PSN refers to a PSN the requester actually sent";
    RSP_ACK_MONOTONIC = "RSP-ACK-MONOTONIC", Error, Responder, "Lumina",
        "ACK PSNs never go backwards (duplicates aside)";
    RSP_NAK_SEQ = "RSP-NAK-SEQ", Error, Responder, "rxe_resp.c; Lumina",
        "a PSN sequence error NAK names the first missing PSN; one NAK per gap, then silence until it arrives";
    RSP_MSN = "RSP-MSN", Error, Responder, "C9-148; rxe_resp.c",
        "MSN rises by exactly one per completed SEND/WRITE message, accepted READ and atomic; never otherwise";
    RSP_DUP = "RSP-DUP", Error, Responder, "C9-105",
        "a duplicate SEND/WRITE is not executed again and is acknowledged with PSN ePSN - 1";
    RSP_READ = "RSP-READ", Error, Responder, "C9-88; rxe_resp.c",
        "a READ of n bytes gets max(1, ceil(n / PMTU)) responses FIRST/MIDDLE/LAST or ONLY on its PSNs, carrying DMA Length bytes";
    RSP_ATOMIC = "RSP-ATOMIC", Error, Responder, "rxe_resp.c",
        "an atomic gets one ATOMIC_ACKNOWLEDGE with its PSN; ATOMIC_WRITE and FLUSH get an empty READ_RESPONSE_ONLY";
    RSP_DUP_ATOMIC = "RSP-DUP-ATOMIC", Error, Responder, "IBTA 9.7.5 (duplicate requests); rxe_resp.c (the atomic's original value kept among the responder resources)",
        "a duplicate atomic is not executed again: its ATOMIC_ACKNOWLEDGE returns the original value the first answer returned";
    RSP_NAK_ERROR = "RSP-NAK-ERROR", Error, Responder, "rxe_resp.c",
        "after an invalid request / remote access / remote operational NAK the responder sends nothing more on that QP";
    RSP_PKEY = "RSP-PKEY", Error, Responder, "IBTA 10.9 (partitioning); rxe check_keys",
        "a request carrying another P_Key than its connection's is dropped silently: never acknowledged, answered or NAKed";
    RSP_ACKREQ = "RSP-ACKREQ", Warning, Responder, "IBTA 9.7.5",
        "every AckReq packet is acknowledged (a coalesced ACK counts) if the capture runs long enough after it";
    RSP_RNR_TIMER = "RSP-RNR-TIMER", Warning, Responder, "IBTA 9.7.5.2.8, table 45; --rnr-timer",
        "with --rnr-timer CODE: an RNR NAK advertises the responder QP's configured minimum RNR NAK timer CODE";
    CC_CNP = "CC-CNP", Warning, NotificationPoint, "A17; DCQCN; Lumina cnp_check",
        "a CE-marked packet has a CNP back to its sender QP within a window before or after it (NICs rate-limit CNPs: one covers a burst)";
    CC_CNP_TARGET = "CC-CNP-TARGET", Warning, NotificationPoint, "A17",
        "a CNP's DestQP is a QP that sent CE-marked data to the CNP's sender";
    CC_CNP_PACING = "CC-CNP-PACING", Warning, NotificationPoint, "DCQCN (Zhu et al., SIGCOMM 2015) CNP interval; mlx5 min_time_between_cnps; --cnp-min-interval",
        "with --cnp-min-interval D[,qp|pair|dest]: no two CNPs to one QP (or from one IP to another, or to one IP) closer than D";
    NET_DSCP = "NET-DSCP", Warning, Sender, "the hosts' traffic class (ibv_modify_qp traffic_class, rdma_set_option TOS, UCX_IB_TRAFFIC_CLASS); --expect-dscp",
        "with --expect-dscp D: every RoCEv2 packet but CNPs (requests, ACKs, NAKs, READ and atomic responses, CM MADs on QP1) carries DSCP D in its IP header (RoCEv1 has none: not judged)";
    NET_CNP_DSCP = "NET-CNP-DSCP", Warning, Sender, "IBTA A17 (CNP); mlx5 cnp_dscp (default 48); --expect-cnp-dscp",
        "with --expect-cnp-dscp D: every RoCEv2 CNP (BTH opcode 0x81) carries DSCP D in its IP header";
    NET_PCP = "NET-PCP", Warning, Sender, "IEEE 802.1Q PCP, 802.1Qbb PFC; --expect-pcp",
        "with --expect-pcp P: every RoCE frame carries an 802.1Q tag whose PCP is P (the outermost tag, as the first switch sees it); an untagged frame is a finding, PFC has no priority to pause (frames captured without an Ethernet header are not judged)";
}

/// The catalog as a Markdown document (docs/rules.md is this, kept fresh by a test).
pub fn markdown() -> String {
    let mut t = String::from(
        "# Conformance rules\n\n\
         Generated from the rule catalog (`conformance/src/rules.rs`) by \
         `ROCE_INSPECT_BLESS=1 cargo test -p roce-conformance --test docs_rules`; do not edit by hand.\n\n\
         IDs are stable: filter and suppress by them (`check --disable ID`, `--enable ID`). \
         Severity `error` is a spec violation, `warning` a vendor-dependent or heuristic finding; \
         the side is whom the rule judges.\n",
    );
    let sections = [
        ("CAP-", "Capture integrity"),
        ("PKT-", "Per packet"),
        ("REQ-", "Requester"),
        ("RSP-", "Responder"),
        ("CC-", "Congestion"),
        ("NET-", "Network configuration"),
    ];
    for (prefix, title) in sections {
        t.push_str(&format!(
            "\n## {title}\n\n| id | severity | side | checks | source |\n|---|---|---|---|---|\n"
        ));
        for r in ALL.iter().filter(|r| r.id.starts_with(prefix)) {
            t.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r.id,
                r.severity.as_str(),
                r.side.as_str(),
                r.description.replace('|', "\\|"),
                r.source
            ));
        }
    }
    t
}

/// Looks a rule up by ID (case-insensitive).
pub fn find(id: &str) -> Option<&'static Rule> {
    ALL.iter().find(|r| r.id.eq_ignore_ascii_case(id))
}

/// Which rules are on. All are, unless disabled.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    disabled: Vec<&'static str>,
}

impl RuleSet {
    /// Turns a rule off; `Err` names an unknown ID.
    pub fn disable(&mut self, id: &str) -> Result<(), String> {
        let r = find(id).ok_or_else(|| unknown(id))?;
        if !self.disabled.contains(&r.id) {
            self.disabled.push(r.id);
        }
        Ok(())
    }

    /// Turns a rule (back) on.
    pub fn enable(&mut self, id: &str) -> Result<(), String> {
        let r = find(id).ok_or_else(|| unknown(id))?;
        self.disabled.retain(|d| *d != r.id);
        Ok(())
    }

    /// Turns every rule off (then `enable` the ones wanted).
    pub fn disable_all(&mut self) {
        self.disabled = ALL.iter().map(|r| r.id).collect();
    }

    /// Whether findings of `rule` are reported.
    pub fn is_enabled(&self, rule: &Rule) -> bool {
        !self.disabled.contains(&rule.id)
    }
}

fn unknown(id: &str) -> String {
    format!("unknown rule '{id}' (roce-inspect rules lists them)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        for (i, r) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|o| o.id != r.id), "{}", r.id);
            assert!(r.id.chars().all(|c| c.is_ascii_uppercase() || c == '-'), "{}", r.id);
            assert!(!r.description.is_empty() && !r.source.is_empty());
        }
        assert_eq!(find("req-gbn"), Some(&REQ_GBN));
    }

    #[test]
    fn enable_disable() {
        let mut s = RuleSet::default();
        assert!(s.is_enabled(&CAP_GAP));
        s.disable("CAP-GAP").unwrap();
        assert!(!s.is_enabled(&CAP_GAP));
        s.enable("cap-gap").unwrap();
        assert!(s.is_enabled(&CAP_GAP));
        assert!(s.disable("NOPE").is_err());
    }
}
