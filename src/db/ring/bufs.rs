//! The provided buffer ring the multishot receives fill.

use std::io;
use std::sync::atomic::Ordering;

use super::sys::*;

/// The buffers multishot receives fill: a ring of `entries` buffers of `size` bytes the kernel
/// takes from (`IORING_REGISTER_PBUF_RING`). A completion names the buffer it filled; the loop
/// copies the bytes to the socket's slot and hands the buffer back at once, so the kernel runs
/// short only when more replies come in one turn than there are buffers (the receive then ends
/// with `ENOBUFS` and is armed again).
pub(super) struct BufRing {
    /// The ring of buffer descriptors (16 bytes each; the kernel reads the tail at byte 14).
    pub(super) ring: Map,
    pub(super) mask: u16,
    pub(super) tail: u16,
    pub(super) size: usize,
    pub(super) bufs: Vec<u8>,
}

impl BufRing {
    pub(super) fn new(uring: &Uring, entries: u16, size: usize) -> io::Result<BufRing> {
        debug_assert!(entries.is_power_of_two());
        let len = (entries as usize * 16).next_multiple_of(4096);
        // SAFETY: a fresh private anonymous mapping (page-aligned, as the kernel requires).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = Map {
            ptr: ptr.cast(),
            len,
        };
        #[repr(C)]
        struct BufReg {
            ring_addr: u64,
            ring_entries: u32,
            bgid: u16,
            flags: u16,
            resv: [u64; 3],
        }
        let reg = BufReg {
            ring_addr: ring.ptr as u64,
            ring_entries: entries as u32,
            bgid: BGID,
            flags: 0,
            resv: [0; 3],
        };
        // SAFETY: `reg` describes the mapping above, which outlives the ring (dropped after it
        // in `Loop`, or leaked with it).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                uring.fd,
                REGISTER_PBUF_RING,
                &reg as *const BufReg,
                1,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut b = BufRing {
            ring,
            mask: entries - 1,
            tail: 0,
            size,
            bufs: vec![0; entries as usize * size],
        };
        for bid in 0..entries {
            b.give(bid);
        }
        b.publish();
        Ok(b)
    }

    /// The bytes of buffer `bid` the kernel filled.
    pub(super) fn data(&self, bid: u16, len: usize) -> &[u8] {
        let at = bid as usize * self.size;
        &self.bufs[at..at + len.min(self.size)]
    }

    /// Hand buffer `bid` back to the kernel (seen at the next `publish`).
    pub(super) fn give(&mut self, bid: u16) {
        let at = (self.tail & self.mask) as usize * 16;
        let addr = self.bufs[bid as usize * self.size..].as_ptr() as u64;
        // SAFETY: the descriptor at `at` is inside the mapping and not the kernel's (it is past
        // the published tail). Only addr, len and bid are written: bytes 14-15 of the first
        // descriptor are the tail.
        unsafe {
            let d = self.ring.ptr.add(at);
            d.cast::<u64>().write(addr);
            d.add(8).cast::<u32>().write(self.size as u32);
            d.add(12).cast::<u16>().write(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    pub(super) fn publish(&self) {
        // SAFETY: the tail is the u16 at byte 14 of the mapping, written by us, read by the kernel.
        unsafe {
            (*self.ring.ptr.add(14).cast::<std::sync::atomic::AtomicU16>())
                .store(self.tail, Ordering::Release)
        };
    }
}
