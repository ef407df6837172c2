//! `enginebench merge`: the results of a fleet's shards (`run --shard I/N`) as one result of
//! the same schema. Counts, errors by class and client CPU add; latency histograms add
//! exactly; what the server reports (settings, status counters, its process) describes the
//! whole server over the common window, so it is taken once, from the lowest shard; interval
//! series add by index (the shards started every point together). A shard with no result, or
//! whose result ended early, is recorded as lost: never dropped in silence.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::measure::{LatencyHist, LatencySummary};
use crate::model::Shard;
use crate::model::*;

/// Config keys that may differ between the shards of one fleet run.
const PER_SHARD_CONFIG: &[&str] = &[
    "fleet",
    "results_dir",
    "metrics_addr",
    "server_pid",
    "pin",
    // Each shard may reach the server through its own address (a pod, a namespace).
    "target",
    "server_label",
];

/// One shard's result, as read.
pub struct Input {
    pub file: String,
    pub doc: ResultDoc,
}

fn fleet_of(i: &Input) -> Result<(Shard, String)> {
    let f = i.doc.config.get("fleet").ok_or_else(|| {
        Error::usage(format!(
            "merge: {} is not a shard's result (it was not run with --shard I/N)",
            i.file
        ))
    })?;
    let shard: Shard = serde_json::from_value(f.get("shard").cloned().unwrap_or(Value::Null))
        .map_err(|_| Error::usage(format!("merge: {} has no valid fleet.shard", i.file)))?;
    let id = match (f.get("run_id"), f.get("start_at_unix_s")) {
        (Some(Value::String(id)), _) => id.clone(),
        (_, Some(t)) => format!("start-at-{t}"),
        _ => String::new(),
    };
    Ok((shard, id))
}

/// The config without what may differ between shards (and workload_options.shard).
fn comparable(config: &Value) -> Value {
    let mut c = config.clone();
    if let Some(o) = c.as_object_mut() {
        for k in PER_SHARD_CONFIG {
            o.remove(*k);
        }
        if let Some(w) = o.get_mut("workload_options").and_then(Value::as_object_mut) {
            w.remove("shard");
        }
    }
    c
}

/// The first key (dotted path) where two configs differ.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => first_difference(u, v, &p),
                    _ => Some(p),
                }
            })
        }
        _ if a != b => Some(path.to_string()),
        _ => None,
    }
}

/// Merge the shards' results. Refused (exit 2, one line): a result that is not a shard's,
/// results of different runs (run id, shard count), workloads or settings, a shard given twice.
pub fn merge(mut inputs: Vec<Input>) -> Result<ResultDoc> {
    if inputs.is_empty() {
        return Err(Error::usage("merge: give the shards' results"));
    }
    let mut shards = Vec::new();
    for i in &inputs {
        shards.push(fleet_of(i)?);
    }
    let (s0, id0) = shards[0].clone();
    let base = comparable(&inputs[0].doc.config);
    for (i, (s, id)) in inputs.iter().zip(&shards).skip(1) {
        if *id != id0 {
            return Err(Error::usage(format!(
                "merge: {} is of fleet run {id}, {} of {id0}: merge the shards of one run only",
                i.file, inputs[0].file
            )));
        }
        if s.count != s0.count {
            return Err(Error::usage(format!(
                "merge: {} is shard {} but {} is shard {}: the shard counts differ",
                i.file,
                s.label(),
                inputs[0].file,
                s0.label()
            )));
        }
        if let Some(k) = first_difference(&base, &comparable(&i.doc.config), "") {
            return Err(Error::usage(format!(
                "merge: {} and {} differ in config.{k}: the shards of one run have the same workload and settings",
                inputs[0].file, i.file
            )));
        }
    }
    for (n, (s, _)) in shards.iter().enumerate() {
        if let Some(m) = shards[..n].iter().position(|(t, _)| t.index == s.index) {
            return Err(Error::usage(format!(
                "merge: shard {} is given twice ({} and {})",
                s.label(),
                inputs[m].file,
                inputs[n].file
            )));
        }
    }
    // Lowest shard first: what is taken once comes from it.
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&n| shards[n].0.index);
    let index: Vec<u32> = order.iter().map(|&n| shards[n].0.index).collect();
    let mut docs: Vec<ResultDoc> = Vec::new();
    let mut merged_files = Vec::new();
    for &n in &order {
        let i = std::mem::take(&mut inputs[n].doc);
        merged_files.push(MergedShard {
            shard: shards[n].0.index,
            file: inputs[n].file.clone(),
            status: i.status,
            hostname: i.host.hostname.clone(),
        });
        docs.push(i);
    }
    let mut lost: Vec<u32> = (0..s0.count)
        .filter(|i| !index.contains(i))
        .chain(
            docs.iter()
                .zip(&index)
                .filter(|(d, _)| d.status != Status::Complete)
                .map(|(_, i)| *i),
        )
        .collect();
    lost.sort_unstable();
    let extra: Vec<f64> = docs[0]
        .config
        .get("extra_percentiles")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();

    let mut out = docs[0].clone();
    // The merge is no shard: what named the lowest shard (its fleet settings, its block of
    // the workload, its note) is left out; `fleet` below says what the merge holds.
    if let Some(o) = out.config.as_object_mut() {
        o.remove("fleet");
        if let Some(w) = o.get_mut("workload_options").and_then(Value::as_object_mut) {
            w.remove("shard");
        }
    }
    out.notes.retain(|n| !crate::fleet::is_shard_note(n));
    let mut skew: f64 = 0.0;
    out.points = Vec::new();
    // Every point any shard has, in the order of the shard that has the most.
    let longest = (0..docs.len())
        .max_by_key(|&d| docs[d].points.len())
        .unwrap_or(0);
    for (pi, p) in docs[longest].points.iter().enumerate() {
        let parts: Vec<Option<&Point>> = docs
            .iter()
            .map(|d| {
                d.points
                    .get(pi)
                    .filter(|q| q.operation == p.operation && q.threads == p.threads)
            })
            .collect();
        let (point, s) = merge_point(p, &parts, &index, s0.count, &extra)?;
        skew = skew.max(s);
        out.points.push(point);
    }
    out.load = docs.iter().flat_map(|d| d.load.clone()).collect();
    out.status = if lost.is_empty() {
        Status::Complete
    } else {
        Status::Failed
    };
    out.error = (!lost.is_empty()).then(|| {
        format!(
            "shard(s) {} of {} lost (no result, or it ended before its last run): the merge holds the other shards' figures",
            join(&lost),
            s0.count
        )
    });
    out.notes.push(format!(
        "A merge of {} shard result(s) of fleet run {id0} ({} shards): operations, errors and client CPU are summed; latency histograms are added (exact percentiles); server settings (every node's), status counters and the server process are the lowest shard's, read over its runs (the shards' runs start together); intervals are added by index, load steps by step (exact percentiles from their histograms) and per-transaction connections with their set-up histograms; an interval's and a kind's percentiles are the highest of the shards' (they keep no histogram).",
        docs.len(),
        s0.count
    ));
    out.fleet = Some(FleetMerge {
        run_id: id0,
        shards: s0.count,
        merged: merged_files,
        lost,
        max_start_skew_s: skew,
    });
    Ok(out)
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// One point of every shard (None: the shard does not have it); returns it merged and the
/// largest start skew of its runs.
fn merge_point(
    first: &Point,
    parts: &[Option<&Point>],
    index: &[u32],
    count: u32,
    extra: &[f64],
) -> Result<(Point, f64)> {
    let here: Vec<&Point> = parts.iter().flatten().copied().collect();
    let mut p = here.first().copied().unwrap_or(first).clone();
    let mut all = LatencyHist::new();
    let mut runs = Vec::new();
    let mut skew: f64 = 0.0;
    let most = here.iter().map(|q| q.runs.len()).max().unwrap_or(0);
    for r in 0..most {
        let recs: Vec<Option<&RunRecord>> = parts
            .iter()
            .map(|q| q.and_then(|q| q.runs.get(r)))
            .collect();
        let (run, hist, s) = merge_run(&recs, index, count, extra)?;
        all.add(&hist);
        skew = skew.max(s);
        runs.push(run);
    }
    p.warmup = here
        .iter()
        .filter_map(|q| q.warmup.clone())
        .reduce(|a, b| PhaseSummary {
            ops: a.ops + b.ops,
            elapsed_s: a.elapsed_s.max(b.elapsed_s),
            ops_per_s: a.ops_per_s + b.ops_per_s,
            errors: a.errors + b.errors,
            ramp_s: a.ramp_s.or(b.ramp_s),
            backlog_ops: match (a.backlog_ops, b.backlog_ops) {
                (None, None) => None,
                (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
            },
        });
    p.connect = here
        .iter()
        .filter_map(|q| q.connect.clone())
        .reduce(|a, b| ConnectRecord {
            connections: a.connections + b.connections,
            retries: a.retries + b.retries,
            elapsed_s: a.elapsed_s.max(b.elapsed_s),
        });
    // A point's workload sections are per shard: left out rather than shown as the fleet's.
    p.sections = BTreeMap::new();
    let mut agg = Aggregate::of(&runs, all.summary());
    agg.percentiles_us = all.percentiles_us(extra);
    agg.response_us = response(&runs.iter().collect::<Vec<_>>()).0;
    p.aggregate = agg;
    p.runs = runs;
    Ok((p, skew))
}

/// The histograms added, when every part kept one (a shard's result keeps those behind its
/// per-kind and per-node latencies and its response times); None otherwise.
fn added<'a>(parts: impl IntoIterator<Item = Option<&'a String>>) -> Option<LatencyHist> {
    let mut sum = LatencyHist::new();
    for h in parts {
        sum.add(&LatencyHist::decode(h?).ok()?);
    }
    Some(sum)
}

/// The open-loop response time over `runs`: exact (and its histogram) when every run kept its
/// histogram, else the highest of each percentile; None for closed-loop runs.
fn response(runs: &[&RunRecord]) -> (Option<LatencySummary>, Option<String>) {
    let open: Vec<&RunRecord> = runs
        .iter()
        .copied()
        .filter(|r| r.response_us.is_some())
        .collect();
    if open.is_empty() {
        return (None, None);
    }
    match added(open.iter().map(|r| r.response_hdr_v2.as_ref())) {
        Some(h) => (Some(h.summary()), Some(h.encode())),
        None => (
            worst(open.iter().filter_map(|r| r.response_us.as_ref())),
            None,
        ),
    }
}

/// The highest of each percentile (a bound where no histogram is kept); None when empty.
fn worst<'a>(v: impl Iterator<Item = &'a LatencySummary>) -> Option<LatencySummary> {
    v.cloned().reduce(|a, b| LatencySummary {
        min_us: a.min_us.min(b.min_us),
        mean_us: a.mean_us.max(b.mean_us),
        p50_us: a.p50_us.max(b.p50_us),
        p90_us: a.p90_us.max(b.p90_us),
        p95_us: a.p95_us.max(b.p95_us),
        p99_us: a.p99_us.max(b.p99_us),
        p99_9_us: a.p99_9_us.max(b.p99_9_us),
        max_us: a.max_us.max(b.max_us),
    })
}

fn add_maps<V: Copy + std::ops::Add<Output = V>>(
    into: &mut BTreeMap<String, V>,
    from: &BTreeMap<String, V>,
) {
    for (k, v) in from {
        into.entry(k.clone())
            .and_modify(|x| *x = *x + *v)
            .or_insert(*v);
    }
}

/// Run `r` of every shard (None: lost before it ended); returns the merged record, its
/// histogram and the spread of the shards' starts.
fn merge_run(
    recs: &[Option<&RunRecord>],
    index: &[u32],
    count: u32,
    extra: &[f64],
) -> Result<(RunRecord, LatencyHist, f64)> {
    let here: Vec<&RunRecord> = recs.iter().flatten().copied().collect();
    let first = here[0];
    let mut hist = LatencyHist::new();
    for r in &here {
        let h = LatencyHist::decode(&r.histogram_hdr_v2).map_err(|e| {
            Error::usage(format!(
                "merge: a run's histogram_hdr_v2 cannot be read: {e}"
            ))
        })?;
        hist.add(&h);
    }
    let mut m = RunRecord {
        run: first.run,
        server_counters: first.server_counters.clone(),
        server_process: first.server_process.clone(),
        host_cpu: first.host_cpu.clone(),
        ..RunRecord::default()
    };
    let (mut user_s, mut sys_s) = (0.0, 0.0);
    // The client's switches add up over shards when every shard counted them.
    let mut switches = Some((0u64, 0u64));
    for r in &here {
        m.ops += r.ops;
        m.rows += r.rows;
        m.statements += r.statements;
        m.ops_per_s += r.ops_per_s;
        m.statements_per_s += r.statements_per_s;
        m.elapsed_s = m.elapsed_s.max(r.elapsed_s);
        m.errors_total += r.errors_total;
        add_maps(&mut m.errors, &r.errors);
        add_maps(&mut m.workload_counters, &r.workload_counters);
        // Rates (tpm_c) add over shards that ran at once.
        add_maps(&mut m.figures, &r.figures);
        m.error_samples
            .extend(r.error_samples.iter().take(3).cloned());
        user_s += r.client_cpu.user_s;
        sys_s += r.client_cpu.sys_s;
        switches = match (
            switches,
            r.client_cpu.voluntary_cs,
            r.client_cpu.preempted_cs,
        ) {
            (Some((v, p)), Some(rv), Some(rp)) => Some((v + rv, p + rp)),
            _ => None,
        };
        m.disturbed |= r.disturbed;
        m.workers_lost += r.workers_lost;
        m.interrupted |= r.interrupted;
        m.reconnects += r.reconnects;
        m.reconnect_failures += r.reconnect_failures;
        for (k, kr) in &r.by_kind {
            let e = m.by_kind.entry(k.clone()).or_insert_with(|| KindRecord {
                latency_us: kr.latency_us,
                ..KindRecord::default()
            });
            e.ops += kr.ops;
            e.rolled_back += kr.rolled_back;
            e.errors += kr.errors;
            e.latency_us = worst([&e.latency_us, &kr.latency_us].into_iter()).unwrap_or_default();
        }
        if let (Some(o), Some(mine)) = (&r.open_loop, m.open_loop.as_mut()) {
            mine.rate_ops_per_s += o.rate_ops_per_s;
            mine.intended_ops += o.intended_ops;
            mine.backlog_ops += o.backlog_ops;
            mine.late_ops += o.late_ops;
            mine.max_lag_us = mine.max_lag_us.max(o.max_lag_us);
        } else if m.open_loop.is_none() {
            m.open_loop = r.open_loop.clone();
        }
    }
    // A kind's percentiles: exact when every shard kept its histogram (the bound above else).
    for (k, e) in m.by_kind.iter_mut() {
        let shards = here.iter().map(|r| r.by_kind.get(k));
        if let Some(h) = added(shards.map(|kr| kr.and_then(|kr| kr.histogram_hdr_v2.as_ref()))) {
            e.latency_us = h.summary();
        }
    }
    m.rows_per_op = m.rows as f64 / m.ops.max(1) as f64;
    // The server's process served every shard: its per-operation figures, read by the lowest
    // shard over its own operations, are over all of them.
    if let Some(p) = m.server_process.as_mut() {
        let scale = first.ops as f64 / m.ops.max(1) as f64;
        p.cpu_us_per_op *= scale;
        p.written_bytes_per_op *= scale;
        p.voluntary_cs_per_op = p.voluntary_cs_per_op.map(|v| v * scale);
        p.preempted_cs_per_op = p.preempted_cs_per_op.map(|v| v * scale);
    }
    m.by_node = merge_nodes(&here);
    m.client_cpu = ClientCpu::from_parts(user_s, sys_s, switches, m.ops);
    m.client_cpu_share = m
        .server_process
        .as_ref()
        .map(|p| p.user_s + p.sys_s)
        .filter(|sv| user_s + sys_s + sv > 0.0)
        .map(|sv| (user_s + sys_s) / (user_s + sys_s + sv));
    m.latency_us = hist.summary();
    m.percentiles_us = hist.percentiles_us(extra);
    (m.response_us, m.response_hdr_v2) = response(&here);
    m.intervals = merge_intervals(&here);
    m.steps = merge_steps(&here);
    m.connect_per_transaction = merge_connects(&here, &hist);
    m.histogram_hdr_v2 = hist.encode();
    let starts: Vec<f64> = here.iter().filter_map(|r| r.started_at_unix_s).collect();
    let skew = match (
        starts.iter().copied().reduce(f64::min),
        starts.iter().copied().reduce(f64::max),
    ) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    m.started_at_unix_s = starts.iter().copied().reduce(f64::min);
    m.shards = (0..count)
        .map(|s| {
            let r = index.iter().position(|&i| i == s).and_then(|n| recs[n]);
            match r {
                Some(r) => ShardRun {
                    shard: s,
                    lost: false,
                    ops: r.ops,
                    ops_per_s: r.ops_per_s,
                    errors_total: r.errors_total,
                    client_cpu: r.client_cpu.clone(),
                    started_at_unix_s: r.started_at_unix_s,
                    disturbed: r.disturbed,
                },
                None => ShardRun {
                    shard: s,
                    lost: true,
                    ..ShardRun::default()
                },
            }
        })
        .collect();
    Ok((m, hist, skew))
}

/// The shards' per-node records (a multi-host target) added by node, in the order the nodes
/// first appear; a node's percentiles are those of the shards' histograms added, or the
/// highest of the shards' where one was not kept.
fn merge_nodes(runs: &[&RunRecord]) -> Vec<NodeRecord> {
    let mut out: Vec<NodeRecord> = Vec::new();
    for n in runs.iter().flat_map(|r| &r.by_node) {
        match out.iter_mut().find(|o| o.node == n.node) {
            Some(o) => {
                o.connections += n.connections;
                o.ops += n.ops;
                o.ops_per_s += n.ops_per_s;
                o.errors_total += n.errors_total;
                add_maps(&mut o.errors, &n.errors);
                o.latency_us =
                    worst([&o.latency_us, &n.latency_us].into_iter()).unwrap_or_default();
                o.workers_lost += n.workers_lost;
                o.reconnects += n.reconnects;
                // `server_counters` are the node's global counters over the same window in
                // every shard: the first shard's are kept, as for the run's own.
            }
            None => out.push(n.clone()),
        }
    }
    for o in &mut out {
        let shards = runs
            .iter()
            .map(|r| r.by_node.iter().find(|n| n.node == o.node));
        if let Some(h) = added(shards.map(|n| n.and_then(|n| n.histogram_hdr_v2.as_ref()))) {
            o.latency_us = h.summary();
        }
        o.histogram_hdr_v2 = None;
    }
    out
}

/// The shards' load steps added by step (they ran the same steps at once, each its share of
/// the connections or the rate): connections, rates and counts summed; percentiles from the
/// added histograms, or the highest of the shards' where a shard kept none.
fn merge_steps(runs: &[&RunRecord]) -> Vec<StepRecord> {
    let n = runs.iter().map(|r| r.steps.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let parts: Vec<&StepRecord> = runs.iter().filter_map(|r| r.steps.get(i)).collect();
            let mut s = parts[0].clone();
            for p in &parts[1..] {
                s.start_s = s.start_s.min(p.start_s);
                s.threads += p.threads;
                s.target_ops_per_s = add_opt(s.target_ops_per_s, p.target_ops_per_s);
                s.ops += p.ops;
                s.ops_per_s += p.ops_per_s;
                s.errors += p.errors;
                s.intended_ops = add_opt(s.intended_ops, p.intended_ops);
                s.backlog_ops = add_opt(s.backlog_ops, p.backlog_ops);
            }
            match added(parts.iter().map(|p| p.histogram_hdr_v2.as_ref())) {
                Some(h) => {
                    s.latency_us = h.summary();
                    s.histogram_hdr_v2 = Some(h.encode());
                }
                None => {
                    s.latency_us = worst(parts.iter().map(|p| &p.latency_us)).unwrap_or_default();
                    s.histogram_hdr_v2 = None;
                }
            }
            let open: Vec<&&StepRecord> =
                parts.iter().filter(|p| p.response_us.is_some()).collect();
            match added(open.iter().map(|p| p.response_hdr_v2.as_ref())) {
                Some(h) if !open.is_empty() => {
                    s.response_us = Some(h.summary());
                    s.response_hdr_v2 = Some(h.encode());
                }
                _ => {
                    s.response_us = worst(open.iter().filter_map(|p| p.response_us.as_ref()));
                    s.response_hdr_v2 = None;
                }
            }
            s
        })
        .collect()
}

/// `--connect per-transaction` over the shards: connections summed, set-up times from the
/// added histograms (the highest of each percentile where a shard kept none), the share
/// over the merged run's mean latency.
fn merge_connects(runs: &[&RunRecord], all: &LatencyHist) -> Option<TxConnectRecord> {
    let parts: Vec<&TxConnectRecord> = runs
        .iter()
        .filter_map(|r| r.connect_per_transaction.as_ref())
        .collect();
    let first = parts.first()?;
    let connections = parts.iter().map(|p| p.connections).sum();
    Some(match added(parts.iter().map(|p| p.setup_hdr_v2.as_ref())) {
        Some(h) => TxConnectRecord {
            connections,
            setup_us: h.summary(),
            setup_share: h.mean_us() / all.mean_us().max(1e-9),
            setup_hdr_v2: Some(h.encode()),
        },
        None => TxConnectRecord {
            connections,
            setup_us: worst(parts.iter().map(|p| &p.setup_us)).unwrap_or_default(),
            setup_share: first.setup_share,
            setup_hdr_v2: None,
        },
    })
}

fn add_opt<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The shards' interval series added by index (they started together).
fn merge_intervals(runs: &[&RunRecord]) -> Vec<IntervalSample> {
    let n = runs.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let parts: Vec<&IntervalSample> =
                runs.iter().filter_map(|r| r.intervals.get(i)).collect();
            let mut s = parts[0].clone();
            for p in &parts[1..] {
                s.t_s = s.t_s.max(p.t_s);
                s.ops += p.ops;
                s.errors += p.errors;
                s.ops_per_s += p.ops_per_s;
                add_maps(&mut s.figures, &p.figures);
                for (k, t) in &p.by_kind {
                    let e = s.by_kind.entry(k.clone()).or_default();
                    e.ops += t.ops;
                    e.rolled_back += t.rolled_back;
                }
            }
            let mean = parts
                .iter()
                .map(|p| p.latency_us.mean_us * p.ops as f64)
                .sum::<f64>()
                / s.ops.max(1) as f64;
            s.latency_us = worst(parts.iter().map(|p| &p.latency_us)).unwrap_or_default();
            s.latency_us.mean_us = mean;
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard_doc(index: u32, count: u32, run_id: &str, values: &[u64]) -> Input {
        let mut h = LatencyHist::new();
        for v in values {
            h.record_us(*v);
        }
        let run = RunRecord {
            run: 1,
            ops: values.len() as u64,
            ops_per_s: values.len() as f64,
            elapsed_s: 1.0,
            histogram_hdr_v2: h.encode(),
            latency_us: h.summary(),
            errors_total: 1,
            errors: BTreeMap::from([("deadlock".to_string(), 1)]),
            // As a shard writes them: per node, per kind and the response time with the
            // histograms behind them.
            by_node: vec![NodeRecord {
                node: "db1:3306".into(),
                connections: 2,
                ops: values.len() as u64,
                latency_us: h.summary(),
                histogram_hdr_v2: Some(h.encode()),
                ..NodeRecord::default()
            }],
            by_kind: BTreeMap::from([(
                "k".to_string(),
                KindRecord {
                    ops: values.len() as u64,
                    latency_us: h.summary(),
                    histogram_hdr_v2: Some(h.encode()),
                    ..KindRecord::default()
                },
            )]),
            response_us: Some(h.summary()),
            response_hdr_v2: Some(h.encode()),
            // One load step of the whole run, open loop, with the histograms behind it; and
            // a connection per operation, its set-up the same values.
            steps: vec![StepRecord {
                step: 1,
                duration_s: 1.0,
                threads: 2,
                target_ops_per_s: Some(100.0),
                ops: values.len() as u64,
                ops_per_s: values.len() as f64,
                latency_us: h.summary(),
                response_us: Some(h.summary()),
                intended_ops: Some(values.len() as u64 + 1),
                backlog_ops: Some(1),
                histogram_hdr_v2: Some(h.encode()),
                response_hdr_v2: Some(h.encode()),
                ..StepRecord::default()
            }],
            connect_per_transaction: Some(TxConnectRecord {
                connections: values.len() as u64,
                setup_us: h.summary(),
                setup_share: 1.0,
                setup_hdr_v2: Some(h.encode()),
            }),
            client_cpu: ClientCpu {
                user_s: 0.5,
                voluntary_cs: Some(10 * index as u64),
                preempted_cs: Some(1),
                ..ClientCpu::default()
            },
            ..RunRecord::default()
        };
        Input {
            file: format!("s{index}.json"),
            doc: ResultDoc {
                status: Status::Complete,
                config: serde_json::json!({
                    "workload": "w", "threads": [2],
                    "fleet": {"shard": {"index": index, "count": count}, "run_id": run_id, "timeout_s": 60.0},
                    "workload_options": {"x": 1, "shard": {"index": index}},
                }),
                notes: vec![
                    "a note of every shard".into(),
                    crate::fleet::shard_note(
                        &crate::fleet::Fleet {
                            shard: Shard { index, count },
                            run_id: Some(run_id.into()),
                            start_at_unix_s: None,
                            timeout_s: 60.0,
                        },
                        "split somehow",
                    ),
                ],
                points: vec![Point {
                    operation: "op".into(),
                    threads: 2,
                    runs: vec![run],
                    ..Point::default()
                }],
                ..ResultDoc::default()
            },
        }
    }

    #[test]
    fn adds_exactly_and_marks_missing_shards_lost() {
        let a: Vec<u64> = (1..=500).collect();
        let b: Vec<u64> = (400..=2000).step_by(3).collect();
        let m = merge(vec![shard_doc(1, 3, "r", &b), shard_doc(0, 3, "r", &a)]).unwrap();
        let run = &m.points[0].runs[0];
        assert_eq!(run.ops, (a.len() + b.len()) as u64);
        assert_eq!(run.errors["deadlock"], 2);
        assert_eq!(run.client_cpu.user_s, 1.0);
        // The client's switches add (shard 0 counted 0 + 1, shard 1 10 + 1), per all ops.
        assert_eq!(run.client_cpu.voluntary_cs, Some(10));
        assert_eq!(run.client_cpu.preempted_cs, Some(2));
        let per_op = 10.0 / (a.len() + b.len()) as f64;
        assert_eq!(run.client_cpu.voluntary_cs_per_op, Some(per_op));
        // One node reached by both shards: one record of both shards' connections and ops.
        assert_eq!(run.by_node.len(), 1);
        assert_eq!(run.by_node[0].ops, (a.len() + b.len()) as u64);
        assert_eq!(run.by_node[0].connections, 4);
        let mut one = LatencyHist::new();
        for v in a.iter().chain(&b) {
            one.record_us(*v);
        }
        let exact = one.summary();
        for (what, got) in [
            ("run", run.latency_us),
            ("node", run.by_node[0].latency_us),
            ("kind", run.by_kind["k"].latency_us),
            ("response", run.response_us.unwrap()),
            ("point response", m.points[0].aggregate.response_us.unwrap()),
            ("step", run.steps[0].latency_us),
            ("step response", run.steps[0].response_us.unwrap()),
            (
                "connection set-up",
                run.connect_per_transaction.as_ref().unwrap().setup_us,
            ),
        ] {
            assert_eq!(
                (got.p50_us, got.p99_us),
                (exact.p50_us, exact.p99_us),
                "{what}"
            );
        }
        // A step's connections, rate and counts add over the shards.
        let step = &run.steps[0];
        assert_eq!(step.threads, 4);
        assert_eq!(step.target_ops_per_s, Some(200.0));
        assert_eq!(step.ops, (a.len() + b.len()) as u64);
        assert_eq!(step.intended_ops, Some((a.len() + b.len()) as u64 + 2));
        assert_eq!(step.backlog_ops, Some(2));
        let tx = run.connect_per_transaction.as_ref().unwrap();
        assert_eq!(tx.connections, (a.len() + b.len()) as u64);
        assert!((tx.setup_share - 1.0).abs() < 1e-9, "{}", tx.setup_share);
        // The merged record does not carry the per-node and per-kind histograms on.
        assert!(run.by_node[0].histogram_hdr_v2.is_none());
        assert!(run.by_kind["k"].histogram_hdr_v2.is_none());
        let lost: Vec<bool> = run.shards.iter().map(|s| s.lost).collect();
        assert_eq!(lost, vec![false, false, true]);
        assert_eq!(m.fleet.as_ref().unwrap().lost, vec![2]);
        assert_eq!(m.status, Status::Failed);
        // The merged config names no shard: a merge is not merged again as shard 0.
        assert!(m.config.get("fleet").is_none());
        assert!(m.config["workload_options"].get("shard").is_none());
        assert_eq!(m.config["workload_options"]["x"], 1);
        assert!(m.notes.iter().all(|n| !crate::fleet::is_shard_note(n)));
        assert!(m.notes.iter().any(|n| n == "a note of every shard"));
        let again = Input {
            file: "m.json".into(),
            doc: m,
        };
        assert_eq!(merge(vec![again]).unwrap_err().exit_code(), 2);
    }

    /// Shards of an older version kept no per-node or per-kind histogram: those percentiles
    /// are the highest of the shards' (a bound), the run's still exact.
    #[test]
    fn without_shard_histograms_kinds_and_nodes_are_bounded() {
        let a: Vec<u64> = (1..=100).collect();
        let b: Vec<u64> = (1000..=1100).collect();
        let old = |i, v: &[u64]| {
            let mut d = shard_doc(i, 2, "r", v);
            let run = &mut d.doc.points[0].runs[0];
            run.by_node[0].histogram_hdr_v2 = None;
            run.by_kind.get_mut("k").unwrap().histogram_hdr_v2 = None;
            run.response_hdr_v2 = None;
            d
        };
        let m = merge(vec![old(0, &a), old(1, &b)]).unwrap();
        let run = &m.points[0].runs[0];
        let high = shard_doc(1, 2, "r", &b).doc.points[0].runs[0].latency_us;
        assert_eq!(run.by_node[0].latency_us.p50_us, high.p50_us);
        assert_eq!(run.by_kind["k"].latency_us.p50_us, high.p50_us);
        assert_eq!(run.response_us.unwrap().p50_us, high.p50_us);
        assert!(run.latency_us.p50_us < high.p50_us);
    }

    #[test]
    fn keeps_the_nodes_settings_once() {
        let node = |n: &str, port: &str| NodeInfo {
            node: n.into(),
            server_version: "11.4.2-MariaDB".into(),
            settings_differ: BTreeMap::from([("port".to_string(), port.to_string())]),
            ..NodeInfo::default()
        };
        let mut a = shard_doc(0, 2, "r", &[1, 2]);
        a.doc.target.nodes = vec![node("db1:3306", ""), node("db2:3307", "3307")];
        a.doc.target.nodes[0].settings_differ.clear();
        let mut b = shard_doc(1, 2, "r", &[3]);
        // The higher shard read the nodes a moment later (or through other addresses).
        b.doc.target.nodes = vec![node("db1:3306", ""), node("db2:3307", "3308")];
        let want = a.doc.target.nodes.clone();
        let m = merge(vec![b, a]).unwrap();
        assert_eq!(m.target.nodes, want);
    }

    #[test]
    fn refuses_other_runs_counts_settings_and_twins() {
        let e = |v: Vec<Input>| {
            let e = merge(v).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(!e.message.contains('\n'));
            e.message
        };
        assert!(
            e(vec![shard_doc(0, 2, "a", &[1]), shard_doc(1, 2, "b", &[1])]).contains("fleet run")
        );
        assert!(
            e(vec![shard_doc(0, 2, "a", &[1]), shard_doc(1, 3, "a", &[1])])
                .contains("shard counts")
        );
        assert!(e(vec![shard_doc(0, 2, "a", &[1]), shard_doc(0, 2, "a", &[1])]).contains("twice"));
        let mut other = shard_doc(1, 2, "a", &[1]);
        other.doc.config["threads"] = serde_json::json!([4]);
        assert!(e(vec![shard_doc(0, 2, "a", &[1]), other]).contains("config.threads"));
        let mut plain = shard_doc(1, 2, "a", &[1]);
        plain.doc.config.as_object_mut().unwrap().remove("fleet");
        assert!(e(vec![plain]).contains("not a shard's result"));
    }
}
