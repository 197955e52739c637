#!/usr/bin/env bash
# Proof from C and C++ that the C interface of roce-parser returns what the Rust API returns.
#
#  1. builds libroce_parser_ffi.a / .so (release) and the two examples;
#  2. dumps, from the Rust API, every field of the docs/wire.md vectors (and every truncation of
#     them) and of every frame of every real capture (examples/c_expected.rs);
#  3. compiles ffi/tests/check.c with the system C compiler (-Wall -Wextra -Werror) against the
#     static library, runs it: it reads the captures itself, parses through roce_parser.h and
#     compares every field line by line; then again with -fsanitize=address,undefined, and
#     once against the shared library;
#  4. compiles ffi/tests/check.cpp (C++17 through include/roce_parser.hpp, -pedantic, threads),
#     runs it on the same expected file, plain and sanitized, then as C++20 (std::span);
#  5. checks the headers alone (C99 / C++11 for roce_parser.h, C++17 / C++20 for
#     roce_parser.hpp, -pedantic), and the pkg-config file;
#  6. prints the per-frame cost through the C interface next to the Rust API (never asserted).
#
# Run from anywhere: paths are relative to the repository root; the real captures are read
# from the folder ROCE_INSPECT_REAL_CAPTURES names (the variable the Rust tests read, see
# testdata/real.rs). Unset, only the vectors are checked, with a note; with CI=true an unset
# variable is an error, not a skip.
# Any mismatch, warning or sanitizer report exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf '\n--- ffi: %s ---\n' "$*"; }
# A path made absolute (CARGO_TARGET_DIR may be either).
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

TARGET="${CARGO_TARGET_DIR:-target}"
LIBDIR="$TARGET/release"
OUT="$TARGET/ffi-c"
REAL="${ROCE_INSPECT_REAL_CAPTURES:-}"
# `none` declares them absent on purpose (a hosted runner): skipped even with CI=true, as in
# testdata/real.rs.
CI_NEEDS_REAL="${CI:-}"
if [ "$REAL" = none ]; then REAL=; CI_NEEDS_REAL=; fi
BENCH_CAPTURE="$REAL/magnate3_linux-riscv-dev_rocev2_test.pcap"
BENCH_ROUNDS="${BENCH_ROUNDS:-300}"
CC="${CC:-cc}"
CXX="${CXX:-g++}"
# What the static library needs from the system (rustc --print native-static-libs, Linux).
NATIVE_LIBS=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
CFLAGS=(-std=c11 -Wall -Wextra -Werror -I ffi/include -I ffi/tests)
CXXFLAGS=(-std=c++17 -Wall -Wextra -Werror -pedantic -pthread -I ffi/include -I ffi/tests)
SAN=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g -O1)
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# The conformance suite's captures (in the repository) always; the real ones when given.
captures=(pcaps/sample.pcap pcaps/conformance/*.pcap)
if [ -n "$REAL" ]; then
    if [ ! -f "$REAL/README.md" ]; then
        echo "error: ROCE_INSPECT_REAL_CAPTURES=$REAL is not the folder of the real captures" >&2
        exit 1
    fi
    n_before=${#captures[@]}
    for f in "$REAL"/*.pcap "$REAL"/*.pcapng; do
        [ -e "$f" ] && captures+=("$f")
    done
    if [ "${#captures[@]}" -eq "$n_before" ]; then
        echo "error: no captures in $REAL" >&2
        exit 1
    fi
elif [ "$CI_NEEDS_REAL" = true ]; then
    echo "error: ROCE_INSPECT_REAL_CAPTURES is not set (CI=true): the C test needs the real captures" >&2
    exit 1
else
    echo "note: ROCE_INSPECT_REAL_CAPTURES is not set: SKIPPING the real captures (checking the docs/wire.md vectors and pcaps/conformance only)" >&2
fi

mkdir -p "$OUT"

step "build the static and shared library and the examples (release)"
cargo build -p roce-parser-ffi --release --lib --examples
STATIC="$LIBDIR/libroce_parser_ffi.a"
test -f "$STATIC" && test -f "$LIBDIR/libroce_parser_ffi.so"

step "expected fields from the Rust API"
"$LIBDIR/examples/c_expected" "$OUT/expected.txt" "${captures[@]}"

step "C: $("$CC" --version | head -n1)"
"$CC" "${CFLAGS[@]}" -O2 ffi/tests/check.c "$STATIC" "${NATIVE_LIBS[@]}" -o "$OUT/check"
"$OUT/check" "$OUT/expected.txt"

step "C with -fsanitize=address,undefined"
"$CC" "${CFLAGS[@]}" "${SAN[@]}" ffi/tests/check.c "$STATIC" "${NATIVE_LIBS[@]}" \
    -o "$OUT/check-asan"
"$OUT/check-asan" "$OUT/expected.txt"

step "C against the shared library"
"$CC" "${CFLAGS[@]}" -O2 ffi/tests/check.c -L "$LIBDIR" -lroce_parser_ffi \
    -Wl,-rpath,"$(abs "$LIBDIR")" -o "$OUT/check-shared"
"$OUT/check-shared" "$OUT/expected.txt"

step "C++17 through roce_parser.hpp: $("$CXX" --version | head -n1)"
"$CXX" "${CXXFLAGS[@]}" -O2 ffi/tests/check.cpp "$STATIC" "${NATIVE_LIBS[@]}" \
    -o "$OUT/check-cpp"
"$OUT/check-cpp" "$OUT/expected.txt"

step "C++17 through roce_parser.hpp with -fsanitize=address,undefined"
"$CXX" "${CXXFLAGS[@]}" "${SAN[@]}" ffi/tests/check.cpp "$STATIC" "${NATIVE_LIBS[@]}" \
    -o "$OUT/check-cpp-asan"
"$OUT/check-cpp-asan" "$OUT/expected.txt"

step "C++20 through roce_parser.hpp (roce::bytes is std::span), sanitized"
CXX20FLAGS=("${CXXFLAGS[@]/-std=c++17/-std=c++20}")
"$CXX" "${CXX20FLAGS[@]}" "${SAN[@]}" ffi/tests/check.cpp "$STATIC" "${NATIVE_LIBS[@]}" \
    -o "$OUT/check-cpp20-asan"
"$OUT/check-cpp20-asan" "$OUT/expected.txt"

step "the header alone: C99 and C++11, -pedantic"
printf '#include "roce_parser.h"\nint main(void) { roce_packet p; return roce_parse_frame(0, 0, &p) == ROCE_ERR_NULL ? 0 : 1; }\n' \
    >"$OUT/header_only.c"
"$CC" -std=c99 -pedantic -Wall -Wextra -Werror -I ffi/include -fsyntax-only "$OUT/header_only.c"
"$CXX" -std=c++11 -pedantic -Wall -Wextra -Werror -I ffi/include -fsyntax-only -x c++ \
    "$OUT/header_only.c"
printf '#include "roce_parser.hpp"\nint main() { return roce::parse_frame({}).status() == roce::status::truncated ? 0 : 1; }\n' \
    >"$OUT/header_only.cpp"
for std in c++17 c++20; do
    "$CXX" -std=$std -pedantic -Wall -Wextra -Werror -Wshadow -Wconversion -I ffi/include \
        -fsyntax-only "$OUT/header_only.cpp"
done

step "the example in ffi/README.md"
# The C block between the BEGIN/END example.c markers, plus a main() that feeds it V1.
sed -n '/<!-- BEGIN example.c/,/<!-- END example.c/p' ffi/README.md |
    sed -e '/^<!--/d' -e '/^```/d' >"$OUT/readme_example.c"
cat >>"$OUT/readme_example.c" <<'MAIN'
int main(void) {
    static const char *v1 = "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007"
                            "c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a955054"
                            "01be885e50000078f353f3";
    uint8_t f[128];
    size_t n = 0;
    for (; v1[2 * n]; n++) {
        unsigned b;
        sscanf(v1 + 2 * n, "%2x", &b);
        f[n] = (uint8_t)b;
    }
    on_frame(f, n);
    return 0;
}
MAIN
"$CC" "${CFLAGS[@]}" -O2 "$OUT/readme_example.c" "$STATIC" "${NATIVE_LIBS[@]}" \
    -o "$OUT/readme_example"
got=$("$OUT/readme_example")
want="UC_SEND_ONLY qp=0x0000d3 psn=13571856 payload=18 icrc=ok"
echo "$got"
if [ "$got" != "$want" ]; then
    echo "error: the README example printed '$got', the README says '$want'" >&2
    exit 1
fi

step "pkg-config file (ffi/roce_parser.pc.in)"
if command -v pkg-config >/dev/null 2>&1; then
    prefix="$(abs "$OUT")/prefix"
    rm -rf "$prefix" && mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
    cp ffi/include/roce_parser.h "$prefix/include/"
    cp "$STATIC" "$prefix/lib/"
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' ffi/Cargo.toml | head -n1)
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" ffi/roce_parser.pc.in \
        >"$prefix/lib/pkgconfig/roce_parser.pc"
    # shellcheck disable=SC2046 # word splitting of pkg-config's flags is intended
    "$CC" "${CFLAGS[@]}" -O2 ffi/tests/check.c \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs --static roce_parser) \
        -o "$OUT/check-pkgconfig"
    "$OUT/check-pkgconfig" "$OUT/expected.txt" >/dev/null
    echo "built and ran check.c with: pkg-config --cflags --libs --static roce_parser"
else
    echo "pkg-config not installed: skipped"
fi

if [ -f "$BENCH_CAPTURE" ]; then
    step "per-frame cost, $(basename "$BENCH_CAPTURE") (printed, not asserted)"
    "$CC" "${CFLAGS[@]}" -O2 ffi/tests/bench.c "$STATIC" "${NATIVE_LIBS[@]}" -o "$OUT/bench"
    "$OUT/bench" "$BENCH_CAPTURE" "$BENCH_ROUNDS"
    "$LIBDIR/examples/bench_rust" "$BENCH_CAPTURE" "$BENCH_ROUNDS"
    # Wall-clock time moves with the machine's load; instructions do not. callgrind counts
    # them for the same calls: the whole C call, and the Rust API call made inside it.
    if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
        frames=$("$OUT/bench" "$BENCH_CAPTURE" 1 verify | sed -n 's/.*(\([0-9]*\) frames.*/\1/p')
        calls=$((frames * 10)) # warm-up and measured passes, 5 runs each, of 1 round
        for mode in verify skip; do
            for fn in roce_parse_frame_opts 'roce_parser::packet::parse_ethernet_into'; do
                valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" \
                    "--toggle-collect=$fn" "$OUT/bench" "$BENCH_CAPTURE" 1 "$mode" >/dev/null 2>&1
                ir=$(callgrind_annotate "$OUT/callgrind.out" 2>/dev/null |
                    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
                case "$ir" in
                    '' | *[!0-9]*) n="n/a (inlined: no such symbol)" ;;
                    *) n=$((ir / calls)) ;;
                esac
                printf 'instructions/frame (callgrind), %-6s %-42s %s\n' "$mode" "$fn" "$n"
            done
        done
    fi
fi

echo
echo "ffi: C and C++ checks passed"
