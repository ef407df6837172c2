#!/usr/bin/env bash
# vs-go-tpc.sh: TPC-C side by side with go-tpc only; a wrapper of bench/vs-tpcc-peers.sh
# (which measures load, tpmC and CPU from outside the tools and starts its own private server).
#
#   GO_TPC=/path/to/go-tpc bench/vs-go-tpc.sh [WAREHOUSES] [THREADS] [SECONDS] [ROUNDS]
#
# Defaults as vs-tpcc-peers.sh: 2 warehouses, 16 connections, 40 s measured after 10 s, 3 rounds;
# go-tpc runs twice per round, with enginebench's index set (row "go-tpc") and with its own
# (row "go-tpc-own"): INDEXES=equal or INDEXES=own keeps one of them.
# (The first version of this script took a server PORT first and timed the tools with GNU time;
# its figures in BENCHMARKS.md were measured that way.)
set -euo pipefail
[[ ${1:-} =~ ^[0-9]+$ || -z ${1:-} ]] || { echo "usage: GO_TPC=... $0 [WAREHOUSES] [THREADS] [SECONDS] [ROUNDS]" >&2; exit 2; }
export EB_GOTPC=${EB_GOTPC:-${GO_TPC:?set GO_TPC to a go-tpc binary}}
export RUN_W=${1:-${RUN_W:-2}} THREADS=${2:-${THREADS:-16}} SECS=${3:-${SECS:-40}} ROUNDS=${4:-${ROUNDS:-3}}
export LOAD_W=${LOAD_W:-$RUN_W}
unset EB_BENCHBASE_DIR EB_TPCC_MYSQL_DIR
exec "$(dirname "${BASH_SOURCE[0]}")/vs-tpcc-peers.sh"
