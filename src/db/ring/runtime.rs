//! Which path the session loops take (`--client-io`) and the loops themselves
//! (`LoopRuntime`): a tokio runtime on the thread's ring, or on epoll.

use std::os::fd::RawFd;

use super::*;

/// Which I/O path the lean clients of the session loops take (`--client-io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoChoice {
    /// io_uring where it can start (else epoll, said in the result) for a loop of at least
    /// `AUTO_RING_MIN_CONNECTIONS` connections; epoll for a smaller loop.
    Auto,
    IoUring,
    Epoll,
}

pub(super) static CHOICE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Set the process's choice. `IoUring` where the ring cannot start is refused with why.
pub fn choose(c: IoChoice) -> Result<(), String> {
    if c == IoChoice::IoUring {
        probe().map_err(|why| format!("--client-io io_uring: {why}"))?;
    }
    let v = match c {
        IoChoice::Auto => 0,
        IoChoice::IoUring => 1,
        IoChoice::Epoll => 2,
    };
    CHOICE.store(v, Ordering::Relaxed);
    Ok(())
}

pub fn choice() -> IoChoice {
    match CHOICE.load(Ordering::Relaxed) {
        1 => IoChoice::IoUring,
        2 => IoChoice::Epoll,
        _ => IoChoice::Auto,
    }
}

/// Under `auto`, the fewest connections a client loop needs to take the ring. The ring pays
/// when one wake-up collects several replies; a loop of few connections mostly wakes for one,
/// and then its three calls per wake-up (tokio's `epoll_wait`, the read of the ring's
/// eventfd, `io_uring_enter`) cost more than epoll's send and receive. Measured
/// (BENCHMARKS.md, "The I/O path by loop size"): epoll ÷ io_uring client CPU per query
/// 0.71x at 4 connections on one loop, 0.93x at 8 (QPS 1.30x and 0.96x), io_uring well ahead
/// at 16; tpcb at 2 connections per loop 0.78x.
pub const AUTO_RING_MIN_CONNECTIONS: usize = 8;

/// Whether a client loop of `connections` asks for the ring (the process's `path()` allowing
/// it): always when `--client-io io_uring` named it, under `auto` from
/// `AUTO_RING_MIN_CONNECTIONS` on. A loop that `auto` leaves on epoll for its size is counted
/// (`LoopPaths::auto_epoll`).
pub fn ring_for(connections: usize) -> bool {
    let ring = choice() == IoChoice::IoUring || connections >= AUTO_RING_MIN_CONNECTIONS;
    if !ring {
        LOOPS_AUTO_EPOLL.fetch_add(1, Ordering::Relaxed);
    }
    ring
}

/// The path session loops take: `Ok(true)` the ring, `Ok(false)` epoll as chosen,
/// `Err(why)` epoll because the ring cannot start here.
pub fn path() -> Result<bool, String> {
    match choice() {
        IoChoice::Epoll => Ok(false),
        _ => probe().map(|()| true),
    }
}

impl IoChoice {
    pub fn name(self) -> &'static str {
        match self {
            IoChoice::Auto => "auto",
            IoChoice::IoUring => "io_uring",
            IoChoice::Epoll => "epoll",
        }
    }
}

/// The client loops of this process by the path they took, and why the first loop that asked
/// for the ring and could not start it took epoll: for the result (`client.loops`), where a
/// run whose loops mixed both paths must say so.
pub(super) static LOOPS_RING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(super) static LOOPS_EPOLL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static LOOPS_AUTO_EPOLL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(super) static FELL_BACK: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The client loops started so far by path, and why a loop asked for io_uring took epoll.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopPaths {
    pub io_uring: u64,
    pub epoll: u64,
    /// Of the epoll loops, those `auto` put there for their size (`ring_for`).
    pub auto_epoll: u64,
    pub fallback: Option<String>,
}

pub fn loop_paths() -> LoopPaths {
    LoopPaths {
        io_uring: LOOPS_RING.load(Ordering::Relaxed),
        epoll: LOOPS_EPOLL.load(Ordering::Relaxed),
        auto_epoll: LOOPS_AUTO_EPOLL.load(Ordering::Relaxed),
        fallback: FELL_BACK.lock().unwrap_or_else(|e| e.into_inner()).clone(),
    }
}

pub(super) fn tally(on_ring: bool, fell_back: Option<&String>) {
    let n = if on_ring { &LOOPS_RING } else { &LOOPS_EPOLL };
    n.fetch_add(1, Ordering::Relaxed);
    if let Some(why) = fell_back {
        FELL_BACK
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| why.clone());
    }
}

/// A client loop's runtime: a current-thread tokio runtime whose sleeps go through this
/// thread's ring when `ring` holds a policy (and the ring starts), with the task that wakes
/// tokio on the ring's eventfd. A loop whose ring cannot start, or whose eventfd tokio cannot
/// watch, uses epoll, and says so on stderr and in `loop_paths`.
pub struct LoopRuntime {
    pub rt: tokio::runtime::Runtime,
    pub local: tokio::task::LocalSet,
    efd: Option<RawFd>,
    fell_back: Option<String>,
}

impl LoopRuntime {
    pub fn new(ring: Option<Policy>, connections: usize, label: &str) -> LoopRuntime {
        let mut fell_back = None;
        let mut efd = ring.and_then(|policy| {
            install(2 * connections as u32 + 16, policy)
                .map_err(|e| fell_back = Some(format!("io_uring on a client loop: {e}")))
                .ok()
        });
        let mut builder = tokio::runtime::Builder::new_current_thread();
        builder.enable_all();
        if efd.is_some() {
            builder.on_thread_park(park);
        }
        let rt = builder.build().expect("tokio runtime");
        let local = tokio::task::LocalSet::new();
        if let Some(fd) = efd {
            let _rt = rt.enter();
            // SAFETY: the eventfd stays open until `finish`, after the LocalSet (and this
            // AsyncFd with it) is dropped.
            let w = unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
            };
            match w {
                Ok(w) => {
                    local.spawn_local(async move {
                        while let Ok(mut g) = w.readable().await {
                            drive(fd);
                            g.clear_ready();
                        }
                    });
                }
                Err(e) => {
                    // Nothing would wake the loop for the ring's completions (a loop that is
                    // not batching could sleep for good): no ring, before any socket is on it.
                    uninstall();
                    efd = None;
                    fell_back = Some(format!("io_uring's eventfd on a client loop: {e}"));
                }
            }
        }
        if let Some(why) = &fell_back {
            eprintln!("enginebench: {label}: {why}; epoll instead");
        }
        tally(efd.is_some(), fell_back.as_ref());
        LoopRuntime {
            rt,
            local,
            efd,
            fell_back,
        }
    }

    /// Whether this loop's sockets use the ring.
    pub fn on_ring(&self) -> bool {
        self.efd.is_some()
    }

    /// Why this loop was asked for the ring and took epoll.
    pub fn fell_back(&self) -> Option<&str> {
        self.fell_back.as_deref()
    }

    /// Run `f` on the loop (with the tasks spawned on `local`), then take the ring down.
    pub fn run<F: std::future::Future>(self, f: F) -> (F::Output, Option<RingStats>) {
        let out = self.local.block_on(&self.rt, f);
        drop(self.local);
        let stats = self.efd.and_then(|_| uninstall());
        (out, stats)
    }
}
