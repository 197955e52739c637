/*
 * A tiny pcap / pcapng reader for the C tests (header-only, C11 and C++17): the whole file is
 * read into memory, then cap_next() hands out one packet at a time. Classic pcap in both byte
 * orders with micro- or nanosecond timestamps; pcapng sections of either byte order with
 * Interface Description, Enhanced Packet and Simple Packet blocks (others are skipped).
 * Every length read from the file is checked against the bytes that remain.
 */
#ifndef ROCE_TEST_CAPTURE_H
#define ROCE_TEST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP_MAX_IF 64

typedef struct cap_reader {
    uint8_t *buf;
    size_t len;
    size_t pos;
    int ng;          /* 0: classic pcap, 1: pcapng */
    int big;         /* file (or current section) is big-endian */
    uint32_t linktype;
    uint32_t if_lt[CAP_MAX_IF];
    size_t n_if;
} cap_reader;

static uint32_t cap_u32(const cap_reader *r, size_t at) {
    const uint8_t *p = r->buf + at;
    if (r->big)
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}

static uint16_t cap_u16(const cap_reader *r, size_t at) {
    const uint8_t *p = r->buf + at;
    return r->big ? (uint16_t)((p[0] << 8) | p[1]) : (uint16_t)((p[1] << 8) | p[0]);
}

static void cap_close(cap_reader *r) {
    free(r->buf);
    r->buf = NULL;
    r->len = 0;
}

/* Returns 0, or -1 with a message on stderr. */
static int cap_open(cap_reader *r, const char *path) {
    FILE *f = fopen(path, "rb");
    long size;
    r->buf = NULL;
    r->len = r->pos = r->n_if = 0;
    r->ng = r->big = 0;
    r->linktype = 0;
    if (!f) {
        perror(path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        perror(path);
        fclose(f);
        return -1;
    }
    r->buf = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
    if (!r->buf || fread(r->buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        cap_close(r);
        return -1;
    }
    fclose(f);
    r->len = (size_t)size;
    if (r->len < 24) {
        fprintf(stderr, "%s: too short for a capture\n", path);
        cap_close(r);
        return -1;
    }
    r->big = 0;
    uint32_t magic = cap_u32(r, 0);
    if (magic == 0x0A0D0D0Au) {
        r->ng = 1;
        r->pos = 0;
        return 0;
    }
    if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du) {
        r->big = 0;
    } else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u) {
        r->big = 1;
    } else {
        fprintf(stderr, "%s: not a pcap or pcapng file\n", path);
        cap_close(r);
        return -1;
    }
    r->linktype = cap_u32(r, 20);
    r->pos = 24;
    return 0;
}

/*
 * The next packet: 1 with *data, *caplen and *linktype set; 0 at the end of the file;
 * -1 on a damaged file (message on stderr).
 */
static int cap_next(cap_reader *r, const uint8_t **data, size_t *caplen, uint32_t *linktype) {
    if (!r->ng) {
        if (r->pos == r->len)
            return 0;
        if (r->len - r->pos < 16) {
            fprintf(stderr, "pcap: record header cut at byte %zu\n", r->pos);
            return -1;
        }
        size_t incl = cap_u32(r, r->pos + 8);
        if (incl > r->len - r->pos - 16) {
            fprintf(stderr, "pcap: record at byte %zu runs past the file\n", r->pos);
            return -1;
        }
        *data = r->buf + r->pos + 16;
        *caplen = incl;
        *linktype = r->linktype;
        r->pos += 16 + incl;
        return 1;
    }
    for (;;) {
        if (r->pos == r->len)
            return 0;
        if (r->len - r->pos < 12) {
            fprintf(stderr, "pcapng: block header cut at byte %zu\n", r->pos);
            return -1;
        }
        size_t at = r->pos;
        int saved_big = r->big;
        r->big = 0;
        uint32_t type = cap_u32(r, at);
        r->big = saved_big;
        if (type == 0x0A0D0D0Au) {
            /* Section header: its byte-order magic decides the section's byte order. */
            r->big = 0;
            uint32_t bom = cap_u32(r, at + 8);
            if (bom == 0x1A2B3C4Du)
                r->big = 0;
            else if (bom == 0x4D3C2B1Au)
                r->big = 1;
            else {
                fprintf(stderr, "pcapng: bad byte-order magic at byte %zu\n", at);
                return -1;
            }
            r->n_if = 0;
        } else {
            type = cap_u32(r, at);
        }
        size_t total = cap_u32(r, at + 4);
        if (total < 12 || total % 4 != 0 || total > r->len - at) {
            fprintf(stderr, "pcapng: bad block length %zu at byte %zu\n", total, at);
            return -1;
        }
        size_t body = at + 8, body_len = total - 12;
        r->pos = at + total;
        if (type == 1) { /* Interface Description Block */
            if (body_len < 8) {
                fprintf(stderr, "pcapng: short IDB at byte %zu\n", at);
                return -1;
            }
            if (r->n_if < CAP_MAX_IF)
                r->if_lt[r->n_if] = cap_u16(r, body);
            r->n_if++;
        } else if (type == 6) { /* Enhanced Packet Block */
            if (body_len < 20) {
                fprintf(stderr, "pcapng: short EPB at byte %zu\n", at);
                return -1;
            }
            uint32_t ifid = cap_u32(r, body);
            size_t cap = cap_u32(r, body + 12);
            if (ifid >= r->n_if || ifid >= CAP_MAX_IF || cap > body_len - 20) {
                fprintf(stderr, "pcapng: bad EPB at byte %zu\n", at);
                return -1;
            }
            *data = r->buf + body + 20;
            *caplen = cap;
            *linktype = r->if_lt[ifid];
            return 1;
        } else if (type == 3) { /* Simple Packet Block */
            if (body_len < 4 || r->n_if == 0) {
                fprintf(stderr, "pcapng: bad SPB at byte %zu\n", at);
                return -1;
            }
            size_t orig = cap_u32(r, body);
            size_t room = body_len - 4;
            *data = r->buf + body + 4;
            *caplen = orig < room ? orig : room;
            *linktype = r->if_lt[0];
            return 1;
        }
    }
}

#endif
