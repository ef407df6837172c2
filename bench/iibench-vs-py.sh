#!/usr/bin/env bash
# iibench-vs-py.sh: enginebench's iibench against the reference iibench.py (v0, mdcallag/mytools
# bench/ibench/v0/iibench.py: the version with the (price, customerid) indexes) on the same
# MariaDB server, same table and indexes, same batch size, alternating A B A B; prints each
# run's insert rate and client CPU per row (user + system of the whole client process tree,
# from /usr/bin/time) and the medians and ratios.
#
#   bench/iibench-vs-py.sh SOCKET [ROWS] [ROUNDS] [ENGINE]
#
# SOCKET: a MariaDB Unix socket where root logs in without a password (scripts/db-servers.sh
# start DIR gives DIR/mdb.sock). ROWS default 200000, ROUNDS 3, ENGINE InnoDB. IIBENCH_PY:
# path of iibench.py (default /work/peers/mytools/iibench_v0.py; fetched outside the repo),
# run with /usr/bin/python3 and its MySQLdb (Debian package python3-mysqldb). Both insert
# 1000 rows per INSERT with autocommit, 10-byte data, no query threads, the table created
# with its three secondary indexes before the inserts. The data differs: iibench.py's is 7
# 'a' + 3 random base64 characters, enginebench's 10 random characters (--compressed-fraction 1).
# Whole-process CPU includes each tool's start-up (iibench.py: 4 MB of random base64;
# enginebench: settings capture, calibration of the text generator, final flush, report).
# EB_FLAGS: extra flags for enginebench (iibench never uses SCHED_BATCH, see docs/iibench.md).
set -euo pipefail

SOCK=${1:?usage: $0 SOCKET [ROWS] [ROUNDS] [ENGINE]}
ROWS=${2:-200000}
ROUNDS=${3:-3}
ENGINE=${4:-InnoDB}
EB=${EB:-$(dirname "$0")/../target/release/enginebench}
PY=${IIBENCH_PY:-/work/peers/mytools/iibench_v0.py}
OUT=$(mktemp -d)

my() { mariadb --no-defaults -S "$SOCK" -uroot "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cpu_of() { awk '/^cpu / {printf "%.3f", $2 + $3}' "$1"; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
py_rate=() py_cpu=() eb_rate=() eb_cpu=()
for r in $(seq 1 "$ROUNDS"); do
    my -e "DROP DATABASE IF EXISTS eb_vs_py; CREATE DATABASE eb_vs_py"
    /usr/bin/time -f "cpu %U %S" -o "$OUT/py.time" /usr/bin/python3 "$PY" --dbms=mysql \
        --db_socket="$SOCK" --db_user=root --db_name=eb_vs_py --setup --max_rows="$ROWS" \
        --rows_per_commit=1000 --rows_per_report=$((ROWS / 10)) --engine="$ENGINE" >"$OUT/py.out" 2>&1
    rate=$(awk '/^Totals:/ {print $4}' "$OUT/py.out")
    cpu=$(awk -v c="$(cpu_of "$OUT/py.time")" -v n="$ROWS" 'BEGIN {printf "%.2f", c * 1e6 / n}')
    py_rate+=("$rate") py_cpu+=("$cpu")
    echo "round $r iibench.py:  $rate rows/s  client $cpu us/row  (load $(cut -d' ' -f1 /proc/loadavg))"

    my -e "DROP DATABASE IF EXISTS eb_vs_eb; CREATE DATABASE eb_vs_eb"
    /usr/bin/time -f "cpu %U %S" -o "$OUT/eb.time" "$EB" run iibench \
        --target "mysql://root@localhost/eb_vs_eb?socket=$SOCK" --engine "$ENGINE" \
        --max-rows "$ROWS" --rows-per-commit 1000 --results-dir "$OUT/results" --format json ${EB_FLAGS:-} \
        >"$OUT/eb.json" 2>"$OUT/eb.err"
    rate=$(python3 -c "import json,sys; print('%.1f' % json.load(open(sys.argv[1]))['points'][0]['iibench']['rows_per_s'])" "$OUT/eb.json")
    cpu=$(awk -v c="$(cpu_of "$OUT/eb.time")" -v n="$ROWS" 'BEGIN {printf "%.2f", c * 1e6 / n}')
    eb_rate+=("$rate") eb_cpu+=("$cpu")
    echo "round $r enginebench: $rate rows/s  client $cpu us/row  (load $(cut -d' ' -f1 /proc/loadavg))"
done
my -N -e "SELECT 'rows', (SELECT count(*) FROM eb_vs_py.purchases_index), (SELECT count(*) FROM eb_vs_eb.purchases_index)"
pr=$(printf '%s\n' "${py_rate[@]}" | median) pc=$(printf '%s\n' "${py_cpu[@]}" | median)
er=$(printf '%s\n' "${eb_rate[@]}" | median) ec=$(printf '%s\n' "${eb_cpu[@]}" | median)
echo "median iibench.py:  $pr rows/s, client $pc us/row"
echo "median enginebench: $er rows/s, client $ec us/row"
awk -v a="$er" -v b="$pr" -v c="$ec" -v d="$pc" \
    'BEGIN {printf "ratio enginebench/iibench.py: insert rate %.2fx, client CPU per row %.2fx\n", a / b, c / d}'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
my -e "DROP DATABASE IF EXISTS eb_vs_py; DROP DATABASE IF EXISTS eb_vs_eb"
rm -rf "$OUT"
