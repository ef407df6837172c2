//! The measured phases of a workload's own, as the contract declares them (`Bench::phase`,
//! `Bench::measure`, `Bench::span`): each is measured the way the sweep measures its runs
//! (the host's, the client's and the server's CPU, the server's counters, the disturbance,
//! the live outputs) and lands in the result as a point, saved at once.

use std::time::Duration;

use super::sweep::{self, Merged, RunAsk};
use super::{record_counted, Bench};
use crate::contract::{Counted, HostSample, Span, Tally};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::{delta, LatencyHist};
use crate::model::{Aggregate, Point, RunRecord};

impl<'a> Bench<'a> {
    /// One measured run of operation `op` of the run's workload at `threads` connections for
    /// `duration` on the shared runner, measured as the sweep measures its runs; it lands in
    /// the result as point `name` (saved) and its record is returned. None when a signal
    /// ended it before anything ran; an error when every connection was lost (the point is
    /// kept).
    pub fn phase(
        &mut self,
        name: &str,
        op: usize,
        threads: usize,
        duration: Duration,
    ) -> Result<Option<RunRecord>> {
        self.refuse_steps(name)?;
        let w = self.workload.clone();
        let pacing = w.phase_pacing(op).unwrap_or(self.cfg.pacing);
        let (mut session, loops, connect) = sweep::open(self, w.as_ref(), op, threads, pacing)
            .map_err(|e| e.context(format!("{name} at {threads} threads")))?;
        let ask = RunAsk {
            op_name: name,
            threads,
            run: (1, 1),
            duration,
            events: None,
            pacing,
            loops: &loops,
        };
        let mut merged = Merged::new();
        let ran = sweep::measured_run(self, &mut session, w.as_ref(), &ask, &mut merged)?;
        drop(session);
        let Some((rec, lost_all)) = ran else {
            return Ok(None);
        };
        let mut point = self.point_of(name, threads, rec.clone(), &merged.hist);
        point.connect = Some(connect.into());
        self.doc.points.push(point);
        self.save()?;
        match lost_all {
            Some(why) => Err(Error::run(why)),
            None => Ok(Some(rec)),
        }
    }

    /// A phase the workload drives itself: `body` runs it (on `conn()`, or connections of
    /// its own) and returns what it counted; the harness measures the time, the CPU of the
    /// client, the server and the host, and the server's counters around it. It lands in
    /// the result as point `name` at `threads` connections (saved); its record is returned.
    pub fn measure<F>(&mut self, name: &str, threads: usize, body: F) -> Result<RunRecord>
    where
        F: FnOnce(&mut Bench<'a>) -> Result<Tally>,
    {
        self.refuse_steps(name)?;
        if !self.cfg.connect.is_per_run() {
            return Err(Error::usage(format!(
                "--connect {}: {name} of {} runs on connections the workload opens itself, not on the runner's workers; leave --connect out",
                self.cfg.connect.name(),
                self.workload.name()
            )));
        }
        let rt = self.rt;
        let before = self.admin.counters(rt);
        let span = self.span();
        let tally = body(self)?;
        let end = span.sample();
        let after = self.admin.counters(rt);
        let counted = Counted {
            run: 1,
            ops: tally.ops,
            rows: tally.rows,
            statements: tally.statements,
            elapsed_s: end.at.duration_since(span.start.at).as_secs_f64(),
            errors: &tally.errors,
            error_samples: &tally.error_samples,
            hist: &tally.hist,
            client_cpu: end.client.since(span.start.client),
            workers_lost: tally.workers_lost,
            interrupted: interrupt::signal().is_some(),
        };
        let mut rec = span.record(counted, Some(&end));
        if !before.is_empty() && !after.is_empty() {
            rec.server_counters = delta(&before, &after);
            self.live.server_counters(&rec.server_counters);
        }
        rec.percentiles_us = tally.hist.percentiles_us(&self.cfg.extra_percentiles);
        sweep::say_run((name, threads, (1, 1)), &rec);
        let point = self.point_of(name, threads, rec.clone(), &tally.hist);
        self.doc.points.push(point);
        self.save()?;
        Ok(rec)
    }

    /// Load steps are the sweep's: a phase of the workload's own has its own length.
    fn refuse_steps(&self, name: &str) -> Result<()> {
        if self.cfg.steps.is_empty() {
            return Ok(());
        }
        Err(Error::usage(format!(
            "load steps (--threads N@T,... / --rate R@T,...) run in the sweep's measured runs; {name} of {} is a phase of the workload's own: give one --threads / --rate",
            self.workload.name()
        )))
    }

    /// A span the workload measures and records itself, begun now (`Span::record` ends it).
    pub fn span(&self) -> Span {
        Span {
            start: HostSample::now(self.server_pid),
            server_pid: self.server_pid,
            disturbed_above_cpus: self.cfg.disturbed_above_cpus,
        }
    }

    /// The point of one measured run of the run's workload.
    fn point_of(&self, name: &str, threads: usize, rec: RunRecord, hist: &LatencyHist) -> Point {
        let runs = vec![rec];
        let mut aggregate = Aggregate::of(&runs, hist.summary());
        aggregate.percentiles_us = hist.percentiles_us(&self.cfg.extra_percentiles);
        Point {
            workload: self.workload.name().to_string(),
            operation: name.to_string(),
            threads,
            runs,
            aggregate,
            ..Default::default()
        }
    }
}

impl Span {
    /// The host, this process and the server now (a span's end, or a part's).
    pub fn sample(&self) -> HostSample {
        HostSample::now(self.server_pid)
    }

    /// The record of a run counted as `c` from the span's start to `end` (a `sample`):
    /// counts, latencies, errors, the CPU of the client, of the server and of the others on
    /// the host, and whether they disturbed it (`run --disturbed-above`). Without `end`, a
    /// record of the counts alone (a partial result saved while the span runs).
    pub fn record(&self, c: Counted, end: Option<&HostSample>) -> RunRecord {
        let (procs, busy_s) = match end {
            Some(e) => ((self.start.server, e.server), e.busy_s - self.start.busy_s),
            None => ((None, None), 0.0),
        };
        record_counted(c, procs, busy_s, self.disturbed_above_cpus)
    }
}
