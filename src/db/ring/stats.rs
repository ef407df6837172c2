//! What the batched path did: per loop (`RingStats`) and summed over the process's loops
//! for a measured run (`BatchTotals`, `batch_totals`).

use std::time::Duration;

/// What the batched path did, summed over the process's loops: each loop adds its own every
/// `PUBLISH_EVERY` and as it ends (its turns take no shared lock), so that a measured run's
/// figures are the difference of two snapshots (`batch_totals`), late by at most that much.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchTotals {
    /// Waits for more than one completion (every connection of the loop waiting for a reply),
    /// and those of them that ran to `BATCH_TIMEOUT`.
    pub batched_waits: u64,
    pub waits_to_timeout: u64,
    /// Receive completions with bytes (a reply, or part of a long one), and those taken
    /// right after a batched wait.
    pub receives: u64,
    pub held: u64,
    /// The hold time of every receive, in `HOLD_STEP_US` buckets (0 for one not taken after
    /// a batched wait), and their sum.
    pub hold_sum_us: u64,
    pub hold_buckets: Vec<u64>,
}

/// Hold-time buckets: 10 µs each up to 10 ms (five times `BATCH_TIMEOUT`; a wait longer
/// than that means the loop's thread was not running), the last one for anything longer.
pub(super) const HOLD_STEP_US: u64 = 10;
pub(super) const HOLD_BUCKETS: usize = 1001;
pub(super) const PUBLISH_EVERY: Duration = Duration::from_millis(50);

pub(super) static TOTALS: std::sync::Mutex<Option<BatchTotals>> = std::sync::Mutex::new(None);

impl BatchTotals {
    pub(super) fn add(&mut self, o: &BatchTotals) {
        self.batched_waits += o.batched_waits;
        self.waits_to_timeout += o.waits_to_timeout;
        self.receives += o.receives;
        self.held += o.held;
        self.hold_sum_us += o.hold_sum_us;
        if self.hold_buckets.len() < o.hold_buckets.len() {
            self.hold_buckets.resize(o.hold_buckets.len(), 0);
        }
        for (a, b) in self.hold_buckets.iter_mut().zip(&o.hold_buckets) {
            *a += b;
        }
    }

    /// `n` receives taken after a wait of `held` (all of them counted as held that long: the
    /// kernel stamps no completion, so the wait's length is the most any of them waited).
    pub(super) fn note(&mut self, n: u64, held: Option<Duration>) {
        if n == 0 {
            return;
        }
        if self.hold_buckets.is_empty() {
            self.hold_buckets = vec![0; HOLD_BUCKETS];
        }
        self.receives += n;
        let us = held.map_or(0, |d| d.as_micros() as u64);
        if held.is_some() {
            self.held += n;
        }
        self.hold_sum_us += n * us;
        self.hold_buckets[((us / HOLD_STEP_US) as usize).min(HOLD_BUCKETS - 1)] += n;
    }

    /// What happened between `before` and this snapshot.
    pub fn since(&self, before: &BatchTotals) -> BatchFigures {
        let bucket = |v: &BatchTotals, i: usize| v.hold_buckets.get(i).copied().unwrap_or(0);
        let receives = self.receives - before.receives;
        let p99 = if receives == 0 {
            0
        } else {
            // The smallest hold at or below which 99 % of the receives were held.
            let want = (receives * 99).div_ceil(100);
            let mut seen = 0;
            let mut at = HOLD_BUCKETS - 1;
            for i in 0..HOLD_BUCKETS {
                seen += bucket(self, i) - bucket(before, i);
                if seen >= want {
                    at = i;
                    break;
                }
            }
            (at as u64 + 1) * HOLD_STEP_US
        };
        BatchFigures {
            batched_waits: self.batched_waits - before.batched_waits,
            waits_to_timeout: self.waits_to_timeout - before.waits_to_timeout,
            receives,
            held: self.held - before.held,
            hold_mean_us: (self.hold_sum_us - before.hold_sum_us) as f64 / receives.max(1) as f64,
            hold_p99_us: p99,
        }
    }
}

/// A measured run's batch figures (`BatchTotals::since`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchFigures {
    pub batched_waits: u64,
    pub waits_to_timeout: u64,
    pub receives: u64,
    pub held: u64,
    pub hold_mean_us: f64,
    /// The upper edge of the 10 µs bucket that holds the 99th percentile.
    pub hold_p99_us: u64,
}

/// The process's batch totals so far (every loop's, up to `PUBLISH_EVERY` ago).
pub fn batch_totals() -> BatchTotals {
    TOTALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default()
}

pub(super) fn publish(b: &mut BatchTotals) {
    if b.receives == 0 && b.batched_waits == 0 {
        return;
    }
    TOTALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(BatchTotals::default)
        .add(b);
    let buckets = std::mem::take(&mut b.hold_buckets);
    *b = BatchTotals::default();
    b.hold_buckets = buckets;
    b.hold_buckets.iter_mut().for_each(|x| *x = 0);
}

/// Counts of one loop, for the result and the benchmarks.
#[derive(Debug, Default, Clone, Copy)]
pub struct RingStats {
    /// `io_uring_enter` calls, those that waited for more than one completion, completions.
    pub enters: u64,
    pub batched_waits: u64,
    pub completions: u64,
    /// Multishot receives armed again after the buffers ran out (`ENOBUFS`).
    pub rearms: u64,
    /// Entries the kernel had not returned when the loop ended: its ring and buffers were
    /// left to it (0 unless a cancel did not end them in time).
    pub leaked_entries: u32,
    /// Receive completions with bytes, and send completions.
    pub receives: u64,
    pub sends: u64,
    /// `io_uring_enter` calls that failed: every connection of the loop was then given the
    /// error (a ring that cannot be entered delivers nothing more).
    pub enter_errors: u64,
    /// Turns whose completions kept coming past `SETTLE_ROUNDS` calls: the loop signalled its
    /// own eventfd, so that tokio turns again instead of sleeping with work left.
    pub settle_cut: u64,
}
