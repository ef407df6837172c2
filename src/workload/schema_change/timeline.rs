//! Pure arithmetic on a timeline: which intervals fall in a window, the rate there, the ops
//! lost against the rate before a DDL, and the longest span without a finished operation.

/// One interval of the timeline, in seconds from the timeline's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    pub start_s: f64,
    pub end_s: f64,
    pub ops: u64,
    /// The slowest operation that finished in the slot.
    pub max_latency_us: u64,
}

/// Operations finished in `[a, b]`, counting a slot that straddles an edge by the share of
/// its length inside (operations are taken as spread evenly within a slot).
pub fn ops_in(slots: &[Slot], a: f64, b: f64) -> f64 {
    slots
        .iter()
        .map(|s| {
            let len = s.end_s - s.start_s;
            if len <= 0.0 {
                return if s.end_s > a && s.end_s <= b {
                    s.ops as f64
                } else {
                    0.0
                };
            }
            let overlap = (s.end_s.min(b) - s.start_s.max(a)).max(0.0);
            s.ops as f64 * overlap / len
        })
        .sum()
}

/// Operations per second over `[a, b]` (0 for an empty window).
pub fn rate(slots: &[Slot], a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    ops_in(slots, a, b) / (b - a)
}

/// The slowest operation that may have run during `[a, b]`: of the slots that end after `a`,
/// those whose slowest operation started (its end minus its latency, at the earliest the
/// slot's start minus it) before `b`. Operations a DDL blocks finish just after it ends, so
/// their slot can start after `b`.
pub fn max_latency_us(slots: &[Slot], a: f64, b: f64) -> u64 {
    slots
        .iter()
        .filter(|s| s.end_s >= a && s.start_s - s.max_latency_us as f64 / 1e6 <= b)
        .map(|s| s.max_latency_us)
        .max()
        .unwrap_or(0)
}

/// The longest stretch of consecutive slots in which no operation finished (resolution: the
/// slot length), with where it starts; gaps between slots count as part of a stretch.
pub fn longest_stall(slots: &[Slot]) -> (f64, f64) {
    let mut best = (0.0, 0.0);
    let mut cur: Option<f64> = None;
    for s in slots {
        if s.ops == 0 {
            let start = *cur.get_or_insert(s.start_s);
            if s.end_s - start > best.0 {
                best = (s.end_s - start, start);
            }
        } else {
            cur = None;
        }
    }
    best
}

/// What a DDL cost the workload: ops it would have done at `baseline` ops/s during
/// `[a, b]` minus the ops it did. Negative when it went faster.
pub fn lost_ops(slots: &[Slot], baseline: f64, a: f64, b: f64) -> f64 {
    baseline * (b - a).max(0.0) - ops_in(slots, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(ops: &[u64]) -> Vec<Slot> {
        ops.iter()
            .enumerate()
            .map(|(i, &o)| Slot {
                start_s: i as f64,
                end_s: i as f64 + 1.0,
                ops: o,
                max_latency_us: if o == 0 { 0 } else { 1000 },
            })
            .collect()
    }

    #[test]
    fn windows_count_partial_slots_by_share() {
        let s = slots(&[100, 100, 0, 0, 50, 100]);
        assert_eq!(ops_in(&s, 0.0, 2.0), 200.0);
        assert_eq!(ops_in(&s, 0.5, 1.5), 100.0);
        assert_eq!(rate(&s, 0.0, 2.0), 100.0);
        // DDL from 2.0 to 4.5: 0 + 0 + 25 done, 250 expected.
        assert_eq!(lost_ops(&s, 100.0, 2.0, 4.5), 225.0);
        assert_eq!(rate(&s, 3.0, 3.0), 0.0);
    }

    #[test]
    fn stall_is_the_longest_run_of_empty_slots() {
        let s = slots(&[5, 0, 5, 0, 0, 0, 5, 0]);
        assert_eq!(longest_stall(&s), (3.0, 3.0));
        assert_eq!(longest_stall(&slots(&[1, 2])), (0.0, 0.0));
        assert_eq!(max_latency_us(&s, 0.0, 0.5), 1000);
        assert_eq!(max_latency_us(&s, 3.2, 5.5), 0);
        // An operation blocked by a DDL over [1.0, 3.5] finishes in the slot after it.
        let mut b = slots(&[5, 0, 0, 0, 5]);
        b[4].max_latency_us = 2_600_000;
        assert_eq!(max_latency_us(&b, 1.0, 3.5), 2_600_000);
    }
}
