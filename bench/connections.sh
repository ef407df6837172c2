#!/usr/bin/env bash
# bench/connections.sh: connection storms (issue 25). Not a test.
#
# 1. oltp_point_select with 64, 1,024, 4,096 and 10,000 connections against one private
#    MariaDB 10.11 with thread_handling=pool-of-threads (max_connections 10100, back_log 4096:
#    the kernel's net.core.somaxconn caps it anyway). One client invocation per count, so that
#    the client's peak RSS (VmHWM, read from /proc every 0.5 s) is that count's.
#    Per count: connect time and refused connects retried (the result's point.connect), ops/s,
#    errors, client CPU per query (getrusage of the whole client over the run) and its ratio
#    to 64 connections, client peak RSS.
# 2. TPC-C with --spec-timing (keying and think times), 10 terminals per warehouse: tpmC and
#    its efficiency against the spec's maximum of 12.86 tpmC per warehouse, then as many
#    terminals again x10 on the same warehouses (a client at 10,000 terminals when
#    EB_TPCC_WAREHOUSES=100): what the client holds per idle terminal. Efficiency is tpmC
#    over 12.86 per 10 terminals (the spec's maximum per warehouse, whose 10 terminals each
#    complete at most 1.286 New-Orders a minute under its keying and think times).
#    With EB_TPCC_CONNECTIONS=M the terminals share M connections (`--terminals N --threads
#    M`, terminals behind a TP monitor): each connection serves N/M terminals, so the server
#    holds M sessions and their prepared statements, not N (10,000 terminals over 500
#    connections). The server's peak RSS during each run is sampled too (VmRSS of mariadbd).
# 3. Open loop: oltp_point_select at a fixed --rate spread over thousands of connections
#    (EB_RATE_RUNS): achieved rate against the requested one, operations started late (> 2 ms
#    behind their intended start), the backlog at the end and the largest lag, response-time
#    p99 (from each intended start), client CPU per query and peak RSS.
#
# Usage:
#   bench/connections.sh
#
# Environment (all optional):
#   EB_BIN              enginebench binary (default: target/release/enginebench, built if missing)
#   EB_COUNTS           connection counts (default "64 1024 4096 10000"; "" skips part 1)
#   EB_TIME             seconds of each point-select run (default 10; 3 s warm-up before)
#   EB_TPCC_WAREHOUSES  warehouses for part 2 (default 100: 1,000 terminals; 0 skips part 2)
#   EB_TPCC_TERMINALS   terminal counts for part 2 (default "10W 100W": 10 and 100 per warehouse)
#   EB_TPCC_CONNECT_TIMEOUT  --connect-timeout of the TPC-C runs (default 10m: each terminal
#                       prepares 41 statements; 1,000 took longer than 30 s on a busy 2-core machine)
#   EB_TPCC_TIME        seconds of each TPC-C run (default 120; think times are ~10-20 s)
#   EB_TPCC_CONNECTIONS connections the TPC-C terminals share (default "": one per terminal;
#                       e.g. 500 runs 10,000 terminals over 500 connections)
#   EB_RATE_RUNS        open-loop runs for part 3, CONNECTIONS:RATE each (default
#                       "1000:2000 4000:2000 4000:8000"; "" skips part 3)
#   EB_OUT              output folder (default enginebench-results/connections-<UTC time>)

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "connections.sh: $*" >&2; }

counts=${EB_COUNTS-64 1024 4096 10000}
time_s=${EB_TIME:-10}
warehouses=${EB_TPCC_WAREHOUSES:-100}
tpcc_time=${EB_TPCC_TIME:-120}
bin=${EB_BIN:-$repo/target/release/enginebench}
if [[ ! -x $bin ]]; then
    log "building $bin"
    (cd "$repo" && cargo build --release >&2)
fi
out=${EB_OUT:-$repo/enginebench-results/connections-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
# 10,000 sockets plus files: the client raises its soft limit to the hard one itself; the
# hard limit must be high enough (and the server inherits it for its open_files_limit).
ulimit -Hn >"$out/ulimit-n.txt"
if (($(ulimit -Hn) < 10200)); then
    ulimit -n 20000 2>/dev/null || log "warning: ulimit -n is $(ulimit -Hn): 10,000 connections will not open"
fi

srv=$out/server
"$bin" server start mariadb --profile small --datadir "$srv" \
    --server-opt thread_handling=pool-of-threads --server-opt max_connections=10100 \
    --server-opt back_log=4096 --server-opt open_files_limit=30000 \
    --server-opt table_open_cache=2000 --server-opt innodb_buffer_pool_size=1G \
    --server-opt max_prepared_stmt_count=2000000 >"$out/url.txt"
trap '"$bin" server stop mariadb --datadir "$srv" >&2 || true' EXIT
url=$(cat "$out/url.txt")
log "server: $url"

# measure NAME ARGS...: run the client, sample its VmHWM; append one line to runs.tsv.
measure() {
    local name=$1
    shift
    local dir=$out/$name
    mkdir -p "$dir"
    local cmd=("$bin" "$@" --target "$url" --results-dir "$dir/results" --format json)
    printf '%q ' "${cmd[@]}" >"$dir/command.txt"
    log "$name: ${cmd[*]}"
    "${cmd[@]}" >"$dir/result-stdout.json" 2>"$dir/stderr.txt" &
    local pid=$! hwm=0 h srss=0 spid
    spid=$(cat "$srv/server.pid" 2>/dev/null || echo 0)
    while kill -0 "$pid" 2>/dev/null; do
        h=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n $h ]] && ((h > hwm)) && hwm=$h
        h=$(awk '/^VmRSS:/{print $2}' "/proc/$spid/status" 2>/dev/null || true)
        [[ -n $h ]] && ((h > srss)) && srss=$h
        sleep 0.5
    done
    local rc=0
    wait "$pid" || rc=$?
    python3 - "$dir/result-stdout.json" "$name" "$hwm" "$rc" "$(cut -d' ' -f1 /proc/loadavg)" "$srss" >>"$out/runs.tsv" <<'PY'
import json, sys
path, name, hwm, rc, load, srss = sys.argv[1:]
try:
    d = json.load(open(path))
    p = d["points"][0]
    r = p["runs"][0]
    c = p.get("connect", {})
    errs = ",".join(f"{k}={v}" for k, v in r["errors"].items()) or "-"
    tpmc = r.get("figures", {}).get("tpm_c")
    ol = r.get("open_loop")
    if ol:
        late = f"{ol['late_ops'] / max(ol['intended_ops'], 1) * 100:.2f}"
        sched = f"{ol['rate_ops_per_s']:.0f}\t{late}\t{ol['backlog_ops']}\t{ol['max_lag_us'] / 1000:.1f}\t{r['response_us']['p99_us'] / 1000:.2f}"
    else:
        sched = "\t\t\t\t"
    terms = r.get("sections", {}).get("tpcc", {}).get("terminals", "")
    print(f"{name}\t{p['threads']}\t{terms}\t{rc}\t{c.get('elapsed_s', 0):.2f}\t{c.get('retries', 0)}\t{r['ops_per_s']:.0f}\t{r['errors_total']}\t{errs}\t{r['client_cpu']['us_per_op']:.2f}\t{int(hwm)/1024:.1f}\t{'' if tpmc is None else f'{tpmc:.1f}'}\t{sched}\t{int(srss)/1024:.0f}\t{load}")
except Exception as e:
    print(f"{name}\t-\t\t{rc}\tfailed: {e}\t\t\t\t\t\t{int(hwm)/1024:.1f}\t\t\t\t\t\t\t{int(srss)/1024:.0f}\t{load}")
PY
    tail -n 1 "$out/runs.tsv" >&2
}

printf 'run\tconnections\tterminals\texit\tconnect_s\tconnect_retries\tops_per_s\terrors\terrors_by_class\tclient_us_per_op\tclient_peak_rss_mb\ttpm_c\trate\tlate_pct\tbacklog\tmax_lag_ms\tresponse_p99_ms\tserver_peak_rss_mb\tload1\n' >"$out/runs.tsv"
"$bin" prepare oltp_point_select --target "$url" --tables 1 --table-size 10000 >&2
for n in $counts; do
    measure "point-select-$n" run oltp_point_select --tables 1 --table-size 10000 --threads "$n" \
        --warmup 3s --runs 1 --duration "${time_s}s"
done

for cr in ${EB_RATE_RUNS-1000:2000 4000:2000 4000:8000}; do
    measure "open-loop-${cr%%:*}c-${cr##*:}ps" run oltp_point_select --tables 1 --table-size 10000 \
        --threads "${cr%%:*}" --rate "${cr##*:}" --warmup 3s --runs 1 --duration "${time_s}s"
done

if ((warehouses > 0)); then
    t0=$(date +%s)
    "$bin" prepare tpcc --target "$url" --warehouses "$warehouses" >&2
    echo "tpcc load of $warehouses warehouses: $(($(date +%s) - t0)) s" >"$out/tpcc-load.txt"
    for terms in ${EB_TPCC_TERMINALS:-$((warehouses * 10)) $((warehouses * 100))}; do
        conns=${EB_TPCC_CONNECTIONS:-}
        if [[ -n $conns ]]; then
            ((conns > terms)) && conns=$terms
            shape=(--terminals "$terms" --threads "$conns")
            name=tpcc-$terms-over-$conns
        else
            shape=(--threads "$terms")
            name=tpcc-$terms
        fi
        measure "$name" run tpcc --warehouses "$warehouses" --spec-timing "${shape[@]}" \
            --warmup "${EB_TPCC_WARMUP:-30}s" --runs 1 --duration "${tpcc_time}s" \
            --connect-timeout "${EB_TPCC_CONNECT_TIMEOUT:-10m}"
    done
fi

python3 - "$out/runs.tsv" >"$out/derived.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
base = next((r for r in rows if r["run"] == "point-select-64"), None)
for r in rows:
    try:
        if r["run"].startswith("point-select") and base:
            print(f"{r['run']}: client CPU per query {float(r['client_us_per_op']) / float(base['client_us_per_op']):.2f}x of 64 connections")
        if r["run"].startswith("tpcc") and r["tpm_c"]:
            terms = int(r["terminals"] or r["connections"])
            best = 12.86 * terms / 10
            print(f"{r['run']}: tpmC {r['tpm_c']} = {float(r['tpm_c']) / best * 100:.1f} % of the maximum for {terms} terminals over {r['connections']} connections ({best:.1f}: 12.86 per 10 terminals); server peak RSS {r['server_peak_rss_mb']} MB, client {r['client_peak_rss_mb']} MB")
        if r["run"].startswith("open-loop") and r["rate"]:
            print(f"{r['run']}: {r['ops_per_s']} of {r['rate']} ops/s requested, {r['late_pct']} % started late, backlog {r['backlog']}, response p99 {r['response_p99_ms']} ms")
    except (ValueError, ZeroDivisionError):
        pass
PY
{
    echo "# connections: point select at 64..10,000 connections, open loop, TPC-C --spec-timing"
    echo
    echo "- machine: $(nproc) vCPU, $(uname -r), $(date -u +%FT%TZ); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    [[ -f $out/tpcc-load.txt ]] && echo "- $(cat "$out/tpcc-load.txt")"
    echo
    echo '```'
    column -t -s $'\t' "$out/runs.tsv"
    echo '```'
    echo
    cat "$out/derived.txt"
} >"$out/summary.md"
cat "$out/summary.md"
