//! Load that changes during a run: `--threads 4@2m,16@2m,64@2m` and `--rate 1000@60s,2000@60s`
//! (HammerDB's step workloads). A measured run goes through every step in order; its figures
//! are kept per step as well as for the whole run. A list without `@` is not steps: `--threads
//! 1,4,16` stays a sweep of separate points.
//!
//! How a step runs: the session opens the largest thread count of the steps; in a step of N
//! threads connections 0..N do work and the others wait, connected and idle (a closed loop), or
//! get no share of the rate (an open loop: each working connection takes rate / N). An
//! operation belongs to the step in which it started (an open loop: in which it was due).

use std::time::Duration;

use serde::Serialize;

/// One step of a load profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadStep {
    pub duration_s: f64,
    /// Connections doing work in this step.
    pub threads: usize,
    /// Open loop: the total rate during this step (operations per second over all
    /// connections); None in a closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ops_per_s: Option<f64>,
}

impl LoadStep {
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
    }

    /// "16 threads", "2000 ops/s", "16 threads, 2000 ops/s": how the outputs name it.
    pub fn label(&self, stepped_threads: bool) -> String {
        match (stepped_threads, self.rate_ops_per_s) {
            (true, Some(r)) => format!("{} threads, {r} ops/s", self.threads),
            (false, Some(r)) => format!("{r} ops/s"),
            (_, None) => format!("{} threads", self.threads),
        }
    }
}

/// `VALUE@DURATION,...` as (value, duration) pairs; None when `s` has no `@` (not steps).
/// Every item must have its `@DURATION`; `value` parses one item's value.
pub fn parse<T>(
    s: &str,
    value: impl Fn(&str) -> Result<T, String>,
    duration: impl Fn(&str) -> Result<Duration, String>,
) -> Option<Result<Vec<(T, Duration)>, String>> {
    if !s.contains('@') {
        return None;
    }
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        let Some((v, d)) = item.split_once('@') else {
            return Some(Err(format!(
                "'{item}' in '{s}' has no @DURATION: steps are VALUE@DURATION,VALUE@DURATION,... (e.g. 4@2m,16@2m); a list without @ is a sweep of separate points"
            )));
        };
        let v = match value(v.trim()) {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        };
        let d = match duration(d.trim()) {
            Ok(d) if d >= Duration::from_millis(100) => d,
            Ok(_) => {
                return Some(Err(format!(
                    "step '{item}': a step must last at least 100ms"
                )))
            }
            Err(e) => return Some(Err(e)),
        };
        out.push((v, d));
    }
    Some(Ok(out))
}

/// The steps of a run from the steps of `--threads` and of `--rate` (either or both; both must
/// have the same lengths), `threads` and `rate` filling in the one not stepped.
pub fn combine(
    threads: Option<&[(usize, Duration)]>,
    rates: Option<&[(f64, Duration)]>,
    fixed_threads: usize,
    fixed_rate: Option<f64>,
) -> Result<Vec<LoadStep>, String> {
    match (threads, rates) {
        (None, None) => Ok(Vec::new()),
        (Some(t), None) => Ok(t
            .iter()
            .map(|&(n, d)| LoadStep {
                duration_s: d.as_secs_f64(),
                threads: n,
                rate_ops_per_s: fixed_rate,
            })
            .collect()),
        (None, Some(r)) => Ok(r
            .iter()
            .map(|&(v, d)| LoadStep {
                duration_s: d.as_secs_f64(),
                threads: fixed_threads,
                rate_ops_per_s: Some(v),
            })
            .collect()),
        (Some(t), Some(r)) => {
            let same = t.len() == r.len() && t.iter().zip(r).all(|(a, b)| a.1 == b.1);
            if !same {
                return Err(
                    "--threads and --rate both have steps: give them the same number of steps with the same durations (or step only one of them)".into(),
                );
            }
            Ok(t.iter()
                .zip(r)
                .map(|(&(n, d), &(v, _))| LoadStep {
                    duration_s: d.as_secs_f64(),
                    threads: n,
                    rate_ops_per_s: Some(v),
                })
                .collect())
        }
    }
}

/// What one phase runs: its length, its stop conditions, its interval, and how the load
/// changes over it.
#[derive(Debug, Clone)]
pub struct PhasePlan {
    pub duration: Duration,
    /// `--events N`: operations over all connections, at most.
    pub events: Option<u64>,
    pub interval: Duration,
    /// The load's steps (empty: the session's threads and pacing for the whole phase).
    pub steps: Vec<LoadStep>,
    /// Open loop: the rate rises linearly from 0 over this long from the phase's start, then
    /// holds (a warm-up's ramp); ignored in a closed loop.
    pub ramp: Option<Duration>,
}

impl PhasePlan {
    /// One load for the whole phase.
    pub fn simple(duration: Duration, events: Option<u64>, interval: Duration) -> Self {
        PhasePlan {
            duration,
            events,
            interval,
            steps: Vec::new(),
            ramp: None,
        }
    }

    /// Seconds from the phase's start to the start of each step.
    pub fn step_starts(&self) -> Vec<f64> {
        let mut t = 0.0;
        self.steps
            .iter()
            .map(|s| {
                let start = t;
                t += s.duration_s;
                start
            })
            .collect()
    }

    /// The step at `offset_s` seconds from the phase's start (the last one after the end).
    pub fn step_at(&self, offset_s: f64) -> usize {
        let mut end = 0.0;
        for (i, s) in self.steps.iter().enumerate() {
            end += s.duration_s;
            if offset_s < end {
                return i;
            }
        }
        self.steps.len().saturating_sub(1)
    }

    /// Closed loop: whether connection `w` works at `offset_s`; if not, when it next does
    /// (seconds from the phase's start), None when it does not any more.
    pub fn next_active(&self, w: usize, offset_s: f64) -> Option<f64> {
        if self.steps.is_empty() {
            return Some(offset_s);
        }
        let starts = self.step_starts();
        let first = self.step_at(offset_s);
        (first..self.steps.len())
            .find(|&i| w < self.steps[i].threads)
            .map(|i| if i == first { offset_s } else { starts[i] })
    }

    /// Open loop: connection `w`'s expected operations per second over the phase, as pieces
    /// (length s, rate at the start, rate at the end) with the last one lasting for ever;
    /// `rate` and `workers` are the session's when the steps do not set them.
    pub fn worker_rates(&self, w: usize, workers: usize, rate: f64) -> Vec<(f64, f64, f64)> {
        let share = |total: f64, n: usize| if w < n { total / n.max(1) as f64 } else { 0.0 };
        let mut out = Vec::new();
        let first = self.steps.first().map_or(share(rate, workers), |s| {
            share(s.rate_ops_per_s.unwrap_or(rate), s.threads)
        });
        if let Some(r) = self.ramp.filter(|r| !r.is_zero()) {
            out.push((r.as_secs_f64(), 0.0, first));
        }
        for s in &self.steps {
            let v = share(s.rate_ops_per_s.unwrap_or(rate), s.threads);
            out.push((s.duration_s, v, v));
        }
        let last = out.last().map_or(first, |p| p.2);
        out.push((f64::INFINITY, last, last));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config's duration parser stands above the runner: a small one for the tests.
    fn secs(s: &str) -> Result<Duration, String> {
        let (n, mul) = if let Some(v) = s.strip_suffix("ms") {
            (v, 0.001)
        } else if let Some(v) = s.strip_suffix('m') {
            (v, 60.0)
        } else {
            (s.strip_suffix('s').unwrap_or(s), 1.0)
        };
        n.parse::<f64>()
            .map(|v| Duration::from_secs_f64(v * mul))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn steps_parse_and_a_plain_list_is_no_steps() {
        let n = |v: &str| v.parse::<usize>().map_err(|e| e.to_string());
        assert!(parse("1,4,16", n, secs).is_none());
        let s = parse("4@2m, 16@30s", n, secs).unwrap().unwrap();
        assert_eq!(
            s,
            vec![(4, Duration::from_secs(120)), (16, Duration::from_secs(30))]
        );
        let e = parse("4@2m,16", n, secs).unwrap().unwrap_err();
        assert!(e.contains("no @DURATION"), "{e}");
        assert!(parse("4@10ms", n, secs).unwrap().is_err());
        assert!(parse("x@1s", n, secs).unwrap().is_err());
    }

    #[test]
    fn combined_steps_need_the_same_lengths() {
        let t = [(4, Duration::from_secs(1)), (8, Duration::from_secs(2))];
        let r = [
            (100.0, Duration::from_secs(1)),
            (200.0, Duration::from_secs(2)),
        ];
        let both = combine(Some(&t[..]), Some(&r[..]), 8, None).unwrap();
        assert_eq!(both[1].threads, 8);
        assert_eq!(both[1].rate_ops_per_s, Some(200.0));
        let r2 = [(100.0, Duration::from_secs(1))];
        assert!(combine(Some(&t[..]), Some(&r2[..]), 8, None).is_err());
        let only = combine(None, Some(&r[..]), 3, None).unwrap();
        assert_eq!(only[0].threads, 3);
    }

    #[test]
    fn plans_say_where_each_connection_works() {
        let p = PhasePlan {
            steps: vec![
                LoadStep {
                    duration_s: 2.0,
                    threads: 1,
                    rate_ops_per_s: None,
                },
                LoadStep {
                    duration_s: 3.0,
                    threads: 4,
                    rate_ops_per_s: None,
                },
            ],
            ..PhasePlan::simple(Duration::from_secs(5), None, Duration::from_secs(1))
        };
        assert_eq!(p.step_at(1.9), 0);
        assert_eq!(p.step_at(2.0), 1);
        assert_eq!(p.step_at(9.0), 1);
        assert_eq!(p.next_active(0, 0.5), Some(0.5));
        assert_eq!(p.next_active(2, 0.5), Some(2.0));
        assert_eq!(p.next_active(5, 0.5), None);
        let rates = PhasePlan {
            steps: vec![
                LoadStep {
                    duration_s: 2.0,
                    threads: 2,
                    rate_ops_per_s: Some(100.0),
                },
                LoadStep {
                    duration_s: 2.0,
                    threads: 4,
                    rate_ops_per_s: Some(400.0),
                },
            ],
            ramp: Some(Duration::from_secs(1)),
            ..p
        };
        let r = rates.worker_rates(3, 4, 0.0);
        assert_eq!(r[0], (1.0, 0.0, 0.0));
        assert_eq!(r[1], (2.0, 0.0, 0.0));
        assert_eq!(r[2], (2.0, 100.0, 100.0));
        assert_eq!(r[3].1, 100.0);
        let r0 = rates.worker_rates(0, 4, 0.0);
        assert_eq!(r0[0], (1.0, 0.0, 50.0));
    }
}
