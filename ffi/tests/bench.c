/*
 * Per-frame cost of roce_parse_frame called from C, over every Ethernet frame of a capture
 * (held in memory), best of 5 runs of ROUNDS passes. Printed, never asserted; the Rust side of
 * the comparison is ffi/examples/bench_rust.rs over the same frames.
 *
 *   bench CAPTURE ROUNDS [both|verify|skip]
 *
 * With one mode only, the run is simple enough to count instructions per call under
 * callgrind (run-c-tests.sh does when valgrind is installed): --toggle-collect on
 * roce_parse_frame_opts gives the C call, on roce_parser::parse_ethernet the Rust API
 * call made inside it, for the very same frames.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roce_parser.h"
#include "c/capture.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct frames {
    const uint8_t **data;
    size_t *len;
    size_t n;
} frames;

static volatile uint32_t g_sink;

static double run(const frames *fs, long rounds, const roce_options *opts) {
    roce_packet out;
    double best = 0;
    for (int run = 0; run < 5; run++) {
        uint32_t acc = 0;
        double t0 = now_ns();
        for (long r = 0; r < rounds; r++) {
            for (size_t i = 0; i < fs->n; i++) {
                int st = roce_parse_frame_opts(fs->data[i], fs->len[i], opts, &out);
                acc += (uint32_t)st ^ out.bth.psn ^ out.icrc_status;
            }
        }
        double per = (now_ns() - t0) / ((double)rounds * (double)fs->n);
        g_sink += acc;
        if (run == 0 || per < best)
            best = per;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s CAPTURE ROUNDS [both|verify|skip]\n", argv[0]);
        return 2;
    }
    long rounds = atol(argv[2]);
    const char *mode = argc == 4 ? argv[3] : "both";
    int do_verify = strcmp(mode, "skip") != 0, do_skip = strcmp(mode, "verify") != 0;
    cap_reader r;
    if (cap_open(&r, argv[1]) != 0)
        return 1;
    frames fs = {NULL, NULL, 0};
    size_t cap = 0;
    const uint8_t *d;
    size_t len;
    uint32_t lt;
    int rc;
    while ((rc = cap_next(&r, &d, &len, &lt)) == 1) {
        if (lt != 1)
            continue;
        if (fs.n == cap) {
            cap = cap ? 2 * cap : 1024;
            fs.data = (const uint8_t **)realloc((void *)fs.data, cap * sizeof *fs.data);
            fs.len = (size_t *)realloc(fs.len, cap * sizeof *fs.len);
            if (!fs.data || !fs.len)
                return 1;
        }
        fs.data[fs.n] = d;
        fs.len[fs.n] = len;
        fs.n++;
    }
    if (rc < 0 || fs.n == 0 || rounds < 1)
        return 1;
    roce_options noverify;
    memset(&noverify, 0, sizeof noverify);
    noverify.skip_icrc = 1;
    if (do_verify) {
        run(&fs, 1, NULL); /* warm up */
        printf("C    roce_parse_frame (ICRC verified)      %7.1f ns/frame  (%zu frames x %ld rounds, best of 5)\n",
               run(&fs, rounds, NULL), fs.n, rounds);
    }
    if (do_skip) {
        run(&fs, 1, &noverify);
        printf("C    roce_parse_frame_opts (skip_icrc)     %7.1f ns/frame\n", run(&fs, rounds, &noverify));
    }
    free((void *)fs.data);
    free(fs.len);
    cap_close(&r);
    return 0;
}
