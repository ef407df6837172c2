//! What a result says about the client: which driver the connections used and which I/O
//! path its event loops took (a fallback from io_uring is recorded, not silent).

use crate::db::Conn;
use crate::model::ClientInfo;
use crate::report;

/// Which client the connections use: the lean one falls back to the general driver silently,
/// so the result says which one ran.
pub(super) fn client_note(admin: &Conn) -> Option<String> {
    let (dbms, driver) = match admin {
        Conn::Mysql(m) => ("MySQL", m.driver()),
        Conn::Postgres(p) => ("PostgreSQL", p.driver()),
        _ => return None,
    };
    Some(format!(
        "{dbms} client: {driver} (connections use the same client as this admin connection)."
    ))
}

/// The client's driver and I/O path; a fallback from io_uring is also said on stderr.
pub(super) fn client_info(admin: &Conn) -> Option<ClientInfo> {
    let driver = match admin {
        Conn::Mysql(m) => m.driver(),
        Conn::Postgres(p) => p.driver(),
        _ => return None,
    };
    let requested = crate::db::ring::choice().name().to_string();
    let (io, fallback) = match crate::db::ring::path() {
        _ if driver != "wire" => ("epoll", None),
        Ok(true) => ("io_uring", None),
        Ok(false) => ("epoll", None),
        Err(why) => {
            eprintln!("enginebench: the client uses epoll: {why}");
            ("epoll", Some(why))
        }
    };
    Some(ClientInfo {
        driver: driver.to_string(),
        io: io.to_string(),
        requested,
        fallback,
        loops: None,
        batch: Vec::new(),
    })
}

/// The lean client's loops so far by path: a loop whose own ring could not start took epoll
/// (said on stderr as it started); `io` says io_uring only while some loop used it.
pub(super) fn note_loops(c: &mut ClientInfo, p: crate::db::ring::LoopPaths) {
    if c.driver != "wire" || p.io_uring + p.epoll == 0 {
        return;
    }
    c.loops = Some(report::LoopCounts {
        io_uring: p.io_uring,
        epoll: p.epoll,
        auto_epoll: p.auto_epoll,
    });
    if p.io_uring == 0 {
        c.io = "epoll".into();
    }
    if c.fallback.is_none() {
        c.fallback = p.fallback;
    }
}
