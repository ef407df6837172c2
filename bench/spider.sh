#!/usr/bin/env bash
# bench/spider.sh: the cost of a query through a Spider head. oltp_point_select through a
# Spider head with 2 backends (A) against the same table on one server directly (B), in
# alternation A B A B ..., medians over the rounds.
#
# Three private MariaDB servers on this machine (enginebench server start): the head (with
# plugin_load_add=ha_spider) and backends b0 and b1. A: database `bench` on the head, sbtest1
# split by id over b0 and b1 (the tool's Spider prepare). B: database `direct` on b0 with the
# whole sbtest1 (the same rows), queried directly. So B's server is one of A's backends.
#
# Per run it records the tool's QPS (ops/s of the measured run) and the CPU (user+sys, from
# /proc/PID/stat, clock ticks) of the head, b0 and b1 over the whole `enginebench run`
# command (warm-up 0, so connection set-up and the counter reads are in it: small next to
# the run), divided by the run's operations: µs of server CPU per query on each server. The
# summary gives the medians and the head's cost per query: A's head+backends CPU per query
# minus B's server CPU per query.
#
# Usage: bench/spider.sh
# Environment (all optional):
#   EB_ROUNDS      A B pairs (default 5)
#   EB_DURATION    each measured run (default 10s)
#   EB_THREADS     connections (default 4)
#   EB_TABLE_SIZE  rows of sbtest1 (default 100000)
#   EB_PROFILE     server profile of all three (default: default)
#   EB_OUT         output folder (default enginebench-results/bench-spider-<UTC timestamp>)
#   EB_BIN         an enginebench binary to use instead of building one
# Output: EB_OUT/{A,B}-<round>.json (the tool's results), runs.csv, summary.md (printed).

set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/.." && pwd -P)

log() { echo "spider.sh: $*" >&2; }
die() { echo "spider.sh: ERROR: $*" >&2; exit 1; }

ROUNDS=${EB_ROUNDS:-5}
DURATION=${EB_DURATION:-10s}
THREADS=${EB_THREADS:-4}
TABLE_SIZE=${EB_TABLE_SIZE:-100000}
PROFILE=${EB_PROFILE:-default}
OUT=${EB_OUT:-$repo_root/enginebench-results/bench-spider-$(date -u +%Y%m%dT%H%M%SZ)}

[[ -f /usr/lib/mysql/plugin/ha_spider.so ]] ||
    die "the Spider plugin is missing: apt-get install mariadb-plugin-spider"
if [[ -n "${EB_BIN:-}" ]]; then
    BIN=$EB_BIN
else
    (cd "$repo_root" && nice -n 10 cargo build --release --quiet) || die "build failed"
    BIN=$repo_root/target/release/enginebench
fi
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/eb-spider-XXXXXX)

stop_all() {
    for n in head b0 b1; do
        [[ -d "$WORK/$n" ]] && "$BIN" server stop mariadb --datadir "$WORK/$n" >/dev/null 2>&1 || true
    done
    rm -rf "$WORK"
}
trap stop_all EXIT

declare -A URL PID
for n in head b0 b1; do
    opt=()
    [[ $n == head ]] && opt=(--server-opt plugin_load_add=ha_spider)
    URL[$n]=$("$BIN" server start mariadb --profile "$PROFILE" --datadir "$WORK/$n" "${opt[@]}" 2>>"$OUT/servers.log")
    PID[$n]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$WORK/$n/server.json")
    log "$n: pid ${PID[$n]}, ${URL[$n]}"
done
sock() { python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlparse(sys.argv[1]).query)["socket"][0])' "$1"; }
sql() { mariadb --no-defaults -uroot -S "$(sock "${URL[$1]}")" -e "$2"; }
for n in head b0 b1; do sql "$n" "CREATE DATABASE IF NOT EXISTS bench"; done
sql b0 "CREATE DATABASE IF NOT EXISTS direct"
A="mysql://root@localhost/bench?socket=$(sock "${URL[head]}")&spider=$(sock "${URL[b0]}"),$(sock "${URL[b1]}")"
B="mysql://root@localhost/direct?socket=$(sock "${URL[b0]}")"

"$BIN" prepare oltp_point_select --target "$A" --table-size "$TABLE_SIZE" 2>>"$OUT/prepare.log"
"$BIN" prepare oltp_point_select --target "$B" --table-size "$TABLE_SIZE" 2>>"$OUT/prepare.log"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "variant,round,ops,ops_per_s,head_ticks,b0_ticks,b1_ticks" >"$OUT/runs.csv"
one() {
    local variant=$1 round=$2 url=$3 h0 b00 b10 h1 b01 b11
    h0=$(ticks "${PID[head]}"); b00=$(ticks "${PID[b0]}"); b10=$(ticks "${PID[b1]}")
    "$BIN" run oltp_point_select --target "$url" --table-size "$TABLE_SIZE" \
        --threads "$THREADS" --warmup 0 --duration "$DURATION" --runs 1 --format json \
        >"$OUT/$variant-$round.json" 2>>"$OUT/run.log"
    h1=$(ticks "${PID[head]}"); b01=$(ticks "${PID[b0]}"); b11=$(ticks "${PID[b1]}")
    python3 - "$OUT/$variant-$round.json" "$variant" "$round" $((h1 - h0)) $((b01 - b00)) $((b11 - b10)) >>"$OUT/runs.csv" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["points"][0]["runs"][0]
print(",".join([sys.argv[2], sys.argv[3], str(run["ops"]), "%.1f" % run["ops_per_s"]] + sys.argv[4:7]))
PY
    log "$variant round $round: $(tail -n 1 "$OUT/runs.csv")"
}
for r in $(seq 1 "$ROUNDS"); do
    one A "$r" "$A"
    one B "$r" "$B"
done

python3 - "$OUT/runs.csv" "$(getconf CLK_TCK)" "$THREADS" "$DURATION" "$TABLE_SIZE" <<'PY' | tee "$OUT/summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
hz = float(sys.argv[2])
def us(r, k):
    return float(r[k]) / hz * 1e6 / max(int(r["ops"]), 1)
print(f"# Point select through a Spider head (2 backends) vs one server directly\n")
print(f"oltp_point_select, {sys.argv[3]} connections, {sys.argv[4]} runs, {sys.argv[5]} rows; medians of {len(rows)//2} rounds, A and B alternating.\n")
print("| variant | ops/s | head CPU us/query | b0 CPU us/query | b1 CPU us/query | all servers us/query |")
print("|---|---|---|---|---|---|")
med = {}
for v, name in (("A", "through the Spider head"), ("B", "backend b0 directly")):
    rs = [r for r in rows if r["variant"] == v]
    m = {k: statistics.median(us(r, k) for r in rs) for k in ("head_ticks", "b0_ticks", "b1_ticks")}
    qps = statistics.median(float(r["ops_per_s"]) for r in rs)
    total = statistics.median(sum(us(r, k) for k in ("head_ticks", "b0_ticks", "b1_ticks")) for r in rs)
    med[v] = (qps, total)
    print(f"| {v}: {name} | {qps:,.0f} | {m['head_ticks']:.1f} | {m['b0_ticks']:.1f} | {m['b1_ticks']:.1f} | {total:.1f} |")
print(f"\nThe head's cost: {med['A'][1] - med['B'][1]:.1f} us of server CPU per query more than one server answering directly; throughput {med['A'][0] / max(med['B'][0], 1e-9):.2f}x.")
print("CPU is /proc/PID/stat utime+stime over the whole `enginebench run` command (clock ticks), divided by the measured run's queries; the client shares the machine's CPUs with the servers.")
PY
log "results in $OUT"
