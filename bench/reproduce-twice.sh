#!/usr/bin/env bash
# Run reproductions twice each (`enginebench reproduce NAME --quick --until-decided`) and count, per
# report, the report's claims decided in each run and the verdicts that differ between the
# two runs (docs/reproductions.md, "Measured"; issue 34's targets: at least 70 % of the
# reports' claims decided, at most 10 % of decided verdicts differing).
#
# Usage: bench/reproduce-twice.sh [NAME...]          (default: every reproduction)
#        bench/reproduce-twice.sh --count DIR1 DIR2   (only count two finished runs of one report)
#
# Environment:
#   EB_BIN     enginebench binary (default: target/release/enginebench, built if missing)
#   EB_OUT     output folder (default enginebench-results/reproduce-twice-<UTC time>): NAME-r1/,
#              NAME-r2/ (each a reproduction's results, with claims.json) and counts.md
#   EB_SCALE   --scale of the reproductions (default quick)
#   EB_PASSES  --passes (default 3)
#   EB_BUDGET  with it, --until-decided --budget EB_BUDGET (e.g. 2h; default: none, a fixed
#              number of passes)
#
# Nothing else should run on the machine meanwhile: a run that other processes disturb is run
# again in place (up to 3 tries), and a claim whose compared points stay disturbed is
# `not measured`. Each reproduction starts its own private servers (docs/reproductions.md).
set -euo pipefail
cd "$(dirname "$0")/.."

count() {
    python3 - "$@" <<'EOF'
import json, sys
a, b = sys.argv[1], sys.argv[2]
def load(d):
    with open(f"{d}/claims.json") as f:
        return {e["id"]: e for e in json.load(f)}
ra, rb = load(a), load(b)
decided = {"holds", "holds_in_direction", "not_in_size", "does_not_hold"}
report = [i for i in ra if not ra[i].get("ours_check")]
ours = [i for i in ra if ra[i].get("ours_check")]
def tally(ids):
    da = [i for i in ids if ra[i]["outcome"] in decided]
    db = [i for i in ids if i in rb and rb[i]["outcome"] in decided]
    either = sorted(set(da) | set(db))
    differ = [i for i in either if i not in rb or ra[i]["outcome"] != rb[i]["outcome"]]
    claimed_way = {"holds", "holds_in_direction"}
    def opposite(i):
        if i not in rb:
            return False
        o = {ra[i]["outcome"], rb[i]["outcome"]}
        return bool(o & {"does_not_hold", "not_in_size"}) and bool(o & claimed_way)
    flips = [i for i in either if opposite(i)]
    return da, db, either, differ, flips
def change(i):
    after = rb[i]["outcome"] if i in rb else "missing"
    return f"{i}: {ra[i]['outcome']} -> {after}"
for label, ids in (("report", report), ("ours", ours)):
    if not ids:
        continue
    da, db, either, differ, flips = tally(ids)
    print(f"{label} claims: {len(ids)}; decided: run 1 {len(da)}, run 2 {len(db)}; "
          f"decided in either {len(either)}, verdicts differing {len(differ)}"
          + (" (" + ", ".join(change(i) for i in differ) + ")" if differ else "")
          + (f"; opposite verdicts {len(flips)} ({', '.join(flips)})" if flips else ""))
print()
print("| claim | run 1 | ratio | run 2 | ratio |")
print("|---|---|---|---|---|")
def ratio(e):
    r = [p.get("ratio") for p in e.get("pairs", []) if p.get("ratio") is not None]
    return ", ".join(f"{x:.3g}" for x in r) or "-"
for i in ra:
    e2 = rb.get(i, {})
    print(f"| {i} | {ra[i]['outcome']} | {ratio(ra[i])} | {e2.get('outcome', 'missing')} | {ratio(e2) if e2 else '-'} |")
EOF
}

if [[ "${1:-}" == "--count" ]]; then
    count "$2" "$3"
    exit 0
fi

bin="${EB_BIN:-target/release/enginebench}"
if [[ ! -x "$bin" ]]; then
    cargo build --release --locked
fi
out="${EB_OUT:-enginebench-results/reproduce-twice-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    mapfile -t names < <("$bin" reproduce --list | awk '{print $1}')
fi
for run in 1 2; do
    for n in "${names[@]}"; do
        echo "== $(date -u +%H:%M:%S) $n, run $run" >&2
        until=()
        if [[ -n "${EB_BUDGET:-}" ]]; then
            until=(--until-decided --budget "$EB_BUDGET")
        fi
        "$bin" reproduce "$n" --scale "${EB_SCALE:-quick}" --passes "${EB_PASSES:-3}" "${until[@]}" \
            --results-dir "$out/$n-r$run" >"$out/$n-r$run.log" 2>&1 || echo "   exit $?" >&2
    done
done
{
    echo "# Reproductions run twice ($(date -u +%Y-%m-%d), $("$bin" --version))"
    for n in "${names[@]}"; do
        echo
        echo "## $n"
        echo
        count "$out/$n-r1" "$out/$n-r2"
    done
} >"$out/counts.md"
cat "$out/counts.md"
