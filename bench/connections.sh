#!/usr/bin/env bash
# `stats` and `check` over many connections, and `check` on 2,000,000 frames, for the
# connection model (BENCHMARKS.md "Connections"). Two binaries can be compared in one run:
#
#   bench/connections.sh [--old PATH] [--frames N] [--conns "1000 10000 100000 200000"] [--runs N]
#
# Each capture is generated once with `roce-inspect gen bench` (N frames over C connections
# between host pairs), then each command runs --runs times (default 3) pinned to one core;
# the fastest wall clock and its peak RSS (GNU time) are kept; a run over 120 s is cut
# (shown as 120 s). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."

old=""
frames=400000
conns="1000 10000 100000 200000"
runs=3
out=target/bench-connections
while [ $# -gt 0 ]; do
  case "$1" in
    --old) old="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --conns) conns="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v /usr/bin/time >/dev/null || { echo "connections.sh: /usr/bin/time not found" >&2; exit 2; }
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
cargo build --release -q -p roce-inspect
new=target/release/roce-inspect
mkdir -p "$out"

# best WALL RSS over $runs runs of "$@"
best() {
  local b="" rss=""
  for _ in $(seq "$runs"); do
    : > "$out/time"
    timeout 120 "${pin[@]}" /usr/bin/time -f '%e %M' -o "$out/time" "$@" >/dev/null 2>&1 || true
    if ! read -r w m < <(grep -E '^[0-9.]+ [0-9]+$' "$out/time"); then
      echo "> 120 ?"; return
    fi
    if [ -z "$b" ] || awk -v a="$w" -v b="$b" 'BEGIN{exit !(a<b)}'; then b=$w; rss=$m; fi
  done
  echo "$b $((rss / 1024))"
}

row() { # label binary file
  local s c
  s=$(best "$2" stats "$3"); c=$(best "$2" check "$3")
  printf '| %s | %s s | %s MB | %s s | %s MB |\n' "$1" ${s% *} ${s#* } ${c% *} ${c#* }
}

echo "| connections ($frames frames) | stats | stats RSS | check | check RSS |"
echo "|---|---|---|---|---|"
for c in $conns; do
  f="$out/bench-$frames-$c.pcap"
  [ -f "$f" ] || "$new" gen bench -o "$f" --frames "$frames" --connections "$c" >/dev/null
  row "$c" "$new" "$f"
  if [ -n "$old" ]; then row "$c (before)" "$old" "$f"; fi
done
f="$out/bench-2000000.pcap"
[ -f "$f" ] || "$new" gen bench -o "$f" --frames 2000000 >/dev/null
echo
echo "| check, 2,000,000 frames | wall | RSS |"
echo "|---|---|---|"
r=$(best "$new" check "$f"); echo "| this tree | ${r% *} s | ${r#* } MB |"
if [ -n "$old" ]; then r=$(best "$old" check "$f"); echo "| before | ${r% *} s | ${r#* } MB |"; fi
