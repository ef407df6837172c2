#!/usr/bin/env bash
# The gate's A/A check (docs/ci.md): how often `compare --fail-on 'ops_per_s=-5%'` fails when
# both sides are the same configuration on separately started servers.
#
# Each start is one `enginebench run W --server mariadb` (a fresh private MariaDB, the table
# loaded, warm-up, runs, the server stopped) recorded in a private catalog. The first EB_HISTORY
# starts of each workload are history only; the rest form consecutive pairs (A, B), and each
# pair is gated twice:
#   pair:     compare A B --between-start catalog:last=EB_HISTORY --fail-on 'ops_per_s=-5%'
#             (the spread of the EB_HISTORY results started before A and B)
#   baseline: compare B --baseline catalog:last=EB_HISTORY --fail-on 'ops_per_s=-5%'
#             (B against the EB_HISTORY results started before it: a prediction interval)
# Beside them, for contrast, the rule compare used before the server start became the unit:
# Welch's t over the runs of A and of B as if each run were independent (log scale, 95 %).
#
# Usage: bench/aa-gate.sh                 (measure, then count)
#        bench/aa-gate.sh --count DIR     (count a finished measurement again)
#
# Environment:
#   EB_BIN        enginebench binary (default target/release/enginebench)
#   EB_OUT        output folder (default enginebench-results/aa-gate-<UTC time>)
#   EB_WORKLOADS  default "oltp_point_select oltp_read_write"
#   EB_PAIRS      pairs per workload (default 20)
#   EB_HISTORY    starts before the first pair, and N of catalog:last=N (default 6)
#   EB_THREADS    default 4;  EB_TIME 8 (s per run);  EB_WARMUP 4 (s);  EB_RUNS 2
#   EB_TABLE_SIZE default 10000
#
# Nothing else should run on the machine meanwhile (runs other processes disturb are flagged
# in their result, and the count says how many).
set -euo pipefail
cd "$(dirname "$0")/.."

count() {
    local out=$1
    python3 - "$out" <<'EOF'
import json, math, sys, glob, os
out = sys.argv[1]
T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
def wilson(k, n, z=1.96):
    p = k / n; d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d; h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)
lines = []
for w in sorted(os.listdir(out)):
    log = f"{out}/{w}/gates.jsonl"
    if not os.path.exists(log):
        continue
    rows = [json.loads(l) for l in open(log)]
    lines.append(f"## {w}\n")
    for form in ("pair", "baseline"):
        rs = [r for r in rows if r["form"] == form]
        if not rs:
            continue
        fails = sum(r["exit"] == 1 for r in rs)
        unknown = sum(r["exit"] == 0 and r["unknown"] for r in rs)
        errors = sum(r["exit"] not in (0, 1) for r in rs)
        lo, hi = wilson(fails, len(rs))
        ratios = sorted(r["ratio"] for r in rs if r["ratio"])
        lines.append(f"- {form}: {len(rs)} gates, failed {fails} ({100*fails/len(rs):.0f} %, "
                     f"Wilson 95 % {100*lo:.0f}-{100*hi:.0f} %), UNKNOWN {unknown}, errors {errors}; "
                     f"B/A from {ratios[0]:.3f} to {ratios[-1]:.3f}, median {ratios[len(ratios)//2]:.3f}; "
                     f"significance half-width median {sorted(r['half'] for r in rs)[len(rs)//2]*100:.1f} %")
    old = [r for r in rows if r["form"] == "pair"]
    if old:
        k = 0
        for r in old:
            a, b = r["runs_a"], r["runs_b"]
            la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
            ma, mb = sum(la) / len(la), sum(lb) / len(lb)
            va = sum((x - ma) ** 2 for x in la) / (len(la) - 1)
            vb = sum((x - mb) ** 2 for x in lb) / (len(lb) - 1)
            ea, eb = va / len(la), vb / len(lb)
            se = math.sqrt(ea + eb)
            df = (ea + eb) ** 2 / (ea ** 2 / (len(la) - 1) + eb ** 2 / (len(lb) - 1)) if se > 0 else len(la) + len(lb) - 2
            t = T[min(len(T), max(1, int(df))) - 1]
            if mb - ma < -math.log(1 / 0.95) and abs(mb - ma) > t * se:
                k += 1
        lines.append(f"- the runs pooled as independent samples (the rule before the server start was the unit): "
                     f"would have failed {k} of {len(old)} pairs")
    starts = sorted(glob.glob(f"{out}/{w}/starts/*/*/result.json"))
    ops = [json.load(open(s))["points"][0]["runs"] for s in starts]
    means = [sum(x["ops_per_s"] for x in rs) / len(rs) for rs in ops]
    logs = [math.log(m) for m in means]
    m = sum(logs) / len(logs)
    between = math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1))
    within = [abs(math.log(rs[0]["ops_per_s"] / rs[1]["ops_per_s"])) / math.sqrt(2) for rs in ops if len(rs) >= 2]
    disturbed = sum(any(x.get("disturbed") for x in rs) for rs in ops)
    lines.append(f"- {len(means)} starts: mean {sum(means)/len(means):.0f} ops/s; sd of ln(ops/s) between starts "
                 f"{100*between:.1f} %, within a start (two runs) {100*math.sqrt(sum(x*x for x in within)/len(within)):.1f} %; "
                 f"starts with a disturbed run: {disturbed}\n")
text = "\n".join(lines)
open(f"{out}/aa-gate.md", "w").write(text + "\n")
print(text)
EOF
}

if [ "${1:-}" = "--count" ]; then
    count "$2"
    exit 0
fi

EB=${EB_BIN:-target/release/enginebench}
[ -x "$EB" ] || cargo build --release
OUT=${EB_OUT:-enginebench-results/aa-gate-$(date -u +%Y%m%dT%H%M%S)}
PAIRS=${EB_PAIRS:-20}
HIST=${EB_HISTORY:-6}
STARTS=$((HIST + 2 * PAIRS))
mkdir -p "$OUT"
CAT="$OUT/catalog.db"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
    echo "host: $(hostname), $(nproc) CPUs, $(uname -r)"
    echo "starts per workload: $STARTS (history $HIST, pairs $PAIRS)"
} >"$OUT/machine.txt"

run_one() { # workload index
    local w=$1 i=$2
    "$EB" run "$w" --server mariadb --threads "${EB_THREADS:-4}" --time "${EB_TIME:-8}" \
        --warmup "${EB_WARMUP:-4}" --runs "${EB_RUNS:-2}" --table-size "${EB_TABLE_SIZE:-10000}" \
        --catalog "$CAT" --results-dir "$OUT/$w/starts/$(printf %03d "$i")" \
        >"$OUT/$w/log/$i.txt" 2>&1
}

for w in ${EB_WORKLOADS:-oltp_point_select oltp_read_write}; do
    mkdir -p "$OUT/$w/starts" "$OUT/$w/log"
done
for i in $(seq 1 "$STARTS"); do
    for w in ${EB_WORKLOADS:-oltp_point_select oltp_read_write}; do
        run_one "$w" "$i"
    done
    echo "start $i of $STARTS done ($(date -u +%T))"
done

gate() { # form workload A [B]
    local form=$1 w=$2 a=$3 b=${4:-} code=0 json="$OUT/$w/gate.json"
    if [ "$form" = pair ]; then
        "$EB" compare "$a" "$b" --between-start "catalog:last=$HIST" --catalog "$CAT" \
            --fail-on 'ops_per_s=-5%' --format json >"$json" 2>>"$OUT/$w/gates.err" || code=$?
    else
        "$EB" compare "$a" --baseline "catalog:last=$HIST" --catalog "$CAT" \
            --fail-on 'ops_per_s=-5%' --format json >"$json" 2>>"$OUT/$w/gates.err" || code=$?
        b=$a
        a=
    fi
    python3 - "$form" "$code" "$a" "$b" "$json" <<'EOF' >>"$OUT/$w/gates.jsonl"
import json, sys
form, code, a, b, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
text = open(out).read().strip()
rows = json.loads(text) if text else []
r = next((r for r in rows if r["metric"] == "ops_per_s"), {})
spread = r.get("spread") or {}
runs = lambda f: [x["ops_per_s"] for x in json.load(open(f))["points"][0]["runs"]] if f else []
print(json.dumps({"form": form, "exit": code, "a": a, "b": b, "ratio": r.get("ratio"),
                  "verdict": r.get("verdict"), "unknown": bool(r.get("gate", {}).get("unknown")),
                  "half": spread.get("half_width", 0.0), "runs_a": runs(a), "runs_b": runs(b)}))
EOF
}

for w in ${EB_WORKLOADS:-oltp_point_select oltp_read_write}; do
    : >"$OUT/$w/gates.jsonl"
    for p in $(seq 1 "$PAIRS"); do
        a=$(ls "$OUT/$w/starts/$(printf %03d $((HIST + 2 * p - 1)))"/*/result.json)
        b=$(ls "$OUT/$w/starts/$(printf %03d $((HIST + 2 * p)))"/*/result.json)
        gate pair "$w" "$a" "$b"
        gate baseline "$w" "$b"
    done
done
count "$OUT"
