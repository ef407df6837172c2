#!/usr/bin/env bash
# db-servers.sh: run one private MariaDB and one private PostgreSQL for tests.
#
#   scripts/db-servers.sh start DIR   install packages if needed, start both
#                                     servers with every file under DIR, create
#                                     database enginebench_test, write DIR/env.sh
#   scripts/db-servers.sh stop DIR    stop both servers (idempotent)
#
# Why this exists: tests need real servers, and nothing installed by hand
# survives to a fresh machine (CI). The machines are Debian 12 containers run as
# root with no systemd, and the image's policy-rc.d forbids package scripts from
# starting services, so we start our own instances. Everything (data, sockets,
# pid files, logs) lives under DIR so several runs can coexist on one machine
# and nothing system-wide is touched apart from installing packages.
#
# DIR/env.sh (source it) exports:
#   EB_TEST_MYSQL_URL      mysql://root@localhost/enginebench_test?socket=DIR/mdb.sock
#   EB_TEST_MYSQL_TCP_URL  mysql://root@127.0.0.1:PORT/enginebench_test
#   EB_TEST_MYSQL_PID      pid of mariadbd
#   EB_TEST_PG_URL         postgres://postgres@localhost:PGPORT/enginebench_test?host=DIR/pgsock
#   EB_TEST_PG_TCP_URL     postgres://postgres@127.0.0.1:PGPORT/enginebench_test
#   EB_TEST_PG_PID         pid of the postmaster
#   EB_TEST_GALERA_URL     mysql://root@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/enginebench_test:
#                          a 3-node MariaDB Galera cluster (state transfer by rsync), every
#                          node on its own loopback ports; EB_GALERA_NODES=0 starts none
# The PG socket URL carries the port because PostgreSQL names its socket file
# after the port (DIR/pgsock/.s.PGSQL.PGPORT); without it clients look for 5432.
#
# This script depends on nothing else in the repository.

set -euo pipefail

# Package binaries live in sbin; CI shells do not always have it on PATH.
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

PACKAGES=(mariadb-server mariadb-client mariadb-plugin-rocksdb postgresql
    # InnoDB page compression with lz4, lzo, lzma, bzip2, snappy (the compression workload).
    mariadb-plugin-provider-lz4 mariadb-plugin-provider-lzo mariadb-plugin-provider-lzma
    mariadb-plugin-provider-bzip2 mariadb-plugin-provider-snappy
    # The Galera cluster of the clustered-target tests (state transfer by rsync).
    galera-4 rsync
    # The Spider engine of the sharded-target tests (tests/it/spider.rs starts its own head
    # and backends with `enginebench server start`).
    mariadb-plugin-spider)
# Extra packages (space separated), e.g. EB_EXTRA_PACKAGES=sysbench.
read -r -a _extra <<<"${EB_EXTRA_PACKAGES:-}"
PACKAGES+=("${_extra[@]}")
DB_NAME=enginebench_test
# Bounded waits (seconds). Overridable for slow machines.
SERVER_WAIT=${EB_SERVER_WAIT:-60}       # server start / stop
APT_LOCK_WAIT=${EB_APT_LOCK_WAIT:-600}  # another apt/dpkg holding the locks
PORT_TRIES=5                            # restarts after losing a port race

log() { echo "db-servers: $*" >&2; }
die() { echo "db-servers: ERROR: $*" >&2; exit 1; }

usage() {
    echo "usage: $0 start|stop DIR" >&2
    exit 2
}

# ---------------------------------------------------------------- helpers ---

# True if the process exists and is not a zombie. The container's init may not
# reap orphans, so a dead server can linger as a zombie and `kill -0` would
# still succeed on it.
alive() {
    local pid=$1 state
    [[ -n "$pid" && -r /proc/$pid/stat ]] || return 1
    state=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ "$state" != Z && "$state" != X ]]
}

# Pids of processes whose executable name is $1 and whose command line contains
# the argument $2 exactly. Used to find "our" mariadbd even when its pid file
# is missing (crash during start-up, or pid file not yet written), without
# touching servers that belong to other DIRs.
pids_with_arg() {
    local name=$1 arg=$2 p comm
    for p in /proc/[0-9]*; do
        comm=$(cat "$p/comm" 2>/dev/null) || continue
        [[ "$comm" == "$name" ]] || continue
        if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$arg"; then
            alive "${p#/proc/}" && echo "${p#/proc/}"
        fi
    done
    return 0
}

# True if a TCP port is in use (any state, IPv4 or IPv6) in this network
# namespace. /proc/net/tcp is always there, unlike python3 or ss.
port_in_use() {
    local hex
    hex=$(printf ':%04X' "$1")
    awk -v p="$hex" 'FNR > 1 && substr($2, length($2) - 4) == p { found = 1 }
                     END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# A free port in 20000-32767: below Linux's ephemeral range (32768-60999) so
# outgoing connections do not grab it, random so that concurrent runs rarely
# pick the same one. The remaining race (two runs picking the same port between
# check and bind) is handled by retrying the server start on bind errors.
pick_port() {
    local p _
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 12768))
        port_in_use "$p" || { echo "$p"; return 0; }
    done
    die "could not find a free TCP port"
}

# -------------------------------------------------------------- packages ----

missing_packages() {
    local p status
    for p in "${PACKAGES[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [[ "$status" == "install ok installed" ]] || echo "$p"
    done
}

# Pids holding a POSIX lock on file $1 (apt and dpkg use fcntl locks, which
# flock(1) cannot see; /proc/locks lists them by inode).
lock_holders() {
    local f=$1 ino
    [[ -e "$f" ]] || return 0
    ino=$(stat -c %i "$f")
    awk -v ino="$ino" '$2 != "->" { split($6, a, ":"); if (a[3] == ino) print $5 }' /proc/locks
}

# Another process (a provisioning step, unattended upgrades, a parallel run of
# this script) may be running apt right now. Wait, bounded, for it to finish
# rather than failing on "Could not get lock".
wait_for_apt_locks() {
    local deadline=$((SECONDS + APT_LOCK_WAIT)) holders announced=0
    while :; do
        holders=$(for f in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock \
                           /var/lib/apt/lists/lock /var/cache/apt/archives/lock; do
                      lock_holders "$f"; done | sort -u | tr '\n' ' ')
        [[ -z "${holders// /}" ]] && return 0
        if ((announced == 0)); then
            log "waiting for apt/dpkg lock held by pid(s) $holders(up to ${APT_LOCK_WAIT}s)"
            announced=1
        fi
        ((SECONDS < deadline)) || die "apt/dpkg lock still held by pid(s) $holders after ${APT_LOCK_WAIT}s"
        sleep 2
    done
}

# Run an apt-get command, retrying while another process holds a lock we could
# not see in time (the window between our check and apt taking the lock).
apt_retry() {
    local deadline=$((SECONDS + APT_LOCK_WAIT)) out rc
    while :; do
        rc=0
        out=$(apt-get -o DPkg::Lock::Timeout=120 "$@" 2>&1) || rc=$?
        if ((rc == 0)); then
            return 0
        fi
        if grep -q "Could not get lock\|Unable to lock\|Unable to acquire the dpkg frontend lock" <<<"$out" \
           && ((SECONDS < deadline)); then
            log "apt-get $1: lock busy, retrying"
            sleep 5
            wait_for_apt_locks
            continue
        fi
        printf '%s\n' "$out" | tail -n 30 >&2
        return "$rc"
    done
}

ensure_packages() {
    local missing
    missing=$(missing_packages | tr '\n' ' ')
    [[ -z "${missing// /}" ]] && { log "packages already installed"; return 0; }

    ((EUID == 0)) || die "packages missing ($missing) and not root: cannot apt-get install"
    # Someone else may be installing exactly these packages right now.
    wait_for_apt_locks
    missing=$(missing_packages | tr '\n' ' ')
    [[ -z "${missing// /}" ]] && { log "packages installed meanwhile by another process"; return 0; }

    export DEBIAN_FRONTEND=noninteractive
    log "installing $missing(apt-get update + install)"
    apt_retry update -q || die "apt-get update failed"
    if ! apt_retry install -y -q --no-install-recommends "${PACKAGES[@]}"; then
        # An earlier interrupted dpkg run leaves packages half-configured and
        # apt refuses to continue until it is finished.
        log "apt-get install failed; trying dpkg --configure -a and once more"
        dpkg --configure -a >&2 || true
        apt_retry install -y -q --no-install-recommends "${PACKAGES[@]}" || die "apt-get install failed"
    fi
    missing=$(missing_packages | tr '\n' ' ')
    [[ -z "${missing// /}" ]] || die "packages still missing after install: $missing"
}

pg_bindir() {
    # The brief is PostgreSQL 15 (Debian 12's version); fall back to the newest
    # installed major version so a future image still works.
    if [[ -x /usr/lib/postgresql/15/bin/pg_ctl ]]; then
        echo /usr/lib/postgresql/15/bin
        return 0
    fi
    local d
    d=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    [[ -n "$d" && -x "$d/pg_ctl" ]] || die "no PostgreSQL server binaries under /usr/lib/postgresql"
    log "warning: PostgreSQL 15 not found, using $d"
    echo "$d"
}

# ---------------------------------------------------------------- MariaDB ---

mdb_pids() {
    # The pid file may be stale or absent; the command line is authoritative.
    pids_with_arg mariadbd "--datadir=$DIR/mdb"
}

mdb_start() {
    local port _ log_off deadline
    mkdir -p "$DIR/mdbtmp"
    if [[ ! -d "$DIR/mdb/mysql" ]]; then
        log "MariaDB: initialising data directory $DIR/mdb"
        # --no-defaults: ignore /etc/mysql/*.cnf (the packaged config points at
        # /run/mysqld and system paths). normal auth: root without password
        # over socket and TCP, which is what the test URLs use.
        if ! mariadb-install-db --no-defaults --user=root --datadir="$DIR/mdb" \
                --auth-root-authentication-method=normal --skip-test-db \
                >"$DIR/mdb-install.log" 2>&1; then
            tail -n 30 "$DIR/mdb-install.log" >&2
            die "mariadb-install-db failed (log: $DIR/mdb-install.log)"
        fi
    fi

    for _ in $(seq 1 "$PORT_TRIES"); do
        port=$(pick_port)
        log_off=$(stat -c %s "$DIR/mdb.err" 2>/dev/null || echo 0)
        log "MariaDB: starting on 127.0.0.1:$port, socket $DIR/mdb.sock"
        rm -f "$DIR/mdb.pid"
        # setsid: own session, so a Ctrl-C aimed at the test run does not hit
        # the server directly; the caller stops it cleanly instead.
        # Memory is kept small (it is for tests): 256M buffer pool, small
        # RocksDB block cache. ha_rocksdb is loaded so ENGINE=ROCKSDB works.
        setsid mariadbd --no-defaults --user=root \
            --datadir="$DIR/mdb" --tmpdir="$DIR/mdbtmp" \
            --socket="$DIR/mdb.sock" --port="$port" --bind-address=127.0.0.1 \
            --pid-file="$DIR/mdb.pid" --log-error="$DIR/mdb.err" \
            --plugin-load-add=ha_rocksdb --rocksdb-block-cache-size=64M \
            --innodb-buffer-pool-size=256M --max-connections=600 \
            </dev/null >>"$DIR/mdb.out" 2>&1 &

        deadline=$((SECONDS + SERVER_WAIT))
        while :; do
            if mariadb-admin --no-defaults -S "$DIR/mdb.sock" -uroot --connect-timeout=2 \
                    ping >/dev/null 2>&1 && [[ -s "$DIR/mdb.pid" ]]; then
                MDB_PORT=$port
                MDB_PID=$(cat "$DIR/mdb.pid")
                return 0
            fi
            sleep 0.3
            if [[ -z "$(mdb_pids)" ]]; then
                # The server exited. If it lost a race for the port, try another.
                if tail -c +"$((log_off + 1))" "$DIR/mdb.err" 2>/dev/null |
                        grep -q "Address already in use\|Bind on TCP/IP port"; then
                    log "MariaDB: port $port taken meanwhile, retrying with another"
                    continue 2
                fi
                tail -n 30 "$DIR/mdb.err" "$DIR/mdb.out" >&2 2>/dev/null || true
                die "MariaDB exited during start-up (log: $DIR/mdb.err)"
            fi
            if ((SECONDS >= deadline)); then
                tail -n 30 "$DIR/mdb.err" >&2 2>/dev/null || true
                die "MariaDB did not answer within ${SERVER_WAIT}s (log: $DIR/mdb.err)"
            fi
        done
    done
    die "MariaDB: no free port after $PORT_TRIES tries"
}

mdb_sql() {
    mariadb --no-defaults -S "$DIR/mdb.sock" -uroot --batch --skip-column-names -e "$1"
}

mdb_stop() {
    local pids
    # Found by command line, not pid file: the pid file can be missing (crash
    # during start-up) or stale (its pid reused by an unrelated process).
    pids=$(mdb_pids | paste -sd ' ')
    if [[ -z "${pids// /}" ]]; then
        log "MariaDB: not running"
        return 0
    fi
    log "MariaDB: stopping (pid $pids)"
    mdb_shutdown "$DIR/mdb.sock" "$pids" MariaDB
    log "MariaDB: stopped"
}

# Stop the mariadbd processes $2 (pids) whose socket is $1, bounded: a clean shutdown through
# the server first, SIGTERM (the same) if the socket is unusable, SIGKILL after SERVER_WAIT.
# mariadb-admin alone would wait up to an hour by default.
mdb_shutdown() { # socket pids name
    local pid deadline
    if ! timeout $((SERVER_WAIT + 10)) mariadb-admin --no-defaults -S "$1" -uroot \
            --connect-timeout=5 --shutdown-timeout="$SERVER_WAIT" shutdown >/dev/null 2>&1; then
        # shellcheck disable=SC2086 # $2: one word per pid
        kill -TERM $2 2>/dev/null || true
    fi
    deadline=$((SECONDS + SERVER_WAIT))
    for pid in $2; do
        while alive "$pid"; do
            if ((SECONDS >= deadline)); then
                log "$3: pid $pid still running after ${SERVER_WAIT}s, killing it"
                kill -KILL "$pid" 2>/dev/null || true
                STOP_FAILED=1
                break
            fi
            sleep 0.2
        done
    done
}

# ----------------------------------------------------------------- Galera ---

# A Galera cluster of GAL_NODES MariaDB nodes under DIR/gal: node i has its data in
# DIR/gal/n$i, its SQL port in GAL_PORTS[i] and group-communication, IST and SST ports of its
# own, all on 127.0.0.1. The first node bootstraps the cluster; the others join one after the
# other with a full state transfer by rsync from a synced node. When we are root the nodes run
# as user mysql: the rsync daemon of a state transfer started by root drops to nobody and can
# then not write the joiner's data directory.
GAL_NODES=${EB_GALERA_NODES:-3}

gal_user() { if ((EUID == 0)); then echo mysql; else id -un; fi; }

gal_pids() { # node
    pids_with_arg mariadbd "--datadir=$DIR/gal/n$1"
}

gal_sql() { # node sql
    mariadb --no-defaults -S "$DIR/gal/n$1.sock" -uroot --batch --skip-column-names -e "$2"
}

gal_start() {
    local i user addr="" deadline state
    user=$(gal_user)
    rm -rf "$DIR/gal"
    mkdir -p "$DIR/gal"
    GAL_PORTS=() GAL_GCOMM=()
    for ((i = 1; i <= GAL_NODES; i++)); do
        GAL_PORTS[i]=$(pick_port)
        GAL_GCOMM[i]=$(pick_port)
        addr+="${addr:+,}127.0.0.1:${GAL_GCOMM[i]}"
        mkdir -p "$DIR/gal/n$i" "$DIR/gal/t$i"
    done
    log "Galera: initialising the first node's data directory"
    mariadb-install-db --no-defaults --user="$user" --datadir="$DIR/gal/n1" \
        --auth-root-authentication-method=normal >"$DIR/gal/install.log" 2>&1 ||
        die "Galera: mariadb-install-db failed (log: $DIR/gal/install.log)"
    [[ $user == "$(id -un)" ]] || chown -R "$user" "$DIR/gal"
    for ((i = 1; i <= GAL_NODES; i++)); do
        local ist sst
        ist=$(pick_port)
        sst=$(pick_port)
        log "Galera: starting node $i on 127.0.0.1:${GAL_PORTS[i]}"
        setsid mariadbd --no-defaults --user="$user" \
            --datadir="$DIR/gal/n$i" --tmpdir="$DIR/gal/t$i" \
            --socket="$DIR/gal/n$i.sock" --port="${GAL_PORTS[i]}" --bind-address=127.0.0.1 \
            --pid-file="$DIR/gal/n$i.pid" --log-error="$DIR/gal/n$i.err" \
            --innodb-buffer-pool-size=128M --max-connections=300 \
            --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
            --wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
            --wsrep-cluster-name="eb-$$" --wsrep-cluster-address="gcomm://$addr" \
            --wsrep-node-address="127.0.0.1:${GAL_GCOMM[i]}" \
            --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:${GAL_GCOMM[i]};ist.recv_addr=127.0.0.1:$ist;gcache.size=64M" \
            --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$sst" \
            --wsrep-node-incoming-address="127.0.0.1:${GAL_PORTS[i]}" \
            $( ((i == 1)) && echo --wsrep-new-cluster) \
            </dev/null >>"$DIR/gal/n$i.out" 2>&1 &
        deadline=$((SECONDS + SERVER_WAIT))
        while :; do
            state=$(gal_sql "$i" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null |
                cut -f2 || true)
            [[ $state == Synced ]] && break
            [[ -n "$(gal_pids "$i")" ]] || {
                tail -n 20 "$DIR/gal/n$i.err" >&2 2>/dev/null || true
                die "Galera: node $i exited during start-up (log: $DIR/gal/n$i.err)"
            }
            ((SECONDS < deadline)) || die "Galera: node $i not synced after ${SERVER_WAIT}s (log: $DIR/gal/n$i.err)"
            sleep 0.5
        done
    done
    gal_sql 1 "CREATE DATABASE IF NOT EXISTS $DB_NAME"
    local hosts=""
    for ((i = 1; i <= GAL_NODES; i++)); do hosts+="${hosts:+,}127.0.0.1:${GAL_PORTS[i]}"; done
    GAL_URL="mysql://root@$hosts/$DB_NAME"
    log "Galera: $GAL_NODES nodes synced, cluster size $(gal_sql 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)"
}

gal_stop() {
    local i pids
    [[ -d "$DIR/gal" ]] || return 0
    # The last node first: the first one then leaves last and could bootstrap again.
    for ((i = 9; i >= 1; i--)); do
        [[ -d "$DIR/gal/n$i" ]] || continue
        pids=$(gal_pids "$i" | paste -sd ' ')
        [[ -n "${pids// /}" ]] || continue
        log "Galera: stopping node $i (pid $pids)"
        mdb_shutdown "$DIR/gal/n$i.sock" "$pids" "Galera node $i"
    done
    # A state transfer's rsync daemon outlives a killed joiner.
    pkill -f "rsync --daemon.*$DIR/gal/" 2>/dev/null || true
}

# ------------------------------------------------------------- PostgreSQL ---

# PostgreSQL refuses to run as root; run its tools as the postgres user from /
# (root's working directory may not be readable by postgres).
as_pg() {
    (cd / && runuser -u postgres -- "$@")
}

pg_pid() {
    # First line of postmaster.pid is the postmaster's pid.
    local pid
    [[ -s "$DIR/pg/postmaster.pid" ]] || return 0
    pid=$(head -n 1 "$DIR/pg/postmaster.pid")
    # A stale pid file (server killed, machine rebooted) may name a pid now
    # used by something else: only trust it if that process is a postgres.
    alive "$pid" && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == postgres ]] && echo "$pid"
    return 0
}

pg_start() {
    local port _ log_off
    id postgres >/dev/null 2>&1 || die "no postgres user (is the postgresql package installed?)"
    mkdir -p "$DIR/pg" "$DIR/pgsock"
    touch "$DIR/pg.log"
    # The data dir, socket folder and log must belong to postgres; the data
    # dir must be 0700 or the postmaster refuses to start.
    chown postgres:postgres "$DIR/pg" "$DIR/pgsock" "$DIR/pg.log"
    chmod 700 "$DIR/pg"
    as_pg test -x "$DIR/pgsock" -a -w "$DIR/pg.log" ||
        die "user postgres cannot reach $DIR (every parent directory needs o+x)"

    if [[ ! -s "$DIR/pg/PG_VERSION" ]]; then
        log "PostgreSQL: initialising data directory $DIR/pg"
        if ! as_pg "$PGBIN/initdb" -D "$DIR/pg" -U postgres --auth=trust -E UTF8 \
                --locale=C.UTF-8 >"$DIR/pg-initdb.log" 2>&1; then
            tail -n 30 "$DIR/pg-initdb.log" >&2
            die "initdb failed (log: $DIR/pg-initdb.log)"
        fi
    fi

    for _ in $(seq 1 "$PORT_TRIES"); do
        port=$(pick_port)
        log_off=$(stat -c %s "$DIR/pg.log")
        log "PostgreSQL: starting on 127.0.0.1:$port, socket dir $DIR/pgsock"
        # -w -t: pg_ctl itself waits (bounded) until the server accepts
        # connections. pg_ctl detaches the postmaster into its own session.
        if as_pg "$PGBIN/pg_ctl" -D "$DIR/pg" -l "$DIR/pg.log" -w -t "$SERVER_WAIT" \
                -o "-p $port -k $DIR/pgsock -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=128MB" \
                start >"$DIR/pg-ctl.out" 2>&1; then
            PG_PORT=$port
            PG_PID=$(pg_pid)
            [[ -n "$PG_PID" ]] || die "PostgreSQL started but $DIR/pg/postmaster.pid has no live pid"
            return 0
        fi
        if tail -c +"$((log_off + 1))" "$DIR/pg.log" | grep -q "Address already in use"; then
            log "PostgreSQL: port $port taken meanwhile, retrying with another"
            # A postmaster that failed to bind exits by itself; make sure.
            pg_stop_quiet
            continue
        fi
        cat "$DIR/pg-ctl.out" >&2 || true
        tail -n 30 "$DIR/pg.log" >&2 || true
        die "PostgreSQL did not start within ${SERVER_WAIT}s (log: $DIR/pg.log)"
    done
    die "PostgreSQL: no free port after $PORT_TRIES tries"
}

pg_stop_quiet() {
    [[ -n "$(pg_pid)" ]] || return 0
    as_pg "$PGBIN/pg_ctl" -D "$DIR/pg" -m fast -w -t "$SERVER_WAIT" stop >/dev/null 2>&1 || true
}

pg_stop() {
    local pid deadline
    pid=$(pg_pid)
    if [[ -z "$pid" ]]; then
        log "PostgreSQL: not running"
        return 0
    fi
    log "PostgreSQL: stopping (pid $pid)"
    # -m fast: roll back open transactions and disconnect clients instead of
    # waiting for them; -w -t: wait, bounded, until the postmaster is gone.
    if [[ -n "${PGBIN:-}" ]]; then
        as_pg "$PGBIN/pg_ctl" -D "$DIR/pg" -m fast -w -t "$SERVER_WAIT" stop >/dev/null 2>&1 ||
            kill -INT "$pid" 2>/dev/null || true   # SIGINT = fast shutdown
    else
        kill -INT "$pid" 2>/dev/null || true
    fi
    deadline=$((SECONDS + SERVER_WAIT))
    while alive "$pid"; do
        if ((SECONDS >= deadline)); then
            log "PostgreSQL: pid $pid still running after ${SERVER_WAIT}s, sending SIGQUIT"
            kill -QUIT "$pid" 2>/dev/null || true   # immediate shutdown
            sleep 2
            if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
            STOP_FAILED=1
            break
        fi
        sleep 0.2
    done
    log "PostgreSQL: stopped"
}

# ------------------------------------------------------------------ main ----

[[ $# -eq 2 ]] || usage
CMD=$1
DIR=$2

case "$CMD" in
start)
    ((EUID == 0)) || die "must run as root (installs packages, runs PostgreSQL as user postgres)"
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd -P)
    # DIR ends up in URLs, in a pg_ctl -o string and in Unix socket paths
    # (at most 107 bytes): keep it plain and short. mktemp -d paths qualify.
    [[ "$DIR" =~ ^[A-Za-z0-9/._-]+$ ]] ||
        die "DIR must contain only letters, digits, '/', '.', '_', '-': $DIR"
    ((${#DIR} <= 80)) || die "DIR path too long for Unix sockets (max 80 bytes): $DIR"
    # postgres must traverse DIR to reach its own subfolders.
    chmod 755 "$DIR"

    t0=$SECONDS
    ensure_packages
    PGBIN=$(pg_bindir)
    for tool in mariadb-install-db mariadbd mariadb mariadb-admin; do
        command -v "$tool" >/dev/null || die "$tool not found after installing packages"
    done

    if [[ -n "$(mdb_pids)" || -n "$(pg_pid)" ]]; then
        die "servers already running in $DIR; run '$0 stop $DIR' first"
    fi

    # If anything below fails, do not leave half the servers running.
    STOP_FAILED=0
    trap 'rc=$?; if ((rc != 0)); then log "start failed, stopping what was started"; mdb_stop || true; pg_stop || true; gal_stop || true; fi' EXIT

    mdb_start
    # Check rather than assume that MyRocks loaded: tests rely on it.
    rocks=$(mdb_sql "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'")
    [[ "$rocks" == YES || "$rocks" == DEFAULT ]] ||
        die "MariaDB started but ROCKSDB engine is not available (support='$rocks'); see $DIR/mdb.err"
    mdb_sql "CREATE DATABASE IF NOT EXISTS $DB_NAME"
    log "MariaDB: ready, pid $MDB_PID, database $DB_NAME"

    pg_start
    if [[ -z "$("$PGBIN/psql" -h "$DIR/pgsock" -p "$PG_PORT" -U postgres -d postgres -At \
            -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" ]]; then
        "$PGBIN/psql" -h "$DIR/pgsock" -p "$PG_PORT" -U postgres -d postgres -q \
            -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB_NAME" >/dev/null
    fi
    log "PostgreSQL: ready, pid $PG_PID, database $DB_NAME"

    GAL_URL=""
    ((GAL_NODES == 0)) || gal_start

    # Write env.sh atomically so a reader never sees half a file.
    cat >"$DIR/env.sh.tmp" <<EOF
# Written by db-servers.sh start $DIR on $(date -u '+%Y-%m-%dT%H:%M:%SZ'); source it.
export EB_TEST_MYSQL_URL='mysql://root@localhost/$DB_NAME?socket=$DIR/mdb.sock'
export EB_TEST_MYSQL_TCP_URL='mysql://root@127.0.0.1:$MDB_PORT/$DB_NAME'
export EB_TEST_MYSQL_PID='$MDB_PID'
export EB_TEST_PG_URL='postgres://postgres@localhost:$PG_PORT/$DB_NAME?host=$DIR/pgsock'
export EB_TEST_PG_TCP_URL='postgres://postgres@127.0.0.1:$PG_PORT/$DB_NAME'
export EB_TEST_PG_PID='$PG_PID'
export EB_TEST_GALERA_URL='$GAL_URL'
EOF
    mv "$DIR/env.sh.tmp" "$DIR/env.sh"
    trap - EXIT
    log "started in $((SECONDS - t0))s; environment in $DIR/env.sh"
    ;;
stop)
    if [[ ! -d "$DIR" ]]; then
        log "nothing to stop: $DIR does not exist"
        exit 0
    fi
    DIR=$(cd "$DIR" && pwd -P)
    STOP_FAILED=0
    # PGBIN is only needed for a clean pg_ctl stop; without the binaries we
    # fall back to signals.
    PGBIN=""
    if [[ -d /usr/lib/postgresql ]]; then PGBIN=$(pg_bindir 2>/dev/null || true); fi
    mdb_stop
    pg_stop
    gal_stop
    ((STOP_FAILED == 0)) || die "a server had to be killed (see logs in $DIR)"
    ;;
*)
    usage
    ;;
esac
