#!/usr/bin/env bash
# bench/vs-pgbench.sh: `enginebench run tpcb` against pgbench's built-in TPC-B-like script on
# the same private PostgreSQL, same scale and clients, alternating runs
# (pgbench -M prepared, enginebench, pgbench -M simple, repeated).
#
# Usage: bench/vs-pgbench.sh SERVERS_DIR
#   SERVERS_DIR  a folder with servers started by scripts/db-servers.sh (its env.sh is read)
# Environment (optional): EB_BIN (default target/release/enginebench), EB_ROUNDS (3),
#   EB_SCALE (10), EB_CLIENTS (4), EB_TIME (10 s per run), EB_OUT (output folder).
#   EB_PG_DRIVER (enginebench's PostgreSQL client: wire, the default, or tokio_postgres).
#   EB_TOOLS: the tools of a round, in order (default "pgbench-prepared enginebench
#   pgbench-simple enginebench-nobatch"). Also: enginebench-nopipe (enginebench with
#   ?pipeline=off: each statement waits for the previous reply, BEGIN still goes with the
#   first), enginebench-serial (?pipeline=off&begin=separate: one round trip per statement,
#   as pgbench), pgbench-pipeline (the same TPC-B-like script as a custom script between
#   \startpipeline and \endpipeline, -M prepared: pgbench's own pipeline mode),
#   pgbench-extended (-M extended), enginebench-text and enginebench-extended
#   (`--statements text|extended`, to set beside pgbench -M simple and -M extended; with
#   ?pipeline=off&begin=separate, one statement per round trip as pgbench's built-in script).
#
# Measured per run: transactions per second as each tool reports it (pgbench: "tps ...
# without initial connection time"; enginebench: ops_per_s of the run) and client CPU per
# transaction (pgbench: user+sys of the whole process from /usr/bin/time over its run,
# connection set-up included; enginebench: client_cpu.us_per_op over the run window).
# enginebench runs twice per round: with its default SCHED_BATCH client thread and with
# --no-sched-batch (on a heavily loaded host SCHED_BATCH delays every wake-up of the client,
# and this workload waits on 7 round trips and a commit flush per transaction).
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
time_s=${EB_TIME:-10}
out=${EB_OUT:-$repo/enginebench-results/vs-pgbench-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$out"
sock=$srv/pgsock
port=$(sed -E 's/.*:([0-9]+)\/.*/\1/' <<<"$EB_TEST_PG_URL")
psql_() { psql -h "$sock" -p "$port" -U postgres -X -q -t -A "$@"; }

psql_ -d postgres -c "DROP DATABASE IF EXISTS pgb" -c "CREATE DATABASE pgb" -c "DROP DATABASE IF EXISTS ebt" -c "CREATE DATABASE ebt"
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

printf 'round\ttool\ttps\tclient_us_per_tx\tload1\n' >"$out/runs.tsv"
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
        /usr/bin/time -f '%U %S' -o "$out/time.txt" \
          pgbench -h "$sock" -p "$port" -U postgres -n -j 1 -c "$clients" -T "$time_s" -M "$mode" "${script[@]}" pgb \
          >"$out/$tool-$r.log" 2>&1
        tps=$(grep -E '^tps = ' "$out/$tool-$r.log" | grep -v including | sed -E 's/tps = ([0-9.]+).*/\1/' | head -1)
        tx=$(grep -E 'number of transactions actually processed' "$out/$tool-$r.log" | sed -E 's/.*: ([0-9]+).*/\1/')
        cpu=$(awk -v tx="$tx" '{ printf "%.1f", ($1 + $2) * 1e6 / tx }' "$out/time.txt")
        ;;
      enginebench*)
        extra=()
        url=$eb_url
        [[ $tool == enginebench-nobatch ]] && extra=(--no-sched-batch)
        [[ $tool == enginebench-nopipe ]] && url="$eb_url&pipeline=off"
        [[ $tool == enginebench-serial ]] && url="$eb_url&pipeline=off&begin=separate"
        if [[ $tool == enginebench-text || $tool == enginebench-extended ]]; then
          url="$eb_url&pipeline=off&begin=separate"
          extra=(--statements "${tool#enginebench-}")
        fi
        "$bin" run tpcb --target "$url" --var "scale=$scale" --threads "$clients" --warmup 0 \
          --duration "${time_s}s" --runs 1 --format json --results-dir "$out/eb" "${extra[@]}" \
          >"$out/$tool-$r.json" 2>"$out/$tool-$r.log"
        read -r tps cpu < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['points'][0]['runs'][0]; print('%.1f %.1f' % (r['ops_per_s'], r['client_cpu']['us_per_op']))" "$out/$tool-$r.json")
        ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$tool" "$tps" "$cpu" "$load" | tee -a "$out/runs.tsv"
  done
done

python3 - "$out/runs.tsv" >"$out/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
med = lambda tool, k: statistics.median(float(r[k]) for r in rows if r['tool'] == tool)
tools = [t for t in ['pgbench-prepared', 'pgbench-simple', 'pgbench-pipeline', 'pgbench-extended', 'enginebench', 'enginebench-nobatch', 'enginebench-nopipe', 'enginebench-serial', 'enginebench-text', 'enginebench-extended'] if any(r['tool'] == t for r in rows)]
print('| tool | tps (median) | client µs/tx (median) | ÷ pgbench -M prepared: tps | CPU/tx | ÷ pgbench -M simple: tps | CPU/tx |')
print('|---|---|---|---|---|---|---|')
for t in tools:
    tps, cpu = med(t, 'tps'), med(t, 'client_us_per_tx')
    r = lambda b: f"{tps / med(b, 'tps'):.2f} | {cpu / med(b, 'client_us_per_tx'):.2f}" if b in tools else "- | -"
    print(f'| {t} | {tps:.0f} | {cpu:.1f} | {r("pgbench-prepared")} | {r("pgbench-simple")} |')
print(f"\nload average (1 min) during runs: {min(float(r['load1']) for r in rows):.1f}-{max(float(r['load1']) for r in rows):.1f}")
PY
cat "$out/summary.md"
