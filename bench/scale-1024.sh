#!/usr/bin/env bash
# bench/scale-1024.sh: oltp_point_select with 1,024 connections against a throwaway private
# MariaDB (profiles/mariadb/many-connections.cnf), alternating with 64 connections (A B A B),
# then once more at 1,024 with MariaDB's thread pool (issue 10, item 1). Not a test.
#
# Usage:
#   bench/scale-1024.sh
#
# Environment (all optional):
#   EB_BIN         enginebench binary (default: target/release/enginebench, built if missing)
#   EB_TIME        seconds of the measured run (default 60)
#   EB_PAIRS       A/B pairs (default 2)
#   EB_TABLE_SIZE  rows (default 10000)
#   EB_OUT         output folder (default enginebench-results/scale-1024-<UTC time>)
#
# Per run (runs.tsv): connections, thread handling, ops/s, errors (total and by class), client
# CPU per query (from the result: getrusage of the whole client over the run), client peak
# RSS (VmHWM of the client, read every second while it runs), 1-minute load average at the end.

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "scale-1024.sh: $*" >&2; }

time_s=${EB_TIME:-60}
pairs=${EB_PAIRS:-2}
rows=${EB_TABLE_SIZE:-10000}
bin=${EB_BIN:-$repo/target/release/enginebench}
if [[ ! -x $bin ]]; then
    log "building $bin"
    (cd "$repo" && cargo build --release >&2)
fi
out=${EB_OUT:-$repo/enginebench-results/scale-1024-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
profile=$repo/profiles/mariadb/many-connections.cnf

# run NAME THREADS [SERVER-OPT...]
run() {
    local name=$1 threads=$2
    shift 2
    local extra=() o
    for o in "$@"; do extra+=(--server-opt "$o"); done
    local dir=$out/$name
    mkdir -p "$dir"
    local cmd=("$bin" run oltp_point_select --server "mariadb:$profile" "${extra[@]}"
        --threads "$threads" --table-size "$rows" --warmup 5s --runs 1 --duration "${time_s}s"
        --results-dir "$dir/results" --format json)
    printf '%q ' "${cmd[@]}" >"$dir/command.txt"
    log "$name: ${cmd[*]}"
    "${cmd[@]}" >"$dir/result-stdout.json" 2>"$dir/stderr.txt" &
    local pid=$! hwm=0 h
    while kill -0 "$pid" 2>/dev/null; do
        h=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [[ -n $h ]] && ((h > hwm)) && hwm=$h
        sleep 1
    done
    local rc=0
    wait "$pid" || rc=$?
    python3 - "$dir/result-stdout.json" "$name" "$threads" "${1:-one-thread-per-connection}" "$hwm" "$rc" "$(cut -d' ' -f1 /proc/loadavg)" >>"$out/runs.tsv" <<'PY'
import json, sys
path, name, threads, handling, hwm, rc, load = sys.argv[1:]
try:
    d = json.load(open(path))
    r = d["points"][0]["runs"][0]
    errs = ",".join(f"{k}={v}" for k, v in r["errors"].items()) or "-"
    print(f"{name}\t{threads}\t{handling}\t{rc}\t{r['ops_per_s']:.0f}\t{r['errors_total']}\t{errs}\t{r['client_cpu']['us_per_op']:.2f}\t{int(hwm)/1024:.1f}\t{load}")
except Exception as e:
    print(f"{name}\t{threads}\t{handling}\t{rc}\tfailed: {e}\t\t\t\t{int(hwm)/1024:.1f}\t{load}")
PY
    tail -n 1 "$out/runs.tsv" >&2
}

printf 'run\tconnections\tthread_handling\texit\tops_per_s\terrors\terrors_by_class\tclient_us_per_query\tclient_peak_rss_mb\tload1\n' >"$out/runs.tsv"
for p in $(seq 1 "$pairs"); do
    run "a$p-64" 64
    run "b$p-1024" 1024
done
run "pool-1024" 1024 thread_handling=pool-of-threads
{
    echo "# scale-1024: oltp_point_select, 64 vs 1,024 connections, ${time_s} s per run"
    echo
    echo "- machine: $(nproc) vCPU, $(uname -r), $(date -u +%FT%TZ); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo '```'
    column -t -s $'\t' "$out/runs.tsv"
    echo '```'
} >"$out/summary.md"
cat "$out/summary.md"
