//! The batched I/O path of both lean clients: one io_uring per event loop thread.
//!
//! Why: on the epoll path each query costs one `send`, one `recv` and, when the loop has
//! nothing else to do, one sleep in `epoll_wait` and one wake-up (0.94 per query with the client
//! on a CPU of its own; BENCHMARKS.md). Here a query's send is an entry queued in shared memory,
//! and the loop hands them all to the kernel in one `io_uring_enter` when it would otherwise
//! sleep. A socket's receive is armed once (a multishot receive into the loop's provided buffer
//! ring) and posts a completion per arrival of bytes: no entry and no poll set up per reply.
//! When every connection of the loop waits for a reply (a closed loop), that call also sleeps
//! until half of them have their reply (`min_complete`, with `IORING_SETUP_DEFER_TASKRUN` the
//! kernel wakes the loop only then), so the loop wakes once per several replies instead of once
//! per reply.
//!
//! What it must not change: a closed loop of N connections measures, by Little's law, a mean
//! response time of N ÷ throughput whoever holds the replies; while the server stays busy
//! (half the connections still queued at it) the throughput and so the response times stay.
//! A loop where some connection is not waiting for a reply (thinking, paced by `--rate`, idle
//! between phases) never waits for more than one completion: it sleeps in tokio's `epoll_wait`,
//! woken through an eventfd on the first completion, as on the epoll path.
//!
//! The ring lives in a thread-local of the loop thread that installed it (`install`), is
//! driven from tokio's `on_thread_park` hook (`park`) and from a task woken by its eventfd
//! (`drive`). A socket gets the ring only on such a thread (`Stream` in `sock.rs`); any other
//! thread (loads, checks, set-up) keeps the epoll path. Buffers the kernel writes to or reads
//! from belong to the loop (send buffers to the slot table, receive buffers to the buffer ring),
//! never to a future: received bytes are copied to their slot and wait there for the next read,
//! and a dropped socket's slot is freed only when the kernel has returned every entry of it.
//!
//! Raw system calls (no crate): `sys.rs` holds the structures of `<linux/io_uring.h>`, `bufs.rs`
//! the provided buffer ring, `stats.rs` the counts, `runtime.rs` the loops' runtime; the
//! tests are in `tests.rs`.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Waker;
use std::time::Duration;

mod bufs;
mod runtime;
mod stats;
mod sys;

use bufs::BufRing;
pub use runtime::*;
pub use stats::*;
use sys::*;

/// One socket's state on the ring. The send buffer is the kernel's while a send is out.
struct Slot {
    fd: RawFd,
    /// Received bytes not yet read: `rbuf[rpos..]`.
    rbuf: Vec<u8>,
    rpos: usize,
    /// The multishot receive is armed.
    recv_out: bool,
    /// The reader found nothing and waits (counted in `Loop::recv_waiting`).
    reader_waits: bool,
    /// The server said the session is inside a transaction (counted in `Loop::in_txn`).
    in_txn: bool,
    /// End of stream (0) or an error, for the next read.
    recv_end: Option<io::Result<usize>>,
    /// Bytes being sent (`sbuf[soff..]`), and those written meanwhile, sent next.
    sbuf: Vec<u8>,
    soff: usize,
    send_out: bool,
    squeue: Vec<u8>,
    send_err: Option<io::Error>,
    waker: Option<Waker>,
    /// The socket was dropped: free the slot when the kernel has returned its entries.
    closed: bool,
    cancel_out: bool,
    in_use: bool,
}

impl Slot {
    fn idle(&self) -> bool {
        !self.recv_out && !self.send_out && !self.cancel_out
    }
}

/// How a loop may wait: `batch` lets a loop whose connections all wait for replies sleep
/// until half of them have one (closed loops); otherwise it waits for the first.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub batch: bool,
}

struct Loop {
    /// This loop's number (`SlotKey::gen`): unique in the process.
    gen: u64,
    ring: Uring,
    bufs: BufRing,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Sockets open on this loop, and how many of their readers wait for a reply.
    open: usize,
    recv_waiting: usize,
    /// Sockets whose session is inside a transaction: while any is, no reply is held back
    /// for a batch (it could hold the locks the others wait for).
    in_txn: usize,
    policy: Policy,
    /// The completions of a turn, taken before they are handled (kept for its capacity).
    done: Vec<(u64, i32, u32)>,
    /// The eventfd the kernel signals on completions, for tokio's epoll to wake the loop.
    efd: RawFd,
    /// Completions the kernel said it dropped, as last seen.
    dropped_seen: u32,
    /// Rounds `settle` runs before it hands the rest to the next turn (`SETTLE_ROUNDS`; a
    /// test lowers it to reach that path).
    settle_rounds: u32,
    stats: RingStats,
    /// What the batched waits did since the loop last added it to `TOTALS`, and when.
    batch: BatchTotals,
    published: std::time::Instant,
}

/// Where a socket is on a loop: its slot, and the loop's number. A connection kept past its
/// loop and used under a later loop of the same thread finds another number there and gets
/// an error; a bare index reached the later loop's slot (a panic, or a cancel, receive or
/// send on another connection's socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotKey {
    i: usize,
    gen: u64,
}

/// The numbers given to loops (`Loop::gen`).
static LOOP_GEN: AtomicU64 = AtomicU64::new(1);

/// A `settle` runs at most this many calls before it hands the turn back to tokio.
const SETTLE_ROUNDS: u32 = 1024;

thread_local! {
    static LOOP: RefCell<Option<Loop>> = const { RefCell::new(None) };
}

/// Receive buffers of a loop: at most `MAX_BUFS` of `BUF_SIZE` bytes (8 MiB, whatever the
/// connections; a big result takes a buffer per 16 KiB).
const MAX_BUFS: u16 = 512;
const BUF_SIZE: usize = 16 * 1024;

/// The batch wait's upper bound: past it the loop takes what has come (a slow query, a lock
/// wait or the phase's end is not held up longer than this).
const BATCH_TIMEOUT: Duration = Duration::from_millis(2);

/// Whether this process can use the ring, and if not why: probed once.
pub fn probe() -> Result<(), String> {
    static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            // The probe's thread is not a loop's: a ring for it alone, dropped at once.
            std::thread::spawn(probe_now)
                .join()
                .unwrap_or_else(|_| Err("the probe panicked".into()))
        })
        .clone()
}

/// What a loop does with its ring, once, on this thread: set it up with its buffer ring,
/// register an eventfd, and enter it. A sandbox may allow the setup and deny the rest (a
/// seccomp filter on `io_uring_enter`): such a ring passed a probe that only set it up, and
/// every loop's turn then failed.
fn probe_now() -> Result<(), String> {
    let mut ring = Uring::new(8).map_err(|e| describe(&e))?;
    BufRing::new(&ring, 16, 64)
        .map(drop)
        .map_err(|e| format!("io_uring provided buffers (Linux 5.19 or later): {e}"))?;
    // SAFETY: a new eventfd, closed below.
    let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if efd < 0 {
        return Err(format!("eventfd: {}", io::Error::last_os_error()));
    }
    let registered = ring.register_eventfd(efd);
    // SAFETY: `efd` was created above and is owned here.
    unsafe { libc::close(efd) };
    registered.map_err(|e| format!("io_uring_register of an eventfd: {e}"))?;
    ring.enter(0, None)
        .map_err(|e| format!("io_uring_enter: {e}"))
}

fn describe(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "io_uring_setup: not in this kernel".into(),
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "io_uring_setup: not permitted (a sandbox, seccomp or kernel.io_uring_disabled forbids it)".into()
        }
        Some(libc::EINVAL) => "io_uring_setup: flags refused (DEFER_TASKRUN needs Linux 6.1 or later)".into(),
        _ => format!("io_uring_setup: {e}"),
    }
}

/// Make this thread a ring loop: sockets connected on it from now on use the ring. Returns
/// the eventfd to watch (tokio wakes `drive` when it is readable), or why not.
pub fn install(entries: u32, policy: Policy) -> io::Result<RawFd> {
    let ring = Uring::new(entries.next_power_of_two().clamp(64, 16384))?;
    let nbufs = entries.next_power_of_two().clamp(32, MAX_BUFS as u32) as u16;
    let bufs = BufRing::new(&ring, nbufs, BUF_SIZE)?;
    // SAFETY: a new eventfd, owned by the loop until `uninstall`.
    let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if efd < 0 {
        return Err(io::Error::last_os_error());
    }
    if let Err(e) = ring.register_eventfd(efd) {
        // SAFETY: `efd` was created above and is owned here.
        unsafe { libc::close(efd) };
        return Err(io::Error::new(
            e.kind(),
            format!("registering its eventfd: {e}"),
        ));
    }
    LOOP.with(|l| {
        *l.borrow_mut() = Some(Loop {
            gen: LOOP_GEN.fetch_add(1, Ordering::Relaxed),
            ring,
            bufs,
            slots: Vec::new(),
            free: Vec::new(),
            open: 0,
            recv_waiting: 0,
            in_txn: 0,
            policy,
            done: Vec::new(),
            efd,
            dropped_seen: 0,
            settle_rounds: SETTLE_ROUNDS,
            stats: RingStats::default(),
            batch: BatchTotals::default(),
            published: std::time::Instant::now(),
        })
    });
    Ok(efd)
}

/// Remove this thread's ring (the loop ends); returns its counts.
pub fn uninstall() -> Option<RingStats> {
    let mut l = LOOP.with(|l| l.borrow_mut().take())?;
    // Sockets still open (a connection kept past its loop): cancel their entries, and wait
    // until the kernel has returned every one before the buffers go. Marked closed, so that
    // the cancelled receives' completions do not arm them again (they did: the loop then
    // waited its 0.5 s below and leaked the ring).
    for i in 0..l.slots.len() {
        let s = &mut l.slots[i];
        if !s.in_use {
            continue;
        }
        s.closed = true;
        if (s.recv_out || s.send_out) && !s.cancel_out {
            // Refused only when the kernel takes nothing: the wait below then ends the loop
            // with the entries counted as leaked.
            let _ = l.push_cancel(i);
        }
    }
    let mut sink = Vec::new();
    for _ in 0..50 {
        if l.ring.outstanding == 0 && l.ring.unsubmitted == 0 {
            break;
        }
        let want = l.ring.outstanding;
        let _ = l.ring.enter(want, Some(Duration::from_millis(10)));
        l.take_completions(&mut sink);
    }
    publish(&mut l.batch);
    // SAFETY: the eventfd is owned by the loop.
    unsafe { libc::close(l.efd) };
    let stats = RingStats {
        leaked_entries: l.ring.outstanding,
        ..l.stats
    };
    if l.ring.outstanding > 0 {
        // The kernel may still write into the slots' buffers: they are left to it.
        std::mem::forget(l);
    }
    Some(stats)
}

/// Whether this thread is a ring loop.
pub fn active() -> bool {
    LOOP.with(|l| l.borrow().is_some())
}

/// Take a slot for socket `fd` (made blocking: the ring waits for it, not us).
pub(crate) fn open(fd: RawFd) -> io::Result<SlotKey> {
    // SAFETY: `fd` is an open socket owned by the caller's `Stream`.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    with_loop(|l| {
        let slot = Slot {
            fd,
            rbuf: Vec::new(),
            rpos: 0,
            recv_out: false,
            reader_waits: false,
            in_txn: false,
            recv_end: None,
            sbuf: Vec::new(),
            soff: 0,
            send_out: false,
            squeue: Vec::new(),
            send_err: None,
            waker: None,
            closed: false,
            cancel_out: false,
            in_use: true,
        };
        let i = match l.free.pop() {
            Some(i) => {
                l.slots[i] = slot;
                i
            }
            None => {
                l.slots.push(slot);
                l.slots.len() - 1
            }
        };
        l.open += 1;
        // Armed from the start: a server may speak first (MariaDB's greeting).
        if let Err(e) = l.push_recv(i) {
            l.slots[i].closed = true;
            l.open -= 1;
            l.free_if_done(i);
            return Err(e);
        }
        Ok(SlotKey { i, gen: l.gen })
    })
    .unwrap_or_else(|| Err(io::Error::other("no ring on this thread")))
}

fn with_loop<T>(f: impl FnOnce(&mut Loop) -> T) -> Option<T> {
    LOOP.with(|l| l.borrow_mut().as_mut().map(f))
}

/// Run `f` on the slot of `k` (its index), if this thread's loop is the one the socket was
/// opened on and the slot is still the socket's; else why not.
fn with_slot<T>(k: SlotKey, f: impl FnOnce(&mut Loop, usize) -> T) -> io::Result<T> {
    LOOP.with(|l| match l.borrow_mut().as_mut() {
        None => Err(io::Error::other("no ring on this thread")),
        Some(l) if l.gen != k.gen || l.slots.get(k.i).is_none_or(|s| !s.in_use || s.closed) => {
            Err(io::Error::other(
                "the connection belongs to a client loop that has ended (used under another)",
            ))
        }
        Some(l) => Ok(f(l, k.i)),
    })
}

/// The socket of `k` is dropped: cancel its receive; the slot is freed when its entries
/// are back. A socket of an ended loop has nothing here (that loop cancelled its entries).
pub(crate) fn close(k: SlotKey) {
    let _ = with_slot(k, |l, i| {
        let s = &mut l.slots[i];
        s.closed = true;
        s.waker = None;
        if s.reader_waits {
            s.reader_waits = false;
            l.recv_waiting -= 1;
        }
        if s.in_txn {
            s.in_txn = false;
            l.in_txn -= 1;
        }
        if (s.recv_out || s.send_out) && !s.cancel_out {
            // Refused only when the kernel takes nothing: the loop's end cancels it again.
            let _ = l.push_cancel(i);
            // Not left for the next park: the socket closes now.
            let _ = l.ring.enter(0, None);
        }
        l.open -= 1;
        l.free_if_done(i);
    });
}

/// Whether slot `i` has bytes not yet handed to the socket (a send out or queued): a goodbye
/// written straight to the socket now would land inside them.
pub(crate) fn sending(k: SlotKey) -> bool {
    with_slot(k, |l, i| {
        let s = &l.slots[i];
        s.send_out || !s.squeue.is_empty()
    })
    .unwrap_or(false)
}

/// The server of `k` says whether its session is inside a transaction, or its client is
/// about to open one (a BEGIN written with the next statement).
pub(crate) fn in_transaction(k: SlotKey, on: bool) {
    let _ = with_slot(k, |l, i| {
        let s = &mut l.slots[i];
        if s.in_txn != on && !s.closed {
            s.in_txn = on;
            if on {
                l.in_txn += 1;
            } else {
                l.in_txn -= 1;
            }
        }
    });
}

impl Loop {
    fn free_if_done(&mut self, i: usize) {
        let s = &mut self.slots[i];
        if s.closed && s.in_use && s.idle() {
            s.in_use = false;
            s.rbuf = Vec::new();
            s.rpos = 0;
            s.sbuf = Vec::new();
            s.squeue = Vec::new();
            self.free.push(i);
        }
    }

    /// Cancel slot `i`'s entries (its socket goes): its receive, and a send still out (with
    /// a peer that reads nothing it would never end, and the slot never be freed); the slot
    /// waits for their completions and the cancel's.
    fn push_cancel(&mut self, i: usize) -> io::Result<()> {
        let fd = self.slots[i].fd;
        self.ring.push(Sqe {
            opcode: OP_ASYNC_CANCEL,
            fd,
            op_flags: ASYNC_CANCEL_ALL | ASYNC_CANCEL_FD,
            user_data: (i as u64) << 8 | TAG_CANCEL,
            ..Sqe::default()
        })?;
        self.slots[i].cancel_out = true;
        Ok(())
    }

    /// Arm slot `i`'s multishot receive: from now on every arrival of bytes is a completion
    /// naming the ring buffer that holds them, without a new entry per reply.
    fn push_recv(&mut self, i: usize) -> io::Result<()> {
        let s = &mut self.slots[i];
        let sqe = Sqe {
            opcode: OP_RECV,
            flags: SQE_BUFFER_SELECT,
            ioprio: RECV_MULTISHOT | RECVSEND_POLL_FIRST,
            fd: s.fd,
            buf_index: BGID,
            user_data: (i as u64) << 8 | TAG_RECV,
            ..Sqe::default()
        };
        self.ring.push(sqe)?;
        self.slots[i].recv_out = true;
        Ok(())
    }

    /// Send `sbuf[soff..]`. `MSG_WAITALL`: a send longer than the socket's buffer takes room
    /// as the peer frees it, inside the kernel, without a completion per piece. Each piece's
    /// rest was queued by the loop after the completion of the last, and so only after the
    /// batched wait that completion came in: up to `BATCH_TIMEOUT` per piece while other
    /// connections waited for replies.
    fn push_send(&mut self, i: usize) -> io::Result<()> {
        let s = &mut self.slots[i];
        let sqe = Sqe {
            opcode: OP_SEND,
            fd: s.fd,
            addr: s.sbuf[s.soff..].as_ptr() as u64,
            len: (s.sbuf.len() - s.soff) as u32,
            op_flags: (libc::MSG_NOSIGNAL | libc::MSG_WAITALL) as u32,
            user_data: (i as u64) << 8 | TAG_SEND,
            ..Sqe::default()
        };
        self.ring.push(sqe)?;
        self.slots[i].send_out = true;
        Ok(())
    }

    /// The ring failed (`io_uring_enter` refused, or the kernel dropped completions): every
    /// open connection of the loop gets the error at its next read, and its waiting reader
    /// is woken for it. Said only on stderr, the loop's readers slept for good.
    fn fail_all(&mut self, e: &io::Error, wake: &mut Vec<Waker>) {
        for s in self.slots.iter_mut().filter(|s| s.in_use && !s.closed) {
            if s.recv_end.is_none() {
                s.recv_end = Some(Err(io::Error::new(e.kind(), format!("io_uring: {e}"))));
            }
            if s.reader_waits {
                s.reader_waits = false;
                self.recv_waiting -= 1;
            }
            if let Some(w) = s.waker.take() {
                wake.push(w);
            }
        }
    }

    /// Handle one completion. The socket's reader is woken only when it has something to
    /// read: bytes, the end, an error. A send's success wakes nobody (`write` returned long
    /// ago; waking the reader there polled every query's future once more for nothing).
    fn complete(&mut self, user_data: u64, res: i32, flags: u32, wake: &mut Vec<Waker>) {
        let i = (user_data >> 8) as usize;
        let s = &mut self.slots[i];
        let news = match user_data & 0xff {
            TAG_RECV => {
                if flags & CQE_F_MORE == 0 {
                    s.recv_out = false;
                }
                if flags & CQE_F_BUFFER != 0 {
                    let bid = (flags >> CQE_BUFFER_SHIFT) as u16;
                    if res > 0 && !s.closed {
                        self.stats.receives += 1;
                        if s.rpos == s.rbuf.len() {
                            s.rbuf.clear();
                            s.rpos = 0;
                        }
                        s.rbuf.extend_from_slice(self.bufs.data(bid, res as usize));
                    }
                    self.bufs.give(bid);
                    self.bufs.publish();
                }
                let news = match res {
                    1.. => true,
                    0 => {
                        s.recv_end = Some(Ok(0));
                        true
                    }
                    _ if res == -libc::ENOBUFS => {
                        self.stats.rearms += 1;
                        false
                    }
                    _ if res == -libc::ECANCELED || res == -libc::EINTR => false,
                    _ => {
                        s.recv_end = Some(Err(io::Error::from_raw_os_error(-res)));
                        true
                    }
                };
                if news && s.reader_waits {
                    s.reader_waits = false;
                    self.recv_waiting -= 1;
                }
                // Ended without the socket's end (out of buffers, or the kernel stopped it):
                // armed again, for the next turn.
                if !s.recv_out && !s.closed && s.recv_end.is_none() {
                    if let Err(e) = self.push_recv(i) {
                        let s = &mut self.slots[i];
                        s.recv_end = Some(Err(e));
                        if s.reader_waits {
                            s.reader_waits = false;
                            self.recv_waiting -= 1;
                        }
                        return self.completed(i, true, wake);
                    }
                }
                news
            }
            TAG_SEND => {
                self.stats.sends += 1;
                s.send_out = false;
                // Interrupted (a signal) or no room after all: nothing was lost, the rest
                // goes again (reported as a lost connection, a signal ended a session).
                let retry = res == -libc::EINTR || res == -libc::EAGAIN;
                if res < 0 && !retry {
                    s.send_err = Some(io::Error::from_raw_os_error(-res));
                } else if res > 0 {
                    s.soff += res as usize;
                }
                let mut failed = s.send_err.is_some();
                if !failed && !s.closed {
                    let next = if s.soff < s.sbuf.len() {
                        Some(self.push_send(i))
                    } else if !self.slots[i].squeue.is_empty() {
                        let s = &mut self.slots[i];
                        std::mem::swap(&mut s.sbuf, &mut s.squeue);
                        s.squeue.clear();
                        s.soff = 0;
                        Some(self.push_send(i))
                    } else {
                        None
                    };
                    if let Some(Err(e)) = next {
                        self.slots[i].send_err = Some(e);
                        failed = true;
                    }
                }
                failed
            }
            _ => {
                self.slots[i].cancel_out = false;
                false
            }
        };
        self.completed(i, news, wake)
    }

    /// The end of `complete`: count it, wake the reader when it has news, free a closed slot
    /// whose entries are all back.
    fn completed(&mut self, i: usize, news: bool, wake: &mut Vec<Waker>) {
        self.stats.completions += 1;
        if news {
            if let Some(w) = self.slots[i].waker.take() {
                wake.push(w);
            }
        }
        self.free_if_done(i);
    }

    /// Submit, wait as the policy allows, and take every completion.
    fn turn(&mut self, wake: &mut Vec<Waker>) {
        // A reply held while its session is in a transaction keeps that session's locks
        // held longer, and the others' waits for them: TPC-C on 2 warehouses fell to a fifth
        // of its rate. Such a loop waits for the first reply, as on the epoll path.
        let everyone_waits = self.open > 0 && self.recv_waiting == self.open && self.in_txn == 0;
        let (k, t) = if self.policy.batch && everyone_waits {
            if self.recv_waiting > 1 {
                self.stats.batched_waits += 1;
            }
            // The sends handed over in this call complete during it: counted in. No more
            // replies than half the buffers: the rest would end their receives (ENOBUFS).
            let replies = self
                .recv_waiting
                .div_ceil(2)
                .min(self.bufs.mask as usize / 2 + 1);
            let k = replies as u32 + self.ring.unsubmitted_sends;
            (k, Some(BATCH_TIMEOUT))
        } else {
            (0, None)
        };
        // Nothing to hand over and no wait: `settle` takes what the kernel holds, if anything.
        let receives = self.stats.receives;
        let mut held = None;
        if self.ring.unsubmitted > 0 || k > 0 {
            self.stats.enters += 1;
            if k > 0 {
                self.ring.eventfd_signals(false);
            }
            let start = (k > 0).then(std::time::Instant::now);
            if let Err(e) = self.ring.enter(k, t) {
                self.entry_failed(e, wake);
            }
            if let Some(start) = start {
                let waited = start.elapsed();
                if self.recv_waiting > 1 {
                    self.batch.batched_waits += 1;
                    if waited >= BATCH_TIMEOUT {
                        self.batch.waits_to_timeout += 1;
                    }
                    held = Some(waited);
                }
            }
        }
        self.settle(k > 0, wake);
        self.batch.note(self.stats.receives - receives, held);
        if self.published.elapsed() >= PUBLISH_EVERY {
            publish(&mut self.batch);
            self.published = std::time::Instant::now();
        }
    }

    /// `io_uring_enter` failed: the ring delivers nothing more, so every connection of the
    /// loop gets the error (and the run counts them lost) instead of waiting for good.
    fn entry_failed(&mut self, e: io::Error, wake: &mut Vec<Waker>) {
        self.stats.enter_errors += 1;
        eprintln!("enginebench: io_uring_enter: {e}");
        self.fail_all(
            &io::Error::new(e.kind(), format!("io_uring_enter: {e}")),
            wake,
        );
    }

    /// After a turn's wait: let the eventfd signal again, take the completions, and run every
    /// one the kernel still holds deferred. tokio may sleep in epoll_wait right after, and the
    /// eventfd cannot be trusted to wake it for those: it fires only when the kernel's list
    /// was empty, and not at all while muted (a reply that came between the batched wait's
    /// end and the unmuting left a loop asleep for good; CI hung on it). One call runs at most
    /// about 20 of them (with 32 connections a loop slept for good too): `IORING_SQ_TASKRUN`
    /// stays set while any is left. Once a task is to be woken, tokio will not sleep: it runs
    /// the task and parks again, and that turn's call runs what is left (one call, not two).
    fn settle(&mut self, muted: bool, wake: &mut Vec<Waker>) {
        if muted {
            self.ring.eventfd_signals(true);
        }
        self.take_completions(wake);
        let mut rounds = 0;
        // Entries queued by the completions themselves (the rest of a long send, a receive
        // armed again) go now too: nobody may be woken to queue more and get them submitted.
        while wake.is_empty() && (self.ring.work_pending() || self.ring.unsubmitted > 0) {
            if rounds == self.settle_rounds {
                // Not given up silently: tokio finds the eventfd readable, runs `drive` and
                // parks again, and that turn goes on with what is left.
                self.stats.settle_cut += 1;
                let one = 1u64;
                // SAFETY: writing the 8-byte counter increment to the loop's own eventfd.
                unsafe { libc::write(self.efd, (&one as *const u64).cast(), 8) };
                break;
            }
            self.stats.enters += 1;
            if let Err(e) = self.ring.enter(0, None) {
                self.entry_failed(e, wake);
                break;
            }
            self.take_completions(wake);
            rounds += 1;
        }
        let dropped = self.ring.dropped();
        if dropped > self.dropped_seen {
            self.dropped_seen = dropped;
            let e = io::Error::other(format!(
                "the kernel dropped {dropped} completions (its queue was full)"
            ));
            self.fail_all(&e, wake);
        }
    }

    fn take_completions(&mut self, wake: &mut Vec<Waker>) {
        let mut done = std::mem::take(&mut self.done);
        self.ring.reap(|u, r, f| done.push((u, r, f)));
        for &(u, r, f) in &done {
            self.complete(u, r, f, wake);
        }
        done.clear();
        self.done = done;
    }
}

/// tokio's `on_thread_park` hook of a ring loop: hand the queued entries to the kernel and,
/// when every connection waits for a reply, sleep until half of them have it.
pub fn park() {
    let mut wake = Vec::new();
    with_loop(|l| l.turn(&mut wake));
    for w in wake {
        w.wake();
    }
}

/// The eventfd was signalled (a completion came while tokio slept in `epoll_wait`): reset it.
/// The completions are taken by `park`, which tokio calls before it sleeps again. Returns
/// whether it had been signalled.
pub fn drive(efd: RawFd) -> bool {
    let mut v = 0u64;
    // SAFETY: reading the eventfd's 8-byte counter into `v`.
    unsafe { libc::read(efd, (&mut v as *mut u64).cast(), 8) == 8 }
}

/// Read from slot `i` into `dst`: what was received, or the end of stream or an error;
/// `Pending` (with a receive queued) when nothing has come yet.
pub(crate) fn poll_read(
    k: SlotKey,
    dst: &mut [u8],
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<io::Result<usize>> {
    use std::task::Poll;
    with_slot(k, |l, i| {
        let s = &mut l.slots[i];
        let ready = if s.rpos < s.rbuf.len() {
            let n = (s.rbuf.len() - s.rpos).min(dst.len());
            dst[..n].copy_from_slice(&s.rbuf[s.rpos..s.rpos + n]);
            s.rpos += n;
            Some(Ok(n))
        } else if let Some(r) = s.recv_end.take() {
            Some(r)
        } else {
            s.send_err.take().map(Err)
        };
        if let Some(r) = ready {
            if s.reader_waits {
                s.reader_waits = false;
                l.recv_waiting -= 1;
            }
            return Poll::Ready(r);
        }
        // Read again after the end was said: one more receive says it again.
        if !s.recv_out {
            if let Err(e) = l.push_recv(i) {
                return Poll::Ready(Err(e));
            }
        }
        let s = &mut l.slots[i];
        s.waker = Some(cx.waker().clone());
        if !s.reader_waits {
            s.reader_waits = true;
            l.recv_waiting += 1;
        }
        Poll::Pending
    })
    .unwrap_or_else(|e| Poll::Ready(Err(e)))
}

/// Queue `buf` for sending on slot `i` (copied: the call returns at once; the send goes to
/// the kernel with the loop's next turn). An earlier send's error is returned here.
pub(crate) fn write(k: SlotKey, buf: &[u8]) -> io::Result<()> {
    with_slot(k, |l, i| {
        let s = &mut l.slots[i];
        if let Some(e) = s.send_err.take() {
            return Err(e);
        }
        if s.send_out {
            s.squeue.extend_from_slice(buf);
            Ok(())
        } else {
            s.sbuf.clear();
            s.sbuf.extend_from_slice(buf);
            s.soff = 0;
            l.push_send(i)
        }
    })?
}

/// Run `f` on a loop of its own with the process's I/O path (`--client-io`, `EB_CLIENT_IO`
/// for tests): what a client loop of the runner does, for one future.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let want = match std::env::var("EB_CLIENT_IO").as_deref() {
        Ok("epoll") => false,
        _ => probe().is_ok(),
    };
    let lr = LoopRuntime::new(want.then_some(Policy { batch: true }), 64, "client loop");
    lr.run(f).0
}

/// Whether the tests that need io_uring run here: skipped where the probe fails, unless
/// `EB_REQUIRE_IO_URING=1` (scripts/test.sh sets it where the probe finds io_uring), where a
/// failed probe fails the test: the ring tests cannot pass by skipping.
#[cfg(test)]
pub(crate) fn ring_here() -> bool {
    let required = std::env::var_os("EB_REQUIRE_IO_URING").is_some_and(|v| v == "1");
    match ring_tests_run(probe(), required) {
        Ok(run) => run,
        Err(why) => panic!("{why}"),
    }
}

#[cfg(test)]
fn ring_tests_run(probe: Result<(), String>, required: bool) -> Result<bool, String> {
    match probe {
        Ok(()) => Ok(true),
        Err(why) if required => Err(format!(
            "io_uring is required here (EB_REQUIRE_IO_URING=1) and the probe failed: {why}"
        )),
        Err(why) => {
            eprintln!("skipped: {why}");
            Ok(false)
        }
    }
}

/// Sessions of this thread's loop inside a transaction, as the loop counts them.
#[cfg(test)]
pub(crate) fn sessions_in_transaction() -> Option<usize> {
    with_loop(|l| l.in_txn)
}

#[cfg(test)]
mod tests;
