#!/usr/bin/env bash
# vs-go-tpc.sh: TPC-C side by side with go-tpc (github.com/pingcap/go-tpc, built outside this
# repository) on the same MariaDB server: load time, tpmC and client CPU, alternating
# go-tpc / enginebench each round, then medians and ratios.
#
#   GO_TPC=/path/to/go-tpc bench/vs-go-tpc.sh PORT [WAREHOUSES] [THREADS] [SECONDS] [ROUNDS]
#
# PORT: a MariaDB TCP port on 127.0.0.1 where root logs in without a password (scripts/
# db-servers.sh start DIR prints one in DIR/env.sh). Defaults: 2 warehouses, 16 connections,
# 60 s per run, 3 rounds. Databases eb_gotpc and eb_ebtpcc are dropped and recreated.
# Fairness: both load with 2 connections (go-tpc parallelizes by warehouse), both run the
# standard mix with no keying/think times over TCP, both at the server's default isolation.
# Client CPU is user+system seconds of the tool's process (GNU time), whole command.
set -euo pipefail

PORT=${1:?usage: GO_TPC=... $0 PORT [WAREHOUSES] [THREADS] [SECONDS] [ROUNDS]}
W=${2:-2}
T=${3:-16}
SECS=${4:-60}
ROUNDS=${5:-3}
GO_TPC=${GO_TPC:?set GO_TPC to a go-tpc binary}
EB=${EB:-$(dirname "$0")/../target/release/enginebench}

my() { mariadb --no-defaults -h127.0.0.1 -P"$PORT" -uroot "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# timed OUT CMD...: runs CMD with stdout+stderr to OUT; appends "wall user sys" to OUT.time
timed() { local out=$1; shift; /usr/bin/time -f "%e %U %S" -o "$out.time" "$@" >"$out" 2>&1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A col
add() { col[$1]+="$2 "; }
med() { tr ' ' '\n' <<<"${col[$1]}" | grep . | median; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
    # --- load
    my -e "DROP DATABASE IF EXISTS eb_gotpc; CREATE DATABASE eb_gotpc"
    timed "$tmp/gl" "$GO_TPC" tpcc prepare -H 127.0.0.1 -P "$PORT" -D eb_gotpc --warehouses "$W" -T 2
    read -r wall u s <"$tmp/gl.time"; add gload "$wall"; add gloadcpu "$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')"
    echo "round $r go-tpc load: $wall s (client cpu $u+$s s)"
    my -e "DROP DATABASE IF EXISTS eb_ebtpcc; CREATE DATABASE eb_ebtpcc"
    timed "$tmp/el" "$EB" prepare tpcc --target "mysql://root@127.0.0.1:$PORT/eb_ebtpcc" --warehouses "$W" --load-connections 2
    read -r wall u s <"$tmp/el.time"; add eload "$wall"; add eloadcpu "$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')"
    echo "round $r enginebench load: $wall s (client cpu $u+$s s)"
    # --- run
    timed "$tmp/gr" "$GO_TPC" tpcc run -H 127.0.0.1 -P "$PORT" -D eb_gotpc --warehouses "$W" -T "$T" --time "${SECS}s" --interval 1000s
    g=$(grep -o 'tpmC: [0-9.]*' "$tmp/gr" | tail -1 | cut -d' ' -f2)
    read -r wall u s <"$tmp/gr.time"
    gcpu=$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')
    add grun "$g"; add grcpu "$gcpu"
    echo "round $r go-tpc run: tpmC $g (client cpu $gcpu s)"
    timed "$tmp/er" "$EB" run tpcc --target "mysql://root@127.0.0.1:$PORT/eb_ebtpcc" --warehouses "$W" \
        --threads "$T" --warmup 0 --duration "${SECS}s" --runs 1 --results-dir "$tmp/results"
    e=$(grep -o 'tpmC [0-9.]*' "$tmp/er" | tail -1 | cut -d' ' -f2)
    read -r wall u s <"$tmp/er.time"
    ecpu=$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')
    add erun "$e"; add ercpu "$ecpu"
    echo "round $r enginebench run: tpmC $e (client cpu $ecpu s)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median load s: go-tpc $(med gload), enginebench $(med eload); ratio eb/go $(div "$(med eload)" "$(med gload)")"
echo "median load client CPU s: go-tpc $(med gloadcpu), enginebench $(med eloadcpu)"
echo "median tpmC: go-tpc $(med grun), enginebench $(med erun); ratio eb/go $(div "$(med erun)" "$(med grun)")"
echo "median run client CPU s: go-tpc $(med grcpu), enginebench $(med ercpu)"
my -e "DROP DATABASE IF EXISTS eb_gotpc; DROP DATABASE IF EXISTS eb_ebtpcc"
