#!/usr/bin/env bash
# The installable C library: `cargo cinstall` (cargo-c) into a temporary prefix, then the C and
# C++ tests and examples built against the INSTALLED copy, once through pkg-config and once
# through the CMake package, and run.
#
#  1. installs what it needs when missing: cargo-c 0.10.24 (`cargo install --locked`; skipped
#     when `cargo cinstall --version` works), cmake and pkg-config (apt-get);
#  2. `cargo cinstall -p roce-parser-ffi --release --prefix <tmp>/prefix --libdir lib`;
#  3. checks the installed files: libroce_parser.so.0 (SONAME libroce_parser.so.<major>),
#     libroce_parser.a, roce_parser.h, roce_parser.hpp, roce_parser.pc, the CMake package and
#     its version (= ffi/Cargo.toml's);
#  4. pkg-config: check.c (shared, then --static), check.cpp (shared) and the roce_stats
#     examples, run on the vectors and pcaps/conformance (examples/c_expected.rs' values);
#  5. CMake: the same through find_package(roce_parser) (tests/cmake/CMakeLists.txt).
# Every binary must load the installed libroce_parser.so.0, nothing from target/.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf '\n--- install: %s (%s) ---\n' "$*" "$(date +%H:%M:%S)"; }

TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$PWD/$TARGET/ffi-install"
PREFIX="$WORK/prefix"
CC="${CC:-cc}"
CXX="${CXX:-g++}"
CARGO_C_VERSION=0.10.24
version=$(sed -n 's/^version = "\(.*\)"/\1/p' ffi/Cargo.toml | head -n1)
major=${version%%.*}

step "tools"
if ! cargo cinstall --version >/dev/null 2>&1; then
    echo "cargo-c missing: cargo install --locked cargo-c --version $CARGO_C_VERSION"
    cargo install --locked cargo-c --version "$CARGO_C_VERSION"
fi
cargo cinstall --version
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v readelf >/dev/null 2>&1 || missing+=(binutils)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cmake --version | head -n1

step "cargo cinstall --prefix $PREFIX"
rm -rf "$WORK"
mkdir -p "$WORK"
cargo cinstall -p roce-parser-ffi --release --locked --prefix "$PREFIX" --libdir lib

step "installed files"
(cd "$PREFIX" && find . -type f -o -type l | sort)
for f in "lib/libroce_parser.so.$major" lib/libroce_parser.so lib/libroce_parser.a \
    include/roce_parser.h include/roce_parser.hpp lib/pkgconfig/roce_parser.pc \
    share/cmake/roce_parser/roce_parserConfig.cmake \
    share/cmake/roce_parser/roce_parserConfigVersion.cmake; do
    if [ ! -e "$PREFIX/$f" ]; then
        echo "error: $f is not installed" >&2
        exit 1
    fi
done
soname=$(readelf -d "$PREFIX/lib/libroce_parser.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "SONAME: $soname"
if [ "$soname" != "libroce_parser.so.$major" ]; then
    echo "error: SONAME is '$soname', want libroce_parser.so.$major" >&2
    exit 1
fi
cmake_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' \
    "$PREFIX/share/cmake/roce_parser/roce_parserConfigVersion.cmake")
if [ "$cmake_version" != "$version" ]; then
    echo "error: ffi/cmake/roce_parserConfigVersion.cmake says $cmake_version, ffi/Cargo.toml $version" >&2
    exit 1
fi
cmp ffi/include/roce_parser.h "$PREFIX/include/roce_parser.h"
cmp ffi/include/roce_parser.hpp "$PREFIX/include/roce_parser.hpp"
cat "$PREFIX/lib/pkgconfig/roce_parser.pc"

step "expected fields (vectors, pcaps/conformance) from the Rust API"
cargo build -p roce-parser-ffi --release --example c_expected
"$TARGET/release/examples/c_expected" "$WORK/expected.txt" pcaps/conformance/*.pcap

# Runs a binary, after checking it loads the installed shared library (when it uses one).
run() {
    local bin=$1
    shift
    if readelf -d "$bin" | grep 'NEEDED.*libroce_parser' >/dev/null; then
        local so
        so=$(ldd "$bin" | awk '/libroce_parser/ { print $3 }')
        if [ "$so" != "$PREFIX/lib/libroce_parser.so.$major" ]; then
            echo "error: $bin loads '$so', not the installed library" >&2
            exit 1
        fi
    fi
    "$bin" "$@"
}

# The roce_stats examples in C and C++ must agree on every capture.
stats_agree() {
    local c=$1 cpp=$2
    for f in pcaps/sample.pcap pcaps/conformance/*.pcap; do
        if ! diff <(run "$c" "$f") <(run "$cpp" "$f") >/dev/null; then
            echo "error: $c and $cpp disagree on $f" >&2
            exit 1
        fi
    done
    run "$c" pcaps/sample.pcap | head -n1
}

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
step "pkg-config: $(pkg-config --modversion roce_parser), $(pkg-config --cflags --libs roce_parser)"
[ "$(pkg-config --modversion roce_parser)" = "$version" ]
PC=$WORK/pkgconfig
mkdir -p "$PC"
RPATH=(-Wl,-rpath,"$PREFIX/lib")
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is intended
{
    "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -I ffi/tests -O2 ffi/tests/check.c \
        $(pkg-config --cflags --libs roce_parser) "${RPATH[@]}" -o "$PC/check"
    "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -I ffi/tests -O2 ffi/tests/check.c \
        $(pkg-config --cflags roce_parser) "$PREFIX/lib/libroce_parser.a" \
        $(pkg-config --libs-only-l --static roce_parser | sed 's/-lroce_parser//') -o "$PC/check-static"
    "$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic -pthread -I ffi/tests -O2 ffi/tests/check.cpp \
        $(pkg-config --cflags --libs roce_parser) "${RPATH[@]}" -o "$PC/check-cpp"
    "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -O2 ffi/examples/c/roce_stats.c \
        $(pkg-config --cflags --libs roce_parser) "${RPATH[@]}" -o "$PC/roce_stats"
    "$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic -O2 ffi/examples/c/roce_stats.cpp \
        $(pkg-config --cflags --libs roce_parser) "${RPATH[@]}" -o "$PC/roce_stats_cpp"
}
if readelf -d "$PC/check-static" | grep 'NEEDED.*libroce_parser' >/dev/null; then
    echo "error: check-static needs the shared library" >&2
    exit 1
fi
run "$PC/check" "$WORK/expected.txt" | tail -n1
run "$PC/check-static" "$WORK/expected.txt" | tail -n1
run "$PC/check-cpp" "$WORK/expected.txt" | tail -n1
stats_agree "$PC/roce_stats" "$PC/roce_stats_cpp"

step "CMake: find_package(roce_parser) -> roce_parser::roce_parser"
unset PKG_CONFIG_PATH
CM=$WORK/cmake
cmake -S ffi/tests/cmake -B "$CM" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DROCE_TESTS_DIR="$PWD/ffi/tests" -DROCE_EXAMPLES_DIR="$PWD/ffi/examples/c" >"$WORK/cmake.log" ||
    { cat "$WORK/cmake.log"; exit 1; }
grep 'roce_parser' "$WORK/cmake.log" || true
cmake --build "$CM" -j 2 >"$WORK/cmake-build.log" || { cat "$WORK/cmake-build.log"; exit 1; }
run "$CM/check_c" "$WORK/expected.txt" | tail -n1
run "$CM/check_c_static" "$WORK/expected.txt" | tail -n1
run "$CM/check_cpp" "$WORK/expected.txt" | tail -n1
stats_agree "$CM/roce_stats_c" "$CM/roce_stats_cpp"

echo
echo "install: cargo cinstall, pkg-config and CMake checks passed"
