#!/usr/bin/env bash
# iibench-engines.sh: iiBench (3 secondary indexes, 1000 rows per commit, one insert
# connection) on a throwaway private MariaDB per engine (enginebench run --server mariadb), each
# bounded by time; prints per engine the rows inserted, the curve's first and last window rates,
# server bytes written per row (run, and total after the final forced flush), write
# amplification, disk growth per row and the device's average write size (device-wide).
#
#   bench/iibench-engines.sh [DURATION] [WINDOW_ROWS] [ENGINES]
#
# DURATION default 3m, WINDOW_ROWS default 100000, ENGINES default "InnoDB RocksDB Aria".
# Result folders stay under enginebench-results/iibench-engines/.
set -euo pipefail

DUR=${1:-3m}
WIN=${2:-100000}
ENGINES=${3:-InnoDB RocksDB Aria}
EB=${EB:-$(dirname "$0")/../target/release/enginebench}
DIR=enginebench-results/iibench-engines

for e in $ENGINES; do
    echo "== $e: load average $(cut -d' ' -f1-3 /proc/loadavg)"
    "$EB" run iibench --server mariadb --engine "$e" --duration "$DUR" --window-rows "$WIN" \
        --results-dir "$DIR/$e" --format json >"$DIR-$e.json" 2>"$DIR-$e.err" || {
        tail -3 "$DIR-$e.err"
        continue
    }
    python3 - "$DIR-$e.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["points"][0]
ii, run = p["iibench"], p["runs"][0]
w, full = ii["wear"], [x for x in ii["windows"] if not x["partial"]]
f = lambda v, fmt="%.0f": "-" if v is None else fmt % v
print("rows %d in %.0f s = %.0f rows/s; windows %d: first %s, last %s rows/s" % (
    ii["rows"], ii["elapsed_s"], ii["rows_per_s"], len(ii["windows"]),
    f(full[0]["rows_per_s"] if full else None), f(ii.get("last_window_rows_per_s"))))
print("curve (rows_end: rows/s, B written/row):", ", ".join(
    "%d: %.0f, %s" % (x["rows_end"], x["rows_per_s"], f(x.get("written_bytes_per_row"))) for x in ii["windows"]))
print("server wrote %s B/row in the run, %s B/row with the final flush; write amplification %s" % (
    f(w.get("server_written_bytes_run") and w["server_written_bytes_run"] / max(ii["rows"], 1)),
    f(w.get("written_bytes_per_row")), f(w.get("write_amplification"), "%.1f")))
print("disk growth %s B/row (space amplification %s); device %s avg write %s B (device-wide)" % (
    f(w.get("disk_growth_bytes_per_row")), f(w.get("space_amplification"), "%.2f"),
    (w.get("device") or {}).get("device", "-"), f((w.get("device") or {}).get("avg_write_bytes"))))
print("client %.1f us/batch, server %s us/batch; others used %.2f CPUs (disturbed: %s)" % (
    run["client_cpu"]["us_per_op"], f((run.get("server_process") or {}).get("cpu_us_per_op")),
    run["host_cpu"]["others_cpus"], run["disturbed"]))
PY
done
