/*
 * roce_parser.hpp: a header-only C++17 interface over the C ABI of roce-parser (roce_parser.h).
 *
 * Nothing here allocates or throws: a parse returns a `roce::result` (a status and the whole
 * `roce_packet`, by value), typed as `enum class`es, with iteration over the problem bits and
 * over the extended headers present. With C++20's <span> (`__cpp_lib_span`) the byte views are
 * `std::span<const uint8_t>`; in C++17 they are `roce::bytes`, a pointer and a length with the
 * same `data()` / `size()` / iteration.
 *
 *     #include "roce_parser.hpp"
 *     roce::result r = roce::parse_frame({frame, len});
 *     if (r) {
 *         std::printf("%s psn=%u\n", roce::opcode_name(r->bth.opcode), unsigned(r->bth.psn));
 *         for (roce::problem p : r.problems()) std::printf("  %s\n", roce::to_string(p));
 *         for (roce::ext_header h : r.ext_headers()) std::printf("  %s\n", roce::to_string(h));
 *     }
 *
 * Link exactly as for the C header (libroce_parser.so / .a, pkg-config `roce_parser`, CMake
 * `roce_parser::roce_parser`). The wrapper adds no symbols: every function is inline.
 *
 * SPDX-License-Identifier: MIT OR Apache-2.0
 */
#ifndef ROCE_PARSER_HPP
#define ROCE_PARSER_HPP

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "roce_parser.hpp needs C++17 or later (roce_parser.h alone is C++11)"
#endif

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
#define ROCE_PARSER_HPP_SPAN 1
#endif

#include "roce_parser.h"

namespace roce {

// ------------------------------------------------------------------------------------------
// Byte views
// ------------------------------------------------------------------------------------------

#ifdef ROCE_PARSER_HPP_SPAN
/// A read-only view of bytes: `std::span<const uint8_t>` (C++20).
using bytes = std::span<const std::uint8_t>;
#else
/// A read-only view of bytes (C++17 stand-in for `std::span<const uint8_t>`).
class bytes {
  public:
    constexpr bytes() noexcept = default;
    constexpr bytes(const std::uint8_t *data, std::size_t size) noexcept
        : data_(data), size_(size) {}
    /// Any contiguous container of bytes with data() and size() (std::vector, std::array).
    template <class C, class = decltype(static_cast<const std::uint8_t *>(
                           std::declval<const C &>().data())),
              class = decltype(std::size_t(std::declval<const C &>().size()))>
    constexpr bytes(const C &c) noexcept : data_(c.data()), size_(c.size()) {}
    constexpr const std::uint8_t *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr const std::uint8_t *begin() const noexcept { return data_; }
    constexpr const std::uint8_t *end() const noexcept { return data_ + size_; }
    constexpr std::uint8_t operator[](std::size_t i) const noexcept { return data_[i]; }
    /// `count` bytes from `offset` (the caller keeps them within the view).
    constexpr bytes subspan(std::size_t offset, std::size_t count) const noexcept {
        return bytes(data_ + offset, count);
    }

  private:
    const std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
};
#endif

// ------------------------------------------------------------------------------------------
// Enumerations: the C constants, typed
// ------------------------------------------------------------------------------------------

/// What a parse returned (`enum roce_status`).
enum class status : int {
    ok = ROCE_OK,
    null = ROCE_ERR_NULL,
    truncated = ROCE_ERR_TRUNCATED,
    malformed = ROCE_ERR_MALFORMED,
    not_roce = ROCE_ERR_NOT_ROCE,
    invalid_arg = ROCE_ERR_INVALID_ARG,
};

/// A protocol layer (`ROCE_LAYER_*`): where parsing stopped, and the extended headers.
enum class layer : std::uint8_t {
    none = ROCE_LAYER_NONE,
    ethernet = ROCE_LAYER_ETHERNET,
    vlan = ROCE_LAYER_VLAN,
    ipv4 = ROCE_LAYER_IPV4,
    ipv6 = ROCE_LAYER_IPV6,
    ipv6_extensions = ROCE_LAYER_IPV6_EXTENSIONS,
    udp = ROCE_LAYER_UDP,
    grh = ROCE_LAYER_GRH,
    bth = ROCE_LAYER_BTH,
    rdeth = ROCE_LAYER_RDETH,
    deth = ROCE_LAYER_DETH,
    xrceth = ROCE_LAYER_XRCETH,
    reth = ROCE_LAYER_RETH,
    atomic_eth = ROCE_LAYER_ATOMIC_ETH,
    aeth = ROCE_LAYER_AETH,
    atomic_ack_eth = ROCE_LAYER_ATOMIC_ACK_ETH,
    immdt = ROCE_LAYER_IMMDT,
    ieth = ROCE_LAYER_IETH,
    feth = ROCE_LAYER_FETH,
    gre = ROCE_LAYER_GRE,
    erspan = ROCE_LAYER_ERSPAN,
    vxlan = ROCE_LAYER_VXLAN,
    geneve = ROCE_LAYER_GENEVE,
    other = ROCE_LAYER_OTHER,
};

/// The extended transport headers, a subset of `layer` (the same values).
enum class ext_header : std::uint8_t {
    rdeth = ROCE_LAYER_RDETH,
    deth = ROCE_LAYER_DETH,
    xrceth = ROCE_LAYER_XRCETH,
    reth = ROCE_LAYER_RETH,
    atomic_eth = ROCE_LAYER_ATOMIC_ETH,
    aeth = ROCE_LAYER_AETH,
    atomic_ack_eth = ROCE_LAYER_ATOMIC_ACK_ETH,
    immdt = ROCE_LAYER_IMMDT,
    ieth = ROCE_LAYER_IETH,
    feth = ROCE_LAYER_FETH,
};

/// `icrc_status` (`ROCE_ICRC_*`).
enum class icrc : std::uint8_t {
    not_checked = ROCE_ICRC_NOT_CHECKED,
    ok = ROCE_ICRC_OK,
    bad = ROCE_ICRC_BAD,
    unverifiable = ROCE_ICRC_UNVERIFIABLE,
};

/// `aeth.kind` (`ROCE_AETH_*`).
enum class aeth_kind : std::uint8_t {
    ack = ROCE_AETH_ACK,
    rnr_nak = ROCE_AETH_RNR_NAK,
    reserved = ROCE_AETH_RESERVED,
    nak = ROCE_AETH_NAK,
};

/// One problem bit (`ROCE_PROBLEM_*`).
enum class problem : std::uint32_t {
    tver_nonzero = ROCE_PROBLEM_TVER_NONZERO,
    padcnt_inconsistent = ROCE_PROBLEM_PADCNT_INCONSISTENT,
    pad_nonzero = ROCE_PROBLEM_PAD_NONZERO,
    unexpected_payload = ROCE_PROBLEM_UNEXPECTED_PAYLOAD,
    atomic_write_length = ROCE_PROBLEM_ATOMIC_WRITE_LENGTH,
    udp_length_mismatch = ROCE_PROBLEM_UDP_LENGTH_MISMATCH,
    ip_length_mismatch = ROCE_PROBLEM_IP_LENGTH_MISMATCH,
    truncated = ROCE_PROBLEM_TRUNCATED,
    reserved_bits = ROCE_PROBLEM_RESERVED_BITS,
    reserved_opcode = ROCE_PROBLEM_RESERVED_OPCODE,
    vendor_opcode = ROCE_PROBLEM_VENDOR_OPCODE,
    short_for_opcode = ROCE_PROBLEM_SHORT_FOR_OPCODE,
    cnp_length = ROCE_PROBLEM_CNP_LENGTH,
    cnp_becn_clear = ROCE_PROBLEM_CNP_BECN_CLEAR,
    cnp_psn_nonzero = ROCE_PROBLEM_CNP_PSN_NONZERO,
    rd_layout_mismatch = ROCE_PROBLEM_RD_LAYOUT_MISMATCH,
    qp1_qkey = ROCE_PROBLEM_QP1_QKEY,
    ipv4_checksum = ROCE_PROBLEM_IPV4_CHECKSUM,
    ip_fragment = ROCE_PROBLEM_IP_FRAGMENT,
    mad_truncated = ROCE_PROBLEM_MAD_TRUNCATED,
    mad_unknown_version = ROCE_PROBLEM_MAD_UNKNOWN_VERSION,
    mad_unknown_attribute = ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE,
    icrc_bad = ROCE_PROBLEM_ICRC_BAD,
    grh_next_header = ROCE_PROBLEM_GRH_NEXT_HEADER,
    short_for_bth = ROCE_PROBLEM_SHORT_FOR_BTH,
    short_for_icrc = ROCE_PROBLEM_SHORT_FOR_ICRC,
    ip_header_length = ROCE_PROBLEM_IP_HEADER_LENGTH,
    too_many_vlan_tags = ROCE_PROBLEM_TOO_MANY_VLAN_TAGS,
    ipv6_extension_chain = ROCE_PROBLEM_IPV6_EXTENSION_CHAIN,
    tunnel_malformed = ROCE_PROBLEM_TUNNEL_MALFORMED,
};

/// A tunnel's kind (`roce_tunnel.kind`, `ROCE_ENCAP_*`), in the parser's table order.
enum class encap : std::uint8_t {
    none = ROCE_ENCAP_NONE,
    gre = ROCE_ENCAP_GRE,
    erspan1 = ROCE_ENCAP_ERSPAN1,
    erspan2 = ROCE_ENCAP_ERSPAN2,
    erspan3 = ROCE_ENCAP_ERSPAN3,
    vxlan = ROCE_ENCAP_VXLAN,
    geneve = ROCE_ENCAP_GENEVE,
};

/// The status in words ("ok", "truncated", ...). Never NULL.
inline const char *to_string(status s) noexcept { return roce_status_str(static_cast<int>(s)); }
/// The layer's name ("IPv4", "BTH", "AETH", ...). Never NULL.
inline const char *to_string(layer l) noexcept {
    return roce_layer_name(static_cast<std::uint8_t>(l));
}
/// The header's name ("RETH", "AETH", ...). Never NULL.
inline const char *to_string(ext_header h) noexcept {
    return roce_layer_name(static_cast<std::uint8_t>(h));
}
/// The problem in words. Never NULL.
inline const char *to_string(problem p) noexcept {
    return roce_problem_str(static_cast<std::uint32_t>(p));
}
/// The problem's stable code ("pad_nonzero"), as in the JSON output. Never NULL.
inline const char *code(problem p) noexcept {
    return roce_problem_code(static_cast<std::uint32_t>(p));
}
/// The encapsulation's stable code ("erspan2", "vxlan", ...; "none"). Never NULL.
inline const char *to_string(encap e) noexcept {
    return roce_encap_name(static_cast<std::uint8_t>(e));
}
/// A tunnel's kind, typed.
constexpr encap kind(const roce_tunnel &t) noexcept { return static_cast<encap>(t.kind); }
/// The opcode's name from the parser's table ("RC_SEND_ONLY", "CNP", ...). Never NULL.
inline const char *opcode_name(std::uint8_t opcode) noexcept { return roce_opcode_name(opcode); }
/// The library's version, "MAJOR.MINOR.PATCH".
inline const char *version() noexcept { return roce_parser_version(); }
/// True when the library loaded agrees with this header on the struct layouts.
inline bool abi_matches() noexcept {
    return roce_parser_abi_version() == ROCE_PARSER_ABI_VERSION &&
           roce_packet_size() == sizeof(roce_packet);
}

// ------------------------------------------------------------------------------------------
// Sets: problems and extended headers
// ------------------------------------------------------------------------------------------

/// The problems of a packet: a bit mask that iterates as `problem` values, lowest bit first.
class problem_set {
  public:
    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = problem;
        using difference_type = std::ptrdiff_t;
        using pointer = const problem *;
        using reference = problem;
        constexpr explicit iterator(std::uint32_t rest) noexcept : rest_(rest) {}
        constexpr problem operator*() const noexcept {
            return static_cast<problem>(rest_ & (~rest_ + 1u));
        }
        constexpr iterator &operator++() noexcept {
            rest_ &= rest_ - 1u;
            return *this;
        }
        constexpr iterator operator++(int) noexcept {
            iterator before = *this;
            ++*this;
            return before;
        }
        constexpr bool operator==(const iterator &o) const noexcept { return rest_ == o.rest_; }
        constexpr bool operator!=(const iterator &o) const noexcept { return rest_ != o.rest_; }

      private:
        std::uint32_t rest_;
    };

    constexpr problem_set() noexcept = default;
    constexpr explicit problem_set(std::uint32_t bits) noexcept : bits_(bits) {}
    constexpr std::uint32_t bits() const noexcept { return bits_; }
    constexpr bool empty() const noexcept { return bits_ == 0; }
    constexpr bool contains(problem p) const noexcept {
        return (bits_ & static_cast<std::uint32_t>(p)) != 0;
    }
    constexpr std::size_t size() const noexcept {
        std::size_t n = 0;
        for (std::uint32_t b = bits_; b != 0; b &= b - 1u)
            ++n;
        return n;
    }
    constexpr iterator begin() const noexcept { return iterator(bits_); }
    constexpr iterator end() const noexcept { return iterator(0); }

  private:
    std::uint32_t bits_ = 0;
};

/// The extended headers present in a packet, iterating as `ext_header` values in the
/// parser's table order (RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
/// IETH, FETH). Each header's fields are in the packet's struct of the same name.
class ext_header_set {
  public:
    static constexpr std::uint8_t first = ROCE_LAYER_RDETH;
    static constexpr std::uint8_t last = ROCE_LAYER_FETH;

    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = ext_header;
        using difference_type = std::ptrdiff_t;
        using pointer = const ext_header *;
        using reference = ext_header;
        constexpr iterator(std::uint32_t mask, std::uint8_t at) noexcept : mask_(mask), at_(at) {
            skip();
        }
        constexpr ext_header operator*() const noexcept { return static_cast<ext_header>(at_); }
        constexpr iterator &operator++() noexcept {
            ++at_;
            skip();
            return *this;
        }
        constexpr iterator operator++(int) noexcept {
            iterator before = *this;
            ++*this;
            return before;
        }
        constexpr bool operator==(const iterator &o) const noexcept { return at_ == o.at_; }
        constexpr bool operator!=(const iterator &o) const noexcept { return at_ != o.at_; }

      private:
        constexpr void skip() noexcept {
            while (at_ <= last && (mask_ & (1u << at_)) == 0)
                ++at_;
        }
        std::uint32_t mask_;
        std::uint8_t at_;
    };

    constexpr ext_header_set() noexcept = default;
    explicit ext_header_set(const roce_packet &p) noexcept {
        add(p.rdeth.present, ext_header::rdeth);
        add(p.deth.present, ext_header::deth);
        add(p.xrceth.present, ext_header::xrceth);
        add(p.reth.present, ext_header::reth);
        add(p.atomic_eth.present, ext_header::atomic_eth);
        add(p.aeth.present, ext_header::aeth);
        add(p.atomic_ack_eth.present, ext_header::atomic_ack_eth);
        add(p.immdt.present, ext_header::immdt);
        add(p.ieth.present, ext_header::ieth);
        add(p.feth.present, ext_header::feth);
    }
    constexpr bool contains(ext_header h) const noexcept {
        return (mask_ & (1u << static_cast<std::uint8_t>(h))) != 0;
    }
    constexpr bool empty() const noexcept { return mask_ == 0; }
    constexpr std::size_t size() const noexcept {
        std::size_t n = 0;
        for (std::uint32_t b = mask_; b != 0; b &= b - 1u)
            ++n;
        return n;
    }
    constexpr iterator begin() const noexcept { return iterator(mask_, first); }
    constexpr iterator end() const noexcept { return iterator(0, last + 1); }

  private:
    constexpr void add(bool present, ext_header h) noexcept {
        if (present)
            mask_ |= 1u << static_cast<std::uint8_t>(h);
    }
    std::uint32_t mask_ = 0;
};

/// The tunnels taken off a frame (`roce_packet.tunnels`, the first `tunnel_count`),
/// outermost first: iterates as `const roce_tunnel &`, empty for a frame captured on the host.
class tunnel_set {
  public:
    using iterator = const roce_tunnel *;
    constexpr tunnel_set() noexcept = default;
    constexpr explicit tunnel_set(const roce_packet &p) noexcept
        : first_(p.tunnels),
          count_(static_cast<std::size_t>(p.tunnel_count <= ROCE_PARSER_MAX_TUNNELS
                                              ? p.tunnel_count
                                              : ROCE_PARSER_MAX_TUNNELS)) {}
    constexpr iterator begin() const noexcept { return first_; }
    constexpr iterator end() const noexcept { return first_ + count_; }
    constexpr std::size_t size() const noexcept { return count_; }
    constexpr bool empty() const noexcept { return count_ == 0; }
    /// The `i`th tunnel, outermost first (`i < size()`).
    constexpr const roce_tunnel &operator[](std::size_t i) const noexcept { return first_[i]; }
    /// The innermost tunnel's kind (the one the inner frame was in); `encap::none` when empty.
    constexpr encap innermost() const noexcept {
        return count_ == 0 ? encap::none : kind(first_[count_ - 1]);
    }

  private:
    const roce_tunnel *first_ = nullptr;
    std::size_t count_ = 0;
};

// ------------------------------------------------------------------------------------------
// Options and results
// ------------------------------------------------------------------------------------------

/// Parse options; the defaults are RoCEv2 on UDP port 4791 with the ICRC verified.
struct options {
    /// UDP destination port that marks RoCEv2.
    std::uint16_t udp_port = ROCE_V2_UDP_PORT;
    /// Verify the ICRC (and the IPv4 header checksum).
    bool verify_icrc = true;

    constexpr roce_options to_c() const noexcept {
        roce_options o{};
        o.udp_port = udp_port;
        o.skip_icrc = verify_icrc ? 0 : 1;
        return o;
    }
};

/// One parse: its status and the whole decoded `roce_packet` (reach the fields with `->`).
/// Holds offsets into the input, never pointers: it outlives the buffer; `payload(input)`
/// and `opaque(input)` give views into the input it was parsed from.
class result {
  public:
    /// A result with status `null` and a zeroed packet (what no parse returns).
    constexpr result() noexcept : status_(ROCE_ERR_NULL), pkt_{} {}

    /// What the C call returned. `ok` means a RoCE packet, `not_roce` a clean frame without.
    constexpr enum status status() const noexcept { return static_cast<enum status>(status_); }
    /// The C status code, as returned by the C function.
    constexpr int status_code() const noexcept { return status_; }
    /// True for `status::ok`: a RoCE packet with its BTH decoded.
    constexpr bool ok() const noexcept { return status_ == ROCE_OK; }
    constexpr explicit operator bool() const noexcept { return ok(); }

    /// The C struct, every field.
    constexpr const roce_packet &packet() const noexcept { return pkt_; }
    constexpr const roce_packet *operator->() const noexcept { return &pkt_; }
    constexpr const roce_packet &operator*() const noexcept { return pkt_; }

    /// 0 (no RoCE), 1 or 2.
    constexpr unsigned roce_version() const noexcept { return pkt_.roce_version; }
    /// The opcode's name, or "-" without a RoCE packet.
    const char *opcode_name() const noexcept {
        return pkt_.roce_version ? roce_opcode_name(pkt_.bth.opcode) : "-";
    }
    constexpr icrc icrc_status() const noexcept { return static_cast<icrc>(pkt_.icrc_status); }
    constexpr enum aeth_kind aeth_kind() const noexcept {
        return static_cast<enum aeth_kind>(pkt_.aeth.kind);
    }
    constexpr problem_set problems() const noexcept { return problem_set(pkt_.problems); }
    ext_header_set ext_headers() const noexcept { return ext_header_set(pkt_); }
    /// The tunnels the frame arrived in (ERSPAN, GRE, VXLAN, Geneve), outermost first; the
    /// packet's other fields describe the inner frame. A view into this result: keep the
    /// result alive while it is used.
    constexpr tunnel_set tunnels() const noexcept { return tunnel_set(pkt_); }
    /// Whether lax parsing stopped early, and how (`ok` when it did not).
    constexpr enum status stop() const noexcept { return static_cast<enum status>(pkt_.stop); }
    constexpr layer stop_layer() const noexcept { return static_cast<layer>(pkt_.stop_layer); }

    /// The captured payload bytes of `input` (the buffer this result was parsed from).
    constexpr bytes payload(bytes input) const noexcept {
        return clip(input, pkt_.payload_offset, pkt_.payload_captured);
    }
    /// The undecoded bytes after the BTH of reserved and vendor opcodes.
    constexpr bytes opaque(bytes input) const noexcept {
        return clip(input, pkt_.opaque_offset, pkt_.opaque_len);
    }

  private:
    friend result parse_frame(bytes, const options &) noexcept;
    friend result parse_ip(bytes, const options &) noexcept;
    friend result parse_infiniband(bytes, const options &) noexcept;
    friend result parse_ethertype(std::uint16_t, bytes, const options &) noexcept;
    friend result parse_udp_payload(bytes) noexcept;
    friend result parse_frame_segments(const roce_segment *, std::size_t,
                                       const options &) noexcept;

    static constexpr bytes clip(bytes input, std::size_t off, std::size_t n) noexcept {
        if (off > input.size() || n > input.size() - off)
            return bytes();
        return bytes(input.data() + off, n);
    }

    int status_;
    roce_packet pkt_;
};

namespace detail {
/// An empty view may have a null data pointer (an empty std::vector, a default span): the
/// C functions would say `ROCE_ERR_NULL`. The wrapper hands them a valid pointer instead, so an
/// empty input is `status::truncated` (or `not_roce` for `parse_ethertype`), as in C with a
/// non-NULL pointer and length 0: `status::null` never comes out of a parse here.
inline const std::uint8_t *data_of(bytes b) noexcept {
    static const std::uint8_t none[1] = {0};
    return b.data() != nullptr ? b.data() : none;
}
} // namespace detail

/// An Ethernet II frame (`roce_parse_frame_opts`).
inline result parse_frame(bytes frame, const options &opts = {}) noexcept {
    result r;
    const roce_options o = opts.to_c();
    r.status_ = roce_parse_frame_opts(detail::data_of(frame), frame.size(), &o, &r.pkt_);
    return r;
}

/// An Ethernet II frame held in `count` segments (a DPDK mbuf chain, an iovec), parsed where
/// they lie (`roce_parse_frame_segments`): the result `parse_frame` gives for the segments
/// joined, offsets counted in the joined frame. `payload()` and `opaque()` take the joined
/// frame; with segments, read `->payload_offset` / `->payload_captured` across them.
inline result parse_frame_segments(const roce_segment *segs, std::size_t count,
                                   const options &opts = {}) noexcept {
    result r;
    const roce_options o = opts.to_c();
    r.status_ = roce_parse_frame_segments(segs, count, &o, &r.pkt_);
    return r;
}

#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
/// The same over a span of segments (C++20).
inline result parse_frame_segments(std::span<const roce_segment> segs,
                                   const options &opts = {}) noexcept {
    return parse_frame_segments(segs.data(), segs.size(), opts);
}
#endif

/// An IPv4 / IPv6 packet (`roce_parse_ip_opts`).
inline result parse_ip(bytes packet, const options &opts = {}) noexcept {
    result r;
    const roce_options o = opts.to_c();
    r.status_ = roce_parse_ip_opts(detail::data_of(packet), packet.size(), &o, &r.pkt_);
    return r;
}

/// A native InfiniBand packet from its LRH (`roce_parse_infiniband_opts`): `r->lrh`
/// holds the LRH and VCRC.
inline result parse_infiniband(bytes packet, const options &opts = {}) noexcept {
    result r;
    const roce_options o = opts.to_c();
    r.status_ = roce_parse_infiniband_opts(detail::data_of(packet), packet.size(), &o, &r.pkt_);
    return r;
}

/// What follows an EtherType (`roce_parse_ethertype`).
inline result parse_ethertype(std::uint16_t ethertype, bytes data,
                              const options &opts = {}) noexcept {
    result r;
    const roce_options o = opts.to_c();
    r.status_ = roce_parse_ethertype(ethertype, detail::data_of(data), data.size(), &o, &r.pkt_);
    return r;
}

/// A UDP payload, BTH to ICRC (`roce_parse_udp_payload`; the ICRC is not checkable).
inline result parse_udp_payload(bytes payload) noexcept {
    result r;
    r.status_ = roce_parse_udp_payload(detail::data_of(payload), payload.size(), &r.pkt_);
    return r;
}

/// A MAD, the UD payload of a packet to QP1 (`roce_parse_mad`): the status and the decoded
/// MAD. Check `ok()`, `problems()` and `decoded()` before using the message.
class mad_result {
  public:
    constexpr enum status status() const noexcept { return static_cast<enum status>(status_); }
    constexpr bool ok() const noexcept { return status_ == ROCE_OK; }
    /// `ROCE_PROBLEM_MAD_*` bits.
    std::uint32_t problems() const noexcept { return mad_.problems; }
    /// A `ROCE_CM_*` constant.
    std::uint8_t kind() const noexcept { return mad_.cm_kind; }
    bool decoded() const noexcept { return mad_.cm_decoded; }
    const roce_mad &raw() const noexcept { return mad_; }

  private:
    int status_ = ROCE_OK;
    roce_mad mad_{};
    friend mad_result parse_mad(bytes) noexcept;
};

/// Decodes a MAD (`roce_parse_mad`).
inline mad_result parse_mad(bytes mad) noexcept {
    mad_result r;
    r.status_ = roce_parse_mad(detail::data_of(mad), mad.size(), &r.mad_);
    return r;
}

} // namespace roce

#endif /* ROCE_PARSER_HPP */
