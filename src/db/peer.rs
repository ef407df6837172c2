//! The server process behind a target on this machine, for the runs' server CPU when nobody
//! gave its pid (`--server` or `--server-pid`): the peer of the admin connection's Unix
//! socket, or the owner of the socket listening on the target's port.

use std::path::{Path, PathBuf};

use super::mysql::MysqlConn;
use super::postgres::PgConn;
use super::sock::Sock;
use super::{Conn, Dbms, TargetSpec};
use crate::measure::proc::{self, SocketOwner};

/// How the server's pid was found (`target.server.found_by` in a result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// enginebench started the server (`--server`).
    Managed,
    /// The user gave it (`--server-pid`).
    ServerPidFlag,
    /// SO_PEERCRED of the admin connection's Unix socket.
    SocketPeer,
    /// The process holding the socket that listens on the target's TCP port or Unix socket
    /// path (/proc/net/{tcp,tcp6,unix} and /proc/*/fd).
    ListeningPort,
}

impl FoundBy {
    pub fn name(self) -> &'static str {
        match self {
            FoundBy::Managed => "managed",
            FoundBy::ServerPidFlag => "--server-pid",
            FoundBy::SocketPeer => "socket peer",
            FoundBy::ListeningPort => "listening port",
        }
    }
}

/// What the search for the server process gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Found {
        pid: u32,
        by: FoundBy,
    },
    /// A server on this machine that could not be found: why, for the result's notes.
    NotFound(String),
    /// No server process on this machine to look for (another host, or SQLite).
    NotLocal,
}

/// Find the server process of `spec` through `conn` (an open connection to it).
pub fn find_server(conn: &Conn, spec: &TargetSpec) -> Lookup {
    if spec.dbms == Dbms::Sqlite {
        return Lookup::NotLocal;
    }
    let found = |pid: u32, by: FoundBy| {
        // A proxy in front of the server (docker-proxy publishing a container's port, a
        // connection pooler) owns the socket too: its CPU is not the server's.
        let name = proc::comm(pid).unwrap_or_default();
        if !is_server(spec.dbms, &name) {
            return Lookup::NotFound(format!(
                "server CPU not recorded: the process found by {} is '{name}' (pid {pid}), not \
                 a {} server (a proxy?); give --server-pid PID",
                by.name(),
                spec.dbms.name()
            ));
        }
        Lookup::Found {
            pid: server_root(spec.dbms, pid),
            by,
        }
    };
    if let Some(socket) = &spec.socket {
        // A Unix socket's peer is always on this machine (perhaps in another pid namespace).
        if let Some(pid) = lean_socket(conn).and_then(Sock::peer_pid) {
            return found(pid, FoundBy::SocketPeer);
        }
        // The fallback drivers keep their socket to themselves: look the path up instead.
        let path = socket_path(spec, socket);
        let what = format!("socket {}", path.display());
        return match owner(&proc::unix_listen_inodes(&path), &what) {
            Ok(pid) => found(pid, FoundBy::ListeningPort),
            Err(why) => Lookup::NotFound(why),
        };
    }
    if !is_loopback(&spec.host) {
        return Lookup::NotLocal;
    }
    let what = format!("port {} on {}", spec.port, spec.host);
    match owner(&proc::tcp_listen_inodes(spec.port), &what) {
        Ok(pid) => found(pid, FoundBy::ListeningPort),
        Err(why) => Lookup::NotFound(why),
    }
}

/// The socket of a lean client's connection.
fn lean_socket(conn: &Conn) -> Option<&Sock> {
    match conn {
        Conn::Mysql(MysqlConn::Wire(c)) => Some(c.socket()),
        Conn::Postgres(PgConn::Wire(c)) => Some(c.socket()),
        _ => None,
    }
}

/// The socket file: MySQL's `?socket=` names it; PostgreSQL's `?host=` names its directory
/// (libpq's convention: DIR/.s.PGSQL.PORT).
fn socket_path(spec: &TargetSpec, socket: &str) -> PathBuf {
    match spec.dbms {
        Dbms::Postgres => {
            Path::new(socket.trim_end_matches('/')).join(format!(".s.PGSQL.{}", spec.port))
        }
        _ => PathBuf::from(socket),
    }
}

/// The process owning one of the listening sockets `inodes`, or why there is none.
fn owner(inodes: &[u64], what: &str) -> Result<u32, String> {
    if inodes.is_empty() {
        return Err(format!(
            "server CPU not recorded: no socket listening on {what} is visible in /proc/net \
             (a server in another network namespace?); give --server-pid PID"
        ));
    }
    match proc::socket_owner(inodes) {
        SocketOwner::Found(pid) => Ok(pid),
        SocketOwner::NotFound { unreadable } => Err(format!(
            "server CPU not recorded: the process listening on {what} is not among the \
             processes this user may read ({unreadable} were not readable); run as the \
             server's user or give --server-pid PID"
        )),
    }
}

/// PostgreSQL: the server to sample is the postmaster with its children. A socket's peer
/// may be a backend (whose parent is the postmaster); SO_PEERCRED on Linux names the
/// process that called listen(), which is the postmaster already, so this usually stays.
fn server_root(dbms: Dbms, pid: u32) -> u32 {
    if dbms != Dbms::Postgres {
        return pid;
    }
    match proc::parent(pid) {
        Some(pp) if pp > 1 && proc::comm(pp).is_some_and(|c| is_postgres(&c)) => pp,
        _ => pid,
    }
}

fn is_postgres(comm: &str) -> bool {
    comm.contains("postgres") || comm == "postmaster"
}

/// Whether a command name is a server of `dbms` (mysqld, mariadbd, mysqld-debug; postgres).
fn is_server(dbms: Dbms, comm: &str) -> bool {
    match dbms {
        Dbms::Mysql => comm.contains("mysqld") || comm.contains("mariadb"),
        Dbms::Postgres => is_postgres(comm),
        Dbms::Sqlite => false,
    }
}

/// 127.0.0.0/8, ::1 and `localhost`: the addresses whose server runs on this machine.
fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.3.2.1",
            "::1",
            "[::1]",
            "LOCALHOST",
        ] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["10.0.0.1", "db.example.com", "", "::2"] {
            assert!(!is_loopback(h), "{h}");
        }
    }

    #[test]
    fn server_names() {
        assert!(is_server(Dbms::Mysql, "mariadbd"));
        assert!(is_server(Dbms::Mysql, "mysqld"));
        assert!(!is_server(Dbms::Mysql, "docker-proxy"));
        assert!(is_server(Dbms::Postgres, "postgres"));
        assert!(!is_server(Dbms::Postgres, "pgbouncer"));
    }

    #[test]
    fn names() {
        assert_eq!(FoundBy::SocketPeer.name(), "socket peer");
        assert_eq!(FoundBy::ServerPidFlag.name(), "--server-pid");
    }

    #[test]
    fn pg_socket_path() {
        let spec =
            TargetSpec::parse("postgres://u@localhost:5433/db?host=/run/pg/", |_| None).unwrap();
        assert_eq!(
            socket_path(&spec, "/run/pg/"),
            PathBuf::from("/run/pg/.s.PGSQL.5433")
        );
    }
}
