#!/usr/bin/env bash
# --threads 1 against --threads 2 on one generated capture (BENCHMARKS.md, "Threads").
#
#   bench/threads.sh [--frames 2000000] [--runs 3] [--out DIR] [--bin PATH]
#
# Generates the capture with `roce-inspect gen bench` into --out (default
# /tmp/roce-inspect-threads; removed at the end unless --keep), then times in one run, each
# --runs times (the fastest kept), `cat FILE > /dev/null` and `stats`, `check`,
# `dissect` (text), `dissect --format jsonl` and `export -o DIR` with --threads 1 and 2, all
# writing to /dev/null. /usr/bin/time -v gives wall clock, user CPU and peak RSS; the load
# average (/proc/loadavg, 1 minute) at the start of each run is printed beside it, since the
# machine may be shared.
#
# Needs: cargo, GNU time (/usr/bin/time; apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

frames=2000000
runs=3
out=/tmp/roce-inspect-threads
bin=target/release/roce-inspect
keep=false
while [ $# -gt 0 ]; do
  case "$1" in
    --frames) frames="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --keep) keep=true; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v /usr/bin/time >/dev/null || { echo "threads.sh: /usr/bin/time not found" >&2; exit 2; }
[ -x "$bin" ] || cargo build --release -q -p roce-inspect

mkdir -p "$out"
cap="$out/bench-$frames.pcap"
[ -f "$cap" ] || "$bin" gen bench --frames "$frames" --connections 64 -o "$cap"
cat "$cap" > /dev/null # into the page cache

# time_it LABEL CMD...: the fastest of $runs runs, as "| label | wall | user | RSS | load |".
time_it() {
  local label="$1"; shift
  : > "$out/runs.txt"
  for _ in $(seq "$runs"); do
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$out/time.txt" "$@" > /dev/null 2> "$out/stderr.txt" || true
    awk -F': ' -v load="$load" '
      /Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; wall=s}
      /User time/ {user=$2}
      /Maximum resident/ {rss=$2/1024}
      END {printf "%.2f %s %.1f %s\n", wall, user, rss, load}' "$out/time.txt" >> "$out/runs.txt"
  done
  sort -n "$out/runs.txt" | head -1 |
    awk -v l="$label" '{printf "| %s | %s s | %s s | %s MB | %s |\n", l, $1, $2, $3, $4}'
}

echo "capture: $cap ($frames frames, $(du -h "$cap" | cut -f1)); $(nproc) cores; $(date -u +%H:%M) UTC"
echo "| command | wall | user CPU | peak RSS | load (1 min) |"
echo "|---|---:|---:|---:|---:|"
time_it "cat FILE > /dev/null" cat "$cap"
for n in 1 2; do
  time_it "stats --threads $n" "$bin" stats --threads "$n" "$cap"
  time_it "check --threads $n" "$bin" check --threads "$n" "$cap"
  time_it "dissect --threads $n" "$bin" dissect --threads "$n" "$cap"
  time_it "dissect --format jsonl --threads $n" "$bin" dissect --format jsonl --threads "$n" "$cap"
  time_it "export --threads $n" "$bin" export --threads "$n" -o "$out/export-$n" "$cap"
done
if ! $keep; then rm -rf "$out"; fi
