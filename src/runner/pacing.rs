//! Pacing: when a worker starts its next operation. Closed loop starts it as soon as the last
//! one finished; fixed rate (open loop) follows a schedule of intended starts, so that a slow
//! server makes requests wait (queueing shows in the response time) instead of slowing the
//! client down (coordinated omission).
//!
//! The schedule is one clock per worker (the next intended start), never a queue of pending
//! events: memory stays constant however far behind the server falls (sysbench 1.0.20 keeps a
//! bounded event queue and aborts with "event queue is full").

use std::time::{Duration, Instant};

use crate::model::{Arrivals, Pacing, PhasePlan};
use crate::rng::Rng;

/// One worker's schedule clock: its intended starts over the phase, the next one first.
///
/// The worker's expected operations per second over the phase (its intensity) are pieces of
/// constant or linearly changing rate (a warm-up's ramp, the steps of `--rate`/`--threads`).
/// Intended starts are drawn in "unit time" (the expected count of operations so far, where
/// arrivals come at rate 1: equal gaps of 1, or exponential gaps of mean 1) and mapped back
/// to time through the intensity's integral. At one constant rate this is exactly the equal
/// or exponential gaps of `1 / rate`; a piece of rate 0 (a connection idle in a step) gets no
/// starts.
#[derive(Debug, Clone)]
pub struct Schedule {
    arrivals: Arrivals,
    rng: Rng,
    start: Instant,
    pieces: Vec<Piece>,
    /// The piece the next start falls in (starts only move forward).
    cur: usize,
    /// The next intended start in unit time, and in time.
    u: f64,
    next: Instant,
}

/// A piece of the intensity: from `t0` (seconds from the phase's start) for `len` seconds,
/// the rate going from `r0` to `r1`; `u0` is the unit time at its start.
#[derive(Debug, Clone, Copy)]
struct Piece {
    t0: f64,
    len: f64,
    r0: f64,
    r1: f64,
    u0: f64,
}

impl Piece {
    /// Unit time gone `dt` seconds into the piece.
    fn area(&self, dt: f64) -> f64 {
        let dt = dt.min(self.len);
        let slope = if self.len.is_finite() {
            (self.r1 - self.r0) / self.len
        } else {
            0.0
        };
        self.r0 * dt + slope * dt * dt / 2.0
    }

    /// Seconds into the piece at which `du` unit time has gone (infinite if never).
    fn time_of(&self, du: f64) -> f64 {
        if du <= 0.0 {
            return 0.0;
        }
        let a = if self.len.is_finite() {
            (self.r1 - self.r0) / (2.0 * self.len)
        } else {
            0.0
        };
        // The root of r0 t + a t² = du in the stable form (a = 0: du / r0).
        let den = self.r0 + (self.r0 * self.r0 + 4.0 * a * du).max(0.0).sqrt();
        if den <= 0.0 {
            return f64::INFINITY;
        }
        (2.0 * du / den).min(self.len)
    }
}

/// "Never" for a start in no piece (a connection without share for the rest of the phase).
const NEVER: Duration = Duration::from_secs(100 * 365 * 86_400);

impl Schedule {
    /// The schedule of worker `w` of `workers` for a phase starting at `start`, or `None` for
    /// closed loop. Each worker takes `ops_per_s / workers` (so rate shares add up, also across
    /// machines). Uniform schedules are staggered so that workers do not fire together.
    pub fn new(
        pacing: &Pacing,
        w: usize,
        workers: usize,
        start: Instant,
        seed: u64,
    ) -> Option<Self> {
        let plan = PhasePlan::simple(NEVER, None, Duration::from_secs(1));
        Schedule::planned(pacing, w, workers, start, seed, &plan)
    }

    /// `new` for a phase of `plan`: its steps set the rate and the connections that share it,
    /// and its ramp raises the rate from 0 at the start.
    pub fn planned(
        pacing: &Pacing,
        w: usize,
        workers: usize,
        start: Instant,
        seed: u64,
        plan: &PhasePlan,
    ) -> Option<Self> {
        let Pacing::FixedRate {
            ops_per_s,
            arrivals,
        } = *pacing
        else {
            return None;
        };
        let workers = workers.max(1);
        let (mut t0, mut u0) = (0.0, 0.0);
        let mut pieces = Vec::new();
        for (len, r0, r1) in plan.worker_rates(w, workers, ops_per_s) {
            let p = Piece {
                t0,
                len,
                r0,
                r1,
                u0,
            };
            pieces.push(p);
            t0 += len;
            u0 += p.area(len);
        }
        let mut s = Schedule {
            arrivals,
            rng: Rng::keyed(seed, 0x9ace, w as u64),
            start,
            pieces,
            cur: 0,
            u: 0.0,
            next: start,
        };
        s.u = match arrivals {
            Arrivals::Uniform => w as f64 / workers as f64,
            Arrivals::Poisson => s.gap(),
        };
        s.next = s.time_of_u();
        Some(s)
    }

    /// The next intended start.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Move to the following intended start (call once the due operation has started).
    pub fn advance(&mut self) {
        self.u += self.gap();
        self.next = self.time_of_u();
    }

    /// Intended starts from the current one up to (not including) `until` that never started:
    /// the backlog when a phase ends (the schedule moves past them). Walks the schedule (no
    /// allocation); the walk is as long as the missed schedule, which is bounded by rate ×
    /// phase length.
    pub fn pending_before(&mut self, until: Instant) -> u64 {
        let mut n = 0;
        if self.arrivals == Arrivals::Uniform {
            // Equal gaps of 1 in unit time: count them at once.
            let end = self.unit_at(until.saturating_duration_since(self.start).as_secs_f64());
            if self.next < until && end > self.u {
                let k = (end - self.u).ceil().max(1.0);
                self.u += k;
                self.next = self.time_of_u();
                n = k as u64;
            }
            // Rounding at the edge: walk what is left (at most a step or two).
            while self.next < until {
                n += 1;
                self.advance();
            }
            return n;
        }
        while self.next < until {
            n += 1;
            self.advance();
        }
        n
    }

    /// Unit time at `t` seconds from the phase's start.
    fn unit_at(&self, t: f64) -> f64 {
        let p = self
            .pieces
            .iter()
            .rev()
            .find(|p| p.t0 <= t)
            .unwrap_or(&self.pieces[0]);
        p.u0 + p.area((t - p.t0).max(0.0))
    }

    /// The instant of unit time `self.u`.
    fn time_of_u(&mut self) -> Instant {
        while self.cur + 1 < self.pieces.len() && self.u >= self.pieces[self.cur + 1].u0 {
            self.cur += 1;
        }
        let p = self.pieces[self.cur];
        let t = p.t0 + p.time_of(self.u - p.u0);
        if !t.is_finite() || t >= NEVER.as_secs_f64() {
            return self.start + NEVER;
        }
        self.start + secs(t)
    }

    /// The gap to the next start in unit time.
    fn gap(&mut self) -> f64 {
        match self.arrivals {
            Arrivals::Uniform => 1.0,
            Arrivals::Poisson => {
                // Inverse transform: -ln(U) with U in (0, 1].
                let u = ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
                -u.ln()
            }
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

/// A start this much behind schedule counts as late (`ScheduleStats::late`; the event loop's
/// timer has 1 ms ticks, so smaller delays are the timer, not the server).
pub const LATE: Duration = Duration::from_millis(2);

#[cfg(test)]
mod tests {
    use super::*;

    fn count_in(p: Pacing, workers: usize, secs_f: f64) -> u64 {
        let start = Instant::now();
        let end = start + Duration::from_secs_f64(secs_f);
        (0..workers)
            .map(|w| {
                Schedule::new(&p, w, workers, start, 7)
                    .unwrap()
                    .pending_before(end)
            })
            .sum()
    }

    #[test]
    fn rates_add_up_over_workers() {
        for arrivals in [Arrivals::Uniform, Arrivals::Poisson] {
            let p = Pacing::FixedRate {
                ops_per_s: 10_000.0,
                arrivals,
            };
            let n = count_in(p, 16, 10.0);
            // 100k intended starts; Poisson's standard deviation is sqrt(100k) ≈ 316.
            assert!((98_500..=101_500).contains(&n), "{arrivals:?}: {n}");
        }
    }

    #[test]
    fn uniform_is_staggered_and_even() {
        let p = Pacing::FixedRate {
            ops_per_s: 400.0,
            arrivals: Arrivals::Uniform,
        };
        let start = Instant::now();
        let a = Schedule::new(&p, 0, 4, start, 1).unwrap();
        let b = Schedule::new(&p, 1, 4, start, 1).unwrap();
        assert_eq!(a.due(), start);
        assert_eq!(b.due().duration_since(start), Duration::from_micros(2500));
        let mut a = a;
        a.advance();
        assert_eq!(a.due().duration_since(start), Duration::from_millis(10));
    }

    #[test]
    fn steps_and_ramps_set_the_rate() {
        use crate::model::LoadStep;
        let p = Pacing::FixedRate {
            ops_per_s: 1000.0,
            arrivals: Arrivals::Uniform,
        };
        let step = |r: f64| LoadStep {
            duration_s: 2.0,
            threads: 4,
            rate_ops_per_s: Some(r),
        };
        let plan = PhasePlan {
            steps: vec![step(1000.0), step(3000.0)],
            ..PhasePlan::simple(Duration::from_secs(4), None, Duration::from_secs(1))
        };
        let start = Instant::now();
        let count = |from: f64, to: f64, plan: &PhasePlan| -> u64 {
            (0..4)
                .map(|w| {
                    let mut s = Schedule::planned(&p, w, 4, start, 3, plan).unwrap();
                    // Move past the starts before `from`.
                    s.pending_before(start + Duration::from_secs_f64(from));
                    s.pending_before(start + Duration::from_secs_f64(to))
                })
                .sum()
        };
        let first = count(0.0, 2.0, &plan);
        let second = count(2.0, 4.0, &plan);
        assert!((1998..=2002).contains(&first), "{first}");
        assert!((5998..=6002).contains(&second), "{second}");
        // A ramp from 0 to 1000/s over 2 s: half the starts of 2 s at the full rate.
        let ramp = PhasePlan {
            ramp: Some(Duration::from_secs(2)),
            ..PhasePlan::simple(Duration::from_secs(4), None, Duration::from_secs(1))
        };
        let ramped = count(0.0, 2.0, &ramp);
        assert!((995..=1005).contains(&ramped), "{ramped}");
        let after = count(2.0, 3.0, &ramp);
        assert!((995..=1005).contains(&after), "{after}");
    }

    #[test]
    fn closed_loop_has_no_schedule() {
        assert!(Schedule::new(&Pacing::ClosedLoop, 0, 1, Instant::now(), 1).is_none());
    }
}
