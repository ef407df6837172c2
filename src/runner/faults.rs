//! What a worker does when its server misbehaves: a per-operation timeout (`--query-timeout`)
//! for a server that stops answering, and re-connection with bounded back-off (`--reconnect`)
//! for one that restarts. Both are off by default: a lost connection then ends its worker.
//! The settings (`model::Faults`) are plain data; here: how a worker applies them.

use std::time::{Duration, Instant};

use crate::db::{Conn, DbError, DbResult, ErrorClass, TargetSpec};

use crate::contract::Driver;
use crate::interrupt;
use crate::model::Faults;

/// First wait between attempts; doubles up to `BACKOFF_MAX`.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// A connection attempt to a server that accepts but never answers (stopped) gives up after
/// this long when no --query-timeout is set.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

// The settings are plain data in the model; how a worker applies them is the runner's.
impl Faults {
    /// Run `fut` under the query timeout, if any. A timeout is an error of its own class.
    pub async fn timed<T>(
        &self,
        fut: impl std::future::Future<Output = DbResult<T>>,
    ) -> DbResult<T> {
        match self.query_timeout {
            None => fut.await,
            Some(t) => match tokio::time::timeout(t, fut).await {
                Ok(r) => r,
                Err(_) => Err(timeout_error(t)),
            },
        }
    }

    fn connect_wait(&self) -> Duration {
        self.query_timeout.unwrap_or(CONNECT_WAIT)
    }
}

/// The error a client-side timeout produces (the message says it is ours, not the server's).
pub fn timeout_error(t: Duration) -> DbError {
    DbError::new(
        ErrorClass::QueryTimeout,
        format!(
            "no answer from the server within {} (--query-timeout); connection dropped",
            humantime::format_duration(t)
        ),
    )
}

/// After this error the connection cannot be used again: the server closed it, or the client
/// gave up in the middle of a reply (a timeout; the protocol state is then unknown).
pub fn breaks_connection(e: &DbError) -> bool {
    e.class == ErrorClass::ConnectionLost
        || (e.class == ErrorClass::QueryTimeout && e.message.contains("--query-timeout"))
}

/// How one re-connection went.
pub struct Reconnected {
    pub conn: Conn,
    pub attempts: u64,
}

/// Try to open a new connection and run the driver's setup on it, backing off between
/// attempts, until `deadline` or an interrupt. `None`: gave up (the phase is over); the caller
/// tries again in the next phase.
pub async fn reconnect<D: Driver>(
    target: &TargetSpec,
    driver: &mut D,
    faults: &Faults,
    deadline: Instant,
    failed_attempts: &mut u64,
) -> Option<Reconnected> {
    let mut backoff = BACKOFF_MIN;
    let mut attempts = 0u64;
    loop {
        if interrupt::signal().is_some() || Instant::now() >= deadline {
            return None;
        }
        attempts += 1;
        let wait = faults.connect_wait();
        let opened = match tokio::time::timeout(wait, Conn::connect(target)).await {
            Ok(Ok(mut c)) => match tokio::time::timeout(wait, driver.setup(&mut c)).await {
                Ok(Ok(())) => Some(c),
                _ => None,
            },
            _ => None,
        };
        if let Some(conn) = opened {
            return Some(Reconnected { conn, attempts });
        }
        *failed_attempts += 1;
        let until = (Instant::now() + backoff).min(deadline);
        if !super::sleep_until(until).await {
            return None;
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_errors_break_the_connection() {
        assert!(breaks_connection(&DbError::new(
            ErrorClass::ConnectionLost,
            "gone"
        )));
        assert!(breaks_connection(&timeout_error(Duration::from_secs(1))));
        // A server-side statement timeout leaves the connection usable.
        assert!(!breaks_connection(&DbError::new(
            ErrorClass::QueryTimeout,
            "canceling statement due to statement timeout"
        )));
        assert!(!breaks_connection(&DbError::new(ErrorClass::Deadlock, "x")));
    }

    #[test]
    fn timed_fires() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let f = Faults {
            query_timeout: Some(Duration::from_millis(20)),
            ..Faults::default()
        };
        let r: DbResult<()> = rt.block_on(f.timed(async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(())
        }));
        let e = r.unwrap_err();
        assert_eq!(e.class, ErrorClass::QueryTimeout);
        assert!(breaks_connection(&e));
        let ok: DbResult<u8> = rt.block_on(f.timed(async { Ok(7) }));
        assert_eq!(ok.unwrap(), 7);
    }
}
