//! What the sweep makes of load steps (`--threads N@T,...`, `--rate R@T,...`) and of
//! `--connect per-transaction`: the plan of each phase, and the parts of a run's record and
//! line they add (docs/method.md, "Load steps"; docs/connections.md).

use std::time::Duration;

use super::Bench;
use crate::config::RunConfig;
use crate::model::{
    LoadStep, Pacing, PhasePlan, PhaseResult, PhaseSummary, RunRecord, StepRecord, TxConnectRecord,
};

/// The plan of a measured run at `threads` connections: the run's steps (each point's own
/// thread count in every step when only the rate steps).
pub(super) fn run_plan(
    cfg: &RunConfig,
    threads: usize,
    duration: Duration,
    events: Option<u64>,
) -> PhasePlan {
    PhasePlan {
        steps: point_steps(cfg, threads),
        ..PhasePlan::simple(duration, events, cfg.report_interval())
    }
}

/// The plan of a warm-up: the first step's load for the whole warm-up and, in an open loop,
/// a ramp from 0 to its rate over the first half (the rate does not start as a burst on cold
/// caches); the second half runs at the first step's rate.
pub(super) fn warmup_plan(cfg: &RunConfig, threads: usize, pacing: Pacing) -> PhasePlan {
    let steps = point_steps(cfg, threads)
        .first()
        .map(|s| {
            vec![LoadStep {
                duration_s: cfg.warmup_s,
                ..*s
            }]
        })
        .unwrap_or_default();
    PhasePlan {
        steps,
        ramp: matches!(pacing, Pacing::FixedRate { .. }).then(|| cfg.warmup() / 2),
        ..PhasePlan::simple(cfg.warmup(), None, cfg.report_interval())
    }
}

fn point_steps(cfg: &RunConfig, threads: usize) -> Vec<LoadStep> {
    cfg.steps
        .iter()
        .map(|s| LoadStep {
            threads: if cfg.step_threads { s.threads } else { threads },
            ..*s
        })
        .collect()
}

/// The warm-up's summary, with its ramp and the starts it left undone (an open loop).
pub(super) fn warmup_summary(wu: &PhaseResult, plan: &PhasePlan) -> PhaseSummary {
    let backlog = wu.open_loop.as_ref().map(|(_, s)| s.backlog);
    if let Some(n) = backlog.filter(|n| *n > 0) {
        eprintln!(
            "warm-up: {n} start(s) due were never started (the server fell behind); they are not carried into the measured runs"
        );
    }
    PhaseSummary {
        ops: wu.ops,
        elapsed_s: wu.elapsed.as_secs_f64(),
        ops_per_s: wu.ops as f64 / wu.elapsed.as_secs_f64().max(1e-9),
        errors: wu.errors.total(),
        ramp_s: wu
            .open_loop
            .as_ref()
            .and(plan.ramp)
            .map(|r| r.as_secs_f64()),
        backlog_ops: backlog,
    }
}

/// The run's per-step records and its per-transaction connections, when it had them.
pub(super) fn add_to_record(rec: &mut RunRecord, res: &PhaseResult) {
    let elapsed_s = res.elapsed.as_secs_f64();
    rec.steps = (res.by_step.iter().enumerate())
        .map(|(i, s)| {
            // An interrupted run's last step may be shorter than planned.
            let len = s.step.duration_s.min((elapsed_s - s.start_s).max(1e-9));
            StepRecord {
                step: i as u32 + 1,
                start_s: s.start_s,
                duration_s: s.step.duration_s,
                threads: s.step.threads,
                target_ops_per_s: s.step.rate_ops_per_s,
                ops: s.ops,
                ops_per_s: s.ops as f64 / len,
                errors: s.errors,
                latency_us: s.hist.summary(),
                response_us: s.response.as_ref().map(|h| h.summary()),
                intended_ops: s.response.as_ref().map(|_| s.intended),
                backlog_ops: s.response.as_ref().map(|_| s.backlog),
                histogram_hdr_v2: Some(s.hist.encode()),
                response_hdr_v2: s.response.as_ref().map(|h| h.encode()),
            }
        })
        .collect();
    rec.connect_per_transaction = res.per_transaction.as_ref().map(|t| TxConnectRecord {
        connections: t.opened,
        setup_us: t.setup.summary(),
        setup_share: t.setup.mean_us() / res.hist.mean_us().max(1e-9),
        setup_hdr_v2: Some(t.setup.encode()),
    });
}

/// The lines under a run's line: its connections' set-up, and each step.
pub(super) fn say(rec: &RunRecord) {
    if let Some(c) = &rec.connect_per_transaction {
        eprintln!(
            "{:<30} per transaction: {} connection(s), set-up p50 {} us  p99 {} us  mean {:.0} us ({:.0}% of the mean latency)",
            "",
            c.connections,
            c.setup_us.p50_us,
            c.setup_us.p99_us,
            c.setup_us.mean_us,
            c.setup_share * 100.0
        );
    }
    for s in &rec.steps {
        let target = s
            .target_ops_per_s
            .map(|r| format!(" (target {r:.0}, {:+.1}%)", (s.ops_per_s / r - 1.0) * 100.0))
            .unwrap_or_default();
        let response = s
            .response_us
            .map(|r| format!("  response p95 {} us", r.p95_us))
            .unwrap_or_default();
        let backlog = s
            .backlog_ops
            .filter(|n| *n > 0)
            .map(|n| format!("  backlog {n}"))
            .unwrap_or_default();
        eprintln!(
            "{:<30} step {} at {:.0} s: {} thds  {:>10.1} ops/s{target}  p95 {} us  p99 {} us{response}  errors {}{backlog}",
            "",
            s.step,
            s.start_s,
            s.threads,
            s.ops_per_s,
            s.latency_us.p95_us,
            s.latency_us.p99_us,
            s.errors
        );
    }
}

/// `--connect per-transaction` and load steps apply to the runner's workers: a workload that
/// measured nothing on them (sql-bench runs on one connection of its own) says so in the
/// result's notes and on stderr, rather than look as if it had used them.
pub(super) fn note_unapplied(h: &mut Bench) {
    let runs: Vec<&RunRecord> = h.doc.points.iter().flat_map(|p| &p.runs).collect();
    let mut notes = Vec::new();
    // Nothing measured at all (a signal during the load): nothing to say.
    if runs.is_empty() && h.doc.sections.is_empty() {
        return;
    }
    if !h.cfg.connect.is_per_run() && !runs.iter().any(|r| r.connect_per_transaction.is_some()) {
        notes.push(format!(
            "--connect {} did not apply: {} measured nothing on the runner's connections",
            h.cfg.connect.name(),
            h.cfg.workload
        ));
    }
    if !h.cfg.steps.is_empty() && !runs.iter().any(|r| !r.steps.is_empty()) {
        notes.push(format!(
            "the load steps did not apply: {} measured nothing in the sweep's runs",
            h.cfg.workload
        ));
    }
    for n in notes {
        eprintln!("note: {n}");
        h.doc.notes.push(n);
    }
}
