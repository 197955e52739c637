#!/usr/bin/env bash
# What `-Y EXPR` costs: `dissect` and `check` with and without a filter on one generated
# capture, counted in instructions by callgrind (repeatable on a loaded machine) and timed
# (best of --runs), in one run. Usage: bench/filter.sh [--bin PATH] [--frames N] [--runs R]
# (a release build: cargo build --release -p roce-inspect). Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/roce-inspect
frames=50000
runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cap=$dir/bench.pcap
"$bin" gen bench --frames "$frames" -o "$cap"

# A filter of the issue's shape (three comparisons, && and ||) that keeps few frames, and a
# presence test that keeps about half: the evaluation runs on every frame either way.
y1='bth.dest_qp == 0x8005 && bth.psn >= 1000 || icrc.status == "bad" || problem == "pad_nonzero"'
y2='aeth'
cases=(
    "dissect#dissect $cap"
    "dissect --qp 0x8005#dissect --qp 0x8005 $cap"
    "dissect -Y '$y1'#dissect -Y $y1 $cap"
    "dissect -Y aeth#dissect -Y $y2 $cap"
    "dissect --format jsonl#dissect --format jsonl $cap"
    "dissect --format jsonl -Y '$y1'#dissect --format jsonl -Y $y1 $cap"
    "check#check $cap"
    "check -Y '$y1'#check -Y $y1 $cap"
)
printf '| command (%s frames) | instructions | per frame | best of %s (s) | lines out |\n|---|---:|---:|---:|---:|\n' "$frames" "$runs"
for c in "${cases[@]}"; do
    name=${c%%#*}
    name=${name//|/\\|}
    args=${c#*#}
    # Split on spaces except inside the filter: rebuild the argument vector.
    read -r -a argv <<<"${args%% -Y *}"
    if [[ $args == *" -Y "* ]]; then
        rest=${args#* -Y }
        expr=${rest% "$cap"}
        argv+=(-Y "$expr" "$cap")
    fi
    out=$dir/cg.out
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "${argv[@]}" >"$dir/stdout" 2>/dev/null || true
    ins=$(sed -n 's/^summary: //p' "$out")
    lines=$(wc -l <"$dir/stdout")
    best=
    for _ in $(seq "$runs"); do
        s=$(date +%s.%N)
        "$bin" "${argv[@]}" >/dev/null 2>&1 || true
        e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc)
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
    done
    printf '| `%s` | %s | %s | %.3f | %s |\n' "$name" "$ins" "$((ins / frames))" "$best" "$lines"
done
