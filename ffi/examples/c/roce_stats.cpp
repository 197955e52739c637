// roce_stats (C++17): the same counts as roce_stats.c, through roce_parser.hpp.
//
//   c++ -std=c++17 roce_stats.cpp $(pkg-config --cflags --libs roce_parser) -o roce_stats_cpp
//   ./roce_stats_cpp capture.pcap
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "roce_parser.hpp"

namespace {
uint32_t rd32(const uint8_t *p, bool swap) {
    return swap ? (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]
                : (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | p[0];
}
} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CAPTURE.pcap\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
    if (file.size() < 24) {
        std::fprintf(stderr, "%s: not a pcap file\n", argv[1]);
        return 1;
    }
    const uint32_t magic = rd32(file.data(), false);
    const bool swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
    if (!swap && magic != 0xa1b2c3d4u && magic != 0xa1b23c4du) {
        std::fprintf(stderr, "%s: not a classic pcap file\n", argv[1]);
        return 1;
    }
    if (rd32(file.data() + 20, swap) != 1) {
        std::fprintf(stderr, "%s: not Ethernet\n", argv[1]);
        return 1;
    }
    unsigned long frames = 0, roce = 0, ok = 0, bad = 0, other = 0;
    std::array<unsigned long, 256> per_opcode{};
    for (size_t at = 24; at + 16 <= file.size();) {
        const uint32_t caplen = rd32(file.data() + at + 8, swap);
        if (caplen > file.size() - at - 16) {
            std::fprintf(stderr, "%s: damaged record\n", argv[1]);
            return 1;
        }
        const roce::bytes frame(file.data() + at + 16, caplen);
        at += 16 + caplen;
        ++frames;
        const roce::result r = roce::parse_frame(frame);
        if (!r)
            continue;
        ++roce;
        ++per_opcode[r->bth.opcode];
        switch (r.icrc_status()) {
        case roce::icrc::ok:
            ++ok;
            break;
        case roce::icrc::bad:
            ++bad;
            break;
        default:
            ++other;
        }
    }
    std::printf("frames=%lu roce=%lu icrc_ok=%lu icrc_bad=%lu icrc_other=%lu\n", frames, roce, ok,
                bad, other);
    for (size_t op = 0; op < per_opcode.size(); ++op)
        if (per_opcode[op])
            std::printf("opcode %s=%lu\n", roce::opcode_name(static_cast<uint8_t>(op)),
                        per_opcode[op]);
    return 0;
}
