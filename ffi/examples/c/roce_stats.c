/*
 * roce_stats: counts the RoCE frames of a classic pcap file (Ethernet link type) through the
 * C interface: frames, RoCE packets, ICRC ok / bad / other, and packets per opcode.
 *
 *   cc roce_stats.c $(pkg-config --cflags --libs roce_parser) -o roce_stats
 *   ./roce_stats capture.pcap
 *
 * Built against the installed library by ffi/tests/install-test.sh (pkg-config and CMake).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_parser.h"

static uint32_t rd32(const uint8_t *p, int swap) {
    return swap ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]
                : ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CAPTURE.pcap\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    uint8_t gh[24];
    if (fread(gh, 1, sizeof gh, f) != sizeof gh) {
        fprintf(stderr, "%s: not a pcap file\n", argv[1]);
        return 1;
    }
    uint32_t magic = rd32(gh, 0);
    int swap;
    if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
        swap = 0;
    else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
        swap = 1;
    else {
        fprintf(stderr, "%s: not a classic pcap file\n", argv[1]);
        return 1;
    }
    if (rd32(gh + 20, swap) != 1) {
        fprintf(stderr, "%s: link type %u, not Ethernet\n", argv[1], (unsigned)rd32(gh + 20, swap));
        return 1;
    }
    static uint8_t buf[262144];
    unsigned long frames = 0, roce = 0, icrc_ok = 0, icrc_bad = 0, icrc_other = 0;
    unsigned long per_opcode[256] = {0};
    uint8_t rh[16];
    while (fread(rh, 1, sizeof rh, f) == sizeof rh) {
        uint32_t caplen = rd32(rh + 8, swap);
        if (caplen > sizeof buf || fread(buf, 1, caplen, f) != caplen) {
            fprintf(stderr, "%s: damaged record\n", argv[1]);
            return 1;
        }
        frames++;
        roce_packet p;
        if (roce_parse_frame(buf, caplen, &p) != ROCE_OK)
            continue;
        roce++;
        per_opcode[p.bth.opcode]++;
        if (p.icrc_status == ROCE_ICRC_OK)
            icrc_ok++;
        else if (p.icrc_status == ROCE_ICRC_BAD)
            icrc_bad++;
        else
            icrc_other++;
    }
    fclose(f);
    printf("frames=%lu roce=%lu icrc_ok=%lu icrc_bad=%lu icrc_other=%lu\n", frames, roce, icrc_ok,
           icrc_bad, icrc_other);
    for (int op = 0; op < 256; op++)
        if (per_opcode[op])
            printf("opcode %s=%lu\n", roce_opcode_name((uint8_t)op), per_opcode[op]);
    return 0;
}
