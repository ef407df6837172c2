#!/usr/bin/env bash
# bench/cluster.sh: oltp_read_write on one private MariaDB against a private 3-node Galera
# cluster on the same machine (issue 23). Not a test.
#
# Both are started by enginebench for each run (`--server mariadb:small` with the two
# settings Galera needs, and `--server mariadb-galera:3`), the runs alternate A B A B ... so that a slow phase of the machine hits both, and the medians
# over the rounds are reported:
#   - throughput: transactions per second (the run's ops_per_s);
#   - commit latency p99: the p99 of the whole transaction (sysbench's event ends with its
#     COMMIT; on Galera the commit waits for certification by the cluster), µs;
#   - conflicts per 1,000 transactions: deadlock-class errors (Galera reports a certification
#     failure or a brute-force abort as error 1213) per 1,000 transactions attempted
#     (committed + failed); and the cluster's own count (wsrep_local_cert_failures +
#     wsrep_local_bf_aborts summed over the nodes) per 1,000 attempted.
# The single server gets the same settings as the Galera nodes (binlog_format=ROW,
# innodb_autoinc_lock_mode=2, the small profile's caches) so that the difference is the
# cluster. All nodes share this machine's CPUs: Galera's figures include three servers'
# CPU on the same cores, which a real cluster spreads over machines.
#
# Usage:
#   bench/cluster.sh
#
# Environment (all optional):
#   EB_BIN      enginebench binary (default: target/release/enginebench, built if missing)
#   EB_ROUNDS   A B rounds (default 3)
#   EB_THREADS  connections (default 6: 2 per Galera node)
#   EB_ROWS     rows in sbtest1 (default 10000; fewer rows, more conflicts)
#   EB_TIME     seconds of each measured run (default 30)
#   EB_WARMUP   seconds of warm-up before it (default 5)
#   EB_OUT      output folder (default enginebench-results/cluster-<UTC time>)

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "cluster.sh: $*" >&2; }

rounds=${EB_ROUNDS:-3}
threads=${EB_THREADS:-6}
rows=${EB_ROWS:-10000}
time_s=${EB_TIME:-30}
warmup_s=${EB_WARMUP:-5}
bin=${EB_BIN:-$repo/target/release/enginebench}
if [[ ! -x $bin ]]; then
    log "building $bin"
    (cd "$repo" && cargo build --release >&2)
fi
out=${EB_OUT:-$repo/enginebench-results/cluster-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

run_one() { # label server-args...
    local label=$1
    shift
    log "$label: $*"
    "$bin" run oltp_read_write "$@" --threads "$threads" --table-size "$rows" \
        --warmup "${warmup_s}s" --duration "${time_s}s" --runs 1 --format json \
        --results-dir "$out/results" >"$out/$label.json" 2>"$out/$label.log" ||
        { log "$label failed (log: $out/$label.log)"; tail -n 5 "$out/$label.log" >&2; exit 1; }
}

for ((r = 1; r <= rounds; r++)); do
    run_one "single-$r" --server mariadb:small \
        --server-opt binlog_format=ROW --server-opt innodb_autoinc_lock_mode=2
    run_one "galera-$r" --server mariadb-galera:3
done

python3 - "$out" "$rounds" <<'PY' | tee "$out/summary.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    doc = json.load(open(path))
    run = doc["points"][0]["runs"][0]
    attempted = run["ops"] + run["errors_total"]
    deadlocks = run.get("errors", {}).get("deadlock", 0)
    cluster = sum(
        n.get("server_counters", {}).get(k, 0)
        for n in run.get("by_node", [])
        for k in ("wsrep_local_cert_failures", "wsrep_local_bf_aborts")
    )
    per_k = lambda v: 1000.0 * v / attempted if attempted else 0.0
    return run["ops_per_s"], run["latency_us"]["p99_us"], per_k(deadlocks), per_k(cluster)
print("| server | rounds | tx/s (median) | transaction p99 µs (median) | conflicts per 1,000 tx (median) | cluster-counted conflicts per 1,000 tx (median) |")
print("|---|---|---|---|---|---|")
for label in ("single", "galera"):
    f = [figures(f"{out}/{label}-{r}.json") for r in range(1, rounds + 1)]
    med = [statistics.median(x[i] for x in f) for i in range(4)]
    name = "one MariaDB (mariadb:small + ROW, autoinc 2)" if label == "single" else "3-node Galera (mariadb-galera:3)"
    print(f"| {name} | {rounds} | {med[0]:.1f} | {med[1]:.0f} | {med[2]:.1f} | {med[3]:.1f} |")
PY
log "results in $out (summary.md)"
