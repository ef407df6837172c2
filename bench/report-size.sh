#!/usr/bin/env bash
# report-size.sh: how big is the HTML report of a typical suite, and how long does it take?
#
#   bench/report-size.sh [WORKDIR]
#
# The shape of plans/read-2007.toml run with --method classic (13 queries x 6 thread counts x
# 4 engines, 3 runs of 60 s with 1 s intervals) would take days to measure, so this script
# runs one tiny real micro-read result on SQLite (13 queries x 2 thread counts, 1 run) and
# copies its points, runs and intervals into that shape (values repeated, not measured: only the
# page's size and render time are the point here). It prints the page size in bytes and KiB,
# its gzip size (what a mail attachment costs after compression) and the render time.
# It also renders the four write-path results (iibench, compression, sqlbench, linkbench) of
# short SQLite runs into one page and prints that size.
set -euo pipefail

EB=${EB:-target/release/enginebench}
W=${1:-$(mktemp -d /tmp/eb-report-size.XXXX)}
mkdir -p "$W"
run() { "$EB" "$@" >/dev/null 2>>"$W/log" || { echo "failed: $*" >&2; tail -3 "$W/log" >&2; exit 1; }; }

run run micro-read --target "sqlite://$W/mr.db" --table-size 20k --threads 1,4 --runs 1 \
  --duration 200ms --warmup 0 --results-dir "$W/mr"
tiny=$(find "$W/mr" -name result.json | head -1)

python3 - "$tiny" "$W/suite" <<'EOF'
import copy, json, os, sys
src, out = sys.argv[1], sys.argv[2]
doc = json.load(open(src))
os.makedirs(out, exist_ok=True)
template = {}
for p in doc["points"]:
    template.setdefault(p["operation"], p)
for engine in ["InnoDB", "MyISAM", "Aria", "RocksDB"]:
    d = copy.deepcopy(doc)
    d["target"]["dbms"], d["target"]["engine"] = "mysql", engine
    d["config"]["threads"] = [1, 4, 16, 64, 128, 256]
    d["config"]["runs"], d["config"]["duration_s"] = 3, 60.0
    pts = []
    for op, p in template.items():
        for t in d["config"]["threads"]:
            q = copy.deepcopy(p)
            q["threads"] = t
            run0 = q["runs"][0]
            iv = run0["intervals"][0]
            run0["intervals"] = [dict(iv, t_s=float(i + 1)) for i in range(60)]
            q["runs"] = [dict(copy.deepcopy(run0), run=r + 1) for r in range(3)]
            q["aggregate"]["runs"] = 3
            pts.append(q)
    d["points"] = pts
    json.dump(d, open(f"{out}/{engine}.json", "w"))
EOF

start=$(date +%s.%N)
run report "$W"/suite/*.json -o "$W/suite.html"
end=$(date +%s.%N)
bytes=$(stat -c %s "$W/suite.html")
gz=$(gzip -c "$W/suite.html" | wc -c)
printf 'classic read-2007 shape (4 results x 13 ops x 6 threads x 3 runs x 60 intervals): %d bytes (%d KiB), gzip %d KiB, rendered in %.2f s\n' \
  "$bytes" $((bytes / 1024)) $((gz / 1024)) "$(echo "$end - $start" | bc)"

run run iibench --target "sqlite://$W/ii.db" --max-rows 20000 --rows-per-commit 200 \
  --window-rows 1000 --results-dir "$W/w"
run run compression --target "sqlite://$W/comp.db" --table-size 5000 --threads 2 --warmup 0 \
  --duration 300ms --runs 1 --results-dir "$W/w"
run run sqlbench --target "sqlite://$W/sb.db" --scale 0.001 --results-dir "$W/w"
run prepare linkbench --target "sqlite://$W/lb.db" --maxid1 2001
run run linkbench --target "sqlite://$W/lb.db" --maxid1 2001 --requesters 2 --warmup 0 \
  --maxtime 10s --runs 1 --results-dir "$W/w"
run report $(find "$W/w" -name result.json | sort) -o "$W/write.html"
bytes=$(stat -c %s "$W/write.html")
printf 'write path (iibench 20 windows, compression, sqlbench, linkbench 10 s): %d bytes (%d KiB)\n' \
  "$bytes" $((bytes / 1024))
echo "pages in $W"
