#!/usr/bin/env bash
# The CI fuzz step (.ci/run calls `bash fuzz/ci.sh`):
#  1. replays the committed corpus through every target on stable Rust and checks the
#     coverage figure (every opcode of the table reached; fuzz/README.md up to date);
#  2. installs cargo-fuzz if missing and builds every target once with
#     .clusterfuzzlite/build.sh, which checks what ClusterFuzzLite would get (RUSTC_BOOTSTRAP=1
#     lets the stable toolchain take cargo-fuzz's nightly flags);
#  3. fuzzes each target for FUZZ_SECONDS (default 30) from a copy of corpus/<target>, so the
#     committed corpus is never modified; prints executions per second;
#  4. on a crash prints the panic, the artifact path and its bytes in hex, and exits 1 after
#     the remaining targets ran.
# Environment: FUZZ_SECONDS (per target), FUZZ_TARGETS (space-separated subset),
# FUZZ_SKIP_REPLAY=1 (skip step 1).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CARGO_TERM_COLOR=never
export RUSTC_BOOTSTRAP=1
seconds=${FUZZ_SECONDS:-30}
all_targets="ethernet udp_payload rocev1 roundtrip icrc cm_mad capture conformance sharded_checker expect_file ffi annotate segments frame_list nic_counters filter write_capture encap infiniband merge tap_options"
targets=${FUZZ_TARGETS:-$all_targets}
start=$(date +%s)

echo "--- fuzz: corpus replay and coverage figure (stable)"
if [ "${FUZZ_SKIP_REPLAY:-0}" != 1 ]; then
    cargo test --manifest-path fuzz/Cargo.toml -p roce-fuzz-common -p roce-fuzz-tools
fi

echo "--- fuzz: cargo-fuzz"
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
cargo fuzz --version

echo "--- fuzz: build every target (.clusterfuzzlite/build.sh, ClusterFuzzLite's build, checked)"
# The same build and $OUT ClusterFuzzLite makes, checked against fuzz/Cargo.toml, corpus/ and
# dict_of; `cargo fuzz run` below reuses the binaries (the same flags: nothing is rebuilt).
cfl_out=$(mktemp -d)
OUT="$cfl_out" FUZZ_CI_TARGETS="$all_targets" bash .clusterfuzzlite/build.sh
rm -rf "$cfl_out"

# The dictionary of a target, if it has one. .clusterfuzzlite/build.sh and check.sh read this
# function from here (from `dict_of() {` to the first `}` at the start of a line).
dict_of() {
    case "$1" in
        ethernet | icrc | rocev1 | conformance | sharded_checker | ffi | segments | encap | infiniband) echo "fuzz/dict/frames.dict" ;;
        expect_file) echo "fuzz/dict/expect_file.dict" ;;
        capture | annotate | write_capture | merge) echo "fuzz/dict/capture.dict" ;;
        cm_mad) echo "fuzz/dict/cm_mad.dict" ;;
        *) echo "" ;;
    esac
}

# The first 4 KiB of a file in hex (no pipe into head: pipefail would fail on SIGPIPE).
hexdump_file() {
    if command -v xxd >/dev/null 2>&1; then
        xxd -l 4096 "$1"
    else
        od -A x -t x1z -v -N 4096 "$1"
    fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=""
summary=""
for t in $targets; do
    echo "--- fuzz: $t for ${seconds}s"
    corpus="$work/corpus-$t"
    mkdir -p "$corpus"
    if [ -d "corpus/$t" ]; then
        cp -R "corpus/$t/." "$corpus/"
    fi
    seeds=$(find "$corpus" -type f | wc -l | tr -d ' ')
    artifacts="$root/fuzz/artifacts/$t"
    rm -rf "$artifacts"
    mkdir -p "$artifacts"
    args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1)
    dict=$(dict_of "$t")
    if [ -n "$dict" ]; then
        args+=(-dict="$root/$dict")
    fi
    log="$work/$t.log"
    status=0
    cargo fuzz run "$t" "$corpus" -- "${args[@]}" >"$log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    found=$(find "$corpus" -type f | wc -l | tr -d ' ')
    line=$(printf '%-12s seeds %5s  corpus after %5s  executions %9s  exec/s %6s' \
        "$t" "$seeds" "$found" "${execs:-?}" "${rate:-?}")
    if [ "$status" -ne 0 ]; then
        failed="$failed $t"
        line="$line  FAILED"
        echo "$t: FAILED (exit $status):"
        # The panic (or sanitizer error) and libFuzzer's verdict; the full log is long (stack
        # frames, the input's Debug dump), the hex below shows the input.
        grep -E -A4 'panicked at|ERROR: AddressSanitizer|ERROR: libFuzzer|^error' "$log" |
            cut -c1-300 | head -n 40 || true
        grep -E 'SUMMARY|Test unit written|^Error:' "$log" | cut -c1-300 || true
        for a in "$artifacts"/*; do
            [ -f "$a" ] || continue
            echo "reproducer: $a ($(wc -c <"$a" | tr -d ' ') bytes)"
            echo "  replay: RUSTC_BOOTSTRAP=1 cargo fuzz run $t $a"
            hexdump_file "$a"
        done
    fi
    echo "$line"
    summary="$summary$line"$'\n'
done

echo "--- fuzz: summary (${seconds}s per target, $(($(date +%s) - start))s in all)"
printf '%s' "$summary"
if [ -n "$failed" ]; then
    echo "fuzz: crash in:$failed"
    exit 1
fi
echo "fuzz: no crash"
