/*
 * roce_fwd: a DPDK rx/tx loop that validates every received frame with roce_parser before
 * forwarding it. Each mbuf, single or chained, is parsed where it lies
 * (roce_parse_frame_segments over the chain's segments, no copy); frames that are malformed or
 * carry a bad ICRC are dropped, the rest are sent out of the same port.
 *
 *   cc roce_fwd.c $(pkg-config --cflags --libs libdpdk roce_parser) -o roce_fwd
 *   ./roce_fwd --no-huge --no-pci --vdev=net_pcap0,rx_pcap=IN.pcap,tx_pcap=OUT.pcap -- [options]
 *
 * Options (after --):
 *   --mbuf-room N   data room of the mbufs (default 2048 + headroom); a small one (e.g. 256)
 *                   makes net_pcap deliver large frames as chains of several mbufs
 *   --split N       also re-chain every received frame in the app into segments of N bytes
 *                   (tests chains even where the driver delivers single mbufs)
 *   --no-verify     parse without ICRC verification (the cost of validation, for benchmarks)
 *   --no-parse      forward without parsing (the loop's own cost)
 *   --frames N      stop after N received frames (with net_pcap's infinite_rx=1: a benchmark)
 *
 * At the end it prints one JSON line: frames, rocev2, rocev1, icrc_ok, icrc_bad,
 * icrc_unverifiable, icrc_not_checked, malformed, forwarded, dropped, chained, segments, ns,
 * cpu_ns (the loop thread's CPU time), mpps, mpps_cpu (frames per CPU microsecond).
 * "malformed": not a RoCE packet, and the parser stopped early or found a problem
 * (roce-inspect dissect shows such a frame with roce null and "problems" or "error").
 * net_pcap reads and writes at most 16128 bytes of a frame (RTE_ETH_PCAP_SNAPLEN).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "roce_parser.h"

#define BURST 32
#define MAX_SEGS 1040 /* a 64 KiB frame in 64-byte segments (--split 64) */

static volatile int g_stop;
static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

struct counts {
    uint64_t frames, rocev2, rocev1, icrc_ok, icrc_bad, icrc_unverifiable, icrc_not_checked;
    uint64_t malformed, forwarded, dropped, chained, segments;
};

static uint64_t clock_ns(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Re-chains `m` into a chain of `n`-byte mbufs from `pool` (the app-made chain of --split).
 * Returns the new chain (and frees `m`), or `m` unchanged when it fits one segment or the pool
 * runs dry. */
static struct rte_mbuf *rechain(struct rte_mbuf *m, struct rte_mempool *pool, uint16_t n) {
    uint32_t len = rte_pktmbuf_pkt_len(m);
    if (n == 0 || len <= n)
        return m;
    struct rte_mbuf *head = NULL, *tail = NULL;
    for (uint32_t off = 0; off < len; off += n) {
        uint16_t k = (uint16_t)(len - off < n ? len - off : n);
        struct rte_mbuf *s = rte_pktmbuf_alloc(pool);
        if (!s || rte_pktmbuf_tailroom(s) < k) {
            rte_pktmbuf_free(s);
            rte_pktmbuf_free(head);
            return m;
        }
        char *dst = rte_pktmbuf_append(s, k);
        const void *src = rte_pktmbuf_read(m, off, k, dst);
        if (src != dst)
            memcpy(dst, src, k);
        if (!head) {
            head = tail = s;
        } else {
            tail->next = s;
            tail = s;
            head->nb_segs++;
            head->pkt_len += k;
        }
    }
    rte_pktmbuf_free(m);
    return head;
}

/* Parses one frame; returns 1 to forward it, 0 to drop it. */
static int inspect(struct rte_mbuf *m, const roce_options *opts, struct counts *c) {
    roce_segment segs[MAX_SEGS];
    size_t n = 0;
    for (struct rte_mbuf *s = m; s; s = s->next) {
        if (n == MAX_SEGS)
            return 0; /* a chain longer than any this app builds: dropped */
        segs[n].data = rte_pktmbuf_mtod(s, const uint8_t *);
        segs[n].len = s->data_len;
        n++;
    }
    c->segments += n;
    if (n > 1)
        c->chained++;
    roce_packet p;
    int st = n == 1 ? roce_parse_frame_opts(segs[0].data, segs[0].len, opts, &p)
                    : roce_parse_frame_segments(segs, n, opts, &p);
    if (st != ROCE_OK) {
        int bad = st == ROCE_ERR_TRUNCATED || st == ROCE_ERR_MALFORMED ||
                  (st == ROCE_ERR_NOT_ROCE && p.problems != 0);
        if (bad)
            c->malformed++;
        return !bad;
    }
    if (p.roce_version == 2)
        c->rocev2++;
    else
        c->rocev1++;
    switch (p.icrc_status) {
    case ROCE_ICRC_OK: c->icrc_ok++; return 1;
    case ROCE_ICRC_BAD: c->icrc_bad++; return 0;
    case ROCE_ICRC_UNVERIFIABLE: c->icrc_unverifiable++; return 1;
    default: c->icrc_not_checked++; return 1;
    }
}

int main(int argc, char **argv) {
    int used = rte_eal_init(argc, argv);
    if (used < 0) {
        fprintf(stderr, "roce_fwd: rte_eal_init failed\n");
        return 1;
    }
    argc -= used;
    argv += used;
    unsigned room = RTE_MBUF_DEFAULT_DATAROOM;
    uint16_t split = 0;
    int parse = 1;
    uint64_t max_frames = 0;
    roce_options opts = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mbuf-room") && i + 1 < argc)
            room = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--split") && i + 1 < argc)
            split = (uint16_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            max_frames = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--no-verify"))
            opts.skip_icrc = 1;
        else if (!strcmp(argv[i], "--no-parse"))
            parse = 0;
        else {
            fprintf(stderr, "roce_fwd: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (roce_parser_abi_version() != ROCE_PARSER_ABI_VERSION ||
        roce_packet_size() != sizeof(roce_packet)) {
        fprintf(stderr, "roce_fwd: roce_parser.h and the loaded library disagree\n");
        return 1;
    }
    if (rte_eth_dev_count_avail() < 1) {
        fprintf(stderr, "roce_fwd: no port (give --vdev=net_pcap0,...)\n");
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    struct rte_mempool *pool = rte_pktmbuf_pool_create(
        "mbufs", 8191, 256, 0, (uint16_t)(room + RTE_PKTMBUF_HEADROOM), (int)rte_socket_id());
    if (!pool) {
        fprintf(stderr, "roce_fwd: mempool: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    uint16_t port = 0;
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    struct rte_eth_dev_info info;
    rte_eth_dev_info_get(port, &info);
    if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
        conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if (rte_eth_dev_configure(port, 1, 1, &conf) < 0 ||
        rte_eth_rx_queue_setup(port, 0, 512, rte_eth_dev_socket_id(port), NULL, pool) < 0 ||
        rte_eth_tx_queue_setup(port, 0, 512, rte_eth_dev_socket_id(port), NULL) < 0 ||
        rte_eth_dev_start(port) < 0) {
        fprintf(stderr, "roce_fwd: port setup failed\n");
        return 1;
    }
    struct counts c;
    memset(&c, 0, sizeof c);
    struct rte_mbuf *rx[BURST], *tx[BURST];
    unsigned idle = 0;
    /* Wall clock, and the loop thread's CPU time (what the loop cost on a shared machine,
     * where the thread is not always running). */
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    while (!g_stop && (max_frames == 0 || c.frames < max_frames)) {
        uint16_t got = rte_eth_rx_burst(port, 0, rx, BURST);
        if (got == 0) {
            /* net_pcap without infinite_rx: the capture is over once rx stays empty. */
            if (max_frames == 0 && ++idle > 100000)
                break;
            continue;
        }
        idle = 0;
        uint16_t out = 0;
        for (uint16_t i = 0; i < got; i++) {
            struct rte_mbuf *m = split ? rechain(rx[i], pool, split) : rx[i];
            c.frames++;
            if (!parse || inspect(m, &opts, &c))
                tx[out++] = m;
            else {
                c.dropped++;
                rte_pktmbuf_free(m);
            }
        }
        uint16_t sent = 0;
        while (sent < out)
            sent += rte_eth_tx_burst(port, 0, tx + sent, (uint16_t)(out - sent));
        c.forwarded += out;
    }
    uint64_t ns = clock_ns(CLOCK_MONOTONIC) - t0;
    uint64_t cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
    printf("{\"frames\":%" PRIu64 ",\"rocev2\":%" PRIu64 ",\"rocev1\":%" PRIu64
           ",\"icrc_ok\":%" PRIu64 ",\"icrc_bad\":%" PRIu64 ",\"icrc_unverifiable\":%" PRIu64
           ",\"icrc_not_checked\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"forwarded\":%" PRIu64
           ",\"dropped\":%" PRIu64 ",\"chained\":%" PRIu64 ",\"segments\":%" PRIu64
           ",\"ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"mpps\":%.3f,\"mpps_cpu\":%.3f}\n",
           c.frames, c.rocev2, c.rocev1, c.icrc_ok, c.icrc_bad, c.icrc_unverifiable,
           c.icrc_not_checked, c.malformed, c.forwarded, c.dropped, c.chained, c.segments, ns,
           cpu_ns, ns ? (double)c.frames * 1000.0 / (double)ns : 0.0,
           cpu_ns ? (double)c.frames * 1000.0 / (double)cpu_ns : 0.0);
    rte_eal_cleanup();
    return 0;
}
