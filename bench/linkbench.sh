#!/usr/bin/env bash
# linkbench.sh: LinkBench load time and request rate on InnoDB, MyRocks and PostgreSQL, each
# on a throwaway private server (`enginebench run --server`), rounds alternating A B C A B C.
#
#   bench/linkbench.sh [MAXID1] [MAXTIME] [ROUNDS] [REQUESTERS]
#
# MAXID1 default 1000001 (1,000,000 nodes), MAXTIME (measured request run) default 60s after
# a 10 s warm-up, ROUNDS default 1, REQUESTERS default 16. Every round loads the graph anew
# (the server is new), so each round gives a load time too. Server memory: 1 GiB buffer pool /
# block cache / shared_buffers (set below), durability settings left at the servers' defaults.
# Prints one line per (round, target): load seconds (rows only: the longest of the three
# tables, which load at the same time; index build excluded) and rows/s per table, requests/s, and the
# per-type p99; then the medians. Results stay under enginebench-results/bench-linkbench/.
set -euo pipefail

MAXID1=${1:-1000001}
MAXTIME=${2:-60s}
ROUNDS=${3:-1}
REQ=${4:-16}
EB=${EB:-$(dirname "$0")/../target/release/enginebench}
OUT=${OUT:-enginebench-results/bench-linkbench}
mkdir -p "$OUT"

targets=(innodb myrocks postgres)
args_for() {
    case $1 in
        innodb) echo "--server mariadb --server-opt innodb_buffer_pool_size=1G --engine InnoDB" ;;
        myrocks) echo "--server mariadb --server-opt rocksdb_block_cache_size=1G --engine RocksDB" ;;
        postgres) echo "--server postgres --server-opt shared_buffers=1GB" ;;
    esac
}

summary() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, target, rnd = sys.argv[1:]
d = json.load(open(path))
load = {l["table"]: l for l in d["load"]}
p = d["points"][0]
r = p["runs"][0]
# The three tables load at the same time (MySQL, PostgreSQL): the rows took the longest of them.
lt = max(l["elapsed_s"] for l in d["load"])
print(f"round {rnd} {target:9} load {lt:7.1f} s  nodes/s {load['nodetable']['rows_per_s']:9.0f}  "
      f"links/s {load['linktable']['rows_per_s']:9.0f}  links {load['linktable']['rows']}  "
      f"requests/s {r['ops_per_s']:8.1f}  errors {r['errors_total']}  client {r['client_cpu']['us_per_op']:.1f} us/op  "
      f"others {r['host_cpu']['others_cpus']:.2f} CPU")
print("   p99 us: " + "  ".join(f"{k} {v['latency_us']['p99_us']}" for k, v in sorted(r["by_kind"].items())))
print(f"RESULT {target} {lt:.2f} {load['linktable']['rows_per_s']:.1f} {r['ops_per_s']:.2f}")
PY
}

log="$OUT/bench-$(date +%Y%m%dT%H%M%S).log"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
for r in $(seq 1 "$ROUNDS"); do
    for t in "${targets[@]}"; do
        dir="$OUT/$t-r$r"
        rm -rf "$dir"
        # shellcheck disable=SC2046
        "$EB" run linkbench $(args_for "$t") --maxid1 "$MAXID1" --requesters "$REQ" \
            --warmup 10s --duration "$MAXTIME" --runs 1 --results-dir "$dir" >/dev/null 2>"$dir.err" \
            || { echo "round $r $t FAILED: $(tail -1 "$dir.err")" | tee -a "$log"; continue; }
        summary "$(ls "$dir"/*/result.json)" "$t" "$r" | tee -a "$log"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
echo "medians (load s, links/s, requests/s):" | tee -a "$log"
for t in "${targets[@]}"; do
    grep "^RESULT $t " "$log" | awk -v t="$t" '
        { l[NR]=$3; k[NR]=$4; q[NR]=$5 }
        function med(a, n,   i, j, x) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) { x=a[i]; a[i]=a[j]; a[j]=x }
                                    return n%2 ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
        END { if (NR) printf "%-9s %8.1f %10.0f %10.1f  (%d rounds)\n", t, med(l,NR), med(k,NR), med(q,NR), NR }' | tee -a "$log"
done
