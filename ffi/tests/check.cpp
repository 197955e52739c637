// Proof from C++ through roce_parser.hpp: every field of every parse of the docs/wire.md vectors
// and of every frame of the captures named in the expected file (examples/c_expected.rs, the
// Rust API's values) is read through the C++ interface (enum class status, layers, ICRC and
// AETH kinds, problem and extended-header iteration, payload views) and printed in the format
// of c_expected.rs, then compared line by line; plus the docs/wire.md values, and many threads
// parsing at once getting exactly the single-threaded results.
//
//   check_cpp EXPECTED.txt      exits 0 when everything holds
//
// Every input is handed to the library in a heap buffer of exactly its length, so that
// AddressSanitizer sees any read past the end.
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "roce_parser.hpp"

#include "c/capture.h"

namespace {

unsigned long passed = 0, failed = 0, fields = 0, segmented = 0;
std::string where = "start";

void fail_msg(const char *fmt, ...) {
    ++failed;
    if (failed > 20)
        return;
    std::fprintf(stderr, "FAIL [%s] ", where.c_str());
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

void check(bool ok, const char *what, int line) {
    if (ok)
        ++passed;
    else
        fail_msg("check.cpp:%d: %s", line, what);
}
#define CHECK(c) check((c), #c, __LINE__)

std::vector<uint8_t> unhex(const std::string &h) {
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        v.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return v;
}

// The docs/wire.md vectors, in the order and with the names of c_expected.rs (examples/common).
const char *const VECTOR_NAMES[] = {"V1", "V2", "V3", "V1QQ", "V1M", "MADX"};
const char *const VECTOR_HEX[] = {
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
constexpr size_t N_VECTORS = sizeof VECTOR_NAMES / sizeof VECTOR_NAMES[0];
// V1 in VXLAN mirrored by ERSPAN II (check.c's TUN_HEX, ffi/tests/api.rs's TUN).
const char *const TUN_HEX =
    "0200000000120200000000110800456a00a400004000402fb5b6c0000201c0000209100088be0000004d100c"
    "a007000000090200000000120200000000110800456a0072000040004011e1edac100001ac100002c00012b5"
    "005e000008000000abcdef00248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a8"
    "0007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f3"
    "53f3";

// ------------------------------------------------------------------------------------------
// One result in the format of c_expected.rs, every value read through the C++ interface
// ------------------------------------------------------------------------------------------

struct line_buf {
    std::string s;
    void put(const char *fmt, ...) {
        char b[512];
        va_list ap;
        va_start(ap, fmt);
        int n = std::vsnprintf(b, sizeof b, fmt, ap);
        va_end(ap);
        if (n < 0 || static_cast<size_t>(n) >= sizeof b) {
            std::fprintf(stderr, "format buffer too small\n");
            std::exit(2);
        }
        s += b;
    }
    void hex(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; ++i)
            put("%02x", p[i]);
    }
};

uint32_t fnv(roce::bytes b) {
    uint32_t h = 0x811c9dc5u;
    for (uint8_t c : b)
        h = (h ^ c) * 0x01000193u;
    return h;
}

int d(bool b) { return b ? 1 : 0; }

std::string format(const char *tag, const roce::result &r, roce::bytes input) {
    line_buf b;
    const roce_packet &p = r.packet();
    b.put("%s st=%d", tag, static_cast<int>(r.status()));
    b.put(" eth=%d emac=", d(p.eth.present));
    b.hex(p.eth.dst, 6);
    b.put("-");
    b.hex(p.eth.src, 6);
    b.put(" et=%04x vl=%u", p.eth.ethertype, p.eth.vlan_count);
    for (int i = 0; i < 2; ++i) {
        const roce_vlan &v = p.eth.vlans[i];
        b.put(" v%d=%04x:%u:%d:%u", i, v.tpid, v.pcp, d(v.dei), v.vid);
    }
    b.put(" ip=%d ipv=%u isrc=", d(p.ip.present), p.ip.version);
    b.hex(p.ip.src, 16);
    b.put(" idst=");
    b.hex(p.ip.dst, 16);
    b.put(" dscp=%u ecn=%u ttl=%u proto=%u ipid=%u fl=%" PRIu32
          " ioff=%zu ihl=%zu iext=%zu itot=%zu",
          p.ip.dscp, p.ip.ecn, p.ip.ttl, p.ip.protocol, p.ip.identification, p.ip.flow_label,
          p.ip.offset, p.ip.header_len, p.ip.ext_len, p.ip.total_len);
    b.put(" udp=%d sp=%u dp=%u ul=%u uck=%04x uoff=%zu", d(p.udp.present), p.udp.sport,
          p.udp.dport, p.udp.len, p.udp.checksum, p.udp.offset);
    b.put(" grh=%d gv=%u gtc=%u gnh=%u ghop=%u gpl=%u gfl=%" PRIu32 " sgid=", d(p.grh.present),
          p.grh.ipver, p.grh.tclass, p.grh.nxthdr, p.grh.hoplmt, p.grh.paylen, p.grh.flow_label);
    b.hex(p.grh.sgid, 16);
    b.put(" dgid=");
    b.hex(p.grh.dgid, 16);
    const roce_bth &t = p.bth;
    b.put(" rv=%u known=%d op=%02x name=%s se=%d m=%d pc=%u tv=%u fe=%d be=%d ar=%d pk=%04x "
          "r6=%u r7=%u qp=%06" PRIx32 " psn=%06" PRIx32,
          r.roce_version(), d(p.opcode_known), t.opcode, r.opcode_name(), d(t.se), d(t.m),
          t.padcnt, t.tver, d(t.fecn), d(t.becn), d(t.ackreq), t.pkey, t.resv6, t.resv7,
          t.dest_qp, t.psn);

    // Presence comes from iterating the extended headers, which must also agree with the
    // `present` flags and come in table order.
    const roce::ext_header_set hs = r.ext_headers();
    auto has = [&](roce::ext_header h) { return d(hs.contains(h)); };
    unsigned prev = 0, n = 0;
    for (roce::ext_header h : hs) {
        const unsigned v = static_cast<unsigned>(h);
        if (v <= prev)
            fail_msg("mode %s: extended headers out of order", tag);
        if (std::strcmp(roce::to_string(h), roce_layer_name(static_cast<uint8_t>(v))) != 0)
            fail_msg("mode %s: header name", tag);
        prev = v;
        ++n;
    }
    if (n != hs.size())
        fail_msg("mode %s: ext_header_set size %zu, iterated %u", tag, hs.size(), n);
    using H = roce::ext_header;
    b.put(" rdeth=%d:%u:%" PRIu32, has(H::rdeth), p.rdeth.reserved, p.rdeth.eecnxt);
    b.put(" deth=%d:%u:%08" PRIx32 ":%" PRIu32, has(H::deth), p.deth.reserved, p.deth.qkey,
          p.deth.src_qp);
    b.put(" xrceth=%d:%u:%" PRIu32, has(H::xrceth), p.xrceth.reserved, p.xrceth.xrcsrq);
    b.put(" reth=%d:%016" PRIx64 ":%08" PRIx32 ":%" PRIu32, has(H::reth), p.reth.va, p.reth.rkey,
          p.reth.dma_len);
    b.put(" atomiceth=%d:%016" PRIx64 ":%08" PRIx32 ":%016" PRIx64 ":%016" PRIx64,
          has(H::atomic_eth), p.atomic_eth.va, p.atomic_eth.rkey, p.atomic_eth.swap_add,
          p.atomic_eth.compare);
    b.put(" aeth=%d:%02x:%u:%u:%" PRIu32, has(H::aeth), p.aeth.syndrome,
          static_cast<unsigned>(r.aeth_kind()), p.aeth.value, p.aeth.msn);
    b.put(" atomicack=%d:%016" PRIx64, has(H::atomic_ack_eth), p.atomic_ack_eth.orig);
    b.put(" immdt=%d:%08" PRIx32, has(H::immdt), p.immdt.data);
    b.put(" ieth=%d:%08" PRIx32, has(H::ieth), p.ieth.rkey);
    b.put(" feth=%d:%u:%u:%" PRIu32, has(H::feth), p.feth.selectivity, p.feth.placement,
          p.feth.reserved);

    // The views clip to the input; the library promises they need no clipping.
    const roce::bytes pay = r.payload(input), opq = r.opaque(input);
    if (p.payload_offset + p.payload_captured + p.pad_captured > input.size() ||
        p.opaque_offset + p.opaque_len > input.size() || pay.size() != p.payload_captured ||
        opq.size() != p.opaque_len) {
        fail_msg("mode %s: offsets past the input", tag);
        b.put(" OFFSETS-OUT-OF-RANGE");
        return b.s;
    }
    if (pay.size() && pay.data() != input.data() + p.payload_offset)
        fail_msg("mode %s: payload view", tag);
    b.put(" bo=%zu hl=%zu po=%zu pl=%zu pcap=%zu pfnv=%08" PRIx32
          " pad=%zu oo=%zu ol=%zu ofnv=%08" PRIx32,
          p.bth_offset, p.header_len, p.payload_offset, p.payload_len, pay.size(), fnv(pay),
          p.pad_captured, p.opaque_offset, opq.size(), fnv(opq));
    const roce::icrc is = r.icrc_status();
    b.put(" icp=%d ic=%08" PRIx32 " is=%u icc=%08" PRIx32, d(p.icrc_present), p.icrc,
          static_cast<unsigned>(is), p.icrc_computed);

    // The problem mask, rebuilt from the iteration.
    uint32_t mask = 0;
    size_t np = 0;
    for (roce::problem pr : r.problems()) {
        const uint32_t bit = static_cast<uint32_t>(pr);
        if (bit == 0 || (bit & (bit - 1)) != 0 || (mask & bit) != 0 || !r.problems().contains(pr))
            fail_msg("mode %s: problem iteration", tag);
        mask |= bit;
        ++np;
    }
    if (np != r.problems().size())
        fail_msg("mode %s: problem_set size", tag);
    std::string layer = roce::to_string(r.stop_layer());
    for (char &c : layer)
        if (c == ' ')
            c = '_';
    b.put(" pr=%08" PRIx32 " stop=%d sl=%s so=%zu sn=%zu sa=%zu", mask,
          static_cast<int>(r.stop()), layer.c_str(), p.stop_offset, p.stop_needed,
          p.stop_available);
    return b.s;
}

// ------------------------------------------------------------------------------------------
// Comparing with the expected file
// ------------------------------------------------------------------------------------------

FILE *expected = nullptr;

bool next_expected(std::string &out) {
    static char buf[8192];
    // The M lines (CM MADs through roce_parse_mad) are check.c's: skipped here.
    do {
        if (!std::fgets(buf, sizeof buf, expected))
            return false;
    } while (std::strncmp(buf, "M ", 2) == 0);
    out = buf;
    if (!out.empty() && out.back() == '\n')
        out.pop_back();
    return true;
}

void expect_control(const std::string &mine) {
    std::string want;
    if (!next_expected(want) || want != mine) {
        fail_msg("structure differs: Rust '%s', C++ '%s'", want.c_str(), mine.c_str());
        std::fprintf(stderr, "check.cpp: %lu passed, %lu failed\n", passed, failed);
        std::exit(1);
    }
    ++passed;
}

void report_fields(const char *tag, const std::string &want, const std::string &got) {
    size_t a = 0, b = 0;
    int shown = 0;
    while (a < want.size() || b < got.size()) {
        size_t ea = want.find(' ', a), eb = got.find(' ', b);
        if (ea == std::string::npos)
            ea = want.size();
        if (eb == std::string::npos)
            eb = got.size();
        std::string ta = want.substr(a, ea - a), tb = got.substr(b, eb - b);
        if (ta != tb) {
            fail_msg("mode %s: Rust %s, C++ %s", tag, ta.c_str(), tb.c_str());
            if (++shown == 8)
                return;
        }
        a = ea < want.size() ? ea + 1 : ea;
        b = eb < got.size() ? eb + 1 : eb;
    }
}

void compare(const char *tag, const roce::result &r, roce::bytes input) {
    const std::string got = format(tag, r, input);
    std::string want;
    if (!next_expected(want)) {
        fail_msg("expected file ends before mode %s", tag);
        std::exit(1);
    }
    if (want.substr(0, want.find(' ')) != tag) {
        fail_msg("Rust ran mode %s where C++ ran mode %s", want.substr(0, want.find(' ')).c_str(),
                 tag);
        std::exit(1);
    }
    for (char c : want)
        fields += c == '=';
    if (want == got)
        ++passed;
    else
        report_fields(tag, want, got);
}

// Parses a heap copy of exactly the input's length, then compares.
template <class F> roce::result run(const char *tag, roce::bytes in, F parse) {
    std::vector<uint8_t> copy(in.begin(), in.end());
    copy.shrink_to_fit();
    const roce::bytes exact(copy.data(), copy.size());
    roce::result r = parse(exact);
    compare(tag, r, exact);
    return r;
}

// Every mode of c_expected.rs, in its order.
void modes(roce::bytes frame, bool vector) {
    const roce::result full =
        run("F", frame, [](roce::bytes b) { return roce::parse_frame(b); });
    // roce::parse_frame_segments: the frame in three pieces (each its own exact-size heap
    // copy), cut in the headers and at the middle, gives the same fields.
    {
        const std::size_t n = frame.size(), c1 = n < 30 ? n / 2 : 30, c2 = c1 + (n - c1) / 2;
        const std::vector<uint8_t> a(frame.begin(), frame.begin() + long(c1)),
            b(frame.begin() + long(c1), frame.begin() + long(c2)),
            c(frame.begin() + long(c2), frame.end());
        const roce_segment segs[3] = {{a.data(), a.size()}, {b.data(), b.size()},
                                      {c.data(), c.size()}};
        const roce::result seg = roce::parse_frame_segments(segs, 3);
        ++segmented;
        if (format("F", seg, frame) != format("F", full, frame))
            report_fields("segments", format("F", full, frame), format("F", seg, frame));
    }
    roce::options noverify;
    noverify.verify_icrc = false;
    run("N", frame, [&](roce::bytes b) { return roce::parse_frame(b, noverify); });
    if (vector) {
        for (size_t k = 0; k < frame.size(); ++k) {
            const std::string tag = "T" + std::to_string(k);
            run(tag.c_str(), roce::bytes(frame.data(), k),
                [](roce::bytes b) { return roce::parse_frame(b); });
        }
        roce::options port;
        port.udp_port = 4792;
        run("P", frame, [&](roce::bytes b) { return roce::parse_frame(b, port); });
    } else {
        run("H", roce::bytes(frame.data(), frame.size() / 2),
            [](roce::bytes b) { return roce::parse_frame(b); });
    }
    const roce_packet &p = full.packet();
    if (p.ip.present)
        run("I", roce::bytes(frame.data() + p.ip.offset, frame.size() - p.ip.offset),
            [](roce::bytes b) { return roce::parse_ip(b); });
    if (p.eth.present && p.eth.vlan_count == 0 && frame.size() >= 14) {
        const uint16_t et = p.eth.ethertype;
        run("E", roce::bytes(frame.data() + 14, frame.size() - 14),
            [et](roce::bytes b) { return roce::parse_ethertype(et, b); });
    }
    if (full.roce_version() == 2 && p.udp.present && p.udp.len >= 8) {
        const size_t start = p.udp.offset + 8;
        size_t end = p.udp.offset + p.udp.len;
        if (end > frame.size())
            end = frame.size();
        if (start <= end)
            run("U", roce::bytes(frame.data() + start, end - start),
                [](roce::bytes b) { return roce::parse_udp_payload(b); });
    }
}

int compare_all(const char *path) {
    expected = std::fopen(path, "r");
    if (!expected) {
        std::perror(path);
        return 1;
    }
    expect_control("roce-parser-ffi expected v1");
    unsigned long frames = 0, vectors = 0, captures = 0;
    for (;;) {
        const long at = std::ftell(expected);
        std::string line;
        if (!next_expected(line)) {
            fail_msg("expected file has no end line");
            break;
        }
        std::fseek(expected, at, SEEK_SET);
        if (line.rfind("vector ", 0) == 0) {
            size_t i = 0;
            while (i < N_VECTORS && line.substr(7) != VECTOR_NAMES[i])
                ++i;
            if (i == N_VECTORS) {
                fail_msg("unknown vector %s", line.c_str());
                return 1;
            }
            expect_control(line);
            where = line;
            const std::vector<uint8_t> v = unhex(VECTOR_HEX[i]);
            modes(v, true);
            ++vectors;
        } else if (line.rfind("file ", 0) == 0) {
            const std::string file = line.substr(5);
            expect_control(line);
            cap_reader rd;
            if (cap_open(&rd, file.c_str()) != 0) {
                fail_msg("cannot open %s", file.c_str());
                return 1;
            }
            ++captures;
            const uint8_t *data;
            size_t caplen;
            uint32_t lt;
            unsigned long n = 0;
            int rc;
            while ((rc = cap_next(&rd, &data, &caplen, &lt)) == 1) {
                ++n;
                ++frames;
                char mine[128];
                std::snprintf(mine, sizeof mine, "frame %lu len=%zu lt=%" PRIu32 "%s", n, caplen,
                              lt, lt == 1 ? "" : " skip");
                expect_control(mine);
                where = file + " frame " + std::to_string(n);
                if (lt == 1)
                    modes(roce::bytes(data, caplen), false);
            }
            cap_close(&rd);
            if (rc < 0) {
                fail_msg("%s: damaged capture", file.c_str());
                return 1;
            }
        } else if (line.rfind("end ", 0) == 0) {
            expect_control("end frames=" + std::to_string(frames));
            break;
        } else {
            fail_msg("unexpected line in the expected file: %.80s", line.c_str());
            return 1;
        }
    }
    std::fclose(expected);
    std::printf("check.cpp: %lu vectors, %lu captures, %lu frames; %lu fields compared with the "
                "Rust API through roce_parser.hpp; %lu frames in 3 segments equal to the "
                "contiguous parse\n",
                vectors, captures, frames, fields, segmented);
    return 0;
}

// ------------------------------------------------------------------------------------------
// The docs/wire.md values, the typed API, threads
// ------------------------------------------------------------------------------------------

std::string payload_hex(const roce::result &r, roce::bytes frame) {
    std::string s;
    char b[3];
    for (uint8_t c : r.payload(frame)) {
        std::snprintf(b, sizeof b, "%02x", c);
        s += b;
    }
    return s;
}

// Field-by-field equality of the parts a thread race would disturb.
bool same(const roce::result &a, const roce::result &b) {
    const roce_packet &x = *a, &y = *b;
    return a.status() == b.status() && std::memcmp(&x.bth, &y.bth, sizeof x.bth) == 0 &&
           x.aeth.present == y.aeth.present && x.aeth.msn == y.aeth.msn && x.icrc == y.icrc &&
           x.icrc_status == y.icrc_status && x.problems == y.problems &&
           x.payload_offset == y.payload_offset && x.payload_len == y.payload_len &&
           x.ip.version == y.ip.version && std::memcmp(x.ip.src, y.ip.src, 16) == 0 &&
           x.ip.ecn == y.ip.ecn && x.udp.sport == y.udp.sport;
}

void api_checks() {
    where = "api";
    CHECK(roce::abi_matches());
    CHECK(roce::version()[0] >= '0' && roce::version()[0] <= '9');

    const std::vector<uint8_t> v1 = unhex(VECTOR_HEX[0]), v2 = unhex(VECTOR_HEX[1]),
                               v3 = unhex(VECTOR_HEX[2]), madx = unhex(VECTOR_HEX[5]);
    roce::result r = roce::parse_frame(v1);

    // roce::parse_mad: a CM header (base 1, class 7, version 2) with an RTU attribute.
    std::vector<uint8_t> rtu(256, 0);
    rtu[0] = 1, rtu[1] = 7, rtu[2] = 2, rtu[3] = 3, rtu[17] = 0x14, rtu[27] = 0x42;
    const roce::mad_result m = roce::parse_mad(rtu);
    CHECK(m.ok() && m.status() == roce::status::ok && m.problems() == 0);
    CHECK(m.kind() == ROCE_CM_RTU && m.decoded() && m.raw().rtu.local_comm_id == 0x42);
    const roce::mad_result short_mad = roce::parse_mad(roce::bytes(rtu.data(), 23));
    CHECK(short_mad.status() == roce::status::truncated && !short_mad.decoded());
    const roce::mad_result cut = roce::parse_mad(roce::bytes(rtu.data(), 40));
    CHECK(cut.ok() && (cut.problems() & ROCE_PROBLEM_MAD_TRUNCATED) && cut.decoded());
    CHECK(r.ok() && static_cast<bool>(r) && r.status() == roce::status::ok);
    CHECK(std::string(r.opcode_name()) == "UC_SEND_ONLY");
    CHECK(r.roce_version() == 2 && r->bth.padcnt == 2 && r->bth.dest_qp == 0xd3);
    CHECK(r->icrc == 0xF353F378u && r.icrc_status() == roce::icrc::ok);
    CHECK(r->payload_len == 18 && payload_hex(r, v1) == "4630818be28935d90e9a95505401be885e50");
    CHECK(r.problems().empty() && r.stop() == roce::status::ok);
    CHECK(r.stop_layer() == roce::layer::none && r.ext_headers().empty());

    r = roce::parse_frame(v2);
    CHECK(r && std::string(r.opcode_name()) == "CNP");
    CHECK(r->bth.becn && r->bth.dest_qp == 0x118 && r->payload_len == 16);
    CHECK(r->ip.ecn == 2 && r->ip.dscp == (0xc2 >> 2) && r.icrc_status() == roce::icrc::ok);

    r = roce::parse_frame(v3);
    CHECK(r && std::string(r.opcode_name()) == "RC_ACKNOWLEDGE");
    CHECK(r->ip.version == 6 && r->ip.flow_label == 0x12345);
    CHECK(r.aeth_kind() == roce::aeth_kind::ack && r->aeth.msn == 7);
    CHECK(r.ext_headers().size() == 1 && *r.ext_headers().begin() == roce::ext_header::aeth);
    CHECK(std::string(roce::to_string(roce::ext_header::aeth)) == "AETH");

    // UD SEND to QP1 with a short CM MAD of an unknown attribute: two problems, in bit order.
    r = roce::parse_frame(madx);
    CHECK(r && r.ext_headers().contains(roce::ext_header::deth) && r->deth.qkey == 0x80010000u);
    std::vector<roce::problem> probs(r.problems().begin(), r.problems().end());
    CHECK(probs.size() == 2 && probs[0] == roce::problem::mad_truncated &&
          probs[1] == roce::problem::mad_unknown_attribute);
    CHECK(std::string(roce::to_string(roce::problem::icrc_bad)) ==
          "ICRC does not match the recomputed value");

    // A damaged ICRC, then no verification, then another port.
    std::vector<uint8_t> bad = v1;
    bad.back() ^= 0xff;
    r = roce::parse_frame(bad);
    CHECK(r.icrc_status() == roce::icrc::bad && r->icrc_computed == 0xf353f378u);
    CHECK(r.problems().contains(roce::problem::icrc_bad) && r.problems().size() == 1);
    roce::options o;
    o.verify_icrc = false;
    r = roce::parse_frame(bad, o);
    CHECK(r.icrc_status() == roce::icrc::not_checked && r.problems().empty());
    o = roce::options{};
    o.udp_port = 4792;
    r = roce::parse_frame(v1, o);
    CHECK(r.status() == roce::status::not_roce && !r && r->udp.dport == 4791);

    // Errors: enum class statuses, names, stop layers.
    CHECK(roce::result().status() == roce::status::null && !roce::result());
    // An empty view (null data) is an empty input, not a NULL argument.
    CHECK(roce::parse_frame(roce::bytes()).status() == roce::status::truncated);
    CHECK(roce::parse_frame(std::vector<uint8_t>()).stop_layer() == roce::layer::ethernet);
    r = roce::parse_frame(roce::bytes(v1.data(), 0));
    CHECK(r.status() == roce::status::truncated && r.stop_layer() == roce::layer::ethernet);
    CHECK(std::string(roce::to_string(r.stop_layer())) == "Ethernet");
    CHECK(roce::parse_udp_payload(roce::bytes(v1.data() + 42, 5)).stop_layer() ==
          roce::layer::bth);
    std::vector<uint8_t> v5 = v1;
    v5[14] = 0x55;
    r = roce::parse_frame(v5);
    CHECK(r.status() == roce::status::malformed && r.stop_layer() == roce::layer::ipv4);
    CHECK(roce::parse_ip(roce::bytes(v1.data() + 14, v1.size() - 14)).ok());
    // Native InfiniBand: an LRH (LID 2 -> 1, LNH 2) and a BTH too short for its ICRC.
    const std::vector<uint8_t> ib = {0x00, 0x02, 0x00, 0x01, 0x00, 0x05, 0x00, 0x02,
                                     0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x29,
                                     0x00, 0x00, 0x00, 0x07};
    r = roce::parse_infiniband(ib);
    CHECK(r.ok() && r->lrh.present && r->lrh.slid == 2 && r->lrh.dlid == 1);
    CHECK(r->roce_version == ROCE_VERSION_INFINIBAND && r->bth.dest_qp == 0x29);
    CHECK(roce::parse_ethertype(0x0806, roce::bytes(v1.data() + 14, 10)).status() ==
          roce::status::not_roce);
    CHECK(std::string(roce::to_string(roce::status::not_roce)) == "not a RoCE packet");
    CHECK(std::string(roce::to_string(roce::layer::other)) == "unknown layer" ||
          std::string(roce::to_string(roce::layer::other)) != "");
    CHECK(std::string(roce::to_string(roce::status::ok)) ==
          std::string(roce_status_str(ROCE_OK)));

    // Every problem constant is a known problem; problem_set iterates exactly the bits.
    const roce::problem_set all(ROCE_PROBLEM_ALL);
    uint32_t mask = 0;
    for (roce::problem p : all) {
        CHECK(std::string(roce::to_string(p)) != "unknown problem");
        mask |= static_cast<uint32_t>(p);
    }
    // One enumerator per bit of ROCE_PROBLEM_ALL (the C header's count of problems).
    CHECK(mask == ROCE_PROBLEM_ALL &&
          all.size() == static_cast<std::size_t>(__builtin_popcount(ROCE_PROBLEM_ALL)));

    // Tunnels: V1 in VXLAN in ERSPAN II, outermost first; the packet is V1's.
    const std::vector<uint8_t> tun = unhex(TUN_HEX);
    r = roce::parse_frame(tun);
    CHECK(r && r->bth.psn == roce::parse_frame(v1)->bth.psn && r.icrc_status() == roce::icrc::ok);
    const roce::tunnel_set ts = r.tunnels();
    CHECK(ts.size() == 2 && !ts.empty() && ts.innermost() == roce::encap::vxlan);
    CHECK(roce::kind(ts[0]) == roce::encap::erspan2 && ts[0].erspan.session_id == 7);
    CHECK(roce::kind(ts[1]) == roce::encap::vxlan && ts[1].vxlan.vni == 0xabcdef);
    CHECK(ts[1].inner_offset == 100 && r->bth_offset == 100 + 42);
    std::vector<roce::encap> kinds;
    for (const roce_tunnel &t : ts)
        kinds.push_back(roce::kind(t));
    CHECK(kinds.size() == 2 && kinds[0] == roce::encap::erspan2 && kinds[1] == roce::encap::vxlan);
    CHECK(std::string(roce::to_string(roce::encap::erspan2)) == "erspan2");
    CHECK(std::string(roce::to_string(roce::encap::none)) == "none");
    CHECK(std::string(roce::to_string(roce::layer::geneve)) == "Geneve");
    CHECK(std::string(roce::code(roce::problem::tunnel_malformed)) == "tunnel_malformed");
    CHECK(roce::parse_frame(v1).tunnels().empty() &&
          roce::parse_frame(v1).tunnels().innermost() == roce::encap::none);
    std::vector<uint8_t> bad_tun = tun;
    bad_tun[42] = static_cast<uint8_t>((bad_tun[42] & 0x0f) | 0x20);
    r = roce::parse_frame(bad_tun);
    CHECK(r.status() == roce::status::malformed && r.stop_layer() == roce::layer::erspan);
    CHECK(r.problems().contains(roce::problem::tunnel_malformed) && r.tunnels().empty());

    // Many threads at once, each on its own result: identical to the serial ones.
    const std::vector<std::vector<uint8_t>> frames = {v1, v2, v3, madx};
    std::vector<roce::result> want;
    for (const auto &f : frames)
        want.push_back(roce::parse_frame(f));
    std::vector<int> mismatches(8, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20000; ++i) {
                const size_t k = static_cast<size_t>(i + t) % frames.size();
                if (!same(roce::parse_frame(frames[k]), want[k]))
                    ++mismatches[static_cast<size_t>(t)];
            }
        });
    }
    for (auto &th : threads)
        th.join();
    for (int m : mismatches)
        CHECK(m == 0);
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s EXPECTED.txt\n", argv[0]);
        return 2;
    }
    std::printf("check.cpp: roce-parser-ffi %s, C++ %ld, %s\n", roce::version(),
                static_cast<long>(__cplusplus),
#ifdef ROCE_PARSER_HPP_SPAN
                "roce::bytes = std::span"
#else
                "roce::bytes = C++17 view"
#endif
    );
    api_checks();
    compare_all(argv[1]);
    if (failed > 20)
        std::fprintf(stderr, "... %lu more failures not shown\n", failed - 20);
    std::printf("check.cpp: %lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
