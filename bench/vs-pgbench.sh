#!/usr/bin/env bash
# bench/vs-pgbench.sh: `enginebench run tpcb` against pgbench's built-in TPC-B-like script on
# the same private PostgreSQL, same scale and clients, alternating runs
# (pgbench -M prepared, enginebench, pgbench -M simple, repeated).
#
# Usage: bench/vs-pgbench.sh SERVERS_DIR
#   SERVERS_DIR  a folder with servers started by scripts/db-servers.sh (its env.sh is read)
# Environment (optional): EB_BIN (default target/release/enginebench), EB_ROUNDS (3),
#   EB_SCALE (10), EB_CLIENTS (4), EB_TIME (25 s per run), EB_WINDOW (measuring window,
#   "START LEN" in seconds after each tool starts; default "5 12"), EB_OUT (output folder).
#   EB_PG_DRIVER (enginebench's PostgreSQL client: wire, the default, or tokio_postgres).
#   EB_SYNC_COMMIT (on): PostgreSQL's synchronous_commit for both tools' databases. `off`
#   commits without waiting for the WAL's flush, so that the disk's flush time (which moves
#   tps by a factor of two between runs on this machine) leaves the comparison and the tools'
#   and the server's CPU decide it.
#   EB_TOOLS: the tools of a round, in order (default "pgbench-prepared enginebench
#   pgbench-simple enginebench-nobatch"). Also: enginebench-1loop (`--client-threads 1`:
#   one event loop, where PostgreSQL gets two by default), enginebench-epoll (`--client-io
#   epoll`: plain sends and receives on readiness, as pgbench does), enginebench-ring
#   (`--client-io io_uring`: every loop on the ring, however few its connections),
#   enginebench-nopipe (enginebench with ?pipeline=off: each statement waits for the
#   previous reply, BEGIN still goes with the first), enginebench-serial
#   (?pipeline=off&begin=separate: one round trip per statement, as pgbench), pgbench-pipeline (the same TPC-B-like script as a custom script between
#   \startpipeline and \endpipeline, -M prepared: pgbench's own pipeline mode),
#   pgbench-extended (-M extended), enginebench-text and enginebench-extended
#   (`--statements text|extended`, to set beside pgbench -M simple and -M extended; with
#   ?pipeline=off&begin=separate, one statement per round trip as pgbench's built-in script).
#
# Measured per run, from outside both tools over the same window (EB_WINDOW "START LEN" seconds
# after the tool starts, so connecting and start-up are outside it): transactions = the rows
# added to the tool's pgbench_history (one per committed transaction in both tools), client CPU
# = utime+stime of the tool's process (/proc/PID/stat, every thread), server CPU = the
# postmaster's and its processes' (/proc); per second of the window's real length (the time
# between the two reads) and per transaction. The tool's own tps over its whole run is kept
# beside it (tool_tps) as a check.
# pgbench runs with -n and -j 1 (one client thread, as enginebench's one event loop); instead,
# before every run of either tool the script does what pgbench does without -n (TRUNCATE
# pgbench_history, VACUUM pgbench_branches and pgbench_tellers) on that tool's database, then
# a CHECKPOINT. Output: runs.tsv and summary.md.

set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
srv=${1:?usage: bench/vs-pgbench.sh SERVERS_DIR}
# shellcheck disable=SC1091
source "$srv/env.sh"
bin=${EB_BIN:-$repo/target/release/enginebench}
rounds=${EB_ROUNDS:-3}
scale=${EB_SCALE:-10}
clients=${EB_CLIENTS:-4}
time_s=${EB_TIME:-25}
read -r win_start win_len <<<"${EB_WINDOW:-5 12}"
(( win_start + win_len < time_s )) || { echo "vs-pgbench.sh: EB_WINDOW must end before EB_TIME" >&2; exit 1; }
case ${EB_SYNC_COMMIT:-on} in
  on | off | local | remote_write | remote_apply) ;;
  *) echo "vs-pgbench.sh: EB_SYNC_COMMIT must be on, off, local, remote_write or remote_apply" >&2; exit 2 ;;
esac
out=${EB_OUT:-$repo/enginebench-results/vs-pgbench-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$out"
sock=$srv/pgsock
port=$(sed -E 's/.*:([0-9]+)\/.*/\1/' <<<"$EB_TEST_PG_URL")
psql_() { psql -h "$sock" -p "$port" -U postgres -X -q -t -A "$@"; }

psql_ -d postgres -c "DROP DATABASE IF EXISTS pgb" -c "CREATE DATABASE pgb" -c "DROP DATABASE IF EXISTS ebt" -c "CREATE DATABASE ebt"
if [[ ${EB_SYNC_COMMIT:-on} != on ]]; then
  psql_ -d postgres -c "ALTER DATABASE pgb SET synchronous_commit = $EB_SYNC_COMMIT" \
    -c "ALTER DATABASE ebt SET synchronous_commit = $EB_SYNC_COMMIT"
fi
pgbench -h "$sock" -p "$port" -U postgres -i -q -s "$scale" pgb >"$out/pgbench-init.log" 2>&1
eb_url="postgres://postgres@localhost:$port/ebt?host=$sock${EB_PG_DRIVER:+&driver=$EB_PG_DRIVER}"
"$bin" prepare tpcb --target "$eb_url" --var "scale=$scale" 2>"$out/eb-prepare.log"
psql_ -d pgb -c "CHECKPOINT"
# pgbench's built-in tpcb-like script in pgbench's pipeline mode (for EB_TOOLS=pgbench-pipeline).
cat >"$out/tpcb-pipeline.sql" <<'SQL'
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
\endpipeline
SQL

hz=$(getconf CLK_TCK)
srv_pid=$EB_TEST_PG_PID
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
server_ticks() {
  local t=0 p
  for p in $srv_pid $(pgrep -P "$srv_pid"); do t=$((t + $(proc_ticks "$p"))); done
  echo $t
}
history_rows() { psql_ -d "$1" -c "SELECT count(*) FROM pgbench_history"; }

printf 'round\ttool\ttps\tclient_us_per_tx\tserver_us_per_tx\ttool_tps\tload1\n' >"$out/runs.tsv"
for r in $(seq 1 "$rounds"); do
  for tool in ${EB_TOOLS:-pgbench-prepared enginebench pgbench-simple enginebench-nobatch}; do
    # Every run starts from the same state: what pgbench does before a run without -n (empty
    # history, vacuumed branches and tellers), on the tool's own database, then a checkpoint,
    # so that no run pays for the dirty pages of the one before it.
    db=pgb; [[ $tool == enginebench* ]] && db=ebt
    psql_ -d "$db" -c "TRUNCATE pgbench_history" -c "VACUUM pgbench_branches, pgbench_tellers" -c "CHECKPOINT"
    load=$(cut -d' ' -f1 /proc/loadavg)
    case $tool in
      pgbench-*)
        mode=${tool#pgbench-}
        script=()
        if [[ $mode == pipeline ]]; then
          mode=prepared
          script=(-s "$scale" -f "$out/tpcb-pipeline.sql")
        fi
        pgbench -h "$sock" -p "$port" -U postgres -n -j 1 -c "$clients" -T "$time_s" -M "$mode" "${script[@]}" pgb \
          >"$out/$tool-$r.log" 2>&1 &
        ;;
      enginebench*)
        extra=()
        url=$eb_url
        [[ $tool == enginebench-nobatch ]] && extra=(--no-sched-batch)
        [[ $tool == enginebench-1loop ]] && extra=(--client-threads 1)
        [[ $tool == enginebench-epoll ]] && extra=(--client-io epoll)
        [[ $tool == enginebench-ring ]] && extra=(--client-io io_uring)
        [[ $tool == enginebench-nopipe ]] && url="$eb_url&pipeline=off"
        [[ $tool == enginebench-serial ]] && url="$eb_url&pipeline=off&begin=separate"
        if [[ $tool == enginebench-text || $tool == enginebench-extended ]]; then
          url="$eb_url&pipeline=off&begin=separate"
          extra=(--statements "${tool#enginebench-}")
        fi
        "$bin" run tpcb --target "$url" --var "scale=$scale" --threads "$clients" --warmup 0 \
          --duration "${time_s}s" --runs 1 --format json --results-dir "$out/eb" "${extra[@]}" \
          >"$out/$tool-$r.json" 2>"$out/$tool-$r.log" &
        ;;
    esac
    pid=$!
    sleep "$win_start"
    q0=$(history_rows "$db"); c0=$(proc_ticks $pid); s0=$(server_ticks); t0=$(date +%s.%N)
    sleep "$win_len"
    q1=$(history_rows "$db"); c1=$(proc_ticks $pid); s1=$(server_ticks); t1=$(date +%s.%N)
    kill -0 $pid 2>/dev/null || { echo "vs-pgbench.sh: $tool run $r ended before the window did: raise EB_TIME" >&2; exit 1; }
    wait $pid || { echo "vs-pgbench.sh: $tool run $r failed: see $out/$tool-$r.log" >&2; exit 1; }
    if [[ $tool == pgbench-* ]]; then
      tool_tps=$(grep -E '^tps = ' "$out/$tool-$r.log" | grep -v including | sed -E 's/tps = ([0-9.]+).*/\1/' | head -1)
    else
      tool_tps=$(python3 -c "import json,sys; print('%.1f' % json.load(open(sys.argv[1]))['points'][0]['runs'][0]['ops_per_s'])" "$out/$tool-$r.json")
    fi
    awk -v r="$r" -v tool="$tool" -v q=$((q1 - q0)) -v c=$((c1 - c0)) -v s=$((s1 - s0)) -v hz="$hz" \
      -v len="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v tt="$tool_tps" -v ld="$load" 'BEGIN {
        printf "%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t%s\n", r, tool, q / len, c / hz * 1e6 / q, s / hz * 1e6 / q, tt, ld }' |
      tee -a "$out/runs.tsv"
  done
done

python3 - "$out/runs.tsv" >"$out/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
med = lambda tool, k: statistics.median(float(r[k]) for r in rows if r['tool'] == tool)
tools = [t for t in ['pgbench-prepared', 'pgbench-simple', 'pgbench-pipeline', 'pgbench-extended', 'enginebench', 'enginebench-1loop', 'enginebench-epoll', 'enginebench-ring', 'enginebench-nobatch', 'enginebench-nopipe', 'enginebench-serial', 'enginebench-text', 'enginebench-extended'] if any(r['tool'] == t for r in rows)]
print('| tool | tps (median) | client µs/tx | server µs/tx | ÷ pgbench -M prepared: tps, client, server | ÷ pgbench -M simple | ÷ pgbench pipeline |')
print('|---|---|---|---|---|---|---|')
def ratios(t, b):
    if b not in tools:
        return '-'
    # Medians of the per-round ratios (the two runs of a round are back to back).
    per = lambda k: statistics.median(float(x[k]) / float(y[k]) for x in rows if x['tool'] == t for y in rows if y['tool'] == b and y['round'] == x['round'])
    return f"{per('tps'):.2f}, {per('client_us_per_tx'):.2f}, {per('server_us_per_tx'):.2f}"
for t in tools:
    print(f"| {t} | {med(t, 'tps'):.0f} | {med(t, 'client_us_per_tx'):.1f} | {med(t, 'server_us_per_tx'):.1f} | {ratios(t, 'pgbench-prepared')} | {ratios(t, 'pgbench-simple')} | {ratios(t, 'pgbench-pipeline')} |")
print('\nRatios: medians of per-round ratios (tps, client CPU per transaction, server CPU per transaction).')
print(f"\nload average (1 min) during runs: {min(float(r['load1']) for r in rows):.1f}-{max(float(r['load1']) for r in rows):.1f}")
PY
cat "$out/summary.md"
