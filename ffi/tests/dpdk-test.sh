#!/usr/bin/env bash
# roce_fwd (ffi/examples/dpdk/), a DPDK rx/tx loop, built against the INSTALLED roce_parser
# (the prefix ffi/tests/install-test.sh installs into; installed here if missing) and
# Debian's libdpdk-dev (installed if missing), run through DPDK's net_pcap driver
# (--no-huge --no-pci: no hugepages, no NIC) on pcaps/sample.pcap, the conformance suite and
# the real captures (ROCE_INSPECT_REAL_CAPTURES), three ways:
#   - default mbufs (2 KiB data room; net_pcap chains the larger frames itself),
#   - 256-byte mbufs (--mbuf-room 256: every frame above 256 bytes arrives as a chain),
#   - app-made chains of 64-byte segments (--split 64), every frame above 64 bytes chained;
# each time ffi/examples/dpdk/compare.py checks the counts against `roce-inspect stats` /
# `dissect` and that the tx_pcap holds exactly the valid frames, byte for byte.
# DPDK_BENCH_FRAMES=N (default 2000000; 0 skips) then prints the loop's Mpps over a generated
# capture replayed with infinite_rx=1 (no tx_pcap: net_pcap drops what is sent), with and
# without ICRC verification and without parsing, in wall-clock time and in the loop thread's
# CPU time (printed, not asserted).
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf '\n--- dpdk: %s (%s) ---\n' "$*" "$(date +%H:%M:%S)"; }

TARGET="${CARGO_TARGET_DIR:-target}"
# The prefix install-test.sh installs into (ROCE_PARSER_PREFIX overrides it).
PREFIX="${ROCE_PARSER_PREFIX:-$PWD/$TARGET/ffi-install/prefix}"
OUT="$PWD/$TARGET/ffi-dpdk"
CC="${CC:-cc}"
REAL="${ROCE_INSPECT_REAL_CAPTURES:-}"
# `none` declares them absent on purpose (a hosted runner): skipped even with CI=true, as in
# testdata/real.rs.
CI_NEEDS_REAL="${CI:-}"
if [ "$REAL" = none ]; then REAL=; CI_NEEDS_REAL=; fi
BENCH_FRAMES="${DPDK_BENCH_FRAMES:-2000000}"

step "libdpdk-dev and the installed roce_parser"
if ! pkg-config --exists libdpdk 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq libdpdk-dev pkg-config >/dev/null
fi
echo "libdpdk $(pkg-config --modversion libdpdk)"
if [ ! -f "$PREFIX/lib/pkgconfig/roce_parser.pc" ]; then
    cargo cinstall -p roce-parser-ffi --release --locked --prefix "$PREFIX" --libdir lib
fi
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
echo "roce_parser $(pkg-config --modversion roce_parser) from $PREFIX"

step "build roce_fwd (-Wall -Wextra -Werror) with pkg-config libdpdk roce_parser"
mkdir -p "$OUT"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is intended
"$CC" -std=gnu11 -O2 -Wall -Wextra -Werror ffi/examples/dpdk/roce_fwd.c \
    $(pkg-config --cflags --libs libdpdk roce_parser) -Wl,-rpath,"$PREFIX/lib" -o "$OUT/roce_fwd"
if ! ldd "$OUT/roce_fwd" | grep -q "$PREFIX/lib/libroce_parser.so.0"; then
    echo "error: roce_fwd does not load the installed libroce_parser.so.0:" >&2
    ldd "$OUT/roce_fwd" >&2
    exit 1
fi

step "roce-inspect (the reference)"
cargo build -p roce-inspect --quiet
TOOL="$PWD/$TARGET/debug/roce-inspect"

captures=(pcaps/sample.pcap pcaps/conformance/*.pcap)
if [ -n "$REAL" ]; then
    for f in "$REAL"/*.pcap "$REAL"/*.pcapng; do
        [ -e "$f" ] || continue
        # net_pcap hands the app raw link-layer bytes: only Ethernet captures (the ERF ones
        # are native InfiniBand, no RoCE).
        if python3 ffi/examples/dpdk/compare.py --ethernet "$f"; then
            captures+=("$f")
        else
            echo "skipped (not Ethernet): $(basename "$f")"
        fi
    done
elif [ "$CI_NEEDS_REAL" = true ]; then
    echo "error: ROCE_INSPECT_REAL_CAPTURES is not set (CI=true)" >&2
    exit 1
fi

# roce_fwd on one capture: run ID CAPTURE [roce_fwd options]
run() {
    local id=$1 cap=$2
    shift 2
    rm -f "$OUT/tx.pcap"
    "$OUT/roce_fwd" --no-huge --no-pci -l 0 --log-level=error --file-prefix="roce_fwd_$$" \
        "--vdev=net_pcap0,rx_pcap=$cap,tx_pcap=$OUT/tx.pcap" -- "$@" >"$OUT/$id.json" 2>"$OUT/$id.err" || {
        echo "error: roce_fwd failed on $cap:" >&2
        cat "$OUT/$id.err" >&2
        exit 1
    }
}

fails=0
total=0
chained=0
for mode in default room256 split64; do
    case $mode in
        default) opts=() ;;
        room256) opts=(--mbuf-room 256) ;;
        split64) opts=(--split 64) ;;
    esac
    step "every capture, mbufs: $mode"
    for cap in "${captures[@]}"; do
        total=$((total + 1))
        run run "$cap" "${opts[@]}"
        if ! python3 ffi/examples/dpdk/compare.py "$TOOL" "$cap" "$OUT/run.json" "$OUT/tx.pcap"; then
            fails=$((fails + 1))
        fi
        c=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["chained"])' "$OUT/run.json")
        chained=$((chained + c))
    done
done
echo "dpdk: $total runs, $chained chained frames parsed, $fails failed"
if [ "$fails" -ne 0 ]; then
    exit 1
fi
if [ "$chained" -eq 0 ]; then
    echo "error: no chained mbuf was parsed" >&2
    exit 1
fi

if [ "$BENCH_FRAMES" != 0 ]; then
    step "benchmark: $BENCH_FRAMES frames through the loop, one core (printed, not asserted)"
    "$TOOL" gen bench --frames 4096 -o "$OUT/bench.pcap" >/dev/null
    for o in "" --no-verify --no-parse; do
        "$OUT/roce_fwd" --no-huge --no-pci -l 0 --log-level=error --file-prefix="roce_fwd_$$" \
            "--vdev=net_pcap0,rx_pcap=$OUT/bench.pcap,infinite_rx=1" -- \
            --frames "$BENCH_FRAMES" $o >"$OUT/bench.json" 2>"$OUT/bench.err"
        python3 - "$OUT/bench.json" "${o:-verify}" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(f"{sys.argv[2]:12s} {r['frames']} frames  wall clock {r['mpps']:.3f} Mpps "
      f"{r['ns'] / r['frames']:.1f} ns/frame  loop thread CPU time {r['mpps_cpu']:.3f} Mpps "
      f"{r['cpu_ns'] / r['frames']:.1f} ns/frame")
PY
    done
fi
echo "dpdk: passed"
