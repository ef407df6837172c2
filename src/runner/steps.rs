//! Load that changes during a run: `--threads 4@2m,16@2m,64@2m` and `--rate 1000@60s,2000@60s`
//! (HammerDB's step workloads). A measured run goes through every step in order; its figures
//! are kept per step as well as for the whole run. A list without `@` is not steps: `--threads
//! 1,4,16` stays a sweep of separate points.
//!
//! How a step runs: the session opens the largest thread count of the steps; in a step of N
//! threads connections 0..N do work and the others wait, connected and idle (a closed loop), or
//! get no share of the rate (an open loop: each working connection takes rate / N). An
//! operation belongs to the step in which it started (an open loop: in which it was due).
//!
//! The steps (`LoadStep`) and a phase's plan (`PhasePlan`) are plain data in the model; here:
//! the command line's steps parsed and combined into them.

use std::time::Duration;

use crate::model::LoadStep;

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
}
