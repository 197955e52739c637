#!/usr/bin/env bash
# Rebuilds or refreshes the committed corpus (corpus/<target>/), then the coverage figure in
# fuzz/README.md.
#
#   bash fuzz/corpus.sh                 minimise corpus/<target> as it is
#   bash fuzz/corpus.sh --seeds         first regenerate the seeds (captures + builder)
#   bash fuzz/corpus.sh DIR...          also merge DIR/<target> (e.g. a long run's output)
#
# Minimising is libFuzzer's merge into an empty folder with -use_counters=0 (an input is kept
# for the edges it adds, not for hit counts, which keeps hundreds of files instead of
# thousands), inputs cut at 4 KiB for the conformance target; then `seeds --top-up` puts back
# the builder seed of every opcode (and CM message) that minimising dropped.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
targets=${FUZZ_TARGETS:-"ethernet udp_payload rocev1 roundtrip icrc cm_mad capture conformance expect_file ffi"}
extra=()
for a in "$@"; do
    if [ "$a" = --seeds ]; then
        (cd fuzz && cargo run --release -q -p roce-fuzz-tools --bin seeds)
    else
        extra+=("$a")
    fi
done
cargo fuzz build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in $targets; do
    args=(-merge=1 -use_counters=0)
    if [ "$t" = conformance ]; then
        args+=(-max_len=4096)
    fi
    inputs=("corpus/$t")
    for d in "${extra[@]}"; do
        if [ -d "$d/$t" ]; then
            inputs+=("$d/$t")
        fi
    done
    mkdir -p "$work/$t"
    cargo fuzz run "$t" "$work/$t" "${inputs[@]}" -- "${args[@]}" >"$work/$t.log" 2>&1 || {
        tail -n 40 "$work/$t.log"
        exit 1
    }
    rm -rf "corpus/$t"
    mv "$work/$t" "corpus/$t"
    echo "$t: $(find "corpus/$t" -type f | wc -l) files"
done
(cd fuzz && cargo run --release -q -p roce-fuzz-tools --bin seeds -- --top-up)
(cd fuzz && cargo run --release -q -p roce-fuzz-tools --bin coverage -- --readme)
