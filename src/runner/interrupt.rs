//! SIGINT / SIGTERM: the first one asks everything to stop at the next operation boundary
//! (results of finished points are already on disk); a second one ends the process at once.

use std::sync::atomic::{AtomicI32, Ordering};

// A signal handler can only reach static state; this is the one process-wide flag.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // Second signal: restore the default action and re-raise, ending the process now.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
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
