//! Opening a session's connections: paced and patient, for every workload.
//!
//! Why paced: a storm of thousands of connects at once overflows the server's listen queue
//! (MariaDB's `back_log` is 50 + max_connections / 5 unless set; the kernel caps every queue at
//! `net.core.somaxconn`), and a full queue makes a Unix-socket connect fail at once with EAGAIN
//! (a TCP one is dropped and retried by the kernel seconds later). So at most `WINDOW`
//! connections are in the middle of connecting (connect, handshake, the driver's setup) at any
//! time, far below any default back_log.
//!
//! Why patient: what the server cannot take *now* (listen queue full, MariaDB 1040 "Too many
//! connections", PostgreSQL 53300 "too many clients") may be free a moment later, e.g. when
//! another client's connections close. Those errors are retried with back-off until
//! `--connect-timeout`; the retries are counted into the result. Anything else fails at once.

use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::db::{Conn, DbError, DbResult, ErrorClass, TargetSpec};

use crate::contract::Driver;
use crate::interrupt;
use crate::model::Faults;

/// Connections in the middle of connecting at once, over all client threads of a session.
/// Well below MariaDB's smallest default back_log (80) and PostgreSQL's listen queue (twice
/// max_connections); measured here at about 3,000 connects/s to MariaDB over a Unix socket.
pub const WINDOW: usize = 16;

/// First wait after a refused attempt; doubles up to `BACKOFF_MAX` (plus a jitter per worker,
/// so that workers refused together do not all come back together).
const BACKOFF_MIN: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// Which of the server's or the client's limits refused a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// MariaDB 1040 / PostgreSQL 53300: every connection slot is taken.
    MaxConnections,
    /// The listen queue is full: EAGAIN on a Unix socket (ECONNREFUSED on TCP with
    /// tcp_abort_on_overflow). The admin connection opened before, so the server is there.
    Backlog,
    /// This process has no file descriptor left (EMFILE/ENFILE): not retried, it will not
    /// change while the session holds what it opened.
    OpenFiles,
    /// MariaDB 1461: the server's max_prepared_stmt_count (default 16382) is shared by every
    /// connection; TPC-C prepares 41 statements per connection, so it stops near 400.
    PreparedStatements,
}

impl Limit {
    /// The limit behind a connect error, if it is one. The socket errors are recognized by the
    /// errno in std's io::Error text ("(os error 11)"), which both lean clients and both
    /// general drivers keep in their messages.
    pub fn of(e: &DbError) -> Option<Limit> {
        if e.class == ErrorClass::TooManyConnections {
            return Some(Limit::MaxConnections);
        }
        if e.message.starts_with("ERROR 1461 ") {
            return Some(Limit::PreparedStatements);
        }
        let errno = |n: i32| e.message.contains(&format!("(os error {n})"));
        if errno(libc::EMFILE) || errno(libc::ENFILE) {
            Some(Limit::OpenFiles)
        } else if e.class == ErrorClass::ConnectionLost
            && (errno(libc::EAGAIN) || errno(libc::ECONNREFUSED))
        {
            Some(Limit::Backlog)
        } else {
            None
        }
    }

    fn retried(self) -> bool {
        matches!(self, Limit::MaxConnections | Limit::Backlog)
    }

    /// What to change, for the one-line error when the limit stopped the session.
    pub fn advice(self, target: &TargetSpec, connections: usize) -> String {
        let need = connections + 1;
        let postgres = target.dbms == crate::db::Dbms::Postgres;
        match self {
            Limit::MaxConnections if postgres => format!(
                "PostgreSQL's max_connections is too low for {connections} connections (or other clients hold the rest): set max_connections to at least {} (minus superuser_reserved_connections) in postgresql.conf, or --server-opt max_connections=N, and restart",
                need + 3
            ),
            Limit::MaxConnections => format!(
                "the server's max_connections is too low for {connections} connections (or other clients hold the rest): raise it to at least {need} (--server-opt max_connections={need}, or SET GLOBAL max_connections={need})"
            ),
            Limit::Backlog => format!(
                "the server's listen queue stayed full until --connect-timeout: raise {} (the kernel caps it at net.core.somaxconn = {}), or give it more time with --connect-timeout",
                if postgres { "max_connections (PostgreSQL's queue is twice it)".to_string() } else { format!("back_log (--server-opt back_log={connections})") },
                somaxconn().map_or("?".to_string(), |v| v.to_string())
            ),
            Limit::PreparedStatements => format!(
                "the server's max_prepared_stmt_count is shared by all connections and too low for {connections} connections of this workload: raise it (--server-opt max_prepared_stmt_count=N, or SET GLOBAL max_prepared_stmt_count=N) to at least {connections} x the statements one connection prepares"
            ),
            Limit::OpenFiles => format!(
                "this process has no file descriptor left (ulimit -n: {}): raise the limit to at least {} (ulimit -n N, or LimitNOFILE= for a service)",
                fd_limit().0,
                connections + 100
            ),
        }
    }
}

/// The kernel's cap on every listen queue (`net.core.somaxconn`), when readable.
pub fn somaxconn() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// This process's open-files limit (soft, hard), after raising the soft one to the hard one
/// (which the first connection does; done here too, so that a check before connecting sees it).
pub fn fd_limit() -> (u64, u64) {
    crate::db::raise_fd_limit();
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit with a valid resource and a pointer to a local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return (u64::MAX, u64::MAX);
    }
    (lim.rlim_cur, lim.rlim_max)
}

/// Descriptors a session of `connections` needs besides its sockets: the process's files,
/// epoll, timers, the admin connection, result files.
pub const FD_HEADROOM: u64 = 64;

/// Open one worker's connection and run its driver's setup, inside the session's window,
/// retrying what a server refuses for now for up to `--connect-timeout` from this
/// connection's first attempt (waiting for a place in the window does not count: 10,000
/// TPC-C terminals, each preparing its statements, take longer to open than any one of
/// them). `retries` counts the attempts that were refused and retried.
pub async fn open<D: Driver>(
    w: usize,
    target: &TargetSpec,
    driver: &mut D,
    faults: &Faults,
    window: &Semaphore,
    retries: &mut u64,
) -> DbResult<Conn> {
    let mut backoff = BACKOFF_MIN;
    // Set at the first attempt.
    let mut deadline: Option<Instant> = None;
    loop {
        let attempt = {
            // The semaphore is never closed.
            let _permit = window.acquire().await.expect("connect window");
            let end = *deadline.get_or_insert_with(|| Instant::now() + faults.connect_timeout);
            let left = end.saturating_duration_since(Instant::now());
            let one = async {
                let mut c = faults.timed(Conn::connect(target)).await?;
                faults.timed(driver.setup(&mut c)).await?;
                Ok(c)
            };
            match tokio::time::timeout(left.max(Duration::from_millis(1)), one).await {
                Ok(r) => r,
                Err(_) => Err(DbError::new(
                    ErrorClass::QueryTimeout,
                    format!(
                        "no answer from the server within --connect-timeout ({})",
                        humantime::format_duration(faults.connect_timeout)
                    ),
                )),
            }
        };
        let e = match attempt {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        let retry = Limit::of(&e).is_some_and(Limit::retried);
        // Jitter: 0..25 % of the back-off, spread by worker index.
        let wait = backoff + backoff * (w % 8) as u32 / 32;
        let end = deadline.unwrap_or_else(Instant::now);
        if !retry || interrupt::signal().is_some() || Instant::now() + wait >= end {
            return Err(e);
        }
        *retries += 1;
        if !super::sleep_until(Instant::now() + wait).await {
            return Err(e);
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// `--connect per-transaction`: a new connection for one operation, with the driver's setup
/// on it, each bounded by `--query-timeout`. A connection whose setup failed is closed.
pub async fn open_for_op<D: Driver>(
    target: &TargetSpec,
    driver: &mut D,
    faults: &Faults,
) -> DbResult<Conn> {
    let mut c = faults.timed(Conn::connect(target)).await?;
    if let Err(e) = faults.timed(driver.setup(&mut c)).await {
        let _ = c.close().await;
        return Err(e);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(class: ErrorClass, m: &str) -> DbError {
        DbError::new(class, m)
    }

    #[test]
    fn limits_from_errors() {
        let eagain = e(
            ErrorClass::ConnectionLost,
            "cannot connect to socket /s: Resource temporarily unavailable (os error 11)",
        );
        assert_eq!(Limit::of(&eagain), Some(Limit::Backlog));
        assert_eq!(
            Limit::of(&e(
                ErrorClass::TooManyConnections,
                "ERROR 1040 (08004): Too many connections"
            )),
            Some(Limit::MaxConnections)
        );
        assert_eq!(
            Limit::of(&e(
                ErrorClass::ConnectionLost,
                "cannot connect: Too many open files (os error 24)"
            )),
            Some(Limit::OpenFiles)
        );
        assert!(!Limit::OpenFiles.retried());
        assert_eq!(
            Limit::of(&e(
                ErrorClass::Other,
                "ERROR 1461 (42000): Can't create more than max_prepared_stmt_count statements (current value: 16382)"
            )),
            Some(Limit::PreparedStatements)
        );
        assert_eq!(
            Limit::of(&e(ErrorClass::AccessDenied, "ERROR 1045: denied")),
            None
        );
        // "os error 110" is not "os error 11".
        assert_eq!(
            Limit::of(&e(ErrorClass::ConnectionLost, "timed out (os error 110)")),
            None
        );
    }

    #[test]
    fn advice_names_the_setting() {
        let my = TargetSpec::parse("mysql://root@localhost/db?socket=/s", |_| None).unwrap();
        let pg = TargetSpec::parse("postgres://postgres@localhost/db", |_| None).unwrap();
        assert!(Limit::MaxConnections
            .advice(&my, 100)
            .contains("max_connections=101"));
        assert!(Limit::MaxConnections
            .advice(&pg, 100)
            .contains("postgresql.conf"));
        assert!(Limit::Backlog.advice(&my, 100).contains("back_log"));
        assert!(Limit::Backlog.advice(&my, 100).contains("somaxconn"));
        assert!(Limit::OpenFiles.advice(&my, 100).contains("ulimit -n"));
    }

    #[test]
    fn retries_until_the_deadline_then_gives_the_error() {
        // A socket path nobody listens on: ECONNREFUSED, which counts as a full queue.
        let dir = std::env::temp_dir().join(format!("eb-connect-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("s.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        drop(l); // the file stays, the listener is gone
        let target = TargetSpec::parse(
            &format!("mysql://root@localhost/db?socket={}", path.display()),
            |_| None,
        )
        .unwrap();
        struct D;
        impl Driver for D {
            async fn setup(&mut self, _: &mut Conn) -> DbResult<()> {
                Ok(())
            }
            async fn step(&mut self, _: &mut Conn) -> DbResult<crate::contract::Step> {
                Ok(crate::contract::Step::default())
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sem = Semaphore::new(WINDOW);
        let mut retries = 0;
        let t = Instant::now();
        let r = rt.block_on(open(
            0,
            &target,
            &mut D,
            &Faults {
                connect_timeout: Duration::from_millis(300),
                ..Faults::default()
            },
            &sem,
            &mut retries,
        ));
        let err = r.err().expect("nobody listens");
        assert_eq!(Limit::of(&err), Some(Limit::Backlog), "{}", err.message);
        assert!(retries >= 3, "{retries}");
        assert!(t.elapsed() < Duration::from_secs(2));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
