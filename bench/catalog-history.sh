#!/usr/bin/env bash
# catalog-history.sh: how long does `enginebench history` take over a catalog of 10,000
# results (issue 36: under 1 s on the lab machine)?
#
#   bench/catalog-history.sh [WORKDIR] [N]
#
# Runs one real micro-read result on SQLite (4 queries x 2 thread counts, 3 runs, so 8
# points per result), writes N copies of it that differ only in their start time (so each is
# a result of its own to the catalog), imports them into a fresh SQLite catalog, then times
# `history` (the whole table, and filtered by operation, threads and --last) five times each
# and prints the median. The copies' numbers are repeated, not measured: only the catalog's
# size and the query time are the point here.
set -euo pipefail

EB=${EB:-target/release/enginebench}
W=${1:-$(mktemp -d /tmp/eb-catalog-bench.XXXX)}
N=${2:-10000}
mkdir -p "$W"
export ENGINEBENCH_CATALOG="$W/catalog.db"
rm -f "$ENGINEBENCH_CATALOG"*

"$EB" run micro-read --target "sqlite://$W/mr.db" --table-size 20k --threads 1,4 --runs 3 --queries READ_PK_POINT,READ_KEY_POINT,READ_PK_RANGE,READ_KEY_RANGE \
  --duration 100ms --warmup 0 --results-dir "$W/mr" --no-catalog >/dev/null 2>"$W/log"
one=$(find "$W/mr" -name result.json | head -1)

python3 - "$one" "$W/copies" "$N" <<'PY'
import datetime, json, os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(src))
t0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
for i in range(n):
    d = os.path.join(out, f"{i // 1000:02d}", f"r{i:05d}")
    os.makedirs(d, exist_ok=True)
    # One result an hour: 10,000 of them span about 14 months of nightly-and-more runs.
    t = t0 + datetime.timedelta(hours=i)
    doc["started_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    # Two configurations, one setting apart, for `--where`.
    doc["target"]["settings"] = {"buffer": "2G" if i % 2 else "1G"}
    json.dump(doc, open(os.path.join(d, "result.json"), "w"))
PY

start=$(date +%s.%N)
"$EB" history import "$W/copies" 2>&1 | tail -1
echo "import of $N results: $(echo "$(date +%s.%N) - $start" | bc) s"
ls -la "$ENGINEBENCH_CATALOG" | awk '{printf "catalog file: %.1f MiB\n", $5/1048576}'

# The median of five: wall time, and the CPU time (user + sys) of the command, which is what
# it costs when the machine is shared (on a busy machine the wall time is mostly waiting).
median() {
  local label=$1; shift
  local rows=()
  for _ in 1 2 3 4 5; do
    rows+=("$( { TIMEFORMAT='%R %U %S'; time "$EB" history "$@" > "$W/out.txt"; } 2>&1 | tail -1)")
  done
  printf '%s\n' "${rows[@]}" | awk '{print $1, $2 + $3}' | sort -n | sed -n 3p |
    { read -r wall cpu; printf "%-52s median wall %.3f s, cpu %.3f s, %s lines\n" "$label" "$wall" "$cpu" "$(wc -l < "$W/out.txt")"; }
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
median "history (all points, table)"
median "history --format json (all points)" --format json
median "history --operation READ_PK_POINT --threads 4" --operation READ_PK_POINT --threads 4
median "history --last 20" --last 20
median "history --where buffer=2G --last 5" --where buffer=2G --last 5
median "history --where buffer=2G (half the points)" --where buffer=2G
