#!/usr/bin/env bash
# bench/micro-read.sh: the micro-read workload (the 13 read queries of the 2007
# InnoDB/MyISAM/Falcon report), quick profile, on every target we support:
#
#   SQLite (embedded), MariaDB InnoDB, MyISAM, Aria, RocksDB (MyRocks), PostgreSQL
#
# For each target it prints and saves, per query and thread count, QPS (the
# maximum of the measured runs, as the report kept) and the client's CPU per
# operation, then a side-by-side comparison of the engines.
#
# Usage:
#   bench/micro-read.sh                 build if needed, start private servers,
#                                       run everything, print the summary
#   bench/micro-read.sh --summarize DIR re-print the summary of an earlier run
#
# Environment (all optional):
#   EB_BENCH_ARGS   extra arguments for `enginebench run`, word-split, e.g.
#                   EB_BENCH_ARGS="--threads 1,4,16,64 --duration 5s --runs 3"
#                   (default: none, i.e. the quick method: threads 1,4,16,
#                   1 s warm-up, 2 runs x 1 s, the maximum kept)
#   EB_TABLE_SIZE   rows in the table (default: the tool's, 100k for quick);
#                   passed to both `prepare` and `run`. Put the table size
#                   here, not in EB_BENCH_ARGS, or `run` reloads the table
#                   inside the CPU-measuring window.
#   EB_TARGETS      which targets, space separated, in order (default:
#                   "sqlite innodb myisam aria rocksdb postgres")
#   EB_OUT          output folder (default:
#                   enginebench-results/bench-micro-read-<UTC timestamp>,
#                   which .gitignore already ignores)
#   EB_BIN          an enginebench binary to use instead of building one
#   EB_QUIET_PCT    before each target, wait until the machine's busy CPU
#                   over 3 s is below this % of one CPU (default 25) ...
#   EB_QUIET_WAIT   ... for at most this many seconds (default 300; 0: do
#                   not wait). The machine is shared: compiles and test runs
#                   of other people take CPU from client and server.
#
# Output folder: <target>/<run>/result.json (the tool's result), <target>/
# stdout.json, <target>/run.log, <target>/prepare.log, <target>/cpu.json (CPU
# sampled by this script, see below) and summary.md (also printed on stdout).
#
# CPU sampled by this script around each target's whole `enginebench run`
# (after the table is prepared, so loading is excluded; warm-ups, measured
# runs and the tool's own set-up are included):
#   client  the enginebench process (user+sys), from this shell's cutime/cstime
#   server  MariaDB: mariadbd's utime+stime from /proc/PID/stat (all threads).
#           PostgreSQL: the postmaster and all its children, live ones from
#           their /proc/PID/stat and exited backends through the postmaster's
#           cutime/cstime (so background processes are included too).
#           SQLite: none, the engine runs inside the client.
#   other   all busy CPU of the machine (/proc/stat) minus client and server:
#           a measure of how disturbed the run was on a shared machine.
# Each is divided by all operations of the run, warm-ups included, so these
# are averages over every query and thread count of the target, not per point.
# Resolution: clock ticks (usually 10 ms).
#
# Servers and their data live in a mktemp directory that is removed on exit;
# only the output folder is kept.

set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/.." && pwd -P)

log() { echo "micro-read.sh: $*" >&2; }
die() { echo "micro-read.sh: ERROR: $*" >&2; exit 1; }

# ------------------------------------------------------------- summary ------

summarize() {
    local out=$1
    python3 - "$out" <<'PY'
import glob, json, os, sys

out = sys.argv[1]
LABELS = {"sqlite": "SQLite", "innodb": "InnoDB", "myisam": "MyISAM", "aria": "Aria",
          "rocksdb": "RocksDB", "postgres": "PostgreSQL"}

meta = {}
mp = os.path.join(out, "meta.json")
if os.path.exists(mp):
    meta = json.load(open(mp))
order = meta.get("targets") or sorted(d for d in os.listdir(out)
                                      if os.path.isdir(os.path.join(out, d)))

targets = []  # (name, result, cpu)
missing = []
for name in order:
    files = sorted(glob.glob(os.path.join(out, name, "*", "result.json")))
    if not files:
        missing.append(name)
        continue
    res = json.load(open(files[-1]))
    cpu = None
    cp = os.path.join(out, name, "cpu.json")
    if os.path.exists(cp):
        cpu = json.load(open(cp))
    targets.append((name, res, cpu))

def fnum(x, nd=0):
    if x is None:
        return "–"
    return f"{x:,.{nd}f}"

def fus(x):
    if x is None:
        return "–"
    return f"{x:.1f}" if x < 100 else f"{x:,.0f}"

L = []
p = L.append
p("# micro-read, quick profile: SQLite, MariaDB engines, PostgreSQL")
p("")
if meta:
    p(f"- command: `{meta.get('command', '')}`")
    p(f"- started {meta.get('started_at', '?')}, finished {meta.get('finished_at', '?')}; "
      f"built from commit {meta.get('git_commit', '?')}"
      f"{' (sources modified)' if meta.get('git_dirty') else ''}; binary {meta.get('binary', '?')}")
if targets:
    h = targets[0][1].get("host", {})
    c = targets[0][1].get("config", {})
    mem = h.get("memory_bytes")
    p(f"- host: {h.get('cores', '?')} cores ({h.get('cpu_model', '?')}), "
      f"{mem / 2**30:.1f} GiB, {h.get('os', '?')}, kernel {h.get('kernel', '?')}" if mem else
      f"- host: {h}")
    p(f"- method: {c.get('method')}, {c.get('table_size'):,} rows, threads "
      f"{','.join(str(t) for t in c.get('threads', []))}, warm-up {c.get('warmup_s')} s, "
      f"{c.get('runs')} runs x {c.get('duration_s')} s, table shows the {c.get('aggregate')} "
      f"of the runs; client threads {c.get('client_threads')}, SCHED_BATCH {c.get('sched_batch')}")
    vers = []
    for name, res, _ in targets:
        t = res.get("target", {})
        vers.append(f"{LABELS.get(name, name)}: {t.get('server_version')} / {t.get('engine')}")
    p("- versions: " + "; ".join(vers))
p("- QPS = `points[].aggregate.ops_per_s_max`; client µs/op = "
  "`aggregate.client_cpu_us_per_op_median` (the whole client process over the run "
  "window, from getrusage); rows/op = mean of `runs[].rows_per_op`.")
p("- `*` after a QPS: its measured runs differ by more than 10 % ((max−min)/max). "
  "The machine has 2 vCPUs shared by client, server and other tenants: expect noise.")
if missing:
    p(f"- **no result for: {', '.join(missing)}** (see its run.log)")
p("")

def point_map(res):
    m = {}
    for pt in res.get("points", []):
        m[(pt["operation"], pt["threads"])] = pt
    return m

def qps_cell(pt):
    if pt is None:
        return "–"
    a = pt["aggregate"]
    mx, mn = a.get("ops_per_s_max"), a.get("ops_per_s_min")
    flag = ""
    if mx and mn is not None and (mx - mn) / mx > 0.10:
        flag = "*"
    err = ""
    if a.get("errors_total"):
        err = f" ({a['errors_total']} err)"
    return fnum(mx) + flag + err

def rows_per_op(pt):
    if pt is None:
        return None
    v = [r.get("rows_per_op") for r in pt.get("runs", []) if r.get("rows_per_op") is not None]
    return sum(v) / len(v) if v else None

def fro(x):
    if x is None:
        return "–"
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"

def ops_list(res):
    # The config key was "queries" before the tool named them "operations".
    c = res.get("config", {})
    ops = c.get("operations") or c.get("queries")
    if not ops:
        ops = []
        for pt in res.get("points", []):
            if pt["operation"] not in ops:
                ops.append(pt["operation"])
    return ops

def ops_of(res):
    n = 0
    for pt in res.get("points", []):
        if pt.get("warmup"):
            n += pt["warmup"].get("ops", 0)
        for r in pt.get("runs", []):
            n += r.get("ops", 0)
    return n

queries_all = []
threads_all = []
for name, res, cpu in targets:
    for q in ops_list(res):
        if q not in queries_all:
            queries_all.append(q)
    for t in res["config"]["threads"]:
        if t not in threads_all:
            threads_all.append(t)

cpu_rows = []
for name, res, cpu in targets:
    label = LABELS.get(name, name)
    t = res.get("target", {})
    pm = point_map(res)
    threads = res["config"]["threads"]
    p(f"## {label}")
    p("")
    p(f"`{t.get('url')}`" + (f" engine {t.get('engine')}" if t.get("engine") else "") +
      f", {t.get('server_version')}, status **{res.get('status')}**")
    p("")
    hdr = ["query"] + [f"QPS {th} thr" for th in threads] + \
          [f"client µs/op {th} thr" for th in threads] + ["rows/op"]
    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" + "---:|" * (len(hdr) - 1))
    for q in ops_list(res):
        cells = [q]
        cells += [qps_cell(pm.get((q, th))) for th in threads]
        cells += [fus((pm.get((q, th)) or {}).get("aggregate", {}).get("client_cpu_us_per_op_median"))
                  for th in threads]
        cells.append(fro(rows_per_op(pm.get((q, threads[-1])))))
        p("| " + " | ".join(cells) + " |")
    p("")
    if cpu:
        ops = ops_of(res)
        tck = cpu["clk_tck"]
        cl = cpu["client_ticks"] / tck
        sv = cpu["server_ticks"] / tck if cpu.get("server_ticks") is not None else None
        busy = cpu["busy_ticks"] / tck
        other = busy - cl - (sv or 0)
        wall = cpu["wall_s"]
        cpu_rows.append((label, ops, wall, cl, sv, other, cpu.get("server_what", "")))
        disturbed = other / wall > 0.25
        p(f"Whole `run` of this target (warm-ups included, {ops:,} operations, {wall:.0f} s): "
          f"client CPU {cl:.1f} s = {cl / ops * 1e6:.1f} µs/op; " +
          (f"server CPU {sv:.1f} s = {sv / ops * 1e6:.1f} µs/op; " if sv is not None else
           "server: in-process (included in client); ") +
          f"other processes {other:.1f} s ({other / wall * 100:.0f} % of one CPU"
          f"{': **disturbed run**' if disturbed else ''}). Before the run: {cpu.get('before', '?')}.")
        p("")

if len(targets) > 1:
    # Largest thread count that every target ran.
    common = [th for th in threads_all if all(th in r["config"]["threads"] for _, r, _ in targets)]
    th = max(common) if common else None
    labels = [LABELS.get(n, n) for n, _, _ in targets]
    maps = [point_map(r) for _, r, _ in targets]
    if th is not None:
        p(f"## Comparison at {th} threads")
        p("")
        p(f"QPS at {th} threads (maximum of the runs):")
        p("")
        p("| query | rows/op | " + " | ".join(labels) + " |")
        p("|---|---:|" + "---:|" * len(labels))
        for q in queries_all:
            rpo = [rows_per_op(m.get((q, th))) for m in maps]
            rv = [x for x in rpo if x is not None]
            rtxt = "–"
            if rv:
                lo, hi = fro(min(rv)), fro(max(rv))
                rtxt = lo if lo == hi else f"{lo}–{hi}"
            cells = [q, rtxt] + [qps_cell(m.get((q, th))) for m in maps]
            p("| " + " | ".join(cells) + " |")
        p("")
        p(f"Client CPU µs per operation at {th} threads (median of the runs):")
        p("")
        p("| query | " + " | ".join(labels) + " |")
        p("|---|" + "---:|" * len(labels))
        for q in queries_all:
            cells = [q] + [fus((m.get((q, th)) or {}).get("aggregate", {}).get("client_cpu_us_per_op_median"))
                           for m in maps]
            p("| " + " | ".join(cells) + " |")
        p("")
    if cpu_rows:
        p("CPU over each target's whole `run` (all queries and thread counts, warm-ups "
          "included; sampled by bench/micro-read.sh from /proc, not by the tool):")
        p("")
        p("| target | operations (incl. warm-ups) | wall s | client CPU µs/op, whole run | "
          "server CPU µs/op, whole run | client share | other processes, % of one CPU |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for label, ops, wall, cl, sv, other, what in cpu_rows:
            share = f"{cl / (cl + sv) * 100:.0f} %" if sv else "–"
            p(f"| {label} | {ops:,} | {wall:.0f} | {cl / ops * 1e6:.1f} | "
              f"{(fus(sv / ops * 1e6) if sv is not None else 'in client')} | {share} | "
              f"{other / wall * 100:.0f}{' (disturbed)' if other / wall > 0.25 else ''} |")
        p("")
        p("Server CPU is mariadbd's utime+stime (all threads) for the MariaDB engines and the "
          "postmaster plus all its children (backends, background processes) for PostgreSQL. "
          "Averages over the whole run weight each query by how many operations it completed, "
          "so the fast point queries dominate them. A target is marked disturbed when other "
          "processes used more than 25 % of one CPU during its run.")
        p("")

text = "\n".join(L)
print(text)
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write(text + "\n")
PY
}

if [[ "${1:-}" == "--summarize" ]]; then
    [[ $# -eq 2 && -d "$2" ]] || die "usage: $0 --summarize DIR"
    summarize "$2"
    exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--summarize DIR] (options go in EB_* variables, see the header)"

# ---------------------------------------------------------------- setup -----

command -v python3 >/dev/null || die "python3 not found"
cd "$repo_root"

read -r -a TARGETS <<<"${EB_TARGETS:-sqlite innodb myisam aria rocksdb postgres}"
read -r -a BENCH_ARGS <<<"${EB_BENCH_ARGS:-}"
SIZE_ARGS=()
[[ -n "${EB_TABLE_SIZE:-}" ]] && SIZE_ARGS=(--table-size "$EB_TABLE_SIZE")

OUT=${EB_OUT:-$repo_root/enginebench-results/bench-micro-read-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

need_servers=0
for t in "${TARGETS[@]}"; do
    case "$t" in
    sqlite) ;;
    innodb | myisam | aria | rocksdb | postgres) need_servers=1 ;;
    *) die "unknown target '$t' (sqlite innodb myisam aria rocksdb postgres)" ;;
    esac
done

TMP=$(mktemp -d)
servers_started=0
# shellcheck disable=SC2317 # invoked through the trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if ((servers_started)); then
        if ((rc != 0)); then
            for f in "$TMP/mdb.err" "$TMP/pg.log"; do
                if [[ -s "$f" ]]; then cp "$f" "$OUT/" 2>/dev/null || true; fi
            done
        fi
        bash "$repo_root/scripts/db-servers.sh" stop "$TMP" >/dev/null 2>&1 ||
            log "warning: stopping the servers in $TMP failed"
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

git_commit=$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=false
[[ -n "$(git -C "$repo_root" status --porcelain --untracked-files=no -- src Cargo.toml Cargo.lock .cargo 2>/dev/null)" ]] && git_dirty=true
if [[ -n "${EB_BIN:-}" ]]; then
    src_bin=$EB_BIN
    git_commit="unknown (EB_BIN=$EB_BIN)"
    git_dirty=false
else
    if ! command -v cargo >/dev/null 2>&1 && [[ -x "$HOME/.cargo/bin/cargo" ]]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    command -v cargo >/dev/null || die "cargo not found (or set EB_BIN)"
    log "cargo build --release (commit $git_commit)"
    cargo build --release --quiet || die "cargo build --release failed"
    src_bin=$repo_root/target/release/enginebench
fi
[[ -x "$src_bin" ]] || die "no executable at $src_bin"
# Run a private copy: a later `cargo build` in the repository (someone else
# working there) would otherwise swap the binary between two targets.
BIN=$TMP/enginebench
cp "$src_bin" "$BIN"
bin_version=$("$BIN" --version 2>/dev/null || echo unknown)
bin_sha=$(sha256sum "$BIN" | cut -c1-12)

if ((need_servers)); then
    log "starting private MariaDB and PostgreSQL in $TMP"
    servers_started=1
    bash "$repo_root/scripts/db-servers.sh" start "$TMP" >"$OUT/db-servers.log" 2>&1 ||
        { cat "$OUT/db-servers.log" >&2; die "db-servers.sh start failed"; }
    # shellcheck disable=SC1091
    source "$TMP/env.sh"
fi

CLK_TCK=$(getconf CLK_TCK)

# --------------------------------------------------------- CPU sampling -----
# Builtins only (read, no $(...)): a forked helper would add its own CPU to
# this shell's cutime, which is how the client's CPU is measured.

# Fields of /proc/PID/stat after "pid (comm) ": index 0 = field 3 (state),
# 1 = ppid, 11 = utime, 12 = stime, 13 = cutime, 14 = cstime.
_stat_fields() { # PID -> array F (empty if gone)
    local line
    F=()
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
    line=${line##*) }
    read -r -a F <<<"$line"
}

shell_child_ticks() { # -> CHILD_T: CPU of this shell's reaped children
    _stat_fields $$
    CHILD_T=$((F[13] + F[14]))
}

busy_ticks() { # -> BUSY_T: busy CPU of the whole machine
    # cpu user nice system idle iowait irq softirq steal ...; idle and iowait
    # are not busy.
    local user nice system irq softirq steal _
    read -r _ user nice system _ _ irq softirq steal _ </proc/stat
    BUSY_T=$((user + nice + system + irq + softirq + steal))
}

server_ticks() { # KIND PID -> SERVER_T
    local kind=$1 pid=$2 p
    SERVER_T=0
    _stat_fields "$pid"
    ((${#F[@]})) || return 0
    if [[ "$kind" == mysql ]]; then
        SERVER_T=$((F[11] + F[12]))
        return 0
    fi
    # PostgreSQL: postmaster (own + reaped children) + live children.
    SERVER_T=$((F[11] + F[12] + F[13] + F[14]))
    for p in /proc/[0-9]*; do
        _stat_fields "${p#/proc/}"
        ((${#F[@]})) || continue
        [[ "${F[1]}" == "$pid" ]] && SERVER_T=$((SERVER_T + F[11] + F[12]))
    done
    return 0
}

# Wait (bounded) until other processes leave the CPUs alone. Sets QUIET_MSG.
wait_quiet() {
    local limit=${EB_QUIET_PCT:-25} max=${EB_QUIET_WAIT:-300} t0=$SECONDS b0 pct
    while :; do
        busy_ticks; b0=$BUSY_T
        sleep 3
        busy_ticks
        pct=$(((BUSY_T - b0) * 100 / (3 * CLK_TCK)))
        if ((pct < limit)); then
            QUIET_MSG="machine quiet (${pct} % of one CPU busy) after waiting $((SECONDS - t0)) s"
            return 0
        fi
        if ((SECONDS - t0 >= max)); then
            QUIET_MSG="machine still busy (${pct} % of one CPU) after waiting $((SECONDS - t0)) s: ran anyway"
            return 0
        fi
        log "machine busy (${pct} % of one CPU by other processes), waiting (up to ${max} s)"
        sleep 7
    done
}

# ------------------------------------------------------------------ run -----

run_target() {
    local name=$1 url engine="" kind="" spid="" what="none (in-process)"
    local dir=$OUT/$name
    mkdir -p "$dir"
    case "$name" in
    sqlite) url="sqlite://$TMP/bench.db" ;;
    innodb) url=$EB_TEST_MYSQL_URL engine=InnoDB ;;
    myisam) url=$EB_TEST_MYSQL_URL engine=MyISAM ;;
    aria) url=$EB_TEST_MYSQL_URL engine=Aria ;;
    rocksdb) url=$EB_TEST_MYSQL_URL engine=RocksDB ;;
    postgres) url=$EB_TEST_PG_URL ;;
    esac
    case "$name" in
    sqlite) ;;
    postgres) kind=pg spid=$EB_TEST_PG_PID what="postmaster + children" ;;
    *) kind=mysql spid=$EB_TEST_MYSQL_PID what="mariadbd" ;;
    esac
    local eng=()
    [[ -n "$engine" ]] && eng=(--engine "$engine")

    log "$name: prepare (load; not measured)"
    if ! "$BIN" prepare micro-read --target "$url" "${eng[@]}" "${SIZE_ARGS[@]}" \
            >"$dir/prepare.log" 2>&1; then
        tail -n 20 "$dir/prepare.log" >&2
        log "$name: FAILED: $BIN prepare micro-read --target $url ${eng[*]} ${SIZE_ARGS[*]}"
        FAILED+=("$name")
        return 0
    fi

    local cmd=("$BIN" run micro-read --target "$url" "${eng[@]}" "${SIZE_ARGS[@]}"
               --format json --results-dir "$dir" "${BENCH_ARGS[@]}")
    QUIET_MSG="not checked"
    if ((${EB_QUIET_WAIT:-300} > 0)); then wait_quiet; fi
    log "$name: $QUIET_MSG"
    log "$name: ${cmd[*]}  (log: $dir/run.log)"
    local c0 c1 b0 b1 s0=0 s1=0 t0 t1 rc=0
    if [[ -n "$kind" ]]; then server_ticks "$kind" "$spid"; s0=$SERVER_T; fi
    shell_child_ticks; c0=$CHILD_T
    busy_ticks; b0=$BUSY_T
    t0=$EPOCHREALTIME
    "${cmd[@]}" >"$dir/stdout.json" 2>"$dir/run.log" || rc=$?
    t1=$EPOCHREALTIME
    busy_ticks; b1=$BUSY_T
    shell_child_ticks; c1=$CHILD_T
    if [[ "$kind" == pg ]]; then
        # Backends exit once the client has gone; let the postmaster reap them
        # so their CPU reaches its cutime.
        sleep 0.5
    fi
    if [[ -n "$kind" ]]; then server_ticks "$kind" "$spid"; s1=$SERVER_T; fi
    if ((rc != 0)); then
        tail -n 20 "$dir/run.log" >&2
        log "$name: FAILED (exit $rc): ${cmd[*]}"
        FAILED+=("$name")
        return 0
    fi
    local server_json=null
    [[ -n "$kind" ]] && server_json=$((s1 - s0))
    printf '{"clk_tck": %s, "wall_s": %s, "client_ticks": %s, "server_ticks": %s, "busy_ticks": %s, "server_what": "%s", "before": "%s"}\n' \
        "$CLK_TCK" "$(python3 -c "print(round($t1 - $t0, 3))")" "$((c1 - c0))" "$server_json" \
        "$((b1 - b0))" "$what" "$QUIET_MSG" >"$dir/cpu.json"
    log "$name: done in $(python3 -c "print(round($t1 - $t0))") s"
}

started_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
FAILED=()
for t in "${TARGETS[@]}"; do
    run_target "$t"
done

python3 - "$OUT/meta.json" "$started_at" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$git_commit" "$git_dirty" \
    "$bin_version" "$bin_sha" "${TARGETS[@]}" <<'PY'
import json, os, sys
path, started, finished, commit, dirty, version, sha, *targets = sys.argv[1:]
# The EB_* settings that shape a run (EB_OUT and EB_BIN only say where).
env = " ".join(f'{k}="{os.environ[k]}"' for k in
               ("EB_TARGETS", "EB_BENCH_ARGS", "EB_TABLE_SIZE", "EB_QUIET_PCT", "EB_QUIET_WAIT")
               if os.environ.get(k))
json.dump({"started_at": started, "finished_at": finished, "git_commit": commit,
           "git_dirty": dirty == "true", "binary": f"{version}, sha256 {sha}…",
           "targets": targets,
           "command": (env + " " if env else "") + "bench/micro-read.sh"},
          open(path, "w"), indent=1)
PY

summarize "$OUT"
log "output folder: $OUT"
if ((${#FAILED[@]})); then
    die "failed targets: ${FAILED[*]} (see their run.log / prepare.log in $OUT)"
fi
