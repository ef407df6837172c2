#!/usr/bin/env bash
# write-path.sh: the compression table and the schema-change stalls of issue 6, on private
# throwaway servers that enginebench starts itself (--server), plus embedded SQLite.
#
#   bash bench/write-path.sh [OUT_DIR]
#
# Env: EB (binary, default target/release/enginebench), ROWS_COMP (compression rows, 100000),
# ROWS_SC (schema-change table rows, 200000), THREADS (4), T1/T2 (schema-change windows, 5s).
# Prints the load average before and after; results (JSON + HTML) land under OUT_DIR.
set -euo pipefail
EB=${EB:-target/release/enginebench}
OUT=${1:-enginebench-results/write-path}
ROWS_COMP=${ROWS_COMP:-100000}
ROWS_SC=${ROWS_SC:-200000}
THREADS=${THREADS:-4}
T1=${T1:-5s}
T2=${T2:-5s}
mkdir -p "$OUT"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
date -u +"start %Y-%m-%dT%H:%M:%SZ"

# Compression: every format of the server, then a 3 s read/write run (4 threads) per format.
for srv in mariadb postgres; do
  "$EB" run compression --server "$srv" --table-size "$ROWS_COMP" --threads "$THREADS" \
    --warmup 1s --duration 3s --runs 1 --results-dir "$OUT" 2>/dev/null | sed -n '/^compression:/,$p'
done
"$EB" run compression --target "sqlite://$OUT/comp.db" --table-size "$ROWS_COMP" --threads "$THREADS" \
  --warmup 1s --duration 3s --runs 1 --results-dir "$OUT" 2>/dev/null | sed -n '/^compression:/,$p'

# Schema change: oltp_insert for T1, ADD COLUMN, T2, DROP COLUMN, T2; per engine and algorithm.
for engine in InnoDB ROCKSDB Aria MyISAM; do
  "$EB" run schema-change --server mariadb --engine "$engine" --table-size "$ROWS_SC" \
    --threads "$THREADS" --before "$T1" --after "$T2" --report-interval 200ms --results-dir "$OUT" \
    2>/dev/null | sed -n '/^schema-change timelines/,$p'
done
"$EB" run schema-change --server postgres --table-size "$ROWS_SC" --threads "$THREADS" \
  --before "$T1" --after "$T2" --report-interval 200ms --results-dir "$OUT" 2>/dev/null \
  | sed -n '/^schema-change timelines/,$p'
"$EB" run schema-change --target "sqlite://$OUT/sc.db" --table-size "$ROWS_SC" --threads "$THREADS" \
  --before "$T1" --after "$T2" --report-interval 200ms --results-dir "$OUT" 2>/dev/null \
  | sed -n '/^schema-change timelines/,$p'

date -u +"end %Y-%m-%dT%H:%M:%SZ"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
