#!/usr/bin/env bash
# bench/vs-sysbench.sh: enginebench against sysbench on the same point select, same server,
# same table size and thread count, alternating A B A B, measured from outside both tools.
#
#   sysbench oltp_point_select     SELECT c FROM sbtest1 WHERE id=?  (prepared)
#   enginebench oltp_point_select  the same statement on its own sbtest1 (prepared)
#
# Usage:
#   bench/vs-sysbench.sh [mysql|pgsql]      (default mysql: MariaDB over its Unix socket)
#
# Environment (all optional):
#   EB_BIN         enginebench binary (default: target/release/enginebench, built if missing;
#                  a given EB_BIN must exist: nothing is built then)
#   EB_BIN_OLD     a second enginebench binary, e.g. the build from before a refactor: it runs
#                  as one more tool in every round, labelled `enginebench-old`, with exactly
#                  the arguments of the default enginebench run (same target, table, threads,
#                  times, EB_EXTRA; not the EB_VARIANTS), and summary.md adds new/old ratios.
#                  Tables are prepared by EB_BIN only. Order within a round: odd rounds run
#                  sysbench, enginebench, enginebench-old, variants; even rounds the reverse.
#                  So the new build runs before the old one in half the rounds and after it in
#                  the other half (the two always back to back), and a drift of the machine
#                  over a round (page cache, other load, the server's buffer pool, thermals)
#                  favours neither build. Use an even EB_PAIRS for an exact balance.
#   EB_PAIRS       rounds (default 3): A/B pairs, or more runs per round with EB_BIN_OLD or
#                  EB_VARIANTS
#   EB_THREADS     connections of each tool (default 16)
#   EB_TIME        seconds each tool runs (default 20; enginebench adds a 2 s warm-up)
#   EB_TABLE_SIZE  rows (default 100000)
#   EB_WINDOW      "START LEN": the measuring window in seconds after each client starts
#                  (default "5 12": both tools are connected and past start-up by then)
#   EB_SERVERS     a folder with servers started by scripts/db-servers.sh (default: start
#                  private ones in a temporary folder and stop them at the end)
#   EB_EXTRA       extra arguments for `enginebench run`, word-split
#   EB_VARIANTS    more enginebench runs in each round, one per space-separated item: a
#                  target-URL option ("begin=separate" runs `enginebench[begin=separate]` with
#                  `&begin=separate` added to the target) or flags, comma-separated
#                  ("--client-threads=2" or "--client-threads=16,--no-sched-batch");
#                  each is compared with sysbench like the default run
#   EB_PG_DRIVER   PostgreSQL client of enginebench: wire (default) or tokio_postgres
#   EB_OUT         output folder (default enginebench-results/vs-sysbench-<dbms>-<UTC time>)
#   EB_WORKLOAD    point_select (default), micro_point or read_write. micro_point runs
#                  enginebench's micro-read READ_PK_POINT (SELECT name FROM normal WHERE
#                  id = ?) instead of its oltp_point_select, as this script did before
#                  2026-11-25. read_write: sysbench oltp_read_write against
#                  `enginebench run oltp_read_write`, 1 table of EB_TABLE_SIZE rows each.
#                  MariaDB: queries are then Com_stmt_execute + Com_begin + Com_commit
#                  (sysbench sends BEGIN and COMMIT as text, as enginebench does).
#                  PostgreSQL: queries are 20 per committed transaction (xact_commit delta x
#                  20: the 18 statements of oltp_read_write's default mix, BEGIN and COMMIT,
#                  the same in both tools); a rolled-back transaction is not counted.
#                  The issue's setting: EB_WORKLOAD=read_write EB_THREADS=4.
#   EB_BURN        CPU burner threads (default 0: none). With N > 0 the script starts N busy
#                  loops in a session of their own (like another user's job on the machine),
#                  bounded by `timeout` to the length of the whole series and killed at the end,
#                  so every window of both tools runs on a loaded host. On this 2-vCPU machine
#                  EB_BURN=1 loads "the other core".
#   EB_TEXT        1: both tools also run with statements sent as text, in every round, as
#                  two more tools: `sysbench[text]` (--db-ps-mode=disable) and
#                  `enginebench[text]` (--statements text). summary.md then adds text ÷ text
#                  ratios and, per tool, prepared ÷ text per round. Queries are then counted
#                  by statement kind on MariaDB (Com_select + Com_insert + Com_update +
#                  Com_delete + Com_begin + Com_commit; MariaDB counts a prepared execution
#                  under its kind too), so both modes are counted alike.
#   EB_PLACEMENT   shared (default): client and server share both CPUs, as the scheduler
#                  places them. pinned: every client tool runs on CPU 0 (`taskset -c 0`) and
#                  every thread of the server (MariaDB: mariadbd's; PostgreSQL: the postmaster
#                  and its processes, whose new backends inherit it) on CPU 1, a stand-in for a
#                  client machine apart from the server's; both tools are placed the same way.
#                  The server's affinity is set back to every CPU at the end.
#   EB_PERF        1: also, in every window, `perf record -g` the server and `perf stat` the
#                  client's system calls (raw_syscalls:sys_enter), written next to runs.tsv as
#                  perf-<tool>-<run>.data / .stat. Recording costs the server CPU: use it for the
#                  profile, not for the ratios (runs.tsv then says perf=1).
#
# What is measured, in the same window for both tools (so start-up, connecting and the
# warm-up are outside it):
#   queries     MariaDB: the server's Com_stmt_execute delta (one per point select; the
#               admin queries of this script are text queries, not counted there).
#               PostgreSQL: xact_commit delta of the database from pg_stat_database
#               (each autocommit select is one transaction; flushed by backends about once a
#               second, so approximate to ~1 s of work over the window).
#   client CPU  utime+stime of the client process (all threads) from /proc/PID/stat
#   server CPU  mariadbd's utime+stime; PostgreSQL: the postmaster and its children
#   ctx sw      voluntary + nonvoluntary context switches summed over the client's threads
#   server cs   the server's voluntary and involuntary (preempted) context switches, summed
#               over its threads (MariaDB) or its processes (PostgreSQL), per query
#   other CPU   busy CPU of the whole machine (/proc/stat) minus client and server: how
#               disturbed the window was (other engineers compile on this machine)
# Output: one line per run in runs.tsv, medians and ratios in summary.md (also printed).

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "vs-sysbench.sh: $*" >&2; }
die() { echo "vs-sysbench.sh: ERROR: $*" >&2; exit 1; }

dbms=${1:-mysql}
case $dbms in mysql | pgsql) ;; *) die "unknown dbms '$dbms' (mysql or pgsql)" ;; esac
workload=${EB_WORKLOAD:-point_select}
case $workload in
    point_select | micro_point) ;;
    read_write) ;;
    *) die "unknown EB_WORKLOAD '$workload' (point_select, micro_point or read_write)" ;;
esac
pairs=${EB_PAIRS:-3}
threads=${EB_THREADS:-16}
time_s=${EB_TIME:-20}
rows=${EB_TABLE_SIZE:-100000}
read -r win_start win_len <<<"${EB_WINDOW:-5 12}"
(( win_start + win_len <= time_s )) || die "EB_WINDOW must end before EB_TIME"
command -v sysbench >/dev/null || die "sysbench is not installed (apt-get install sysbench)"
if [[ -n ${EB_BIN:-} ]]; then
    bin=$EB_BIN
    [[ -x $bin ]] || die "EB_BIN=$bin is not an executable file"
else
    bin=$repo/target/release/enginebench
    if [[ ! -x $bin ]]; then
        log "building $bin"
        (cd "$repo" && cargo build --release >&2)
    fi
fi
bin_old=${EB_BIN_OLD:-}
[[ -z $bin_old || -x $bin_old ]] || die "EB_BIN_OLD=$bin_old is not an executable file"
out=${EB_OUT:-$repo/enginebench-results/vs-sysbench-$dbms-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

burners=""
own_servers=0
placement=${EB_PLACEMENT:-shared}
[[ $placement == shared || $placement == pinned ]] ||
    die "EB_PLACEMENT must be shared or pinned, not '$placement'"
client_cpu=()
[[ $placement == pinned ]] && client_cpu=(taskset -c 0)
# Every thread of the server (and of its processes) onto the given CPUs.
place_server() {
    local p
    for p in $srv_pid $(pgrep -P "$srv_pid" || true); do
        taskset -a -p -c "$1" "$p" >/dev/null 2>&1 || true
    done
}
on_exit() {
    [[ -z $burners ]] || kill $burners 2>/dev/null || true
    if [[ $placement == pinned && -n ${srv_pid:-} ]]; then
        place_server "0-$(($(nproc) - 1))"
    fi
    if ((own_servers)); then
        bash "$repo/scripts/db-servers.sh" stop "$sdir" >&2
        rm -rf "$sdir"
    fi
}
trap on_exit EXIT
if [[ -n ${EB_SERVERS:-} ]]; then
    sdir=$EB_SERVERS
else
    sdir=$(mktemp -d /tmp/eb-vs-sysbench.XXXXXX)
    bash "$repo/scripts/db-servers.sh" start "$sdir" >&2
    own_servers=1
fi
# shellcheck disable=SC1091
source "$sdir/env.sh"

if [[ $dbms == mysql ]]; then
    sock=$(sed -n 's/.*socket=\([^&]*\).*/\1/p' <<<"$EB_TEST_MYSQL_URL")
    srv_pid=$EB_TEST_MYSQL_PID
    sql() { mariadb --no-defaults -S "$sock" -uroot -N -B -e "$1"; }
    sql "CREATE DATABASE IF NOT EXISTS sbtest; CREATE DATABASE IF NOT EXISTS ebvs"
    sb_workload=oltp_$workload
    [[ $workload == micro_point ]] && sb_workload=oltp_point_select
    sb=(sysbench "$sb_workload" --db-driver=mysql --mysql-socket="$sock" --mysql-user=root
        --mysql-db=sbtest --tables=1 --table-size="$rows")
    eb_target="mysql://root@localhost/ebvs?socket=$sock"
    if [[ ${EB_TEXT:-0} == 1 ]]; then
        queries() {
            sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', 'Com_update', 'Com_delete', 'Com_begin', 'Com_commit')" |
                awk '{s += $2} END {print s}'
        }
    else
        queries() {
            sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_stmt_execute', 'Com_begin', 'Com_commit')" |
                awk '{s += $2} END {print s}'
        }
    fi
    server_ticks() { awk '{print $14 + $15}' "/proc/$srv_pid/stat"; }
else
    pgdir=$(sed -n 's/.*host=\([^&]*\).*/\1/p' <<<"$EB_TEST_PG_URL")
    pgport=$(sed -n 's#.*localhost:\([0-9]*\)/.*#\1#p' <<<"$EB_TEST_PG_URL")
    srv_pid=$EB_TEST_PG_PID
    sql() { psql -h "$pgdir" -p "$pgport" -U postgres -d "${2:-postgres}" -At -c "$1"; }
    sql "CREATE DATABASE sbtest" >/dev/null 2>&1 || true
    sql "CREATE DATABASE ebvs" >/dev/null 2>&1 || true
    sb_workload=oltp_$workload
    [[ $workload == micro_point ]] && sb_workload=oltp_point_select
    sb=(sysbench "$sb_workload" --db-driver=pgsql --pgsql-host="$pgdir" --pgsql-port="$pgport"
        --pgsql-user=postgres --pgsql-db=sbtest --tables=1 --table-size="$rows")
    eb_target="postgres://postgres@localhost:$pgport/ebvs?host=$pgdir${EB_PG_DRIVER:+&driver=$EB_PG_DRIVER}"
    per_tx=1
    [[ $workload == read_write ]] && per_tx=20
    queries() {
        echo $(($(sql "SELECT sum(xact_commit) FROM pg_stat_database WHERE datname IN ('sbtest','ebvs')") * per_tx))
    }
    server_ticks() {
        local t=0 p
        for p in $srv_pid $(pgrep -P "$srv_pid"); do
            t=$((t + $(proc_ticks "$p")))
        done
        echo $t
    }
fi
# Voluntary and involuntary context switches of the server, summed over its threads/processes.
server_cs() {
    local pids=$srv_pid
    [[ $dbms == pgsql ]] && pids="$srv_pid $(pgrep -P "$srv_pid" | tr '\n' ' ')"
    local p
    for p in $pids; do cat /proc/"$p"/task/*/status 2>/dev/null || true; done |
        awk '/^voluntary_ctxt_switches/{v += $2} /^nonvoluntary_ctxt_switches/{n += $2}
             END {print v + 0, n + 0}'
}

hz=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
ctxsw() {
    { cat /proc/"$1"/task/*/status 2>/dev/null || true; } |
        awk '/^(voluntary|nonvoluntary)_ctxt_switches/{s += $2} END {print s + 0}'
}

if [[ $workload == micro_point ]]; then
    eb_workload=(micro-read --queries READ_PK_POINT)
elif [[ $workload == point_select ]]; then
    eb_workload=(oltp_point_select --tables 1)
else
    eb_workload=(oltp_read_write --tables 1)
fi
log "preparing: sysbench table and enginebench table ($rows rows each)"
if ! "${sb[@]}" prepare >"$out/sysbench-prepare.log" 2>&1; then
    "${sb[@]}" cleanup >/dev/null 2>&1 || true
    "${sb[@]}" prepare >"$out/sysbench-prepare.log" 2>&1 || die "sysbench prepare failed: see $out/sysbench-prepare.log"
fi
"$bin" prepare "${eb_workload[0]}" --target "$eb_target" --table-size "$rows" >"$out/eb-prepare.log" 2>&1 ||
    die "enginebench prepare failed: see $out/eb-prepare.log"
if [[ $dbms == pgsql ]]; then
    for db in sbtest ebvs; do
        sql "VACUUM ANALYZE" $db >/dev/null
        sql "CHECKPOINT" $db >/dev/null
    done
fi

# Run one client in the background; measure the window; wait for it.
measure() { # tool run
    local tool=$1 run=$2 pid
    local logf="$out/$tool-$run.log"
    if [[ $tool == sysbench* ]]; then
        local ps=()
        [[ $tool == "sysbench[text]" ]] && ps=(--db-ps-mode=disable)
        "${client_cpu[@]}" "${sb[@]}" "${ps[@]}" --threads="$threads" --time="$time_s" run >"$logf" 2>&1 &
    else
        local target=$eb_target variant="" flag=() exe=$bin
        if [[ $tool == enginebench-old ]]; then
            exe=$bin_old
        elif [[ $tool == "enginebench[text]" ]]; then
            read -r -a flag <<<"${EB_TEXT_FLAGS:---statements text}"
        elif [[ $tool == enginebench\[*\] ]]; then
            variant=${tool#enginebench\[}
            variant=${variant%]}
            if [[ $variant == --* ]]; then
                IFS=, read -r -a flag <<<"$variant"
            else
                target="$eb_target&$variant"
            fi
        fi
        # shellcheck disable=SC2086
        "${client_cpu[@]}" "$exe" run "${eb_workload[@]}" --target "$target" --table-size "$rows" \
            --threads "$threads" --warmup 2s --duration "${time_s}s" --runs 1 \
            --results-dir "$out/eb-results" ${EB_EXTRA:-} "${flag[@]}" >"$logf" 2>&1 &
    fi
    pid=$!
    sleep "$win_start"
    local q0 c0 s0 b0 x0 q1 c1 s1 b1 x1 t0 t1 sv0 sn0 sv1 sn1 perf_pids=()
    if [[ ${EB_PERF:-0} == 1 ]]; then
        perf record -q -g -p "$srv_pid" -o "$out/perf-$tool-$run.data" -- sleep "$win_len" \
            >/dev/null 2>&1 &
        perf_pids+=($!)
        perf stat -e raw_syscalls:sys_enter,context-switches,cpu-migrations -p "$pid" \
            -o "$out/perf-$tool-$run.stat" -- sleep "$win_len" >/dev/null 2>&1 &
        perf_pids+=($!)
    fi
    # The window's real length: psql can take a second or more to answer on a busy server,
    # so the rates divide by the time between the two counter reads, not by EB_WINDOW.
    q0=$(queries); t0=$(date +%s.%N); c0=$(proc_ticks $pid); s0=$(server_ticks); b0=$(busy_ticks); x0=$(ctxsw $pid)
    read -r sv0 sn0 < <(server_cs)
    sleep "$win_len"
    q1=$(queries); t1=$(date +%s.%N); c1=$(proc_ticks $pid); s1=$(server_ticks); b1=$(busy_ticks); x1=$(ctxsw $pid)
    read -r sv1 sn1 < <(server_cs)
    ((${#perf_pids[@]} == 0)) || wait "${perf_pids[@]}" || true
    # On a loaded machine the status queries themselves can take seconds: a client that ended
    # inside the window would make every figure of this run wrong.
    kill -0 "$pid" 2>/dev/null ||
        die "$tool run $run ended before the measuring window did: raise EB_TIME or shorten EB_WINDOW"
    wait $pid || die "$tool run $run failed: see $logf"
    awk -v tool="$tool" -v run="$run" -v q=$((q1 - q0)) -v c=$((c1 - c0)) -v s=$((s1 - s0)) \
        -v b=$((b1 - b0)) -v x=$((x1 - x0)) -v sv=$((sv1 - sv0)) -v sn=$((sn1 - sn0)) -v hz="$hz" -v len="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 'BEGIN {
        qps = q / len; cu = c / hz * 1e6 / q; su = s / hz * 1e6 / q; other = (b - c - s) / hz / len
        printf "%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\n", tool, run, qps, cu, su, x / q, other, sv / q, sn / q }' |
        tee -a "$out/runs.tsv"
}

printf 'tool\trun\tqps\tclient_us_per_q\tserver_us_per_q\tctxsw_per_q\tother_cores\tsrv_vcs_per_q\tsrv_ivcs_per_q\n' >"$out/runs.tsv"
# The tools of one round, in the order of the odd rounds.
round=(sysbench enginebench)
[[ -n $bin_old ]] && round+=(enginebench-old)
for v in ${EB_VARIANTS:-}; do
    round+=("enginebench[$v]")
done
[[ ${EB_TEXT:-0} == 1 ]] && round+=("sysbench[text]" "enginebench[text]")
if [[ $placement == pinned ]]; then
    (($(nproc) >= 2)) || die "EB_PLACEMENT=pinned needs two CPUs"
    place_server 1
    log "placement: clients on CPU 0, the server on CPU 1"
fi
log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
burn=${EB_BURN:-0}
if ((burn > 0)); then
    # Bounded: the whole series plus a minute, even if this script is killed hard.
    limit=$((pairs * ${#round[@]} * (time_s + 10) + 60))
    for ((b = 0; b < burn; b++)); do
        setsid timeout "$limit" sh -c 'while :; do :; done' &
        burners+="$! "
    done
    log "$burn CPU burner(s) started for at most $limit s"
    sleep 2
fi
for ((i = 1; i <= pairs; i++)); do
    if [[ -n $bin_old ]] && ((i % 2 == 0)); then
        # Even rounds reversed (see EB_BIN_OLD above). Without EB_BIN_OLD the order is
        # unchanged, so older result sets stay comparable.
        for ((j = ${#round[@]} - 1; j >= 0; j--)); do
            measure "${round[j]}" "$i"
        done
    else
        for t in "${round[@]}"; do
            measure "$t" "$i"
        done
    fi
done
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -z $burners ]] || kill $burners 2>/dev/null || true
burners=""

# Medians per tool, and ratios enginebench / sysbench (of the medians, and per pair).
python3 - "$out/runs.tsv" "$dbms" "$threads" "$rows" "$time_s" "$win_start" "$win_len" "$workload" "$placement" >"$out/summary.md" <<'EOF'
import sys, statistics as st
path, dbms, threads, rows, time_s, ws, wl = sys.argv[1:8]
placement = sys.argv[9]
rows_ = [l.rstrip("\n").split("\t") for l in open(path)][1:]
cols = ["qps", "client_us_per_q", "server_us_per_q", "ctxsw_per_q", "other_cores", "srv_vcs", "srv_ivcs"]
by = {}
for r in rows_:
    by.setdefault(r[0], []).append([float(x) for x in r[2:]])
med = {t: [st.median(v[i] for v in vs) for i in range(len(cols))] for t, vs in by.items()}
print(f"## enginebench vs sysbench: {sys.argv[8]}, {dbms}, {threads} threads, {rows} rows, "
      f"{time_s} s runs, window {ws}+{wl} s, {len(by.get('sysbench', []))} "
      f"{'rounds' if 'enginebench-old' in by else 'pairs'}, placement {placement}"
      f"{' (clients on CPU 0, server on CPU 1)' if placement == 'pinned' else ''}\n")
print("| tool | QPS | client µs/query | server µs/query | ctx switches/query | other busy cores | server voluntary cs/query | server preempted cs/query |")
print("|---|---|---|---|---|---|---|---|")
for t in ["sysbench", "sysbench[text]", "enginebench", "enginebench-old"] + sorted(t for t in med if t.startswith("enginebench[")):
    if t in med:
        m = med[t]
        print(f"| {t} (median) | {m[0]:.0f} | {m[1]:.2f} | {m[2]:.2f} | {m[3]:.2f} | {m[4]:.2f} | {m[5]:.3f} | {m[6]:.3f} |")
if "sysbench" in med and "enginebench" in med:
    s, e = med["sysbench"], med["enginebench"]
    print(f"| ratio of medians, enginebench / sysbench | {e[0]/s[0]:.3f} | {e[1]/s[1]:.3f} | {e[2]/s[2]:.3f} | {e[3]/s[3]:.3f} | | {e[5]/s[5]:.3f} | {e[6]/s[6]:.3f} |")
    pq = [b[0] / a[0] for a, b in zip(by["sysbench"], by["enginebench"])]
    pc = [b[1] / a[1] for a, b in zip(by["sysbench"], by["enginebench"])]
    print(f"\nPer pair: QPS ratio {', '.join(f'{x:.3f}' for x in pq)}; "
          f"client CPU/query ratio {', '.join(f'{x:.3f}' for x in pc)}")
    for t in sorted(t for t in med if t.startswith("enginebench[") and t != "enginebench[text]"):
        v = med[t]
        pq = [b[0] / a[0] for a, b in zip(by["sysbench"], by[t])]
        pc = [b[1] / a[1] for a, b in zip(by["sysbench"], by[t])]
        print(f"\n{t} / sysbench: QPS {v[0]/s[0]:.3f}, client CPU/query {v[1]/s[1]:.3f} by medians; "
              f"per pair QPS {', '.join(f'{x:.3f}' for x in pq)}; "
              f"client CPU/query {', '.join(f'{x:.3f}' for x in pc)}")
# Statements as text (EB_TEXT=1): text against text, and each tool's prepared ÷ text per round.
if "sysbench[text]" in by and "enginebench[text]" in by:
    s, e = med["sysbench[text]"], med["enginebench[text]"]
    pq = [b[0] / a[0] for a, b in zip(by["sysbench[text]"], by["enginebench[text]"])]
    pc = [b[1] / a[1] for a, b in zip(by["sysbench[text]"], by["enginebench[text]"])]
    ps = [b[2] / a[2] for a, b in zip(by["sysbench[text]"], by["enginebench[text]"])]
    print(f"\n### statements as text: enginebench[text] / sysbench[text] ({len(pq)} pairs)\n")
    print(f"- by medians: QPS {e[0]/s[0]:.3f}, client CPU/query {e[1]/s[1]:.3f}, server CPU/query {e[2]/s[2]:.3f}")
    print(f"- per pair: QPS median {st.median(pq):.3f} ({', '.join(f'{x:.3f}' for x in pq)}); "
          f"client CPU/query median {st.median(pc):.3f} ({', '.join(f'{x:.3f}' for x in pc)}); "
          f"server CPU/query median {st.median(ps):.3f}")
    for tool in ["sysbench", "enginebench"]:
        if tool not in by:
            continue
        prep, text = by[tool], by[tool + "[text]"]
        print(f"\n{tool}, prepared ÷ text per round: "
              + "; ".join(f"{name} median {st.median(b[i] / a[i] for a, b in zip(text, prep)):.3f}"
                          for name, i in [("QPS", 0), ("client µs/query", 1), ("server µs/query", 2)]))
# Each variant against the default run of the same round: what the variant's flag costs.
for t in sorted(t for t in by if t.startswith("enginebench[")):
    if "enginebench" not in by:
        break
    base = {int(r[1]): [float(x) for x in r[2:]] for r in rows_ if r[0] == "enginebench"}
    var = {int(r[1]): [float(x) for x in r[2:]] for r in rows_ if r[0] == t}
    runs = sorted(set(base) & set(var))
    if not runs:
        continue
    print(f"\n### {t} / enginebench, per round ({len(runs)} rounds)\n")
    for name, i in [("QPS", 0), ("client µs/query", 1), ("server µs/query", 2)]:
        v = [var[n][i] / base[n][i] for n in runs]
        print(f"- {name}: median {st.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f}; "
              f"rounds {', '.join(f'{x:.3f}' for x in v)})")
if "enginebench" in by and "enginebench-old" in by:
    # New build / old build, per round (matched by run number), then the median of those.
    new = {int(r[1]): [float(x) for x in r[2:]] for r in rows_ if r[0] == "enginebench"}
    old = {int(r[1]): [float(x) for x in r[2:]] for r in rows_ if r[0] == "enginebench-old"}
    runs = sorted(set(new) & set(old))
    def ratios(i):
        return [new[n][i] / old[n][i] for n in runs]
    def line(name, i):
        v = ratios(i)
        return (f"- {name} new/old: median {st.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f}; "
                f"rounds {', '.join(f'{x:.3f}' for x in v)})")
    print(f"\n### enginebench (new, EB_BIN) vs enginebench-old (EB_BIN_OLD), {len(runs)} rounds\n")
    print(line("QPS", 0))
    print(line("client µs/query", 1))
    print(line("server µs/query", 2))
    q, c = st.median(ratios(0)), st.median(ratios(1))
    ok = q >= 0.97 and c <= 1.03
    print(f"\nAcceptance (median per-round ratios: QPS ≥ 0.97, client µs/query ≤ 1.03): "
          f"{'pass' if ok else 'FAIL'} (QPS {q:.3f}, client µs/query {c:.3f})")
EOF
cat "$out/summary.md"
log "results in $out"
