#!/usr/bin/env bash
# roce-inspect against tshark on generated captures (BENCHMARKS.md).
#
#   bench/compare.sh [--frames "200000 2000000"] [--tshark-json-max N] [--runs N] [--out DIR]
#
# For each size: generates the capture with `roce-inspect gen bench`, then times, on one core
# (taskset -c 0) and in one run, `roce-inspect stats`, `check` and `dissect --format jsonl`
# next to `tshark -T fields` (3 fields) and `tshark -T json`, all writing to /dev/null.
# /usr/bin/time -v gives wall clock, CPU time and peak RSS. roce-inspect runs --runs times
# (default 3) and keeps its fastest run; tshark runs once (minutes). tshark -T json runs only
# on captures of at most --tshark-json-max frames (default 200000: it needs about 3 minutes
# per 200,000 frames here); on bigger ones its time is extrapolated linearly from the biggest
# size it ran on, and the table says so.
#
# Needs: cargo, tshark, GNU time (/usr/bin/time; apt-get install time), taskset (optional).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="200000 2000000"
json_max=200000
runs=3
out=target/bench-compare
while [ $# -gt 0 ]; do
  case "$1" in
    --frames) sizes="$2"; shift 2 ;;
    --tshark-json-max) json_max="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in tshark /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found" >&2; exit 2; }
done
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi

cargo build --release -q -p roce-inspect
bin="$PWD/target/release/roce-inspect"
mkdir -p "$out"

# measure NAME CMD...: runs CMD (stdout to /dev/null), appends "NAME wall cpu rss_kb" to
# $out/times.txt. The exit status of CMD is ignored (check exits 1 on error findings).
measure() {
  local name="$1"; shift
  local log="$out/time.log"
  /usr/bin/time -v -o "$log" "${pin[@]}" "$@" >/dev/null 2>>"$out/stderr.log" || true
  local wall user sys rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
  user=$(awk -F': ' '/User time/ {print $2}' "$log")
  sys=$(awk -F': ' '/System time/ {print $2}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  echo "$name $wall $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}') $rss" >> "$out/times.txt"
}

# best NAME RUNS CMD...: measure RUNS times, keep the fastest wall clock.
best() {
  local name="$1" n="$2"; shift 2
  local i
  for i in $(seq 1 "$n"); do measure "$name#$i" "$@"; done
  grep "^$name#" "$out/times.txt" | sort -k2 -n | head -1 | sed "s/#[0-9]*//" >> "$out/best.txt"
}

: > "$out/times.txt"; : > "$out/best.txt"; : > "$out/stderr.log"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "tshark:  $(tshark --version 2>/dev/null | head -1)"
echo "pinned:  ${pin[*]:-no (taskset missing)}"
echo

for n in $sizes; do
  cap="$out/bench-$n.pcap"
  [ -s "$cap" ] || "$bin" gen bench -o "$cap" --frames "$n" >/dev/null
  echo "== $n frames, $(du -h "$cap" | cut -f1)"
  best "stats/$n" "$runs" "$bin" stats "$cap"
  best "check/$n" "$runs" "$bin" check "$cap"
  best "jsonl/$n" "$runs" "$bin" dissect --format jsonl "$cap"
  best "tshark-fields/$n" 1 tshark -n -r "$cap" -T fields \
    -e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp
  if [ "$n" -le "$json_max" ]; then
    best "tshark-json/$n" 1 tshark -n -r "$cap" -T json
  fi
done

# The table and the ratios.
awk -v sizes="$sizes" -v json_max="$json_max" '
  { split($1, k, "/"); wall[k[1], k[2]] = $2; cpu[k[1], k[2]] = $3; rss[k[1], k[2]] = $4 }
  END {
    n = split(sizes, sz, " ")
    # tshark -T json beyond json_max: linear from the largest size it ran on.
    base = 0
    for (i = 1; i <= n; i++) if (sz[i] <= json_max && sz[i] > base) base = sz[i]
    for (i = 1; i <= n; i++) if (!(("tshark-json", sz[i]) in wall) && base > 0) {
      f = sz[i] / base
      wall["tshark-json", sz[i]] = wall["tshark-json", base] * f
      cpu["tshark-json", sz[i]] = cpu["tshark-json", base] * f
      est[sz[i]] = 1
    }
    printf "\n%-16s %10s %10s %10s %12s %12s\n", "command", "frames", "wall s", "cpu s", "frames/s", "peak RSS MB"
    split("stats check jsonl tshark-fields tshark-json", tools, " ")
    for (i = 1; i <= n; i++) for (t = 1; t <= 5; t++) {
      name = tools[t]; s = sz[i]
      if (!((name, s) in wall)) continue
      mark = (name == "tshark-json" && (s in est)) ? " (extrapolated)" : ""
      printf "%-16s %10d %10.2f %10.2f %12.0f %12s%s\n", name, s, wall[name, s], cpu[name, s], \
        s / wall[name, s], ((name, s) in rss) ? sprintf("%.1f", rss[name, s] / 1024) : "-", mark
    }
    printf "\nratios (tshark time / roce-inspect time; see BENCHMARKS.md):\n"
    for (i = 1; i <= n; i++) {
      s = sz[i]; e = (s in est) ? ", tshark -T json extrapolated" : ""
      jw = (("tshark-json", s) in wall) ? sprintf("%.0fx", wall["tshark-json", s] / wall["jsonl", s]) : "n/a"
      jc = (("tshark-json", s) in wall) ? sprintf("%.0fx", cpu["tshark-json", s] / cpu["jsonl", s]) : "n/a"
      printf "  %d frames: stats %.0fx (>= 50x), check %.0fx (>= 30x) vs tshark -T fields; dissect --format jsonl %s (>= 100x) vs tshark -T json  [wall clock%s]\n", \
        s, wall["tshark-fields", s] / wall["stats", s], wall["tshark-fields", s] / wall["check", s], jw, e
      printf "  %d frames: stats %.0fx, check %.0fx, dissect --format jsonl %s  [CPU time%s]\n", \
        s, cpu["tshark-fields", s] / cpu["stats", s], cpu["tshark-fields", s] / cpu["check", s], jc, e
    }
    if (n >= 2) printf "  check peak RSS: %.1f MB at %d frames, %.1f MB at %d frames: %.2fx (<= 1.5x)\n", \
      rss["check", sz[1]] / 1024, sz[1], rss["check", sz[n]] / 1024, sz[n], rss["check", sz[n]] / rss["check", sz[1]]
  }' "$out/best.txt"
