//! The workers: N connections on their threads, driven phase by phase (the commands they are
//! sent, the messages they send back, merged into a `PhaseResult`); `driver::Session` is what
//! they answer to.

use super::*;

use crate::db::ring;

/// Connected workers, ready to run phases: the runner's `Session`.
pub struct Workers {
    pacing: Pacing,
    /// One connection per worker, or one per operation (`--connect`).
    connect_mode: ConnectMode,
    cmd: watch::Sender<Command>,
    rx: mpsc::Receiver<Msg>,
    handles: Vec<std::thread::JoinHandle<()>>,
    alive: Vec<bool>,
    next_phase: u64,
    /// Set once `stop_handle` was asked for: the phases of this session can be ended early.
    stop: Option<StopHandle>,
    connect: ConnectStats,
    /// `host:port` of each node of a multi-host target (empty for one node).
    nodes: Vec<String>,
}

impl Workers {
    /// Connect `threads` workers and run each driver's setup, at most `connect::WINDOW` at a
    /// time, retrying what the server refuses for now until `--connect-timeout`
    /// (connect.rs). Fails (usage error) if any connection cannot be made, naming the limit
    /// that stopped it and the setting to change.
    pub fn start<D, F>(target: &TargetSpec, cfg: &SessionConfig, factory: F) -> Result<Workers>
    where
        D: Driver + 'static,
        F: Fn(usize) -> D + Send + Sync + 'static,
    {
        let n = cfg.threads;
        fd_room(target, n)?;
        let connect_start = Instant::now();
        let window = Arc::new(tokio::sync::Semaphore::new(connect::WINDOW));
        let loops = if target.dbms == Dbms::Sqlite {
            n
        } else {
            cfg.client_threads.clamp(1, n)
        };
        let (cmd, cmd_rx) = watch::channel(Command::Idle);
        let (tx, rx) = mpsc::channel();
        let factory = Arc::new(factory);
        let multi = target.node_count() > 1;
        let node_targets: Arc<Vec<Arc<TargetSpec>>> = Arc::new(
            (0..target.node_count())
                .map(|i| Arc::new(target.node(i)))
                .collect(),
        );
        let use_ring = target.dbms != Dbms::Sqlite && ring::path().unwrap_or(false);
        let mut handles = Vec::with_capacity(loops);
        for l in 0..loops {
            // Worker w runs on loop w % loops.
            let ids: Vec<usize> = (l..n).step_by(loops).collect();
            let (factory, node_targets, cmd_rx, tx, window) = (
                factory.clone(),
                node_targets.clone(),
                cmd_rx.clone(),
                tx.clone(),
                window.clone(),
            );
            let sched_batch = cfg.sched_batch;
            let (read, access, first_worker) = (target.read, cfg.access, cfg.first_worker);
            let pacing = cfg.pacing;
            let faults = cfg.faults;
            let h = std::thread::Builder::new()
                .name(format!("eb-loop-{l}"))
                .spawn(move || {
                    if sched_batch {
                        set_sched_batch();
                    }
                    // The lean clients' batched I/O path: this loop's io_uring, driven when
                    // tokio would sleep (db::ring). A loop where it cannot start takes epoll.
                    // Batched waits count on every connection of the loop waiting for a
                    // reply; per transaction they come and go (connecting, closing).
                    let policy = ring::Policy {
                        batch: pacing == Pacing::ClosedLoop
                            && faults.connect == ConnectMode::PerRun,
                    };
                    // Under `--client-io auto` a loop of few connections takes epoll
                    // (`ring::AUTO_RING_MIN_CONNECTIONS`: the ring pays by batching replies).
                    let ring_here = use_ring && ring::ring_for(ids.len());
                    let lr = ring::LoopRuntime::new(
                        ring_here.then_some(policy),
                        ids.len(),
                        &format!("client loop {l}"),
                    );
                    let local = &lr.local;
                    let mut workers = Vec::with_capacity(ids.len());
                    let rec = Rc::new(RefCell::new(LoopRecorder::new(ids.len())));
                    for (slot, w) in ids.into_iter().enumerate() {
                        let driver = factory(w);
                        let node = node_for(first_worker + w, node_targets.len(), read, access);
                        let target = node_targets[node].clone();
                        let (cmd_rx, tx) = (cmd_rx.clone(), tx.clone());
                        let node = multi.then_some(node);
                        let place = (rec.clone(), slot);
                        let opening = window.clone();
                        workers.push(local.spawn_local(run_worker(WorkerArgs {
                            id: (w, node),
                            workers: n,
                            pacing,
                            faults,
                            target,
                            driver,
                            cmd: cmd_rx,
                            tx,
                            place,
                            window: opening,
                        })));
                    }
                    let (_, stats) = lr.run(async move {
                        for w in workers {
                            let _ = w.await;
                        }
                    });
                    // For the benchmarks: how the loop's ring was used.
                    if let (Some(st), Some(_)) = (stats, std::env::var_os("EB_RING_STATS")) {
                        eprintln!(
                            "ring loop {l}: {} enters, {} batched waits, {} completions, {} receives armed again",
                            st.enters, st.batched_waits, st.completions, st.rearms
                        );
                    }
                })
                .map_err(|e| Error::run(format!("cannot start a client thread: {e}")))?;
            handles.push(h);
        }
        drop(tx);
        let session = Workers {
            pacing: cfg.pacing,
            connect_mode: cfg.faults.connect,
            cmd,
            rx,
            handles,
            alive: vec![true; n],
            next_phase: 1,
            stop: None,
            connect: ConnectStats::default(),
            nodes: if multi {
                (0..target.node_count())
                    .map(|i| target.node_label(i))
                    .collect()
            } else {
                Vec::new()
            },
        };
        session.await_connected(target, cfg, connect_start)
    }

    /// Waits until every worker has connected or given up; the first failure ends the
    /// session and is the error (which connection, to where, how many opened, what to do).
    fn await_connected(
        mut self,
        target: &TargetSpec,
        cfg: &SessionConfig,
        connect_start: Instant,
    ) -> Result<Workers> {
        let n = self.alive.len();
        let mut answered = 0;
        let mut retries = 0;
        let mut failure: Option<(usize, DbError)> = None;
        while answered < n {
            match self.rx.recv() {
                Ok(Msg::Ready { retries: r }) => {
                    answered += 1;
                    retries += r;
                }
                Ok(Msg::ConnectFailed {
                    worker,
                    error,
                    retries: r,
                }) => {
                    answered += 1;
                    retries += r;
                    self.alive[worker] = false;
                    failure.get_or_insert((worker, error));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        self.connect = ConnectStats {
            connections: n,
            retries,
            elapsed: connect_start.elapsed(),
        };
        if let Some((worker, error)) = failure {
            self.stop();
            let opened = self.alive.iter().filter(|a| **a).count();
            let hint = match connect::Limit::of(&error) {
                Some(l) => format!(" — {}", l.advice(target, n)),
                None => String::new(),
            };
            let tried = if retries > 0 {
                format!(
                    ", {retries} refused attempt(s) retried over {:.1} s",
                    self.connect.elapsed.as_secs_f64()
                )
            } else {
                String::new()
            };
            let to = target.node(node_for(
                cfg.first_worker + worker,
                target.node_count(),
                target.read,
                cfg.access,
            ));
            return Err(Error::usage(format!(
                "connection {} of {n} to {} failed ({opened} opened{tried}): {}{hint}",
                worker + 1,
                to.display,
                target.scrub(&error.message)
            )));
        }
        Ok(self)
    }

    /// The phase's operation budget: `--events`, or an unbounded one a stop handle can empty
    /// (a session that never asked for a handle has none).
    fn phase_budget(&mut self, events: Option<u64>) -> Option<Arc<AtomicI64>> {
        let budget = match (events, &self.stop) {
            (Some(n), _) => Some(Arc::new(AtomicI64::new(n.min(i64::MAX as u64) as i64))),
            (None, Some(_)) => Some(Arc::new(AtomicI64::new(i64::MAX))),
            (None, None) => None,
        };
        if let (Some(st), Some(b)) = (&self.stop, &budget) {
            st.phase_started(b);
        }
        budget
    }
}

impl Session for Workers {
    fn connect_stats(&self) -> ConnectStats {
        self.connect
    }

    fn alive(&self) -> usize {
        self.alive.iter().filter(|a| **a).count()
    }

    fn stop_handle(&mut self) -> StopHandle {
        self.stop.get_or_insert_with(StopHandle::default).clone()
    }

    fn phase_plan(
        &mut self,
        plan: &PhasePlan,
        mut on_interval: &mut dyn FnMut(&IntervalSample, &LatencyHist),
    ) -> Result<PhaseResult> {
        let live = self.alive();
        if live == 0 {
            return Err(Error::run("every connection to the target was lost"));
        }
        let id = self.next_phase;
        self.next_phase += 1;
        let cpu0 = CpuTimes::now();
        let start = Instant::now();
        let mut plan = plan.clone();
        plan.interval = plan.interval.max(Duration::from_millis(10));
        let plan = Arc::new(plan);
        let budget = self.phase_budget(plan.events);
        let _ = self.cmd.send(Command::Phase {
            id,
            start,
            deadline: start + plan.duration,
            budget,
            plan: plan.clone(),
        });
        let mut c = Collector::new(self, start, plan);
        while c.done < live {
            let msg = match self.rx.recv_timeout(Duration::from_millis(200)) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            c.take(msg, &mut self.alive, &mut on_interval);
        }
        if let Some(st) = &self.stop {
            st.phase_ended();
        }
        Ok(c.result(self, cpu0, &mut on_interval))
    }

    fn stop(&mut self) {
        let _ = self.cmd.send(Command::Stop);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.stop();
    }
}

fn merge_stats(total: &mut WorkerStats, s: WorkerStats) {
    total.ops += s.ops;
    total.rows += s.rows;
    total.statements += s.statements;
    total.errors.merge(&s.errors);
    if let (Some(t), Some(h)) = (total.hists.as_mut(), s.hists) {
        t.hist.add(&h.hist);
        t.response.add(&h.response);
        for (k, kh) in h.by_kind.iter().enumerate() {
            recorder::grown(&mut t.by_kind, k).add(kh);
        }
        for (i, nh) in h.by_node.iter().enumerate() {
            recorder::grown(&mut t.by_node, i).add(nh);
        }
        t.connect.add(&h.connect);
        for (i, sh) in h.by_step.iter().enumerate() {
            recorder::grown(&mut t.by_step, i).add(sh);
        }
        for (i, sh) in h.by_step_response.iter().enumerate() {
            recorder::grown(&mut t.by_step_response, i).add(sh);
        }
    }
    for (a, b) in total.steps.iter_mut().zip(&s.steps) {
        a.ops += b.ops;
        a.errors += b.errors;
        a.intended += b.intended;
        a.backlog += b.backlog;
    }
    total.connects += s.connects;
    total.schedule.merge(&s.schedule);
    total.end = total.end.max(s.end);
    add_ticks(&mut total.by_kind, &s.by_kind);
    if total.kind_errors.len() < s.kind_errors.len() {
        total.kind_errors.resize(s.kind_errors.len(), 0);
    }
    for (a, b) in total.kind_errors.iter_mut().zip(&s.kind_errors) {
        *a += b;
    }
    for (name, v) in s.counters {
        match total.counters.iter_mut().find(|(n, _)| *n == name) {
            Some(c) => c.1 += v,
            None => total.counters.push((name, v)),
        }
    }
    total.reconnects += s.reconnects;
    total.reconnect_failures += s.reconnect_failures;
    for e in s.error_samples {
        if total.error_samples.len() < ERROR_SAMPLES && !total.error_samples.contains(&e) {
            total.error_samples.push(e);
        }
    }
}

/// What the session collects during one phase: the workers' interval counts (an interval is
/// finished once every worker has moved past it) and their totals.
struct Collector {
    start: Instant,
    plan: Arc<PhasePlan>,
    /// Latest interval index each worker has reported; u32::MAX once it has finished.
    latest: Vec<u32>,
    pending: BTreeMap<u32, Tick>,
    next_final: u32,
    intervals: Vec<IntervalSample>,
    total: WorkerStats,
    by_node: Vec<NodeStats>,
    done: usize,
    lost: usize,
}

impl Collector {
    fn new(s: &Workers, start: Instant, plan: Arc<PhasePlan>) -> Self {
        let total = WorkerStats {
            ops: 0,
            rows: 0,
            statements: 0,
            errors: ErrorCounts::default(),
            hists: Some(PhaseHists {
                hist: LatencyHist::new(),
                response: LatencyHist::new(),
                by_kind: Vec::new(),
                by_node: Vec::new(),
                connect: LatencyHist::new(),
                by_step: Vec::new(),
                by_step_response: Vec::new(),
            }),
            schedule: ScheduleStats::default(),
            end: start,
            error_samples: Vec::new(),
            lost: None,
            by_kind: Vec::new(),
            kind_errors: Vec::new(),
            counters: Vec::new(),
            reconnects: 0,
            reconnect_failures: 0,
            node: None,
            steps: vec![StepTick::default(); plan.steps.len()],
            connects: 0,
        };
        Collector {
            start,
            latest: s
                .alive
                .iter()
                .map(|a| if *a { 0 } else { u32::MAX })
                .collect(),
            pending: BTreeMap::new(),
            next_final: 0,
            intervals: Vec::new(),
            total,
            by_node: s
                .nodes
                .iter()
                .map(|label| NodeStats {
                    label: label.clone(),
                    connections: 0,
                    ops: 0,
                    errors: ErrorCounts::default(),
                    hist: LatencyHist::new(),
                    workers_lost: 0,
                    reconnects: 0,
                })
                .collect(),
            done: 0,
            lost: 0,
            plan,
        }
    }

    /// One worker's message.
    fn take(
        &mut self,
        msg: Msg,
        alive: &mut [bool],
        on_interval: &mut impl FnMut(&IntervalSample, &LatencyHist),
    ) {
        match msg {
            Msg::Interval {
                worker,
                idx,
                ops,
                errors,
                error_classes,
                hists,
                kinds,
            } => {
                for (i, h) in hists {
                    self.pending.entry(i).or_default().hist.add(&h);
                }
                let e = self.pending.entry(idx).or_default();
                e.ops += ops;
                e.errors += errors;
                e.error_classes.merge(&error_classes);
                add_ticks(&mut e.kinds, &kinds);
                self.latest[worker] = self.latest[worker].max(idx);
            }
            Msg::PhaseDone { worker, mut stats } => {
                self.latest[worker] = u32::MAX;
                if let Some(nd) = stats.node.and_then(|i| self.by_node.get_mut(i)) {
                    nd.connections += 1;
                    nd.ops += stats.ops;
                    nd.errors.merge(&stats.errors);
                    nd.reconnects += stats.reconnects;
                    nd.workers_lost += stats.lost.is_some() as usize;
                }
                if let Some(error) = stats.lost.take() {
                    alive[worker] = false;
                    self.lost += 1;
                    self.total.lost = Some(error);
                }
                merge_stats(&mut self.total, *stats);
                self.done += 1;
            }
            Msg::Ready { .. } | Msg::ConnectFailed { .. } => {}
        }
        let min_latest = self.latest.iter().copied().min().unwrap_or(u32::MAX);
        if min_latest != u32::MAX && min_latest > self.next_final {
            self.finalize(min_latest, None, on_interval);
        }
    }

    /// Finish the intervals before `upto` (the last one ends at `end` when given).
    fn finalize(
        &mut self,
        upto: u32,
        end: Option<Instant>,
        on_interval: &mut impl FnMut(&IntervalSample, &LatencyHist),
    ) {
        let interval_s = self.plan.interval.as_secs_f64();
        while self.next_final < upto {
            let idx = self.next_final;
            self.next_final += 1;
            let tick = self.pending.remove(&idx).unwrap_or_default();
            let (ops, errors) = (tick.ops, tick.errors);
            let mut t_s = (idx + 1) as f64 * interval_s;
            let mut len_s = interval_s;
            if let Some(end) = end {
                let end_s = end.duration_since(self.start).as_secs_f64();
                if end_s < t_s {
                    len_s = (end_s - idx as f64 * interval_s).max(1e-6);
                    t_s = end_s;
                }
            }
            let step = (!self.plan.steps.is_empty())
                .then(|| self.plan.step_at(t_s - len_s / 2.0) as u32 + 1);
            let s = IntervalSample {
                t_s,
                ops,
                errors,
                ops_per_s: ops as f64 / len_s,
                latency_us: tick.hist.summary(),
                by_kind: BTreeMap::new(),
                figures: BTreeMap::new(),
                kind_ticks: tick.kinds,
                error_classes: tick.error_classes,
                len_s,
                step,
            };
            on_interval(&s, &tick.hist);
            self.intervals.push(s);
        }
    }

    /// What the phase measured, once every worker has finished it.
    fn result(
        mut self,
        s: &Workers,
        cpu0: CpuTimes,
        on_interval: &mut impl FnMut(&IntervalSample, &LatencyHist),
    ) -> PhaseResult {
        let elapsed = self.total.end.duration_since(self.start);
        let hists = self.total.hists.take().expect("the collector's own");
        let mut by_kind = Vec::new();
        for (k, t) in self.total.by_kind.iter().enumerate() {
            let ks = kind_slot(&mut by_kind, k as u8);
            ks.ops = t.ops;
            ks.rolled_back = t.rolled_back;
        }
        for (k, e) in self.total.kind_errors.iter().enumerate() {
            kind_slot(&mut by_kind, k as u8).errors = *e;
        }
        for (k, h) in hists.by_kind.iter().enumerate() {
            kind_slot(&mut by_kind, k as u8).hist.add(h);
        }
        for (nd, h) in self.by_node.iter_mut().zip(&hists.by_node) {
            nd.hist.add(h);
        }
        let last = self
            .pending
            .keys()
            .next_back()
            .map(|k| k + 1)
            .unwrap_or(self.next_final);
        self.finalize(last, Some(self.total.end), on_interval);
        let client_cpu = CpuTimes::now().since(cpu0);
        let lost_all = (self.lost > 0 && s.alive() == 0).then(|| {
            let why = self
                .total
                .lost
                .take()
                .map(|e| e.message)
                .unwrap_or_default();
            format!("every connection to the target was lost during the run: {why}")
        });
        let open = matches!(s.pacing, Pacing::FixedRate { .. });
        let by_step = self.step_stats(&hists, open);
        let t = self.total;
        PhaseResult {
            ops: t.ops,
            rows: t.rows,
            statements: t.statements,
            errors: t.errors,
            hist: hists.hist,
            open_loop: open.then_some((hists.response, t.schedule)),
            elapsed,
            client_cpu,
            intervals: self.intervals,
            workers_lost: self.lost,
            error_samples: t.error_samples,
            interrupted: interrupt::signal().is_some(),
            by_kind,
            counters: t
                .counters
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            reconnects: t.reconnects,
            reconnect_failures: t.reconnect_failures,
            lost_all,
            by_node: self.by_node,
            by_step,
            per_transaction: (s.connect_mode == ConnectMode::PerTransaction).then_some(TxConnect {
                opened: t.connects,
                setup: hists.connect,
            }),
        }
    }

    /// Each load step's counts and latencies.
    fn step_stats(&self, hists: &PhaseHists, open: bool) -> Vec<StepStats> {
        let starts = self.plan.step_starts();
        let hist_of = |v: &Vec<LatencyHist>, i: usize| v.get(i).cloned().unwrap_or_default();
        (self.plan.steps.iter().enumerate())
            .map(|(i, step)| {
                let t = self.total.steps.get(i).copied().unwrap_or_default();
                StepStats {
                    step: *step,
                    start_s: starts[i],
                    ops: t.ops,
                    errors: t.errors,
                    hist: hist_of(&hists.by_step, i),
                    response: open.then(|| hist_of(&hists.by_step_response, i)),
                    intended: t.intended,
                    backlog: t.backlog,
                }
            })
            .collect()
    }
}

/// Every connection is a descriptor: checked before opening hundreds only to fail.
fn fd_room(target: &TargetSpec, n: usize) -> Result<()> {
    if target.dbms == Dbms::Sqlite {
        return Ok(());
    }
    let (soft, _) = connect::fd_limit();
    if n as u64 + connect::FD_HEADROOM > soft {
        return Err(Error::usage(format!(
            "{n} connections to {} cannot open: {}",
            target.display,
            connect::Limit::OpenFiles.advice(target, n)
        )));
    }
    Ok(())
}
