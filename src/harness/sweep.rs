//! The sweep: operations x thread counts on the shared runner, and the record of one measured
//! run (its counters, CPU and latencies) that every run shape builds its results from.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{steps, Bench};
use crate::contract::{Harness, Session, Workload};
use crate::db::ring;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::proc::{self, ProcSample};
use crate::measure::profile;
use crate::measure::{
    delta, disturbed_above, host_cpu, Counted, ErrorCounts, LatencyHist, DISTURBED_CPUS,
};
use crate::model::{
    Aggregate, BatchRun, ClientCpu, ConnectStats, IntervalSample, KindRecord, KindTick, LoopCounts,
    NodeRecord, OpenLoop, Pacing, PhaseResult, PhaseSummary, Point, ReplicationRecord,
    ReplicationSample, RunRecord, ServerProcess,
};
use crate::model::{PhaseInfo, PhaseKind};

/// Every (operation, thread count) point of `w` on the shared runner: a warm-up, then the
/// measured runs, each recorded with the server's counters and CPU over exactly that run;
/// the result is saved after every point.
pub(super) fn sweep(h: &mut Bench, w: &dyn Workload) -> Result<()> {
    let cfg = h.cfg;
    for (op_index, op_name) in w.operations().iter().enumerate() {
        for &threads in &cfg.threads {
            if interrupt::signal().is_some() {
                return Ok(());
            }
            if !point(h, w, op_index, op_name, threads)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// One point of the sweep: its session, warm-up and measured runs; false when a signal
/// ended it before any run (the sweep ends there too).
fn point(
    h: &mut Bench,
    w: &dyn Workload,
    op_index: usize,
    op_name: &str,
    threads: usize,
) -> Result<bool> {
    let cfg = h.cfg;
    // A workload file's phase may set its own rate and length.
    let pacing = w.phase_pacing(op_index).unwrap_or(cfg.pacing);
    let duration = w.phase_duration(op_index).unwrap_or(cfg.duration());
    let (mut session, point_loops, connect) = open(h, w, op_index, threads, pacing)
        .map_err(|e| e.context(format!("{op_name} at {threads} threads")))?;
    // A shard of a fleet starts the point (its warm-up, then its runs) with the others.
    let point = h.doc.points.len() as u32;
    Harness::meet(h, point)?;
    let warmup = warm_up(h, &mut session, w, (op_name, threads), pacing)?;
    let mut runs = Vec::new();
    let mut merged = Merged::new();
    // Set when every connection was lost: the run so far is kept, then the run fails.
    let mut lost_all: Option<String> = None;
    for r in 1..=cfg.runs {
        if interrupt::signal().is_some() {
            break;
        }
        let ask = RunAsk {
            op_name,
            threads,
            run: (r, cfg.runs),
            duration,
            events: cfg.events,
            pacing,
            loops: &point_loops,
        };
        let Some((rec, lost)) = measured_run(h, &mut session, w, &ask, &mut merged)? else {
            break;
        };
        lost_all = lost;
        runs.push(rec);
        if lost_all.is_some() {
            break;
        }
    }
    drop(session);
    if runs.is_empty() {
        return Ok(false);
    }
    let p = finish_point(h, w, (op_name, threads), warmup, runs, merged, &lost_all);
    h.doc.points.push(Point {
        connect: Some(connect.into()),
        ..p
    });
    h.save()?;
    if let Some(why) = lost_all {
        return Err(Error::run(why));
    }
    Ok(true)
}

/// The session of operation `op_index` at `threads` connections, the lean client's loops it
/// started, and how its connections opened (said when worth knowing).
pub(super) fn open(
    h: &Bench,
    w: &dyn Workload,
    op_index: usize,
    threads: usize,
    pacing: Pacing,
) -> Result<(Box<dyn Session>, LoopCounts, ConnectStats)> {
    let cfg = h.cfg;
    let mut scfg = Harness::session_config(h, threads, pacing, w.access(op_index));
    // An open loop's timer wake-ups are delayed under SCHED_BATCH (docs/method.md).
    scfg.sched_batch &= pacing == Pacing::ClosedLoop;
    let loops0 = ring::loop_paths();
    let session = w.start(op_index, threads, &cfg.target_spec, &scfg)?;
    let loops1 = ring::loop_paths();
    let point_loops = LoopCounts {
        io_uring: loops1.io_uring - loops0.io_uring,
        epoll: loops1.epoll - loops0.epoll,
        auto_epoll: loops1.auto_epoll - loops0.auto_epoll,
    };
    let connect = session.connect_stats();
    connect.report();
    Ok((session, point_loops, connect))
}

/// The point's warm-up, when the run has one (an open loop's rate ramps up over its first
/// half: `steps::warmup_plan`).
fn warm_up(
    h: &mut Bench,
    session: &mut dyn Session,
    w: &dyn Workload,
    (op_name, threads): (&str, usize),
    pacing: Pacing,
) -> Result<Option<PhaseSummary>> {
    let cfg = h.cfg;
    if cfg.warmup_s <= 0.0 {
        return Ok(None);
    }
    let info =
        PhaseInfo::new(PhaseKind::Warmup, op_name, threads, (0, cfg.runs)).planned(cfg.warmup());
    let plan = steps::warmup_plan(cfg, threads, pacing);
    let wu = h
        .live
        .clone()
        .phase_plan(session, &info, w, &plan, |_| {})?;
    if let Some(why) = &wu.lost_all {
        return Err(Error::run(format!("{why} (in the warm-up)")));
    }
    Ok(Some(steps::warmup_summary(&wu, &plan)))
}

/// The point of `runs` (without its connect figures): their aggregate and, after the last
/// run with every worker idle, the engine's status, the tables' sizes and the disk usage.
fn finish_point(
    h: &mut Bench,
    w: &dyn Workload,
    (op_name, threads): (&str, usize),
    warmup: Option<PhaseSummary>,
    runs: Vec<RunRecord>,
    merged: Merged,
    lost_all: &Option<String>,
) -> Point {
    let rt = h.rt;
    let mut aggregate = Aggregate::of(&runs, merged.hist.summary());
    aggregate.response_us = merged.response.map(|h| h.summary());
    aggregate.percentiles_us = merged.hist.percentiles_us(&h.cfg.extra_percentiles);
    // After the point's last run, with every worker idle.
    let (engine_status, table_sizes, disk_usage) = if lost_all.is_some() {
        (None, Vec::new(), None)
    } else {
        (
            h.admin.engine_status(rt, &h.table_engine),
            h.admin.table_sizes(rt),
            // The forced flush can take many seconds: not after a signal, which must
            // stop the client within a few.
            if interrupt::signal().is_none() {
                h.admin.disk_usage(rt)
            } else {
                None
            },
        )
    };
    Point {
        workload: w.name().to_string(),
        operation: op_name.into(),
        threads,
        warmup,
        runs,
        aggregate,
        engine_status,
        table_sizes,
        disk_usage,
        sections: BTreeMap::new(),
        connect: None,
    }
}

/// One measured run of a session: its operation's name and thread count, its place among
/// the point's runs, its length, pacing and the lean client's loops of its session.
pub(super) struct RunAsk<'a> {
    pub op_name: &'a str,
    pub threads: usize,
    /// This run and the point's number of runs.
    pub run: (u32, u32),
    pub duration: Duration,
    pub events: Option<u64>,
    pub pacing: Pacing,
    pub loops: &'a LoopCounts,
}

/// The latencies (and open-loop response times) of a point's runs merged.
pub(super) struct Merged {
    pub hist: LatencyHist,
    pub response: Option<LatencyHist>,
}

impl Merged {
    pub fn new() -> Merged {
        Merged {
            hist: LatencyHist::new(),
            response: None,
        }
    }
}

/// One measured run of `session`, recorded with the server's counters and CPU over exactly
/// that run and said on stderr; its latencies are added to `merged`. None when a signal
/// ended it before anything ran; with the record, why every connection was lost (if so).
pub(super) fn measured_run(
    h: &mut Bench,
    session: &mut dyn Session,
    w: &dyn Workload,
    ask: &RunAsk,
    merged: &mut Merged,
) -> Result<Option<(RunRecord, Option<String>)>> {
    let (cfg, rt) = (h.cfg, h.rt);
    let spec = &cfg.target_spec;
    let (op_name, threads, r) = (ask.op_name, ask.threads, ask.run.0);
    let live = h.live.clone();
    let before = h.admin.counters(rt);
    let nodes_before = h.admin.other_node_counters(rt);
    let profiler = profile::start_for_run(cfg.profile_hz, h.server_pid);
    let proc0 = h.server_pid.and_then(ProcSample::of_tree);
    let busy0 = proc::host_busy_s();
    let started = cfg.fleet.as_ref().map(|_| crate::fleet::now_unix_s());
    let info = PhaseInfo::new(PhaseKind::Run, op_name, threads, ask.run).planned(ask.duration);
    // A cluster's replication (replica lag, Galera queues), per node at every
    // report interval and at the end of the run.
    let sample_nodes = spec.node_count() > 1;
    let mut repl: Vec<(f64, Vec<ReplicationSample>)> = Vec::new();
    let admin = &mut h.admin;
    let batch0 = ring::batch_totals();
    let plan = steps::run_plan(cfg, threads, ask.duration, ask.events);
    let res = live.phase_plan(session, &info, w, &plan, |s| {
        if sample_nodes {
            repl.push((s.t_s, admin.replication(rt)));
        }
    })?;
    let batch = ring::batch_totals().since(&batch0);
    note_batch(h, (op_name, threads, r), ask.loops, batch);
    if sample_nodes {
        repl.push((res.elapsed.as_secs_f64(), h.admin.replication(rt)));
    }
    let busy1 = proc::host_busy_s();
    let proc1 = h.server_pid.and_then(ProcSample::of_tree);
    let server_profile = profile::stop_for_run(profiler, res.ops);
    let after = h.admin.counters(rt);
    let nodes_after = h.admin.other_node_counters(rt);
    if res.interrupted && res.ops == 0 && res.errors.total() == 0 {
        return Ok(None);
    }
    let lost_all = res.lost_all.clone();
    merged.hist.add(&res.hist);
    let open_loop = open_loop_record(ask.pacing, &res, &mut merged.response);
    let mut rec = record(r, &res, (proc0, proc1), busy1 - busy0);
    rec.disturbed = disturbed_above(
        rec.host_cpu.others_cpus,
        rec.elapsed_s,
        cfg.disturbed_above_cpus,
    );
    rec.started_at_unix_s = started;
    rec.server_profile = profile::with_coverage(
        server_profile,
        rec.server_process.as_ref().map(|s| s.cpu_us_per_op),
    );
    if let Some((response, schedule)) = open_loop {
        rec.response_us = Some(response);
        rec.open_loop = Some(schedule);
    }
    // Counters that reset with a server restart, or missing on one side (the
    // admin connection failed), give no honest delta.
    if res.reconnects == 0 && !before.is_empty() && !after.is_empty() {
        rec.server_counters = delta(&before, &after);
        live.server_counters(&rec.server_counters);
    }
    if cfg.target_spec.is_spider() && rec.by_node.is_empty() {
        spider_nodes(&mut rec, threads, &cfg.target_spec);
    }
    node_records(
        &mut rec,
        (&before, &nodes_before),
        (&after, &nodes_after),
        &repl,
    );
    rec.percentiles_us = res.hist.percentiles_us(&cfg.extra_percentiles);
    let kinds = w.kinds();
    kind_records(&mut rec, &res, &kinds);
    if cfg.fleet.is_some() {
        keep_histograms(&mut rec, &res, &kinds);
    }
    steps::add_to_record(&mut rec, &res);
    rec.intervals = name_interval_kinds(res.intervals, w, &kinds);
    for line in w.derive(threads, &mut rec) {
        eprintln!("{line}");
    }
    say_run((op_name, threads, ask.run), &rec);
    steps::say(&rec);
    Ok(Some((rec, lost_all)))
}

/// Every node's own counters (node 0's are the run's) and its replication samples.
fn node_records(
    rec: &mut RunRecord,
    (before, nodes_before): (&BTreeMap<String, f64>, &[BTreeMap<String, f64>]),
    (after, nodes_after): (&BTreeMap<String, f64>, &[BTreeMap<String, f64>]),
    repl: &[(f64, Vec<ReplicationSample>)],
) {
    let befores = std::iter::once(before).chain(nodes_before);
    let afters = std::iter::once(after).chain(nodes_after);
    if !nodes_before.is_empty() {
        for ((node, b), a) in rec.by_node.iter_mut().zip(befores).zip(afters) {
            if !b.is_empty() && !a.is_empty() {
                node.server_counters = delta(b, a);
            }
        }
    }
    for (i, node) in rec.by_node.iter_mut().enumerate() {
        let samples = repl
            .iter()
            .filter_map(|(t, v)| {
                let mut s = v.get(i)?.clone();
                s.t_s = *t;
                Some(s)
            })
            .collect();
        node.replication = ReplicationRecord::of(samples);
    }
}

/// The run's counts and latencies by kind, when the workload reports more than one.
fn kind_records(rec: &mut RunRecord, res: &PhaseResult, kinds: &[&'static str]) {
    if kinds.len() > 1 {
        for (k, name) in kinds.iter().enumerate() {
            let ks = res.by_kind.get(k);
            rec.by_kind.insert(
                name.to_string(),
                KindRecord {
                    ops: ks.map_or(0, |s| s.ops),
                    rolled_back: ks.map_or(0, |s| s.rolled_back),
                    errors: ks.map_or(0, |s| s.errors),
                    latency_us: ks
                        .map_or_else(|| LatencyHist::new().summary(), |s| s.hist.summary()),
                    histogram_hdr_v2: None,
                },
            );
        }
    }
}

/// The run's line on stderr (and its profile's and open loop's).
pub(super) fn say_run((op_name, threads, (r, runs)): (&str, usize, (u32, u32)), rec: &RunRecord) {
    let server_part = match (&rec.server_process, rec.client_cpu_share) {
        (Some(p), Some(share)) => format!(
            "  server {:.1} us/op  client share {:.0}%",
            p.cpu_us_per_op,
            share * 100.0
        ),
        _ => String::new(),
    };
    let extra: String = rec
        .percentiles_us
        .iter()
        .map(|(k, v)| format!("  {} {v:>7} us", k.replace('_', ".")))
        .collect();
    eprintln!(
        "{:<30} threads {:>4}  run {r}/{}  {:>10.1} ops/s  p95 {:>7} us{extra}  {:.1} rows/op  client {:.1} us/op{}{server_part}{}{}{}",
        op_name,
        threads,
        runs,
        rec.ops_per_s,
        rec.latency_us.p95_us,
        rec.rows_per_op,
        rec.client_cpu.us_per_op,
        match rec.client_cpu.voluntary_cs_per_op {
            Some(s) => format!(" {s:.2} sleeps/op"),
            None => String::new(),
        },
        if rec.disturbed { format!("  DISTURBED (others {:.2} CPU)", rec.host_cpu.others_cpus) } else { String::new() },
        if rec.errors_total > 0 { format!("  errors {}", rec.errors_total) } else { String::new() },
        if rec.reconnects > 0 { format!("  reconnects {}", rec.reconnects) } else { String::new() }
    );
    if let Some(p) = &rec.server_profile {
        eprintln!("{:<30} {}", "", profile::line(p));
    }
    if let (Some(r), Some(o)) = (&rec.response_us, &rec.open_loop) {
        eprintln!(
            "{:<30} open loop at {:.1} ops/s: response p95 {} us  max lag {} us  late {}  backlog {}",
            "", o.rate_ops_per_s, r.p95_us, o.max_lag_us, o.late_ops, o.backlog_ops
        );
    }
}

/// A measured run's batch figures, in the result's client part: on the lean client's
/// io_uring loops only (the epoll path holds no reply).
fn note_batch(
    h: &mut Bench,
    (operation, threads, run): (&str, usize, u32),
    loops: &LoopCounts,
    b: ring::BatchFigures,
) {
    let Some(c) = h.doc.client.as_mut() else {
        return;
    };
    if c.driver != "wire" || loops.io_uring == 0 {
        return;
    }
    c.batch.push(BatchRun {
        operation: operation.to_string(),
        threads,
        run,
        loops: loops.clone(),
        batched_waits: b.batched_waits,
        waits_to_timeout: b.waits_to_timeout,
        receives: b.receives,
        held_receives: b.held,
        hold_mean_us: b.hold_mean_us,
        hold_p99_us: b.hold_p99_us,
    });
}

/// The one constructor of a measured run's record, for every workload: counts, latencies,
/// errors, and the CPU of the client, of the server (`procs`: its samples before and after,
/// when its pid is known) and of everything else on the host (`host_busy_s`: the host's busy
/// CPU over the run), `disturbed` when the others used more than `disturbed_above` CPUs
/// (`run --disturbed-above`).
pub fn record_counted(
    c: Counted,
    procs: (Option<ProcSample>, Option<ProcSample>),
    host_busy_s: f64,
    disturbed_above_cpus: f64,
) -> RunRecord {
    let elapsed_s = c.elapsed_s;
    let server_process = server_process(procs.0, procs.1, c.ops);
    let client_s = c.client_cpu.total_s();
    let server_s = server_process.as_ref().map(|p| p.user_s + p.sys_s);
    let host_cpu = host_cpu(host_busy_s, client_s, server_s, elapsed_s);
    RunRecord {
        run: c.run,
        ops: c.ops,
        rows: c.rows,
        rows_per_op: c.rows as f64 / c.ops.max(1) as f64,
        statements: c.statements,
        elapsed_s,
        ops_per_s: c.ops as f64 / elapsed_s.max(1e-9),
        statements_per_s: c.statements as f64 / elapsed_s.max(1e-9),
        errors_total: c.errors.total(),
        errors: error_map(c.errors),
        error_samples: c.error_samples.to_vec(),
        latency_us: c.hist.summary(),
        client_cpu: ClientCpu::new(c.client_cpu, c.ops),
        client_cpu_share: server_s
            .filter(|sv| client_s + sv > 0.0)
            .map(|sv| client_s / (client_s + sv)),
        server_process,
        disturbed: disturbed_above(host_cpu.others_cpus, elapsed_s, disturbed_above_cpus),
        host_cpu,
        workers_lost: c.workers_lost,
        interrupted: c.interrupted,
        histogram_hdr_v2: c.hist.encode(),
        ..RunRecord::default()
    }
}

/// The record of one measured phase of the runner (`Session::phase`): the common one
/// ([`record_counted`], disturbed above `DISTURBED_CPUS`), with what only the runner counts
/// (the workload's own counters, reconnects, the nodes of a cluster).
pub fn record(
    run: u32,
    res: &PhaseResult,
    procs: (Option<ProcSample>, Option<ProcSample>),
    host_busy_s: f64,
) -> RunRecord {
    let counted = Counted {
        run,
        ops: res.ops,
        rows: res.rows,
        statements: res.statements,
        elapsed_s: res.elapsed.as_secs_f64(),
        errors: &res.errors,
        error_samples: &res.error_samples,
        hist: &res.hist,
        client_cpu: res.client_cpu,
        workers_lost: res.workers_lost,
        interrupted: res.interrupted,
    };
    let mut rec = record_counted(counted, procs, host_busy_s, DISTURBED_CPUS);
    let elapsed_s = rec.elapsed_s;
    rec.workload_counters = res.counters.clone();
    rec.reconnects = res.reconnects;
    rec.reconnect_failures = res.reconnect_failures;
    rec.by_node = res
        .by_node
        .iter()
        .map(|n| NodeRecord {
            node: n.label.clone(),
            connections: n.connections,
            ops: n.ops,
            ops_per_s: n.ops as f64 / elapsed_s.max(1e-9),
            errors_total: n.errors.total(),
            errors: error_map(&n.errors),
            latency_us: n.hist.summary(),
            workers_lost: n.workers_lost,
            reconnects: n.reconnects,
            server_counters: BTreeMap::new(),
            replication: None,
            histogram_hdr_v2: None,
        })
        .collect();
    rec
}

/// A fleet shard's result keeps the histograms behind its per-kind and per-node latencies and
/// its open-loop response times, so that `merge` adds them instead of bounding them.
fn keep_histograms(rec: &mut RunRecord, res: &PhaseResult, kinds: &[&str]) {
    for (k, name) in kinds.iter().enumerate() {
        if let Some(kr) = rec.by_kind.get_mut(*name) {
            kr.histogram_hdr_v2 = Some(
                res.by_kind
                    .get(k)
                    .map_or_else(|| LatencyHist::new().encode(), |s| s.hist.encode()),
            );
        }
    }
    for (nr, ns) in rec.by_node.iter_mut().zip(&res.by_node) {
        if nr.node == ns.label {
            nr.histogram_hdr_v2 = Some(ns.hist.encode());
        }
    }
    rec.response_hdr_v2 = res.open_loop.as_ref().map(|(h, _)| h.encode());
}

/// A Spider target's nodes: the head, which every connection used (the run's totals), then
/// each backend with no connection of the run's; the sweep adds every node's counter deltas
/// (the backends' Com_* over the head's ops: the statements a query through the head costs).
fn spider_nodes(rec: &mut RunRecord, threads: usize, target: &crate::db::TargetSpec) {
    let head = NodeRecord {
        node: target.node_label(0),
        connections: threads,
        ops: rec.ops,
        ops_per_s: rec.ops_per_s,
        errors_total: rec.errors_total,
        errors: rec.errors.clone(),
        latency_us: rec.latency_us,
        workers_lost: rec.workers_lost,
        reconnects: rec.reconnects,
        server_counters: BTreeMap::new(),
        replication: None,
        histogram_hdr_v2: None,
    };
    rec.by_node = std::iter::once(head)
        .chain(target.spider.iter().map(|b| NodeRecord {
            node: format!("spider backend {b}"),
            ..NodeRecord::default()
        }))
        .collect();
}

/// Errors by class name (only the classes that occurred).
fn error_map(e: &ErrorCounts) -> BTreeMap<String, u64> {
    e.to_map()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The server process over a run, from its samples before and after.
pub fn server_process(
    a: Option<ProcSample>,
    b: Option<ProcSample>,
    ops: u64,
) -> Option<ServerProcess> {
    let (a, b) = (a?, b?);
    let user_s = (b.user_s - a.user_s).max(0.0);
    let sys_s = (b.sys_s - a.sys_s).max(0.0);
    let written = b.write_bytes.saturating_sub(a.write_bytes);
    Some(ServerProcess {
        user_s,
        sys_s,
        cpu_us_per_op: (user_s + sys_s) * 1e6 / ops.max(1) as f64,
        read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
        written_bytes: written,
        written_bytes_per_op: written as f64 / ops.max(1) as f64,
        rss_bytes: b.rss_bytes,
        voluntary_cs_per_op: Some(
            b.voluntary_cs.saturating_sub(a.voluntary_cs) as f64 / ops.max(1) as f64,
        ),
        preempted_cs_per_op: Some(
            b.preempted_cs.saturating_sub(a.preempted_cs) as f64 / ops.max(1) as f64,
        ),
    })
}

/// Name each interval's per-kind counts after the workload's kinds, and add the workload's
/// own figures of the interval (TPC-C: its tpmC).
fn name_interval_kinds(
    mut intervals: Vec<IntervalSample>,
    w: &dyn Workload,
    kinds: &[&'static str],
) -> Vec<IntervalSample> {
    if kinds.len() < 2 {
        return intervals;
    }
    for i in &mut intervals {
        let ticks: Vec<KindTick> = std::mem::take(&mut i.kind_ticks);
        for (k, name) in kinds.iter().enumerate() {
            i.by_kind
                .insert(name.to_string(), ticks.get(k).copied().unwrap_or_default());
        }
        if i.len_s > 0.0 {
            i.figures.extend(w.interval_figures(&ticks, i.len_s));
        }
    }
    intervals
}

/// The open-loop part of a run record (response time and schedule), if the run was paced;
/// adds the run's response histogram to `merged`.
fn open_loop_record(
    pacing: Pacing,
    res: &PhaseResult,
    merged: &mut Option<LatencyHist>,
) -> Option<(crate::measure::LatencySummary, OpenLoop)> {
    let (response, sched) = res.open_loop.as_ref()?;
    let Pacing::FixedRate {
        ops_per_s,
        arrivals,
    } = pacing
    else {
        return None;
    };
    merged.get_or_insert_with(LatencyHist::new).add(response);
    Some((
        response.summary(),
        OpenLoop {
            rate_ops_per_s: ops_per_s,
            arrivals: arrivals.name().to_string(),
            intended_ops: sched.intended,
            backlog_ops: sched.backlog,
            late_ops: sched.late,
            max_lag_us: sched.max_lag.as_micros() as u64,
        },
    ))
}
