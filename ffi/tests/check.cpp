// Proof from C++17: the generated header compiles as C++ (extern "C", bool, enums), the SPEC.md
// vectors decode to the values SPEC.md gives, and many threads parsing at once through the C
// interface get exactly the single-threaded results (no global state).
//
//   check_cpp            exits 0 when everything holds
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "roce_parser.h"

namespace {

int passed = 0, failed = 0;

void check(bool ok, const char *what, int line) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::fprintf(stderr, "FAIL check.cpp:%d: %s\n", line, what);
    }
}
#define CHECK(c) check((c), #c, __LINE__)

std::vector<uint8_t> unhex(const std::string &h) {
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        v.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return v;
}

const std::string V1 =
    "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460"
    "ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3";
const std::string V2 =
    "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100"
    "ffff40000118000000000000000000000000000000000000000082fd002a";
const std::string V3 =
    "ffffffffffff02fc0000000186dd62012345001c1140fe800000000000000000000000000001fe8000000000"
    "00000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0";

// A thin C++ face over the C interface: what a C++ stack would write.
struct Parsed {
    int status = ROCE_ERR_NULL;
    roce_packet pkt{};

    static Parsed frame(const std::vector<uint8_t> &f) {
        Parsed p;
        p.status = roce_parse_frame(f.data(), f.size(), &p.pkt);
        return p;
    }
    bool ok() const { return status == ROCE_OK; }
    std::string opcode_name() const { return roce_opcode_name(pkt.bth.opcode); }
    // The payload, as a view into the frame the packet was parsed from.
    std::string payload_hex(const std::vector<uint8_t> &f) const {
        std::string s;
        char b[3];
        for (size_t i = 0; i < pkt.payload_captured; ++i) {
            std::snprintf(b, sizeof b, "%02x", f[pkt.payload_offset + i]);
            s += b;
        }
        return s;
    }
};

// Field-by-field equality of the parts a thread race would disturb.
bool same(const Parsed &a, const Parsed &b) {
    const roce_packet &x = a.pkt, &y = b.pkt;
    return a.status == b.status && x.roce_version == y.roce_version &&
           x.bth.opcode == y.bth.opcode && x.bth.psn == y.bth.psn &&
           x.bth.dest_qp == y.bth.dest_qp && x.bth.becn == y.bth.becn &&
           x.aeth.present == y.aeth.present && x.aeth.msn == y.aeth.msn &&
           x.icrc == y.icrc && x.icrc_status == y.icrc_status && x.problems == y.problems &&
           x.payload_offset == y.payload_offset && x.payload_len == y.payload_len &&
           x.ip.version == y.ip.version && std::memcmp(x.ip.src, y.ip.src, 16) == 0 &&
           x.ip.ecn == y.ip.ecn && x.udp.sport == y.udp.sport;
}

const char *status_name(int st) {
    switch (st) {
    case ROCE_OK:
        return "ROCE_OK";
    case ROCE_ERR_NULL:
        return "ROCE_ERR_NULL";
    case ROCE_ERR_TRUNCATED:
        return "ROCE_ERR_TRUNCATED";
    case ROCE_ERR_MALFORMED:
        return "ROCE_ERR_MALFORMED";
    case ROCE_ERR_NOT_ROCE:
        return "ROCE_ERR_NOT_ROCE";
    case ROCE_ERR_INVALID_ARG:
        return "ROCE_ERR_INVALID_ARG";
    default:
        return "?";
    }
}

} // namespace

int main() {
    std::printf("check.cpp: roce-parser-ffi %s\n", roce_parser_version());
    CHECK(roce_packet_size() == sizeof(roce_packet));
    CHECK(roce_parser_abi_version() == ROCE_PARSER_ABI_VERSION);

    const std::vector<uint8_t> v1 = unhex(V1), v2 = unhex(V2), v3 = unhex(V3);

    Parsed p = Parsed::frame(v1);
    CHECK(p.ok());
    CHECK(p.opcode_name() == "UC_SEND_ONLY");
    CHECK(p.pkt.roce_version == 2 && p.pkt.bth.padcnt == 2 && p.pkt.bth.dest_qp == 0xd3);
    CHECK(p.pkt.icrc == 0xF353F378u && p.pkt.icrc_status == ROCE_ICRC_OK);
    CHECK(p.pkt.payload_len == 18 && p.payload_hex(v1) == "4630818be28935d90e9a95505401be885e50");
    CHECK(p.pkt.problems == 0 && p.pkt.stop == 0);

    p = Parsed::frame(v2);
    CHECK(p.ok() && p.opcode_name() == "CNP");
    CHECK(p.pkt.bth.becn && p.pkt.bth.dest_qp == 0x118 && p.pkt.payload_len == 16);
    CHECK(p.pkt.ip.ecn == 2 && p.pkt.ip.dscp == (0xc2 >> 2));
    CHECK(p.pkt.icrc_status == ROCE_ICRC_OK);

    p = Parsed::frame(v3);
    CHECK(p.ok() && p.opcode_name() == "RC_ACKNOWLEDGE");
    CHECK(p.pkt.ip.version == 6 && p.pkt.ip.flow_label == 0x12345);
    CHECK(p.pkt.aeth.present && p.pkt.aeth.kind == ROCE_AETH_ACK && p.pkt.aeth.msn == 7);
    CHECK(!p.pkt.reth.present && !p.pkt.deth.present);
    CHECK(p.pkt.icrc_status == ROCE_ICRC_OK);

    // Errors read as names, and strings never NULL.
    std::vector<uint8_t> empty;
    roce_packet out{};
    CHECK(std::string(status_name(roce_parse_frame(nullptr, 0, &out))) == "ROCE_ERR_NULL");
    CHECK(std::string(status_name(roce_parse_frame(v1.data(), 0, &out))) == "ROCE_ERR_TRUNCATED");
    CHECK(std::string(roce_status_str(ROCE_ERR_NOT_ROCE)) == "not a RoCE packet");
    CHECK(std::string(roce_problem_str(ROCE_PROBLEM_TRUNCATED)).find("truncated") !=
          std::string::npos);

    // Many threads at once, each on its own output: results identical to the serial ones.
    const std::vector<std::vector<uint8_t>> frames = {v1, v2, v3};
    std::vector<Parsed> want;
    for (const auto &f : frames)
        want.push_back(Parsed::frame(f));
    std::vector<int> mismatches(8, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20000; ++i) {
                size_t k = static_cast<size_t>(i + t) % frames.size();
                if (!same(Parsed::frame(frames[k]), want[k]))
                    ++mismatches[static_cast<size_t>(t)];
            }
        });
    }
    for (auto &th : threads)
        th.join();
    for (int m : mismatches)
        CHECK(m == 0);

    std::printf("check.cpp: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
