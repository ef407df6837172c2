#!/usr/bin/env bash
# bench/sqlbench.sh: the sql-bench operation suite on InnoDB, MyRocks, MyISAM, Aria (one
# private MariaDB, --engines) and PostgreSQL (a private server), then the side-by-side table
# and the five operations where the engines differ most, with the server counters of each.
#
# Usage:
#   bench/sqlbench.sh                 run everything, print the summary
#   bench/sqlbench.sh --summarize DIR re-print the summary of an earlier run
#
# Environment (all optional):
#   EB_SCALE   --scale of the suite (default 0.01: a few minutes per engine here)
#   EB_OUT     output folder (default enginebench-results/bench-sqlbench-<UTC timestamp>)
#   EB_BIN     an enginebench binary to use instead of building one
set -euo pipefail

cd "$(dirname "$0")/.."
summarize() {
    local out=$1
    local results=("$out"/mariadb/*/result.json "$out"/postgres/*/result.json)
    "$BIN" report "${results[@]}" --format table -o - | tee "$out/table.txt"
    python3 - "${results[@]}" <<'EOF' | tee "$out/differ.txt"
import json, sys
runs = []
for p in sys.argv[1:]:
    d = json.load(open(p))
    for e in d["sqlbench"]["engines"]:
        label = "PostgreSQL" if e["dbms"] == "postgres" else e["engine"]
        runs.append((label, {o["name"]: o for o in e["ops"]}))
# Ratio slowest / fastest over the engines that ran it. Only operations that took at least
# 1 s somewhere, and the fastest counted as at least 0.1 s: below that, timer and scheduling
# noise on a busy machine make ratios meaningless.
rows = []
for name in runs[0][1]:
    ok = [(l, ops[name]) for l, ops in runs if ops.get(name, {}).get("status") == "ok"]
    if len(ok) < 2:
        continue
    w = [o["wall_s"] for _, o in ok]
    if max(w) < 1.0:
        continue
    rows.append((max(w) / max(min(w), 0.1), name, ok))
rows.sort(reverse=True)
keys = ["Innodb_data_fsyncs", "Innodb_os_log_fsyncs", "Innodb_os_log_written", "Innodb_pages_written",
        "Innodb_buffer_pool_write_requests", "Handler_write", "Handler_update", "Handler_delete",
        "Handler_read_key", "Handler_read_next", "Handler_read_rnd_next", "Key_writes",
        "Aria_pagecache_writes", "Rocksdb_wal_synced", "Rocksdb_bytes_written",
        "Opened_tables", "Created_tmp_disk_tables", "Com_create_table", "Com_drop_table",
        "xact_commit", "tup_inserted", "tup_updated", "tup_deleted", "tup_returned", "blks_read",
        "bgwriter.buffers_backend", "bgwriter.buffers_backend_fsync"]
print("\nThe five operations where the engines differ most (slowest / fastest wall seconds):")
for ratio, name, ok in rows[:5]:
    print(f"\n{name}: {ratio:.1f}x")
    for label, o in ok:
        c = o.get("server_counters", {})
        shown = ", ".join(f"{k} {c[k]:.0f}" for k in keys if c.get(k))
        srv = o.get("server_cpu_s")
        srv = f"{srv:.2f}" if srv is not None else "-"
        print(f"  {label:<11} {o['wall_s']:8.2f} s  client cpu {o['usr_s'] + o['sys_s']:.2f}  server cpu {srv}  {shown}")
EOF
}

if [[ ${1:-} == --summarize ]]; then
    BIN=${EB_BIN:-target/release/enginebench}
    summarize "$2"
    exit 0
fi

if [[ -z ${EB_BIN:-} ]]; then
    cargo build --release
    BIN=target/release/enginebench
else
    BIN=$EB_BIN
fi
SCALE=${EB_SCALE:-0.01}
OUT=${EB_OUT:-enginebench-results/bench-sqlbench-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "machine: $(nproc) CPUs, $(grep MemTotal /proc/meminfo | awk '{print $2/1024/1024 " GiB"}')"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: $BIN run sqlbench --scale $SCALE --server mariadb --engines InnoDB,RocksDB,MyISAM,Aria; --server postgres"
} | tee "$OUT/machine.txt"
"$BIN" run sqlbench --scale "$SCALE" --server mariadb --engines InnoDB,RocksDB,MyISAM,Aria \
    --results-dir "$OUT/mariadb" > /dev/null
"$BIN" run sqlbench --scale "$SCALE" --server postgres --results-dir "$OUT/postgres" > /dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"
summarize "$OUT"
