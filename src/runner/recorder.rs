//! One set of latency histograms per event-loop thread, shared by the workers (tasks) of that
//! thread, instead of one set per worker.
//!
//! At 1,024 connections the per-worker sets (phase, interval, per-kind and response
//! histograms, each grown to the worst latency seen) were most of the client's memory: about
//! 0.35 MB per connection (BENCHMARKS.md, "Endurance and scale"). The workers of one loop run
//! on one thread, so they can record into one set through a `RefCell` without a lock, and the
//! sums are the same: recording a value into a shared histogram is adding two histograms
//! bucket by bucket. Counters (ops, rows, errors) stay per worker, as before.
//!
//! Hand-over, so that the collector still sees everything exactly once:
//! - phase histograms: the last worker of the loop to finish a phase takes them and sends them
//!   with its `PhaseDone`; the others send empty ones;
//! - interval histograms are kept per interval index; the index `i` is handed over (with the
//!   `Interval` message of the worker whose move made it so) once every worker of the loop has
//!   moved past `i`, so no later operation can land in it. Messages of one thread arrive in the
//!   order they were sent, so the collector has the histogram of `i` before any message that
//!   lets it close `i`.

use std::collections::BTreeMap;

use crate::measure::LatencyHist;

/// A worker's place in its loop's recorder.
pub(super) type Slot = usize;

pub(super) struct LoopRecorder {
    /// The phase the histograms belong to (phase ids start at 1).
    phase: u64,
    /// Each worker's current interval index; `u32::MAX` once it finished the phase.
    cur: Vec<u32>,
    /// Workers whose connection was lost for good (they take part in no later phase).
    gone: Vec<bool>,
    /// Workers in the current phase, and how many of them have finished it.
    in_phase: usize,
    finished: usize,
    hist: LatencyHist,
    response: Option<LatencyHist>,
    by_kind: Vec<LatencyHist>,
    /// Per node of a multi-host target (empty for one node).
    by_node: Vec<LatencyHist>,
    intervals: BTreeMap<u32, LatencyHist>,
    /// `--connect per-transaction`: each operation's set-up (connect and the driver's setup).
    connect: LatencyHist,
    /// Per load step (empty without steps): service and response times.
    by_step: Vec<LatencyHist>,
    by_step_response: Vec<LatencyHist>,
}

/// Where an operation is recorded: its interval, kind, node and load step.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Place {
    pub idx: u32,
    pub kind: u8,
    pub node: Option<usize>,
    pub step: Option<usize>,
}

/// What the last worker of a loop to finish a phase hands over.
pub(super) struct PhaseHists {
    pub hist: LatencyHist,
    pub response: LatencyHist,
    pub by_kind: Vec<LatencyHist>,
    pub by_node: Vec<LatencyHist>,
    pub connect: LatencyHist,
    pub by_step: Vec<LatencyHist>,
    pub by_step_response: Vec<LatencyHist>,
}

impl LoopRecorder {
    pub fn new(workers: usize) -> Self {
        LoopRecorder {
            phase: 0,
            cur: vec![u32::MAX; workers],
            gone: vec![false; workers],
            in_phase: 0,
            finished: 0,
            hist: LatencyHist::new(),
            response: None,
            by_kind: Vec::new(),
            by_node: Vec::new(),
            intervals: BTreeMap::new(),
            connect: LatencyHist::new(),
            by_step: Vec::new(),
            by_step_response: Vec::new(),
        }
    }

    /// A worker starts phase `id`; the first of its loop to do so resets the recorder, so that
    /// every worker's interval index counts before any of them can move past index 0.
    pub fn start_phase(&mut self, id: u64) {
        if self.phase == id {
            return;
        }
        self.phase = id;
        self.in_phase = 0;
        self.finished = 0;
        for (c, gone) in self.cur.iter_mut().zip(&self.gone) {
            *c = if *gone { u32::MAX } else { 0 };
            self.in_phase += !*gone as usize;
        }
        self.hist.reset();
        self.response = None;
        self.by_kind.clear();
        self.by_node.clear();
        self.intervals.clear();
        self.connect.reset();
        self.by_step.clear();
        self.by_step_response.clear();
    }

    /// A worker connected (or failed to): only connected workers take part in phases.
    pub fn set_gone(&mut self, slot: Slot) {
        self.gone[slot] = true;
    }

    /// One successful operation that ended in interval `idx`, on node `node` of a multi-host
    /// target (None: one node, nothing kept per node), in load step `step` (None: no steps).
    #[inline]
    pub fn record(&mut self, at: Place, us: u64, response_us: Option<u64>) {
        let Place {
            idx,
            kind,
            node,
            step,
        } = at;
        if let Some(i) = step {
            grown(&mut self.by_step, i).record_us(us);
            if let Some(r) = response_us {
                grown(&mut self.by_step_response, i).record_us(r);
            }
        }
        self.hist.record_us(us);
        grown(&mut self.by_kind, kind as usize).record_us(us);
        if let Some(n) = node {
            grown(&mut self.by_node, n).record_us(us);
        }
        if let Some(r) = response_us {
            self.response
                .get_or_insert_with(LatencyHist::new)
                .record_us(r);
        }
        // The entry of the current interval is almost always the last one.
        match self.intervals.last_key_value() {
            Some((&last, _)) if last == idx => {}
            _ => {
                self.intervals.entry(idx).or_default();
            }
        }
        self.intervals
            .get_mut(&idx)
            .expect("inserted above")
            .record_us(us);
    }

    /// `--connect per-transaction`: one operation's set-up time.
    pub fn record_connect(&mut self, us: u64) {
        self.connect.record_us(us);
    }

    /// Worker `slot` moves to interval `idx` (`u32::MAX`: it finished the phase). Returns the
    /// intervals every worker of the loop has now left, with their histograms.
    pub fn move_to(&mut self, slot: Slot, idx: u32) -> Vec<(u32, LatencyHist)> {
        self.cur[slot] = idx;
        let min = self.cur.iter().copied().min().unwrap_or(u32::MAX);
        let mut out = Vec::new();
        while let Some(entry) = self.intervals.first_entry() {
            if *entry.key() >= min {
                break;
            }
            out.push(entry.remove_entry());
        }
        out
    }

    /// Worker `slot` finished the phase (and is gone for good when `lost`). The last one of
    /// the loop gets the phase's histograms.
    pub fn finish(&mut self, slot: Slot, lost: bool) -> Option<PhaseHists> {
        self.finished += 1;
        if lost {
            self.gone[slot] = true;
        }
        (self.finished == self.in_phase).then(|| PhaseHists {
            hist: std::mem::take(&mut self.hist),
            response: self.response.take().unwrap_or_default(),
            by_kind: std::mem::take(&mut self.by_kind),
            by_node: std::mem::take(&mut self.by_node),
            connect: std::mem::take(&mut self.connect),
            by_step: std::mem::take(&mut self.by_step),
            by_step_response: std::mem::take(&mut self.by_step_response),
        })
    }
}

/// Slot `i` of `v`, grown on first use.
pub(super) fn grown(v: &mut Vec<LatencyHist>, i: usize) -> &mut LatencyHist {
    if v.len() <= i {
        v.resize_with(i + 1, LatencyHist::new);
    }
    &mut v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_handed_over_once_every_worker_has_left_them() {
        let mut r = LoopRecorder::new(2);
        r.start_phase(1);
        r.record(
            Place {
                idx: 0,
                kind: 0,
                node: None,
                step: None,
            },
            10,
            None,
        );
        r.record(
            Place {
                idx: 0,
                kind: 0,
                node: Some(1),
                step: None,
            },
            20,
            None,
        );
        r.record(
            Place {
                idx: 1,
                kind: 0,
                node: None,
                step: None,
            },
            30,
            None,
        );
        // Worker 0 moves on; worker 1 is still in interval 0: nothing can be handed over.
        assert!(r.move_to(0, 1).is_empty());
        let out = r.move_to(1, 2);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, out[0].1.count()), (0, 2));
        r.record(
            Place {
                idx: 2,
                kind: 0,
                node: None,
                step: None,
            },
            40,
            None,
        );
        assert_eq!(r.move_to(0, u32::MAX).len(), 1); // interval 1 (worker 1 is at 2)
        let rest = r.move_to(1, u32::MAX);
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].0, rest[0].1.count()), (2, 1));
        assert!(r.finish(0, false).is_none());
        let h = r
            .finish(1, false)
            .expect("the last worker takes the phase histograms");
        assert_eq!(h.hist.count(), 4);
        assert_eq!(h.by_kind[0].count(), 4);
        assert_eq!((h.by_node.len(), h.by_node[1].count()), (2, 1));
        assert_eq!(h.response.count(), 0);
    }

    #[test]
    fn a_lost_worker_takes_no_part_in_later_phases() {
        let mut r = LoopRecorder::new(3);
        r.start_phase(1);
        r.record(
            Place {
                idx: 0,
                kind: 1,
                node: None,
                step: None,
            },
            5,
            Some(7),
        );
        r.move_to(0, u32::MAX);
        r.move_to(1, u32::MAX);
        r.move_to(2, u32::MAX);
        assert!(r.finish(1, true).is_none());
        assert!(r.finish(0, false).is_none());
        let h = r.finish(2, false).unwrap();
        assert_eq!((h.by_kind.len(), h.by_kind[1].count()), (2, 1));
        assert_eq!(h.response.count(), 1);
        // Phase 2: two workers; the second start of the phase does not reset it again.
        r.start_phase(2);
        r.record(
            Place {
                idx: 0,
                kind: 0,
                node: None,
                step: None,
            },
            5,
            None,
        );
        r.start_phase(2);
        assert_eq!(r.move_to(0, 1).len(), 0, "worker 2 is still in interval 0");
        assert_eq!(r.move_to(2, 1).len(), 1);
        assert!(r.finish(0, false).is_none());
        let h = r.finish(2, false).unwrap();
        assert_eq!(h.hist.count(), 1);
    }
}
