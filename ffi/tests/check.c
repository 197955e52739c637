/*
 * Proof from C: parses the docs/wire.md vectors and every frame of the captures named in the
 * expected file through the C interface (roce_parser.h), prints every field of each
 * roce_packet in the format of ffi/examples/c_expected.rs, and compares line by line with
 * what the Rust API decoded. Also exercises NULL pointers, zero and impossible lengths,
 * options, strings and versions.
 *
 *   check EXPECTED.txt
 *
 * Captures are read by this file's own reader (c/capture.h), and every input is handed to the
 * library in a heap buffer of exactly its length, so that AddressSanitizer sees any read past
 * the end. Exits 0 when everything matches, 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_parser.h"
#include "c/capture.h"

#define LINE_MAX_LEN 8192
#define MAX_REPORTED 20

#define N_VECTORS 6
/* The docs/wire.md vectors; V1QQ: V1 with an 802.1ad and an 802.1Q tag; V1M: V1 with IP version 5;
 * MADX: a UD SEND_ONLY to QP1 carrying a 32-byte CM MAD with attribute ID 0x0099 (short and
 * unknown), written by roce-parser's FrameBuilder (ffi/tests/api.rs builds it again). */
static const char *const VECTOR_NAMES[N_VECTORS] = {"V1", "V2", "V3", "V1QQ", "V1M", "MADX"};
static const char *const VECTOR_HEX[N_VECTORS] = {
    "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460"
    "ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3",
    "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100"
    "ffff40000118000000000000000000000000000000000000000082fd002a",
    "ffffffffffff02fc0000000186dd62012345001c1140fe80000000000000000000000000000"
    "1fe800000000000000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0",
    "248a07a8fa22248a07a8fa2288a8a06481007123080045010040047840004011b4d5c0a80007c0a80007c0"
    "0012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3",
    "248a07a8fa22248a07a8fa22080055010040047840004011b4d5c0a80007c0a80007c00012b700"
    "2caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3",
    "0200000000020200000000010800456a0054000040004011262d0a0000010a000002c00012b70040000064"
    "00ffff00000001000000078001000000000001010702030000000001020304050607080099000000000000"
    "abababababababab472bc881",
};

/* V1 in VXLAN (VNI 0xabcdef, outer IPv4 172.16.0.1 -> .2) mirrored by ERSPAN II (session 7,
 * index 9, GRE sequence 77, outer IPv4 192.0.2.1 -> 192.0.2.9): two tunnels, the inner packet
 * V1's at offset 100. Written by roce-parser's TunnelBuilder (ffi/tests/api.rs builds it
 * again). */
/* A routed native InfiniBand packet (gen sample --native-ib, frame 7): LRH LID 2 -> 1, LNH 3,
 * GRH ::ffff:10.0.0.2 -> ::ffff:10.0.0.1, RC_ACKNOWLEDGE to QP 0xdc1 PSN 3298656, ICRC and
 * VCRC right. */
static const char *const IB_HEX =
    "000300010011000266a0000000141b4000000000000000000000ffff0a00000200000000000000000000ffff"
    "0a0000011100ffff00000dc1003255601f00000133874852b2a7";

static const char *const TUN_HEX =
    "0200000000120200000000110800456a00a400004000402fb5b6c0000201c0000209100088be0000004d100c"
    "a007000000090200000000120200000000110800456a0072000040004011e1edac100001ac100002c00012b5"
    "005e000008000000abcdef00248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a8"
    "0007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f3"
    "53f3";

/* ---------------------------------------------------------------------------------------- */
/* Failure accounting                                                                        */
/* ---------------------------------------------------------------------------------------- */

static unsigned long g_passed, g_failed, g_fields;
static char g_where[512] = "start";

static void fail(const char *fmt, ...) {
    va_list ap;
    g_failed++;
    if (g_failed > MAX_REPORTED)
        return;
    fprintf(stderr, "FAIL [%s] ", g_where);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (cond)                                                                             \
            g_passed++;                                                                       \
        else                                                                                  \
            fail("%s:%d: %s", __FILE__, __LINE__, #cond);                                     \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Formatting one roce_packet (the format of c_expected.rs)                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t cap, len;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->cap - b->len) {
        fprintf(stderr, "line buffer too small\n");
        exit(2);
    }
    b->len += (size_t)n;
}

static void put_hex(sbuf *b, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        put(b, "%02x", p[i]);
}

static uint32_t fnv(const uint8_t *p, size_t n) {
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x01000193u;
    return h;
}

static void format_packet(char *out, size_t cap, const char *tag, int st, const roce_packet *p,
                          const uint8_t *data, size_t len) {
    sbuf b = {out, cap, 0};
    out[0] = 0;
    put(&b, "%s st=%d", tag, st);
    put(&b, " eth=%d emac=", p->eth.present);
    put_hex(&b, p->eth.dst, 6);
    put(&b, "-");
    put_hex(&b, p->eth.src, 6);
    put(&b, " et=%04x vl=%u", p->eth.ethertype, p->eth.vlan_count);
    for (int i = 0; i < 2; i++) {
        const roce_vlan *v = &p->eth.vlans[i];
        put(&b, " v%d=%04x:%u:%d:%u", i, v->tpid, v->pcp, v->dei, v->vid);
    }
    put(&b, " ip=%d ipv=%u isrc=", p->ip.present, p->ip.version);
    put_hex(&b, p->ip.src, 16);
    put(&b, " idst=");
    put_hex(&b, p->ip.dst, 16);
    put(&b, " dscp=%u ecn=%u ttl=%u proto=%u ipid=%u fl=%" PRIu32 " ioff=%zu ihl=%zu iext=%zu itot=%zu",
        p->ip.dscp, p->ip.ecn, p->ip.ttl, p->ip.protocol, p->ip.identification, p->ip.flow_label,
        p->ip.offset, p->ip.header_len, p->ip.ext_len, p->ip.total_len);
    put(&b, " udp=%d sp=%u dp=%u ul=%u uck=%04x uoff=%zu", p->udp.present, p->udp.sport,
        p->udp.dport, p->udp.len, p->udp.checksum, p->udp.offset);
    put(&b, " grh=%d gv=%u gtc=%u gnh=%u ghop=%u gpl=%u gfl=%" PRIu32 " sgid=", p->grh.present,
        p->grh.ipver, p->grh.tclass, p->grh.nxthdr, p->grh.hoplmt, p->grh.paylen,
        p->grh.flow_label);
    put_hex(&b, p->grh.sgid, 16);
    put(&b, " dgid=");
    put_hex(&b, p->grh.dgid, 16);
    const roce_bth *t = &p->bth;
    put(&b,
        " rv=%u known=%d op=%02x name=%s se=%d m=%d pc=%u tv=%u fe=%d be=%d ar=%d pk=%04x r6=%u "
        "r7=%u qp=%06" PRIx32 " psn=%06" PRIx32,
        p->roce_version, p->opcode_known, t->opcode,
        p->roce_version ? roce_opcode_name(t->opcode) : "-", t->se, t->m, t->padcnt, t->tver,
        t->fecn, t->becn, t->ackreq, t->pkey, t->resv6, t->resv7, t->dest_qp, t->psn);
    put(&b, " rdeth=%d:%u:%" PRIu32, p->rdeth.present, p->rdeth.reserved, p->rdeth.eecnxt);
    put(&b, " deth=%d:%u:%08" PRIx32 ":%" PRIu32, p->deth.present, p->deth.reserved, p->deth.qkey,
        p->deth.src_qp);
    put(&b, " xrceth=%d:%u:%" PRIu32, p->xrceth.present, p->xrceth.reserved, p->xrceth.xrcsrq);
    put(&b, " reth=%d:%016" PRIx64 ":%08" PRIx32 ":%" PRIu32, p->reth.present, p->reth.va,
        p->reth.rkey, p->reth.dma_len);
    put(&b, " atomiceth=%d:%016" PRIx64 ":%08" PRIx32 ":%016" PRIx64 ":%016" PRIx64,
        p->atomic_eth.present, p->atomic_eth.va, p->atomic_eth.rkey, p->atomic_eth.swap_add,
        p->atomic_eth.compare);
    put(&b, " aeth=%d:%02x:%u:%u:%" PRIu32, p->aeth.present, p->aeth.syndrome, p->aeth.kind,
        p->aeth.value, p->aeth.msn);
    put(&b, " atomicack=%d:%016" PRIx64, p->atomic_ack_eth.present, p->atomic_ack_eth.orig);
    put(&b, " immdt=%d:%08" PRIx32, p->immdt.present, p->immdt.data);
    put(&b, " ieth=%d:%08" PRIx32, p->ieth.present, p->ieth.rkey);
    put(&b, " feth=%d:%u:%u:%" PRIu32, p->feth.present, p->feth.selectivity, p->feth.placement,
        p->feth.reserved);
    /* The library promises offset + captured <= len: check it before reading the bytes. */
    if (p->payload_offset + p->payload_captured + p->pad_captured > len ||
        p->opaque_offset + p->opaque_len > len) {
        fail("offsets past the input: po=%zu pcap=%zu pad=%zu oo=%zu ol=%zu len=%zu",
             p->payload_offset, p->payload_captured, p->pad_captured, p->opaque_offset,
             p->opaque_len, len);
        put(&b, " OFFSETS-OUT-OF-RANGE");
        return;
    }
    put(&b, " bo=%zu hl=%zu po=%zu pl=%zu pcap=%zu pfnv=%08" PRIx32 " pad=%zu oo=%zu ol=%zu ofnv=%08" PRIx32,
        p->bth_offset, p->header_len, p->payload_offset, p->payload_len, p->payload_captured,
        fnv(data + p->payload_offset, p->payload_captured), p->pad_captured, p->opaque_offset,
        p->opaque_len, fnv(data + p->opaque_offset, p->opaque_len));
    put(&b, " icp=%d ic=%08" PRIx32 " is=%u icc=%08" PRIx32, p->icrc_present, p->icrc,
        p->icrc_status, p->icrc_computed);
    char layer[64];
    snprintf(layer, sizeof layer, "%s", roce_layer_name(p->stop_layer));
    for (char *c = layer; *c; c++)
        if (*c == ' ')
            *c = '_';
    put(&b, " pr=%08" PRIx32 " stop=%d sl=%s so=%zu sn=%zu sa=%zu", p->problems, p->stop, layer,
        p->stop_offset, p->stop_needed, p->stop_available);
}

/* ---------------------------------------------------------------------------------------- */
/* Comparing with the expected file                                                          */
/* ---------------------------------------------------------------------------------------- */

static FILE *g_expected;
static char g_exp_line[LINE_MAX_LEN];

/* The next expected line without its newline, or NULL at the end of the file. */
static const char *next_expected(void) {
    if (!fgets(g_exp_line, sizeof g_exp_line, g_expected))
        return NULL;
    size_t n = strlen(g_exp_line);
    if (n && g_exp_line[n - 1] == '\n')
        g_exp_line[--n] = 0;
    return g_exp_line;
}

/* Reports the fields (space-separated key=value tokens) that differ. */
static void report_fields(const char *tag, const char *want, const char *got) {
    char a[LINE_MAX_LEN], b[LINE_MAX_LEN];
    snprintf(a, sizeof a, "%s", want);
    snprintf(b, sizeof b, "%s", got);
    char *sa = NULL, *sb = NULL;
    char *ta = strtok_r(a, " ", &sa), *tb = strtok_r(b, " ", &sb);
    int shown = 0;
    while (ta || tb) {
        if (!ta || !tb || strcmp(ta, tb) != 0) {
            fail("mode %s: Rust %s, C %s", tag, ta ? ta : "(nothing)", tb ? tb : "(nothing)");
            if (++shown == 8)
                return;
        }
        ta = ta ? strtok_r(NULL, " ", &sa) : NULL;
        tb = tb ? strtok_r(NULL, " ", &sb) : NULL;
    }
}

static unsigned long count_fields(const char *line) {
    unsigned long n = 0;
    for (const char *c = line; *c; c++)
        n += *c == '=';
    return n;
}

/* A control line ("vector V1", "file X", "frame ..."): must match exactly, else give up. */
static void expect_control(const char *mine) {
    const char *want = next_expected();
    if (!want || strcmp(want, mine) != 0) {
        fail("structure differs: Rust '%s', C '%s'", want ? want : "(end of file)", mine);
        fprintf(stderr, "%lu passed, %lu failed\n", g_passed, g_failed);
        exit(1);
    }
    g_passed++;
}

/* Compares one parse with the next expected line. */
static void compare_line(const char *tag, const char *got) {
    const char *want = next_expected();
    if (!want) {
        fail("expected file ends before mode %s", tag);
        exit(1);
    }
    char want_tag[32];
    snprintf(want_tag, sizeof want_tag, "%.*s", (int)strcspn(want, " "), want);
    if (strcmp(want_tag, tag) != 0) {
        fail("Rust ran mode %s where C ran mode %s", want_tag, tag);
        fprintf(stderr, "%lu passed, %lu failed\n", g_passed, g_failed);
        exit(1);
    }
    g_fields += count_fields(want);
    if (strcmp(want, got) == 0)
        g_passed++;
    else
        report_fields(tag, want, got);
}

static void compare(const char *tag, int st, const roce_packet *p, const uint8_t *data,
                    size_t len) {
    static char got[LINE_MAX_LEN];
    format_packet(got, sizeof got, tag, st, p, data, len);
    compare_line(tag, got);
}

/* A heap copy of exactly n bytes, so that ASan catches any read past the end. */
static uint8_t *exact_copy(const uint8_t *src, size_t n) {
    uint8_t *p = (uint8_t *)malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (n)
        memcpy(p, src, n);
    else
        p[0] = 0;
    return p;
}

typedef int (*parse_fn)(const uint8_t *, size_t, roce_packet *);

static int parse_copy(parse_fn f, const uint8_t *data, size_t len, roce_packet *out,
                      uint8_t **copy) {
    *copy = exact_copy(data, len);
    return f(*copy, len, out);
}

/* ---------------------------------------------------------------------------------------- */
/* CM MADs: roce_parse_mad on the payload of every UD SEND to QP1 (mode M)                  */
/* ---------------------------------------------------------------------------------------- */

static unsigned long g_mads, g_cm_msgs;

static void put_pd(sbuf *b, const char *name, size_t off, size_t len) {
    put(b, " %s=%zu+%zu", name, off, len);
}

static void put_path(sbuf *b, const char *name, const roce_cm_path *p) {
    put(b, " %s=%x,%x,", name, p->local_lid, p->remote_lid);
    put_hex(b, p->local_gid, 16);
    put(b, ",");
    put_hex(b, p->remote_gid, 16);
    put(b, ",%" PRIx32 ",%u,%u,%u,%u,%u,%u", p->flow_label, p->packet_rate, p->traffic_class,
        p->hop_limit, p->sl, (unsigned)p->subnet_local, p->local_ack_timeout);
}

static void put_rdma(sbuf *b, const roce_rdma_cm *r) {
    put(b, " rc=%u,%x,%u,%u,%u,%u,%u,", (unsigned)r->service_present, r->port_space, r->dst_port,
        (unsigned)r->ip_present, r->version, r->ip_version, r->src_port);
    put_hex(b, r->src_ip, 16);
    put(b, ",");
    put_hex(b, r->dst_ip, 16);
}

static void format_mad(char *out, size_t cap, int st, const roce_mad *m, size_t len) {
    sbuf b = {out, cap, 0};
    if (st != ROCE_OK) {
        put(&b, "M st=%d len=%zu", st, len);
        return;
    }
    const roce_mad_header *h = &m->header;
    put(&b,
        "M st=0 len=%zu hdr=%u,%x,%u,%x,%x,%x,%" PRIx64 ",%x,%x,%" PRIx32
        " pr=%08" PRIx32 " kind=%u dec=%u dl=%zu",
        len, h->base_version, h->mgmt_class, h->class_version, h->method, h->status,
        h->class_specific, h->transaction_id, h->attribute_id, h->reserved,
        h->attribute_modifier, m->problems, m->cm_kind, (unsigned)m->cm_decoded, m->data_len);
    if (!m->cm_decoded)
        return;
    switch (m->cm_kind) {
    case ROCE_CM_REQ: {
        const roce_cm_req *r = &m->req;
        put(&b,
            " req=%" PRIx32 ",%" PRIx32 ",%" PRIx64 ",%" PRIx64 ",%" PRIx32 ",%" PRIx32
            ",%" PRIx32 ",%" PRIx32 ",%u,%u,%u,%u,%u,%u,%u,%u,%x,%u,%u,%u,%u,%u",
            r->local_comm_id, r->local_qkey, r->service_id, r->local_ca_guid, r->local_qpn,
            r->local_eecn, r->remote_eecn, r->starting_psn, r->responder_resources,
            r->initiator_depth, r->remote_cm_response_timeout, r->transport_service_type,
            (unsigned)r->end_to_end_flow_control, r->local_cm_response_timeout, r->retry_count,
            r->path_mtu, r->pkey, (unsigned)r->rdc_exists, r->rnr_retry_count,
            r->max_cm_retries, (unsigned)r->srq, r->extended_transport_type);
        put_path(&b, "pp", &r->primary_path);
        put_path(&b, "ap", &r->alternate_path);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        put_rdma(&b, &r->rdma_cm);
        break;
    }
    case ROCE_CM_REP: {
        const roce_cm_rep *r = &m->rep;
        put(&b,
            " rep=%" PRIx32 ",%" PRIx32 ",%" PRIx32 ",%" PRIx32 ",%" PRIx32 ",%" PRIx32
            ",%" PRIx64 ",%u,%u,%u,%u,%u,%u,%u",
            r->local_comm_id, r->remote_comm_id, r->local_qkey, r->local_qpn, r->local_eecn,
            r->starting_psn, r->local_ca_guid, r->responder_resources, r->initiator_depth,
            r->target_ack_delay, r->failover_accepted, (unsigned)r->end_to_end_flow_control,
            r->rnr_retry_count, (unsigned)r->srq);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_RTU:
    case ROCE_CM_DREP: {
        const roce_cm_ids_data *r = m->cm_kind == ROCE_CM_RTU ? &m->rtu : &m->drep;
        put(&b, " %s=%" PRIx32 ",%" PRIx32, m->cm_kind == ROCE_CM_RTU ? "rtu" : "drep",
            r->local_comm_id, r->remote_comm_id);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_REJ: {
        const roce_cm_rej *r = &m->rej;
        put(&b, " rej=%" PRIx32 ",%" PRIx32 ",%u,%u,%u", r->local_comm_id, r->remote_comm_id,
            r->message_rejected, r->reject_info_length, r->reason);
        put_pd(&b, "ari", r->ari_offset, r->ari_len);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_MRA: {
        const roce_cm_mra *r = &m->mra;
        put(&b, " mra=%" PRIx32 ",%" PRIx32 ",%u,%u", r->local_comm_id, r->remote_comm_id,
            r->message_mraed, r->service_timeout);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_DREQ: {
        const roce_cm_dreq *r = &m->dreq;
        put(&b, " dreq=%" PRIx32 ",%" PRIx32 ",%" PRIx32, r->local_comm_id, r->remote_comm_id,
            r->remote_qpn_eecn);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_SIDR_REQ: {
        const roce_cm_sidr_req *r = &m->sidr_req;
        put(&b, " sreq=%" PRIx32 ",%x,%" PRIx64, r->request_id, r->pkey, r->service_id);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        put_rdma(&b, &r->rdma_cm);
        break;
    }
    case ROCE_CM_SIDR_REP: {
        const roce_cm_sidr_rep *r = &m->sidr_rep;
        put(&b, " srep=%" PRIx32 ",%u,%u,%" PRIx32 ",%" PRIx32 ",%" PRIx64, r->request_id,
            r->status, r->additional_info_length, r->qpn, r->qkey, r->service_id);
        put_pd(&b, "ai", r->additional_info_offset, r->additional_info_len);
        put_pd(&b, "pd", r->private_data_offset, r->private_data_len);
        break;
    }
    case ROCE_CM_LAP:
        put(&b, " lap=%" PRIx32 ",%" PRIx32, m->lap.local_comm_id, m->lap.remote_comm_id);
        break;
    case ROCE_CM_APR:
        put(&b, " apr=%" PRIx32 ",%" PRIx32, m->apr.local_comm_id, m->apr.remote_comm_id);
        break;
    default:
        break;
    }
}

/* Offsets inside the MAD must stay inside it. */
static void check_mad_bounds(const roce_mad *m, size_t len) {
    size_t n = len < 256 ? len : 256;
    const size_t spans[][2] = {
        {m->req.private_data_offset, m->req.private_data_len},
        {m->rep.private_data_offset, m->rep.private_data_len},
        {m->rtu.private_data_offset, m->rtu.private_data_len},
        {m->drep.private_data_offset, m->drep.private_data_len},
        {m->rej.ari_offset, m->rej.ari_len},
        {m->rej.private_data_offset, m->rej.private_data_len},
        {m->mra.private_data_offset, m->mra.private_data_len},
        {m->dreq.private_data_offset, m->dreq.private_data_len},
        {m->sidr_req.private_data_offset, m->sidr_req.private_data_len},
        {m->sidr_rep.additional_info_offset, m->sidr_rep.additional_info_len},
        {m->sidr_rep.private_data_offset, m->sidr_rep.private_data_len},
    };
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++)
        if (spans[i][0] > n || spans[i][1] > n - spans[i][0])
            fail("MAD span %zu past the MAD: %zu+%zu of %zu", i, spans[i][0], spans[i][1], n);
}

static void mad_mode(const uint8_t *payload, size_t len) {
    static char got[LINE_MAX_LEN];
    roce_mad m;
    uint8_t *copy = exact_copy(payload, len);
    int st = roce_parse_mad(copy, len, &m);
    if (st == ROCE_OK) {
        check_mad_bounds(&m, len);
        /* The private data is readable where the offsets say (ASan checks the copy). */
        uint32_t h = fnv(copy + m.req.private_data_offset, m.req.private_data_len);
        (void)h;
    }
    free(copy);
    format_mad(got, sizeof got, st, &m, len);
    g_mads++;
    if (st == ROCE_OK && m.cm_decoded && m.cm_kind != ROCE_CM_CLASS_PORT_INFO)
        g_cm_msgs++;
    compare_line("M", got);
}

static void run_mode(const char *tag, parse_fn f, const uint8_t *data, size_t len,
                     roce_packet *out) {
    uint8_t *copy;
    int st = parse_copy(f, data, len, out, &copy);
    compare(tag, st, out, copy, len);
    free(copy);
}

static const roce_options *g_opts;
static uint16_t g_ethertype;
static int with_opts(const uint8_t *d, size_t n, roce_packet *o) {
    return roce_parse_frame_opts(d, n, g_opts, o);
}
static int ethertype_payload(const uint8_t *d, size_t n, roce_packet *o) {
    return roce_parse_ethertype(g_ethertype, d, n, NULL, o);
}

/* roce_parse_frame_segments on `frame` cut at `cuts` (ascending), each segment in its own
 * exact heap copy (ASan sees a read past any segment), must give what the contiguous parse
 * gave (`want`, its format_packet line). */
static unsigned long g_splits;
static void check_split(const uint8_t *frame, size_t len, const size_t *cuts, size_t ncuts,
                        const roce_options *opts, const char *want) {
    roce_segment segs[10];
    uint8_t *copies[10];
    size_t at = 0, n = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        if (end > len)
            end = len;
        if (end < at)
            end = at;
        copies[n] = exact_copy(frame + at, end - at);
        segs[n].data = copies[n];
        segs[n].len = end - at;
        n++;
        at = end;
    }
    roce_packet p;
    int st = roce_parse_frame_segments(segs, n, opts, &p);
    static char got[LINE_MAX_LEN];
    format_packet(got, sizeof got, "F", st, &p, frame, len);
    g_splits++;
    if (strcmp(want, got) != 0) {
        char tag[64];
        snprintf(tag, sizeof tag, "segments(%zu, first cut %zu)", n, ncuts ? cuts[0] : len);
        report_fields(tag, want, got);
    } else {
        g_passed++;
    }
    for (size_t i = 0; i < n; i++)
        free(copies[i]);
}

/* A bounded set of splits of one frame (parser/tests/segments.rs tries every offset; this
 * checks the C boundary, under the sanitizers): 1 segment; 2 at every 7th offset up to 160
 * (the headers), at len/4, len/2, 3len/4 and in the last 4 bytes (the ICRC); 3 with the
 * second cut 1 or 3 bytes after the first, at 14 and 42; 8 equal parts, and 3-byte segments
 * from 40 on. */
static void check_segments(const uint8_t *frame, size_t len, const roce_options *opts) {
    roce_packet full;
    int st = roce_parse_frame_opts(frame, len, opts, &full);
    static char want[LINE_MAX_LEN];
    format_packet(want, sizeof want, "F", st, &full, frame, len);
    size_t c[8] = {0};
    check_split(frame, len, c, 0, opts, want);
    for (size_t a = 0; a <= len && a <= 160; a += 7) {
        c[0] = a;
        check_split(frame, len, c, 1, opts, want);
    }
    for (size_t q = 1; q <= 3; q++) {
        c[0] = len * q / 4;
        check_split(frame, len, c, 1, opts, want);
    }
    for (size_t k = 1; k <= 4 && k <= len; k++) {
        c[0] = len - k;
        check_split(frame, len, c, 1, opts, want);
    }
    for (size_t a = 14; a <= 42; a += 28)
        for (size_t d = 1; d <= 3; d += 2) {
            c[0] = a;
            c[1] = a + d;
            check_split(frame, len, c, 2, opts, want);
        }
    for (size_t i = 0; i < 7; i++)
        c[i] = len * (i + 1) / 8;
    check_split(frame, len, c, 7, opts, want);
    for (size_t i = 0; i < 7; i++)
        c[i] = 40 + 3 * (i + 1);
    check_split(frame, len, c, 7, opts, want);
}

/* Every mode of c_expected.rs, in its order. */
static void modes(const uint8_t *frame, size_t len, int vector) {
    roce_packet full, out;
    uint8_t *copy;
    int st = parse_copy(roce_parse_frame, frame, len, &full, &copy);
    compare("F", st, &full, copy, len);
    free(copy);
    check_segments(frame, len, NULL);

    roce_options noverify = {0};
    noverify.skip_icrc = 1;
    g_opts = &noverify;
    run_mode("N", with_opts, frame, len, &out);
    if (vector) {
        for (size_t k = 0; k < len; k++) {
            char tag[32];
            snprintf(tag, sizeof tag, "T%zu", k);
            run_mode(tag, roce_parse_frame, frame, k, &out);
        }
        roce_options port = {0};
        port.udp_port = 4792;
        g_opts = &port;
        run_mode("P", with_opts, frame, len, &out);
    } else {
        run_mode("H", roce_parse_frame, frame, len / 2, &out);
    }
    if (st == ROCE_OK && full.roce_version != 0 &&
        (full.bth.opcode == 0x64 || full.bth.opcode == 0x65) && full.bth.dest_qp == 1)
        mad_mode(frame + full.payload_offset, full.payload_captured);
    if (full.ip.present)
        run_mode("I", roce_parse_ip, frame + full.ip.offset, len - full.ip.offset, &out);
    if (full.eth.present && full.eth.vlan_count == 0 && len >= 14) {
        g_ethertype = full.eth.ethertype;
        run_mode("E", ethertype_payload, frame + 14, len - 14, &out);
    }
    if (full.roce_version == 2 && full.udp.present && full.udp.len >= 8) {
        size_t start = full.udp.offset + 8;
        size_t end = full.udp.offset + full.udp.len;
        if (end > len)
            end = len;
        if (start <= end)
            run_mode("U", roce_parse_udp_payload, frame + start, end - start, &out);
    }
}

static size_t unhex(const char *h, uint8_t *out, size_t cap) {
    size_t n = strlen(h) / 2;
    if (n > cap)
        n = cap;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    return n;
}

static int compare_all(const char *expected_path) {
    g_expected = fopen(expected_path, "r");
    if (!g_expected) {
        perror(expected_path);
        return 1;
    }
    expect_control("roce-parser-ffi expected v1");
    unsigned long frames = 0, vectors = 0, captures = 0;
    for (;;) {
        long at = ftell(g_expected);
        const char *l = next_expected();
        if (!l) {
            fail("expected file has no end line");
            break;
        }
        char line[LINE_MAX_LEN];
        snprintf(line, sizeof line, "%s", l);
        fseek(g_expected, at, SEEK_SET);
        if (strncmp(line, "vector ", 7) == 0) {
            int i;
            for (i = 0; i < N_VECTORS && strcmp(line + 7, VECTOR_NAMES[i]) != 0; i++)
                ;
            if (i == N_VECTORS) {
                fail("unknown vector %s", line + 7);
                return 1;
            }
            char mine[32];
            snprintf(mine, sizeof mine, "vector %s", VECTOR_NAMES[i]);
            expect_control(mine);
            snprintf(g_where, sizeof g_where, "vector %s", VECTOR_NAMES[i]);
            uint8_t buf[256];
            size_t n = unhex(VECTOR_HEX[i], buf, sizeof buf);
            modes(buf, n, 1);
            vectors++;
        } else if (strncmp(line, "file ", 5) == 0) {
            const char *path = line + 5;
            expect_control(line);
            cap_reader r;
            if (cap_open(&r, path) != 0) {
                fail("cannot open %s", path);
                return 1;
            }
            captures++;
            const uint8_t *data;
            size_t caplen;
            uint32_t lt;
            unsigned long n = 0;
            int rc;
            while ((rc = cap_next(&r, &data, &caplen, &lt)) == 1) {
                char mine[128];
                n++;
                frames++;
                snprintf(mine, sizeof mine, "frame %lu len=%zu lt=%" PRIu32 "%s", n, caplen, lt,
                         lt == 1 ? "" : " skip");
                expect_control(mine);
                snprintf(g_where, sizeof g_where, "%.300s frame %lu", path, n);
                if (lt == 1)
                    modes(data, caplen, 0);
            }
            cap_close(&r);
            if (rc < 0) {
                fail("%s: damaged capture", path);
                return 1;
            }
        } else if (strncmp(line, "end ", 4) == 0) {
            char mine[64];
            snprintf(mine, sizeof mine, "end frames=%lu", frames);
            expect_control(mine);
            break;
        } else {
            fail("unexpected line in the expected file: %.80s", line);
            return 1;
        }
    }
    fclose(g_expected);
    printf("check: %lu vectors, %lu captures, %lu frames; %lu fields compared with the Rust "
           "API; %lu segmented parses equal to the contiguous one; %lu MADs through roce_parse_mad (%lu CM "
           "messages decoded) compared with the Rust decode\n",
           vectors, captures, frames, g_fields, g_splits, g_mads, g_cm_msgs);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The API contract from C                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const uint8_t NO_BYTES[1] = {0};

static void format_simple(char *out, size_t cap, const roce_packet *p, const uint8_t *data,
                          size_t len) {
    format_packet(out, cap, "x", 0, p, data, len);
}

static void api_checks(void) {
    uint8_t v1[128];
    size_t n1 = unhex(VECTOR_HEX[0], v1, sizeof v1);
    roce_packet out, zero;
    char a[LINE_MAX_LEN], b[LINE_MAX_LEN];
    memset(&zero, 0, sizeof zero);
    format_simple(b, sizeof b, &zero, NO_BYTES, 0);

    snprintf(g_where, sizeof g_where, "versions");
    CHECK(roce_packet_size() == sizeof(roce_packet));
    CHECK(roce_parser_abi_version() == ROCE_PARSER_ABI_VERSION);
    CHECK(roce_parser_version() != NULL && roce_parser_version()[0] >= '0' &&
          roce_parser_version()[0] <= '9');

    snprintf(g_where, sizeof g_where, "NULL arguments");
    CHECK(roce_parse_frame(v1, n1, NULL) == ROCE_ERR_NULL);
    CHECK(roce_parse_frame_opts(v1, n1, NULL, NULL) == ROCE_ERR_NULL);
    CHECK(roce_parse_ip(v1 + 14, n1 - 14, NULL) == ROCE_ERR_NULL);
    CHECK(roce_parse_ip_opts(v1 + 14, n1 - 14, NULL, NULL) == ROCE_ERR_NULL);
    CHECK(roce_parse_udp_payload(v1 + 42, n1 - 42, NULL) == ROCE_ERR_NULL);
    CHECK(roce_parse_ethertype(0x0800, v1 + 14, n1 - 14, NULL, NULL) == ROCE_ERR_NULL);
    size_t lens[3] = {0, 1, 60};
    for (int i = 0; i < 3; i++) {
        memset(&out, 0xa5, sizeof out);
        CHECK(roce_parse_frame(NULL, lens[i], &out) == ROCE_ERR_NULL);
        format_simple(a, sizeof a, &out, NO_BYTES, 0);
        CHECK(strcmp(a, b) == 0); /* out zeroed */
        memset(&out, 0xa5, sizeof out);
        CHECK(roce_parse_ip(NULL, lens[i], &out) == ROCE_ERR_NULL);
        CHECK(out.roce_version == 0 && !out.ip.present && out.stop == 0);
        CHECK(roce_parse_udp_payload(NULL, lens[i], &out) == ROCE_ERR_NULL);
        CHECK(roce_parse_ethertype(0x8915, NULL, lens[i], NULL, &out) == ROCE_ERR_NULL);
        CHECK(roce_parse_frame_opts(NULL, lens[i], NULL, &out) == ROCE_ERR_NULL);
    }

    snprintf(g_where, sizeof g_where, "zero and impossible lengths");
    uint8_t *one = exact_copy(v1, 1);
    CHECK(roce_parse_frame(one, 0, &out) == ROCE_ERR_TRUNCATED);
    CHECK(out.stop == ROCE_ERR_TRUNCATED && out.stop_layer == ROCE_LAYER_ETHERNET);
    CHECK(out.stop_needed == 14 && out.stop_available == 0);
    CHECK(roce_parse_ip(one, 0, &out) == ROCE_ERR_TRUNCATED);
    CHECK(roce_parse_udp_payload(one, 0, &out) == ROCE_ERR_TRUNCATED);
    CHECK(out.stop_layer == ROCE_LAYER_BTH);
    CHECK(roce_parse_ethertype(0x0800, one, 0, NULL, &out) == ROCE_ERR_TRUNCATED);
    CHECK(roce_parse_ethertype(0x0806, one, 0, NULL, &out) == ROCE_ERR_NOT_ROCE);
    CHECK(roce_parse_frame(one, 1, &out) == ROCE_ERR_TRUNCATED);
    CHECK(roce_parse_frame(one, SIZE_MAX, &out) == ROCE_ERR_INVALID_ARG);
    CHECK(roce_parse_frame(one, (size_t)PTRDIFF_MAX + 1, &out) == ROCE_ERR_INVALID_ARG);
    free(one);

    snprintf(g_where, sizeof g_where, "truncated frames");
    for (size_t k = 0; k < n1; k++) {
        uint8_t *c = exact_copy(v1, k);
        int st = roce_parse_frame(c, k, &out);
        CHECK(st == ROCE_OK || st == ROCE_ERR_TRUNCATED);
        CHECK(out.icrc_status != ROCE_ICRC_OK && out.icrc_status != ROCE_ICRC_BAD);
        CHECK(out.payload_offset + out.payload_captured + out.pad_captured <= k);
        if (st == ROCE_OK) /* the BTH is there: the frame reaches past byte 42 + 12 */
            CHECK(k >= 54 && out.bth.dest_qp == 0xd3 && (out.problems & ROCE_PROBLEM_TRUNCATED));
        free(c);
    }

    snprintf(g_where, sizeof g_where, "options and results");
    roce_options opts;
    memset(&opts, 0, sizeof opts);
    CHECK(roce_parse_frame_opts(v1, n1, &opts, &out) == ROCE_OK);
    format_simple(a, sizeof a, &out, v1, n1);
    CHECK(roce_parse_frame(v1, n1, &out) == ROCE_OK);
    format_simple(b, sizeof b, &out, v1, n1);
    CHECK(strcmp(a, b) == 0); /* {0} options are the defaults */
    CHECK(out.roce_version == 2 && out.icrc_status == ROCE_ICRC_OK && out.problems == 0);
    CHECK(strcmp(roce_opcode_name(out.bth.opcode), "UC_SEND_ONLY") == 0);
    CHECK(out.payload_len == 18 && memcmp(v1 + out.payload_offset, "\x46\x30\x81\x8b", 4) == 0);
    CHECK(out.ip.version == 4 && memcmp(out.ip.src + 12, "\xc0\xa8\x00\x07", 4) == 0);
    opts.udp_port = 4792;
    CHECK(roce_parse_frame_opts(v1, n1, &opts, &out) == ROCE_ERR_NOT_ROCE);
    CHECK(out.udp.present && out.udp.dport == 4791 && out.roce_version == 0);
    v1[n1 - 1] ^= 0xff;
    CHECK(roce_parse_frame(v1, n1, &out) == ROCE_OK);
    CHECK(out.icrc_status == ROCE_ICRC_BAD && out.icrc_computed == 0xf353f378u);
    CHECK((out.problems & ROCE_PROBLEM_ICRC_BAD) != 0);
    opts.udp_port = 0;
    opts.skip_icrc = 1;
    CHECK(roce_parse_frame_opts(v1, n1, &opts, &out) == ROCE_OK);
    CHECK(out.icrc_status == ROCE_ICRC_NOT_CHECKED && out.problems == 0);
    v1[n1 - 1] ^= 0xff;
    v1[14] = 0x55; /* IP version 5 */
    CHECK(roce_parse_frame(v1, n1, &out) == ROCE_ERR_MALFORMED);
    CHECK(out.stop_layer == ROCE_LAYER_IPV4 && out.stop_offset == 14);
    CHECK(roce_parse_ip(v1 + 14, n1 - 14, &out) == ROCE_ERR_MALFORMED);

    snprintf(g_where, sizeof g_where, "strings");
    const int codes[6] = {ROCE_OK, ROCE_ERR_NULL, ROCE_ERR_TRUNCATED, ROCE_ERR_MALFORMED,
                          ROCE_ERR_NOT_ROCE, ROCE_ERR_INVALID_ARG};
    for (int i = 0; i < 6; i++) {
        CHECK(roce_status_str(codes[i]) != NULL);
        CHECK(strcmp(roce_status_str(codes[i]), "unknown status") != 0);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(roce_status_str(codes[i]), roce_status_str(codes[j])) != 0);
    }
    CHECK(ROCE_OK == 0 && ROCE_ERR_NOT_ROCE < 0 && ROCE_ERR_NULL < 0);
    CHECK(strcmp(roce_status_str(42), "unknown status") == 0);
    for (int op = 0; op < 256; op++)
        CHECK(roce_opcode_name((uint8_t)op) != NULL && roce_opcode_name((uint8_t)op)[0] != 0);
    CHECK(strcmp(roce_opcode_name(0x81), "CNP") == 0);
    CHECK(strcmp(roce_opcode_name(0x64), "UD_SEND_ONLY") == 0);
    CHECK(strcmp(roce_opcode_name(0x15), "RC_RESERVED") == 0);
    CHECK(strcmp(roce_opcode_name(0xff), "VENDOR_SPECIFIC") == 0);
    for (int bit = 0; bit < 32; bit++) {
        uint32_t m = (uint32_t)1 << bit;
        int known = (ROCE_PROBLEM_ALL & m) != 0;
        CHECK(roce_problem_str(m) != NULL);
        CHECK((strcmp(roce_problem_str(m), "unknown problem") != 0) == known);
    }
    CHECK(strcmp(roce_problem_str(ROCE_PROBLEM_ICRC_BAD), "ICRC does not match the recomputed value") == 0);
    CHECK(strcmp(roce_layer_name(ROCE_LAYER_AETH), "AETH") == 0);
    CHECK(strcmp(roce_layer_name(ROCE_LAYER_NONE), "none") == 0);
    CHECK(strcmp(roce_layer_name(200), "unknown layer") == 0);

    /* The parser decodes the MAD of a UD SEND to QP1 and reports its problems with the
     * packet's: MADX is a 32-byte CM MAD (short) with attribute ID 0x0099 (not CM). */
    snprintf(g_where, sizeof g_where, "MAD problems");
    uint8_t mad[128];
    size_t nm = unhex(VECTOR_HEX[5], mad, sizeof mad);
    uint8_t *m = exact_copy(mad, nm);
    CHECK(roce_parse_frame(m, nm, &out) == ROCE_OK);
    CHECK(out.bth.opcode == 0x64 && out.bth.dest_qp == 1 && out.icrc_status == ROCE_ICRC_OK);
    CHECK(out.deth.present && out.deth.qkey == 0x80010000u && out.payload_len == 32);
    CHECK((out.problems & ROCE_PROBLEM_MAD_TRUNCATED) != 0);
    CHECK((out.problems & ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE) != 0);
    CHECK((out.problems & ROCE_PROBLEM_MAD_UNKNOWN_VERSION) == 0);
    CHECK(out.problems == (ROCE_PROBLEM_MAD_TRUNCATED | ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE));
    /* The UDP payload alone: the same MAD, the same problems. */
    CHECK(roce_parse_udp_payload(m + 42, nm - 42, &out) == ROCE_OK);
    CHECK(out.problems == (ROCE_PROBLEM_MAD_TRUNCATED | ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE));
    /* Class version 1 (byte 2 of the MAD, which starts at 14 + 20 + 8 + 12 + 8 = 62): an
     * unknown version; the ICRC no longer matches, and says so. */
    m[62 + 2] = 1;
    CHECK(roce_parse_frame(m, nm, &out) == ROCE_OK);
    CHECK(out.problems == (ROCE_PROBLEM_MAD_TRUNCATED | ROCE_PROBLEM_MAD_UNKNOWN_VERSION |
                           ROCE_PROBLEM_ICRC_BAD));
    /* The same bytes to QP 2 are no MAD: no MAD problem (the ICRC still disagrees). */
    m[62 + 2] = 2;
    m[42 + 7] = 2; /* low byte of the BTH DestQP */
    CHECK(roce_parse_frame(m, nm, &out) == ROCE_OK);
    CHECK(out.bth.dest_qp == 2 && out.problems == ROCE_PROBLEM_ICRC_BAD);
    free(m);
}

/* The tunnels of a mirrored overlay frame (TUN_HEX) from C: kinds, outer layers, tunnel
 * headers, offsets; the inner packet is V1's; every cut, segments, the IP entry point, reuse
 * of the struct and a broken ERSPAN header. */
static void infiniband_checks(void) {
    snprintf(g_where, sizeof g_where, "infiniband");
    uint8_t buf[128];
    size_t n = unhex(IB_HEX, buf, sizeof buf);
    CHECK(n == 70);
    uint8_t *t = exact_copy(buf, n);
    roce_packet p;
    CHECK(roce_parse_infiniband(t, n, &p) == ROCE_OK);
    CHECK(p.roce_version == ROCE_VERSION_INFINIBAND);
    CHECK(p.lrh.present && p.lrh.lnh == 3 && p.lrh.slid == 2 && p.lrh.dlid == 1);
    CHECK(p.lrh.pkt_len == 17 && p.lrh.vcrc_present && p.lrh.vcrc_status == ROCE_ICRC_OK);
    CHECK(p.grh.present && p.grh.hoplmt == 64 && memcmp(p.grh.sgid + 12, "\x0a\x00\x00\x02", 4) == 0);
    CHECK(!p.eth.present && !p.ip.present && !p.udp.present);
    CHECK(p.bth.opcode == 0x11 && p.bth.dest_qp == 0xdc1 && p.bth.psn == 3298656);
    CHECK(p.aeth.present && p.icrc_status == ROCE_ICRC_OK && p.bth_offset == 48);
    /* The VCRC damaged: bad, the ICRC holds; cut short: both unverifiable. */
    t[n - 1] ^= 1;
    CHECK(roce_parse_infiniband(t, n, &p) == ROCE_OK);
    CHECK(p.lrh.vcrc_status == ROCE_ICRC_BAD && p.icrc_status == ROCE_ICRC_OK);
    CHECK((p.problems & ROCE_PROBLEM_VCRC_BAD) != 0);
    CHECK(roce_parse_infiniband(t, n - 4, &p) == ROCE_OK);
    CHECK(p.lrh.vcrc_status == ROCE_ICRC_UNVERIFIABLE && p.icrc_status == ROCE_ICRC_UNVERIFIABLE);
    CHECK(roce_parse_infiniband(t, 5, &p) == ROCE_ERR_TRUNCATED && p.stop_layer == ROCE_LAYER_LRH);
    CHECK(roce_parse_infiniband(NULL, 5, &p) == ROCE_ERR_NULL);
    free(t);
}

static void tunnel_checks(void) {
    snprintf(g_where, sizeof g_where, "tunnels");
    uint8_t buf[256], v1[128];
    size_t n = unhex(TUN_HEX, buf, sizeof buf);
    size_t n1 = unhex(VECTOR_HEX[0], v1, sizeof v1);
    CHECK(n == 178 && n1 == 78);
    uint8_t *t = exact_copy(buf, n);
    roce_packet p, plain;
    CHECK(roce_parse_frame(v1, n1, &plain) == ROCE_OK);
    CHECK(plain.tunnel_count == 0 && plain.tunnels[0].kind == ROCE_ENCAP_NONE);
    CHECK(roce_parse_frame(t, n, &p) == ROCE_OK);
    CHECK(p.tunnel_count == 2);
    const roce_tunnel *o = &p.tunnels[0], *in = &p.tunnels[1];
    CHECK(o->kind == ROCE_ENCAP_ERSPAN2 && strcmp(roce_encap_name(o->kind), "erspan2") == 0);
    CHECK(in->kind == ROCE_ENCAP_VXLAN && strcmp(roce_encap_name(in->kind), "vxlan") == 0);
    /* The mirror: outer Ethernet, IPv4 protocol 47, GRE with a sequence number, ERSPAN II. */
    CHECK(o->eth.present && o->eth.ethertype == 0x0800 && o->eth.vlan_count == 0);
    CHECK(o->ip.present && o->ip.version == 4 && o->ip.protocol == 47 && o->ip.offset == 14);
    CHECK(memcmp(o->ip.src + 12, "\xc0\x00\x02\x01", 4) == 0);
    CHECK(memcmp(o->ip.dst + 12, "\xc0\x00\x02\x09", 4) == 0);
    CHECK(!o->udp.present && !o->vxlan.present && !o->geneve.present);
    CHECK(o->gre.present && o->gre.protocol == 0x88be && !o->gre.key_present);
    CHECK(o->gre.seq_present && o->gre.seq == 77 && !o->gre.checksum_present);
    CHECK(o->erspan.present && o->erspan.version == 1 && o->erspan.session_id == 7);
    CHECK(o->erspan.index == 9 && o->erspan.vlan == 12 && o->erspan.cos == 5);
    CHECK(!o->erspan.truncated && !o->erspan.platform_present && o->erspan.timestamp == 0);
    CHECK(o->offset == 34 && o->inner_offset == 50);
    /* The overlay: its own Ethernet, IPv4, UDP 4789, VXLAN. */
    CHECK(in->eth.present && in->ip.present && in->ip.protocol == 17 && in->ip.offset == 64);
    CHECK(memcmp(in->ip.src + 12, "\xac\x10\x00\x01", 4) == 0);
    CHECK(in->udp.present && in->udp.dport == 4789 && in->udp.offset == 84);
    CHECK(in->vxlan.present && in->vxlan.vni == 0xabcdef && in->vxlan.flags == 0x08);
    CHECK(!in->gre.present && !in->erspan.present && !in->geneve.present);
    CHECK(in->offset == 92 && in->inner_offset == 100);
    /* The inner frame is V1: its fields, its offsets moved by 100, its ICRC verified. */
    CHECK(p.eth.present && memcmp(p.eth.dst, plain.eth.dst, 6) == 0);
    CHECK(memcmp(p.ip.src, plain.ip.src, 16) == 0 && p.ip.offset == plain.ip.offset + 100);
    CHECK(p.udp.dport == 4791 && p.udp.offset == plain.udp.offset + 100);
    CHECK(p.bth.psn == plain.bth.psn && p.bth.dest_qp == 0xd3 && p.bth.opcode == 0x24);
    CHECK(p.icrc_status == ROCE_ICRC_OK && p.icrc == plain.icrc && p.problems == 0);
    CHECK(p.bth_offset == plain.bth_offset + 100 && p.payload_len == 18);
    CHECK(p.payload_offset == plain.payload_offset + 100 && p.payload_captured == 18);
    CHECK(memcmp(t + p.payload_offset, v1 + plain.payload_offset, 18) == 0);

    /* Every cut (a truncating mirror): never a verified nor a bad ICRC, offsets inside. */
    for (size_t k = 0; k < n; k++) {
        roce_packet q;
        uint8_t *c = exact_copy(buf, k);
        int st = roce_parse_frame(c, k, &q);
        CHECK(st == ROCE_OK || st == ROCE_ERR_TRUNCATED);
        CHECK(q.icrc_status != ROCE_ICRC_OK && q.icrc_status != ROCE_ICRC_BAD);
        CHECK(q.payload_offset + q.payload_captured + q.pad_captured <= k);
        CHECK(q.tunnel_count <= ROCE_PARSER_MAX_TUNNELS);
        for (size_t j = 0; j < q.tunnel_count && j < ROCE_PARSER_MAX_TUNNELS; j++)
            CHECK(q.tunnels[j].inner_offset <= k && q.tunnels[j].kind == p.tunnels[j].kind);
        if (st == ROCE_OK)
            CHECK(q.tunnel_count == 2 && (q.problems & ROCE_PROBLEM_TRUNCATED));
        free(c);
    }

    /* In segments: the contiguous result (the format line, and the tunnels). */
    check_segments(buf, n, NULL);
    for (size_t cut = 0; cut <= n; cut += 5) {
        uint8_t *a = exact_copy(buf, cut), *b = exact_copy(buf + cut, n - cut);
        roce_segment segs[2] = {{a, cut}, {b, n - cut}};
        roce_packet q;
        CHECK(roce_parse_frame_segments(segs, 2, NULL, &q) == ROCE_OK);
        CHECK(q.tunnel_count == 2 && q.tunnels[0].kind == ROCE_ENCAP_ERSPAN2);
        CHECK(q.tunnels[1].kind == ROCE_ENCAP_VXLAN && q.tunnels[1].vxlan.vni == 0xabcdef);
        CHECK(q.tunnels[0].erspan.session_id == 7 && q.tunnels[1].inner_offset == 100);
        CHECK(q.tunnels[1].udp.offset == 84 && q.tunnels[0].gre.seq == 77);
        CHECK(q.bth.psn == p.bth.psn && q.icrc_status == ROCE_ICRC_OK);
        free(a);
        free(b);
    }

    /* From the IP header: the mirror has no outer Ethernet; offsets count from the IP. */
    CHECK(roce_parse_ip(t + 14, n - 14, &p) == ROCE_OK);
    CHECK(p.tunnel_count == 2 && !p.tunnels[0].eth.present && p.tunnels[0].ip.offset == 0);
    CHECK(p.tunnels[0].inner_offset == 36 && p.tunnels[1].eth.present);
    CHECK(p.bth_offset == plain.bth_offset + 86 && p.icrc_status == ROCE_ICRC_OK);

    /* The same struct reused for a plain frame: no tunnel left behind. */
    CHECK(roce_parse_frame(v1, n1, &p) == ROCE_OK);
    CHECK(p.tunnel_count == 0 && p.tunnels[0].kind == ROCE_ENCAP_NONE);
    CHECK(!p.tunnels[0].ip.present && !p.tunnels[0].erspan.present);
    CHECK(!p.tunnels[1].vxlan.present && p.tunnels[1].inner_offset == 0);

    /* ERSPAN version 2 under GRE 0x88BE (type II's): malformed at the ERSPAN header. */
    t[42] = (uint8_t)((t[42] & 0x0f) | 0x20);
    CHECK(roce_parse_frame(t, n, &p) == ROCE_ERR_MALFORMED);
    CHECK(p.stop == ROCE_ERR_MALFORMED && p.stop_layer == ROCE_LAYER_ERSPAN);
    CHECK(p.stop_offset == 42 && p.tunnel_count == 0 && p.roce_version == 0);
    CHECK((p.problems & ROCE_PROBLEM_TUNNEL_MALFORMED) != 0);
    free(t);

    CHECK(strcmp(roce_encap_name(ROCE_ENCAP_NONE), "none") == 0);
    CHECK(strcmp(roce_encap_name(ROCE_ENCAP_GENEVE), "geneve") == 0);
    CHECK(strcmp(roce_encap_name(ROCE_ENCAP_ERSPAN3), "erspan3") == 0);
    CHECK(strcmp(roce_encap_name(7), "unknown encapsulation") == 0);
    CHECK(strcmp(roce_layer_name(ROCE_LAYER_VXLAN), "VXLAN") == 0);
    CHECK(strcmp(roce_layer_name(ROCE_LAYER_ERSPAN), "ERSPAN") == 0);
    CHECK(strcmp(roce_problem_code(ROCE_PROBLEM_TUNNEL_MALFORMED), "tunnel_malformed") == 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECTED.txt\n", argv[0]);
        return 2;
    }
    printf("check: roce-parser-ffi %s (ABI %u), sizeof(roce_packet) = %zu\n",
           roce_parser_version(), roce_parser_abi_version(), sizeof(roce_packet));
    api_checks();
    tunnel_checks();
    infiniband_checks();
    compare_all(argv[1]);
    if (g_failed > MAX_REPORTED)
        fprintf(stderr, "... %lu more failures not shown\n", g_failed - MAX_REPORTED);
    printf("check: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
