//! The ring itself: the structures of `<linux/io_uring.h>`, the shared mappings and the
//! system calls that set up, enter and register a ring.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

pub(super) const SETUP_CQSIZE: u32 = 1 << 3;
pub(super) const SETUP_SUBMIT_ALL: u32 = 1 << 7;
pub(super) const SETUP_COOP_TASKRUN: u32 = 1 << 8;
pub(super) const SETUP_TASKRUN_FLAG: u32 = 1 << 9;
pub(super) const SETUP_SINGLE_ISSUER: u32 = 1 << 12;
pub(super) const SETUP_DEFER_TASKRUN: u32 = 1 << 13;
pub(super) const FEAT_SINGLE_MMAP: u32 = 1;
pub(super) const FEAT_EXT_ARG: u32 = 1 << 8;
/// In the SQ ring's flags: completions the CQ ring had no room for wait in the kernel's
/// overflow list (`IORING_SQ_CQ_OVERFLOW`), flushed to the ring by the next `io_uring_enter`
/// that gets events; completions deferred to this thread wait to be run.
pub(super) const SQ_CQ_OVERFLOW: u32 = 1 << 1;
pub(super) const SQ_TASKRUN: u32 = 1 << 2;
pub(super) const ENTER_GETEVENTS: u32 = 1;
pub(super) const ENTER_EXT_ARG: u32 = 1 << 3;
pub(super) const REGISTER_EVENTFD: u32 = 4;
pub(super) const REGISTER_PBUF_RING: u32 = 22;
pub(super) const OFF_SQ_RING: i64 = 0;
pub(super) const OFF_SQES: i64 = 0x1000_0000;
pub(super) const OP_ASYNC_CANCEL: u8 = 14;
/// A cancel's flags: every entry on the entry's `fd`, not one by its user data (Linux 5.19,
/// as the buffer ring): a closing socket's receive and any send still out.
pub(super) const ASYNC_CANCEL_ALL: u32 = 1;
pub(super) const ASYNC_CANCEL_FD: u32 = 1 << 1;
pub(super) const OP_SEND: u8 = 26;
pub(super) const OP_RECV: u8 = 27;

/// Entry flag: the kernel picks the receive's buffer from the loop's buffer ring.
pub(super) const SQE_BUFFER_SELECT: u8 = 1 << 5;
/// A receive's `ioprio` flags: wait for data before the first attempt (a reply is never there
/// when its query has just been sent), and stay armed, one completion per arrival.
pub(super) const RECVSEND_POLL_FIRST: u16 = 1;
pub(super) const RECV_MULTISHOT: u16 = 1 << 1;
/// Completion flags: a buffer of the ring holds the data (its id above `CQE_BUFFER_SHIFT`);
/// more completions of the same entry follow.
pub(super) const CQE_F_BUFFER: u32 = 1;
pub(super) const CQE_F_MORE: u32 = 1 << 1;
pub(super) const CQE_BUFFER_SHIFT: u32 = 16;
/// The loop's one buffer group.
pub(super) const BGID: u16 = 0;

/// What a completion was: the low byte of its user data (the slot index is above it).
pub(super) const TAG_RECV: u64 = 1;
pub(super) const TAG_SEND: u64 = 2;
pub(super) const TAG_CANCEL: u64 = 3;

#[repr(C)]
#[derive(Default)]
pub(super) struct SqOffsets {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) ring_mask: u32,
    pub(super) ring_entries: u32,
    pub(super) flags: u32,
    pub(super) dropped: u32,
    pub(super) array: u32,
    pub(super) resv1: u32,
    pub(super) user_addr: u64,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct CqOffsets {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) ring_mask: u32,
    pub(super) ring_entries: u32,
    pub(super) overflow: u32,
    pub(super) cqes: u32,
    pub(super) flags: u32,
    pub(super) resv1: u32,
    pub(super) user_addr: u64,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct Params {
    pub(super) sq_entries: u32,
    pub(super) cq_entries: u32,
    pub(super) flags: u32,
    pub(super) sq_thread_cpu: u32,
    pub(super) sq_thread_idle: u32,
    pub(super) features: u32,
    pub(super) wq_fd: u32,
    pub(super) resv: [u32; 3],
    pub(super) sq_off: SqOffsets,
    pub(super) cq_off: CqOffsets,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(super) struct Sqe {
    pub(super) opcode: u8,
    pub(super) flags: u8,
    pub(super) ioprio: u16,
    pub(super) fd: i32,
    pub(super) off: u64,
    pub(super) addr: u64,
    pub(super) len: u32,
    pub(super) op_flags: u32,
    pub(super) user_data: u64,
    pub(super) buf_index: u16,
    pub(super) personality: u16,
    pub(super) splice_fd_in: i32,
    pub(super) addr3: u64,
    pub(super) pad: u64,
}

#[repr(C)]
pub(super) struct Cqe {
    pub(super) user_data: u64,
    pub(super) res: i32,
    pub(super) flags: u32,
}

#[repr(C)]
pub(super) struct GetEventsArg {
    pub(super) sigmask: u64,
    pub(super) sigmask_sz: u32,
    pub(super) min_wait_usec: u32,
    pub(super) ts: u64,
}

#[repr(C)]
pub(super) struct KernelTimespec {
    pub(super) sec: i64,
    pub(super) nsec: i64,
}

/// One mapping of the kernel's shared memory, unmapped on drop.
pub(super) struct Map {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

impl Map {
    pub(super) fn new(fd: RawFd, len: usize, off: i64) -> io::Result<Map> {
        // SAFETY: a fresh shared mapping of the ring descriptor at an offset the kernel defines;
        // the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                off,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The `u32` at byte offset `off` (a ring index or field the kernel shares with us).
    pub(super) fn u32_at(&self, off: u32) -> *const AtomicU32 {
        // SAFETY: `off` comes from the kernel's offsets for this mapping, within `len`.
        unsafe { self.ptr.add(off as usize).cast() }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `Map::new` with this pointer and length.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The ring: its descriptor and its three shared areas.
pub(super) struct Uring {
    pub(super) fd: RawFd,
    pub(super) _sq_map: Map,
    pub(super) sqes: Map,
    pub(super) sq_tail: *const AtomicU32,
    pub(super) sq_head: *const AtomicU32,
    /// The kernel's flags word of the SQ ring (`SQ_TASKRUN`).
    pub(super) sq_flags: *const AtomicU32,
    pub(super) sq_mask: u32,
    pub(super) sq_entries: u32,
    pub(super) cq_head: *const AtomicU32,
    pub(super) cq_tail: *const AtomicU32,
    pub(super) cq_mask: u32,
    pub(super) cq_flags: *const AtomicU32,
    /// Completions the kernel dropped for want of room (0 with `IORING_FEAT_NODROP`, unless it
    /// could not allocate its overflow list): a reply lost with them.
    pub(super) cq_overflow: *const AtomicU32,
    pub(super) cqes: *const Cqe,
    /// Entries written since the last `io_uring_enter`, and how many of them are sends
    /// (which complete during the submit: a batch wait counts them in).
    pub(super) unsubmitted: u32,
    pub(super) unsubmitted_sends: u32,
    /// Entries handed out and not yet completed.
    pub(super) outstanding: u32,
}

pub(super) fn sys_setup(entries: u32, p: &mut Params) -> io::Result<RawFd> {
    // SAFETY: `p` is a valid io_uring_params for the kernel to read and fill.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, entries, p as *mut Params) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd as RawFd)
}

impl Uring {
    pub(super) fn new(entries: u32) -> io::Result<Uring> {
        let mut p = Params {
            flags: SETUP_SINGLE_ISSUER
                | SETUP_DEFER_TASKRUN
                | SETUP_COOP_TASKRUN
                | SETUP_TASKRUN_FLAG
                | SETUP_SUBMIT_ALL
                | SETUP_CQSIZE,
            cq_entries: entries * 4,
            ..Params::default()
        };
        let fd = sys_setup(entries, &mut p)?;
        let close_on_err = |e: io::Error| {
            // SAFETY: `fd` is the ring descriptor just created and owned here.
            unsafe { libc::close(fd) };
            e
        };
        if p.features & FEAT_SINGLE_MMAP == 0 || p.features & FEAT_EXT_ARG == 0 {
            return Err(close_on_err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the kernel's io_uring lacks single mmap or timed waits (Linux 5.11 or later)",
            )));
        }
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<Cqe>();
        let ring_len = sq_len.max(cq_len);
        let sq_map = Map::new(fd, ring_len, OFF_SQ_RING).map_err(close_on_err)?;
        let sqes = Map::new(fd, p.sq_entries as usize * 64, OFF_SQES).map_err(close_on_err)?;
        let sq_mask = unsafe { (*sq_map.u32_at(p.sq_off.ring_mask)).load(Ordering::Relaxed) };
        let cq_mask = unsafe { (*sq_map.u32_at(p.cq_off.ring_mask)).load(Ordering::Relaxed) };
        // The submission array maps ring positions to entries: the identity, set once.
        for i in 0..p.sq_entries {
            // SAFETY: the array has `sq_entries` u32s from its offset, inside the mapping.
            unsafe {
                (*sq_map.u32_at(p.sq_off.array + 4 * i)).store(i, Ordering::Relaxed);
            }
        }
        // SAFETY: offsets given by the kernel for this single mapping.
        let cqes = unsafe { sq_map.ptr.add(p.cq_off.cqes as usize).cast::<Cqe>() };
        Ok(Uring {
            fd,
            sq_tail: sq_map.u32_at(p.sq_off.tail),
            sq_head: sq_map.u32_at(p.sq_off.head),
            sq_flags: sq_map.u32_at(p.sq_off.flags),
            sq_mask,
            sq_entries: p.sq_entries,
            cq_head: sq_map.u32_at(p.cq_off.head),
            cq_tail: sq_map.u32_at(p.cq_off.tail),
            cq_mask,
            cq_flags: sq_map.u32_at(p.cq_off.flags),
            cq_overflow: sq_map.u32_at(p.cq_off.overflow),
            cqes,
            _sq_map: sq_map,
            sqes,
            unsubmitted: 0,
            unsubmitted_sends: 0,
            outstanding: 0,
        })
    }

    /// Queue one entry; a full queue is handed to the kernel first. When the kernel takes
    /// none of it (an error, or it is busy), the entry is refused: written anyway it would
    /// overwrite one the kernel has not read yet.
    pub(super) fn push(&mut self, sqe: Sqe) -> io::Result<()> {
        // SAFETY: the tail is ours to write (single issuer); the head is the kernel's.
        let tail = unsafe { (*self.sq_tail).load(Ordering::Relaxed) };
        let full = |u: &Uring| {
            let head = unsafe { (*u.sq_head).load(Ordering::Acquire) };
            tail.wrapping_sub(head) >= u.sq_entries
        };
        if full(self) {
            self.enter(0, None)?;
            if full(self) {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "io_uring's submission queue is full and the kernel took none of it",
                ));
            }
        }
        let idx = (tail & self.sq_mask) as usize;
        // SAFETY: `idx` is within the `sq_entries` entries of the mapping; the kernel has
        // consumed this entry (the queue is not full).
        unsafe {
            self.sqes.ptr.cast::<Sqe>().add(idx).write(sqe);
            (*self.sq_tail).store(tail.wrapping_add(1), Ordering::Release);
        }
        self.unsubmitted += 1;
        self.outstanding += 1;
        if sqe.opcode == OP_SEND {
            self.unsubmitted_sends += 1;
        }
        Ok(())
    }

    /// Submit what is queued and, with `wait = Some((k, t))`, sleep until `k` completions are
    /// ready or `t` has passed. Always runs the completions the kernel deferred to us.
    pub(super) fn enter(&mut self, min_complete: u32, timeout: Option<Duration>) -> io::Result<()> {
        let ts = KernelTimespec {
            sec: timeout.map_or(0, |t| t.as_secs() as i64),
            nsec: timeout.map_or(0, |t| t.subsec_nanos() as i64),
        };
        let arg = GetEventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            min_wait_usec: 0,
            ts: if timeout.is_some() {
                &ts as *const KernelTimespec as u64
            } else {
                0
            },
        };
        let submit = self.unsubmitted;
        // SAFETY: `arg` and `ts` outlive the call; the sizes are those the kernel expects.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.fd,
                submit,
                min_complete,
                ENTER_GETEVENTS | ENTER_EXT_ARG,
                &arg as *const GetEventsArg,
                std::mem::size_of::<GetEventsArg>(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY) => {
                    Ok(())
                }
                _ => Err(e),
            };
        }
        self.unsubmitted -= (rc as u32).min(submit);
        if self.unsubmitted == 0 {
            self.unsubmitted_sends = 0;
        }
        Ok(())
    }

    /// Whether completions deferred to this thread are waiting to be run (`IORING_SQ_TASKRUN`,
    /// kept set by the kernel while any is left, also those left over by a call that ran its
    /// share). The eventfd cannot say it: it fires only when the kernel's list was empty.
    /// Completions the CQ ring had no room for count too: they reach the ring only through
    /// an `io_uring_enter` that gets events, and nothing else would make the loop call it
    /// (a burst of replies left them in the kernel, their readers asleep).
    pub(super) fn work_pending(&self) -> bool {
        // SAFETY: the flags word is inside the SQ mapping; the kernel writes it atomically.
        unsafe { (*self.sq_flags).load(Ordering::Acquire) & (SQ_TASKRUN | SQ_CQ_OVERFLOW) != 0 }
    }

    /// Completions the kernel dropped (it had no room for them anywhere).
    pub(super) fn dropped(&self) -> u32 {
        // SAFETY: the counter is inside the SQ/CQ mapping; the kernel writes it atomically.
        unsafe { (*self.cq_overflow).load(Ordering::Acquire) }
    }

    /// Take every ready completion: its user data, result and flags. An entry counts as done
    /// with its last completion (a multishot receive has many).
    pub(super) fn reap(&mut self, mut f: impl FnMut(u64, i32, u32)) {
        // SAFETY: the CQ head is ours to write, the tail the kernel's; entries between them
        // are complete and stay until we move the head.
        unsafe {
            let mut head = (*self.cq_head).load(Ordering::Relaxed);
            let tail = (*self.cq_tail).load(Ordering::Acquire);
            while head != tail {
                let c = &*self.cqes.add((head & self.cq_mask) as usize);
                f(c.user_data, c.res, c.flags);
                head = head.wrapping_add(1);
                if c.flags & CQE_F_MORE == 0 {
                    self.outstanding -= 1;
                }
            }
            (*self.cq_head).store(head, Ordering::Release);
        }
    }

    /// Stop or resume the eventfd's signals (`IORING_CQ_EVENTFD_DISABLED`): a loop that sleeps
    /// in `io_uring_enter` wakes from it, and must not wake tokio's epoll for the same replies.
    pub(super) fn eventfd_signals(&self, on: bool) {
        // SAFETY: the CQ ring's flags word is the application's to write.
        unsafe {
            if on {
                (*self.cq_flags).fetch_and(!1, Ordering::Release);
            } else {
                (*self.cq_flags).fetch_or(1, Ordering::Release);
            }
        }
    }

    pub(super) fn register_eventfd(&self, efd: RawFd) -> io::Result<()> {
        // SAFETY: the argument is one i32 descriptor, as REGISTER_EVENTFD expects.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.fd,
                REGISTER_EVENTFD,
                &efd as *const RawFd,
                1,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // SAFETY: the ring descriptor is owned here.
        unsafe { libc::close(self.fd) };
    }
}
