//! Endpoints and RC/UC connections that emit the packets of whole operations: SEND, RDMA
//! WRITE, RDMA READ, atomics, their ACKs, NAKs and retransmissions, CNPs, and the CM
//! exchange that opens and closes the connection.

use std::net::IpAddr;

use roce_parser::{
    mtu_code, AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, CmMessage, DethRepr, DrepRepr,
    DreqRepr, ExtHeaders, FrameBuilder, ImmDtRepr, Ipv4Spec, Ipv6Spec, MadHeaderRepr, MessageRef,
    Network, PortSpace, RdmaCmIpHeader, RejRepr, RejectReason, RepRepr, ReqRepr, RethRepr, RtuRepr,
    TransportServiceType, VlanTag, GSI_QKEY, MAD_LEN, MAX_VLANS, RDMA_CM_IP_HEADER_LEN,
};

use super::Trace;

/// One side of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub mac: [u8; 6],
    pub ip: IpAddr,
    /// This side's QPN (the DestQP of packets sent to it).
    pub qpn: u32,
}

impl Endpoint {
    /// An endpoint whose MAC is derived from its address.
    pub fn new(ip: IpAddr, qpn: u32) -> Self {
        let o = match ip {
            IpAddr::V4(v) => v.octets()[3],
            IpAddr::V6(v) => v.octets()[15],
        };
        Endpoint { mac: [0x02, 0x00, 0x00, 0x00, 0x00, o], ip, qpn }
    }
}

/// The network layer between two endpoints; `ecn` as sent (2 = ECT(0), 3 = CE).
pub fn network(src: &Endpoint, dst: &Endpoint, ecn: u8) -> Network {
    match (src.ip, dst.ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Network::Ipv4(Ipv4Spec {
            src: s.octets(),
            dst: d.octets(),
            dscp: 26,
            ecn,
            ttl: 64,
            identification: 0,
            dont_fragment: true,
        }),
        (s, d) => Network::Ipv6(Ipv6Spec {
            src: ip6(s),
            dst: ip6(d),
            traffic_class: 26 << 2 | ecn,
            flow_label: 0,
            hop_limit: 64,
        }),
    }
}

/// How one side of a connection marks the frames it sends: the DSCP of its packets and of
/// its CNPs, and its 802.1Q tags (outermost first). [`Wire::DEFAULT`] (DSCP 26, untagged) is
/// what [`network`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// DSCP of requests, responses and CM MADs.
    pub dscp: u8,
    /// DSCP of CNPs.
    pub cnp_dscp: u8,
    /// VLAN tags, outermost first.
    pub vlans: [Option<VlanTag>; MAX_VLANS],
    /// The UDP source port of every frame (`None`: [`frame`]'s hash of the QPNs, as NICs
    /// spread QPs over ECMP paths).
    pub udp_sport: Option<u16>,
}

impl Wire {
    /// DSCP 26 for everything, no VLAN tag.
    pub const DEFAULT: Wire =
        Wire { dscp: 26, cnp_dscp: 26, vlans: [None; MAX_VLANS], udp_sport: None };

    /// `b` (built by [`frame`]) marked as this side sends it: a CNP's DSCP if `cnp`.
    pub fn apply(&self, b: &mut FrameBuilder<'_>, cnp: bool) {
        let dscp = if cnp { self.cnp_dscp } else { self.dscp } & 0x3f;
        match &mut b.network {
            Network::Ipv4(v4) => v4.dscp = dscp,
            Network::Ipv6(v6) => v6.traffic_class = dscp << 2 | (v6.traffic_class & 3),
            Network::RoceV1(_) | Network::Infiniband(..) => {}
        }
        b.vlans = self.vlans;
        if let Some(p) = self.udp_sport {
            b.udp_sport = p;
        }
    }
}

impl Default for Wire {
    fn default() -> Self {
        Wire::DEFAULT
    }
}

fn ip6(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    }
}

/// A frame from `src` to `dst` carrying `bth` (PSN, opcode, DestQP already set).
pub fn frame<'p>(
    src: &Endpoint,
    dst: &Endpoint,
    bth: BthRepr,
    headers: ExtHeaders,
    payload: &'p [u8],
    ecn: u8,
) -> FrameBuilder<'p> {
    let mut b = FrameBuilder::new(network(src, dst, ecn), bth);
    b.eth_src = src.mac;
    b.eth_dst = dst.mac;
    // Flow entropy as NICs do it: a hash of the QPNs, in the dynamic port range.
    b.udp_sport = 0xc000 | ((src.qpn ^ dst.qpn ^ (dst.qpn >> 8)) as u16 & 0x3fff);
    b.headers = headers;
    b.payload = payload;
    b
}

fn bth(opcode: u8, dest_qp: u32, psn: u32) -> BthRepr {
    BthRepr { opcode, pkey: 0xffff, dest_qp, psn: psn & 0x00ff_ffff, ..Default::default() }
}

/// Opcode bases of the RC operations (add 0x20 for UC).
pub mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_LAST_IMM: u8 = 0x03;
    pub const SEND_ONLY: u8 = 0x04;
    pub const SEND_ONLY_IMM: u8 = 0x05;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const WRITE_ONLY_IMM: u8 = 0x0b;
    pub const READ_REQUEST: u8 = 0x0c;
    pub const READ_RESPONSE_FIRST: u8 = 0x0d;
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0e;
    pub const READ_RESPONSE_LAST: u8 = 0x0f;
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    pub const ACK: u8 = 0x11;
    pub const ATOMIC_ACK: u8 = 0x12;
    pub const COMPARE_SWAP: u8 = 0x13;
    pub const FETCH_ADD: u8 = 0x14;
    pub const UD_SEND_ONLY: u8 = 0x64;
    pub const CNP: u8 = 0x81;
}

/// One request packet as emitted, kept so tests can drop, reorder or resend it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub opcode: u8,
    pub psn: u32,
    pub headers: ExtHeaders,
    pub payload: Vec<u8>,
    pub ackreq: bool,
}

/// State of one requester direction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Side {
    /// Next PSN this side's requests use.
    pub next_psn: u32,
    /// MSN this side's responder has reached (for requests from the other side).
    pub msn: u32,
}

/// An RC (or UC) connection between `a` and `b`.
#[derive(Debug, Clone)]
pub struct RcConn {
    pub a: Endpoint,
    pub b: Endpoint,
    pub pmtu: usize,
    /// `sides[0]`: requests a -> b and a's responder; `sides[1]`: the reverse.
    pub sides: [Side; 2],
    /// 0x00 for RC, 0x20 for UC.
    pub transport: u8,
    /// ECN bits on data packets (2 = ECT(0)).
    pub ecn: u8,
    /// The partition key of every packet of the connection (and of the CM REQ).
    pub pkey: u16,
    /// How each side marks its frames (`wire[0]`: frames a sends, `wire[1]`: b's).
    pub wire: [Wire; 2],
    /// Virtual address counter for RETHs.
    va: u64,
}

impl RcConn {
    /// A connection whose a -> b requests start at `psn_a` and b -> a requests at `psn_b`.
    pub fn new(a: Endpoint, b: Endpoint, pmtu: usize, psn_a: u32, psn_b: u32) -> Self {
        RcConn {
            a,
            b,
            pmtu,
            sides: [Side { next_psn: psn_a, msn: 0 }, Side { next_psn: psn_b, msn: 0 }],
            transport: 0,
            ecn: 2,
            pkey: 0xffff,
            wire: [Wire::DEFAULT; 2],
            va: 0x7f00_0000_0000,
        }
    }

    /// A new incarnation of the connection on the same QPNs (after a CM disconnect, or a
    /// restart without CM): a -> b requests start at `psn_a`, b -> a at `psn_b`, both
    /// responders' MSNs at 0 again.
    pub fn restart(&mut self, psn_a: u32, psn_b: u32) {
        self.sides = [Side { next_psn: psn_a, msn: 0 }, Side { next_psn: psn_b, msn: 0 }];
    }

    /// BTH of a packet of this connection (its P_Key).
    fn bth(&self, opcode: u8, dest_qp: u32, psn: u32) -> BthRepr {
        BthRepr { pkey: self.pkey, ..bth(opcode, dest_qp, psn) }
    }

    /// The same connection as UC.
    pub fn uc(mut self) -> Self {
        self.transport = 0x20;
        self
    }

    fn ends(&self, from_a: bool) -> (Endpoint, Endpoint) {
        if from_a {
            (self.a, self.b)
        } else {
            (self.b, self.a)
        }
    }

    fn idx(from_a: bool) -> usize {
        usize::from(!from_a)
    }

    /// How the frames `a` (or else `b`) sends are marked.
    pub fn wire_of(&self, from_a: bool) -> Wire {
        self.wire.get(Self::idx(from_a)).copied().unwrap_or_default()
    }

    /// Emits one request packet from the given side.
    pub fn emit_request(&self, t: &mut Trace, from_a: bool, s: &Sent) {
        let (src, dst) = self.ends(from_a);
        let mut h = self.bth(s.opcode, dst.qpn, s.psn);
        h.ackreq = s.ackreq;
        let mut b = frame(&src, &dst, h, s.headers, &s.payload, self.ecn);
        self.wire_of(from_a).apply(&mut b, false);
        t.push(&b);
    }

    /// Emits a response packet (ACK, NAK, READ response, atomic ACK) from the responder of
    /// `requester_a`'s requests.
    pub fn emit_response(
        &self,
        t: &mut Trace,
        requester_a: bool,
        opcode: u8,
        psn: u32,
        headers: ExtHeaders,
        payload: &[u8],
    ) {
        let (req, resp) = self.ends(requester_a);
        // Responses travel the uncongested way: ECT(0), never CE.
        let mut b = frame(&resp, &req, self.bth(opcode, req.qpn, psn), headers, payload, 2);
        self.wire_of(!requester_a).apply(&mut b, false);
        t.push(&b);
    }

    /// The packets of a SEND (with immediate data if `imm`) or RDMA WRITE message of `len`
    /// bytes, segmented by the PMTU, AckReq on the last; consumes their PSNs.
    pub fn message(
        &mut self,
        from_a: bool,
        write: bool,
        len: usize,
        imm: Option<u32>,
    ) -> Vec<Sent> {
        let i = Self::idx(from_a);
        let n = len.div_ceil(self.pmtu).max(1);
        let mut out = Vec::with_capacity(n);
        let reth = RethRepr { va: self.va, rkey: 0x1234, dma_len: len as u32 };
        self.va += len as u64;
        for k in 0..n {
            let (first, last) = (k == 0, k == n - 1);
            let base = match (write, first, last, imm.is_some()) {
                (false, true, true, false) => op::SEND_ONLY,
                (false, true, true, true) => op::SEND_ONLY_IMM,
                (false, true, false, _) => op::SEND_FIRST,
                (false, false, false, _) => op::SEND_MIDDLE,
                (false, false, true, false) => op::SEND_LAST,
                (false, false, true, true) => op::SEND_LAST_IMM,
                (true, true, true, false) => op::WRITE_ONLY,
                (true, true, true, true) => op::WRITE_ONLY_IMM,
                (true, true, false, _) => op::WRITE_FIRST,
                (true, false, false, _) => op::WRITE_MIDDLE,
                (true, false, true, false) => op::WRITE_LAST,
                (true, false, true, true) => op::WRITE_LAST_IMM,
            };
            let mut headers = ExtHeaders::default();
            if write && first {
                headers.reth = Some(reth);
            }
            if last {
                headers.immdt = imm.map(|data| ImmDtRepr { data });
            }
            let seg = if last { len - k * self.pmtu } else { self.pmtu };
            let payload = (0..seg).map(|x| (x as u8) ^ (k as u8)).collect();
            out.push(Sent {
                opcode: self.transport | base,
                psn: self.sides[i].next_psn & 0x00ff_ffff,
                headers,
                payload,
                ackreq: last && self.transport == 0,
            });
            self.sides[i].next_psn = (self.sides[i].next_psn + 1) & 0x00ff_ffff;
        }
        out
    }

    /// A whole SEND or WRITE: the packets, then (RC) the ACK of the last PSN.
    pub fn send_or_write(
        &mut self,
        t: &mut Trace,
        from_a: bool,
        write: bool,
        len: usize,
        imm: Option<u32>,
    ) {
        let pkts = self.message(from_a, write, len, imm);
        for s in &pkts {
            self.emit_request(t, from_a, s);
        }
        if self.transport == 0 {
            let last = pkts.last().map_or(0, |s| s.psn);
            self.ack(t, from_a, last, 1);
        }
    }

    /// The responder of `requester_a`'s requests completes `messages` messages and ACKs `psn`.
    pub fn ack(&mut self, t: &mut Trace, requester_a: bool, psn: u32, messages: u32) {
        let i = Self::idx(requester_a);
        self.sides[i].msn = (self.sides[i].msn + messages) & 0x00ff_ffff;
        self.nak(t, requester_a, psn, AethRepr::ack(0x1f, 0).syndrome);
    }

    /// A NAK (code 0 = PSN sequence error, naming `psn`) or an RNR NAK (`rnr_timer`); with an
    /// ACK syndrome, an ACK (what [`Self::ack`] sends after counting the messages).
    pub fn nak(&mut self, t: &mut Trace, requester_a: bool, psn: u32, aeth_syndrome: u8) {
        let i = Self::idx(requester_a);
        let aeth = AethRepr { syndrome: aeth_syndrome, msn: self.sides[i].msn };
        self.emit_response(
            t,
            requester_a,
            op::ACK,
            psn,
            ExtHeaders { aeth: Some(aeth), ..Default::default() },
            &[],
        );
    }

    /// An RDMA READ of `len` bytes: the request (consuming max(1, ceil(len / PMTU)) PSNs)
    /// and the responses FIRST/MIDDLE/LAST or ONLY. Returns the request.
    pub fn read(&mut self, t: &mut Trace, from_a: bool, len: usize) -> Sent {
        let req = self.read_request(t, from_a, len);
        self.read_responses(t, from_a, req.psn, len, &[]);
        req
    }

    /// Only the READ request (the responder's answer is up to the caller).
    pub fn read_request(&mut self, t: &mut Trace, from_a: bool, len: usize) -> Sent {
        let i = Self::idx(from_a);
        let n = len.div_ceil(self.pmtu).max(1);
        let psn = self.sides[i].next_psn;
        let req = Sent {
            opcode: op::READ_REQUEST,
            psn,
            headers: ExtHeaders {
                reth: Some(RethRepr { va: self.va, rkey: 0x5678, dma_len: len as u32 }),
                ..Default::default()
            },
            payload: Vec::new(),
            ackreq: true,
        };
        self.va += len as u64;
        self.sides[i].next_psn = (psn + n as u32) & 0x00ff_ffff;
        self.emit_request(t, from_a, &req);
        req
    }

    /// The responses to a READ of `len` bytes at `psn`, leaving out those whose index is in
    /// `lost` (lost before the capture point); the responder's MSN counts the READ once.
    pub fn read_responses(
        &mut self,
        t: &mut Trace,
        from_a: bool,
        psn: u32,
        len: usize,
        lost: &[usize],
    ) {
        let i = Self::idx(from_a);
        let n = len.div_ceil(self.pmtu).max(1);
        self.sides[i].msn = (self.sides[i].msn + 1) & 0x00ff_ffff;
        let msn = self.sides[i].msn;
        for k in (0..n).filter(|k| !lost.contains(k)) {
            self.read_response(t, from_a, psn, len, k, msn);
        }
    }

    /// Response `k` (0-based) to a READ of `len` bytes at `psn`, AETH (on FIRST, LAST, ONLY)
    /// carrying `msn`; the MSN is not counted (a re-executed duplicate READ, or the rest of
    /// an answer already counted).
    pub fn read_response(
        &self,
        t: &mut Trace,
        from_a: bool,
        psn: u32,
        len: usize,
        k: usize,
        msn: u32,
    ) {
        let n = len.div_ceil(self.pmtu).max(1);
        let (first, last) = (k == 0, k == n - 1);
        let opcode = match (first, last) {
            (true, true) => op::READ_RESPONSE_ONLY,
            (true, false) => op::READ_RESPONSE_FIRST,
            (false, false) => op::READ_RESPONSE_MIDDLE,
            (false, true) => op::READ_RESPONSE_LAST,
        };
        let aeth = (first || last).then(|| AethRepr::ack(0x1f, msn));
        let seg = if last { len - k * self.pmtu } else { self.pmtu };
        let payload: Vec<u8> = (0..seg).map(|x| x as u8).collect();
        let headers = ExtHeaders { aeth, ..Default::default() };
        self.emit_response(t, from_a, opcode, (psn + k as u32) & 0x00ff_ffff, headers, &payload);
    }

    /// The whole answer to a duplicate READ of `len` bytes at `psn`, which the responder
    /// re-executes: READ responses on the READ's own PSNs with the current MSN (not counted
    /// again).
    pub fn read_responses_again(&self, t: &mut Trace, from_a: bool, psn: u32, len: usize) {
        let msn = self.sides[Self::idx(from_a)].msn;
        for k in 0..len.div_ceil(self.pmtu).max(1) {
            self.read_response(t, from_a, psn, len, k, msn);
        }
    }

    /// A FETCH_ADD (or COMPARE_SWAP) and its ATOMIC_ACKNOWLEDGE.
    pub fn atomic(&mut self, t: &mut Trace, from_a: bool, compare_swap: bool) {
        let i = Self::idx(from_a);
        let psn = self.sides[i].next_psn;
        self.sides[i].next_psn = (psn + 1) & 0x00ff_ffff;
        let s = Sent {
            opcode: if compare_swap { op::COMPARE_SWAP } else { op::FETCH_ADD },
            psn,
            headers: ExtHeaders {
                atomic_eth: Some(AtomicEthRepr {
                    va: self.va & !7,
                    rkey: 0x9abc,
                    swap_add: 1,
                    compare: 0,
                }),
                ..Default::default()
            },
            payload: Vec::new(),
            ackreq: true,
        };
        self.emit_request(t, from_a, &s);
        self.sides[i].msn = (self.sides[i].msn + 1) & 0x00ff_ffff;
        let headers = ExtHeaders {
            aeth: Some(AethRepr::ack(0x1f, self.sides[i].msn)),
            atomic_ack_eth: Some(AtomicAckEthRepr { orig: 41 }),
            ..Default::default()
        };
        self.emit_response(t, from_a, op::ATOMIC_ACK, psn, headers, &[]);
    }

    /// A CNP to the QP of `to_a`'s side (the side that sent CE-marked data).
    pub fn cnp(&self, t: &mut Trace, to_a: bool) {
        let (dst, src) = self.ends(to_a);
        let mut h = self.bth(op::CNP, dst.qpn, 0);
        h.becn = true;
        let mut b = frame(&src, &dst, h, ExtHeaders::default(), &[0; 16], 2);
        self.wire_of(!to_a).apply(&mut b, true);
        t.push(&b);
    }
}

/// CM over QP1: each side's GSI endpoint and the MADs that open and close a connection.
pub struct Cm {
    tid: u64,
    comm_ids: (u32, u32),
    /// PSNs of the UD packets to QP1 from a and from b.
    gsi_psn: [u32; 2],
    /// The REQ's primary path Local ACK Timeout (None: RDMA-CM's default, 19).
    pub local_ack_timeout: Option<u8>,
    /// The REQ's RNR Retry Count, which the REP repeats (None: 0, `ReqRepr::rdma_cm`'s; 7
    /// is retry for ever).
    pub rnr_retry_count: Option<u8>,
    /// The REQ's (transport) Retry Count: timeout retries allowed per PSN (None: 3,
    /// `ReqRepr::rdma_cm`'s; 7 is the most the 3 bits hold, not for ever).
    pub retry_count: Option<u8>,
}

impl Cm {
    pub fn new(tid: u64, comm_ids: (u32, u32)) -> Self {
        Cm {
            tid,
            comm_ids,
            gsi_psn: [1, 1],
            local_ack_timeout: None,
            rnr_retry_count: None,
            retry_count: None,
        }
    }

    fn mad(&mut self, t: &mut Trace, conn: &RcConn, from_a: bool, msg: &CmMessage<'_>) {
        let mut mad = [0u8; MAD_LEN];
        let header = MadHeaderRepr::cm(msg.attribute(), self.tid);
        if msg.emit_mad_with_header(&header, &mut mad).is_err() {
            return;
        }
        let (src, dst) = if from_a { (conn.a, conn.b) } else { (conn.b, conn.a) };
        let (src1, dst1) = (Endpoint { qpn: 1, ..src }, Endpoint { qpn: 1, ..dst });
        let i = usize::from(!from_a);
        let mut h = bth(op::UD_SEND_ONLY, 1, self.gsi_psn[i]);
        h.migreq = true;
        self.gsi_psn[i] += 1;
        let headers = ExtHeaders {
            deth: Some(DethRepr { qkey: GSI_QKEY, reserved: 0, src_qp: 1 }),
            ..Default::default()
        };
        let mut b = frame(&src1, &dst1, h, headers, &mad, 2);
        conn.wire_of(from_a).apply(&mut b, false);
        t.push(&b);
    }

    /// The next CM exchange between the same GSI endpoints (a reconnect): a new transaction
    /// ID and new communication IDs; the QP1 PSNs go on.
    pub fn renew(&mut self, comm_ids: (u32, u32)) {
        self.tid += 1;
        self.comm_ids = comm_ids;
    }

    /// The REQ a sends for `conn` (its QPN, P_Key, PMTU, transport, and the starting PSN
    /// of b's requests).
    fn req<'p>(&self, conn: &RcConn, port: u16, pd: &'p [u8]) -> ReqRepr<'p> {
        let mut req = ReqRepr::rdma_cm(
            PortSpace::Tcp,
            std::net::SocketAddr::new(conn.a.ip, 40000),
            std::net::SocketAddr::new(conn.b.ip, port),
            pd,
        );
        req.local_comm_id = self.comm_ids.0;
        req.local_qpn = conn.a.qpn;
        req.starting_psn = conn.sides[1].next_psn;
        req.pkey = conn.pkey;
        req.path_mtu = mtu_code(conn.pmtu as u16).unwrap_or(3);
        if let Some(t) = self.local_ack_timeout {
            req.primary_path.local_ack_timeout = t;
        }
        if let Some(n) = self.rnr_retry_count {
            req.rnr_retry_count = n;
        }
        if let Some(n) = self.retry_count {
            req.retry_count = n;
        }
        if conn.transport == 0x20 {
            req.transport_service_type = TransportServiceType::Uc;
        }
        req
    }

    fn ip_header(conn: &RcConn) -> [u8; RDMA_CM_IP_HEADER_LEN] {
        RdmaCmIpHeader::new(std::net::SocketAddr::new(conn.a.ip, 40000), conn.b.ip).to_bytes()
    }

    /// REQ from a, REP from b, RTU from a, as RDMA-CM does it. Starting PSNs cross over
    /// (docs/wire.md): the REQ announces the PSN a expects (b's requests), the REP the PSN b
    /// expects (a's requests).
    pub fn connect(&mut self, t: &mut Trace, conn: &RcConn, port: u16) {
        self.request_reply(t, conn, port);
        t.advance(20_000);
        self.mad(t, conn, true, &CmMessage::Rtu(RtuRepr::new(self.comm_ids.0, self.comm_ids.1)));
        t.advance(10_000);
    }

    /// Only the REQ from a (announcing `conn`'s current PSNs): a connect nobody answers, or
    /// the CM's retry of it (the same transaction and communication IDs, the next QP1 PSN).
    pub fn request(&mut self, t: &mut Trace, conn: &RcConn, port: u16) {
        let pd = Self::ip_header(conn);
        let req = self.req(conn, port, &pd);
        self.mad(t, conn, true, &CmMessage::Req(req));
    }

    /// REQ from a and REP from b as in [`Self::connect`], but no RTU: the active side never
    /// completes the connection.
    pub fn request_reply(&mut self, t: &mut Trace, conn: &RcConn, port: u16) {
        let pd = Self::ip_header(conn);
        let req = self.req(conn, port, &pd);
        self.mad(t, conn, true, &CmMessage::Req(req));
        t.advance(50_000);
        let rep = RepRepr::reply_to(
            &req,
            self.comm_ids.1,
            conn.b.qpn,
            conn.sides[0].next_psn,
            0x0002_c903_00aa_bb01,
        );
        self.mad(t, conn, false, &CmMessage::Rep(rep));
    }

    /// Only the DREQ from a: a disconnect the peer never answers.
    pub fn dreq(&mut self, t: &mut Trace, conn: &RcConn) {
        self.mad(
            t,
            conn,
            true,
            &CmMessage::Dreq(DreqRepr::new(self.comm_ids.0, self.comm_ids.1, conn.b.qpn)),
        );
    }

    /// REQ from a (announcing `conn`'s current PSNs), REJ from b (consumer defined, what
    /// rdma_reject sends): no connection.
    pub fn rejected(&mut self, t: &mut Trace, conn: &RcConn, port: u16) {
        let pd = Self::ip_header(conn);
        let req = self.req(conn, port, &pd);
        self.mad(t, conn, true, &CmMessage::Req(req));
        t.advance(50_000);
        let rej = RejRepr::new(
            self.comm_ids.1,
            self.comm_ids.0,
            MessageRef::Req,
            RejectReason::ConsumerDefined,
        );
        self.mad(t, conn, false, &CmMessage::Rej(rej));
        t.advance(10_000);
    }

    /// DREQ from a, DREP from b.
    pub fn disconnect(&mut self, t: &mut Trace, conn: &RcConn) {
        self.mad(
            t,
            conn,
            true,
            &CmMessage::Dreq(DreqRepr::new(self.comm_ids.0, self.comm_ids.1, conn.b.qpn)),
        );
        t.advance(20_000);
        self.mad(t, conn, false, &CmMessage::Drep(DrepRepr::new(self.comm_ids.1, self.comm_ids.0)));
    }
}

/// A UD SEND_ONLY (with `imm` if given) from `src` (QP `src.qpn`) to `dst`.
pub fn ud_send(
    t: &mut Trace,
    src: &Endpoint,
    dst: &Endpoint,
    qkey: u32,
    psn: u32,
    payload: &[u8],
    imm: Option<u32>,
) {
    let mut h = bth(op::UD_SEND_ONLY + u8::from(imm.is_some()), dst.qpn, psn);
    h.se = imm.is_some();
    let headers = ExtHeaders {
        deth: Some(DethRepr { qkey, reserved: 0, src_qp: src.qpn }),
        immdt: imm.map(|data| ImmDtRepr { data }),
        ..Default::default()
    };
    t.push(&frame(src, dst, h, headers, payload, 2));
}
