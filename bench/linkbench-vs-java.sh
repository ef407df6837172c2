#!/usr/bin/env bash
# linkbench-vs-java.sh: the Java LinkBench (built outside this repo) and enginebench's
# linkbench side by side on the same MariaDB server, alternating A B A B: load (links per
# second of the whole load) and the request phase (requests per second, client CPU per request).
#
#   bench/linkbench-vs-java.sh SOCKET PORT LB_HOME [MAXID1] [MAXTIME_S] [ROUNDS] [REQUESTERS]
#
# SOCKET/PORT: a MariaDB where root logs in without password over the socket and over
# 127.0.0.1:PORT (scripts/db-servers.sh start DIR gives both). LB_HOME: a LinkBench checkout
# with target/FacebookLinkBench.jar built against a MySQL JDBC driver >= 5.1.49 (not built
# here). Defaults: MAXID1 100001, MAXTIME_S 30, ROUNDS 2, REQUESTERS 16. Both tools: 4 loader
# connections, the same table definitions (LinkBench's README schema without the 16 key
# partitions of linktable; enginebench's schema/mysql.sql), the defaults of
# FBWorkload.properties, no warm-up. Java's times come from its own log lines (LOAD PHASE
# COMPLETED ... Links/second, REQUEST PHASE COMPLETED ... Requests/second); its client CPU from
# /usr/bin/time. enginebench's request phase runs twice per round: with its defaults (one
# event-loop thread, SCHED_BATCH) and with EB_ALT_OPTS (default: one client thread per
# requester, no SCHED_BATCH, as Java's thread per requester). Databases lb_java and lb_eb are
# dropped and recreated.
set -euo pipefail

SOCK=${1:?usage: $0 SOCKET PORT LB_HOME [MAXID1] [MAXTIME_S] [ROUNDS] [REQUESTERS]}
PORT=${2:?port}
LB=${3:?LinkBench home}
MAXID1=${4:-100001}
MAXTIME=${5:-30}
ROUNDS=${6:-2}
REQ=${7:-16}
EB=${EB:-$(cd "$(dirname "$0")/.." && pwd)/target/release/enginebench}
SCHEMA=$(cd "$(dirname "$0")/.." && pwd)/src/workload/linkbench/schema/mysql.sql
WORK=$(mktemp -d /tmp/lb-vs-java.XXXXXX)
ALT=${EB_ALT_OPTS:---client-threads $REQ --no-sched-batch}
my() { mariadb --no-defaults -S "$SOCK" -uroot "$@"; }

cat >"$WORK/java.properties" <<P
workload_file = $LB/config/FBWorkload.properties
data_file = $LB/config/Distribution.dat
linkstore = com.facebook.LinkBench.LinkStoreMysql
nodestore = com.facebook.LinkBench.LinkStoreMysql
host = 127.0.0.1
port = $PORT
user = root
password =
dbid = lb_java
linktable = linktable
counttable = counttable
nodetable = nodetable
debuglevel = INFO
progressfreq = 300
displayfreq = 1800
load_progress_interval = 10000000
req_progress_interval = 10000000
maxsamples = 10000
loaders = 4
generate_nodes = true
loader_chunk_size = 2048
requesters = $REQ
requests = 1000000000
requestrate = 0
maxtime = $MAXTIME
warmup_time = 0
max_failed_requests = -1
maxid1 = $MAXID1
P
java_tables() {
    my -e "DROP DATABASE IF EXISTS lb_java; CREATE DATABASE lb_java"
    # The same DDL as enginebench's, the secondary index created up front (LinkBench's way).
    sed -e 's/{engine}/ENGINE=InnoDB/' -e '/^-- indexes/d' "$SCHEMA" | my lb_java
}
cputime() { awk '/^CPU /{print $2 + $3}' "$1"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
    # A: Java LinkBench.
    java_tables
    (cd "$LB" && LINKBENCH_HOME="$LB" /usr/bin/time -f "CPU %U %S" java -cp target/FacebookLinkBench.jar \
        com.facebook.LinkBench.LinkBenchDriver -c "$WORK/java.properties" -l) >"$WORK/jl.log" 2>&1
    jl=$(grep -o "Links/second = [0-9]*" "$WORK/jl.log" | awk '{print $3}')
    jlinks=$(grep -o "Loaded [0-9]* links" "$WORK/jl.log" | awk '{print $2}')
    (cd "$LB" && LINKBENCH_HOME="$LB" /usr/bin/time -f "CPU %U %S" java -cp target/FacebookLinkBench.jar \
        com.facebook.LinkBench.LinkBenchDriver -c "$WORK/java.properties" -r) >"$WORK/jr.log" 2>&1
    jr=$(grep -o "Requests/second = [0-9]*" "$WORK/jr.log" | awk '{print $3}')
    jn=$(grep -o "COMPLETED. [0-9]* requests" "$WORK/jr.log" | awk '{print $2}')
    jcpu=$(cputime "$WORK/jr.log")
    echo "round $r java:        load $jl links/s ($jlinks links)  requests $jr /s  client $(awk -v c="$jcpu" -v n="$jn" 'BEGIN{printf "%.1f", c*1e6/n}') us/request (JVM start included)"
    # B: enginebench.
    my -e "DROP DATABASE IF EXISTS lb_eb; CREATE DATABASE lb_eb"
    url="mysql://root@localhost/lb_eb?socket=$SOCK"
    t0=$(date +%s.%N)
    "$EB" prepare linkbench --target "$url" --maxid1 "$MAXID1" --load-connections 4 2>"$WORK/el.log"
    t=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{print a-b}')
    elinks=$(grep -o "loaded [0-9]* rows into linktable" "$WORK/el.log" | awk '{print $2}')
    el=$(awk -v n="$elinks" -v t="$t" 'BEGIN{printf "%d", n/t}')
    "$EB" run linkbench --target "$url" --maxid1 "$MAXID1" --requesters "$REQ" --warmup 0 \
        --duration "${MAXTIME}s" --runs 1 --format json --results-dir "$WORK/res" >"$WORK/er.json" 2>/dev/null
    read -r er ecpu < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['points'][0]['runs'][0]; print(round(r['ops_per_s']), round(r['client_cpu']['us_per_op'],1))" "$WORK/er.json")
    echo "round $r enginebench: load $el links/s ($elinks links, whole prepare $t s)  requests $er /s  client $ecpu us/request"
    # The same with one client thread per requester, like Java's thread per requester
    # (enginebench's default is one event-loop thread under SCHED_BATCH).
    # shellcheck disable=SC2086
    "$EB" run linkbench --target "$url" --maxid1 "$MAXID1" --requesters "$REQ" --warmup 0 \
        --duration "${MAXTIME}s" --runs 1 --format json --results-dir "$WORK/res" $ALT >"$WORK/er2.json" 2>/dev/null
    read -r er2 ecpu2 < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['points'][0]['runs'][0]; print(round(r['ops_per_s']), round(r['client_cpu']['us_per_op'],1))" "$WORK/er2.json")
    echo "round $r enginebench $ALT: requests $er2 /s  client $ecpu2 us/request"
    echo "RESULT $r $jl $jr $el $er $er2"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs: $WORK"
