#!/usr/bin/env bash
# bench/fleet.sh: what a fleet costs (issue 22). Not a test.
#
# 1. One private MariaDB, oltp_point_select: one process with 32 connections, against 2 shards
#    of 16 and 4 shards of 8 (`run --shard I/N`, all on this machine). The configurations
#    alternate round by round. Each is measured from outside over a steady window that starts
#    after the warm-up: operations from the server's Com_stmt_execute delta (each point select
#    is one prepared-statement execution), and the client CPU from /proc/PID/stat (utime +
#    stime) of every client process. Printed: ops/s, client CPU µs per operation and its ratio
#    to the single process (the issue's bound: a fleet must not cost more than 5 %).
#    A control, "4x8 plain", runs the same four processes without --shard: the difference
#    between it and 4x8 is what the fleet machinery costs; the difference between it and 1x32
#    is what splitting one client's event loop into four costs on a machine of its own.
#    A second control, "1x32 4 loops", is one process of 32 connections on four event loops
#    (--client-threads 4, 8 connections each): the same split without more processes.
#    Also printed per configuration: the clients' context switches per operation (voluntary +
#    involuntary, from /proc/PID/task/*/status), which is where the split's cost shows.
# 2. The merge of a 10-minute 4-shard result (1 s report intervals), timed.
#
# Usage:
#   bench/fleet.sh
#
# Environment (all optional):
#   EB_BIN     enginebench binary (default: target/release/enginebench, built if missing)
#   EB_ROUNDS  rounds of the three configurations (default 3)
#   EB_WINDOW  seconds of the measured window (default 60; the run lasts warm-up + window + 10)
#   EB_WARMUP  seconds of warm-up before the window (default 10)
#   EB_ROWS    rows of sbtest1 (default 100000)
#   EB_MERGE   0 skips part 2 (default 1: about 11 minutes)
#   EB_OUT     output folder (default enginebench-results/fleet-<UTC time>)

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "fleet.sh: $*" >&2; }

rounds=${EB_ROUNDS:-3}
window=${EB_WINDOW:-60}
warmup=${EB_WARMUP:-10}
rows=${EB_ROWS:-100000}
bin=${EB_BIN:-$repo/target/release/enginebench}
if [[ ! -x $bin ]]; then
    log "building $bin"
    (cd "$repo" && cargo build --release >&2)
fi
out=${EB_OUT:-$repo/enginebench-results/fleet-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
srv=$out/server
"$bin" server start mariadb --profile small --datadir "$srv" --server-opt max_connections=200 >"$out/url.txt"
trap '"$bin" server stop mariadb --datadir "$srv" >&2 || true' EXIT
url=$(cat "$out/url.txt")
sock=${url##*socket=}
sql() { mariadb --no-defaults -S "$sock" -uroot -N -B -e "$1"; }
executed() { sql "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='COM_STMT_EXECUTE'"; }
# utime + stime of the given pids, in clock ticks (fields 14 and 15 of /proc/PID/stat).
cpu_ticks() {
    local t=0 p
    for p in "$@"; do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
    echo "$t"
}
hz=$(getconf CLK_TCK)

"$bin" prepare oltp_point_select --target "$url" --table-size "$rows" >&2
duration=$((warmup + window + 10))
printf 'round\tconfig\tops_per_s\tclient_us_per_op\tclient_switches_per_op\n' >"$out/runs.tsv"

# Context switches (voluntary + involuntary) of every thread of the given pids.
switches() {
    local p
    for p in "$@"; do cat /proc/"$p"/task/*/status; done 2>/dev/null |
        awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# One configuration: N processes of T connections (sharded unless MODE is plain); prints
# "ops/s us/op switches/op".
measure() {
    local n=$1 t=$2 tag=$3 mode=${4:-shard} pids=() i
    for ((i = 0; i < n; i++)); do
        local args=(run oltp_point_select --target "$url" --table-size "$rows" --threads "$t"
            --warmup 0 --runs 1 --duration "${duration}s" --results-dir "$out/$tag/shard-$i")
        if ((n > 1)) && [[ $mode == shard ]]; then args+=(--shard "$i/$n" --run-id "$tag"); fi
        if [[ $mode == loops4 ]]; then args+=(--client-threads 4); fi
        "$bin" "${args[@]}" >/dev/null 2>"$out/$tag-shard-$i.log" &
        pids+=($!)
    done
    # The clients run once the server executes statements; the window starts after the warm-up.
    local e0
    e0=$(executed)
    until (($(executed) > e0)); do sleep 0.2; done
    sleep "$warmup"
    local c0 x0 c1 x1 s0 s1
    c0=$(cpu_ticks "${pids[@]}"); s0=$(switches "${pids[@]}"); x0=$(executed)
    sleep "$window"
    c1=$(cpu_ticks "${pids[@]}"); s1=$(switches "${pids[@]}"); x1=$(executed)
    wait "${pids[@]}"
    awk -v ops=$((x1 - x0)) -v cpu=$((c1 - c0)) -v hz="$hz" -v w="$window" -v sw=$((s1 - s0)) \
        'BEGIN { printf "%.0f %.2f %.3f\n", ops / w, cpu / hz * 1e6 / ops, sw / ops }'
}

configs=("1 32 shard" "2 16 shard" "4 8 shard" "4 8 plain" "1 32 loops4")
for ((r = 1; r <= rounds; r++)); do
    for c in "${configs[@]}"; do
        read -r n t mode <<<"$c"
        name="${n}x$t"
        [[ $mode == plain ]] && name="$name plain"
        [[ $mode == loops4 ]] && name="$name 4 loops"
        tag="r$r-${n}x$t-$mode-$(date +%s)"
        log "round $r: $n process(es) x $t connections ($mode)"
        read -r qps us sw < <(measure "$n" "$t" "$tag" "$mode")
        printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$name" "$qps" "$us" "$sw" | tee -a "$out/runs.tsv" >&2
    done
done

echo
echo "| configuration | ops/s (median of $rounds) | client CPU µs/op (median) | vs 1x32 | client switches/op (median) |"
echo "|---|---|---|---|---|"
awk -F'\t' 'NR > 1 { q[$2] = q[$2] " " $3; u[$2] = u[$2] " " $4; w[$2] = w[$2] " " $5 }
    function med(s,   a, n, i, j, t) { n = split(s, a, " ");
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { base = med(u["1x32"]);
        n = split("1x32,2x16,4x8,4x8 plain,1x32 4 loops", order, ",");
        for (k = 1; k <= n; k++) { c = order[k];
            printf "| %s | %.0f | %.2f | %+.1f %% | %.3f |\n", c, med(q[c]), med(u[c]), (med(u[c]) / base - 1) * 100, med(w[c]) } }' "$out/runs.tsv"

if [[ ${EB_MERGE:-1} != 0 ]]; then
    tag="merge-$(date +%s)"
    log "part 2: a 10-minute 4-shard run, then its merge timed"
    pids=()
    for i in 0 1 2 3; do
        "$bin" run oltp_point_select --target "$url" --table-size "$rows" --threads 8 --warmup 0 \
            --runs 1 --duration 10m --report-interval 1s --shard "$i/4" --run-id "$tag" \
            --results-dir "$out/$tag/shard-$i" >/dev/null 2>"$out/$tag-$i.log" &
        pids+=($!)
    done
    wait "${pids[@]}"
    start=$(date +%s.%N)
    "$bin" merge "$out/$tag"/shard-*/*/result.json -o "$out/$tag/merged" 2>&1 >&2
    end=$(date +%s.%N)
    echo
    echo "merge of 4 shards x 10 min (600 intervals each): $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s wall"
    ls -l "$out/$tag"/shard-*/*/result.json "$out/$tag/merged/result.json" >&2
fi
log "results in $out"
