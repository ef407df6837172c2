//! Pacing: when a worker starts its next operation. Closed loop starts it as soon as the last
//! one finished; fixed rate (open loop) follows a schedule of intended starts, so that a slow
//! server makes requests wait (queueing shows in the response time) instead of slowing the
//! client down (coordinated omission).
//!
//! The schedule is one clock per worker (the next intended start), never a queue of pending
//! events: memory stays constant however far behind the server falls (sysbench 1.0.20 keeps a
//! bounded event queue and aborts with "event queue is full").

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::rng::Rng;

/// How intended starts are spread in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process): independent users, the usual model of load.
    Poisson,
    /// Equal gaps.
    Uniform,
}

impl Arrivals {
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Uniform => "uniform",
        }
    }
}

/// When operations start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Pacing {
    /// Each worker starts its next operation as soon as the previous one ends.
    ClosedLoop,
    /// Operations start on a schedule: `ops_per_s` in total over all workers of the session.
    FixedRate { ops_per_s: f64, arrivals: Arrivals },
}

/// One worker's schedule clock: its share of the rate, its next intended start.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Mean gap between this worker's intended starts, in seconds.
    gap_s: f64,
    arrivals: Arrivals,
    rng: Rng,
    next: Instant,
}

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
        let Pacing::FixedRate {
            ops_per_s,
            arrivals,
        } = *pacing
        else {
            return None;
        };
        let workers = workers.max(1);
        let gap_s = workers as f64 / ops_per_s;
        let mut s = Schedule {
            gap_s,
            arrivals,
            rng: Rng::keyed(seed, 0x9ace, w as u64),
            next: start,
        };
        s.next = match arrivals {
            Arrivals::Uniform => start + secs(gap_s * w as f64 / workers as f64),
            Arrivals::Poisson => start + secs(s.gap()),
        };
        Some(s)
    }

    /// The next intended start.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Move to the following intended start (call once the due operation has started).
    pub fn advance(&mut self) {
        let g = self.gap();
        self.next += secs(g);
    }

    /// Intended starts from the current one up to (not including) `until` that never started:
    /// the backlog when a phase ends. Walks the schedule (no allocation); the walk is as long
    /// as the missed schedule, which is bounded by rate × phase length.
    pub fn pending_before(&mut self, until: Instant) -> u64 {
        match self.arrivals {
            Arrivals::Uniform => {
                if self.next >= until {
                    return 0;
                }
                let span = until.duration_since(self.next).as_secs_f64();
                (span / self.gap_s).floor() as u64 + 1
            }
            Arrivals::Poisson => {
                let mut n = 0;
                while self.next < until {
                    n += 1;
                    self.advance();
                }
                n
            }
        }
    }

    fn gap(&mut self) -> f64 {
        match self.arrivals {
            Arrivals::Uniform => self.gap_s,
            Arrivals::Poisson => {
                // Inverse transform: -ln(U) with U in (0, 1].
                let u = ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
                -u.ln() * self.gap_s
            }
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

/// What the schedule of one phase looked like (open loop only); adds across workers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScheduleStats {
    /// Intended starts before the deadline (started + backlog).
    pub intended: u64,
    /// Intended starts before the deadline that had not started when the phase ended.
    pub backlog: u64,
    /// Operations that started later than their intended start by more than `LATE`.
    pub late: u64,
    /// The largest delay of an actual start behind its intended start.
    pub max_lag: Duration,
}

/// A start this much behind schedule counts as late (the event loop's timer has 1 ms ticks,
/// so smaller delays are the timer, not the server).
pub const LATE: Duration = Duration::from_millis(2);

impl ScheduleStats {
    pub fn merge(&mut self, o: &ScheduleStats) {
        self.intended += o.intended;
        self.backlog += o.backlog;
        self.late += o.late;
        self.max_lag = self.max_lag.max(o.max_lag);
    }
}

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
    fn closed_loop_has_no_schedule() {
        assert!(Schedule::new(&Pacing::ClosedLoop, 0, 1, Instant::now(), 1).is_none());
    }
}
