#!/usr/bin/env bash
# Two builds of roce-inspect, run for run, on one generated capture (BENCHMARKS.md, "One
# connection model per pass"): `stats`, `check`, `report` and `export`, each --runs times per
# build, alternating the builds so that a change of load hits both; the median wall clock,
# user CPU and peak RSS of each, and the ratios `report`/`check` per build and after/before
# per command. With --callgrind, also the instructions per frame of each command on a
# capture of --callgrind-frames frames (callgrind counts instructions: the load does not
# change them).
#
#   bench/one-model.sh --before BIN --after BIN [--frames 2000000] [--runs 5]
#                      [--callgrind] [--callgrind-frames 100000] [--out DIR]
#
# The capture comes from `gen bench --connections 64` of the --after build. Needs GNU time
# (/usr/bin/time) and, for --callgrind, valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

before=""
after=""
frames=2000000
runs=5
out=/tmp/roce-inspect-one-model
callgrind=false
cg_frames=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --before) before="$2"; shift 2 ;;
    --after) after="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --callgrind) callgrind=true; shift ;;
    --callgrind-frames) cg_frames="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "one-model.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$before" ] && [ -x "$after" ] || { echo "one-model.sh: --before and --after name two roce-inspect binaries" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "one-model.sh: /usr/bin/time not found" >&2; exit 2; }

mkdir -p "$out"
cap="$out/bench-$frames.pcap"
[ -f "$cap" ] || "$after" gen bench --frames "$frames" --connections 64 -o "$cap"
cat "$cap" > /dev/null # into the page cache

# The commands, as "name|arguments" (FILE is the capture, OUT a folder per run).
cmds=(
  "stats|stats FILE --format json"
  "check|check FILE --format json"
  "report|report FILE -o OUT/report.html"
  "export|export FILE -o OUT/export"
)

# The arguments of command "name|arguments" on capture $2 with output folder $3.
expand() {
  local args="${1#*|}"
  args="${args//FILE/$2}"
  echo "${args//OUT/$3}"
}

results="$out/results.txt"
: > "$results"
for ((r = 1; r <= runs; r++)); do
  for c in "${cmds[@]}"; do
    name="${c%%|*}"
    for build in before after; do
      bin="${!build}"
      dir="$out/run-$build"
      rm -rf "$dir" && mkdir -p "$dir/export"
      args=$(expand "$c" "$cap" "$dir")
      load=$(cut -d' ' -f1 /proc/loadavg)
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %U %M" -o "$out/time" "$bin" $args > /dev/null 2>"$out/stderr" || {
        code=$?
        # check exits 1 when it finds errors: not a failure of the run.
        [ "$name" = check ] && [ $code -eq 1 ] || { cat "$out/stderr" >&2; exit 1; }
      }
      read -r wall user rss < <(tail -1 "$out/time")
      echo "$name $build $wall $user $rss $load" >> "$results"
    done
  done
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "capture: $frames frames ($(du -h "$cap" | cut -f1)), $runs runs per command and build, alternating"
printf '%-8s %-7s %10s %10s %12s\n' command build "wall (s)" "user (s)" "peak RSS (MB)"
for c in "${cmds[@]}"; do
  name="${c%%|*}"
  for build in before after; do
    w=$(awk -v n="$name" -v b="$build" '$1==n && $2==b {print $3}' "$results" | median)
    u=$(awk -v n="$name" -v b="$build" '$1==n && $2==b {print $4}' "$results" | median)
    m=$(awk -v n="$name" -v b="$build" '$1==n && $2==b {print $5}' "$results" | median)
    printf '%-8s %-7s %10s %10s %12.1f\n' "$name" "$build" "$w" "$u" "$(echo "$m / 1024" | bc -l)"
    eval "wall_${name}_${build}=$w"
  done
done
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "report / check (wall): before $(ratio "$wall_report_before" "$wall_check_before")x, after $(ratio "$wall_report_after" "$wall_check_after")x"
for c in "${cmds[@]}"; do
  name="${c%%|*}"
  b="wall_${name}_before"
  a="wall_${name}_after"
  echo "$name before / after (wall): $(ratio "${!b}" "${!a}")x"
done
echo "load average (1 min) at the runs' starts: $(awk '{print $6}' "$results" | sort -n | head -1) to $(awk '{print $6}' "$results" | sort -n | tail -1)"

if $callgrind; then
  command -v valgrind >/dev/null || { echo "one-model.sh: valgrind not found" >&2; exit 2; }
  small="$out/bench-$cg_frames.pcap"
  [ -f "$small" ] || "$after" gen bench --frames "$cg_frames" --connections 64 -o "$small"
  echo "instructions per frame (callgrind, $cg_frames frames):"
  for c in "${cmds[@]}"; do
    name="${c%%|*}"
    line="$name"
    for build in before after; do
      bin="${!build}"
      dir="$out/cg-$build"
      rm -rf "$dir" && mkdir -p "$dir/export"
      args=$(expand "$c" "$small" "$dir")
      # shellcheck disable=SC2086
      valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" $args > /dev/null 2>"$out/cg.err" || true
      ir=$(grep -m1 '^summary:' "$out/cg.out" | awk '{print $2}')
      line="$line  $build $(echo "$ir / $cg_frames" | bc)"
    done
    echo "  $line"
  done
fi
