#!/usr/bin/env bash
# bench/endurance.sh: one long oltp_read_write run against a throwaway private MariaDB, with the
# client's memory sampled every minute (issue 10, item 2). Not a test: it takes an hour.
#
# Usage:
#   bench/endurance.sh
#
# Environment (all optional):
#   EB_BIN         enginebench binary (default: target/release/enginebench, built if missing)
#   EB_MINUTES     length of the measured run in minutes (default 60)
#   EB_THREADS     connections (default 8)
#   EB_TABLE_SIZE  rows per table (default 10000, sysbench's default)
#   EB_NICE        niceness of the client and its server (default 10: the machine is shared)
#   EB_OUT         output folder (default enginebench-results/endurance-<UTC time>)
#
# What is recorded, once a minute from the client's start (samples.tsv):
#   VmRSS and VmHWM of the client (/proc/PID/status), its CPU ticks, the 1-minute load average.
# At the end (summary.md): RSS after minute 5 (min, median, max and the largest deviation from
# the median in %), the peak RSS, the result folder's file sizes, and the run's ops and errors.

set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/.." && pwd -P)
log() { echo "endurance.sh: $*" >&2; }
die() { echo "endurance.sh: ERROR: $*" >&2; exit 1; }

minutes=${EB_MINUTES:-60}
threads=${EB_THREADS:-8}
rows=${EB_TABLE_SIZE:-10000}
niceness=${EB_NICE:-10}
bin=${EB_BIN:-$repo/target/release/enginebench}
if [[ ! -x $bin ]]; then
    log "building $bin"
    (cd "$repo" && cargo build --release >&2)
fi
out=${EB_OUT:-$repo/enginebench-results/endurance-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
hz=$(getconf CLK_TCK)

cmd=(nice -n "$niceness" "$bin" run oltp_read_write --server mariadb --threads "$threads"
     --table-size "$rows" --warmup 10s --runs 1 --duration "${minutes}m"
     --results-dir "$out/results")
printf '%q ' "${cmd[@]}" >"$out/command.txt"
echo >>"$out/command.txt"
log "running: $(cat "$out/command.txt")"
log "output in $out"
"${cmd[@]}" >"$out/stdout.txt" 2>"$out/stderr.txt" &
pid=$!
# nice(1) execs the binary: $pid is the client itself.

printf 'minute\trss_kb\thwm_kb\tcpu_ticks\tload1\n' >"$out/samples.tsv"
t0=$SECONDS
m=0
while kill -0 "$pid" 2>/dev/null; do
    if [[ -r /proc/$pid/status ]]; then
        rss=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo)
        hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo)
        ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo)
        [[ -n $rss ]] && printf '%d\t%s\t%s\t%s\t%s\n' "$m" "$rss" "$hwm" "$ticks" \
            "$(cut -d' ' -f1 /proc/loadavg)" >>"$out/samples.tsv"
    fi
    m=$((m + 1))
    # Sleep until the next whole minute since the start, waking early if the client ends.
    while kill -0 "$pid" 2>/dev/null && ((SECONDS - t0 < m * 60)); do sleep 1; done
done
rc=0
wait "$pid" || rc=$?
log "client exited with $rc after $((SECONDS - t0)) s"

result=$(find "$out/results" -name result.json | head -n 1)
{
    echo "# endurance: oltp_read_write, $threads connections, ${minutes} min"
    echo
    echo "- command: \`$(cat "$out/command.txt")\`"
    echo "- machine: $(nproc) vCPU, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r); date $(date -u +%FT%TZ)"
    echo "- exit code: $rc"
    awk -F'\t' -v hz="$hz" 'NR > 1 && $1 >= 5 { n++; v[n] = $2; if ($3 > hwm) hwm = $3 }
        NR > 1 { l += $5; ln++ }
        END {
            if (n == 0) { print "- fewer than 6 samples: no RSS verdict"; exit }
            asort(v); med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            dmin = (v[1] - med) / med * 100; dmax = (v[n] - med) / med * 100
            dev = (-dmin > dmax) ? -dmin : dmax
            printf "- client RSS after minute 5 (%d samples): min %.1f MB, median %.1f MB, max %.1f MB; largest deviation from the median %.1f %% (%s)\n",
                n, v[1] / 1024, med / 1024, v[n] / 1024, dev, (dev <= 10 ? "flat within 10 %" : "NOT flat")
            printf "- client peak RSS (VmHWM): %.1f MB\n", hwm / 1024
            printf "- mean 1-minute load average during the run: %.2f\n", l / ln
        }' "$out/samples.tsv"
    if [[ -n $result ]]; then
        echo "- result folder files:"
        (cd "$(dirname "$result")" && ls -l | awk 'NR > 1 {printf "  - %s: %d bytes\n", $9, $5}')
        if command -v python3 >/dev/null; then
            python3 - "$result" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("points", []):
    for r in p.get("runs", []):
        cpu = r.get("client_cpu", {}).get("us_per_op")
        print(f"- run: {r['ops']} ops in {r['elapsed_s']:.0f} s = {r['ops_per_s']:.1f} ops/s, errors {r['errors_total']} {r['errors']}, client CPU {cpu:.1f} us/op, {len(r['intervals'])} interval samples")
EOF
        fi
    else
        echo "- no result.json was written (see $out/stderr.txt)"
    fi
} >"$out/summary.md"
cat "$out/summary.md"
