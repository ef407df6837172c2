//! SIGINT / SIGTERM: the first one asks everything to stop at the next operation boundary
//! (results of finished points are already on disk; the managed server is then stopped); a
//! second one kills the managed server and ends the process at once.

use std::sync::atomic::{AtomicI32, Ordering};

// A signal handler can only reach static state; these are the process-wide flags.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The managed server to kill on a second signal (0: none), and the signal that kills it.
static SERVER_PID: AtomicI32 = AtomicI32::new(0);
static SERVER_KILL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // Second signal: kill the managed server (it would otherwise outlive us until its
        // parent-death signal's clean shutdown ends), restore the default action and re-raise,
        // ending the process now.
        let pid = SERVER_PID.load(Ordering::SeqCst);
        // SAFETY: kill, signal and raise are async-signal-safe.
        unsafe {
            if pid > 0 {
                libc::kill(pid, SERVER_KILL.load(Ordering::SeqCst));
            }
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// The managed server that a second Ctrl-C kills with `kill_sig` (MariaDB: SIGKILL;
/// PostgreSQL: SIGQUIT, its immediate shutdown, which also ends the backends).
pub fn watch_server(pid: u32, kill_sig: i32) {
    SERVER_KILL.store(kill_sig, Ordering::SeqCst);
    SERVER_PID.store(pid as i32, Ordering::SeqCst);
}

/// The server is stopped (or no longer ours to kill).
pub fn unwatch_server(pid: u32) {
    let _ = SERVER_PID.compare_exchange(pid as i32, 0, Ordering::SeqCst, Ordering::SeqCst);
}

/// The signal's name, for messages.
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The note a result gets when a signal ended its run early.
pub fn note() -> String {
    let sig = signal().unwrap_or(libc::SIGINT);
    format!(
        "This run was interrupted by {} (exit code {}): points that finished are complete; a measured run cut short is kept with interrupted = true (its numbers cover a shorter time); later points are missing.",
        name(sig),
        128 + sig
    )
}

/// The note a result gets when a signal ended the run while its tables were loading.
pub fn load_note() -> String {
    let sig = signal().unwrap_or(libc::SIGINT);
    format!(
        "This run was interrupted by {} (exit code {}) while loading its tables: no point was measured; `load` shows each table's rows and time until then (interrupted = true on the table cut short). The next run loads the tables again.",
        name(sig),
        128 + sig
    )
}

/// Install the handlers for SIGINT and SIGTERM.
pub fn install() {
    // SAFETY: installing a handler that only touches an atomic (and re-raises) is sound.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// The signal received, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}
