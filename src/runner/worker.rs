//! One worker: a connection and its driver, running the phases the session commands, and
//! the small helpers it needs (counter growth, SCHED_BATCH, an interruptible sleep).
//!
//! A phase is a loop of turns: wait for the next start (the schedule, the driver's think time,
//! or the next load step in which this connection works), check the stop conditions, run one
//! operation (on the worker's connection, or `--connect per-transaction` on one of its own),
//! and count its outcome.

use super::*;

use recorder::Place;

/// What the session gives a worker: its place, the load, and where to report.
pub(super) struct WorkerArgs<D> {
    /// Its index, and the node of a multi-host target it connects to.
    pub id: (usize, Option<usize>),
    pub workers: usize,
    pub pacing: Pacing,
    pub faults: Faults,
    pub target: Arc<TargetSpec>,
    pub driver: D,
    pub cmd: watch::Receiver<Command>,
    pub tx: mpsc::Sender<Msg>,
    pub place: (Rc<RefCell<LoopRecorder>>, Slot),
    pub window: Arc<tokio::sync::Semaphore>,
}

/// A connected worker between and during phases.
struct Worker<D> {
    w: usize,
    node: Option<usize>,
    workers: usize,
    pacing: Pacing,
    faults: Faults,
    target: Arc<TargetSpec>,
    driver: D,
    tx: mpsc::Sender<Msg>,
    rec: Rc<RefCell<LoopRecorder>>,
    slot: Slot,
    /// The worker's connection (per run); None per transaction, or while a lost one waits to
    /// be re-established.
    conn: Option<Conn>,
    /// The connection was lost and `--reconnect` re-establishes it before the next operation.
    broken: bool,
    /// When it was lost, for the message when it is back.
    lost_at: Option<Instant>,
}

/// One phase as the session commanded it.
struct PhaseCmd {
    id: u64,
    start: Instant,
    deadline: Instant,
    budget: Option<Arc<AtomicI64>>,
    plan: Arc<PhasePlan>,
}

/// What a worker counts during one phase.
struct PhaseState {
    start: Instant,
    deadline: Instant,
    budget: Option<Arc<AtomicI64>>,
    plan: Arc<PhasePlan>,
    interval_ns: u128,
    schedule: Option<Schedule>,
    sched: ScheduleStats,
    errors: ErrorCounts,
    ops: u64,
    rows: u64,
    statements: u64,
    /// The current interval's index, operations, errors, errors by class and kinds.
    cur_idx: u32,
    iops: u64,
    ierr: u64,
    iclasses: ErrorCounts,
    ikinds: Vec<KindTick>,
    reconnects: u64,
    reconnect_failures: u64,
    samples: Vec<String>,
    lost: Option<DbError>,
    end: Instant,
    by_kind: Vec<KindTick>,
    kind_errors: Vec<u64>,
    counters0: Vec<(&'static str, u64)>,
    /// Per load step (empty without steps).
    steps: Vec<StepTick>,
    /// `--connect per-transaction`: connections opened.
    connects: u64,
    /// Ended before the deadline (--events reached, or a signal): the schedule's backlog
    /// then counts up to now, not up to a deadline that may be far away (--time 0).
    ended_early: bool,
}

/// What a turn's wait ended in.
enum Turn {
    /// Start an operation now (its intended start, in an open loop).
    Go(Option<Instant>),
    /// The worker's part of the phase is over.
    Done,
}

pub(super) async fn run_worker<D: Driver>(a: WorkerArgs<D>) {
    let WorkerArgs {
        id: (w, node),
        workers,
        pacing,
        faults,
        target,
        mut driver,
        mut cmd,
        tx,
        place: (rec, slot),
        window,
    } = a;
    let mut retries = 0;
    let first = connect::open(w, &target, &mut driver, &faults, &window, &mut retries).await;
    drop(window);
    let mut conn = match first {
        Ok(c) => Some(c),
        Err(error) => {
            rec.borrow_mut().set_gone(slot);
            let _ = tx.send(Msg::ConnectFailed {
                worker: w,
                error,
                retries,
            });
            return;
        }
    };
    let _ = tx.send(Msg::Ready { retries });
    if faults.connect == ConnectMode::PerTransaction {
        // The first connection showed that this worker can connect and set up; each
        // operation opens its own.
        if let Some(c) = conn.take() {
            let _ = c.close().await;
        }
    }
    let mut worker = Worker {
        w,
        node,
        workers,
        pacing,
        faults,
        target,
        driver,
        tx,
        rec,
        slot,
        conn,
        broken: false,
        lost_at: None,
    };
    let mut seen_phase = 0;
    loop {
        let command = cmd.borrow_and_update().clone();
        match command {
            Command::Stop => return,
            Command::Phase {
                id,
                start,
                deadline,
                budget,
                plan,
            } if id > seen_phase => {
                seen_phase = id;
                let phase = PhaseCmd {
                    id,
                    start,
                    deadline,
                    budget,
                    plan,
                };
                if !worker.run_phase(phase).await {
                    return;
                }
            }
            _ => {
                if cmd.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

impl<D: Driver> Worker<D> {
    /// One phase; false when the connection was lost for good (the worker ends).
    async fn run_phase(&mut self, p: PhaseCmd) -> bool {
        self.rec.borrow_mut().start_phase(p.id);
        // The phase id seeds the arrivals, so that warm-up and runs differ.
        let schedule =
            Schedule::planned(&self.pacing, self.w, self.workers, p.start, p.id, &p.plan);
        let mut st = PhaseState {
            start: p.start,
            deadline: p.deadline,
            budget: p.budget,
            interval_ns: p.plan.interval.as_nanos().max(1),
            steps: vec![StepTick::default(); p.plan.steps.len()],
            plan: p.plan,
            schedule,
            sched: ScheduleStats::default(),
            errors: ErrorCounts::default(),
            ops: 0,
            rows: 0,
            statements: 0,
            cur_idx: 0,
            iops: 0,
            ierr: 0,
            iclasses: ErrorCounts::default(),
            ikinds: Vec::new(),
            reconnects: 0,
            reconnect_failures: 0,
            samples: Vec::new(),
            lost: None,
            end: p.start,
            by_kind: Vec::new(),
            kind_errors: Vec::new(),
            counters0: self.driver.counters(),
            connects: 0,
            ended_early: false,
        };
        loop {
            if self.broken && !self.reconnect(&mut st).await {
                // Tried until the deadline: the run's time includes the outage.
                st.end = st.end.max(Instant::now().min(st.deadline));
                break;
            }
            let intended = match self.wait_turn(&mut st).await {
                Turn::Go(i) => i,
                Turn::Done => break,
            };
            let t0 = Instant::now();
            if !self.may_start(&mut st, t0, intended) {
                break;
            }
            let (r, t1) = self.one_op(&mut st).await;
            if !self.count(&mut st, r, (t0, t1), intended) {
                break;
            }
        }
        self.finish_phase(st)
    }

    /// Re-establish a lost connection (`--reconnect`), with back-off until the deadline;
    /// false when it could not be before then. Per transaction the new connection only
    /// shows that the server is back, and is closed.
    async fn reconnect(&mut self, st: &mut PhaseState) -> bool {
        let Some(r) = faults::reconnect(
            &self.target,
            &mut self.driver,
            &self.faults,
            st.deadline,
            &mut st.reconnect_failures,
        )
        .await
        else {
            return false;
        };
        match self.faults.connect {
            ConnectMode::PerRun => self.conn = Some(r.conn),
            ConnectMode::PerTransaction => {
                let _ = r.conn.close().await;
            }
        }
        self.broken = false;
        st.reconnects += 1;
        let down = self.lost_at.take().map(|t| t.elapsed()).unwrap_or_default();
        eprintln!(
            "connection {}: re-established after {:.1} s ({} attempt(s))",
            self.w + 1,
            down.as_secs_f64(),
            r.attempts
        );
        true
    }

    /// Wait for the next operation's turn: its intended start (open loop), or the end of the
    /// user's think time and the next load step in which this connection works (closed loop).
    async fn wait_turn(&mut self, st: &mut PhaseState) -> Turn {
        if let Some(s) = &st.schedule {
            let due = s.due();
            if due >= st.deadline || !sleep_until(due).await {
                return Turn::Done;
            }
            return Turn::Go(Some(due));
        }
        if !st.plan.steps.is_empty() {
            let now_s = Instant::now().duration_since(st.start).as_secs_f64();
            match st.plan.next_active(self.w, now_s) {
                Some(t) if t <= now_s => {}
                Some(t) => {
                    let at = st.start + Duration::from_secs_f64(t);
                    if at >= st.deadline {
                        return self.idle_to_deadline(st).await;
                    }
                    if !sleep_until(at).await {
                        st.ended_early = true;
                        return Turn::Done;
                    }
                }
                // Idle in every step left: the connection was part of the whole phase.
                None => return self.idle_to_deadline(st).await,
            }
        }
        if let Some(wait) = self.driver.pause() {
            let until = Instant::now() + wait;
            if until >= st.deadline {
                // The user is still thinking when the phase ends: the worker was part of the
                // whole phase.
                return self.idle_to_deadline(st).await;
            }
            if !sleep_until(until).await {
                st.ended_early = true;
                return Turn::Done;
            }
        }
        Turn::Go(None)
    }

    async fn idle_to_deadline(&self, st: &mut PhaseState) -> Turn {
        sleep_until(st.deadline).await;
        st.end = st.end.max(st.deadline);
        Turn::Done
    }

    /// The stop conditions before an operation that would start at `t0`; true: start it (the
    /// schedule then moves on).
    fn may_start(&mut self, st: &mut PhaseState, t0: Instant, intended: Option<Instant>) -> bool {
        // An operation due before the deadline may start in the timer's last tick after it
        // (else the tick's lateness would show as backlog); one behind by more does not.
        let stop_at = match intended {
            Some(_) => st.deadline + LATE,
            None => st.deadline,
        };
        if t0 >= stop_at {
            return false;
        }
        if interrupt::signal().is_some() || self.driver.finished() {
            st.ended_early = true;
            return false;
        }
        // --events: every worker takes a ticket before each operation; none left, done.
        if let Some(b) = &st.budget {
            if b.fetch_sub(1, Ordering::Relaxed) <= 0 {
                st.ended_early = true;
                return false;
            }
        }
        if let (Some(s), Some(due)) = (st.schedule.as_mut(), intended) {
            s.advance();
            st.sched.intended += 1;
            let lag = t0.saturating_duration_since(due);
            st.sched.max_lag = st.sched.max_lag.max(lag);
            if lag > LATE {
                st.sched.late += 1;
            }
        }
        true
    }

    /// One operation, and when it ended. Per transaction: on a connection of its own, opened
    /// and set up first (inside the operation's latency, and recorded on its own) and closed
    /// with a goodbye after its end.
    async fn one_op(&mut self, st: &mut PhaseState) -> (DbResult<Step>, Instant) {
        if self.faults.connect == ConnectMode::PerRun {
            let c = self.conn.as_mut().expect("connected before the turn");
            let r = self.faults.timed(self.driver.step(c)).await;
            return (r, Instant::now());
        }
        let t = Instant::now();
        let mut c = match connect::open_for_op(&self.target, &mut self.driver, &self.faults).await {
            Ok(c) => c,
            Err(e) => return (Err(e), Instant::now()),
        };
        self.rec
            .borrow_mut()
            .record_connect(t.elapsed().as_micros() as u64);
        st.connects += 1;
        let r = self.faults.timed(self.driver.step(&mut c)).await;
        let t1 = Instant::now();
        match &r {
            // Its protocol state is unknown (a timeout mid-reply) or it is gone: dropped.
            Err(e) if faults::breaks_connection(e) => drop(c),
            _ => {
                let _ = c.close().await;
            }
        }
        (r, t1)
    }

    /// Count an operation that ran from `t0` to `t1`; false when the worker's phase ends here
    /// (its connection lost without `--reconnect`).
    fn count(
        &mut self,
        st: &mut PhaseState,
        r: DbResult<Step>,
        (t0, t1): (Instant, Instant),
        intended: Option<Instant>,
    ) -> bool {
        st.end = t1;
        let idx = (t1.duration_since(st.start).as_nanos() / st.interval_ns) as u32;
        if idx != st.cur_idx {
            self.send_interval(st, idx);
            st.cur_idx = idx;
        }
        // The operation's step: where it was due (open loop) or started.
        let step = (!st.plan.steps.is_empty()).then(|| {
            let at = intended.unwrap_or(t0);
            st.plan
                .step_at(at.saturating_duration_since(st.start).as_secs_f64())
        });
        if let (Some(i), Some(_)) = (step, intended) {
            st.steps[i].intended += 1;
        }
        match r {
            Ok(step_done) => {
                self.count_success(st, step_done, (t0, t1), intended, (idx, step));
                true
            }
            Err(e) => {
                if let Some(i) = step {
                    st.steps[i].errors += 1;
                }
                self.count_error(st, e)
            }
        }
    }

    fn count_success(
        &mut self,
        st: &mut PhaseState,
        done: Step,
        (t0, t1): (Instant, Instant),
        intended: Option<Instant>,
        (idx, step): (u32, Option<usize>),
    ) {
        // The latency's origin: the operation's start, or when its user began to wait for
        // this connection (several users per connection), within this phase.
        let from = match (intended, self.driver.waiting_since()) {
            (None, Some(w)) => w.max(st.start).min(t0),
            _ => t0,
        };
        let us = t1.duration_since(from).as_micros() as u64;
        let response_us = intended.map(|due| t1.duration_since(due).as_micros() as u64);
        let at = Place {
            idx,
            kind: done.kind,
            node: self.node,
            step,
        };
        self.rec.borrow_mut().record(at, us, response_us);
        if let Some(i) = step {
            st.steps[i].ops += 1;
        }
        st.ops += 1;
        st.iops += 1;
        st.rows += done.rows;
        st.statements += done.statements;
        let i = done.kind as usize;
        for v in [&mut st.by_kind, &mut st.ikinds] {
            if v.len() <= i {
                v.resize(i + 1, KindTick::default());
            }
            v[i].ops += 1;
            v[i].rolled_back += done.rolled_back as u64;
        }
    }

    /// Count a failed operation; false when it lost the connection for good.
    fn count_error(&mut self, st: &mut PhaseState, e: DbError) -> bool {
        st.errors.add(e.class);
        let i = e.kind as usize;
        if st.kind_errors.len() <= i {
            st.kind_errors.resize(i + 1, 0);
        }
        st.kind_errors[i] += 1;
        st.ierr += 1;
        st.iclasses.add(e.class);
        let message = self.target.scrub(&e.message);
        if st.samples.len() < ERROR_SAMPLES && !st.samples.iter().any(|s| s.ends_with(&message)) {
            st.samples.push(format!("{}: {message}", e.class.name()));
        }
        if !faults::breaks_connection(&e) {
            return true;
        }
        // Dropping the connection closes it (a timed-out one mid-reply too).
        self.conn = None;
        if !self.faults.reconnect {
            st.lost = Some(e);
            return false;
        }
        self.broken = true;
        self.lost_at = Some(Instant::now());
        eprintln!(
            "connection {}: {}: {message}; re-connecting with back-off (--reconnect)",
            self.w + 1,
            e.class.name()
        );
        true
    }

    /// Hand the current interval's counts over (with the histograms of the intervals every
    /// worker of the loop has left) and move to interval `idx`.
    fn send_interval(&mut self, st: &mut PhaseState, idx: u32) {
        let hists = self.rec.borrow_mut().move_to(self.slot, idx);
        let _ = self.tx.send(Msg::Interval {
            worker: self.w,
            idx: st.cur_idx,
            ops: st.iops,
            errors: st.ierr,
            error_classes: std::mem::take(&mut st.iclasses),
            hists,
            kinds: std::mem::take(&mut st.ikinds),
        });
        (st.iops, st.ierr) = (0, 0);
    }

    /// The phase is over for this worker: the last interval, the schedule's backlog, and its
    /// totals. False when its connection was lost for good.
    fn finish_phase(&mut self, mut st: PhaseState) -> bool {
        // Finished: every interval the loop's other workers have also left goes with this.
        self.send_interval(&mut st, u32::MAX);
        self.backlog(&mut st);
        let lost = st.lost.take();
        let stats = WorkerStats {
            ops: st.ops,
            rows: st.rows,
            statements: st.statements,
            errors: st.errors,
            hists: self.rec.borrow_mut().finish(self.slot, lost.is_some()),
            schedule: st.sched,
            end: st.end,
            error_samples: st.samples,
            lost: lost.map(|e| DbError::new(e.class, self.target.scrub(&e.message))),
            by_kind: st.by_kind,
            kind_errors: st.kind_errors,
            counters: counter_growth(&st.counters0, self.driver.counters()),
            reconnects: st.reconnects,
            reconnect_failures: st.reconnect_failures,
            node: self.node,
            steps: st.steps,
            connects: st.connects,
        };
        let was_lost = stats.lost.is_some();
        let _ = self.tx.send(Msg::PhaseDone {
            worker: self.w,
            stats: Box::new(stats),
        });
        !was_lost
    }

    /// What was due before the deadline but never started: the backlog (per load step too).
    fn backlog(&self, st: &mut PhaseState) {
        let Some(s) = st.schedule.as_mut() else {
            return;
        };
        let until = if st.ended_early || interrupt::signal().is_some() {
            Instant::now().min(st.deadline)
        } else {
            st.deadline
        };
        if st.plan.steps.is_empty() {
            st.sched.backlog = s.pending_before(until);
        } else {
            let mut end = st.start;
            for (i, step) in st.plan.steps.iter().enumerate() {
                end += step.duration();
                let last = i + 1 == st.plan.steps.len();
                let n = s.pending_before(if last { until } else { end.min(until) });
                st.steps[i].backlog = n;
                st.steps[i].intended += n;
                st.sched.backlog += n;
            }
        }
        st.sched.intended += st.sched.backlog;
    }
}

/// How much each counter grew from `before` to `after` (a counter new since `before` counts
/// from 0).
pub(super) fn counter_growth(
    before: &[(&'static str, u64)],
    after: Vec<(&'static str, u64)>,
) -> Vec<(&'static str, u64)> {
    after
        .into_iter()
        .map(|(name, v)| {
            let v0 = before.iter().find(|(n, _)| *n == name).map_or(0, |c| c.1);
            (name, v.saturating_sub(v0))
        })
        .collect()
}

/// SCHED_BATCH for the calling thread: the kernel stops preempting it in favour of the server
/// thread it just woke, which halves context switches per query (client-efficiency notes).
pub(super) fn set_sched_batch() {
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a zeroed, valid param.
    unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
    }
}

/// Wait until `t` in steps of at most 100 ms, so that Ctrl-C is seen even at low rates.
/// Returns false when interrupted. Tokio's timer has 1 ms ticks: a wake-up can be up to about
/// 1 ms late, and that delay counts in the response time (it is the client's, honestly kept).
pub(super) async fn sleep_until(t: Instant) -> bool {
    loop {
        if interrupt::signal().is_some() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let step = (t - now).min(Duration::from_millis(100));
        tokio::time::sleep_until(tokio::time::Instant::from_std(now + step)).await;
    }
}
