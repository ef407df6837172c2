#!/usr/bin/env bash
# vs-sysbench-load.sh: time `sysbench oltp_read_write prepare` against `enginebench prepare
# oltp_read_write` for the same table (1 table, ROWS rows, k index built after the load) on the
# same MariaDB server, alternating A B A B, and print every time and the medians.
#
#   bench/vs-sysbench-load.sh SOCKET [ROWS] [ROUNDS]
#
# SOCKET: a MariaDB Unix socket where root logs in without password (scripts/db-servers.sh
# start DIR gives DIR/mdb.sock). ROWS default 1000000, ROUNDS default 3. Needs `sysbench` on
# PATH and a release build (cargo build --release); EB_LOAD_METHODS (default "stream insert")
# picks enginebench's load methods. Databases eb_vs_sb and eb_vs_eb are
# dropped and recreated. Fairness: same rows, same columns and indexes (PRIMARY KEY(id) and
# k_1), same server settings; enginebench's loader sessions set unique_checks=0 and
# foreign_key_checks=0 (session only); no global setting is changed. enginebench's time
# includes its ANALYZE TABLE, which sysbench does not run.
set -euo pipefail

SOCK=${1:?usage: $0 SOCKET [ROWS] [ROUNDS]}
ROWS=${2:-1000000}
ROUNDS=${3:-3}
EB=${EB:-$(dirname "$0")/../target/release/enginebench}
METHODS=${EB_LOAD_METHODS:-stream insert}

my() { mariadb --no-defaults -S "$SOCK" -uroot "$@"; }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A times
for r in $(seq 1 "$ROUNDS"); do
    my -e "DROP DATABASE IF EXISTS eb_vs_sb; CREATE DATABASE eb_vs_sb"
    t0=$(now)
    sysbench oltp_read_write --mysql-socket="$SOCK" --mysql-user=root --mysql-db=eb_vs_sb \
        --tables=1 --table-size="$ROWS" prepare >/dev/null
    t=$(sub "$(now)" "$t0")
    times[sysbench]+="$t "
    echo "round $r sysbench prepare: $t s"
    for m in $METHODS; do
        my -e "DROP DATABASE IF EXISTS eb_vs_eb; CREATE DATABASE eb_vs_eb"
        t0=$(now)
        "$EB" prepare oltp_read_write --target "mysql://root@localhost/eb_vs_eb?socket=$SOCK" \
            --table-size "$ROWS" --load-method "$m" 2>/dev/null
        t=$(sub "$(now)" "$t0")
        times[$m]+="$t "
        echo "round $r enginebench prepare --load-method $m: $t s"
    done
done
# The two tables hold the same number of rows and the same indexes.
my -N -e "SELECT count(*) FROM eb_vs_sb.sbtest1; SELECT count(*) FROM eb_vs_eb.sbtest1;
  SELECT table_schema, group_concat(DISTINCT index_name ORDER BY index_name) FROM information_schema.statistics
  WHERE table_schema IN ('eb_vs_sb','eb_vs_eb') GROUP BY table_schema"
sb=$(tr ' ' '\n' <<<"${times[sysbench]}" | grep . | median)
echo "median sysbench: $sb s"
for m in $METHODS; do
    e=$(tr ' ' '\n' <<<"${times[$m]}" | grep . | median)
    echo "median enginebench ($m): $e s; ratio to sysbench: $(div "$e" "$sb")"
done
my -e "DROP DATABASE IF EXISTS eb_vs_sb; DROP DATABASE IF EXISTS eb_vs_eb"
