//! The socket of both lean clients (`mysqlwire`, `pgwire`): a non-blocking Unix or TCP stream
//! registered with the loop's epoll for readability only, or a blocking one on the loop's
//! io_uring (`ring::open`: the ring waits for it, not the thread; the goodbye written straight
//! to it never waits, see `goodbye`).
//!
//! Why readability only: tokio's socket types also ask for writability, so each time the
//! server read a query, freeing its bytes from our send buffer, the kernel ran our epoll
//! callback in the server's thread and could wake the loop for nothing (4 % of the events a
//! loop got were writable-only; BENCHMARKS.md, 2026-11-25). Writes go straight to the socket;
//! only a write that finds the send buffer full waits for writability, on a duplicate
//! descriptor registered for that wait alone.

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

pub(crate) enum Sock {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl AsRawFd for Sock {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Sock::Unix(s) => s.as_raw_fd(),
            Sock::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl AsFd for Sock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Sock::Unix(s) => s.as_fd(),
            Sock::Tcp(s) => s.as_fd(),
        }
    }
}

impl Sock {
    fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Sock::Unix(s) => Read::read(&mut &*s, buf),
            Sock::Tcp(s) => Read::read(&mut &*s, buf),
        }
    }

    /// The pid of the process at the other end of a Unix socket (SO_PEERCRED: the process
    /// that called listen(), fixed when we connected). None over TCP, and when the peer is in
    /// a pid namespace we cannot see (the kernel then reports pid 0).
    pub(crate) fn peer_pid(&self) -> Option<u32> {
        let Sock::Unix(s) = self else { return None };
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` and `len` are valid for writes of the sizes given; the descriptor is
        // open for as long as `s` is borrowed.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        (rc == 0 && cred.pid > 0).then_some(cred.pid as u32)
    }

    /// One write (`write_all_epoll`'s, on a non-blocking socket).
    fn write(&self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sock::Unix(s) => Write::write(&mut &*s, buf),
            Sock::Tcp(s) => Write::write(&mut &*s, buf),
        }
    }
}

/// The error of a failed connect to `what` ("socket /path" or "host:port"), with what to
/// check: a full listen queue (EAGAIN: the server is there but cannot take more connects at
/// once) and a process out of descriptors are not "is the server running?".
pub(crate) fn connect_error(what: &str, e: &std::io::Error) -> super::DbError {
    let hint = match e.raw_os_error() {
        Some(libc::EAGAIN) => {
            " (the server's listen queue is full: too many connects at once for its back_log / net.core.somaxconn)"
        }
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            " (this process has no file descriptor left: raise ulimit -n)"
        }
        _ => " (is the server running, and are host, port or socket right?)",
    };
    super::DbError::new(
        super::ErrorClass::ConnectionLost,
        format!("cannot connect to {what}: {e}{hint}"),
    )
}

/// Whether a general driver's connect error is a full listen queue or a process out of
/// descriptors (by the errno in std's io::Error text): then "is the server running?" misleads.
pub(crate) fn busy_or_out_of_fds(message: &str) -> bool {
    [libc::EAGAIN, libc::EMFILE, libc::ENFILE]
        .iter()
        .any(|n| message.contains(&format!("(os error {n})")))
}

/// A lean client's connection: on the loop's io_uring when its thread has one (`ring`),
/// else registered with the loop's epoll.
pub(crate) enum Stream {
    Epoll(AsyncFd<Sock>),
    Ring {
        sock: Sock,
        slot: super::ring::SlotKey,
    },
}

impl Stream {
    pub(crate) fn get_ref(&self) -> &Sock {
        match self {
            Stream::Epoll(a) => a.get_ref(),
            Stream::Ring { sock, .. } => sock,
        }
    }

    /// What the server's last reply said: whether the session is inside a transaction (it
    /// may hold locks). The batched I/O path holds no reply of a loop while one is.
    pub(crate) fn in_transaction(&self, on: bool) {
        if let Stream::Ring { slot, .. } = self {
            super::ring::in_transaction(*slot, on);
        }
    }

    /// One end of a socket pair, as a connection of this thread's loop (the ring's tests).
    #[cfg(test)]
    pub(crate) fn for_test(s: std::os::unix::net::UnixStream) -> std::io::Result<Stream> {
        register(Sock::Unix(s))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Stream::Ring { slot, .. } = self {
            super::ring::close(*slot);
        }
    }
}

/// A connection's best-effort goodbye (COM_QUIT, Terminate) as it is dropped: one send that
/// never waits (`MSG_DONTWAIT`: a ring socket is blocking, and with the server stopped and
/// the send buffer full a plain write held the loop's thread for good, past
/// `--query-timeout`), and none while a ring send is still out or queued (its bytes would
/// land inside that message).
pub(crate) fn goodbye(stream: &Stream, msg: &[u8]) {
    if let Stream::Ring { slot, .. } = stream {
        if super::ring::sending(*slot) {
            return;
        }
    }
    // SAFETY: `msg` is valid for its length; the descriptor is open while `stream` is.
    unsafe {
        libc::send(
            stream.get_ref().as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
}

/// Connect to a Unix socket and register it.
pub(crate) async fn connect_unix(path: &str) -> std::io::Result<Stream> {
    let s = tokio::net::UnixStream::connect(path).await?;
    register(Sock::Unix(s.into_std()?))
}

/// Connect over TCP (no Nagle delay) and register the socket.
pub(crate) async fn connect_tcp(host: &str, port: u16) -> std::io::Result<Stream> {
    let s = tokio::net::TcpStream::connect((host, port)).await?;
    let _ = s.set_nodelay(true);
    register(Sock::Tcp(s.into_std()?))
}

/// On the thread's ring if it has one; else `into_std` keeps the socket non-blocking, as
/// AsyncFd needs.
fn register(s: Sock) -> std::io::Result<Stream> {
    if super::ring::active() {
        let slot = super::ring::open(s.as_raw_fd())?;
        return Ok(Stream::Ring { sock: s, slot });
    }
    // SAFETY: `Sock` owns its stream, so the descriptor stays open and the same for as long
    // as the AsyncFd that owns the `Sock` exists.
    unsafe { AsyncFd::register_with_interest(s, Interest::READABLE) }
        .map(Stream::Epoll)
        .map_err(std::io::Error::from)
}

/// Write all of `buf`: usually at once; a full send buffer waits for room. On the ring the
/// bytes are queued, and go with the loop's next turn.
pub(crate) async fn write_all(stream: &Stream, buf: &[u8]) -> std::io::Result<()> {
    match stream {
        Stream::Epoll(sock) => write_all_epoll(sock, buf).await,
        Stream::Ring { slot, .. } => super::ring::write(*slot, buf),
    }
}

async fn write_all_epoll(sock: &AsyncFd<Sock>, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match sock.get_ref().write(buf) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    "write returned 0",
                ))
            }
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                wait_writable(sock.get_ref().as_fd()).await?
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Wait until the socket can take more bytes, on a duplicate descriptor registered for
/// writability for this wait alone.
async fn wait_writable(fd: BorrowedFd<'_>) -> std::io::Result<()> {
    let dup = fd.try_clone_to_owned()?;
    // SAFETY: `dup` is a new descriptor owned by the AsyncFd until it is dropped below.
    let w = unsafe { AsyncFd::register_with_interest(dup, Interest::WRITABLE) }
        .map_err(std::io::Error::from)?;
    w.writable().await?.clear_ready();
    Ok(())
}

/// Read what the socket has into `dst` (at least one byte; 0 means the peer closed it),
/// waiting for it if need be. A read that does not fill `dst` drained the socket, so the
/// readiness is cleared: the next read waits for the next (edge-triggered) event instead of
/// first failing with EAGAIN (one `recvfrom` per reply; measured with strace: 1.95 -> 1.0
/// per query).
pub(crate) async fn read_some(stream: &Stream, dst: &mut [u8]) -> std::io::Result<usize> {
    let sock = match stream {
        Stream::Epoll(sock) => sock,
        Stream::Ring { slot, .. } => {
            return std::future::poll_fn(|cx| super::ring::poll_read(*slot, dst, cx)).await
        }
    };
    loop {
        let mut g = sock.readable().await?;
        match g.try_io(|s| s.get_ref().read(dst)) {
            Ok(Ok(k)) => {
                if k < dst.len() {
                    g.clear_ready();
                }
                return Ok(k);
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
            // EAGAIN: `try_io` cleared the readiness; wait for the next event.
            Err(_would_block) => {}
        }
    }
}

/// The read buffer of both lean clients: the unread bytes are `buf[pos..end]`. It starts at
/// one page and doubles up to `GROWN` while reads fill it (a message larger than the buffer
/// grows it to the message's size): thousands of idle connections (TPC-C terminals thinking)
/// then cost 4 KB each, not 64 KB. A point select's reply is about 100 bytes.
pub(crate) struct ReadBuf {
    pub buf: Vec<u8>,
    pub pos: usize,
    pub end: usize,
}

impl ReadBuf {
    const START: usize = 4 * 1024;
    const GROWN: usize = 256 * 1024;

    pub fn new() -> ReadBuf {
        ReadBuf {
            buf: vec![0; Self::START],
            pos: 0,
            end: 0,
        }
    }

    /// Make at least `n` bytes available from `pos`, reading as much as the socket has.
    pub async fn fill(&mut self, sock: &Stream, n: usize) -> std::io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.make_room(n);
        while self.end - self.pos < n {
            match read_some(sock, &mut self.buf[self.end..]).await? {
                0 => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                k => {
                    self.end += k;
                    // The read filled the buffer: this connection gets big replies; read them
                    // in bigger parts (fewer system calls).
                    if self.end == self.buf.len() && self.buf.len() < Self::GROWN {
                        self.buf.resize(self.buf.len() * 2, 0);
                    }
                }
            }
        }
        Ok(())
    }

    /// Make room for `n` bytes from `pos`: the unread bytes move to the front, and the buffer
    /// doubles, or grows to `n`, when too small.
    fn make_room(&mut self, n: usize) {
        if self.buf.len() - self.pos < n {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if self.buf.len() < n {
                let size = n.max(self.buf.len() * 2);
                self.buf.resize(size, 0);
            }
        }
    }
}
