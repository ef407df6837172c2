#!/usr/bin/env bash
# bench/vs-tpcc-peers.sh: TPC-C load and tpmC of enginebench side by side with go-tpc,
# BenchBase and tpcc-mysql on one private MariaDB (InnoDB) server, every figure measured from
# outside the tools, tools alternated in an order that rotates each round; prints a Markdown table.
#
#   EB_GOTPC=/path/to/go-tpc \
#   EB_BENCHBASE_DIR=/path/to/benchbase-mariadb EB_JAVA=/path/to/java \
#   EB_TPCC_MYSQL_DIR=/path/to/tpcc-mysql \
#   ROUNDS=3 bench/vs-tpcc-peers.sh
#
# Peers are built by hand outside this repository; a peer whose variable is unset is skipped
# (with a message). EB_GOTPC: the go-tpc binary. EB_BENCHBASE_DIR: an unpacked BenchBase built
# with the mariadb profile (benchbase.jar, lib/); BenchBase needs Java 23 or later, EB_JAVA
# (default: java on PATH). EB_TPCC_MYSQL_DIR: the tpcc-mysql folder with tpcc_load and
# tpcc_start built, create_table.sql and add_fkey_idx.sql.
#
# Settings (environment): ROUNDS (3), LOAD_W (load sizes in warehouses, "2"; "2 10" adds the
# 10-warehouse load), RUN_W (2: warehouses of the tpmC runs), THREADS (16), WARMUP (10 s),
# SECS (40 s measured), EB_BIN (target/release/enginebench), EB_SERVERS (a folder where
# scripts/db-servers.sh already runs servers; default: start private ones and stop them at
# the end), EB_OUT (folder for the tools' logs; default a new one under enginebench-results/),
# EB_RUN_FLAGS (extra flags of `enginebench run`, e.g. --no-sched-batch), EB_PROCEDURES=1
# (adds the row "enginebench-procedures": `--procedures`, one stored-procedure CALL per
# transaction, beside the statement mode; never counted as a peer), EB_BIN_BEFORE (a second
# enginebench binary, e.g. an earlier build: the row "enginebench-before", never a peer),
# EB_PERF=1 (perf samples mariadbd at 199 Hz over every tool's measured window, call graphs
# off; the top functions of each tool's window go to perf-TOOL.txt in the log folder, with
# their share of the server's CPU per NewOrder), EB_CHECK=1 (`enginebench check tpcc` on
# enginebench's databases after each run: the spec's consistency conditions), INDEXES (go-tpc's
# index set: "equal", "own" or "both", default both; see below).
#
# Method (the same for every tool):
# - One private MariaDB 10.11 (scripts/db-servers.sh), innodb_buffer_pool_size raised to 1G,
#   every tool over TCP to 127.0.0.1 (go-tpc and BenchBase have no Unix socket option here),
#   each in its own database, dropped and created again before its load and dropped after its
#   run. Before each run InnoDB's dirty pages are flushed (bounded wait), so no tool starts
#   behind another one's load.
# - Isolation REPEATABLE READ for everyone: BenchBase's TPC-C figures are usually quoted at
#   REPEATABLE READ and its sample config asks for SERIALIZABLE; it is MariaDB's default, and
#   go-tpc (--isolation 4), BenchBase (TRANSACTION_REPEATABLE_READ) and enginebench
#   (--isolation repeatable-read) are told so explicitly; tpcc-mysql uses the server default.
# - Load: wall time of the tool's whole load (schema, rows, indexes and the keys the tool's
#   own instructions create: BenchBase's DDL and tpcc-mysql's add_fkey_idx.sql have foreign
#   keys; go-tpc (default --use-fk=false) and enginebench have none); 2 loader connections for
#   go-tpc (-T 2), BenchBase (loaderThreads 2) and enginebench (--load-connections 2);
#   tpcc-mysql as its load.sh does it (4 tpcc_load processes: items, warehouses+stock,
#   customers, orders). Client CPU: user+system of the load command and every process it
#   waited for (the shell's cutime+cstime, /proc/self/stat); server CPU: mariadbd's
#   utime+stime (/proc/PID/stat); rows: COUNT(*) of every table of the tool's database after
#   the load.
# - Run: the tool runs the standard mix (45/43/4/4/4, no keying or think times) with THREADS
#   connections on RUN_W warehouses; the window measured starts WARMUP s after its first
#   committed NewOrder (so start-up, JVM warm-up and the tools' own warm-ups are outside it)
#   and lasts SECS s; then the tool is stopped with SIGINT (its own summary is not used). NewOrders: the growth of SUM(d_next_o_id) of the district
#   table (one per committed NewOrder, in every tool's schema); transactions: the growth of
#   Com_commit + Com_rollback; client CPU: the tool's process (all threads) from
#   /proc/PID/stat; server CPU: mariadbd's; other CPU: busy CPU of the host (/proc/stat) minus
#   both. tpmC = NewOrders / SECS * 60.
# - Index sets: go-tpc's MySQL schema has the same primary keys and the same two secondary
#   indexes as enginebench's (customer by last name, orders by customer) plus two on history
#   (idx_h_w_id, idx_h_c_w_id), which every Payment's history insert maintains. INDEXES=equal
#   runs go-tpc with those two dropped after its load (outside the load's time), so that both
#   tools maintain the same indexes: the row "go-tpc"; INDEXES=own runs it with its own set: the
#   row "go-tpc-own"; both (the default) runs the two as separate tools in every round.
#   BenchBase and tpcc-mysql keep their own sets (foreign keys and their indexes).
# - Medians over the rounds; ratios against the best peer (the fastest load, the highest tpmC).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "vs-tpcc-peers.sh: $*" >&2; }
die() { echo "vs-tpcc-peers.sh: ERROR: $*" >&2; exit 1; }

ROUNDS=${ROUNDS:-3}
LOAD_W=${LOAD_W:-2}
RUN_W=${RUN_W:-2}
THREADS=${THREADS:-16}
WARMUP=${WARMUP:-10}
SECS=${SECS:-40}
# The tools run this much longer than start-up + WARMUP + SECS would need; they are stopped
# (SIGINT) once the window has been measured.
SPARE=60
for v in ROUNDS RUN_W THREADS WARMUP SECS; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive integer (got '${!v}')"
done
for w in $LOAD_W; do [[ $w =~ ^[0-9]+$ && $w -gt 0 ]] || die "LOAD_W: '$w' is not a warehouse count"; done
JAVA=${EB_JAVA:-java}
bin=${EB_BIN:-$repo/target/release/enginebench}
[[ -x $bin ]] || die "$bin is missing: cargo build --release"

# The tools that take part, enginebench first; peers only when their variable is set.
tools=(enginebench)
[[ ${EB_PROCEDURES:-0} == 1 ]] && tools+=(enginebench-procedures)
if [[ -n ${EB_BIN_BEFORE:-} ]]; then
    [[ -x $EB_BIN_BEFORE ]] || die "EB_BIN_BEFORE=$EB_BIN_BEFORE is not an executable"
    tools+=(enginebench-before)
fi
if [[ ${EB_PERF:-0} == 1 ]]; then command -v perf >/dev/null || die "EB_PERF=1 needs perf on PATH"; fi
INDEXES=${INDEXES:-both}
if [[ -n ${EB_GOTPC:-} ]]; then
    [[ -x $EB_GOTPC ]] || die "EB_GOTPC=$EB_GOTPC is not an executable"
    case $INDEXES in
    equal) tools+=(go-tpc) ;;
    own) tools+=(go-tpc-own) ;;
    both) tools+=(go-tpc go-tpc-own) ;;
    *) die "INDEXES must be equal, own or both (got '$INDEXES')" ;;
    esac
else log "EB_GOTPC is not set: go-tpc skipped"; fi
if [[ -n ${EB_BENCHBASE_DIR:-} ]]; then
    [[ -f $EB_BENCHBASE_DIR/benchbase.jar ]] || die "no benchbase.jar in EB_BENCHBASE_DIR=$EB_BENCHBASE_DIR"
    "$JAVA" -version >/dev/null 2>&1 || die "EB_JAVA=$JAVA does not run (BenchBase needs Java 23+)"
    tools+=(benchbase)
else log "EB_BENCHBASE_DIR is not set: BenchBase skipped"; fi
if [[ -n ${EB_TPCC_MYSQL_DIR:-} ]]; then
    for f in tpcc_load tpcc_start create_table.sql add_fkey_idx.sql; do
        [[ -e $EB_TPCC_MYSQL_DIR/$f ]] || die "no $f in EB_TPCC_MYSQL_DIR=$EB_TPCC_MYSQL_DIR"
    done
    tools+=(tpcc-mysql)
else log "EB_TPCC_MYSQL_DIR is not set: tpcc-mysql skipped"; fi

out=${EB_OUT:-$repo/enginebench-results/vs-tpcc-peers-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
if [[ -n ${EB_SERVERS:-} ]]; then
    sdir=$EB_SERVERS
else
    sdir=$(mktemp -d /tmp/eb-vs-tpcc.XXXXXX)
    bash "$repo/scripts/db-servers.sh" start "$sdir" >&2
    trap 'bash "$repo/scripts/db-servers.sh" stop "$sdir" >&2; rm -rf "$sdir"' EXIT
fi
# shellcheck disable=SC1091
source "$sdir/env.sh"
port=$(sed -n 's|.*@127\.0\.0\.1:\([0-9]*\)/.*|\1|p' <<<"$EB_TEST_MYSQL_TCP_URL")
srv_pid=$EB_TEST_MYSQL_PID
[[ -n $port && -r /proc/$srv_pid/stat ]] || die "no MariaDB server found in $sdir/env.sh"

sql() { mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -N -B -e "$1"; }
for _ in $(seq 60); do sql "SELECT 1" >/dev/null 2>&1 && break; sleep 1; done
sql "SELECT 1" >/dev/null || die "MariaDB on port $port does not answer"
sql "SET GLOBAL innodb_buffer_pool_size = 1073741824; SET GLOBAL tx_isolation = 'REPEATABLE-READ'"

hz=$(getconf CLK_TCK)
# utime+stime of a process in ticks (fields after the command name, which may hold spaces).
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# CPU of the processes this shell has waited for (cutime+cstime).
child_ticks() { sed 's/^.*) //' /proc/$$/stat | awk '{print $14 + $15}'; }
host_busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A col
add() { col[$1]+="$2 "; }
med() { median <<<"${col[$1]:-}"; }

db_of() { echo "eb_vs_${1//-/_}"; }
# Connections left on the tools' databases (a tool killed earlier, its queries still running)
# would use the server's CPU during the next measurement: end them.
kill_leftovers() {
    local id
    for id in $(sql "SELECT id FROM information_schema.processlist WHERE db LIKE 'eb\\_vs\\_%' AND id <> CONNECTION_ID()"); do
        sql "KILL $id" 2>/dev/null || true
    done
}
fresh_db() { kill_leftovers; sql "DROP DATABASE IF EXISTS $1; CREATE DATABASE $1"; }
count_rows() {
    local q
    q=$(sql "SELECT GROUP_CONCAT(CONCAT('(SELECT COUNT(*) FROM \`', table_schema, '\`.\`', table_name, '\`)') SEPARATOR ' + ')
             FROM information_schema.tables WHERE table_schema = '$1' AND table_type = 'BASE TABLE'
               AND table_name <> 'enginebench_meta'")
    sql "SELECT $q"
}
# Flush InnoDB's dirty pages (at most 60 s), so that every tool starts on a clean buffer pool.
settle() {
    sql "SET GLOBAL innodb_max_dirty_pages_pct = 0"
    for _ in $(seq 60); do
        [[ $(sql "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{print $2}') -le 10 ]] && break
        sleep 1
    done
    sql "SET GLOBAL innodb_max_dirty_pages_pct = 90"
}

bb_config() { # DB W TERMINALS TIME_S
    cat <<EOF
<?xml version="1.0"?>
<parameters>
    <type>MARIADB</type>
    <driver>org.mariadb.jdbc.Driver</driver>
    <url>jdbc:mariadb://127.0.0.1:$port/$1?useServerPrepStmts</url>
    <username>root</username>
    <password></password>
    <reconnectOnConnectionFailure>true</reconnectOnConnectionFailure>
    <isolation>TRANSACTION_REPEATABLE_READ</isolation>
    <batchsize>128</batchsize>
    <loaderThreads>2</loaderThreads>
    <scalefactor>$2</scalefactor>
    <terminals>$3</terminals>
    <works><work><time>$4</time><rate>unlimited</rate><weights>45,43,4,4,4</weights></work></works>
    <transactiontypes>
        <transactiontype><name>NewOrder</name></transactiontype>
        <transactiontype><name>Payment</name></transactiontype>
        <transactiontype><name>OrderStatus</name></transactiontype>
        <transactiontype><name>Delivery</name></transactiontype>
        <transactiontype><name>StockLevel</name></transactiontype>
    </transactiontypes>
</parameters>
EOF
}

# load TOOL DB W: the tool's whole load into a fresh database (runs in this shell: its
# children's CPU is read from this shell's cutime).
load() {
    local tool=$1 db=$2 w=$3 d=${EB_TPCC_MYSQL_DIR:-}
    case $tool in
    enginebench | enginebench-procedures | enginebench-before)
        local procs=() b=$bin
        [[ $tool == enginebench-procedures ]] && procs=(--procedures)
        [[ $tool == enginebench-before ]] && b=$EB_BIN_BEFORE
        "$b" prepare tpcc --target "mysql://root@127.0.0.1:$port/$db" --warehouses "$w" \
            --load-connections 2 "${procs[@]}" ;;
    go-tpc | go-tpc-own)
        "$EB_GOTPC" tpcc prepare -H 127.0.0.1 -P "$port" -D "$db" --warehouses "$w" -T 2 --no-check ;;
    benchbase)
        bb_config "$db" "$w" 1 1 >"$out/bb-$db.xml"
        (cd "$EB_BENCHBASE_DIR" && "$JAVA" -jar benchbase.jar -b tpcc -c "$out/bb-$db.xml" \
            --create=true --load=true -d "$out/bb-results") ;;
    tpcc-mysql)
        mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot "$db" <"$d/create_table.sql" || return 1
        # As tpcc-mysql's load.sh: items, then per range warehouses+stock, customers, orders.
        local pids=()
        "$d/tpcc_load" -h 127.0.0.1 -P "$port" -d "$db" -u root -p "" -w "$w" -l 1 -m 1 -n "$w" & pids+=($!)
        for part in 2 3 4; do
            "$d/tpcc_load" -h 127.0.0.1 -P "$port" -d "$db" -u root -p "" -w "$w" -l "$part" -m 1 -n "$w" & pids+=($!)
        done
        local p rc=0
        for p in "${pids[@]}"; do wait "$p" || rc=1; done
        [[ $rc == 0 ]] || return 1
        mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot "$db" <"$d/add_fkey_idx.sql" ;;
    esac
}

# start_run TOOL DB: launch the tool's mix in the background; sets run_pid to the tool itself.
start_run() {
    local tool=$1 db=$2 total=$((WARMUP + SECS + SPARE))
    case $tool in
    enginebench | enginebench-procedures | enginebench-before)
        local procs=() b=$bin
        [[ $tool == enginebench-procedures ]] && procs=(--procedures)
        [[ $tool == enginebench-before ]] && b=$EB_BIN_BEFORE
        "$b" run tpcc --target "mysql://root@127.0.0.1:$port/$db" --warehouses "$RUN_W" \
            --threads "$THREADS" --isolation repeatable-read --warmup 0 --duration "${total}s" \
            --runs 1 --results-dir "$out/eb-results" "${procs[@]}" ${EB_RUN_FLAGS:-} ;; # word-split on purpose
    go-tpc | go-tpc-own)
        "$EB_GOTPC" tpcc run -H 127.0.0.1 -P "$port" -D "$db" --warehouses "$RUN_W" \
            -T "$THREADS" --isolation 4 --time "${total}s" --interval 10s ;;
    benchbase)
        bb_config "$db" "$RUN_W" "$THREADS" "$total" >"$out/bb-run-$db.xml"
        cd "$EB_BENCHBASE_DIR"
        "$JAVA" -jar benchbase.jar -b tpcc -c "$out/bb-run-$db.xml" --execute=true -d "$out/bb-results" ;;
    tpcc-mysql)
        "$EB_TPCC_MYSQL_DIR/tpcc_start" -h 127.0.0.1 -P "$port" -d "$db" -u root -p "" \
            -w "$RUN_W" -c "$THREADS" -r 0 -l "$total" -i 10 ;;
    esac >"$out/run-$tool-r$round.log" 2>&1 &
    run_pid=$!
}
# The tool's process: start_run's background job is a subshell only for benchbase's cd; the
# JVM is then its child. Resolve to the process doing the work.
tool_pid() {
    local p=$1 c
    c=$(awk '{print $1}' "/proc/$p/task/$p/children" 2>/dev/null)
    [[ -n $c ]] && echo "$c" || echo "$p"
}
new_orders() { sql "SELECT SUM(d_next_o_id) FROM $1.district"; }
commits() { sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')" | awk '{s += $2} END {print s}'; }

kill_leftovers
for tool in "${tools[@]}"; do sql "DROP DATABASE IF EXISTS $(db_of "$tool")"; done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before" | tee "$out/summary.txt"
# The run size is loaded last, so that its data is the one the run uses.
load_sizes=$(tr ' ' '\n' <<<"$LOAD_W" | { grep -vx "$RUN_W" || true; } | tr '\n' ' ')
load_sizes="$load_sizes $RUN_W"
for round in $(seq 1 "$ROUNDS"); do
    # The order rotates each round (A B C, B C A, C A B, ...), so that no tool always runs
    # first after the server started or right after the same neighbour.
    order=()
    for k in "${!tools[@]}"; do order+=("${tools[$(((k + round - 1) % ${#tools[@]}))]}"); done
    for tool in "${order[@]}"; do
        db=$(db_of "$tool")
        for w in $load_sizes; do
            fresh_db "$db"
            settle
            s0=$(ticks "$srv_pid"); c0=$(child_ticks); t0=$(now)
            if ! load "$tool" "$db" "$w" >"$out/load-$tool-w$w-r$round.log" 2>&1; then
                die "$tool's load of $w warehouses failed: see $out/load-$tool-w$w-r$round.log"
            fi
            t1=$(now); c1=$(child_ticks); s1=$(ticks "$srv_pid")
            rows=$(count_rows "$db")
            wall=$(calc "$t1 - $t0")
            ccpu=$(calc "($c1 - $c0) / $hz")
            scpu=$(calc "($s1 - $s0) / $hz")
            add "load_s $tool $w" "$wall"
            add "load_ccpu $tool $w" "$ccpu"
            add "load_sus $tool $w" "$(calc "($s1 - $s0) / $hz * 1e6 / $rows")"
            add "load_cus $tool $w" "$(calc "($c1 - $c0) / $hz * 1e6 / $rows")"
            echo "round $round $tool load of $w warehouses: $wall s, $rows rows, client CPU $ccpu s, server CPU $scpu s" | tee -a "$out/summary.txt"
            # Rows per table, to compare the tools' loads (the same spec: the same counts).
            for t in warehouse district customer history orders new_order new_orders order_line stock item; do
                n=$(sql "SELECT COUNT(*) FROM $db.$t" 2>/dev/null) || continue
                add "rows $tool $w $t" "$n"
            done
        done
        # The equal index set: go-tpc without its two history indexes (outside the load time).
        if [[ $tool == go-tpc ]]; then
            sql "ALTER TABLE $db.history DROP INDEX idx_h_w_id, DROP INDEX idx_h_c_w_id"
        fi
        settle
        start_run "$tool" "$db"
        # The warm-up starts at the first committed NewOrder: start-up (a JVM, connecting 16
        # sessions, preparing statements) took up to 11 s on the busy machine.
        n=$(new_orders "$db"); started=0
        for _ in $(seq 120); do
            sleep 0.5
            kill -0 "$run_pid" 2>/dev/null || break
            [[ $(new_orders "$db") != "$n" ]] && { started=1; break; }
        done
        [[ $started == 1 ]] || die "$tool committed no NewOrder within 60 s of its start: see $out/run-$tool-r$round.log"
        sleep "$WARMUP"
        pid=$(tool_pid "$run_pid")
        [[ -r /proc/$pid/stat ]] || die "$tool stopped during the warm-up: see $out/run-$tool-r$round.log"
        n0=$(new_orders "$db"); x0=$(commits); s0=$(ticks "$srv_pid"); c0=$(ticks "$pid"); h0=$(host_busy); t0=$(now)
        if [[ ${EB_PERF:-0} == 1 ]]; then
            perf record -q -F 199 -p "$srv_pid" -o "$out/perf-$tool-r$round.data" -- sleep "$SECS" >/dev/null 2>&1 \
                || die "perf record failed (perf_event_paranoid?)"
        else
            sleep "$SECS"
        fi
        c1=$(ticks "$pid" 2>/dev/null) || die "$tool ended before the measured window did: see $out/run-$tool-r$round.log"
        n1=$(new_orders "$db"); x1=$(commits); s1=$(ticks "$srv_pid"); h1=$(host_busy); t1=$(now)
        # Measured: stop the tool (SIGINT, as Ctrl-C; then SIGKILL after 15 s).
        kill -INT "$pid" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$run_pid" 2>/dev/null || true
        no=$((n1 - n0)); tx=$((x1 - x0))
        (( no > 0 )) || die "$tool committed no NewOrder in the window: see $out/run-$tool-r$round.log"
        win=$(calc "$t1 - $t0" 3)
        tpmc=$(calc "$no / $win * 60" 0)
        cus=$(calc "($c1 - $c0) / $hz * 1e6 / $no" 1)
        sus=$(calc "($s1 - $s0) / $hz * 1e6 / $no" 1)
        ctx=$(calc "($c1 - $c0) / $hz * 1e6 / ($tx > 0 ? $tx : 1)" 1)
        share=$(calc "100 * ($c1 - $c0) / ($c1 - $c0 + $s1 - $s0)" 0)
        others=$(calc "(($h1 - $h0) - ($c1 - $c0) - ($s1 - $s0)) / $hz / $win" 2)
        add "tpmc $tool" "$tpmc"; add "cus $tool" "$cus"; add "sus $tool" "$sus"
        add "ctx $tool" "$ctx"; add "share $tool" "$share"; add "others $tool" "$others"
        if [[ ${EB_PERF:-0} == 1 ]]; then
            # The top functions of mariadbd over the window: share of its samples, and that
            # share of its CPU per NewOrder (µs).
            { echo "round $round $tool: server $sus µs/NewOrder"
              perf report -i "$out/perf-$tool-r$round.data" --stdio --no-children --sort dso,sym 2>/dev/null \
                | awk -v s="$sus" '/^ +[0-9.]+%/ { p = $1; sub("%", "", p); if (n++ < 25) printf "%6.2f %% %8.1f µs  %s\n", p, p * s / 100, substr($0, index($0, $2)) }'
              echo; } >>"$out/perf-$tool.txt"
            rm -f "$out/perf-$tool-r$round.data"
        fi
        if [[ ${EB_CHECK:-0} == 1 && $tool == enginebench* ]]; then
            if "$bin" check tpcc --target "mysql://root@127.0.0.1:$port/$db" --warehouses "$RUN_W" \
                >"$out/check-$tool-r$round.log" 2>&1; then
                add "check $tool" "pass"
            else
                add "check $tool" "FAIL"
                log "round $round: check tpcc failed after $tool's run: see $out/check-$tool-r$round.log"
            fi
        fi
        echo "round $round $tool run: tpmC $tpmc ($no NewOrders in $win s, $tx commits+rollbacks), client $cus µs/NewOrder ($ctx µs/transaction), server $sus µs/NewOrder, client share $share %, other processes $others CPUs" | tee -a "$out/summary.txt"
        sql "DROP DATABASE IF EXISTS $db"
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The best peer: the lowest median load time, the highest median tpmC (enginebench excluded).
best() { # KEY-PREFIX KEY-SUFFIX max|min
    local t v bv=""
    for t in "${tools[@]}"; do
        [[ $t == enginebench* ]] && continue
        v=$(med "$1 $t$2")
        if [[ -z $bv ]] || awk -v a="$v" -v b="$bv" -v m="$3" 'BEGIN { exit !((m == "max") ? a > b : a < b) }'; then
            bv=$v
        fi
    done
    echo "$bv"
}
ratio() { [[ -n $2 && $2 != nan ]] && calc "$1 / $2" 2 || echo "–"; }
{
    echo
    echo "TPC-C, MariaDB 10.11 InnoDB (1G buffer pool, TCP), REPEATABLE READ, $ROUNDS round(s), medians; load average before $load_before, after $load_after"
    echo
    for w in $load_sizes; do
        bl=$(best load_s " $w" min)
        echo "Load of $w warehouses (ratio: time ÷ the fastest peer's):"
        echo
        echo "| tool | load s | ratio | client CPU s | client µs/row | server µs/row |"
        echo "|---|---|---|---|---|---|"
        for t in "${tools[@]}"; do
            echo "| $t | $(med "load_s $t $w") | $(ratio "$(med "load_s $t $w")" "$bl") | $(med "load_ccpu $t $w") | $(med "load_cus $t $w") | $(med "load_sus $t $w") |"
        done
        echo
        echo "Rows per table after the load of $w warehouses (last round; go-tpc names new_orders new_order):"
        echo
        echo "| tool | warehouse | district | customer | history | orders | new orders | order_line | stock | item |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
        for t in "${tools[@]}"; do
            line="| $t"
            for tb in warehouse district customer history orders new_orders order_line stock item; do
                v=$(awk '{print $NF}' <<<"${col[rows $t $w $tb]:-}")
                [[ -z $v && $tb == new_orders ]] && v=$(awk '{print $NF}' <<<"${col[rows $t $w new_order]:-}")
                line+=" | ${v:-–}"
            done
            echo "$line |"
        done
        echo
    done
    bt=$(best tpmc "" max)
    echo "Mix at $THREADS connections on $RUN_W warehouses, ${SECS} s measured after ${WARMUP} s (ratio: tpmC ÷ the best peer's; go-tpc: its two history indexes dropped, the index set of enginebench; go-tpc-own: its own index set):"
    echo
    echo "| tool | tpmC | ratio | client µs/NewOrder | client µs/transaction | server µs/NewOrder | client share of CPU | other processes (CPUs) |"
    echo "|---|---|---|---|---|---|---|---|"
    for t in "${tools[@]}"; do
        echo "| $t | $(med "tpmc $t") | $(ratio "$(med "tpmc $t")" "$bt") | $(med "cus $t") | $(med "ctx $t") | $(med "sus $t") | $(med "share $t") % | $(med "others $t") |"
    done
    if [[ ${EB_CHECK:-0} == 1 ]]; then
        echo
        for t in "${tools[@]}"; do
            [[ $t == enginebench* ]] && echo "check tpcc after $t's runs: ${col[check $t]:-not run}"
        done
    fi
} | tee -a "$out/summary.txt"
log "logs and summary in $out"
