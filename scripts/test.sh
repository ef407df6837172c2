#!/usr/bin/env bash
# test.sh: the project's test command (CI runs it through .ci/run).
#
# The integration tests need a real MariaDB (with MyRocks) and PostgreSQL.
# Nothing installed or started by hand survives to a CI machine, so this script
# installs and starts private servers in a temporary directory, points the
# tests at them through EB_TEST_* variables, runs `cargo test`, and always
# stops the servers and removes the directory afterwards. Before any of that it
# checks the code's habits: cargo fmt, clippy (warnings are errors) and the
# layering script ../shared/tools/layers.py (no import circles in src/, between its parts or
# between the files of one folder) and scripts/sizes.py (files and functions a reader can hold).
#
# Usage: scripts/test.sh [cargo test arguments...]
#   e.g. scripts/test.sh --test it -- --nocapture
# Exit status: that of cargo test (or of the first check or server start-up that fails).

set -euo pipefail

step() { echo "==> test.sh: $*"; }

# Resolve the repository root from this script's location, not from the
# caller's working directory.
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/.." && pwd -P)

# rustup installs cargo in ~/.cargo/bin, which non-login CI shells lack.
if ! command -v cargo >/dev/null 2>&1 && [[ -x "$HOME/.cargo/bin/cargo" ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || { echo "test.sh: cargo not found" >&2; exit 127; }

tmp=$(mktemp -d)

# shellcheck disable=SC2317 # invoked through the EXIT trap
cleanup() {
    local rc=$?
    # Runs on every exit (success, failure, Ctrl-C): never leave servers
    # running or data behind.
    if ((rc != 0)); then
        # Server logs help explain a failed run in CI.
        for log in "$tmp/mdb.err" "$tmp/pg.log"; do
            if [[ -s "$log" ]]; then
                echo "--- last lines of $(basename "$log") ---"
                tail -n 20 "$log" || true
            fi
        done
    fi
    step "stopping database servers"
    bash "$script_dir/db-servers.sh" stop "$tmp" || echo "test.sh: warning: stopping servers failed" >&2
    rm -rf "$tmp"
    step "done (exit $rc)"
    exit "$rc"
}
trap cleanup EXIT
# Turn signals into a normal exit so the EXIT trap runs and cleans up.
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$repo_root"
locked=()
if [[ -f Cargo.lock ]]; then
    locked=(--locked)
fi

# The habits that keep the code readable, checked before any server starts so that a
# lint failure costs seconds. Clippy runs in release so that it shares the dependencies'
# build scripts and proc macros with the release test build below.
step "running: cargo fmt --check"
cargo fmt --check
step "running: cargo clippy --release ${locked[*]} --all-targets -- -D warnings"
cargo clippy --release "${locked[@]}" --all-targets -- -D warnings
# The layering check lives beside the repository (CI clones it as ../shared), not in it.
layers="$repo_root/../shared/tools/layers.py"
if [[ ! -f "$layers" ]]; then
    echo "test.sh: $layers is missing: clone the shared tools beside the repository as ../shared" >&2
    exit 2
fi
step "running: python3 ../shared/tools/layers.py src (no import circles between the parts of src/)"
python3 "$layers" src
step "running: python3 ../shared/tools/layers.py src --files (none between the files of one folder either)"
python3 "$layers" src --files
step "running: python3 scripts/sizes.py src (no file over 900 lines, no function over 150)"
python3 "$script_dir/sizes.py" src

step "starting database servers in $tmp"
# The report tests open the HTML report in headless Chromium (Debian's package); the live
# metrics test scrapes a run with a private Prometheus (Debian's package, 2.42 on bookworm);
# --profile-server's test samples the server with perf (linux-perf).
export EB_EXTRA_PACKAGES="${EB_EXTRA_PACKAGES:-} chromium prometheus linux-perf"
bash "$script_dir/db-servers.sh" start "$tmp"

step "loading $tmp/env.sh"
# shellcheck source=/dev/null
source "$tmp/env.sh"
# Tests must fail, not skip, when the servers are missing.
export EB_REQUIRE_SERVERS=1
# The same for io_uring where this kernel and sandbox offer it (the client's own probe says):
# the ring tests then fail instead of skipping when it cannot start (issue 47).
if [[ -z "${EB_REQUIRE_IO_URING:-}" ]]; then
    probe_out=$(cargo test --release "${locked[@]}" --lib db::ring::tests::probe_report -- --exact --nocapture 2>/dev/null || true)
    if grep -q '^io_uring probe: available$' <<<"$probe_out"; then
        export EB_REQUIRE_IO_URING=1
    else
        echo "test.sh: io_uring is not available here; the ring tests skip ($(grep '^io_uring probe:' <<<"$probe_out" || echo 'probe did not run'))"
    fi
fi
# The main pass runs every lean-client loop on the ring where it is required, small ones too
# (`--client-io auto` leaves loops of fewer than 8 connections on epoll); tests of `auto`
# itself ask for it by name. The epoll pass below covers the other path.
if [[ "${EB_REQUIRE_IO_URING:-}" == 1 && -z "${EB_CLIENT_IO:-}" ]]; then
    export EB_CLIENT_IO=io_uring
fi
env | grep '^EB_' | sort

step "running: cargo test --release ${locked[*]} $*"
rc=0
cargo test --release "${locked[@]}" "$@" || rc=$?
step "cargo test exited with $rc"
# The whole suite ran on the lean clients' io_uring path where the kernel allows it; the lean
# clients' own tests run once more on the epoll path.
if [[ $# -eq 0 && $rc -eq 0 ]]; then
    step "running the lean clients' tests on the epoll path (EB_CLIENT_IO=epoll)"
    EB_CLIENT_IO=epoll cargo test --release "${locked[@]}" --test it -- \
        mysqlwire:: pgwire:: client_io:: statements:: oltp:: open_loop:: faults::server_restart \
        faults::stopped_server || rc=$?
    step "epoll pass exited with $rc"
fi
exit "$rc"
