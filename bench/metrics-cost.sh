#!/usr/bin/env bash
# bench/metrics-cost.sh: what serving live metrics costs the client. Point select on MariaDB
# without (A) and with (B) `--metrics-addr`, B scraped every second by a curl loop, in
# alternating pairs (odd pairs A then B, even pairs B then A, so that a drift of the machine
# favours neither). The issue's bar: client CPU per query within 2 %.
#
# Usage:
#   bench/metrics-cost.sh
#
# Environment (all optional):
#   EB_BIN         enginebench binary (default: target/release/enginebench, built if missing)
#   EB_URL         a MariaDB target URL (default: private servers started by
#                  scripts/db-servers.sh in a temporary folder, stopped at the end)
#   EB_PAIRS       A/B pairs (default 6)
#   EB_THREADS     connections (default 4)
#   EB_TIME        seconds of each measured run (default 15; each run has a 2 s warm-up)
#   EB_TABLE_SIZE  rows (default 100000)
#   EB_OUT         output folder (default enginebench-results/metrics-cost-<UTC time>)
#
# Measured by enginebench itself, per run: client CPU per query (`client_cpu.us_per_op`:
# getrusage of the whole process over the run, so the metrics thread's work is in it) and
# ops/s. Printed: one line per pair and the medians of the B/A ratios.

set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
bin=${EB_BIN:-$repo/target/release/enginebench}
pairs=${EB_PAIRS:-6}
threads=${EB_THREADS:-4}
time_s=${EB_TIME:-15}
rows=${EB_TABLE_SIZE:-100000}
out=${EB_OUT:-$repo/enginebench-results/metrics-cost-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

if [[ ! -x $bin ]]; then
    (cd "$repo" && cargo build --release)
fi
command -v curl >/dev/null || { echo "metrics-cost: curl is needed" >&2; exit 2; }

servers=""
scraper=""
cleanup() {
    if [[ -n $scraper ]]; then kill "$scraper" 2>/dev/null || true; fi
    if [[ -n $servers ]]; then bash "$repo/scripts/db-servers.sh" stop "$servers" || true; rm -rf "$servers"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

url=${EB_URL:-}
if [[ -z $url ]]; then
    servers=$(mktemp -d)
    bash "$repo/scripts/db-servers.sh" start "$servers" >&2
    # shellcheck source=/dev/null
    source "$servers/env.sh"
    url=$EB_TEST_MYSQL_URL
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" prepare oltp_point_select -t "$url" --table-size "$rows" >&2

# run LABEL [extra args...]: one measured run; prints "us_per_op ops_per_s".
run() {
    local label=$1
    shift
    local dir=$out/$label
    mkdir -p "$dir"
    "$bin" run oltp_point_select -t "$url" --table-size "$rows" --threads "$threads" \
        --warmup 2s --duration "${time_s}s" --runs 1 --format json --results-dir "$dir" "$@" \
        >"$dir/result.json" 2>"$dir/stderr.log"
    python3 - "$dir/result.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["points"][0]["runs"][0]
print(f'{r["client_cpu"]["us_per_op"]:.4f} {r["ops_per_s"]:.1f}')
EOF
}

run_a() { run "$1-a"; }
run_b() {
    # Scrape every second for the whole run, as Prometheus would.
    (while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true; done) &
    scraper=$!
    run "$1-b" --metrics-addr "127.0.0.1:$port"
    kill "$scraper" 2>/dev/null || true
    wait "$scraper" 2>/dev/null || true
    scraper=""
}

printf '%-5s %14s %14s %8s %12s %12s %8s\n' pair "A us/query" "B us/query" "B/A" "A ops/s" "B ops/s" "B/A" | tee "$out/pairs.txt"
for ((p = 1; p <= pairs; p++)); do
    if ((p % 2 == 1)); then
        a=$(run_a "$p"); b=$(run_b "$p")
    else
        b=$(run_b "$p"); a=$(run_a "$p")
    fi
    read -r a_us a_qps <<<"$a"
    read -r b_us b_qps <<<"$b"
    python3 -c "
a_us, b_us, a_q, b_q = $a_us, $b_us, $a_qps, $b_qps
print(f'{$p:<5} {a_us:14.3f} {b_us:14.3f} {b_us/a_us:8.4f} {a_q:12.1f} {b_q:12.1f} {b_q/a_q:8.4f}')
" | tee -a "$out/pairs.txt"
done
python3 - "$out/pairs.txt" <<'EOF' | tee "$out/summary.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
cpu = [float(r[3]) for r in rows]
qps = [float(r[6]) for r in rows]
print(f"pairs {len(rows)}: median client CPU per query B/A {statistics.median(cpu):.4f} "
      f"(min {min(cpu):.4f}, max {max(cpu):.4f}); median ops/s B/A {statistics.median(qps):.4f}")
EOF
echo "results: $out"
